"""Mean decrease in impurity (MDI), with the arithmetic of every split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._chunks import DEFAULT_MEMORY_BUDGET, is_chunk_stream
from .._core._features import split_conditions
from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from .._types import ArrayLike, Chunks, ModelLike
from ._intervals import DEFAULT_N_BOOTSTRAP, bootstrap_interval, check_interval_options
from ._node_statistics import node_statistics
from ._node_sums import NodeSums, statistics_from_sums
from ._replay import refuse_isolation
from ._result import ImportanceResult
from ._streaming import replay_in_chunks

__all__ = ["MDIImportance", "mdi_from_sums", "mdi_importance"]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class MDIImportance(ImportanceResult):
    """Mean decrease in impurity of each feature, and where it comes from.

    Attributes
    ----------
    importances_ : pandas.Series of shape (n_features,)
        MDI of each feature; equals scikit-learn's ``feature_importances_``
        for importances computed from the model's own statistics.
    std_ : pandas.Series of shape (n_features,) or None
        Standard deviation (``ddof=0``) of the rows of ``per_tree_`` over the
        trees with more than one node; None for a single tree.
    per_tree_ : pandas.DataFrame of shape (n_trees, n_features)
        Each tree's importances, scaled so that ``importances_`` is the mean of
        the rows of the trees with more than one node (a single tree's row is
        ``importances_``).  Rows of single-node trees are zero.
    nodes_ : pandas.DataFrame of shape (n_split_nodes, 16)
        One row per split node of every tree: ``tree``, ``node``, ``depth``,
        ``feature`` (index), ``feature_name``, ``weighted_n_node_samples``,
        ``impurity``, ``left_child``, ``left_weighted_n_node_samples``,
        ``left_impurity``, ``right_child``, ``right_weighted_n_node_samples``,
        ``right_impurity``, ``decrease`` (:math:`w_p I_p - w_l I_l - w_r I_r`,
        in weighted samples times impurity), ``share`` (the node's part of the
        final importance: summed per feature it gives ``importances_``) and
        ``n_node_samples``.  When the model has categorical splits, a
        ``condition`` column after ``feature_name`` gives each node's rule
        (``"employment in {retired, unemployed}"``, ``"income <= 4.12e+04"``).
        For a pipeline, ``feature`` is the input column: the splits on one-hot
        columns of ``employment`` are all ``employment``'s.
    method : str
        ``"MDI (train)"`` from the model's stored statistics, ``"MDI
        (held-out)"`` from statistics replayed on the data given.
    """

    nodes_: pd.DataFrame


def mdi_importance(
    model: ModelLike,
    X: ArrayLike | Chunks | None = None,
    y: ArrayLike | None = None,
    *,
    sample_weight: ArrayLike | None = None,
    progress: bool = False,
    memory_budget: float = DEFAULT_MEMORY_BUDGET,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
) -> MDIImportance:
    r"""Mean decrease in impurity of every feature, following scikit-learn.

    For a tree with node weights :math:`w` (weighted sample counts) and
    impurities :math:`I`, each split node :math:`p` with children :math:`l, r`
    adds :math:`(w_p I_p - w_l I_l - w_r I_r) / w_{root}` to its feature; the
    tree's importances are then divided by their sum when it is positive.
    A random forest averages the normalized importances of its trees with more
    than one node and divides by the sum; gradient boosting averages the
    unnormalized ones (divided by the root weight only) of every stage tree with
    more than one node and divides by the sum; AdaBoost weighs the normalized
    importances of its trees by their weights (``Forest.tree_weight``).  All
    importances are zero when no tree splits.

    Parameters
    ----------
    model : fitted estimator or Forest
    X : array-like of shape (n_samples, n_features), optional
        When given (with ``y``), weights and impurities are recomputed on these
        rows by :func:`node_statistics` ("held-out MDI"): splits that only fit
        noise of the training data get small or negative decreases.
    y : array-like of shape (n_samples,), optional
    sample_weight : array-like of shape (n_samples,), optional
        Weights of the rows of ``X``.
    progress, memory_budget
        As :func:`node_statistics` (``X`` may be an iterable of chunks).
    n_bootstrap : int, default=200
        Replicates of ``interval_``, a percentile bootstrap over the trees that
        split (each replicate renormalized); 0, or a single tree: none.
    confidence : float, default=0.95

    Returns
    -------
    MDIImportance

    See Also
    --------
    node_statistics : the replayed statistics behind held-out MDI.
    permutation_importance : model-agnostic importance on held-out data.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> result = mdi_importance(model)
    >>> bool(abs(result.importances_.to_numpy() - model.feature_importances_).max() < 1e-12)
    True
    >>> bool(abs(result.nodes_.groupby("feature")["share"].sum().sum() - 1.0) < 1e-12)
    True
    """
    check_interval_options(n_bootstrap, confidence)
    interval: dict[str, Any] = {"n_bootstrap": n_bootstrap, "confidence": confidence}
    forest = to_forest(model)
    if X is not None:
        if y is None and not is_chunk_stream(X):
            raise InputError(
                "Held-out MDI needs both X and y; expected both or neither, got X only."
            )
        return replay_in_chunks(
            forest,
            X,
            y,
            sample_weight,
            progress=progress,
            memory_budget=memory_budget,
            one_pass=lambda X, y, w: _held_out(forest, X, y, w, **interval),
            from_sums=lambda sums: mdi_from_sums(forest, sums, **interval),
        )
    if y is not None:
        raise InputError(
            "Held-out MDI needs both X and y; expected both or neither, got y only."
        )
    if sample_weight is not None:
        raise InputError(
            "sample_weight weighs the rows of X; expected it only with X and y, "
            "got it without them."
        )
    refuse_isolation(forest, "MDI")
    impurity = [t.impurity for t in forest.trees]
    if any(np.isnan(i).any() for i in impurity):
        raise UnsupportedModelError(
            f"MDI needs node impurities, but {forest.source or 'this forest'} "
            "stores none; expected a model whose trees record impurities."
        )
    return mdi_from_statistics(
        forest,
        [t.weighted_n_node_samples for t in forest.trees],
        impurity,
        [t.n_node_samples for t in forest.trees],
        method="MDI (train)",
        **interval,
    )


def _held_out(
    forest: Forest, X: Any, y: Any, sample_weight: Any, **interval: Any
) -> MDIImportance:
    stats = node_statistics(forest, X, y, sample_weight=sample_weight)
    return mdi_from_statistics(
        forest,
        list(stats.weighted_n_node_samples_),
        list(stats.impurity_),
        list(stats.n_node_samples_),
        method="MDI (held-out)",
        **interval,
    )


def mdi_from_sums(
    forest: Forest,
    sums: NodeSums,
    *,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
) -> MDIImportance:
    """Held-out MDI (as :func:`mdi_importance` with X and y) from summed node sums."""
    counts, weighted, _, impurity = statistics_from_sums(forest, sums)
    return mdi_from_statistics(
        forest,
        weighted,
        impurity,
        counts,
        method="MDI (held-out)",
        n_bootstrap=n_bootstrap,
        confidence=confidence,
    )


def _tree_decreases(
    forest: Forest, t: int, weighted: NDArray[np.float64], impurity: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """Split nodes, their decreases and the tree's raw importances / root weight."""
    tree = forest.trees[t]
    inner = np.flatnonzero(~tree.is_leaf)
    left, right = tree.children_left[inner], tree.children_right[inner]
    decrease = (
        weighted[inner] * impurity[inner]
        - weighted[left] * impurity[left]
        - weighted[right] * impurity[right]
    )
    # bincount adds in node order, as scikit-learn's loop does.
    raw = np.bincount(tree.feature[inner], decrease, forest.n_features)
    root = weighted[0] if tree.n_nodes else 0.0
    share = raw / root if root > 0 else np.zeros(forest.n_features)
    return inner.astype(np.intp), decrease, share.astype(np.float64)


