"""gain_importance equals the boosting libraries' own importances; MDI on models
without stored impurities is held-out only."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import treelens
from tests.models import NO_IMPURITY_FACTORIES, make_data
from treelens import InputError, UnsupportedModelError
from treelens._importance._losses import BOOSTING_LOSSES


def _library_importance(model, importance_type, forest):
    """The library's own importance of each feature, or None where it has none."""
    module = type(model).__module__.split(".")[0]
    names = list(forest.feature_names)
    if module == "xgboost":
        booster = model if type(model).__name__ == "Booster" else model.get_booster()
        kind = {"gain": "total_gain", "cover": "total_cover", "split": "weight"}
        score = booster.get_score(importance_type=kind[importance_type])
        keys = booster.feature_names or [f"f{i}" for i in range(len(names))]
        return np.array([score.get(key, 0.0) for key in keys])
    if module == "lightgbm" and importance_type != "cover":
        booster = model if type(model).__name__ == "Booster" else model.booster_
        return booster.feature_importance(importance_type=importance_type)
    return None


@pytest.mark.parametrize("name", sorted(NO_IMPURITY_FACTORIES))
def test_factory_models_importances(name):
    case = NO_IMPURITY_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    no_cover = name.startswith(("sklearn.", "catboost."))
    for importance_type in ("gain", "cover", "split"):
        if no_cover and importance_type == "cover":
            with pytest.raises(UnsupportedModelError, match="no cover importance"):
                treelens.gain_importance(case.model, importance_type="cover")
            continue
        result = treelens.gain_importance(case.model, importance_type=importance_type)
        values = result.importances_.to_numpy()
        assert result.importances_.index.tolist() == list(forest.feature_names)
        assert (values >= 0).all() and values.sum() > 0
        np.testing.assert_allclose(result.per_tree_.mean(axis=0), values, rtol=1e-12)
        expected = _library_importance(case.model, importance_type, forest)
        if expected is not None:
            # XGBoost sums in float32.
            np.testing.assert_allclose(values, expected, rtol=1e-5)
        normalized = treelens.gain_importance(
            case.model, importance_type=importance_type, normalize=True
        )
        assert normalized.importances_.sum() == pytest.approx(1.0)
        if name.startswith("catboost.") and importance_type == "gain":
            # CatBoost's own PredictionValuesChange, in percent.
            np.testing.assert_allclose(
                100 * normalized.importances_.to_numpy(),
                case.model.get_feature_importance(),
                rtol=1e-9,
                atol=1e-9,
            )
    assert result.method.startswith("split count (")


def test_hist_gain_is_the_sum_of_split_gains_by_hand():
    case = NO_IMPURITY_FACTORIES["sklearn.HistGradientBoostingRegressor"]()
    expected = np.zeros(case.X.shape[1])
    for predictors in case.model._predictors:
        for predictor in predictors:
            nodes = predictor.nodes[predictor.nodes["is_leaf"] == 0]
            np.add.at(expected, nodes["feature_idx"], nodes["gain"])
    result = treelens.gain_importance(case.model)
    np.testing.assert_allclose(result.importances_.to_numpy(), expected, rtol=1e-12)
    assert result.method == "total gain (HistGradientBoosting)"


@pytest.mark.parametrize("name", sorted(NO_IMPURITY_FACTORIES))
def test_mdi_is_held_out_only(name):
    case = NO_IMPURITY_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    with pytest.raises(UnsupportedModelError, match="stores none"):
        treelens.mdi_importance(case.model)
    if forest.loss in BOOSTING_LOSSES:
        result = treelens.mdi_importance(case.model, case.X, case.y)
        assert result.method == "MDI (held-out)"
        assert result.importances_.sum() == pytest.approx(1.0)
        assert (result.importances_ >= 0).all()
    else:  # random forests and DART (trees are not stages fitted one after
        # another), and losses treelens does not replay (log links)
        with pytest.raises(UnsupportedModelError, match="Cannot replay"):
            treelens.mdi_importance(case.model, case.X, case.y)


def test_held_out_mdi_ranks_the_signal_feature_first():
    import xgboost

    X, y = make_data(0, task="regression", n_samples=300)
    model = xgboost.XGBRegressor(n_estimators=10, max_depth=2, n_jobs=1).fit(X, y)
    result = treelens.mdi_importance(model, X, y)
    gain = treelens.gain_importance(model, normalize=True)
    assert result.importances_.idxmax() == gain.importances_.idxmax() == "x0"


def test_gain_importance_bad_input():
    X, y = make_data(0, task="classification")
    forest_model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="mdi_importance"):
        treelens.gain_importance(forest_model)
    case = NO_IMPURITY_FACTORIES["sklearn.HistGradientBoostingClassifier"]()
    with pytest.raises(InputError, match="not a Forest"):
        treelens.gain_importance(treelens.to_forest(case.model))
    with pytest.raises(InputError, match="importance_type"):
        treelens.gain_importance(case.model, importance_type="weight")
