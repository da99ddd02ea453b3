"""Debiased MDI from out-of-bag rows against held-out MDI and permutation importance.

One run, one process, one forest: a 500-tree random forest fitted on 100,000
rows.  Timed side by side (best of ``--repeats``):

- ``debiased_mdi_importance(model, X_train, y_train, oob=True)``: every tree's
  bootstrap sample drawn again from its seed, all training rows routed through
  every tree, each tree scored on its out-of-bag rows (with the default
  interval, a bootstrap over trees and rows, and without it);
- ``mdi_importance(model, X_test, y_test)``: held-out MDI on 100,000 other rows;
- ``sklearn.inspection.permutation_importance(model, X_test, y_test,
  n_repeats=5)``.

Targets: debiased MDI at most 3x held-out MDI, and at least 10x faster than
permutation importance.

Run: PYTHONPATH=src python benchmarks/bench_importance.py [--rows N --trees T]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import permutation_importance

import treelens


def best_of(repeats: int, function):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--min-samples-leaf", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2, help="best of")
    parser.add_argument(
        "--permutation-repeats", type=int, default=1, help="timings of permutation"
    )
    args = parser.parse_args()

    X, y = make_classification(
        n_samples=2 * args.rows,
        n_features=args.features,
        n_informative=args.features // 2,
        flip_y=0.1,
        random_state=0,
    )
    X_train, y_train = X[: args.rows], y[: args.rows]
    X_test, y_test = X[args.rows :], y[args.rows :]
    start = time.perf_counter()
    model = RandomForestClassifier(
        n_estimators=args.trees,
        min_samples_leaf=args.min_samples_leaf,
        n_jobs=-1,
        random_state=0,
    ).fit(X_train, y_train)
    model.set_params(n_jobs=1)
    nodes = sum(t.tree_.node_count for t in model.estimators_)
    print(
        f"{args.trees} trees, {nodes / args.trees:.0f} nodes a tree, "
        f"{args.rows} rows x {args.features} features "
        f"(fitted in {time.perf_counter() - start:.1f} s)"
    )

    held, held_result = best_of(
        args.repeats, lambda: treelens.mdi_importance(model, X_test, y_test)
    )
    debiased, result = best_of(
        args.repeats,
        lambda: treelens.debiased_mdi_importance(model, X_train, y_train, oob=True),
    )
    bare, _ = best_of(
        args.repeats,
        lambda: treelens.debiased_mdi_importance(
            model, X_train, y_train, oob=True, n_bootstrap=0
        ),
    )
    perm, perm_result = best_of(
        args.permutation_repeats,
        lambda: permutation_importance(
            model, X_test, y_test, n_repeats=5, random_state=0, n_jobs=1
        ),
    )
    print(f"held-out MDI                         {held:8.2f} s")
    print(f"debiased MDI (OOB, with interval)    {debiased:8.2f} s")
    print(f"debiased MDI (OOB, no interval)      {bare:8.2f} s")
    print(f"permutation importance (5 repeats)   {perm:8.2f} s")
    print(
        f"debiased / held-out MDI: {debiased / held:.2f}x (target <= 3x; "
        f"{bare / held:.2f}x without the interval)"
    )
    print(f"permutation / debiased: {perm / debiased:.1f}x (target >= 10x)")
    print("\nimportances (debiased OOB, held-out MDI, permutation):")
    for j, name in enumerate(result.feature_names):
        print(
            f"  {name:>4} {result.importances_.iloc[j]:9.4f} "
            f"{held_result.importances_.iloc[j]:9.4f} "
            f"{perm_result.importances_mean[j]:9.4f}"
        )
    assert np.isfinite(result.importances_).all()


if __name__ == "__main__":
    main()
