"""node_statistics against the by-hand replay of node statistics.

The by-hand way (one boolean mask over all rows per node, children's masks from
the parent's) is what people write to recompute counts and impurities on new
data.  It costs O(n_samples x n_nodes) per tree; node_statistics routes all rows
through all trees once and aggregates per depth level, O(n_samples x depth).

Run: PYTHONPATH=src python benchmarks/bench_node_statistics.py [--trees-naive K]
The naive replay is timed on the first K trees (default 5) and scaled to the
whole forest; both replays are checked against each other on those trees.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import treelens


def naive_tree_statistics(tree, X32, y, weights, n_classes):
    """Counts, weights, class fractions and gini with one mask per node."""
    n_nodes = tree.n_nodes
    counts = np.zeros(n_nodes, dtype=np.intp)
    weighted = np.zeros(n_nodes)
    value = np.zeros((n_nodes, n_classes))
    impurity = np.zeros(n_nodes)
    masks = {0: np.ones(X32.shape[0], dtype=bool)}
    for node in range(n_nodes):  # parents come before children (depth-first ids)
        mask = masks.pop(node)
        counts[node] = mask.sum()
        w = weights[mask]
        weighted[node] = w.sum()
        per_class = np.bincount(y[mask], weights=w, minlength=n_classes)
        value[node] = per_class / weighted[node]
        impurity[node] = 1.0 - np.sum(value[node] ** 2)
        if not tree.is_leaf[node]:
            go_left = X32[:, tree.feature[node]] <= tree.threshold[node]
            masks[tree.children_left[node]] = mask & go_left
            masks[tree.children_right[node]] = mask & ~go_left
    return counts, weighted, value, impurity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument(
        "--max-depth", type=int, default=12, help="0 grows the trees fully"
    )
    parser.add_argument("--trees-naive", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2, help="best of")
    args = parser.parse_args()

    X, y = make_classification(
        n_samples=args.rows,
        n_features=20,
        n_informative=10,
        n_classes=3,
        random_state=0,
    )
    max_depth = args.max_depth or None
    model = RandomForestClassifier(
        n_estimators=args.trees, max_depth=max_depth, bootstrap=False,
        max_features="sqrt", random_state=0, n_jobs=-1,
    )  # fmt: skip
    t0 = time.perf_counter()
    model.fit(X, y)
    fit_time = time.perf_counter() - t0
    forest = treelens.to_forest(model)
    n_nodes = sum(t.n_nodes for t in forest.trees)
    print(
        f"RandomForestClassifier: {args.trees} trees, max_depth={max_depth}, "
        f"{n_nodes} nodes in all, deepest leaf at depth "
        f"{max(t.max_depth for t in forest.trees)}; {args.rows} rows x 20 features "
        f"(fit {fit_time:.1f} s)"
    )

    # Best of a few runs for both replays: the machine may be shared.
    fast = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        stats = treelens.node_statistics(forest, X, y)
        fast = min(fast, time.perf_counter() - t0)
    print(f"node_statistics, all {args.trees} trees:         {fast:8.2f} s")
    model.set_params(n_jobs=1)
    t0 = time.perf_counter()
    model.apply(X)
    print(
        f"  for scale, scikit-learn's compiled apply alone: {time.perf_counter() - t0:8.2f} s"
    )

    k = min(args.trees_naive, args.trees)
    X32 = X.astype(np.float32)
    weights = np.ones(args.rows)
    naive_time = np.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        naive = [
            naive_tree_statistics(forest.trees[j], X32, y, weights, forest.n_classes)
            for j in range(k)
        ]
        naive_time = min(naive_time, time.perf_counter() - t0)
    naive_nodes = sum(forest.trees[j].n_nodes for j in range(k))
    # Cost is proportional to the nodes replayed: scale by node count.
    scaled = naive_time * n_nodes / naive_nodes
    print(
        f"naive mask per node, first {k} trees:       {naive_time:8.2f} s "
        f"({naive_nodes} nodes)"
    )
    print(f"naive, scaled to all {args.trees} trees by nodes: {scaled:8.2f} s")
    print(f"speed-up: {scaled / fast:.0f}x", flush=True)

    for j, (counts, weighted, value, impurity) in enumerate(naive):
        np.testing.assert_array_equal(counts, stats.n_node_samples_[j])
        np.testing.assert_allclose(
            weighted, stats.weighted_n_node_samples_[j], rtol=1e-12
        )
        np.testing.assert_allclose(impurity, stats.impurity_[j], atol=1e-12)
        np.testing.assert_allclose(value, stats.value_[j], atol=1e-12)
        np.testing.assert_allclose(
            impurity, model.estimators_[j].tree_.impurity, atol=1e-12
        )
    print(f"both replays agree on the first {k} trees and with the stored impurities")


if __name__ == "__main__":
    main()
