"""Categorical splits of HistGradientBoosting, LightGBM and XGBoost: the Forest
predicts like each library on the same DataFrame (pandas categorical columns),
unseen categories and missing values included."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treelens
from tests.models import (
    COLOURS,
    NATIVE_CATEGORICAL_FACTORIES,
    SIZES,
    make_categorical_frame,
    probe_categorical_frame,
)


def _library_raw(model, X):
    module = type(model).__module__.split(".")[0]
    if module == "catboost":
        return model.predict(X, prediction_type="RawFormulaVal")
    if module == "xgboost":
        return model.predict(X, output_margin=True)
    if module == "lightgbm":
        return model.predict(X, raw_score=True)
    return model._raw_predict(X)


def _tolerance(model):
    # XGBoost sums leaf values in float32; the others in float64, as the Forest.
    return 1e-6 if type(model).__module__.startswith("xgboost") else 0.0


def assert_predicts_like_library(model, X, categories=None):
    forest = treelens.to_forest(model, categories=categories)
    tol = _tolerance(model)
    np.testing.assert_array_equal(forest.predict(X), np.ravel(model.predict(X))) if (
        forest.is_classifier
    ) else np.testing.assert_allclose(
        forest.predict(X), model.predict(X), rtol=tol, atol=tol
    )
    if forest.is_classifier:
        np.testing.assert_allclose(
            forest.predict_proba(X), model.predict_proba(X), rtol=tol, atol=tol
        )
    raw = np.reshape(_library_raw(model, X), (len(X), -1))
    np.testing.assert_allclose(forest.raw_predict(X), raw, rtol=tol, atol=tol)


def _unknown_allowed(model):
    # XGBoost refuses categories it never saw; the other libraries route them.
    return not type(model).__module__.startswith("xgboost")


@pytest.mark.parametrize("name", sorted(NATIVE_CATEGORICAL_FACTORIES))
def test_factory_models_predict_like_their_library(name):
    case = NATIVE_CATEGORICAL_FACTORIES[name]()
    forest = treelens.to_forest(case.model, categories=case.categories)
    assert forest.has_categorical
    kinds = [spec.kind for spec in forest.features]
    assert kinds == ["numeric", "categorical", "categorical"]
    assert set(forest.features[1].categories) <= {*COLOURS, "none"}
    assert set(forest.features[2].categories) <= set(SIZES)
    catboost = name.startswith("catboost")
    X = probe_categorical_frame(
        case.X, unknown=_unknown_allowed(case.model), missing=not catboost
    )
    assert_predicts_like_library(case.model, X, case.categories)
    assert_predicts_like_library(case.model, case.X, case.categories)


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in sorted(NATIVE_CATEGORICAL_FACTORIES)
        if n.startswith(("lightgbm", "xgb"))
    ],
)
def test_gain_importance_equals_the_library(name):
    case = NATIVE_CATEGORICAL_FACTORIES[name]()
    result = treelens.gain_importance(case.model).importances_
    if name.startswith("lightgbm"):
        expected = case.model.booster_.feature_importance("gain")
    else:
        score = case.model.get_booster().get_score(importance_type="total_gain")
        expected = [score.get(c, 0.0) for c in case.X.columns]
    np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-5)


def test_numeric_codes_are_codes():
    """Fitted on a numeric array with categorical columns, the models compare
    the codes themselves; the Forest takes such arrays as codes."""
    import lightgbm
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=300), rng.integers(0, 6, 300)]).astype(float)
    X[rng.random(300) < 0.1, 1] = np.nan
    y = np.isin(X[:, 1], [1, 4]) + 0.3 * X[:, 0]
    probe = np.column_stack([rng.normal(size=400), rng.integers(-2, 9, 400)])
    probe = probe.astype(float)
    probe[rng.random(400) < 0.1, 1] = np.nan
    hist = HistGradientBoostingRegressor(max_iter=5, categorical_features=[1])
    lgb = lightgbm.LGBMRegressor(
        n_estimators=5, num_leaves=6, min_child_samples=3, min_data_per_group=3,
        cat_smooth=1.0, verbose=-1,
    )  # fmt: skip
    for model in (hist.fit(X, y), lgb.fit(X, y, categorical_feature=[1])):
        forest = treelens.to_forest(model)
        assert forest.features[1].categories == (0, 1, 2, 3, 4, 5)
        np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))


def test_lightgbm_reads_every_number_as_lightgbm_does():
    """Fitted on numbers 0 .. 9 of which 4 never occurs, LightGBM's categories
    are 0 .. 9 (its Booster reads any integer: one it never saw, 4 or 12, goes
    right at every node, as treelens routes it), and it casts a number to int
    (3.7 is category 3, -0.5 category 0), which the Forest read as unknown."""
    import lightgbm

    rng = np.random.default_rng(5)
    codes = rng.choice([0, 1, 2, 3, 5, 6, 7, 8, 9], 2000).astype(float)
    X = np.column_stack([rng.normal(size=2000), codes])
    effect = rng.normal(size=10) * 3
    y = effect[codes.astype(int)] + X[:, 0] + rng.normal(size=2000) * 0.1
    model = lightgbm.LGBMRegressor(
        n_estimators=20, num_leaves=16, min_child_samples=2, min_data_per_group=1,
        cat_smooth=0.0, verbose=-1,
    ).fit(X, y, categorical_feature=[1])  # fmt: skip
    forest = treelens.to_forest(model)
    assert forest.features[1].categories == tuple(range(10))
    values = np.r_[
        np.arange(-3, 16),  # every category treelens may propose, and others
        [np.nan, -0.5, -0.999, 0.5, 3.7, 3.999, 9.5, 2.0000001, 1e-40, 2.0**31],
    ]
    probe = np.column_stack([np.linspace(-2, 2, values.size), values])
    for booster_or_wrapper in (model, model.booster_):
        forest = treelens.to_forest(booster_or_wrapper)
        np.testing.assert_array_equal(
            forest.predict(probe), model.booster_.predict(probe)
        )
    frame = pd.DataFrame(X, columns=["x", "c"])
    named = lightgbm.LGBMRegressor(
        n_estimators=20, num_leaves=16, min_child_samples=2, min_data_per_group=1,
        cat_smooth=0.0, verbose=-1,
    ).fit(frame, y, categorical_feature=["c"])  # fmt: skip
    rows = pd.DataFrame(probe, columns=["x", "c"])
    np.testing.assert_array_equal(
        treelens.to_forest(named).predict(rows), named.predict(rows)
    )


def test_numbers_other_than_codes_are_read_as_each_library_reads_them():
    """Categories 1, 2, 3, 12: HistGradientBoosting fitted on an array maps
    an array's numbers by value (its encoder), LightGBM fitted on a pandas
    categorical takes an array's numbers as codes.  The Forest took both as
    codes, so it predicted and explained the HistGradientBoosting model wrongly."""
    import lightgbm
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(4)
    labels = rng.choice([1.0, 2.0, 3.0, 12.0], 300)
    X = np.column_stack([rng.normal(size=300), labels])
    y = np.isin(labels, [2.0, 12.0]) + 0.3 * X[:, 0]
    probe = np.column_stack([rng.normal(size=80), rng.choice([0, 1, 2, 3, 12, 5], 80)])
    probe[::9, 1] = np.nan
    hist = HistGradientBoostingRegressor(max_iter=5, categorical_features=[1])
    hist.fit(X, y)
    forest = treelens.to_forest(hist)
    assert forest.features[1].categories == (1.0, 2.0, 3.0, 12.0)
    np.testing.assert_array_equal(forest.predict(probe), hist.predict(probe))
    result = treelens.shap_values(hist, probe)
    np.testing.assert_allclose(
        result.expected_value_ + result.values_.sum(axis=1),
        hist.predict(probe),
        rtol=0,
        atol=1e-9,
    )
    twelve = probe[probe[:, 1] == 12][:1]
    assert "x1 is 12.0" in treelens.decision_path(hist, twelve).sentences_[0]
    frame = pd.DataFrame({"x": X[:, 0], "c": pd.Categorical(labels.astype(int))})
    lgb = lightgbm.LGBMRegressor(
        n_estimators=5, num_leaves=6, min_child_samples=3, min_data_per_group=3,
        cat_smooth=1.0, verbose=-1,
    ).fit(frame, y)  # fmt: skip
    forest = treelens.to_forest(lgb)
    assert forest.features[1].categories == (1, 2, 3, 12)
    # The Booster reads an array's numbers as codes, as the wrapper does (whose
    # predict also warns that the array has no column names).
    np.testing.assert_array_equal(forest.predict(probe), lgb.booster_.predict(probe))


def test_unseen_categories_follow_each_library():
    """HistGradientBoosting routes an unseen category as a missing value,
    LightGBM to the right child."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = make_categorical_frame(4, task="classification")
    hist = HistGradientBoostingClassifier(max_iter=3, categorical_features="from_dtype")
    forest = treelens.to_forest(hist.fit(X, y))
    for tree in forest.trees:
        nodes = np.flatnonzero(tree.is_categorical)
        k = forest.n_categories[tree.feature[nodes]]
        np.testing.assert_array_equal(
            tree.categorical_left[nodes, k], tree.missing_go_left[nodes]
        )
    case = NATIVE_CATEGORICAL_FACTORIES["lightgbm.LGBMClassifier[categorical]"]()
    forest = treelens.to_forest(case.model)
    for tree in forest.trees:
        nodes = np.flatnonzero(tree.is_categorical)
        k = forest.n_categories[tree.feature[nodes]]
        assert not tree.categorical_left[nodes, k].any()
        assert not tree.missing_go_left[nodes].any()


