"""MDI importance: scikit-learn's feature_importances_ exactly, and its arithmetic."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import (
    MODEL_FACTORIES,
    NO_IMPURITY_FACTORIES,
    PIPELINE_FACTORIES,
    UNSUPERVISED_FACTORIES,
    make_data,
)

TOL = 1e-12


def encoded_columns_of(pipeline, X):
    """For each input column, the columns of ``pipeline[:-1].transform(X)`` it
    feeds: those that change when only that column is shuffled."""
    import warnings

    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = np.asarray(pipeline[:-1].transform(X), dtype=float)
        owners = []
        for column in X.columns:
            moved = X.copy()
            moved[column] = rng.permutation(moved[column].to_numpy())
            other = np.asarray(pipeline[:-1].transform(moved), dtype=float)
            changed = ~np.all((base == other) | (np.isnan(base) & np.isnan(other)), 0)
            owners.append(np.flatnonzero(changed))
    return owners


def sklearn_importances(model, X=None):
    """``feature_importances_``; for a pipeline, summed over the encoded columns
    of each input column."""
    if hasattr(model, "estimators_features_"):
        return _bagged_importances(model)
    if not hasattr(model, "steps"):
        return model.feature_importances_
    encoded = model[-1].feature_importances_
    return np.array([encoded[cols].sum() for cols in encoded_columns_of(model, X)])


def _bagged_importances(model):
    """Bagged trees store no importances: each tree's own, put in the columns it
    read, averaged over the trees that split and normalized, as a random forest
    averages its trees'."""
    per_tree = []
    for tree, columns in zip(model.estimators_, model.estimators_features_):
        if tree.tree_.node_count > 1:
            full = np.zeros(model.n_features_in_)
            np.add.at(full, columns, tree.feature_importances_)
            per_tree.append(full)
    mean = np.mean(per_tree, axis=0)
    return mean / mean.sum()


def check_result(model, result, X=None):
    forest = treelens.to_forest(model)
    importances = result.importances_.to_numpy()
    np.testing.assert_allclose(
        importances, sklearn_importances(model, X), rtol=0, atol=TOL
    )
    assert list(result.importances_.index) == list(forest.feature_names)
    # Shares summed per feature give the importances.
    shares = result.nodes_.groupby("feature")["share"].sum()
    summed = shares.reindex(range(forest.n_features), fill_value=0.0).to_numpy()
    np.testing.assert_allclose(summed, importances, rtol=0, atol=TOL)
    # The decrease column is the stated formula.
    nodes = result.nodes_
    decrease = (
        nodes.weighted_n_node_samples * nodes.impurity
        - nodes.left_weighted_n_node_samples * nodes.left_impurity
        - nodes.right_weighted_n_node_samples * nodes.right_impurity
    )
    np.testing.assert_allclose(nodes.decrease, decrease, rtol=0, atol=TOL)
    # Importances are the mean of the per-tree rows of trees that split.
    relevant = [tree.n_nodes > 1 for tree in forest.trees]
    if any(relevant):
        mean = result.per_tree_.loc[relevant].mean().to_numpy()
        np.testing.assert_allclose(mean, importances, rtol=0, atol=TOL)
        if forest.kind == "tree":
            assert result.std_ is None
        else:
            spread = result.per_tree_.loc[relevant].std(ddof=0)
            np.testing.assert_allclose(result.std_.to_numpy(), spread, atol=TOL)
    assert np.all(importances >= -TOL)
    if importances.any():
        assert abs(importances.sum() - 1.0) < TOL


# Models storing no impurity: tests/test_gain_importance.py; models without a
# target: tests/adapters/test_isolation_forest.py.
@pytest.mark.parametrize(
    "name",
    sorted(
        set(MODEL_FACTORIES) - set(NO_IMPURITY_FACTORIES) - set(UNSUPERVISED_FACTORIES)
    ),
)
def test_factory_models(name):
    case = MODEL_FACTORIES[name]()
    result = treelens.mdi_importance(case.model)
    assert result.method == "MDI (train)"
    check_result(case.model, result, case.X)


