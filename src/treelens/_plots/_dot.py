"""export_dot: a tree as Graphviz DOT text, without needing Graphviz."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._adapters import to_forest
from .._core._forest import Forest
from .._exceptions import InputError
from .._types import ArrayLike, ModelLike
from ._partition import resolve_tree_index
from ._tree_layout import (
    ANNOTATIONS,
    TreeLayout,
    decision_path,
    node_colors,
    node_texts,
    tree_caption,
    tree_layout,
)

if TYPE_CHECKING:
    from .._importance._mdi import MDIImportance

__all__ = ["export_dot"]


def check_annotate(annotate: Sequence[str]) -> tuple[str, ...]:
    """Validate the annotation names."""
    annotate = (annotate,) if isinstance(annotate, str) else tuple(annotate)
    unknown = [a for a in annotate if a not in ANNOTATIONS]
    if unknown:
        raise InputError(
            f"Unknown annotation {unknown[0]!r}; expected some of {list(ANNOTATIONS)}."
        )
    return annotate


def node_mdi(importance: Any, tree_index: int, n_nodes: int) -> Any:
    """Per-node MDI decrease of one tree from an importance result's ``nodes_``.

    Accepts ``nodes_`` as a DataFrame with ``tree``, ``node`` and a decrease
    column, or None (then the diagram computes the weighted impurity decrease).
    """
    if importance is None:
        return None
    nodes = getattr(importance, "nodes_", None)
    if nodes is None:
        raise InputError(
            "`importance` must carry per-node decreases in `nodes_` (as "
            f"mdi_importance's result); got {type(importance).__name__} without them."
        )
    columns = [
        c for c in ("decrease", "impurity_decrease", "mdi") if c in nodes.columns
    ]
    if not columns or "node" not in nodes.columns:
        raise InputError(
            "`importance.nodes_` must have columns 'node' and 'decrease'; got "
            f"{list(nodes.columns)}."
        )
    rows = nodes[nodes["tree"] == tree_index] if "tree" in nodes.columns else nodes
    out = np.zeros(n_nodes)
    out[rows["node"].to_numpy(dtype=np.intp)] = rows[columns[0]].to_numpy(
        dtype=np.float64
    )
    return out


@dataclass(frozen=True)
class NodeDiagram:
    """The nodes of one tree as a diagram shows them.

    Attributes
    ----------
    forest : Forest
        The model read as a Forest.
    tree_index : int
        The tree drawn.
    layout : TreeLayout
        Positions and edges of the nodes drawn.
    texts : list of str
        Text of every node drawn, ``(...)`` added under the nodes the depth cut.
    colors : list of str
        Fill colour of every node drawn (``#rrggbbaa``).
    caption : str
        What the tree adds to, for models with one tree per class and round
        (:func:`~treelens._plots._tree_layout.tree_caption`); else empty.
    """

    forest: Forest
    tree_index: int
    layout: TreeLayout
    texts: list[str]
    colors: list[str]
    caption: str = ""


def node_diagram(
    model: Any,
    *,
    tree_index: int | None,
    max_depth: int | None,
    annotate: Sequence[str],
    class_names: Sequence[str] | None,
    proportion: bool,
    precision: int | None,
    importance: Any,
) -> NodeDiagram:
    """Lay out one tree and write its nodes' texts and colours.

    What :func:`export_dot` and ``TreeDiagramDisplay`` both draw; the
    parameters are theirs.
    """
    forest = to_forest(model)
    t = resolve_tree_index(forest, tree_index)
    annotate = check_annotate(annotate)
    tree = forest.trees[t]
    layout = tree_layout(tree, max_depth=max_depth)
    texts = node_texts(
        forest,
        t,
        layout.nodes,
        annotate=annotate,
        class_names=class_names,
        mdi=node_mdi(importance, t, tree.n_nodes),
        proportion=proportion,
        precision=precision,
    )
    return NodeDiagram(
        forest=forest,
        tree_index=t,
        layout=layout,
        texts=[
            s + ("\n(...)" if cut else "") for s, cut in zip(texts, layout.truncated)
        ],
        colors=node_colors(forest, t, layout.nodes),
        caption=tree_caption(forest, t),
    )


def _quote(text: str) -> str:
    return (
        '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    )


def export_dot(
    model: ModelLike,
    *,
    tree_index: int | None = None,
    max_depth: int | None = None,
    annotate: Sequence[str] = ("samples", "value", "impurity"),
    class_names: Sequence[str] | None = None,
    proportion: bool = False,
    precision: int | None = None,
    importance: MDIImportance | None = None,
    path_of: ArrayLike | None = None,
    filled: bool = True,
    out_file: str | Path | None = None,
) -> str:
    """Write one tree as Graphviz DOT text.

    Parameters
    ----------
    model : fitted tree model or Forest
    tree_index : int, optional
        Which tree of an ensemble; required unless the model is one tree.
    max_depth : int, optional
        Deepest level written; cut nodes are marked ``(...)``.
    annotate : sequence of str, default=("samples", "value", "impurity")
        Among ``"samples"``, ``"value"``, ``"impurity"``, ``"weighted_impurity"``
        (``w*I``) and ``"mdi"`` (the split's impurity decrease).
    class_names : sequence of str, optional
    proportion : bool, default=False
        Class fractions and sample shares instead of class counts and sample
        counts, as scikit-learn's ``export_graphviz``.
    precision : int, optional
        Decimals of thresholds, impurities and values; default thresholds as
        short as tells them apart (``16.795``), four significant digits
        elsewhere.
    importance : importance result, optional
        A result with per-node decreases in ``nodes_`` (``mdi_importance``) to
        print for ``"mdi"``; default the weighted impurity decrease.
    path_of : array-like of shape (n_features,), optional
        Highlight the nodes this row visits (bold red outline).
    filled : bool, default=True
        Fill nodes with their majority class's colour.
    out_file : str or Path, optional
        Also write the text to this file.

    Returns
    -------
    str
        The DOT text.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> dot = export_dot(DecisionTreeClassifier(max_depth=2).fit(X, y))
    >>> dot.splitlines()[0], dot.count(" -> ")
    ('digraph Tree {', 4)
    """
    diagram = node_diagram(
        model,
        tree_index=tree_index,
        max_depth=max_depth,
        annotate=annotate,
        class_names=class_names,
        proportion=proportion,
        precision=precision,
        importance=importance,
    )
    layout = diagram.layout
    on_path = set()
    if path_of is not None:
        on_path = set(
            decision_path(diagram.forest, diagram.tree_index, path_of).tolist()
        )
    lines = [
        "digraph Tree {",
        'node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="helvetica"] ;',
        'edge [fontname="helvetica"] ;',
    ]
    if diagram.caption:
        lines.append(
            f'label={_quote(diagram.caption)}, labelloc="t", fontname="helvetica" ;'
        )
    for k, node in enumerate(layout.nodes.tolist()):
        attrs = [f"label={_quote(diagram.texts[k])}"]
        if filled:
            attrs.append(f'fillcolor="{diagram.colors[k]}"')
        if node in on_path:
            attrs.append('color="#d62728", penwidth=3')
        lines.append(f"{node} [{', '.join(attrs)}] ;")
    for (parent, child), left in zip(layout.edges.tolist(), layout.is_left.tolist()):
        attrs = []
        if parent == 0:
            attrs.append(f'headlabel="{"True" if left else "False"}"')
        if parent in on_path and child in on_path:
            attrs.append('color="#d62728", penwidth=3')
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"{parent} -> {child}{suffix} ;")
    lines.append("}")
    dot = "\n".join(lines) + "\n"
    if out_file is not None:
        Path(out_file).write_text(dot, encoding="utf-8")
    return dot
