"""DecisionRegionDisplay: the regions of any fitted classifier in two features."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from .._core._validation import column_names
from .._exceptions import InputError, UnsupportedModelError
from ._common import (
    class_colors,
    model_feature_names,
    require_matplotlib,
    resolve_axes,
)
from ._partition import (
    cell_points,
    missing_rows,
    plot_window,
    raster_leaves,
    report_missing,
    resolve_features,
    resolve_reference,
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


def _is_classifier(estimator: Any, forest: Forest | None) -> bool:
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
    if not _is_classifier(estimator, forest):
        raise UnsupportedModelError(
            f"{picture} draws class regions and needs a classifier; got the "
            f"regressor {type(estimator).__name__}. Use PartitionDisplay or "
            "RegressionStepsDisplay for regression trees."
        )


def as_array(X: Any, forest: Forest | None) -> NDArray[np.float64]:
    """X as a 2-D float64 array (columns matched by name for tree models)."""
    if forest is not None:
        forest.validate_X(X)  # checks shape, names and values; returns the float32 cast
        if column_names(X) is not None and forest.has_feature_names:
            X = X[list(forest.feature_names)]
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


def exact_regions(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
    max_cells: int = 250_000,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """Exact class regions of a tree model from the overlay of its split lines.

    Raises :class:`~treelens.InputError` when the overlay has more than
    ``max_cells`` cells: each is routed through every tree, and a large forest on
    two continuous features can cut the window into millions.

    Returns
    -------
    x_edges : ndarray of shape (n_x + 1,)
    y_edges : ndarray of shape (n_y + 1,)
    labels : ndarray of shape (n_y, n_x)
        The model's prediction on every cell.
    """
    if (
        isinstance(max_cells, bool)
        or not isinstance(max_cells, (int, np.integer))
        or max_cells < 1
    ):
        raise InputError(f"`max_cells` must be a positive integer; got {max_cells!r}.")
    tx, ty = split_thresholds(forest, features, reference, window)
    n_cells = (tx.size + 1) * (ty.size + 1)
    if n_cells > max_cells:
        raise InputError(
            f"`exact=True` would cut the window into {tx.size + 1} x {ty.size + 1} = "
            f"{n_cells:,} cells, each predicted by all {forest.n_trees} trees; "
            f"expected at most max_cells={max_cells:,}. Raise `max_cells` or draw "
            "the grid (exact=False)."
        )
    x_edges = np.concatenate([[window[0, 0]], tx, [window[0, 1]]])
    y_edges = np.concatenate([[window[1, 0]], ty, [window[1, 1]]])
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


class DecisionRegionDisplay:
    """Regions and boundaries of a fitted classifier in two chosen features.

    The other features are held at a reference row.  For a grid, the model is
    called once on all grid rows; with ``exact=True`` a tree model's regions are
    computed from the overlay of its split lines instead, one prediction per cell.

    Attributes
    ----------
    features_ : (int, int)
    feature_names_ : (str, str)
    reference_ : ndarray of shape (n_features,)
    window_ : ndarray of shape (2, 2)
    xx_, yy_ : ndarray of shape (grid_resolution, grid_resolution)
        Grid coordinates (grid mode).
    grid_ : ndarray of shape (grid_resolution ** 2, n_features)
        The rows predicted (grid mode), row-major over ``yy_`` then ``xx_``.
    predictions_ : ndarray of shape (n_y, n_x)
        Predicted class at every grid point, or on every cell (exact mode).
    response_ : ndarray of shape (n_y, n_x) or (n_y, n_x, n_classes)
        The response drawn (``predictions_`` for ``predict``).
    x_edges_, y_edges_ : ndarray
        Cell edges (exact mode), else None.
    classes_ : ndarray of shape (n_classes,)
    support_vectors_ : ndarray of shape (n_support, 2) or None
        The support vectors of an SVC in the two features.
    boundary_segments_ : ndarray of shape (n_segments, 2, 2) or None
        Class boundaries drawn: along cell edges (exact mode) or pixel edges
        (grid), after :meth:`plot`.
    skipped_rows_ : ndarray of int or None
        Rows of X not drawn because they miss a value (NaN) of one of the two
        features, after :meth:`plot`; a :class:`~treelens.MissingValuesWarning`
        counts them.  The window and the median ignore missing values.
    ax_, figure_, surface_ : matplotlib objects after :meth:`plot`.

    See Also
    --------
    PartitionDisplay : the rectangles of one tree.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> disp = DecisionRegionDisplay.from_estimator(model, X, features=(2, 3),
    ...                                             grid_resolution=20)
    >>> disp.predictions_.shape
    (20, 20)
    """

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
        xx: NDArray[np.float64] | None = None,
        yy: NDArray[np.float64] | None = None,
        grid: NDArray[np.float64] | None = None,
        x_edges: NDArray[np.float64] | None = None,
        y_edges: NDArray[np.float64] | None = None,
        support_vectors: NDArray[np.float64] | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[Any] | None = None,
    ) -> None:
        self.features_ = features
        self.feature_names_ = feature_names
        self.reference_ = reference
        self.window_ = window
        self.classes_ = classes
        self.predictions_ = predictions
        self.response_ = response
        self.response_method = response_method
        self.xx_, self.yy_, self.grid_ = xx, yy, grid
        self.x_edges_, self.y_edges_ = x_edges, y_edges
        self.support_vectors_ = support_vectors
        self.X_, self.y_ = X, y
        self.boundary_segments_: NDArray[np.float64] | None = None

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        *,
        features: tuple[Any, Any] = (0, 1),
        y: Any = None,
        reference: Any = None,
        response_method: ResponseMethod = "predict",
        grid_resolution: int = 100,
        exact: bool = False,
        max_cells: int = 250_000,
        margin: float = 0.05,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> DecisionRegionDisplay:
        """Compute the regions of ``estimator`` and draw them.

        Parameters
        ----------
        estimator : fitted classifier
            Any classifier with ``predict`` (and ``predict_proba`` or
            ``decision_function`` when asked for).
        X : array-like of shape (n_samples, n_features)
            Data setting the window, the default reference (its median) and the
            points drawn.
        features : pair of str or int, default=(0, 1)
            Features on the x and y axes.
        y : array-like of shape (n_samples,), optional
            Classes of the points drawn.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X.
        response_method : {"predict", "predict_proba", "decision_function"}
        grid_resolution : int, default=100
            Grid points per axis.
        exact : bool, default=False
            For tree models: exact regions from the split lines, not a grid.
        max_cells : int, default=250_000
            ``exact=True``: most cells the overlay of the split lines may have;
            more raises an error rather than exhausting memory.
        margin : float, default=0.05
            Fraction of each feature's range added around the data.
        ax : matplotlib Axes, optional
        **plot_kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        DecisionRegionDisplay
        """
        forest = forest_or_none(estimator)
        require_classifier(estimator, forest, "DecisionRegionDisplay")
        if response_method not in ("predict", "predict_proba", "decision_function"):
            raise InputError(
                "`response_method` must be 'predict', 'predict_proba' or "
                f"'decision_function'; got {response_method!r}."
            )
        Xa = as_array(X, forest)
        n_features = forest.n_features if forest is not None else Xa.shape[1]
        names = (
            forest.feature_names
            if forest is not None
            else model_feature_names(estimator, n_features)
        )
        f0, f1 = resolve_features(names, features)
        ref = resolve_reference(Xa, reference, n_features)
        window = plot_window(Xa, (f0, f1), margin=margin)
        classes = np.asarray(estimator.classes_)
        yv = None if y is None else np.asarray(y)
        common = {
            "features": (f0, f1),
            "feature_names": (names[f0], names[f1]),
            "reference": ref,
            "window": window,
            "classes": classes,
            "response_method": response_method,
            "support_vectors": _support_vectors(estimator, (f0, f1)),
            "X": Xa,
            "y": yv,
        }
        if exact:
            if forest is None:
                raise UnsupportedModelError(
                    "`exact=True` needs a tree model treelens can read; got "
                    f"{type(estimator).__name__}. Use the grid (exact=False)."
                )
            if response_method != "predict":
                raise InputError(
                    "`exact=True` draws predicted classes; expected "
                    f"response_method='predict', got {response_method!r}."
                )
            x_edges, y_edges, labels = exact_regions(
                forest, (f0, f1), ref, window, max_cells
            )
            display = cls(
                predictions=labels,
                response=labels,
                x_edges=x_edges,
                y_edges=y_edges,
                **common,
            )
            return display.plot(ax=ax, **plot_kwargs)
        if grid_resolution < 2:
            raise InputError(
                f"`grid_resolution` must be at least 2; got {grid_resolution}."
            )
        xs = np.linspace(window[0, 0], window[0, 1], grid_resolution)
        ys = np.linspace(window[1, 0], window[1, 1], grid_resolution)
        xx, yy = np.meshgrid(xs, ys)
        grid = np.tile(ref, (xx.size, 1))
        grid[:, f0], grid[:, f1] = xx.ravel(), yy.ravel()
        predictions, response = _predict_grid(
            estimator, forest, grid, response_method, (f0, f1), xs, ys
        )
        display = cls(
            predictions=predictions.reshape(xx.shape),
            response=response.reshape(xx.shape + response.shape[1:]),
            xx=xx,
            yy=yy,
            grid=grid,
            **common,
        )
        return display.plot(ax=ax, **plot_kwargs)

    def plot(
        self,
        ax: Any = None,
        *,
        alpha: float = 0.45,
        show_points: bool = True,
        show_boundaries: bool = True,
        legend: bool = True,
    ) -> DecisionRegionDisplay:
        """Draw the regions.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        alpha : float, default=0.45
            Opacity of the regions.
        show_points : bool, default=True
            Scatter the points of X (coloured by y when given).
        show_boundaries : bool, default=True
        legend : bool, default=True

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.collections import LineCollection
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch

        ax = resolve_axes(ax)
        colors = class_colors(len(self.classes_))
        codes = np.searchsorted(self.classes_, self.predictions_)
        if self.x_edges_ is not None:
            self.surface_ = ax.pcolormesh(
                self.x_edges_,
                self.y_edges_,
                codes,
                cmap=ListedColormap(colors[:, :3]),
                vmin=-0.5,
                vmax=len(self.classes_) - 0.5,
                alpha=alpha,
            )
            self.boundary_segments_ = boundary_segments(
                self.x_edges_, self.y_edges_, codes
            )
            if show_boundaries:
                ax.add_collection(
                    LineCollection(self.boundary_segments_, colors="k", linewidths=0.8),
                    autolim=False,  # the limits are the window, set below
                )
        else:
            self.surface_ = self._draw_grid(ax, colors, codes, alpha, show_boundaries)
        self.skipped_rows_ = (
            None if self.X_ is None else missing_rows(self.X_, self.features_)
        )
        if show_points and self.X_ is not None:
            report_missing(self.skipped_rows_, self.X_.shape[0], self.feature_names_)
            pts = self.X_[:, list(self.features_)]
            if self.y_ is not None:
                point_codes = np.searchsorted(self.classes_, self.y_)
                ax.scatter(
                    pts[:, 0],
                    pts[:, 1],
                    c=colors[point_codes],
                    edgecolors="k",
                    s=18,
                    linewidths=0.4,
                )
            else:
                ax.scatter(pts[:, 0], pts[:, 1], c="k", s=6)
        if self.support_vectors_ is not None:
            sv = self.support_vectors_
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
            handles = [
                Patch(color=colors[k], label=str(c))
                for k, c in enumerate(self.classes_)
            ]
            if self.support_vectors_ is not None:
                handles.append(self.support_artist_)
            ax.legend(handles=handles, fontsize="small", loc="best")
        ax.set_xlim(*self.window_[0])
        ax.set_ylim(*self.window_[1])
        ax.set_xlabel(self.feature_names_[0])
        ax.set_ylabel(self.feature_names_[1])
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _draw_grid(
        self,
        ax: Any,
        colors: NDArray[np.float64],
        codes: NDArray[np.intp],
        alpha: float,
        show_boundaries: bool,
    ) -> Any:
        from matplotlib.collections import LineCollection

        response = (
            np.asarray(self.response_, dtype=float)
            if self.response_method != "predict"
            else None
        )
        extent = _extent(self.xx_, self.yy_)
        if response is not None and (response.ndim == 2 or response.shape[2] == 2):
            score = response if response.ndim == 2 else response[..., 1]
            surface = ax.contourf(
                self.xx_, self.yy_, score, levels=12, cmap="RdBu_r", alpha=alpha
            )
            ax.figure.colorbar(
                surface, ax=ax, label=f"{self.response_method} ({self.classes_[-1]})"
            )
        else:
            rgba = colors[codes].copy()
            if response is not None:
                # Multiclass scores: the winning class's colour, fainter where it wins narrowly.
                top = np.sort(response, axis=-1)
                strength = (top[..., -1] - top[..., -2]) / max(np.ptp(response), 1e-12)
                rgba[..., 3] = alpha * (0.35 + 0.65 * np.clip(strength, 0, 1))
            else:
                rgba[..., 3] = alpha
            surface = ax.imshow(
                rgba,
                origin="lower",
                extent=extent,
                aspect="auto",
                interpolation="nearest",
            )
        if show_boundaries and len(self.classes_) > 1:
            # Boundaries along the pixel edges of the image: where the class drawn changes.
            x_edges = _pixel_edges(self.xx_[0])
            y_edges = _pixel_edges(self.yy_[:, 0])
            self.boundary_segments_ = boundary_segments(x_edges, y_edges, codes)
            ax.add_collection(
                LineCollection(self.boundary_segments_, colors="k", linewidths=0.7),
                autolim=False,
            )
        return surface


