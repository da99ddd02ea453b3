"""Loading XGBoost and LightGBM models from their own model files."""

import json

import numpy as np
import pytest

import treelens
from tests.models import NATIVE_BOOSTING_FACTORIES
from treelens import Forest, InputError
from treelens._adapters._native import booster_predict, load_native_model


@pytest.fixture(scope="module")
def xgb_case():
    return NATIVE_BOOSTING_FACTORIES["xgboost.XGBClassifier"]()


@pytest.fixture(scope="module")
def lgb_case():
    return NATIVE_BOOSTING_FACTORIES["lightgbm.LGBMClassifier"]()


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_xgboost_model_files(tmp_path, xgb_case, suffix):
    path = tmp_path / f"model{suffix}"
    xgb_case.model.save_model(path)
    loaded = load_native_model(path)
    assert type(loaded).__name__ == "Booster"
    forest = treelens.to_forest(loaded)
    np.testing.assert_allclose(
        forest.predict_proba(xgb_case.X),
        xgb_case.model.predict_proba(xgb_case.X),
        atol=1e-6,
    )


def test_lightgbm_model_file_and_dump(tmp_path, lgb_case):
    text = tmp_path / "model.txt"
    lgb_case.model.booster_.save_model(text)
    loaded = load_native_model(text)
    assert type(loaded).__name__ == "Booster"
    expected = lgb_case.model.predict_proba(lgb_case.X)
    np.testing.assert_allclose(
        treelens.to_forest(loaded).predict_proba(lgb_case.X), expected, atol=1e-12
    )
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(lgb_case.model.booster_.dump_model()))
    forest = load_native_model(dump)
    assert isinstance(forest, Forest)
    np.testing.assert_allclose(forest.predict_proba(lgb_case.X), expected, atol=1e-12)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("model.json", b'{"format": "something else"}'),
        ("model.txt", b"not a model at all\n"),
        ("model.ubj", b"{\x00\x01\x02garbage"),
    ],
)
def test_unknown_model_file_format(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match="unknown format"):
        load_native_model(path)


def test_missing_model_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_native_model(tmp_path / "absent.json")


def test_unknown_model_object():
    with pytest.raises(treelens.UnsupportedModelError, match="Unsupported model"):
        treelens.to_forest(object())


def test_booster_predict_gives_labels_like_the_forest(lgb_case):
    import lightgbm

    X, y = lgb_case.X, lgb_case.y
    for objective, target in [("binary", y == 2), ("multiclass", y), ("regression", y)]:
        params = {"objective": objective, "verbose": -1, "num_leaves": 4}
        if objective == "multiclass":
            params["num_class"] = 3
        booster = lightgbm.train(params, lightgbm.Dataset(X, target), num_boost_round=3)
        predicted = booster_predict(booster, X)
        forest_predicted = treelens.to_forest(booster).predict(X)
        np.testing.assert_allclose(predicted, forest_predicted, rtol=1e-12)
    assert booster_predict(lgb_case.model, X) is None


def test_catboost_model_files(tmp_path):
    case = NATIVE_BOOSTING_FACTORIES["catboost.CatBoostClassifier"]()
    expected = case.model.predict_proba(case.X)
    binary = tmp_path / "model.cbm"
    case.model.save_model(str(binary))
    loaded = load_native_model(binary)
    assert type(loaded).__name__ == "CatBoost"
    forest = treelens.to_forest(loaded)
    np.testing.assert_allclose(forest.predict_proba(case.X), expected, atol=1e-15)
    np.testing.assert_array_equal(
        booster_predict(loaded, case.X), case.model.predict(case.X).ravel()
    )
    text = tmp_path / "model.json"
    case.model.save_model(str(text), format="json")
    forest = load_native_model(text)
    assert isinstance(forest, Forest)
    np.testing.assert_allclose(forest.predict_proba(case.X), expected, atol=1e-15)
    np.testing.assert_array_equal(
        forest.predict(case.X), case.model.predict(case.X).ravel()
    )


def test_catboost_wrapper_saved_with_skops(tmp_path, capsys):
    import skops.io

    from treelens._cli._app import main
    from treelens._io._files import load_model

    case = NATIVE_BOOSTING_FACTORIES["catboost.CatBoostRegressor"]()
    path = tmp_path / "model.skops"
    skops.io.dump(case.model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(
        treelens.to_forest(loaded).predict(case.X), case.model.predict(case.X)
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["importance", str(path), "--json"])
    assert exit_info.value.code == 0
    assert "x0" in capsys.readouterr().out
