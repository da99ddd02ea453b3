"""TreeDiagramDisplay: an annotated tree diagram drawn with matplotlib only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ._common import RenamedAttributes, require_matplotlib
from ._dot import node_diagram
from ._tree_layout import TreeLayout, decision_path

__all__ = ["TreeDiagramDisplay"]


class TreeDiagramDisplay(RenamedAttributes):
    """A tree diagram with annotated nodes, drawn without the Graphviz program.

    Node text never overlaps: :meth:`plot` measures every node's box and, on a
    figure of its own, widens the figure (up to 60 inches) before it shrinks
    the font; on given axes it shrinks the font.

    Parameters
    ----------
    layout : TreeLayout
        Node positions and edges (see :func:`treelens._plots._tree_layout.tree_layout`).
    texts : list of str
        The text of every node drawn.
    colors : list of str
        Fill colour of every node (``#rrggbbaa``).
    path : ndarray or None
        Nodes of the highlighted decision path, root first.
    tree_index : int
    caption : str, default=""
        The axes' title: what the tree adds to, for models that grow one tree
        per class and round ("tree 4: round 1, raw score of class 1"); no title
        when empty.

    Attributes
    ----------
    nodes : ndarray of shape (n_shown,)
        Node ids drawn.
    positions : ndarray of shape (n_shown, 2)
        ``(x, y)`` of every node drawn.
    text_artists_ : list of matplotlib Text
    edge_collection_ : matplotlib LineCollection
    fontsize_ : float
        The font size the node text was drawn at.
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
    >>> disp.nodes.size, disp.path.size
    (5, 2)
    >>> disp.texts[0].splitlines()[2]
    'value = [50, 50, 50]'
    """

    _renamed: ClassVar[dict[str, str]] = {
        "layout_": "layout",
        "nodes_": "nodes",
        "positions_": "positions",
        "texts_": "texts",
        "colors_": "colors",
        "path_": "path",
        "tree_index_": "tree_index",
    }

    def __init__(
        self,
        *,
        layout: TreeLayout,
        texts: list[str],
        colors: list[str],
        path: NDArray[np.intp] | None,
        tree_index: int,
        caption: str = "",
    ) -> None:
        self.layout = layout
        self.nodes = layout.nodes
        self.positions = np.column_stack([layout.x, layout.y])
        self.texts = texts
        self.colors = colors
        self.path = path
        self.tree_index = tree_index
        self.caption = caption

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        *,
        tree_index: int | None = None,
        max_depth: int | None = 3,
        annotate: Sequence[str] = ("samples", "value", "impurity"),
        class_names: Sequence[str] | None = None,
        proportion: bool = False,
        precision: int | None = None,
        importance: Any = None,
        path_of: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> TreeDiagramDisplay:
        """Lay out one tree and draw it.

        Parameters
        ----------
        model : fitted tree model or Forest
        tree_index : int, optional
            Which tree of an ensemble; required unless the model is one tree.
        max_depth : int or None, default=3
            Deepest level drawn (None: the whole tree).
        annotate : sequence of str, default=("samples", "value", "impurity")
            Among ``"samples"``, ``"value"``, ``"impurity"``,
            ``"weighted_impurity"`` (``w*I``) and ``"mdi"``.
        class_names : sequence of str, optional
        proportion : bool, default=False
            Class fractions and sample shares instead of counts (``value = [25,
            259]``), as scikit-learn's ``plot_tree``.
        precision : int, optional
            Decimals of thresholds, impurities and values; default thresholds
            as short as tells them apart (``16.795``), four significant digits
            elsewhere.
        importance : importance result, optional
            Per-node decreases in ``nodes_`` to print for ``"mdi"``.
        path_of : array-like of shape (n_features,), optional
            Highlight the decision path of this row.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        TreeDiagramDisplay
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
        t, layout = diagram.tree_index, diagram.layout
        path = None if path_of is None else decision_path(diagram.forest, t, path_of)
        if path is not None:
            path = path[np.isin(path, layout.nodes)]
        display = cls(
            layout=layout,
            texts=diagram.texts,
            colors=diagram.colors,
            path=path,
            tree_index=t,
            caption=diagram.caption,
        )
        return display.plot(ax=ax, **kwargs)

    def plot(
        self,
        ax: Any = None,
        *,
        fontsize: float | None = None,
        grow_figure: bool | None = None,
        **kwargs: Any,
    ) -> TreeDiagramDisplay:
        """Draw the nodes as boxes and the edges as lines.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            A new figure sized to the tree when None.
        fontsize : float, optional
            Largest font size of the node text (default 9); smaller where the
            boxes would otherwise overlap.
        grow_figure : bool, optional
            Make the figure wider or taller (up to 60 inches) before shrinking
            the font; default only when the diagram creates its figure (``ax``
            None).
        **kwargs
            Passed to every node's :meth:`matplotlib.axes.Axes.text` (for
            example ``fontfamily``, ``color``).

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        from matplotlib.collections import LineCollection
        from matplotlib.colors import to_rgba

        layout = self.layout
        depth = int(-layout.y.min()) if layout.y.size else 0
        own_figure = ax is None
        if own_figure:
            _, ax = plt.subplots(
                figsize=(
                    min(2.2 * max(layout.n_columns, 1) + 1, _MAX_WIDTH),
                    1.6 * (depth + 1) + 0.6,
                )
            )
        size = 9.0 if fontsize is None else float(fontsize)
        index = {int(n): k for k, n in enumerate(layout.nodes.tolist())}
        parent_pos = self.positions[[index[int(p)] for p in layout.edges[:, 0]]]
        child_pos = self.positions[[index[int(c)] for c in layout.edges[:, 1]]]
        segments = np.stack([parent_pos, child_pos], axis=1)
        on_path = set() if self.path is None else set(self.path.tolist())
        highlighted = np.array(
            [p in on_path and c in on_path for p, c in layout.edges.tolist()],
            dtype=bool,
        )
        self.edge_collection_ = LineCollection(
            list(segments),
            colors=np.where(highlighted[:, None], to_rgba("#d62728"), to_rgba("0.4")),
            linewidths=np.where(highlighted, 3.0, 1.0),
            zorder=1,
        )
        ax.add_collection(self.edge_collection_)
        # Opaque faces (the colour's alpha blended over white) hide the edges below.
        rgba = np.array([to_rgba(c) for c in self.colors]).reshape(-1, 4)
        faces = rgba[:, :3] * rgba[:, 3:] + (1.0 - rgba[:, 3:])
        self.text_artists_ = []
        for k, node in enumerate(layout.nodes.tolist()):
            hot = node in on_path
            self.text_artists_.append(
                ax.text(
                    self.positions[k, 0],
                    self.positions[k, 1],
                    self.texts[k],
                    **{
                        "ha": "center",
                        "va": "center",
                        "zorder": 2,
                        **kwargs,
                        "fontsize": size,
                        "bbox": {
                            "boxstyle": f"round,pad={_PAD}",
                            "facecolor": tuple(faces[k]),
                            "edgecolor": "#d62728" if hot else "0.3",
                            "linewidth": 2.5 if hot else 0.8,
                        },
                    },
                )
            )
        ax.set_xlim(-0.6, max(layout.n_columns, 1) - 0.4)
        ax.set_ylim(-depth - 0.6, 0.6)
        ax.set_axis_off()
        if self.caption:
            ax.set_title(self.caption, fontsize=size)
        grow = own_figure if grow_figure is None else bool(grow_figure)
        self.fontsize_ = _fit_text(ax, self.text_artists_, self.positions, grow)
        self.ax_, self.figure_ = ax, ax.figure
        return self


# Widest figure a diagram grows to before its font shrinks, in inches.
_MAX_WIDTH = 60.0
# Box padding around node text, in units of the font size.
_PAD = 0.3
# Room left between neighbouring boxes, in pixels.
_GAP = 2.0


def _renderer(figure: Any) -> Any:
    canvas_renderer = getattr(figure.canvas, "get_renderer", None)
    return canvas_renderer() if canvas_renderer is not None else figure._get_renderer()


def _box_sizes(texts: list[Any], renderer: Any) -> NDArray[np.float64]:
    """Width and height in pixels of every node box (text plus its padding)."""
    sizes = np.array(
        [
            [t.get_window_extent(renderer).width, t.get_window_extent(renderer).height]
            for t in texts
        ]
    ).reshape(-1, 2)
    if texts:
        pad = 2 * _PAD * texts[0].get_fontsize() * texts[0].figure.dpi / 72.0
        sizes = sizes + pad
    return sizes


def _fit_ratio(
    ax: Any, positions: NDArray[np.float64], sizes: NDArray[np.float64]
) -> tuple[float, float]:
    """Largest factors by which every box may grow (below 1: must shrink) so
    that no two boxes meet and none leaves the axes: across, then down."""
    bbox = ax.get_window_extent()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    sx, sy = bbox.width / (x1 - x0), bbox.height / (y1 - y0)
    x, y = positions[:, 0], positions[:, 1]
    half = sizes / 2.0
    across = [
        ((x - x0) * sx - _GAP) / half[:, 0],
        ((x1 - x) * sx - _GAP) / half[:, 0],
    ]
    down = [
        ((y - y0) * sy - _GAP) / half[:, 1],
        ((y1 - y) * sy - _GAP) / half[:, 1],
    ]
    levels = np.unique(y)
    tallest = {}
    for level in levels.tolist():  # one step per depth level
        same = np.flatnonzero(y == level)
        same = same[np.argsort(x[same])]
        tallest[level] = half[same, 1].max()
        if same.size > 1:
            room = np.diff(x[same]) * sx - _GAP
            across.append(room / (half[same[:-1], 0] + half[same[1:], 0]))
    for upper, lower in zip(levels[1:].tolist(), levels[:-1].tolist()):
        room = (upper - lower) * sy - _GAP
        down.append(np.array([room / (tallest[upper] + tallest[lower])]))
    return (
        float(min(np.min(r) for r in across)),
        float(min(np.min(r) for r in down)),
    )


def _fit_text(
    ax: Any, texts: list[Any], positions: NDArray[np.float64], grow: bool
) -> float:
    """Widen the figure (``grow``) or shrink the font until no boxes overlap;
    returns the font size used."""
    if not texts:
        return 0.0
    figure = ax.figure
    renderer = _renderer(figure)
    size = float(texts[0].get_fontsize())
    if grow:
        across, down = _fit_ratio(ax, positions, _box_sizes(texts, renderer))
        width, height = figure.get_size_inches()
        figure.set_size_inches(
            min(width * max(1.0, 1.05 / across), _MAX_WIDTH),
            min(height * max(1.0, 1.05 / down), _MAX_WIDTH),
        )
        renderer = _renderer(figure)
    for _ in range(6):  # text size is close to linear in the font size
        ratio = min(_fit_ratio(ax, positions, _box_sizes(texts, renderer)))
        if ratio >= 1.0:
            break
        size = max(size * ratio * 0.97, 1.0)
        for text in texts:
            text.set_fontsize(size)
    return size
