"""Debiased MDI (MDI-oob, UFI): hand-computed values, scikit-learn's bootstrap
samples, exactness on in-bag rows, and unbiasedness for pure-noise columns."""

import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from treelens import Forest, Tree
from treelens._importance._oob import bootstrap_counts

# A tree of two splits: x0 <= 0.5 -> leaf 1, else node 2: x1 <= 0.5 -> leaf 3,
# else leaf 4.
_SHAPE = {
    "children_left": [1, -1, 3, -1, -1],
    "children_right": [2, -1, 4, -1, -1],
    "feature": [0, -2, 1, -2, -2],
    "threshold": [0.5, -2.0, 0.5, -2.0, -2.0],
    "missing_go_left": [False] * 5,
    "n_node_samples": [10, 5, 5, 2, 3],
    "weighted_n_node_samples": [10.0, 5.0, 5.0, 2.0, 3.0],
}


def _classifier_forest():
    # In-bag class counts: root (5, 5), leaf 1 (4, 1), node 2 (1, 4), leaf 3
    # (1, 1), leaf 4 (0, 3).
    tree = Tree(
        **_SHAPE,
        value=[[0.5, 0.5], [0.8, 0.2], [0.2, 0.8], [0.5, 0.5], [0.0, 1.0]],
        impurity=[0.5, 0.32, 0.32, 0.5, 0.0],
    )
    return Forest(
        trees=(tree,),
        kind="forest",
        task="classification",
        n_features=2,
        feature_names=("a", "b"),
        classes_=np.array([0, 1]),
        criterion="gini",
    )


# Five out-of-bag rows, then two in-bag rows that must not count.
_X = np.array(
    [[0, 0], [0, 1], [1, 0], [1, 1], [1, 1], [0, 0], [1, 0]], dtype=np.float64
)
_Y = np.array([0, 1, 1, 1, 0, 1, 0])
_IN_BAG = np.array([[0, 0, 0, 0, 0, 2, 1]])


def test_hand_computed_classification():
    # MDI-oob, row by row: (mu(child) - mu(parent)) . onehot(y), over 5 rows.
    # Split 0 (feature a): rows 1-2 reach leaf 1, mu(1) - mu(0) = (0.3, -0.3):
    # +0.3 (y=0), -0.3 (y=1); rows 3-5 reach node 2, (-0.3, 0.3): +0.3, +0.3,
    # -0.3.  Sum 0.3, over 5 rows: 0.06.
    # Split 2 (feature b): row 3 reaches leaf 3, mu(3) - mu(2) = (0.3, -0.3):
    # -0.3; rows 4-5 reach leaf 4, (-0.2, 0.2): +0.2, -0.2.  Sum -0.3: -0.06.
    forest = _classifier_forest()
    result = treelens.debiased_mdi_importance(
        forest, _X, _Y, oob=True, in_bag=_IN_BAG, n_bootstrap=0
    )
    np.testing.assert_allclose(result.importances_.to_numpy(), [0.06, -0.06])
    assert result.method == "MDI-oob (out-of-bag)"
    assert result.n_rows_.tolist() == [5]
    assert result.nodes_["n_node_samples"].tolist() == [5, 3]
    # Normalized view: divided by the sum, which is 0 here.
    assert np.isnan(result.normalized_.to_numpy()).all()
    # UFI by its definition: H = 1 - sum_k p_in p_oob, weighted by the share of
    # out-of-bag rows.  Root: p_oob (2/5, 3/5), H = 0.5, share 1 -> 0.5.  Leaf 1:
    # p_oob (1/2, 1/2), H = 1 - 0.4 - 0.1 = 0.5, share 2/5 -> 0.2.  Node 2: p_oob
    # (1/3, 2/3), H = 1 - 0.2/3 - 1.6/3 = 0.4, share 3/5 -> 0.24.  Leaf 3: p_oob
    # (0, 1), H = 0.5, share 1/5 -> 0.1.  Leaf 4: p_oob (1/2, 1/2), H = 0.5,
    # share 2/5 -> 0.2.  Split 0: 0.5 - 0.2 - 0.24 = 0.06; split 2: 0.24 - 0.1 -
    # 0.2 = -0.06.
    ufi = treelens.debiased_mdi_importance(
        forest, _X, _Y, oob=True, in_bag=_IN_BAG, definition="ufi", n_bootstrap=0
    )
    np.testing.assert_allclose(ufi.importances_.to_numpy(), [0.06, -0.06])


