"""DataDisplay: the points of two features, without a model."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._validation import column_names
from .._exceptions import InputError
from ._common import (
    class_colors,
    class_labels,
    require_matplotlib,
    resolve_axes,
    scatter_classes,
    set_window,
)
from ._partition import resolve_features, resolve_window

__all__ = ["DataDisplay"]


class DataDisplay:
    """A scatter of two features coloured and shaped by class, with no model.

    The picture to put beside a model's regions: the same window, colours,
    markers and class names, and no background.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    features : (int, int)
    feature_names : (str, str)
    window : ndarray of shape (2, 2)
    classes : ndarray of shape (n_classes,) or None
        The distinct values of y, sorted.
    class_names : list of str or None
    category_labels : tuple of (tuple or None), optional
        The categories of each drawn feature that is categorical (drawn at
        their codes ``0, 1, ...``), None for a numeric one.

    Attributes
    ----------
    points_ : list of matplotlib PathCollection
        One scatter per class (one in all without y).
    ax_, figure_

    See Also
    --------
    DecisionRegionDisplay, PartitionDisplay : the same points over a model.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> disp = DataDisplay.from_data(X, y, features=(2, 3),
    ...                              class_names=["setosa", "versicolor", "virginica"])
    >>> [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    ['setosa', 'versicolor', 'virginica']
    """

    def __init__(
        self,
        *,
        X: NDArray[np.float64],
        y: NDArray[Any] | None,
        features: tuple[int, int],
        feature_names: tuple[str, str],
        window: NDArray[np.float64],
        classes: NDArray[Any] | None = None,
        class_names: list[str] | None = None,
        category_labels: tuple[tuple[Any, ...] | None, ...] | None = None,
    ) -> None:
        self.X, self.y = X, y
        self.features = features
        self.feature_names = feature_names
        self.window = window
        self.classes = classes
        self.class_names = class_names
        self.category_labels = category_labels

    @classmethod
    def from_data(
        cls,
        X: Any,
        y: Any = None,
        *,
        features: tuple[Any, Any] = (0, 1),
        feature_names: Any = None,
        class_names: Any = None,
        window: Any = None,
        margin: float = 0.05,
        ax: Any = None,
        **kwargs: Any,
    ) -> DataDisplay:
        """Scatter two columns of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            A DataFrame's categorical and string columns are drawn at their
            categories' codes (a categorical's own order, else sorted), one
            labelled tick each.
        y : array-like of shape (n_samples,), optional
            Classes colouring and shaping the points.
        features : pair of str or int, default=(0, 1)
        feature_names : sequence of str, optional
            Names of the columns of X; default its column names, or x0, x1, ...
        class_names : sequence of str, optional
            Legend text of the sorted distinct values of y.
        window : ((x0, x1), (y0, y1)), optional
            Default the data's range widened by ``margin``.
        margin : float, default=0.05
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        DataDisplay
        """
        names = column_names(X) if feature_names is None else feature_names
        Xa, labels = _as_numbers(X)
        if Xa.ndim != 2 or Xa.shape[0] == 0:
            raise InputError(
                "X must be 2-D of shape (n_samples, n_features) with at least one "
                f"row; got shape {Xa.shape}."
            )
        names = (
            tuple(f"x{i}" for i in range(Xa.shape[1]))
            if names is None
            else tuple(map(str, names))
        )
        if len(names) != Xa.shape[1]:
            raise InputError(
                f"`feature_names` must name the {Xa.shape[1]} columns of X; got "
                f"{len(names)} names."
            )
        f0, f1 = resolve_features(names, features)
        yv = None if y is None else np.asarray(y)
        if yv is not None and yv.shape[0] != Xa.shape[0]:
            raise InputError(
                f"y must have one value per row of X ({Xa.shape[0]}); got {yv.shape[0]}."
            )
        classes = None if yv is None else np.unique(yv)
        display = cls(
            X=Xa,
            y=yv,
            features=(f0, f1),
            feature_names=(names[f0], names[f1]),
            window=resolve_window(Xa, (f0, f1), window, margin=margin),
            classes=classes,
            class_names=None if classes is None else class_labels(classes, class_names),
            category_labels=(labels[f0], labels[f1]),
        )
        return display.plot(ax=ax, **kwargs)

    def plot(
        self, ax: Any = None, *, markers: Any = None, legend: bool = True, **kwargs: Any
    ) -> DataDisplay:
        """Draw the points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        markers : str or sequence of str, optional
            Marker of every class; default one shape per class.
        legend : bool, default=True
        **kwargs
            Passed to :meth:`matplotlib.axes.Axes.scatter` (``s``, ``alpha``,
            ``edgecolors``).

        Returns
        -------
        self
        """
        require_matplotlib()
        ax = resolve_axes(ax)
        pts = self.X[:, list(self.features)]
        if self.y is not None and self.classes is not None:
            self.points_ = scatter_classes(
                ax,
                pts,
                self.y,
                self.classes,
                class_labels(self.classes, self.class_names),
                class_colors(len(self.classes)),
                markers=markers,
                **kwargs,
            )
            if legend:
                ax.legend(handles=self.points_, fontsize="small", loc="best")
        else:
            style = {"c": "k", "s": 8, "marker": markers or "o", **kwargs}
            self.points_ = [ax.scatter(pts[:, 0], pts[:, 1], **style)]
        set_window(ax, self.window, self.feature_names)
        for axis, labels in zip((ax.xaxis, ax.yaxis), self.category_labels or ()):
            if labels is not None:  # a categorical axis: one tick per category
                axis.set_ticks(np.arange(len(labels)), [str(c) for c in labels])
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _as_numbers(X: Any) -> tuple[NDArray[np.float64], list[tuple[Any, ...] | None]]:
    """``X`` as floats, and the categories of every column drawn by its codes.

    A column of a DataFrame that is not numeric (categorical, strings, booleans
    as objects) is drawn at its categories' positions ``0, 1, ...``: a pandas
    categorical's own order, else the sorted distinct values, as
    ``OneHotEncoder`` orders them; missing values stay NaN.
    """
    if not hasattr(X, "dtypes") or not hasattr(X, "columns"):
        try:
            values = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                "X must hold numbers, or be a DataFrame whose other columns are "
                f"categories; got values that are not numbers ({exc})."
            ) from exc
        return values, [None] * (values.shape[1] if values.ndim == 2 else 0)
    import pandas as pd

    columns: list[NDArray[np.float64]] = []
    labels: list[tuple[Any, ...] | None] = []
    for name in X.columns:
        column = X[name]
        if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
            columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
            labels.append(None)
            continue
        categorical = pd.Categorical(column)  # keeps a categorical's own order
        if not isinstance(column.dtype, pd.CategoricalDtype):
            order = sorted(categorical.categories, key=lambda c: (str(type(c)), c))
            categorical = pd.Categorical(column, categories=order)
        codes = categorical.codes.astype(np.float64)
        codes[codes < 0] = np.nan
        columns.append(codes)
        labels.append(tuple(categorical.categories))
    values = np.column_stack(columns) if columns else np.empty((len(X), 0))
    return values.astype(np.float64), labels
