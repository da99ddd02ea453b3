"""Every leaf of a Forest as its path's conditions, merged per feature.

TreeSHAP needs, for each leaf, the features its path tests and, per feature, the
one condition the path puts on it: an interval ``lo < x <= hi`` (the tightest
right and left thresholds), whether a missing value satisfies it (every split on
that feature along the path sends missing values the path's way) and the
*cover fraction* ``z``: the product of ``cover(child) / cover(parent)`` over the
path's splits on that feature.  A row's *decision pattern* for the leaf is one
bit per such feature: whether the row meets the path's condition on it.

Leaves are grouped in buckets of equal path-feature count ``d`` so that every
kernel works on dense ``(rows, leaves, d)`` arrays.  Each leaf carries its value
in the explained output space: class fractions (averaged over the trees) for
forests of classifiers, values for regressors, ``learning_rate * value`` in the
tree's raw output for boosting.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from .._core._forest import Forest, Tree
from .._exceptions import InputError

__all__ = [
    "ForestLeaves",
    "LeafBucket",
    "expected_value",
    "forest_leaves",
    "leaf_values",
    "tree_cover",
]


@dataclass(frozen=True, eq=False)
class LeafBucket:
    """Leaves whose paths test ``d`` distinct features.

    Attributes
    ----------
    d : int
    leaf : ndarray of shape (n_leaves,)
        Position of each leaf in :attr:`ForestLeaves.leaf_node` order.
    feature, lo, hi, nan_ok, z : ndarrays of shape (n_leaves, d)
        Per leaf and path feature: the feature, the interval ``lo < x <= hi``,
        whether NaN meets the condition, the cover fraction.
    value : ndarray of shape (n_leaves, n_outputs)
        The leaf's value in the explained output space.
    """

    d: int
    leaf: NDArray[np.intp]
    feature: NDArray[np.intp]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    nan_ok: NDArray[np.bool_]
    z: NDArray[np.float64]
    value: NDArray[np.float64]
    #: Codes meeting the path's categorical splits, (n_leaves, d, width), or
    #: None when no slot of the bucket is a categorical split.
    allowed: NDArray[np.bool_] | None = None
    #: Categories of each slot's feature (0 for numeric ones), with ``allowed``.
    n_categories: NDArray[np.intp] | None = None

    @property
    def n_leaves(self) -> int:
        return int(self.leaf.shape[0])

    @cached_property
    def z_positive(self) -> bool:
        """Whether every cover fraction is positive (no empty branch)."""
        return bool((self.z > 0).all())

    def pattern(self, Xt: NDArray[Any]) -> NDArray[np.bool_]:
        """Decision patterns of the rows of ``X`` given transposed (``Xt`` of shape
        (n_features, n_rows)): shape (n_leaves, d, n_rows)."""
        x = Xt[self.feature]
        met = x > self.lo[..., None]
        met &= x <= self.hi[..., None]
        if self.allowed is not None:
            assert self.n_categories is not None
            width = self.allowed.shape[2]
            k = self.n_categories[..., None]
            # As the routing: a code that is not one of 0 .. k - 1 is unknown (k).
            known = (x >= 0) & (x < k) & (x == np.floor(x))
            code = np.where(known, x, k).astype(np.intp)
            code = np.clip(code, 0, width - 1)
            leaves, d = self.feature.shape
            base = (np.arange(leaves)[:, None] * d + np.arange(d)) * width
            met &= self.allowed.reshape(-1)[base[..., None] + code]
        missing = np.isnan(x)
        if missing.any():
            met |= missing & self.nan_ok[..., None]
        return met

    def add_to(self, out: NDArray[np.float64], terms: NDArray[np.float64]) -> None:
        """Add each slot's ``terms`` (n_leaves, d, n_rows), times its leaf's
        value, to its feature in ``out`` (n_outputs, n_features, n_rows)."""
        flat = terms.reshape(-1, terms.shape[2])
        for k, matrix in self._scatter(out.shape[1]):
            out[k] += matrix @ flat

    def _scatter(self, n_features: int) -> list[tuple[int, sparse.csr_matrix]]:
        """Per output with a nonzero leaf, the (n_features, n_leaves * d) matrix
        of the leaves' values at their slots' features (built once)."""
        cache = self.__dict__.setdefault("_scatter_cache", {})
        if n_features not in cache:
            flat = self.feature.reshape(-1)
            order = np.argsort(flat, kind="stable")
            indptr = np.concatenate(
                [[0], np.cumsum(np.bincount(flat, minlength=n_features))]
            )
            d = self.d
            matrices = []
            for k in range(self.value.shape[1]):
                column = self.value[:, k]
                if not column.any():
                    continue
                data = np.repeat(column, d)[order]
                matrix = sparse.csr_matrix(
                    (data, order, indptr), shape=(n_features, flat.size)
                )
                matrices.append((k, matrix))
            cache[n_features] = matrices
        return cache[n_features]


@dataclass(frozen=True, eq=False)
class ForestLeaves:
    """The leaves of a forest, bucketed by their number of path features.

    Attributes
    ----------
    n_features, n_outputs : int
    buckets : tuple of LeafBucket
        Only buckets with ``d >= 1``; leaves of single-leaf trees are in
        ``root_value``.
    base : ndarray of shape (n_outputs,)
        What every prediction starts from (boosting's initial raw score).
    root_value : ndarray of shape (n_outputs,)
        Summed values of leaves whose path tests no feature.
    """

    n_features: int
    n_outputs: int
    buckets: tuple[LeafBucket, ...]
    base: NDArray[np.float64]
    root_value: NDArray[np.float64]

    @cached_property
    def max_d(self) -> int:
        return max((b.d for b in self.buckets), default=0)


def tree_cover(forest: Forest, tree: Tree) -> NDArray[np.float64] | None:
    """The training cover that path-dependent TreeSHAP weighs the branches with.

    The cover each library's own TreeSHAP uses: sample counts for LightGBM (as
    its ``pred_contrib``) and for HistGradientBoosting (the only cover it
    stores); the weighted sample counts (sample and class weights) of
    scikit-learn trees and the hessian sums ("cover") of XGBoost otherwise.
    None when the tree stores neither.
    """
    weighted = tree.weighted_n_node_samples
    counts = tree.n_node_samples
    if forest.criterion != "lightgbm_gain" and np.all(np.isfinite(weighted)):
        return np.asarray(weighted, dtype=np.float64)
    if np.all(counts >= 0):
        return counts.astype(np.float64)
    return None


def leaf_values(
    forest: Forest, start: int = 0, stop: int | None = None
) -> tuple[list[NDArray[np.float64]], int]:
    """Per tree ``start:stop``, its nodes' values in the explained output space."""
    n_outputs = forest.n_outputs
    out = []
    stop = forest.n_trees if stop is None else stop
    if forest.kind == "boosting":
        for j in range(start, stop):
            tree = forest.trees[j]
            v = np.zeros((tree.n_nodes, n_outputs))
            v[:, forest.tree_output[j]] = forest.learning_rate * tree.value[:, 0]
            out.append(v)
    else:
        scale = 1.0 / max(1, forest.n_trees) if forest.kind == "forest" else 1.0
        for tree in forest.trees[start:stop]:
            if tree.value.shape[1] != n_outputs:
                raise InputError(
                    f"Every tree must hold {n_outputs} values per node; got "
                    f"{tree.value.shape[1]}."
                )
            out.append(scale * tree.value)
    return out, n_outputs


