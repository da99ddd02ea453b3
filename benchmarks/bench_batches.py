"""Batches at scale: feature tweaking over many rows in one process and on Dask.

For a synthetic 20-feature dataset (``make_classification``) written as a Parquet
dataset, and a 100-tree random forest (``max_depth=8``), prints:

1. single process: rows per second and peak resident memory of the Parquet
   dataset run (``treelens tweak ... --out-dir``: parts read in batches, results
   written part by part), measured in a fresh subprocess with
   ``resource.getrusage`` (target: under 2 GB whatever the row count); and of
   ``treelens.feature_tweak`` over a stream of chunks returning the whole result
   in memory;
2. Dask: a dataset run (16 parts) on a local cluster of one single-threaded
   worker and of two (workers started and warmed before timing; best of
   ``--repeats`` runs, alternating), and the speed-up (target: at least 1.7x on a
   2-core machine).

Usage::

    python benchmarks/bench_batches.py [--full | --rows N] [--dask-rows N]
        [--single both|dataset|stream] [--no-dask | --dask-only]

By default a quick run of 2,000 rows that shows the same quantities (2 minutes
on a shared 2-core machine at load average 6, some 150 rows a second per
process); ``--full`` is the run of the issue, 1,000,000 rows (hours: its point is
the memory bound), and ``--rows`` any other size.  The first line printed says
which was run.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One thread per process: the comparison is between processes, not BLAS threads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

N_FEATURES = 20
N_PARTS = 16  # parts of the Dask run
DEFAULT_BATCH_ROWS = 65_536  # treelens._io._dataset.DEFAULT_BATCH_ROWS
TARGET = 1
QUICK_ROWS = 2_000  # the default run
FULL_ROWS = 1_000_000  # --full: the run


def _model(n_trees: int, max_depth: int):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(
        20_000, N_FEATURES, n_informative=10, random_state=0, shuffle=False
    )
    model = RandomForestClassifier(
        n_estimators=n_trees, max_depth=max_depth, random_state=0, n_jobs=2
    )
    model.fit(X, y)
    model.n_jobs = 1
    return model, X


def _write_dataset(directory: Path, rows: int, per_part: int) -> None:
    """``rows`` rows of the synthetic distribution as Parquet parts of ``per_part``."""
    import numpy as np
    import pandas as pd

    directory.mkdir(parents=True)
    columns = [f"x{j}" for j in range(N_FEATURES)]
    for i, start in enumerate(range(0, rows, per_part)):
        n = min(per_part, rows - start)
        values = np.random.default_rng(1000 + i).normal(size=(n, N_FEATURES)) * 1.5
        pd.DataFrame(values, columns=columns).to_parquet(
            directory / f"part-{i:03d}.parquet", index=False
        )


def _child(kind: str, model_path: str, data: str, out: str) -> dict[str, float]:
    """Run in a fresh process, so that its peak memory is the batch's alone."""
    import resource

    import pandas as pd

    import treelens
    from treelens._io._dataset import dataset_parts, tweak_dataset

    with open(model_path, "rb") as handle:
        model, reference = pickle.load(handle)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if kind == "dataset":
        run = tweak_dataset(model, data, out, target=TARGET, reference=reference)
        rows = run.rows
    else:  # one streamed call, the whole result in memory
        chunks = (pd.read_parquet(p) for p in dataset_parts(data))
        result = treelens.feature_tweak(
            model, chunks, target=TARGET, reference=reference
        )
        rows = len(result)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "rows": rows,
        "seconds": elapsed,
        "peak_mb": peak / 1024,
        "before_mb": before / 1024,
    }


def _run_child(kind: str, model_path: Path, data: Path, out: Path) -> dict[str, float]:
    child = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            kind,
            str(model_path),
            str(data),
            str(out),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def _busy(_: int) -> int:
    total = 0
    for i in range(10_000_000):
        total += i
    return total


