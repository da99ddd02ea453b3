"""Filling missing values in counterfactuals (``fill_missing``, ``fill_cost``).

By default a missing value stays missing: the searches of
:mod:`treelens._counterfactual._categorical` fix it as missing, and it is
routed as the model routes it.  A column the user allows to be filled is, for
each row where it is missing, searched both ways, one more choice of the
row's assignments:

- *stays missing*: price 0, routed as the model routes a missing value;
- *filled*: price ``fill_cost[j]`` (default 1, the unit of a category change),
  and then

  - a numeric (or boolean) column takes a value that starts from its median in
    the reference data (``nanmedian``, rounded for integer columns, clipped into
    the column's bounds) and moves from there at the cost's usual terms;
  - a categorical column takes any category the constraints allow, with no
    price beyond the fill cost (a change-cost table has no "missing" label).

So the cost of a counterfactual is

    cost = numeric cost (the norm over the numeric columns, a filled value
           measured from its start)
           + sum of the change costs of the categorical columns changed
           + sum of the fill costs of the values filled,

and the exact search, the least over every assignment, stays exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._core._validation import feature_index
from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest
    from ._constraints import Constraints, ResolvedConstraints

__all__ = ["FillCost", "FillMissing", "FillPlan", "resolve_fill"]

FillMissing = bool | str | int | Sequence[str | int] | None
FillCost = float | Mapping[str, float] | None


@dataclass(frozen=True, eq=False)
class FillPlan:
    """Which missing values may be filled, at what price, from where.

    Attributes
    ----------
    cost : ndarray of shape (n_features,)
        Fill cost per column; ``inf`` where a missing value must stay missing.
    start : ndarray of shape (n_features,)
        Where a filled numeric value starts (its cost is measured from there):
        the column's median in the reference data; NaN for categorical columns
        and columns that are not filled.
    """

    cost: NDArray[np.float64]
    start: NDArray[np.float64]

    @property
    def allowed(self) -> NDArray[np.bool_]:
        """Mask of shape (n_features,): columns whose missing values may be filled."""
        return np.isfinite(self.cost)

    def fitted_to(self, constraints: ResolvedConstraints) -> FillPlan:
        """The plan with each start rounded on integer columns and clipped into
        the column's bounds (so a filled row is a row the constraints accept)."""
        start = np.where(constraints.integer, np.round(self.start), self.start)
        lower = np.where(constraints.integer, np.ceil(constraints.lower), -np.inf)
        upper = np.where(constraints.integer, np.floor(constraints.upper), np.inf)
        lower = np.maximum(lower, constraints.lower)
        upper = np.minimum(upper, constraints.upper)
        with np.errstate(invalid="ignore"):
            start = np.clip(start, lower, upper)
        return FillPlan(cost=self.cost, start=start)


def resolve_fill(
    forest: Forest,
    fill_missing: Any,
    fill_cost: Any,
    reference: NDArray[np.float64] | None,
    constraints: Constraints | None,
) -> FillPlan | None:
    """Check ``fill_missing`` and ``fill_cost`` and build the plan (None: every
    missing value stays missing).

    Parameters
    ----------
    forest : Forest
    fill_missing : bool, str, int or sequence of str or int, or None
        ``False`` or None: none; ``True``: every column but immutable and dropped
        ones; else the columns named.
    fill_cost : float, mapping of column to float, or None
        Price of filling one value: 1 (None), one number, or per column (others 1).
    reference : ndarray of shape (n_reference, n_features) or None
        The reference rows as codes (medians are taken over them).
    constraints : Constraints or None
        The user's constraints (an immutable column is never filled).

    Raises
    ------
    InputError
        On an unknown column, an immutable column named, a fill cost that is not
        a finite non-negative number, no reference data, or a numeric column
        with no value in it.
    """
    columns = _fill_columns(forest, fill_missing, constraints)
    if fill_cost is not None and not columns.size:
        raise InputError(
            "`fill_cost` prices the missing values `fill_missing` allows to be "
            f"filled; expected fill_missing too, got fill_missing={fill_missing!r}."
        )
    if not columns.size:
        return None
    cost = np.full(forest.n_features, np.inf)
    cost[columns] = _price(fill_cost, "fill_cost")
    if isinstance(fill_cost, Mapping):
        for key, value in fill_cost.items():
            j = _index(forest, key, "fill_cost")
            if j not in columns:
                raise InputError(
                    f"`fill_cost` names {forest.feature_names[j]!r}, which "
                    "`fill_missing` does not allow to be filled; expected one of "
                    f"{[forest.feature_names[c] for c in columns]}."
                )
            cost[j] = _price(value, f"fill_cost of {forest.feature_names[j]!r}")
    if reference is None:
        raise InputError(
            "`fill_missing` starts a filled value from its column's median in the "
            "reference data; expected `reference` (typically the training set), "
            "got None."
        )
    start = np.full(forest.n_features, np.nan)
    numeric = [j for j in columns.tolist() if not forest.features[j].is_categorical]
    if numeric:
        seen = np.asarray(~np.isnan(reference[:, numeric]).all(axis=0))
        empty = [j for j, any_value in zip(numeric, seen.tolist()) if not any_value]
        if empty:
            raise InputError(
                f"Column {forest.feature_names[empty[0]]!r} has no value in the "
                "reference data to fill a missing value from; expected at least one "
                "non-missing value (or leave the column out of `fill_missing`)."
            )
        start[numeric] = np.nanmedian(reference[:, numeric], axis=0)
    return FillPlan(cost=cost, start=start)


def _index(forest: Forest, key: Any, what: str) -> int:
    try:
        return feature_index(forest, key)
    except InputError as exc:
        raise InputError(
            f"`{what}` names a column the model does not have: {exc}"
        ) from None


def _price(value: Any, what: str) -> float:
    if isinstance(value, Mapping) or value is None:
        return 1.0
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not np.isfinite(value)
        or value < 0
    ):
        raise InputError(
            f"`{what}` must be a finite non-negative number (the price of filling "
            f"one missing value); got {value!r}."
        )
    return float(value)


def _fill_columns(
    forest: Forest, fill_missing: Any, constraints: Constraints | None
) -> NDArray[np.intp]:
    """Indices of the columns ``fill_missing`` allows to be filled."""
    immutable = {
        feature_index(forest, key) for key in getattr(constraints, "immutable", ())
    }
    if fill_missing is None or fill_missing is False:
        return np.empty(0, dtype=np.intp)
    if fill_missing is True:
        keep = [
            j
            for j, spec in enumerate(forest.features)
            if j not in immutable and not spec.dropped
        ]
        return np.array(keep, dtype=np.intp)
    keys = [fill_missing] if isinstance(fill_missing, (str, int, np.integer)) else None
    if keys is None:
        try:
            keys = list(fill_missing)
        except TypeError:
            raise InputError(
                "`fill_missing` must be True, False, or column names or positions; "
                f"got {type(fill_missing).__name__}."
            ) from None
    out = []
    for key in keys:
        if isinstance(key, bool):
            raise InputError(
                "`fill_missing` must be True, False, or column names or positions; "
                f"got the list {fill_missing!r}."
            )
        j = _index(forest, key, "fill_missing")
        if j in immutable:
            raise InputError(
                f"`fill_missing` names {forest.feature_names[j]!r}, which the "
                "constraints declare immutable; expected mutable columns only."
            )
        out.append(j)
    return np.unique(np.array(out, dtype=np.intp))
