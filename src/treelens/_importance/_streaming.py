"""Streaming versions of the batch functions, behind their ``progress=`` hook.

:func:`~treelens.feature_tweak`, :func:`~treelens.optimal_counterfactual`,
:func:`~treelens.node_statistics` and :func:`~treelens.mdi_importance` call
:func:`wants_streaming` first; when it says so (an iterable of chunks, or
``progress=True``) they hand over to the functions here, which run them chunk by
chunk (:mod:`treelens._core._chunks`) and combine the chunk results exactly:

- counterfactuals of disjoint rows are concatenated
  (:func:`concat_counterfactuals`); each row's answer does not depend on which
  other rows share its chunk;
- node statistics are built from additive per-node sums
  (:mod:`treelens._importance._node_sums`) summed over the chunks.

The same per-chunk pieces run on Dask partitions (:mod:`treelens.dask`) and on
Parquet parts (:mod:`treelens._io._dataset`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core._chunks import (
    DEFAULT_CHUNK_ROWS,
    is_chunk_stream,
    iter_chunks,
    iter_labelled_chunks,
    n_rows,
    rows_per_chunk,
    run_in_chunks,
)
from .._exceptions import InputError

__all__ = [
    "check_candidate_budget",
    "chunk_node_sums",
    "concat_counterfactuals",
    "importance_from_sums",
    "statistics_result",
    "stream_counterfactuals",
    "stream_mdi_importance",
    "stream_node_statistics",
    "stream_node_sums",
    "wants_node_streaming",
    "wants_streaming",
]


def wants_streaming(X: Any, progress: bool) -> bool:
    """Whether a counterfactual search should run chunk by chunk through here."""
    return bool(progress) or is_chunk_stream(X)


def wants_node_streaming(
    model: Any, X: Any, progress: bool, memory_budget: Any
) -> bool:
    """Whether node statistics should run chunk by chunk through here: for an
    iterable of chunks, a progress bar, or more rows than the budget holds."""
    if progress or is_chunk_stream(X):
        return True
    from .._adapters import to_forest
    from ._node_sums import is_mergeable, node_sums_bytes_per_row

    rows = n_rows(X)
    if rows is None or not isinstance(
        memory_budget, (int, float, np.integer, np.floating)
    ):
        return False
    forest = to_forest(model)
    return (
        is_mergeable(forest) and rows * node_sums_bytes_per_row(forest) > memory_budget
    )


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
    **kwargs: Any,
) -> Any:
    """Run a counterfactual search chunk by chunk and concatenate the results.

    Parameters
    ----------
    function : callable
        The public search (``feature_tweak`` or ``optimal_counterfactual``),
        called on each chunk with ``progress=False`` and ``**kwargs``; it bounds
        the memory of its own candidates (``memory_budget``).
    model : fitted tree model
    X : array-like, DataFrame or iterable of chunks
    progress : bool, default=False
        Show a progress bar over the rows.
    **kwargs
        Keyword arguments of ``function`` (``target``, ``memory_budget``, ...).

    Returns
    -------
    CounterfactualResult
        Equal row for row to ``function(model, all rows)``.
    """
    name = getattr(function, "__name__", "counterfactuals")
    # Exact solves take about a second per row: small chunks keep the progress
    # bar moving; the vectorized search wants large ones.
    rows = (
        _OPTIMAL_CHUNK_ROWS if name == "optimal_counterfactual" else DEFAULT_CHUNK_ROWS
    )
    if name == "feature_tweak":
        check_candidate_budget(model, kwargs.get("target"), kwargs.get("memory_budget"))
    return run_in_chunks(
        lambda chunk: function(model, chunk, progress=False, **kwargs),
        iter_chunks(X, rows),
        combine=concat_counterfactuals,
        progress=progress,
        total=n_rows(X),
        description=name,
    )


_OPTIMAL_CHUNK_ROWS = 64

# Bytes per (row, candidate leaf) pair while feature tweaking builds candidates:
# about twenty float64 temporaries per feature (the search's own estimate).
_BYTES_PER_PAIR_PER_FEATURE = 160
_BYTES_PER_PAIR = 64


def check_candidate_budget(model: Any, target: Any, memory_budget: Any) -> None:
    """Refuse a memory budget that cannot hold the candidates of one row.

    Feature tweaking never splits a row's candidates: a row needs memory for
    every target leaf (at most every leaf predicting the target class, or every
    leaf for other targets) times the bytes of one candidate.

    Raises
    ------
    MemoryBudgetError
        If ``memory_budget`` is smaller than what one row may need.
    """
    from .._adapters import to_forest

    if not isinstance(memory_budget, (int, float, np.integer, np.floating)):
        return  # the search itself reports a budget of the wrong type
    forest = to_forest(model)
    n_leaves = _target_leaves_bound(forest, target)
    per_pair = _BYTES_PER_PAIR_PER_FEATURE * forest.n_features + _BYTES_PER_PAIR
    rows_per_chunk(
        memory_budget,
        n_leaves * per_pair,
        what=f"the candidates of one row ({n_leaves} target leaves)",
    )


def _target_leaves_bound(forest: Any, target: Any) -> int:
    """Most candidate leaves one row can have for ``target``."""
    trees = forest.trees
    if (
        forest.is_classifier
        and forest.kind != "boosting"
        and forest.classes_ is not None
        and not isinstance(target, str)
        and not isinstance(target, (tuple, list))
    ):
        matches = np.flatnonzero(np.asarray(forest.classes_) == target)
        if matches.size:
            k = int(matches[0])
            return int(
                sum(
                    np.count_nonzero(np.argmax(t.value[t.is_leaf], axis=1) == k)
                    for t in trees
                )
            )
    return int(sum(t.n_leaves for t in trees))


# ---------------------------------------------------------- node statistics
def chunk_node_sums(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Validated partial node sums of one chunk (see :mod:`treelens._importance._node_sums`).

    Raises
    ------
    InputError
        On bad X, y or sample_weight, as :func:`treelens.node_statistics`.
    """
    from .._adapters import to_forest
    from .._core._validation import check_sample_weight, check_X, check_y
    from ._node_statistics import _check_replayable
    from ._node_sums import node_sums

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


