"""Bagged decision trees (``BaggingClassifier``, ``BaggingRegressor``): each tree
reads its own columns.

Predictions are compared with scikit-learn's own, bit for bit (one job, so that
scikit-learn adds the trees up in order); the out-of-bag rows with its
``oob_decision_function_``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import BaggingClassifier, BaggingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.tree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)

import treelens
from tests.models import make_data, probe_inputs
from treelens import UnsupportedModelError
from treelens._importance._oob import bootstrap_counts


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    classifier=st.booleans(),
    extra=st.booleans(),
    max_features=st.sampled_from([1.0, 0.5, 2, 3]),
    bootstrap_features=st.booleans(),
    max_samples=st.sampled_from([1.0, 0.3, 12]),
    depth=st.integers(1, 5),
    weighted=st.booleans(),
)
def test_random_bagged_trees_predict_alike(
    seed, classifier, extra, max_features, bootstrap_features, max_samples, depth,
    weighted,
):  # fmt: skip
    task = "classification" if classifier else "regression"
    X, y = make_data(seed, task=task, missing=not extra)
    tree = {
        (True, False): DecisionTreeClassifier,
        (True, True): ExtraTreeClassifier,
        (False, False): DecisionTreeRegressor,
        (False, True): ExtraTreeRegressor,
    }[classifier, extra](max_depth=depth, random_state=seed)
    ensemble = BaggingClassifier if classifier else BaggingRegressor
    model = ensemble(
        tree, n_estimators=6, max_features=max_features, max_samples=max_samples,
        bootstrap_features=bootstrap_features, random_state=seed, n_jobs=1,
    )  # fmt: skip
    weights = np.random.default_rng(seed).uniform(0.5, 2, len(y)) if weighted else None
    model.fit(X, y, sample_weight=weights)
    forest = treelens.to_forest(model)
    probe = probe_inputs(forest, X, missing=not extra)
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))
    if classifier:
        np.testing.assert_array_equal(
            forest.predict_proba(probe), model.predict_proba(probe)
        )


def test_counterfactuals_are_confirmed_by_the_bagged_model():
    X, y = make_data(1, task="classification", n_classes=2)
    model = BaggingClassifier(
        DecisionTreeClassifier(max_depth=3), n_estimators=10, max_features=2,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    rows = X[model.predict(X) == 0][:4]
    for method in ("optimal", "tweak"):
        result = treelens.counterfactual(
            model, rows, target=1, method=method, reference=X
        )
        assert result.found_.any()
        found = np.asarray(result.X_cf_)[result.found_]
        assert (model.predict(found) == 1).all()


@pytest.mark.parametrize("bootstrap", [True, False])
@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_out_of_bag_rows_are_the_rows_each_tree_did_not_draw(bootstrap):
    X, y = make_data(2, task="classification")
    model = BaggingClassifier(
        DecisionTreeClassifier(max_depth=4), n_estimators=15, max_samples=0.6,
        max_features=3, bootstrap=bootstrap, oob_score=bootstrap, random_state=1,
    ).fit(X, y)  # fmt: skip
    counts = bootstrap_counts(model, len(X))
    # Each tree was fitted on the rows weighted by these counts.
    for tree, drawn in zip(model.estimators_, counts):
        assert tree.tree_.weighted_n_node_samples[0] == drawn.sum() == 72
        assert tree.tree_.n_node_samples[0] == (drawn > 0).sum()
    if bootstrap:  # scikit-learn's own out-of-bag probabilities
        proba = np.stack(
            [
                tree.predict_proba(X[:, columns])
                for tree, columns in zip(model.estimators_, model.estimators_features_)
            ]
        )
        summed = (proba * (counts == 0)[:, :, np.newaxis]).sum(axis=0)
        expected = summed / summed.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(model.oob_decision_function_, expected, atol=1e-12)
    else:
        assert set(np.unique(counts)) == {0, 1}
    result = treelens.debiased_mdi_importance(model, X, y, oob=True, n_bootstrap=0)
    assert np.isfinite(result.importances_.to_numpy()).all()


def test_bad_bagging_is_refused_naming_what_is_wrong():
    X, y = make_data(0, task="classification")
    linear = BaggingClassifier(LogisticRegression(), n_estimators=2).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="got LogisticRegression"):
        treelens.to_forest(linear)
    every_row = BaggingClassifier(
        DecisionTreeClassifier(max_depth=2), n_estimators=2, bootstrap=False
    ).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="no row is out of bag"):
        treelens.debiased_mdi_importance(every_row, X, y, oob=True)
    with pytest.raises(treelens.InputError, match="expected 120 rows, got 60"):
        bootstrap_counts(every_row, 60)
