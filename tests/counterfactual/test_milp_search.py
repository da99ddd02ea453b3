"""Tests of the local search that gives optimal_counterfactual its starting cutoff:
every answer is a valid counterfactual on the cell grid, descent never raises the
cost, and nothing beats the exact optimum."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

from treelens import Constraints
from treelens._counterfactual._milp._search import (
    GridSearch,
    _kick_pass,
    _move_margins,
    _move_rows,
    _paired_margins,
    descend,
    greedy_ascent,
    kick,
    one_hot_switches,
)
from treelens._counterfactual._optimal import (
    _grid_search,
    _incumbent,
    _price_row,
    _program_of,
)
from treelens._counterfactual._problem import prepare_problem

from . import brute
from .test_optimal_counterfactual import (
    CHEAP_CATEGORIES,
    KINDS,
    _brute_force,
    _model,
    _one_hot_model,
    _target,
)


def _row(model, x, target, cost, constraints=None):
    """The problem, program and priced cells of row ``x``, as
    optimal_counterfactual makes them."""
    problem = prepare_problem(
        model,
        x[None, :],
        target=target,
        cost=cost,
        epsilon=0.0,
        constraints=constraints,
        reference=None,
    )
    program = _program_of(problem, memory_budget=1e9)
    return problem, program, _price_row(problem, program, 0)


def _search(model, x, target, cost, constraints=None):
    """The local search of row ``x`` as optimal_counterfactual builds it, and
    the row's own cells."""
    problem, program, row = _row(model, x, target, cost, constraints)
    return problem, _grid_search(problem, program, row, deadline=np.inf), row.own


