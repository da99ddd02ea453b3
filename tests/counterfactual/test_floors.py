"""Each tree's least leaves are left out of the program when every leaf row only
bounds from below (``_floor_leaves``): exactly those leaves, the rows shifted by
the trees' least scores, and the optimum the same as with every leaf kept."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

from treelens import optimal_counterfactual, to_forest
from treelens._counterfactual._milp import _solve
from treelens._counterfactual._milp._program import forest_program
from treelens._counterfactual._milp._solve import (
    STRICT_MARGIN,
    _decision_rows,
    _ExtraRows,
    _floor_leaves,
    _prune,
    decision_for,
)


def _forest(kind: str, seed: int = 0):
    X, y = make_classification(
        n_samples=150, n_features=4, n_informative=3, n_redundant=0, random_state=seed
    )
    if kind == "regression":
        model = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=seed)
        return to_forest(model.fit(X, X[:, 0] + y))
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=seed)
    return to_forest(model.fit(X, y))


def _leaf_rows(forest, decision, leaf_allowed=None):
    program = forest_program(forest)
    terms = np.zeros(program.n_cells)  # every cell allowed, every leaf live
    pruned = _prune(program, decision, terms, np.inf, False, leaf_allowed)
    rows = _ExtraRows()
    assert _decision_rows(pruned, decision, STRICT_MARGIN, rows) is not None
    return program, pruned, rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_floors_are_each_trees_least_leaves_and_the_rows_shift_by_them(seed):
    forest = _forest("binary", seed)
    decision = decision_for(forest, targets=(1,))
    program, pruned, rows = _leaf_rows(forest, decision)
    n_cols = pruned.n_base
    floors = _floor_leaves(pruned, rows.matrix(n_cols), rows.lower, rows.upper)
    assert floors is not None
    # Class 1 against class 0, from the model's leaf scores, tree by tree.
    lead = decision.scores[:, 1] - decision.scores[:, 0]
    leaves, trees = pruned.y_leaves, program.leaf_tree[pruned.y_leaves]
    least = {t: lead[leaves[trees == t]].min() for t in np.unique(trees)}
    expected = np.array([lead[leaf] == least[t] for leaf, t in zip(leaves, trees)])
    np.testing.assert_array_equal(floors.dropped, expected)
    assert 0 < expected.sum() < expected.size
    shifted = floors.rows[:, pruned.y_columns].toarray()[0]
    np.testing.assert_allclose(
        shifted, lead[leaves] - [least[t] for t in trees], atol=1e-12
    )
    assert (shifted[floors.dropped] == 0).all()
    np.testing.assert_allclose(floors.lower, rows.lower - sum(least.values()))


def test_a_row_bounded_from_above_keeps_every_leaf():
    forest = _forest("regression")
    decision = decision_for(forest, low=0.0, high=1.0)
    _, pruned, rows = _leaf_rows(forest, decision)
    matrix = rows.matrix(pruned.n_base)
    assert np.isfinite(rows.upper).any()
    assert _floor_leaves(pruned, matrix, rows.lower, rows.upper) is None
    # Only a lower end: reduced.
    decision = decision_for(forest, low=0.0)
    _, pruned, rows = _leaf_rows(forest, decision)
    matrix = rows.matrix(pruned.n_base)
    assert _floor_leaves(pruned, matrix, rows.lower, rows.upper) is not None


def test_trees_with_leaves_out_of_bounds_keep_their_leaves():
    forest = _forest("binary")
    decision = decision_for(forest, targets=(1,))
    program = forest_program(forest)
    # Ban one leaf of tree 0: that tree's row must stay an equality.
    allowed = np.ones(program.n_leaves, dtype=bool)
    allowed[program.tree_leaf_offsets[0]] = False
    _, pruned, rows = _leaf_rows(forest, decision, allowed)
    floors = _floor_leaves(pruned, rows.matrix(pruned.n_base), rows.lower, rows.upper)
    assert floors is not None
    assert pruned.exact_trees[0] and not pruned.exact_trees[1:].any()
    in_first = program.leaf_tree[pruned.y_leaves] == 0
    assert not floors.dropped[in_first].any()
    assert floors.dropped[~in_first].any()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["rf", "rf3", "gb3"]))
def test_the_optimum_is_the_same_with_every_leaf_kept(seed, kind):
    # Both programs are exact; on models too large to enumerate, the optimum
    # with the floors left out must equal the one with every leaf kept.
    X, y = make_classification(
        n_samples=200,
        n_features=6,
        n_informative=4,
        n_classes=2 if kind == "rf" else 3,
        random_state=seed,
    )
    if kind == "gb3":
        model = GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0)
    else:
        model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X[np.flatnonzero(model.predict(X) == 0)[:3]]
    target = 1 if kind == "rf" else "other"
    kwargs = {"target": target, "cost": "l1", "reference": X, "time_limit": 30}
    reduced = optimal_counterfactual(model, rows, **kwargs)
    with mock.patch.object(_solve, "_floor_leaves", lambda *a: None):
        kept = optimal_counterfactual(model, rows, **kwargs)
    assert (reduced.status_ == "optimal").all() and (kept.status_ == "optimal").all()
    assert (model.predict(reduced.X_cf_) != 0).all()
    np.testing.assert_allclose(reduced.cost_, kept.cost_, rtol=1e-6)
