"""The default optimum next to feature tweaking, a margin and the old epsilon.

For declined rows (predicted class 0) of models on standardized
``load_breast_cancer``, target class 1, L1 cost, per model:

- the time of each row's default ``optimal_counterfactual`` call (one step past
  each threshold; feature tweaking's warm start and the local search included;
  the model's part of the program is built once), its median and 90th
  percentile, and how many rows were proven optimal (with the gaps of the
  others);
- the mean ratio to the default optimum's cost of feature tweaking's cost
  (where it finds one), of the optimum with a margin (1% of each feature's
  spread) and of the optimum with the old ``epsilon="auto"`` (1% of each
  feature's spread past each threshold), the last two on the first
  ``--compare-rows`` rows.

Every answer is checked with the model's own ``predict``.  Models: random forests
of 100 trees (depth 6 and 8) and 500 trees (depth 6), XGBoost (100 trees, depth
4) and LightGBM (100 trees).

Run: ``python benchmarks/bench_optimal.py [--rows 20] [--rows-500 20]
[--compare-rows 5] [--time-limit 30] [--models rf6,rf8,rf500,xgb,lgbm]
[--verbose]``; ``--verbose`` prints each row as it is solved (time, status,
cost, gap), which shows progress on the 500-tree forest.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler

import treelens
from treelens import Margin
from treelens._counterfactual._milp._program import forest_program


def _model(name: str, X, y):
    if name.startswith("rf"):
        n_trees, depth = {"rf6": (100, 6), "rf8": (100, 8), "rf500": (500, 6)}[name]
        label = f"random forest, {n_trees} trees, depth {depth}"
        model = RandomForestClassifier(
            n_estimators=n_trees, max_depth=depth, random_state=0, n_jobs=1
        )
    elif name == "xgb":
        import xgboost

        label = "XGBoost, 100 trees, depth 4"
        model = xgboost.XGBClassifier(n_estimators=100, max_depth=4, n_jobs=1)
    else:
        import lightgbm

        label = "LightGBM, 100 trees"
        model = lightgbm.LGBMClassifier(n_estimators=100, n_jobs=1, verbose=-1)
    return label, model.fit(X, y)


def _ratio(numerator, denominator) -> tuple[float, int]:
    numerator, denominator = np.asarray(numerator), np.asarray(denominator)
    both = np.isfinite(numerator) & np.isfinite(denominator) & (denominator > 0)
    if not both.any():
        return float("nan"), 0
    return float(np.mean(numerator[both] / denominator[both])), int(both.sum())


def run(
    name: str, n_rows: int, n_compare: int, time_limit: float, verbose: bool = False
) -> None:
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    label, model = _model(name, X, y)
    declined = np.flatnonzero(model.predict(X) == 0)[:n_rows]
    start = time.perf_counter()
    forest = treelens.to_forest(model)
    forest_program(forest)
    build = time.perf_counter() - start
    common = {"target": 1, "cost": "l1", "reference": X, "time_limit": time_limit}
    tweak = treelens.feature_tweak(model, X[declined], target=1, cost="l1")
    times, costs, statuses, gaps = [], [], [], []
    for i in declined:
        start = time.perf_counter()
        result = treelens.optimal_counterfactual(forest, X[i : i + 1], **common)
        times.append(time.perf_counter() - start)
        costs.append(result.cost_[0])
        statuses.append(result.status_[0])
        gaps.append(result.gap_[0])
        if result.found_[0]:
            assert model.predict(result.X_cf_)[0] == 1
        if verbose:
            print(
                f"    {name} row {i}: {times[-1]:6.2f} s, {statuses[-1]}, cost "
                f"{costs[-1]:.5f}, gap {gaps[-1]:.3f}",
                flush=True,
            )
    compare = declined[:n_compare]
    margin = old = None
    if compare.size:
        margin = treelens.optimal_counterfactual(
            forest, X[compare], margin=Margin(fraction=0.01), **common
        )
        old = treelens.optimal_counterfactual(
            forest, X[compare], epsilon="auto", **common
        )
        for result in (margin, old):
            assert (model.predict(result.X_cf_[result.found_]) == 1).all()
    times_a, costs_a = np.array(times), np.array(costs)
    optimal = sum(s == "optimal" for s in statuses)
    limited = [g for s, g in zip(statuses, gaps) if s == "time_limit"]
    print(f"{label}: {len(declined)} declined rows (program built in {build:.2f} s)")
    print(
        f"    time per row: median {np.median(times_a):6.2f} s, 90th percentile "
        f"{np.percentile(times_a, 90):6.2f} s, max {times_a.max():6.2f} s"
    )
    print(
        f"    proven optimal: {optimal}/{len(declined)}"
        + (
            f"  (time limit on {len(limited)}, gaps {np.round(limited, 3).tolist()})"
            if limited
            else ""
        )
    )
    tw, n_tw = _ratio(tweak.cost_, costs_a)
    line = (
        f"    cost / default optimum: feature_tweak {tw:.3f} ({n_tw} rows; found "
        f"{int(tweak.found_.sum())}/{len(declined)})"
    )
    if margin is not None and old is not None:
        mg, n_mg = _ratio(margin.cost_, costs_a[:n_compare])
        ol, n_ol = _ratio(old.cost_, costs_a[:n_compare])
        n_proven = int((margin.status_ == "optimal").sum())
        line += (
            f", margin 1% of spread {mg:.3f} ({n_mg} rows, {n_proven} proven), "
            f"old epsilon='auto' {ol:.3f} ({n_ol} rows)"
        )
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument(
        "--rows-500", type=int, default=20, help="rows for the 500-tree forest"
    )
    parser.add_argument("--compare-rows", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--models", default="rf6,rf8,xgb,lgbm,rf500")
    parser.add_argument(
        "--verbose", action="store_true", help="print each row as it is solved"
    )
    args = parser.parse_args()
    for name in args.models.split(","):
        rows = args.rows_500 if name == "rf500" else args.rows
        run(name, rows, args.compare_rows, args.time_limit, args.verbose)


if __name__ == "__main__":
    main()
