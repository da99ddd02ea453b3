"""Parsing of XGBoost and LightGBM model dumps, from hand-written dumps.

These tests need neither xgboost nor lightgbm.
"""

import copy
import json

import numpy as np
import pytest

from treelens import InputError, UnsupportedModelError
from treelens._adapters._lightgbm import (
    forest_from_lightgbm_dump,
    lightgbm_split_statistics,
)
from treelens._adapters._xgboost import (
    forest_from_xgboost_json,
    xgboost_split_statistics,
)

NAN = float("nan")


def _xgb_tree(index, feature, condition, default_left, leaves, cover=(10.0, 4.0, 6.0)):
    return {
        "base_weights": [0.0, *leaves],
        "categories": [],
        "categories_nodes": [],
        "categories_segments": [],
        "categories_sizes": [],
        "default_left": [int(default_left), 0, 0],
        "id": index,
        "left_children": [1, -1, -1],
        "loss_changes": [3.5, 0.0, 0.0],
        "parents": [2147483647, 0, 0],
        "right_children": [2, -1, -1],
        "split_conditions": [condition, *leaves],
        "split_indices": [feature, 0, 0],
        "split_type": [0, 0, 0],
        "sum_hessian": list(cover),
        "tree_param": {
            "num_deleted": "0",
            "num_feature": "2",
            "num_nodes": "3",
            "size_leaf_vector": "1",
        },
    }


XGB_BINARY = {
    "learner": {
        "attributes": {},
        "feature_names": ["a", "b"],
        "feature_types": ["float", "float"],
        "gradient_booster": {
            "model": {
                "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": "2"},
                "iteration_indptr": [0, 1, 2],
                "tree_info": [0, 0],
                "trees": [
                    _xgb_tree(0, 0, 0.5, True, [-0.25, 0.375]),
                    _xgb_tree(1, 1, 1.0, False, [0.125, -0.125]),
                ],
            },
            "name": "gbtree",
        },
        "learner_model_param": {
            "base_score": "[2.5E-1]",
            "boost_from_average": "1",
            "num_class": "0",
            "num_feature": "2",
            "num_target": "1",
        },
        "objective": {"name": "binary:logistic", "reg_loss_param": {}},
    },
    "version": [3, 2, 0],
}


def test_xgboost_json_strict_less_becomes_less_or_equal_in_float32():
    forest = forest_from_xgboost_json(XGB_BINARY)
    below_half = np.nextafter(np.float32(0.5), np.float32(-np.inf))
    assert forest.trees[0].threshold[0] == float(below_half)
    assert forest.input_dtype == np.float32
    assert forest.feature_names == ("a", "b") and forest.has_feature_names
    assert forest.kind == "boosting" and forest.link == "logistic"
    np.testing.assert_array_equal(forest.classes_, [0, 1])
    # XGBoost sends x < 0.5 left: 0.5 itself goes right, the float32 below it left;
    # NaN follows default_left (left in tree 0, right in tree 1).
    X = np.array([[0.5, 1.0], [below_half, 0.0], [NAN, NAN]])
    logit = np.log(0.25 / 0.75)
    expected = logit + np.array([0.375 - 0.125, -0.25 + 0.125, -0.25 - 0.125])
    np.testing.assert_allclose(forest.raw_predict(X)[:, 0], expected)
    np.testing.assert_array_equal(forest.predict(X), (expected > 0).astype(int))


def test_xgboost_json_node_records():
    forest = forest_from_xgboost_json(json.dumps(XGB_BINARY))
    tree = forest.trees[0]
    np.testing.assert_array_equal(tree.feature, [0, -2, -2])
    np.testing.assert_array_equal(tree.missing_go_left, [True, False, False])
    np.testing.assert_array_equal(tree.value[:, 0], [0.0, -0.25, 0.375])
    np.testing.assert_array_equal(tree.weighted_n_node_samples, [10.0, 4.0, 6.0])
    np.testing.assert_array_equal(tree.n_node_samples, [-1, -1, -1])
    assert np.isnan(tree.impurity).all()
    stats = xgboost_split_statistics(XGB_BINARY)
    np.testing.assert_array_equal(stats[1].gain, [3.5, 0.0, 0.0])


