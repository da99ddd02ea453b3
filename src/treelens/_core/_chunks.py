"""Streaming batches: rows in chunks under a memory budget, with a progress bar.

The batch functions of treelens (:func:`~treelens.feature_tweak`,
:func:`~treelens.optimal_counterfactual`, :func:`~treelens.node_statistics`,
:func:`~treelens.mdi_importance`) accept, besides an array or a DataFrame, an
*iterable of chunks*: a generator, an iterator or a list of 2-D arrays or
DataFrames (for example the batches of a Parquet file).  This module turns any of
these into a stream of chunks small enough for the memory budget, runs the
per-chunk function on each one, shows a progress bar when asked, and combines the
per-chunk results.

Nothing here knows what is computed per chunk: the caller gives the function and
how to combine its results, so each public function needs only a short hook.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Self, TypeVar

import numpy as np

from .._exceptions import InputError, MemoryBudgetError

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "ProgressBar",
    "is_chunk_stream",
    "iter_chunks",
    "iter_labelled_chunks",
    "n_rows",
    "rows_per_chunk",
    "run_in_chunks",
    "take_rows",
]

#: Default memory budget of one chunk, in bytes (1 GiB).
DEFAULT_MEMORY_BUDGET = 1 << 30

#: Rows per chunk when nothing bounds them more tightly: large enough that the
#: per-chunk overhead is negligible, small enough for a lively progress bar.
DEFAULT_CHUNK_ROWS = 65_536

T = TypeVar("T")


# ---------------------------------------------------------------- inspection
def is_chunk_stream(X: Any) -> bool:
    """Whether ``X`` is an iterable of chunks rather than one array-like.

    An iterator or generator is a stream.  A list or tuple is a stream when its
    first element is itself 2-D (an array, a DataFrame) or a tuple ``(X, y[, w])``;
    a nested list of numbers is an ordinary 2-D array-like.
    """
    if X is None or isinstance(X, (str, bytes)):
        return False
    if hasattr(X, "shape") or hasattr(X, "iloc"):
        return False
    if isinstance(X, Iterator):
        return True
    if isinstance(X, (list, tuple)):
        if not X:
            return False
        first = X[0]
        if isinstance(first, tuple):
            return True
        return getattr(first, "ndim", 0) == 2
    return isinstance(X, Iterable) and not isinstance(X, (dict, set))


def n_rows(X: Any) -> int | None:
    """Number of rows of an array-like or a sized stream of chunks; None if unknown."""
    if X is None:
        return None
    if hasattr(X, "shape"):
        shape = X.shape
        return int(shape[0]) if len(shape) else None
    if is_chunk_stream(X):
        if isinstance(X, (list, tuple)):
            total = 0
            for item in X:
                first = item[0] if isinstance(item, tuple) else item
                rows = n_rows(first)
                if rows is None:
                    return None
                total += rows
            return total
        return None
    try:
        return len(X)
    except TypeError:
        return None


def take_rows(X: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of an array-like, keeping its type (DataFrame, Series)."""
    if X is None:
        return None
    if hasattr(X, "iloc"):
        return X.iloc[start:stop]
    return X[start:stop]


