"""PartitionDisplay and ForestGridDisplay: the rectangles trees cut."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from ._common import class_colors, require_matplotlib, resolve_axes
from ._display_regions import DecisionRegionDisplay, as_array, require_classifier
from ._partition import (
    missing_rows,
    partition_rectangles,
    plot_window,
    report_missing,
    resolve_features,
    resolve_reference,
    resolve_tree_index,
    slice_nodes,
)

__all__ = ["ForestGridDisplay", "PartitionDisplay"]


class PartitionDisplay:
    """The exact rectangles one tree cuts in two chosen features.

    Regions come from the tree's structure, not from a grid: with the other
    features held at a reference row, the leaves the reference can reach tile the
    plane of the two features; each is drawn clipped to the window around the
    data.  With ``max_depth`` the nodes at that depth (and the leaves above it)
    are the regions.  Classification regions are coloured by their majority
    class, regression regions by their mean (boosting trees: their raw value).

    Attributes
    ----------
    rectangles_ : ndarray of shape (n_regions, 4)
        ``x_min, x_max, y_min, y_max`` of every region.
    labels_ : ndarray of shape (n_regions,)
        The class (classification) or value (regression, boosting) of every region.
    nodes_ : ndarray of shape (n_regions,)
        Node id of every region within the tree.
    values_ : ndarray of shape (n_regions, n_values)
        ``Tree.value`` of every region's node.
    split_segments_ : ndarray of shape (n_splits, 2, 2)
        The split lines drawn, ``[[x0, y0], [x1, y1]]``.
    features_, feature_names_, reference_, window_, tree_index_, max_depth_
        What was drawn.
    classes_ : ndarray or None
        Classes for class colouring, None when regions hold values.
    collection_ : matplotlib PolyCollection
        The rectangles, one face colour each, in the order of ``rectangles_``.
    skipped_rows_ : ndarray of int or None
        Rows of X not drawn for a missing value (NaN) of one of the two features,
        after :meth:`plot` (counted by a :class:`~treelens.MissingValuesWarning`).
    ax_, figure_ : after :meth:`plot`.

    See Also
    --------
    DecisionRegionDisplay : regions of any classifier, or of a whole ensemble.
    ForestGridDisplay : partitions of several trees beside their forest.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    >>> disp = PartitionDisplay.from_estimator(tree, X, features=(2, 3), max_depth=2)
    >>> len(disp.rectangles_) <= 4
    True
    """

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
        tree_index: int = 0,
        max_depth: int | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[Any] | None = None,
    ) -> None:
        self.rectangles_ = rectangles
        self.labels_ = labels
        self.nodes_ = nodes
        self.values_ = values
        self.split_segments_ = split_segments
        self.features_ = features
        self.feature_names_ = feature_names
        self.reference_ = reference
        self.window_ = window
        self.classes_ = classes
        self.tree_index_ = tree_index
        self.max_depth_ = max_depth
        self.X_, self.y_ = X, y

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        *,
        features: tuple[Any, Any] = (0, 1),
        y: Any = None,
        tree_index: int | None = None,
        max_depth: int | None = None,
        reference: Any = None,
        margin: float = 0.05,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> PartitionDisplay:
        """Compute the partition of one tree and draw it.

        Parameters
        ----------
        estimator : fitted tree model or Forest
        X : array-like of shape (n_samples, n_features)
            Data setting the window, the default reference (median) and the
            points drawn.
        features : pair of str or int, default=(0, 1)
        y : array-like of shape (n_samples,), optional
            Targets colouring the points.
        tree_index : int, optional
            Which tree of an ensemble; required unless the model is one tree.
        max_depth : int, optional
            Cut the tree at this depth.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X.
        margin : float, default=0.05
        ax : matplotlib Axes, optional
        **plot_kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        PartitionDisplay
        """
        forest = to_forest(estimator)
        t = resolve_tree_index(forest, tree_index)
        f0, f1 = resolve_features(forest, features)
        if max_depth is not None and (
            isinstance(max_depth, bool) or int(max_depth) < 0
        ):
            from .._exceptions import InputError

            raise InputError(
                f"`max_depth` must be a non-negative integer or None; got {max_depth!r}."
            )
        Xa = as_array(X, forest)
        ref = resolve_reference(Xa, reference, forest.n_features)
        window = plot_window(Xa, (f0, f1), margin=margin)
        part = partition_rectangles(
            forest, (f0, f1), ref, window, tree_index=t, max_depth=max_depth
        )
        classes = forest.classes_ if _colours_by_class(forest) else None
        labels = (
            classes.take(np.argmax(part.values, axis=1))
            if classes is not None
            else part.values[:, 0]
        )
        display = cls(
            rectangles=part.rectangles,
            labels=labels,
            nodes=part.nodes,
            values=part.values,
            split_segments=_split_segments(forest, t, (f0, f1), ref, window, max_depth),
            features=(f0, f1),
            feature_names=(forest.feature_names[f0], forest.feature_names[f1]),
            reference=ref,
            window=window,
            classes=classes,
            tree_index=t,
            max_depth=max_depth,
            X=Xa,
            y=None if y is None else np.asarray(y),
        )
        return display.plot(ax=ax, **plot_kwargs)

    def region_colors(self) -> NDArray[np.float64]:
        """RGBA colour of every region, shape (n_regions, 4)."""
        if self.classes_ is not None:
            colors = class_colors(len(self.classes_))
            return colors[np.searchsorted(self.classes_, self.labels_)]
        return self._value_cmap()[0](self._value_cmap()[1](self.labels_))

    def _value_cmap(self) -> tuple[Any, Any]:
        plt = require_matplotlib()
        from matplotlib.colors import Normalize

        low = float(np.min(self.labels_)) if len(self.labels_) else 0.0
        high = float(np.max(self.labels_)) if len(self.labels_) else 1.0
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
    ) -> PartitionDisplay:
        """Draw the rectangles, split lines and points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        alpha : float, default=0.5
        show_splits : bool, default=True
        show_points : bool, default=True
        legend : bool, default=True
            Class legend (classification).
        colorbar : bool, default=True
            Value colour bar (regression).

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.cm import ScalarMappable
        from matplotlib.collections import LineCollection, PolyCollection
        from matplotlib.patches import Patch

        ax = resolve_axes(ax)
        r = self.rectangles_
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
        self.collection_ = PolyCollection(corners, facecolors=faces, edgecolors="none")
        ax.add_collection(self.collection_, autolim=False)
        if show_splits and len(self.split_segments_):
            self.splits_ = LineCollection(
                self.split_segments_, colors="k", linewidths=0.8
            )
            ax.add_collection(self.splits_, autolim=False)
        self.skipped_rows_ = (
            None if self.X_ is None else missing_rows(self.X_, self.features_)
        )
        if show_points and self.X_ is not None:
            report_missing(self.skipped_rows_, self.X_.shape[0], self.feature_names_)
            pts = self.X_[:, list(self.features_)]
            if self.y_ is not None and self.classes_ is not None:
                colors = class_colors(len(self.classes_))[
                    np.searchsorted(self.classes_, self.y_)
                ]
                ax.scatter(
                    pts[:, 0], pts[:, 1], c=colors, edgecolors="k", s=16, linewidths=0.4
                )
            elif self.y_ is not None:
                cmap, norm = self._value_cmap()
                ax.scatter(
                    pts[:, 0],
                    pts[:, 1],
                    c=cmap(norm(self.y_)),
                    edgecolors="k",
                    s=16,
                    linewidths=0.4,
                )
            else:
                ax.scatter(pts[:, 0], pts[:, 1], c="k", s=6)
        if self.classes_ is not None and legend:
            colors = class_colors(len(self.classes_))
            ax.legend(
                handles=[
                    Patch(color=colors[k], label=str(c))
                    for k, c in enumerate(self.classes_)
                ],
                fontsize="small",
                loc="best",
            )
        elif self.classes_ is None and colorbar:
            cmap, norm = self._value_cmap()
            ax.figure.colorbar(
                ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="value"
            )
        ax.set_xlim(*self.window_[0])
        ax.set_ylim(*self.window_[1])
        ax.set_xlabel(self.feature_names_[0])
        ax.set_ylabel(self.feature_names_[1])
        self.ax_, self.figure_ = ax, ax.figure
        return self


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
    nodes = slice_nodes(tree, features, reference, forest.input_dtype)
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


