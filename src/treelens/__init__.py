"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).

The public names are imported on first use (PEP 562), so that ``import treelens``
and the ``treelens`` command start in a fraction of a second: numpy, pandas,
scikit-learn and matplotlib load only when a function that needs them is used.
A public name is added to ``_PUBLIC`` (name -> defining module), to the
``TYPE_CHECKING`` block and to ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._exceptions import (
    InputError,
    MissingValuesWarning,
    NotFittedError,
    TreelensError,
    UnsupportedModelError,
)
from ._version import __version__ as __version__

if TYPE_CHECKING:
    from ._adapters import register_adapter, supported_models, to_forest
    from ._core._boxes import LeafBoxes, leaf_boxes
    from ._core._forest import Forest, Tree
    from ._counterfactual._constraints import Constraints
    from ._counterfactual._optimal import optimal_counterfactual
    from ._counterfactual._problem import CounterfactualResult
    from ._counterfactual._tweak import feature_tweak
    from ._importance._gain import gain_importance
    from ._importance._mdi import MDIImportance, mdi_importance
    from ._importance._node_statistics import NodeStatistics, node_statistics
    from ._importance._permutation import permutation_importance
    from ._importance._result import ImportanceResult
    from ._plots._display_counterfactual import CounterfactualDisplay
    from ._plots._display_importance import ImportanceDisplay
    from ._plots._display_partition import ForestGridDisplay, PartitionDisplay
    from ._plots._display_regions import DecisionRegionDisplay
    from ._plots._display_steps import RegressionStepsDisplay
    from ._plots._display_tree import TreeDiagramDisplay
    from ._plots._dot import export_dot

#: Public name -> module (relative to this package) that defines it.
_PUBLIC = {
    "Constraints": "._counterfactual._constraints",
    "CounterfactualDisplay": "._plots._display_counterfactual",
    "CounterfactualResult": "._counterfactual._problem",
    "DecisionRegionDisplay": "._plots._display_regions",
    "Forest": "._core._forest",
    "ForestGridDisplay": "._plots._display_partition",
    "ImportanceDisplay": "._plots._display_importance",
    "ImportanceResult": "._importance._result",
    "LeafBoxes": "._core._boxes",
    "MDIImportance": "._importance._mdi",
    "NodeStatistics": "._importance._node_statistics",
    "PartitionDisplay": "._plots._display_partition",
    "RegressionStepsDisplay": "._plots._display_steps",
    "Tree": "._core._forest",
    "TreeDiagramDisplay": "._plots._display_tree",
    "export_dot": "._plots._dot",
    "feature_tweak": "._counterfactual._tweak",
    "gain_importance": "._importance._gain",
    "leaf_boxes": "._core._boxes",
    "mdi_importance": "._importance._mdi",
    "node_statistics": "._importance._node_statistics",
    "optimal_counterfactual": "._counterfactual._optimal",
    "permutation_importance": "._importance._permutation",
    "register_adapter": "._adapters",
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
    "MissingValuesWarning",
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
