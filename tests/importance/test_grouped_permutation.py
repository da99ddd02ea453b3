"""Grouped permutation importance: scikit-learn's for single columns, and groups
given, found from one-hot columns, or found by correlation."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation

import treelens
from treelens._importance._groups import correlated_groups, one_hot_groups


def _one_hot_data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    color = rng.randint(0, 3, n)
    size = rng.normal(size=n)
    X = pd.DataFrame(
        {
            "size": size,
            "color_red": (color == 0).astype(float),
            "color_green": (color == 1).astype(float),
            "color_blue": (color == 2).astype(float),
            "noise": rng.normal(size=n),
        }
    )
    y = ((color == 1) ^ (size > 0.5)).astype(int)
    return X, y


@pytest.mark.parametrize("frame", [False, True])
@pytest.mark.parametrize("scoring", [None, "neg_log_loss"])
def test_single_column_groups_equal_scikit_learn(frame, scoring):
    X, y = _one_hot_data()
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    data = X if frame else X.to_numpy()
    if not frame:
        model = RandomForestClassifier(n_estimators=10, random_state=0).fit(data, y)
    weight = np.random.RandomState(2).uniform(0.5, 1.5, len(y))
    ours = treelens.grouped_permutation_importance(
        model,
        data,
        y,
        one_hot=False,
        scoring=scoring,
        n_repeats=4,
        random_state=7,
        sample_weight=weight,
    )
    theirs = sklearn_permutation(
        model,
        data,
        y,
        scoring=scoring,
        n_repeats=4,
        random_state=7,
        sample_weight=weight,
    )
    assert all(len(cols) == 1 for cols in ours.groups_.values())
    np.testing.assert_array_equal(
        ours.importances_per_repeat_.to_numpy().T, theirs.importances
    )
    np.testing.assert_array_equal(ours.importances_.to_numpy(), theirs.importances_mean)
    np.testing.assert_array_equal(ours.std_.to_numpy(), theirs.importances_std)
    # A group given by hand of one column is the same too.
    one = treelens.grouped_permutation_importance(
        model,
        data,
        y,
        groups={"the size": [0]},
        one_hot=False,
        scoring=scoring,
        n_repeats=4,
        random_state=7,
        sample_weight=weight,
    )
    assert one.importances_.index[0] == "the size"
    assert one.importances_.iloc[0] == theirs.importances_mean[0]


def test_one_hot_columns_are_found_and_permuted_together():
    X, y = _one_hot_data()
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    result = treelens.grouped_permutation_importance(model, X, y, random_state=0)
    assert result.groups_ == {
        "size": ["size"],
        "color": ["color_red", "color_green", "color_blue"],
        "noise": ["noise"],
    }
    single = treelens.permutation_importance(model, X, y, random_state=0)
    # The color as a whole matters more than any one of its columns.
    colors = ["color_red", "color_green", "color_blue"]
    assert result.importances_["color"] > single.importances_[colors].max()
    assert result.interval_ is not None and result.can_be_negative
    assert "repeats" in result.interval_method
    assert result.importances_per_repeat_.shape == (5, 3)


def test_one_hot_detection_rules():
    eye = np.eye(3)[[0, 1, 2, 1, 0]]
    X = np.column_stack([eye, np.zeros(5), [0.5, 1, 2, 3, 4], eye[:, :2]])
    # Columns 0-2 are one-hot, the all-zero column 3 joins them (an absent
    # level); columns 5-6 are 0/1 but rows 2 has no one: not a group.
    assert one_hot_groups(X) == [[0, 1, 2, 3]]
    assert one_hot_groups(np.ones((4, 1))) == []


def test_correlated_groups_and_user_groups():
    rng = np.random.RandomState(0)
    a = rng.normal(size=400)
    X = np.column_stack([a, a + 0.05 * rng.normal(size=400), rng.normal(size=400), -a])
    assert correlated_groups(X, 0.9, [0, 1, 2, 3]) == [[0, 1, 3]]
    y = a + 0.1 * rng.normal(size=400)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    result = treelens.grouped_permutation_importance(
        model, X, y, correlation_threshold=0.9, random_state=0
    )
    assert result.groups_ == {"x0+x1+x3": ["x0", "x1", "x3"], "x2": ["x2"]}
    given = treelens.grouped_permutation_importance(
        model, X, y, groups=[["x2", 0]], random_state=0
    )
    assert given.groups_["x0+x2"] == ["x0", "x2"]
    with pytest.raises(treelens.InputError, match="one group only"):
        treelens.grouped_permutation_importance(
            model, X, y, groups={"a": [0, 1], "b": [1]}
        )
    with pytest.raises(treelens.InputError, match="not a feature"):
        treelens.grouped_permutation_importance(model, X, y, groups={"a": ["zz"]})
    with pytest.raises(treelens.InputError, match="correlation_threshold"):
        treelens.grouped_permutation_importance(model, X, y, correlation_threshold=1.5)
