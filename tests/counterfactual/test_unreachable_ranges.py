"""Regressor target ranges no prediction can meet: refused or infeasible at once.

A point range (``low == high``) ran to the time limit on forests: it is refused
with the reason.  A range between two attainable predictions of a model with
few leaf combinations is proven infeasible before any search (every choice of
one leaf per tree enumerated), checked here against hand-read leaf values and
against the brute force over every cell of the model.  A range too narrow to
hit, and a class the model's own sums deny at an exact tie, are left unsettled.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor

from tests.counterfactual import brute
from treelens import InputError, counterfactual, feature_tweak, optimal_counterfactual
from treelens._counterfactual._attainable import MAX_SUMS, no_leaves_meet


def _data(seed=0, n=200, n_features=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y


def _leaf_values(tree):
    """The values of a scikit-learn regression tree's leaves, read from its arrays."""
    leaves = tree.tree_.children_left == -1
    return np.unique(tree.tree_.value[leaves].ravel())


@pytest.mark.parametrize(
    "search", [counterfactual, optimal_counterfactual, feature_tweak]
)
def test_a_point_target_is_refused(search):
    X, y = _data()
    model = RandomForestRegressor(5, max_depth=3, random_state=0).fit(X, y)
    value = float(model.predict(X[:1])[0])
    with pytest.raises(InputError, match=r"low < high.*point target") as caught:
        search(model, X[:2], target=(value, value))
    assert repr(value) in str(caught.value)  # what was given


def test_a_range_between_two_leaves_of_one_tree_is_infeasible_at_once():
    X, y = _data()
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    values = _leaf_values(model)
    middle = 0.5 * (values[3] + values[4])
    width = 0.25 * (values[4] - values[3])
    started = time.perf_counter()
    result = counterfactual(
        model, X[:3], target=(middle - width, middle + width), time_limit=30
    )
    assert time.perf_counter() - started < 5
    assert (result.status_ == "infeasible").all() and not result.found_.any()
    # A range holding a leaf's value is met, as the model predicts.
    hit = counterfactual(model, X[:3], target=(values[4] - width, values[4] + width))
    assert hit.found_.all()
    assert (np.abs(model.predict(hit.X_cf_) - values[4]) <= width).all()


