"""A Forest as scikit-learn scores an estimator, for permutation importance of
models that scikit-learn cannot score themselves.

Kept apart from :mod:`._permutation` so that scikit-learn is imported only when
such a model is scored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from .._core._forest import Forest

__all__ = ["scored_forest"]


class _ScoredForest(BaseEstimator):
    """A Forest as scikit-learn scores an estimator: ``predict`` (and, for a
    classifier, ``predict_proba`` and ``classes_``) are the Forest's.

    For models scikit-learn cannot score themselves: a Forest, or a booster
    read from a model file (no ``score``).  The Forest predicts as the model
    does, so the scores are the model's.  A Forest that renamed the features
    of a model fitted without names (its ``fitted_model``) is scored by that
    model's own predictions, given its columns by position.
    """

    def __init__(self, forest: Forest) -> None:
        self.forest = forest

    def fit(self, X: Any, y: Any = None) -> _ScoredForest:
        """Nothing to fit: the Forest is fitted already."""
        return self

    def predict(self, X: Any) -> NDArray[Any]:
        """The Forest's predictions (labels of a classifier)."""
        fitted = self.forest.fitted_model
        if fitted is None or not hasattr(fitted, "predict"):
            return self.forest.predict(X)
        from .._adapters._native import booster_predict
        from .._core._validation import by_position

        rows = by_position(self.forest, X)
        predicted = booster_predict(fitted, rows)  # XGBoost / LightGBM Boosters
        return np.asarray(fitted.predict(rows) if predicted is None else predicted)


class _ScoredForestClassifier(ClassifierMixin, _ScoredForest):
    """:class:`_ScoredForest` of a classifier: accuracy, probabilities."""

    @property
    def classes_(self) -> NDArray[Any]:
        """The Forest's class labels."""
        return np.asarray(self.forest.classes_)

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """The Forest's class probabilities."""
        fitted = self.forest.fitted_model
        if fitted is None or not hasattr(fitted, "classes_"):
            return self.forest.predict_proba(X)
        from .._core._validation import by_position

        return np.asarray(fitted.predict_proba(by_position(self.forest, X)))


class _ScoredForestRegressor(RegressorMixin, _ScoredForest):
    """:class:`_ScoredForest` of a regressor: R²."""


def scored_forest(forest: Forest) -> _ScoredForest:
    """``forest`` as an estimator scikit-learn's scorers accept.

    Parameters
    ----------
    forest : Forest
        A fitted Forest.

    Returns
    -------
    _ScoredForest
        A classifier (accuracy by default, ``predict_proba`` for probability
        scorers) or a regressor (R²) whose predictions are the Forest's.
    """
    if forest.is_classifier:
        return _ScoredForestClassifier(forest)
    return _ScoredForestRegressor(forest)
