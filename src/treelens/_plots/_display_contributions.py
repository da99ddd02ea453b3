"""WaterfallDisplay and ContributionSummaryDisplay: pictures of contributions.

Both work from any result with per-row, per-feature contributions and a base
value (Saabas contributions, SHAP values); see
:func:`treelens._plots._contributions.explanation_of`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._common import require_matplotlib, resolve_axes
from ._contributions import (
    explanation_of,
    swarm_offsets,
    value_colors,
    waterfall_steps,
)

__all__ = ["ContributionSummaryDisplay", "WaterfallDisplay"]

_UP, _DOWN = "#d62728", "#1f77b4"  # pushes the prediction up / down


Method = Literal["saabas", "shap"]


def _contributions_of(model: Any, X: Any, method: Any) -> Any:
    """Saabas contributions or path-dependent SHAP values of ``X``."""
    if method == "saabas":
        from .._explain._contributions import saabas_values

        return saabas_values(model, X)
    if method == "shap":
        from .._explain._shap import shap_values

        return shap_values(model, X)
    raise InputError(f"`method` must be 'saabas' or 'shap'; got {method!r}.")


def _check_max_display(max_display: Any) -> int:
    if (
        isinstance(max_display, bool)
        or not isinstance(max_display, (int, np.integer))
        or max_display < 1
    ):
        raise InputError(
            f"`max_display` must be a positive integer; got {max_display!r}."
        )
    return int(max_display)


def _row_position(row_names: tuple[Any, ...], row: Any) -> int:
    integer = isinstance(row, (int, np.integer)) and not isinstance(row, bool)
    if integer and 0 <= int(row) < len(row_names):
        return int(row)
    raise InputError(
        f"`row` must be a row position in [0, {len(row_names) - 1}]; got {row!r}."
    )


class WaterfallDisplay:
    """One row's prediction as a waterfall: the base value, the largest
    contributions, the rest grouped, the prediction.

    Each bar moves the running total by one feature's contribution (red up,
    blue down), from the base value (the bias of Saabas contributions, the
    expected value of SHAP values) to the row's prediction.

    Parameters
    ----------
    contributions : ndarray of shape (n_features,)
    base_value : float
    feature_names : tuple of str
    feature_values : sequence of length n_features, optional
        The row's values, shown beside the names.
    max_display : int, default=10
        Bars at most: the ``max_display - 1`` largest contributions and one for
        the other features, when there are more.
    output_name : str, optional
        The output (class) shown, for the title.

    Attributes
    ----------
    labels_ : tuple of str
        One label per bar, from the top.
    contributions_ : ndarray of shape (n_bars,)
        What each bar adds.
    starts_, ends_ : ndarray of shape (n_bars,)
        The running total before and after each bar.
    prediction_ : float
        ``base_value + contributions.sum()``.
    bars_ : matplotlib BarContainer
    ax_, figure_

    Examples
    --------
    >>> import numpy as np
    >>> display = WaterfallDisplay(contributions=np.array([0.5, -0.2, 0.0]),
    ...                            base_value=1.0, feature_names=("a", "b", "c"))
    >>> display.plot().ends_.tolist()
    [1.5, 1.3]
    """

    def __init__(
        self,
        *,
        contributions: NDArray[np.float64],
        base_value: float,
        feature_names: tuple[str, ...],
        feature_values: Any = None,
        max_display: int = 10,
        output_name: str | None = None,
    ) -> None:
        self.contributions = contributions
        self.base_value = base_value
        self.feature_names = feature_names
        self.feature_values = feature_values
        self.max_display = max_display
        self.output_name = output_name

    @classmethod
    def from_result(
        cls,
        result: Any,
        *,
        row: int = 0,
        output: Any = None,
        X: Any = None,
        max_display: int = 10,
        ax: Any = None,
        **kwargs: Any,
    ) -> WaterfallDisplay:
        """Draw one row of a contributions result.

        Parameters
        ----------
        result : SaabasValues, SHAP result, or any object with ``values_`` and
            ``bias_`` or ``expected_value_``
        row : int, default=0
            Position of the row in the result.
        output : class label or position, optional
            For results with one column per class: the class shown; default the
            class the row's prediction is highest for.
        X : DataFrame or array-like of shape (n_rows, n_features), optional
            The rows explained, to show the row's values beside the names
            (results that keep them as ``data_`` need not be given it).
        max_display : int, default=10
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        WaterfallDisplay
        """
        explanation = explanation_of(result, output=output, row=row, X=X)
        position = _row_position(explanation.row_names, row)
        values = (
            explanation.data.iloc[position].to_numpy()
            if explanation.data is not None
            else None
        )
        display = cls(
            contributions=explanation.values[position],
            base_value=explanation.base_value,
            feature_names=explanation.feature_names,
            feature_values=values,
            max_display=_check_max_display(max_display),
            output_name=explanation.output_name,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        *,
        row: int = 0,
        method: Method = "saabas",
        output: Any = None,
        max_display: int = 10,
        ax: Any = None,
        **kwargs: Any,
    ) -> WaterfallDisplay:
        """Compute the contributions of one row of ``X`` and draw them.

        Parameters
        ----------
        model : fitted tree model or Forest
        X : array-like of shape (n_rows, n_features)
        row : int, default=0
            Position of the row in ``X``.
        method : {"saabas", "shap"}, default="saabas"
            Saabas contributions (:func:`treelens.saabas_values`) or
            path-dependent SHAP values (:func:`treelens.shap_values`).
        output, max_display, ax, **kwargs
            As in :meth:`from_result`.

        Returns
        -------
        WaterfallDisplay
        """
        n_rows = len(X) if hasattr(X, "__len__") else np.shape(X)[0]
        position = _row_position(tuple(range(n_rows)), row)
        rows = X.iloc[[position]] if hasattr(X, "iloc") else np.asarray(X)[[position]]
        result = _contributions_of(model, rows, method)
        return cls.from_result(
            result,
            row=0,
            output=output,
            X=rows,
            max_display=max_display,
            ax=ax,
            **kwargs,
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> WaterfallDisplay:
        """Draw the waterfall.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        **kwargs
            Passed to ``Axes.barh`` (e.g. ``height``, ``edgecolor``).

        Returns
        -------
        self
        """
        require_matplotlib()
        steps = waterfall_steps(
            np.asarray(self.contributions, dtype=np.float64),
            float(self.base_value),
            tuple(self.feature_names),
            self.feature_values,
            max_display=_check_max_display(self.max_display),
        )
        ax = resolve_axes(ax)
        n = len(steps.labels)
        y = np.arange(n)[::-1].astype(float)  # first step on top
        colors = [_UP if c >= 0 else _DOWN for c in steps.contributions]
        style = {"height": 0.6, "color": colors, **kwargs}
        self.bars_ = ax.barh(y, steps.contributions, left=steps.starts, **style)
        for yi, c, end in zip(y, steps.contributions, steps.ends):
            ax.annotate(
                f"{c:+.3g}",
                (end, yi),
                xytext=(3 if c >= 0 else -3, 0),
                textcoords="offset points",
                ha="left" if c >= 0 else "right",
                va="center",
                fontsize="small",
            )
        # Room on both sides for the base line and the value labels.
        edges = np.concatenate([steps.starts, steps.ends, [steps.base_value]])
        low, high = float(edges.min()), float(edges.max())
        pad = 0.25 * (high - low) if high > low else 1.0
        ax.set_xlim(low - pad, high + pad)
        ax.axvline(steps.base_value, color="0.5", linewidth=0.8, linestyle="--")
        ax.axvline(steps.prediction, color="0.2", linewidth=0.8)
        ax.set_yticks(y, list(steps.labels))
        title = f"base {steps.base_value:.4g} -> prediction {steps.prediction:.4g}"
        if self.output_name is not None:
            title += f" (class {self.output_name})"
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("contribution to the prediction")
        self.labels_ = steps.labels
        self.contributions_ = steps.contributions
        self.starts_ = steps.starts
        self.ends_ = steps.ends
        self.prediction_ = steps.prediction
        self.ax_, self.figure_ = ax, ax.figure
        return self


class ContributionSummaryDisplay:
    """Contributions over many rows: per feature, one point per row at its
    contribution, coloured by the feature's value (beeswarm-like).

    Features are ordered by their mean absolute contribution, largest on top;
    points of close contributions are spread vertically.  Colour runs from
    the feature's lowest value (blue) to its highest (red) by rank; values
    that are missing or not numbers are grey.

    Parameters
    ----------
    contributions : ndarray of shape (n_rows, n_features)
    feature_names : tuple of str
    feature_values : DataFrame or array of shape (n_rows, n_features), optional
        The rows, for the colours.
    max_display : int, default=10
        Features shown.
    output_name : str, optional

    Attributes
    ----------
    features_ : tuple of str
        The features shown, from the top.
    order_ : ndarray of shape (n_shown,)
        Their positions among the features.
    mean_abs_ : ndarray of shape (n_shown,)
        Mean absolute contribution of each shown feature.
    x_ : ndarray of shape (n_rows, n_shown)
        The contributions drawn.
    y_ : ndarray of shape (n_rows, n_shown)
        Vertical positions (the feature's line plus the swarm offset).
    colors_ : ndarray of shape (n_rows, n_shown)
        Colour positions in [0, 1]; NaN drawn grey.
    collections_ : list of matplotlib PathCollection
    ax_, figure_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> display = ContributionSummaryDisplay(
    ...     contributions=rng.normal(size=(50, 3)) * [1, 3, 2],
    ...     feature_names=("a", "b", "c"), feature_values=rng.normal(size=(50, 3)))
    >>> display.plot().features_
    ('b', 'c', 'a')
    """

    def __init__(
        self,
        *,
        contributions: NDArray[np.float64],
        feature_names: tuple[str, ...],
        feature_values: Any = None,
        max_display: int = 10,
        output_name: str | None = None,
    ) -> None:
        self.contributions = contributions
        self.feature_names = feature_names
        self.feature_values = feature_values
        self.max_display = max_display
        self.output_name = output_name

    @classmethod
    def from_result(
        cls,
        result: Any,
        *,
        output: Any = None,
        X: Any = None,
        max_display: int = 10,
        ax: Any = None,
        **kwargs: Any,
    ) -> ContributionSummaryDisplay:
        """Draw every row of a contributions result.

        Parameters
        ----------
        result : SaabasValues, SHAP result, or any object with ``values_`` and
            ``bias_`` or ``expected_value_`` (and ``data_`` for the colours)
        output : class label or position, optional
            For results with one column per class; default the last class.
        X : DataFrame or array-like of shape (n_rows, n_features), optional
            The rows explained, for the colours (results that keep them as
            ``data_`` need not be given it).
        max_display : int, default=10
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        ContributionSummaryDisplay
        """
        explanation = explanation_of(result, output=output, X=X)
        display = cls(
            contributions=explanation.values,
            feature_names=explanation.feature_names,
            feature_values=explanation.data,
            max_display=_check_max_display(max_display),
            output_name=explanation.output_name,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        *,
        method: Method = "saabas",
        output: Any = None,
        max_display: int = 10,
        ax: Any = None,
        **kwargs: Any,
    ) -> ContributionSummaryDisplay:
        """Compute the contributions of ``X`` and draw them.

        Parameters
        ----------
        model : fitted tree model or Forest
        X : array-like of shape (n_rows, n_features)
        method : {"saabas", "shap"}, default="saabas"
            Saabas contributions or path-dependent SHAP values.
        output, max_display, ax, **kwargs
            As in :meth:`from_result`.

        Returns
        -------
        ContributionSummaryDisplay
        """
        return cls.from_result(
            _contributions_of(model, X, method),
            output=output,
            X=X,
            max_display=max_display,
            ax=ax,
            **kwargs,
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> ContributionSummaryDisplay:
        """Draw the points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        **kwargs
            Passed to ``Axes.scatter`` (e.g. ``s``, ``alpha``, ``cmap``).

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        values = np.asarray(self.contributions, dtype=np.float64)
        if values.ndim != 2:
            raise InputError(
                "`contributions` must be 2-D of shape (n_rows, n_features); got "
                f"shape {values.shape}."
            )
        mean_abs = np.abs(values).mean(axis=0)
        n_shown = min(_check_max_display(self.max_display), values.shape[1])
        order = np.argsort(-mean_abs, kind="stable")[:n_shown]
        data = self.feature_values
        if data is not None and not hasattr(data, "iloc"):
            data = np.asarray(data, dtype=object)
        colors = np.full((values.shape[0], n_shown), np.nan)
        if data is not None:
            for i, j in enumerate(order):
                column = data.iloc[:, j] if hasattr(data, "iloc") else data[:, j]
                colors[:, i] = value_colors(column)
        ax = resolve_axes(ax)
        x = values[:, order]
        y = np.empty_like(x)
        cmap = plt.get_cmap(kwargs.pop("cmap", "coolwarm"))
        style = {"s": 12, "alpha": 0.8, **kwargs}
        self.collections_ = []
        for i in range(n_shown):
            y[:, i] = (n_shown - 1 - i) + swarm_offsets(x[:, i])
            known = ~np.isnan(colors[:, i])
            rgba = np.zeros((x.shape[0], 4))
            rgba[known] = cmap(colors[known, i])
            rgba[~known] = (0.6, 0.6, 0.6, 1.0)
            self.collections_.append(ax.scatter(x[:, i], y[:, i], c=rgba, **style))
        names = tuple(self.feature_names[j] for j in order)
        ax.set_yticks(np.arange(n_shown)[::-1], list(names))
        ax.axvline(0, color="0.5", linewidth=0.8)
        label = "contribution"
        if self.output_name is not None:
            label += f" to output {self.output_name}"
        ax.set_xlabel(label)
        ax.set_title("low value: blue, high value: red", fontsize="small")
        self.features_ = names
        self.order_ = order
        self.mean_abs_ = mean_abs[order]
        self.x_, self.y_, self.colors_ = x, y, colors
        self.ax_, self.figure_ = ax, ax.figure
        return self