def mdi_from_statistics(
    forest: Forest,
    weighted: Sequence[NDArray[np.float64]],
    impurity: Sequence[NDArray[np.float64]],
    counts: Sequence[NDArray[np.intp]],
    *,
    method: str,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
) -> MDIImportance:
    """MDI of ``forest`` from per-tree node weights and impurities.

    Parameters
    ----------
    forest : Forest
    weighted, impurity, counts : sequences of ndarray of shape (n_nodes,)
        Per tree: weighted sample count, impurity and sample count of each node.
    method : str
        Label stored in the result.
    n_bootstrap, confidence
        Interval over the trees, as :func:`mdi_importance`.

    Returns
    -------
    MDIImportance
    """
    n_trees, n_features = forest.n_trees, forest.n_features
    per_tree = np.zeros((n_trees, n_features))
    # Factor turning a tree's decreases into its shares of the final importance.
    scale = np.zeros(n_trees)
    node_parts = []
    for t in range(n_trees):
        inner, decrease, tree_importance = _tree_decreases(
            forest, t, weighted[t], impurity[t]
        )
        root = weighted[t][0]
        scale[t] = 1.0 / root if root > 0 else 0.0
        if forest.kind != "boosting" or forest.tree_weight.size:
            total = np.sum(tree_importance)
            if total > 0.0:
                tree_importance = tree_importance / total
                scale[t] /= total
        per_tree[t] = tree_importance
        node_parts.append((inner, decrease))
    relevant = np.array([tree.n_nodes > 1 for tree in forest.trees], dtype=bool)
    ensemble: float | NDArray[np.float64]
    if forest.kind == "tree" or not relevant.any():
        importances = per_tree[0] if forest.kind == "tree" else np.zeros(n_features)
        ensemble = 1.0
    elif forest.tree_weight.size:
        # AdaBoost: the weighted mean of the normalized importances over every
        # tree (those that do not split add zeros), not normalized again.
        weight = forest.tree_weight / forest.tree_weight.sum()
        importances = weight @ per_tree
        ensemble = weight
    else:
        mean = np.mean(per_tree[relevant], axis=0, dtype=np.float64)
        total = np.sum(mean)
        importances = mean / total if total > 0.0 else mean
        ensemble = 1.0 / (relevant.sum() * (total if total > 0.0 else 1.0))
    names = list(forest.feature_names)
    std: NDArray[np.float64] | None
    if forest.kind == "tree":
        per_tree_scaled = per_tree
        std = None
    else:
        per_tree_scaled = per_tree * (np.reshape(ensemble, (-1, 1)) * relevant.sum())
        std = (
            np.std(per_tree_scaled[relevant], axis=0)
            if relevant.any()
            else np.zeros(n_features)
        )
    nodes = _nodes_frame(
        forest, node_parts, weighted, impurity, counts, scale * ensemble
    )
    interval, interval_method = None, ""
    if forest.kind != "tree" and relevant.sum() > 1 and n_bootstrap:
        interval = bootstrap_interval(
            per_tree_scaled[relevant],
            names,
            normalize=True,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
        )
        interval_method = (
            f"{confidence:.0%} percentile bootstrap over {int(relevant.sum())} "
            f"trees, {n_bootstrap} replicates"
        )
    return MDIImportance(
        importances_=pd.Series(importances, index=names, name="importance"),
        std_=None if std is None else pd.Series(std, index=names, name="std"),
        per_tree_=pd.DataFrame(
            per_tree_scaled, columns=names, index=pd.RangeIndex(n_trees, name="tree")
        ),
        method=method,
        interval_=interval,
        interval_method=interval_method,
        nodes_=nodes,
    )


