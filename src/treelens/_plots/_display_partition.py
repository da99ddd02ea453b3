"""PartitionDisplay and ForestGridDisplay: the rectangles trees cut."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from .._exceptions import InputError, OutOfBagWarning, warn
from ._common import (
    RenamedAttributes,
    add_lines,
    class_colors,
    class_labels,
    require_matplotlib,
    resolve_axes,
    scatter_classes,
    set_window,
)
from ._display_regions import (
    DecisionRegionDisplay,
    as_array,
    reference_array,
    require_classifier,
)
from ._partition import (
    partition_rectangles,
    points_to_draw,
    resolve_features,
    resolve_reference,
    resolve_tree_index,
    resolve_window,
    slice_nodes,
)

__all__ = ["ForestGridDisplay", "PartitionDisplay"]


class PartitionDisplay(RenamedAttributes):
    """The exact rectangles one tree cuts in two chosen features.

    Regions come from the tree's structure, not from a grid: with the other
    features held at a reference row, the leaves the reference can reach tile the
    plane of the two features; each is drawn clipped to the window (the data's
    range plus a margin, or ``window``).  With ``max_depth`` the nodes at that
    depth (and the leaves above it) are the regions.  Classification regions are
    coloured by their majority class, regression regions by their mean (boosting
    trees: their raw value).

    Parameters
    ----------
    rectangles : ndarray of shape (n_regions, 4)
        ``x_min, x_max, y_min, y_max`` of every region.
    labels : ndarray of shape (n_regions,)
        The class (classification) or value (regression, boosting) of every region.
    nodes : ndarray of shape (n_regions,)
        Node id of every region within the tree.
    values : ndarray of shape (n_regions, n_values)
        ``Tree.value`` of every region's node.
    split_segments : ndarray of shape (n_splits, 2, 2)
        The split lines, ``[[x0, y0], [x1, y1]]``.
    features : (int, int)
    feature_names : (str, str)
    reference : ndarray of shape (n_features,)
    window : ndarray of shape (2, 2)
        ``[[x0, x1], [y0, y1]]``.
    classes : ndarray or None
        Classes for class colouring, None when regions hold values.
    class_names : list of str or None
        Legend text of every class (default the classes).
    tree_index : int
    max_depth : int or None
    X, y : ndarray or None
        The points drawn.

    Attributes
    ----------
    collection_ : matplotlib PolyCollection
        The rectangles, one face colour each, in the order of ``rectangles``.
    splits_ : matplotlib LineCollection
        The split lines drawn.
    points_ : list of matplotlib PathCollection
        The points, one scatter per class (one in all for regression).
    skipped_rows_ : ndarray of int or None
        Rows of X not drawn for a missing value (NaN) of one of the two features
        (counted by a :class:`~treelens.MissingValuesWarning`).
    ax_, figure_ : after :meth:`plot`.

    See Also
    --------
    DecisionRegionDisplay : regions of any classifier, or of a whole ensemble.
    ForestGridDisplay : partitions of several trees beside their forest.
    DataDisplay : the points alone.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    >>> disp = PartitionDisplay.from_estimator(tree, X, y, features=(2, 3),
    ...                                        max_depth=2, window=((0, 8), (0, 3)))
    >>> len(disp.rectangles) <= 4, disp.window.tolist()
    (True, [[0.0, 8.0], [0.0, 3.0]])
    """

    _renamed: ClassVar[dict[str, str]] = {
        name + "_": name
        for name in (
            "rectangles",
            "labels",
            "nodes",
            "values",
            "split_segments",
            "features",
            "feature_names",
            "reference",
            "window",
            "classes",
            "tree_index",
            "max_depth",
            "X",
            "y",
        )
    }

    def __init__(
        self,
        *,
        rectangles: NDArray[np.float64],
        labels: NDArray[Any],
        nodes: NDArray[np.intp],
        values: NDArray[np.float64],
        split_segments: NDArray[np.float64],
        features: tuple[int, int],
        feature_names: tuple[str, str],
        reference: NDArray[np.float64],
        window: NDArray[np.float64],
        classes: NDArray[Any] | None,
        class_names: list[str] | None = None,
        tree_index: int = 0,
        max_depth: int | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[Any] | None = None,
    ) -> None:
        self.rectangles = rectangles
        self.labels = labels
        self.nodes = nodes
        self.values = values
        self.split_segments = split_segments
        self.features = features
        self.feature_names = feature_names
        self.reference = reference
        self.window = window
        self.classes = classes
        self.class_names = class_names
        self.tree_index = tree_index
        self.max_depth = max_depth
        self.X, self.y = X, y

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        tree_index: int | None = None,
        max_depth: int | None = None,
        reference: Any = None,
        window: Any = None,
        margin: float = 0.05,
        class_names: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> PartitionDisplay:
        """Compute the partition of one tree and draw it.

        Parameters
        ----------
        model : fitted tree model or Forest
        X : array-like of shape (n_samples, n_features)
            Data setting the window, the default reference (median) and the
            points drawn.
        y : array-like of shape (n_samples,), optional
            Targets colouring the points.
        features : pair of str or int, default=(0, 1)
        tree_index : int, optional
            Which tree of an ensemble; required unless the model is one tree.
        max_depth : int, optional
            Cut the tree at this depth.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X.
        window : ((x0, x1), (y0, y1)), optional
            The window drawn, regions filling it whatever the data's range;
            default the data's range widened by ``margin``.
        margin : float, default=0.05
        class_names : sequence of str, optional
            Legend text of the classes, in the order of the model's classes.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        PartitionDisplay
        """
        display = cls._compute(
            model,
            X,
            y,
            features=features,
            tree_index=tree_index,
            max_depth=max_depth,
            reference=reference,
            window=window,
            margin=margin,
            class_names=class_names,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def _compute(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        tree_index: int | None = None,
        max_depth: int | None = None,
        reference: Any = None,
        window: Any = None,
        margin: float = 0.05,
        class_names: Any = None,
    ) -> PartitionDisplay:
        """The partition as a Display, not drawn yet (see :meth:`from_estimator`)."""
        forest = to_forest(model)
        t = resolve_tree_index(forest, tree_index)
        f0, f1 = resolve_features(forest, features)
        for j in (f0, f1):
            if forest.n_categories[j]:
                other = (
                    "DecisionRegion" if forest.is_classifier else "PredictionSurface"
                )
                raise InputError(
                    f"Feature {forest.feature_names[j]!r} is categorical; a "
                    "partition draws numeric axes only. Expected two numeric "
                    f"features: draw this pair with {other}Display, which shows "
                    "categories as bands."
                )
        if max_depth is not None and (
            isinstance(max_depth, bool) or int(max_depth) < 0
        ):
            raise InputError(
                f"`max_depth` must be a non-negative integer or None; got {max_depth!r}."
            )
        Xa = as_array(X, forest)
        ref = resolve_reference(
            Xa,
            reference_array(reference, forest),
            forest.n_features,
            forest.n_categories,
            forest.feature_names,
        )
        box = resolve_window(Xa, (f0, f1), window, margin=margin)
        part = partition_rectangles(
            forest, (f0, f1), ref, box, tree_index=t, max_depth=max_depth
        )
        classes = forest.classes_ if _colours_by_class(forest) else None
        labels = (
            classes.take(np.argmax(part.values, axis=1))
            if classes is not None
            else part.values[:, 0]
        )
        return cls(
            rectangles=part.rectangles,
            labels=labels,
            nodes=part.nodes,
            values=part.values,
            split_segments=_split_segments(forest, t, (f0, f1), ref, box, max_depth),
            features=(f0, f1),
            feature_names=(forest.feature_names[f0], forest.feature_names[f1]),
            reference=ref,
            window=box,
            classes=classes,
            class_names=(
                None if classes is None else class_labels(classes, class_names)
            ),
            tree_index=t,
            max_depth=max_depth,
            X=Xa,
            y=None if y is None else np.asarray(y),
        )

    def region_colors(self) -> NDArray[np.float64]:
        """RGBA colour of every region, shape (n_regions, 4)."""
        if self.classes is not None:
            colors = class_colors(len(self.classes))
            return colors[np.searchsorted(self.classes, self.labels)]
        cmap, norm = self._value_cmap()
        return np.asarray(cmap(norm(self.labels)))

    def _value_cmap(self) -> tuple[Any, Any]:
        plt = require_matplotlib()
        from matplotlib.colors import Normalize

        low = float(np.min(self.labels)) if len(self.labels) else 0.0
        high = float(np.max(self.labels)) if len(self.labels) else 1.0
        return plt.get_cmap("viridis"), Normalize(
            low, high if high > low else low + 1.0
        )

    def plot(
        self,
        ax: Any = None,
        *,
        alpha: float = 0.5,
        show_splits: bool = True,
        show_points: bool = True,
        legend: bool = True,
        colorbar: bool = True,
        markers: Any = None,
        boundary_kwargs: dict[str, Any] | None = None,
        scatter_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> PartitionDisplay:
        """Draw the rectangles, split lines and points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        alpha : float, default=0.5
            Opacity of the regions.
        show_splits : bool, default=True
        show_points : bool, default=True
        legend : bool, default=True
            Class legend (classification).
        colorbar : bool, default=True
            Value colour bar (regression).
        markers : str or sequence of str, optional
            Marker of every class's points; default one shape per class.
        boundary_kwargs : dict, optional
            Styling of the split lines, passed to matplotlib's LineCollection
            (``colors``, ``linestyles``, ``linewidths``; ``label`` adds them to
            the legend).
        scatter_kwargs : dict, optional
            Passed to :meth:`matplotlib.axes.Axes.scatter` (``s``, ``edgecolors``).
        **kwargs
            Passed to the regions' PolyCollection (``edgecolors``, ``hatch``).

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.cm import ScalarMappable
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch

        ax = resolve_axes(ax)
        r = self.rectangles
        corners = np.stack(
            [
                np.column_stack([r[:, 0], r[:, 2]]),
                np.column_stack([r[:, 1], r[:, 2]]),
                np.column_stack([r[:, 1], r[:, 3]]),
                np.column_stack([r[:, 0], r[:, 3]]),
            ],
            axis=1,
        )
        faces = self.region_colors().copy()
        faces[:, 3] = alpha
        self.collection_ = PolyCollection(
            list(corners), **{"facecolors": faces, "edgecolors": "none", **kwargs}
        )
        ax.add_collection(self.collection_, autolim=False)
        if show_splits and len(self.split_segments):
            self.splits_ = add_lines(ax, self.split_segments, boundary_kwargs)
        self.points_ = []
        self.skipped_rows_, pts = points_to_draw(
            self.X, self.features, self.feature_names, show=show_points
        )
        if pts is not None:
            self.points_ = self._scatter(ax, pts, markers, scatter_kwargs or {})
        if self.classes is not None and legend:
            colors = class_colors(len(self.classes))
            names = class_labels(self.classes, self.class_names)
            handles = self.points_ or [
                Patch(color=colors[k], label=names[k]) for k in range(len(names))
            ]
            if show_splits and "label" in (boundary_kwargs or {}):
                handles = [*handles, self.splits_]
            ax.legend(handles=handles, fontsize="small", loc="best")
        elif self.classes is None and colorbar:
            cmap, norm = self._value_cmap()
            ax.figure.colorbar(
                ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="value"
            )
        set_window(ax, self.window, self.feature_names)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _scatter(
        self, ax: Any, pts: NDArray[np.float64], markers: Any, style: dict[str, Any]
    ) -> list[Any]:
        if self.y is not None and self.classes is not None:
            return scatter_classes(
                ax,
                pts,
                self.y,
                self.classes,
                class_labels(self.classes, self.class_names),
                class_colors(len(self.classes)),
                markers=markers,
                **style,
            )
        if self.y is not None:
            cmap, norm = self._value_cmap()
            default = {"c": cmap(norm(self.y)), "edgecolors": "k", "s": 16}
            return [
                ax.scatter(
                    pts[:, 0], pts[:, 1], **{**default, "linewidths": 0.4, **style}
                )
            ]
        return [ax.scatter(pts[:, 0], pts[:, 1], **{"c": "k", "s": 6, **style})]


