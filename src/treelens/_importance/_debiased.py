r"""Debiased MDI: the trees' in-bag node predictions scored on rows they never saw.

Two published definitions are implemented; both keep every tree's node values as
fitted (its in-bag class fractions or means :math:`\mu(t)`) and evaluate them on
out-of-bag rows of each bootstrapped tree, or on held-out rows, with weights
:math:`w_i` (the weighted sums below run over those rows only).

**MDI-oob** (Li, Wang, Basu, Kumbier and Yu, NeurIPS 2019).  With the tree's
prediction decomposed along the path of a row (the contribution of split
:math:`t` on feature :math:`k` is :math:`\mu(t_{child}) - \mu(t)`), a tree's
importance of feature :math:`k` is

.. math::

    \mathrm{MDI\text{-}oob}_k = \frac{1}{\sum_i w_i} \sum_i w_i
    \sum_{t:\, v(t) = k,\; x_i \in t} \bigl(\mu(t_{child(i)}) - \mu(t)\bigr)
    \cdot y_i,

with :math:`y_i` the one-hot class vector for classifiers.  Summed per split:
:math:`\bigl(\mu(l) \cdot C(l) + \mu(r) \cdot C(r) - \mu(t) \cdot C(t)\bigr) / W`,
:math:`C` the weighted target (class) sums and :math:`W` the total weight of the
evaluation rows.  On the tree's own in-bag rows this is exactly scikit-learn's
unnormalized MDI; on unseen rows a split that only fits noise scores about zero
or below.  (The authors' R package ``tree.interpreter`` computes the same.)

**UFI** (Zhou and Hooker, "Unbiased measurement of feature importance in
tree-based methods", ACM TKDD 2021), as in the authors' code
(``ZhengzeZhou/unbiased-feature-importance``).  Classification: the impurity
:math:`H(t) = 1 - \sum_k p_k^{in}(t)\, p_k^{oob}(t)` mixes the in-bag and
evaluation class fractions, weighted by the evaluation share of each node,
:math:`\omega(t) = W(t) / W`, and a split scores
:math:`\omega(t) H(t) - \omega(l) H(l) - \omega(r) H(r)`.  This equals MDI-oob
term by term (:math:`W(t) H(t) = W(t) - \mu(t) \cdot C(t)` and
:math:`W(t) = W(l) + W(r)`), as Loecher (2022) observed.  Regression: the
impurity averages the in-bag variance and the evaluation rows' mean squared error
about the in-bag mean, :math:`H(t) = \frac12 \bigl(I^{in}(t) + \sum_i w_i (y_i -
\mu(t))^2 / W(t)\bigr)`, weighted by the in-bag share :math:`\omega^{in}(t)`; a
split whose node or children no evaluation row reaches scores 0, as in the
authors' code.  (Their code omits the :math:`\frac12`, which doubles every value
and leaves the normalized view unchanged; with it, UFI on the in-bag rows is MDI.)

A forest's (or boosting model's) importance is the mean of its trees' over the
trees that split and are reached by evaluation rows, unnormalized as published;
``normalized_`` divides it by its sum.  Gradient boosting: each stage tree is
scored against the pseudo-residuals of the held-out rows (the stages replayed as
in :func:`~treelens.node_statistics`); for losses other than squared error
scikit-learn's leaves hold line-search steps, so the in-bag means are replayed on
the training rows (``train=``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._compiled_routing import map_compiled
from .._core._forest import _PER_TREE_MIN_ROWS, Forest, Tree
from .._core._validation import check_rows
from .._exceptions import InputError, UnsupportedModelError
from .._types import ArrayLike, ModelLike
from ._intervals import DEFAULT_N_BOOTSTRAP, bootstrap_interval, check_interval_options
from ._node_statistics import _levels, _sum_up, node_statistics, tree_statistics
from ._oob import bootstrap_counts
from ._replay import check_replayable, fitted_weights, stage_residuals
from ._result import ImportanceResult

__all__ = ["DebiasedMDIImportance", "debiased_mdi_importance"]

Definition = Literal["mdi_oob", "ufi"]
_DEFINITIONS = ("mdi_oob", "ufi")
_LABELS = {"mdi_oob": "MDI-oob", "ufi": "UFI"}
_SQUARED = ("squared_error", "friedman_mse")


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class DebiasedMDIImportance(ImportanceResult):
    """Debiased MDI of each feature, per tree and per node.

    Attributes
    ----------
    importances_ : pandas.Series of shape (n_features,)
        Unnormalized debiased MDI (mean over the trees that count); may be
        negative.
    normalized_ : pandas.Series of shape (n_features,)
        ``importances_`` divided by its sum when that is positive (NaN
        otherwise); negative values stay negative.
    std_ : pandas.Series of shape (n_features,) or None
        Standard deviation (``ddof=0``) of ``per_tree_`` over the trees that
        count; None for a single tree.
    per_tree_ : pandas.DataFrame of shape (n_trees, n_features)
        Each tree's debiased MDI (zero rows for trees that do not count: a
        single node, or no evaluation row).
    interval_ : pandas.DataFrame of shape (n_features, 2) or None
        Percentile bootstrap interval of ``importances_``, over trees and rows
        (``interval_method`` says which).
    nodes_ : pandas.DataFrame of shape (n_split_nodes, 13)
        One row per split node: ``tree``, ``node``, ``depth``, ``feature``,
        ``feature_name``, ``n_node_samples`` (evaluation rows reaching it),
        ``weighted_n_node_samples``, ``left_child``,
        ``left_weighted_n_node_samples``, ``right_child``,
        ``right_weighted_n_node_samples``, ``decrease`` (the split's part of its
        tree's debiased MDI) and ``share`` (its part of ``importances_``: summed
        per feature it gives ``importances_``).
    n_rows_ : ndarray of shape (n_trees,)
        Evaluation rows (of positive weight) of each tree.
    definition : str
        ``"mdi_oob"`` or ``"ufi"``.
    method : str
        For example ``"MDI-oob (out-of-bag)"`` or ``"UFI (held-out)"``.
    """

    normalized_: pd.Series
    nodes_: pd.DataFrame
    n_rows_: NDArray[np.intp]
    definition: str


@dataclass(frozen=True)
class _Fitted:
    value: NDArray[np.float64]
    impurity: NDArray[np.float64]
    weighted: NDArray[np.float64]


@dataclass(frozen=True)
class _TreePart:
    inner: NDArray[np.intp]
    decrease: NDArray[np.float64]
    counts: NDArray[np.intp]
    weights: NDArray[np.float64]
    n_rows: int
    counted: bool


def debiased_mdi_importance(
    model: ModelLike,
    X: ArrayLike,
    y: ArrayLike,
    *,
    oob: bool = False,
    definition: Definition = "mdi_oob",
    sample_weight: ArrayLike | None = None,
    in_bag: ArrayLike | None = None,
    train: tuple[ArrayLike, ArrayLike] | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> DebiasedMDIImportance:
    r"""Debiased MDI: MDI-oob (Li et al., 2019) or UFI (Zhou and Hooker, 2021).

    Each tree's node values, as fitted, are scored on rows the tree never saw:
    with ``oob=True`` the out-of-bag rows of each tree's bootstrap sample (``X``,
    ``y`` are then the training data, and the samples are drawn again from the
    trees' seeds exactly as scikit-learn draws them), otherwise every row of the
    held-out ``X``, ``y``.  A split that only fits noise scores about zero or
    below, so unlike MDI and held-out MDI the values are unbiased for useless
    features and can be negative.  The definitions are in
    :mod:`treelens._importance._debiased`; for classifiers the two coincide.

    Parameters
    ----------
    model : fitted estimator or Forest
        Classification (any criterion) or regression trees, forests, and
        scikit-learn gradient boosting (out-of-bag rows when fitted with
        ``subsample < 1`` and an integer ``random_state``).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    oob : bool, default=False
        Use the out-of-bag rows of each tree (a forest fitted with
        ``bootstrap=True``, or gradient boosting with ``subsample < 1``, on
        exactly these rows; or ``in_bag`` given).  Boosting's in-bag node means
        are then taken from the in-bag rows.
    definition : {"mdi_oob", "ufi"}, default="mdi_oob"
        UFI of regression trees needs the squared-error criterion.
    sample_weight : array-like of shape (n_samples,), optional
        Weights of the evaluation rows (times the model's class weights, as
        :func:`node_statistics`).
    in_bag : array-like of shape (n_trees, n_samples), optional
        With ``oob=True``: how often each row is in each tree's sample (zero
        out of bag), for a Forest or a model whose samples treelens cannot draw.
    train : tuple (X_train, y_train), optional
        The training rows, to take each node's in-bag mean from them (replayed
        by :func:`node_statistics`) instead of the stored node values.  Needed
        for gradient boosting with a loss other than squared error, whose stored
        leaves are line-search steps rather than means of the pseudo-residuals
        (exact for ``subsample=1.0``).
    n_bootstrap : int, default=200
        Bootstrap replicates of ``interval_`` (0: none).
    confidence : float, default=0.95
    random_state : int or None, default=0
        Seed of the interval's bootstrap.

    Returns
    -------
    DebiasedMDIImportance

    See Also
    --------
    mdi_importance : MDI on the training data or replayed on held-out data.
    permutation_importance, grouped_permutation_importance

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    >>> model = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> result = debiased_mdi_importance(model, X, y, oob=True)
    >>> result.method, result.importances_.shape
    ('MDI-oob (out-of-bag)', (4,))
    >>> bool(abs(result.nodes_["share"].sum() - result.importances_.sum()) < 1e-12)
    True
    """
    if definition not in _DEFINITIONS:
        raise InputError(
            f"`definition` must be one of {list(_DEFINITIONS)}; got {definition!r}."
        )
    check_interval_options(n_bootstrap, confidence)
    forest = to_forest(model)
    X, target, weights = check_rows(forest, X, y, sample_weight)
    n_samples = X.shape[0]
    fitted = _fitted_nodes(forest, train)
    in_bag_means = oob and forest.kind == "boosting" and train is None
    _check_model(
        forest, target, definition, fitted_from_train=train is not None or in_bag_means
    )
    weights = fitted_weights(forest, target, weights)
    out_of_bag = _out_of_bag(model, forest, n_samples, oob=oob, in_bag=in_bag)
    classification = forest.is_classifier and forest.kind != "boosting"
    n_classes = forest.n_classes if classification else 0
    want_rows = n_bootstrap > 0 and (classification or definition == "mdi_oob")
    rows = np.zeros((n_samples, forest.n_features)) if want_rows else None
    lock = threading.Lock()

    def part(j: int, leaves: NDArray[np.intp], y_j: NDArray[Any]) -> _TreePart:
        v = weights if out_of_bag is None else weights * (out_of_bag[j] == 0)
        own = fitted[j]
        if in_bag_means:
            # Boosting on its training rows: in-bag means of the pseudo-residuals
            # (the stored leaves may be line-search steps).
            assert out_of_bag is not None
            _, total, value, impurity = tree_statistics(
                forest.trees[j], leaves, y_j, weights * out_of_bag[j], "squared_error"
            )
            own = _Fitted(np.nan_to_num(value), impurity, total)
        return _tree_part(
            forest.trees[j],
            own,
            leaves,
            y_j,
            v,
            n_classes,
            definition,
            rows,
            lock,
        )

    return _assemble(
        forest,
        _route(forest, X, target, weights, part),
        rows,
        definition=definition,
        source="held-out" if out_of_bag is None else "out-of-bag",
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        random_state=random_state,
    )


def _fitted_nodes(forest: Forest, train: tuple[Any, Any] | None) -> list[_Fitted]:
    """Per tree: in-bag node values, impurities and weights."""
    if train is None:
        return [
            _Fitted(t.value, t.impurity, t.weighted_n_node_samples)
            for t in forest.trees
        ]
    if not isinstance(train, tuple) or len(train) != 2:
        raise InputError(
            f"`train` must be a tuple (X_train, y_train); got {type(train).__name__}."
        )
    stats = node_statistics(forest, train[0], train[1])
    return [
        _Fitted(np.nan_to_num(value), impurity, weighted)
        for value, impurity, weighted in zip(
            stats.value_, stats.impurity_, stats.weighted_n_node_samples_
        )
    ]


def _route(
    forest: Forest,
    X: NDArray[Any],
    target: NDArray[Any],
    weights: NDArray[np.float64],
    part: Callable[[int, NDArray[np.intp], NDArray[Any]], _TreePart],
) -> list[_TreePart]:
    """``part(j, leaves, targets)`` of every tree, routing as node_statistics does."""
    if forest.kind == "boosting":
        leaves = forest._apply(X)
        residuals = stage_residuals(forest, leaves, target, weights)
        return [part(j, leaves[:, j], residuals[:, j]) for j in range(forest.n_trees)]
    if forest._compiled_trees is not None and X.shape[0] >= _PER_TREE_MIN_ROWS:
        # Each tree scored as soon as it is routed, while other threads route.
        return map_compiled(
            forest._compiled_trees, X, lambda j, leaves: part(j, leaves, target)
        )
    leaves = forest._apply(X)
    return [part(j, leaves[:, j], target) for j in range(forest.n_trees)]


def _check_model(
    forest: Forest, target: NDArray[Any], definition: str, *, fitted_from_train: bool
) -> None:
    check_replayable(forest, target)
    if (
        forest.kind == "boosting"
        and forest.loss != "squared_error"
        and not fitted_from_train
    ):
        raise UnsupportedModelError(
            f"The stage trees of {forest.source or 'this model'} (loss "
            f"{forest.loss!r}) store line-search steps at their leaves, not the "
            "in-bag means debiased MDI compares; expected `train=(X_train, "
            "y_train)` to replay them, or a squared-error loss."
        )
    if (
        definition == "ufi"
        and not forest.is_classifier
        and forest.kind != "boosting"
        and forest.criterion not in _SQUARED
    ):
        raise UnsupportedModelError(
            "UFI of regression trees is defined for the squared-error impurity; "
            f"expected criterion in {list(_SQUARED)}, got {forest.criterion!r}.  "
            'Use definition="mdi_oob".'
        )
    for t, tree in enumerate(forest.trees):
        if fitted_from_train:
            break
        if np.isnan(tree.value).any() or (
            definition == "ufi" and np.isnan(tree.impurity).any()
        ):
            needed = "values and impurities" if definition == "ufi" else "values"
            raise UnsupportedModelError(
                f"Debiased MDI needs the node {needed} of every node; tree {t} of "
                f"{forest.source or 'this forest'} stores NaN."
            )


def _out_of_bag(
    model: Any, forest: Forest, n_samples: int, *, oob: bool, in_bag: Any
) -> NDArray[np.int64] | None:
    """In-bag counts (n_trees, n_samples) when out-of-bag rows are wanted."""
    if not oob:
        if in_bag is not None:
            raise InputError(
                "`in_bag` marks out-of-bag rows; expected it only with oob=True, got "
                "it with oob=False."
            )
        return None
    if in_bag is None:
        if isinstance(model, Forest):
            raise InputError(
                "A Forest keeps no bootstrap seeds; expected `in_bag` counts of "
                "shape (n_trees, n_samples) with oob=True, or the fitted model."
            )
        return bootstrap_counts(model, n_samples)
    counts = np.asarray(in_bag)
    if counts.shape != (forest.n_trees, n_samples):
        raise InputError(
            f"`in_bag` must have shape (n_trees, n_samples) = ({forest.n_trees}, "
            f"{n_samples}); got {counts.shape}."
        )
    return counts


def _tree_part(
    tree: Tree,
    fitted: _Fitted,
    leaves: NDArray[np.intp],
    target: NDArray[Any],
    v: NDArray[np.float64],
    n_classes: int,
    definition: str,
    rows: NDArray[np.float64] | None,
    lock: threading.Lock,
) -> _TreePart:
    """One tree's split decreases on the rows of positive weight ``v``."""
    n_nodes = tree.n_nodes
    positive = v > 0
    counted_rows = int(np.count_nonzero(positive))
    columns: list[NDArray[Any]] = [
        np.bincount(leaves[positive], minlength=n_nodes).astype(np.float64)
    ]
    if n_classes:
        cells = np.bincount(leaves * n_classes + target, v, n_nodes * n_classes)
        columns.extend(cells.reshape(n_nodes, n_classes).T)
    else:
        vy = v * target
        columns.extend(
            [
                np.bincount(leaves, v, n_nodes),
                np.bincount(leaves, vy, n_nodes),
                np.bincount(leaves, vy * target, n_nodes),
            ]
        )
    sums = _sum_up(tree, np.column_stack(columns))
    counts = np.rint(sums[:, 0]).astype(np.intp)
    if n_classes:
        C = sums[:, 1:]
        W = C.sum(axis=1)
    else:
        W, C = sums[:, 1], sums[:, 2:3]
    mu = fitted.value[:, : C.shape[1]]
    inner = np.flatnonzero(~tree.is_leaf)
    left, right = tree.children_left[inner], tree.children_right[inner]
    total = float(W[0]) if n_nodes else 0.0
    counted = inner.size > 0 and total > 0
    if not counted:
        return _TreePart(inner, np.zeros(inner.size), counts, W, counted_rows, False)
    if definition == "ufi" and not n_classes:
        decrease = _ufi_regression(fitted, W, C[:, 0], sums[:, 3], inner, left, right)
    else:
        if definition == "ufi":  # W(t) H(t) = W(t) - p_in(t) . C(t)
            term = W - np.einsum("nk,nk->n", mu, C)
            raw = term[inner] - term[left] - term[right]
        else:
            scored = np.einsum("nk,nk->n", mu, C)
            raw = scored[left] + scored[right] - scored[inner]
        decrease = raw / total
        if rows is not None:
            _add_row_parts(tree, leaves, target, v, positive, mu, total, rows, lock)
    return _TreePart(inner, decrease, counts, W, counted_rows, True)


