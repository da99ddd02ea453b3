"""Importance as the mean absolute SHAP value, against shap's own values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
)

import treelens
from treelens import InputError
from treelens._adapters._isolation import average_path_length


def _shap_magnitude(model, X):
    import shap  # installed by make test (the test extra); never skipped

    values = np.asarray(
        shap.TreeExplainer(model).shap_values(X, check_additivity=False)
    )
    values = np.abs(values)
    return values.mean(axis=2) if values.ndim == 3 else values


@pytest.mark.parametrize("kind", ["multiclass forest", "boosted regressor"])
def test_equals_the_mean_absolute_value_of_shaps(kind):
    if kind == "multiclass forest":
        X, y = load_iris(return_X_y=True, as_frame=True)
        model = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
    else:
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    model.fit(X, y)
    result = treelens.shap_importance(model, X, n_bootstrap=50)
    magnitude = _shap_magnitude(model, X)
    assert result.method == "mean |SHAP|" and list(result.importances_.index) == list(
        X.columns
    )
    np.testing.assert_allclose(
        result.importances_.to_numpy(), magnitude.mean(axis=0), rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(
        result.std_.to_numpy(), magnitude.std(axis=0), rtol=0, atol=1e-9
    )
    inside = (result.interval_["low"] <= result.importances_) & (
        result.importances_ <= result.interval_["high"]
    )
    assert inside.all()
    assert "over 150 rows" in result.interval_method or "over 442 rows" in (
        result.interval_method
    )


def test_ranks_an_isolation_forests_columns():
    X, _ = load_iris(return_X_y=True, as_frame=True)
    model = IsolationForest(n_estimators=20, random_state=0).fit(X)
    result = treelens.shap_importance(model, X, n_bootstrap=0)
    c = average_path_length(np.array([model.max_samples_]))[0]
    # shap explains the mean path length, c(max_samples) times the raw score.
    # Rows compared where shap's values add up to the model's own output.
    import shap

    explainer = shap.TreeExplainer(model)
    values = np.asarray(explainer.shap_values(X, check_additivity=False))
    own = -np.log2(-model.score_samples(X)) * c
    kept = np.abs(explainer.expected_value + values.sum(axis=1) - own) < 1e-9
    assert kept.mean() > 0.9
    ours = np.abs(treelens.shap_values(model, X).values_)
    np.testing.assert_allclose(ours[kept], np.abs(values[kept]) / c, atol=1e-12)
    np.testing.assert_allclose(result.importances_.to_numpy(), ours.mean(axis=0))
    assert result.interval_ is None


def test_bad_interval_options_are_refused():
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(InputError, match="n_bootstrap"):
        treelens.shap_importance(model, X, n_bootstrap=-1)
    with pytest.raises(InputError, match="confidence"):
        treelens.shap_importance(model, X, confidence=1.5)
    with pytest.raises(InputError):
        treelens.shap_importance(model, pd.DataFrame(X[:, :2]))
