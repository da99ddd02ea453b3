"""Boosting raw scores add the initial score before or after the trees."""

import numpy as np

from treelens import Forest, Tree


def _stump(left, right):
    return Tree(
        children_left=[1, -1, -1],
        children_right=[2, -1, -1],
        feature=[0, -2, -2],
        threshold=[0.0, -2.0, -2.0],
        missing_go_left=[True, False, False],
        value=[0.0, left, right],
        impurity=[np.nan] * 3,
        n_node_samples=[-1] * 3,
        weighted_n_node_samples=[np.nan] * 3,
    )


def test_init_after_trees_changes_only_the_order_of_the_sum():
    # 1e16 + 1 + 1 loses both ones; (1 + 1) + 1e16 keeps them.
    trees = (_stump(1.0, 2.0), _stump(1.0, 2.0))
    common = {"kind": "boosting", "task": "regression", "n_features": 1}
    common.update(feature_names=("x",), init_raw=np.array([1e16]), input_dtype=float)
    before = Forest(trees=trees, **common)
    after = Forest(trees=trees, init_after_trees=True, **common)
    X = np.array([[-1.0], [1.0]])
    np.testing.assert_array_equal(
        before.predict(X), [1e16 + 1.0 + 1.0, 1e16 + 2.0 + 2.0]
    )
    np.testing.assert_array_equal(after.predict(X), [2.0 + 1e16, 4.0 + 1e16])
    assert after.predict(X)[0] != before.predict(X)[0]
