"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).
"""

from ._adapters import register_adapter, supported_models, to_forest
from ._boxes import LeafBoxes, leaf_boxes
from ._constraints import Constraints
from ._counterfactual import CounterfactualResult
from ._display_counterfactual import CounterfactualDisplay
from ._display_importance import ImportanceDisplay
from ._display_partition import ForestGridDisplay, PartitionDisplay
from ._display_regions import DecisionRegionDisplay
from ._display_steps import RegressionStepsDisplay
from ._display_tree import TreeDiagramDisplay
from ._dot import export_dot
from ._exceptions import (
    InputError,
    NotFittedError,
    TreelensError,
    UnsupportedModelError,
)
from ._forest import Forest, Tree
from ._gain_importance import gain_importance
from ._importance_result import ImportanceResult
from ._mdi import MDIImportance, mdi_importance
from ._node_statistics import NodeStatistics, node_statistics
from ._optimal import optimal_counterfactual
from ._permutation import permutation_importance
from ._tweak import feature_tweak

__version__ = "0.1.0"

__all__ = [
    "Constraints",
    "CounterfactualDisplay",
    "CounterfactualResult",
    "DecisionRegionDisplay",
    "Forest",
    "ForestGridDisplay",
    "ImportanceDisplay",
    "ImportanceResult",
    "InputError",
    "LeafBoxes",
    "MDIImportance",
    "NodeStatistics",
    "NotFittedError",
    "PartitionDisplay",
    "RegressionStepsDisplay",
    "Tree",
    "TreeDiagramDisplay",
    "TreelensError",
    "UnsupportedModelError",
    "export_dot",
    "feature_tweak",
    "gain_importance",
    "leaf_boxes",
    "mdi_importance",
    "node_statistics",
    "optimal_counterfactual",
    "permutation_importance",
    "register_adapter",
    "supported_models",
    "to_forest",
]
