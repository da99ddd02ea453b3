"""Pictures of a pipeline: a categorical axis drawn as labelled bands."""

import warnings

import numpy as np
import pytest

import treelens
from tests.models import PIPELINE_FACTORIES
from treelens import (
    DecisionRegionDisplay,
    InputError,
    MissingValuesWarning,
    PartitionDisplay,
)


def test_categorical_axis_is_bands_with_labels():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    forest = treelens.to_forest(case.model)
    with pytest.warns(MissingValuesWarning, match="rows have no value of 'income'"):
        display = DecisionRegionDisplay.from_estimator(
            case.model, case.X, features=("income", "employment"), y=case.y
        )
    labels = forest.features[forest.feature_names.index("employment")].categories
    k = len(labels)
    np.testing.assert_array_equal(display.y_edges, np.arange(k + 1) - 0.5)
    ticks = [t.get_text() for t in display.ax_.get_yticklabels()]
    assert ticks == list(labels)
    # Each band is the model's prediction for that category.
    centres = 0.5 * (display.x_edges[:-1] + display.x_edges[1:])
    rows = case.X.iloc[[0] * k].copy()
    rows["employment"] = list(labels)
    for column, value in zip(forest.feature_names, display.reference):
        if (
            column not in ("income", "employment")
            and not forest.features[forest.feature_names.index(column)].categories
        ):
            rows[column] = value
    region = forest.features[forest.feature_names.index("region")].categories
    rows["region"] = region[int(display.reference[3])]
    rows["income"] = centres[len(centres) // 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = case.model.predict(rows)
    np.testing.assert_array_equal(display.predictions[:, len(centres) // 2], expected)


def test_partition_of_a_categorical_axis_is_refused_with_the_alternative():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    with pytest.raises(
        InputError,
        match="'employment' is categorical; .* draw this pair with "
        "DecisionRegionDisplay",
    ):
        PartitionDisplay.from_estimator(
            case.model, case.X, features=("income", "employment"), tree_index=0
        )
    # A regressor's alternative is its prediction surface.
    boosting = PIPELINE_FACTORIES["sklearn.Pipeline[ordinal+boosting]"]()
    with pytest.raises(
        InputError, match="'region' is categorical; .*PredictionSurfaceDisplay"
    ):
        PartitionDisplay.from_estimator(
            boosting.model, boosting.X, features=("region", "age"), tree_index=0
        )
    # Numeric axes: the categorical columns are held at their most frequent value.
    with pytest.warns(MissingValuesWarning, match="rows have no value of 'income'"):
        display = PartitionDisplay.from_estimator(
            case.model, case.X, features=("income", "age"), tree_index=0
        )
    assert display.ax_ is not None


def test_reference_row_in_the_users_columns():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    forest = treelens.to_forest(case.model)
    row = case.X.iloc[3]  # a Series holding category labels
    assert any(isinstance(v, str) for v in row.to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValuesWarning)
        by_series = DecisionRegionDisplay.from_estimator(
            case.model, case.X, features=("income", "employment"), reference=row
        )
        by_frame = DecisionRegionDisplay.from_estimator(
            case.model,
            case.X,
            features=("income", "employment"),
            reference=case.X.iloc[[3]],
        )
    codes = forest.encode(case.X.iloc[[3]])[0]
    np.testing.assert_array_equal(by_series.reference, codes)
    np.testing.assert_array_equal(by_frame.reference, codes)
    np.testing.assert_array_equal(by_series.predictions, by_frame.predictions)
    with pytest.raises(InputError, match="one row; got a table of 2 rows"):
        DecisionRegionDisplay.from_estimator(
            case.model,
            case.X,
            features=("income", "employment"),
            reference=case.X.iloc[:2],
        )


@pytest.mark.filterwarnings("ignore::treelens.MissingValuesWarning")
def test_exact_regions_through_missing_indicators_and_bins_are_the_pipelines():
    """Income reaches the model with its missing indicator, age as bins: the
    exact regions' split lines are raw incomes and bin edges (no line at an
    indicator's infinite threshold), and every cell is predicted as the
    pipeline predicts it, with the reference's employment present or missing."""
    case = PIPELINE_FACTORIES["sklearn.Pipeline[indicators+bins+target]"]()
    X = case.X
    for employment in ("salaried", np.nan):
        reference = X.iloc[[0]].assign(employment=employment, income=50_000.0)
        display = DecisionRegionDisplay.from_estimator(
            case.model,
            X,
            features=("income", "age"),
            reference=reference,
            exact=True,
        )
        assert np.isfinite(display.x_edges).all() and np.isfinite(display.y_edges).all()
        xs = (display.x_edges[:-1] + display.x_edges[1:]) / 2
        ys = (display.y_edges[:-1] + display.y_edges[1:]) / 2
        xx, yy = np.meshgrid(xs, ys)
        rows = reference.iloc[np.zeros(xx.size, dtype=int)].reset_index(drop=True)
        rows["income"], rows["age"] = xx.ravel(), yy.ravel()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = case.model.predict(rows)
        np.testing.assert_array_equal(display.predictions.ravel(), expected)
    # The age lines are the bin edges the trees read: the last age of a bin
    # (ages equal to an edge belong to the bin above).
    edges = case.model[0].named_transformers_["age"].bin_edges_[0][1:-1]
    lines = np.nextafter(display.y_edges[1:-1], np.inf)
    assert lines.size and np.isin(lines, edges).all()