class ForestGridDisplay:
    """Small multiples: the partitions of the first trees beside the forest's regions.

    Each tree panel is titled with that tree's out-of-bag accuracy, and the forest
    panel with the forest's, when the forest was fitted with bootstrap and the
    training data are given.

    Attributes
    ----------
    partitions_ : list of PartitionDisplay
        One per tree drawn.
    regions_ : DecisionRegionDisplay
        The forest's exact regions.
    tree_indices_ : ndarray of shape (n_trees_drawn,)
    oob_accuracy_ : ndarray of shape (n_trees_drawn,) or None
        Out-of-bag accuracy of every tree drawn.
    forest_oob_accuracy_ : float or None
        The forest's out-of-bag accuracy (as scikit-learn's ``oob_score_``).
    titles_ : list of str
    axes_ : ndarray of matplotlib Axes
    figure_ : matplotlib Figure
    """

    def __init__(self) -> None:
        self.partitions_: list[PartitionDisplay] = []
        self.oob_accuracy_: NDArray[np.float64] | None = None
        self.forest_oob_accuracy_: float | None = None

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        n_trees: int = 3,
        max_depth: int | None = None,
        reference: Any = None,
        axes: Any = None,
        ncols: int | None = None,
    ) -> ForestGridDisplay:
        """Draw the first ``n_trees`` trees' partitions and the forest's regions.

        Parameters
        ----------
        estimator : fitted forest classifier (bagging or boosting)
        X : array-like of shape (n_samples, n_features)
            The training data when out-of-bag accuracies are wanted.
        y : array-like of shape (n_samples,), optional
            Training classes; out-of-bag accuracies need them.
        features : pair of str or int, default=(0, 1)
        n_trees : int, default=3
        max_depth : int, optional
            Depth cut of the tree panels.
        reference : array-like of shape (n_features,), optional
        axes : array of matplotlib Axes, optional
            At least ``n_trees + 1`` axes.
        ncols : int, optional
            Panels per row (default all in one row).

        Returns
        -------
        ForestGridDisplay
        """
        from .._exceptions import InputError

        plt = require_matplotlib()
        forest = to_forest(estimator)
        require_classifier(estimator, forest, "ForestGridDisplay")
        if isinstance(n_trees, bool) or not 1 <= int(n_trees) <= forest.n_trees:
            raise InputError(
                f"`n_trees` must be in [1, {forest.n_trees}] for this model of "
                f"{forest.n_trees} trees; got {n_trees!r}."
            )
        resolve_features(forest, features)
        Xa = as_array(X, forest)
        yv = None if y is None else np.asarray(y)
        n_panels = int(n_trees) + 1
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
        display = cls()
        display.tree_indices_ = np.arange(int(n_trees))
        masks = _oob_masks(estimator, Xa.shape[0]) if yv is not None else None
        if masks is not None:
            display.oob_accuracy_, display.forest_oob_accuracy_ = _oob_accuracies(
                forest, Xa, yv, masks
            )
        display.titles_ = []
        for t in display.tree_indices_:
            part = PartitionDisplay.from_estimator(
                forest,
                Xa,
                features=features,
                y=yv,
                tree_index=int(t),
                max_depth=max_depth,
                reference=reference,
                ax=axes[t],
                legend=False,
                colorbar=False,
            )
            display.partitions_.append(part)
            title = f"tree {t}"
            if display.oob_accuracy_ is not None:
                title += f": OOB accuracy {display.oob_accuracy_[t]:.3f}"
            axes[t].set_title(title, fontsize="medium")
            display.titles_.append(title)
        display.regions_ = DecisionRegionDisplay.from_estimator(
            forest,
            Xa,
            features=features,
            y=yv,
            reference=reference,
            exact=True,
            ax=axes[n_panels - 1],
            legend=True,
        )
        title = f"forest of {forest.n_trees} trees"
        if display.forest_oob_accuracy_ is not None:
            title += f": OOB accuracy {display.forest_oob_accuracy_:.3f}"
        axes[n_panels - 1].set_title(title, fontsize="medium")
        display.titles_.append(title)
        display.axes_ = axes[:n_panels]
        display.figure_ = axes[0].figure
        return display


