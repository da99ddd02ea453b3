"""The row checks and the fitted weights node statistics and debiased MDI share."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treelens import InputError, to_forest
from treelens._core._validation import check_rows
from treelens._importance._replay import fitted_weights

X = np.arange(5.0)[:, None]
Y = np.array([0, 0, 1, 1, 1])


def test_check_rows_returns_the_three_checked_arrays():
    forest = to_forest(DecisionTreeClassifier(random_state=0).fit(X, Y))
    rows, target, weights = check_rows(forest, X, Y, None)
    assert rows.shape == (5, 1) and rows.dtype == forest.input_dtype
    assert target.tolist() == [0, 0, 1, 1, 1]
    assert weights.tolist() == [1.0] * 5
    _, _, weights = check_rows(forest, X, Y, 2.0)
    assert weights.tolist() == [2.0] * 5


def test_check_rows_refuses_no_rows_before_checking_y():
    forest = to_forest(DecisionTreeClassifier(random_state=0).fit(X, Y))
    with pytest.raises(InputError, match="at least one row; got 0 rows"):
        check_rows(forest, X[:0], Y, None)


def test_fitted_weights_weigh_classes_of_bagging_classifiers_only():
    balanced = to_forest(
        DecisionTreeClassifier(class_weight="balanced", random_state=0).fit(X, Y)
    )
    # A single tree counts rows: 5 / (2 * (2, 3)).
    np.testing.assert_allclose(
        fitted_weights(balanced, Y, np.full(5, 2.0)),
        2.0 * np.array([1.25, 1.25, 5 / 6, 5 / 6, 5 / 6]),
    )
    weights = np.arange(1.0, 6.0)
    boosting = to_forest(GradientBoostingClassifier(n_estimators=2).fit(X, Y))
    regressor = to_forest(DecisionTreeRegressor().fit(X, Y.astype(float)))
    for forest in (boosting, regressor):
        np.testing.assert_array_equal(fitted_weights(forest, Y, weights), weights)
