"""Time and peak memory of ``treelens report`` per stage, and the command's start-up.

Four tables, in one run: a 100-tree random forest (scikit-learn defaults, fully
grown) on 5,000 and 50,000 rows of 30 and 200 features, saved with skops; the data
file (Parquet) holds the same rows with the target, so the report warns that it
is the training data.  Each report runs as the real command in a subprocess with
``TREELENS_PROGRESS=1``, whose progress lines give the seconds and the peak
resident memory at the start of every stage; a stage's time is the difference to
the next line.  Start-up: the wall time of ``treelens --help`` and of a usage
error (best of three).

The models and data are cached in ``$TREELENS_BENCH_CACHE`` (default a
``treelens-bench`` folder in the system's temporary directory), since fitting the
forests takes minutes.  Targets: 50,000 x 200 within 60 s and 2 GB, 50,000 x 30
within 20 s, start-up within 1 s.

    python benchmarks/bench_report.py [--quick]

``--quick`` runs only the two 5,000-row cases.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CACHE = Path(
    os.environ.get(
        "TREELENS_BENCH_CACHE", Path(tempfile.gettempdir()) / "treelens-bench"
    )
)
SIZES = [(5_000, 30), (5_000, 200), (50_000, 30), (50_000, 200)]
TARGETS = {(50_000, 30): (20.0, 2048), (50_000, 200): (60.0, 2048)}
COMMAND = [sys.executable, "-m", "treelens"]
_LINE = re.compile(r"treelens: \[\s*([\d.]+) s, cpu\s*([\d.]+) s,\s*([\d.]+) MB\] (.*)")


def case_files(n_rows: int, n_features: int) -> tuple[Path, Path]:
    """The skops model and the Parquet data of one size, made once."""
    import pandas as pd
    import skops.io
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    CACHE.mkdir(parents=True, exist_ok=True)
    model_path = CACHE / f"forest-{n_rows}x{n_features}.skops"
    data_path = CACHE / f"data-{n_rows}x{n_features}.parquet"
    if model_path.exists() and data_path.exists():
        return model_path, data_path
    X, y = make_classification(
        n_samples=n_rows,
        n_features=n_features,
        n_informative=min(10, n_features // 2),
        random_state=0,
    )
    frame = pd.DataFrame(X, columns=[f"f{i:03d}" for i in range(n_features)])
    model = RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=2)
    model.fit(frame, y)
    model.n_jobs = None
    skops.io.dump(model, model_path)
    frame.assign(label=y).to_parquet(data_path)
    return model_path, data_path


def run_report(model_path: Path, data_path: Path, out: Path) -> tuple[float, list]:
    """Wall time of the whole command, and per stage (name, wall s, CPU s, peak MB)."""
    env = {**os.environ, "TREELENS_PROGRESS": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [*COMMAND, "report", str(model_path), str(data_path)]
        + ["--target", "label", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report failed ({done.returncode}): {done.stderr[-2000:]}")
    marks = [
        (float(m.group(1)), float(m.group(2)), float(m.group(3)), m.group(4))
        for m in map(_LINE.match, done.stderr.splitlines())
        if m
    ]
    stages = [
        (name, later[0] - at, later[1] - cpu, later[2])
        for (at, cpu, _, name), later in itertools.pairwise(marks)
    ]
    # Before the first line: starting Python and importing the command.
    first = marks[0]
    return wall, [("start-up and imports", first[0], first[1], first[2]), *stages]


def start_up() -> tuple[float, float]:
    """Best of three wall times of ``--help`` and of a usage error."""
    times = {"help": [], "usage": []}
    for _ in range(3):
        for name, args in (("help", ["--help"]), ("usage", ["report"])):
            started = time.perf_counter()
            subprocess.run([*COMMAND, *args], capture_output=True, check=False)
            times[name].append(time.perf_counter() - started)
    return min(times["help"]), min(times["usage"])


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    sizes = SIZES[:2] if quick else SIZES
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f} at the start")
    help_s, usage_s = start_up()
    print(f"start-up: --help {help_s:.2f} s, usage error {usage_s:.2f} s (target 1 s)")
    with tempfile.TemporaryDirectory() as scratch:
        for n_rows, n_features in sizes:
            model_path, data_path = case_files(n_rows, n_features)
            wall, stages = run_report(
                model_path, data_path, Path(scratch) / "report.html"
            )
            peak = max(mb for *_, mb in stages)
            cpu = sum(c for _, _, c, _ in stages)
            target = TARGETS.get((n_rows, n_features))
            verdict = (
                ""
                if target is None
                else f"  (target {target[0]:.0f} s, {target[1]} MB: "
                f"{'met' if wall <= target[0] and peak <= target[1] else 'MISSED'})"
            )
            print(
                f"\nreport, {n_rows:,} rows x {n_features} features: {wall:.1f} s "
                f"wall, {cpu:.1f} s CPU, peak {peak:.0f} MB{verdict}"
            )
            print(f"  {'stage':<52} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}")
            for name, seconds, cpu_s, mb in stages:
                print(f"  {name[:52]:<52} {seconds:7.1f} {cpu_s:7.1f} {mb:8.0f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average {load:.1f} at the end (2 cores shared with other work)")


if __name__ == "__main__":
    main()
