"""The proof that no leaves meet a range allows for the model's own rounding.

XGBoost adds its trees in float32: its predictions sit up to about half a
float32 unit in the last place away from the float64 sum of the same leaves.
A range of a few float64 units around a prediction the model gives a training
row is attainable, and must never be reported infeasible before the search.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from treelens import optimal_counterfactual
from treelens._counterfactual._attainable import no_leaves_meet


def test_float32_sums_are_given_a_float32_tolerance():
    # 1000.1 + 0.01 added in float32 is 1000.1099853515625, about 5e-6 from
    # the float64 sum 1000.11 (1.1e-13 apart at most in float64).
    trees = [np.array([float(np.float32(1000.1))]), np.array([float(np.float32(0.01))])]
    float32_sum = float(np.float32(trees[0][0]) + np.float32(trees[1][0]))
    assert abs(float32_sum - (trees[0][0] + trees[1][0])) > 1e-6
    low, high = np.nextafter(float32_sum, -np.inf), np.nextafter(float32_sum, np.inf)
    assert no_leaves_meet(trees, 0.0, low, high)  # float64 sums: out of reach
    assert not no_leaves_meet(trees, 0.0, low, high, score_dtype=np.float32)
    # A range far from every sum is still proven out of reach in float32.
    assert no_leaves_meet(trees, 0.0, 1000.5, 1001.0, score_dtype=np.float32)


def test_xgboost_predictions_are_attainable_targets():
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = 1000 * X[:, 0] + 0.37 * X[:, 1]
    model = xgboost.XGBRegressor(
        n_estimators=4, max_depth=2, learning_rate=0.3137, base_score=0.1234567
    ).fit(X, y)
    predictions = np.unique(model.predict(X).astype(np.float64))
    for value in predictions[::4]:
        # The model's own prediction of some row, within one float64 step.
        target = (np.nextafter(value, -np.inf), np.nextafter(value, np.inf))
        result = optimal_counterfactual(
            model, X[:1], target=target, cost="l1", time_limit=20
        )
        assert result.status_[0] != "infeasible", value
        if result.found_[0]:
            predicted = float(model.predict(result.X_cf_)[0])
            assert target[0] <= predicted <= target[1]


def test_a_tree_without_supported_leaves_admits_no_choice():
    # min_leaf_samples above every leaf's count of one tree leaves that tree no
    # leaf: no point meets it (this raised numpy's "zero-size array" ValueError).
    assert no_leaves_meet([np.array([1.0]), np.array([])], 0.0, -np.inf, np.inf)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=200)
    model = RandomForestRegressor(3, max_depth=6, random_state=0).fit(X, y)
    leaves = model.apply(X)
    largest = max(np.bincount(leaves[:, t]).max() for t in range(3))
    result = optimal_counterfactual(
        model, X[:2], target=(0.5, 2.0), reference=X, infer=False,
        min_leaf_samples=int(largest) + 1, time_limit=20,
    )  # fmt: skip
    assert (result.status_ == "infeasible").all() and not result.found_.any()
