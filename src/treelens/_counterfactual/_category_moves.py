"""How feature tweaking moves a categorical column, as tables over the leaves.

A categorical feature with ``k`` categories has, in the leaf boxes, the codes
each leaf admits: ``admitted`` of shape ``(n_leaves, k + 1)`` (code ``k`` is a
category the model never saw).  A :class:`~._categorical.CategoryPlan` gives the
codes a counterfactual may hold (``ok``, shape ``(k + 1,)``) and the cost of
each change (``cost``, shape ``(k + 1, k + 1)``, from rows to columns).  For a
row whose code is ``c`` and a leaf ``l``:

- the leaf is within reach iff it admits ``c`` and ``c`` is allowed, or it
  admits an allowed category ``t < k`` other than ``c``;
- a candidate built from the leaf keeps ``c`` when the leaf admits it and it is
  allowed, else moves to the admitted allowed category ``t < k`` of least cost
  (the lowest code on ties), at that cost (``inf`` when there is none).

All of it depends on ``(c, l)`` alone, so it is computed once per leaf boxes,
feature, ``ok`` and ``cost``, as tables of shape ``(k + 1, n_leaves)`` kept
with the boxes; a search then reads one entry per row or candidate.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._core._boxes import LeafBoxes
from .._core._cache import derived

__all__ = ["CategoryMoves", "category_moves", "held_reach"]

#: Largest (code, leaf, category) array built for the tables of one feature
#: (16 MB of float64 while building, at most 28 MB kept); above it the search
#: computes the moves of its candidates on the fly.
MAX_MOVE_CELLS = 2_000_000
#: Most tables kept per leaf boxes (one per feature, allowed codes and costs).
_MAX_KEPT = 8


@dataclass(frozen=True, eq=False)
class CategoryMoves:
    """Reach and moves of one categorical feature under one plan.

    Attributes
    ----------
    reach : ndarray of shape (k + 1, n_leaves), bool
        Whether a row of each code can reach each leaf.
    keep : ndarray of shape (k + 1, n_leaves), bool, or None
        Whether a candidate from the leaf keeps the row's code.
    to : ndarray of shape (k + 1, n_leaves), int32, or None
        The code a candidate that does not keep moves to.
    price : ndarray of shape (k + 1, n_leaves), float64, or None
        The cost of that move (``inf``: no allowed category is admitted).

    ``keep``, ``to`` and ``price`` are None when their tables would exceed
    :data:`MAX_MOVE_CELLS`.
    """

    reach: NDArray[np.bool_]
    keep: NDArray[np.bool_] | None
    to: NDArray[np.int32] | None
    price: NDArray[np.float64] | None


def held_reach(boxes: LeafBoxes, j: int) -> NDArray[np.bool_]:
    """Reach of a categorical feature that keeps its code: ``admitted``
    transposed, shape ``(k + 1, n_leaves)``."""
    return derived(
        boxes, f"held_reach_{j}", lambda: np.ascontiguousarray(boxes.allowed[j].T)
    )


def category_moves(
    boxes: LeafBoxes, j: int, ok: NDArray[np.bool_], cost: NDArray[np.float64]
) -> CategoryMoves:
    """The :class:`CategoryMoves` of feature ``j`` for allowed codes ``ok`` and
    change costs ``cost`` (built once, kept with ``boxes``)."""
    ok = np.asarray(ok, dtype=bool)
    cost = np.asarray(cost, dtype=np.float64)
    digest = hashlib.sha1(ok.tobytes() + cost.tobytes()).hexdigest()
    kept: dict[tuple[int, str], CategoryMoves] = derived(boxes, "category_moves", dict)
    key = (j, digest)
    if key not in kept:
        if len(kept) >= _MAX_KEPT:
            kept.clear()
        kept[key] = _build(boxes.allowed[j], ok, cost)
    return kept[key]


def _build(
    admitted: NDArray[np.bool_], ok: NDArray[np.bool_], cost: NDArray[np.float64]
) -> CategoryMoves:
    n_leaves, k = admitted.shape[0], admitted.shape[1] - 1
    choices = admitted[:, :k] & ok[:k]  # (n_leaves, k): where a move may go
    n_choices = choices.sum(axis=1)
    own_choice = np.zeros((k + 1, n_leaves), dtype=np.intp)
    own_choice[:k] = choices.T
    keep = np.ascontiguousarray(admitted.T & ok[:, None])
    reach = keep | (n_choices[None, :] > own_choice)
    if (k + 1) * n_leaves * max(k, 1) > MAX_MOVE_CELLS:
        return CategoryMoves(reach=reach, keep=None, to=None, price=None)
    price = np.where(choices[None, :, :], cost[:, None, :k], np.inf)
    if k:
        to = np.argmin(price, axis=2)
        best = np.take_along_axis(price, to[:, :, None], axis=2)[:, :, 0]
    else:  # no category to move to
        to = np.zeros((k + 1, n_leaves), dtype=np.int32)
        best = np.full((k + 1, n_leaves), np.inf)
    return CategoryMoves(reach=reach, keep=keep, to=to.astype(np.int32), price=best)
