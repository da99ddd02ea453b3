"""Batch runs over Parquet datasets: one output part per input part, resumable.

A dataset is a directory of Parquet files (its *parts*), or one Parquet file.
Each part is read in record batches (bounded memory whatever its size), processed,
and written to one output part of the same name.  Output parts are written to a
hidden temporary file in the output directory and renamed into place when
complete, so an interrupted run leaves every part either whole or absent; a
rerun with ``resume=True`` computes only the parts that are absent.

Parts run one after another in this process, or as tasks on a Dask cluster
(``scheduler=`` the address of a running scheduler, or ``workers=N`` to start a
local one), with the model shipped once to every worker.  Workers must see the
input and output paths (a shared file system).

:func:`tweak_dataset` writes per row: ``row`` (position in its part), ``found``,
``cost``, ``reason``, the status and gap of optimal solves, and the counterfactual
values as ``cf_<feature>`` columns (NaN where none was found).
:func:`importance_dataset` writes per part the additive node sums
(:class:`~treelens._importance._node_sums.NodeSums`) and returns held-out MDI of the whole
dataset computed from their exact total.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core._forest import Forest
from .._counterfactual._frame import counterfactual_columns, counterfactual_table
from .._exceptions import InputError

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "DatasetRun",
    "atomic_parquet_writer",
    "dataset_feature_columns",
    "dataset_parts",
    "importance_dataset",
    "tweak_dataset",
]

#: Rows read from a Parquet part at a time.
DEFAULT_BATCH_ROWS = 65_536

_TMP_MARK = ".tmp-"


@dataclass(frozen=True)
class DatasetRun:
    """What a dataset run did.

    Attributes
    ----------
    inputs : list of Path
        The input parts, in order.
    outputs : list of Path
        The output part of each input part.
    computed : list of Path
        Output parts written by this run.
    kept : list of Path
        Output parts kept from an earlier run (``resume=True``).
    rows : int
        Rows processed by this run.
    result : object
        The combined result, for runs that have one (held-out MDI).
    """

    inputs: list[Path]
    outputs: list[Path]
    computed: list[Path]
    kept: list[Path]
    rows: int
    result: Any = field(default=None)


# ------------------------------------------------------------------- files
def dataset_parts(path: str | os.PathLike[str]) -> list[Path]:
    """The Parquet parts of a dataset: the ``*.parquet`` files of a directory
    (sorted by name, hidden files skipped), or the file itself.

    Raises
    ------
    InputError
        If the path does not exist, holds no Parquet file, or a part is not a
        readable Parquet file (a CSV file, a truncated part).
    """
    path = Path(path)
    if path.is_file():
        _check_parquet(path)
        return [path]
    if not path.is_dir():
        raise InputError(
            f"The dataset {str(path)!r} does not exist; expected a Parquet file or a "
            "directory of Parquet files."
        )
    parts = sorted(
        p
        for p in path.iterdir()
        if p.is_file()
        and not p.name.startswith((".", "_"))
        and p.suffix in (".parquet", ".pq")
    )
    if not parts:
        raise InputError(
            f"The directory {str(path)!r} holds no Parquet file; expected files "
            "named *.parquet."
        )
    for part in parts:
        _check_parquet(part)
    return parts


def _check_parquet(part: Path) -> None:
    """Refuse a part whose Parquet footer cannot be read, before any work."""
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(str(part))
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise InputError(
            f"The dataset part {str(part)!r} is not a readable Parquet file "
            f"({type(exc).__name__}: {exc}); expected Parquet files (--out-dir "
            "processes Parquet datasets; give a CSV file without --out-dir)."
        ) from exc


def _output_dir(out: str | os.PathLike[str], inputs: Sequence[Path]) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(
            f"The output {str(out)!r} is a file; expected a directory (created if "
            "missing) for the output parts."
        )
    resolved = out.resolve()
    for part in inputs:
        if part.resolve().parent == resolved:
            raise InputError(
                f"The output directory {str(out)!r} is the input dataset's directory; "
                "expected another directory, so that no input part is overwritten."
            )
    out.mkdir(parents=True, exist_ok=True)
    return out


def _remove_stale_temporaries(out: Path) -> None:
    for p in out.iterdir():
        if p.name.startswith(".") and _TMP_MARK in p.name:
            p.unlink(missing_ok=True)


@contextmanager
def atomic_parquet_writer(path: Path, schema: Any) -> Iterator[Any]:
    """A ``pyarrow.parquet.ParquetWriter`` that becomes ``path`` only on success.

    Writes go to a hidden temporary file next to ``path``; leaving the block
    normally closes it and renames it to ``path`` (atomic on one file system);
    an exception removes it, so ``path`` is never half-written.
    """
    import pyarrow.parquet as pq

    path = Path(path)
    tmp = path.with_name(f".{path.name}{_TMP_MARK}{uuid.uuid4().hex}")
    writer = pq.ParquetWriter(str(tmp), schema)
    try:
        yield writer
        writer.close()
        os.replace(tmp, path)
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise


def dataset_feature_columns(
    data: str | os.PathLike[str], *, exclude: Sequence[str] = ()
) -> list[str]:
    """The feature columns of a dataset, in the order of its first part: its
    columns but those of ``exclude`` (the target, the weights) and a stored
    pandas index.

    They are the columns a model fitted without feature names reads, by
    position, so they name its features as a data file's columns do (see
    :func:`~treelens._io._files.named_by_columns`).

    Raises
    ------
    InputError
        As :func:`dataset_parts`.
    """
    return _feature_columns(_part_columns(dataset_parts(data)[0]), exclude)


def _feature_columns(columns: Sequence[str], exclude: Sequence[str]) -> list[str]:
    return [
        c for c in columns if c not in exclude and not c.startswith("__index_level")
    ]


def _check_part_columns(
    forest: Any, columns: Sequence[str], part: Path, exclude: Sequence[str]
) -> list[str]:
    """Feature columns of a part, in the model's order; raise if any is missing."""
    available = _feature_columns(columns, exclude)
    if forest.has_feature_names:
        expected = list(forest.feature_names)
        missing = [n for n in expected if n not in available]
        if missing:
            raise InputError(
                f"The part {part.name!r} lacks the model's features {missing}; expected "
                f"columns {expected}, got {list(columns)}."
            )
        return expected
    if len(available) != forest.n_features:
        raise InputError(
            f"The part {part.name!r} has {len(available)} feature columns, but the "
            f"model expects {forest.n_features}; got columns {list(columns)}."
        )
    return available


