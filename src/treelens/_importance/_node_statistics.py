"""Per-node statistics of a forest, recomputed by routing data through its trees."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._chunks import DEFAULT_MEMORY_BUDGET
from .._core._compiled_routing import map_compiled
from .._core._forest import _PER_TREE_MIN_ROWS, Forest, Tree
from .._core._validation import check_rows
from .._types import ArrayLike, Chunks, ModelLike
from ._node_sums import NodeSums, statistics_from_sums
from ._replay import check_replayable, fitted_weights, stage_residuals
from ._streaming import replay_in_chunks

__all__ = ["NodeStatistics", "node_statistics", "statistics_from_node_sums"]


@dataclass(frozen=True, eq=False, repr=False)
class NodeStatistics:
    """Statistics of every node of every tree, recomputed on data.

    Each attribute is a tuple with one array per tree (trees have different
    numbers of nodes); :meth:`to_frame` gives all of them as one long table.

    Attributes
    ----------
    forest : Forest
        The forest whose nodes are described.
    n_node_samples_ : tuple of ndarray of shape (n_nodes,), dtype intp
        Number of rows of nonzero weight reaching each node (scikit-learn
        leaves rows of zero weight out of its trees).
    weighted_n_node_samples_ : tuple of ndarray of shape (n_nodes,)
        Total weight reaching each node: ``sample_weight`` times the model's
        class weights (see :func:`node_statistics`).
    value_ : tuple of ndarray of shape (n_nodes, n_values)
        Classifiers: the weighted class fractions (``n_values == n_classes``).
        Regressors: the weighted mean target, or the weighted median for the
        ``"absolute_error"`` criterion.  Gradient boosting: the weighted mean of
        the pseudo-residuals the stage tree was fitted on.  NaN where no weight
        reaches the node.
    impurity_ : tuple of ndarray of shape (n_nodes,)
        Impurity of each node under the trees' criterion; 0 where no weight
        reaches the node.
    """

    forest: Forest
    n_node_samples_: tuple[NDArray[np.intp], ...]
    weighted_n_node_samples_: tuple[NDArray[np.float64], ...]
    value_: tuple[NDArray[np.float64], ...]
    impurity_: tuple[NDArray[np.float64], ...]

    def __repr__(self) -> str:
        return (
            f"NodeStatistics(n_trees={len(self.n_node_samples_)}, "
            f"n_nodes={sum(n.size for n in self.n_node_samples_)}, "
            f"forest={self.forest!r})"
        )

    def to_frame(self) -> pd.DataFrame:
        """All nodes of all trees as one table.

        Returns
        -------
        frame : pandas.DataFrame of shape (n_nodes_total, 7 + n_values)
            Columns ``tree``, ``node``, ``depth``, ``is_leaf``,
            ``n_node_samples``, ``weighted_n_node_samples``, ``impurity`` and
            the value: ``value`` for one column, else one ``value[<class>]``
            column per class.
        """
        trees = self.forest.trees
        frame = pd.DataFrame(
            {
                "tree": np.repeat(np.arange(len(trees)), [t.n_nodes for t in trees]),
                "node": np.concatenate([np.arange(t.n_nodes) for t in trees]),
                "depth": np.concatenate([t.node_depth for t in trees]),
                "is_leaf": np.concatenate([t.is_leaf for t in trees]),
                "n_node_samples": np.concatenate(self.n_node_samples_),
                "weighted_n_node_samples": np.concatenate(
                    self.weighted_n_node_samples_
                ),
                "impurity": np.concatenate(self.impurity_),
            }
        )
        values = np.concatenate(self.value_)
        if values.shape[1] == 1:
            frame["value"] = values[:, 0]
        else:
            labels = self.forest.classes_
            for k in range(values.shape[1]):
                name = labels[k] if labels is not None else k
                frame[f"value[{name}]"] = values[:, k]
        return frame


def node_statistics(
    model: ModelLike,
    X: ArrayLike | Chunks,
    y: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    progress: bool = False,
    memory_budget: float = DEFAULT_MEMORY_BUDGET,
) -> NodeStatistics:
    r"""Route data through every tree and recompute each node's statistics.

    On the training data of a model fitted without bootstrap (and, for gradient
    boosting, with ``subsample=1.0``) this reproduces the model's stored
    ``n_node_samples``, ``weighted_n_node_samples``, ``value`` and ``impurity``;
    on held-out data it measures what the splits do on data they never saw.

    Parameters
    ----------
    model : fitted estimator or Forest
    X : array-like of shape (n_samples, n_features), or iterable of chunks
    y : array-like of shape (n_samples,)
        Class labels (classifiers, which must be among the model's classes) or
        targets (regressors).
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights; ones by default.
    progress : bool, default=False
        Show a progress bar over the rows.
    memory_budget : int, default=2**30
        Bytes one chunk of rows may take; larger data, and an iterable of chunks
        given as ``X`` (arrays, DataFrames, or ``(X, y[, sample_weight])``
        tuples), are processed chunk by chunk and summed exactly
        (:mod:`treelens._importance._streaming`).

    Returns
    -------
    NodeStatistics

    Notes
    -----
    **Weights.**  Every row weighs ``sample_weight`` times its class weight.
    A ``class_weight`` dict is applied as is.  ``"balanced"`` (and
    ``"balanced_subsample"``) weights are recomputed from the ``y`` given here,
    ``total / (n_classes_in_y * class_total)`` (totals of ``sample_weight`` for
    forests, row counts for single trees, as scikit-learn), which is how the
    model weighted its training data: held-out data are weighted as if the model
    had been trained on them.

    **Impurity** (weights :math:`w_i`, node weight :math:`W = \sum w_i`):
    gini :math:`1 - \sum_k p_k^2`; entropy and log_loss
    :math:`-\sum_k p_k \log_2 p_k`; squared_error and friedman_mse the weighted
    variance; absolute_error :math:`\sum w_i |y_i - m| / W` with :math:`m` the
    weighted median (scikit-learn's rule: the midpoint when a prefix holds exactly
    half the weight); poisson :math:`\sum w_i y_i \log(y_i / \bar y) / W`.

    **Gradient boosting.**  The stages are replayed: each stage's trees are
    evaluated on the negative gradient of the model's loss at the raw prediction
    of the stages before it (one column per class for multiclass), and the raw
    prediction then advances by the model's own leaf values.  ``value_`` is the
    mean pseudo-residual in each node; scikit-learn replaces the leaf values of
    non-squared losses by a line-search step, so stored leaf values differ from
    it (inner nodes and squared-error leaves agree).

    Cost: one vectorized routing of all rows through all trees, then per tree
    ``O(n_samples)`` work at the leaves and one vectorized step per depth level
    (``O(n_samples * depth)`` for absolute_error and poisson).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> stats = node_statistics(model, X, y)
    >>> stats.n_node_samples_[0].tolist() == model.tree_.n_node_samples.tolist()
    True
    """
    forest = to_forest(model)
    return replay_in_chunks(
        forest,
        X,
        y,
        sample_weight,
        progress=progress,
        memory_budget=memory_budget,
        one_pass=lambda X, y, w: _one_pass(forest, X, y, w),
        from_sums=lambda sums: statistics_from_node_sums(forest, sums),
    )


def statistics_from_node_sums(forest: Forest, sums: NodeSums) -> NodeStatistics:
    """The :class:`NodeStatistics` of node sums summed over chunks of rows."""
    counts, weighted, value, impurity = statistics_from_sums(forest, sums)
    return NodeStatistics(
        forest, tuple(counts), tuple(weighted), tuple(value), tuple(impurity)
    )


def _one_pass(forest: Forest, X: Any, y: Any, sample_weight: Any) -> NodeStatistics:
    """Node statistics of rows that fit in memory at once (exact for every criterion)."""
    X, target, weights = check_rows(forest, X, y, sample_weight)
    n_samples = X.shape[0]
    check_replayable(forest, target)
    weights = fitted_weights(forest, target, weights)
    if forest.kind == "boosting":
        return _boosting_statistics(forest, forest._apply(X), target, weights)
    n_classes = forest.n_classes if forest.is_classifier else 0

    def statistics(j: int, leaves: NDArray[np.intp]) -> _TreeStatistics:
        return tree_statistics(
            forest.trees[j], leaves, target, weights, forest.criterion, n_classes
        )

    compiled = forest._compiled_trees
    if compiled is not None and n_samples >= _PER_TREE_MIN_ROWS:
        # Each tree's statistics as soon as it is routed, while other threads
        # route the next trees.
        parts = map_compiled(compiled, X, statistics)
    else:
        leaves = forest._apply(X)
        parts = [statistics(j, leaves[:, j]) for j in range(forest.n_trees)]
    return _statistics_of(forest, parts)


def _levels(tree: Tree) -> list[NDArray[np.intp]]:
    """Split nodes grouped by depth, deepest level first."""
    inner = np.flatnonzero(~tree.is_leaf)
    depth = tree.node_depth[inner]
    order = np.argsort(-depth, kind="stable")
    inner, depth = inner[order], depth[order]
    bounds = np.flatnonzero(np.diff(depth)) + 1
    return np.split(inner, bounds) if inner.size else []


def _sum_up(tree: Tree, sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fill split nodes with the sum of their children, one depth level at a time.

    ``sums`` (n_nodes, n_columns) holds totals at the leaves and zeros elsewhere.
    """
    for nodes in _levels(tree):
        sums[nodes] = sums[tree.children_left[nodes]] + sums[tree.children_right[nodes]]
    return sums


def _ancestor_pairs(
    tree: Tree, leaves: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every (node, row) pair with the row passing through the node."""
    parent = tree.parent
    nodes, rows = [leaves], [np.arange(leaves.shape[0])]
    current, row = leaves, rows[0]
    while current.size:
        current = parent[current]
        keep = current >= 0
        current, row = current[keep], row[keep]
        nodes.append(current)
        rows.append(row)
    return np.concatenate(nodes), np.concatenate(rows)


def _divide(
    numerator: NDArray[np.float64], denominator: NDArray[np.float64]
) -> NDArray[np.float64]:
    denominator = denominator.reshape(
        denominator.shape + (1,) * (numerator.ndim - denominator.ndim)
    )
    out = np.full(np.broadcast_shapes(numerator.shape, denominator.shape), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _weighted_medians(
    nodes: NDArray[np.intp],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    n_nodes: int,
) -> NDArray[np.float64]:
    """Weighted median of ``y`` per node, by scikit-learn's rule.

    The median is the smallest value whose cumulative weight exceeds half the
    node's weight; when a prefix holds exactly half, the midpoint between its
    last value and the next.  Zero weights are ignored.
    """
    medians = np.full(n_nodes, np.nan)
    keep = w > 0
    nodes, y, w = nodes[keep], y[keep], w[keep]
    if not nodes.size:
        return medians
    order = np.lexsort((y, nodes))
    nodes, y, w = nodes[order], y[order], w[order]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
    group = np.cumsum(np.r_[True, nodes[1:] != nodes[:-1]]) - 1
    cumulative = np.cumsum(w)
    within = cumulative - (cumulative[starts] - w[starts])[group]
    half = 0.5 * np.add.reduceat(w, starts)
    position = np.where(within > half[group], np.arange(nodes.size), nodes.size)
    first = np.minimum.reduceat(position, starts)
    previous = np.maximum(first - 1, 0)
    exact = (first > starts) & (within[previous] == half)
    medians[nodes[starts]] = np.where(exact, (y[previous] + y[first]) / 2, y[first])
    return medians


def tree_statistics(
    tree: Tree,
    leaves: NDArray[np.intp],
    target: NDArray[Any],
    weights: NDArray[np.float64],
    criterion: str,
    n_classes: int = 0,
) -> tuple[
    NDArray[np.intp], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    """Statistics of one tree's nodes given the leaf each row reaches.

    Parameters
    ----------
    tree : Tree
    leaves : ndarray of shape (n_samples,)
        Leaf reached by each row.
    target : ndarray of shape (n_samples,)
        Class index (classification, ``n_classes > 0``) or target value.
    weights : ndarray of shape (n_samples,)
    criterion : str
    n_classes : int, default=0
        Number of classes; 0 for regression.

    Returns
    -------
    n_node_samples, weighted_n_node_samples, value, impurity : ndarrays
        Of shapes (n_nodes,), (n_nodes,), (n_nodes, n_values), (n_nodes,).
    """
    n_nodes = tree.n_nodes
    # Rows of zero weight are not counted: scikit-learn leaves them out of its trees.
    positive = weights > 0
    counted = leaves if positive.all() else leaves[positive]
    columns = [
        np.bincount(counted, minlength=n_nodes).astype(np.float64),
        np.bincount(leaves, weights, n_nodes),
    ]
    if n_classes:
        cells = np.bincount(leaves * n_classes + target, weights, n_nodes * n_classes)
        columns.extend(cells.reshape(n_nodes, n_classes).T)
    else:
        weighted_y = weights * target
        columns.append(np.bincount(leaves, weighted_y, n_nodes))
        columns.append(np.bincount(leaves, weighted_y * target, n_nodes))
    sums = _sum_up(tree, np.column_stack(columns).astype(np.float64))
    counts, total = np.rint(sums[:, 0]).astype(np.intp), sums[:, 1]
    filled = total > 0
    impurity = np.zeros(n_nodes)
    if n_classes:
        value = _divide(sums[:, 2:], total)
        if criterion == "gini":
            squares = np.sum(sums[:, 2:] ** 2, axis=1)
            impurity[filled] = 1.0 - squares[filled] / (total[filled] * total[filled])
        else:  # entropy and log_loss: base-2 logarithm, as scikit-learn
            p = np.where(value > 0, value, 1.0)
            impurity[filled] = -np.sum(p * (np.log(p) / np.log(2.0)), axis=1)[filled]
        return counts, total, value, impurity
    mean = _divide(sums[:, 2], total)
    if criterion in ("squared_error", "friedman_mse"):
        impurity[filled] = sums[filled, 3] / total[filled] - mean[filled] ** 2
        return counts, total, mean[:, np.newaxis], impurity
    nodes, rows = _ancestor_pairs(tree, leaves)
    y, w = target[rows], weights[rows]
    if criterion == "poisson":
        ratio = np.divide(y, mean[nodes], out=np.ones_like(y), where=y > 0)
        terms = np.where(y > 0, w * y * np.log(ratio), 0.0)
        impurity[filled] = np.bincount(nodes, terms, n_nodes)[filled] / total[filled]
        return counts, total, mean[:, np.newaxis], impurity
    # absolute_error
    medians = _weighted_medians(nodes, y, w, n_nodes)
    deviations = np.bincount(
        nodes, w * np.abs(y - np.nan_to_num(medians[nodes])), n_nodes
    )
    impurity[filled] = deviations[filled] / total[filled]
    return counts, total, medians[:, np.newaxis], impurity


def _boosting_statistics(
    forest: Forest,
    leaves: NDArray[np.intp],
    target: NDArray[Any],
    weights: NDArray[np.float64],
) -> NodeStatistics:
    residuals = stage_residuals(forest, leaves, target, weights)
    parts = [
        tree_statistics(tree, leaves[:, j], residuals[:, j], weights, "squared_error")
        for j, tree in enumerate(forest.trees)
    ]
    return _statistics_of(forest, parts)


_TreeStatistics = tuple[
    NDArray[np.intp], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]


def _statistics_of(
    forest: Forest,
    parts: list[
        tuple[
            NDArray[np.intp],
            NDArray[np.float64],
            NDArray[np.float64],
            NDArray[np.float64],
        ]
    ],
) -> NodeStatistics:
    """One NodeStatistics from each tree's (counts, weights, values, impurities)."""
    return NodeStatistics(
        forest,
        tuple(p[0] for p in parts),
        tuple(p[1] for p in parts),
        tuple(p[2] for p in parts),
        tuple(p[3] for p in parts),
    )