def _ufi_regression(
    fitted: _Fitted,
    W: NDArray[np.float64],
    S1: NDArray[np.float64],
    S2: NDArray[np.float64],
    inner: NDArray[np.intp],
    left: NDArray[np.intp],
    right: NDArray[np.intp],
) -> NDArray[np.float64]:
    mu = fitted.value[:, 0]
    reached = W > 0
    safe = np.where(reached, W, 1.0)
    cross = np.where(reached, S2 / safe - 2.0 * mu * S1 / safe + mu * mu, 0.0)
    omega = fitted.weighted / fitted.weighted[0]
    term = omega * 0.5 * (fitted.impurity + cross)
    valid = reached[inner] & reached[left] & reached[right]
    return np.where(valid, term[inner] - term[left] - term[right], 0.0)


def _add_row_parts(
    tree: Tree,
    leaves: NDArray[np.intp],
    target: NDArray[Any],
    v: NDArray[np.float64],
    positive: NDArray[np.bool_],
    mu: NDArray[np.float64],
    total: float,
    rows: NDArray[np.float64],
    lock: threading.Lock,
) -> None:
    """Add each evaluation row's part of this tree's MDI-oob into ``rows``.

    A row's part is its path decomposition (the change of node value at each
    split, summed per split feature) dotted with its target, times its weight
    over the tree's total: summed over rows it is the tree's MDI-oob.
    """
    n_features = rows.shape[1]
    index = np.flatnonzero(positive)
    leaf, scale = leaves[index], v[index] / total
    # Top-down over the levels: contribution table of every node, one output
    # column at a time (bounded memory: n_nodes x n_features).
    top_down = _levels(tree)[::-1]
    parts = np.zeros((index.size, n_features))
    for k in range(mu.shape[1]):
        table = np.zeros((tree.n_nodes, n_features))
        for nodes in top_down:
            f = tree.feature[nodes]
            for child in (tree.children_left[nodes], tree.children_right[nodes]):
                table[child] = table[nodes]
                table[child, f] += mu[child, k] - mu[nodes, k]
        if mu.shape[1] == 1:
            parts += table[leaf] * (target[index] * scale)[:, np.newaxis]
        else:
            mine = target[index] == k
            parts[mine] += table[leaf[mine]] * scale[mine, np.newaxis]
    with lock:
        rows[index] += parts


