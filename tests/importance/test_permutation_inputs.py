"""The input checks permutation_importance and grouped_permutation_importance share."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

import treelens
from treelens import InputError


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    return DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y), X, y


@pytest.mark.parametrize(
    "function", ["permutation_importance", "grouped_permutation_importance"]
)
def test_a_forest_is_refused_by_name(fitted, function):
    model, X, y = fitted
    with pytest.raises(InputError, match=rf"^{function} scores the model itself;"):
        getattr(treelens, function)(treelens.to_forest(model), X, y)


@pytest.mark.parametrize(
    "function", ["permutation_importance", "grouped_permutation_importance"]
)
def test_weights_and_targets_are_checked_against_the_rows(fitted, function):
    model, X, y = fitted
    with pytest.raises(InputError, match="sample_weight"):
        getattr(treelens, function)(model, X, y, sample_weight=np.ones(3))
    with pytest.raises(InputError):
        getattr(treelens, function)(model, X, y[:5])
