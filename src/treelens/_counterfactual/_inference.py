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

Rows given with a dtype carry evidence of their own, with or without
reference data (:class:`DeclaredColumns`): in a pandas DataFrame, a ``bool``
column (numpy's or pandas' ``"boolean"``) is a flag, an integer column
(``int64``, ``uint8``, ``"Int64"``, ...) holds whole numbers; a numpy array of
dtype ``bool`` makes every numeric column a flag, one of an integer dtype
every numeric column whole (its dtype is one for all its columns).  The dtype
says so for every value the column can hold, so these inferences stand
whatever the reference data holds.  An array of floats declares nothing: without
reference data nothing is inferred for it.  One-hot groups are read off
reference data only.

What is inferred is added to the user's :class:`Constraints` (never overriding
them: a column the user bounds keeps its bounds, a run that meets a user's
one-hot group or an immutable column is left out) and reported in the result's
``inferred_``.  ``infer=False`` (or a tuple of the kinds wanted) switches it off.

Rows solved in chunks or Dask partitions are summarized where they are
(:class:`ColumnSummary` and :class:`DeclaredColumns`, then :class:`RunSummary`
given the flags of all rows), the summaries merged, and the constraints
inferred once (:func:`infer_over_blocks`), so that every chunk is constrained
as one call over all the rows would be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    "DeclaredColumns",
    "RunSummary",
    "constraints_from",
    "infer_constraints",
    "infer_over_blocks",
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

    @classmethod
    def no_evidence(cls, n_features: int) -> ColumnSummary:
        """No column known to be anything (not the summary of no rows, which
        would be whole and binary everywhere: it is not a unit of
        :meth:`merge`)."""
        none = np.zeros(n_features, dtype=bool)
        return cls(whole=none, binary=none, complete=none, seen=none)

    def declared(self, declared: DeclaredColumns | None) -> ColumnSummary:
        """This summary with the columns a DataFrame's dtypes declare whole
        numbers or flags taken as such, whatever the rows summarized hold."""
        if declared is None:
            return self
        return ColumnSummary(
            whole=self.whole | declared.integer,
            binary=self.binary | declared.flags,
            complete=self.complete | declared.flags,
            seen=self.seen | declared.integer,
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


@dataclass(frozen=True)
class DeclaredColumns:
    """Columns whose dtype (a DataFrame's column's, or a numpy array's) says
    what values they hold.

    Attributes
    ----------
    integer : ndarray of shape (n_features,), bool
        An integer or bool dtype: every value is a whole number.
    flags : ndarray of shape (n_features,), bool
        A bool dtype without missing values: every value is 0 or 1.
    """

    integer: NDArray[np.bool_]
    flags: NDArray[np.bool_]

    @classmethod
    def of(cls, forest: Forest, frame: Any) -> DeclaredColumns | None:
        """What the dtypes of ``frame`` (a DataFrame holding the model's
        numeric columns by name, or None) declare; None for no frame.

        Categorical and dropped columns are left out: their values are codes
        or never read.

        Examples
        --------
        >>> import pandas as pd
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from treelens import to_forest
        >>> X = pd.DataFrame({"n": [1, 2, 3], "b": [True, False, True],
        ...                   "x": [0.5, 1.0, 2.0]})
        >>> model = DecisionTreeClassifier().fit(X, [0, 1, 0])
        >>> declared = DeclaredColumns.of(to_forest(model), X)
        >>> declared.integer.tolist(), declared.flags.tolist()
        ([True, True, False], [False, True, False])
        """
        if frame is None or not hasattr(frame, "columns"):
            return None
        if not forest.has_feature_names:
            return None  # fitted on an array: no column is named
        from pandas.api.types import is_bool_dtype, is_integer_dtype

        n = forest.n_features
        integer, flags = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        names = set(frame.columns)
        for j, spec in enumerate(forest.features):  # one check per column
            if spec.kind != "numeric" or spec.dropped or spec.name not in names:
                continue
            column = frame[spec.name]
            if getattr(column, "ndim", 1) != 1:
                continue  # a name the frame repeats: no single dtype
            if is_bool_dtype(column.dtype):
                integer[j] = True
                # pandas' "boolean" may hold <NA>: whole, but no complete flag.
                flags[j] = not bool(column.isna().any())
            elif is_integer_dtype(column.dtype):
                integer[j] = True
        return cls(integer=integer, flags=flags)

    @classmethod
    def of_array(cls, forest: Forest, X: Any) -> DeclaredColumns | None:
        """What the dtype of ``X``, a numpy array of the model's columns,
        declares of every numeric column: all flags for ``bool``, all whole
        for an integer dtype; None for any other dtype or an object that is
        no numpy array (a list has no dtype of its own).

        Categorical and dropped columns are left out, as in :meth:`of`.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from treelens import to_forest
        >>> X = np.array([[True, False], [False, True], [True, True]])
        >>> forest = to_forest(DecisionTreeClassifier().fit(X, [0, 1, 0]))
        >>> declared = DeclaredColumns.of_array(forest, X)
        >>> declared.integer.tolist(), declared.flags.tolist()
        ([True, True], [True, True])
        >>> DeclaredColumns.of_array(forest, X.astype(float)) is None
        True
        """
        if not isinstance(X, np.ndarray) or X.dtype.kind not in "biu":
            return None
        numeric = np.array(
            [spec.kind == "numeric" and not spec.dropped for spec in forest.features],
            dtype=bool,
        )
        flags = numeric if X.dtype.kind == "b" else np.zeros_like(numeric)
        return cls(integer=numeric, flags=flags.copy())

    @staticmethod
    def common(blocks: Iterable[DeclaredColumns | None]) -> DeclaredColumns | None:
        """What every block declares (None if some block declares nothing)."""
        out: DeclaredColumns | None = None
        for block in blocks:
            if block is None:
                return None
            if out is not None:
                block = DeclaredColumns(
                    integer=out.integer & block.integer, flags=out.flags & block.flags
                )
            out = block
        return out


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
    reference: NDArray[np.float64] | None,
    rows: NDArray[np.float64],
    constraints: Constraints | None,
    kinds: tuple[str, ...],
    declared: DeclaredColumns | None = None,
) -> tuple[Constraints | None, dict[str, Any]]:
    """The user's constraints plus what the data shows (see the module docstring).

    Parameters
    ----------
    forest : Forest
    reference : ndarray of shape (n_reference, n_features) or None
    rows : ndarray of shape (n, n_features)
        The rows explained (inferences they would break are not made).
    constraints : Constraints or None
    kinds : tuple of str
    declared : DeclaredColumns or None, default=None
        What the dtypes of the rows (a DataFrame's, a numpy array's) declare.

    Returns
    -------
    constraints : Constraints or None
    inferred : dict
        ``{"integer": [names], "flags": [names], "one_hot": [[names], ...]}`` for
        the kinds asked (empty lists when none applied); ``{}`` when nothing
        was examined (no kinds, or neither reference data nor dtypes).
    """
    if not kinds or (reference is None and declared is None):
        return constraints, {}
    if reference is None:
        # The rows alone are too few to read whole numbers or groups off:
        # only their dtypes count.
        n = forest.n_features
        columns = ColumnSummary.no_evidence(n).declared(declared)
        runs = RunSummary(
            over=np.ones((n, n), dtype=bool), exact=np.zeros((n, n), dtype=bool)
        )
        return constraints_from(forest, columns, runs, constraints, kinds)
    return infer_over_blocks(
        forest,
        reference,
        [(ColumnSummary.of(rows), declared)],
        lambda flags: [RunSummary.of(flags, rows)],
        constraints,
        kinds,
    )


