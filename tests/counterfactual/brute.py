"""An independent brute force for least-cost counterfactuals on tiny models.

Every split threshold ``t`` of a feature (read from the model's Forest, whose
thresholds the adapter tests check against each library) splits the float64
values into ``v <= down(t)``, those the model's cast to its dtype sends left
(``v.astype(dtype) <= t``), and ``v >= up(t)``, where ``up(t)`` is the float64
after ``down(t)``; ``down(t)`` is found here by bisection over the float64
values between the two float32 values around ``t``, with numpy's own cast.  The
nearest point of every cell to ``x`` is ``x`` itself or one of these values, so
the least cost over all valid float64 points is the least over the grid of
``{x_j} + {down(t), up(t)}`` per feature.  Nothing of treelens' counterfactual
code is used: costs are written out here and validity is the model's ``predict``
(an IsolationForest's ``score_samples``, the score its Forest predicts).
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


def _ordered(v):
    bits = np.asarray(v, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, np.int64(-(2**63)) - bits)


def _unordered(keys):
    return np.where(keys >= 0, keys, np.int64(-(2**63)) - keys).view(np.float64)


def last_going_left(t, dtype):
    """Per threshold, the largest float64 ``v`` with ``v.astype(dtype) <= t``
    (bisection over float64 bit patterns, the cast as numpy does it)."""
    t = np.asarray(t, dtype=np.float64)
    if np.dtype(dtype) == np.float64:
        return t
    wide = np.spacing(np.abs(t).astype(np.float32)).astype(np.float64)
    lo, hi = _ordered(t - 2 * wide), _ordered(t + 2 * wide)

    def left(keys):
        return _unordered(keys).astype(dtype).astype(np.float64) <= t

    assert left(lo).all() and not left(hi).any()
    while (hi - lo > 1).any():  # invariant: lo goes left, hi does not
        mid = lo + (hi - lo) // 2
        goes = left(mid)
        lo, hi = np.where(goes, mid, lo), np.where(goes, hi, mid)
    return _unordered(lo)


def candidate_values(
    model, x, *, integer=(), lower=None, upper=None, extra_thresholds=None
):
    """Per feature: ``x_j``, and both float64 neighbours of every threshold as the
    model reads it (of the model's trees and of ``extra_thresholds``, a dict
    feature -> list, compared in float32 as an IsolationForest does)."""
    forest = treelens.to_forest(model)
    dtype = np.dtype(forest.input_dtype)
    values = []
    for j in range(forest.n_features):
        extra = np.asarray((extra_thresholds or {}).get(j, ()), dtype=np.float64)
        own = []
        for tree in forest.trees:
            split = (tree.children_left >= 0) & (tree.feature == j)
            own.extend(tree.threshold[split].tolist())
        t = np.asarray([v for v in own if np.isfinite(v)], dtype=np.float64)
        down = np.concatenate(
            [last_going_left(t, dtype), last_going_left(extra, np.float32)]
        )
        up = np.nextafter(down, np.inf)
        column = np.concatenate([[x[j]], down, up])
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


def _predict(model, X):
    if type(model).__name__ == "IsolationForest":
        return model.score_samples(X)
    return model.predict(X)


def meets(model, X_cf, x, target):
    predicted = _predict(model, X_cf)
    if isinstance(target, tuple):
        low, high = target
        low = -np.inf if low is None else low
        high = np.inf if high is None else high
        return (predicted >= low) & (predicted <= high)
    if isinstance(target, str) and target == "other":
        return predicted != _predict(model, x[None, :])[0]
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


def least_cost_one_hot(model, x, target, cost, members, *, keep=None):
    """:func:`least_cost` over the points one-hot in ``members`` (each 0 or 1,
    exactly one 1), also restricted by ``keep`` if given."""
    member = np.isin(np.arange(x.size), members)

    def one_hot(points):
        ok = points[:, members].sum(axis=1) == 1
        return ok if keep is None else ok & keep(points)

    return least_cost(
        model,
        x,
        target,
        cost,
        keep=one_hot,
        integer=tuple(members),
        lower=np.where(member, 0.0, -np.inf),
        upper=np.where(member, 1.0, np.inf),
    )


# "optimal" means proven within HiGHS' relative gap, which the README states as 1e-6:
# two moves whose costs differ by less (one float32 step apart) may be chosen either way.
PROVEN_GAP = 1e-6


def assert_proven_optimal(cost, least):
    """A proven optimum costs no less than the cheapest valid point, and no more than
    that by the documented relative gap."""
    assert least - 1e-12 <= cost <= least * (1 + PROVEN_GAP) + 1e-12, (cost, least)


def range_targets(model, X):
    """The row of least prediction, and two ranges for it: at least the median
    prediction, and from the median to the 90th percentile."""
    predictions = model.predict(X)
    x = X[int(np.argmin(predictions))]
    median = float(np.median(predictions))
    return x, [(median, None), (median, float(np.quantile(predictions, 0.9)))]


def assert_optimum_is_least(model, x, target, cost="l1"):
    """``optimal_counterfactual`` of row ``x`` is proven at the brute force's
    least cost and met as the model predicts (or found infeasible where no
    point is valid); returns its result, None when infeasible."""
    expected, _ = least_cost(model, x, target, cost)
    result = treelens.optimal_counterfactual(
        model, x[None, :], target=target, cost=cost
    )
    if not np.isfinite(expected):
        assert not result.found_[0]
        return None
    assert result.status_[0] == "optimal"
    assert_proven_optimal(result.cost_[0], expected)
    assert meets(model, result.X_cf_, x, target).all()
    return result