def forest_leaves(
    forest: Forest, *, need_cover: bool, start: int = 0, stop: int | None = None
) -> ForestLeaves:
    """Extract and bucket the leaves of trees ``start:stop`` of ``forest``.

    Parameters
    ----------
    forest : Forest
    need_cover : bool
        Whether cover fractions are needed (path-dependent TreeSHAP); raises
        when a tree stores no cover.
    start, stop : int
        The trees to extract (all by default).
    """
    values, n_outputs = leaf_values(forest, start, stop)
    trees = forest.trees[start:stop]
    sizes = np.array([t.n_nodes for t in trees], dtype=np.intp)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)

    def glob(a: NDArray[np.intp], o: int) -> NDArray[np.intp]:
        return np.where(a >= 0, a + o, -1)

    parent = np.concatenate([glob(t.parent, o) for t, o in zip(trees, offsets)])
    left = np.concatenate([glob(t.children_left, o) for t, o in zip(trees, offsets)])
    feature = np.concatenate([t.feature for t in trees])
    threshold = np.concatenate([t.threshold for t in trees])
    missing_left = np.concatenate([t.missing_go_left for t in trees])
    value = np.concatenate(values) if values else np.zeros((0, n_outputs))
    categorical = np.concatenate([t.is_categorical for t in trees])
    width = max((t.categorical_left.shape[1] for t in trees), default=0)
    if categorical.any():
        left_codes = np.zeros((categorical.size, width), dtype=bool)
        for t, o in zip(trees, offsets):
            left_codes[o : o + t.n_nodes, : t.categorical_left.shape[1]] = (
                t.categorical_left
            )
    covers = [tree_cover(forest, t) for t in trees]
    has_cover = all(c is not None for c in covers)
    if need_cover and not has_cover:
        raise InputError(
            f"Path-dependent TreeSHAP needs the training cover of every node, but "
            f"this model ({forest.source}) stores none; expected a model with node "
            "counts or hessian sums, or use method='interventional' with a "
            "background."
        )
    present = [c for c in covers if c is not None]
    cover = np.concatenate(present) if has_cover and present else np.ones(parent.size)

    leaf_node = np.flatnonzero(left == -1)
    n_leaves = leaf_node.size
    # Walk every leaf up to its root, one level per step, recording the edges.
    rec_leaf, rec_child = [], []
    idx = np.arange(n_leaves)
    cur = leaf_node.copy()
    while idx.size:
        p = parent[cur]
        keep = p >= 0
        idx, cur = idx[keep], cur[keep]
        rec_leaf.append(idx)
        rec_child.append(cur)
        cur = parent[cur]
    e_leaf = np.concatenate(rec_leaf) if rec_leaf else np.zeros(0, np.intp)
    e_child = np.concatenate(rec_child) if rec_child else np.zeros(0, np.intp)
    e_par = parent[e_child]
    is_left = left[e_par] == e_child
    n_features = forest.n_features
    key = e_leaf * n_features + feature[e_par]
    order = np.argsort(key, kind="stable")
    key = key[order]
    e_par, e_child, is_left = e_par[order], e_child[order], is_left[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
    thr = np.where(categorical[e_par], np.nan, threshold[e_par])
    allowed = None
    if key.size:
        cat = categorical[e_par]
        lo = np.maximum.reduceat(np.where(is_left | cat, -np.inf, thr), starts)
        hi = np.minimum.reduceat(np.where(is_left & ~cat, thr, np.inf), starts)
        if categorical.any():
            codes = np.where(
                cat[:, None],
                left_codes[e_par] == is_left[:, None],
                True,
            )
            allowed = np.logical_and.reduceat(codes, starts, axis=0)
        nan_ok = np.logical_and.reduceat(is_left == missing_left[e_par], starts)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = cover[e_child] / cover[e_par]
        ratio = np.where(cover[e_par] > 0, ratio, 0.0)
        z = np.multiply.reduceat(ratio, starts)
    else:
        lo = hi = z = np.zeros(0)
        nan_ok = np.zeros(0, bool)
    g_leaf = key[starts] // n_features if key.size else key
    g_feature = key[starts] % n_features if key.size else key
    d = np.bincount(g_leaf, minlength=n_leaves)
    g_start = np.concatenate([[0], np.cumsum(d)[:-1]]).astype(np.intp)
    leaf_value = value[leaf_node]

    buckets = []
    for dd in np.unique(d[d > 0]):
        leaves = np.flatnonzero(d == dd)
        slots = g_start[leaves][:, None] + np.arange(dd)
        bucket_allowed = bucket_k = None
        if allowed is not None and not allowed[slots].all():
            bucket_allowed = allowed[slots]
            bucket_k = np.asarray(forest.n_categories, dtype=np.intp)[g_feature[slots]]
        buckets.append(
            LeafBucket(
                d=int(dd),
                leaf=leaves,
                feature=g_feature[slots],
                lo=lo[slots],
                hi=hi[slots],
                nan_ok=nan_ok[slots],
                z=z[slots],
                value=leaf_value[leaves],
                allowed=bucket_allowed,
                n_categories=bucket_k,
            )
        )
    base = (
        np.asarray(forest.init_raw, dtype=np.float64)
        if forest.kind == "boosting"
        else np.zeros(n_outputs)
    )
    root_value = leaf_value[d == 0].sum(axis=0)
    return ForestLeaves(
        n_features=n_features,
        n_outputs=n_outputs,
        buckets=tuple(buckets),
        base=base,
        root_value=root_value,
    )


def expected_value(
    forest: Forest, background: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """The explained output averaged over the training cover (``background``
    None) or over the background rows: shape (n_outputs,)."""
    values, n_outputs = leaf_values(forest)
    out = (
        np.asarray(forest.init_raw, dtype=np.float64).copy()
        if forest.kind == "boosting"
        else np.zeros(n_outputs)
    )
    if background is not None:
        leaves = forest._apply(background)
        for j, value in enumerate(values):
            out += value[leaves[:, j]].mean(axis=0)
        return out
    for tree, value in zip(forest.trees, values):
        cover = tree_cover(forest, tree)
        if cover is None:
            raise InputError(
                f"Path-dependent TreeSHAP needs the training cover of every node, "
                f"but this model ({forest.source}) stores none."
            )
        leaf = tree.is_leaf
        fraction = cover[leaf] / cover[0] if cover[0] > 0 else np.zeros(leaf.sum())
        out += fraction @ value[leaf]
    return out