def infer_over_blocks(
    forest: Forest,
    reference: NDArray[np.float64],
    blocks: Iterable[tuple[ColumnSummary, DeclaredColumns | None]],
    runs_of: Callable[[NDArray[np.bool_]], Iterable[RunSummary]],
    constraints: Constraints | None,
    kinds: tuple[str, ...],
) -> tuple[Constraints | None, dict[str, Any]]:
    """:func:`infer_constraints` with reference data, from the summaries of
    the rows explained, block by block (one block, chunks, Dask partitions).

    Parameters
    ----------
    forest : Forest
    reference : ndarray of shape (n_reference, n_features)
    blocks : iterable of (ColumnSummary, DeclaredColumns or None)
        Per block of rows, its summary and what its dtypes declare.
    runs_of : callable
        ``runs_of(flags)``: the :class:`RunSummary` of every block, given
        the flag columns of all rows (the second pass over the blocks).
    constraints : Constraints or None
    kinds : tuple of str

    Returns
    -------
    constraints, inferred
        As :func:`infer_constraints` for all the blocks' rows at once (a
        column is declared only when every block declares it).
    """
    columns = ColumnSummary.of(reference)
    declared = []
    for summary, block_declared in blocks:
        columns = columns.merge(summary)
        declared.append(block_declared)
    columns = columns.declared(DeclaredColumns.common(declared))
    runs = RunSummary.of(columns.flags, reference)
    for block_runs in runs_of(columns.flags):
        runs = runs.merge(block_runs)
    return constraints_from(forest, columns, runs, constraints, kinds)


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