def test_hand_computed_regression():
    tree = Tree(
        **_SHAPE,
        value=[[2.0], [1.0], [3.0], [2.0], [4.0]],
        impurity=[1.5, 0.5, 1.0, 0.25, 0.25],
    )
    forest = Forest(
        trees=(tree,),
        kind="tree",
        task="regression",
        n_features=2,
        feature_names=("a", "b"),
        criterion="squared_error",
    )
    X = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.float64)
    y = np.array([1.5, 2.5, 3.0])
    # MDI-oob: split 0: (1 - 2) 1.5 + (3 - 2) 2.5 + (3 - 2) 3.0 = 4, over 3 rows;
    # split 2: (2 - 3) 2.5 + (4 - 3) 3.0 = 0.5, over 3 rows.
    result = treelens.debiased_mdi_importance(forest, X, y, n_bootstrap=0)
    np.testing.assert_allclose(result.importances_.to_numpy(), [4 / 3, 0.5 / 3])
    assert result.method == "MDI-oob (held-out)"
    np.testing.assert_allclose(result.normalized_.sum(), 1.0)
    # UFI: H = (in-bag impurity + mean (y - mu_in)^2 of the held-out rows) / 2,
    # weighted by the in-bag share (1, 0.5, 0.5, 0.2, 0.3).  Root: MSE (0.25 +
    # 0.25 + 1) / 3 = 0.5, H = 1.0.  Leaf 1: MSE 0.25, H = 0.375, x 0.5 = 0.1875.
    # Node 2: MSE (0.25 + 0) / 2 = 0.125, H = 0.5625, x 0.5 = 0.28125.  Leaf 3:
    # MSE 0.25, H = 0.25, x 0.2 = 0.05.  Leaf 4: MSE 1, H = 0.625, x 0.3 =
    # 0.1875.  Split 0: 1 - 0.1875 - 0.28125; split 2: 0.28125 - 0.05 - 0.1875.
    ufi = treelens.debiased_mdi_importance(
        forest, X, y, definition="ufi", n_bootstrap=0
    )
    np.testing.assert_allclose(ufi.importances_.to_numpy(), [0.53125, 0.04375])


