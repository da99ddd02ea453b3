"""Node statistics over chunks of rows, summed exactly.

:func:`~treelens.node_statistics` and held-out :func:`~treelens.mdi_importance`
hand their data to :func:`replay_in_chunks` together with two reducers: what to
compute when all rows fit in one pass, and what to make of node sums added over
chunks.  This module decides which applies and runs the chunks through the
generic runner of :mod:`treelens._core._chunks`; it never calls the public
functions back.  The same per-chunk sums (:func:`chunk_node_sums`) run on Dask
partitions (:mod:`treelens.dask`) and on Parquet parts
(:mod:`treelens._io._dataset`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any, TypeVar

import numpy as np

from .._core._chunks import (
    DEFAULT_MEMORY_BUDGET,
    is_chunk_stream,
    iter_labelled_chunks,
    n_rows,
    rows_per_chunk,
    run_in_chunks,
)
from .._core._forest import Forest
from .._core._validation import check_sample_weight, check_X, check_y
from .._exceptions import InputError
from ._node_sums import (
    NodeSums,
    check_mergeable,
    is_mergeable,
    node_sums,
    node_sums_bytes_per_row,
    sum_node_sums,
)
from ._replay import check_replayable, stage_residuals

__all__ = ["chunk_node_sums", "replay_in_chunks"]

R = TypeVar("R")


def chunk_node_sums(
    forest: Forest, X: Any, y: Any, sample_weight: Any = None
) -> NodeSums:
    """Validated partial node sums of one chunk of rows (see :mod:`._node_sums`).

    Raises
    ------
    InputError
        On bad X, y or sample_weight, as :func:`treelens.node_statistics`.
    """
    X = check_X(forest, X)
    n_samples = X.shape[0]
    target = check_y(forest, y, n_samples)
    weights = check_sample_weight(sample_weight, n_samples)
    check_replayable(forest, target)
    leaves = forest._apply(X)
    if forest.kind == "boosting":
        # Every quantity of the replay is per row, except the huber loss's delta,
        # which check_mergeable refuses across chunks.
        target = stage_residuals(forest, leaves, target, weights)
    return node_sums(forest, leaves, target, weights)


def replay_in_chunks(
    forest: Forest,
    X: Any,
    y: Any,
    sample_weight: Any,
    *,
    progress: bool,
    memory_budget: Any,
    one_pass: Callable[[Any, Any, Any], R],
    from_sums: Callable[[NodeSums], R],
) -> R:
    """Node statistics of data in one pass or from node sums summed over chunks.

    Parameters
    ----------
    forest : Forest
    X : array-like, DataFrame or iterable of chunks
        Chunks may be ``(X, y)`` or ``(X, y, sample_weight)`` tuples.
    y, sample_weight : array-like, iterable of chunks, or None
    progress : bool
        Show a progress bar over the rows (runs chunk by chunk).
    memory_budget : float or None
        Bytes one chunk may take (1 GiB by default).
    one_pass : callable
        ``one_pass(X, y, sample_weight)`` on rows that are processed at once;
        exact for every criterion.
    from_sums : callable
        ``from_sums(sums)`` on the node sums added over every chunk; used only for
        criteria whose statistics are sums (see :func:`._node_sums.is_mergeable`).

    Returns
    -------
    The result of ``one_pass`` or of ``from_sums``.
    """
    budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
    stream = is_chunk_stream(X)
    if not stream:
        if n_rows(X) == 0:
            raise InputError("X must hold at least one row; got 0 rows.")
        if not _needs_chunks(forest, X, progress, budget):
            return one_pass(X, y, sample_weight)
    rows = rows_per_chunk(
        budget,
        node_sums_bytes_per_row(forest),
        what="routing one row through every tree",
    )
    if not stream and not is_mergeable(forest):
        return one_pass(X, y, sample_weight)
    chunks = iter_labelled_chunks(X, y, sample_weight, rows)
    first = next(chunks, None)
    if first is None:
        raise InputError("X holds no rows; expected at least one row.")
    second = next(chunks, None)
    if second is None and not is_mergeable(forest):
        return one_pass(*first)
    if second is not None:
        check_mergeable(forest)
    rest: Iterator[Any] = iter(()) if second is None else chain([second], chunks)
    sums = run_in_chunks(
        lambda c: chunk_node_sums(forest, *c),
        chain([first], rest),
        combine=sum_node_sums,
        progress=progress,
        total=n_rows(X),
        description="node statistics",
        rows_of=lambda c: n_rows(c[0]),
    )
    return from_sums(sums)


def _needs_chunks(forest: Forest, X: Any, progress: bool, budget: Any) -> bool:
    """Whether in-memory data goes chunk by chunk: for a progress bar, or more rows
    than the budget holds (when the criterion's statistics add up)."""
    if progress:
        return True
    rows = n_rows(X)
    if rows is None or not isinstance(budget, (int, float, np.integer, np.floating)):
        return False
    return bool(
        is_mergeable(forest) and rows * node_sums_bytes_per_row(forest) > budget
    )
