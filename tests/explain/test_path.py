"""Decision paths: by hand, against scikit-learn's decision_path, and every
merged rule holding for its row on every supported model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treelens
from treelens import InputError, decision_path

from ..models import MODEL_FACTORIES, probe_frame, probe_inputs
from .toys import toy_forest, toy_tree


def test_one_tree_by_hand():
    forest = toy_forest([toy_tree([10, 4, 16, 12, 20])])
    X = np.array([[0.0, 5.0], [1.0, 0.25], [np.nan, 2.0]])
    result = decision_path(forest, X)
    assert result.conditions_["test"].tolist() == ["<=", ">", "<=", "is missing"]
    assert result.conditions_["node"].tolist() == [0, 0, 2, 0]
    assert result.conditions_["row"].tolist() == [0, 1, 1, 2]
    np.testing.assert_array_equal(result.leaves_, [[1], [3], [1]])
    np.testing.assert_array_equal(result.leaf_values_[:, 0, 0], [4, 12, 4])
    assert result.sentences_ == (
        "Predicted 4 because a 0 <= 0.5.",
        "Predicted 12 because a 1 > 0.5 and b 0.25 <= 1.",
        "Predicted 4 because a is missing.",
    )
    frame = result.to_frame()
    assert frame["condition"].tolist() == [
        "a 0 <= 0.5",
        "a 1 > 0.5",
        "b 0.25 <= 1",
        "a is missing",
    ]


def test_tests_of_one_feature_merge_into_an_interval():
    # a <= 0.5 at the root, then a > -1 and a <= 0 below: one interval.
    tree = treelens.Tree(
        children_left=[1, 3, -1, -1, 5, -1, -1],
        children_right=[2, 4, -1, -1, 6, -1, -1],
        feature=[0, 0, -2, -2, 0, -2, -2],
        threshold=[0.5, -1.0, -2, -2, 0.0, -2, -2],
        missing_go_left=[False] * 7,
        value=np.arange(7.0),
        impurity=[np.nan] * 7,
        n_node_samples=[-1] * 7,
        weighted_n_node_samples=[1.0] * 7,
    )
    result = decision_path(toy_forest([tree]), np.array([[-0.5, 0.0]]))
    rule = result.rules_.iloc[0]
    assert (rule["low"], rule["high"], rule["n_tests"]) == (-1.0, 0.0, 3)
    assert result.to_frame()["condition"].tolist() == ["a -0.5 in (-1, 0]"]


def test_an_ensemble_sentence_ranks_features_by_trees_and_depth():
    one = toy_tree([10, 4, 16, 12, 20])
    two = toy_tree([2, 0, 3, 1, 5], threshold_b=3.0)
    # b first in a third tree: b <= 2 at the root.
    three = treelens.Tree(
        children_left=[1, -1, -1],
        children_right=[2, -1, -1],
        feature=[1, -2, -2],
        threshold=[2.0, -2, -2],
        missing_go_left=[False] * 3,
        value=[1.0, 0.0, 2.0],
        impurity=[np.nan] * 3,
        n_node_samples=[-1] * 3,
        weighted_n_node_samples=[1.0] * 3,
    )
    forest = toy_forest([one, two, three], kind="forest")
    result = decision_path(forest, np.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(result.feature_counts_, [[2, 3]])
    np.testing.assert_allclose(result.mean_first_depth_, [[0.0, 2 / 3]])
    np.testing.assert_array_equal(result.feature_order_, [[1, 0]])
    # b: "<= 3" in tree two and "<= 2" in tree three, "> 1" in tree one: two of
    # three trees bound it above, at the median threshold 2.5.
    expected = (
        "Predicted 7, mainly because b 2 <= 2.5 (3 of 3 trees) and "
        "a 1 > 0.5 (2 of 3 trees)."
    )
    assert result.sentences_ == (expected,)
    short = decision_path(forest, np.array([[1.0, 2.0]]), max_conditions=1)
    assert short.sentences_[0].endswith("b 2 <= 2.5 (3 of 3 trees).")


# The probe rows hold a category the model never saw, on purpose (see _probe);
# scikit-learn's one-hot encoder warns of it.
@pytest.mark.filterwarnings("ignore:Found unknown categories:UserWarning")
@pytest.mark.parametrize(
    "name",
    # HistGradientBoosting has no decision_path to compare with.
    [
        n
        for n in sorted(MODEL_FACTORIES)
        if n.startswith("sklearn.") and "Hist" not in n
    ],
)
def test_nodes_equal_scikit_learns_decision_path(name):
    case = MODEL_FACTORIES[name](seed=0)
    forest = treelens.to_forest(case.model)
    X = _probe(forest, case)[:80]
    result = decision_path(case.model, X)
    final, Xt = case.model, X
    if hasattr(X, "iloc"):  # a pipeline: its final model on the transformed rows
        final, Xt = case.model[-1], case.model[:-1].transform(X)
    estimators = np.ravel(getattr(final, "estimators_", [final]))
    if type(final).__name__ == "AdaBoostClassifier" and forest.n_outputs > 1:
        # Each tree votes once per class.
        estimators = np.repeat(estimators, forest.n_outputs)
    # A bagged tree reads only its own columns.
    columns = getattr(final, "estimators_features_", [slice(None)] * len(estimators))
    conditions = result.conditions_
    for j, estimator in enumerate(estimators):
        rows = np.asarray(Xt, dtype=np.float32)[:, columns[j]]
        indicator = estimator.decision_path(rows).toarray()
        mine = np.zeros_like(indicator)
        in_tree = conditions[conditions["tree"] == j]
        mine[in_tree["row"].to_numpy(), in_tree["node"].to_numpy()] = 1
        mine[np.arange(len(X)), result.leaves_[:, j]] = 1
        np.testing.assert_array_equal(mine, indicator)


def _probe(forest, case):
    """Rows that test routing, in the model's input columns (a pipeline's raw
    DataFrame: every category, an unseen one, missing values)."""
    if hasattr(case.X, "iloc"):
        return probe_frame(forest, case.X, missing=case.missing)
    return probe_inputs(forest, np.nan_to_num(case.X), missing=case.missing)


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_every_merged_rule_holds_for_its_row(name):
    case = MODEL_FACTORIES[name](seed=1)
    forest = treelens.to_forest(case.model)
    X = _probe(forest, case)[:120]
    result = decision_path(case.model, X)
    routed = forest.validate_X(X).astype(np.float64)
    rules = result.rules_
    value = routed[rules["row"].to_numpy(), rules["feature"].cat.codes.to_numpy()]
    missing = rules["missing"].to_numpy()
    assert np.array_equal(np.isnan(value), missing)
    inside = (value > rules["low"]) & (value <= rules["high"])
    assert inside[~missing].all()
    np.testing.assert_allclose(
        result.leaf_values_.sum(axis=1)
        if forest.kind == "boosting"
        else result.leaf_values_.mean(axis=1),
        _expected_output(forest, X),
        atol=1e-5 if name.startswith("xgboost") else 1e-12,
    )
    np.testing.assert_array_equal(result.prediction_, forest.predict(X))
    # Every path tests a feature at most as often as it has splits.
    per_tree = rules.groupby(["row", "tree"], observed=True)["n_tests"].sum()
    lengths = result.conditions_.groupby(["row", "tree"]).size()
    np.testing.assert_array_equal(per_tree.to_numpy(), lengths.to_numpy())
    assert len(result.sentences_) == len(X)
    # An IsolationForest's Forest predicts its score_samples.
    start = "Scored " if forest.link == "isolation" else "Predicted "
    assert all(s.startswith(start) for s in result.sentences_)


def _expected_output(forest, X):
    if forest.kind == "boosting":
        raw = forest.raw_predict(X) - forest.init_raw
        if raw.shape[1] == 1:
            return raw
        # Sum of leaf values per tree, regardless of the class each feeds.
        return forest.tree_values(X).sum(axis=1) * forest.learning_rate
    if forest.is_classifier:
        return forest.predict_proba(X)
    return forest.predict(X)[:, np.newaxis]


def test_user_columns_units_and_index():
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"income": rng.uniform(1e4, 1e5, 200), "age": rng.integers(18, 80, 200)},
        index=[f"applicant {i}" for i in range(200)],
    )
    y = (frame["income"] > 5e4) & (frame["age"] < 60)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(frame, y)
    result = decision_path(model, frame[["age", "income"]].iloc[[3]])
    assert result.conditions_["row"].iloc[0] == "applicant 3"
    assert result.conditions_["value"].iloc[0] in frame.iloc[3].tolist()
    assert result.data_.columns.tolist() == ["income", "age"]
    assert "probability" in result.sentences_[0]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_max_conditions_must_be_a_positive_integer(bad):
    forest = toy_forest([toy_tree([10, 4, 16, 12, 20])])
    with pytest.raises(InputError, match="max_conditions"):
        decision_path(forest, np.zeros((1, 2)), max_conditions=bad)


def test_wrong_columns_are_refused():
    forest = toy_forest([toy_tree([10, 4, 16, 12, 20])])
    with pytest.raises(InputError, match="columns"):
        decision_path(forest, pd.DataFrame({"a": [1.0], "c": [2.0]}))


def test_categorical_splits_print_as_category_sets():
    from ..categorical_forests import FEATURES, random_codes, random_forest

    rng = np.random.default_rng(5)
    forest = random_forest(rng, n_trees=4)
    X = random_codes(rng, 60)
    result = decision_path(forest, X)
    rules = result.rules_
    codes = X[rules["row"].to_numpy(), rules["feature"].cat.codes.to_numpy()]
    categorical = rules["categories"].notna().to_numpy()
    assert categorical.any()
    for code, feature, allowed, missing in zip(
        codes[categorical],
        rules["feature"][categorical],
        rules["categories"][categorical],
        rules["missing"][categorical],
    ):
        assert not missing
        spec = next(s for s in FEATURES if s.name == feature)
        k = spec.n_categories
        if 0 <= code < k and code == int(code):
            assert spec.categories[int(code)] in allowed
        else:
            assert "(unseen)" in allowed
    # A row given as labels reads as labels.
    frame = pd.DataFrame(
        {"color": ["green"], "size": [0.3], "shape": ["purple moon"]}, dtype=object
    )
    text = decision_path(forest, frame).to_frame()["condition"].tolist()
    for line in text:
        if line.startswith("color"):
            assert line.startswith("color is green")
        if line.startswith("shape"):
            assert line == "shape is purple moon, a category the model never saw"
    sentence = decision_path(forest, frame).sentences_[0]
    assert "color is green" in sentence or "color" not in sentence
