"""Waterfall and summary pictures of contributions: the numbers they draw."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from treelens import (
    ContributionSummaryDisplay,
    InputError,
    WaterfallDisplay,
    saabas_values,
)

from ..models import MODEL_FACTORIES


def test_waterfall_steps_by_hand():
    result = SimpleNamespace(
        values_=np.array([[0.5, -2.0, 0.0, 0.25, 0.1]]),
        bias_=1.0,
        data_=pd.DataFrame([[1, 2, 3, 4, 5]], columns=list("abcde")),
    )
    display = WaterfallDisplay.from_result(result, max_display=3)
    assert display.labels_ == ("b = 2", "a = 1", "2 other features")
    np.testing.assert_allclose(display.contributions_, [-2.0, 0.5, 0.35])
    np.testing.assert_allclose(display.starts_, [1.0, -1.0, -0.5])
    np.testing.assert_allclose(display.ends_, [-1.0, -0.5, -0.15])
    assert display.prediction_ == pytest.approx(-0.15)
    assert len(display.bars_) == 3
    everything = WaterfallDisplay.from_result(result, max_display=10)
    # The zero contribution of c is left out; nothing is grouped.
    assert everything.labels_ == ("b = 2", "a = 1", "d = 4", "e = 5")


def test_waterfall_labels_show_values_as_the_tables_do():
    result = SimpleNamespace(
        values_=np.array([[0.5, -2.0, 0.25, 0.1]]),
        bias_=1.0,
        data_=pd.DataFrame(
            [[31330.0, np.nan, "salaried", 0.000123456]],
            columns=["income", "debt", "employment", "rate"],
        ),
    )
    display = WaterfallDisplay.from_result(result)
    assert display.labels_ == (
        "debt = missing",
        "income = 31,330",
        "employment = salaried",
        "rate = 0.0001235",
    )


def test_waterfall_of_a_forest_ends_at_its_prediction():
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"](seed=0)
    X = np.nan_to_num(case.X[:10])
    result = saabas_values(case.model, X)
    display = WaterfallDisplay.from_result(result, row=4, max_display=3)
    predicted = int(np.argmax(result.prediction_[4]))
    assert display.output_name == result.output_names_[predicted]
    assert display.prediction_ == pytest.approx(result.prediction_[4, predicted])
    assert display.ends_[-1] == pytest.approx(result.prediction_[4, predicted])
    other = WaterfallDisplay.from_result(result, row=4, output=result.output_names_[0])
    assert other.prediction_ == pytest.approx(result.prediction_[4, 0])
    fitted = WaterfallDisplay.from_estimator(case.model, X, row=4, max_display=3)
    np.testing.assert_allclose(fitted.contributions_, display.contributions_)


def test_waterfall_reads_a_shap_like_result():
    shap_like = SimpleNamespace(
        values_=np.array([[[0.1, -0.1], [0.3, -0.3]]]),
        expected_value_=np.array([0.4, 0.6]),
        feature_names_=("p", "q"),
    )
    display = WaterfallDisplay.from_result(shap_like, output=1)
    assert display.labels_ == ("q", "p")
    assert display.prediction_ == pytest.approx(0.2)


def test_summary_orders_features_and_colours_by_value():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(200, 3)) * [1.0, 3.0, 2.0]
    data = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    data.iloc[0, 1] = np.nan
    result = SimpleNamespace(values_=values, bias_=0.0, data_=data)
    display = ContributionSummaryDisplay.from_result(result, max_display=2)
    assert display.features_ == ("b", "c")
    np.testing.assert_array_equal(display.order_, [1, 2])
    np.testing.assert_allclose(display.mean_abs_, np.abs(values[:, [1, 2]]).mean(0))
    np.testing.assert_array_equal(display.x_, values[:, [1, 2]])
    # Each feature's points stay within 0.4 of its line (b on top).
    assert np.all(np.abs(display.y_[:, 0] - 1) <= 0.4 + 1e-12)
    assert np.all(np.abs(display.y_[:, 1]) <= 0.4 + 1e-12)
    assert np.isnan(display.colors_[0, 0])
    known = data["b"].to_numpy()[1:]
    colours = display.colors_[1:, 0]
    assert colours[np.argmax(known)] == 1.0 and colours[np.argmin(known)] == 0.0
    assert len(display.collections_) == 2


def test_summary_of_a_multiclass_forest():
    case = MODEL_FACTORIES["sklearn.GradientBoostingClassifier"](seed=0)
    display = ContributionSummaryDisplay.from_estimator(case.model, case.X, output=0)
    result = saabas_values(case.model, case.X)
    np.testing.assert_allclose(display.x_, result.values_[:, display.order_, 0])
    assert display.output_name == "0"


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda r: WaterfallDisplay.from_result(r, max_display=0), "max_display"),
        (lambda r: WaterfallDisplay.from_result(r, row=5), "row"),
        (lambda r: WaterfallDisplay.from_result(r, output=7), "output"),
        (lambda r: WaterfallDisplay.from_result(SimpleNamespace()), "values_"),
        (
            lambda r: WaterfallDisplay.from_result(SimpleNamespace(values_=r.values_)),
            "bias_",
        ),
    ],
)
def test_bad_arguments_are_refused(call, match):
    result = SimpleNamespace(values_=np.zeros((2, 3, 2)), bias_=np.zeros(2))
    with pytest.raises(InputError, match=match):
        call(result)


@pytest.mark.parametrize(
    "name", ["sklearn.RandomForestRegressor", "sklearn.GradientBoostingClassifier"]
)
def test_pictures_of_shap_values(name):
    from treelens import shap_values

    case = MODEL_FACTORIES[name](seed=0)
    X = pd.DataFrame(np.nan_to_num(case.X[:30]), columns=["a", "b", "c", "d"])
    model = case.model
    result = shap_values(model, X.to_numpy())
    waterfall = WaterfallDisplay.from_result(result, row=2, X=X, output=1)
    values = result.values_ if result.values_.ndim == 2 else result.values_[:, :, 1]
    base = np.ravel(result.expected_value_)[-1 if result.values_.ndim == 2 else 1]
    assert waterfall.prediction_ == pytest.approx(base + values[2].sum())
    top = int(np.argmax(np.abs(values[2])))
    assert waterfall.labels_[0] == f"x{top} = {float(X.iloc[2, top]):.4g}"
    fitted = WaterfallDisplay.from_estimator(
        model, X.to_numpy(), row=2, method="shap", output=1
    )
    assert fitted.prediction_ == pytest.approx(waterfall.prediction_)
    summary = ContributionSummaryDisplay.from_estimator(
        model, X.to_numpy(), method="shap", output=1
    )
    np.testing.assert_allclose(summary.x_, values[:, summary.order_])
    coloured = ContributionSummaryDisplay.from_result(result, X=X, output=1)
    assert not np.isnan(coloured.colors_).any()
    with pytest.raises(InputError, match="method"):
        WaterfallDisplay.from_estimator(model, X, method="lime")
