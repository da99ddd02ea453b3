"""Feature tweaking: the naive algorithm as the paper's pseudo-code reads vs treelens.

The naive version loops over trees and root-to-leaf paths, builds each candidate
one by one and asks the model with one ``predict`` call per candidate.  Both use
the same candidates (minimal mode, the same epsilon) and the same L2 cost, so the
costs they return must agree exactly.  Run: ``python benchmarks/bench_feature_tweak.py``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler

import treelens
from treelens._counterfactual._epsilon import resolve_epsilon

N_NAIVE = 3  # rows timed with the naive algorithm per data set (it is slow)


def naive_feature_tweak(model, x, target, epsilon):
    """Tolomei et al.'s algorithm, read literally: trees, paths, one predict each."""
    F32 = np.float32
    current = model.predict(x[None, :])[0]
    best_cost, best = np.inf, None
    for estimator in model.estimators_:
        tree = estimator.tree_
        if (
            estimator.predict(x[None, :])[0]
            != np.flatnonzero(model.classes_ == current)[0]
        ):
            continue
        parent = {}
        for node in range(tree.node_count):
            if tree.children_left[node] != -1:
                parent[tree.children_left[node]] = (node, True)
                parent[tree.children_right[node]] = (node, False)
        for leaf in range(tree.node_count):
            if tree.children_left[leaf] != -1:
                continue
            if model.classes_[np.argmax(tree.value[leaf, 0])] != target:
                continue
            lower = np.full(x.size, -np.inf)
            upper = np.full(x.size, np.inf)
            node = leaf
            while node in parent:
                p, went_left = parent[node]
                f, thr = tree.feature[p], tree.threshold[p]
                if went_left:
                    upper[f] = min(upper[f], thr)
                else:
                    lower[f] = max(lower[f], thr)
                node = p
            candidate = x.copy()
            for j in range(x.size):
                if lower[j] < F32(x[j]) <= upper[j]:
                    continue
                lo, hi = lower[j] + epsilon[j], upper[j] - epsilon[j]
                if lo > hi:
                    lo = hi = (lower[j] + upper[j]) / 2
                candidate[j] = min(max(x[j], lo), hi)
            if model.predict(candidate[None, :])[0] != target:
                continue
            cost = float(np.sqrt(np.sum((candidate - x) ** 2)))
            if cost < best_cost:
                best_cost, best = cost, candidate
    return best, best_cost


def run(name, X, y, target, n_trees=100):
    X = StandardScaler().fit_transform(X)
    model = RandomForestClassifier(n_estimators=n_trees, random_state=0).fit(X, y)
    forest = treelens.to_forest(model)
    epsilon = resolve_epsilon(forest, "auto", X)
    declined = X[model.predict(X) != target]
    rows = declined[:N_NAIVE]
    start = time.perf_counter()
    naive = [naive_feature_tweak(model, x, target, epsilon) for x in rows]
    naive_time = (time.perf_counter() - start) / len(rows)
    treelens.feature_tweak(
        model, declined[:2], target=target, reference=X
    )  # warm caches
    start = time.perf_counter()
    result = treelens.feature_tweak(model, declined, target=target, reference=X)
    fast_time = (time.perf_counter() - start) / len(declined)
    naive_costs = np.array([c for _, c in naive])
    costs = result.cost_[: len(rows)]
    identical = int((naive_costs == costs).sum())
    finite = np.isfinite(costs)
    gap = float(np.max(np.abs(naive_costs[finite] - costs[finite]), initial=0.0))
    same_points = all(
        (p is None and not f) or (p is not None and np.array_equal(p, q))
        for (p, _), q, f in zip(naive, result.X_cf_, result.found_)
    )
    print(
        f"{name:14s} {n_trees:4d} trees  naive {naive_time * 1e3:8.0f} ms/row   "
        f"treelens {fast_time * 1e3:6.2f} ms/row ({len(declined)} rows, "
        f"{result.found_.mean():.0%} found)   ratio {naive_time / fast_time:6.0f}x   "
        f"costs identical {identical}/{len(rows)} (max diff {gap:.1e}), "
        f"same counterfactuals: {same_points}"
    )
    return model, forest, X


def main():
    print("feature tweaking, 100-tree RandomForestClassifier, standardized features")
    X, y = load_iris(return_X_y=True)
    run("iris (class 2)", X, y, 2)
    X, y = load_breast_cancer(return_X_y=True)
    model, _, Xs = run("breast_cancer", X, y, 1)

    rng = np.random.default_rng(0)
    many = Xs[rng.integers(0, len(Xs), 10_000)] + rng.normal(
        scale=0.1, size=(10_000, Xs.shape[1])
    )
    start = time.perf_counter()
    result = treelens.feature_tweak(model, many, target=1, reference=Xs)
    elapsed = time.perf_counter() - start
    print(
        f"10,000 rows (breast_cancer, 100 trees): {elapsed:.2f} s "
        f"({elapsed / 1e4 * 1e3:.3f} ms/row, {result.found_.mean():.0%} found)"
    )

    big = RandomForestClassifier(n_estimators=500, random_state=0).fit(Xs, y)
    declined = Xs[big.predict(Xs) != 1]
    treelens.feature_tweak(big, declined[:2], target=1, reference=Xs)  # warm caches
    start = time.perf_counter()
    result = treelens.feature_tweak(big, declined, target=1, reference=Xs)
    elapsed = time.perf_counter() - start
    print(
        f"500 trees (breast_cancer): {elapsed:.2f} s for {len(declined)} rows "
        f"({elapsed / len(declined) * 1e3:.2f} ms/row, {result.found_.mean():.0%} found)"
    )


if __name__ == "__main__":
    main()
