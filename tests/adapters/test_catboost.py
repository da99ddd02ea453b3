"""CatBoost adapter: parsing of hand-written JSON models and parity with CatBoost's
own predictions on random models."""

import json

import catboost
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treelens
from treelens import InputError, UnsupportedModelError
from treelens._adapters._catboost import (
    catboost_split_statistics,
    forest_from_catboost_json,
)


def _float_feature(index, name, treatment="AsFalse"):
    return {
        "borders": [],
        "feature_id": name,
        "feature_index": index,
        "flat_feature_index": index,
        "has_nans": True,
        "nan_value_treatment": treatment,
    }


def _split(feature, border):
    return {
        "border": border,
        "float_feature_index": feature,
        "split_type": "FloatFeature",
    }


def _model(trees, loss="RMSE", bias=0.25, scale=1.0, key="oblivious_trees", **info):
    return {
        "features_info": {
            "float_features": [
                _float_feature(0, "a", "AsTrue"),
                _float_feature(1, "b", "AsFalse"),
            ]
        },
        "model_info": {"params": {"loss_function": {"type": loss}}, **info},
        key: trees,
        "scale_and_bias": [scale, bias if isinstance(bias, list) else [bias]],
    }


# Leaf index bit 0: a > 0.1 (NaN: true); bit 1: b > 2 (NaN: false).
TREE_1 = {
    "leaf_values": [1.0, 2.0, 4.0, 8.0],
    "leaf_weights": [1, 2, 3, 4],
    "splits": [_split(0, 0.10000000149011612), _split(1, 2.0)],
}
TREE_2 = {
    "leaf_values": [16.0, 32.0],
    "leaf_weights": [5, 5],
    "splits": [_split(1, -1.0)],
}


def test_oblivious_trees_by_hand():
    forest = forest_from_catboost_json(json.dumps(_model([TREE_1, TREE_2])))
    assert forest.feature_names == ("a", "b") and forest.has_feature_names
    X = np.array(
        [
            [0.0, 0.0],  # leaf 0, then b > -1
            [1.0, 3.0],  # leaf 3
            [np.nan, -2.0],  # NaN a goes right: leaf 1; b <= -1
            [0.5, np.nan],  # leaf 1; NaN b goes left twice
            [0.1000000001, 0.0],  # equal to the border in float32: not above it
        ]
    )
    expected = np.array([1 + 32, 8 + 32, 2 + 16, 2 + 16, 1 + 32]) + 0.25
    np.testing.assert_array_equal(forest.predict(X), expected)
    # Each oblivious tree is a complete tree whose root tests its last split.
    tree = forest.trees[0]
    np.testing.assert_array_equal(tree.feature[~tree.is_leaf], [1, 0, 0])
    np.testing.assert_array_equal(tree.value[tree.is_leaf, 0], [1, 2, 4, 8])
    np.testing.assert_array_equal(tree.weighted_n_node_samples, [10, 3, 7, 1, 2, 3, 4])
    assert tree.value[0, 0] == pytest.approx((1 + 4 + 12 + 32) / 10)


def test_gain_is_catboost_prediction_values_change_by_hand():
    stats = catboost_split_statistics(_model([TREE_1, TREE_2]))
    a = 1 * (1 - 5 / 3) ** 2 + 2 * (2 - 5 / 3) ** 2  # leaves 0, 1
    a += 3 * (4 - 44 / 7) ** 2 + 4 * (8 - 44 / 7) ** 2  # leaves 2, 3
    b = 1 * (1 - 13 / 4) ** 2 + 3 * (4 - 13 / 4) ** 2  # leaves 0, 2
    b += 2 * (2 - 6) ** 2 + 4 * (8 - 6) ** 2  # leaves 1, 3
    b_second = 5 * (16 - 24) ** 2 + 5 * (32 - 24) ** 2
    total = np.zeros(2)
    for s in stats:
        np.add.at(total, s.feature[s.feature >= 0], s.gain[s.feature >= 0])
    np.testing.assert_allclose(total, [a, b + b_second], rtol=1e-12)


def test_border_at_the_float32_extreme_separates_missing_values():
    lowest = float(np.finfo(np.float32).min)
    tree = {
        "leaf_values": [1.0, 2.0],
        "leaf_weights": [1, 1],
        "splits": [_split(1, lowest)],
    }
    forest = forest_from_catboost_json(_model([tree], bias=0.0))
    assert forest.trees[0].threshold[0] == -np.inf
    X = np.array([[0.0, np.nan], [0.0, -1e30], [0.0, 5.0]])
    np.testing.assert_array_equal(forest.predict(X), [1.0, 2.0, 2.0])


