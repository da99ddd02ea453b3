"""TreeDiagramDisplay: an annotated tree diagram drawn with matplotlib only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from ._common import require_matplotlib
from ._dot import check_annotate, node_mdi
from ._partition import resolve_tree_index
from ._tree_layout import (
    TreeLayout,
    decision_path,
    node_colors,
    node_texts,
    tree_layout,
)

__all__ = ["TreeDiagramDisplay"]


class TreeDiagramDisplay:
    """A tree diagram with annotated nodes, drawn without the Graphviz program.

    Attributes
    ----------
    layout_ : TreeLayout
        Node positions and edges (see :func:`treelens._plots._tree_layout.tree_layout`).
    nodes_ : ndarray of shape (n_shown,)
        Node ids drawn.
    positions_ : ndarray of shape (n_shown, 2)
        ``(x, y)`` of every node drawn.
    texts_ : list of str
        The text of every node drawn.
    colors_ : list of str
        Fill colour of every node (``#rrggbbaa``).
    path_ : ndarray or None
        Nodes of the highlighted decision path, root first.
    tree_index_ : int
    text_artists_ : list of matplotlib Text
    edge_collection_ : matplotlib LineCollection
    ax_, figure_

    See Also
    --------
    export_dot : the same diagram as DOT text.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    >>> disp = TreeDiagramDisplay.from_estimator(tree, max_depth=2, path_of=X[0])
    >>> disp.nodes_.size, disp.path_.size
    (5, 2)
    """

    def __init__(
        self,
        *,
        layout: TreeLayout,
        texts: list[str],
        colors: list[str],
        path: NDArray[np.intp] | None,
        tree_index: int,
    ) -> None:
        self.layout_ = layout
        self.nodes_ = layout.nodes
        self.positions_ = np.column_stack([layout.x, layout.y])
        self.texts_ = texts
        self.colors_ = colors
        self.path_ = path
        self.tree_index_ = tree_index

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        *,
        tree_index: int | None = None,
        max_depth: int | None = 3,
        annotate: Sequence[str] = ("samples", "value", "impurity"),
        class_names: Sequence[str] | None = None,
        importance: Any = None,
        path_of: Any = None,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> TreeDiagramDisplay:
        """Lay out one tree and draw it.

        Parameters
        ----------
        estimator : fitted tree model or Forest
        tree_index : int, optional
            Which tree of an ensemble; required unless the model is one tree.
        max_depth : int or None, default=3
            Deepest level drawn (None: the whole tree).
        annotate : sequence of str, default=("samples", "value", "impurity")
            Among ``"samples"``, ``"value"``, ``"impurity"``,
            ``"weighted_impurity"`` (``w*I``) and ``"mdi"``.
        class_names : sequence of str, optional
        importance : importance result, optional
            Per-node decreases in ``nodes_`` to print for ``"mdi"``.
        path_of : array-like of shape (n_features,), optional
            Highlight the decision path of this row.
        ax : matplotlib Axes, optional
        **plot_kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        TreeDiagramDisplay
        """
        forest = to_forest(estimator)
        t = resolve_tree_index(forest, tree_index)
        annotate = check_annotate(annotate)
        tree = forest.trees[t]
        layout = tree_layout(tree, max_depth=max_depth)
        mdi = node_mdi(importance, t, tree.n_nodes)
        texts = node_texts(
            forest, t, layout.nodes, annotate=annotate, class_names=class_names, mdi=mdi
        )
        texts = [
            s + ("\n(...)" if cut else "") for s, cut in zip(texts, layout.truncated)
        ]
        path = None if path_of is None else decision_path(forest, t, path_of)
        if path is not None:
            path = path[np.isin(path, layout.nodes)]
        display = cls(
            layout=layout,
            texts=texts,
            colors=node_colors(forest, t, layout.nodes),
            path=path,
            tree_index=t,
        )
        return display.plot(ax=ax, **plot_kwargs)

    def plot(
        self, ax: Any = None, *, fontsize: float | None = None
    ) -> TreeDiagramDisplay:
        """Draw the nodes as boxes and the edges as lines.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            A new figure sized to the tree when None.
        fontsize : float, optional
            Default: shrinks with the number of leaf positions.

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        from matplotlib.collections import LineCollection
        from matplotlib.colors import to_rgba

        layout = self.layout_
        depth = int(-layout.y.min()) if layout.y.size else 0
        if ax is None:
            _, ax = plt.subplots(
                figsize=(
                    min(2.2 * max(layout.n_columns, 1) + 1, 40),
                    1.6 * (depth + 1) + 0.6,
                )
            )
        if fontsize is None:
            fontsize = float(np.clip(11 - 0.25 * layout.n_columns, 5, 9))
        index = {int(n): k for k, n in enumerate(layout.nodes.tolist())}
        parent_pos = self.positions_[[index[int(p)] for p in layout.edges[:, 0]]]
        child_pos = self.positions_[[index[int(c)] for c in layout.edges[:, 1]]]
        segments = np.stack([parent_pos, child_pos], axis=1)
        on_path = set() if self.path_ is None else set(self.path_.tolist())
        highlighted = np.array(
            [p in on_path and c in on_path for p, c in layout.edges.tolist()],
            dtype=bool,
        )
        self.edge_collection_ = LineCollection(
            segments,
            colors=np.where(highlighted[:, None], to_rgba("#d62728"), to_rgba("0.4")),
            linewidths=np.where(highlighted, 3.0, 1.0),
            zorder=1,
        )
        ax.add_collection(self.edge_collection_)
        # Opaque faces (the colour's alpha blended over white) hide the edges below.
        rgba = np.array([to_rgba(c) for c in self.colors_]).reshape(-1, 4)
        faces = rgba[:, :3] * rgba[:, 3:] + (1.0 - rgba[:, 3:])
        self.text_artists_ = []
        for k, node in enumerate(layout.nodes.tolist()):
            hot = node in on_path
            self.text_artists_.append(
                ax.text(
                    self.positions_[k, 0],
                    self.positions_[k, 1],
                    self.texts_[k],
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    zorder=2,
                    bbox={
                        "boxstyle": "round,pad=0.3",
                        "facecolor": tuple(faces[k]),
                        "edgecolor": "#d62728" if hot else "0.3",
                        "linewidth": 2.5 if hot else 0.8,
                    },
                )
            )
        ax.set_xlim(-0.6, max(layout.n_columns, 1) - 0.4)
        ax.set_ylim(-depth - 0.6, 0.6)
        ax.set_axis_off()
        self.ax_, self.figure_ = ax, ax.figure
        return self
