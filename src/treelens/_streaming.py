"""Streaming versions of the batch functions, behind their ``progress=`` hook.

:func:`~treelens.feature_tweak`, :func:`~treelens.optimal_counterfactual`,
:func:`~treelens.node_statistics` and :func:`~treelens.mdi_importance` call
:func:`wants_streaming` first; when it says so (an iterable of chunks, or
``progress=True``) they hand over to the functions here, which run them chunk by
chunk (:mod:`treelens._batch`) and combine the chunk results exactly:

- counterfactuals of disjoint rows are concatenated
  (:func:`concat_counterfactuals`); each row's answer does not depend on which
  other rows share its chunk;
- node statistics are built from additive per-node sums
  (:mod:`treelens._node_sums`) summed over the chunks.

The same per-chunk pieces run on Dask partitions (:mod:`treelens.dask`) and on
Parquet parts (:mod:`treelens._dataset`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ._batch import (
    DEFAULT_CHUNK_ROWS,
    is_chunk_stream,
    iter_chunks,
    iter_labelled_chunks,
    n_rows,
    rows_per_chunk,
    run_in_chunks,
)
from ._exceptions import InputError

__all__ = [
    "chunk_node_sums",
    "concat_counterfactuals",
    "importance_from_sums",
    "statistics_result",
    "stream_counterfactuals",
    "stream_mdi_importance",
    "stream_node_statistics",
    "stream_node_sums",
    "wants_streaming",
]


def wants_streaming(X: Any, progress: bool) -> bool:
    """Whether a batch function should run chunk by chunk through this module."""
    return bool(progress) or is_chunk_stream(X)


# ---------------------------------------------------------- counterfactuals
def concat_counterfactuals(parts: list[Any]) -> Any:
    """One counterfactual result from results over consecutive chunks of rows.

    Array attributes (one entry per row) are concatenated; the others (feature
    names, target, cost name, method) are the same in every part and taken from
    the first.
    """
    if not parts:
        raise InputError("X holds no rows; expected at least one row.")
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(first):
        value = getattr(first, item.name)
        if isinstance(value, np.ndarray):
            changes[item.name] = np.concatenate([getattr(p, item.name) for p in parts])
    return dataclasses.replace(first, **changes)


def stream_counterfactuals(
    function: Callable[..., Any],
    model: Any,
    X: Any,
    *,
    progress: bool = False,
    chunk_rows: int | None = None,
    **kwargs: Any,
) -> Any:
    """Run a counterfactual search chunk by chunk and concatenate the results.

    Parameters
    ----------
    function : callable
        The public search (``feature_tweak`` or ``optimal_counterfactual``),
        called on each chunk with ``progress=False`` and ``**kwargs``; it bounds
        the memory of its own candidates (``max_memory``).
    model : fitted tree model
    X : array-like, DataFrame or iterable of chunks
    progress : bool, default=False
        Show a progress bar over the rows.
    chunk_rows : int, optional
        Rows per chunk handed to ``function``; a default suited to the budget.
    **kwargs
        Keyword arguments of ``function``.

    Returns
    -------
    CounterfactualResult
        Equal row for row to ``function(model, all rows)``.
    """
    from ._adapters import to_forest

    forest = to_forest(model)
    rows = chunk_rows or _counterfactual_chunk_rows(forest, kwargs.get("max_memory"))
    return run_in_chunks(
        lambda chunk: function(model, chunk, progress=False, **kwargs),
        iter_chunks(X, rows),
        combine=concat_counterfactuals,
        progress=progress,
        total=n_rows(X),
        description=getattr(function, "__name__", "counterfactuals"),
    )


def _counterfactual_chunk_rows(forest: Any, max_memory: Any) -> int:
    # The search bounds its candidate arrays itself; the stream only needs chunks
    # whose inputs and outputs (a few rows of features each) stay small beside
    # the budget, and that are large enough to keep the per-call overhead low.
    per_row = 16 * 8 * max(forest.n_features, 1)
    budget = max_memory if isinstance(max_memory, (int, float)) and max_memory > 0 else None
    if budget is None:
        return DEFAULT_CHUNK_ROWS
    return max(1, min(DEFAULT_CHUNK_ROWS, int(budget // (4 * per_row)) or 1))


# ---------------------------------------------------------- node statistics
def chunk_node_sums(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Validated partial node sums of one chunk (see :mod:`treelens._node_sums`).

    Raises
    ------
    InputError
        On bad X, y or sample_weight, as :func:`treelens.node_statistics`.
    """
    from ._adapters import to_forest
    from ._node_statistics import _check_replayable
    from ._node_sums import node_sums
    from ._validation import check_sample_weight, check_X, check_y

    forest = to_forest(model)
    X = check_X(forest, X)
    n_samples = X.shape[0]
    target = check_y(forest, y, n_samples)
    weights = check_sample_weight(sample_weight, n_samples)
    _check_replayable(forest, target)
    leaves = forest._apply(X)
    if forest.kind == "boosting":
        target = _boosting_targets(forest, leaves, target, weights)
    return node_sums(forest, leaves, target, weights)