# -------------------------------------------------------------- the budget
def rows_per_chunk(
    memory_budget: float | None,
    bytes_per_row: float,
    *,
    what: str = "the work of one row",
    max_rows: int | None = DEFAULT_CHUNK_ROWS,
) -> int:
    """Rows that fit in one chunk under a memory budget.

    Parameters
    ----------
    memory_budget : float or None
        Budget of one chunk in bytes; None means no budget (``max_rows`` alone
        bounds the chunk).
    bytes_per_row : float
        Memory that one row needs at the peak of the per-chunk computation.
    what : str
        Words naming what one row needs, for the error message.
    max_rows : int or None
        Upper bound on the rows of a chunk.

    Returns
    -------
    rows : int
        At least 1.

    Raises
    ------
    MemoryBudgetError
        If the budget is not positive or is smaller than ``bytes_per_row``.
    """
    cap = max_rows if max_rows is not None else 2**62
    if memory_budget is None:
        return max(1, int(cap))
    if not (
        isinstance(memory_budget, (int, float, np.integer, np.floating))
        and memory_budget > 0
    ):
        raise MemoryBudgetError(
            f"`memory_budget` must be a positive number of bytes; got {memory_budget!r}."
        )
    if memory_budget < bytes_per_row:
        raise MemoryBudgetError(
            f"`memory_budget` is too small for {what}: one row needs "
            f"{_format_bytes(bytes_per_row)} but the budget is "
            f"{_format_bytes(memory_budget)}; expected at least "
            f"{_format_bytes(bytes_per_row)}."
        )
    return max(1, min(int(cap), int(memory_budget // max(bytes_per_row, 1.0))))


def _format_bytes(n: float) -> str:
    n = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


# -------------------------------------------------------------- iteration
def iter_chunks(X: Any, rows: int) -> Iterator[Any]:
    """Chunks of at most ``rows`` rows of an array-like or a stream of chunks.

    Arrays and DataFrames are sliced (views, no copy); each element of a stream
    is passed through, sliced when larger than ``rows``.  Empty chunks are
    skipped.
    """
    rows = max(1, int(rows))
    items = X if is_chunk_stream(X) else (X,)
    for item in items:
        if getattr(item, "ndim", 2) == 1 or (
            isinstance(item, (list, tuple)) and item and np.ndim(item[0]) == 0
        ):
            yield item  # one row given as 1-D
            continue
        total = n_rows(item)
        if total is None:
            item = np.asarray(item)
            total = n_rows(item) or 0
        if total <= rows:
            if total:
                yield item
            continue
        for start in range(0, total, rows):
            yield take_rows(item, start, start + rows)


def iter_labelled_chunks(
    X: Any, y: Any, sample_weight: Any, rows: int
) -> Iterator[tuple[Any, Any, Any]]:
    """Aligned chunks ``(X, y, sample_weight)`` of at most ``rows`` rows.

    ``X`` may be an array-like or a stream.  With a stream, ``y`` (and
    ``sample_weight``) may be streams of matching chunks, array-likes over all
    rows (cut to the chunks' sizes), or None when each element of ``X`` is a
    tuple ``(X, y)`` or ``(X, y, sample_weight)``.

    Raises
    ------
    InputError
        If ``y`` or ``sample_weight`` has fewer or more rows than ``X``.
    """
    if not is_chunk_stream(X):
        triples: Iterable[tuple[Any, Any, Any]] = [(X, y, sample_weight)]
    else:
        triples = _align_stream(X, y, sample_weight)
    for Xc, yc, wc in triples:
        total = n_rows(Xc)
        if total is None:
            Xc = np.asarray(Xc)
            total = n_rows(Xc) or 0
        for name, other in (("y", yc), ("sample_weight", wc)):
            other_rows = n_rows(other)
            if other is not None and other_rows is not None and other_rows != total:
                raise InputError(
                    f"`{name}` must have one entry per row of X; expected {total} "
                    f"entries, got {other_rows}."
                )
        for start in range(0, total, rows):
            stop = start + rows
            yield (
                take_rows(Xc, start, stop),
                _slice(yc, start, stop),
                _slice(wc, start, stop),
            )


def _slice(v: Any, start: int, stop: int) -> Any:
    if v is None:
        return None
    if hasattr(v, "iloc"):
        return v.iloc[start:stop]
    return np.asarray(v)[start:stop]


def _align_stream(X: Any, y: Any, w: Any) -> Iterator[tuple[Any, Any, Any]]:
    y_stream, w_stream = is_chunk_stream(y), is_chunk_stream(w)
    y_iter = iter(y) if y_stream else None
    w_iter = iter(w) if w_stream else None
    offset = 0
    for item in X:
        if isinstance(item, tuple):
            if y is not None:
                raise InputError(
                    "Give `y` either inside the chunks of X as (X, y) tuples or as "
                    "its own argument, not both."
                )
            if len(item) not in (2, 3):
                raise InputError(
                    "Each chunk of X must be an array, a DataFrame, or a tuple "
                    f"(X, y) or (X, y, sample_weight); got a tuple of {len(item)}."
                )
            Xc, yc = item[0], item[1]
            wc = item[2] if len(item) == 3 else None
        else:
            Xc = item
            yc = wc = None
        rows = n_rows(Xc)
        if rows is None:
            Xc = np.asarray(Xc)
            rows = n_rows(Xc) or 0
        if y_iter is not None:
            yc = _next_chunk(y_iter, "y")
        elif y is not None:
            yc = _slice(y, offset, offset + rows)
        if w_iter is not None:
            wc = _next_chunk(w_iter, "sample_weight")
        elif w is not None and wc is None:
            wc = _slice(w, offset, offset + rows)
        offset += rows
        yield Xc, yc, wc
    for name, it, v in (("y", y_iter, y), ("sample_weight", w_iter, w)):
        leftover = (
            next(it, None) is not None
            if it is not None
            else (v is not None and n_rows(v) not in (None, offset))
        )
        if leftover:
            raise InputError(
                f"`{name}` has more rows than X; expected {offset} rows in all."
            )


def _next_chunk(it: Iterator[Any], name: str) -> Any:
    try:
        return next(it)
    except StopIteration:
        raise InputError(
            f"`{name}` has fewer chunks than X; expected one chunk of `{name}` per "
            "chunk of X."
        ) from None


# ---------------------------------------------------------------- progress
class ProgressBar:
    """A rich progress bar over rows, or nothing when disabled.

    Parameters
    ----------
    enabled : bool
    total : int or None
        Rows expected in all, when known.
    description : str
    """

    def __init__(self, *, enabled: bool, total: int | None, description: str) -> None:
        self.enabled = bool(enabled)
        self.total = total
        self.description = description
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Self:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("rows"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(self.description, total=self.total)
        return self

    def advance(self, rows: int) -> None:
        """Count ``rows`` more rows as done."""
        if self._progress is not None:
            self._progress.advance(self._task, rows)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None


# ------------------------------------------------------------------- driver
def run_in_chunks(
    function: Callable[[Any], T],
    chunks: Iterable[Any],
    *,
    combine: Callable[[list[T]], T],
    progress: bool = False,
    total: int | None = None,
    description: str = "treelens",
    rows_of: Callable[[Any], int | None] = n_rows,
) -> T:
    """Apply ``function`` to every chunk and combine the results.

    Parameters
    ----------
    function : callable
        Computes the result of one chunk.
    chunks : iterable
        The chunks (see :func:`iter_chunks`, :func:`iter_labelled_chunks`).
    combine : callable
        Turns the list of per-chunk results into one result.
    progress : bool, default=False
        Show a progress bar (rows done, rate, time left) on standard error.
    total : int, optional
        Rows expected in all, for the progress bar.
    description : str
        Label of the progress bar.
    rows_of : callable
        Rows of a chunk, for the progress bar.

    Returns
    -------
    The combined result.
    """
    results: list[T] = []
    with ProgressBar(enabled=progress, total=total, description=description) as bar:
        for chunk in chunks:
            results.append(function(chunk))
            bar.advance(rows_of(chunk) or 0)
    return combine(results)