def test_contradicting_splits_are_pruned():
    # b <= 2 above b > 3: the subtree where b > 3 under b <= 2 is unreachable.
    tree = {
        "leaf_values": [1.0, 2.0, 3.0, 4.0],
        "leaf_weights": [1, 0, 1, 1],
        "splits": [_split(1, 3.0), _split(1, 2.0)],
    }
    forest = forest_from_catboost_json(_model([tree], bias=0.0))
    assert forest.trees[0].n_nodes == 5
    X = np.array([[0.0, 1.0], [0.0, 2.5], [0.0, 4.0], [0.0, np.nan]])
    np.testing.assert_array_equal(forest.predict(X), [1.0, 3.0, 4.0, 1.0])


def test_scale_bias_and_multiclass_by_hand():
    tree = {
        "leaf_values": [1.0, 2.0, 3.0, -1.0, -2.0, -3.0],
        "leaf_weights": [2, 2],
        "splits": [_split(0, 0.0)],
    }
    model = _model(
        [tree],
        loss="MultiClass",
        bias=[0.5, 0.0, -0.5],
        scale=2.0,
        class_params={"class_names": ["x", "y", "z"]},
    )
    forest = forest_from_catboost_json(model)
    assert forest.n_trees == 3 and list(forest.tree_output) == [0, 1, 2]
    X = np.array([[-1.0, 0.0], [1.0, 0.0]])
    raw = np.array([[2.5, 4.0, 5.5], [-1.5, -4.0, -6.5]])
    np.testing.assert_allclose(forest.raw_predict(X), raw, rtol=1e-15)
    np.testing.assert_array_equal(forest.predict(X), ["z", "x"])


def test_tweedie_power_by_hand():
    model = _model([TREE_1], loss="Tweedie")
    model["model_info"]["params"]["loss_function"]["params"] = {
        "__params_key_order": '["variance_power"]',
        "variance_power": "1.3",
    }
    forest = forest_from_catboost_json(model)
    assert forest.link == "exp" and forest.loss == "tweedie"
    assert forest.loss_power == 1.3
    # CatBoost requires the power; a model that records none has no known power.
    for loss in ("Tweedie", "Poisson"):
        assert forest_from_catboost_json(_model([TREE_1], loss=loss)).loss_power is None


def test_non_symmetric_trees_by_hand():
    tree = {
        "split": _split(0, 0.0),
        "left": {"value": 1.0, "weight": 3},
        "right": {
            "split": _split(1, 1.0),
            "left": {"value": 2.0, "weight": 1},
            "right": {"value": 3.0, "weight": 1},
        },
    }
    forest = forest_from_catboost_json(_model([tree], bias=0.0, key="trees"))
    X = np.array([[-1.0, 5.0], [1.0, 0.0], [1.0, 2.0], [np.nan, 2.0]])
    np.testing.assert_array_equal(forest.predict(X), [1.0, 2.0, 3.0, 3.0])
    np.testing.assert_array_equal(
        forest.trees[0].weighted_n_node_samples, [5, 3, 2, 1, 1]
    )


def test_bad_dumps_are_refused():
    with pytest.raises(InputError, match="Not a CatBoost JSON model"):
        forest_from_catboost_json({"learner": {}})
    with pytest.raises(UnsupportedModelError, match="'YetiRank' is not supported"):
        forest_from_catboost_json(_model([TREE_1], loss="YetiRank"))
    with pytest.raises(UnsupportedModelError, match="probability threshold"):
        forest_from_catboost_json(
            _model([TREE_1], loss="Logloss", binclass_probability_threshold="0.7")
        )
    ctr = _model(
        [
            {
                "leaf_values": [0, 1],
                "splits": [{"border": 3.0, "split_type": "OnlineCtr"}],
            }
        ]
    )
    ctr["features_info"]["categorical_features"] = [
        {"feature_id": "colour", "feature_index": 0, "flat_feature_index": 2}
    ]
    ctr["features_info"]["ctrs"] = [{"elements": [{"cat_feature_index": 0}]}]
    with pytest.raises(
        UnsupportedModelError, match=r"CTR.*\['colour'\].*one_hot_max_size"
    ):
        forest_from_catboost_json(ctr)


