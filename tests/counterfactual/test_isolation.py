"""A bound on an IsolationForest's anomaly score: the optimum over the points whose
score (scikit-learn's own ``score_samples``) passes it, checked by brute force over
the cells of both models, and the inputs refused."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import IsolationForest, RandomForestClassifier

from tests.counterfactual import brute
from tests.counterfactual.test_optimal_counterfactual import _model, _target
from treelens import (
    InputError,
    NotFittedError,
    counterfactual,
    optimal_counterfactual,
    to_forest,
)
from treelens._adapters._isolation import average_path_length
from treelens._counterfactual._isolation import resolve_isolation
from treelens._counterfactual._problem import CounterfactualCheckWarning


def _isolation(X, seed, **kwargs):
    options = {"n_estimators": 3, "max_samples": 16, "random_state": seed}
    return IsolationForest(**{**options, **kwargs}).fit(X)


def _bound_between_scores(isolation_forest, X, quantile):
    """A bound halfway between two distinct anomaly scores of the data (so that
    no point sits exactly on it)."""
    scores = np.unique(-isolation_forest.score_samples(X))
    k = min(int(quantile * (scores.size - 1)), scores.size - 2)
    return float(0.5 * (scores[k] + scores[k + 1]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["rf_binary", "rf_multiclass", "gb_binary", "rf_regression"]),
    seed=st.integers(0, 10_000),
    quantile=st.sampled_from([0.2, 0.5, 0.8]),
    max_features=st.sampled_from([1.0, 2]),
)
def test_optimum_over_plausible_points(kind, seed, quantile, max_features):
    model, X = _model(kind, seed, n_features=3, n_trees=2 + seed % 2)
    iso = _isolation(X, seed, max_features=max_features)
    bound = _bound_between_scores(iso, X, quantile)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    result = optimal_counterfactual(
        model,
        x,
        target=target,
        cost="l1",
        isolation_forest=iso,
        max_anomaly_score=bound,
        infer=False,
    )
    assert result.max_anomaly_score_ == bound
    # A row already at the target is searched too: the bound still holds.
    at_target = brute.meets(model, x[None, :], x, target)[0] and target != "other"
    assert result.at_target_[0] == at_target
    expected, _ = brute.least_cost(
        model,
        x,
        target,
        "l1",
        keep=lambda P: -iso.score_samples(P) <= bound,
        extra_thresholds=brute.isolation_thresholds(iso),
    )
    if np.isinf(expected):
        assert result.status_[0] == "infeasible"
        return
    brute.assert_proven_optimal(result.cost_[0], expected)
    point = result.X_cf_
    assert brute.meets(model, point, x, target)[0]
    score = -iso.score_samples(point)[0]
    assert score <= bound
    assert result.anomaly_score_[0] == score


def test_default_bound_makes_an_inlier():
    model, X = _model("rf_binary", 5, n_features=3, n_trees=5, depth=3)
    iso = _isolation(X, 5, n_estimators=8, max_samples=32, contamination=0.1)
    rows = X[model.predict(X) == 0][:6]
    result = counterfactual(
        model, rows, target=1, cost="l1", isolation_forest=iso, infer=False
    )
    assert result.max_anomaly_score_ == -iso.offset_
    found = result.found_
    assert found.all()
    assert (iso.predict(result.X_cf_) == 1).all()
    assert (model.predict(result.X_cf_) == 1).all()
    np.testing.assert_array_equal(
        result.anomaly_score_, -iso.score_samples(result.X_cf_)
    )
    free = optimal_counterfactual(model, rows, target=1, cost="l1", infer=False)
    assert (result.cost_ >= free.cost_ * (1 - 1e-6)).all()


def test_path_lengths_are_scikit_learns():
    model, X = _model("rf_binary", 2, n_features=3)
    iso = _isolation(X, 2, n_estimators=4, max_samples=40, max_features=2)
    n = np.arange(1, 60)
    from sklearn.ensemble._iforest import _average_path_length

    np.testing.assert_allclose(average_path_length(n), _average_path_length(n))
    bound = resolve_isolation(to_forest(model), iso, 0.5)
    for t, path in enumerate(bound.path):
        expected = (
            iso._decision_path_lengths[t] + iso._average_path_length_per_tree[t] - 1.0
        )
        np.testing.assert_allclose(path, expected)
    # The mapped trees route the model's columns as scikit-learn routes its own.
    for tree, estimator, features in zip(
        bound.trees, iso.estimators_, iso.estimators_features_
    ):
        node = np.zeros(len(X), dtype=np.intp)
        for _ in range(tree.max_depth):
            inner = tree.children_left[node] >= 0
            go_left = (
                X[np.arange(len(X)), tree.feature[node]].astype(np.float32)
                <= tree.threshold[node]
            )
            step = np.where(
                go_left, tree.children_left[node], tree.children_right[node]
            )
            node = np.where(inner, step, node)
        np.testing.assert_array_equal(
            node, estimator.apply(X[:, features].astype(np.float32))
        )


def test_with_leaf_support_and_options():
    model, X = _model("rf_binary", 7, n_features=3, n_trees=4, depth=3)
    iso = _isolation(X, 7, n_estimators=5, max_samples=32)
    bound = _bound_between_scores(iso, X, 0.6)
    rows = X[model.predict(X) == 0][:2]
    result = counterfactual(
        model,
        rows,
        target=1,
        cost="l1",
        reference=X,
        infer=False,
        isolation_forest=iso,
        max_anomaly_score=bound,
        min_leaf_samples=3,
        n_counterfactuals=2,
    )
    found = result.found_
    assert (-iso.score_samples(result.X_cf_[found]) <= bound).all()
    assert (result.leaf_support_[found] >= 3).all()
    assert (model.predict(result.X_cf_[found]) == 1).all()


def _named(seed):
    """A forest fitted on the named columns a, b, c, and its rows."""
    model, X = _model("rf_binary", seed, n_features=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    named = RandomForestClassifier(3, max_depth=2, random_state=seed)
    return named.fit(frame, model.predict(X)), frame


# The brute force hands the named forest arrays, as its grid is one.
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize(
    ("seed", "order"),
    [(3, ["c", "a", "b"]), (4, ["c", "a", "b"]), (5, ["c", "a", "b"]),
     (3, ["c", "a"]), (4, ["b"]), (5, ["b", "c"])],
)  # fmt: skip
def test_an_isolation_forest_on_named_columns_reads_them_by_name(seed, order):
    """An IsolationForest fitted on any of the model's columns, in any order,
    reads each by name (the columns it does not read are free): the optimum
    over the points that its own ``score_samples``, on its columns in its
    order, keeps within the bound (brute force)."""
    named, frame = _named(seed)
    iso = _isolation(frame[order], seed, n_estimators=4)
    bound = _bound_between_scores(iso, frame[order], 0.5)

    def score(points):
        return -iso.score_samples(pd.DataFrame(points, columns=frame.columns)[order])

    i = seed % len(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            named, frame.iloc[[i]], target="other", cost="l1",
            isolation_forest=iso, max_anomaly_score=bound,
        )  # fmt: skip
    # The IsolationForest's column i is the model's column order[i].
    thresholds = {
        list(frame.columns).index(order[i]): t
        for i, t in brute.isolation_thresholds(iso).items()
    }
    x = frame.to_numpy()[i]
    expected, _ = brute.least_cost(
        named, x, "other", "l1",
        keep=lambda points: score(points) <= bound, extra_thresholds=thresholds,
    )  # fmt: skip
    assert np.isfinite(expected) and result.found_[0]
    brute.assert_proven_optimal(result.cost_[0], expected)
    point = result.X_cf_
    assert list(point.columns) == ["a", "b", "c"]
    assert result.anomaly_score_[0] == -iso.score_samples(point[order])[0] <= bound
    assert named.predict(point)[0] != named.predict(frame.iloc[[i]])[0]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["c", "d", "a"], ("`isolation_forest` reads column 'd', which the model "
         "does not take; expected some of the model's columns ['a', 'b', 'c'] "
         "(any of them, in any order), got an IsolationForest fitted on "
         "['c', 'd', 'a'].")),
        (["a", "b", "c", "d", "e"], ("reads columns 'd', 'e', which the model "
         "does not take; expected some")),
    ],
    ids=["one", "several"],
)  # fmt: skip
def test_an_isolation_forest_on_other_named_columns_is_refused_naming_them(
    columns, message
):
    named, frame = _named(3)
    frame = frame.assign(d=frame["a"], e=frame["b"])
    iso = _isolation(frame[columns], 0)
    with pytest.raises(InputError, match=re.escape(message)):
        counterfactual(named, frame.iloc[:2, :3], target=1, isolation_forest=iso)


def test_bad_input():
    model, X = _model("rf_binary", 1, n_features=3)
    row = X[:1]
    with pytest.raises(InputError, match="expected 3 features, got .* 2"):
        counterfactual(model, row, target=1, isolation_forest=_isolation(X[:, :2], 0))
    with pytest.raises(NotFittedError, match="not fitted"):
        counterfactual(model, row, target=1, isolation_forest=IsolationForest())
    with pytest.raises(InputError, match="must be a fitted"):
        counterfactual(model, row, target=1, isolation_forest=model)
    iso = _isolation(X, 0)
    for bound in (np.inf, np.nan, 0.0, -0.3, 1.5, "0.5", True):
        with pytest.raises(InputError, match="max_anomaly_score"):
            counterfactual(
                model, row, target=1, isolation_forest=iso, max_anomaly_score=bound
            )
    with pytest.raises(InputError, match="isolation_forest"):
        counterfactual(model, row, target=1, max_anomaly_score=0.5)
    with pytest.raises(InputError, match="exact search"):
        counterfactual(model, row, target=1, method="tweak", isolation_forest=iso)
