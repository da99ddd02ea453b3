"""The rules of replaying a model's training, checked on numbers worked out by hand:
the losses' pseudo-residuals, the class-weight rule and the boosting-stage replay."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from treelens import UnsupportedModelError, to_forest
from treelens._importance._losses import negative_gradient
from treelens._importance._replay import (
    class_factors,
    row_class_weights,
    stage_residuals,
)

ONES = np.ones(4)


@pytest.mark.parametrize(
    ("loss", "y", "raw", "alpha", "expected"),
    [
        # y - raw
        ("squared_error", [1.0, 3.0], [0.0, 1.0], None, [1.0, 2.0]),
        # -sign(raw - y), +1 at a tie (scikit-learn's rule)
        ("absolute_error", [1.0, 3.0, 2.0], [2.0, 1.0, 2.0], None, [-1.0, 1.0, 1.0]),
        # alpha above the prediction, alpha - 1 below
        ("quantile", [1.0, 3.0], [2.0, 1.0], 0.9, [-0.1, 0.9]),
        # y - expit(raw): expit(0) = 1/2, expit(log 3) = 3/4
        ("log_loss", [1.0, 0.0], [0.0, np.log(3.0)], None, [0.5, -0.75]),
        # y exp(-raw) - (1 - y) exp(raw) at raw = log 2
        ("exponential", [1.0, 0.0], [np.log(2.0)] * 2, None, [0.5, -2.0]),
    ],
)
def test_single_output_losses(loss, y, raw, alpha, expected):
    y = np.array(y)
    raw = np.array(raw)[:, None]
    out = negative_gradient(loss, y, raw, np.ones(y.size), alpha=alpha)
    np.testing.assert_allclose(out[:, 0], expected, atol=1e-15)


def test_huber_clips_at_the_weighted_median_of_absolute_residuals():
    # |residuals| 1, 2, 3, 4 with equal weights: the 50% point is 2, so residuals
    # beyond 2 are clipped to 2.
    out = negative_gradient(
        "huber", np.zeros(4), np.array([[1.0], [2.0], [3.0], [4.0]]), ONES, alpha=0.5
    )
    np.testing.assert_allclose(out[:, 0], [-1.0, -2.0, -2.0, -2.0])


def test_multiclass_log_loss_is_one_hot_minus_softmax():
    # softmax(0, 0, log 2) = (1/4, 1/4, 1/2)
    out = negative_gradient(
        "log_loss", np.array([2.0]), np.array([[0.0, 0.0, np.log(2.0)]]), np.ones(1)
    )
    np.testing.assert_allclose(out, [[-0.25, -0.25, 0.5]], atol=1e-15)


def test_unknown_loss_is_refused():
    with pytest.raises(UnsupportedModelError, match="poisson"):
        negative_gradient("poisson", np.zeros(1), np.zeros((1, 1)), np.ones(1))


def test_balanced_class_weights_by_hand():
    X = np.arange(5.0)[:, None]
    y = np.array([0, 0, 1, 1, 1])
    forest = to_forest(
        RandomForestClassifier(n_estimators=2, class_weight="balanced").fit(X, y)
    )
    tree = to_forest(DecisionTreeClassifier(class_weight="balanced").fit(X, y))
    # Forests total the sample weights of each class: 8 / (2 * (2, 6)).
    np.testing.assert_allclose(
        class_factors(forest, np.array([2.0, 6.0]), np.array([2.0, 3.0])),
        [2.0, 2.0 / 3.0],
    )
    # Single trees count rows: 5 / (2 * (2, 3)).
    np.testing.assert_allclose(
        class_factors(tree, np.array([2.0, 6.0]), np.array([2.0, 3.0])),
        [1.25, 5.0 / 6.0],
    )
    # A class absent from the data keeps weight 1.
    np.testing.assert_allclose(
        class_factors(tree, np.array([4.0, 0.0]), np.array([4.0, 0.0])), [1.0, 1.0]
    )
    np.testing.assert_allclose(
        row_class_weights(tree, y, np.ones(5)), [1.25, 1.25, 5 / 6, 5 / 6, 5 / 6]
    )


def test_class_weight_dict_is_applied_as_is():
    X = np.arange(4.0)[:, None]
    y = np.array(["a", "b", "b", "b"])
    tree = to_forest(DecisionTreeClassifier(class_weight={"a": 3.0}).fit(X, y))
    np.testing.assert_allclose(
        class_factors(tree, np.array([1.0, 3.0]), np.array([1.0, 3.0])), [3.0, 1.0]
    )


def test_boosting_stages_replayed_by_hand():
    # y = (0, 2): init 1; stage 1 fits residuals (-1, 1) exactly; with learning
    # rate 1/2 the raw prediction becomes (0.5, 1.5) and stage 2 sees (-0.5, 0.5).
    X = np.array([[0.0], [1.0]])
    y = np.array([0.0, 2.0])
    model = GradientBoostingRegressor(
        n_estimators=2, max_depth=1, learning_rate=0.5
    ).fit(X, y)
    forest = to_forest(model)
    leaves = forest.apply(X)
    out = stage_residuals(forest, leaves, y, np.ones(2))
    np.testing.assert_allclose(out, [[-1.0, -0.5], [1.0, 0.5]], atol=1e-15)
