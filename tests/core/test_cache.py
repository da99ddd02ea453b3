"""What is cached with a Forest travels without it: pickles and copies leave the
derived values out (they are rebuilt on first use) and keep what was given."""

import copy
import pickle

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

import treelens
from treelens._core._cache import derived, keep, kept
from treelens._counterfactual._milp._program import forest_program


def _forest():
    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(
        n_estimators=20, max_depth=6, random_state=0, n_jobs=1
    ).fit(X, y)
    return model, treelens.to_forest(model), X


def test_a_pickle_leaves_the_derived_values_out_and_keeps_the_given_ones():
    model, forest, X = _forest()
    plain = len(pickle.dumps(forest))
    declined = X[model.predict(X) == 0][:2]
    first = treelens.optimal_counterfactual(
        forest, declined, target=1, cost="l1", reference=X, time_limit=10
    )
    program = forest_program(forest)
    assert forest_program(forest) is program  # cached with the forest
    keep(forest, "given", np.arange(3))
    again = pickle.loads(pickle.dumps(forest))
    # The program, leaf boxes and routing tables built by the search stay behind.
    assert len(pickle.dumps(forest)) < 1.05 * plain + 1000
    assert "_treelens_derived" not in again.__dict__
    np.testing.assert_array_equal(kept(again, "given"), np.arange(3))
    # Rebuilt on first use, the same answers.
    second = treelens.optimal_counterfactual(
        again, declined, target=1, cost="l1", reference=X, time_limit=10
    )
    np.testing.assert_array_equal(second.X_cf_, first.X_cf_)
    np.testing.assert_array_equal(second.status_, first.status_)
    assert (model.predict(second.X_cf_) == 1).all()
    np.testing.assert_array_equal(again.apply(X), forest.apply(X))
    assert forest_program(again) is not program


def test_trees_and_copies_leave_their_derived_values_too():
    _, forest, X = _forest()
    forest.apply(X[:5])  # builds the flat and compiled routing tables
    tree = forest.trees[0]
    derived(tree, "size", lambda: np.zeros(10**5))
    assert "_treelens_derived" in forest.__dict__
    for twin in (copy.copy(forest), copy.deepcopy(forest)):
        assert "_treelens_derived" not in twin.__dict__
        np.testing.assert_array_equal(twin.apply(X), forest.apply(X))
    unpickled = pickle.loads(pickle.dumps(tree))
    assert "_treelens_derived" not in unpickled.__dict__
    np.testing.assert_array_equal(unpickled.threshold, tree.threshold)
