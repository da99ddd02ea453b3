"""Counterfactual searches chunk by chunk.

Each row's counterfactual does not depend on which other rows share its chunk,
so results over consecutive chunks are concatenated (:func:`concat_counterfactuals`)
and equal the result over all rows at once.  The same concatenation serves Dask
partitions (:mod:`treelens.dask`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .._adapters import to_forest
from .._core._chunks import (
    is_chunk_stream,
    iter_chunks,
    n_rows,
    rows_per_chunk,
    run_in_chunks,
)
from .._core._forest import Forest
from .._exceptions import InputError
from ._inference import ColumnSummary, RunSummary, infer_over_blocks, resolve_infer
from ._problem import (
    CounterfactualResult,
    as_float64,
    declared_columns,
    reference_float64,
)

__all__ = [
    "check_candidate_budget",
    "concat_counterfactuals",
    "infer_once",
    "search_all_in_chunks",
    "search_in_chunks",
]

# Bytes per (row, candidate leaf) pair while feature tweaking builds candidates:
# about twenty float64 temporaries per feature (the search's own estimate).
_BYTES_PER_PAIR_PER_FEATURE = 160
_BYTES_PER_PAIR = 64
# Attributes of a counterfactual result that hold one entry per feature.
_PER_FEATURE = frozenset({"epsilon_", "margin_"})


def concat_counterfactuals(parts: list[CounterfactualResult]) -> CounterfactualResult:
    """One counterfactual result from results over consecutive chunks of rows.

    Array and DataFrame attributes (one entry per row) are concatenated; the
    others (feature
    names, target, cost name, method, the per-feature ``epsilon_`` and
    ``margin_``) are the same in every part and taken from the first; ``row_``
    counts on from part to part.
    """
    if not parts:
        raise InputError("X holds no rows; expected at least one row.")
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(first):
        value = getattr(first, item.name)
        if isinstance(value, np.ndarray) and item.name not in _PER_FEATURE:
            changes[item.name] = np.concatenate([getattr(p, item.name) for p in parts])
        elif isinstance(value, pd.DataFrame):
            changes[item.name] = pd.concat([getattr(p, item.name) for p in parts])
    # Positions in the rows given: each part's count on from the last.
    sizes = [int(p.row_.max()) + 1 if len(p) else 0 for p in parts]  # type: ignore[union-attr]
    starts = np.cumsum([0, *sizes[:-1]])
    changes["row_"] = np.concatenate(
        [p.row_ + start for p, start in zip(parts, starts)]
    )
    return dataclasses.replace(first, **changes)


def search_in_chunks(
    search: Callable[[Any], CounterfactualResult],
    X: Any,
    *,
    chunk_rows: int,
    progress: bool,
    description: str,
) -> CounterfactualResult:
    """Run ``search(chunk)`` over chunks of ``X`` and concatenate the results.

    Parameters
    ----------
    search : callable
        The search on one chunk of rows, without progress bar; it bounds the
        memory of its own candidates.
    X : array-like, DataFrame or iterable of chunks
    chunk_rows : int
        Rows per chunk when ``X`` is one array-like.
    progress : bool
        Show a progress bar over the rows.
    description : str
        Label of the progress bar.

    Returns
    -------
    CounterfactualResult
        Equal row for row to the search over all rows at once.
    """
    return run_in_chunks(
        search,
        iter_chunks(X, chunk_rows),
        combine=concat_counterfactuals,
        progress=progress,
        total=n_rows(X),
        description=description,
    )


def check_candidate_budget(forest: Forest, target: Any, memory_budget: Any) -> None:
    """Refuse a memory budget that cannot hold the candidates of one row.

    Feature tweaking never splits a row's candidates: a row needs memory for
    every target leaf (at most every leaf predicting the target class, or every
    leaf for other targets) times the bytes of one candidate.

    Raises
    ------
    MemoryBudgetError
        If ``memory_budget`` is smaller than what one row may need.
    """
    if not isinstance(memory_budget, (int, float, np.integer, np.floating)):
        return  # the search itself reports a budget of the wrong type
    n_leaves = _target_leaves_bound(forest, target)
    per_pair = _BYTES_PER_PAIR_PER_FEATURE * forest.n_features + _BYTES_PER_PAIR
    rows_per_chunk(
        float(memory_budget),
        n_leaves * per_pair,
        what=f"the candidates of one row ({n_leaves} target leaves)",
    )


def _target_leaves_bound(forest: Forest, target: Any) -> int:
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


def infer_once(
    model: Any, X: Any, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The options of a search run chunk by chunk, with the constraints
    inferred once over all the rows.

    The inference depends on the rows explained (an inference a row would
    break is not made), so chunks inferring their own could each constrain
    differently and give other answers than one call over all rows.  Returns
    the options for every chunk (the inferred constraints added, ``infer``
    off) and the inferences to report, or the options unchanged and None
    when nothing is inferred (no reference, ``infer=False``) or the chunks
    come from an iterator, which can be read only once: each chunk then
    infers its own.
    """
    reference = options.get("reference")
    kinds = resolve_infer(options.get("infer", True))
    if reference is None or not kinds:
        return options, None
    if is_chunk_stream(X) and not isinstance(X, (list, tuple)):
        return options, None
    forest = to_forest(model)
    given = X if is_chunk_stream(X) else [X]
    ref = reference_float64(forest, reference)
    blocks = [as_float64(forest, b) for b in given]
    constraints, inferred = infer_over_blocks(
        forest,
        ref,
        [
            (ColumnSummary.of(b), declared_columns(forest, g))
            for b, g in zip(blocks, given)
        ],
        lambda flags: [RunSummary.of(flags, b) for b in blocks],
        options.get("constraints"),
        kinds,
    )
    return {**options, "constraints": constraints, "infer": False}, inferred


def search_all_in_chunks(
    search: Callable[..., CounterfactualResult],
    model: Any,
    X: Any,
    options: dict[str, Any],
    *,
    chunk_rows: int,
    description: str,
) -> CounterfactualResult:
    """``search(model, chunk, **options)`` chunk by chunk (a progress bar when
    ``options["progress"]``), with the constraints inferred once over all the
    rows (:func:`infer_once`) and reported on the combined result."""
    options, inferred = infer_once(model, X, options)
    result = search_in_chunks(
        partial(search, model, **{**options, "progress": False}),
        X,
        chunk_rows=chunk_rows,
        progress=options["progress"],
        description=description,
    )
    if inferred is None:
        return result
    return dataclasses.replace(result, inferred_=inferred)
