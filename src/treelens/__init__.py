"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).

The public names are imported on first use (PEP 562), so that ``import treelens``
and the ``treelens`` command start in a fraction of a second: numpy, pandas,
scikit-learn and matplotlib load only when a function that needs them is used.
A public name is added to ``_PUBLIC`` (name -> defining module), to the
``TYPE_CHECKING`` block and to ``__all__``; exceptions and warnings are imported
at once (they are light).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._exceptions import (
    BackgroundError,
    CounterfactualCheckWarning,
    InputError,
    MemoryBudgetError,
    MissingValuesWarning,
    NotFittedError,
    OutOfBagWarning,
    OutputTooLargeError,
    SchedulerUnreachableError,
    SolverError,
    TreelensError,
    UnsafeModelError,
    UnsupportedModelError,
)
from ._version import __version__ as __version__

if TYPE_CHECKING:
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
    from ._explain._contributions import SaabasValues, saabas_values
    from ._explain._path import DecisionPath, decision_path
    from ._explain._shap import ShapResult, shap_interaction_values, shap_values
    from ._explain._shap_importance import shap_importance
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
    from ._plots._display_dependence import DependenceDisplay
    from ._plots._display_importance import ImportanceDisplay
    from ._plots._display_partition import ForestGridDisplay, PartitionDisplay
    from ._plots._display_regions import DecisionRegionDisplay
    from ._plots._display_steps import RegressionStepsDisplay
    from ._plots._display_surface import PredictionSurfaceDisplay
    from ._plots._display_tree import TreeDiagramDisplay
    from ._plots._dot import export_dot
    from ._report._report import Report, report

#: Public name -> module (relative to this package) that defines it.
_PUBLIC = {
    "Constraints": "._counterfactual._constraints",
    "ContributionSummaryDisplay": "._plots._display_contributions",
    "CounterfactualDisplay": "._plots._display_counterfactual",
    "CounterfactualResult": "._counterfactual._problem",
    "DataDisplay": "._plots._display_data",
    "DebiasedMDIImportance": "._importance._debiased",
    "DecisionPath": "._explain._path",
    "DecisionRegionDisplay": "._plots._display_regions",
    "DependenceDisplay": "._plots._display_dependence",
    "FeatureSpec": "._core._features",
    "Forest": "._core._forest",
    "ForestGridDisplay": "._plots._display_partition",
    "GroupedPermutationImportance": "._importance._permutation",
    "ImportanceDisplay": "._plots._display_importance",
    "ImportanceResult": "._importance._result",
    "LeafBoxes": "._core._boxes",
    "MDIImportance": "._importance._mdi",
    "Margin": "._counterfactual._epsilon",
    "NodeStatistics": "._importance._node_statistics",
    "PartitionDisplay": "._plots._display_partition",
    "PredictionSurfaceDisplay": "._plots._display_surface",
    "RegressionStepsDisplay": "._plots._display_steps",
    "Report": "._report._report",
    "SaabasValues": "._explain._contributions",
    "ShapResult": "._explain._shap",
    "Tree": "._core._forest",
    "TreeDiagramDisplay": "._plots._display_tree",
    "WaterfallDisplay": "._plots._display_contributions",
    "counterfactual": "._counterfactual._entry",
    "debiased_mdi_importance": "._importance._debiased",
    "decision_path": "._explain._path",
    "export_dot": "._plots._dot",
    "feature_tweak": "._counterfactual._tweak",
    "gain_importance": "._importance._gain",
    "grouped_permutation_importance": "._importance._permutation",
    "leaf_boxes": "._core._boxes",
    "mdi_importance": "._importance._mdi",
    "node_statistics": "._importance._node_statistics",
    "optimal_counterfactual": "._counterfactual._optimal",
    "permutation_importance": "._importance._permutation",
    "register_adapter": "._adapters",
    "report": "._report._report",
    "saabas_values": "._explain._contributions",
    "shap_importance": "._explain._shap_importance",
    "shap_interaction_values": "._explain._shap",
    "shap_values": "._explain._shap",
    "supported_models": "._adapters",
    "to_forest": "._adapters",
}


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'treelens' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


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
    "DependenceDisplay",
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
    "MissingValuesWarning",
    "NodeStatistics",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "PartitionDisplay",
    "PredictionSurfaceDisplay",
    "RegressionStepsDisplay",
    "Report",
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
    "report",
    "saabas_values",
    "shap_importance",
    "shap_interaction_values",
    "shap_values",
    "supported_models",
    "to_forest",
]