def _batches(part: Path, batch_rows: int) -> Iterator[Any]:
    import pyarrow.parquet as pq

    with pq.ParquetFile(str(part)) as handle:
        for batch in handle.iter_batches(batch_size=batch_rows):
            yield batch.to_pandas()


def _part_rows(part: Path) -> int:
    import pyarrow.parquet as pq

    with pq.ParquetFile(str(part)) as handle:
        return int(handle.metadata.num_rows)


def _part_columns(part: Path) -> list[str]:
    import pyarrow.parquet as pq

    with pq.ParquetFile(str(part)) as handle:
        return list(handle.schema_arrow.names)


# --------------------------------------------------------------- per part
def _counterfactual_schema(forest: Forest, optimal: bool) -> Any:
    import pyarrow as pa

    kinds = {
        "int": pa.int64(),
        "bool": pa.bool_(),
        "float": pa.float64(),
        "str": pa.string(),
    }
    columns = counterfactual_columns(forest, optimal)
    return pa.schema([(name, kinds[kind]) for name, kind in columns.items()])


def _tweak_part(
    model: Any,
    part: Path,
    out: Path,
    optimal: bool,
    kwargs: dict[str, Any],
    batch_rows: int,
) -> int:
    import pyarrow as pa

    from .._adapters import to_forest
    from .._counterfactual._optimal import optimal_counterfactual
    from .._counterfactual._tweak import feature_tweak

    # The Forest the search itself uses (built once per model and process).
    forest = to_forest(model)
    function = optimal_counterfactual if optimal else feature_tweak
    schema = _counterfactual_schema(forest, optimal)
    columns = _check_part_columns(forest, _part_columns(part), part, ())
    rows = 0
    with atomic_parquet_writer(out, schema) as writer:
        for frame in _batches(part, batch_rows):
            X = frame[columns]
            if not forest.has_feature_names:
                X = X.to_numpy()
            result = function(model, X, **kwargs)
            table = pa.Table.from_pandas(
                counterfactual_table(result, forest, rows, optimal),
                schema=schema,
                preserve_index=False,
            )
            writer.write_table(table)
            rows += len(frame)
    return rows


