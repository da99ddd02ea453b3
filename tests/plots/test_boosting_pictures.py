"""The pictures accept XGBoost, LightGBM and HistGradientBoosting models."""

import matplotlib
import numpy as np
import pytest

import treelens
from tests.models import NO_IMPURITY_FACTORIES

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


@pytest.mark.parametrize(
    "name",
    ["xgboost.XGBClassifier", "lightgbm.LGBMClassifier", "xgboost.Booster"],
)
def test_classifier_pictures(name):
    case = NO_IMPURITY_FACTORIES[name]()
    X = np.nan_to_num(case.X)
    forest = treelens.to_forest(case.model)
    # A bare Booster has no classes_ or numpy predict: draw its Forest.
    model = forest if name.endswith("Booster") else case.model
    regions = treelens.DecisionRegionDisplay.from_estimator(
        model, X, grid_resolution=20
    )
    # The grid is coloured by the model's predictions (the library's own for
    # wrappers): they equal the Forest's.
    np.testing.assert_array_equal(
        regions.predictions.ravel(), forest.predict(regions.grid)
    )
    diagram = treelens.TreeDiagramDisplay.from_estimator(case.model, tree_index=1)
    assert diagram is not None
    assert "digraph" in treelens.export_dot(case.model, tree_index=0)
    partition = treelens.PartitionDisplay.from_estimator(case.model, X, tree_index=0)
    assert partition is not None


def test_importance_picture_of_gain_and_held_out_mdi():
    case = NO_IMPURITY_FACTORIES["lightgbm.LGBMRegressor"]()
    gain = treelens.gain_importance(case.model, normalize=True)
    display = treelens.ImportanceDisplay.from_result(gain)
    np.testing.assert_allclose(
        display.importances["total gain (LightGBM)"].sort_index(),
        gain.importances_.sort_index(),
    )
    held_out = treelens.ImportanceDisplay.from_estimator(case.model, case.X, case.y)
    assert list(held_out.importances.columns) == ["MDI (held-out)"]
