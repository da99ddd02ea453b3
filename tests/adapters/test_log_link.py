"""Boosted regressors with a log link: Poisson, gamma and Tweedie losses.

Their prediction is ``exp(raw)``.  The Forest's predictions equal each library's
bit for bit (CatBoost's to its own fast exponential: raw scores bit for bit),
counterfactual target ranges are met as the model predicts, and the optimum
equals an independent brute force over the cells.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treelens
from tests.counterfactual import brute
from tests.models import make_data, probe_inputs
from treelens import Forest, InputError, UnsupportedModelError
from treelens._core._exponential import float32_exp, float64_exp
from treelens._importance._replay import check_replayable

SKLEARN_LOSSES = ("poisson", "gamma")
XGBOOST_OBJECTIVES = ("count:poisson", "reg:gamma", "reg:tweedie")
LIGHTGBM_OBJECTIVES = ("poisson", "gamma", "tweedie")


def _counts(seed: int, n_samples: int = 150, n_features: int = 4, gamma=False):
    X, signal = make_data(
        seed,
        task="regression",
        missing=True,
        n_samples=n_samples,
        n_features=n_features,
    )
    y = np.random.default_rng(seed).poisson(np.exp(0.7 * signal)).astype(float)
    return X, y + 1.0 if gamma else y


def _fit(library: str, objective: str, seed: int, **params):
    X, y = _counts(seed, gamma="gamma" in objective)
    if library == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor

        model = HistGradientBoostingRegressor(
            loss=objective, random_state=seed, **params
        )
    elif library == "xgboost":
        import xgboost

        model = xgboost.XGBRegressor(
            objective=objective, n_jobs=1, random_state=seed, **params
        )
    elif library == "catboost":
        import catboost

        model = catboost.CatBoostRegressor(
            loss_function=objective,
            verbose=0,
            thread_count=1,
            random_seed=seed,
            allow_writing_files=False,
            **params,
        )
    else:
        import lightgbm

        model = lightgbm.LGBMRegressor(
            objective=objective, n_jobs=1, random_state=seed, verbose=-1, **params
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y), X


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    library=st.sampled_from(["sklearn", "xgboost", "lightgbm"]),
    which=st.integers(0, 2),
    n_trees=st.integers(1, 25),
    depth=st.integers(1, 5),
    rate=st.sampled_from([0.05, 0.3, 1.0]),
    seed=st.integers(0, 10_000),
)
def test_predictions_equal_the_librarys_bit_for_bit(
    library, which, n_trees, depth, rate, seed
):
    if library == "sklearn":
        objective = SKLEARN_LOSSES[which % 2]
        params = {"max_iter": n_trees, "max_depth": depth, "learning_rate": rate}
    elif library == "xgboost":
        objective = XGBOOST_OBJECTIVES[which]
        params = {"n_estimators": n_trees, "max_depth": depth, "learning_rate": rate}
    else:
        objective = LIGHTGBM_OBJECTIVES[which]
        params = {
            "n_estimators": n_trees,
            "num_leaves": 2**depth,
            "min_child_samples": 3,
            "learning_rate": rate,
        }
    model, X = _fit(library, objective, seed, **params)
    forest = treelens.to_forest(model)
    assert forest.link == "exp" and forest.task == "regression"
    assert forest.loss == objective.split(":")[-1]  # scikit-learn's name
    assert forest.loss_power == (1.5 if forest.loss == "tweedie" else None)
    probe = probe_inputs(forest, X, seed, missing=True)
    expected = np.asarray(model.predict(probe), dtype=np.float64)
    np.testing.assert_array_equal(forest.predict(probe), expected)
    if library == "xgboost":
        raw = model.predict(probe, output_margin=True)
    elif library == "lightgbm":
        raw = model.predict(probe, raw_score=True)
    else:
        raw = model._raw_predict(probe)
    np.testing.assert_array_equal(forest.raw_predict(probe)[:, 0], np.ravel(raw))


@pytest.mark.parametrize("loss", ["Poisson", "Tweedie:variance_power=1.5"])
def test_catboost_raw_scores_bit_for_bit_and_its_own_exponential(loss):
    import catboost

    from treelens._adapters._catboost import catboost_predict

    X, y = _counts(3)
    model = catboost.CatBoostRegressor(
        loss_function=loss,
        iterations=20,
        depth=3,
        verbose=0,
        thread_count=1,
        random_seed=0,
        allow_writing_files=False,
    ).fit(X, y)
    forest = treelens.to_forest(model)
    assert forest.link == "exp" and forest.loss == loss.split(":")[0].lower()
    probe = probe_inputs(forest, X, 3, missing=True)
    raw = model.predict(probe, prediction_type="RawFormulaVal")
    np.testing.assert_array_equal(forest.raw_predict(probe)[:, 0], raw)
    # CatBoost exponentiates with its own fast approximation (within two units
    # in the last place of the double): the predictions agree to that.
    np.testing.assert_allclose(
        forest.predict(probe), catboost_predict(model, probe), rtol=5e-16, atol=0
    )
    assert (
        catboost_predict(model, probe)
        == model.predict(probe, prediction_type="Exponent")
    ).all()


@pytest.mark.parametrize("power", [None, 1.3])
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "catboost"])
def test_the_tweedie_power_is_the_one_fitted(library, power):
    """XGBoost and LightGBM default to 1.5 (XGBoost records 1.3 as the float32
    "1.29999995"); CatBoost requires the power, given here as 1.5 by default."""
    if library == "catboost":
        loss = f"Tweedie:variance_power={1.5 if power is None else power}"
        model, _ = _fit("catboost", loss, 0, iterations=3, depth=2)
    else:
        objective = "reg:tweedie" if library == "xgboost" else "tweedie"
        params = {} if power is None else {"tweedie_variance_power": power}
        model, _ = _fit(library, objective, 0, n_estimators=3, max_depth=2, **params)
    forest = treelens.to_forest(model)
    assert forest.loss == "tweedie"
    assert forest.loss_power == (1.5 if power is None else power)


def test_float32_exponential_is_the_c_librarys():
    expf = ctypes.CDLL(ctypes.util.find_library("m")).expf
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    x = np.random.default_rng(0).uniform(-30, 30, 50_000).astype(np.float32)
    expected = np.array([expf(float(v)) for v in x.tolist()], dtype=np.float32)
    got = float32_exp(x)
    np.testing.assert_array_equal(got, expected)
    # numpy's own float32 exponential is not the C library's.
    assert (np.exp(x) != expected).any()
    assert float32_exp(np.array([np.nan, -np.inf, np.inf, 200.0], np.float32)).tolist()[
        1:
    ] == [0.0, np.inf, np.inf]


def test_float64_exponential_is_the_c_librarys():
    exp = ctypes.CDLL(ctypes.util.find_library("m")).exp
    exp.restype, exp.argtypes = ctypes.c_double, [ctypes.c_double]
    x = np.random.default_rng(1).uniform(-700, 700, 50_000)
    x[:25_000] /= 100.0  # the raw scores of most models
    expected = np.array([exp(v) for v in x.tolist()])
    np.testing.assert_array_equal(float64_exp(x), expected)
    # numpy's own float64 exponential is not the C library's.
    assert (np.exp(x) != expected).any()
    special = float64_exp(np.array([np.nan, -np.inf, np.inf, 800.0, -800.0]))
    assert np.isnan(special[0]) and special[1:].tolist() == [0.0, np.inf, np.inf, 0.0]


def test_lightgbm_exponentiates_as_the_c_library():
    """Many distinct raw scores, so that the values on which numpy's exp and
    the C library's differ (about one in twenty) are sure to be met."""
    model, X = _fit(
        "lightgbm", "poisson", 10, n_estimators=20, num_leaves=8, min_child_samples=3
    )
    forest = treelens.to_forest(model)
    probe = probe_inputs(forest, X, 10, missing=True)
    raw = model.predict(probe, raw_score=True)
    assert (np.exp(raw) != model.predict(probe)).any()
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))


