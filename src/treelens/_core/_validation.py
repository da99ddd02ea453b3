"""Input checks shared by the public functions.

Validation happens once, at the public boundary; everything behind it trusts its
inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._exceptions import InputError
from ._features import (
    category_codes,
    encode,
    feature_columns,
    reads_labels,
    refuse_nones,
)

if TYPE_CHECKING:
    from ._forest import Forest

__all__ = [
    "by_position",
    "check_X",
    "check_memory_budget",
    "check_rows",
    "check_sample_weight",
    "check_y",
    "checked_float64",
    "column_names",
    "feature_index",
    "in_feature_order",
    "row_label",
]


def column_names(X: Any) -> list[str] | None:
    """Column names of a DataFrame-like ``X``, or None."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "iloc"):
        return None
    return [str(c) for c in columns]


def in_feature_order(forest: Forest, X: Any) -> Any:
    """The columns of DataFrame ``X`` that are the forest's features, in its
    order and named as it names them (see
    :func:`~treelens._core._features.feature_columns`); ``X`` was checked."""
    expected = list(forest.feature_names)
    names = feature_columns([str(c) for c in X.columns], expected)
    return X.set_axis(names, axis=1)[expected]


def by_position(forest: Forest, X: Any) -> Any:
    """``X`` as the ``fitted_model`` of ``forest`` reads it: fitted without
    feature names, that model reads its columns by position, so a DataFrame
    (under the Forest's names) is given as the array of its columns in the
    Forest's order; an array is given as it is."""
    if hasattr(X, "iloc"):
        return in_feature_order(forest, X).to_numpy()
    return X


def row_label(X: Any, position: int) -> Any:
    """How a row is named in messages: its index label in a DataFrame, else its position.

    A command line that hands over the rows it selected from a file keeps the
    file's row numbers as the index, so a message names the row the user knows.
    """
    index = getattr(X, "index", None)
    if index is not None and hasattr(X, "iloc") and 0 <= position < len(index):
        label = index[position]
        return label.item() if hasattr(label, "item") else label
    return int(position)


def check_X(forest: Forest, X: Any) -> NDArray[Any]:
    """Validate ``X`` for ``forest`` and return it as a 2-D array of ``input_dtype``.

    A DataFrame whose columns are exactly the model's feature names, in any order,
    is reordered to the model's order.  Rules:

    - ``X`` must be 2-D (a single row may be given as 1-D) with ``n_features``
      columns;
    - values must be numeric and finite; NaN is accepted only when the model
      routes missing values (``forest.allow_missing``);
    - when the forest has categorical or boolean columns, a DataFrame (or an
      object array) holds the user's labels and goes through
      :meth:`Forest.encode` first.
    """
    return checked_float64(forest, X).astype(forest.input_dtype, copy=False)


def checked_float64(forest: Forest, X: Any) -> NDArray[np.float64]:
    """``X`` checked as :func:`check_X` checks it, returned in float64 (not cast
    to ``input_dtype``): what the counterfactual searches compute on.

    The array may share memory with ``X`` (a float64 array is not copied).
    """
    if forest.has_labels and reads_labels(forest, X):
        X = encode(forest, X)
    names = column_names(X)
    if names is not None and forest.has_feature_names:
        expected = list(forest.feature_names)
        read = feature_columns(names, expected)
        if read != expected:
            missing = [n for n in expected if n not in read]
            extra = [n for n, r in zip(names, read) if r not in expected]
            if missing or extra or len(names) != len(expected):
                raise InputError(
                    "The columns of X must be the model's features "
                    f"{expected}; missing {missing}, unexpected {extra}."
                )
            X = X.set_axis(read, axis=1)[expected]
    source = X
    if names is not None and not forest.has_labels:
        refuse_nones(forest, X)
    if names is not None:
        # pandas' missing value of nullable columns ("Int64", "Float64",
        # "boolean") is pd.NA, which numpy cannot make a float: NaN instead,
        # as scikit-learn reads it.
        nullable = any(not isinstance(d, np.dtype) for d in X.dtypes)
        X = X.to_numpy(na_value=np.nan) if nullable else X.to_numpy()
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
            f"{row_label(source, int(rows[0]))}, feature {forest.feature_names[cols[0]]!r}."
        )
    refused = np.array(
        [
            not forest.allow_missing
            if spec.accepts_missing is None
            else not spec.accepts_missing
            for spec in forest.features
        ],
        dtype=bool,
    )
    if refused.any() and np.isnan(array[:, refused]).any():
        rows, cols = np.nonzero(np.isnan(array) & refused)
        raise InputError(
            "X contains NaN at row "
            f"{row_label(source, int(rows[0]))}, feature {forest.feature_names[cols[0]]!r}, but the model "
            f"({forest.source}) does not accept missing values; expected finite "
            "numbers."
        )
    _refuse_unknown_codes(forest, array, source)
    return array


