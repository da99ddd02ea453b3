"""Forest predictions equal the source model's: labels exactly, numbers to 1e-12."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import (
    MODEL_FACTORIES,
    NATIVE_BOOSTING_FACTORIES,
    PIPELINE_FACTORIES,
    make_data,
    probe_frame,
    probe_inputs,
)
from treelens import Forest, Tree

TOL = 1e-12


def assert_same_predictions(model, X):
    forest = treelens.to_forest(model)
    isolation = forest.link == "isolation"  # an IsolationForest's score_samples
    expected = model.score_samples(X) if isolation else model.predict(X)
    np.testing.assert_array_equal(forest.predict(X), expected)
    if forest.is_classifier:
        np.testing.assert_allclose(
            forest.predict_proba(X), model.predict_proba(X), rtol=0, atol=TOL
        )
    if forest.kind == "boosting":
        if forest.is_classifier:
            raw = model.decision_function(X)
        elif isolation:  # score_samples is -2 ** -raw
            raw = -np.log2(-expected)
        else:  # the raw score, which a log link exponentiates
            raw = (
                model._raw_predict(X) if forest.link != "identity" else model.predict(X)
            )
        np.testing.assert_allclose(
            forest.raw_predict(X), np.reshape(raw, (X.shape[0], -1)), rtol=0, atol=TOL
        )
    if hasattr(model, "apply"):
        leaves = np.asarray(model.apply(X)).reshape(X.shape[0], -1)
        np.testing.assert_array_equal(forest.apply(X), leaves)


# Models of other libraries: tests/test_boosting_parity.py.  The probe rows hold a
# category the model never saw, on purpose; scikit-learn's one-hot encoder warns
# of it when the source model predicts them.
@pytest.mark.filterwarnings("ignore:Found unknown categories:UserWarning")
@pytest.mark.parametrize(
    "name", sorted(set(MODEL_FACTORIES) - set(NATIVE_BOOSTING_FACTORIES))
)
def test_factory_models_predict_alike(name):
    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    if name in PIPELINE_FACTORIES:
        X = probe_frame(forest, case.X, missing=case.missing)
    else:
        X = probe_inputs(forest, case.X, missing=case.missing)
    assert_same_predictions(case.model, X)


def _classifier_params():
    return st.fixed_dictionaries(
        {
            "max_depth": st.integers(1, 6),
            "max_features": st.sampled_from([None, "sqrt", 0.5, 2]),
            "min_samples_leaf": st.integers(1, 8),
            "criterion": st.sampled_from(["gini", "entropy", "log_loss"]),
            "class_weight": st.sampled_from([None, "balanced", {0: 3.0, 1: 0.5}]),
        }
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    params=_classifier_params(),
    seed=st.integers(0, 10_000),
    forest=st.booleans(),
    bootstrap=st.booleans(),
    weighted=st.booleans(),
    missing=st.booleans(),
    n_classes=st.integers(2, 4),
)
def test_random_classifiers_predict_alike(
    params, seed, forest, bootstrap, weighted, missing, n_classes
):
    X, y = make_data(seed, task="classification", n_classes=n_classes, missing=missing)
    weights = np.random.default_rng(seed).exponential(size=y.size) if weighted else None
    if forest:
        cls = RandomForestClassifier if seed % 2 else ExtraTreesClassifier
        model = cls(n_estimators=4, bootstrap=bootstrap, random_state=seed, **params)
    else:
        model = DecisionTreeClassifier(random_state=seed, **params)
    model.fit(X, y, sample_weight=weights)
    probe = probe_inputs(treelens.to_forest(model), X, seed, missing=missing)
    assert_same_predictions(model, probe)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    max_depth=st.integers(1, 6),
    min_samples_leaf=st.integers(1, 8),
    max_features=st.sampled_from([None, 0.5, 1]),
    criterion=st.sampled_from(
        ["squared_error", "friedman_mse", "absolute_error", "poisson"]
    ),
    forest=st.booleans(),
    bootstrap=st.booleans(),
    weighted=st.booleans(),
    missing=st.booleans(),
)
def test_random_regressors_predict_alike(
    seed,
    max_depth,
    min_samples_leaf,
    max_features,
    criterion,
    forest,
    bootstrap,
    weighted,
    missing,
):
    X, y = make_data(
        seed, task="regression", missing=missing and criterion != "absolute_error"
    )
    if criterion == "poisson":
        y = np.abs(y)
    weights = np.random.default_rng(seed).exponential(size=y.size) if weighted else None
    params = {
        "max_depth": max_depth, "min_samples_leaf": min_samples_leaf,
        "max_features": max_features, "criterion": criterion, "random_state": seed,
    }  # fmt: skip
    if forest:
        model = RandomForestRegressor(n_estimators=3, bootstrap=bootstrap, **params)
    else:
        model = DecisionTreeRegressor(**params)
    model.fit(X, y, sample_weight=weights)
    probe = probe_inputs(
        treelens.to_forest(model), X, seed, missing=bool(np.isnan(X).any())
    )
    assert_same_predictions(model, probe)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(
        [
            "log_loss",
            "exponential",
            "squared_error",
            "absolute_error",
            "huber",
            "quantile",
        ]
    ),
    n_classes=st.integers(2, 3),
    max_depth=st.integers(1, 4),
    subsample=st.sampled_from([1.0, 0.7]),
    init=st.sampled_from([None, "zero"]),
)
def test_random_gradient_boosting_predicts_alike(
    seed, loss, n_classes, max_depth, subsample, init
):
    params = {
        "n_estimators": 6, "max_depth": max_depth, "subsample": subsample, "init": init,
        "random_state": seed, "learning_rate": 0.3,
    }  # fmt: skip
    if loss in ("log_loss", "exponential"):
        n_classes = 2 if loss == "exponential" else n_classes
        X, y = make_data(seed, task="classification", n_classes=n_classes)
        model = GradientBoostingClassifier(loss=loss, **params).fit(X, y)
    else:
        X, y = make_data(seed, task="regression")
        model = GradientBoostingRegressor(loss=loss, **params).fit(X, y)
    assert_same_predictions(model, probe_inputs(treelens.to_forest(model), X, seed))


def test_string_labels_and_dataframes():
    import pandas as pd

    X, y = make_data(3, task="classification")
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    labels = np.array(["low", "mid", "high"])[y]
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(frame, labels)
    forest = treelens.to_forest(model)
    assert forest.feature_names == ("a", "b", "c", "d")
    assert_same_predictions(model, frame)
    shuffled = frame[["d", "c", "b", "a"]]
    np.testing.assert_array_equal(forest.predict(shuffled), model.predict(frame))


@pytest.mark.parametrize(
    "name",
    [
        "sklearn.RandomForestClassifier",
        "sklearn.DecisionTreeRegressor",
        "sklearn.GradientBoostingClassifier",
    ],
)
def test_large_inputs_route_one_tree_at_a_time_alike(name):
    # Large inputs take the per-tree routing path of Forest.apply.
    from treelens._core._forest import _PER_TREE_MIN_ROWS

    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    probe = probe_inputs(forest, case.X, missing=case.missing)
    repeats = -(-_PER_TREE_MIN_ROWS // probe.shape[0]) + 1
    X = np.tile(probe, (repeats, 1))
    assert X.shape[0] >= _PER_TREE_MIN_ROWS
    assert_same_predictions(case.model, X)
    small = np.vstack([forest.apply(X[i : i + 1000]) for i in range(0, len(X), 1000)])
    np.testing.assert_array_equal(forest.apply(X), small)


def _stumps(values):
    """One single-leaf tree per value."""
    return tuple(
        Tree(
            children_left=[-1],
            children_right=[-1],
            feature=[-2],
            threshold=[-2.0],
            missing_go_left=[False],
            value=[[v]],
            impurity=[0.0],
            n_node_samples=[1],
            weighted_n_node_samples=[1.0],
        )
        for v in values
    )


@pytest.mark.parametrize("init_after_trees", [False, True])
def test_scores_are_added_tree_after_tree(init_after_trees):
    # 1e16 + 1 rounds to 1e16 in float64, so the order of the additions shows.
    # Left to right, as scikit-learn, XGBoost and LightGBM add, 1e16, fourteen
    # ones and -1e16 sum to 0; numpy's pairwise sum makes them 12.
    values = [1e16] + [1.0] * 14 + [-1e16]
    assert np.sum(values) == 12.0
    X = np.zeros((3, 1))
    forest = Forest(_stumps(values), "forest", "regression", 1, ("x",))
    np.testing.assert_array_equal(forest.predict(X), 0.0)
    boosted = Forest(
        _stumps(values[1:]),
        "boosting",
        "regression",
        1,
        ("x",),
        init_raw=np.array([values[0]]),
        init_after_trees=init_after_trees,
    )
    # The init score first: 1e16 absorbs each one, and -1e16 leaves 0.  Added
    # last, after 14 - 1e16 (exact in float64), it leaves 14.
    expected = 14.0 if init_after_trees else 0.0
    np.testing.assert_array_equal(boosted.predict(X), expected)


def test_float32_scores_are_added_in_float32():
    # XGBoost adds its trees in float32: 2**24 + 1 is 2**24 there.
    values = [1.0, 1.0]
    boosted = Forest(
        _stumps(values),
        "boosting",
        "regression",
        1,
        ("x",),
        init_raw=np.array([2.0**24]),
        score_dtype=np.float32,
    )
    np.testing.assert_array_equal(boosted.predict(np.zeros((2, 1))), 2.0**24)
