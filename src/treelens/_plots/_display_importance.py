"""ImportanceDisplay: horizontal bars of feature importances."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._common import RenamedAttributes, require_matplotlib, resolve_axes

__all__ = ["ErrorBars", "ImportanceDisplay"]

ErrorBars = Literal["auto", "interval", "sem", "iqr", "std"]
_ERROR_BARS = ("auto", "interval", "sem", "iqr", "std")


def _as_results(result: Any) -> dict[str, Any]:
    """Name -> result, from one result, a sequence of them or a mapping."""
    if isinstance(result, Mapping):
        items = [(str(k), v) for k, v in result.items()]
    elif isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
        items = [
            (str(getattr(r, "method", f"importance {k}")), r)
            for k, r in enumerate(result)
        ]
    else:
        items = [(str(getattr(result, "method", "importance")), result)]
    if not items:
        raise InputError("`result` must hold at least one importance result; got none.")
    out: dict[str, Any] = {}
    for name, r in items:
        if not hasattr(r, "importances_"):
            raise InputError(
                "Each importance result must have `importances_` (a Series indexed by "
                f"feature); got {type(r).__name__} without it."
            )
        while name in out:  # two results of one method stay apart
            name += "'"
        out[name] = r
    return out


def _tree_rows(result: Any) -> NDArray[np.float64] | None:
    """Per-tree importances of the trees that enter the mean, or None.

    Rows of single-node trees are all zero and left out, as the mean leaves
    them out.
    """
    per_tree = getattr(result, "per_tree_", None)
    if per_tree is None or len(per_tree) < 2:
        return None
    rows = np.asarray(per_tree, dtype=np.float64)
    used = rows[np.any(rows != 0, axis=1)]
    return used if used.shape[0] >= 2 else None


def _whiskers(
    result: Any, index: Any, error_bars: ErrorBars | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], str]:
    """Low and high whisker ends of one result, and what they mean.

    ``"auto"`` and ``"sem"``: one standard error of the mean over the trees
    (``std / sqrt(n_trees)``): it says how precisely the average of the trees is
    known, where the trees' own spread says how much single trees disagree.
    ``"iqr"``: the middle half of the per-tree values.  ``"std"``: one per-tree
    standard deviation each side (can cross zero).
    Results without per-tree values (permutation importance) keep their own
    ``std_`` (over repeats) in every mode.  ``"interval"``: the result's own
    bootstrap interval (``interval_``), which ``"auto"`` also draws for per-tree
    results that can be negative (debiased MDI).  Whiskers stop at zero only for
    quantities that cannot be negative (``can_be_negative`` false).
    """
    import pandas as pd

    n = len(index)
    none = (np.full(n, np.nan), np.full(n, np.nan), "")
    if error_bars is None:
        return none
    mean = pd.Series(result.importances_, dtype=float).reindex(index).to_numpy()
    per_tree = getattr(result, "per_tree_", None)
    negative = bool(getattr(result, "can_be_negative", False))
    floor = -np.inf if negative else 0.0
    interval = getattr(result, "interval_", None)
    if interval is not None and (
        error_bars == "interval"
        or (error_bars == "auto" and negative and per_tree is not None)
    ):
        low = pd.Series(interval["low"], dtype=float).reindex(index).to_numpy()
        high = pd.Series(interval["high"], dtype=float).reindex(index).to_numpy()
        what = getattr(result, "interval_method", "") or "bootstrap interval"
        what = re.sub(r"\s*\(.*?\)", "", what).split(",")[0]
        return np.maximum(low, floor), high, f"whiskers: {what}"
    rows = _tree_rows(result)
    if rows is not None and per_tree is not None and error_bars != "std":
        frame = pd.DataFrame(rows, columns=per_tree.columns)[list(index)]
        values = frame.to_numpy()
        if error_bars == "iqr":
            low, high = np.percentile(values, [25, 75], axis=0)
            return low, high, f"whiskers: middle half, {len(values)} trees"
        sem = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
        return (
            np.maximum(mean - sem, floor),
            mean + sem,
            f"whiskers: \u00b11 s.e. of mean, {len(values)} trees",
        )
    std = getattr(result, "std_", None)
    if std is None:
        return none
    half = pd.Series(std, dtype=float).reindex(index).to_numpy()
    what = "trees" if per_tree is not None else "repeats"
    return mean - half, mean + half, f"whiskers: \u00b11 std, {what}"


class ImportanceDisplay(RenamedAttributes):
    """Horizontal bars of importances, sorted, with how precisely each is known.

    Several results (for example MDI on training data, MDI replayed on test data,
    permutation importance) are drawn side by side as grouped bars.  By default
    the whiskers of MDI show one standard error of the mean over the trees,
    never below zero; the legend says what every whisker means.

    Parameters
    ----------
    importances : pandas.DataFrame of shape (n_shown, n_methods)
        The importances drawn, one column per result, rows from the top bar down.
    lower, upper : pandas.DataFrame of shape (n_shown, n_methods)
        Whisker ends (NaN where a result has none).
    spreads : dict of str to str
        What the whiskers of each method mean (empty when none).

    Attributes
    ----------
    methods : list of str
    bars_ : list of matplotlib BarContainer
        One per method.
    whiskers_ : list of matplotlib LineCollection or None
        One per method: its first ``n_shown`` segments run from ``lower`` to
        ``upper`` (the rest are the caps); None where a method has no whiskers.
    ax_, figure_

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> result = SimpleNamespace(importances_=pd.Series({"a": 0.7, "b": 0.1, "c": 0.2}),
    ...                          std_=None, method="mdi")
    >>> ImportanceDisplay.from_result(result, top_k=2).importances.index.tolist()
    ['a', 'c']
    """

    _renamed: ClassVar[dict[str, str]] = {
        "importances_": "importances",
        "methods_": "methods",
    }

    def __init__(
        self,
        *,
        importances: Any,
        lower: Any,
        upper: Any,
        spreads: Mapping[str, str] | None = None,
    ) -> None:
        self.importances = importances
        self.lower = lower
        self.upper = upper
        self.spreads = dict(spreads or {})
        self.methods = list(importances.columns)

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any = None,
        y: Any = None,
        *,
        top_k: int | None = None,
        error_bars: ErrorBars | None = "auto",
        ax: Any = None,
        **kwargs: Any,
    ) -> ImportanceDisplay:
        """Draw the MDI of a tree model (held-out MDI when X and y are given).

        Parameters
        ----------
        model : fitted tree model or Forest
        X, y : array-like, optional
            Data to replay the statistics on (see :func:`mdi_importance`).
        top_k : int, optional
        error_bars : {"auto", "interval", "sem", "iqr", "std"} or None, default="auto"
            See :meth:`from_result`.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        ImportanceDisplay
        """
        from .._importance._mdi import mdi_importance

        result = mdi_importance(model, X, y)
        return cls.from_result(
            result, top_k=top_k, error_bars=error_bars, ax=ax, **kwargs
        )

    @classmethod
    def from_result(
        cls,
        result: Any,
        *,
        top_k: int | None = None,
        sort: bool = True,
        error_bars: ErrorBars | None = "auto",
        ax: Any = None,
        **kwargs: Any,
    ) -> ImportanceDisplay:
        """Draw one importance result, or several side by side.

        Parameters
        ----------
        result : importance result, sequence of them, or mapping name -> result
            Anything with ``importances_`` (Series indexed by feature), and
            optionally ``std_`` (Series or None), ``per_tree_`` (DataFrame,
            trees by features), ``interval_`` (DataFrame with ``low`` and
            ``high``), ``interval_method``, ``can_be_negative`` and ``method``.
        top_k : int, optional
            Keep the ``top_k`` features most important under the first result.
        sort : bool, default=True
            Order by the first result's importance, largest on top.
        error_bars : {"auto", "interval", "sem", "iqr", "std"} or None, default="auto"
            Whiskers of results with per-tree values (MDI): ``"auto"`` and
            ``"sem"`` one standard error of the mean over the trees, clipped at
            zero; ``"iqr"`` the 25th to 75th percentile of the per-tree values;
            ``"std"`` one per-tree standard deviation each side (it can cross
            zero and dwarf the bars: trees disagree much more than their mean
            is uncertain).  Results without per-tree values (permutation)
            always show ``std_`` over repeats.  ``"interval"``: each result's
            bootstrap interval (``interval_``); ``"auto"`` draws it for results
            that can be negative (debiased MDI), not clipped at zero.  None: no
            whiskers.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        ImportanceDisplay
        """
        import pandas as pd

        if error_bars is not None and error_bars not in _ERROR_BARS:
            raise InputError(
                "`error_bars` must be 'auto', 'interval', 'sem', 'iqr', 'std' or "
                f"None; got {error_bars!r}."
            )
        results = _as_results(result)
        table = pd.DataFrame(
            {k: pd.Series(r.importances_, dtype=float) for k, r in results.items()}
        )
        if sort:
            order = (
                table.iloc[:, 0].fillna(-np.inf).to_numpy().argsort(kind="stable")[::-1]
            )
            table = table.iloc[order]
        if top_k is not None:
            if isinstance(top_k, bool) or int(top_k) < 1:
                raise InputError(
                    f"`top_k` must be a positive integer or None; got {top_k!r}."
                )
            table = table.iloc[: int(top_k)]
        lower, upper, spreads = {}, {}, {}
        for k, r in results.items():
            lower[k], upper[k], spreads[k] = _whiskers(r, table.index, error_bars)
        display = cls(
            importances=table,
            lower=pd.DataFrame(lower, index=table.index),
            upper=pd.DataFrame(upper, index=table.index),
            spreads={k: v for k, v in spreads.items() if v},
        )
        return display.plot(ax=ax, **kwargs)

    def plot(
        self,
        ax: Any = None,
        *,
        error_bars: bool = True,
        legend: bool = True,
        colors: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> ImportanceDisplay:
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        error_bars : bool, default=True
            Draw the whiskers in ``lower`` and ``upper``.
        legend : bool, default=True
            A legend naming every method and what its whiskers mean (drawn
            whenever there are several methods or any whiskers).
        colors : sequence of colours, optional
            One per method.
        **kwargs
            Passed to every :meth:`matplotlib.axes.Axes.barh` (for example
            ``alpha``, ``edgecolor``, ``hatch``).

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.collections import LineCollection

        ax = resolve_axes(ax)
        n_rows, n_methods = self.importances.shape
        height = 0.8 / n_methods
        base = np.arange(n_rows)[::-1].astype(float)  # first row on top
        self.bars_, self.whiskers_ = [], []
        for k, method in enumerate(self.methods):
            y = base + 0.4 - height * (k + 0.5)
            value = self.importances[method].to_numpy()
            low = self.lower[method].to_numpy()
            high = self.upper[method].to_numpy()
            has_bars = error_bars and not np.isnan(low).all()
            spread = self.spreads.get(method)
            label = f"{method} ({spread})" if has_bars and spread else method
            label = textwrap.fill(label, 64, subsequent_indent="  ")
            style = {"height": height, "label": label, **kwargs}
            if colors is not None:
                style.setdefault("color", colors[k % len(colors)])
            self.bars_.append(ax.barh(y, value, **style))
            whiskers = None
            if has_bars:
                # Drawn where they are, not relative to the bar: the middle half
                # of skewed per-tree values can lie below the mean.
                keep = ~(np.isnan(low) | np.isnan(high))
                cap = height * 0.3
                yk, lk, hk = y[keep], low[keep], high[keep]
                segments = np.concatenate(
                    [
                        np.stack(
                            [np.column_stack([lk, yk]), np.column_stack([hk, yk])], 1
                        ),
                        np.stack(
                            [
                                np.column_stack([lk, yk - cap]),
                                np.column_stack([lk, yk + cap]),
                            ],
                            1,
                        ),
                        np.stack(
                            [
                                np.column_stack([hk, yk - cap]),
                                np.column_stack([hk, yk + cap]),
                            ],
                            1,
                        ),
                    ]
                )
                whiskers = LineCollection(
                    list(segments), colors="k", linewidths=1.0, zorder=3
                )
                ax.add_collection(whiskers)
            self.whiskers_.append(whiskers)
        ax.set_yticks(base, [str(i) for i in self.importances.index])
        ax.set_xlabel("importance")
        ax.axvline(0, color="0.3", linewidth=0.8)
        ax.autoscale_view()
        if legend and (n_methods > 1 or (error_bars and self.spreads)):
            # Below the axes: the labels say what the whiskers mean, and would
            # cover the bottom bars inside.
            ax.legend(
                fontsize="small",
                loc="upper center",
                bbox_to_anchor=(0.5, 0.0),
                bbox_transform=_below_xlabel(ax),
                ncols=1,
                frameon=False,
            )
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _below_xlabel(ax: Any) -> Any:
    """A transform from axes coordinates moved down past the x tick labels and
    the x label (their sizes in points, from matplotlib's settings), so that a
    legend anchored at ``(0.5, 0)`` starts under the label, not over it."""
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties
    from matplotlib.transforms import ScaledTranslation

    rc = mpl.rcParams
    tick_text = FontProperties(size=rc["xtick.labelsize"]).get_size_in_points()
    label_text = FontProperties(size=rc["axes.labelsize"]).get_size_in_points()
    drop = (
        float(rc["xtick.major.size"])
        + float(rc["xtick.major.pad"])
        + 1.2 * float(tick_text)
        + float(rc["axes.labelpad"])
        + 1.2 * float(label_text)
        + 2.0
    )
    return ax.transAxes + ScaledTranslation(0, -drop / 72, ax.figure.dpi_scale_trans)
