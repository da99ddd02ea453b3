"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).
"""

from ._adapters import register_adapter, supported_models, to_forest
from ._boxes import LeafBoxes, leaf_boxes
from ._constraints import Constraints
from ._counterfactual import CounterfactualResult
from ._exceptions import (
    InputError,
    NotFittedError,
    TreelensError,
    UnsupportedModelError,
)
from ._forest import Forest, Tree
from ._importance_result import ImportanceResult
from ._mdi import MDIImportance, mdi_importance
from ._node_statistics import NodeStatistics, node_statistics
from ._permutation import permutation_importance
from ._tweak import feature_tweak

__version__ = "0.1.0"

__all__ = [
    "Constraints",
    "CounterfactualResult",
    "Forest",
    "ImportanceResult",
    "InputError",
    "LeafBoxes",
    "MDIImportance",
    "NodeStatistics",
    "NotFittedError",
    "Tree",
    "TreelensError",
    "UnsupportedModelError",
    "feature_tweak",
    "leaf_boxes",
    "mdi_importance",
    "node_statistics",
    "permutation_importance",
    "register_adapter",
    "supported_models",
    "to_forest",
]
