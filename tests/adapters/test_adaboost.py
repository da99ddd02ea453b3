"""AdaBoost (``AdaBoostClassifier``, SAMME): a weighted vote of the trees' labels.

Raw scores are compared with scikit-learn's ``decision_function`` and
probabilities with its ``predict_proba``, bit for bit; labels with its
``predict``, ties included.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.ensemble import AdaBoostClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

import treelens
from tests.models import make_data, probe_inputs
from treelens import UnsupportedModelError


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_classes=st.integers(2, 4),
    extra=st.booleans(),
    depth=st.integers(1, 4),
    n_estimators=st.integers(1, 12),
    learning_rate=st.sampled_from([1.0, 0.5, 0.1, 2.0]),
    weighted=st.booleans(),
)
def test_random_adaboost_predicts_alike(
    seed, n_classes, extra, depth, n_estimators, learning_rate, weighted
):
    X, y = make_data(seed, task="classification", n_classes=n_classes)
    tree = (ExtraTreeClassifier if extra else DecisionTreeClassifier)(
        max_depth=depth, random_state=seed
    )
    model = AdaBoostClassifier(
        tree, n_estimators=n_estimators, learning_rate=learning_rate, random_state=seed
    )
    weights = np.random.default_rng(seed).uniform(0.5, 2, len(y)) if weighted else None
    model.fit(X, y, sample_weight=weights)
    forest = treelens.to_forest(model)
    probe = probe_inputs(forest, X)
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))
    raw = forest.raw_predict(probe)
    np.testing.assert_array_equal(
        raw[:, 0] if n_classes == 2 else raw, model.decision_function(probe)
    )
    np.testing.assert_array_equal(
        forest.predict_proba(probe), model.predict_proba(probe)
    )
    mdi = treelens.mdi_importance(model).importances_.to_numpy()
    np.testing.assert_allclose(mdi, model.feature_importances_, rtol=0, atol=1e-12)
    # Each of the model's trees is one tree per class in the Forest.
    copies = 1 if n_classes == 2 else n_classes
    assert forest.n_trees == copies * len(model.estimators_)
    assert forest.tree_copies == copies


def _stumps_voting_apart():
    """Two stumps of equal weight on one feature: the first votes 1 above
    -0.25, the second votes 0 above 1.25, so rows below -0.25 and above 1.25
    get a tied vote and rows in between two votes for 1."""
    X = np.array([[-2.0], [-1.0], [0.5], [2.0], [3.0]])
    model = AdaBoostClassifier(n_estimators=2, random_state=0)
    model.fit(X, np.array([0, 0, 1, 1, 0]))
    stumps = [
        DecisionTreeClassifier(max_depth=1).fit(X, labels)
        for labels in (np.array([0, 0, 1, 1, 1]), np.array([1, 1, 1, 0, 0]))
    ]
    model.estimators_ = stumps
    model.estimator_weights_ = np.array([0.75, 0.75])
    return model


def test_tied_vote_predicts_the_first_class_as_scikit_learn():
    model = _stumps_voting_apart()
    rows = np.array([[-3.0], [5.0], [0.0]])
    np.testing.assert_array_equal(model.decision_function(rows), [0.0, 0.0, 2.0])
    forest = treelens.to_forest(model)
    np.testing.assert_array_equal(forest.raw_predict(rows)[:, 0], [0.0, 0.0, 2.0])
    np.testing.assert_array_equal(forest.predict(rows), model.predict(rows))
    np.testing.assert_array_equal(forest.predict(rows), [0, 0, 1])
    np.testing.assert_array_equal(forest.predict_proba(rows), model.predict_proba(rows))
    np.testing.assert_array_equal(forest.predict_proba(rows)[:2], np.full((2, 2), 0.5))


def test_decision_path_counts_the_models_trees():
    X, y = make_data(3, task="classification", n_classes=3)
    model = AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=2, random_state=0), n_estimators=4,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    result = treelens.decision_path(model, X[:3])
    n_trees = len(model.estimators_)
    assert result.n_trees_ == n_trees
    assert result.leaves_.shape[1] == 3 * n_trees
    # Each of the model's trees tests a feature on a row at most once.
    tested = np.zeros((3, X.shape[1]), dtype=int)
    for j, tree in enumerate(model.estimators_):
        nodes = tree.decision_path(X[:3].astype(np.float32)).toarray().astype(bool)
        for r in range(3):
            features = set(tree.tree_.feature[nodes[r]]) - {-2}
            tested[r, list(features)] += 1
    np.testing.assert_array_equal(result.feature_counts_, tested)
    assert f"of {n_trees} trees" in result.sentences_[0]


def test_counterfactuals_are_confirmed_by_the_model():
    X, y = load_breast_cancer(return_X_y=True)
    model = AdaBoostClassifier(n_estimators=30, random_state=0).fit(X, y)
    rows = X[model.predict(X) == 0][:4]
    for method in ("optimal", "tweak"):
        result = treelens.counterfactual(
            model, rows, target=1, method=method, cost="mad", reference=X
        )
        found = result.found_
        assert method == "tweak" or found.all()
        np.testing.assert_array_equal(model.predict(result.X_cf_[found]), 1)


def test_non_tree_estimators_are_refused():
    X, y = make_data(0, task="classification", n_classes=2)
    model = AdaBoostClassifier(LogisticRegression(), n_estimators=3).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="LogisticRegression"):
        treelens.to_forest(model)


def test_held_out_statistics_are_refused_with_the_reason():
    X, y = make_data(0, task="classification", n_classes=2)
    model = AdaBoostClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="reweighted"):
        treelens.mdi_importance(model, X, y)


def test_report_of_a_multiclass_adaboost():
    from treelens._report._page import render_report

    X, y = load_wine(return_X_y=True, as_frame=True)
    model = AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=2, random_state=0), n_estimators=6,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    page = render_report(model, X, y, max_counterfactuals=1, sample_rows=60)
    # The training data, recognised from the node counts of the first trees.
    assert "training data" in page
    # Held-out MDI is refused with its reason; the page says so and goes on.
    assert "reweighted" in page


@pytest.mark.parametrize(
    "change, message",
    [
        ({"raw_divisor": 0.0}, "raw_divisor"),
        ({"raw_divisor": np.inf}, "raw_divisor"),
        ({"learning_rate": 1.0}, "1 / raw_divisor"),
        ({"tree_weight": np.ones(2)}, "tree_weight"),
        ({"tree_weight": -np.ones(5)}, "tree_weight"),
    ],
)
def test_forest_refuses_inconsistent_divisor_and_weights(change, message):
    import dataclasses

    X, y = make_data(0, task="classification", n_classes=2)
    model = AdaBoostClassifier(n_estimators=5, random_state=0).fit(X, y)
    forest = treelens.to_forest(model)
    assert forest.n_trees == 5
    with pytest.raises(treelens.InputError, match=message):
        dataclasses.replace(forest, **change)
