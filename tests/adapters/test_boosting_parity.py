"""Prediction parity of XGBoost, LightGBM and HistGradientBoosting Forests with the
libraries' own predictions, on random models and on inputs at the thresholds."""

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

import treelens
from tests.models import (
    NATIVE_BOOSTING_FACTORIES,
    NO_IMPURITY_FACTORIES,
    library_predictions,
    probe_inputs,
)
from treelens import InputError, NotFittedError, UnsupportedModelError

SETTINGS = settings(max_examples=6, deadline=None)


def _data(seed, n_samples=120, n_features=3, missing=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)).round(1)
    X[rng.random(X.shape) < missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1])
    return rng, X, signal


def _probe(forest, rng, n_random=60):
    """Rows at every threshold, at the next float above (in input_dtype), random
    values and NaN."""
    dtype = forest.input_dtype.type
    cuts = np.concatenate([t.threshold[~t.is_leaf] for t in forest.trees] + [[0.0]])
    cuts = cuts[np.isfinite(cuts)]  # HistGradientBoosting splits NaN apart at +inf
    above = np.nextafter(cuts.astype(dtype), dtype(np.inf)).astype(np.float64)
    pool = np.concatenate([cuts, above])
    X = rng.choice(pool, size=(2 * pool.size + n_random, forest.n_features))
    X[-n_random:] = rng.normal(size=(n_random, forest.n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def _assert_raw_close(ours, theirs):
    theirs = np.asarray(theirs, dtype=np.float64).reshape(ours.shape)
    # XGBoost sums leaf values in float32: 1e-6 relative, with an absolute floor
    # of that order for scores near zero.
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def _check_classifier(forest, model, X):
    np.testing.assert_array_equal(forest.predict(X), model.predict(X))
    np.testing.assert_allclose(
        forest.predict_proba(X), model.predict_proba(X), atol=1e-6
    )


# ------------------------------------------------------------------ XGBoost
@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n_classes=st.sampled_from([2, 3]),
    objective=st.sampled_from(["multi:softprob", "multi:softmax"]),
    n_estimators=st.integers(1, 6),
    max_depth=st.integers(1, 4),
    learning_rate=st.floats(0.05, 1.0),
    booster=st.sampled_from(["gbtree", "dart"]),
)
def test_xgboost_classifier_parity(
    seed, n_classes, objective, n_estimators, max_depth, learning_rate, booster
):
    rng, X, signal = _data(seed)
    y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    params = {"objective": objective} if n_classes > 2 else {}
    model = xgb.XGBClassifier(
        n_estimators=n_estimators,
        max_depth=max_depth,
        learning_rate=learning_rate,
        booster=booster,
        n_jobs=1,
        random_state=seed,
        **params,
    ).fit(X, y)
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    _assert_raw_close(forest.raw_predict(Xt), model.predict(Xt, output_margin=True))
    _check_classifier(forest, model, Xt)


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    objective=st.sampled_from(
        ["reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror"]
    ),
    n_estimators=st.integers(1, 6),
    max_depth=st.integers(1, 4),
)
def test_xgboost_regressor_and_booster_parity(seed, objective, n_estimators, max_depth):
    rng, X, signal = _data(seed)
    model = xgb.XGBRegressor(
        objective=objective, n_estimators=n_estimators, max_depth=max_depth, n_jobs=1
    ).fit(X, 3 * signal + rng.normal(size=signal.size))
    Xt = _probe(treelens.to_forest(model), rng)
    for source in (model, model.get_booster()):
        forest = treelens.to_forest(source)
        _assert_raw_close(forest.raw_predict(Xt), model.predict(Xt, output_margin=True))
        _assert_raw_close(forest.predict(Xt).reshape(-1, 1), model.predict(Xt))


def test_xgboost_booster_of_binary_classifier_gives_probabilities():
    rng, X, signal = _data(1)
    model = xgb.XGBClassifier(n_estimators=4, max_depth=2, n_jobs=1).fit(X, signal > 0)
    booster = model.get_booster()
    forest = treelens.to_forest(booster)
    assert forest.source.endswith("Booster")
    Xt = _probe(forest, rng)
    np.testing.assert_allclose(
        forest.predict_proba(Xt)[:, 1], booster.predict(xgb.DMatrix(Xt)), atol=1e-6
    )


def test_xgboost_random_forest_parity():
    rng, X, signal = _data(2)
    model = xgb.XGBRFClassifier(n_estimators=4, max_depth=3, n_jobs=1).fit(
        X, signal > 0
    )
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    _check_classifier(forest, model, Xt)


