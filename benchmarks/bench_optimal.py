"""Optimal counterfactuals (HiGHS through highspy) next to feature tweaking.

For declined rows (predicted class 0) of random forests on standardized
``load_breast_cancer``, target class 1, L1 cost: the time of each row's
``optimal_counterfactual`` call on one shared Forest (feature tweaking's warm
start included; the model's part of the program is built once), how many
rows were proven optimal, and the mean ratio of feature tweaking's cost to the
optimal cost where both exist.  Every answer is also checked with the model's own
``predict``.

Run: ``python benchmarks/bench_optimal.py [--rows 20] [--rows-500 20] [--time-limit 30]``
(about 15 minutes on 2 cores, most of it the 500-tree forest).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler

import treelens
from treelens._counterfactual._milp._program import forest_program


def run(n_trees: int, max_depth: int, n_rows: int, time_limit: float) -> None:
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = RandomForestClassifier(
        n_estimators=n_trees, max_depth=max_depth, random_state=0, n_jobs=1
    ).fit(X, y)
    declined = np.flatnonzero(model.predict(X) == 0)[:n_rows]
    # One Forest for all calls: the model's program is built once and cached on it.
    start = time.perf_counter()
    forest = treelens.to_forest(model)
    forest_program(forest)
    build = time.perf_counter() - start
    tweak = treelens.feature_tweak(model, X[declined], target=1, cost="l1", reference=X)
    times, costs, statuses, gaps = [], [], [], []
    for i in declined:
        start = time.perf_counter()
        result = treelens.optimal_counterfactual(
            forest,
            X[i : i + 1],
            target=1,
            cost="l1",
            reference=X,
            time_limit=time_limit,
        )
        times.append(time.perf_counter() - start)
        costs.append(result.cost_[0])
        statuses.append(result.status_[0])
        gaps.append(result.gap_[0])
        if result.found_[0]:
            assert model.predict(result.X_cf_)[0] == 1
    times_a, costs_a = np.array(times), np.array(costs)
    both = tweak.found_ & np.isfinite(costs_a) & (costs_a > 0)
    ratio = (
        float(np.mean(tweak.cost_[both] / costs_a[both]))
        if both.any()
        else float("nan")
    )
    optimal = sum(s == "optimal" for s in statuses)
    limited = [g for s, g in zip(statuses, gaps) if s == "time_limit"]
    print(
        f"{n_trees:>4} trees, max_depth={max_depth}, {len(declined)} declined rows "
        f"(program built once in {build:.2f} s)"
    )
    print(
        f"    solve time per row: median {np.median(times_a):6.2f} s, "
        f"90th percentile {np.percentile(times_a, 90):6.2f} s, max {times_a.max():6.2f} s"
    )
    print(
        f"    proven optimal: {optimal}/{len(declined)}"
        + (
            f"  (time limit on {len(limited)}, gaps {np.round(limited, 3).tolist()})"
            if limited
            else ""
        )
    )
    print(
        f"    feature_tweak found {int(tweak.found_.sum())}/{len(declined)}; mean cost "
        f"ratio feature_tweak / optimal over {int(both.sum())} rows: {ratio:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument(
        "--rows-500", type=int, default=20, help="rows for the 500-tree forest"
    )
    parser.add_argument("--time-limit", type=float, default=30.0)
    args = parser.parse_args()
    run(100, 6, args.rows, args.time_limit)
    run(100, 8, args.rows, args.time_limit)
    run(500, 6, args.rows_500, args.time_limit)


if __name__ == "__main__":
    main()