def _nodes_frame(
    forest: Forest,
    node_parts: list[tuple[NDArray[np.intp], NDArray[np.float64]]],
    weighted: Sequence[NDArray[np.float64]],
    impurity: Sequence[NDArray[np.float64]],
    counts: Sequence[NDArray[np.intp]],
    share_scale: NDArray[np.float64],
) -> pd.DataFrame:
    columns: dict[str, list[NDArray[Any]]] = {
        name: []
        for name in (
            "tree", "node", "depth", "feature", "n_node_samples",
            "weighted_n_node_samples", "impurity",
            "left_child", "left_weighted_n_node_samples", "left_impurity",
            "right_child", "right_weighted_n_node_samples", "right_impurity",
            "decrease", "share",
        )
    }  # fmt: skip
    for t, (inner, decrease) in enumerate(node_parts):
        tree = forest.trees[t]
        left, right = tree.children_left[inner], tree.children_right[inner]
        w, imp = weighted[t], impurity[t]
        columns["tree"].append(np.full(inner.size, t, dtype=np.intp))
        columns["node"].append(inner)
        columns["depth"].append(tree.node_depth[inner])
        columns["feature"].append(tree.feature[inner])
        columns["n_node_samples"].append(np.asarray(counts[t])[inner])
        columns["weighted_n_node_samples"].append(w[inner])
        columns["impurity"].append(imp[inner])
        columns["left_child"].append(left)
        columns["left_weighted_n_node_samples"].append(w[left])
        columns["left_impurity"].append(imp[left])
        columns["right_child"].append(right)
        columns["right_weighted_n_node_samples"].append(w[right])
        columns["right_impurity"].append(imp[right])
        columns["decrease"].append(decrease)
        columns["share"].append(decrease * share_scale[t])
    data = {
        name: np.concatenate(parts) if parts else np.empty(0)
        for name, parts in columns.items()
    }
    frame = pd.DataFrame(data)
    for name in (
        "tree",
        "node",
        "depth",
        "feature",
        "n_node_samples",
        "left_child",
        "right_child",
    ):
        frame[name] = frame[name].astype(np.intp)
    names = np.asarray(forest.feature_names, dtype=object)
    frame.insert(4, "feature_name", names[frame["feature"].to_numpy()])
    if forest.has_categorical:
        # Categorical splits read "employment in {...}"; numeric ones as usual.
        frame.insert(
            5,
            "condition",
            [
                text
                for t, (inner, _) in enumerate(node_parts)
                for text in split_conditions(forest, t, inner)
            ],
        )
    return frame
