"""Saabas contributions: by hand, against treeinterpreter and a per-row
reference, and additive on every supported model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treelens
from treelens import InputError, saabas_values
from treelens._explain import _contributions

from ..models import MODEL_FACTORIES, library_predictions, make_data
from .toys import toy_forest, toy_tree


def test_one_tree_by_hand():
    # Root 10; left leaf 4; right 16 splits on b into 12 and 20.
    forest = toy_forest([toy_tree([10, 4, 16, 12, 20])])
    result = saabas_values(forest, np.array([[0.0, 5.0], [1.0, 0.0], [1.0, 2.0]]))
    assert result.bias_ == 10.0
    np.testing.assert_array_equal(result.values_, [[-6, 0], [6, -4], [6, 4]])
    np.testing.assert_array_equal(result.prediction_, [4, 12, 20])
    assert result.output_space_ == "value"
    assert result.output_names_ is None


def test_missing_value_follows_the_model():
    forest = toy_forest([toy_tree([10, 4, 16, 12, 20])])
    # NaN in a goes left at the root (missing_go_left); NaN in b goes right.
    result = saabas_values(forest, np.array([[np.nan, 0.0], [1.0, np.nan]]))
    np.testing.assert_array_equal(result.values_, [[-6, 0], [6, 4]])


def test_averaging_and_boosting_by_hand():
    one = toy_tree([10, 4, 16, 12, 20])
    two = toy_tree([2, 0, 3, 1, 5], threshold_b=3.0)
    X = np.array([[1.0, 2.0]])  # one: a +6, b +4; two: a +1, b -2
    forest = toy_forest([one, two], kind="forest")
    result = saabas_values(forest, X)
    assert result.bias_ == 6.0
    np.testing.assert_allclose(result.values_, [[3.5, 1.0]])
    boosting = toy_forest(
        [one, two], kind="boosting", init_raw=np.array([0.5]), learning_rate=0.1
    )
    result = saabas_values(boosting, X)
    assert result.bias_ == pytest.approx(0.5 + 0.1 * 12)
    np.testing.assert_allclose(result.values_, [[0.7, 0.2]])
    np.testing.assert_allclose(result.prediction_, boosting.raw_predict(X)[:, 0])


@pytest.mark.parametrize(
    "name",
    [
        "sklearn.DecisionTreeClassifier",
        "sklearn.RandomForestClassifier",
        "sklearn.ExtraTreesClassifier",
        "sklearn.ExtraTreeClassifier",
    ],
)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_equals_treeinterpreter(name):
    from treeinterpreter import treeinterpreter

    case = MODEL_FACTORIES[name](seed=1)
    X = np.nan_to_num(case.X)
    prediction, bias, contributions = treeinterpreter.predict(case.model, X)
    result = saabas_values(case.model, X)
    np.testing.assert_allclose(result.values_, contributions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        np.broadcast_to(result.bias_, bias.shape), bias, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(result.prediction_, prediction, rtol=0, atol=1e-12)


def _reference(model, X):
    """Per-row walk down scikit-learn's own tree arrays (regressors)."""
    estimators = getattr(model, "estimators_", [model])
    out = np.zeros(X.shape)
    for estimator in np.ravel(estimators):
        tree = estimator.tree_
        for i, x in enumerate(X.astype(np.float32)):
            node = 0
            while tree.children_left[node] != -1:
                f = tree.feature[node]
                left = x[f] <= tree.threshold[node] or (
                    np.isnan(x[f]) and tree.missing_go_to_left[node]
                )
                child = tree.children_left[node] if left else tree.children_right[node]
                out[i, f] += tree.value[child, 0, 0] - tree.value[node, 0, 0]
                node = child
    if hasattr(model, "learning_rate"):
        return out * model.learning_rate
    return out / len(np.ravel(estimators))


@pytest.mark.parametrize(
    "name",
    [
        "sklearn.DecisionTreeRegressor",
        "sklearn.RandomForestRegressor",
        "sklearn.ExtraTreesRegressor",
        "sklearn.GradientBoostingRegressor",
    ],
)
def test_regressors_equal_a_per_row_walk(name):
    # treeinterpreter 0.2.3 fails on regressors under numpy 2 ("setting an array
    # element with a sequence"); a direct walk is the reference instead.
    case = MODEL_FACTORIES[name](seed=2)
    X = case.X[:40]
    result = saabas_values(case.model, X)
    np.testing.assert_allclose(result.values_, _reference(case.model, X), atol=1e-12)


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_additive_and_in_the_models_output_space(name):
    case = MODEL_FACTORIES[name](seed=0)
    forest = treelens.to_forest(case.model)
    if hasattr(case.X, "iloc"):  # a pipeline's raw rows
        X = case.X.iloc[:50]
    else:
        X = case.X[:50] if case.missing else np.nan_to_num(case.X[:50])
    result = saabas_values(case.model, X)
    total = result.bias_ + result.values_.sum(axis=1)
    scale = max(1.0, float(np.abs(result.prediction_).max()))
    np.testing.assert_allclose(total, result.prediction_, rtol=0, atol=1e-12 * scale)
    library = library_predictions(case.model, X)
    if forest.kind == "boosting":
        # A linked prediction (exp or logistic of raw): they add up to raw.
        raw_space = forest.is_classifier or forest.link != "identity"
        assert result.output_space_ == ("raw" if raw_space else "value")
        expected = np.asarray(library["raw"], dtype=float)
        expected = expected.reshape(result.prediction_.shape)
        # XGBoost sums its scores in float32.
        tolerance = 1e-5 if name.startswith("xgboost") else 1e-9
    elif forest.is_classifier:
        assert result.output_space_ == "probability"
        expected, tolerance = library["proba"], 1e-12
        assert result.values_.shape == (len(X), forest.n_features, forest.n_classes)
        assert result.output_names_ == tuple(str(c) for c in forest.classes_)
    else:
        assert result.output_space_ == "value"
        expected, tolerance = library["predict"], 1e-9
    np.testing.assert_allclose(result.prediction_, expected, rtol=0, atol=tolerance)


