"""Counterfactual results as flat tables: one schema for Parquet parts and Dask.

A table has one row per instance: ``row`` (position in its part), ``found``,
``cost``, ``reason`` (and ``status``, ``gap`` for optimal counterfactuals) and the
counterfactual values as ``cf_<feature>`` (NaN where none was found).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._core._forest import Forest
from ._problem import CounterfactualResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["counterfactual_columns", "counterfactual_table"]

ColumnKind = Literal["int", "bool", "float", "str"]


def counterfactual_columns(forest: Forest, optimal: bool) -> dict[str, ColumnKind]:
    """The columns of a counterfactual table and the kind of value each holds."""
    columns: dict[str, ColumnKind] = {
        "row": "int",
        "found": "bool",
        "cost": "float",
        "reason": "str",
    }
    if optimal:
        columns |= {"status": "str", "gap": "float"}
    columns |= {f"cf_{name}": "float" for name in forest.feature_names}
    return columns


def counterfactual_table(
    result: CounterfactualResult, forest: Forest, first_row: int, optimal: bool
) -> pd.DataFrame:
    """One row per instance of ``result``, numbered from ``first_row``.

    Parameters
    ----------
    result : CounterfactualResult
    forest : Forest
        The model's Forest (for the feature names).
    first_row : int
        Number of the first row (its position in its part).
    optimal : bool
        Whether the result comes from ``optimal_counterfactual`` (adds ``status``
        and ``gap``).

    Returns
    -------
    DataFrame
        With the columns of :func:`counterfactual_columns`, in that order.
    """
    import pandas as pd

    found = np.asarray(result.found_, dtype=bool)
    data: dict[str, Any] = {
        "row": np.arange(first_row, first_row + found.size, dtype=np.int64),
        "found": found,
        "cost": np.asarray(result.cost_, dtype=np.float64),
        "reason": [None if r is None else str(r) for r in result.reason_],
    }
    if optimal:
        n = found.size
        status = [None] * n if result.status_ is None else result.status_
        data["status"] = [None if s is None else str(s) for s in status]
        data["gap"] = (
            np.full(n, np.nan)
            if result.gap_ is None
            else np.asarray(result.gap_, dtype=np.float64)
        )
    X_cf = result.X_cf_
    if hasattr(X_cf, "to_numpy"):
        # Nullable columns (rows not found are <NA> in "Int64"): NaN here.
        X_cf = X_cf.to_numpy(dtype=np.float64, na_value=np.nan)
    X_cf = np.asarray(X_cf, dtype=np.float64).reshape(found.size, -1)
    for j, name in enumerate(forest.feature_names):
        data[f"cf_{name}"] = X_cf[:, j]
    return pd.DataFrame(data)