def _sums_part(
    model: Any, part: Path, out: Path, target: str, weight: str | None, batch_rows: int
) -> int:
    import pyarrow as pa

    from .._adapters import to_forest
    from .._importance._streaming import chunk_node_sums

    forest = to_forest(model)
    names = _part_columns(part)
    for column in (target, weight):
        if column is not None and column not in names:
            raise InputError(
                f"The part {part.name!r} has no column {column!r}; expected it among "
                f"{names}."
            )
    exclude = [c for c in (target, weight) if c is not None]
    columns = _check_part_columns(forest, names, part, exclude)
    total = None
    rows = 0
    for frame in _batches(part, batch_rows):
        X = frame[columns]
        if not forest.has_feature_names:
            X = X.to_numpy()
        sums = chunk_node_sums(
            forest, X, frame[target], None if weight is None else frame[weight]
        )
        total = sums if total is None else total + sums
        rows += len(frame)
    if total is None:
        from .._importance._node_sums import node_sums

        total = node_sums(
            forest, np.empty((0, forest.n_trees), np.intp), np.empty(0), np.empty(0)
        )
    table = pa.Table.from_pandas(total.to_frame(), preserve_index=False)
    with atomic_parquet_writer(out, table.schema) as writer:
        writer.write_table(table)
    return rows


# ----------------------------------------------------------------- runner
def _run_part(task: Callable[..., int], shared: Any, part: Path, out: Path) -> int:
    model, args = shared
    return task(model, part, out, *args)


def _run_parts(
    task: Callable[..., int],
    model: Any,
    jobs: list[tuple[Path, Path]],
    args: tuple[Any, ...],
    *,
    scheduler: str | None,
    workers: int | None,
    progress: bool,
    timeout: float,
    description: str,
) -> int:
    """Run ``task(model, part, out, *args)`` for every job; return the rows done."""
    from .._core._chunks import ProgressBar

    if scheduler is not None and workers is not None:
        raise InputError(
            "Give either a scheduler address or a number of local workers; got both "
            f"({scheduler!r} and {workers})."
        )
    if not jobs:
        return 0
    if scheduler is None and workers is None:
        total = sum(_part_rows(part) for part, _ in jobs)
        done = 0
        with ProgressBar(enabled=progress, total=total, description=description) as bar:
            for part, out in jobs:
                rows = task(model, part, out, *args)
                done += rows
                bar.advance(rows)
        return done
    from ._cluster import connect, local_cluster

    client = (
        connect(scheduler, timeout=timeout)
        if scheduler is not None
        else local_cluster(int(workers or 1))
    )
    try:
        from distributed import as_completed

        # The model and the arguments (reference data can be large) travel once
        # to every worker, not once per part.
        shared = client.scatter([(model, args)], broadcast=True, hash=False)[0]
        futures = [
            client.submit(
                _run_part,
                task,
                shared,
                part,
                out,
                pure=False,
                key=f"treelens-{out.stem}-{uuid.uuid4().hex}",
            )
            for part, out in jobs
        ]
        done = 0
        with ProgressBar(
            enabled=progress, total=len(futures), description=f"{description} (parts)"
        ) as bar:
            for future in as_completed(futures):
                done += future.result()
                bar.advance(1)
        return done
    finally:
        client.close()