def cpu_parallelism() -> float:
    """How many times faster two pure-Python busy processes finish together than
    one after the other (2.0 on two idle cores): the ceiling of any speed-up of
    two workers on this machine right now."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_busy, [0, 1]))  # start the processes
        start = time.perf_counter()
        list(pool.map(_busy, [0]))
        one = time.perf_counter() - start
        start = time.perf_counter()
        list(pool.map(_busy, [0, 1]))
        two = time.perf_counter() - start
    return 2 * one / two


def _dask_times(
    model, reference, data: Path, root: Path, repeats: int
) -> dict[int, float]:
    """Best time of ``repeats`` runs on 1 and on 2 workers, the two alternating (the
    machine is shared: alternating spreads any outside load over both)."""
    from treelens._io._dataset import tweak_dataset
    from treelens.dask import local_cluster

    warm = root / "warm"
    _write_dataset(warm, 64, 4)
    times = {1: float("inf"), 2: float("inf")}
    for repeat in range(repeats):
        for workers in (1, 2):
            # The clusters of `treelens tweak --workers N`.
            with local_cluster(workers) as client:
                address = client.scheduler.address
                # Imports and the first model transfer happen here, not in the timing.
                tweak_dataset(
                    model,
                    warm,
                    root / f"warm-out-{workers}-{repeat}",
                    target=TARGET,
                    reference=reference,
                    scheduler=address,
                )
                start = time.perf_counter()
                tweak_dataset(
                    model,
                    data,
                    root / f"out-{workers}-{repeat}",
                    target=TARGET,
                    reference=reference,
                    scheduler=address,
                )
                times[workers] = min(times[workers], time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--rows",
        type=int,
        default=None,
        help=f"rows of the single-process runs (default {QUICK_ROWS:,})",
    )
    size.add_argument(
        "--full",
        action="store_true",
        help=f"the issue's run: {FULL_ROWS:,} rows (hours, not minutes)",
    )
    parser.add_argument(
        "--dask-rows",
        type=int,
        default=None,
        help="rows of the Dask comparison (default: --rows)",
    )
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--max-depth", type=int, default=8)
    parser.add_argument(
        "--dask-only", action="store_true", help="skip the single-process runs"
    )
    parser.add_argument(
        "--single",
        choices=("both", "dataset", "stream"),
        default="both",
        help="which single-process runs to make",
    )
    parser.add_argument(
        "--no-dask", action="store_true", help="skip the Dask comparison"
    )
    parser.add_argument(
        "--repeats", type=int, default=2, help="Dask runs per worker count (best of)"
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    if args.rows is None:
        args.rows = FULL_ROWS if args.full else QUICK_ROWS
    kind = (
        "full run" if args.full else "quick run" if args.rows == QUICK_ROWS else "run"
    )
    print(
        f"{kind}: {args.rows:,} rows"
        + ("" if args.no_dask else f", Dask on {args.dask_rows or args.rows:,}")
        + ("" if args.full else f" (--full for the issue's {FULL_ROWS:,})")
    )
    print(
        f"feature_tweak, {args.trees}-tree random forest (max_depth={args.max_depth}), "
        f"{N_FEATURES} features, target class {TARGET}; {os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.1f} at the start"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, reference = _model(args.trees, args.max_depth)
        model_path = root / "model.pkl"
        with open(model_path, "wb") as handle:
            pickle.dump((model, reference), handle)
        # Parts as large as one batch read from them (the largest unit of work).
        data = root / "data"
        _write_dataset(data, args.rows, DEFAULT_BATCH_ROWS)
        runs = (
            ("dataset", "Parquet dataset run (parts in, parts out)"),
            ("stream", "feature_tweak over a stream (result in memory)"),
        )
        for kind, label in runs:
            if args.dask_only or args.single not in ("both", kind):
                continue
            r = _run_child(kind, model_path, data, root / f"single-{kind}")
            print(
                f"single process, {label}: {r['rows']:,} rows in {r['seconds']:.1f} s = "
                f"{r['rows'] / r['seconds']:,.0f} rows/s; peak RSS {r['peak_mb']:,.0f} MB "
                f"(model loaded: {r['before_mb']:,.0f} MB; target < 2048 MB)"
            )
        if args.no_dask:
            return
        dask_rows = args.dask_rows or args.rows
        dask_data = root / "dask-data"
        _write_dataset(dask_data, dask_rows, -(-dask_rows // N_PARTS))
        before = cpu_parallelism()
        times = _dask_times(model, reference, dask_data, root, args.repeats)
        after = cpu_parallelism()
        print(
            f"dask, Parquet dataset run of {dask_rows:,} rows in {N_PARTS} parts, best of "
            f"{args.repeats}: 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s, speed-up "
            f"{times[1] / times[2]:.2f}x (target >= 1.7x; load average "
            f"{os.getloadavg()[0]:.1f} at the end)"
        )
        print(
            f"CPU available to two processes right now: {before:.2f}x before the Dask "
            f"runs, {after:.2f}x after (2.00x on two idle cores; the ceiling of the "
            "speed-up)"
        )


if __name__ == "__main__":
    main()
