"""Permutation importance, as a treelens importance result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._adapters import to_forest
from .._core._forest import Forest
from .._core._validation import check_sample_weight, check_X, check_y, column_names
from .._exceptions import InputError
from ._result import ImportanceResult

__all__ = ["permutation_importance"]


def permutation_importance(
    model: Any,
    X: Any,
    y: Any,
    *,
    n_repeats: int = 5,
    random_state: Any = None,
    scoring: Any = None,
    n_jobs: int | None = None,
    sample_weight: Any = None,
) -> ImportanceResult:
    """Permutation importance of every feature, by scikit-learn.

    A thin wrapper over :func:`sklearn.inspection.permutation_importance`: the
    drop in score when one feature's column is shuffled, averaged over
    ``n_repeats`` shuffles.  Inputs are checked against the model first.

    Parameters
    ----------
    model : fitted estimator
        A supported tree model (not a :class:`~treelens.Forest`: scoring calls
        the model itself).
    X : array-like of shape (n_samples, n_features)
        Preferably held-out rows.
    y : array-like of shape (n_samples,)
    n_repeats : int, default=5
    random_state : int, RandomState instance or None, default=None
    scoring : str, callable or None, default=None
        As scikit-learn's; None uses the model's ``score``.
    n_jobs : int or None, default=None
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    ImportanceResult
        ``importances_`` the mean drop, ``std_`` its standard deviation over the
        repeats, ``per_tree_`` None, ``method`` ``"permutation"``.

    See Also
    --------
    mdi_importance : importance from the trees' impurity decreases.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> result = permutation_importance(model, X, y, n_repeats=2, random_state=0)
    >>> result.method, result.importances_.shape
    ('permutation', (4,))
    """
    from sklearn.inspection import permutation_importance as sklearn_permutation

    if isinstance(model, Forest):
        raise InputError(
            "permutation_importance scores the model itself; expected a fitted "
            "estimator, got a treelens Forest."
        )
    forest = to_forest(model)
    n_samples = check_X(forest, X).shape[0]
    check_y(forest, y, n_samples)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, n_samples)
    names = column_names(X)
    if names is not None and forest.has_feature_names:
        X = X[list(forest.feature_names)]
    result = sklearn_permutation(
        model,
        X,
        y,
        scoring=scoring,
        n_repeats=n_repeats,
        n_jobs=n_jobs,
        random_state=random_state,
        sample_weight=sample_weight,
    )
    index = list(forest.feature_names)
    return ImportanceResult(
        importances_=pd.Series(
            np.asarray(result.importances_mean), index=index, name="importance"
        ),
        std_=pd.Series(np.asarray(result.importances_std), index=index, name="std"),
        per_tree_=None,
        method="permutation",
    )