def test_one_hot_splits_by_hand():
    # CatBoost stores hash("red") = -1242798403 and hash("blue") = -863087293.
    model = _model(
        [
            {
                "leaf_values": [1.0, 2.0, 4.0, 8.0],
                "leaf_weights": [1, 1, 1, 1],
                "splits": [
                    {"cat_feature_index": 0, "split_type": "OneHotFeature",
                     "value": -1242798403},
                    {"cat_feature_index": 0, "split_type": "OneHotFeature",
                     "value": -863087293},
                ],
            }
        ],
        bias=0.0,
    )  # fmt: skip
    model["features_info"]["categorical_features"] = [
        {"feature_id": "colour", "feature_index": 0, "flat_feature_index": 2,
         "values": [-1242798403, -863087293]},
    ]  # fmt: skip
    with pytest.raises(InputError, match=r"categories=\{'colour'"):
        forest_from_catboost_json(model)
    forest = forest_from_catboost_json(
        model, categories={"colour": ["green", "red", "blue"]}
    )
    assert forest.features[2].categories == ("green", "red", "blue")
    import pandas as pd

    X = pd.DataFrame(
        {"a": [0.0] * 4, "b": [0.0] * 4, "colour": ["red", "blue", "green", "pink"]}
    )
    # red sets bit 0, blue bit 1; green and a label never seen set none.
    np.testing.assert_array_equal(forest.predict(X), [2.0, 4.0, 1.0, 1.0])
    with pytest.raises(InputError, match="not categorical features"):
        forest_from_catboost_json(model, categories={"a": ["x"], "colour": ["red"]})


def test_category_hash_of_known_labels():
    from treelens._adapters._cityhash import catboost_category_hash

    # Values CatBoost itself writes for these labels (its Python model export).
    known = {"v": -1706589142, "red": -1242798403, "blue": -863087293,
             "green": 1390465085, "u": 1981898051}  # fmt: skip
    assert {label: catboost_category_hash(label) for label in known} == known


# ------------------------------------------------------------ with CatBoost


def _data(seed, n_samples=150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 3)).round(1)
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2
    return rng, X, signal


def _probe(forest, rng, n_random=60):
    cuts = np.concatenate([t.threshold[~t.is_leaf] for t in forest.trees] + [[0.0]])
    cuts = cuts[np.abs(cuts) < 1e30]  # splits that only separate NaN sit at the edge
    f32 = cuts.astype(np.float32)
    pool = np.concatenate(
        [
            cuts,
            np.nextafter(f32, np.float32(np.inf)),
            np.nextafter(f32, np.float32(-np.inf)),
        ]
    ).astype(np.float64)
    X = rng.choice(pool, size=(pool.size + n_random, forest.n_features))
    X[-n_random:] = rng.normal(size=(n_random, forest.n_features))
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    task=st.sampled_from(["binary", "multiclass", "RMSE", "MAE", "Quantile:alpha=0.3"]),
    depth=st.integers(1, 5),
    iterations=st.integers(1, 12),
    nan_mode=st.sampled_from(["Min", "Max"]),
    grow_policy=st.sampled_from(["SymmetricTree", "Depthwise", "Lossguide"]),
    learning_rate=st.floats(0.05, 1.0),
)
def test_random_models_predict_like_catboost(
    seed, task, depth, iterations, nan_mode, grow_policy, learning_rate
):
    rng, X, signal = _data(seed)
    params = {
        "iterations": iterations, "depth": depth, "nan_mode": nan_mode,
        "grow_policy": grow_policy, "learning_rate": learning_rate, "verbose": 0,
        "thread_count": 1, "random_seed": seed, "allow_writing_files": False,
    }  # fmt: skip
    if task in ("binary", "multiclass"):
        edges = [0.5] if task == "binary" else [0.0, 1.0]
        y = np.array(["lo", "mid", "hi"])[np.digitize(signal, edges)]
        model = catboost.CatBoostClassifier(**params).fit(X, y)
    else:
        model = catboost.CatBoostRegressor(loss_function=task, **params).fit(X, signal)
    forest = treelens.to_forest(model)
    Xt = _probe(forest, rng)
    raw = model.predict(Xt, prediction_type="RawFormulaVal")
    # CatBoost sums doubles tree by tree, then adds its bias: the same doubles.
    np.testing.assert_array_equal(forest.raw_predict(Xt), raw.reshape(len(Xt), -1))
    np.testing.assert_array_equal(forest.predict(Xt), np.ravel(model.predict(Xt)))
    if forest.is_classifier:
        np.testing.assert_allclose(
            forest.predict_proba(Xt), model.predict_proba(Xt), rtol=0, atol=1e-15
        )
    gain = treelens.gain_importance(model, normalize=True).importances_.to_numpy()
    if gain.sum() > 0:
        np.testing.assert_allclose(
            100 * gain, model.get_feature_importance(), rtol=1e-9, atol=1e-9
        )


def test_dataframe_columns_are_matched_by_name():
    import pandas as pd

    _, X, signal = _data(1)
    frame = pd.DataFrame(X, columns=["u", "v", "w"])
    model = catboost.CatBoostRegressor(
        iterations=5, depth=3, verbose=0, allow_writing_files=False
    ).fit(frame, signal)
    forest = treelens.to_forest(model)
    assert forest.feature_names == ("u", "v", "w") and forest.has_feature_names
    shuffled = frame[["w", "u", "v"]]
    np.testing.assert_array_equal(forest.predict(shuffled), model.predict(frame))


