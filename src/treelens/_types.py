"""Type aliases of the public signatures.

They document what a parameter accepts; treelens validates every argument at its
public boundary, so these are promises to the reader and to type checkers, not
checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import pandas as pd
    from sklearn.ensemble import IsolationForest
    from sklearn.pipeline import Pipeline

    from ._core._forest import Forest
    from ._counterfactual._epsilon import Margin

__all__ = [
    "ArrayLike",
    "Chunks",
    "CostLike",
    "EpsilonLike",
    "FeatureKey",
    "IsolationForestLike",
    "MarginLike",
    "ModelLike",
    "RandomStateLike",
    "ScoringLike",
    "TargetLike",
]

#: A fitted tree model of a supported library (see ``supported_models()``) or a
#: :class:`~treelens.Forest`.
ModelLike: TypeAlias = "Forest | Any"

#: A 2-D table or a 1-D vector: numpy array, pandas DataFrame or Series, or nested
#: sequences of numbers.
ArrayLike: TypeAlias = "NDArray[Any] | pd.DataFrame | pd.Series | Sequence[Any]"

#: An iterable of chunks of rows (arrays or DataFrames; for node statistics also
#: ``(X, y)`` or ``(X, y, sample_weight)`` tuples), processed one at a time.
Chunks: TypeAlias = "Iterable[Any]"

#: A feature named by its column name or its position.
FeatureKey: TypeAlias = "str | int | np.integer[Any]"

#: What a counterfactual should reach: a class label, ``"other"`` (any other
#: class than the current prediction), or a ``(low, high)`` prediction range.
TargetLike: TypeAlias = "str | int | float | bool | np.generic | tuple[float, float]"

#: A cost name, per-feature weights, or a callable ``cost(X, X_cf) -> costs``.
CostLike: TypeAlias = (
    "Literal['auto', 'l1', 'l2', 'l0', 'linf', 'cosine', 'mad'] "
    "| Mapping[str, float] "
    "| Sequence[float] | NDArray[np.float64] "
    "| Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]"
)

#: The step past a threshold: ``"auto"``, one number, or one per feature.
EpsilonLike: TypeAlias = (
    "Literal['auto'] | float | Sequence[float] | NDArray[np.float64]"
)

#: A robustness margin: feature units (one number or one per feature) or a Margin.
MarginLike: TypeAlias = "float | Sequence[float] | NDArray[np.float64] | Margin | None"

#: A fitted scikit-learn IsolationForest (on the model's columns), a fitted
#: Pipeline ending in one (with the model's preprocessing), or None.
IsolationForestLike: TypeAlias = "IsolationForest | Pipeline | None"

#: A seed, a NumPy random state or generator, or None (scikit-learn's convention).
RandomStateLike: TypeAlias = "int | np.random.RandomState | np.random.Generator | None"

#: A scikit-learn scoring name, a scorer callable, or None (the model's ``score``).
ScoringLike: TypeAlias = "str | Callable[..., float] | None"