@pytest.mark.parametrize("kind", ["forest", "boosting"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_narrow_ranges_agree_with_the_brute_force(kind, seed):
    X, y = _data(seed, n_features=2)
    common = {"max_depth": 2, "random_state": seed}
    model = (
        RandomForestRegressor(3, **common)
        if kind == "forest"
        else GradientBoostingRegressor(n_estimators=3, **common)
    ).fit(X, y)
    x = X[0]
    grid = brute.grid(model, x)
    attainable = np.unique(model.predict(grid))
    rng = np.random.default_rng(seed)
    for k in rng.choice(attainable.size - 1, 4, replace=False):
        gap = attainable[k + 1] - attainable[k]
        inside = (attainable[k] - gap / 4, attainable[k] + gap / 4)
        between = (attainable[k] + gap / 4, attainable[k + 1] - gap / 4)
        for target in (inside, between):
            expected, _ = brute.least_cost(model, x, target, "l1")
            result = optimal_counterfactual(
                model, x, target=target, cost="l1", time_limit=30
            )
            if np.isinf(expected):
                assert result.status_[0] == "infeasible"
            else:
                brute.assert_proven_optimal(result.cost_[0], expected)
                assert brute.meets(model, result.X_cf_, x, target).all()


def _all_sums(scores, base):
    return np.array([base + sum(c) for c in itertools.product(*scores)])


def test_no_leaves_meet_matches_every_combination():
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = [
            rng.integers(-20, 20, rng.integers(1, 5)).astype(float) / 4
            for _ in range(rng.integers(1, 5))
        ]
        base = float(rng.integers(-3, 3))
        sums = _all_sums(scores, base)
        low = float(rng.integers(-30, 30)) / 4 + 0.1
        high = low + float(rng.integers(0, 8)) / 8
        inside = ((sums >= low) & (sums <= high)).any()
        assert no_leaves_meet(scores, base, low, high) == (not inside)
    # Open ends, and sums exactly at an end count as inside.
    trees = [np.array([0.0, 1.0]), np.array([0.0, 2.0])]
    assert not no_leaves_meet(trees, 0.0, 3.0, np.inf)
    assert no_leaves_meet(trees, 0.0, 3.5, np.inf)
    assert not no_leaves_meet(trees, 0.0, -np.inf, 0.0)
    assert no_leaves_meet(trees, 0.0, -np.inf, -0.5)


def test_no_leaves_meet_claims_nothing_for_too_many_combinations():
    # Sums 0, 2, 4, ...: a range between two of them holds none, but past the
    # enumeration's limit nothing is claimed.
    few = [np.array([0.0, 2.0])] * 4
    assert no_leaves_meet(few, 0.0, 0.5, 1.5)
    many = [np.arange(0.0, 64.0, 2.0)] * 8  # 32 ** 8 combinations
    assert 32.0**8 > float(MAX_SUMS) ** 2
    assert not no_leaves_meet(many, 0.0, 0.5, 1.5)


def test_rounding_of_the_sum_is_not_taken_for_a_gap():
    # 0.1 + 0.2 is 0.30000000000000004 in float64: a range that ends at 0.3
    # may hold the model's own sum, added in another order.
    trees = [np.array([0.1]), np.array([0.2])]
    assert not no_leaves_meet(trees, 0.0, 0.0, 0.3)
    assert not no_leaves_meet(trees, 0.0, np.nextafter(0.3, 1.0) * (1 + 1e-15), 1.0)


def test_a_range_too_narrow_to_hit_is_not_called_infeasible():
    # A range a billionth wide just above an attainable prediction: the
    # solver's answer meets it only within its tolerances and the model's own
    # arithmetic rejects it; the retry narrows the range by about 1e-5 of the
    # score spread, which leaves nothing. That proves nothing about the range
    # asked: the row is unsettled, not infeasible.
    from sklearn.datasets import load_diabetes

    from treelens._counterfactual._problem import REASON_TOO_NARROW

    X, y = load_diabetes(return_X_y=True)
    model = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y)
    value = float(model.predict(X[1:2])[0])
    target = (value + 1e-10, value + 1e-10 + 1e-9)
    # Too many leaf combinations to settle it by enumeration before the search.
    assert np.prod([est.get_n_leaves() for est in model.estimators_]) > 2.0**32
    result = optimal_counterfactual(model, X[:1], target=target, time_limit=10)
    assert result.status_.tolist() == ["time_limit"]
    assert result.reason_.tolist() == [REASON_TOO_NARROW]
    assert not result.found_[0] and np.isinf(result.gap_[0])
    again = counterfactual(model, X[:1], target=target, time_limit=10)
    assert again.status_[0] == "time_limit" and "too narrow" in again.reason_[0]


def _stumps(fractions):
    """A random forest of one stump per fraction ``(k, n)``: stump ``t`` splits
    on feature ``t`` alone, its left leaf all class 1, its right leaf ``k``
    rows of class 0 in ``n`` (each tree fitted on its own rows, with
    ``warm_start``)."""
    n_features = len(fractions)
    model = RandomForestClassifier(
        n_estimators=0, max_depth=1, bootstrap=False, max_features=None,
        warm_start=True, random_state=0,
    )  # fmt: skip
    for t, (k, n) in enumerate(fractions):
        X = np.zeros((5 + n, n_features))
        X[5:, t] = 1.0
        y = np.r_[np.ones(5), np.zeros(k), np.ones(n - k)].astype(int)
        model.set_params(n_estimators=t + 1).fit(X, y)
    return model


def test_a_class_the_model_denies_at_an_exact_tie_is_left_unsettled():
    # Class 0 gets 1/2 + 18/19 + 1/19 = 3/2 of the three trees' votes at best,
    # exactly half, but scikit-learn's sums in float64 give class 1 the last
    # bit (1.4999999999999998 against 1.5): no point is class 0.  The program
    # over the same leaf values meets the tie within HiGHS's tolerances, the
    # model rejects its answer, and the retry with a safer margin finds none:
    # the row is unsettled (a near tie), not called infeasible nor answered.
    from fractions import Fraction

    from treelens._counterfactual._problem import REASON_NEAR_TIE

    fractions = [(1, 2), (18, 19), (1, 19)]
    assert sum(Fraction(k, n) for k, n in fractions) == Fraction(3, 2)
    model = _stumps(fractions)
    x = np.zeros(3)
    proba = model.predict_proba(np.ones((1, 3)))[0]
    assert proba[0] < proba[1] and np.isclose(proba[0], proba[1], rtol=0, atol=1e-15)
    least, _ = brute.least_cost(model, x, 0, "l1")
    assert least == np.inf  # no cell's point is class 0
    for search in (optimal_counterfactual, counterfactual):
        result = search(model, x[None, :], target=0, time_limit=10)
        assert result.status_.tolist() == ["time_limit"]
        assert result.reason_.tolist() == [REASON_NEAR_TIE]
        assert not result.found_[0] and np.isinf(result.gap_[0])
