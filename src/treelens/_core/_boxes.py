"""Axis-aligned boxes covered by the leaves of a forest."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._cache import derived
from ._forest import Forest, Tree

__all__ = ["LeafBoxes", "leaf_boxes"]


@dataclass(frozen=True, eq=False)
class LeafBoxes:
    """The box of every leaf of every tree of a forest.

    A sample ``x`` (cast to the forest's ``input_dtype``) reaches leaf ``i``
    through finite values exactly when, for every feature ``j``,
    ``lower[i, j] < x[j] <= upper[i, j]``: lower bounds are exclusive and upper
    bounds inclusive, following the ``x <= threshold`` rule of every split.
    Unbounded sides are ``-inf`` and ``+inf``.

    Attributes
    ----------
    tree : ndarray of shape (n_leaves_total,)
        Index of the tree each leaf belongs to.
    node : ndarray of shape (n_leaves_total,)
        Node id of the leaf within its tree.
    lower : ndarray of shape (n_leaves_total, n_features)
        Exclusive lower bounds.
    upper : ndarray of shape (n_leaves_total, n_features)
        Inclusive upper bounds.
    value : ndarray of shape (n_leaves_total, n_values)
        The leaf's value (as ``Tree.value``).
    tree_offsets : ndarray of shape (n_trees + 1,)
        Leaves of tree ``t`` are rows ``tree_offsets[t]:tree_offsets[t + 1]``.
    """

    tree: NDArray[np.intp]
    node: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    value: NDArray[np.float64]
    tree_offsets: NDArray[np.intp]

    lower_inclusive = False
    upper_inclusive = True

    def __post_init__(self) -> None:
        for name in ("tree", "node", "lower", "upper", "value", "tree_offsets"):
            getattr(self, name).setflags(write=False)

    @property
    def n_leaves(self) -> int:
        """Total number of leaves over all trees."""
        return int(self.node.shape[0])

    def of_tree(self, t: int) -> slice:
        """Row slice of the leaves of tree ``t``."""
        return slice(int(self.tree_offsets[t]), int(self.tree_offsets[t + 1]))


def _tree_boxes(
    tree: Tree, n_features: int
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    n_nodes = tree.n_nodes
    lower = np.full((n_nodes, n_features), -np.inf)
    upper = np.full((n_nodes, n_features), np.inf)
    frontier = np.array([0], dtype=np.intp)
    # One vectorized step per depth level: children inherit the parent's box and
    # tighten the split feature's side.
    while frontier.size:
        inner = frontier[~tree.is_leaf[frontier]]
        if not inner.size:
            break
        left, right = tree.children_left[inner], tree.children_right[inner]
        feat, thr = tree.feature[inner], tree.threshold[inner]
        lower[left] = lower[inner]
        upper[left] = upper[inner]
        lower[right] = lower[inner]
        upper[right] = upper[inner]
        upper[left, feat] = np.minimum(upper[left, feat], thr)
        lower[right, feat] = np.maximum(lower[right, feat], thr)
        frontier = np.concatenate([left, right])
    leaves = np.flatnonzero(tree.is_leaf)
    return leaves, lower[leaves], upper[leaves]


def leaf_boxes(forest: Forest) -> LeafBoxes:
    """The axis-aligned box of every leaf, computed once per forest and cached.

    Parameters
    ----------
    forest : Forest

    Returns
    -------
    LeafBoxes

    Notes
    -----
    The boxes describe where finite inputs go; NaN routing follows
    ``Tree.missing_go_left`` and is not part of the box.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from treelens import to_forest
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> tree = DecisionTreeRegressor(max_depth=1).fit(X, [0, 0, 1, 1])
    >>> boxes = leaf_boxes(to_forest(tree))
    >>> boxes.lower.ravel().tolist(), boxes.upper.ravel().tolist()
    ([-inf, 1.5], [1.5, inf])
    """
    return derived(forest, "leaf_boxes", lambda: _forest_boxes(forest))


def _forest_boxes(forest: Forest) -> LeafBoxes:
    parts = [_tree_boxes(tree, forest.n_features) for tree in forest.trees]
    counts = np.array([p[0].size for p in parts], dtype=np.intp)
    n_values = forest.trees[0].value.shape[1] if forest.trees else 1
    boxes = LeafBoxes(
        tree=np.repeat(np.arange(forest.n_trees, dtype=np.intp), counts),
        node=np.concatenate([p[0] for p in parts]) if parts else np.empty(0, np.intp),
        lower=np.concatenate([p[1] for p in parts])
        if parts
        else np.empty((0, forest.n_features)),
        upper=np.concatenate([p[2] for p in parts])
        if parts
        else np.empty((0, forest.n_features)),
        value=(
            np.concatenate([t.value[p[0]] for t, p in zip(forest.trees, parts)])
            if parts
            else np.empty((0, n_values))
        ),
        tree_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.intp),
    )
    return boxes
