"""The tables of how feature tweaking moves a categorical column equal the
rule of their module docstring, checked leaf by leaf; feature tweaking gives
the same answers with the tables and without them."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.categorical_forests import FEATURES, random_codes, random_forest
from treelens import Constraints, CounterfactualCheckWarning, LeafBoxes, feature_tweak
from treelens._counterfactual import _category_moves
from treelens._counterfactual._category_moves import category_moves, held_reach


def _reference(admitted, ok, cost, c, leaf):
    """Reach, keep, destination and price for a row of code ``c`` at ``leaf``,
    by the rule, one category at a time."""
    k = admitted.shape[1] - 1
    keep = bool(admitted[leaf, c] and ok[c])
    others = [t for t in range(k) if t != c and admitted[leaf, t] and ok[t]]
    reach = keep or bool(others)
    best, to = np.inf, 0
    for t in range(k):  # the lowest code wins a tie
        if admitted[leaf, t] and ok[t] and cost[c, t] < best:
            best, to = cost[c, t], t
    return reach, keep, to, best


def _boxes(admitted):
    n = admitted.shape[0]
    return LeafBoxes(
        tree=np.zeros(n, dtype=np.intp),
        node=np.arange(n, dtype=np.intp),
        lower=np.full((n, 1), -np.inf),
        upper=np.full((n, 1), np.inf),
        value=np.zeros((n, 1)),
        tree_offsets=np.array([0, n], dtype=np.intp),
        allowed={0: admitted},
    )


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 5),
    n_leaves=st.integers(1, 12),
    seed=st.integers(0, 10_000),
)
def test_tables_follow_the_rule_leaf_by_leaf(k, n_leaves, seed):
    rng = np.random.default_rng(seed)
    admitted = rng.random((n_leaves, k + 1)) < 0.5
    ok = rng.random(k + 1) < 0.7
    # Costs with ties, to check the lowest code wins.
    cost = rng.choice([0.5, 1.0, 2.0], size=(k + 1, k + 1))
    np.fill_diagonal(cost, 0.0)
    boxes = _boxes(admitted)
    moves = category_moves(boxes, 0, ok, cost)
    held = held_reach(boxes, 0)
    for c in range(k + 1):
        for leaf in range(n_leaves):
            reach, keep, to, price = _reference(admitted, ok, cost, c, leaf)
            assert moves.reach[c, leaf] == reach
            assert moves.keep[c, leaf] == keep
            assert held[c, leaf] == admitted[leaf, c]
            if not keep:
                assert moves.to[c, leaf] == to
                assert moves.price[c, leaf] == price
    # The same plan again is served the same tables; another plan its own.
    assert category_moves(boxes, 0, ok.copy(), cost.copy()) is moves
    assert category_moves(boxes, 0, ~ok, cost) is not moves


def _classifier(rng):
    forest = random_forest(rng, n_trees=4, max_depth=3)
    X = random_codes(rng, 8)
    X = np.nan_to_num(X)
    for j, spec in enumerate(FEATURES):
        if spec.is_categorical:
            X[:, j] = np.clip(np.floor(np.abs(X[:, j])), 0, spec.n_categories - 1)
    return forest, X


@pytest.mark.parametrize("seed", range(6))
def test_feature_tweak_is_the_same_with_and_without_tables(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    forest, X = _classifier(rng)
    values = np.unique(forest.predict(random_codes(rng, 50)))
    target = (float(values[len(values) // 2]) + 1e-9, None)
    categorical = [spec for spec in FEATURES if spec.is_categorical]
    tables = {
        spec.name: {
            (a, b): float(rng.uniform(0.1, 3.0))
            for a in spec.categories
            for b in spec.categories
            if a != b
        }
        for spec in categorical
    }
    first = categorical[0]
    allowed = Constraints(allowed={first.name: list(first.categories[1:])})
    calls = [
        {"category_cost": tables},
        {"category_cost": tables, "constraints": allowed},
        {"category_cost": 2.0},
    ]
    for kwargs in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CounterfactualCheckWarning)
            with_tables = feature_tweak(forest, X, target=target, cost="l1", **kwargs)
            monkeypatch.setattr(_category_moves, "MAX_MOVE_CELLS", 0)
            without = feature_tweak(forest, X, target=target, cost="l1", **kwargs)
            monkeypatch.undo()
        np.testing.assert_array_equal(with_tables.found_, without.found_)
        np.testing.assert_array_equal(with_tables.X_cf_, without.X_cf_)
        np.testing.assert_array_equal(with_tables.cost_, without.cost_)
        np.testing.assert_array_equal(with_tables.tree_, without.tree_)
        np.testing.assert_array_equal(with_tables.leaf_, without.leaf_)