def test_every_way_of_summing_paths_agrees(monkeypatch):
    case = MODEL_FACTORIES["sklearn.GradientBoostingClassifier"](seed=3)
    X = case.X
    tabled = saabas_values(case.model, X)  # one leaf table, kept
    changes = _contributions._changes(treelens.to_forest(case.model))
    monkeypatch.setattr(_contributions, "_TABLE_CELLS", int(changes.tree_cells.max()))
    # Many rows: leaf tables built a block of trees at a time.
    blocked = saabas_values(treelens.to_forest(case.model), X)
    np.testing.assert_allclose(blocked.values_, tabled.values_, rtol=0, atol=1e-14)
    # One row: its paths walked up.
    for i in (0, 7):
        walked = saabas_values(treelens.to_forest(case.model), X[i])
        np.testing.assert_allclose(
            walked.values_[0], tabled.values_[i], rtol=0, atol=1e-14
        )
    monkeypatch.setattr(_contributions, "_TABLE_CELLS", 0)
    walked = saabas_values(treelens.to_forest(case.model), X)
    np.testing.assert_allclose(walked.values_, tabled.values_, rtol=0, atol=1e-14)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    n_estimators=st.integers(1, 6),
    max_depth=st.integers(1, 6),
    classification=st.booleans(),
)
def test_additivity_on_random_forests(seed, n_estimators, max_depth, classification):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    task = "classification" if classification else "regression"
    X, y = make_data(seed, task=task, n_samples=80)
    cls = RandomForestClassifier if classification else RandomForestRegressor
    model = cls(n_estimators=n_estimators, max_depth=max_depth, random_state=seed)
    model.fit(X, y)
    result = saabas_values(model, X)
    total = result.bias_ + result.values_.sum(axis=1)
    expected = model.predict_proba(X) if classification else model.predict(X)
    np.testing.assert_allclose(total, expected, rtol=0, atol=1e-12)


def test_frame_and_user_columns():
    X, y = make_data(0, task="regression", n_samples=60)
    frame = pd.DataFrame(X, columns=["p", "q", "r", "s"], index=range(100, 160))
    from sklearn.tree import DecisionTreeRegressor

    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(frame, y)
    result = saabas_values(model, frame[["s", "r", "q", "p"]].iloc[:3])
    assert result.feature_names_ == ("p", "q", "r", "s")
    assert list(result.data_.index) == [100, 101, 102]
    long = result.to_frame()
    assert list(long.columns) == ["row", "feature", "value", "contribution"]
    assert len(long) == 12
    assert long["value"].iloc[0] == frame.iloc[0, 0]
    np.testing.assert_allclose(long["contribution"], result.values_.reshape(-1))


def test_frame_of_multiclass_values():
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"](seed=0)
    result = saabas_values(case.model, np.nan_to_num(case.X[:2]))
    long = result.to_frame()
    assert list(long.columns) == ["row", "output", "feature", "value", "contribution"]
    first = long[(long["row"] == 1) & (long["output"] == result.output_names_[2])]
    np.testing.assert_allclose(first["contribution"], result.values_[1, :, 2])


def test_bad_columns_are_refused():
    case = MODEL_FACTORIES["sklearn.DecisionTreeRegressor"](seed=0)
    with pytest.raises(InputError, match="features"):
        saabas_values(case.model, case.X[:, :3])


def test_additive_with_categorical_splits():
    from ..categorical_forests import random_codes, random_forest

    rng = np.random.default_rng(2)
    for kind in ("forest", "boosting"):
        forest = random_forest(rng, n_trees=5, kind=kind)
        X = random_codes(rng, 40)
        result = saabas_values(forest, X)
        total = result.bias_ + result.values_.sum(axis=1)
        np.testing.assert_allclose(total, forest.predict(X), rtol=0, atol=1e-12)