def test_pipeline_mdi_merges_one_hot_columns_exactly():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    result = treelens.mdi_importance(case.model)
    owners = encoded_columns_of(case.model, case.X)
    encoded = case.model[-1].feature_importances_
    assert len(owners[2]) > 1  # employment: several one-hot columns
    for column, cols in zip(case.X.columns, owners):
        assert abs(result.importances_[column] - encoded[cols].sum()) < TOL
    # The per-node table speaks of the input column, with categorical rules.
    nodes = result.nodes_
    assert set(nodes["feature_name"]) <= set(case.X.columns)
    categorical = nodes[nodes.feature_name == "employment"]
    assert categorical.condition.str.startswith("employment in {").all()


def test_forest_input_gives_the_same_result():
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"]()
    a = treelens.mdi_importance(case.model)
    b = treelens.mdi_importance(treelens.to_forest(case.model))
    pd.testing.assert_series_equal(a.importances_, b.importances_)
    pd.testing.assert_frame_equal(a.nodes_, b.nodes_)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["tree", "forest", "boosting"]),
    classification=st.booleans(),
    criterion_index=st.integers(0, 3),
    max_depth=st.integers(1, 5),
    min_samples_leaf=st.integers(1, 6),
    max_features=st.sampled_from([None, 0.5, 1]),
    weighted=st.booleans(),
    class_weight=st.sampled_from([None, "balanced", {1: 4.0}]),
    bootstrap=st.booleans(),
)
def test_random_models_match_sklearn(
    seed, kind, classification, criterion_index, max_depth, min_samples_leaf,
    max_features, weighted, class_weight, bootstrap,
):  # fmt: skip
    task = "classification" if classification else "regression"
    X, y = make_data(seed, task=task, n_classes=2 + seed % 2)
    weights = np.random.default_rng(seed).exponential(size=y.size) if weighted else None
    common = {
        "max_depth": max_depth, "min_samples_leaf": min_samples_leaf,
        "max_features": max_features, "random_state": seed,
    }  # fmt: skip
    if kind == "boosting":
        if classification:
            model = GradientBoostingClassifier(n_estimators=4, **common)
        else:
            loss = ["squared_error", "absolute_error", "huber", "quantile"][
                criterion_index
            ]
            model = GradientBoostingRegressor(n_estimators=4, loss=loss, **common)
    elif classification:
        criterion = ["gini", "entropy", "log_loss", "gini"][criterion_index]
        if kind == "tree":
            model = DecisionTreeClassifier(
                criterion=criterion, class_weight=class_weight, **common
            )
        else:
            model = RandomForestClassifier(
                n_estimators=4, criterion=criterion, class_weight=class_weight,
                bootstrap=bootstrap, **common,
            )  # fmt: skip
    else:
        criterion = ["squared_error", "friedman_mse", "absolute_error", "poisson"][
            criterion_index
        ]
        if criterion == "poisson":
            y = np.abs(y)
        if kind == "tree":
            model = DecisionTreeRegressor(criterion=criterion, **common)
        else:
            cls = RandomForestRegressor if seed % 2 else ExtraTreesRegressor
            model = cls(
                n_estimators=3, criterion=criterion, bootstrap=bootstrap, **common
            )
    model.fit(X, y, sample_weight=weights)
    check_result(model, treelens.mdi_importance(model))


def toy_regressor():
    """Four rows, three features; by hand (squared error, unit weights):

    y = [0, 2, 4, 6], root sum of squares 56 - 4 * 3**2 = 20.  The best root split
    is on ``a`` ({0, 2} | {4, 6}: 2 + 2 left), decrease 20 - 2 - 2 = 16; then ``b``
    splits {0, 2} (decrease 2) and ``c`` splits {4, 6} (decrease 2).
    Importances 16/20, 2/20, 2/20.
    """
    X = pd.DataFrame(
        {"a": [0, 0, 1, 1], "b": [0, 1, 0, 0], "c": [0, 0, 0, 1]}, dtype=float
    )
    y = np.array([0.0, 2.0, 4.0, 6.0])
    return DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y), X, y


