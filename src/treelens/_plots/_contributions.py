"""Arrays behind the contribution pictures, without matplotlib.

Both pictures read any result holding per-row, per-feature contributions and
the value they start from: :class:`~treelens.SaabasValues` (``values_``,
``bias_``), a SHAP result (``values_``, ``expected_value_``), or anything with
those attributes.  This module picks one output (a class) out of a
three-dimensional result, computes the waterfall's steps and the summary's
order, jitter and colours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._core._numbers import format_number
from .._exceptions import InputError

__all__ = [
    "Explanation",
    "WaterfallSteps",
    "explanation_of",
    "swarm_offsets",
    "value_colors",
    "waterfall_steps",
]

#: Attribute names a result may give its starting value under.
_BASE_NAMES = ("bias_", "expected_value_", "base_value_", "base_values_")


@dataclass(frozen=True)
class Explanation:
    """One output's contributions: shape (n_rows, n_features) and a base value."""

    values: NDArray[np.float64]
    base_value: float
    feature_names: tuple[str, ...]
    data: pd.DataFrame | None
    output_name: str | None
    row_names: tuple[Any, ...]


def _attribute(result: Any, name: str) -> Any:
    """``result.name_``, else ``result.name`` (SHAP results), else None."""
    value = getattr(result, f"{name}_", None)
    return getattr(result, name, None) if value is None else value


def _output_index(result: Any, values: NDArray[Any], output: Any, row: Any) -> int:
    n_outputs = values.shape[2]
    names = _attribute(result, "output_names") or tuple(
        str(k) for k in range(n_outputs)
    )
    names = tuple(map(str, names))
    if output is None:
        prediction = getattr(result, "prediction_", None)
        if row is not None and prediction is not None and np.ndim(prediction) == 2:
            return int(np.argmax(np.asarray(prediction)[row]))
        return n_outputs - 1
    if isinstance(output, (int, np.integer)) and not isinstance(output, bool):
        if str(output) in names:
            return names.index(str(output))
        if 0 <= int(output) < n_outputs:
            return int(output)
    elif str(output) in names:
        return names.index(str(output))
    raise InputError(
        f"`output` must be one of the result's outputs {list(names)} (or a "
        f"position below {n_outputs}); got {output!r}."
    )


def explanation_of(
    result: Any, *, output: Any = None, row: Any = None, X: Any = None
) -> Explanation:
    """The contributions of one output of ``result``.

    Parameters
    ----------
    result : object with ``values_`` and a base value
        ``values_`` of shape (n_rows, n_features) or (n_rows, n_features,
        n_outputs); the base value as ``bias_``, ``expected_value_``,
        ``base_value_`` or ``base_values_`` (a number, one per output, or one
        per row); optionally ``feature_names_`` (or ``feature_names``),
        ``data_`` (the rows), ``output_names_`` (or ``output_names``) and
        ``prediction_``.
    output : class label, position or None
        For three-dimensional values: which output.  Default: the output the
        row predicts highest when ``row`` is given and the result has
        ``prediction_``, else the last (the positive class of a binary model).
    row : int, optional
        Position of the row a single-row picture will show.
    X : DataFrame or array-like of shape (n_rows, n_features), optional
        The rows explained, for results that do not keep them (``data_``).
    """
    values = getattr(result, "values_", None)
    if values is None:
        raise InputError(
            "`result` must have `values_` (contributions of shape (n_rows, "
            f"n_features[, n_outputs])); got {type(result).__name__} without it."
        )
    values = np.asarray(values, dtype=np.float64)
    if values.ndim not in (2, 3):
        raise InputError(
            "`result.values_` must have 2 or 3 dimensions (rows, features[, "
            f"outputs]); got shape {values.shape}."
        )
    base = next(
        (
            getattr(result, n)
            for n in _BASE_NAMES
            if getattr(result, n, None) is not None
        ),
        None,
    )
    if base is None:
        raise InputError(
            "`result` must give the value contributions start from as `bias_` or "
            f"`expected_value_`; got {type(result).__name__} with neither."
        )
    base = np.asarray(base, dtype=np.float64)
    output_name = None
    if values.ndim == 3:
        k = _output_index(result, values, output, row)
        names = _attribute(result, "output_names")
        output_name = str(names[k]) if names is not None else str(k)
        values = values[:, :, k]
        if base.ndim >= 1 and base.shape[-1] == np.shape(result.values_)[2]:
            base = base[..., k]
    if base.ndim == 1 and base.size == values.shape[0]:
        base = base[row if row is not None else 0]
    if base.size != 1:
        raise InputError(
            "The result's base value must be one number per output; got shape "
            f"{base.shape} for values of shape {np.shape(result.values_)}."
        )
    data = getattr(result, "data_", None)
    if X is not None:
        data = X if hasattr(X, "iloc") else pd.DataFrame(np.asarray(X, dtype=object))
        if len(data) != values.shape[0]:
            raise InputError(
                f"X must hold the {values.shape[0]} rows the result explains; got "
                f"{len(data)} rows."
            )
    names = _attribute(result, "feature_names")
    if names is None:
        names = (
            tuple(map(str, data.columns))
            if data is not None
            else tuple(f"x{j}" for j in range(values.shape[1]))
        )
    if data is not None and set(names) <= set(map(str, data.columns)):
        data = data.set_axis(list(map(str, data.columns)), axis=1)[list(names)]
    rows = tuple(range(values.shape[0]))
    return Explanation(
        values, float(base.reshape(-1)[0]), tuple(names), data, output_name, rows
    )