def _colours_by_class(forest: Forest) -> bool:
    # Trees of boosting classifiers hold raw scores, not class fractions.
    return forest.is_classifier and forest.kind != "boosting"


def _split_segments(
    forest: Forest,
    tree_index: int,
    features: tuple[int, int],
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
    max_depth: int | None,
) -> NDArray[np.float64]:
    """Split lines of reachable nodes above the depth cut, clipped to the window."""
    tree = forest.trees[tree_index]
    nodes = slice_nodes(
        tree, features, reference, forest.input_dtype, forest.n_categories
    )
    split = nodes.reachable & ~tree.is_leaf
    if max_depth is not None:
        split &= nodes.depth < max_depth
    out = []
    for k, f in enumerate(features):
        ids = np.flatnonzero(split & (tree.feature == f))
        thr = tree.threshold[ids]
        other = 1 - k
        lo = np.maximum(nodes.lower[ids, other], window[other, 0])
        hi = np.minimum(nodes.upper[ids, other], window[other, 1])
        keep = (lo < hi) & (thr > window[k, 0]) & (thr < window[k, 1])
        thr, lo, hi = thr[keep], lo[keep], hi[keep]
        start = np.empty((thr.size, 2))
        end = np.empty((thr.size, 2))
        start[:, k], start[:, other] = thr, lo
        end[:, k], end[:, other] = thr, hi
        out.append(np.stack([start, end], axis=1))
    return np.concatenate(out).reshape(-1, 2, 2)


