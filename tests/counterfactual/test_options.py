"""Several different counterfactuals per row: each is the least-cost valid point
that differs from the earlier ones, checked by brute force over every cell."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.counterfactual import brute
from tests.counterfactual.test_optimal_counterfactual import (
    CHEAP_CATEGORIES,
    _model,
    _one_hot_model,
    _target,
)
from treelens import (
    CounterfactualCheckWarning,
    InputError,
    counterfactual,
    optimal_counterfactual,
)
from treelens._counterfactual._optimal import optimal_rows
from treelens._counterfactual._problem import REASON_AT_TARGET


def _differs(x, earlier, points, diversity):
    """Points that leave out a move (or a changed feature) of every earlier option."""
    ok = np.ones(len(points), dtype=bool)
    sign = np.sign(points - x)
    for option in earlier:
        own = np.sign(option - x)
        moved = own != 0
        kept = (sign == own) if diversity == "moves" else (sign != 0)
        ok &= ~(kept | ~moved).all(axis=1)
    return ok


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["rf_binary", "rf_multiclass", "gb_binary", "rf_regression"]),
    seed=st.integers(0, 10_000),
    diversity=st.sampled_from(["moves", "features"]),
    cost=st.sampled_from(["l1", "l2"]),
)
def test_each_option_is_optimal_given_the_earlier_ones(kind, seed, diversity, cost):
    model, X = _model(kind, seed, n_features=3, n_trees=2 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    result = optimal_counterfactual(
        model,
        x,
        target=target,
        cost=cost,
        n_counterfactuals=3,
        diversity=diversity,
        warm_start=seed % 2 == 0,
    )
    assert result.row_.tolist() == [0, 0, 0] and result.option_.tolist() == [1, 2, 3]
    if result.reason_[1] == REASON_AT_TARGET:
        return
    earlier = []
    for k in range(3):
        expected, _ = brute.least_cost(
            model,
            x,
            target,
            cost,
            keep=lambda P, e=tuple(earlier): _differs(x, e, P, diversity),
        )
        if np.isinf(expected):
            assert not result.found_[k] and result.status_[k] == "infeasible"
            break
        assert result.found_[k] and result.status_[k] == "optimal"
        brute.assert_proven_optimal(result.cost_[k], expected)
        assert brute.meets(model, result.X_cf_[k : k + 1], x, target).all()
        earlier.append(result.X_cf_[k])
    found = result.cost_[result.found_]
    assert (np.diff(found) >= -1e-12).all()  # cost order


@pytest.mark.parametrize("diversity", ["moves", "features"])
def test_options_over_a_one_hot_group_stay_one_hot_and_optimal(diversity):
    # The local search of a later option starts from an earlier one with one
    # move undone: undoing one member's move alone would leave two 1s (or
    # none) in the group, a start that is no answer.
    model, X, constraints = _one_hot_model()
    members = [1, 2, 3]
    for x in X[model.predict(X) == 0][:4]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CounterfactualCheckWarning)
            result = optimal_counterfactual(
                model,
                x,
                target=1,
                cost=CHEAP_CATEGORIES,
                constraints=constraints,
                n_counterfactuals=3,
                diversity=diversity,
            )
        earlier: list[np.ndarray] = []
        for k in range(3):
            expected, _ = brute.least_cost_one_hot(
                model,
                x,
                1,
                CHEAP_CATEGORIES,
                members,
                keep=lambda P, x=x, e=tuple(earlier): _differs(x, e, P, diversity),
            )
            if np.isinf(expected):
                assert not result.found_[k]
                break
            assert result.found_[k] and result.status_[k] == "optimal"
            brute.assert_proven_optimal(result.cost_[k], expected)
            assert (result.X_cf_[k, members] == np.eye(3)).all(axis=1).any()
            assert brute.meets(model, result.X_cf_[k : k + 1], x, 1).all()
            earlier.append(result.X_cf_[k])


def test_options_form_one_table_and_change_different_features():
    model, X = _model("rf_binary", 4, n_features=4, n_trees=8, depth=3)
    rows = X[model.predict(X) == 0][:3]
    result = counterfactual(
        model, rows, target=1, n_counterfactuals=3, diversity="features"
    )
    assert len(result) == 9
    frame = result.to_frame()
    assert {"row", "option"} <= set(frame.columns)
    for r in range(3):
        sets = [
            frozenset(frame[(frame.row == r) & (frame.option == o)].feature)
            for o in (1, 2, 3)
            if result.found_[3 * r + o - 1]
        ]
        for a in range(len(sets)):
            for b in range(a):
                assert not sets[b] <= sets[a]
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_rows_at_the_target_have_one_option():
    model, X = _model("rf_binary", 1)
    at = X[model.predict(X) == 1][:1]
    result = optimal_counterfactual(model, at, target=1, n_counterfactuals=2)
    assert result.found_.tolist() == [True, False]
    assert result.reason_[1] == REASON_AT_TARGET


@pytest.mark.parametrize("k", [0, -1, 1.5, "2", True, None])
def test_n_counterfactuals_must_be_a_positive_integer(k):
    model, X = _model("rf_binary", 1)
    with pytest.raises(InputError, match="n_counterfactuals"):
        counterfactual(model, X[:1], target=1, n_counterfactuals=k)
    with pytest.raises(InputError, match="n_counterfactuals"):
        optimal_counterfactual(model, X[:1], target=1, n_counterfactuals=k)


def test_several_options_need_the_exact_search():
    model, X = _model("rf_binary", 1)
    with pytest.raises(InputError, match="n_counterfactuals"):
        counterfactual(model, X[:1], target=1, method="tweak", n_counterfactuals=2)
    with pytest.raises(InputError, match="diversity"):
        counterfactual(model, X[:1], target=1, n_counterfactuals=2, diversity="dice")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["rf_binary", "rf_multiclass", "gb_binary", "rf_regression"]),
    seed=st.integers(0, 10_000),
    cost=st.sampled_from(["l1", "l2", "linf"]),
    factor=st.sampled_from([0.6, 1.4]),
    warm_start=st.booleans(),
)
def test_a_cost_to_beat_dismisses_rows_that_cannot_beat_it(
    kind, seed, cost, factor, warm_start
):
    # The search over categories passes each assignment the cost it must beat:
    # under it, the answer is the row's optimum; above it, "infeasible".
    model, X = _model(kind, seed, n_features=3, n_trees=2 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    expected, _ = brute.least_cost(model, x, target, cost)
    if not 0 < expected < np.inf:
        return
    result = optimal_rows(
        model,
        x[None, :],
        time_limit=30.0,
        warm_start=warm_start,
        memory_budget=10**9,
        below=np.array([factor * expected]),
        target=target,
        cost=cost,
        epsilon=0.0,
        constraints=None,
        reference=None,
        margin=None,
        infer=True,
        min_leaf_samples=None,
        isolation_forest=None,
        max_anomaly_score=None,
    )
    if factor < 1:
        assert not result.found_[0] and result.status_[0] == "infeasible"
    else:
        assert result.found_[0] and result.status_[0] == "optimal"
        brute.assert_proven_optimal(result.cost_[0], expected)
        assert brute.meets(model, result.X_cf_, x, target).all()