def _plan(
    data: str | os.PathLike[str], out: str | os.PathLike[str], resume: bool
) -> tuple[list[Path], list[Path], list[tuple[Path, Path]], list[Path]]:
    inputs = dataset_parts(data)
    out_dir = _output_dir(out, inputs)
    _remove_stale_temporaries(out_dir)
    outputs = [out_dir / (p.stem + ".parquet") for p in inputs]
    if len(set(outputs)) != len(outputs):
        raise InputError(
            "Two input parts would share one output part name; expected parts with "
            "distinct names."
        )
    jobs = [(i, o) for i, o in zip(inputs, outputs) if not (resume and o.exists())]
    kept = [o for o in outputs if resume and o.exists()]
    return inputs, outputs, jobs, kept


def tweak_dataset(
    model: Any,
    data: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    target: Any,
    optimal: bool = False,
    resume: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    timeout: float = 10.0,
    **kwargs: Any,
) -> DatasetRun:
    """Counterfactuals for every row of a Parquet dataset, one output part per part.

    Parameters
    ----------
    model : fitted tree model
    data : path
        A Parquet file or a directory of Parquet files; extra columns are ignored.
    out : path
        Output directory (created); must differ from the input directory.
    target : class label, "other" or (low, high)
        As :func:`treelens.feature_tweak`.
    optimal : bool, default=False
        Use :func:`treelens.optimal_counterfactual` instead of feature tweaking.
    resume : bool, default=False
        Keep output parts that already exist and compute only the missing ones.
    scheduler : str, optional
        Address of a running Dask scheduler to run the parts on.
    workers : int, optional
        Start a local Dask cluster with this many single-threaded workers.
    progress : bool, default=False
        Show a progress bar (rows, or parts on a cluster).
    batch_rows : int
        Rows read from a part at a time.
    timeout : float, default=10.0
        Seconds to wait for the scheduler.
    **kwargs
        Passed to the counterfactual function (cost, constraints, ...).

    Returns
    -------
    DatasetRun
    """
    from .._adapters import to_forest

    forest = to_forest(model)
    inputs, outputs, jobs, kept = _plan(data, out, resume)
    for part, _ in jobs[:1]:
        _check_part_columns(forest, _part_columns(part), part, ())
    rows = _run_parts(
        _tweak_part,
        model,
        jobs,
        (bool(optimal), {"target": target, **kwargs}, int(batch_rows)),
        scheduler=scheduler,
        workers=workers,
        progress=progress,
        timeout=timeout,
        description="counterfactuals",
    )
    return DatasetRun(inputs, outputs, [o for _, o in jobs], kept, rows)


def importance_dataset(
    model: Any,
    data: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    target: str,
    sample_weight: str | None = None,
    resume: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    timeout: float = 10.0,
) -> DatasetRun:
    """Held-out MDI over a Parquet dataset from exact per-part node sums.

    Parameters
    ----------
    model : fitted tree model
    data : path
        A Parquet file or a directory of Parquet files holding the features and
        the ``target`` column.
    out : path
        Output directory for the per-part node sums (created).
    target : str
        Column holding y.
    sample_weight : str, optional
        Column holding the sample weights.
    resume, scheduler, workers, progress, batch_rows, timeout
        As :func:`tweak_dataset`.

    Returns
    -------
    DatasetRun
        ``result`` holds the held-out MDI (as :func:`treelens.mdi_importance`
        with ``X`` and ``y`` over the whole dataset).
    """
    import pyarrow.parquet as pq

    from .._adapters import to_forest
    from .._importance._mdi import mdi_from_sums
    from .._importance._node_sums import NodeSums, check_mergeable, sum_node_sums

    forest = to_forest(model)
    inputs, outputs, jobs, kept = _plan(data, out, resume)
    if not isinstance(target, str):
        raise InputError(f"`target` must name a column; got {target!r}.")
    check_mergeable(forest)
    rows = _run_parts(
        _sums_part,
        forest,
        jobs,
        (target, sample_weight, int(batch_rows)),
        scheduler=scheduler,
        workers=workers,
        progress=progress,
        timeout=timeout,
        description="node statistics",
    )
    total = sum_node_sums(
        NodeSums.from_frame(pq.read_table(str(o)).to_pandas()) for o in outputs
    )
    result = mdi_from_sums(forest, total)
    return DatasetRun(inputs, outputs, [o for _, o in jobs], kept, rows, result)