class ForestGridDisplay(RenamedAttributes):
    """Small multiples: the partitions of the first trees beside the forest's regions.

    Each tree panel is titled with that tree's out-of-bag accuracy and the
    number of rows it was left out for, and the forest panel with the forest's,
    when the forest was fitted with bootstrap and the training data are given.
    Rows that every tree drew into its bootstrap sample have no out-of-bag
    prediction: they are left out of the forest's figure, with an
    :class:`~treelens.OutOfBagWarning` (scikit-learn's ``oob_score_`` counts
    them as its first class).  The forest panel shows the exact cells of all
    split lines, or above ``max_cells`` cells a raster, saying so in its title.

    Parameters
    ----------
    partitions : list of PartitionDisplay
        One per tree drawn.
    regions : DecisionRegionDisplay
        The forest's regions.
    tree_indices : ndarray of shape (n_trees_drawn,)
    n_trees : int
        Trees in the forest.
    oob_accuracy : ndarray of shape (n_trees_drawn,) or None
        Out-of-bag accuracy of every tree drawn (NaN for a tree with no
        out-of-bag row).
    oob_counts : ndarray of shape (n_trees_drawn,) or None
        Rows out of bag of every tree drawn.
    forest_oob_accuracy : float or None
        The forest's out-of-bag accuracy over the rows with an out-of-bag tree.
    forest_oob_count : int or None
        Rows with at least one out-of-bag tree.

    Attributes
    ----------
    titles_ : list of str
    axes_ : ndarray of matplotlib Axes
    figure_ : matplotlib Figure

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=50, max_depth=3,
    ...                                 random_state=0).fit(X, y)
    >>> grid = ForestGridDisplay.from_estimator(forest, X, y, features=(2, 3),
    ...                                         n_trees=2)
    >>> grid.titles_[0].startswith("tree 0: OOB accuracy"), grid.regions.exact
    (True, True)
    """

    _renamed: ClassVar[dict[str, str]] = {
        name + "_": name
        for name in (
            "partitions",
            "regions",
            "tree_indices",
            "oob_accuracy",
            "forest_oob_accuracy",
        )
    }

    def __init__(
        self,
        *,
        partitions: list[PartitionDisplay],
        regions: DecisionRegionDisplay,
        tree_indices: NDArray[np.intp],
        n_trees: int,
        oob_accuracy: NDArray[np.float64] | None = None,
        oob_counts: NDArray[np.intp] | None = None,
        forest_oob_accuracy: float | None = None,
        forest_oob_count: int | None = None,
    ) -> None:
        self.partitions = partitions
        self.regions = regions
        self.tree_indices = tree_indices
        self.n_trees = n_trees
        self.oob_accuracy = oob_accuracy
        self.oob_counts = oob_counts
        self.forest_oob_accuracy = forest_oob_accuracy
        self.forest_oob_count = forest_oob_count

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        n_trees: int = 3,
        max_depth: int | None = None,
        reference: Any = None,
        window: Any = None,
        class_names: Any = None,
        max_cells: int = 250_000,
        axes: Any = None,
        ncols: int | None = None,
        **kwargs: Any,
    ) -> ForestGridDisplay:
        """Draw the first ``n_trees`` trees' partitions and the forest's regions.

        Parameters
        ----------
        model : fitted forest classifier (bagging or boosting)
        X : array-like of shape (n_samples, n_features)
            The training data when out-of-bag accuracies are wanted.
        y : array-like of shape (n_samples,), optional
            Training classes; out-of-bag accuracies need them.
        features : pair of str or int, default=(0, 1)
        n_trees : int, default=3
        max_depth : int, optional
            Depth cut of the tree panels.
        reference : array-like of shape (n_features,), optional
        window : ((x0, x1), (y0, y1)), optional
            One window for every panel; default the data's range plus 5%.
        class_names : sequence of str, optional
        max_cells : int, default=250_000
            Most exact cells of the forest panel; above, a raster is drawn.
        axes : array of matplotlib Axes, optional
            At least ``n_trees + 1`` axes.
        ncols : int, optional
            Panels per row (default all in one row).
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        ForestGridDisplay
        """
        forest = to_forest(model)
        require_classifier(model, forest, "ForestGridDisplay")
        if isinstance(n_trees, bool) or not 1 <= int(n_trees) <= forest.n_trees:
            raise InputError(
                f"`n_trees` must be in [1, {forest.n_trees}] for this model of "
                f"{forest.n_trees} trees; got {n_trees!r}."
            )
        resolve_features(forest, features)
        Xa = as_array(X, forest)
        yv = None if y is None else np.asarray(y)
        shared = {
            "features": features,
            "reference": reference,
            "window": window,
            "class_names": class_names,
        }
        indices = np.arange(int(n_trees))
        partitions = [
            PartitionDisplay._compute(
                forest, Xa, yv, tree_index=int(t), max_depth=max_depth, **shared
            )
            for t in indices
        ]
        regions = DecisionRegionDisplay._compute(
            forest, Xa, yv, exact="auto", max_cells=max_cells, **shared
        )
        oob: dict[str, Any] = {}
        masks = _oob_masks(model, Xa.shape[0]) if yv is not None else None
        if masks is not None and yv is not None:
            oob = _oob_figures(forest, Xa, yv, masks)
            oob["oob_accuracy"] = oob["oob_accuracy"][indices]
            oob["oob_counts"] = oob["oob_counts"][indices]
        display = cls(
            partitions=partitions,
            regions=regions,
            tree_indices=indices,
            n_trees=forest.n_trees,
            **oob,
        )
        return display.plot(axes=axes, ncols=ncols, **kwargs)

    def _titles(self) -> list[str]:
        titles = []
        for k, t in enumerate(self.tree_indices.tolist()):
            title = f"tree {t}"
            if self.oob_accuracy is not None and self.oob_counts is not None:
                count = int(self.oob_counts[k])
                title += (
                    f": OOB accuracy {self.oob_accuracy[k]:.3f} on {count} rows"
                    if count
                    else ": no out-of-bag rows"
                )
            titles.append(title)
        title = f"forest of {self.n_trees} trees"
        if self.forest_oob_accuracy is not None:
            title += (
                f": OOB accuracy {self.forest_oob_accuracy:.3f} "
                f"on {self.forest_oob_count} rows"
            )
        if not self.regions.exact and self.regions.n_cells is not None:
            title += f"\n(raster: {self.regions.n_cells:,} exact cells over the cap)"
        titles.append(title)
        return titles

    def plot(
        self, axes: Any = None, *, ncols: int | None = None, **kwargs: Any
    ) -> ForestGridDisplay:
        """Draw every panel.

        Parameters
        ----------
        axes : array of matplotlib Axes, optional
            At least ``n_trees + 1`` axes; a new figure when None.
        ncols : int, optional
            Panels per row of a new figure (default all in one row).
        **kwargs
            Passed to every panel's ``plot`` (for example ``markers``,
            ``boundary_kwargs``, ``scatter_kwargs``, ``alpha``).

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        n_panels = len(self.partitions) + 1
        if axes is None:
            ncols = n_panels if ncols is None else int(ncols)
            nrows = -(-n_panels // ncols)
            _fig, axes = plt.subplots(
                nrows,
                ncols,
                figsize=(3.6 * ncols, 3.4 * nrows),
                squeeze=False,
                layout="constrained",
            )
            for extra in axes.ravel()[n_panels:]:
                extra.set_visible(False)
        axes = np.asarray(axes, dtype=object).ravel()
        if axes.size < n_panels:
            raise InputError(
                f"`axes` must hold at least {n_panels} axes; got {axes.size}."
            )
        for ax, part in zip(axes, self.partitions):
            part.plot(ax=ax, **{"legend": False, "colorbar": False, **kwargs})
        self.regions.plot(ax=axes[n_panels - 1], **{"legend": True, **kwargs})
        self.titles_ = self._titles()
        for ax, title in zip(axes, self.titles_):
            ax.set_title(title, fontsize="medium")
        self.axes_ = axes[:n_panels]
        self.figure_ = axes[0].figure
        return self


def _oob_masks(estimator: Any, n_samples: int) -> NDArray[np.bool_] | None:
    """Out-of-bag mask of every tree, shape (n_trees, n_samples), or None.

    Rebuilds each tree's bootstrap sample as scikit-learn draws it; None when the
    model is not a bootstrap forest or X is not its training data.
    """
    if not getattr(estimator, "bootstrap", False) or not hasattr(
        estimator, "estimators_"
    ):
        return None
    fitted_rows = getattr(estimator, "_n_samples", None)
    if fitted_rows is not None and int(fitted_rows) != n_samples:
        return None  # other rows than the training data have no out-of-bag trees
    n_boot = getattr(estimator, "_n_samples_bootstrap", None)
    sample_weight = getattr(estimator, "_sample_weight", None)
    if sample_weight is not None and len(sample_weight) != n_samples:
        return None
    try:
        from sklearn.ensemble._forest import _generate_sample_indices
    except ImportError:  # private helper moved: no OOB figures rather than wrong ones
        return None
    if n_boot is None:
        return None
    masks = np.ones((len(estimator.estimators_), n_samples), dtype=bool)
    for t, tree in enumerate(estimator.estimators_):
        drawn = _generate_sample_indices(
            tree.random_state, n_samples, n_boot, sample_weight
        )
        masks[t, drawn] = False
    return masks


def _oob_figures(
    forest: Forest, X: NDArray[np.float64], y: NDArray[Any], masks: NDArray[np.bool_]
) -> dict[str, Any]:
    """Out-of-bag accuracy and row count of each tree and of the forest.

    The forest's figure is scikit-learn's ``oob_score_`` over the rows with at
    least one out-of-bag tree; the others are left out, with a warning.
    """
    values = forest._tree_values(forest._apply(X.astype(forest.input_dtype)))
    classes = np.asarray(forest.classes_)
    tree_pred = classes.take(np.argmax(values, axis=2))  # (n_samples, n_trees)
    hits = (tree_pred == y[:, None]) & masks.T
    counts = masks.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_tree = np.where(counts > 0, hits.sum(axis=0) / counts, np.nan)
    n_oob = masks.sum(axis=0)  # out-of-bag trees of every row
    scored = n_oob > 0
    if not scored.all():
        warn(
            f"{int((~scored).sum())} of {scored.size} rows have no out-of-bag tree "
            "(every tree drew them into its bootstrap sample); the forest's "
            f"out-of-bag accuracy is over the other {int(scored.sum())} rows. "
            "scikit-learn's oob_score_ counts them as class "
            f"{str(classes[0])!r}; more trees leave fewer such rows.",
            OutOfBagWarning,
        )
    oob_sum = np.einsum("tn,ntk->nk", masks.astype(float), values[:, :, :])
    forest_pred = classes.take(np.argmax(oob_sum, axis=1))
    accuracy = (
        float(np.mean(forest_pred[scored] == y[scored])) if scored.any() else np.nan
    )
    return {
        "oob_accuracy": per_tree,
        "oob_counts": counts,
        "forest_oob_accuracy": accuracy,
        "forest_oob_count": int(scored.sum()),
    }
