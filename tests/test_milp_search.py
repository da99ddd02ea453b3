"""Tests of the local search that gives optimal_counterfactual its starting cutoff:
every answer is a valid counterfactual on the cell grid, descent never raises the
cost, and nothing beats the exact optimum."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

from treelens import Constraints
from treelens._counterfactual import prepare_problem
from treelens._milp import price_cells
from treelens._milp_program import forest_program
from treelens._milp_search import GridSearch, descend, greedy_ascent, kick
from treelens._optimal import _decision, _meets_many

from .test_optimal_counterfactual import KINDS, _brute_force, _model, _target


def _search(model, x, target, cost, constraints=None):
    problem = prepare_problem(
        model,
        x[None, :],
        target=target,
        cost=cost,
        epsilon="auto",
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
    search = GridSearch(
        forest=problem.forest,
        program=program,
        decision=_decision(problem, 0),
        meets=lambda X: _meets_many(problem, X, 0),
        points=points,
        terms=terms,
        movable=~resolved.in_one_hot,
        linf=problem.cost.norm == "linf",
    )
    own = program.cell_of(problem.X.astype(program.input_dtype).astype(np.float64))[0]
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
    rng = np.random.default_rng(5)
    n = 120
    hot = rng.integers(0, 3, n)
    X = np.column_stack([rng.normal(size=n), np.eye(3)[hot]])
    y = ((X[:, 0] + hot - 1 + 0.3 * rng.normal(size=n)) > 0.5).astype(int)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y
    )
    constraints = Constraints(one_hot=[[1, 2, 3]])
    for x in X[model.predict(X) == 0][:5]:
        problem, search, own = _search(model, x, 1, "l1", constraints)
        cells = greedy_ascent(search, own)
        if cells is None:
            continue
        cells = kick(search, descend(search, cells), own)
        np.testing.assert_array_equal(cells[1:], own[1:])
        _assert_valid(model, problem, search, cells)