@dataclass(frozen=True)
class WaterfallSteps:
    """The bars of a waterfall, from the base value to the prediction.

    ``labels[i]`` names step ``i``; it moves the running total from
    ``starts[i]`` to ``ends[i]``.  Steps are the ``max_display - 1`` largest
    contributions by magnitude, then (when features remain) one step for the
    rest grouped; ``prediction == ends[-1]``.
    """

    labels: tuple[str, ...]
    features: tuple[int, ...]
    contributions: NDArray[np.float64]
    starts: NDArray[np.float64]
    ends: NDArray[np.float64]
    base_value: float
    prediction: float
    n_grouped: int


def _value_text(value: Any) -> str:
    """A feature's value as the label shows it: numbers as the tables show them
    (thousands separated, four significant digits), a missing one as such."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "missing" if math.isnan(number) else format_number(number)


def waterfall_steps(
    contributions: NDArray[np.float64],
    base_value: float,
    feature_names: tuple[str, ...],
    feature_values: Any = None,
    *,
    max_display: int = 10,
) -> WaterfallSteps:
    """The steps of one row's waterfall (see :class:`WaterfallSteps`).

    Features with a zero contribution are left out of the named steps.
    """
    contributions = np.asarray(contributions, dtype=np.float64)
    order = np.argsort(-np.abs(contributions), kind="stable")
    order = order[contributions[order] != 0]
    shown = order[: max(1, max_display - 1)] if order.size > max_display else order
    rest = np.setdiff1d(order, shown)
    labels = []
    for j in shown:
        name = feature_names[j]
        if feature_values is not None:
            name = f"{name} = {_value_text(feature_values[j])}"
        labels.append(name)
    steps = list(contributions[shown])
    if rest.size:
        labels.append(f"{rest.size} other features")
        steps.append(float(contributions[rest].sum()))
    deltas = np.asarray(steps, dtype=np.float64)
    ends = base_value + np.cumsum(deltas)
    starts = ends - deltas
    prediction = float(base_value + contributions.sum())
    return WaterfallSteps(
        labels=tuple(labels),
        features=tuple(int(j) for j in shown),
        contributions=deltas,
        starts=starts,
        ends=ends,
        base_value=float(base_value),
        prediction=prediction,
        n_grouped=int(rest.size),
    )


def swarm_offsets(
    x: NDArray[np.float64], *, n_bins: int = 60, width: float = 0.4
) -> NDArray[np.float64]:
    """Vertical offsets that spread points of close ``x`` apart (beeswarm-like).

    Points are binned along ``x``; within a bin they alternate above and below
    the line, one step further each time, scaled so the fullest bin spans
    ``width`` on each side.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)
    low, high = np.nanmin(x), np.nanmax(x)
    span = high - low if high > low else 1.0
    bins = np.minimum(((x - low) / span * n_bins).astype(np.intp), n_bins - 1)
    order = np.argsort(bins, kind="stable")
    sorted_bins = bins[order]
    starts = np.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = np.arange(x.size) - starts  # position within its bin
    level = (rank + 1) // 2
    sign = np.where(rank % 2 == 1, 1.0, -1.0)
    fullest = max(1, int(np.bincount(bins).max()) // 2)
    offsets = np.empty_like(x)
    offsets[order] = sign * level * (width / fullest)
    return offsets


def value_colors(column: Any) -> NDArray[np.float64]:
    """A feature's values as colour positions in [0, 1] (their rank), NaN where
    the value is missing or not a number."""
    numbers = pd.to_numeric(
        pd.Series(np.asarray(column, dtype=object)), errors="coerce"
    )
    values = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    out = np.full(values.shape, np.nan)
    known = ~np.isnan(values)
    if known.sum() == 0:
        return out
    ranks = pd.Series(values[known]).rank(method="average").to_numpy()
    n = int(known.sum())
    out[known] = (ranks - 1) / (n - 1) if n > 1 else 0.5
    return out