def test_toy_regressor_by_hand():
    model, _X, _y = toy_regressor()
    result = treelens.mdi_importance(model)
    np.testing.assert_allclose(result.importances_, [0.8, 0.1, 0.1], rtol=0, atol=TOL)
    nodes = result.nodes_.sort_values("depth", kind="stable")
    assert nodes.feature_name.tolist() == ["a", "b", "c"]
    # Impurities are variances: root 20 / 4, children 2 / 2, pure leaves 0.
    np.testing.assert_allclose(nodes.impurity, [5.0, 1.0, 1.0])
    np.testing.assert_allclose(nodes.decrease, [16.0, 2.0, 2.0])
    np.testing.assert_allclose(nodes.share, [0.8, 0.1, 0.1])
    check_result(model, result)


def test_toy_regressor_held_out_by_hand():
    model, X, _ = toy_regressor()
    # y = [0, 0, 4, 6]: root sum of squares 52 - 4 * 2.5**2 = 27; left {0, 0} 0,
    # right {4, 6} 2; decreases a: 27 - 0 - 2 = 25, b: 0, c: 2.  Total 27.
    result = treelens.mdi_importance(model, X, [0.0, 0.0, 4.0, 6.0])
    assert result.method == "MDI (held-out)"
    np.testing.assert_allclose(
        result.importances_, [25 / 27, 0.0, 2 / 27], rtol=0, atol=TOL
    )


