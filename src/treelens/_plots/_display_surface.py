"""PredictionSurfaceDisplay: a regressor's predicted value over two features."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from ._common import (
    RenamedAttributes,
    add_lines,
    require_matplotlib,
    resolve_axes,
    set_window,
)
from ._display_regions import (
    boundary_segments,
    categorical_regions,
    check_max_cells,
    exact_edges,
    exact_regions,
    forest_or_none,
    pixel_edges,
    predict_grid,
    require_regressor,
    resolve_view,
)
from ._partition import (
    points_to_draw,
)

__all__ = ["PredictionSurfaceDisplay"]


class PredictionSurfaceDisplay(RenamedAttributes):
    """The whole model's predicted value over two chosen features.

    The continuous counterpart of :class:`~treelens.DecisionRegionDisplay`, for
    regressors and IsolationForests; the other features are held at a
    reference row.  For a tree model the value of a cell is the Forest's
    prediction, combined over all trees as the model combines them (the mean of
    an averaging ensemble, the boosted raw score through its link), bit for bit
    the model's ``predict``; an IsolationForest's is its ``score_samples``.
    With ``exact`` the cells are those of the overlay of every tree's split
    lines, each predicted once (one point inside it); on the grid every grid
    row is predicted.  Any other regressor is drawn on the grid with its own
    ``predict`` (an outlier detector with ``score_samples``, its scores).

    A categorical feature is drawn as one band per category (its tick labels
    the categories), a numeric feature beside it as ``grid_resolution`` cells
    each predicted at its centre, as DecisionRegionDisplay does: such a picture
    is never exact in the numeric feature.

    Parameters
    ----------
    features : (int, int)
    feature_names : (str, str)
    reference : ndarray of shape (n_features,)
    window : ndarray of shape (2, 2)
        ``[[x0, x1], [y0, y1]]``.
    values : ndarray of shape (n_y, n_x)
        The value drawn on every cell or grid point: the prediction
        (``score_samples`` of an IsolationForest), negated with ``negate``.
    value_name : str
        What the values are, the colour bar's label: the target's name (the
        name of ``y``), else ``"prediction"``; ``"score_samples"`` for an
        IsolationForest, ``"anomaly score (-score_samples)"`` negated.
    negate : bool, default=False
        Whether ``values`` are the model's output negated (``y`` is negated
        too when drawn).
    xx, yy : ndarray of shape (grid_resolution, grid_resolution) or None
        Grid coordinates (grid mode).
    grid : ndarray of shape (grid_resolution ** 2, n_features) or None
        The rows predicted (grid mode), row-major over ``yy`` then ``xx``.
    x_edges, y_edges : ndarray or None
        Cell edges (exact mode, and beside a categorical feature).
    n_cells : int or None
        Cells of the overlay of the split lines, when counted (``exact`` True
        or ``"auto"`` on a tree model).
    category_labels : (tuple or None, tuple or None), optional
        The categories of a categorical feature on either axis.
    X : ndarray or None
        The points drawn.
    y : ndarray of shape (n_samples,) or None
        Their target values, which colour them on the surface's scale.

    Attributes
    ----------
    surface_ : matplotlib QuadMesh
        The values, one quadrilateral per cell or grid pixel.
    colorbar_ : matplotlib Colorbar or None
    contours_ : list of matplotlib LineCollection
        One per level of ``levels``: the edges between cells on either side of
        the level (value ``>= level`` against ``< level``), so a tree model's
        level line is exact, not interpolated.
    contour_segments_ : list of ndarray of shape (n_segments, 2, 2)
        Their segments, ``[[x0, y0], [x1, y1]]`` each.
    points_ : matplotlib PathCollection or None
        The points of X, coloured by ``y`` with the surface's colour map and
        norm when given.
    skipped_rows_ : ndarray of int or None
        Rows of X not drawn because they miss a value (NaN) of one of the two
        features; a :class:`~treelens.MissingValuesWarning` counts them.
    ax_, figure_

    See Also
    --------
    DecisionRegionDisplay : the regions of a classifier.
    PartitionDisplay : the rectangles of one tree.
    RegressionStepsDisplay : one tree's steps along one feature.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> disp = PredictionSurfaceDisplay.from_estimator(model, X, y, features=(2, 8))
    >>> disp.exact, disp.value_name
    (True, 'prediction')
    """

    def __init__(
        self,
        *,
        features: tuple[int, int],
        feature_names: tuple[str, str],
        reference: NDArray[np.float64],
        window: NDArray[np.float64],
        values: NDArray[np.float64],
        value_name: str = "prediction",
        negate: bool = False,
        xx: NDArray[np.float64] | None = None,
        yy: NDArray[np.float64] | None = None,
        grid: NDArray[np.float64] | None = None,
        x_edges: NDArray[np.float64] | None = None,
        y_edges: NDArray[np.float64] | None = None,
        n_cells: int | None = None,
        category_labels: tuple[Any, ...] | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[np.float64] | None = None,
    ) -> None:
        self.features = features
        self.feature_names = feature_names
        self.reference = reference
        self.window = window
        self.values = values
        self.value_name = value_name
        self.negate = negate
        self.xx, self.yy, self.grid = xx, yy, grid
        self.x_edges, self.y_edges = x_edges, y_edges
        self.n_cells = n_cells
        self.category_labels = category_labels
        self.X, self.y = X, y

    @property
    def exact(self) -> bool:
        """Whether the values are on the exact cells of the split lines (not a
        grid, nor categorical bands beside a numeric grid)."""
        return self.x_edges is not None and self.category_labels is None

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        reference: Any = None,
        grid_resolution: int = 100,
        exact: bool | Literal["auto"] = "auto",
        max_cells: int = 250_000,
        window: Any = None,
        margin: float = 0.05,
        negate: bool = False,
        levels: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> PredictionSurfaceDisplay:
        """Compute the predicted value of ``model`` over two features and draw it.

        Parameters
        ----------
        model : fitted regressor or IsolationForest
            A tree model treelens reads (or its Forest), or any regressor with
            ``predict``.  Classifiers are refused: see DecisionRegionDisplay.
        X : array-like of shape (n_samples, n_features)
            Data setting the window, the default reference (its median) and the
            points drawn.
        y : array-like of shape (n_samples,), optional
            Target values of the points, which colour them on the surface's
            scale; its name (a pandas Series') labels the colour bar.
        features : pair of str or int, default=(0, 1)
            Features on the x and y axes.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X (the most
            frequent category of a categorical feature).
        grid_resolution : int, default=100
            Grid points per axis (grid mode, and a numeric axis beside a
            categorical one).
        exact : bool or "auto", default="auto"
            For tree models: the exact cells of the overlay of every tree's
            split lines, not a grid.  ``"auto"``: exact up to ``max_cells``
            cells, the grid above (and for models that are not trees).
        max_cells : int, default=250_000
            Most cells the overlay may have in exact mode; ``exact=True`` with
            more raises an error rather than exhausting memory.
        window : ((x0, x1), (y0, y1)), optional
            The window drawn; default the data's range widened by ``margin``.
        margin : float, default=0.05
            Fraction of each feature's range added around the data.
        negate : bool, default=False
            Draw the values negated: an IsolationForest's anomaly score
            ``-score_samples``, higher for more anomalous rows.
        levels : float or sequence of float, optional
            Values whose level lines are drawn (in the values drawn, so
            ``-model.offset_`` is an IsolationForest's threshold with
            ``negate=True``, ``model.offset_`` without); see :meth:`plot`.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        PredictionSurfaceDisplay
        """
        display = cls._compute(
            model,
            X,
            y,
            features=features,
            reference=reference,
            grid_resolution=grid_resolution,
            exact=exact,
            max_cells=max_cells,
            window=window,
            margin=margin,
            negate=negate,
        )
        return display.plot(ax=ax, levels=levels, **kwargs)

    @classmethod
    def _compute(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        reference: Any = None,
        grid_resolution: int = 100,
        exact: bool | Literal["auto"] = "auto",
        max_cells: int = 250_000,
        window: Any = None,
        margin: float = 0.05,
        negate: bool = False,
    ) -> PredictionSurfaceDisplay:
        """The surface as a Display, not drawn yet (see :meth:`from_estimator`)."""
        forest = forest_or_none(model)
        require_regressor(model, forest, "PredictionSurfaceDisplay")
        if forest is None and not hasattr(model, "predict"):
            raise UnsupportedModelError(
                "PredictionSurfaceDisplay needs a fitted model with `predict`; got "
                f"{type(model).__name__}."
            )
        _check_options(exact, grid_resolution, max_cells, negate)
        Xa, names, (f0, f1), ref, box = resolve_view(
            model, forest, X, features, reference, window, margin
        )
        common: dict[str, Any] = {
            "features": (f0, f1),
            "feature_names": (names[f0], names[f1]),
            "reference": ref,
            "window": box,
            "value_name": _value_name(model, forest, y, negate),
            "negate": bool(negate),
            "X": Xa,
            "y": _target(y, Xa.shape[0]),
        }
        cells: dict[str, Any] | None
        if forest is not None and forest.n_categories[[f0, f1]].any():
            cells = _categorical_cells(forest, common, grid_resolution)
        else:
            cells = _exact_cells(model, forest, exact, common, max_cells)
            if cells is None:
                cells = _grid_cells(model, forest, common, grid_resolution)
        values = np.asarray(cells["values"], dtype=np.float64)
        cells["values"] = -values if negate else values
        return cls(**cells, **common)

    def plot(
        self,
        ax: Any = None,
        *,
        levels: Any = None,
        cmap: Any = "viridis",
        show_points: bool = True,
        colorbar: bool = True,
        colorbar_label: str | None = None,
        contour_kwargs: dict[str, Any] | None = None,
        scatter_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> PredictionSurfaceDisplay:
        """Draw the surface, its level lines, colour bar and points.

        The colour scale spans the values drawn and the targets of the points
        (``y``), so that a point's colour compares with the surface under it.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        levels : float or sequence of float, optional
            Level lines of the values drawn, along the edges between cells (or
            grid pixels) on either side of each level, and marked on the
            colour bar.
        cmap : str or matplotlib Colormap, default="viridis"
        show_points : bool, default=True
            Scatter the points of X (coloured by y when given).
        colorbar : bool, default=True
        colorbar_label : str, optional
            Default :attr:`value_name`.
        contour_kwargs : dict, optional
            Styling of the level lines, passed to matplotlib's LineCollection
            (``colors``, ``linestyles``, ``linewidths``).
        scatter_kwargs : dict, optional
            Passed to :meth:`matplotlib.axes.Axes.scatter` (``s``, ``marker``).
        **kwargs
            Passed to :meth:`matplotlib.axes.Axes.pcolormesh` (``alpha``,
            ``norm``, ``vmin``, ``vmax``, ``zorder``).

        Returns
        -------
        self
        """
        require_matplotlib()
        thresholds = _levels(levels)
        ax = resolve_axes(ax)
        x_edges, y_edges = self._cell_edges()
        values = np.asarray(self.values, dtype=np.float64)
        shown_y = None if self.y is None else (-self.y if self.negate else self.y)
        style: dict[str, Any] = {"cmap": cmap, "shading": "flat", "rasterized": True}
        if not {"norm", "vmin", "vmax"} & kwargs.keys():
            style["norm"] = _norm(values, shown_y)
        self.surface_ = ax.pcolormesh(x_edges, y_edges, values, **{**style, **kwargs})
        line_style = {"colors": "k", "linewidths": 1.2, **(contour_kwargs or {})}
        self.contour_segments_ = [
            boundary_segments(x_edges, y_edges, values >= level) for level in thresholds
        ]
        self.contours_ = [
            add_lines(ax, segments, line_style) for segments in self.contour_segments_
        ]
        self.colorbar_ = None
        if colorbar:
            self.colorbar_ = ax.figure.colorbar(
                self.surface_, ax=ax, label=colorbar_label or self.value_name
            )
            for level, lines in zip(thresholds, self.contours_):
                self.colorbar_.ax.axhline(
                    level, color=lines.get_edgecolor()[0], linewidth=1.2
                )
        self._draw_points(ax, show_points, shown_y, scatter_kwargs or {})
        set_window(ax, self.window, self.feature_names)
        for axis, labels in zip((ax.xaxis, ax.yaxis), self.category_labels or ()):
            if labels is not None:  # a categorical axis: one band per category
                axis.set_ticks(np.arange(len(labels)), [str(c) for c in labels])
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _draw_points(
        self,
        ax: Any,
        show: bool,
        shown_y: NDArray[np.float64] | None,
        scatter_kwargs: dict[str, Any],
    ) -> None:
        self.points_ = None
        self.skipped_rows_, pts = points_to_draw(
            self.X, self.features, self.feature_names, show=show
        )
        if pts is None:
            return
        style: dict[str, Any] = {"s": 12, "edgecolors": "k", "linewidths": 0.4}
        if shown_y is not None:
            style.update(c=shown_y, cmap=self.surface_.cmap, norm=self.surface_.norm)
        else:
            style.update(c="w")
        self.points_ = ax.scatter(pts[:, 0], pts[:, 1], **{**style, **scatter_kwargs})

    def _cell_edges(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Edges of the cells (exact or categorical), else of the grid's pixels."""
        if self.x_edges is not None and self.y_edges is not None:
            return self.x_edges, self.y_edges
        if self.xx is None or self.yy is None:
            raise InputError(
                "A PredictionSurfaceDisplay needs a grid (xx, yy) or cell edges "
                "(x_edges, y_edges); got neither."
            )
        return pixel_edges(self.xx[0]), pixel_edges(self.yy[:, 0])


def _check_options(
    exact: Any, grid_resolution: Any, max_cells: Any, negate: Any
) -> None:
    """Refuse options of the wrong kind, once, before anything is computed."""
    if exact not in (True, False, "auto"):
        raise InputError(f"`exact` must be True, False or 'auto'; got {exact!r}.")
    if (
        isinstance(grid_resolution, bool)
        or not isinstance(grid_resolution, (int, np.integer))
        or grid_resolution < 2
    ):
        raise InputError(
            "`grid_resolution` must be an integer of at least 2; got "
            f"{grid_resolution!r}."
        )
    if exact is not False:
        check_max_cells(max_cells)
    if not isinstance(negate, (bool, np.bool_)):
        raise InputError(f"`negate` must be True or False; got {negate!r}.")


def _is_outlier_detector(model: Any) -> bool:
    """Whether a model that is not a tree model scores rows (``score_samples``)
    rather than predicting a target: scikit-learn's outlier detectors."""
    try:
        from sklearn.base import is_outlier_detector
    except ImportError:
        return False
    return bool(is_outlier_detector(model)) and hasattr(model, "score_samples")


def _value_name(model: Any, forest: Forest | None, y: Any, negate: bool) -> str:
    """The colour bar's label: what the values drawn are."""
    scores = (
        forest.link == "isolation"
        if forest is not None
        else _is_outlier_detector(model)
    )
    if scores:
        return "anomaly score (-score_samples)" if negate else "score_samples"
    name = getattr(y, "name", None)
    name = name if isinstance(name, str) and name else "prediction"
    return f"-{name}" if negate else name


def _target(y: Any, n_rows: int) -> NDArray[np.float64] | None:
    """``y`` as float64 values, one per row of X."""
    if y is None:
        return None
    try:
        values = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            "`y` colours the points on the scale of the prediction and must be "
            f"numeric; got values of dtype {np.asarray(y).dtype}."
        ) from exc
    if values.ndim != 1 or values.shape[0] != n_rows:
        raise InputError(
            f"`y` must hold one value per row of X ({n_rows}); got shape "
            f"{values.shape}."
        )
    return values


