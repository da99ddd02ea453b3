"""Several different counterfactuals of one row: the cuts that keep them apart.

With ``n_counterfactuals=k`` the exact search returns, in cost order, the least-cost
counterfactual, then the least-cost one that differs from it, and so on, each
proven optimal given the earlier ones.  "Differs" is one of:

``"moves"`` (the default)
    A *move* is a changed feature with its direction (up or down).  Each new
    option leaves out at least one move of every earlier option: it is neither
    an earlier option again nor an earlier option plus further changes, so
    "raise income" and "raise income and lower debt" are not two options, but
    "lower income" is a different one.
``"features"``
    As DiCE's diverse sets: each new option leaves out at least one *feature*
    changed by every earlier option, whatever the direction, so the changed
    feature sets are pairwise different and none contains an earlier one.

Over categorical columns (a pipeline's encoded columns, a model's native
categorical splits) a *move* is a change of a column to one category: "to
self-employed" and "to retired" are two moves of ``employment``, as "up" and
"down" are two of a number (a category has no direction; what it is changed to
is what an applicant acts on).  With ``"features"`` a changed column is one
changed feature, whatever its new category.  A missing value kept missing is
no move; one filled (``fill_missing``) is a move of its own, whatever the
value (a category filled in: as a change to that category).  The search over categories (:mod:`._categorical`) fixes the
categories of each candidate (an *assignment*), so an earlier option constrains
the numeric search under an assignment only when every categorical move of the
earlier option is one of the assignment's (:class:`CategoryOption`): then the
numeric moves must leave one of its numeric moves out.

On the cell grid of the program each cell's point lies above, at, or below
``x_j``, so "option ``o`` makes move ``(j, s)``" is the sum of the cell binaries
of feature ``j`` whose points lie on side ``s``; the condition is one linear row
per earlier option (a no-good cut): the sum over its moves is at most their
number less one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._milp._program import ForestProgram

__all__ = [
    "CategoryOption",
    "Diversity",
    "Option",
    "check_options",
    "option_cut",
    "option_moves",
]

Diversity = Literal["moves", "features"]


def check_options(n_counterfactuals: object, diversity: object) -> int:
    """Check ``n_counterfactuals`` (a positive integer) and ``diversity``.

    Raises
    ------
    InputError
        On anything else.
    """
    if (
        isinstance(n_counterfactuals, bool)
        or not isinstance(n_counterfactuals, (int, np.integer))
        or n_counterfactuals < 1
    ):
        raise InputError(
            "`n_counterfactuals` must be a positive integer (options per row); got "
            f"{n_counterfactuals!r}."
        )
    if diversity not in ("moves", "features"):
        raise InputError(
            f"`diversity` must be 'moves' or 'features'; got {diversity!r}."
        )
    return int(n_counterfactuals)


class Option:
    """An earlier option of one row, as the condition later options must meet.

    Parameters
    ----------
    x : ndarray of shape (n_features,)
        The row.
    x_cf : ndarray of shape (n_features,)
        The option.
    diversity : {"moves", "features"}
    """

    def __init__(
        self, x: NDArray[np.float64], x_cf: NDArray[np.float64], diversity: Diversity
    ) -> None:
        self.x_cf = x_cf
        self.sign = np.sign(x_cf - x)
        self.moved = self.sign != 0
        self.diversity = diversity

    def allows(
        self, x: NDArray[np.float64], X_cf: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        """Whether each row of ``X_cf`` leaves out a move (or a feature) of this option."""
        sign = np.sign(X_cf - x)
        if self.diversity == "moves":
            kept = sign == self.sign
        else:
            kept = sign != 0
        return ~(kept | ~self.moved).all(axis=1)

    def blocked_cells(
        self,
        program: ForestProgram,
        points: NDArray[np.float64],
        x: NDArray[np.float64],
    ) -> list[NDArray[np.intp]]:
        """Per move (or changed feature), the cells whose choice would repeat it."""
        f = program.cell_feature
        side = np.sign(points - x[f])
        if self.diversity == "moves":
            repeats = self.moved[f] & (side == self.sign[f])
        else:
            repeats = self.moved[f] & (side != 0) & np.isfinite(points)
        return [np.flatnonzero(repeats & (f == j)) for j in np.flatnonzero(self.moved)]


def option_cut(
    option: Option,
    program: ForestProgram,
    points: NDArray[np.float64],
    x: NDArray[np.float64],
) -> tuple[NDArray[np.intp], float]:
    """The no-good row of an earlier option: cells and their upper bound
    (``sum z[cells] <= bound``)."""
    blocks = option.blocked_cells(program, points, x)
    cells = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.intp)
    return cells, float(len(blocks) - 1)


def option_moves(
    x: NDArray[np.float64],
    values: Iterable[tuple[int, float]],
    n_categories: NDArray[np.intp],
    diversity: Diversity,
) -> frozenset[tuple[int, int]]:
    """The moves of a point, on the columns a search over categories fixes, for
    the row ``x`` (of category codes): ``values`` holds the point's value of
    each categorical column and of each column missing in ``x``, as
    ``(feature, value)`` pairs.

    ``"moves"``: ``(feature, new code)`` per changed categorical column;
    ``"features"``: ``(feature, -1)``.  A missing value kept missing (NaN) is no
    move; a missing value filled is one: ``(feature, -1)`` for a number, and as
    a change for a category.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 2.0, np.nan, np.nan])
    >>> k = np.array([3, 3, 3, 0])
    >>> sorted(option_moves(x, [(0, 1.0), (1, 2.0), (2, np.nan)], k, "moves"))
    [(0, 1)]
    >>> sorted(option_moves(x, [(0, 1.0), (1, 0.0)], k, "features"))
    [(0, -1), (1, -1)]
    >>> sorted(option_moves(x, [(2, 0.0), (3, 1.5)], k, "moves"))
    [(2, 0), (3, -1)]
    """
    from .._core._features import category_codes

    out = set()
    for j, v in values:
        if np.isnan(v):
            continue  # kept missing
        k = int(n_categories[j])
        if k == 0:  # a number: filled (the only change on these columns)
            if np.isnan(x[j]):
                out.add((int(j), -1))
            continue
        new = int(category_codes(np.array([v]), k)[0])
        if np.isnan(x[j]) or new != int(category_codes(np.array([x[j]]), k)[0]):
            out.add((int(j), new if diversity == "moves" else -1))
    return frozenset(out)


@dataclass(frozen=True)
class CategoryOption:
    """An earlier option of one row of a search over categories.

    Attributes
    ----------
    categories : frozenset of (int, int)
        Its categorical moves (:func:`option_moves`).
    numeric : Option
        Its numeric moves, in the numbers the numeric search sees (categorical
        and missing columns held at 0).
    """

    categories: frozenset[tuple[int, int]]
    numeric: Option

    def binds(self, categories: frozenset[tuple[int, int]]) -> bool:
        """Whether a point with these categorical moves must leave out one of
        this option's numeric moves (it makes every categorical move of it)."""
        return self.categories <= categories

    @property
    def has_numeric_moves(self) -> bool:
        """Whether it moves a number (else no point that :meth:`binds` differs)."""
        return bool(self.numeric.moved.any())
