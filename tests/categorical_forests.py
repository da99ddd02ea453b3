"""Hand-made forests with categorical splits, and a per-row reference walk."""

from __future__ import annotations

import math

import numpy as np

from treelens import FeatureSpec, Forest, Tree

#: Three columns: a categorical one with 3 categories, a number, one with 4.
FEATURES = (
    FeatureSpec("color", "categorical", ("red", "green", "blue")),
    FeatureSpec("size"),
    FeatureSpec("shape", "categorical", ("circle", "square", "star", "moon")),
)


def random_tree(rng, features=FEATURES, max_depth=4, n_values=1):
    """A random tree whose split nodes pick a random feature and rule.

    Categorical nodes send a random set of codes (unknown included) left;
    numeric nodes split at a random threshold; missing values go a random way.
    """
    k = np.array([spec.n_categories for spec in features])
    width = int(k.max()) + 1
    nodes = []

    def grow(depth):
        index = len(nodes)
        nodes.append(None)
        if depth == max_depth or (depth > 0 and rng.random() < 0.3):
            nodes[index] = ("leaf", rng.normal(size=n_values))
            return index
        f = int(rng.integers(len(features)))
        if features[f].is_categorical:
            left = np.zeros(width, bool)
            left[: k[f] + 1] = rng.random(k[f] + 1) < 0.5
            rule = ("cat", f, left)
        else:
            rule = ("num", f, float(rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0])))
        missing_left = bool(rng.random() < 0.5)
        a = grow(depth + 1)
        b = grow(depth + 1)
        nodes[index] = (rule, missing_left, a, b)
        return index

    grow(0)
    n = len(nodes)
    arrays = {
        "children_left": np.full(n, -1),
        "children_right": np.full(n, -1),
        "feature": np.full(n, -2),
        "threshold": np.full(n, -2.0),
        "missing_go_left": np.zeros(n, bool),
        "value": np.zeros((n, n_values)),
        "impurity": np.zeros(n),
        "n_node_samples": np.ones(n, int),
        "weighted_n_node_samples": np.ones(n),
        "is_categorical": np.zeros(n, bool),
        "categorical_left": np.zeros((n, width), bool),
    }
    for i, node in enumerate(nodes):
        if node[0] == "leaf":
            arrays["value"][i] = node[1]
            continue
        rule, missing_left, a, b = node
        arrays["children_left"][i], arrays["children_right"][i] = a, b
        arrays["feature"][i] = rule[1]
        arrays["missing_go_left"][i] = missing_left
        if rule[0] == "cat":
            arrays["is_categorical"][i] = True
            arrays["threshold"][i] = np.nan
            arrays["categorical_left"][i] = rule[2]
        else:
            arrays["threshold"][i] = rule[2]
    for i in np.flatnonzero(arrays["children_left"] >= 0):
        left, right = arrays["children_left"][i], arrays["children_right"][i]
        arrays["value"][i] = (arrays["value"][left] + arrays["value"][right]) / 2
    return Tree(**arrays)


def random_forest(rng, n_trees=3, features=FEATURES, max_depth=4, kind="forest"):
    """A regression forest of random trees over ``features``."""
    trees = tuple(random_tree(rng, features, max_depth) for _ in range(n_trees))
    return Forest(
        trees,
        kind,
        "regression",
        len(features),
        tuple(spec.name for spec in features),
        has_feature_names=True,
        allow_missing=True,
        input_dtype=np.float64,
        features=features,
    )


def random_codes(rng, n_rows, features=FEATURES):
    """Routing values: valid codes, unknown values (k, above, negative,
    fractional), NaN, and numbers on and around the thresholds."""
    X = np.empty((n_rows, len(features)))
    for j, spec in enumerate(features):
        if spec.is_categorical:
            k = spec.n_categories
            pool = [*range(k), k, k + 3, -1, 0.5]
        else:
            pool = [-1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0]
        X[:, j] = rng.choice(pool, n_rows)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def reference_leaf(tree, forest, x):
    """The leaf one row reaches, walked node by node."""
    node = 0
    while tree.children_left[node] != -1:
        f = tree.feature[node]
        v = x[f]
        if math.isnan(v):
            left = tree.missing_go_left[node]
        elif tree.is_categorical[node]:
            k = forest.features[f].n_categories
            code = int(v) if 0 <= v < k and v == int(v) else k
            left = tree.categorical_left[node, code]
        else:
            left = v <= tree.threshold[node]
        node = tree.children_left[node] if left else tree.children_right[node]
    return node