def test_toy_classifier_by_hand():
    # One split on x0 separating [0, 0 | 1, 1]: gini 0.5 at the root, 0 below, so
    # x0 carries everything; with class_weight {1: 3} the root weighs 2 + 6 = 8.
    X = np.array([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    model = DecisionTreeClassifier(class_weight={1: 3.0}).fit(X, [0, 0, 1, 1])
    result = treelens.mdi_importance(model)
    nodes = result.nodes_
    assert nodes.weighted_n_node_samples.tolist() == [8.0]
    # Gini of fractions (2/8, 6/8): 1 - 1/16 - 9/16 = 0.375.
    np.testing.assert_allclose(nodes.impurity, [0.375])
    np.testing.assert_allclose(nodes.decrease, [8 * 0.375])
    np.testing.assert_allclose(result.importances_, [1.0, 0.0])


def test_no_split_gives_zeros():
    X = np.arange(10.0).reshape(5, 2)
    for model in (
        DecisionTreeRegressor().fit(X, np.ones(5)),
        RandomForestRegressor(n_estimators=3, random_state=0).fit(X, np.ones(5)),
        GradientBoostingRegressor(n_estimators=3).fit(X, np.ones(5)),
    ):
        result = treelens.mdi_importance(model)
        np.testing.assert_array_equal(result.importances_, [0.0, 0.0])
        np.testing.assert_array_equal(result.importances_, model.feature_importances_)
        assert result.nodes_.empty


def test_forest_averages_only_trees_that_split():
    # Bootstrap samples that miss the single positive row give one-node trees.
    X = np.arange(16.0).reshape(8, 2)
    X[:, 1] = [3, 1, 4, 1, 5, 9, 2, 6]
    y = [0, 0, 0, 0, 0, 0, 0, 1]
    model = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    sizes = [e.tree_.node_count for e in model.estimators_]
    assert min(sizes) == 1 and max(sizes) > 1
    result = treelens.mdi_importance(model)
    check_result(model, result)
    single = [s == 1 for s in sizes]
    assert np.all(result.per_tree_.loc[single].to_numpy() == 0.0)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    which=st.sampled_from(
        ["gini", "entropy", "squared_error", "absolute_error", "poisson", "gb_log_loss",
         "gb_huber", "gb_multiclass", "extra_balanced"]
    ),
    weighted=st.booleans(),
)  # fmt: skip
def test_held_out_mdi_on_training_data_equals_stored_mdi(seed, which, weighted):
    classification = which in (
        "gini",
        "entropy",
        "gb_log_loss",
        "gb_multiclass",
        "extra_balanced",
    )
    X, y = make_data(
        seed, task="classification" if classification else "regression",
        n_classes=3 if which == "gb_multiclass" else 2,
    )  # fmt: skip
    weights = np.random.default_rng(seed).integers(1, 4, y.size) if weighted else None
    if which in ("gini", "entropy"):
        model = DecisionTreeClassifier(
            criterion=which, max_depth=4, class_weight="balanced"
        )
    elif which == "extra_balanced":
        from sklearn.ensemble import ExtraTreesClassifier

        model = ExtraTreesClassifier(
            n_estimators=3, max_depth=4, class_weight="balanced"
        )
    elif which.startswith("gb_"):
        cls = (
            GradientBoostingRegressor
            if which == "gb_huber"
            else GradientBoostingClassifier
        )
        extra = {"loss": "huber"} if which == "gb_huber" else {}
        model = cls(n_estimators=4, max_depth=3, **extra)
    else:
        if which == "poisson":
            y = np.abs(y)
        model = RandomForestRegressor(
            n_estimators=3, max_depth=4, criterion=which, bootstrap=False
        )
    model.set_params(random_state=seed).fit(X, y, sample_weight=weights)
    stored = treelens.mdi_importance(model)
    replayed = treelens.mdi_importance(model, X, y, sample_weight=weights)
    np.testing.assert_allclose(
        replayed.importances_, stored.importances_, rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(
        replayed.nodes_.share, stored.nodes_.share, rtol=0, atol=1e-10
    )


def test_held_out_mdi_penalizes_noise_splits():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(
        X[:200], y[:200]
    )
    held_out = treelens.mdi_importance(model, X[200:], y[200:])
    train = treelens.mdi_importance(model)
    # The noise features look useful on the training data only.
    assert held_out.importances_["x0"] > train.importances_["x0"]
    assert (
        held_out.importances_[["x1", "x2"]].sum()
        < train.importances_[["x1", "x2"]].sum()
    )


def test_to_frame_and_repr():
    model, _X, _y = toy_regressor()
    result = treelens.mdi_importance(model)
    frame = result.to_frame()
    assert list(frame.columns) == ["importance"]
    forest_frame = treelens.mdi_importance(
        MODEL_FACTORIES["sklearn.RandomForestRegressor"]().model
    ).to_frame()
    assert list(forest_frame.columns) == ["importance", "std", "low", "high"]
    assert frame.index.name == "feature"
    assert "MDIImportance" in repr(result) and "a=0.8" in repr(result)


def test_permutation_importance_wraps_sklearn():
    from sklearn.inspection import permutation_importance as sklearn_permutation

    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"]()
    ours = treelens.permutation_importance(
        case.model, case.X, case.y, n_repeats=3, random_state=0
    )
    theirs = sklearn_permutation(
        case.model, case.X, case.y, n_repeats=3, random_state=0
    )
    assert ours.method == "permutation" and ours.per_tree_ is None
    np.testing.assert_allclose(ours.importances_, theirs.importances_mean)
    np.testing.assert_allclose(ours.std_, theirs.importances_std)
    assert isinstance(ours, treelens.ImportanceResult)


def test_pipeline_importances_on_the_raw_frame():
    import warnings

    case = PIPELINE_FACTORIES["sklearn.Pipeline[ordinal+boosting]"]()
    held_out = treelens.mdi_importance(case.model, case.X, case.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        permutation = treelens.permutation_importance(
            case.model, case.X, case.y, n_repeats=2, random_state=0
        )
    for result in (held_out, permutation):
        assert list(result.importances_.index) == list(case.X.columns)
    # The columns the pipeline drops are worth nothing.
    assert held_out.importances_[["owner", "constant", "id"]].eq(0).all()
    assert held_out.importances_["employment"] > 0


def test_intervals_over_trees():
    X, y = make_data(1, task="classification")
    model = RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    result = treelens.mdi_importance(model)
    low, high = result.interval_["low"], result.interval_["high"]
    assert (low <= result.importances_).all() and (result.importances_ <= high).all()
    assert (low >= 0).all() and not result.can_be_negative
    assert result.interval_method.startswith("95% percentile bootstrap over 30 trees")
    assert "low" in result.to_frame().columns
    none = treelens.mdi_importance(model, n_bootstrap=0)
    assert none.interval_ is None and none.interval_method == ""
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert treelens.mdi_importance(tree).interval_ is None
