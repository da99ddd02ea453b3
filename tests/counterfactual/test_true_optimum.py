"""The default optimum is the least cost over all valid points, checked by an
independent brute force (``tests/counterfactual/brute.py``); a margin is never
flipped back by a perturbation within it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.counterfactual import brute
from tests.counterfactual.test_optimal_counterfactual import _model, _target
from treelens import InputError, Margin, feature_tweak, optimal_counterfactual

KINDS = ["rf_binary", "rf_multiclass", "gb_binary", "gb_multiclass", "rf_regression"]
COSTS = ["l1", "l2", "l0", "linf"]


def _boosted(library: str, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    if library == "xgboost":
        import xgboost

        model = xgboost.XGBClassifier(n_estimators=3, max_depth=2, random_state=seed)
    else:
        import lightgbm

        model = lightgbm.LGBMClassifier(
            n_estimators=3, num_leaves=4, min_child_samples=5, verbose=-1
        )
    return model.fit(X, y), X


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    cost=st.sampled_from(COSTS),
)
def test_default_optimum_has_no_cheaper_valid_point(kind, seed, cost):
    model, X = _model(kind, seed, n_features=3, n_trees=2 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    result = optimal_counterfactual(
        model, x, target=target, cost=cost, warm_start=seed % 2 == 0
    )
    expected, _ = brute.least_cost(model, x, target, cost)
    if np.isinf(expected):
        assert result.status_[0] == "infeasible"
        return
    assert result.status_[0] == "optimal"
    brute.assert_proven_optimal(result.cost_[0], expected)
    assert brute.meets(model, result.X_cf_, x, target).all()


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_boosting_libraries_in_their_own_dtype(library, seed):
    # XGBoost compares float32 values with "<", LightGBM float64 with "<=".
    model, X = _boosted(library, seed)
    for x in X[:4]:
        target = 1 - int(model.predict(x[None, :])[0])
        result = optimal_counterfactual(model, x, target=target, cost="l1")
        expected, _ = brute.least_cost(model, x, target, "l1")
        brute.assert_proven_optimal(result.cost_[0], expected)
        assert (model.predict(result.X_cf_) == target).all()


def _own_leaves(model, X):
    return np.asarray(model.apply(X)).reshape(len(X), -1)


@pytest.mark.parametrize("kind", ["rf_binary", "gb_binary", "xgboost"])
def test_each_moved_value_is_the_last_double_before_a_leaf_changes(kind):
    # A float32 model reads a double as the float32 it rounds to: the optimum
    # moves each value only as far as the double at which the model's own
    # leaves change, up to half a float32 spacing short of the float32 there.
    if kind == "xgboost":
        model, X = _boosted("xgboost", 3)
    else:
        model, X = _model(kind, 3, n_features=3, n_trees=4)
    rows = X[:10]
    result = optimal_counterfactual(model, rows, target="other", cost="l1")
    assert result.found_.sum() >= 5
    checked = 0
    for i in np.flatnonzero(result.found_):
        x, x_cf = rows[i], result.X_cf_[i]
        for j in np.flatnonzero(x_cf != x):
            closer = x_cf.copy()
            closer[j] = np.nextafter(x_cf[j], x[j])
            leaves = _own_leaves(model, np.stack([x_cf, closer]))
            assert (leaves[0] != leaves[1]).any(), (i, j)
            checked += 1
            # Not a float32 value in general: the cast moves it into the cell.
        assert (model.predict(x_cf[None, :]) != model.predict(x[None, :])).all()
    assert checked and (result.X_cf_.astype(np.float32) != result.X_cf_).any()


def test_old_auto_epsilon_was_costlier_and_tweak_follows_the_same_default():
    model, X = _model("rf_binary", 5, n_features=3, n_trees=4)
    rows = X[model.predict(X) == 0][:6]
    exact = optimal_counterfactual(model, rows, target=1, cost="l1")
    old = optimal_counterfactual(model, rows, target=1, cost="l1", epsilon="auto")
    assert (exact.cost_ <= old.cost_ + 1e-12).all() and (exact.cost_ < old.cost_).any()
    assert (exact.epsilon_ == 0).all() and (old.epsilon_ > 0).all()
    tweak = feature_tweak(model, rows, target=1, cost="l1")
    assert (tweak.epsilon_ == 0).all()
    found = tweak.found_
    assert (exact.cost_[found] <= tweak.cost_[found] * (1 + 1e-6)).all()


def test_default_cost_is_mad_with_reference_and_l1_without():
    model, X = _model("rf_binary", 2)
    assert optimal_counterfactual(model, X[:2], target=1).cost_name_ == "l1"
    assert feature_tweak(model, X[:2], target=1).cost_name_ == "l1"
    assert (
        optimal_counterfactual(model, X[:2], target=1, reference=X).cost_name_ == "mad"
    )
    assert feature_tweak(model, X[:2], target=1, reference=X).cost_name_ == "mad"


def _perturbations(rng, margin, movable, n=300):
    signs = rng.choice([-1.0, 1.0], size=(n, margin.size))
    scale = np.where(
        rng.random((n, margin.size)) < 0.5, 1.0, rng.random((n, margin.size))
    )
    return signs * scale * margin * movable


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["rf_binary", "rf_multiclass", "gb_binary", "rf_regression"]),
    seed=st.integers(0, 10_000),
    size=st.sampled_from([0.05, 0.2, 0.5]),
)
def test_a_margin_is_never_flipped_back_within_it(kind, seed, size):
    model, X = _model(kind, seed, n_features=3, n_trees=3)
    target = _target(model, kind, seed)
    rng = np.random.default_rng(seed)
    rows = X[rng.choice(len(X), 3, replace=False)]
    result = optimal_counterfactual(
        model, rows, target=target, cost="l1", margin=Margin(features=size)
    )
    exact = optimal_counterfactual(model, rows, target=target, cost="l1")
    assert (result.margin_ == size).all()
    # Rows already at the target too: each is searched for the margin (the
    # row itself where it keeps it).
    for i in np.flatnonzero(result.found_):
        moved = result.X_cf_[i] + _perturbations(rng, result.margin_, np.ones(3))
        assert brute.meets(model, moved, rows[i], target).all()
        assert result.cost_[i] >= exact.cost_[i] - 1e-12
    # Where the plain optimum exists, so may a robust one; where it does not,
    # neither does the robust one.
    assert not (result.found_ & ~exact.found_).any()


def test_vote_margin_gives_the_target_that_lead():
    model, X = _model("rf_multiclass", 11, n_features=3, n_trees=6, depth=3)
    rows = X[model.predict(X) != 2][:5]
    result = optimal_counterfactual(model, rows, target=2, margin=Margin(vote=0.2))
    assert result.vote_margin_ == 0.2
    proba = model.predict_proba(result.X_cf_[result.found_])
    lead = proba[:, 2] - np.delete(proba, 2, axis=1).max(axis=1)
    assert (lead >= 0.2 - 1e-9).all()
    plain = optimal_counterfactual(model, rows, target=2)
    assert (result.cost_[result.found_] >= plain.cost_[result.found_] - 1e-12).all()


def test_margin_as_a_fraction_of_spread_uses_the_reference():
    model, X = _model("rf_binary", 3)
    result = optimal_counterfactual(
        model, X[:3], target=1, reference=X, margin=Margin(fraction=0.1, features=0.01)
    )
    expected = np.maximum(0.1 * X.std(axis=0), 0.01)
    np.testing.assert_allclose(result.margin_, expected)


@pytest.mark.parametrize(
    "margin",
    [
        -0.1,
        np.inf,
        np.nan,
        "wide",
        Margin(vote=-1.0),
        Margin(fraction=np.inf),
        [0.1, 0.2],
    ],
)
def test_bad_margins_are_refused(margin):
    model, X = _model("rf_binary", 1)
    with pytest.raises(InputError, match="margin"):
        optimal_counterfactual(model, X[:1], target=1, margin=margin)
