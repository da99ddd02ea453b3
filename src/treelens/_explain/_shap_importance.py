"""Importance as the mean absolute SHAP value: shap's bar summary, exactly.

For every feature ``j``, ``mean_i |phi_ij|`` over the rows explained, where
``phi`` are the exact TreeSHAP values of :func:`~treelens.shap_values`; with
several outputs (the classes of a multiclass model, both class probabilities of
a binary forest, whose two slices are opposite) the mean over the outputs too.
It needs no target, so it also ranks the columns of an IsolationForest by what
they add to its anomaly score, whose trees split at random (no MDI).  Like MDI
on training rows it describes the model, not how well it predicts: on held-out
rows it says what moves the predictions there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core._chunks import DEFAULT_MEMORY_BUDGET
from .._importance._intervals import (
    DEFAULT_N_BOOTSTRAP,
    bootstrap_interval,
    check_interval_options,
)
from .._importance._result import ImportanceResult
from .._types import ArrayLike, ModelLike
from ._shap import Method, shap_values

__all__ = ["shap_importance"]


def shap_importance(
    model: ModelLike,
    X: ArrayLike,
    *,
    method: Method = "path",
    background: ArrayLike | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
    random_state: int | None = 0,
    memory_budget: float | None = DEFAULT_MEMORY_BUDGET,
) -> ImportanceResult:
    """Mean absolute SHAP value of each feature over the rows of ``X``.

    Parameters
    ----------
    model : fitted tree model or Forest
        Any model :func:`treelens.to_forest` reads, IsolationForests included.
    X : array-like of shape (n_rows, n_features)
        Rows to explain (a DataFrame is matched to the model's features by name).
    method : {"path", "interventional"}, default="path"
        The SHAP values' method (see :func:`treelens.shap_values`).
    background : array-like of shape (n_background, n_features), optional
        Background rows of ``"interventional"``.
    n_bootstrap : int, default=200
        Replicates of the percentile bootstrap over the rows (``interval_``);
        0 skips it.
    confidence : float, default=0.95
    random_state : int or None, default=0
        Seed of the bootstrap.
    memory_budget : int or None, default=2**30
        Bytes one chunk of rows may take.

    Returns
    -------
    ImportanceResult
        ``importances_`` (not normalized: in the units of the explained output,
        ``method`` ``"mean |SHAP|"``), ``std_`` the standard deviation of
        ``|phi|`` over the rows, and ``interval_`` the bootstrap interval of
        the mean.

    Raises
    ------
    InputError
        As :func:`treelens.shap_values`; a bad ``n_bootstrap`` or ``confidence``.

    See Also
    --------
    shap_values, mdi_importance, permutation_importance

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> result = treelens.shap_importance(model, X, n_bootstrap=0)
    >>> result.method, result.importances_.idxmax()
    ('mean |SHAP|', 'petal width (cm)')
    """
    check_interval_options(n_bootstrap, confidence)
    values = shap_values(
        model, X, method=method, background=background, memory_budget=memory_budget
    )
    magnitude: Any = np.abs(values.values_)
    if magnitude.ndim == 3:  # one slice per output
        magnitude = magnitude.mean(axis=2)
    names = list(values.feature_names)
    interval = bootstrap_interval(
        magnitude,
        names,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        random_state=random_state,
    )
    return ImportanceResult(
        importances_=pd.Series(magnitude.mean(axis=0), index=names),
        std_=pd.Series(magnitude.std(axis=0), index=names),
        method="mean |SHAP|",
        interval_=interval,
        interval_method=(
            f"{confidence:.0%} percentile bootstrap over {magnitude.shape[0]} rows "
            f"({n_bootstrap} replicates)"
            if interval is not None
            else ""
        ),
    )
