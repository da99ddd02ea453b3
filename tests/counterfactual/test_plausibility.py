"""Leaf support and distance to the data: the figures, and min_leaf_samples checked
by brute force with counts taken from scikit-learn's own ``apply``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.counterfactual import brute
from tests.counterfactual.test_optimal_counterfactual import _model, _target
from tests.counterfactual.test_true_optimum import _boosted
from treelens import InputError, counterfactual, optimal_counterfactual


def _support(model, reference, points):
    """Fewest reference rows in any leaf each point reaches (sklearn's apply)."""
    ref_leaves = model.apply(reference)
    leaves = model.apply(points)
    if ref_leaves.ndim == 3:  # gradient boosting: (n, stages, outputs)
        ref_leaves = ref_leaves.reshape(len(reference), -1)
        leaves = leaves.reshape(len(points), -1)
    counts = np.stack(
        [(ref_leaves[:, t][None, :] == leaves[:, t][:, None]).sum(axis=1)
         for t in range(leaves.shape[1])],
        axis=1,
    )  # fmt: skip
    return counts.min(axis=1)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["rf_binary", "rf_multiclass", "gb_binary", "rf_regression"]),
    seed=st.integers(0, 10_000),
    least=st.sampled_from([2, 5, 12]),
)
def test_min_leaf_samples_is_the_optimum_over_supported_points(kind, seed, least):
    model, X = _model(kind, seed, n_features=3, n_trees=2 + seed % 3)
    target = _target(model, kind, seed)
    x = X[seed % len(X)]
    result = optimal_counterfactual(
        model,
        x,
        target=target,
        cost="l1",
        reference=X,
        min_leaf_samples=least,
        infer=False,
    )
    expected, _ = brute.least_cost(
        model, x, target, "l1", keep=lambda P: _support(model, X, P) >= least
    )
    # A row already at the target is searched too: its leaves must be supported.
    at_target = brute.meets(model, x[None, :], x, target)[0] and target != "other"
    assert result.at_target_[0] == at_target
    if np.isinf(expected):
        assert result.status_[0] == "infeasible"
        return
    brute.assert_proven_optimal(result.cost_[0], expected)
    assert _support(model, X, result.X_cf_)[0] >= least
    assert result.leaf_support_[0] == _support(model, X, result.X_cf_)[0]


def test_figures_in_every_result():
    model, X = _model("rf_binary", 3, n_features=3, n_trees=6, depth=3)
    rows = X[model.predict(X) == 0][:4]
    for method in ("auto", "tweak"):
        result = counterfactual(
            model, rows, target=1, reference=X, method=method, infer=False
        )
        found = result.found_
        np.testing.assert_array_equal(
            result.leaf_support_[found], _support(model, X, result.X_cf_[found])
        )
        # Distance to the nearest reference row, under the result's cost (mad).
        weights = 1 / np.median(np.abs(X - np.median(X, axis=0)), axis=0)
        nearest = [
            np.abs(weights * (X - point)).sum(axis=1).min()
            for point in result.X_cf_[found]
        ]
        np.testing.assert_allclose(result.nearest_distance_[found], nearest)
        assert np.isnan(result.leaf_support_[~found]).all()
    stored = counterfactual(model, rows, target=1)
    assert np.isnan(stored.nearest_distance_).all()  # no reference
    assert (stored.leaf_support_[stored.found_] >= 1).all()  # training counts


def test_stored_counts_serve_without_reference():
    model, X = _model("rf_binary", 2, n_features=3, n_trees=4)
    rows = X[model.predict(X) == 0][:3]
    result = optimal_counterfactual(model, rows, target=1, min_leaf_samples=8)
    assert result.min_leaf_samples_ == 8
    for tree_index, estimator in enumerate(model.estimators_):
        leaves = estimator.apply(result.X_cf_[result.found_].astype(np.float32))
        assert (estimator.tree_.n_node_samples[leaves] >= 8).all(), tree_index


@pytest.mark.parametrize("least", [0, -3, 2.5, True, "10"])
def test_bad_min_leaf_samples(least):
    model, X = _model("rf_binary", 1)
    with pytest.raises(InputError, match="min_leaf_samples"):
        optimal_counterfactual(model, X[:1], target=1, min_leaf_samples=least)


def test_min_leaf_samples_without_counts_is_refused():
    model, X = _boosted("xgboost", 0)  # XGBoost stores no row counts
    with pytest.raises(InputError, match="reference"):
        counterfactual(model, X[:1], target=1, min_leaf_samples=5)
    result = counterfactual(model, X[:2], target=1, reference=X, min_leaf_samples=5)
    assert (result.leaf_support_[result.found_] >= 5).all()


def test_node_support_is_counted_once_per_reference_and_follows_its_values():
    from sklearn.ensemble import RandomForestClassifier

    from treelens import to_forest
    from treelens._counterfactual._plausibility import node_support

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    forest = to_forest(RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y))
    first = node_support(forest, X)
    assert node_support(forest, X.copy()) is first  # same values: kept
    assert not first.flags.writeable
    assert first.sum() == len(X) * forest.n_trees  # each row reaches one leaf a tree
    changed = X.copy()
    changed[:50, 0] += 5.0
    other = node_support(forest, changed)
    assert other is not first
    leaves = forest._apply(changed.astype(forest.input_dtype))
    expected = np.bincount(
        (forest._flat["offsets"][None, :] + leaves).ravel(),
        minlength=first.size,
    )
    np.testing.assert_array_equal(other, expected)