def test_xgboost_json_n_rounds_keeps_the_first_rounds():
    forest = forest_from_xgboost_json(XGB_BINARY, n_rounds=1)
    assert forest.n_trees == 1


def test_xgboost_json_multiclass_with_scalar_base_score():
    model = copy.deepcopy(XGB_BINARY)
    learner = model["learner"]
    learner["objective"] = {"name": "multi:softprob"}
    learner["learner_model_param"].update(base_score="5E-1", num_class="2")
    learner["gradient_booster"]["model"]["tree_info"] = [0, 1]
    learner["gradient_booster"]["model"]["iteration_indptr"] = [0, 2]
    forest = forest_from_xgboost_json(model)
    assert forest.link == "softmax" and forest.n_outputs == 2
    np.testing.assert_array_equal(forest.tree_output, [0, 1])
    np.testing.assert_array_equal(forest.init_raw, [0.5, 0.5])
    raw = forest.raw_predict(np.array([[0.0, 0.0]]))
    np.testing.assert_allclose(raw, [[0.5 - 0.25, 0.5 + 0.125]])


def test_xgboost_json_tweedie_power():
    model = copy.deepcopy(XGB_BINARY)
    objective = {"name": "reg:tweedie", "tweedie_regression_param": {}}
    model["learner"]["objective"] = objective
    # XGBoost's default, when the model records none.
    assert forest_from_xgboost_json(model).loss_power == 1.5
    # XGBoost writes its float32 power with nine digits; 1.3 was given.
    objective["tweedie_regression_param"]["tweedie_variance_power"] = "1.29999995"
    forest = forest_from_xgboost_json(model)
    assert forest.loss == "tweedie" and forest.loss_power == 1.3
    assert forest_from_xgboost_json(XGB_BINARY).loss_power is None


def test_xgboost_json_unsupported_objective_is_named():
    model = copy.deepcopy(XGB_BINARY)
    model["learner"]["objective"] = {"name": "survival:cox"}
    with pytest.raises(UnsupportedModelError, match="survival:cox"):
        forest_from_xgboost_json(model)


def _utf8(labels):
    data = "".join(labels).encode()
    offsets = np.cumsum([0] + [len(v.encode()) for v in labels]).tolist()
    return {"offsets": offsets, "values": list(data)}


def test_xgboost_json_categorical_split():
    model = copy.deepcopy(XGB_BINARY)
    learner = model["learner"]
    learner["feature_types"] = ["float", "c"]
    gbtree = learner["gradient_booster"]["model"]
    gbtree["cats"] = {
        "enc": [{"offsets": [], "values": []}, _utf8(["lo", "mid", "hi", "top"])]
    }
    tree = gbtree["trees"][1]
    tree["split_type"] = [1, 0, 0]
    # XGBoost lists the categories going right: "mid" and "top".
    tree.update(categories=[1, 3], categories_nodes=[0], categories_segments=[0])
    tree["categories_sizes"] = [2]
    forest = forest_from_xgboost_json(model)
    spec = forest.features[1]
    assert spec.kind == "categorical" and spec.categories == ("lo", "mid", "hi", "top")
    t = forest.trees[1]
    assert t.is_categorical.tolist() == [True, False, False] and np.isnan(
        t.threshold[0]
    )
    # Codes 0..3 and the unknown code 4 (left, as XGBoost sends codes outside the set).
    assert t.categorical_left[0, :5].tolist() == [True, False, True, False, True]
    import pandas as pd

    X = pd.DataFrame({"a": [0.0] * 5, "b": ["lo", "mid", "top", "new", None]})
    leaves = forest.apply(X)[:, 1]
    default = 1 if tree["default_left"][0] else 2
    np.testing.assert_array_equal(leaves, [1, 2, 2, 1, default])
    # Codes given as numbers are taken as codes.
    np.testing.assert_array_equal(
        forest.apply(np.array([[0.0, 0], [0.0, 1], [0.0, 3], [0.0, 7]]))[:, 1],
        [1, 2, 2, 1],
    )


