"""treelens: explain tree-based models.

Exact mean-decrease-in-impurity importance with its per-node arithmetic, pictures of
what trees draw, and actionable counterfactuals, all computed on one normalized
representation of a fitted ensemble (:class:`Forest`).
"""

from ._adapters import register_adapter, supported_models, to_forest
from ._boxes import LeafBoxes, leaf_boxes
from ._constraints import Constraints
from ._counterfactual import CounterfactualResult
from ._exceptions import InputError, NotFittedError, TreelensError, UnsupportedModelError
from ._forest import Forest, Tree
from ._tweak import feature_tweak

__version__ = "0.1.0"

__all__ = [
    "Constraints",
    "CounterfactualResult",
    "Forest",
    "InputError",
    "LeafBoxes",
    "NotFittedError",
    "Tree",
    "TreelensError",
    "UnsupportedModelError",
    "feature_tweak",
    "leaf_boxes",
    "register_adapter",
    "supported_models",
    "to_forest",
]
