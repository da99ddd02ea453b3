"""DecisionRegionDisplay: the regions of any fitted classifier in two features."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._features import reads_labels, series_as_row
from .._core._forest import Forest
from .._core._validation import column_names, in_feature_order
from .._exceptions import InputError, UnsupportedModelError
from ._common import (
    RenamedAttributes,
    add_lines,
    class_colors,
    class_labels,
    model_feature_names,
    require_matplotlib,
    resolve_axes,
    scatter_classes,
    set_window,
)
from ._partition import (
    cell_points,
    points_to_draw,
    raster_leaves,
    resolve_features,
    resolve_reference,
    resolve_window,
    split_thresholds,
)

__all__ = ["DecisionRegionDisplay"]

ResponseMethod = Literal["predict", "predict_proba", "decision_function"]


def forest_or_none(estimator: Any) -> Forest | None:
    """The estimator as a Forest when treelens reads it, else None."""
    try:
        return to_forest(estimator)
    except UnsupportedModelError:
        return None


def is_classifier_model(estimator: Any, forest: Forest | None) -> bool:
    """Whether the model predicts classes (its Forest's task when read, else
    scikit-learn's judgement or fitted ``classes_``)."""
    if forest is not None:
        return forest.is_classifier
    try:
        from sklearn.base import is_classifier
    except ImportError:  # not a scikit-learn model: judge by its fitted classes
        return hasattr(estimator, "classes_") and hasattr(estimator, "predict")
    return bool(is_classifier(estimator)) or (
        hasattr(estimator, "classes_") and hasattr(estimator, "predict")
    )


def require_classifier(estimator: Any, forest: Forest | None, picture: str) -> None:
    """Refuse regressors for pictures of class regions."""
    if not is_classifier_model(estimator, forest):
        raise UnsupportedModelError(
            f"{picture} draws class regions and needs a classifier; got the "
            f"regressor {type(estimator).__name__}. Use PredictionSurfaceDisplay "
            "for a regressor's predicted value (or an IsolationForest's score) "
            "over two features, PartitionDisplay or RegressionStepsDisplay for "
            "regression trees."
        )


def require_regressor(estimator: Any, forest: Forest | None, picture: str) -> None:
    """Refuse classifiers for pictures of a predicted value."""
    if is_classifier_model(estimator, forest):
        raise UnsupportedModelError(
            f"{picture} draws a predicted value and needs a regressor or an "
            f"IsolationForest; got the classifier {type(estimator).__name__}. Use "
            "DecisionRegionDisplay for a classifier's regions and scores."
        )


def check_max_cells(max_cells: Any) -> None:
    """Refuse a ``max_cells`` that is not a positive integer."""
    if (
        isinstance(max_cells, bool)
        or not isinstance(max_cells, (int, np.integer))
        or max_cells < 1
    ):
        raise InputError(f"`max_cells` must be a positive integer; got {max_cells!r}.")


def as_array(X: Any, forest: Forest | None) -> NDArray[np.float64]:
    """X as a 2-D float64 array (columns matched by name for tree models)."""
    if forest is not None and forest.has_labels and reads_labels(forest, X):
        return np.atleast_2d(forest.encode(X))  # labels to codes (Forest.encode)
    if forest is not None:
        forest.validate_X(X)  # checks shape, names and values; returns the float32 cast
        if column_names(X) is not None and forest.has_feature_names:
            X = in_feature_order(forest, X)
        # Keep the user's float64 values: they are drawn and reported, and cast
        # again wherever a tree routes them.
        array = np.asarray(
            X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=np.float64
        )
        return array.reshape(1, -1) if array.ndim == 1 else array
    array = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=np.float64)
    if array.ndim != 2:
        raise InputError(
            f"X must be 2-D of shape (n_samples, n_features); got {array.ndim} dimensions."
        )
    return array


def reference_array(reference: Any, forest: Forest | None) -> Any:
    """A reference row given in the user's columns (a Series, or a DataFrame of
    one row) as the forest's values, its labels as codes; anything else as
    given (checked by :func:`resolve_reference`)."""
    if forest is None or reference is None or not hasattr(reference, "to_numpy"):
        return reference
    rows = as_array(series_as_row(reference), forest)
    if rows.shape[0] != 1:
        raise InputError(
            f"`reference` must be one row; got a table of {rows.shape[0]} rows."
        )
    return rows[0]


