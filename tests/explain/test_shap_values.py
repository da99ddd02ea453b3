"""TreeSHAP on the Forest: values written out by hand, brute-force Shapley values
from their definition, shap's own values, additivity over random models."""

from itertools import combinations
from math import factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treelens
from tests.categorical_forests import random_codes, random_forest
from tests.models import (
    MODEL_FACTORIES,
    NATIVE_CATEGORICAL_FACTORIES,
    PIPELINE_FACTORIES,
)
from treelens import BackgroundError, Forest, InputError, OutputTooLargeError, Tree
from treelens._adapters._isolation import average_path_length
from treelens._explain._shap_leaves import tree_cover


# ------------------------------------------------------------------ by hand
def _toy_forest() -> Forest:
    """x0 <= 0.5 ? 1 : (x1 <= 0.5 ? 3 : 6), covers 10 -> 4 | 6 -> 2 | 4."""
    return Forest(
        trees=(
            Tree(
                children_left=[1, -1, 3, -1, -1],
                children_right=[2, -1, 4, -1, -1],
                feature=[0, -2, 1, -2, -2],
                threshold=[0.5, -2, 0.5, -2, -2],
                missing_go_left=[True, False, False, False, False],
                value=[[3.4], [1.0], [5.0], [3.0], [6.0]],
                impurity=[0.0] * 5,
                n_node_samples=[10, 4, 6, 2, 4],
                weighted_n_node_samples=[10.0, 4.0, 6.0, 2.0, 4.0],
            ),
        ),
        kind="tree",
        task="regression",
        n_features=2,
        feature_names=("x0", "x1"),
    )


def test_toy_tree_path_dependent_by_hand():
    # v({}) = .4*1 + .2*3 + .4*6 = 3.4; v({0}) = (2*3 + 4*6)/6 = 5;
    # v({1}) = .4*1 + .6*6 = 4; v({0, 1}) = 6.
    # phi0 = ((5 - 3.4) + (6 - 4)) / 2 = 1.8; phi1 = ((4 - 3.4) + (6 - 5)) / 2 = 0.8.
    result = treelens.shap_values(_toy_forest(), [[1.0, 1.0]])
    np.testing.assert_allclose(result.values_, [[1.8, 0.8]], atol=1e-14)
    assert result.expected_value_ == pytest.approx(3.4, abs=1e-14)
    # Interactions: Phi01 = (6 - 5 - 4 + 3.4) / 4 = 0.1 each way... times 2 / 2:
    # the Shapley interaction index of two players is (v01 - v0 - v1 + v) / 2.
    inter = treelens.shap_interaction_values(_toy_forest(), [[1.0, 1.0]])
    np.testing.assert_allclose(inter.values_[0], [[1.6, 0.2], [0.2, 0.6]], atol=1e-14)


def test_toy_tree_interventional_by_hand():
    # Background (0, 0) predicts 1: v({}) = 1, v({0}) = f(1, 0) = 3,
    # v({1}) = f(0, 1) = 1, v({0, 1}) = 6; phi0 = (2 + 5) / 2, phi1 = (0 + 3) / 2.
    result = treelens.shap_values(
        _toy_forest(), [[1.0, 1.0]], method="interventional", background=[[0.0, 0.0]]
    )
    np.testing.assert_allclose(result.values_, [[3.5, 1.5]], atol=1e-14)
    assert result.expected_value_ == pytest.approx(1.0)


# -------------------------------------------------------------- brute force
def _output(forest, X):
    """The explained output of every row of codes ``X``: (n_rows, n_outputs)."""
    leaves = forest._leaves_of_codes(X)  # codes, even where labels are numbers
    if forest.kind == "boosting":
        # Summed in float64 (XGBoost sums in float32; SHAP values are exact sums).
        values = forest._tree_values(leaves)[:, :, 0] * forest.learning_rate
        raw = np.tile(forest.init_raw, (X.shape[0], 1))
        for j, k in enumerate(forest.tree_output):
            raw[:, k] += values[:, j]
        return raw
    if forest.is_classifier:
        return forest._proba_from_leaves(leaves)
    return forest._predict_from_leaves(leaves)[:, None]