def test_raw_interval_is_the_log_of_the_prediction_interval():
    model, _ = _fit("sklearn", "poisson", 0, max_iter=3)
    forest = treelens.to_forest(model)
    assert forest.raw_interval(1.0, np.e) == (0.0, 1.0)
    assert forest.raw_interval(0.0, 2.0) == (-np.inf, np.log(2.0))
    assert forest.raw_interval(-3.0, np.inf) == (-np.inf, np.inf)
    assert forest.raw_interval(-2.0, -1.0) == (-np.inf, -np.inf)
    identity = treelens.to_forest(_fit("xgboost", "reg:squarederror", 0)[0])
    assert identity.raw_interval(-2.0, 1.5) == (-2.0, 1.5)


def test_the_exp_link_belongs_to_boosted_regressors():
    model, _ = _fit("sklearn", "poisson", 0, max_iter=3)
    forest = treelens.to_forest(model)
    fields = {f: getattr(forest, f) for f in ("trees", "n_features", "feature_names")}
    with pytest.raises(InputError, match="'exp' is for boosted regressors"):
        Forest(kind="forest", task="regression", link="exp", **fields)
    with pytest.raises(InputError, match="'exp' is for boosted regressors"):
        Forest(
            kind="boosting",
            task="classification",
            link="exp",
            classes_=np.array([0, 1]),
            **fields,
        )


