"""Adapter for scikit-learn's IsolationForest: an additive model of path lengths.

An :class:`~sklearn.ensemble.IsolationForest` scores a row ``x`` by the path
lengths of the leaves it reaches (Liu et al., 2008): in tree ``t`` the leaf's
depth plus ``c(n)``, the average path length of an unsuccessful search in a
binary search tree of the ``n`` training rows the leaf held (``c(1) = 0``,
``c(2) = 1``, ``c(n) = 2 (ln(n - 1) + gamma) - 2 (n - 1) / n``), and

    score_samples(x) = -2 ** (-sum_t h_t(x) / (n_trees * c(max_samples))).

The Forest holds exactly that: its trees' leaf values are the path lengths
``h`` (scikit-learn's ``(depth + 1) + c(n) - 1``, in that order of operations),
added tree after tree and divided once by ``n_trees * c(max_samples)``
(``raw_divisor``), the link ``"isolation"`` giving ``-2 ** -raw``.  So
``Forest.predict`` is ``score_samples`` to the last bit, and the raw score is
the normalized mean path length ``E[h(x)] / c(max_samples)``: contributions
and SHAP values add up to it (shap's ``TreeExplainer`` explains ``E[h(x)]``,
the same values times ``c(max_samples)``).  A split node holds the mean of
its leaves' path lengths weighted by the training rows they held, as a
regression tree holds the mean of its rows.  The model's ``predict`` (``1``
inlier, ``-1`` outlier) is ``score_samples >= offset_``.

Each tree splits at random: there is no impurity (NaN), so MDI and node
statistics are refused; the explanations, decision paths, pictures and
counterfactuals (a target range of ``score_samples``) work as for any
regressor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest, Tree
from .._exceptions import UnsupportedModelError
from ._registry import register_adapter
from ._sklearn import (
    _allow_missing,
    _check_fitted,
    _class_path,
    _resolve_names,
    tree_from_sklearn,
)

__all__ = ["average_path_length", "isolation_trees", "path_lengths"]


def average_path_length(n: NDArray[Any]) -> NDArray[np.float64]:
    """``c(n)``: average path length of an unsuccessful search among ``n`` rows
    (scikit-learn's ``_average_path_length``, in its order of operations).

    Examples
    --------
    >>> import numpy as np
    >>> average_path_length(np.array([1, 2, 256])).round(4).tolist()
    [0.0, 1.0, 10.2448]
    """
    n = np.asarray(n, dtype=np.float64)
    out = np.zeros(n.shape)
    out[n == 2] = 1.0
    big = n > 2
    out[big] = (
        2.0 * (np.log(n[big] - 1.0) + np.euler_gamma) - 2.0 * (n[big] - 1.0) / n[big]
    )
    return out


def path_lengths(tree: Tree) -> NDArray[np.float64]:
    """The path length scikit-learn gives a row that ends at each node:
    ``(depth + 1) + c(n_node_samples) - 1``, shape (n_nodes,)."""
    return (tree.node_depth + 1.0) + average_path_length(tree.n_node_samples) - 1.0


def isolation_trees(model: Any) -> tuple[Tree, ...]:
    """The trees of a fitted IsolationForest on its own input columns, each
    leaf's value its path length, each split node's the mean of its leaves'
    (see the module's docstring).

    scikit-learn routes each tree on its own columns only when the trees were
    given fewer than all features (``max_features < 1.0``); otherwise a tree's
    feature indices are the input's.
    """
    n_in = int(model.n_features_in_)
    trees = []
    for estimator, features in zip(model.estimators_, model.estimators_features_):
        tree = tree_from_sklearn(estimator.tree_)
        columns = np.asarray(features, dtype=np.intp)
        split = ~tree.is_leaf
        feature = tree.feature.copy()
        if columns.size != n_in:
            feature[split] = columns[tree.feature[split]]
        trees.append(
            replace(
                tree,
                feature=feature,
                value=_node_values(tree)[:, None],
                impurity=np.full(tree.n_nodes, np.nan),
            )
        )
    return tuple(trees)


def _node_values(tree: Tree) -> NDArray[np.float64]:
    """Path length of every leaf, and at split nodes the mean of the leaves
    below weighted by their training rows (deepest level first)."""
    depth = tree.node_depth
    value = path_lengths(tree)
    weight = tree.weighted_n_node_samples.astype(np.float64)
    for level in range(int(depth.max(initial=0)) - 1, -1, -1):
        nodes = np.flatnonzero((depth == level) & ~tree.is_leaf)
        left, right = tree.children_left[nodes], tree.children_right[nodes]
        total = weight[left] + weight[right]
        value[nodes] = (weight[left] * value[left] + weight[right] * value[right]) / (
            np.where(total > 0, total, 1.0)
        )
    return value


@register_adapter("sklearn.IsolationForest")
def _isolation_forest(model: Any, feature_names: Sequence[str] | None) -> Forest:
    _check_fitted(model)
    names, has_names = _resolve_names(model, feature_names)
    max_samples = int(model.max_samples_)
    if max_samples < 2:
        raise UnsupportedModelError(
            "An IsolationForest fitted with max_samples_=1 scores every row 0.5 "
            "(its trees are single leaves); expected max_samples_ of at least 2, "
            f"got {max_samples}."
        )
    trees = isolation_trees(model)
    divisor = len(trees) * float(average_path_length(np.array([max_samples]))[0])
    return Forest(
        trees=trees,
        kind="boosting",
        task="regression",
        n_features=int(model.n_features_in_),
        feature_names=names,
        has_feature_names=has_names,
        init_raw=np.zeros(1),
        learning_rate=1.0 / divisor,
        link="isolation",
        input_dtype=np.float32,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        raw_divisor=divisor,
        isolation_offset=float(model.offset_),
    )
