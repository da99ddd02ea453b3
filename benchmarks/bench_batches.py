"""Batches at scale: feature tweaking over many rows in one process and on Dask.

Prints, for a synthetic 20-feature dataset (``make_classification``) and a
100-tree random forest (``max_depth=8``):

1. single process: rows per second and peak resident memory of
   ``treelens.feature_tweak`` over a stream of chunks (measured in a fresh
   subprocess with ``resource.getrusage``; target: under 2 GB whatever the row
   count);
2. Dask: the time of ``treelens.dask.feature_tweak`` on a local cluster of one
   single-threaded worker and of two, and the speed-up (target: at least 1.7x on
   a 2-core machine).

Usage::

    python benchmarks/bench_batches.py [--rows 1000000] [--dask-rows N]

The row counts scale the run; the defaults are those of the issue.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# One thread per process: the comparison is between processes, not BLAS threads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

N_FEATURES = 20
CHUNK_ROWS = 50_000
TARGET = 1


def _model(n_trees: int, max_depth: int):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(
        20_000, N_FEATURES, n_informative=10, random_state=0, shuffle=False
    )
    model = RandomForestClassifier(
        n_estimators=n_trees, max_depth=max_depth, random_state=0, n_jobs=1
    )
    return model.fit(X, y), X


def _chunk(i: int, rows: int):
    """Partition ``i`` of the synthetic rows (deterministic, made where needed)."""
    import numpy as np

    rng = np.random.default_rng(1000 + i)
    return rng.normal(size=(rows, N_FEATURES)) * 1.5


def _chunks(total: int, rows: int = CHUNK_ROWS):
    for i, start in enumerate(range(0, total, rows)):
        yield _chunk(i, min(rows, total - start))


def single_process(rows: int, n_trees: int, max_depth: int) -> dict[str, float]:
    """Run in a fresh process: feature_tweak over ``rows`` streamed rows."""
    import resource

    import treelens

    model, X_train = _model(n_trees, max_depth)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = treelens.feature_tweak(
        model, _chunks(rows), target=TARGET, reference=X_train, progress=False
    )
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "rows": rows,
        "seconds": elapsed,
        "found": int(result.found_.sum()),
        "peak_rss_mb": peak_kib / 1024,
        "rss_before_mb": baseline / 1024,
    }


def dask_speedup(rows: int, n_trees: int, max_depth: int) -> dict[str, float]:
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    from distributed import Client, LocalCluster

    import treelens.dask as tdask

    model, X_train = _model(n_trees, max_depth)
    part_rows = max(1, rows // 16)
    sizes = [min(part_rows, rows - s) for s in range(0, rows, part_rows)]
    columns = [f"x{j}" for j in range(N_FEATURES)]

    def make(args):
        i, n = args
        return pd.DataFrame(_chunk(i, n), columns=columns)

    frame = dd.from_map(
        make,
        list(enumerate(sizes)),
        meta=pd.DataFrame(np.empty((0, N_FEATURES)), columns=columns),
    )
    times = {}
    for workers in (1, 2):
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
            ) as cluster,
            Client(cluster),
        ):
            # Warm the workers (imports) so only the work is timed.
            tdask.feature_tweak(
                model,
                frame.partitions[0].head(10, compute=False),
                target=TARGET,
                reference=X_train,
            )
            start = time.perf_counter()
            result = tdask.feature_tweak(model, frame, target=TARGET, reference=X_train)
            times[workers] = time.perf_counter() - start
            assert len(result) == rows
    return {
        "rows": rows,
        "one": times[1],
        "two": times[2],
        "speedup": times[1] / times[2],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument(
        "--dask-rows",
        type=int,
        default=None,
        help="rows of the Dask comparison (default: --rows)",
    )
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--max-depth", type=int, default=8)
    parser.add_argument("--child", choices=["single"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "single":
        print(json.dumps(single_process(args.rows, args.trees, args.max_depth)))
        return
    print(
        f"feature_tweak, {args.trees}-tree random forest (max_depth={args.max_depth}), "
        f"{N_FEATURES} features, target class {TARGET}"
    )
    child = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            "single",
            "--rows",
            str(args.rows),
            "--trees",
            str(args.trees),
            "--max-depth",
            str(args.max_depth),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    single = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"single process: {single['rows']:,} rows in {single['seconds']:.1f} s = "
        f"{single['rows'] / single['seconds']:,.0f} rows/s; found {single['found']:,}; "
        f"peak RSS {single['peak_rss_mb']:,.0f} MB (before the batch "
        f"{single['rss_before_mb']:,.0f} MB; target < 2048 MB)"
    )
    dask_rows = args.dask_rows or args.rows
    result = dask_speedup(dask_rows, args.trees, args.max_depth)
    print(
        f"dask: {result['rows']:,} rows: 1 worker {result['one']:.1f} s, 2 workers "
        f"{result['two']:.1f} s, speed-up {result['speedup']:.2f}x (target >= 1.7x; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
