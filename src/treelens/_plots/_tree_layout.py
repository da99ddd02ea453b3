"""Layout and node texts of tree diagrams, apart from any drawing.

Pure functions on a :class:`~treelens.Tree`; used by :func:`export_dot` and
:class:`TreeDiagramDisplay`.  Nothing here imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._core._features import split_condition
from .._core._forest import Forest, Tree

__all__ = [
    "ANNOTATIONS",
    "TreeLayout",
    "decision_path",
    "format_threshold",
    "impurity_decrease",
    "node_colors",
    "node_texts",
    "tree_caption",
    "tree_layout",
]

Annotation = Literal["samples", "value", "impurity", "weighted_impurity", "mdi"]
#: Every annotation a node may carry, in display order.
ANNOTATIONS: tuple[str, ...] = (
    "samples",
    "value",
    "impurity",
    "weighted_impurity",
    "mdi",
)

# matplotlib's tab10, so DOT output and matplotlib diagrams share class colours.
_TAB10 = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


@dataclass(frozen=True, eq=False)
class TreeLayout:
    """Positions of the nodes of a tree diagram.

    Leaves (or nodes at the depth cut) sit at consecutive integer x positions in
    left-to-right order; every parent is centred over the span of its leaves;
    y is minus the depth.

    Attributes
    ----------
    nodes : ndarray of shape (n_shown,)
        Ids of the nodes drawn, increasing.
    x : ndarray of shape (n_shown,)
    y : ndarray of shape (n_shown,)
    edges : ndarray of shape (n_shown - 1, 2)
        ``(parent, child)`` node ids of every edge drawn.
    is_left : ndarray of shape (n_shown - 1,), dtype bool
        Whether each edge goes to a left child (the ``x <= threshold`` side).
    truncated : ndarray of shape (n_shown,), dtype bool
        Nodes drawn as leaves although they have children (the depth cut).
    n_columns : int
        Number of leaf positions.
    """

    nodes: NDArray[np.intp]
    x: NDArray[np.float64]
    y: NDArray[np.float64]
    edges: NDArray[np.intp]
    is_left: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    n_columns: int


def tree_layout(tree: Tree, *, max_depth: int | None = None) -> TreeLayout:
    """Lay out the nodes of ``tree`` down to ``max_depth``.

    Parameters
    ----------
    tree : Tree
    max_depth : int, optional
        Deepest level drawn; nodes at that level are drawn as leaves.

    Returns
    -------
    TreeLayout

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from treelens import to_forest
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> tree = to_forest(DecisionTreeClassifier().fit(X, [0, 0, 1, 1, 0, 0, 1, 1])).trees[0]
    >>> layout = tree_layout(tree, max_depth=1)
    >>> layout.nodes.size, layout.n_columns
    (3, 2)
    """
    depth = tree.node_depth
    cut = tree.max_depth if max_depth is None else min(int(max_depth), tree.max_depth)
    shown = depth <= cut
    end = shown & (tree.is_leaf | (depth == cut))
    n_leaves = end.astype(np.intp)
    # Leaves below every node, one vectorized step per level from the bottom up.
    for level in range(cut - 1, -1, -1):
        inner = np.flatnonzero((depth == level) & ~end & shown)
        n_leaves[inner] = (
            n_leaves[tree.children_left[inner]] + n_leaves[tree.children_right[inner]]
        )
    offset = np.zeros(tree.n_nodes, dtype=np.intp)
    for level in range(cut):
        inner = np.flatnonzero((depth == level) & ~end & shown)
        offset[tree.children_left[inner]] = offset[inner]
        offset[tree.children_right[inner]] = (
            offset[inner] + n_leaves[tree.children_left[inner]]
        )
    nodes = np.flatnonzero(shown)
    x = offset[nodes] + (n_leaves[nodes] - 1) / 2.0
    inner = nodes[~end[nodes]]
    edges = np.concatenate(
        [
            np.column_stack([inner, tree.children_left[inner]]),
            np.column_stack([inner, tree.children_right[inner]]),
        ]
    )
    is_left = np.concatenate([np.ones(inner.size, bool), np.zeros(inner.size, bool)])
    order = np.lexsort((~is_left, edges[:, 0]))  # by parent, left child first
    edges, is_left = edges[order], is_left[order]
    return TreeLayout(
        nodes=nodes,
        x=x.astype(np.float64),
        y=-depth[nodes].astype(np.float64),
        edges=edges.astype(np.intp),
        is_left=is_left,
        truncated=(end & ~tree.is_leaf)[nodes],
        n_columns=int(n_leaves[0]),
    )


def impurity_decrease(tree: Tree) -> NDArray[np.float64]:
    """Weighted impurity decrease of every node, shape (n_nodes,); 0 at leaves.

    ``w_t I_t - w_l I_l - w_r I_r`` with ``w`` the weighted sample counts, the
    unnormalized mean-decrease-in-impurity contribution of a split.
    """
    wi = tree.weighted_n_node_samples * tree.impurity
    out = np.zeros(tree.n_nodes)
    inner = np.flatnonzero(~tree.is_leaf)
    out[inner] = (
        wi[inner] - wi[tree.children_left[inner]] - wi[tree.children_right[inner]]
    )
    return out


def decision_path(forest: Forest, tree_index: int, x: Any) -> NDArray[np.intp]:
    """Nodes the row ``x`` visits in tree ``tree_index``, root first."""
    if hasattr(x, "iloc") and getattr(x, "ndim", 2) == 1:
        x = x.to_frame().T  # one row of a DataFrame, as a one-row frame
    leaf = int(forest._apply(forest.validate_X(x))[0, tree_index])
    parent = forest.trees[tree_index].parent
    path = [leaf]
    while parent[path[-1]] >= 0:  # one step per level
        path.append(int(parent[path[-1]]))
    return np.array(path[::-1], dtype=np.intp)


def tree_caption(forest: Forest, tree_index: int) -> str:
    """What one tree of a model with several raw outputs adds to, in words.

    Multiclass boosting grows one tree per class and round, and multiclass
    AdaBoost's Forest holds each of its trees once per class
    (:attr:`Forest.tree_copies`): a tree's values are then one class's share
    only.  Empty for every other model, whose trees all score alike.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from treelens import to_forest
    >>> X, y = load_iris(return_X_y=True)
    >>> model = GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(X, y)
    >>> tree_caption(to_forest(model), 4)
    'tree 4: round 1, raw score of class 1'
    """
    if forest.kind != "boosting" or forest.n_outputs < 2:
        return ""
    output = int(forest.tree_output[tree_index])
    names = forest.classes_ if forest.classes_ is not None else range(forest.n_outputs)
    label = names[output]
    rank = int(np.count_nonzero(forest.tree_output[:tree_index] == output))
    if forest.link == "samme":
        return f"tree {tree_index}: the model's tree {rank}, its vote for class {label}"
    return f"tree {tree_index}: round {rank}, raw score of class {label}"


def format_threshold(value: float, precision: int | None = None) -> str:
    """A threshold as text that tells it apart from its neighbours.

    With ``precision`` None, the shortest text of at least four significant
    digits within a relative 1e-6 of the threshold, finer than the float32
    values trees split on: ``16.795`` stays ``16.795`` where four significant
    digits alone would print ``16.8``. Else ``precision`` decimals, as
    scikit-learn's ``export_graphviz``.

    Examples
    --------
    >>> format_threshold(16.795000076293945), format_threshold(810.3000183105469)
    ('16.795', '810.3')
    >>> format_threshold(16.795000076293945, precision=1)
    '16.8'
    """
    if precision is not None:
        return f"{value:.{int(precision)}f}"
    for digits in range(4, 18):
        text = f"{value:.{digits}g}"
        if abs(float(text) - value) <= 1e-6 * abs(value):
            return text
    return repr(float(value))


def _number(value: float, precision: int | None) -> str:
    return f"{value:.4g}" if precision is None else f"{value:.{int(precision)}f}"


def _counts(values: NDArray[np.float64], precision: int | None) -> str:
    """Class counts: whole numbers without decimals, weighted counts rounded."""
    if np.allclose(values, np.round(values), rtol=0, atol=1e-6):
        return ", ".join(str(int(v)) for v in np.round(values))
    digits = 2 if precision is None else int(precision)
    return ", ".join(f"{v:.{digits}f}" for v in values)


def node_texts(
    forest: Forest,
    tree_index: int,
    nodes: NDArray[np.intp],
    *,
    annotate: Sequence[str] = ("samples", "value", "impurity"),
    class_names: Sequence[str] | None = None,
    mdi: NDArray[np.float64] | None = None,
    proportion: bool = False,
    precision: int | None = None,
) -> list[str]:
    """Text of every node in ``nodes``: the split, then the annotations asked for.

    Parameters
    ----------
    forest : Forest
    tree_index : int
    nodes : ndarray of shape (n_shown,)
    annotate : sequence of str
        Among ``ANNOTATIONS``: ``samples`` (training samples), ``value`` (class
        counts or fractions and the majority class, or the mean), ``impurity``,
        ``weighted_impurity`` (``w*I``: weighted samples times impurity), ``mdi``
        (the node's weighted impurity decrease).
    class_names : sequence of str, optional
    mdi : ndarray of shape (n_nodes,), optional
        Per-node decrease to print; default :func:`impurity_decrease`.
    proportion : bool, default=False
        Class fractions and the share of the root's samples instead of counts,
        as scikit-learn's ``plot_tree(proportion=True)``. Counts are the class
        fractions times the node's weighted sample count (``value = [25, 259]``).
    precision : int, optional
        Decimals of thresholds, impurities and values; default the shortest
        threshold text that identifies the threshold (see
        :func:`format_threshold`), four significant digits for impurities and
        means, two decimals for fractions.

    Returns
    -------
    list of str
        One text per node, lines separated by ``\\n``.
    """
    tree = forest.trees[tree_index]
    names = forest.feature_names
    is_class = forest.is_classifier and forest.kind != "boosting"
    if is_class:
        labels = [
            str(c)
            for c in (
                class_names
                if class_names is not None
                else (() if forest.classes_ is None else forest.classes_)
            )
        ]
    decrease = (
        impurity_decrease(tree) if mdi is None else np.asarray(mdi, dtype=np.float64)
    )
    wi = tree.weighted_n_node_samples * tree.impurity
    root_samples = max(int(tree.n_node_samples[0]), 1)
    fraction_digits = 2 if precision is None else int(precision)
    texts = []
    for node in nodes.tolist():
        lines = []
        if not tree.is_leaf[node]:
            if tree.is_categorical[node]:
                lines.append(split_condition(forest, tree_index, node, names=names))
            else:
                threshold = format_threshold(tree.threshold[node], precision)
                lines.append(f"{names[tree.feature[node]]} <= {threshold}")
        for item in annotate:
            if item == "samples":
                n = int(tree.n_node_samples[node])
                shown = f"{100 * n / root_samples:.1f}%" if proportion else str(n)
                lines.append(f"samples = {shown}")
            elif item == "value":
                value = np.asarray(tree.value[node], dtype=np.float64)
                if is_class:
                    if proportion:
                        total = max(float(value.sum()), 1e-300)
                        text = ", ".join(
                            f"{v / total:.{fraction_digits}f}" for v in value
                        )
                    else:
                        total = float(value.sum())
                        scale = tree.weighted_n_node_samples[node] / (
                            total if total > 0 else 1.0
                        )
                        text = _counts(value * scale, precision)
                    lines.append(f"value = [{text}]")
                    lines.append(f"class = {labels[int(np.argmax(value))]}")
                else:
                    lines.append(f"value = {_number(value[0], precision)}")
            elif item == "impurity":
                lines.append(
                    f"{forest.criterion or 'impurity'} = "
                    f"{_number(tree.impurity[node], precision)}"
                )
            elif item == "weighted_impurity":
                lines.append(f"w*I = {_number(wi[node], precision)}")
            elif item == "mdi" and not tree.is_leaf[node]:
                lines.append(f"MDI decrease = {_number(decrease[node], precision)}")
        texts.append("\n".join(lines))
    return texts


def node_colors(forest: Forest, tree_index: int, nodes: NDArray[np.intp]) -> list[str]:
    """Fill colour of every node as ``#rrggbbaa``: the majority class's colour,
    more opaque the purer the node; for values, a blue scaled by the value."""
    tree = forest.trees[tree_index]
    value = tree.value[nodes]
    if forest.is_classifier and forest.kind != "boosting":
        winner = np.argmax(value, axis=1)
        top = np.sort(value, axis=1)
        n_classes = value.shape[1]
        second = top[:, -2] if n_classes > 1 else np.zeros(len(nodes))
        total = np.maximum(value.sum(axis=1), 1e-12)
        purity = (top[:, -1] - second) / total
        base = [_TAB10[k % 10] for k in winner]
    else:
        v = value[:, 0]
        low, high = tree.value[:, 0].min(), tree.value[:, 0].max()
        purity = (v - low) / (high - low) if high > low else np.ones(len(nodes))
        base = [_TAB10[0]] * len(nodes)
    alpha = np.round(40 + 215 * np.clip(purity, 0, 1)).astype(int)
    return [f"{b}{a:02x}" for b, a in zip(base, alpha.tolist())]
