"""Tests of the local search that gives optimal_counterfactual its starting cutoff:
every answer is a valid counterfactual on the cell grid, descent never raises the
cost, and nothing beats the exact optimum."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treelens._counterfactual._milp._program import forest_program
from treelens._counterfactual._milp._search import (
    GridSearch,
    _kick_pass,
    _paired_margins,
    descend,
    greedy_ascent,
    kick,
)
from treelens._counterfactual._milp._solve import price_cells
from treelens._counterfactual._optimal import _decision, _meets_many
from treelens._counterfactual._problem import prepare_problem

from .test_optimal_counterfactual import (
    KINDS,
    _brute_force,
    _model,
    _one_hot_model,
    _target,
)


def _search(model, x, target, cost, constraints=None):
    problem = prepare_problem(
        model,
        x[None, :],
        target=target,
        cost=cost,
        epsilon=0.0,
        constraints=constraints,
        reference=None,
    )
    resolved = problem.constraints
    groups = tuple(int(j) for g in resolved.one_hot for j in g)
    program = forest_program(problem.forest, extra_cuts=groups)
    lo, hi = resolved.feasible_intervals(problem.X)
    points, terms = price_cells(
        program,
        problem.X[0],
        lo[0],
        hi[0],
        resolved.integer,
        problem.epsilon,
        problem.cost.terms,
    )
    decision = _decision(problem, 0)
    search = GridSearch(
        forest=problem.forest,
        program=program,
        decision=decision,
        meets=lambda X: _meets_many(problem, X, 0, program, decision),
        points=points,
        terms=terms,
        movable=~resolved.in_one_hot,
        linf=problem.cost.norm == "linf",
    )
    own = program.cell_of(problem.X)[0]
    return problem, search, own


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


def test_features_of_one_hot_groups_stay_where_they_are():
    model, X, constraints = _one_hot_model()
    for x in X[model.predict(X) == 0][:5]:
        problem, search, own = _search(model, x, 1, "l1", constraints)
        cells = greedy_ascent(search, own)
        if cells is None:
            continue
        cells = kick(search, descend(search, cells), own)
        np.testing.assert_array_equal(cells[1:], own[1:])
        _assert_valid(model, problem, search, cells)


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