def _assemble(
    forest: Forest,
    parts: list[_TreePart],
    rows: NDArray[np.float64] | None,
    *,
    definition: str,
    source: str,
    n_bootstrap: int,
    confidence: float,
    random_state: int | None,
) -> DebiasedMDIImportance:
    n_features = forest.n_features
    names = list(forest.feature_names)
    per_tree = np.zeros((forest.n_trees, n_features))
    for t, p in enumerate(parts):
        feature = forest.trees[t].feature[p.inner]
        per_tree[t] = np.bincount(feature, p.decrease, n_features)
    counted = np.array([p.counted for p in parts], dtype=bool)
    n_counted = int(counted.sum())
    if n_counted:
        importances = per_tree[counted].mean(axis=0)
    else:
        importances = np.zeros(n_features)
    total = importances.sum()
    normalized = importances / total if total > 0 else np.full(n_features, np.nan)
    single = forest.kind == "tree"
    std = None if single else per_tree[counted].std(axis=0) if n_counted else None
    label = f"{_LABELS[definition]} ({source})"
    interval, interval_method = None, ""
    if n_counted and n_bootstrap:
        row_parts = None if rows is None else rows / n_counted
        interval = bootstrap_interval(
            per_tree[counted],
            names,
            row_contributions=row_parts,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            random_state=random_state,
        )
        units = "rows" if single else f"{n_counted} trees"
        if rows is not None and not single:
            units += " and rows (each row's first-order part, tree totals held)"
        interval_method = (
            f"{confidence:.0%} percentile bootstrap over {units}, "
            f"{n_bootstrap} replicates"
        )
    return DebiasedMDIImportance(
        importances_=pd.Series(importances, index=names, name="importance"),
        normalized_=pd.Series(normalized, index=names, name="normalized"),
        std_=None if std is None else pd.Series(std, index=names, name="std"),
        per_tree_=pd.DataFrame(
            per_tree, columns=names, index=pd.RangeIndex(forest.n_trees, name="tree")
        ),
        method=label,
        interval_=interval,
        interval_method=interval_method,
        can_be_negative=True,
        nodes_=_nodes_frame(forest, parts, 1.0 / max(n_counted, 1)),
        n_rows_=np.array([p.n_rows for p in parts], dtype=np.intp),
        definition=definition,
    )


