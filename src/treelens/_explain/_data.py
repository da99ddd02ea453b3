"""The rows being explained, as the user gave them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._core._features import category_codes, decode, reads_labels
from .._core._forest import Forest
from .._core._validation import column_names, in_feature_order

__all__ = ["checked_rows", "output_names"]


def checked_rows(forest: Forest, X: Any) -> tuple[NDArray[Any], pd.DataFrame]:
    """Validate ``X`` once; return the routing matrix and the user's rows.

    Returns
    -------
    X_routed : ndarray of shape (n_rows, n_features)
        ``X`` as the Forest routes it (its ``input_dtype``).
    data : pandas.DataFrame of shape (n_rows, n_features)
        The rows in the user's units, one column per model feature in the
        model's order; a DataFrame keeps its index and its column dtypes.
    """
    routed = forest.validate_X(X)
    names = list(forest.feature_names)
    if column_names(X) is not None:
        data = (in_feature_order(forest, X) if forest.has_feature_names else X).copy()
        data.columns = pd.Index(names)
    elif forest.has_labels and not reads_labels(forest, X):
        # Codes given: shown as the labels they stand for; a code the model never
        # saw stays the number it is.
        data = decode(forest, routed)
        for j, k in enumerate(forest.n_categories):
            if forest.features[j].is_categorical:
                code = routed[:, j]
                unknown = ~np.isnan(code) & (category_codes(code, k) == k)
                if unknown.any():
                    column = data.iloc[:, j].to_numpy(dtype=object)
                    column[unknown] = code[unknown]
                    data[names[j]] = column
    elif forest.has_labels:
        data = pd.DataFrame(
            np.asarray(X, dtype=object).reshape(routed.shape), columns=names
        )
    else:
        values = np.asarray(X, dtype=np.float64)
        data = pd.DataFrame(values.reshape(routed.shape), columns=names)
    return routed, data


def output_names(forest: Forest) -> tuple[str, ...] | None:
    """Names of the outputs a multi-output explanation has: the classes, or None."""
    if forest.classes_ is None:
        return None
    return tuple(str(c) for c in forest.classes_)
