"""The input checks permutation_importance and grouped_permutation_importance share."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.tree import DecisionTreeRegressor

import treelens
from treelens import InputError


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    return DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y), X, y


def _importances(result):
    return np.asarray(result.importances_, dtype=float)


@pytest.mark.parametrize(
    "function", ["permutation_importance", "grouped_permutation_importance"]
)
def test_a_forest_is_scored_as_its_model(fitted, function):
    """A Forest predicts as its model does, so its permutation importance is
    scikit-learn's of the model, shuffle for shuffle (a group of one column is
    one column shuffled)."""
    model, X, y = fitted
    expected = sklearn_permutation(model, X, y, n_repeats=3, random_state=0)
    assert expected.importances_mean.max() > 0.1  # the comparison can fail
    got = getattr(treelens, function)(
        treelens.to_forest(model), X, y, n_repeats=3, random_state=0
    )
    np.testing.assert_allclose(
        _importances(got), expected.importances_mean, rtol=0, atol=1e-12
    )


def test_a_forest_classifier_takes_probability_scorers():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=80) > 0, "yes", "no")
    model = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    expected = sklearn_permutation(
        model, X, y, scoring="neg_log_loss", n_repeats=2, random_state=0
    )
    assert expected.importances_mean[1] > 0.1
    got = treelens.permutation_importance(
        treelens.to_forest(model),
        X,
        y,
        scoring="neg_log_loss",
        n_repeats=2,
        random_state=0,
    )
    np.testing.assert_allclose(
        _importances(got), expected.importances_mean, rtol=0, atol=1e-12
    )


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
def test_a_booster_without_fit_is_scored_through_its_forest(function):
    """A LightGBM Booster has no ``fit`` or ``score``: it is scored through its
    Forest, as scikit-learn scores the regressor wrapping the same trees."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    wrapper = lightgbm.LGBMRegressor(
        n_estimators=5, min_child_samples=5, verbose=-1
    ).fit(X, y)
    compute = getattr(treelens, function)
    expected = _importances(compute(wrapper, X, y, scoring="r2", random_state=0))
    assert expected[0] > expected[1:].max()
    got = _importances(compute(wrapper.booster_, X, y, scoring="r2", random_state=0))
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)