_LABELS = st.one_of(
    st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=2, max_size=7),
    st.lists(st.integers(-5, 40), min_size=2, max_size=7),
).map(lambda labels: tuple(dict.fromkeys(labels)))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    colours=_LABELS.filter(lambda labels: len(labels) >= 2),
    library=st.sampled_from(["hist", "lightgbm", "xgboost", "xgboost-onehot"]),
    task=st.sampled_from(["classification", "regression"]),
)
def test_random_category_sets_predict_like_the_library(seed, colours, library, task):
    X, y = make_categorical_frame(seed, task=task, colours=colours, n_samples=160)
    if task == "classification" and len(np.unique(y)) < 2:
        return
    kind = "Classifier" if task == "classification" else "Regressor"
    if library == "hist":
        from sklearn import ensemble

        model = getattr(ensemble, f"HistGradientBoosting{kind}")(
            max_iter=4, max_leaf_nodes=6, categorical_features="from_dtype"
        )
    elif library == "lightgbm":
        import lightgbm

        model = getattr(lightgbm, f"LGBM{kind}")(
            n_estimators=4, num_leaves=6, min_child_samples=2, min_data_per_group=2,
            cat_smooth=1.0, max_cat_to_onehot=32 if seed % 2 else 4, verbose=-1, n_jobs=1,
        )  # fmt: skip
    else:
        import xgboost

        model = getattr(xgboost, f"XGB{kind}")(
            n_estimators=4, max_depth=3, enable_categorical=True, tree_method="hist",
            max_cat_to_onehot=16 if library.endswith("onehot") else 1, n_jobs=1,
        )  # fmt: skip
    model.fit(X, y)
    probe = probe_categorical_frame(X, seed, unknown=_unknown_allowed(model))
    assert_predicts_like_library(model, probe)
    # Reordered categories name the same labels.
    reordered = probe.copy()
    column = reordered["colour"]
    reordered["colour"] = column.cat.reorder_categories(column.cat.categories[::-1])
    forest = treelens.to_forest(model)
    np.testing.assert_array_equal(forest.predict(reordered), forest.predict(probe))
    assert pd.api.types.is_float_dtype(forest.encode(probe).dtype)


