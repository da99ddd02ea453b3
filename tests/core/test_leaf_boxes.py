"""Leaf boxes: each training row lies in the box of its leaf and of no other leaf."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import treelens
from tests.models import (
    MODEL_FACTORIES,
    PIPELINE_FACTORIES,
    make_data,
    probe_frame,
    probe_inputs,
)


def inside(boxes, rows, X, dtype=np.float32):
    """(n_rows_of_boxes, n_samples) membership of finite samples in boxes; a
    categorical feature's code must be allowed."""
    X = X.astype(dtype).astype(np.float64)
    lower = boxes.lower[rows][:, np.newaxis, :]
    upper = boxes.upper[rows][:, np.newaxis, :]
    member = np.all((lower < X[np.newaxis]) & (X[np.newaxis] <= upper), axis=2)
    for j, allowed in boxes.allowed.items():
        k = allowed.shape[1] - 1
        x = X[:, j]
        code = np.where((x >= 0) & (x < k) & (x == np.floor(x)), x, k).astype(int)
        member &= allowed[rows][:, code]
    return member


def check_boxes(forest, X):
    boxes = treelens.leaf_boxes(forest)
    leaves = forest.apply(X)
    for t in range(forest.n_trees):
        rows = np.arange(boxes.n_leaves)[boxes.of_tree(t)]
        assert np.all(boxes.tree[rows] == t)
        assert set(boxes.node[rows]) == set(np.flatnonzero(forest.trees[t].is_leaf))
        member = inside(boxes, rows, X, forest.input_dtype)
        # Every row is in exactly one leaf box of the tree: the boxes tile space...
        np.testing.assert_array_equal(member.sum(axis=0), 1)
        # ...and that box is the leaf apply() gives.
        np.testing.assert_array_equal(
            boxes.node[rows][member.argmax(axis=0)], leaves[:, t]
        )


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_rows_lie_in_their_leaf_box_only(name):
    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    if name in PIPELINE_FACTORIES:
        X = np.nan_to_num(forest.encode(probe_frame(forest, case.X, missing=False)))
    else:
        X = probe_inputs(forest, np.nan_to_num(case.X), missing=False)
    check_boxes(forest, X)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 7), forest=st.booleans())
def test_random_trees_tile_space(seed, depth, forest):
    X, y = make_data(seed, task="regression")
    if forest:
        model = RandomForestRegressor(
            n_estimators=3, max_depth=depth, random_state=seed
        )
    else:
        model = DecisionTreeRegressor(max_depth=depth, random_state=seed)
    model.fit(X, y)
    check_boxes(
        treelens.to_forest(model), probe_inputs(treelens.to_forest(model), X, seed)
    )


def grid_points(tree, n_features):
    """One point in every cell of the grid that the tree's thresholds draw.

    Per feature with sorted thresholds t1 < ... < tk, the cells are (-inf, t1],
    (t1, t2], ..., (tk, inf); t1, ..., tk and tk + 1 represent them.
    """
    axes = []
    for j in range(n_features):
        cuts = np.unique(tree.threshold[~tree.is_leaf & (tree.feature == j)])
        axes.append(np.append(cuts, cuts[-1] + 1.0) if cuts.size else np.zeros(1))
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 4))
def test_boxes_tile_space_exactly(seed, depth):
    # Box bounds are thresholds, so each grid cell lies wholly inside or outside
    # every box: one point per cell in exactly one box proves the tiling.
    X, y = make_data(seed, task="regression")
    model = RandomForestRegressor(n_estimators=2, max_depth=depth, random_state=seed)
    forest = treelens.to_forest(model.fit(X, y))
    boxes = treelens.leaf_boxes(forest)
    for t, tree in enumerate(forest.trees):
        points = grid_points(tree, forest.n_features)
        rows = np.arange(boxes.n_leaves)[boxes.of_tree(t)]
        lower = boxes.lower[rows][:, np.newaxis, :]
        upper = boxes.upper[rows][:, np.newaxis, :]
        member = np.all((lower < points) & (points <= upper), axis=2)
        np.testing.assert_array_equal(member.sum(axis=0), 1)


def test_boxes_are_cached_and_read_only():
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(
        *make_data(0, task="regression")
    )
    forest = treelens.to_forest(model)
    boxes = treelens.leaf_boxes(forest)
    assert treelens.leaf_boxes(forest) is boxes
    with pytest.raises(ValueError):
        boxes.lower[0, 0] = 0.0


def test_single_leaf_tree_box_is_everything():
    X = np.zeros((4, 2))
    model = DecisionTreeRegressor().fit(X, np.ones(4))
    boxes = treelens.leaf_boxes(treelens.to_forest(model))
    assert boxes.n_leaves == 1
    assert np.all(np.isneginf(boxes.lower)) and np.all(np.isposinf(boxes.upper))