def _pixel_edges(centres: NDArray[np.float64]) -> NDArray[np.float64]:
    half = (centres[1] - centres[0]) / 2
    return np.concatenate(
        [[centres[0] - half], (centres[1:] + centres[:-1]) / 2, [centres[-1] + half]]
    )


def _extent(xx: Any, yy: Any) -> list[float]:
    dx = (xx[0, -1] - xx[0, 0]) / (xx.shape[1] - 1) / 2
    dy = (yy[-1, 0] - yy[0, 0]) / (yy.shape[0] - 1) / 2
    return [xx[0, 0] - dx, xx[0, -1] + dx, yy[0, 0] - dy, yy[-1, 0] + dy]


def _support_vectors(
    estimator: Any, features: tuple[int, int]
) -> NDArray[np.float64] | None:
    sv = getattr(estimator, "support_vectors_", None)
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
    """
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
    total = np.zeros((leaves.shape[0], forest.trees[0].value.shape[1]))
    for j, tree in enumerate(forest.trees):
        total += tree.value[leaves[:, j]]
    proba = total if forest.kind == "tree" else total / forest.n_trees
    predictions = forest.classes_.take(np.argmax(proba, axis=1))
    return predictions, predictions if method == "predict" else proba


def _predict_grid(
    estimator: Any,
    forest: Forest | None,
    grid: NDArray[np.float64],
    method: str,
    features: tuple[int, int],
    xs: NDArray[np.float64],
    ys: NDArray[np.float64],
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Predicted classes and the response on all grid rows, in one call each."""
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