def test_xgboost_json_categorical_split_without_recorded_labels():
    model = copy.deepcopy(XGB_BINARY)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][1]
    tree["split_type"] = [1, 0, 0]
    tree.update(categories=[2], categories_nodes=[0], categories_segments=[0])
    tree["categories_sizes"] = [1]
    forest = forest_from_xgboost_json(model)
    assert forest.features[1].categories == (0, 1, 2)


def test_xgboost_json_linear_booster_is_refused():
    model = copy.deepcopy(XGB_BINARY)
    model["learner"]["gradient_booster"] = {"name": "gblinear", "model": {}}
    with pytest.raises(UnsupportedModelError, match="gblinear"):
        forest_from_xgboost_json(model)


def test_xgboost_json_feature_names_must_match():
    with pytest.raises(InputError, match="differ from the feature names"):
        forest_from_xgboost_json(XGB_BINARY, feature_names=["b", "a"])


def test_unknown_dump_format_is_refused():
    with pytest.raises(InputError, match="Not an XGBoost JSON model"):
        forest_from_xgboost_json({"trees": []})
    with pytest.raises(InputError, match="Not a LightGBM model dump"):
        forest_from_lightgbm_dump({"learner": {}})


LGB_REGRESSION = {
    "name": "tree",
    "version": "v4",
    "num_class": 1,
    "num_tree_per_iteration": 1,
    "label_index": 0,
    "max_feature_idx": 1,
    "objective": "regression",
    "average_output": False,
    "feature_names": ["Column_0", "Column_1"],
    "tree_info": [
        {
            "tree_index": 0,
            "num_leaves": 3,
            "num_cat": 0,
            "shrinkage": 1,
            "tree_structure": {
                "split_index": 0,
                "split_feature": 1,
                "split_gain": 10.0,
                "threshold": 0.25,
                "decision_type": "<=",
                "default_left": False,
                "missing_type": "NaN",
                "internal_value": 0,
                "internal_weight": 10,
                "internal_count": 10,
                "left_child": {
                    "leaf_index": 0,
                    "leaf_value": 1.5,
                    "leaf_weight": 4.0,
                    "leaf_count": 4,
                },
                "right_child": {
                    "split_index": 1,
                    "split_feature": 0,
                    "split_gain": 2.0,
                    "threshold": -1.0,
                    "decision_type": "<=",
                    "default_left": True,
                    "missing_type": "None",
                    "internal_value": 0,
                    "internal_weight": 6,
                    "internal_count": 6,
                    "left_child": {
                        "leaf_index": 1,
                        "leaf_value": -0.5,
                        "leaf_weight": 2.0,
                        "leaf_count": 2,
                    },
                    "right_child": {
                        "leaf_index": 2,
                        "leaf_value": 0.5,
                        "leaf_weight": 4.0,
                        "leaf_count": 4,
                    },
                },
            },
        },
        {
            "tree_index": 1,
            "num_leaves": 1,
            "num_cat": 0,
            "shrinkage": 1,
            "tree_structure": {"leaf_value": 0.25},
        },
    ],
}