def test_xgboost_early_stopping_keeps_the_best_iteration():
    rng, X, signal = _data(3, n_samples=200)
    y = (signal + rng.normal(scale=1.0, size=signal.size) > 0).astype(int)
    model = xgb.XGBClassifier(
        n_estimators=40,
        max_depth=3,
        learning_rate=0.8,
        early_stopping_rounds=2,
        n_jobs=1,
    ).fit(X[:100], y[:100], eval_set=[(X[100:], y[100:])], verbose=False)
    forest = treelens.to_forest(model)
    assert (
        forest.n_trees
        == model.best_iteration + 1
        < model.get_booster().num_boosted_rounds()
    )
    Xt = _probe(forest, rng)
    _check_classifier(forest, model, Xt)


def test_xgboost_objective_not_supported_is_named():
    _, X, signal = _data(4)
    model = xgb.XGBClassifier(objective="binary:hinge", n_estimators=2).fit(
        X, (signal > 0).astype(int)
    )
    with pytest.raises(UnsupportedModelError, match="binary:hinge"):
        treelens.to_forest(model)


def test_xgboost_non_nan_missing_marker_is_refused():
    _, X, signal = _data(6, missing=0.0)
    model = xgb.XGBClassifier(n_estimators=2, missing=0.0).fit(X, signal > 0)
    with pytest.raises(UnsupportedModelError, match="missing=0.0"):
        treelens.to_forest(model)


def test_xgboost_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        treelens.to_forest(xgb.XGBClassifier())


# ----------------------------------------------------------------- LightGBM
@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n_classes=st.sampled_from([2, 3]),
    n_estimators=st.integers(1, 6),
    num_leaves=st.integers(2, 8),
    learning_rate=st.floats(0.05, 1.0),
    boosting_type=st.sampled_from(["gbdt", "rf", "dart"]),
    labels=st.sampled_from(["int", "str"]),
)
def test_lightgbm_classifier_parity(
    seed, n_classes, n_estimators, num_leaves, learning_rate, boosting_type, labels
):
    rng, X, signal = _data(seed)
    y = np.digitize(signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1]))
    if labels == "str":
        y = np.array(["low", "mid", "high"])[y]
    extra = (
        {"bagging_freq": 1, "bagging_fraction": 0.7} if boosting_type == "rf" else {}
    )
    model = lgb.LGBMClassifier(
        n_estimators=n_estimators,
        num_leaves=num_leaves,
        learning_rate=learning_rate,
        boosting_type=boosting_type,
        min_child_samples=5,
        n_jobs=1,
        verbose=-1,
        random_state=seed,
        **extra,
    ).fit(X, y)
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    if boosting_type != "rf":  # LightGBM's raw_score does not average rf rounds
        np.testing.assert_allclose(
            forest.raw_predict(Xt),
            model.predict(Xt, raw_score=True).reshape(len(Xt), -1),
            rtol=1e-12,
            atol=1e-12,
        )
    _check_classifier(forest, model, Xt)


@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    objective=st.sampled_from(["regression", "regression_l1", "huber", "quantile"]),
    n_estimators=st.integers(1, 6),
    num_leaves=st.integers(2, 8),
    use_missing=st.booleans(),
)
def test_lightgbm_regressor_and_booster_parity(
    seed, objective, n_estimators, num_leaves, use_missing
):
    rng, X, signal = _data(seed, missing=0.1 if use_missing else 0.0)
    model = lgb.LGBMRegressor(
        objective=objective,
        n_estimators=n_estimators,
        num_leaves=num_leaves,
        min_child_samples=5,
        n_jobs=1,
        verbose=-1,
    ).fit(X, 3 * signal + rng.normal(size=signal.size))
    Xt = _probe(treelens.to_forest(model), rng)  # NaN too, also where none was seen
    for source in (model, model.booster_):
        forest = treelens.to_forest(source)
        np.testing.assert_allclose(forest.predict(Xt), model.predict(Xt), rtol=1e-12)


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_lightgbm_predictions_are_bit_for_bit(task):
    """Raw scores, probabilities (LightGBM's sigmoid and softmax, with the C
    library's exp) and predictions equal LightGBM's to the last bit, on
    thousands of distinct scores."""
    rng, X, signal = _data(11, missing=0.1)
    if task == "regression":
        model = lgb.LGBMRegressor(n_estimators=30, num_leaves=8, verbose=-1)
        y = signal
    else:
        model = lgb.LGBMClassifier(n_estimators=30, num_leaves=8, verbose=-1)
        n_classes = 2 if task == "binary" else 3
        y = np.digitize(
            signal, np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
        )
    model.set_params(n_jobs=1, random_state=11, min_child_samples=5).fit(X, y)
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    raw = model.predict(Xt, raw_score=True).reshape(len(Xt), -1)
    np.testing.assert_array_equal(forest.raw_predict(Xt), raw)
    np.testing.assert_array_equal(forest.predict(Xt), model.predict(Xt))
    if task != "regression":
        np.testing.assert_array_equal(forest.predict_proba(Xt), model.predict_proba(Xt))