def _data(n=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    logit = 2 * X[:, 0] - X[:, 1]
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize(
    "model",
    [
        RandomForestClassifier(n_estimators=15, random_state=3, oob_score=True),
        RandomForestClassifier(
            n_estimators=10,
            max_samples=0.5,
            class_weight="balanced_subsample",
            random_state=1,
            oob_score=True,
        ),
        ExtraTreesClassifier(
            n_estimators=20, bootstrap=True, random_state=2, oob_score=True
        ),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_bootstrap_samples_reproduce_scikit_learn(model, weighted):
    X, y = _data()
    weight = np.random.RandomState(5).uniform(0.5, 2.0, len(y)) if weighted else None
    model.fit(X, y, sample_weight=weight)
    counts = bootstrap_counts(model, len(X))
    drawn = [np.bincount(s, minlength=len(X)) for s in model.estimators_samples_]
    np.testing.assert_array_equal(counts, np.array(drawn))
    # The out-of-bag rows of these samples give scikit-learn's OOB predictions.
    proba = np.stack([tree.predict_proba(X) for tree in model.estimators_])
    oob = (counts == 0)[:, :, np.newaxis]
    # (scikit-learn divides rows that no tree left out by 1.)
    expected = (proba * oob).sum(axis=0) / np.maximum(oob.sum(axis=0), 1)
    np.testing.assert_allclose(model.oob_decision_function_, expected, atol=1e-12)


def test_bootstrap_samples_reproduce_oob_prediction():
    X, _ = _data()
    y = X[:, 0] + np.random.RandomState(1).normal(size=len(X))
    model = RandomForestRegressor(
        n_estimators=12, max_samples=200, random_state=4, oob_score=True
    ).fit(X, y)
    counts = bootstrap_counts(model, len(X))
    pred = np.stack([tree.predict(X) for tree in model.estimators_])
    oob = counts == 0
    expected = (pred * oob).sum(axis=0) / oob.sum(axis=0)
    np.testing.assert_allclose(model.oob_prediction_, expected, atol=1e-12)


@pytest.mark.parametrize("definition", ["mdi_oob", "ufi"])
@pytest.mark.parametrize(
    "model",
    [
        DecisionTreeClassifier(max_depth=5, random_state=0),
        DecisionTreeRegressor(max_depth=5, random_state=0),
        GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0),
        GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0),
    ],
)
def test_on_the_training_rows_it_is_unnormalized_mdi(model, definition):
    # Scored on the very rows the tree was fitted on, both definitions are MDI
    # (scikit-learn's per-tree decreases over the root weight).
    X, y = _data()
    if not hasattr(model, "predict_proba"):
        y = X[:, 0] * 2 + np.random.RandomState(0).normal(size=len(y))
    model.fit(X, y)
    # Line-search leaves (log-loss boosting): in-bag means replayed from X, y.
    train = (X, y) if isinstance(model, GradientBoostingClassifier) else None
    result = treelens.debiased_mdi_importance(
        model, X, y, definition=definition, train=train, n_bootstrap=0
    )
    trees = getattr(model, "estimators_", np.array([model])).ravel()
    expected = np.mean(
        [t.tree_.compute_feature_importances(normalize=False) for t in trees], axis=0
    )
    np.testing.assert_allclose(result.importances_.to_numpy(), expected, atol=1e-10)


def test_forest_tables_add_up():
    X, y = _data()
    model = RandomForestClassifier(n_estimators=12, random_state=0).fit(X, y)
    result = treelens.debiased_mdi_importance(model, X, y, oob=True)
    shares = result.nodes_.groupby("feature")["share"].sum().to_numpy()
    np.testing.assert_allclose(shares, result.importances_.to_numpy(), atol=1e-12)
    np.testing.assert_allclose(
        result.per_tree_.mean().to_numpy(), result.importances_.to_numpy()
    )
    np.testing.assert_allclose(
        result.std_.to_numpy(), result.per_tree_.std(ddof=0).to_numpy()
    )
    low, high = result.interval_["low"], result.interval_["high"]
    assert (low <= result.importances_ + 1e-12).all()
    assert (high >= result.importances_ - 1e-12).all()
    assert "trees and rows" in result.interval_method
    assert result.can_be_negative
    np.testing.assert_allclose(result.normalized_.sum(), 1.0)
    # Out-of-bag rows per tree: those of count zero.
    counts = bootstrap_counts(model, len(X))
    assert result.n_rows_.tolist() == (counts == 0).sum(axis=1).tolist()


def test_pure_noise_columns_are_unbiased_and_mdi_is_not():
    # Over seeds, the debiased MDI of pure-noise columns (two normal, one of 3
    # levels), from held-out and from out-of-bag rows, averages zero within two
    # standard errors, while MDI's is far above zero.
    held_out, out_of_bag, mdi = [], [], []
    for seed in range(16):
        rng = np.random.RandomState(seed)
        signal = rng.normal(size=600)
        y = (signal + 0.5 * rng.normal(size=600) > 0).astype(int)
        X = np.column_stack([signal, rng.normal(size=(600, 2)), rng.randint(0, 3, 600)])
        model = RandomForestClassifier(
            n_estimators=20, min_samples_leaf=5, random_state=seed
        ).fit(X[:300], y[:300])
        held_out.append(
            treelens.debiased_mdi_importance(
                model, X[300:], y[300:], n_bootstrap=0
            ).importances_.to_numpy()[1:]
        )
        out_of_bag.append(
            treelens.debiased_mdi_importance(
                model, X[:300], y[:300], oob=True, n_bootstrap=0
            ).importances_.to_numpy()[1:]
        )
        mdi.append(treelens.mdi_importance(model).importances_.to_numpy()[1:])
    for values in (held_out, out_of_bag):
        mean = np.mean(values, axis=0)
        se = np.std(values, axis=0, ddof=1) / np.sqrt(16)
        assert np.all(np.abs(mean) <= 2 * se), (mean, se)
    mean = np.mean(mdi, axis=0)
    se = np.std(mdi, axis=0, ddof=1) / np.sqrt(16)
    assert np.all(mean > 2 * se)


def test_boosting_classifier_on_held_out_rows():
    X, y = _data(600)
    model = GradientBoostingClassifier(n_estimators=20, random_state=0)
    model.fit(X[:400], y[:400])
    with pytest.raises(treelens.UnsupportedModelError, match="line-search"):
        treelens.debiased_mdi_importance(model, X[400:], y[400:])
    result = treelens.debiased_mdi_importance(
        model, X[400:], y[400:], train=(X[:400], y[:400])
    )
    values = result.importances_.to_numpy()
    # The informative columns lead; the two noise columns are near zero.
    assert values[0] > values[1] > max(abs(values[2]), abs(values[3]))


def test_refusals():
    X, y = _data()
    forest = _classifier_forest()
    with pytest.raises(treelens.InputError, match="in_bag"):
        treelens.debiased_mdi_importance(forest, _X, _Y, oob=True)
    model = RandomForestClassifier(n_estimators=3, bootstrap=False).fit(X, y)
    with pytest.raises(treelens.UnsupportedModelError, match="bootstrap=True"):
        treelens.debiased_mdi_importance(model, X, y, oob=True)
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(treelens.InputError, match="400 rows, got 100"):
        treelens.debiased_mdi_importance(model, X[:100], y[:100], oob=True)
    with pytest.raises(treelens.InputError, match="definition"):
        treelens.debiased_mdi_importance(model, X, y, definition="mdi+")
    regressor = DecisionTreeRegressor(criterion="absolute_error", max_depth=2)
    regressor.fit(X, X[:, 0])
    with pytest.raises(treelens.UnsupportedModelError, match="squared-error"):
        treelens.debiased_mdi_importance(regressor, X, X[:, 0], definition="ufi")


@pytest.mark.parametrize(
    "model",
    [
        GradientBoostingClassifier(
            n_estimators=6, subsample=0.6, max_depth=2, random_state=3
        ),
        GradientBoostingRegressor(
            n_estimators=6, subsample=0.5, max_features=2, random_state=4
        ),
    ],
)
def test_boosting_subsamples_reproduce_scikit_learn(model):
    X, y = _data(300)
    y = np.digitize(X[:, 0], [-0.5, 0.5]) if hasattr(model, "predict_proba") else y
    model.fit(X, y)
    counts = bootstrap_counts(model, len(X))
    trees = np.asarray(model.estimators_).ravel()
    assert counts.shape == (len(trees), len(X))
    for tree, in_bag in zip(trees, counts):
        # Every node's training rows are the in-bag rows reaching it.
        path = tree.decision_path(X[in_bag > 0])
        np.testing.assert_array_equal(
            np.asarray(path.sum(axis=0)).ravel(), tree.tree_.n_node_samples
        )
    result = treelens.debiased_mdi_importance(model, X, y, oob=True, n_bootstrap=0)
    assert result.n_rows_.tolist() == (counts == 0).sum(axis=1).tolist()
    assert np.isfinite(result.importances_).all()
