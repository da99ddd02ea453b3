"""saabas_values against treeinterpreter, side by side in one process.

treeinterpreter computes Saabas contributions from scikit-learn's
``decision_path`` with a Python loop over the leaves of each tree;
``treelens.saabas_values`` routes all rows once and gathers each leaf's
precomputed path sums.  Both are timed on the same 100-tree full-depth random
forest on breast cancer, 1,000 rows (the data set repeated), best of several
runs, single-threaded; the largest elementwise difference and the additivity
error are printed.  treeinterpreter's last release fails on forest regressors
under numpy 2, so the regressor rows time treelens alone (additivity checked).

Run: PYTHONPATH=src python benchmarks/bench_contributions.py [--repeats K]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

# One routing thread, as the comparison with treeinterpreter is single-threaded.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from sklearn.datasets import load_breast_cancer, make_regression
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

import treelens


def best_of(repeats: int, function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = function()
        times.append(time.perf_counter() - start)
    return min(times), out


def treeinterpreter_predict():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from treeinterpreter import treeinterpreter
    except ImportError:
        return None
    return treeinterpreter.predict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5, help="best of")
    args = parser.parse_args()

    X, y = load_breast_cancer(return_X_y=True)
    rows = np.resize(X, (args.rows, X.shape[1]))
    ti = treeinterpreter_predict()
    models = {
        "random forest (100 trees, full depth)": RandomForestClassifier(
            n_estimators=100, random_state=0, n_jobs=1
        ),
        "extra trees (100 trees, full depth)": ExtraTreesClassifier(
            n_estimators=100, random_state=0, n_jobs=1
        ),
        "gradient boosting (100 stages)": GradientBoostingClassifier(random_state=0),
    }
    print(f"breast cancer, {args.rows} rows, best of {args.repeats}, one thread")
    header = (
        f"{'model':40s} {'treeinterp. s':>13s} {'treelens s':>11s} "
        f"{'ratio':>7s} {'max |diff|':>11s} {'additivity':>11s}"
    )
    print(header)
    for name, model in models.items():
        model.fit(X, y)
        forest = treelens.to_forest(model)
        treelens.saabas_values(forest, rows[:10])  # build the per-node tables once
        ours_time, ours = best_of(
            args.repeats, lambda f=forest: treelens.saabas_values(f, rows)
        )
        additivity = np.abs(
            ours.bias_ + ours.values_.sum(axis=1) - ours.prediction_
        ).max()
        theirs_time = diff = None
        if ti is not None and not name.startswith("gradient"):
            theirs_time, (_, _, theirs) = best_of(
                args.repeats, lambda m=model: ti(m, rows)
            )
            diff = float(np.abs(theirs - ours.values_).max())
        print(
            f"{name:40s} "
            f"{'-' if theirs_time is None else f'{theirs_time:.4f}':>13s} "
            f"{ours_time:11.4f} "
            f"{'-' if theirs_time is None else f'{theirs_time / ours_time:.1f}x':>7s} "
            f"{'-' if diff is None else f'{diff:.1e}':>11s} {additivity:11.1e}"
        )
    X_reg, y_reg = make_regression(n_samples=20_000, n_features=20, random_state=0)
    regressor = RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=1)
    regressor.fit(X_reg, y_reg)
    forest = treelens.to_forest(regressor)
    for n in (500, 20_000):
        treelens.saabas_values(forest, X_reg[:10])
        seconds, result = best_of(
            2, lambda f=forest, n=n: treelens.saabas_values(f, X_reg[:n])
        )
        additivity = np.abs(
            result.bias_ + result.values_.sum(axis=1) - result.prediction_
        ).max()
        print(
            f"{f'deep regressor (20k fit), {n} rows':40s} {'fails':>13s} "
            f"{seconds:11.4f} {'-':>7s} {'-':>11s} {additivity:11.1e}"
        )


if __name__ == "__main__":
    main()