@pytest.mark.parametrize(
    ("library", "objective"),
    [("sklearn", "poisson"), ("xgboost", "count:poisson"), ("lightgbm", "gamma")],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_optimum_equals_brute_force(library, objective, seed):
    params = {
        "sklearn": {"max_iter": 3, "max_leaf_nodes": 3},
        "xgboost": {"n_estimators": 3, "max_depth": 2},
        "lightgbm": {"n_estimators": 3, "num_leaves": 3, "min_child_samples": 5},
    }[library]
    X, y = _counts(seed, n_samples=80, n_features=3, gamma="gamma" in objective)
    X = np.nan_to_num(X)
    model, _ = _fit(library, objective, seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    # Ask for a prediction at least the median, and one within a band.
    x, targets = brute.range_targets(model, X)
    for target in targets:
        if brute.assert_optimum_is_least(model, x, target) is None:
            continue
        tweak = treelens.feature_tweak(
            model, x[None, :], target=target, cost="l1", epsilon=0.01
        )
        if tweak.found_[0]:
            assert brute.meets(model, tweak.X_cf_, x, target).all()


def test_a_bound_on_a_prediction_the_model_makes_is_met():
    """The least a prediction may be is one the model gives: the log of that bound
    may round either way, and the answer still meets it as the model predicts."""
    model, X = _fit("lightgbm", "poisson", 4, n_estimators=5, num_leaves=4)
    X = np.nan_to_num(X)
    predictions = model.predict(X)
    low = float(np.sort(np.unique(predictions))[-3])
    rows = X[predictions < low][:5]
    result = treelens.counterfactual(model, rows, target=(low, None), cost="l1")
    assert result.found_.all()
    assert (model.predict(result.X_cf_) >= low).all()


def test_held_out_replay_is_refused_with_the_reason():
    model, X = _fit("xgboost", "count:poisson", 0, n_estimators=3)
    forest = treelens.to_forest(model)
    with pytest.raises(UnsupportedModelError, match="got 'poisson'"):
        check_replayable(forest, np.ones(len(X)))


def test_unsupported_log_link_losses_still_say_what_is_supported():
    import lightgbm

    X, y = _counts(0)
    model = lightgbm.LGBMRegressor(
        objective="regression", reg_sqrt=True, n_estimators=2, verbose=-1
    ).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="'poisson', 'gamma', 'tweedie'"):
        treelens.to_forest(model)


def test_a_vote_margin_is_a_lead_of_the_raw_score():
    model, X = _fit("sklearn", "poisson", 5, max_iter=6, max_leaf_nodes=4)
    X = np.nan_to_num(X)
    predictions = model.predict(X)
    low = float(np.quantile(predictions, 0.7))
    rows = X[predictions < low][:4]
    lead = 0.2
    result = treelens.optimal_counterfactual(
        model, rows, target=(low, None), cost="l1", margin=treelens.Margin(vote=lead)
    )
    assert result.found_.all()
    # The raw score leads log(low) by the vote: the prediction is at least
    # low * e^lead (to the rounding of the sum).
    assert (model.predict(result.X_cf_) >= low * np.exp(lead) * (1 - 1e-9)).all()
    plain = treelens.optimal_counterfactual(model, rows, target=(low, None), cost="l1")
    assert (result.cost_ >= plain.cost_ - 1e-12).all()


@pytest.mark.parametrize("objective", ["poisson", "gamma"])
def test_report_scores_the_models_own_deviance(objective):
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance

    from treelens._report._page import _summary

    model, X = _fit("lightgbm", objective, 2, n_estimators=5, num_leaves=4)
    y = _counts(2, gamma=objective == "gamma")[1]
    scores = dict(_summary(model, treelens.to_forest(model), X, y)["scores"])
    deviance = mean_poisson_deviance if objective == "poisson" else mean_gamma_deviance
    name = f"Mean {'Poisson' if objective == 'poisson' else 'gamma'} deviance"
    assert scores[name] == f"{deviance(y, model.predict(X)):.4g}"
    assert "R²" in scores
    # Targets outside the loss's domain get no deviance, and no error.
    scores = dict(_summary(model, treelens.to_forest(model), X, y - 10.0)["scores"])
    assert name not in scores


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_report_scores_the_tweedie_deviance_of_the_fitted_power(library):
    from sklearn.metrics import mean_tweedie_deviance

    from treelens._report._page import _summary

    objective = "reg:tweedie" if library == "xgboost" else "tweedie"
    model, X = _fit(
        library, objective, 2, n_estimators=5, max_depth=2, tweedie_variance_power=1.3
    )
    y = _counts(2)[1]
    assert (y == 0).any()  # zeros are in the domain of powers in [1, 2)
    forest = treelens.to_forest(model)
    predicted = model.predict(X).astype(np.float64)
    scores = dict(_summary(model, forest, X, y)["scores"])
    expected = mean_tweedie_deviance(y, predicted, power=1.3)
    assert expected != pytest.approx(mean_tweedie_deviance(y, predicted, power=1.5))
    assert scores["Mean Tweedie deviance (power 1.3)"] == f"{expected:.4g}"
    # From power 2 on, the domain excludes zeros.
    steep = dataclasses.replace(forest, loss_power=2.5)
    scores = dict(_summary(model, steep, X, y)["scores"])
    assert not any(name.startswith("Mean Tweedie") for name in scores)
    scores = dict(_summary(model, steep, X, y + 1.0)["scores"])
    expected = mean_tweedie_deviance(y + 1.0, predicted, power=2.5)
    assert scores["Mean Tweedie deviance (power 2.5)"] == f"{expected:.4g}"
    # Negative targets, or an unknown power, get no deviance, and no error.
    unknown = dataclasses.replace(forest, loss_power=None)
    for other, truth in ((forest, y - 10.0), (unknown, y)):
        scores = dict(_summary(model, other, X, truth)["scores"])
        assert not any(name.startswith("Mean Tweedie") for name in scores)
