"""The incremental validity check of feature tweaking agrees with the full model."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from treelens import Forest, Tree, feature_tweak, to_forest
from treelens._counterfactual._candidates import Changes
from treelens._counterfactual._incremental import IncrementalPredictor
from treelens._counterfactual._problem import REASON_NO_FLIP
from treelens._counterfactual._targets import resolve_target


def _models(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(150, 3)).round(1)  # coarse values: many ties on thresholds
    signal = X[:, 0] + X[:, 1] * X[:, 2]
    binary = (signal > 0).astype(int)
    three = np.digitize(signal, [-0.5, 0.5])
    params = {"n_estimators": 6, "max_depth": 3, "random_state": seed}
    return X, [
        (RandomForestClassifier(**params).fit(X, binary), [0, 1, "other"]),
        (RandomForestClassifier(**params).fit(X, three), [0, 2, "other"]),
        (GradientBoostingClassifier(**params).fit(X, binary), [1, "other"]),
        (GradientBoostingClassifier(**params).fit(X, three), [1, "other"]),
        (RandomForestRegressor(**params).fit(X, signal), [(0.0, None), (-0.5, 0.5)]),
        (GradientBoostingRegressor(**params).fit(X, signal), [(None, 0.2)]),
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_valid_equals_full_prediction(seed):
    X, models = _models(seed)
    rng = np.random.default_rng(seed)
    for model, targets in models:
        forest = to_forest(model)
        rows = X[:20]
        leaves = forest.apply(rows)
        current = forest.predict(rows)
        thresholds = np.concatenate([t.threshold[t.feature >= 0] for t in forest.trees])
        # Candidates: each row with one to three features moved, often exactly onto
        # a threshold or next to it, where float32 and ties matter.
        k = 400
        row = np.sort(rng.integers(0, len(rows), k))
        n_changes = rng.integers(1, 4, k)
        owner = np.repeat(np.arange(k), n_changes)
        feature = np.concatenate([rng.choice(3, n, replace=False) for n in n_changes])
        value = rng.choice(thresholds, owner.size) + rng.choice(
            [0.0, 1e-7, -1e-7, 0.3], owner.size
        )
        changes = Changes(
            row=row,
            leaf=np.zeros(k, dtype=np.intp),
            ptr=np.concatenate([[0], np.cumsum(n_changes)]),
            feature=feature,
            value=value,
        )
        candidates = changes.dense(rows)
        for raw_target in targets:
            target = resolve_target(forest, raw_target)
            predictor = IncrementalPredictor(forest, target, rows, leaves, current)
            expected = target.meets(model.predict(candidates), current[row])
            np.testing.assert_array_equal(predictor.valid(changes), expected)


def _stump(feature, left, right):
    return Tree(
        children_left=[1, -1, -1],
        children_right=[2, -1, -1],
        feature=[feature, -2, -2],
        threshold=[0.5, -2.0, -2.0],
        missing_go_left=[False] * 3,
        value=[[0.5, 0.5], left, right],
        impurity=[0.5, 0.0, 0.0],
        n_node_samples=[2, 1, 1],
        weighted_n_node_samples=[2.0, 1.0, 1.0],
    )


def test_vote_ties_follow_the_first_class():
    # Two stumps: x0 > 0.5 votes 1, x1 <= 0.5 votes 1.  One vote each is a tie,
    # which the first class (0) wins, as in scikit-learn.
    forest = Forest(
        trees=(_stump(0, [1.0, 0.0], [0.0, 1.0]), _stump(1, [0.0, 1.0], [1.0, 0.0])),
        kind="forest",
        task="classification",
        n_features=2,
        feature_names=("a", "b"),
        classes_=np.array([0, 1]),
    )
    grid = np.array([[a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    expected_class = forest.predict(grid)
    assert expected_class.tolist() == [0, 0, 1, 0]
    leaves = forest.apply(grid)
    current = forest.predict(grid)
    for label in (0, 1):
        target = resolve_target(forest, label)
        predictor = IncrementalPredictor(forest, target, grid, leaves, current)
        changes = Changes(
            row=np.repeat(np.arange(4), 4),
            leaf=np.zeros(16, dtype=np.intp),
            ptr=np.arange(0, 33, 2),
            feature=np.tile([0, 1], 16),
            value=np.tile(grid.ravel(), 4),
        )
        expected = np.tile(expected_class, 4) == label
        np.testing.assert_array_equal(predictor.valid(changes), expected)
    # Through feature_tweak: from (0, 1), class 1 needs both stumps moved, but each
    # candidate enters one leaf only and ties, so nothing flips the ensemble.
    result = feature_tweak(forest, [[0.0, 1.0]], target=1, epsilon=0.25, cost="l1")
    assert not result.found_[0] and result.reason_[0] == REASON_NO_FLIP
    # From (1, 1) (a tie, class 0), moving x1 below 0.5 wins class 1.
    result = feature_tweak(forest, [[1.0, 1.0]], target=1, epsilon=0.25, cost="l1")
    np.testing.assert_array_equal(result.X_cf_, [[1.0, 0.25]])
