"""ImportanceDisplay: horizontal bars of feature importances."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._exceptions import InputError
from ._common import require_matplotlib, resolve_axes

__all__ = ["ImportanceDisplay"]


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


class ImportanceDisplay:
    """Horizontal bars of importances, sorted, with the spread across trees.

    Several results (for example MDI on training data, MDI replayed on test data,
    permutation importance) are drawn side by side as grouped bars.

    Attributes
    ----------
    importances_ : pandas.DataFrame of shape (n_shown, n_methods)
        The importances drawn, one column per result, rows from the top bar down.
    std_ : pandas.DataFrame of shape (n_shown, n_methods)
        Error bar half-lengths (NaN where a result has none).
    methods_ : list of str
    bars_ : list of matplotlib BarContainer
        One per method.
    ax_, figure_

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> result = SimpleNamespace(importances_=pd.Series({"a": 0.7, "b": 0.1, "c": 0.2}),
    ...                          std_=None, method="mdi")
    >>> ImportanceDisplay.from_result(result, top_k=2).importances_.index.tolist()
    ['a', 'c']
    """

    def __init__(self, *, importances: Any, std: Any) -> None:
        self.importances_ = importances
        self.std_ = std
        self.methods_ = list(importances.columns)

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any = None,
        y: Any = None,
        *,
        top_k: int | None = None,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> ImportanceDisplay:
        """Draw the MDI of a tree model (held-out MDI when X and y are given).

        Parameters
        ----------
        estimator : fitted tree model or Forest
        X, y : array-like, optional
            Data to replay the statistics on (see :func:`mdi_importance`).
        top_k : int, optional
        ax : matplotlib Axes, optional

        Returns
        -------
        ImportanceDisplay
        """
        from .._importance._mdi import mdi_importance

        result = mdi_importance(estimator, X, y)
        return cls.from_result(result, top_k=top_k, ax=ax, **plot_kwargs)

    @classmethod
    def from_result(
        cls,
        result: Any,
        *,
        top_k: int | None = None,
        sort: bool = True,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> ImportanceDisplay:
        """Draw one importance result, or several side by side.

        Parameters
        ----------
        result : importance result, sequence of them, or mapping name -> result
            Anything with ``importances_`` (Series indexed by feature), and
            optionally ``std_`` (Series or None) and ``method`` (str).
        top_k : int, optional
            Keep the ``top_k`` features most important under the first result.
        sort : bool, default=True
            Order by the first result's importance, largest on top.
        ax : matplotlib Axes, optional

        Returns
        -------
        ImportanceDisplay
        """
        import pandas as pd

        results = _as_results(result)
        table = pd.DataFrame(
            {k: pd.Series(r.importances_, dtype=float) for k, r in results.items()}
        )
        std = pd.DataFrame(
            {
                k: (
                    pd.Series(r.std_, dtype=float).reindex(table.index)
                    if getattr(r, "std_", None) is not None
                    else pd.Series(np.nan, index=table.index)
                )
                for k, r in results.items()
            }
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
        display = cls(importances=table, std=std.loc[table.index])
        return display.plot(ax=ax, **plot_kwargs)

    def plot(
        self, ax: Any = None, *, error_bars: bool = True, legend: bool = True
    ) -> ImportanceDisplay:
        """Draw the bars.

        Returns
        -------
        self
        """
        require_matplotlib()
        ax = resolve_axes(ax)
        n_rows, n_methods = self.importances_.shape
        height = 0.8 / n_methods
        base = np.arange(n_rows)[::-1].astype(float)  # first row on top
        self.bars_ = []
        for k, method in enumerate(self.methods_):
            y = base + 0.4 - height * (k + 0.5)
            err = self.std_[method].to_numpy()
            self.bars_.append(
                ax.barh(
                    y,
                    self.importances_[method].to_numpy(),
                    height=height,
                    xerr=err if error_bars and not np.isnan(err).all() else None,
                    capsize=2,
                    label=method,
                )
            )
        ax.set_yticks(base, [str(i) for i in self.importances_.index])
        ax.set_xlabel("importance")
        ax.axvline(0, color="0.3", linewidth=0.8)
        if legend and n_methods > 1:
            ax.legend(fontsize="small", loc="lower right")
        self.ax_, self.figure_ = ax, ax.figure
        return self
