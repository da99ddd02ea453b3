"""Unit tests of the parts counterfactual searches share: costs, epsilon,
constraints, targets, the result object and the final check."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeRegressor

from treelens import Constraints, CounterfactualResult, InputError, to_forest
from treelens._counterfactual._costs import mad_weights, resolve_cost
from treelens._counterfactual._epsilon import land_inside, resolve_epsilon
from treelens._counterfactual._problem import (
    REASON_CHECK_FAILED,
    CounterfactualCheckWarning,
    finish,
    prepare_problem,
)
from treelens._counterfactual._targets import (
    resolve_target,
    target_leaf_mask,
    voting_trees,
)


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(
        X, X[:, 0] > 0
    ), X


def test_costs_by_hand(model):
    forest = to_forest(model[0])
    x = np.array([1.0, 2.0, 0.0])
    c = np.array([[1.0, 2.0, 0.0], [4.0, -2.0, 0.0], [2.0, 4.0, 0.0]])
    expected = {
        "l1": [0, 7, 0 + 1 + 2],
        "l2": [0, 5, np.sqrt(5)],
        "l0": [0, 2, 2],
        "linf": [0, 4, 2],
        "cosine": [0, 1 - (4 - 4) / (np.sqrt(5) * np.sqrt(20)), 0],
    }
    for name, values in expected.items():
        np.testing.assert_allclose(resolve_cost(forest, name)(x, c), values, atol=1e-12)
    weighted = resolve_cost(forest, {"norm": "l2", "weights": {"x0": 2.0}})
    np.testing.assert_allclose(weighted(x, c), [0, np.sqrt(36 + 16), np.sqrt(4 + 4)])
    assert weighted.separable and weighted.norm == "l2"
    np.testing.assert_array_equal(weighted.weights, [2, 1, 1])
    np.testing.assert_allclose(resolve_cost(forest, [1, 0, 0])(x, c), [0, 3, 1])
    reference = np.array([[0.0, 0, 5], [1, 10, 5], [2, 20, 5], [3, 30, 5.0]])
    mad = resolve_cost(forest, "mad", reference)
    # MAD of x0 is 1, of x1 is 10; x2 has none and no spread: weight 1.
    np.testing.assert_allclose(mad.weights, [1.0, 0.1, 1.0])
    assert not resolve_cost(forest, "cosine").separable


def test_mad_cost_over_a_column_without_values_is_quiet():
    """A reference (one row of a file, say) with a column of missing values
    only: that column weighs 1, and numpy's all-NaN warnings stay inside."""
    import warnings

    reference = np.array([[np.nan, 0.0, 5], [np.nan, 10, 5], [np.nan, 20, 5]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weights = mad_weights(reference)
    np.testing.assert_allclose(weights, [1.0, 0.1, 1.0])


def test_epsilon_auto_and_float32_landing(model):
    forest = to_forest(model[0])
    X = model[1]
    eps = resolve_epsilon(forest, "auto", X)
    np.testing.assert_allclose(eps, 0.01 * X.std(axis=0))
    assert (resolve_epsilon(forest, "auto") > 0).all()
    np.testing.assert_array_equal(
        resolve_epsilon(forest, [0.1, 0.2, 0.3]), [0.1, 0.2, 0.3]
    )
    # Big thresholds: the floor of a few float32 spacings wins over a tiny spread.
    big = DecisionTreeRegressor(max_depth=1).fit([[1e7], [1e7 + 4.0]], [0.0, 1.0])
    floor = resolve_epsilon(to_forest(big), "auto", np.array([[1e7], [1e7 + 1e-3]]))
    assert floor[0] >= 2 * np.spacing(np.float32(1e7))
    # land_inside: the cast must land in (lower, upper].
    t = 1e7 + 2.0
    values = land_inside(
        np.array([t + 1e-6, t - 1e-6]),
        np.array([t, -np.inf]),
        np.array([np.inf, t]),
        np.float32,
    )
    assert np.float32(values[0]) > t and np.float32(values[1]) <= t


def test_constraints_feasible_intervals_and_checks(model):
    forest = to_forest(model[0])
    resolved = Constraints(
        immutable=[0],
        increase_only=["x1"],
        bounds={"x1": (None, 3), 2: (-1, 1)},
        integer=[2],
    ).resolve(forest)
    X = np.array([[0.5, 1.0, 0.0], [1.5, 4.0, 1.0]])
    lo, hi = resolved.feasible_intervals(X)
    np.testing.assert_array_equal(lo, [[0.5, 1.0, -1.0], [1.5, 4.0, -1.0]])
    np.testing.assert_array_equal(
        hi, [[0.5, 3.0, 1.0], [1.5, 3.0, 1.0]]
    )  # row 1: x1 empty
    good = np.array([[0.5, 2.0, 1.0], [1.5, 3.0, -1.0]])  # row 1 breaks increase-only
    bad = np.array([[0.6, 2.0, 1.0], [1.5, 3.5, 0.5]])
    assert resolved.satisfied(X, good).tolist() == [True, False]
    assert not resolved.satisfied(X, bad).any()
    assert "immutable" in repr(Constraints(immutable=[0]))


def test_one_hot_choice_prefers_current_then_cheapest():
    rng = np.random.default_rng(0)
    X = np.zeros((30, 3))
    X[np.arange(30), rng.integers(0, 3, 30)] = 1.0
    forest = to_forest(
        RandomForestClassifier(n_estimators=2, random_state=0).fit(X, X[:, 0])
    )
    resolved = Constraints(one_hot=[[0, 1, 2]]).resolve(forest)
    x = np.array([[1.0, 0.0, 0.0]] * 3)
    allow0 = np.array([[True, True, True], [True, True, True], [False, True, True]])
    allow1 = np.array([[True, True, True], [False, True, True], [True, True, False]])
    values, ok = resolved.choose_one_hot(
        x, allow0, allow1, np.array([0, 1, 2]), np.array([1.0, 3.0, 2.0])
    )
    np.testing.assert_array_equal(values, [[1, 0, 0], [0, 0, 1], [1, 0, 0]])
    assert ok.tolist() == [True, True, True]
    with pytest.raises(InputError, match="two one-hot groups"):
        Constraints(one_hot=[[0, 1], [1, 2]]).resolve(forest)
    with pytest.raises(InputError, match="at least two distinct"):
        Constraints(one_hot=[[0]]).resolve(forest)


def test_target_leaves_and_voting_trees():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    forest = to_forest(rf)
    from treelens import leaf_boxes

    boxes = leaf_boxes(forest)
    leaves, current = forest.apply(X[:5]), forest.predict(X[:5])
    mask = target_leaf_mask(forest, resolve_target(forest, 2), leaves, current)
    np.testing.assert_array_equal(mask[0], np.argmax(boxes.value, axis=1) == 2)
    other = target_leaf_mask(forest, resolve_target(forest, "other"), leaves, current)
    np.testing.assert_array_equal(
        other, np.argmax(boxes.value, axis=1)[None] != current[:, None]
    )
    votes = voting_trees(forest, resolve_target(forest, 2), leaves, current)
    np.testing.assert_array_equal(
        votes, np.argmax(forest.tree_values(X[:5]), axis=2) == current[:, None]
    )
    gb = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, X[:, 1] > 0)
    gforest = to_forest(gb)
    gleaves = gforest.apply(X[:5])
    gmask = target_leaf_mask(
        gforest, resolve_target(gforest, True), gleaves, gforest.predict(X[:5])
    )
    gboxes = leaf_boxes(gforest)
    now = np.stack(
        [t.value[gleaves[:, j], 0] for j, t in enumerate(gforest.trees)], axis=1
    )
    np.testing.assert_array_equal(gmask, gboxes.value[None, :, 0] > now[:, gboxes.tree])
    assert voting_trees(
        gforest, resolve_target(gforest, True), gleaves, gforest.predict(X[:5])
    ).all()


def test_finish_flags_answers_the_model_rejects(model):
    rf, X = model
    rows = X[rf.predict(X) == 0][:2]
    problem = prepare_problem(
        rf,
        rows,
        target=True,
        cost="l2",
        epsilon="auto",
        constraints=None,
        reference=None,
    )
    with pytest.warns(CounterfactualCheckWarning):
        result = finish(
            problem,
            X_cf=rows,  # unchanged rows do not reach the target
            found=np.ones(2, dtype=bool),
            cost=np.zeros(2),
            reason=np.full(2, None, dtype=object),
            method="test",
        )
    assert isinstance(result, CounterfactualResult)
    assert not result.found_.any() and (result.reason_ == REASON_CHECK_FAILED).all()
    assert np.isnan(result.X_cf_).all() and np.isinf(result.cost_).all()
    assert result.status_ is None and result.gap_ is None
    with pytest.raises(ValueError):
        result.found_[0] = True  # read-only


def test_to_forest_rebuilds_after_refit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] > 0
    model = RandomForestClassifier(n_estimators=2, warm_start=True, random_state=0).fit(
        X, y
    )
    first = to_forest(model)
    assert to_forest(model) is first
    model.set_params(n_estimators=4).fit(X, y)  # warm start grows the same list
    assert to_forest(model) is not first and to_forest(model).n_trees == 4
    refit = to_forest(model.set_params(warm_start=False).fit(X, ~y))
    assert refit is not first
    np.testing.assert_array_equal(refit.predict(X), model.predict(X))


def test_auto_epsilon_is_finite_with_missing_value_splits():
    # Trees fitted on data with NaN can split "missing vs. everything" at an
    # infinite threshold; the auto rule must measure scale on finite thresholds.
    from tests.models import MODEL_FACTORIES
    from treelens import to_forest
    from treelens._counterfactual._epsilon import resolve_epsilon

    forest = to_forest(MODEL_FACTORIES["sklearn.DecisionTreeRegressor"]().model)
    thresholds = np.concatenate([t.threshold[~t.is_leaf] for t in forest.trees])
    assert np.isinf(thresholds).any()
    epsilon = resolve_epsilon(forest, "auto")
    assert np.isfinite(epsilon).all() and (epsilon > 0).all()