# ------------------------------------------------------------- contracts
@pytest.mark.parametrize("name", sorted(NATIVE_CATEGORICAL_FACTORIES))
def test_contracts_hold_on_native_categorical_models(name):
    """Leaf boxes hold their rows (category sets included), held-out MDI is a
    distribution over the input columns, node statistics count the rows, and
    SHAP values add up to the raw scores, all from the raw DataFrame."""
    case = NATIVE_CATEGORICAL_FACTORIES[name]()
    forest = treelens.to_forest(case.model, categories=case.categories)
    X = probe_categorical_frame(case.X, 1, unknown=_unknown_allowed(case.model))
    if name.startswith("catboost"):
        X = probe_categorical_frame(case.X, 1, missing=False)
    codes = forest.encode(X)
    leaves = forest.apply(X)
    boxes = treelens.leaf_boxes(forest)
    for t in range(forest.n_trees):
        start, stop = boxes.tree_offsets[t], boxes.tree_offsets[t + 1]
        rows = start + np.searchsorted(boxes.node[start:stop], leaves[:, t])
        assert (boxes.node[rows] == leaves[:, t]).all()
        for j, allowed in boxes.allowed.items():
            k = allowed.shape[1] - 1
            code = np.where(np.isnan(codes[:, j]), k, codes[:, j]).astype(int)
            known = ~np.isnan(codes[:, j])
            assert allowed[rows[known], code[known]].all()
        x = codes[:, 0].astype(forest.input_dtype)
        seen = ~np.isnan(x)
        assert (boxes.lower[rows[seen], 0] < x[seen]).all()
        assert (x[seen] <= boxes.upper[rows[seen], 0]).all()
    if forest.loss:
        held_out = treelens.mdi_importance(forest, case.X, case.y)
        assert list(held_out.importances_.index) == ["x", "colour", "size"]
        assert held_out.importances_.sum() == pytest.approx(1.0)
        assert (held_out.importances_ >= 0).all()
    # Replayed on the training frame, the counts are those the library stored.
    stats = treelens.node_statistics(forest, case.X, case.y)
    for tree, counts in zip(forest.trees, stats.n_node_samples_):
        stored = tree.n_node_samples >= 0
        np.testing.assert_array_equal(counts[stored], tree.n_node_samples[stored])
        assert counts[0] == len(case.X)
    result = treelens.shap_values(forest, X.iloc[:20])
    raw = forest.raw_predict(X.iloc[:20])
    total = result.expected_value_ + result.values_.sum(axis=1)
    np.testing.assert_allclose(np.reshape(total, raw.shape), raw, atol=1e-6)