def _levels(levels: Any) -> list[float]:
    """``levels`` as a list of finite floats (empty for None)."""
    if levels is None:
        return []
    try:
        values = np.atleast_1d(np.asarray(levels, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"`levels` must be a number or a sequence of numbers; got {levels!r}."
        ) from exc
    if values.ndim != 1 or not np.isfinite(values).all():
        raise InputError(
            f"`levels` must be finite numbers in one sequence; got {levels!r}."
        )
    return [float(v) for v in values]


def _norm(values: NDArray[np.float64], y: NDArray[np.float64] | None) -> Any:
    """A colour scale spanning the finite values drawn and the targets."""
    from matplotlib.colors import Normalize

    shown = values if y is None else np.concatenate([values.ravel(), y])
    shown = shown[np.isfinite(shown)]
    if shown.size == 0:
        return Normalize(0.0, 1.0)
    low, high = float(shown.min()), float(shown.max())
    return Normalize(low, high if high > low else low + 1.0)


def _exact_cells(
    model: Any,
    forest: Forest | None,
    exact: bool | str,
    common: dict[str, Any],
    max_cells: int,
) -> dict[str, Any] | None:
    """Exact cells as Display parameters; None for the grid (``exact=False``, or
    ``"auto"`` on a model that is not a tree model or past ``max_cells`` cells)."""
    if not exact:
        return None
    if forest is None:
        if exact == "auto":
            return None
        raise UnsupportedModelError(
            "`exact=True` needs a tree model treelens can read; got "
            f"{type(model).__name__}. Use the grid (exact=False)."
        )
    features, ref, box = common["features"], common["reference"], common["window"]
    edges = exact_edges(forest, features, ref, box)
    n_cells = (edges[0].size - 1) * (edges[1].size - 1)
    common["n_cells"] = n_cells
    if exact == "auto" and n_cells > max_cells:
        return None
    x_edges, y_edges, values = exact_regions(
        forest, features, ref, box, max_cells, edges=edges
    )
    return {"values": values, "x_edges": x_edges, "y_edges": y_edges}


def _grid_cells(
    model: Any, forest: Forest | None, common: dict[str, Any], grid_resolution: int
) -> dict[str, Any]:
    """The values on a grid of ``grid_resolution`` points per axis, predicted
    in one call (a tree model's leaves rasterized, not routed)."""
    f0, f1 = common["features"]
    box = common["window"]
    xs = np.linspace(box[0, 0], box[0, 1], grid_resolution)
    ys = np.linspace(box[1, 0], box[1, 1], grid_resolution)
    xx, yy = np.meshgrid(xs, ys)
    grid = np.tile(common["reference"], (xx.size, 1))
    grid[:, f0], grid[:, f1] = xx.ravel(), yy.ravel()
    method = (
        "score_samples" if forest is None and _is_outlier_detector(model) else "predict"
    )
    _, values = predict_grid(model, forest, grid, method, (f0, f1), xs, ys)
    values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise InputError(
            "PredictionSurfaceDisplay draws one value per row; expected a "
            f"single-output regressor, got {type(model).__name__} predicting "
            f"{values.shape[1]} outputs."
        )
    return {"values": values.reshape(xx.shape), "xx": xx, "yy": yy, "grid": grid}


def _categorical_cells(
    forest: Forest, common: dict[str, Any], grid_resolution: int
) -> dict[str, Any]:
    """Values over a categorical axis: one band per category, a numeric axis
    beside it in ``grid_resolution`` cells (see :func:`categorical_regions`);
    ``common["window"]`` is widened to the bands."""
    features = common["features"]
    x_edges, y_edges, values, window = categorical_regions(
        forest, features, common["reference"], common["window"], grid_resolution
    )
    common["window"] = window
    return {
        "values": values,
        "x_edges": x_edges,
        "y_edges": y_edges,
        "category_labels": tuple(
            forest.features[f].categories if forest.n_categories[f] else None
            for f in features
        ),
    }
