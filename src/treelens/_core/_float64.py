"""Forests that route every float64 value as the model does after its cast.

A model comparing in float32 sends ``x`` left at threshold ``t`` when
``float32(x) <= t``.  Casting is monotone, so the float64 values going left are
exactly those up to one bound, the largest float64 ``T`` with
``float32(T) <= t``; comparing ``x <= T`` with no cast routes every float64
``x`` the same way.  :func:`float64_forest` rewrites a forest's thresholds so:
searches over its cells then range over every float64 value a user may give,
not only over the values of the model's dtype (a float64 value between two
float32 values is sent where the cast rounds it, up to half a float32 spacing
away).

With ``f`` the largest float32 not above ``t`` and ``g`` the next one, the cast
rounds to nearest with ties to even: values below the midpoint ``m = (f + g) / 2``
become ``f`` or less, values above it ``g``, and ``m`` itself becomes ``f`` when
``f``'s significand is even.  So ``T = m`` then, and the float64 just below
``m`` otherwise (``m`` has one bit more than a float32 and is a float64).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._cache import derived
from ._forest import Forest, Tree

__all__ = ["float64_forest", "float64_thresholds", "float64_tree"]

# Where float32 overflows: the value the cast would round up to past its largest.
_FLOAT32_END = 2.0**128


def float64_thresholds(threshold: Any, dtype: Any) -> NDArray[np.float64]:
    """The largest float64 ``T`` with ``T.astype(dtype) <= t``, for every ``t``.

    Parameters
    ----------
    threshold : array-like of float64
        Thresholds ``t`` of ``x.astype(dtype) <= t``; NaN and infinite ones are
        returned as they are.
    dtype : numpy dtype
        The dtype the model casts inputs to (float32 or float64).

    Returns
    -------
    ndarray of float64, the shape of ``threshold``
        Every float64 ``x`` satisfies ``x <= T`` exactly when
        ``x.astype(dtype) <= t``.

    Examples
    --------
    >>> import numpy as np
    >>> T = float64_thresholds([0.1], np.float32)[0]
    >>> left = lambda x: float(np.float32(x)) <= 0.1  # the cast, compared as doubles
    >>> left(T), left(np.nextafter(T, 1))
    (True, False)
    """
    t = np.asarray(threshold, dtype=np.float64)
    if np.dtype(dtype) == np.float64:
        return t.copy()
    if np.dtype(dtype) != np.float32:
        raise TypeError(f"expected a float32 or float64 dtype; got {np.dtype(dtype)}.")
    with np.errstate(over="ignore", invalid="ignore"):
        f = t.astype(np.float32)
        f = np.where(f.astype(np.float64) > t, np.nextafter(f, np.float32(-np.inf)), f)
        g = np.nextafter(f, np.float32(np.inf)).astype(np.float64)
        low = f.astype(np.float64)
    # Past float32's range the cast gives +-inf: stand in the value it rounds to.
    low = np.where(np.isneginf(low), -_FLOAT32_END, low)
    g = np.where(np.isposinf(g), _FLOAT32_END, g)
    middle = 0.5 * (low + g)
    even = (f.view(np.uint32) & 1) == 0
    out = np.where(even, middle, np.nextafter(middle, -np.inf))
    return np.where(np.isfinite(t), out, t)


def float64_tree(tree: Tree, dtype: Any) -> Tree:
    """``tree`` with every numeric threshold replaced by :func:`float64_thresholds`
    (leaves and categorical nodes keep theirs)."""
    if np.dtype(dtype) == np.float64:
        return tree
    split = (tree.children_left >= 0) & ~tree.is_categorical
    threshold = tree.threshold.copy()
    threshold[split] = float64_thresholds(threshold[split], dtype)
    return dataclasses.replace(tree, threshold=threshold)


def float64_forest(forest: Forest) -> Forest:
    """The forest that routes float64 inputs, uncast, as ``forest`` routes them
    after its cast to ``input_dtype`` (``forest`` itself when that is float64).

    Cached on ``forest``.  Its predictions are the model's for every float64
    input; it is meant for searches over cells (its own routing is not
    compiled, so route many rows through ``forest``).
    """
    if np.dtype(forest.input_dtype) == np.float64:
        return forest

    def build() -> Forest:
        trees = tuple(float64_tree(tree, forest.input_dtype) for tree in forest.trees)
        return dataclasses.replace(forest, trees=trees, input_dtype=np.float64)

    return derived(forest, "float64_forest", build)
