"""The exponential and logarithm as the C library computes them, and XGBoost's
float32 links built on them.

XGBoost computes in float32 with the C library's ``expf`` and ``logf``: its base
margin (``-logf(1 / base_score - 1)`` for ``binary:logistic``, ``logf(base_score)``
for the log links), its probabilities (``1 / (expf(-raw) + 1)``, a softmax over
``expf(raw - max)``) and its log-link predictions (``expf(raw)``).  numpy's
float32 ``exp`` and ``log`` are its own vectorized approximations and differ from
them in the last bit on about a third of the values.  The float64 function
rounded to float32 is the correctly rounded result, which glibc's ``expf`` (at
most 0.502 units in the last place from the exact value) returns everywhere but
near the midpoints between two float32 values; only there is the C library
called, value by value, through :mod:`ctypes`.  ``logf`` is called for every
value: it is only taken of base scores.

LightGBM exponentiates its float64 raw scores (the log links' ``exp(raw)``) with
the C library's ``exp``, which numpy's ``exp`` differs from in the last bit on
about one value in twenty.  The same scheme gives it in float64: the exponential
in extended precision (``numpy.longdouble``, 64 bits of mantissa on x86)
rounded to float64, and the C library's value near the midpoints.  Where
``longdouble`` is no wider than float64, every value goes to the C library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "float32_exp",
    "float32_log",
    "float64_exp",
    "lightgbm_softmax",
    "xgboost_sigmoid",
    "xgboost_softmax",
]

# Values whose wider exponential lies within this share of a unit in the last
# place of a midpoint are exponentiated by the C library.
_NEAR_MIDPOINT = 0.005


@functools.cache
def _c_function(name: str) -> Any:
    """The C library's function ``name`` (float when it ends in ``f``, else
    double), or None where it cannot be loaded."""
    library = ctypes.util.find_library("m") or ctypes.util.find_library("c")
    try:
        function = getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError, TypeError):
        return None
    kind = ctypes.c_float if name.endswith("f") else ctypes.c_double
    function.restype, function.argtypes = kind, [kind]
    return function


def _as_c_library(x: NDArray[Any], wide: NDArray[Any], name: str) -> NDArray[Any]:
    """``wide`` (the function of ``x`` in a wider dtype) rounded to the dtype of
    ``x``, with the C library's own value where it lies near a midpoint."""
    with np.errstate(invalid="ignore", over="ignore"):
        out = wide.astype(x.dtype)
        share = np.abs(wide - out.astype(wide.dtype)) / np.spacing(out).astype(
            wide.dtype
        )
    near = np.flatnonzero(np.isfinite(share) & (np.abs(share - 0.5) < _NEAR_MIDPOINT))
    function = _c_function(name)
    if near.size and function is not None:
        flat_x, flat_out = x.reshape(-1), out.reshape(-1)
        flat_out[near] = [function(float(v)) for v in flat_x[near].tolist()]
    return out


def float32_exp(x: NDArray[Any]) -> NDArray[np.float32]:
    """``expf`` of every value of ``x`` (float32), as the C library gives it.

    Examples
    --------
    >>> import numpy as np
    >>> float32_exp(np.array([0.0, 1.0], dtype=np.float32)).tolist()
    [1.0, 2.7182817459106445]
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    return _as_c_library(x, np.exp(x.astype(np.float64)), "expf")


def float64_exp(x: NDArray[Any]) -> NDArray[np.float64]:
    """``exp`` of every value of ``x`` (float64), as the C library gives it.

    Examples
    --------
    >>> import numpy as np
    >>> float64_exp(np.array([0.0, 1.0])).tolist()
    [1.0, 2.718281828459045]
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    function = _c_function("exp")
    if np.finfo(np.longdouble).nmant <= np.finfo(np.float64).nmant:
        if function is None:
            return np.exp(x)
        values = [function(float(v)) for v in x.reshape(-1).tolist()]
        return np.array(values, dtype=np.float64).reshape(x.shape)
    with np.errstate(over="ignore"):
        wide = np.exp(x.astype(np.longdouble))
    return _as_c_library(x, wide, "exp")


def lightgbm_softmax(raw: NDArray[Any]) -> NDArray[np.float64]:
    """LightGBM's softmax of each row of ``raw`` (n_rows, n_classes): the C
    library's ``exp(raw - max)``, summed class after class, each divided by
    that sum."""
    raw = np.asarray(raw, dtype=np.float64)
    shifted = float64_exp(raw - raw.max(axis=1, keepdims=True))
    total = np.zeros(raw.shape[0])
    for k in range(raw.shape[1]):  # in class order, as LightGBM adds them
        total += shifted[:, k]
    return shifted / total[:, None]


def float32_log(x: NDArray[Any]) -> NDArray[np.float32]:
    """``logf`` of every value of ``x`` (float32), as the C library gives it.

    glibc's ``logf`` strays further from the exact value than ``expf`` (up to
    0.82 units in the last place), so every value is passed to it: meant for
    the few values of a model's base scores, not for data.
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    function = _c_function("logf")
    with np.errstate(divide="ignore", invalid="ignore"):
        if function is None:
            return np.log(x.astype(np.float64)).astype(np.float32)
    values = [function(float(v)) for v in x.reshape(-1).tolist()]
    return np.array(values, dtype=np.float32).reshape(x.shape)


def xgboost_sigmoid(raw: NDArray[Any]) -> NDArray[np.float32]:
    """XGBoost's float32 sigmoid: ``1 / (expf(min(-raw, 88.7)) + 1 + 1e-16)``."""
    one = np.float32(1.0)
    z = np.minimum(-np.asarray(raw, dtype=np.float32), np.float32(88.7))
    return one / ((float32_exp(z) + one) + np.float32(1e-16))


def xgboost_softmax(raw: NDArray[Any]) -> NDArray[np.float32]:
    """XGBoost's float32 softmax of each row of ``raw`` (n_rows, n_classes):
    ``expf(raw - max)``, summed in float64 class after class, each divided by
    that sum rounded to float32."""
    raw = np.asarray(raw, dtype=np.float32)
    shifted = float32_exp(raw - raw.max(axis=1, keepdims=True))
    total = np.zeros(raw.shape[0])
    for k in range(raw.shape[1]):  # in class order, as XGBoost adds them
        total += shifted[:, k]
    return shifted / total.astype(np.float32)[:, None]