def _shapley(game, n_features):
    """Shapley values from all coalitions; game(S) -> (n_rows, n_outputs)."""
    values = {
        S: game(S)
        for k in range(n_features + 1)
        for S in combinations(range(n_features), k)
    }
    phi = np.zeros((*values[()].shape[:1], n_features, values[()].shape[1]))
    for i in range(n_features):
        for S, v in values.items():
            if i in S:
                continue
            w = factorial(len(S)) * factorial(n_features - len(S) - 1)
            w /= factorial(n_features)
            with_i = tuple(sorted((*S, i)))
            phi[:, i] += w * (values[with_i] - v)
    return phi, values[()]


def _rule(forest, tree, node, x):
    """Whether values ``x`` go left at ``node`` (NaN aside), as the model routes."""
    if not tree.is_categorical[node]:
        return x <= tree.threshold[node]
    k = forest.n_categories[tree.feature[node]]
    v = np.nan_to_num(x)
    code = np.where((v >= 0) & (v < k) & (v == np.floor(v)), v, k).astype(int)
    return tree.categorical_left[node, code]


def _conditional(forest, tree, cover, value, Xc, S, node, weight):
    """E[tree | x_S] below ``node`` for rows reaching it with ``weight``."""
    if tree.children_left[node] == -1:
        return weight[:, None] * value[node]
    f = tree.feature[node]
    left, right = tree.children_left[node], tree.children_right[node]
    if f in S:
        x = Xc[:, f]
        rule = _rule(forest, tree, node, x)
        go = np.where(np.isnan(x), tree.missing_go_left[node], rule)
        w_left, w_right = weight * go, weight * ~go
    elif cover[node] > 0:
        w_left = weight * cover[left] / cover[node]
        w_right = weight * cover[right] / cover[node]
    else:  # a branch no training row reached weighs nothing
        w_left = w_right = weight * 0.0
    args = (forest, tree, cover, value, Xc, S)
    return _conditional(*args, left, w_left) + _conditional(*args, right, w_right)


def _path_game(forest, X):
    """E[f | x_S] under the training cover, tree by tree, node by node."""
    Xc = X.astype(forest.input_dtype).astype(np.float64)
    n_out = forest.n_outputs

    def game(S):
        total = np.zeros((X.shape[0], n_out))
        if forest.kind == "boosting":
            total += forest.init_raw
        for j, tree in enumerate(forest.trees):
            cover = tree_cover(forest, tree)
            if forest.kind == "boosting":
                value = np.zeros((tree.n_nodes, n_out))
                value[:, forest.tree_output[j]] = (
                    forest.learning_rate * tree.value[:, 0]
                )
            else:
                value = tree.value / (forest.n_trees if forest.kind == "forest" else 1)
            total += _conditional(
                forest, tree, cover, value, Xc, S, 0, np.ones(X.shape[0])
            )
        return total

    return game


def _interventional_game(forest, X, background):
    def game(S):
        rows = []
        for x in X:
            hybrid = background.copy()
            hybrid[:, list(S)] = x[list(S)]
            rows.append(_output(forest, hybrid).mean(axis=0))
        return np.array(rows)

    return game


def _squeeze(phi):
    return phi[..., 0] if phi.shape[-1] == 1 else phi


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_brute_force_every_model(name):
    case = MODEL_FACTORIES[name](0)
    forest = treelens.to_forest(case.model)
    # A pipeline's rows as the codes its lifted Forest routes; the lifted Forest
    # plays the game of the input columns (a pipeline itself is explained as its
    # final model summed per input column: tests/explain/test_pipelines.py).
    pipeline = name in PIPELINE_FACTORIES
    data = forest.encode(case.X) if pipeline else case.X
    model = forest if pipeline else case.model
    X = data[:6].copy()
    X[0] = data[1]  # rows at training points and off them
    X[5] = np.where(np.isnan(X[5]), 0.3, X[5]) * 1.7
    phi, base = _shapley(_path_game(forest, X), forest.n_features)
    result = treelens.shap_values(model, X)
    np.testing.assert_allclose(result.values_, _squeeze(phi), atol=1e-10, rtol=0)
    np.testing.assert_allclose(
        np.ravel(result.expected_value_), base[0], atol=1e-10, rtol=0
    )
    background = data[-8:]
    phi, base = _shapley(_interventional_game(forest, X, background), forest.n_features)
    result = treelens.shap_values(
        model, X, method="interventional", background=background
    )
    np.testing.assert_allclose(result.values_, _squeeze(phi), atol=1e-10, rtol=0)
    np.testing.assert_allclose(
        np.ravel(result.expected_value_), base[0], atol=1e-10, rtol=0
    )


