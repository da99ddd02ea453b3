"""Boosted regressors of fractions: XGBoost ``reg:logistic`` and LightGBM
``cross_entropy``, whose prediction is the logistic of the raw score.

Predictions equal each library's bit for bit (XGBoost's float32 sigmoid, and
LightGBM's ``1 / (1 + exp(-raw))``), and counterfactual target ranges are met as
the model predicts, at the least cost an independent brute force finds.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treelens
from tests.counterfactual import brute
from tests.models import make_data, probe_inputs


def _fractions(seed: int, n_samples: int = 150, n_features: int = 4):
    X, signal = make_data(
        seed,
        task="regression",
        missing=True,
        n_samples=n_samples,
        n_features=n_features,
    )
    return X, 1.0 / (1.0 + np.exp(-signal))


def _fit(library: str, seed: int, X, y, **params):
    if library == "xgboost":
        import xgboost

        model = xgboost.XGBRegressor(
            objective="reg:logistic", n_jobs=1, random_state=seed, **params
        )
    else:
        import lightgbm

        model = lightgbm.LGBMRegressor(
            objective="cross_entropy", n_jobs=1, random_state=seed, verbose=-1, **params
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    library=st.sampled_from(["xgboost", "lightgbm"]),
    n_trees=st.integers(1, 25),
    depth=st.integers(1, 5),
    rate=st.sampled_from([0.05, 0.3, 1.0]),
    seed=st.integers(0, 10_000),
)
def test_predictions_equal_the_librarys_bit_for_bit(
    library, n_trees, depth, rate, seed
):
    X, y = _fractions(seed)
    if library == "xgboost":
        params = {"n_estimators": n_trees, "max_depth": depth, "learning_rate": rate}
    else:
        params = {
            "n_estimators": n_trees,
            "num_leaves": 2**depth,
            "min_child_samples": 3,
            "learning_rate": rate,
        }
    model = _fit(library, seed, X, y, **params)
    forest = treelens.to_forest(model)
    assert forest.link == "logistic" and not forest.is_classifier
    assert forest.loss == "cross_entropy"
    probe = probe_inputs(forest, X, seed, missing=True)
    expected = np.asarray(model.predict(probe), dtype=np.float64)
    np.testing.assert_array_equal(forest.predict(probe), expected)
    if library == "xgboost":
        raw = model.predict(probe, output_margin=True)
    else:
        raw = model.predict(probe, raw_score=True)
    np.testing.assert_array_equal(forest.raw_predict(probe)[:, 0], raw)
    with pytest.raises(treelens.InputError, match="classifiers only"):
        forest.predict_proba(probe)


def test_lightgbm_takes_the_logistic_with_the_c_librarys_exp():
    """Many distinct raw scores, so that the values on which numpy's exp and
    the C library's differ are sure to be met."""
    X, y = _fractions(10)
    model = _fit(
        "lightgbm", 10, X, y, n_estimators=20, num_leaves=8, min_child_samples=3
    )
    forest = treelens.to_forest(model)
    probe = probe_inputs(forest, X, 10, missing=True)
    raw = model.predict(probe, raw_score=True)
    assert (1.0 / (1.0 + np.exp(-raw)) != model.predict(probe)).any()
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))


def test_raw_interval_is_the_logit_of_the_prediction_interval():
    X, y = _fractions(0)
    forest = treelens.to_forest(_fit("lightgbm", 0, X, y, n_estimators=2))
    low, high = forest.raw_interval(0.25, 0.5)
    assert low == pytest.approx(np.log(1 / 3), rel=1e-15) and high == 0.0
    assert forest.raw_interval(0.0, 1.0) == (-np.inf, np.inf)
    assert forest.raw_interval(-1.0, 2.0) == (-np.inf, np.inf)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_optimum_equals_brute_force(library, seed):
    X, y = _fractions(seed, n_samples=80, n_features=3)
    X = np.nan_to_num(X)
    params = (
        {"n_estimators": 3, "max_depth": 2}
        if library == "xgboost"
        else {"n_estimators": 3, "num_leaves": 3, "min_child_samples": 5}
    )
    model = _fit(library, seed, X, y, **params)
    x, targets = brute.range_targets(model, X)
    for target in targets:
        brute.assert_optimum_is_least(model, x, target)


def test_contributions_add_up_to_the_logit():
    X, y = _fractions(3)
    model = _fit("lightgbm", 3, X, y, n_estimators=5)
    values = treelens.saabas_values(model, X[:20])
    assert values.output_space_ == "raw"
    total = values.bias_ + values.values_.sum(axis=1)
    p = model.predict(X[:20])
    np.testing.assert_allclose(total, np.log(p) - np.log1p(-p), rtol=0, atol=1e-12)


def test_explain_reads_the_raw_score_as_the_logit():
    from treelens._cli._explain import _text, explain_row

    X, y = _fractions(4)
    X = np.nan_to_num(X)
    model = _fit("xgboost", 4, X, y, n_estimators=5, max_depth=2)
    explanation = explain_row(model, X, 0, target=None)
    assert explanation.link == "logistic" and explanation.output_space == "raw"
    text = _text(explanation)  # the title wraps beside the note
    assert "Contributions to the raw score (the" in text
    assert "logit of the prediction)" in text


def test_report_scores_the_cross_entropy():
    from treelens._report._page import _summary

    X, y = _fractions(5)
    model = _fit("xgboost", 5, X, y, n_estimators=5, max_depth=2)
    scores = dict(_summary(model, treelens.to_forest(model), X, y)["scores"])
    p = model.predict(X).astype(float)
    expected = -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean()
    assert scores["Mean cross-entropy"] == f"{expected:.4g}"