def test_ctr_features_are_refused_with_the_alternative():
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"a": rng.normal(size=300), "city": rng.choice(list("pqrstuvw"), 300)}
    )
    y = (frame["city"].isin(list("pqr")) + 0.3 * frame["a"] > 0.5).astype(int)
    model = catboost.CatBoostClassifier(
        iterations=5,
        depth=2,
        verbose=0,
        one_hot_max_size=2,
        cat_features=["city"],
        allow_writing_files=False,
    ).fit(frame, y)
    with pytest.raises(
        UnsupportedModelError, match=r"CTR.*\['city'\].*one_hot_max_size"
    ):
        treelens.to_forest(model)


def test_not_fitted_and_probability_threshold():
    with pytest.raises(treelens.NotFittedError, match="not fitted"):
        treelens.to_forest(catboost.CatBoostClassifier())
    _, X, signal = _data(2)
    model = catboost.CatBoostClassifier(
        iterations=3, verbose=0, allow_writing_files=False
    ).fit(X, signal > 0)
    model.set_probability_threshold(0.7)
    with pytest.raises(UnsupportedModelError, match="0.7"):
        treelens.to_forest(model)


def test_category_hash_equals_catboost_for_every_length(tmp_path):
    """The hash of labels of 1 to 150 bytes (UTF-8 too) equals the one CatBoost
    writes for its one-hot splits."""
    import pandas as pd

    from treelens._adapters._cityhash import catboost_category_hash

    rng = np.random.default_rng(0)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789é€"))
    labels = ["".join(rng.choice(alphabet, n)) for n in range(1, 151, 3)]
    frame = pd.DataFrame({"c": np.repeat(labels, 4)})
    y = np.tile([0, 1, 1, 0], len(labels))
    y[::8] = 1  # some signal in every category
    for start in range(0, len(labels), 10):
        # A category that decides the target is split on by CatBoost.
        block = labels[start : start + 10]
        target = frame["c"].isin(block[::2]).astype(int)
        model = catboost.CatBoostClassifier(
            iterations=20, depth=4, verbose=0, one_hot_max_size=255,
            cat_features=["c"], allow_writing_files=False, random_seed=0,
        ).fit(frame, target)  # fmt: skip
        path = tmp_path / "model.json"
        model.save_model(str(path), format="json")
        stored = json.loads(path.read_text())["features_info"]
        values = set(stored["categorical_features"][0].get("values", []))
        ours = {catboost_category_hash(label) for label in labels}
        assert values and values <= ours


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    labels=st.one_of(
        st.lists(st.text("abcdéf", min_size=1, max_size=12), min_size=2, max_size=6),
        st.lists(st.integers(-3, 200), min_size=2, max_size=6),
    )
    .map(lambda v: list(dict.fromkeys(v)))
    .filter(lambda v: len(v) >= 2),
    grow_policy=st.sampled_from(["SymmetricTree", "Depthwise"]),
    task=st.sampled_from(["classification", "regression"]),
)
def test_one_hot_models_predict_like_catboost(seed, labels, grow_policy, task):
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = 200
    colour = rng.choice(np.array(labels, dtype=object), n)
    x = rng.normal(size=n)
    signal = x + 2.0 * np.isin(colour, labels[::2])
    frame = pd.DataFrame({"x": x, "colour": colour})
    params = {
        "iterations": 8, "depth": 3, "verbose": 0, "one_hot_max_size": 255,
        "cat_features": ["colour"], "allow_writing_files": False,
        "grow_policy": grow_policy, "random_seed": seed, "thread_count": 1,
    }  # fmt: skip
    if task == "classification":
        model = catboost.CatBoostClassifier(**params).fit(frame, signal > 1)
    else:
        model = catboost.CatBoostRegressor(**params).fit(frame, signal)
    forest = treelens.to_forest(model, categories={"colour": labels})
    unseen = "zz never seen" if isinstance(labels[0], str) else 10**6
    probe = pd.DataFrame(
        {
            "x": rng.normal(size=300),
            "colour": rng.choice(np.array([*labels, unseen], dtype=object), 300),
        }
    )
    raw = model.predict(probe, prediction_type="RawFormulaVal")
    np.testing.assert_array_equal(forest.raw_predict(probe)[:, 0], raw)
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))


def test_counterfactuals_without_reference_on_models_with_missing_values():
    from tests.models import MODEL_FACTORIES

    case = MODEL_FACTORIES["catboost.CatBoostRegressor"]()
    rows = np.nan_to_num(case.X[:3])
    result = treelens.feature_tweak(case.model, rows, target=(1.0, None))
    assert np.isfinite(result.cost_[result.found_]).all()
    moved = result.X_cf_[result.found_]
    assert (case.model.predict(moved) >= 1.0).all()
