"""The Parquet dataset mode of ``treelens tweak`` and ``treelens importance``.

With ``--out-dir DIR`` (required when the data is a directory of Parquet files)
the commands process the dataset part by part (:mod:`treelens._io._dataset`): in this
process, on a local Dask cluster (``--workers N``) or on a running one
(``--scheduler ADDRESS``), writing one Parquet part per input part atomically;
``--resume`` keeps the parts already written.  The options are declared here so
that the command module only passes them on.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .._exceptions import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "OutDirOpt",
    "ResumeOpt",
    "SchedulerOpt",
    "TimeoutOpt",
    "WorkersOpt",
    "dataset_mode",
    "importance_dataset_tables",
    "tweak_dataset_tables",
]

OutDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--out-dir",
        metavar="DIR",
        help="Parquet dataset mode: process DATA (a Parquet file or a directory of "
        "them) part by part and write one Parquet part per input part to DIR.",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="With --out-dir: run the parts on the Dask scheduler at ADDRESS.",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="With --out-dir: run the parts on a local Dask cluster of N workers.",
    ),
]
ResumeOpt = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="With --out-dir: keep the output parts already written, compute the rest.",
    ),
]
TimeoutOpt = Annotated[
    float,
    typer.Option("--timeout", min=0.1, help="Seconds to wait for --scheduler."),
]


def dataset_mode(
    data: Path | None,
    out_dir: Path | None,
    *,
    scheduler: str | None,
    workers: int | None,
    resume: bool,
) -> bool:
    """Whether a command runs in Parquet dataset mode; refuse half-given options."""
    if scheduler is not None and workers is not None:
        raise InputError(
            "--scheduler and --workers exclude each other; expected at most one "
            f"(a running cluster, or a local one to start), got both ({scheduler!r} "
            f"and {workers})."
        )
    if out_dir is not None:
        if data is None:
            raise InputError("--out-dir needs data to process; got no data.")
        return True
    if data is not None and Path(data).is_dir():
        raise InputError(
            f"{str(data)!r} is a directory: a Parquet dataset needs --out-dir DIR for "
            "its output parts; got no --out-dir."
        )
    given = [
        name
        for name, value in (
            ("--scheduler", scheduler),
            ("--workers", workers),
            ("--resume", resume),
        )
        if value
    ]
    if given:
        raise InputError(
            f"{', '.join(given)} apply to Parquet dataset mode; expected --out-dir DIR "
            "too, got none."
        )
    return False


def _summary(run: Any, columns: Sequence[str]) -> pd.DataFrame:
    import pandas as pd
    import pyarrow.parquet as pq

    computed = set(run.computed)
    records = []
    for part, out in zip(run.inputs, run.outputs, strict=True):
        record: dict[str, Any] = {
            "part": part.name,
            "output": str(out),
            "state": "computed" if out in computed else "kept",
        }
        if "found" in columns:
            found = (
                pq.read_table(str(out), columns=["found"])
                .column("found")
                .to_numpy(zero_copy_only=False)
            )
            record["rows"] = int(found.size)
            record["found"] = int(found.sum())
        records.append(record)
    return pd.DataFrame.from_records(records)


def tweak_dataset_tables(
    model: Any,
    data: Path,
    out_dir: Path,
    *,
    target: Any,
    cost: str,
    mode: str,
    constraints: Mapping[str, Any],
    optimal: bool,
    time_limit: float,
    scheduler: str | None,
    workers: int | None,
    resume: bool,
    timeout: float,
) -> dict[str, tuple[str, pd.DataFrame]]:
    """Run ``tweak`` over a Parquet dataset; the summary table of its parts."""
    from .._io._dataset import tweak_dataset
    from .._report._tables import _constraints

    kwargs: dict[str, Any] = {"cost": cost, "constraints": _constraints(constraints)}
    if optimal:
        kwargs["time_limit"] = time_limit
    else:
        kwargs["mode"] = mode
    run = tweak_dataset(
        model,
        data,
        out_dir,
        target=target,
        optimal=optimal,
        resume=resume,
        scheduler=scheduler,
        workers=workers,
        progress=sys.stderr.isatty(),
        timeout=timeout,
        **kwargs,
    )
    title = (
        f"Counterfactuals of {run.rows} rows written to {out_dir} "
        f"({len(run.computed)} parts computed, {len(run.kept)} kept)"
    )
    return {"parts": (title, _summary(run, ["found"]))}


def importance_dataset_tables(
    model: Any,
    data: Path,
    out_dir: Path,
    *,
    target: str | None,
    permutation: bool,
    top: int | None,
    scheduler: str | None,
    workers: int | None,
    resume: bool,
    timeout: float,
) -> dict[str, tuple[str, pd.DataFrame]]:
    """Held-out MDI over a Parquet dataset; the importance table and its parts."""
    from .._importance._mdi import mdi_importance
    from .._io._dataset import importance_dataset
    from .._report._tables import importance_frame

    if target is None:
        raise InputError(
            "Held-out importance of a dataset needs --target COL; got none."
        )
    if permutation:
        raise InputError(
            "--permutation is not available in Parquet dataset mode (--out-dir); "
            "expected held-out MDI only."
        )
    run = importance_dataset(
        model,
        data,
        out_dir,
        target=target,
        resume=resume,
        scheduler=scheduler,
        workers=workers,
        progress=sys.stderr.isatty(),
        timeout=timeout,
    )
    frame = importance_frame(mdi_importance(model), held_out=run.result)
    if top is not None:
        frame = frame.head(top)
    title = (
        f"Feature importance (held-out MDI over {run.rows + _kept_rows(run)} rows in "
        f"{len(run.inputs)} parts; node sums in {out_dir})"
    )
    return {"importance": (title, frame)}


def _kept_rows(run: Any) -> int:
    from .._io._dataset import _part_rows

    kept = {o for o in run.kept}
    return sum(
        _part_rows(i) for i, o in zip(run.inputs, run.outputs, strict=True) if o in kept
    )
