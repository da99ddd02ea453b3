"""Constraints read off reference data, so that counterfactuals in raw units make sense.

With reference data (typically the training set) and ``infer`` on, a column
becomes

- ``"integer"``: every reference value, and every row explained, is a whole
  number: its counterfactual values stay whole;
- ``"flags"``: those values are all 0 or 1: it stays 0 or 1 (integer, bounded to
  ``[0, 1]``);
- ``"one_hot"``: a run of adjacent flag columns in which every reference row and
  every row explained holds exactly one 1 (as ``pandas.get_dummies`` and
  scikit-learn's ``OneHotEncoder`` lay them out): they move together, exactly
  one of them 1.

What is inferred is added to the user's :class:`Constraints` (never overriding
them: a column the user bounds keeps its bounds, a run that meets a user's
one-hot group or an immutable column is left out) and reported in the result's
``inferred_``.  ``infer=False`` (or a tuple of the kinds wanted) switches it off.

Rows solved in chunks or Dask partitions are summarized where they are
(:class:`ColumnSummary`, then :class:`RunSummary` given the flags of all
rows), the summaries merged, and the constraints inferred once
(:func:`constraints_from`), so that every chunk is constrained as one call
over all the rows would be.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._constraints import Constraints

if TYPE_CHECKING:
    from .._core._forest import Forest

__all__ = [
    "INFERENCE_KINDS",
    "ColumnSummary",
    "RunSummary",
    "constraints_from",
    "infer_constraints",
    "resolve_infer",
]

INFERENCE_KINDS = ("integer", "flags", "one_hot")


def resolve_infer(infer: Any) -> tuple[str, ...]:
    """The kinds of inference asked for: ``True`` (all), ``False``, or a subset.

    Raises
    ------
    InputError
        On anything else.
    """
    if infer is True:
        return INFERENCE_KINDS
    if infer is False or infer is None:
        return ()
    if isinstance(infer, str) or not isinstance(infer, Iterable):
        raise InputError(
            f"`infer` must be True, False or a tuple of {list(INFERENCE_KINDS)}; got "
            f"{infer!r}."
        )
    kinds = tuple(infer)
    unknown = [k for k in kinds if k not in INFERENCE_KINDS]
    if unknown:
        raise InputError(
            f"`infer` must be True, False or a tuple of {list(INFERENCE_KINDS)}; got "
            f"unknown {unknown!r}."
        )
    return kinds


@dataclass(frozen=True)
class ColumnSummary:
    """What the inference needs to know of a block of rows, per column; two
    blocks' summaries merge (:meth:`merge`) into that of their rows together,
    so that rows held in partitions are summarized where they are.

    Attributes
    ----------
    whole, binary, complete, seen : ndarray of shape (n_features,), bool
        Every finite value is whole; every value (missing ones as 0) is 0 or 1;
        every value is finite; some value is finite.
    """

    whole: NDArray[np.bool_]
    binary: NDArray[np.bool_]
    complete: NDArray[np.bool_]
    seen: NDArray[np.bool_]

    @classmethod
    def of(cls, data: NDArray[np.float64]) -> ColumnSummary:
        finite = np.isfinite(data)
        filled = np.where(finite, data, 0.0)
        return cls(
            whole=np.asarray((filled == np.round(filled)).all(axis=0), dtype=bool),
            binary=np.asarray(np.isin(filled, (0.0, 1.0)).all(axis=0), dtype=bool),
            complete=np.asarray(finite.all(axis=0), dtype=bool),
            seen=np.asarray(finite.any(axis=0), dtype=bool),
        )

    def merge(self, other: ColumnSummary) -> ColumnSummary:
        return ColumnSummary(
            whole=self.whole & other.whole,
            binary=self.binary & other.binary,
            complete=self.complete & other.complete,
            seen=self.seen | other.seen,
        )

    @property
    def whole_columns(self) -> NDArray[np.bool_]:
        return self.whole & self.seen

    @property
    def flags(self) -> NDArray[np.bool_]:
        return self.whole_columns & self.binary & self.complete


@dataclass(frozen=True)
class RunSummary:
    """Row sums of the runs of adjacent flag columns of a block of rows:
    ``over[j, k]``, some row sums columns ``j..k`` above 1; ``exact[j, k]``,
    every row sums them to exactly 1 (meaningful where ``j..k`` are flags).
    Merged over blocks as :class:`ColumnSummary`."""

    over: NDArray[np.bool_]
    exact: NDArray[np.bool_]

    @classmethod
    def of(cls, flags: NDArray[np.bool_], data: NDArray[np.float64]) -> RunSummary:
        n = flags.size
        over = np.zeros((n, n), dtype=bool)
        exact = np.ones((n, n), dtype=bool)
        filled = np.where(np.isfinite(data), data, 0.0)
        for j in np.flatnonzero(flags):  # a handful of flag columns
            total = filled[:, j].copy()
            for k in range(j + 1, n):
                if not flags[k]:
                    break
                total += filled[:, k]
                over[j, k] = bool((total > 1).any())
                exact[j, k] = bool((total == 1).all())
        return cls(over=over, exact=exact)

    def merge(self, other: RunSummary) -> RunSummary:
        return RunSummary(over=self.over | other.over, exact=self.exact & other.exact)


def _one_hot_runs(flags: NDArray[np.bool_], runs: RunSummary) -> list[list[int]]:
    """Maximal runs of adjacent flag columns whose row sums are all exactly 1
    (the longest from each start that no row sums above 1)."""
    found: list[list[int]] = []
    n = flags.size
    j = 0
    while j < n:
        if not flags[j]:
            j += 1
            continue
        best = None
        stop = j + 1
        while stop < n and flags[stop]:
            if runs.over[j, stop]:
                break
            if runs.exact[j, stop]:
                best = stop + 1
            stop += 1
        if best is not None:
            found.append(list(range(j, best)))
            j = best
        else:
            j += 1
    return found


def infer_constraints(
    forest: Forest,
    reference: NDArray[np.float64],
    rows: NDArray[np.float64],
    constraints: Constraints | None,
    kinds: tuple[str, ...],
) -> tuple[Constraints | None, dict[str, Any]]:
    """The user's constraints plus what the data shows (see the module docstring).

    Parameters
    ----------
    forest : Forest
    reference : ndarray of shape (n_reference, n_features)
    rows : ndarray of shape (n, n_features)
        The rows explained (inferences they would break are not made).
    constraints : Constraints or None
    kinds : tuple of str

    Returns
    -------
    constraints : Constraints or None
    inferred : dict
        ``{"integer": [names], "flags": [names], "one_hot": [[names], ...]}`` for
        the kinds asked (empty lists when none applied).
    """
    if not kinds:
        return constraints, {}
    data = np.vstack([reference, rows])
    columns = ColumnSummary.of(data)
    return constraints_from(
        forest, columns, RunSummary.of(columns.flags, data), constraints, kinds
    )


def constraints_from(
    forest: Forest,
    columns: ColumnSummary,
    runs: RunSummary,
    constraints: Constraints | None,
    kinds: tuple[str, ...],
) -> tuple[Constraints | None, dict[str, Any]]:
    """:func:`infer_constraints` from the summaries of the rows (reference and
    rows explained together)."""
    inferred: dict[str, Any] = {kind: [] for kind in kinds}
    if not kinds:
        return constraints, inferred
    from .._core._validation import feature_index

    user = constraints or Constraints()
    names, n = forest.feature_names, forest.n_features

    def positions(keys: Iterable[Any]) -> set[int]:
        return {feature_index(forest, key) for key in keys}

    immutable = positions(user.immutable)
    bounded = positions(user.bounds)
    grouped = {j for group in user.one_hot for j in positions(group)}
    whole, flags = columns.whole_columns, columns.flags
    integer = set(positions(user.integer))
    bounds = dict(user.bounds)
    one_hot: list[list[Any]] = [list(group) for group in user.one_hot]
    if "one_hot" in kinds:
        for run in _one_hot_runs(flags, runs):
            if set(run) & (grouped | immutable | categorical_columns(forest)):
                continue
            one_hot.append(run)
            grouped |= set(run)
            inferred["one_hot"].append([names[j] for j in run])
    labelled = categorical_columns(forest)
    for j in range(n):
        if j in grouped or j in labelled:  # a category's code is no number
            continue
        if "flags" in kinds and flags[j] and j not in bounded:
            integer.add(j)
            bounds[j] = (0.0, 1.0)
            inferred["flags"].append(names[j])
        elif "integer" in kinds and whole[j] and j not in integer:
            integer.add(j)
            inferred["integer"].append(names[j])
    if not any(inferred.values()):
        return constraints, inferred
    return (
        Constraints(
            immutable=user.immutable,
            increase_only=user.increase_only,
            decrease_only=user.decrease_only,
            bounds=bounds,
            integer=sorted(integer),
            one_hot=one_hot,
            allowed=user.allowed,
        ),
        inferred,
    )


def categorical_columns(forest: Forest) -> set[int]:
    """Positions of the categorical columns (their codes are labels)."""
    return {j for j, spec in enumerate(forest.features) if spec.is_categorical}
