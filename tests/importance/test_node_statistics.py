"""node_statistics reproduces the stored node arrays on training data."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import make_data

TOL = 1e-12


def stage_trees(model):
    if hasattr(model, "tree_"):
        return [model.tree_]
    return [e.tree_ for e in np.ravel(model.estimators_)]


def check_reproduces(model, X, y, sample_weight=None, *, leaf_values=True):
    stats = treelens.node_statistics(model, X, y, sample_weight=sample_weight)
    forest = treelens.to_forest(model)
    for j, tree in enumerate(stage_trees(model)):
        np.testing.assert_array_equal(stats.n_node_samples_[j], tree.n_node_samples)
        np.testing.assert_allclose(
            stats.weighted_n_node_samples_[j], tree.weighted_n_node_samples, rtol=TOL
        )
        # Impurities are differences of sums; compare at the scale of the node.
        scale = max(1.0, float(np.max(np.abs(tree.impurity))))
        np.testing.assert_allclose(
            stats.impurity_[j], tree.impurity, rtol=TOL, atol=TOL * scale
        )
        values = tree.value[:, 0, :]
        keep = slice(None) if leaf_values else ~forest.trees[j].is_leaf
        np.testing.assert_allclose(
            stats.value_[j][keep], values[keep], rtol=TOL, atol=TOL
        )
    return stats


@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    criterion=st.sampled_from(
        ["gini", "entropy", "log_loss", "squared_error", "friedman_mse",
         "absolute_error", "poisson"]
    ),
    forest=st.booleans(),
    weights=st.sampled_from([None, "integers", "floats", "zeros"]),
    class_weight=st.sampled_from([None, "balanced", "balanced_subsample", {0: 2.5}]),
    max_depth=st.integers(1, 6),
    min_samples_leaf=st.integers(1, 5),
    missing=st.booleans(),
)  # fmt: skip
def test_training_statistics_are_reproduced(
    seed, criterion, forest, weights, class_weight, max_depth, min_samples_leaf, missing
):
    classification = criterion in ("gini", "entropy", "log_loss")
    missing = missing and criterion != "absolute_error"
    X, y = make_data(
        seed, task="classification" if classification else "regression",
        n_classes=2 + seed % 3, missing=missing,
    )  # fmt: skip
    if criterion == "poisson":
        y = np.abs(y)
    rng = np.random.default_rng(seed)
    sample_weight = {
        None: None,
        "integers": rng.integers(1, 4, y.size).astype(float),
        "floats": rng.uniform(0.1, 3.0, y.size),
        "zeros": rng.integers(0, 3, y.size) * rng.uniform(0.5, 1.5, y.size),
    }[weights]
    params = {
        "criterion": criterion, "max_depth": max_depth, "min_samples_leaf": min_samples_leaf,
        "random_state": seed,
    }  # fmt: skip
    if classification:
        if class_weight == "balanced_subsample" and not forest:
            class_weight = "balanced"
        params["class_weight"] = class_weight
        if forest:
            cls = RandomForestClassifier if seed % 2 else ExtraTreesClassifier
            model = cls(n_estimators=3, bootstrap=False, **params)
        else:
            model = DecisionTreeClassifier(**params)
    elif forest:
        cls = RandomForestRegressor if seed % 2 else ExtraTreesRegressor
        model = cls(n_estimators=3, bootstrap=False, **params)
    else:
        model = DecisionTreeRegressor(**params)
    model.fit(X, y, sample_weight=sample_weight)
    check_reproduces(model, X, y, sample_weight)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    loss=st.sampled_from(
        ["log_loss", "exponential", "multiclass", "squared_error", "absolute_error",
         "huber", "quantile"]
    ),
    weighted=st.booleans(),
    init=st.sampled_from([None, "zero"]),
)  # fmt: skip
def test_gradient_boosting_stages_are_replayed(seed, loss, weighted, init):
    params = {
        "n_estimators": 5,
        "max_depth": 3,
        "learning_rate": 0.5,
        "init": init,
        "random_state": seed,
    }
    if loss in ("log_loss", "exponential", "multiclass"):
        X, y = make_data(
            seed, task="classification", n_classes=3 if loss == "multiclass" else 2
        )
        loss = "log_loss" if loss == "multiclass" else loss
        model = GradientBoostingClassifier(loss=loss, **params)
    else:
        X, y = make_data(seed, task="regression")
        model = GradientBoostingRegressor(loss=loss, **params)
    sample_weight = (
        np.random.default_rng(seed).uniform(0.5, 2, y.size) if weighted else None
    )
    model.fit(X, y, sample_weight=sample_weight)
    # Leaf values are line-search steps except for the squared error.
    check_reproduces(model, X, y, sample_weight, leaf_values=loss == "squared_error")


def test_held_out_statistics_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = DecisionTreeClassifier(max_depth=1).fit(X, [0, 0, 1, 1])  # x <= 1.5
    stats = treelens.node_statistics(
        model, [[0.0], [0.5], [3.0]], [0, 1, 1], sample_weight=[1.0, 3.0, 2.0]
    )
    np.testing.assert_array_equal(stats.n_node_samples_[0], [3, 2, 1])
    np.testing.assert_array_equal(stats.weighted_n_node_samples_[0], [6.0, 4.0, 2.0])
    # Root fractions (1/6, 5/6); left (1/4, 3/4); right (0, 1).
    np.testing.assert_allclose(
        stats.value_[0], [[1 / 6, 5 / 6], [0.25, 0.75], [0.0, 1.0]]
    )
    np.testing.assert_allclose(
        stats.impurity_[0], [1 - 1 / 36 - 25 / 36, 1 - 1 / 16 - 9 / 16, 0.0]
    )


def test_empty_nodes_and_frame():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = DecisionTreeRegressor(max_depth=1).fit(X, [0.0, 0.0, 1.0, 3.0])
    stats = treelens.node_statistics(model, [[0.0], [1.0]], [1.0, 2.0])
    np.testing.assert_array_equal(stats.n_node_samples_[0], [2, 2, 0])
    assert np.isnan(stats.value_[0][2, 0]) and stats.impurity_[0][2] == 0.0
    frame = stats.to_frame()
    assert list(frame.columns) == [
        "tree", "node", "depth", "is_leaf", "n_node_samples",
        "weighted_n_node_samples", "impurity", "value",
    ]  # fmt: skip
    assert frame.shape == (3, 8)


def test_weighted_median_rule():
    # Weights 1, 1, 1, 1: half the weight sits exactly after 2 -> midpoint 2.5;
    # weights 1, 1, 3, 1 -> 3.
    X = np.zeros((4, 1))
    model = DecisionTreeRegressor(criterion="absolute_error").fit(
        X, [1.0, 2.0, 3.0, 10.0]
    )
    stats = treelens.node_statistics(model, X, [1.0, 2.0, 3.0, 10.0])
    assert stats.value_[0][0, 0] == model.tree_.value[0, 0, 0] == 2.5
    weighted = treelens.node_statistics(
        model, X, [1.0, 2.0, 3.0, 10.0], sample_weight=[1, 1, 3, 1]
    )
    assert weighted.value_[0][0, 0] == 3.0
    np.testing.assert_allclose(weighted.impurity_[0], [(2 + 1 + 0 + 7) / 6])


def test_class_labels_are_matched_by_value():
    X, y = make_data(1, task="classification")
    labels = np.array(["c", "a", "b"])[y]
    model = DecisionTreeClassifier(max_depth=3, class_weight={"a": 2.0}).fit(X, labels)
    check_reproduces(model, X, labels)


@pytest.mark.parametrize("criterion", ["gini", "squared_error", "absolute_error"])
def test_large_inputs_reproduce_the_training_statistics(criterion):
    # From 4096 rows on, each tree's statistics are computed as soon as a thread
    # has routed it through scikit-learn's compiled tree.
    task = "regression" if criterion != "gini" else "classification"
    X, y = make_data(3, task=task, n_samples=5000)
    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    model = cls(
        n_estimators=4,
        max_depth=6,
        bootstrap=False,
        criterion=criterion,
        random_state=0,
    ).fit(X, y)
    assert treelens.to_forest(model)._compiled_trees is not None
    check_reproduces(model, X, y)
