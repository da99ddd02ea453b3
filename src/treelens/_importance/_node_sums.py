"""Per-node partial sums: node statistics that add up exactly across chunks.

The statistics :func:`~treelens.node_statistics` replays at every node (sample
count, weighted count, value, impurity) are all functions of a few sums over the
rows reaching the node (weights :math:`w_i`, node weight :math:`W = \\sum w_i`):

- classification: per class :math:`k` the weighted count :math:`c_k`, from which
  ``value = c / W``, gini :math:`1 - \\sum_k c_k^2 / W^2` and entropy
  :math:`-\\sum_k (c_k/W) \\log_2 (c_k/W)`; class weights multiply :math:`c_k`
  once the class totals of the whole data are known (``"balanced"`` needs them);
- regression and boosting stages: :math:`S_1 = \\sum w y`, :math:`S_2 = \\sum w
  y^2` (squared error: :math:`S_2/W - (S_1/W)^2`) or, for the poisson criterion,
  :math:`S_3 = \\sum w y \\log y` (half Poisson deviance
  :math:`(S_3 - S_1 \\log(S_1/W)) / W`); boosting stages use the pseudo-residuals
  each tree was fitted on, which are per-row quantities.

Sums over disjoint sets of rows add, so the statistics of a dataset processed in
chunks, or in partitions on a cluster, are those of the whole dataset: this is
what makes held-out MDI over a Dask dataset equal the single-machine result.  The
median behind ``absolute_error`` and the huber loss's per-stage quantile are not
such sums; they are refused on more than one chunk.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from ._replay import MERGEABLE_CRITERIA, class_factors

__all__ = [
    "NodeSums",
    "check_mergeable",
    "forest_layout",
    "is_mergeable",
    "n_sums",
    "node_sums",
    "node_sums_bytes_per_row",
    "statistics_from_sums",
    "sum_node_sums",
]


@dataclass(frozen=True, eq=False)
class NodeSums:
    """Additive per-node sums of one forest over a set of rows.

    Nodes of all trees are numbered consecutively, tree after tree (node ``i`` of
    tree ``t`` is row ``offsets[t] + i``, as in :func:`forest_layout`).

    Attributes
    ----------
    sums : ndarray of shape (n_nodes_total, n_sums)
        Classification (``n_sums == 3 * n_classes``), per class ``k``: the sum of
        ``sample_weight`` over the rows of class ``k`` (column ``k``), the rows of
        class ``k`` with positive weight (column ``n_classes + k``) and all rows
        of class ``k`` (column ``2 n_classes + k``).  Class weights are applied
        only when the sums become statistics (:func:`statistics_from_sums`):
        ``"balanced"`` weights depend on the class counts of the whole data.
        Regression and boosting (``n_sums == 4``): rows with positive weight,
        :math:`\\sum w`, :math:`\\sum w y`, :math:`\\sum w y^2`, with ``y`` the
        value each tree was fitted to (the pseudo-residuals for boosting); for the
        poisson criterion :math:`\\sum w y \\log y` replaces :math:`\\sum w y^2`.
    """

    sums: NDArray[np.float64]

    def __add__(self, other: NodeSums) -> NodeSums:
        if not isinstance(other, NodeSums):
            return NotImplemented
        if self.sums.shape != other.sums.shape:
            raise InputError(
                "Node sums can only be added for the same forest; got sums of shapes "
                f"{self.sums.shape} and {other.sums.shape}."
            )
        return NodeSums(self.sums + other.sums)

    @property
    def n_nodes_total(self) -> int:
        """Number of nodes over all trees."""
        return int(self.sums.shape[0])

    def to_frame(self) -> Any:
        """The sums as a DataFrame of one row per node and columns ``s0``, ``s1``,
        ..., for storing partial results (e.g. as Parquet)."""
        import pandas as pd

        return pd.DataFrame(
            {f"s{k}": self.sums[:, k] for k in range(self.sums.shape[1])}
        )

    @classmethod
    def from_frame(cls, frame: Any) -> NodeSums:
        """Inverse of :meth:`to_frame`."""
        columns = [f"s{k}" for k in range(frame.shape[1])]
        return cls(frame[columns].to_numpy(dtype=np.float64).reshape(len(frame), -1))


@dataclass(frozen=True, eq=False)
class _Layout:
    offsets: NDArray[np.intp]  # (n_trees + 1,)
    left: NDArray[np.intp]  # global ids, -1 at leaves
    right: NDArray[np.intp]
    levels: tuple[NDArray[np.intp], ...]  # inner nodes by depth, deepest first


_LAYOUTS: dict[int, tuple[Forest, _Layout]] = {}


def forest_layout(forest: Forest) -> _Layout:
    """Global node numbering of ``forest`` and its inner nodes by depth (cached)."""
    cached = _LAYOUTS.get(id(forest))
    if cached is not None and cached[0] is forest:
        return cached[1]
    sizes = [t.n_nodes for t in forest.trees]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    lefts, rights, depths = [], [], []
    for tree, offset in zip(forest.trees, offsets[:-1]):
        leaf = tree.is_leaf
        lefts.append(np.where(leaf, -1, tree.children_left + offset))
        rights.append(np.where(leaf, -1, tree.children_right + offset))
        depths.append(np.where(leaf, -1, tree.node_depth))
    left = np.concatenate(lefts) if lefts else np.empty(0, np.intp)
    right = np.concatenate(rights) if rights else np.empty(0, np.intp)
    depth = np.concatenate(depths) if depths else np.empty(0, np.intp)
    levels = tuple(
        np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)), -1, -1)
    )
    layout = _Layout(offsets, left.astype(np.intp), right.astype(np.intp), levels)
    if len(_LAYOUTS) > 32:
        _LAYOUTS.clear()
    _LAYOUTS[id(forest)] = (forest, layout)
    return layout


def node_sums_bytes_per_row(forest: Forest) -> int:
    """Peak temporary memory per row of :func:`node_sums`, in bytes."""
    # Leaves, global ids, bincount index and weights, per-tree targets: about six
    # words per (row, tree), plus the routing temporaries of Forest._apply.
    return 64 * max(forest.n_trees, 1) + 16 * forest.n_features


def _classifies(forest: Forest) -> bool:
    return forest.is_classifier and forest.kind != "boosting"


def n_sums(forest: Forest) -> int:
    """Columns of the :class:`NodeSums` of ``forest``."""
    return 3 * forest.n_classes if _classifies(forest) else 4


def node_sums(
    forest: Forest,
    leaves: NDArray[np.intp],
    targets: NDArray[Any],
    sample_weight: NDArray[np.float64],
) -> NodeSums:
    """Partial sums of every node of ``forest`` over some rows.

    Parameters
    ----------
    forest : Forest
    leaves : ndarray of shape (n_samples, n_trees)
        Leaf each row reaches in each tree (``forest._apply``).
    targets : ndarray of shape (n_samples,) or (n_samples, n_trees)
        Classification: the class index (position in ``forest.classes_``) of each
        row.  Regression: the value each tree was fitted to, one column per tree
        or one value shared by every tree.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights (without class weights).

    Returns
    -------
    NodeSums

    Notes
    -----
    Leaf sums come from one ``bincount`` over all (row, tree) cells; inner nodes
    add their two children, deepest level first: O(n_samples x n_trees) plus
    O(n_nodes).
    """
    layout = forest_layout(forest)
    n_total = int(layout.offsets[-1])
    n_samples, n_trees = leaves.shape
    k = n_sums(forest)
    sums = np.zeros((n_total, k))
    if n_samples == 0 or n_trees == 0:
        return NodeSums(sums)
    w = np.asarray(sample_weight, dtype=np.float64)
    ids = (leaves + layout.offsets[:-1][np.newaxis, :]).reshape(-1)
    positive = np.repeat((w > 0).astype(np.float64), n_trees)
    w_cells = np.repeat(w, n_trees)
    if _classifies(forest):
        n_classes = forest.n_classes
        codes = np.asarray(targets, dtype=np.intp)
        cells = (
            ids.reshape(n_samples, n_trees) * n_classes + codes[:, np.newaxis]
        ).reshape(-1)
        size = n_total * n_classes
        sums[:, :n_classes] = np.bincount(cells, w_cells, size).reshape(
            n_total, n_classes
        )
        sums[:, n_classes : 2 * n_classes] = np.bincount(cells, positive, size).reshape(
            n_total, n_classes
        )
        sums[:, 2 * n_classes :] = np.bincount(cells, minlength=size).reshape(
            n_total, n_classes
        )
    else:
        y = np.asarray(targets, dtype=np.float64)
        y = np.broadcast_to(y.reshape(n_samples, -1), (n_samples, n_trees)).reshape(-1)
        wy = w_cells * y
        sums[:, 0] = np.bincount(ids, positive, n_total)
        sums[:, 1] = np.bincount(ids, w_cells, n_total)
        sums[:, 2] = np.bincount(ids, wy, n_total)
        if forest.criterion == "poisson" and forest.kind != "boosting":
            safe = np.where(y > 0, y, 1.0)
            sums[:, 3] = np.bincount(
                ids, np.where(y > 0, wy * np.log(safe), 0.0), n_total
            )
        else:
            sums[:, 3] = np.bincount(ids, wy * y, n_total)
    # Inner nodes: the sum of their two children, deepest level first.
    for inner in layout.levels:
        sums[inner] = sums[layout.left[inner]] + sums[layout.right[inner]]
    return NodeSums(sums)


def sum_node_sums(parts: Iterable[NodeSums]) -> NodeSums:
    """Sum of partial node sums (over disjoint sets of rows)."""
    parts = list(parts)
    if not parts:
        raise InputError("Cannot combine node sums of no chunk; expected at least one.")
    return reduce(lambda a, b: a + b, parts)


def is_mergeable(forest: Forest) -> bool:
    """Whether the node statistics of ``forest`` are functions of additive sums."""
    if forest.kind == "boosting":
        return forest.loss != "huber"
    return forest.criterion in MERGEABLE_CRITERIA


def check_mergeable(forest: Forest) -> None:
    """Raise when the node statistics of ``forest`` are not functions of sums."""
    if forest.kind == "boosting":
        if forest.loss == "huber":
            raise UnsupportedModelError(
                "Node statistics of gradient boosting with the huber loss cannot be "
                "combined across chunks or partitions (each stage's delta is a "
                "quantile over all rows); expected another loss, or the data in one "
                "chunk."
            )
        return
    if forest.criterion not in MERGEABLE_CRITERIA:
        raise UnsupportedModelError(
            f"Node statistics of criterion {forest.criterion!r} cannot be combined "
            "across chunks or partitions (the median behind absolute_error is not a "
            f"sum); expected one of {sorted(MERGEABLE_CRITERIA)}, or the data in one "
            "chunk."
        )


def statistics_from_sums(
    forest: Forest, sums: NodeSums
) -> tuple[
    list[NDArray[np.intp]],
    list[NDArray[np.float64]],
    list[NDArray[np.float64]],
    list[NDArray[np.float64]],
]:
    """Per-tree node statistics from summed partial sums.

    Conventions are those of :func:`treelens.node_statistics`: counts are rows of
    positive weight, values are NaN and impurities 0 where no weight arrives.

    Returns
    -------
    n_node_samples, weighted_n_node_samples, value, impurity : lists
        One array per tree, of shapes (n_nodes,), (n_nodes,), (n_nodes, n_values)
        and (n_nodes,).
    """
    layout = forest_layout(forest)
    S = sums.sums
    if _classifies(forest):
        n_classes = forest.n_classes
        root = S[0] if forest.n_trees else np.zeros(3 * n_classes)
        factors = class_factors(forest, root[:n_classes], root[2 * n_classes :])
        weighted = S[:, :n_classes] * factors[np.newaxis, :]
        counts = np.rint(S[:, n_classes : 2 * n_classes] @ (factors > 0).astype(float))
        total = weighted.sum(axis=1)
    else:
        counts, total = np.rint(S[:, 0]), S[:, 1]
    filled = total > 0
    safe_total = np.where(filled, total, 1.0)
    impurity = np.zeros(total.shape[0])
    if _classifies(forest):
        value = np.where(
            filled[:, np.newaxis], weighted / safe_total[:, np.newaxis], np.nan
        )
        if forest.criterion == "gini":
            squares = np.sum(weighted**2, axis=1)
            impurity[filled] = 1.0 - squares[filled] / (total[filled] * total[filled])
        else:
            p = np.where(value > 0, value, 1.0)
            impurity[filled] = -np.sum(p * (np.log(p) / np.log(2.0)), axis=1)[filled]
    else:
        mean = np.where(filled, S[:, 2] / safe_total, np.nan)
        value = mean[:, np.newaxis]
        if forest.criterion == "poisson" and forest.kind != "boosting":
            positive = filled & (S[:, 2] > 0)
            impurity[positive] = (
                S[positive, 3] - S[positive, 2] * np.log(mean[positive])
            ) / total[positive]
        else:
            impurity[filled] = S[filled, 3] / total[filled] - mean[filled] ** 2
    out: tuple[list[Any], list[Any], list[Any], list[Any]] = ([], [], [], [])
    for t in range(forest.n_trees):
        lo, hi = int(layout.offsets[t]), int(layout.offsets[t + 1])
        out[0].append(counts[lo:hi].astype(np.intp))
        out[1].append(total[lo:hi].copy())
        out[2].append(value[lo:hi].copy())
        out[3].append(impurity[lo:hi].copy())
    return out
