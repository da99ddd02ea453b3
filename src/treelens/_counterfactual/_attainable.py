"""Whether any combination of leaves can put a regressor's prediction in a range.

For a target range ``[low, high]`` the exact search asks for leaves, one per
tree, whose scores add up to a raw score in ``[raw_low, raw_high]``:

    raw_low <= base + sum_t s_t <= raw_high,

with ``s_t`` the score of the leaf reached in tree ``t``.  Which leaves a point
reaches together is left aside here: the sums of *every* choice of one leaf
per tree form a finite set, and when none of them lies in the range, no point
does, whatever the constraints: the range is infeasible without a solve.  That
is what makes a range between two attainable predictions (narrower than the
step from one to the next) answer at once instead of at the time limit.

The set is enumerated by meeting in the middle: the trees are split into two
halves of about equal numbers of combinations, the sums of one half are sorted,
and for every sum ``a`` of the other a binary search looks for a sum in
``[raw_low - base - a, raw_high - base - a]``.  Only while each half holds at
most :data:`MAX_SUMS` sums (a single tree, or a few small ones); beyond that
nothing is claimed and the solver decides.  A sum within the rounding error of
the model's additions (float64, or float32 for XGBoost) of the range's ends
counts as inside, so the proof never depends on the order in which a model
adds its trees nor on the dtype it adds them in.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_SUMS", "no_leaves_meet"]

#: Most distinct sums of leaf scores enumerated per half of the trees.
MAX_SUMS = 1 << 16


def no_leaves_meet(
    scores: list[NDArray[np.float64]],
    base: float,
    low: float,
    high: float,
    *,
    score_dtype: Any = np.float64,
) -> bool:
    """Whether it is proven that no choice of one score per tree adds up to
    ``base + sum`` in ``[low, high]`` (False: some may, or too many to tell).

    Parameters
    ----------
    scores : list of ndarray
        Per tree, the scores of its leaves (in any order, repeats allowed).
        A tree with none (every leaf left out) admits no choice: True.
    base : float
        What the model adds to every sum.
    low, high : float
        The raw range (infinite ends allowed).
    score_dtype : numpy dtype, default=float64
        The dtype the model adds the scores in (:attr:`Forest.score_dtype`):
        float32 for XGBoost, whose sums are rounded to float32 at every tree,
        a far larger error than float64's.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> trees = [np.array([0.0, 1.0]), np.array([0.0, 10.0])]
    >>> no_leaves_meet(trees, 0.0, 2.0, 9.0)    # sums 0, 1, 10, 11
    True
    >>> no_leaves_meet(trees, 0.0, 10.5, 12.0)
    False
    """
    if not scores:
        return not low <= base <= high
    values = [np.unique(np.asarray(s, dtype=np.float64)) for s in scores]
    if any(v.size == 0 for v in values):
        # A tree with no leaf left (none of enough support): no choice exists.
        return True
    size = float(np.prod([v.size for v in values], dtype=np.float64))
    if size > float(MAX_SUMS) ** 2:
        return False
    # Rounding of the model's additions (in its dtype, in its own order): a
    # few units in the last place of the largest partial sum per addition.
    largest = abs(base) + sum(float(np.abs(v).max()) for v in values)
    ends = [abs(e) for e in (low, high) if np.isfinite(e)]
    eps = max(float(np.finfo(score_dtype).eps), float(np.finfo(np.float64).eps))
    tolerance = 4 * (len(values) + 2) * eps
    tolerance *= max([1.0, largest, *ends])
    first, second = _halves(values)
    left, right = _sums(first), _sums(second)
    if left is None or right is None:
        return False
    need_low, need_high = low - base - tolerance, high - base + tolerance
    start = np.searchsorted(right, need_low - left, side="left")
    stop = np.searchsorted(right, need_high - left, side="right")
    return bool((stop <= start).all())


def _halves(
    values: list[NDArray[np.float64]],
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """The trees in two groups of about equal numbers of combinations (the
    largest trees first, each to the group with fewer so far)."""
    order = sorted(range(len(values)), key=lambda t: -values[t].size)
    groups: tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]] = ([], [])
    logs = [0.0, 0.0]
    for t in order:
        g = 0 if logs[0] <= logs[1] else 1
        groups[g].append(values[t])
        logs[g] += float(np.log(values[t].size))
    return groups


def _sums(values: list[NDArray[np.float64]]) -> NDArray[np.float64] | None:
    """Sorted distinct sums of one value per array (None past :data:`MAX_SUMS`)."""
    sums = np.zeros(1)
    for v in values:
        if sums.size * v.size > MAX_SUMS:
            return None
        sums = np.unique(np.add.outer(sums, v).ravel())
    return sums
