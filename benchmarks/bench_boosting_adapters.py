"""Reading boosting models into a Forest, and Forest predictions against the
libraries' own.

For XGBoost, LightGBM and HistGradientBoosting models of a few hundred trees:
the time ``to_forest`` takes (parsing the library's dump), and the time of
``Forest.predict_proba`` against the library's compiled ``predict_proba`` on the
same rows (the libraries use every core; numpy one).  Predictions are checked
equal.

Run: PYTHONPATH=src python benchmarks/bench_boosting_adapters.py [--rows N] [--trees T]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier

import treelens


def timed(function, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--trees", type=int, default=200)
    args = parser.parse_args()
    X, y = make_classification(
        n_samples=5_000, n_features=20, n_informative=10, random_state=0
    )
    rng = np.random.default_rng(0)
    X_test = rng.normal(size=(args.rows, X.shape[1])) * X.std(axis=0)
    models = {}
    try:
        import xgboost

        models["XGBClassifier"] = xgboost.XGBClassifier(
            n_estimators=args.trees, max_depth=6, n_jobs=2
        ).fit(X, y)
    except ImportError:
        pass
    try:
        import lightgbm

        models["LGBMClassifier"] = lightgbm.LGBMClassifier(
            n_estimators=args.trees, num_leaves=63, verbose=-1, n_jobs=2
        ).fit(X, y)
    except ImportError:
        pass
    models["HistGradientBoostingClassifier"] = HistGradientBoostingClassifier(
        max_iter=args.trees, max_leaf_nodes=63, early_stopping=False
    ).fit(X, y)
    print(f"{args.trees} trees, {args.rows} rows, {X.shape[1]} features")
    print(
        f"{'model':32s} {'nodes':>7s} {'to_forest':>10s} {'Forest':>9s} "
        f"{'library':>9s} {'ratio':>6s} {'max |dp|':>9s}"
    )
    for name, model in models.items():
        read, forest = timed(lambda m=model: treelens.to_forest(m), repeat=1)
        ours, proba = timed(lambda f=forest: f.predict_proba(X_test))
        theirs, expected = timed(lambda m=model: m.predict_proba(X_test))
        n_nodes = sum(t.n_nodes for t in forest.trees)
        gap = float(np.abs(proba - expected).max())
        same = bool(np.array_equal(forest.predict(X_test), model.predict(X_test)))
        print(
            f"{name:32s} {n_nodes:7d} {read:9.3f}s {ours:8.3f}s {theirs:8.3f}s "
            f"{ours / theirs:6.1f} {gap:9.1e}  labels equal: {same}"
        )


if __name__ == "__main__":
    main()