def test_lightgbm_dump_is_numbered_depth_first():
    forest = forest_from_lightgbm_dump(LGB_REGRESSION)
    tree = forest.trees[0]
    np.testing.assert_array_equal(tree.children_left, [1, -1, 3, -1, -1])
    np.testing.assert_array_equal(tree.children_right, [2, -1, 4, -1, -1])
    np.testing.assert_array_equal(tree.feature, [1, -2, 0, -2, -2])
    np.testing.assert_array_equal(tree.threshold, [0.25, -2.0, -1.0, -2.0, -2.0])
    np.testing.assert_array_equal(tree.n_node_samples, [10, 4, 6, 2, 4])
    np.testing.assert_array_equal(tree.weighted_n_node_samples, [10, 4, 6, 2, 4])
    assert forest.trees[1].n_nodes == 1
    assert forest.input_dtype == np.float64
    # LightGBM's invented column names count as no names.
    assert forest.feature_names == ("x0", "x1") and not forest.has_feature_names
    stats = lightgbm_split_statistics(LGB_REGRESSION)
    np.testing.assert_array_equal(stats[0].gain, [10.0, 0.0, 2.0, 0.0, 0.0])


def test_lightgbm_dump_missing_types():
    forest = forest_from_lightgbm_dump(LGB_REGRESSION)
    # Node 0 ("NaN"): NaN follows default_left=False.  Node 2 ("None"): NaN is
    # read as 0.0, and 0.0 > -1.0 goes right whatever default_left says.
    np.testing.assert_array_equal(
        forest.trees[0].missing_go_left, [False, False, False, False, False]
    )
    X = np.array([[0.0, 0.25], [NAN, 1.0], [-1.0, NAN], [NAN, NAN]])
    expected = 0.25 + np.array([1.5, 0.5, -0.5, 0.5])
    np.testing.assert_array_equal(forest.predict(X), expected)


def test_lightgbm_dump_tweedie_power():
    """The dump does not record the power: it is given, LightGBM's 1.5 by default."""
    dump = dict(LGB_REGRESSION, objective="tweedie")
    assert forest_from_lightgbm_dump(dump).loss_power == 1.5
    forest = forest_from_lightgbm_dump(dump, tweedie_variance_power=1.3)
    assert forest.loss == "tweedie" and forest.loss_power == 1.3
    # A power belongs to the tweedie loss only.
    dart = forest_from_lightgbm_dump(dump, tweedie_variance_power=1.3, boosting="dart")
    assert dart.loss == "" and dart.loss_power is None
    plain = forest_from_lightgbm_dump(LGB_REGRESSION, tweedie_variance_power=1.3)
    assert plain.loss_power is None


def test_lightgbm_dump_unsupported_objective_is_named():
    dump = dict(LGB_REGRESSION, objective="lambdarank")
    with pytest.raises(UnsupportedModelError, match="'lambdarank'"):
        forest_from_lightgbm_dump(dump)


def _lgb_categorical_dump(pandas=None):
    dump = copy.deepcopy(LGB_REGRESSION)
    root = dump["tree_info"][0]["tree_structure"]
    root.update(decision_type="==", threshold="0||2", missing_type="NaN")
    root["default_left"] = True  # LightGBM sends NaN right at categorical nodes
    dump["feature_infos"] = {
        "Column_0": {"min_value": -1, "max_value": 1, "values": []},
        "Column_1": {"min_value": 0, "max_value": 3, "values": [0, 3, 1, 2]},
    }
    if pandas is not None:
        dump["pandas_categorical"] = [pandas]
    return dump


def test_lightgbm_dump_categorical_split():
    forest = forest_from_lightgbm_dump(_lgb_categorical_dump())
    assert forest.features[1].categories == (0, 1, 2, 3)
    tree = forest.trees[0]
    # Categories 0 and 2 go left; 1, 3, the unknown code 4 and NaN go right.
    assert tree.categorical_left[0, :5].tolist() == [True, False, True, False, False]
    assert not tree.missing_go_left[0]
    X = np.array([[0.0, 0], [0.0, 1], [0.0, 2], [0.0, 9], [0.0, -1], [0.0, NAN]])
    np.testing.assert_array_equal(
        forest.predict(X), 0.25 + np.array([1.5, 0.5, 1.5, 0.5, 0.5, 0.5])
    )