def _boosting_targets(forest: Any, leaves: Any, target: Any, weights: Any) -> Any:
    """The pseudo-residual each stage tree was fitted on, per row and tree.

    The stages are replayed as :func:`treelens.node_statistics` does; every
    quantity is per row, except the huber loss's delta, which
    :func:`~treelens._importance._node_sums.check_mergeable` refuses across chunks.
    """
    from ._losses import negative_gradient

    n_outputs = forest.n_outputs
    y = target.astype(np.float64)
    raw = np.tile(forest.init_raw, (leaves.shape[0], 1))
    out = np.empty(leaves.shape)
    for start in range(0, forest.n_trees, n_outputs):
        stage = range(start, min(start + n_outputs, forest.n_trees))
        residual = negative_gradient(
            forest.loss, y, raw, weights, alpha=forest.loss_alpha
        )
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
    memory_budget: float | None = None,
) -> Any:
    """Node sums over an array-like or an iterable of chunks, summed exactly.

    Parameters
    ----------
    model : fitted tree model
    X : array-like, DataFrame or iterable of chunks
        Chunks may be ``(X, y)`` or ``(X, y, sample_weight)`` tuples.
    y, sample_weight : array-like, iterable of chunks, or None
    progress : bool, default=False
    memory_budget : float, optional
        Budget of one chunk in bytes (1 GiB by default).

    Returns
    -------
    NodeSums, or the only chunk ``(X, y, sample_weight)``
        The chunk itself when the data fit in one chunk and the criterion is not
        additive (absolute_error, huber), for the exact single-chunk functions.
    """
    from .._adapters import to_forest
    from .._core._chunks import DEFAULT_MEMORY_BUDGET
    from ._node_sums import (
        check_mergeable,
        is_mergeable,
        node_sums_bytes_per_row,
        sum_node_sums,
    )

    forest = to_forest(model)
    budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
    rows = rows_per_chunk(
        budget,
        node_sums_bytes_per_row(forest),
        what="routing one row through every tree",
    )
    if not is_chunk_stream(X) and not is_mergeable(forest):
        return (X, y, sample_weight)
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
        lambda c: chunk_node_sums(forest, *c),
        replay(),
        combine=sum_node_sums,
        progress=progress,
        total=n_rows(X),
        description="node statistics",
        rows_of=lambda c: n_rows(c[0]),
    )


def statistics_result(model: Any, sums: Any) -> Any:
    """The :class:`~treelens.NodeStatistics` of summed node sums."""
    from .._adapters import to_forest
    from ._node_statistics import NodeStatistics
    from ._node_sums import statistics_from_sums

    forest = to_forest(model)
    return NodeStatistics(
        forest, *(tuple(a) for a in statistics_from_sums(forest, sums))
    )


def importance_from_sums(model: Any, sums: Any) -> Any:
    """Held-out MDI (as :func:`treelens.mdi_importance` with X and y) from node sums."""
    from .._adapters import to_forest
    from ._mdi import mdi_from_statistics
    from ._node_sums import statistics_from_sums

    forest = to_forest(model)
    counts, weighted, _, impurity = statistics_from_sums(forest, sums)
    return mdi_from_statistics(
        forest, weighted, impurity, counts, method="MDI (held-out)"
    )


def stream_node_statistics(
    model: Any,
    X: Any,
    y: Any,
    sample_weight: Any = None,
    *,
    progress: bool = False,
    memory_budget: float | None = None,
) -> Any:
    """:func:`treelens.node_statistics` over chunks; see :func:`stream_node_sums`."""
    if not is_chunk_stream(X) and n_rows(X) == 0:
        raise InputError("X must hold at least one row; got 0 rows.")
    sums = stream_node_sums(
        model, X, y, sample_weight, progress=progress, memory_budget=memory_budget
    )
    if isinstance(sums, tuple):
        from ._node_statistics import node_statistics

        Xc, yc, wc = sums
        return node_statistics(model, Xc, yc, sample_weight=wc)
    return statistics_result(model, sums)


def stream_mdi_importance(
    model: Any,
    X: Any,
    y: Any,
    sample_weight: Any = None,
    *,
    progress: bool = False,
    memory_budget: float | None = None,
) -> Any:
    """Held-out :func:`treelens.mdi_importance` over chunks."""
    if y is None and not is_chunk_stream(X):
        raise InputError("Held-out MDI needs both X and y; expected both, got X only.")
    sums = stream_node_sums(
        model, X, y, sample_weight, progress=progress, memory_budget=memory_budget
    )
    if isinstance(sums, tuple):
        from ._mdi import mdi_importance

        Xc, yc, wc = sums
        return mdi_importance(model, Xc, yc, sample_weight=wc)
    return importance_from_sums(model, sums)