@pytest.mark.parametrize("seed", range(4))
def test_brute_force_categorical_splits(seed):
    rng = np.random.default_rng(seed)
    forest = random_forest(rng, n_trees=3, max_depth=4)
    X = random_codes(rng, 12)
    background = random_codes(rng, 7)
    for method, game, bg in (
        ("path", _path_game(forest, X), None),
        ("interventional", _interventional_game(forest, X, background), background),
    ):
        phi, base = _shapley(game, forest.n_features)
        result = treelens.shap_values(forest, X, method=method, background=bg)
        np.testing.assert_allclose(result.values_, _squeeze(phi), atol=1e-10, rtol=0)
        assert result.expected_value_ == pytest.approx(base[0, 0], abs=1e-10)


@pytest.mark.parametrize("name", sorted(NATIVE_CATEGORICAL_FACTORIES))
def test_brute_force_native_categorical(name):
    case = NATIVE_CATEGORICAL_FACTORIES[name](0)
    forest = treelens.to_forest(
        case.model, **({"categories": case.categories} if case.categories else {})
    )
    rows, last = case.X.iloc[:5], case.X.iloc[-6:]
    X = forest.validate_X(rows).astype(np.float64)
    background = forest.validate_X(last).astype(np.float64)
    for method, game, bg in (
        ("path", _path_game(forest, X), None),
        ("interventional", _interventional_game(forest, X, background), last),
    ):
        phi, _ = _shapley(game, forest.n_features)
        # The labelled rows: a numeric array is read by label where the model
        # reads labels from one (HistGradientBoosting's integer categories).
        result = treelens.shap_values(forest, rows, method=method, background=bg)
        np.testing.assert_allclose(result.values_, _squeeze(phi), atol=1e-10, rtol=0)


# ------------------------------------------------------------------- shap
#: Models shap's TreeExplainer does not read (shap's own errors):
#: multiclass GradientBoostingClassifier, bagged trees and AdaBoost ("Model
#: type not yet supported") and XGBoost random forests; the brute force above
#: checks them.
# shap's TreeExplainer refuses scikit-learn Pipelines.
SHAP_UNSUPPORTED = set(PIPELINE_FACTORIES) | {
    "sklearn.AdaBoostClassifier",
    "sklearn.BaggingClassifier",
    "sklearn.BaggingRegressor",
    "sklearn.GradientBoostingClassifier",
    "xgboost.XGBRFClassifier",
    "xgboost.XGBRFRegressor",
}


def _shap_values(explainer, X):
    return np.asarray(explainer.shap_values(X, check_additivity=False))


@pytest.mark.parametrize("name", sorted(set(MODEL_FACTORIES) - SHAP_UNSUPPORTED))
def test_equal_to_shap(name):
    import shap  # installed by make test (the test extra); never skipped

    case = MODEL_FACTORIES[name](0)
    X = case.X[:30] if case.missing else np.nan_to_num(case.X[:30])
    xgboost = name.startswith("xgboost")
    # XGBoost's covers and leaf values are float32: agreement to that resolution.
    tol = {"atol": 1e-6, "rtol": 1e-5} if xgboost else {"atol": 1e-9, "rtol": 0}
    # shap explains an IsolationForest's mean path length E[h], treelens the
    # raw score E[h] / c(max_samples) that score_samples exponentiates.  On one
    # row of this model shap's values add up to a path length 0.6 away from
    # the model's own (treelens' equal the brute force above): rows compared
    # where shap's add up.
    scale = 1.0
    if name == "sklearn.IsolationForest":
        scale = float(average_path_length(np.array([case.model.max_samples_]))[0])
        explainer = shap.TreeExplainer(case.model)
        total = explainer.expected_value + _shap_values(explainer, X).sum(axis=1)
        own = -np.log2(-case.model.score_samples(X)) * scale
        X = X[np.abs(total - own) < 1e-9]
        assert len(X) >= 25
    ours = treelens.shap_values(case.model, X)
    theirs = _shap_values(shap.TreeExplainer(case.model), X) / scale
    np.testing.assert_allclose(ours.values_, theirs.reshape(ours.values_.shape), **tol)
    inter = treelens.shap_interaction_values(case.model, X[:10])
    if not name.startswith("lightgbm"):  # shap computes no LightGBM interactions
        theirs = (
            np.asarray(shap.TreeExplainer(case.model).shap_interaction_values(X[:10]))
            / scale
        )
        if theirs.ndim == 4 and theirs.shape != inter.values_.shape:
            theirs = np.moveaxis(theirs, 0, -1)  # CatBoost multiclass: one per class
        np.testing.assert_allclose(
            inter.values_, theirs.reshape(inter.values_.shape), **tol
        )
    if name.startswith("catboost"):
        return  # shap's interventional mode fails inside shap on CatBoost models
    if name == "sklearn.IsolationForest":
        # shap's interventional values of this IsolationForest do not add up
        # to its output (0.6 of path length off, rows without missing values
        # too): the brute-force test above holds ours.
        return
    # shap's interventional values are not exact (float32 arithmetic inside):
    # the brute-force test above holds ours to 1e-10.
    background = case.X[:25] if case.missing else np.nan_to_num(case.X[:25])
    ours = treelens.shap_values(
        case.model, X, method="interventional", background=background
    )
    explainer = shap.TreeExplainer(
        case.model, data=background, feature_perturbation="interventional"
    )
    theirs = _shap_values(explainer, X) / scale
    np.testing.assert_allclose(
        ours.values_, theirs.reshape(ours.values_.shape), atol=1e-6, rtol=0
    )


