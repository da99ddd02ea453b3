"""Trees small enough to check by hand, shared by the explain tests."""

from __future__ import annotations

import numpy as np

from treelens import Forest, Tree


def toy_tree(values: list[float], *, threshold_b: float = 1.0) -> Tree:
    """``a <= 0.5`` at the root; its right child splits ``b <= threshold_b``.

    Nodes: 0 root, 1 left leaf, 2 split on b, 3 and 4 its leaves; ``values``
    gives the five node values (parents hold their children's weighted mean
    in a fitted tree; here any numbers do).
    """
    return Tree(
        children_left=[1, -1, 3, -1, -1],
        children_right=[2, -1, 4, -1, -1],
        feature=[0, -2, 1, -2, -2],
        threshold=[0.5, -2.0, threshold_b, -2.0, -2.0],
        missing_go_left=[True, False, False, False, False],
        value=np.asarray(values, dtype=float).reshape(-1, 1),
        impurity=[np.nan] * 5,
        n_node_samples=[-1] * 5,
        weighted_n_node_samples=[1.0] * 5,
    )


def toy_forest(trees: list[Tree], *, kind: str = "tree", **kwargs: object) -> Forest:
    """A regression Forest of the given trees over features ``a`` and ``b``."""
    return Forest(
        trees=tuple(trees),
        kind=kind,  # type: ignore[arg-type]
        task="regression",
        n_features=2,
        feature_names=("a", "b"),
        has_feature_names=True,
        input_dtype=np.float64,
        allow_missing=True,
        **kwargs,  # type: ignore[arg-type]
    )