def _oob_masks(estimator: Any, n_samples: int) -> NDArray[np.bool_] | None:
    """Out-of-bag mask of every tree, shape (n_trees, n_samples), or None.

    Rebuilds each tree's bootstrap sample as scikit-learn draws it; None when the
    model is not a bootstrap forest or X is not its training data.
    """
    if not getattr(estimator, "bootstrap", False) or not hasattr(
        estimator, "estimators_"
    ):
        return None
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


def _oob_accuracies(
    forest: Forest, X: NDArray[np.float64], y: NDArray[Any], masks: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], float]:
    """Out-of-bag accuracy of each tree, and of the forest as scikit-learn scores it."""
    values = forest._tree_values(forest._apply(X.astype(forest.input_dtype)))
    classes = forest.classes_
    tree_pred = classes.take(np.argmax(values, axis=2))  # (n_samples, n_trees)
    hits = (tree_pred == y[:, None]) & masks.T
    per_tree = hits.sum(axis=0) / np.maximum(masks.sum(axis=1), 1)
    oob_sum = np.einsum("tn,ntk->nk", masks.astype(float), values)
    forest_pred = classes.take(
        np.argmax(oob_sum / np.maximum(masks.sum(axis=0), 1)[:, None], axis=1)
    )
    return per_tree, float(np.mean(forest_pred == y))