def test_lightgbm_early_stopping_keeps_the_best_iteration():
    rng, X, signal = _data(7, n_samples=200)
    y = (signal + rng.normal(size=signal.size) > 0).astype(int)
    params = {
        "objective": "binary",
        "learning_rate": 0.8,
        "min_data_in_leaf": 5,
        "verbose": -1,
        "num_threads": 1,
    }
    train = lgb.Dataset(X[:100], y[:100])
    booster = lgb.train(
        params,
        train,
        num_boost_round=40,
        keep_training_booster=True,
        valid_sets=[lgb.Dataset(X[100:], y[100:], reference=train)],
        callbacks=[lgb.early_stopping(2, verbose=False)],
    )
    forest = treelens.to_forest(booster)
    assert forest.n_trees == booster.best_iteration < booster.num_trees()
    Xt = _probe(forest, rng)
    np.testing.assert_allclose(forest.predict_proba(Xt)[:, 1], booster.predict(Xt))


def test_lightgbm_objective_not_supported_is_named():
    _, X, signal = _data(8)
    model = lgb.LGBMRegressor(
        objective="cross_entropy_lambda", n_estimators=2, verbose=-1
    ).fit(X, (signal > 0).astype(float))
    with pytest.raises(UnsupportedModelError, match="cross_entropy_lambda"):
        treelens.to_forest(model)


def test_lightgbm_zero_as_missing_is_refused():
    _, X, signal = _data(10)
    model = lgb.LGBMRegressor(n_estimators=2, zero_as_missing=True, verbose=-1).fit(
        X, signal
    )
    with pytest.raises(UnsupportedModelError, match="zero_as_missing"):
        treelens.to_forest(model)


def test_lightgbm_linear_trees_are_refused():
    # Reading only the leaf values of linear trees gave silently wrong predictions.
    _, X, signal = _data(11)
    model = lgb.LGBMRegressor(n_estimators=3, linear_tree=True, verbose=-1).fit(
        X, signal
    )
    with pytest.raises(UnsupportedModelError, match="linear_tree=True"):
        treelens.to_forest(model)


def test_a_refit_lightgbm_wrapper_gets_a_new_forest():
    # The wrapper keeps its booster private and shows only `fitted_ = True`,
    # the same object after a refit: the Forest of the first fit was served.
    _, X, signal = _data(12, missing=0.0)
    model = lgb.LGBMRegressor(n_estimators=3, verbose=-1).fit(X, signal)
    first = treelens.to_forest(model)
    model.fit(X, -signal)
    forest = treelens.to_forest(model)
    assert forest is not first
    np.testing.assert_array_equal(forest.predict(X), model.predict(X))


def test_lightgbm_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        treelens.to_forest(lgb.LGBMRegressor())


# ---------------------------------------------------- HistGradientBoosting
@SETTINGS
@given(
    seed=st.integers(0, 2**16),
    n_classes=st.sampled_from([0, 2, 3]),
    max_iter=st.integers(1, 6),
    max_leaf_nodes=st.integers(2, 8),
    learning_rate=st.floats(0.05, 1.0),
)
def test_hist_gradient_boosting_parity(
    seed, n_classes, max_iter, max_leaf_nodes, learning_rate
):
    rng, X, signal = _data(seed)
    params = {
        "max_iter": max_iter,
        "max_leaf_nodes": max_leaf_nodes,
        "learning_rate": learning_rate,
        "min_samples_leaf": 5,
    }
    if n_classes:
        cuts = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
        model = HistGradientBoostingClassifier(**params).fit(
            X, np.digitize(signal, cuts)
        )
    else:
        model = HistGradientBoostingRegressor(**params).fit(X, signal)
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    np.testing.assert_array_equal(forest.raw_predict(Xt), model._raw_predict(Xt))
    if n_classes:
        _check_classifier(forest, model, Xt)
    else:
        np.testing.assert_array_equal(forest.predict(Xt), model.predict(Xt))


