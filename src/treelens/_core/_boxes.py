"""Axis-aligned boxes covered by the leaves of a forest."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .._exceptions import UnsupportedModelError
from ._cache import derived
from ._forest import Forest, Tree

__all__ = ["LeafBoxes", "leaf_boxes"]


@dataclass(frozen=True, eq=False, repr=False)
class LeafBoxes:
    """The box of every leaf of every tree of a forest.

    A sample ``x`` (cast to the forest's ``input_dtype``) reaches leaf ``i``
    through finite values exactly when, for every feature ``j``,
    ``lower[i, j] < x[j] <= upper[i, j]``: lower bounds are exclusive and upper
    bounds inclusive, following the ``x <= threshold`` rule of every split.
    Unbounded sides are ``-inf`` and ``+inf``.  A categorical feature ``j``
    has no bounds (``-inf``, ``+inf``); its box side is ``allowed[j]``, the codes
    ``0 .. k`` (``k``: a category the model never saw) that reach the leaf.

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
    allowed : dict of int to ndarray of shape (n_leaves_total, k + 1), dtype bool
        For every categorical feature ``j`` (with ``k`` categories), whether each
        code reaches each leaf; empty when the forest has no categorical feature.
    """

    tree: NDArray[np.intp]
    node: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    value: NDArray[np.float64]
    tree_offsets: NDArray[np.intp]
    allowed: dict[int, NDArray[np.bool_]] = field(default_factory=dict)

    lower_inclusive = False
    upper_inclusive = True

    def __post_init__(self) -> None:
        for name in ("tree", "node", "lower", "upper", "value", "tree_offsets"):
            getattr(self, name).setflags(write=False)
        for mask in self.allowed.values():
            mask.setflags(write=False)

    def __repr__(self) -> str:
        return (
            f"LeafBoxes(n_trees={self.tree_offsets.size - 1}, "
            f"n_leaves={self.n_leaves}, n_features={self.lower.shape[1]})"
        )

    @property
    def n_leaves(self) -> int:
        """Total number of leaves over all trees."""
        return int(self.node.shape[0])

    def of_tree(self, t: int) -> slice:
        """Row slice of the leaves of tree ``t``."""
        return slice(int(self.tree_offsets[t]), int(self.tree_offsets[t + 1]))


def _tree_boxes(
    tree: Tree, n_features: int, n_categories: NDArray[np.intp]
) -> tuple[
    NDArray[np.intp],
    NDArray[np.float64],
    NDArray[np.float64],
    dict[int, NDArray[np.bool_]],
]:
    n_nodes = tree.n_nodes
    lower = np.full((n_nodes, n_features), -np.inf)
    upper = np.full((n_nodes, n_features), np.inf)
    masks = {
        int(j): np.ones((n_nodes, int(n_categories[j]) + 1), dtype=bool)
        for j in np.unique(tree.feature[tree.is_categorical])
    }
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
        numeric = ~tree.is_categorical[inner]
        nl, nr, nf, nt = left[numeric], right[numeric], feat[numeric], thr[numeric]
        upper[nl, nf] = np.minimum(upper[nl, nf], nt)
        lower[nr, nf] = np.maximum(lower[nr, nf], nt)
        for j, mask in masks.items():
            mask[left] = mask[inner]
            mask[right] = mask[inner]
            split = ~numeric & (feat == j)
            goes_left = tree.categorical_left[inner[split], : mask.shape[1]]
            mask[left[split]] &= goes_left
            mask[right[split]] &= ~goes_left
        frontier = np.concatenate([left, right])
    leaves = np.flatnonzero(tree.is_leaf)
    return (
        leaves,
        lower[leaves],
        upper[leaves],
        {j: m[leaves] for j, m in masks.items()},
    )


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
    if not isinstance(forest, Forest):
        raise UnsupportedModelError(
            "leaf_boxes reads a treelens Forest; expected treelens.to_forest(model), "
            f"got a {type(forest).__name__}."
        )
    return derived(forest, "leaf_boxes", lambda: _forest_boxes(forest))


def _forest_boxes(forest: Forest) -> LeafBoxes:
    k = forest.n_categories
    parts = [_tree_boxes(tree, forest.n_features, k) for tree in forest.trees]
    counts = np.array([p[0].size for p in parts], dtype=np.intp)
    allowed = (
        {
            j: np.concatenate(
                [
                    p[3].get(j, np.ones((p[0].size, int(k[j]) + 1), dtype=bool))
                    for p in parts
                ]
            )
            for j in np.flatnonzero(k > 0).tolist()
        }
        if parts
        else {}
    )
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
        allowed=allowed,
    )
    return boxes