def _nodes_frame(
    forest: Forest, parts: list[_TreePart], share_scale: float
) -> pd.DataFrame:
    columns: dict[str, list[NDArray[Any]]] = {
        name: []
        for name in (
            "tree", "node", "depth", "feature", "n_node_samples",
            "weighted_n_node_samples", "left_child", "left_weighted_n_node_samples",
            "right_child", "right_weighted_n_node_samples", "decrease", "share",
        )
    }  # fmt: skip
    for t, p in enumerate(parts):
        tree = forest.trees[t]
        left, right = tree.children_left[p.inner], tree.children_right[p.inner]
        columns["tree"].append(np.full(p.inner.size, t, dtype=np.intp))
        columns["node"].append(p.inner)
        columns["depth"].append(tree.node_depth[p.inner])
        columns["feature"].append(tree.feature[p.inner])
        columns["n_node_samples"].append(p.counts[p.inner])
        columns["weighted_n_node_samples"].append(p.weights[p.inner])
        columns["left_child"].append(left)
        columns["left_weighted_n_node_samples"].append(p.weights[left])
        columns["right_child"].append(right)
        columns["right_weighted_n_node_samples"].append(p.weights[right])
        columns["decrease"].append(p.decrease)
        columns["share"].append(p.decrease * (share_scale if p.counted else 0.0))
    integers = ("tree", "node", "depth", "feature", "n_node_samples")
    frame = pd.DataFrame(
        {
            name: (
                np.concatenate(values).astype(
                    np.intp if name in integers or name.endswith("child") else float
                )
                if values
                else np.empty(0)
            )
            for name, values in columns.items()
        }
    )
    names = np.asarray(forest.feature_names, dtype=object)
    frame.insert(4, "feature_name", names[frame["feature"].to_numpy(dtype=np.intp)])
    return frame
