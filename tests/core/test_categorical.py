"""Categorical splits in the Forest: routing, predict, encoding, leaf boxes."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.categorical_forests import (
    FEATURES,
    random_codes,
    random_forest,
    reference_leaf,
)
from treelens import FeatureSpec, Forest, InputError, Tree, leaf_boxes


def _toy_forest():
    """color in {red, blue} goes left (unknown right, missing left); then
    size <= 0.5."""
    tree = Tree(
        children_left=[1, 3, -1, -1, -1],
        children_right=[2, 4, -1, -1, -1],
        feature=[0, 1, -2, -2, -2],
        threshold=[np.nan, 0.5, -2.0, -2.0, -2.0],
        missing_go_left=[True, False, False, False, False],
        value=[[0.0], [0.0], [30.0], [10.0], [20.0]],
        impurity=[0.0] * 5,
        n_node_samples=[1] * 5,
        weighted_n_node_samples=[1.0] * 5,
        is_categorical=[True, False, False, False, False],
        categorical_left=[[True, False, True, False]] + [[False] * 4] * 4,
    )
    features = (
        FeatureSpec("color", "categorical", ("red", "green", "blue")),
        FeatureSpec("size"),
    )
    return Forest(
        (tree,),
        "tree",
        "regression",
        2,
        ("color", "size"),
        has_feature_names=True,
        allow_missing=True,
        features=features,
    )


def test_toy_tree_routes_labels_unknown_and_missing():
    forest = _toy_forest()
    X = pd.DataFrame(
        {
            "size": [0.0, 1.0, 0.0, 0.0, 0.2, 5.0],
            "color": ["red", "blue", "green", "purple", None, "red"],
        }
    )
    np.testing.assert_array_equal(
        forest.predict(X), [10.0, 20.0, 30.0, 30.0, 10.0, 20.0]
    )
    np.testing.assert_array_equal(
        forest.encode(X), [[0, 0], [2, 1], [1, 0], [3, 0], [np.nan, 0.2], [0, 5]]
    )
    # Codes given directly: anything outside 0 .. k - 1 is unknown.
    codes = np.array([[0, 0.0], [1, 0.0], [3, 0.0], [-1, 0.0], [0.5, 0.0], [7, 0.0]])
    np.testing.assert_array_equal(forest.predict(codes), [10, 30, 30, 30, 30, 30])


def test_a_column_read_by_whole_parts_routes_each_number_as_its_whole_part():
    """Categories 0, 1, 2 of a model that casts its values to int (LightGBM):
    0.5 and -0.5 are category 0, 2.7 is 2, 3 and -1 no category (code 3); the
    toy tree sends 0 and 2 left (10 at size 0), the rest right (30), NaN left."""
    spec = FeatureSpec("color", "categorical", (0, 1, 2), truncates=True)
    toy = _toy_forest()
    forest = Forest(
        toy.trees, "tree", "regression", 2, ("color", "size"),
        has_feature_names=True, allow_missing=True,
        features=(spec, FeatureSpec("size")), arrays_hold_labels=True,
    )  # fmt: skip
    values = [0.5, -0.5, 2.7, 1.9, 3.0, -1.0, np.nan]
    expected = [10, 10, 10, 30, 30, 30, 10]
    np.testing.assert_array_equal(forest.predict(np.c_[values, [0.0] * 7]), expected)
    frame = pd.DataFrame({"color": values, "size": 0.0})
    np.testing.assert_array_equal(forest.predict(frame), expected)
    with pytest.raises(InputError, match="column 'size' is numeric"):
        FeatureSpec("size", truncates=True)


def test_toy_tree_leaf_boxes_hold_allowed_codes():
    boxes = leaf_boxes(_toy_forest())
    np.testing.assert_array_equal(boxes.node, [2, 3, 4])
    np.testing.assert_array_equal(
        boxes.allowed[0],
        [
            [False, True, False, True],
            [True, False, True, False],
            [True, False, True, False],
        ],
    )
    np.testing.assert_array_equal(boxes.upper[:, 1], [np.inf, 0.5, np.inf])
    np.testing.assert_array_equal(boxes.lower[:, 1], [-np.inf, -np.inf, 0.5])
    assert np.all(np.isinf(boxes.lower[:, 0])) and np.all(np.isinf(boxes.upper[:, 0]))


def test_encode_errors_name_the_column():
    forest = _toy_forest()
    with pytest.raises(InputError, match="missing the model's column.*'size'"):
        forest.encode(pd.DataFrame({"color": ["red"]}))
    with pytest.raises(InputError, match="'color'.*numbers such as 3"):
        forest.encode(pd.DataFrame({"color": [3], "size": [1.0]}))
    with pytest.raises(InputError, match="'size' must hold numbers.*'big'"):
        forest.encode(pd.DataFrame({"color": ["red"], "size": ["big"]}))


def test_categorical_split_on_numeric_feature_is_refused():
    forest = _toy_forest()
    tree = forest.trees[0]
    with pytest.raises(InputError, match="categorical split on feature 'color'"):
        Forest((tree,), "tree", "regression", 2, ("color", "size"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), depth=st.integers(1, 6))
def test_routing_equals_reference_walk(seed, depth):
    rng = np.random.default_rng(seed)
    forest = random_forest(rng, n_trees=3, max_depth=depth)
    X = random_codes(rng, 60)
    expected = np.array(
        [[reference_leaf(t, forest, x) for t in forest.trees] for x in X]
    )
    flat = forest._flat
    levels = forest._apply_chunk(X, flat) - flat["offsets"]
    blocks = forest._apply_per_tree(X, np.empty((forest.n_trees, len(X)), np.intp).T)
    np.testing.assert_array_equal(levels, expected)
    np.testing.assert_array_equal(blocks, expected)
    np.testing.assert_array_equal(forest.apply(X), expected)
    # Every row with finite values lies in the box of the leaf it reaches.
    boxes = leaf_boxes(forest)
    k = forest.n_categories
    for t in range(forest.n_trees):
        rows = slice(int(boxes.tree_offsets[t]), int(boxes.tree_offsets[t + 1]))
        nodes = boxes.node[rows]
        for i, x in enumerate(X):
            if np.isnan(x).any():
                continue
            inside = np.ones(nodes.size, bool)
            for j, spec in enumerate(FEATURES):
                if spec.is_categorical:
                    code = int(x[j]) if 0 <= x[j] < k[j] and x[j] == int(x[j]) else k[j]
                    inside &= boxes.allowed[j][rows][:, code]
                else:
                    inside &= (boxes.lower[rows, j] < x[j]) & (
                        x[j] <= boxes.upper[rows, j]
                    )
            assert nodes[inside].tolist() == [expected[i, t]]


def test_large_inputs_route_categorical_nodes_per_tree():
    rng = np.random.default_rng(3)
    forest = random_forest(rng, n_trees=4, max_depth=5)
    X = random_codes(rng, 5000)
    expected = forest._apply_chunk(X, forest._flat) - forest._flat["offsets"]
    assert forest._compiled_trees is None
    np.testing.assert_array_equal(forest.apply(X), expected)
