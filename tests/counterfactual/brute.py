"""An independent brute force for least-cost counterfactuals on tiny models.

Every split threshold ``t`` of a feature (read from the model's Forest, whose
thresholds the adapter tests check against each library) splits the values of
the model's dtype into ``v <= down(t)`` and ``v >= up(t)``, where ``down(t)`` is
the largest value of the dtype not above ``t`` and ``up(t)`` the next one.  The
nearest point of every cell to ``x`` is ``x`` itself or one of these values, so
the least cost over all valid points of the dtype is the least over the grid of
``{x_j} + {down(t), up(t)}`` per feature.  Nothing of treelens' counterfactual
code is used: costs are written out here and validity is the model's ``predict``.
"""

from __future__ import annotations

import itertools

import numpy as np

import treelens


def isolation_thresholds(isolation_forest):
    """Per feature, the split thresholds of a fitted IsolationForest's trees (read
    from scikit-learn's own tree arrays and ``estimators_features_``)."""
    out = {}
    for estimator, features in zip(
        isolation_forest.estimators_, isolation_forest.estimators_features_
    ):
        tree = estimator.tree_
        split = tree.children_left >= 0
        columns = tree.feature[split]
        if len(features) != isolation_forest.n_features_in_:
            columns = np.asarray(features)[columns]
        for j, t in zip(columns, tree.threshold[split]):
            out.setdefault(int(j), []).append(float(t))
    return out


def candidate_values(
    model, x, *, integer=(), lower=None, upper=None, extra_thresholds=None
):
    """Per feature: ``x_j``, and both neighbours of every threshold in the dtype
    (of the model's trees and of ``extra_thresholds``, a dict feature -> list)."""
    forest = treelens.to_forest(model)
    dtype = np.dtype(forest.input_dtype)
    values = []
    for j in range(forest.n_features):
        thresholds = list((extra_thresholds or {}).get(j, ()))
        for tree in forest.trees:
            split = (tree.children_left >= 0) & (tree.feature == j)
            thresholds.extend(tree.threshold[split].tolist())
        t = np.asarray([v for v in thresholds if np.isfinite(v)], dtype=np.float64)
        down = t.astype(dtype)
        down = np.where(
            down.astype(np.float64) > t, np.nextafter(down, dtype.type(-np.inf)), down
        )
        up = np.nextafter(down, dtype.type(np.inf))
        column = np.concatenate(
            [[x[j]], down.astype(np.float64), up.astype(np.float64)]
        )
        if j in integer:
            column = np.concatenate([[x[j]], np.floor(column), np.floor(column) + 1])
        if lower is not None:
            column = column[column >= lower[j]]
        if upper is not None:
            column = column[column <= upper[j]]
        values.append(np.unique(column))
    return values


def cost_of(x, X_cf, cost):
    delta = X_cf - x
    if isinstance(cost, dict):
        weights, norm = np.asarray(cost["weights"], dtype=float), cost["norm"]
    else:
        weights, norm = np.ones(x.size), cost
    if norm == "l1":
        return np.abs(weights * delta).sum(axis=1)
    if norm == "l2":
        return np.sqrt(((weights * delta) ** 2).sum(axis=1))
    if norm == "l0":
        return (weights * (delta != 0)).sum(axis=1)
    if norm == "linf":
        return np.abs(weights * delta).max(axis=1)
    raise ValueError(norm)


def meets(model, X_cf, x, target):
    predicted = model.predict(X_cf)
    if isinstance(target, tuple):
        low, high = target
        low = -np.inf if low is None else low
        high = np.inf if high is None else high
        return (predicted >= low) & (predicted <= high)
    if isinstance(target, str) and target == "other":
        return predicted != model.predict(x[None, :])[0]
    return predicted == target


def grid(model, x, **kwargs):
    """Every combination of candidate values, as rows."""
    values = candidate_values(model, x, **kwargs)
    return np.array(list(itertools.product(*values)), dtype=np.float64)


def least_cost(model, x, target, cost, *, keep=None, **kwargs):
    """Least cost of a valid point of the grid (inf if none), and that point.

    ``keep(points) -> mask`` restricts the points (constraints, earlier options).
    """
    points = grid(model, x, **kwargs)
    if keep is not None:
        points = points[keep(points)]
    if not len(points):
        return np.inf, None
    valid = meets(model, points, x, target)
    if not valid.any():
        return np.inf, None
    costs = cost_of(x, points[valid], cost)
    best = int(np.argmin(costs))
    return float(costs[best]), points[valid][best]


# "optimal" means proven within HiGHS' relative gap, which the README states as 1e-6:
# two moves whose costs differ by less (one float32 step apart) may be chosen either way.
PROVEN_GAP = 1e-6


def assert_proven_optimal(cost, least):
    """A proven optimum costs no less than the cheapest valid point, and no more than
    that by the documented relative gap."""
    assert least - 1e-12 <= cost <= least * (1 + PROVEN_GAP) + 1e-12, (cost, least)