def resolve_view(
    model: Any,
    forest: Forest | None,
    X: Any,
    features: tuple[Any, Any],
    reference: Any,
    window: Any,
    margin: float,
) -> tuple[
    NDArray[np.float64],
    Any,
    tuple[int, int],
    NDArray[np.float64],
    NDArray[np.float64],
]:
    """What a picture over two features of any model sees: ``X`` as an array,
    the feature names, the two features' positions, the reference row of the
    other features (default the median of ``X``) and the window."""
    Xa = as_array(X, forest)
    n_features = forest.n_features if forest is not None else Xa.shape[1]
    names = (
        forest.feature_names
        if forest is not None
        else model_feature_names(model, n_features)
    )
    f0, f1 = resolve_features(names, features)
    k = forest.n_categories if forest is not None else None
    ref = resolve_reference(
        Xa, reference_array(reference, forest), n_features, k, tuple(names)
    )
    box = resolve_window(Xa, (f0, f1), window, margin=margin)
    return Xa, names, (f0, f1), ref, box


def exact_edges(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cell edges of the overlay of every tree's split lines in the window."""
    tx, ty = split_thresholds(forest, features, reference, window)
    return (
        np.concatenate([[window[0, 0]], tx, [window[0, 1]]]),
        np.concatenate([[window[1, 0]], ty, [window[1, 1]]]),
    )


def exact_regions(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
    max_cells: int = 250_000,
    *,
    edges: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """Exact predictions of a tree model on the cells of the overlay of its
    split lines: classes of a classifier, values of a regressor (an
    IsolationForest's ``score_samples``).

    Raises :class:`~treelens.InputError` when the overlay has more than
    ``max_cells`` cells: each is routed through every tree, and a large forest on
    two continuous features can cut the window into millions.

    Parameters
    ----------
    edges : (x_edges, y_edges), optional
        The overlay's cell edges when already computed (:func:`exact_edges`).

    Returns
    -------
    x_edges : ndarray of shape (n_x + 1,)
    y_edges : ndarray of shape (n_y + 1,)
    labels : ndarray of shape (n_y, n_x)
        The model's prediction on every cell (``Forest.predict``).
    """
    check_max_cells(max_cells)
    x_edges, y_edges = (
        exact_edges(forest, features, reference, window) if edges is None else edges
    )
    n_x, n_y = x_edges.size - 1, y_edges.size - 1
    if n_x * n_y > max_cells:
        raise InputError(
            f"`exact=True` would cut the window into {n_x} x {n_y} = "
            f"{n_x * n_y:,} cells, each predicted by all {forest.n_trees} trees; "
            f"expected at most max_cells={max_cells:,}. Raise `max_cells` or draw "
            "the grid (exact=False, or exact='auto' to fall back)."
        )
    # One point inside every cell of the overlay of all split lines; every tree is
    # constant on a cell, so its prediction there is the cell's.
    px = cell_points(x_edges, forest.input_dtype)
    py = cell_points(y_edges, forest.input_dtype)
    leaves = raster_leaves(forest, features, reference, px, py)
    labels, _ = outputs_from_leaves(forest, leaves, "predict")
    return x_edges, y_edges, labels.reshape(py.size, px.size)


def boundary_segments(
    x_edges: NDArray[np.float64], y_edges: NDArray[np.float64], codes: NDArray[Any]
) -> NDArray[np.float64]:
    """Segments between neighbouring cells of different codes.

    Returns
    -------
    segments : ndarray of shape (n_segments, 2, 2)
        ``[[x0, y0], [x1, y1]]`` per segment.
    """
    j, i = np.nonzero(codes[:, 1:] != codes[:, :-1])  # vertical boundaries
    vertical = np.stack(
        [
            np.column_stack([x_edges[i + 1], y_edges[j]]),
            np.column_stack([x_edges[i + 1], y_edges[j + 1]]),
        ],
        axis=1,
    )
    j, i = np.nonzero(codes[1:, :] != codes[:-1, :])  # horizontal boundaries
    horizontal = np.stack(
        [
            np.column_stack([x_edges[i], y_edges[j + 1]]),
            np.column_stack([x_edges[i + 1], y_edges[j + 1]]),
        ],
        axis=1,
    )
    return np.concatenate([vertical, horizontal]).reshape(-1, 2, 2)


class DecisionRegionDisplay(RenamedAttributes):
    """Regions and boundaries of a fitted classifier in two chosen features.

    The other features are held at a reference row.  For a grid, the model is
    called once on all grid rows; with ``exact=True`` a tree model's regions are
    computed from the overlay of its split lines instead, one prediction per cell.

    Parameters
    ----------
    features : (int, int)
    feature_names : (str, str)
    reference : ndarray of shape (n_features,)
    window : ndarray of shape (2, 2)
        ``[[x0, x1], [y0, y1]]``.
    classes : ndarray of shape (n_classes,)
    predictions : ndarray of shape (n_y, n_x)
        Predicted class at every grid point, or on every cell (exact mode).
    response : ndarray of shape (n_y, n_x) or (n_y, n_x, n_classes)
        The response drawn (``predictions`` for ``predict``).
    response_method : str
    class_names : list of str, optional
        Legend text of every class (default the classes).
    xx, yy : ndarray of shape (grid_resolution, grid_resolution) or None
        Grid coordinates (grid mode, and for ``margins``).
    grid : ndarray of shape (grid_resolution ** 2, n_features) or None
        The rows predicted (grid mode), row-major over ``yy`` then ``xx``.
    x_edges, y_edges : ndarray or None
        Cell edges (exact mode).
    decision : ndarray of shape (n_y, n_x) or None
        The decision function on the grid ``xx, yy`` (``margins=True``).
    n_cells : int or None
        Cells of the overlay of the split lines, when counted (exact modes).
    support_vectors : ndarray of shape (n_support, 2) or None
        The support vectors of an SVC in the two features.
    X, y : ndarray or None
        The points drawn.

    Attributes
    ----------
    surface_ : matplotlib artist of the regions
    boundary_segments_ : ndarray of shape (n_segments, 2, 2) or None
        Class boundaries drawn: along cell edges (exact mode) or pixel edges
        (grid).
    boundaries_ : matplotlib LineCollection or None
    margins_ : matplotlib ContourSet or None
        The decision function's levels -1, 0 and +1 (``margins=True``).
    points_ : list of matplotlib PathCollection
        One scatter per class.
    skipped_rows_ : ndarray of int or None
        Rows of X not drawn because they miss a value (NaN) of one of the two
        features; a :class:`~treelens.MissingValuesWarning` counts them.  The
        window and the median ignore missing values.
    ax_, figure_

    See Also
    --------
    PartitionDisplay : the rectangles of one tree.
    DataDisplay : the points alone.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> disp = DecisionRegionDisplay.from_estimator(model, X, y, features=(2, 3),
    ...                                             grid_resolution=20)
    >>> disp.predictions.shape
    (20, 20)
    """

    _renamed: ClassVar[dict[str, str]] = {
        name + "_": name
        for name in (
            "features",
            "feature_names",
            "reference",
            "window",
            "classes",
            "predictions",
            "response",
            "xx",
            "yy",
            "grid",
            "x_edges",
            "y_edges",
            "support_vectors",
            "X",
            "y",
        )
    }

    def __init__(
        self,
        *,
        features: tuple[int, int],
        feature_names: tuple[str, str],
        reference: NDArray[np.float64],
        window: NDArray[np.float64],
        classes: NDArray[Any],
        predictions: NDArray[Any],
        response: NDArray[Any],
        response_method: str,
        class_names: list[str] | None = None,
        xx: NDArray[np.float64] | None = None,
        yy: NDArray[np.float64] | None = None,
        grid: NDArray[np.float64] | None = None,
        x_edges: NDArray[np.float64] | None = None,
        y_edges: NDArray[np.float64] | None = None,
        decision: NDArray[np.float64] | None = None,
        n_cells: int | None = None,
        support_vectors: NDArray[np.float64] | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[Any] | None = None,
        category_labels: tuple[Any, ...] | None = None,
    ) -> None:
        self.category_labels = category_labels
        self.features = features
        self.feature_names = feature_names
        self.reference = reference
        self.window = window
        self.classes = classes
        self.class_names = class_names
        self.predictions = predictions
        self.response = response
        self.response_method = response_method
        self.xx, self.yy, self.grid = xx, yy, grid
        self.x_edges, self.y_edges = x_edges, y_edges
        self.decision = decision
        self.n_cells = n_cells
        self.support_vectors = support_vectors
        self.X, self.y = X, y
        self.boundary_segments_: NDArray[np.float64] | None = None

    @property
    def exact(self) -> bool:
        """Whether the regions are the exact cells of the split lines."""
        return self.x_edges is not None

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        reference: Any = None,
        response_method: ResponseMethod = "predict",
        grid_resolution: int = 100,
        exact: bool | Literal["auto"] = False,
        max_cells: int = 250_000,
        window: Any = None,
        margin: float = 0.05,
        class_names: Any = None,
        margins: bool = False,
        ax: Any = None,
        **kwargs: Any,
    ) -> DecisionRegionDisplay:
        """Compute the regions of ``model`` and draw them.

        Parameters
        ----------
        model : fitted classifier
            Any classifier with ``predict`` (and ``predict_proba`` or
            ``decision_function`` when asked for).
        X : array-like of shape (n_samples, n_features)
            Data setting the window, the default reference (its median) and the
            points drawn.
        y : array-like of shape (n_samples,), optional
            Classes of the points drawn.
        features : pair of str or int, default=(0, 1)
            Features on the x and y axes.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X.
        response_method : {"predict", "predict_proba", "decision_function"}
        grid_resolution : int, default=100
            Grid points per axis.
        exact : bool or "auto", default=False
            For tree models: exact regions from the split lines, not a grid.
            ``"auto"``: exact up to ``max_cells`` cells, the grid above.
        max_cells : int, default=250_000
            ``exact=True``: most cells the overlay of the split lines may have;
            more raises an error rather than exhausting memory.
        window : ((x0, x1), (y0, y1)), optional
            The window drawn; default the data's range widened by ``margin``.
        margin : float, default=0.05
            Fraction of each feature's range added around the data.
        class_names : sequence of str, optional
            Legend text of the classes, in the order of ``model.classes_``.
        margins : bool, default=False
            Draw the decision function's levels -1, 0 and +1 (an SVM's margins
            and boundary); needs a binary classifier with ``decision_function``.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        DecisionRegionDisplay
        """
        display = cls._compute(
            model,
            X,
            y,
            features=features,
            reference=reference,
            response_method=response_method,
            grid_resolution=grid_resolution,
            exact=exact,
            max_cells=max_cells,
            window=window,
            margin=margin,
            class_names=class_names,
            margins=margins,
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
        reference: Any = None,
        response_method: ResponseMethod = "predict",
        grid_resolution: int = 100,
        exact: bool | Literal["auto"] = False,
        max_cells: int = 250_000,
        window: Any = None,
        margin: float = 0.05,
        class_names: Any = None,
        margins: bool = False,
    ) -> DecisionRegionDisplay:
        """The regions as a Display, not drawn yet (see :meth:`from_estimator`)."""
        forest = forest_or_none(model)
        require_classifier(model, forest, "DecisionRegionDisplay")
        if response_method not in ("predict", "predict_proba", "decision_function"):
            raise InputError(
                "`response_method` must be 'predict', 'predict_proba' or "
                f"'decision_function'; got {response_method!r}."
            )
        if exact not in (True, False, "auto"):
            raise InputError(f"`exact` must be True, False or 'auto'; got {exact!r}.")
        Xa, names, (f0, f1), ref, box = resolve_view(
            model, forest, X, features, reference, window, margin
        )
        classes = np.asarray(model.classes_)
        common: dict[str, Any] = {
            "features": (f0, f1),
            "feature_names": (names[f0], names[f1]),
            "reference": ref,
            "window": box,
            "classes": classes,
            "class_names": class_labels(classes, class_names),
            "response_method": response_method,
            "support_vectors": _support_vectors(model, (f0, f1)),
            "X": Xa,
            "y": None if y is None else np.asarray(y),
        }
        if grid_resolution < 2:
            raise InputError(
                f"`grid_resolution` must be at least 2; got {grid_resolution}."
            )
        if forest is not None and forest.n_categories[[f0, f1]].any():
            return cls(**_categorical_cells(forest, common, grid_resolution), **common)
        xs = np.linspace(box[0, 0], box[0, 1], grid_resolution)
        ys = np.linspace(box[1, 0], box[1, 1], grid_resolution)
        xx, yy = np.meshgrid(xs, ys)
        grid = np.tile(ref, (xx.size, 1))
        grid[:, f0], grid[:, f1] = xx.ravel(), yy.ravel()
        if margins:
            common["decision"] = _decision_grid(model, forest, grid, (f0, f1), xs, ys)
            common["decision"] = common["decision"].reshape(xx.shape)
            common["xx"], common["yy"] = xx, yy
        if exact:
            cells = _exact_cells(
                model, forest, response_method, exact, common, max_cells
            )
            if cells is not None:
                return cls(**cells, **common)
        predictions, response = predict_grid(
            model, forest, grid, response_method, (f0, f1), xs, ys
        )
        common.update(xx=xx, yy=yy)
        return cls(
            predictions=predictions.reshape(xx.shape),
            response=response.reshape(xx.shape + response.shape[1:]),
            grid=grid,
            **common,
        )

    def _score_surface(self) -> bool:
        """Whether the grid is drawn as one continuous score (binary response)."""
        if self.x_edges is not None or self.response_method == "predict":
            return False
        response = np.asarray(self.response)
        return response.ndim == 2 or response.shape[2] == 2

    def class_colors(self) -> NDArray[np.float64]:
        """RGBA colour of every class, shape (n_classes, 4): the ends of the
        score's colour map when the picture is a binary score, else tab10."""
        if self._score_surface():
            plt = require_matplotlib()
            cmap = plt.get_cmap(_SCORE_CMAP)
            return np.asarray(cmap([0.1, 0.9]), dtype=np.float64)
        return class_colors(len(self.classes))

    def plot(
        self,
        ax: Any = None,
        *,
        alpha: float = 0.45,
        show_points: bool = True,
        show_boundaries: bool = True,
        show_regions: bool = True,
        legend: bool = True,
        colorbar: bool = True,
        markers: Any = None,
        boundary_kwargs: dict[str, Any] | None = None,
        margin_kwargs: dict[str, Any] | None = None,
        scatter_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> DecisionRegionDisplay:
        """Draw the regions.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        alpha : float, default=0.45
            Opacity of the regions.
        show_points : bool, default=True
            Scatter the points of X (coloured by y when given), and an SVM's
            support vectors.
        show_boundaries : bool, default=True
        show_regions : bool, default=True
            False draws only boundaries and points, so several models'
            boundaries can share one axes.
        legend : bool, default=True
        colorbar : bool, default=True
            The score's colour bar (``predict_proba``/``decision_function``).
        markers : str or sequence of str, optional
            Marker of every class's points; default one shape per class.
        boundary_kwargs : dict, optional
            Styling of the class boundaries, passed to matplotlib's
            LineCollection (``colors``, ``linestyles``, ``linewidths``;
            ``label`` adds them to the legend).
        margin_kwargs : dict, optional
            Styling of the decision-function levels (``colors``, ``linewidths``).
        scatter_kwargs : dict, optional
            Passed to :meth:`matplotlib.axes.Axes.scatter` (``s``, ``edgecolors``).
        **kwargs
            Passed to the regions' artist (``pcolormesh``, ``imshow`` or
            ``contourf``), e.g. ``cmap`` or ``zorder``.

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.colors import ListedColormap

        ax = resolve_axes(ax)
        colors = self.class_colors()
        codes = np.searchsorted(self.classes, self.predictions)
        self.surface_ = None
        if self.x_edges is not None:
            if show_regions:
                style = {
                    "cmap": ListedColormap(colors[:, :3]),
                    "vmin": -0.5,
                    "vmax": len(self.classes) - 0.5,
                    "alpha": alpha,
                    **kwargs,
                }
                self.surface_ = ax.pcolormesh(
                    self.x_edges, self.y_edges, codes, **style
                )
            x_edges, y_edges = self._cell_edges(exact=True)
        else:
            if show_regions:
                self.surface_ = self._draw_grid(
                    ax, colors, codes, alpha, colorbar, kwargs
                )
            x_edges, y_edges = self._cell_edges()
        self.boundary_segments_ = boundary_segments(x_edges, y_edges, codes)
        self.boundaries_ = None
        if show_boundaries and len(self.classes) > 1:
            self.boundaries_ = add_lines(ax, self.boundary_segments_, boundary_kwargs)
        self.margins_ = self._draw_margins(ax, margin_kwargs or {})
        names = class_labels(self.classes, self.class_names)
        self.points_ = []
        self.skipped_rows_, pts = points_to_draw(
            self.X, self.features, self.feature_names, show=show_points
        )
        if pts is not None:
            if self.y is not None:
                self.points_ = scatter_classes(
                    ax,
                    pts,
                    self.y,
                    self.classes,
                    names,
                    colors,
                    markers=markers,
                    **(scatter_kwargs or {}),
                )
            else:
                self.points_ = [
                    ax.scatter(
                        pts[:, 0],
                        pts[:, 1],
                        **{"c": "k", "s": 6, **(scatter_kwargs or {})},
                    )
                ]
        self.support_artist_ = None
        if self.support_vectors is not None and show_points:
            sv = self.support_vectors
            self.support_artist_ = ax.scatter(
                sv[:, 0],
                sv[:, 1],
                s=90,
                facecolors="none",
                edgecolors="k",
                linewidths=1.2,
                label="support vectors",
            )
        if legend:
            ax.legend(
                handles=self._legend_handles(colors, names, boundary_kwargs),
                fontsize="small",
                loc="best",
            )
        set_window(ax, self.window, self.feature_names)
        for axis, labels in zip((ax.xaxis, ax.yaxis), self.category_labels or ()):
            if labels is not None:  # a categorical axis: one band per category
                axis.set_ticks(np.arange(len(labels)), [str(c) for c in labels])
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _cell_edges(
        self, *, exact: bool = False
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Edges of the exact cells (``exact``, or when there is no grid), else
        of the grid's pixels."""
        if exact or self.xx is None or self.yy is None:
            if self.x_edges is None or self.y_edges is None:
                raise InputError(
                    "A DecisionRegionDisplay needs a grid (xx, yy) or exact cell "
                    "edges (x_edges, y_edges); got neither."
                )
            return self.x_edges, self.y_edges
        return pixel_edges(self.xx[0]), pixel_edges(self.yy[:, 0])

    def _legend_handles(
        self,
        colors: NDArray[np.float64],
        names: list[str],
        boundary_kwargs: dict[str, Any] | None,
    ) -> list[Any]:
        """Classes (their points, else patches), then labelled boundaries,
        support vectors and decision-function levels."""
        from matplotlib.patches import Patch

        handles: list[Any] = [
            Patch(color=colors[k], label=names[k]) for k in range(len(names))
        ]
        if self.points_ and self.y is not None:
            handles = list(self.points_)
        if self.boundaries_ is not None and "label" in (boundary_kwargs or {}):
            handles.append(self.boundaries_)
        if self.support_artist_ is not None:
            handles.append(self.support_artist_)
        if self.margins_ is not None:
            handles.extend(self._margin_handles())
        return handles

    def _draw_margins(self, ax: Any, style: dict[str, Any]) -> Any:
        if self.decision is None:
            return None
        style = {
            "levels": [-1.0, 0.0, 1.0],
            "colors": "k",
            "linestyles": ["--", "-", "--"],
            "linewidths": [1.0, 1.6, 1.0],
            **style,
        }
        return ax.contour(self.xx, self.yy, self.decision, **style)

    def _margin_handles(self) -> list[Any]:
        from matplotlib.lines import Line2D

        color = self.margins_.get_edgecolor()[0] if self.margins_ is not None else "k"
        return [
            Line2D([], [], color=color, linestyle="-", label="decision function = 0"),
            Line2D(
                [], [], color=color, linestyle="--", label="decision function = \u00b11"
            ),
        ]

    def _draw_grid(
        self,
        ax: Any,
        colors: NDArray[np.float64],
        codes: NDArray[np.intp],
        alpha: float,
        colorbar: bool,
        style: dict[str, Any],
    ) -> Any:
        if self._score_surface():
            response = np.asarray(self.response, dtype=float)
            score = response if response.ndim == 2 else response[..., 1]
            centre = 0.0 if self.response_method == "decision_function" else 0.5
            surface = ax.contourf(
                self.xx,
                self.yy,
                score,
                **{
                    "levels": 12,
                    "cmap": _SCORE_CMAP,
                    "norm": _centred_norm(score, centre),
                    "alpha": alpha,
                    **style,
                },
            )
            if colorbar:
                self.colorbar_ = ax.figure.colorbar(
                    surface,
                    ax=ax,
                    label=f"{self.response_method} "
                    f"({class_labels(self.classes, self.class_names)[-1]})",
                )
            return surface
        rgba = colors[codes].copy()
        if self.response_method != "predict":
            # Multiclass scores: the winning class's colour, fainter where it wins narrowly.
            response = np.asarray(self.response, dtype=float)
            top = np.sort(response, axis=-1)
            strength = (top[..., -1] - top[..., -2]) / max(np.ptp(response), 1e-12)
            rgba[..., 3] = alpha * (0.35 + 0.65 * np.clip(strength, 0, 1))
        else:
            rgba[..., 3] = alpha
        return ax.imshow(
            rgba,
            **{
                "origin": "lower",
                "extent": _extent(self.xx, self.yy),
                "aspect": "auto",
                "interpolation": "nearest",
                **style,
            },
        )


#: Colour map of binary scores; its ends are the two classes' colours.
_SCORE_CMAP = "RdBu_r"


def _centred_norm(score: NDArray[np.float64], centre: float) -> Any:
    """A colour scale whose middle colour sits at the boundary value ``centre``."""
    from matplotlib.colors import Normalize, TwoSlopeNorm

    low, high = float(np.min(score)), float(np.max(score))
    if low < centre < high:
        return TwoSlopeNorm(vcenter=centre, vmin=low, vmax=high)
    return Normalize(low, high if high > low else low + 1.0)


def _exact_cells(
    model: Any,
    forest: Forest | None,
    response_method: str,
    exact: bool | str,
    common: dict[str, Any],
    max_cells: int,
) -> dict[str, Any] | None:
    """Exact cells as Display parameters; None when ``exact="auto"`` finds more
    than ``max_cells`` (the caller then draws the grid, with ``n_cells`` set)."""
    if forest is None:
        if exact == "auto":
            return None
        raise UnsupportedModelError(
            "`exact=True` needs a tree model treelens can read; got "
            f"{type(model).__name__}. Use the grid (exact=False)."
        )
    if response_method != "predict":
        raise InputError(
            "`exact=True` draws predicted classes; expected "
            f"response_method='predict', got {response_method!r}."
        )
    features, ref, box = common["features"], common["reference"], common["window"]
    edges = exact_edges(forest, features, ref, box)
    n_cells = (edges[0].size - 1) * (edges[1].size - 1)
    common["n_cells"] = n_cells
    if exact == "auto" and n_cells > max_cells:
        return None
    x_edges, y_edges, labels = exact_regions(
        forest, features, ref, box, max_cells, edges=edges
    )
    return {
        "predictions": labels,
        "response": labels,
        "x_edges": x_edges,
        "y_edges": y_edges,
    }


def _decision_grid(
    model: Any,
    forest: Forest | None,
    grid: NDArray[np.float64],
    features: tuple[int, int],
    xs: NDArray[np.float64],
    ys: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The binary decision function on the grid rows, for ``margins=True``."""
    if forest is None and not hasattr(model, "decision_function"):
        raise InputError(
            f"`margins=True` draws the decision function; {type(model).__name__} has "
            "no `decision_function`."
        )
    _, values = predict_grid(model, forest, grid, "decision_function", features, xs, ys)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise InputError(
            "`margins=True` draws the levels -1, 0 and +1 of a binary decision "
            f"function; got one of {values.shape[1]} columns (a multiclass model)."
        )
    return values


def pixel_edges(centres: NDArray[np.float64]) -> NDArray[np.float64]:
    """Edges of the pixels around equally spaced grid ``centres``."""
    half = (centres[1] - centres[0]) / 2
    return np.concatenate(
        [[centres[0] - half], (centres[1:] + centres[:-1]) / 2, [centres[-1] + half]]
    )


def _extent(xx: Any, yy: Any) -> list[float]:
    dx = (xx[0, -1] - xx[0, 0]) / (xx.shape[1] - 1) / 2
    dy = (yy[-1, 0] - yy[0, 0]) / (yy.shape[0] - 1) / 2
    return [xx[0, 0] - dx, xx[0, -1] + dx, yy[0, 0] - dy, yy[-1, 0] + dy]


def _support_vectors(
    model: Any, features: tuple[int, int]
) -> NDArray[np.float64] | None:
    sv = getattr(model, "support_vectors_", None)
    if sv is None:
        return None
    sv = sv.toarray() if hasattr(sv, "toarray") else np.asarray(sv)
    if sv.ndim != 2 or sv.shape[0] == 0:
        return None
    return np.asarray(sv[:, list(features)], dtype=np.float64)


def outputs_from_leaves(
    forest: Forest, leaves: NDArray[np.intp], method: str
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Predicted classes and the response from the leaves of every row.

    Averaging ensembles add their trees' class fractions in tree order, the same
    sums as ``Forest.predict_proba`` (and scikit-learn), so ties break alike.
    A regressor's prediction (an IsolationForest's ``score_samples``) is the
    Forest's own, averaged or boosted as the model combines its trees; it has
    no other response.
    """
    if not forest.is_classifier:
        if method != "predict":
            raise InputError(
                f"A regressor has no `{method}`; expected response_method="
                f"'predict', got {method!r}."
            )
        values = forest._predict_from_leaves(leaves)
        return values, values
    if forest.kind == "boosting":
        predictions = forest._predict_from_leaves(leaves)
        if method == "predict":
            return predictions, predictions
        if method == "predict_proba":
            return predictions, forest._proba_from_leaves(leaves)
        raw = forest._raw_from_leaves(leaves)
        return predictions, raw[:, 0] if raw.shape[1] == 1 else raw
    if method == "decision_function":
        raise InputError(
            "`decision_function` exists for boosting models only among tree "
            f"models; got a {forest.source or forest.kind}. Use 'predict_proba'."
        )
    proba = forest._proba_from_leaves(leaves)
    predictions = np.asarray(forest.classes_).take(np.argmax(proba, axis=1))
    return predictions, predictions if method == "predict" else proba


def predict_grid(
    estimator: Any,
    forest: Forest | None,
    grid: NDArray[np.float64],
    method: str,
    features: tuple[int, int],
    xs: NDArray[np.float64],
    ys: NDArray[np.float64],
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Predictions and the response on all grid rows, in one call each
    (a regressor's values twice)."""
    if forest is not None:
        # Tree models: each tree's leaves are rasterized onto the grid from their
        # boxes in the slice, then combined as the model combines its trees.
        leaves = raster_leaves(forest, features, grid[0], xs, ys)
        return outputs_from_leaves(forest, leaves, method)
    rows = _frame_like(estimator, grid)
    predictions = np.asarray(estimator.predict(rows))
    if method == "predict":
        return predictions, predictions
    if not hasattr(estimator, method):
        raise InputError(
            f"{type(estimator).__name__} has no `{method}`; expected a classifier "
            "offering it, or response_method='predict'."
        )
    return predictions, np.asarray(getattr(estimator, method)(rows))


def _frame_like(estimator: Any, grid: NDArray[np.float64]) -> Any:
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return grid
    import pandas as pd

    return pd.DataFrame(grid, columns=list(names))


def _categorical_cells(
    forest: Forest, common: dict[str, Any], grid_resolution: int
) -> dict[str, Any]:
    """Display parameters of regions over a categorical axis: one labelled band
    per category (see :func:`categorical_regions`); ``common["window"]`` is
    widened to the bands."""
    if common["response_method"] != "predict":
        raise InputError(
            "Regions over a categorical feature draw predicted classes; expected "
            f"response_method='predict', got {common['response_method']!r}."
        )
    features = common["features"]
    x_edges, y_edges, labels, window = categorical_regions(
        forest, features, common["reference"], common["window"], grid_resolution
    )
    common["window"] = window
    return {
        "predictions": labels,
        "response": labels,
        "x_edges": x_edges,
        "y_edges": y_edges,
        "category_labels": tuple(
            forest.features[f].categories if forest.n_categories[f] else None
            for f in features
        ),
    }


def categorical_regions(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
    grid_resolution: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any], NDArray[Any]]:
    """Predictions over two features of which one or both are categorical
    (classes of a classifier, values of a regressor).

    A categorical axis has one band per category, ``(c - 0.5, c + 0.5]`` around
    its code ``c``; a numeric axis ``grid_resolution`` equal cells of the window.
    Every cell is predicted at its centre (the category's code) by the forest's
    own routing.

    Returns
    -------
    x_edges, y_edges : ndarray
    labels : ndarray of shape (n_y, n_x)
    window : ndarray of shape (2, 2)
        The window, categorical axes widened to their bands.
    """
    edges, centres = [], []
    window = np.array(window, dtype=np.float64)
    for axis, f in enumerate(features):
        k = int(forest.n_categories[f])
        if k:
            centre = np.arange(k, dtype=np.float64)
            edges.append(np.arange(k + 1, dtype=np.float64) - 0.5)
            window[axis] = (-0.5, k - 0.5)
        else:
            edge = np.linspace(window[axis, 0], window[axis, 1], grid_resolution + 1)
            centre = 0.5 * (edge[:-1] + edge[1:])
            edges.append(edge)
        centres.append(centre)
    xx, yy = np.meshgrid(centres[0], centres[1])
    grid = np.tile(reference, (xx.size, 1))
    grid[:, features[0]], grid[:, features[1]] = xx.ravel(), yy.ravel()
    leaves = forest._apply(grid.astype(forest.input_dtype))
    labels, _ = outputs_from_leaves(forest, leaves, "predict")
    return edges[0], edges[1], labels.reshape(xx.shape), window