def _boosting_targets(
    forest: Any, leaves: Any, target: Any, weights: Any
) -> Any:
    """The pseudo-residual each stage tree was fitted on, per row and tree.

    The stages are replayed as :func:`treelens.node_statistics` does; every
    quantity is per row, except the huber loss's delta, which
    :func:`~treelens._node_sums.check_mergeable` refuses across chunks.
    """
    from ._losses import negative_gradient

    n_outputs = forest.n_outputs
    y = target.astype(np.float64)
    raw = np.tile(forest.init_raw, (leaves.shape[0], 1))
    out = np.empty(leaves.shape)
    for start in range(0, forest.n_trees, n_outputs):
        stage = range(start, min(start + n_outputs, forest.n_trees))
        residual = negative_gradient(forest.loss, y, raw, weights, alpha=forest.loss_alpha)
        for j in stage:
            out[:, j] = residual[:, int(forest.tree_output[j])]
        for j in stage:
            k = int(forest.tree_output[j])
            raw[:, k] += forest.learning_rate * forest.trees[j].value[leaves[:, j], 0]
    return out


def stream_node_sums(
    model: Any,
    X: Any,
    y: Any,
    sample_weight: Any = None,
    *,
    progress: bool = False,
    max_memory: float | None = None,
) -> Any:
    """Node sums over an array-like or an iterable of chunks, summed exactly.

    Parameters
    ----------
    model : fitted tree model
    X : array-like, DataFrame or iterable of chunks
        Chunks may be ``(X, y)`` or ``(X, y, sample_weight)`` tuples.
    y, sample_weight : array-like, iterable of chunks, or None
    progress : bool, default=False
    max_memory : float, optional
        Budget of one chunk in bytes (1 GiB by default).

    Returns
    -------
    NodeSums, or the only chunk ``(X, y, sample_weight)``
        The chunk itself when the data fit in one chunk and the criterion is not
        additive (absolute_error, huber), for the exact single-chunk functions.
    """
    from ._adapters import to_forest
    from ._batch import DEFAULT_MAX_MEMORY
    from ._node_sums import (
        check_mergeable,
        is_mergeable,
        node_sums_bytes_per_row,
        sum_node_sums,
    )

    forest = to_forest(model)
    budget = DEFAULT_MAX_MEMORY if max_memory is None else max_memory
    rows = rows_per_chunk(
        budget, node_sums_bytes_per_row(forest), what="routing one row through every tree"
    )
    chunks = iter_labelled_chunks(X, y, sample_weight, rows)
    first = next(chunks, None)
    if first is None:
        raise InputError("X holds no rows; expected at least one row.")
    second = next(chunks, None)
    if second is not None:
        check_mergeable(forest)
    elif not is_mergeable(forest):
        return first

    def replay() -> Any:
        yield first
        if second is not None:
            yield second
            yield from chunks

    return run_in_chunks(
        lambda c: chunk_node_sums(model, *c),
        replay(),
        combine=sum_node_sums,
        progress=progress,
        total=n_rows(X),
        description="node statistics",
        rows_of=lambda c: n_rows(c[0]),
    )


def statistics_result(model: Any, sums: Any) -> Any:
    """The :class:`~treelens.NodeStatistics` of summed node sums."""
    from ._adapters import to_forest
    from ._node_statistics import NodeStatistics
    from ._node_sums import statistics_from_sums

    forest = to_forest(model)
    return NodeStatistics(forest, *(tuple(a) for a in statistics_from_sums(forest, sums)))


def importance_from_sums(model: Any, sums: Any) -> Any:
    """Held-out MDI (as :func:`treelens.mdi_importance` with X and y) from node sums."""
    from ._adapters import to_forest
    from ._mdi import mdi_from_statistics
    from ._node_sums import statistics_from_sums

    forest = to_forest(model)
    counts, weighted, _, impurity = statistics_from_sums(forest, sums)
    return mdi_from_statistics(forest, weighted, impurity, counts, method="MDI (held-out)")


def stream_node_statistics(
    model: Any, X: Any, y: Any, sample_weight: Any = None, *, progress: bool = False,
    max_memory: float | None = None,
) -> Any:
    """:func:`treelens.node_statistics` over chunks; see :func:`stream_node_sums`."""
    if not is_chunk_stream(X) and n_rows(X) == 0:
        raise InputError("X must hold at least one row; got 0 rows.")
    sums = stream_node_sums(
        model, X, y, sample_weight, progress=progress, max_memory=max_memory
    )
    if isinstance(sums, tuple):
        from ._node_statistics import node_statistics

        return node_statistics(model, *sums)
    return statistics_result(model, sums)


def stream_mdi_importance(
    model: Any, X: Any, y: Any, sample_weight: Any = None, *, progress: bool = False,
    max_memory: float | None = None,
) -> Any:
    """Held-out :func:`treelens.mdi_importance` over chunks."""
    if y is None and not is_chunk_stream(X):
        raise InputError("Held-out MDI needs both X and y; expected both, got X only.")
    sums = stream_node_sums(
        model, X, y, sample_weight, progress=progress, max_memory=max_memory
    )
    if isinstance(sums, tuple):
        from ._mdi import mdi_importance

        Xc, yc, wc = sums
        return mdi_importance(model, Xc, yc, sample_weight=wc)
    return importance_from_sums(model, sums)