# ------------------------------------------------------------- additivity
@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    depth=st.integers(1, 9),
    n_features=st.integers(1, 7),
    classifier=st.booleans(),
    boosting=st.booleans(),
)
def test_additivity_random_models(seed, depth, n_features, classifier, boosting):
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, n_features)).round(1)
    y = (X.sum(axis=1) + rng.normal(size=80) > 0).astype(int)
    params = {"n_estimators": 4, "max_depth": depth, "random_state": seed}
    if boosting:
        cls = GradientBoostingClassifier if classifier else GradientBoostingRegressor
    else:
        cls = RandomForestClassifier if classifier else RandomForestRegressor
    model = cls(**params).fit(X, y if classifier else X @ rng.normal(size=n_features))
    forest = treelens.to_forest(model)
    rows = rng.normal(size=(12, n_features))
    output = _squeeze(_output(forest, rows)[:, None, :])[:, 0]
    for method, background in (("path", None), ("interventional", X[:20])):
        result = treelens.shap_values(model, rows, method=method, background=background)
        total = result.expected_value_ + result.values_.sum(axis=1)
        np.testing.assert_allclose(total, output, atol=1e-10, rtol=0)
    inter = treelens.shap_interaction_values(model, rows)
    values = treelens.shap_values(model, rows).values_
    np.testing.assert_allclose(inter.values_.sum(axis=2), values, atol=1e-10, rtol=0)
    np.testing.assert_allclose(
        inter.values_, np.swapaxes(inter.values_, 1, 2), atol=1e-12, rtol=0
    )


# ---------------------------------------------------------------- results
def test_result_frames():
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"](0)
    X = np.nan_to_num(case.X[:5])
    result = treelens.shap_values(case.model, X)
    assert result.values_.shape == (5, 4, 3)
    frame = result.frame(output=1)
    assert list(frame.columns) == list(result.feature_names)
    np.testing.assert_array_equal(frame.to_numpy(), result.values_[:, :, 1])
    long = result.to_frame()
    assert len(long) == 5 * 4 * 3
    assert set(long.columns) == {"row", "feature", "output", "value"}
    with pytest.raises(InputError, match="give `output`"):
        result.frame()


# -------------------------------------------------------------- bad input
def test_bad_input():
    case = MODEL_FACTORIES["sklearn.RandomForestRegressor"](0)
    X = np.nan_to_num(case.X[:5])
    with pytest.raises(InputError, match="features"):
        treelens.shap_values(case.model, X[:, :3])
    with pytest.raises(InputError, match="`method` must be one of"):
        treelens.shap_values(case.model, X, method="exact")
    with pytest.raises(BackgroundError, match="needs a `background`"):
        treelens.shap_values(case.model, X, method="interventional")
    with pytest.raises(BackgroundError, match="does not fit"):
        treelens.shap_values(
            case.model, X, method="interventional", background=X[:, :2]
        )
    with pytest.raises(BackgroundError, match="at least 1 row"):
        treelens.shap_values(
            case.model, X, method="interventional", background=np.zeros((0, 4))
        )
    with pytest.raises(BackgroundError, match="interventional' only"):
        treelens.shap_values(case.model, X, background=X)
    with pytest.raises(OutputTooLargeError, match="MiB"):
        treelens.shap_interaction_values(case.model, X, memory_budget=100)
    with pytest.raises(InputError, match="at least one row"):
        treelens.shap_values(case.model, X[:0])