def test_hist_gradient_boosting_log_link_loss_is_read():
    _, X, signal = _data(11)
    model = HistGradientBoostingRegressor(loss="poisson", max_iter=2).fit(
        X, np.abs(signal)
    )
    forest = treelens.to_forest(model)
    assert forest.link == "exp" and forest.loss == "poisson"
    np.testing.assert_array_equal(forest.predict(X), model.predict(X))


# ---------------------------------------------------------- feature names
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
def test_feature_names_in_the_data_must_match_the_model(library):
    _, X, signal = _data(13)
    frame = pd.DataFrame(X, columns=["age", "income", "height"])
    if library == "xgboost":
        model = xgb.XGBRegressor(n_estimators=2, max_depth=2).fit(frame, signal)
    elif library == "lightgbm":
        model = lgb.LGBMRegressor(n_estimators=2, verbose=-1).fit(frame, signal)
    else:
        model = HistGradientBoostingRegressor(max_iter=2).fit(frame, signal)
    forest = treelens.to_forest(model)
    assert forest.feature_names == ("age", "income", "height")
    shuffled = frame[["height", "age", "income"]]
    np.testing.assert_allclose(
        forest.predict(shuffled), model.predict(frame), rtol=1e-6
    )
    with pytest.raises(
        InputError, match=r"missing \['height'\], unexpected \['weight'\]"
    ):
        forest.predict(frame.rename(columns={"height": "weight"}))
    with pytest.raises(InputError, match="differ from"):
        treelens.to_forest(model, feature_names=["a", "b", "c"])


def test_lightgbm_reads_column_names_with_spaces_as_it_stores_them():
    # LightGBM stores "annual income" as "annual_income" and predicts on the
    # user's own table; treelens refused that table for its column names.
    rng, X, signal = _data(14, missing=0.0)
    city = rng.choice(["north", "south", "east"], X.shape[0])
    frame = pd.DataFrame(
        {
            "annual income": X[:, 0],
            "age": X[:, 1],
            "home city": pd.Categorical(city),
        }
    )
    target = signal + (city == "south")
    model = lgb.LGBMRegressor(
        n_estimators=3, verbose=-1, min_child_samples=5, min_data_per_group=5
    ).fit(frame, target)
    forest = treelens.to_forest(model)
    assert forest.feature_names == ("annual_income", "age", "home_city")
    shuffled = frame[["home city", "age", "annual income"]]
    np.testing.assert_allclose(forest.predict(shuffled), model.predict(frame))
    result = treelens.shap_values(model, shuffled)
    np.testing.assert_allclose(
        result.expected_value_ + result.values_.sum(axis=1),
        model.predict(frame),
        rtol=0,
        atol=1e-9,
    )
    importance = treelens.permutation_importance(
        model, frame, target, n_repeats=2, random_state=0
    )
    assert list(importance.importances_.index) == list(forest.feature_names)
    with pytest.raises(InputError, match=r"missing the model's column\(s\) \['annual_"):
        forest.predict(frame.rename(columns={"annual income": "annual incomes"}))


# ---------------------------------------------------- factory registry
@pytest.mark.parametrize("name", sorted(NATIVE_BOOSTING_FACTORIES))
def test_factory_models_predict_like_their_library(name):
    case = NATIVE_BOOSTING_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    X = probe_inputs(forest, case.X, missing=True)
    expected = library_predictions(case.model, X)
    if forest.is_classifier:
        np.testing.assert_array_equal(forest.predict(X), expected["predict"])
    else:
        np.testing.assert_allclose(forest.predict(X), expected["predict"], rtol=1e-6)
    if expected["proba"] is not None:
        np.testing.assert_allclose(
            forest.predict_proba(X), expected["proba"], atol=1e-6
        )
    _assert_raw_close(forest.raw_predict(X), expected["raw"])


# ---------------------------------------------------------- counterfactuals
@pytest.mark.parametrize(
    "name",
    [
        "xgboost.XGBClassifier",
        "xgboost.Booster",
        "lightgbm.LGBMClassifier",
        "sklearn.HistGradientBoostingClassifier",
    ],
)
def test_feature_tweak_is_confirmed_by_the_library(name):
    case = NO_IMPURITY_FACTORIES[name]()
    X = np.nan_to_num(case.X)
    result = treelens.feature_tweak(case.model, X[:15], target=2, reference=X)
    assert result.found_.sum() >= 10
    moved = result.X_cf_[result.found_]
    expected = library_predictions(case.model, moved)["predict"]
    np.testing.assert_array_equal(expected, 2)
