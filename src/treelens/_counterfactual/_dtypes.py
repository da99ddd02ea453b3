"""The user's dtypes kept in a DataFrame of counterfactuals with rows missing.

A row without a counterfactual is missing (NaN) in every column of ``X_cf_``.
A numpy integer or bool column cannot hold a missing value, so decoding such a
frame against the user's rows gives float64 for those columns.  Where every
value found is whole (or 0/1), the column takes pandas' nullable counterpart
of the user's dtype instead (``int64`` -> ``Int64``, ``uint8`` -> ``UInt8``,
``bool`` -> ``boolean``), with ``<NA>`` in the rows not found: the dtype says
what the column is, and the found rows predict as they are.  A column whose
found values are not whole (an integer column moved without an integer
constraint) stays float64: no integer dtype holds them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["nullable_like"]


def nullable_like(frame: Any, like: Any) -> Any:
    """``frame`` with each float column that ``like`` holds as a numpy integer
    or bool column, and whose values are missing or whole (0/1 for bool), in
    the nullable dtype of ``like``'s column.

    Parameters
    ----------
    frame : DataFrame
        Counterfactuals decoded in the user's columns (missing rows NaN).
    like : DataFrame
        The user's rows (their columns and dtypes).

    Returns
    -------
    DataFrame
        ``frame`` itself when no column changes, else a copy.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> like = pd.DataFrame({"n": [1, 2], "flag": [True, False], "x": [0.5, 1.0]})
    >>> frame = pd.DataFrame({"n": [3.0, np.nan], "flag": [0.0, np.nan],
    ...                       "x": [0.7, np.nan]})
    >>> nullable_like(frame, like).dtypes.astype(str).tolist()
    ['Int64', 'boolean', 'float64']
    """
    changes: dict[Any, Any] = {}
    for name in frame.columns:
        if name not in like.columns:
            continue
        dtype, kind = like[name].dtype, frame[name].dtype.kind
        if not isinstance(dtype, np.dtype) or dtype.kind not in "iub":
            continue
        if kind == "O" and dtype.kind == "b":
            # Flags decoded as objects: True, False and None.
            values = frame[name].to_numpy(dtype=object)
            if all(v is None or isinstance(v, (bool, np.bool_)) for v in values):
                changes[name] = frame[name].astype("boolean")
            continue
        if kind != "f":
            continue
        values = frame[name].to_numpy(dtype=np.float64)
        present = values[~np.isnan(values)]
        if dtype.kind == "b":
            fits = bool(np.isin(present, (0.0, 1.0)).all())
            nullable = "boolean"
        else:
            info = np.iinfo(dtype)
            fits = bool(
                (present == np.round(present)).all()
                and (present >= info.min).all()
                and (present <= info.max).all()
            )
            nullable = f"{'UInt' if dtype.kind == 'u' else 'Int'}{8 * dtype.itemsize}"
        if fits:
            changes[name] = frame[name].astype(nullable)
    if not changes:
        return frame
    out = frame.copy()
    for name, column in changes.items():
        out[name] = column
    return out
