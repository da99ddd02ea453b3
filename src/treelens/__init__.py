"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).
"""

from ._adapters import register_adapter, supported_models, to_forest
from ._core._boxes import LeafBoxes, leaf_boxes
from ._core._features import FeatureSpec
from ._core._forest import Forest, Tree
from ._counterfactual._constraints import Constraints
from ._counterfactual._entry import counterfactual
from ._counterfactual._epsilon import Margin
from ._counterfactual._optimal import optimal_counterfactual
from ._counterfactual._problem import CounterfactualResult
from ._counterfactual._tweak import feature_tweak
from ._exceptions import (
    BackgroundError,
    CounterfactualCheckWarning,
    InputError,
    MemoryBudgetError,
    NotFittedError,
    OutOfBagWarning,
    OutputTooLargeError,
    SchedulerUnreachableError,
    SolverError,
    TreelensError,
    UnsafeModelError,
    UnsupportedModelError,
)
from ._explain._contributions import SaabasValues, saabas_values
from ._explain._path import DecisionPath, decision_path
from ._explain._shap import ShapResult, shap_interaction_values, shap_values
from ._importance._debiased import DebiasedMDIImportance, debiased_mdi_importance
from ._importance._gain import gain_importance
from ._importance._mdi import MDIImportance, mdi_importance
from ._importance._node_statistics import NodeStatistics, node_statistics
from ._importance._permutation import (
    GroupedPermutationImportance,
    grouped_permutation_importance,
    permutation_importance,
)
from ._importance._result import ImportanceResult
from ._plots._display_contributions import (
    ContributionSummaryDisplay,
    WaterfallDisplay,
)
from ._plots._display_counterfactual import CounterfactualDisplay
from ._plots._display_data import DataDisplay
from ._plots._display_importance import ImportanceDisplay
from ._plots._display_partition import ForestGridDisplay, PartitionDisplay
from ._plots._display_regions import DecisionRegionDisplay
from ._plots._display_steps import RegressionStepsDisplay
from ._plots._display_tree import TreeDiagramDisplay
from ._plots._dot import export_dot
from ._version import __version__ as __version__

__all__ = [
    "BackgroundError",
    "Constraints",
    "ContributionSummaryDisplay",
    "CounterfactualCheckWarning",
    "CounterfactualDisplay",
    "CounterfactualResult",
    "DataDisplay",
    "DebiasedMDIImportance",
    "DecisionPath",
    "DecisionRegionDisplay",
    "FeatureSpec",
    "Forest",
    "ForestGridDisplay",
    "GroupedPermutationImportance",
    "ImportanceDisplay",
    "ImportanceResult",
    "InputError",
    "LeafBoxes",
    "MDIImportance",
    "Margin",
    "MemoryBudgetError",
    "NodeStatistics",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "PartitionDisplay",
    "RegressionStepsDisplay",
    "SaabasValues",
    "SchedulerUnreachableError",
    "ShapResult",
    "SolverError",
    "Tree",
    "TreeDiagramDisplay",
    "TreelensError",
    "UnsafeModelError",
    "UnsupportedModelError",
    "WaterfallDisplay",
    "counterfactual",
    "debiased_mdi_importance",
    "decision_path",
    "export_dot",
    "feature_tweak",
    "gain_importance",
    "grouped_permutation_importance",
    "leaf_boxes",
    "mdi_importance",
    "node_statistics",
    "optimal_counterfactual",
    "permutation_importance",
    "register_adapter",
    "saabas_values",
    "shap_interaction_values",
    "shap_values",
    "supported_models",
    "to_forest",
]
