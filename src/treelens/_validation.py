"""Input checks shared by the public functions.

Validation happens once, at the public boundary; everything behind it trusts its
inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._exceptions import InputError

if TYPE_CHECKING:
    from ._forest import Forest

__all__ = ["check_X", "column_names", "feature_index"]


def column_names(X: Any) -> list[str] | None:
    """Column names of a DataFrame-like ``X``, or None."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "iloc"):
        return None
    return [str(c) for c in columns]


def check_X(forest: Forest, X: Any) -> NDArray[Any]:
    """Validate ``X`` for ``forest`` and return it as a 2-D array of ``input_dtype``.

    A DataFrame whose columns are exactly the model's feature names, in any order,
    is reordered to the model's order.  Rules:

    - ``X`` must be 2-D (a single row may be given as 1-D) with ``n_features``
      columns;
    - values must be numeric and finite; NaN is accepted only when the model
      routes missing values (``forest.allow_missing``).
    """
    names = column_names(X)
    if names is not None and forest.has_feature_names:
        expected = list(forest.feature_names)
        if names != expected:
            missing = [n for n in expected if n not in names]
            extra = [n for n in names if n not in expected]
            if missing or extra or len(names) != len(expected):
                raise InputError(
                    "The columns of X must be the model's features "
                    f"{expected}; missing {missing}, unexpected {extra}."
                )
            X = X[expected]
    if names is not None:
        X = X.to_numpy()
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"X must hold numbers only; could not convert it to floats ({exc})."
        ) from exc
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2:
        raise InputError(
            f"X must be 2-D of shape (n_samples, {forest.n_features}); got an array "
            f"with {array.ndim} dimensions."
        )
    if array.shape[1] != forest.n_features:
        raise InputError(
            f"X has {array.shape[1]} features, but the model expects "
            f"{forest.n_features} ({list(forest.feature_names)[:10]}"
            f"{'...' if forest.n_features > 10 else ''})."
        )
    if np.isinf(array).any():
        rows, cols = np.nonzero(np.isinf(array))
        raise InputError(
            "X must hold finite values; got infinity at row "
            f"{rows[0]}, feature {forest.feature_names[cols[0]]!r}."
        )
    if not forest.allow_missing and np.isnan(array).any():
        rows, cols = np.nonzero(np.isnan(array))
        raise InputError(
            "X contains NaN at row "
            f"{rows[0]}, feature {forest.feature_names[cols[0]]!r}, but the model "
            f"({forest.source}) does not accept missing values; expected finite "
            "numbers."
        )
    return array.astype(forest.input_dtype, copy=False)


def feature_index(forest: Forest, feature: Any) -> int:
    """Index of a feature given by name or position.

    Raises
    ------
    InputError
        If the name is unknown or the position out of range.
    """
    if isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
        if not 0 <= int(feature) < forest.n_features:
            raise InputError(
                f"Feature index must be in [0, {forest.n_features - 1}]; got {feature}."
            )
        return int(feature)
    name = str(feature)
    try:
        return forest.feature_names.index(name)
    except ValueError:
        raise InputError(
            f"Unknown feature {name!r}; expected one of {list(forest.feature_names)}."
        ) from None
