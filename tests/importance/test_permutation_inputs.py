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


@pytest.mark.parametrize(
    "function", ["permutation_importance", "grouped_permutation_importance"]
)
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"n_repeats": 0}, "`n_repeats` must be a positive integer; got 0"),
        ({"n_repeats": "3"}, "`n_repeats` must be a positive integer; got '3'"),
        ({"scoring": "r2_typo"}, "`scoring` is not a known scorer;.*got 'r2_typo'"),
        ({"scoring": ["r2", "max_error"]}, "`scoring` must name one metric;"),
    ],
)
def test_repeats_and_scoring_are_checked_alike(fitted, function, options, match):
    # permutation_importance passed these to scikit-learn, which raised its own
    # errors (a list of metrics even returned a dict that then broke).
    model, X, y = fitted
    with pytest.raises(InputError, match=match):
        getattr(treelens, function)(model, X, y, **options)


@pytest.mark.parametrize(
    "function", ["permutation_importance", "grouped_permutation_importance"]
)
def test_a_booster_without_fit_is_refused_by_name(function):
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    booster = lightgbm.train(
        {"verbose": -1, "min_data_in_leaf": 5}, lightgbm.Dataset(X, y), 2
    )
    with pytest.raises(InputError, match=rf"^{function} scores the model with"):
        getattr(treelens, function)(booster, X, y, scoring="r2")
