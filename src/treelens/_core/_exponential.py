"""The float32 exponential as the C library computes it.

XGBoost's log-link objectives (``count:poisson``, ``reg:gamma``, ``reg:tweedie``)
predict ``expf(margin)`` in float32, with the C library's ``expf``.  numpy's
float32 ``exp`` is its own vectorized approximation and differs from it in the
last bit on about a third of the values.  The float64 exponential rounded to
float32 is the correctly rounded result, which glibc's ``expf`` (at most 0.502
units in the last place from the exact value) returns everywhere but near the
midpoints between two float32 values; only there is the C library's ``expf``
called, value by value, through :mod:`ctypes`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["float32_exp"]

# Values whose float64 exponential lies within this share of a float32 unit in
# the last place of a midpoint are exponentiated by the C library.
_NEAR_MIDPOINT = 0.005


@functools.cache
def _c_expf() -> Any:
    """The C library's ``expf``, or None where it cannot be loaded."""
    name = ctypes.util.find_library("m") or ctypes.util.find_library("c")
    try:
        expf = ctypes.CDLL(name).expf
    except (OSError, AttributeError, TypeError):
        return None
    expf.restype, expf.argtypes = ctypes.c_float, [ctypes.c_float]
    return expf


def float32_exp(x: NDArray[Any]) -> NDArray[np.float32]:
    """``expf`` of every value of ``x`` (float32), as the C library gives it.

    Examples
    --------
    >>> import numpy as np
    >>> float32_exp(np.array([0.0, 1.0], dtype=np.float32)).tolist()
    [1.0, 2.7182817459106445]
    """
    x = np.asarray(x, dtype=np.float32)
    wide = np.exp(x.astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        out = wide.astype(np.float32)
        share = np.abs(wide - out.astype(np.float64)) / np.spacing(out).astype(
            np.float64
        )
    near = np.flatnonzero(np.isfinite(share) & (np.abs(share - 0.5) < _NEAR_MIDPOINT))
    expf = _c_expf()
    if near.size and expf is not None:
        flat_x, flat_out = x.reshape(-1), out.reshape(-1)
        flat_out[near] = [expf(float(v)) for v in flat_x[near].tolist()]
    return out