def test_lightgbm_dump_pandas_categories():
    import pandas as pd

    dump = _lgb_categorical_dump(pandas=["cat", "dog", "emu", "fox"])
    forest = forest_from_lightgbm_dump(dump)
    assert forest.features[1].categories == ("cat", "dog", "emu", "fox")
    X = pd.DataFrame({"x0": [0.0] * 4, "x1": ["emu", "dog", "yak", None]})
    np.testing.assert_array_equal(
        forest.predict(X), 0.25 + np.array([1.5, 0.5, 0.5, 0.5])
    )
    dump["pandas_categorical"] = [["a"], ["b"]]
    with pytest.raises(UnsupportedModelError, match="pandas categories for 2"):
        forest_from_lightgbm_dump(dump)


def test_lightgbm_dump_zero_as_missing_is_refused():
    dump = copy.deepcopy(LGB_REGRESSION)
    dump["tree_info"][0]["tree_structure"]["missing_type"] = "Zero"
    with pytest.raises(UnsupportedModelError, match="zero_as_missing"):
        forest_from_lightgbm_dump(dump)


def test_lightgbm_dump_feature_names():
    dump = dict(LGB_REGRESSION, feature_names=["age", "income"])
    forest = forest_from_lightgbm_dump(dump)
    assert forest.feature_names == ("age", "income") and forest.has_feature_names
    with pytest.raises(InputError, match="differ from the feature names"):
        forest_from_lightgbm_dump(dump, feature_names=["income", "age"])


def test_xgboost_json_deleted_nodes_are_dropped():
    model = copy.deepcopy(XGB_BINARY)
    tree = model["learner"]["gradient_booster"]["model"]["trees"][0]
    # Node 1 was a split whose children (3, 4) were pruned away: they stay in
    # the arrays, unreachable.
    tree.update(
        left_children=[2, -1, -1, -1, -1],
        right_children=[1, -1, -1, -1, -1],
        parents=[2147483647, 0, 0, 2147483647, 2147483647],
        split_conditions=[0.5, 0.375, -0.25, 9.0, 9.0],
        split_indices=[0, 0, 0, 0, 0],
        split_type=[0] * 5,
        default_left=[1, 0, 0, 0, 0],
        base_weights=[0.0, 0.375, -0.25, 9.0, 9.0],
        loss_changes=[3.5, 0.0, 0.0, 0.0, 0.0],
        sum_hessian=[10.0, 6.0, 4.0, 1.0, 1.0],
    )
    tree["tree_param"] = dict(tree["tree_param"], num_deleted="2", num_nodes="5")
    forest = forest_from_xgboost_json(model)
    pruned = forest.trees[0]
    assert pruned.n_nodes == 3
    np.testing.assert_array_equal(pruned.children_left, [1, -1, -1])
    np.testing.assert_array_equal(pruned.value[:, 0], [0.0, -0.25, 0.375])
    np.testing.assert_array_equal(pruned.weighted_n_node_samples, [10.0, 4.0, 6.0])
    full = forest_from_xgboost_json(XGB_BINARY)
    X = np.array([[0.0, 0.0], [1.0, 2.0], [NAN, NAN]])
    np.testing.assert_array_equal(forest.raw_predict(X), full.raw_predict(X))


def test_lightgbm_dump_linear_leaves_are_refused():
    # LightGBM 4 writes no "is_linear" in tree_info: a linear tree shows only in
    # its leaves, whose prediction is leaf_const + leaf_coeff . x.
    dump = copy.deepcopy(LGB_REGRESSION)
    leaf = dump["tree_info"][0]["tree_structure"]["left_child"]
    leaf.update(leaf_const=1.0, leaf_features=[0], leaf_coeff=[2.0])
    with pytest.raises(UnsupportedModelError, match="linear_tree=True"):
        forest_from_lightgbm_dump(dump)