# ---------------------------------------------------------------- bad input
def test_bad_categorical_input_names_the_column():
    case = NATIVE_CATEGORICAL_FACTORIES[
        "sklearn.HistGradientBoostingClassifier[categorical]"
    ]()
    forest = treelens.to_forest(case.model)
    numbers = case.X.assign(colour=np.arange(len(case.X)) % 3)
    with pytest.raises(treelens.InputError, match="'colour' is categorical"):
        forest.predict(numbers)
    with pytest.raises(treelens.InputError, match=r"missing the model's column.*size"):
        forest.predict(case.X.drop(columns="size"))
    with pytest.raises(treelens.InputError, match="for CatBoost models only"):
        treelens.to_forest(case.model, categories={"colour": ["red"]})


def test_command_line_refuses_ctr_and_unlabelled_catboost_models(tmp_path, capsys):
    import catboost

    from treelens._cli._app import main

    X, y = make_categorical_frame(5, task="classification")
    X["colour"] = X["colour"].cat.add_categories("none").fillna("none")
    X.assign(label=y).to_csv(tmp_path / "data.csv", index=False)
    params = {"iterations": 3, "depth": 2, "verbose": 0, "allow_writing_files": False}
    for one_hot, expected in ((2, "CTR"), (16, "categories=")):
        model = catboost.CatBoostClassifier(
            one_hot_max_size=one_hot, cat_features=["colour", "size"], **params
        ).fit(X, y)
        model.save_model(str(tmp_path / "model.cbm"))
        with pytest.raises(SystemExit) as exit_info:
            main(["importance", str(tmp_path / "model.cbm")])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2, err
        assert expected in err and len(err.strip().splitlines()) == 1