def _assert_valid(model, problem, search, cells):
    x_cf = search.points[cells][None, :]
    assert np.isfinite(x_cf).all()
    predicted = model.predict(x_cf)
    assert problem.target.meets(predicted, problem.current).all()
    assert problem.constraints.satisfied(problem.X, x_cf).all()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    cost=st.sampled_from(["l1", "l2", "l0", "linf"]),
)
def test_search_answers_are_valid_cheaper_and_never_below_the_optimum(kind, seed, cost):
    model, X = _model(kind, seed, n_features=3, n_trees=3 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    problem, search, own = _search(model, x, target, cost)
    climbed = greedy_ascent(search, own)
    if climbed is None:
        return
    _assert_valid(model, problem, search, climbed)
    descended = descend(search, climbed)
    _assert_valid(model, problem, search, descended)
    assert search.objective(descended) <= search.objective(climbed)
    kicked = kick(search, descended, own)
    _assert_valid(model, problem, search, kicked)
    assert search.objective(kicked) <= search.objective(descended)
    # Kicks are repeated until a pass no longer lowers the cost.
    assert search.objective(_kick_pass(search, kicked, own)) >= search.objective(kicked)
    descended = kicked
    # The objective is the cost (squared for l2) of the grid point.
    x_cf = search.points[descended][None, :]
    value = problem.cost.many(problem.X, x_cf)[0]
    np.testing.assert_allclose(
        search.objective(descended),
        value**2 if cost == "l2" else value,
        rtol=1e-9,
        atol=1e-12,
    )
    assert value >= _brute_force(model, x, target, cost=cost) - 1e-9


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 5),
    n_features=st.sampled_from([2, 3, 5]),
)
def test_move_margins_equal_the_margins_of_routed_moves(kind, seed, depth, n_features):
    # Scores read from the leaf boxes must equal those of routing each moved
    # point through the forest, for every single move and for paired moves.
    model, X = _model(
        kind, seed, n_features=n_features, n_trees=2 + seed % 6, depth=depth
    )
    target = _target(model, kind, seed)
    _, search, own = _search(model, X[seed % len(X)], target, "l1")
    program = search.program
    start = program.cell_of(
        X[(seed + 1) % len(X)].astype(np.float32).astype(np.float64)[None, :]
    )[0]
    for cells in (own, start):
        every = search.move_margins(cells)
        assert every is not None
        rows = np.tile(search.points[cells], (program.n_cells, 1))
        rows[np.arange(program.n_cells), program.cell_feature] = search.points
        np.testing.assert_allclose(every, search.margin(rows), rtol=1e-9, atol=1e-9)
        first = np.arange(program.n_cells)
        second = np.roll(first, program.n_cells // 2)
        apart = program.cell_feature[first] != program.cell_feature[second]
        first, second = first[apart], second[apart]
        rows = np.tile(search.points[cells], (first.size, 1))
        rows[np.arange(first.size), program.cell_feature[first]] = search.points[first]
        rows[np.arange(first.size), program.cell_feature[second]] = search.points[
            second
        ]
        np.testing.assert_allclose(
            _paired_margins(search, cells, first, second),
            search.margin(rows),
            rtol=1e-9,
            atol=1e-9,
        )


def test_routing_fallback_finds_the_same_counterfactuals(monkeypatch):
    # Moves are scored by routing when the boxes cannot be read (moved_scores
    # gives None); the search must reach the same cells either way.
    model, X = _model("rf_multiclass", 11, n_features=3, n_trees=6, depth=3)
    x = X[3]
    _, search, own = _search(model, x, "other", "l1")

    def run(search):
        climbed = greedy_ascent(search, own)
        assert climbed is not None
        return kick(search, descend(search, climbed), own)

    from_boxes = run(search)
    monkeypatch.setattr(GridSearch, "moved_scores", lambda self, cells: None)
    np.testing.assert_array_equal(run(search), from_boxes)


def test_descent_from_a_far_counterfactual_only_lowers_the_cost():
    model, X = _model("rf_binary", 7, n_features=4, n_trees=20, depth=4)
    declined = X[model.predict(X) == 0]
    accepted = X[model.predict(X) == 1]
    for x in declined[:5]:
        problem, search, _ = _search(model, x, 1, "l1")
        # Start from the accepted row farthest away.
        far = accepted[np.argmax(np.abs(accepted - x).sum(axis=1))]
        start = search.program.cell_of(
            far.astype(np.float32).astype(np.float64)[None, :]
        )[0]
        _assert_valid(model, problem, search, start)
        cells = descend(search, start)
        _assert_valid(model, problem, search, cells)
        assert search.objective(cells) < search.objective(start)


def test_the_warm_start_is_the_switch_of_category_where_that_is_cheapest():
    model, X, constraints = _one_hot_model()
    members = [1, 2, 3]
    switched = 0
    for x in X[model.predict(X) == 0][:8]:
        least, point = brute.least_cost_one_hot(model, x, 1, CHEAP_CATEGORIES, members)
        if np.array_equal(point[members], x[members]):
            continue  # the cheapest change keeps the category
        switched += 1
        problem, program, row = _row(model, x, 1, CHEAP_CATEGORIES, constraints)
        search = _grid_search(problem, program, row, deadline=np.inf)
        found, _ = _incumbent(problem, program, row, None, deadline=np.inf)
        assert found is not None
        x_cf = search.points[found[0]][None, :]
        _assert_valid(model, problem, search, found[0])
        assert not np.array_equal(x_cf[0, members], x[members])
        cost = problem.cost.many(problem.X, x_cf)[0]
        np.testing.assert_allclose(cost, least, rtol=1e-9)
    assert switched >= 3  # rows of both kinds


def test_a_kick_moves_a_one_hot_group_to_another_category():
    # From the best point that keeps the row's category, one pass of kicks
    # reaches the least cost, which on some rows takes a change of category
    # and a smaller move of the number than the ascent's first move.
    model, X, constraints = _one_hot_model()
    members = [1, 2, 3]
    for x in X[model.predict(X) == 0][:10]:
        problem, search, own = _search(model, x, 1, CHEAP_CATEGORIES, constraints)
        held = replace(search, movable=~search.grouped)
        start = kick(held, descend(held, greedy_ascent(held, own)), own)
        kicked = _kick_pass(search, start, own)
        _assert_valid(model, problem, search, kicked)
        least, _ = brute.least_cost_one_hot(model, x, 1, CHEAP_CATEGORIES, members)
        cost = problem.cost.many(problem.X, search.points[kicked][None, :])[0]
        np.testing.assert_allclose(cost, least, rtol=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    cost=st.sampled_from(["l1", "l2", "l0", "linf", "cheap categories"]),
    held=st.sampled_from(["none", "immutable group", "member bounded to 0"]),
)
def test_one_hot_groups_stay_one_hot_and_move_as_a_unit(seed, cost, held):
    # A group of four members beside two numbers; the search's points keep
    # exactly one 1 in the group, an immutable group where it is and a member
    # bounded to 0 at 0, and never cost less than the optimum.
    rng = np.random.default_rng(seed)
    n = 80
    hot = rng.integers(0, 4, n)
    X = np.column_stack([rng.normal(size=(n, 2)), np.eye(4)[hot]])
    signal = X[:, 0] + rng.normal(size=4)[hot] + 0.3 * rng.normal(size=n)
    y = (signal > np.median(signal)).astype(int)
    model = RandomForestClassifier(
        n_estimators=3 + seed % 4, max_depth=3, random_state=seed
    ).fit(X, y)
    members = [2, 3, 4, 5]
    x = X[np.flatnonzero(model.predict(X) == 0)[seed % 10]]
    if cost == "cheap categories":
        cost = {"norm": "l1", "weights": [1.0, 1.0, 0.1, 0.1, 0.1, 0.1]}
    zero = members[(int(np.argmax(x[members])) + 1) % 4]  # not the row's own
    extra = {
        "none": {},
        "immutable group": {"immutable": members},
        "member bounded to 0": {"bounds": {zero: (0, 0)}},
    }[held]
    constraints = Constraints(one_hot=[members], **extra)
    problem, search, own = _search(model, x, 1, cost, constraints)
    climbed = greedy_ascent(search, own)
    if climbed is None:
        return
    kicked = kick(search, descend(search, climbed), own)
    for cells in (climbed, kicked):
        _assert_valid(model, problem, search, cells)
        x_cf = search.points[cells]
        if held == "immutable group":
            np.testing.assert_array_equal(x_cf[members], x[members])
        if held == "member bounded to 0":
            assert x_cf[zero] == 0
    least = _brute_force(model, x, 1, cost=cost, constraints=constraints)
    assert problem.cost.many(problem.X, search.points[kicked][None, :])[0] >= (
        least - 1e-9
    )


@pytest.mark.parametrize("seed", range(4))
def test_switch_margins_equal_the_margins_of_routed_switches(seed):
    # Every single move and every switch of the one-hot group, from the row's
    # cells and from a row of another category, scored from the leaf boxes and
    # by routing the moved points.
    model, X, constraints = _one_hot_model()
    x = X[seed]
    _, search, own = _search(model, x, 1, "l1", constraints)
    program = search.program
    other = X[np.flatnonzero(X[:, 1 + (seed + 1) % 3] == 1)[0]]
    for cells in (own, program.cell_of(other[None, :])[0]):
        first, second = one_hot_switches(search, cells)
        assert first.size == 2  # the other two members
        single = np.flatnonzero(search.single_cells)
        first = np.concatenate([single, first])
        second = np.concatenate([np.full(single.size, -1), second])
        rows = _move_rows(search, cells, first, second, np.arange(first.size))
        np.testing.assert_array_equal(rows[:, 1:].sum(axis=1), 1)
        scores = search.moved_scores(cells)
        margins, now = _move_margins(search, cells, first, second, scores)
        np.testing.assert_allclose(margins, search.margin(rows), rtol=1e-9, atol=1e-9)
        routed, routed_now = _move_margins(search, cells, first, second, None)
        np.testing.assert_allclose(routed, search.margin(rows), rtol=1e-9, atol=1e-9)
        assert now == pytest.approx(routed_now, abs=1e-9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 10_000),
    max_steps=st.integers(0, 3),
)
def test_an_ascent_stops_after_max_steps(kind, seed, max_steps):
    model, X = _model(kind, seed, n_features=3, n_trees=3 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    problem, search, own = _search(model, x, target, cost="l1")
    if search.meets(search.points[own][None, :])[0]:
        return
    climbed = greedy_ascent(search, own, max_steps=max_steps)
    if max_steps == 0:
        assert climbed is None
    elif climbed is not None:
        # A step moves one feature (the greedy ascent makes no paired moves).
        assert (climbed != own).sum() <= max_steps
        _assert_valid(model, problem, search, climbed)


def test_kicks_go_on_while_a_pass_lowers_the_cost():
    # A row (found by scanning seeds) where a second pass of kicks, started from
    # the first pass's point, puts back other features and lowers the cost.
    model, X = _model("rf_binary", 22, n_features=6, n_trees=20, depth=4)
    target = _target(model, "rf_binary", 22)
    problem, search, own = _search(model, X[49], target, "l1")
    descended = descend(search, greedy_ascent(search, own))
    one_pass = _kick_pass(search, descended, own)
    kicked = kick(search, descended, own)
    _assert_valid(model, problem, search, kicked)
    assert search.objective(kicked) < search.objective(one_pass) - 1e-9
    assert search.objective(_kick_pass(search, kicked, own)) >= search.objective(kicked)