def _refuse_unknown_codes(
    forest: Forest, array: NDArray[np.float64], source: Any
) -> None:
    """Refuse the unknown code in the columns whose model refuses a category it
    never saw (``FeatureSpec.accepts_unknown``), given as codes."""
    strict = [
        j
        for j, spec in enumerate(forest.features)
        if spec.is_categorical and not spec.accepts_unknown
    ]
    if not strict:
        return
    k = np.array([forest.features[j].n_categories for j in strict], dtype=np.intp)
    codes = array[:, strict]
    unknown = (category_codes(codes, k) == k) & ~np.isnan(codes)
    if unknown.any():
        rows, cols = np.nonzero(unknown)
        spec = forest.features[strict[int(cols[0])]]
        raise InputError(
            f"X holds {codes[rows[0], cols[0]]:g} at row "
            f"{row_label(source, int(rows[0]))}, categorical feature {spec.name!r}, "
            "which is no category's code and which the model refuses (an encoder "
            f"with handle_unknown='error'); expected a code 0 .. {spec.n_categories - 1}."
        )


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


def check_y(forest: Forest, y: Any, n_samples: int) -> NDArray[Any]:
    """Validate targets ``y`` for ``forest``.

    Parameters
    ----------
    forest : Forest
    y : array-like of shape (n_samples,)
        Class labels (classifiers) or numeric targets (regressors).
    n_samples : int
        Number of rows of the matching ``X``.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        For classifiers, the index of each label in ``forest.classes_`` (intp);
        for regressors, the targets as float64.

    Raises
    ------
    InputError
        If ``y`` is not 1-D, has the wrong length, holds NaN or infinity, or
        (classifiers) holds labels the model never saw.
    """
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    array = np.asarray(y)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise InputError(
            f"y must be 1-D of shape ({n_samples},); got an array of shape "
            f"{array.shape}."
        )
    if array.shape[0] != n_samples:
        raise InputError(
            f"y must have one entry per row of X; expected {n_samples} entries, "
            f"got {array.shape[0]}."
        )
    if array.dtype.kind in "fc" or array.dtype == object:
        try:
            nan = np.isnan(array.astype(np.float64))
        except (TypeError, ValueError):
            nan = np.asarray(pd.isna(array), dtype=bool)
        if nan.any():
            raise InputError(
                f"y must not contain missing values; expected finite targets, got "
                f"NaN at row {int(np.flatnonzero(nan)[0])}."
            )
    if not forest.is_classifier:
        try:
            values = array.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"y must hold numbers for a regressor; could not convert it to "
                f"floats ({exc})."
            ) from exc
        if np.isinf(values).any():
            raise InputError(
                "y must hold finite targets; got infinity at row "
                f"{int(np.flatnonzero(np.isinf(values))[0])}."
            )
        return values
    classes = np.asarray(forest.classes_)
    order = np.argsort(classes, kind="stable")
    try:
        position = np.searchsorted(classes[order], array)
    except TypeError as exc:
        raise InputError(
            f"y must hold the model's class labels {classes.tolist()}; got labels of "
            f"an incomparable type ({exc})."
        ) from exc
    position = np.minimum(position, classes.size - 1)
    unseen = classes[order][position] != array
    if np.any(unseen):
        raise InputError(
            f"y must hold only the model's classes {classes.tolist()}; got unseen "
            f"labels {np.unique(array[unseen]).tolist()}."
        )
    return order[position].astype(np.intp)


def check_sample_weight(sample_weight: Any, n_samples: int) -> NDArray[np.float64]:
    """Validate ``sample_weight`` and return it as float64, ones when None.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), float or None
        A scalar weighs every sample equally.
    n_samples : int

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), dtype float64

    Raises
    ------
    InputError
        If the weights have the wrong length or are negative or not finite.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"sample_weight must hold numbers; could not convert it to floats ({exc})."
        ) from exc
    if weights.ndim == 0:
        weights = np.full(n_samples, float(weights))
    if weights.ndim != 1 or weights.shape[0] != n_samples:
        raise InputError(
            f"sample_weight must have one entry per row of X; expected shape "
            f"({n_samples},), got {weights.shape}."
        )
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            "sample_weight must hold finite non-negative numbers; got "
            f"{weights[row]} at row {row}."
        )
    return weights


def check_rows(
    forest: Forest, X: Any, y: Any, sample_weight: Any
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
    """Validate ``X``, ``y`` and ``sample_weight`` together, with at least one row.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        As :func:`check_X`.
    y : ndarray of shape (n_samples,)
        As :func:`check_y`.
    sample_weight : ndarray of shape (n_samples,)
        As :func:`check_sample_weight` (ones when None).

    Raises
    ------
    InputError
        If ``X`` holds no row, and as the three checks.
    """
    X = check_X(forest, X)
    n_samples = X.shape[0]
    if n_samples == 0:
        raise InputError("X must hold at least one row; got 0 rows.")
    return (
        X,
        check_y(forest, y, n_samples),
        check_sample_weight(sample_weight, n_samples),
    )


def check_memory_budget(memory_budget: Any) -> int:
    """Validate a counterfactual search's memory budget (bytes, at least 1 MiB)."""
    if (
        isinstance(memory_budget, bool)
        or not isinstance(memory_budget, (int, np.integer))
        or memory_budget < 2**20
    ):
        raise InputError(
            "`memory_budget` must be a number of bytes of at least 2**20; got "
            f"{memory_budget!r}."
        )
    return int(memory_budget)
