"""CounterfactualDisplay: the move from an instance to its counterfactual."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from treelens import (
    CounterfactualDisplay,
    DecisionRegionDisplay,
    InputError,
    PartitionDisplay,
    UnsupportedModelError,
)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def result_for(X, X_cf, found=None):
    """An object with the attributes of treelens' CounterfactualResult."""
    found = np.ones(len(X), bool) if found is None else np.asarray(found)
    return SimpleNamespace(
        X_=np.asarray(X, float), X_cf_=np.asarray(X_cf, float), found_=found
    )


def test_arrow_over_the_partition_of_a_tree(iris):
    X, y = iris
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    x = X[[60, 70]]
    x_cf = x.copy()
    x_cf[:, 2] += 2.0  # petal length changes most, then petal width
    x_cf[:, 3] += 0.8
    x_cf[:, 0] += 0.01
    disp = CounterfactualDisplay.from_result(
        tree, result_for(x, x_cf), index=1, X_background=X, y_background=y
    )
    assert disp.features == (2, 3) and disp.feature_names == ("x2", "x3")
    np.testing.assert_array_equal(disp.start, x[1, [2, 3]])
    np.testing.assert_array_equal(disp.end, x_cf[1, [2, 3]])
    np.testing.assert_allclose(
        disp.arrow_._posA_posB, [tuple(disp.start), tuple(disp.end)]
    )
    assert isinstance(disp.background, PartitionDisplay)
    # The picture is the slice through the instance.
    np.testing.assert_array_equal(disp.background.reference, x[1])
    assert disp.changed == ["x0", "x2", "x3"]
    assert "also changed: x0" in disp.ax_.get_title()
    first = disp.ax_.get_title().splitlines()[0]
    assert first == (
        f"counterfactual: x2 {x[1, 2]:.4g} -> {x_cf[1, 2]:.4g}, "
        f"x3 {x[1, 3]:.4g} -> {x_cf[1, 3]:.4g}"
    )
    # The end of the arrow lies in a region of the counterfactual's predicted class
    # when the other features stay put (only x0 moved, by 0.01, not a split here).
    rects, labels = disp.background.rectangles, disp.background.labels
    inside = (
        (rects[:, 0] < disp.end[0])
        & (disp.end[0] <= rects[:, 1])
        & (rects[:, 2] < disp.end[1])
        & (disp.end[1] <= rects[:, 3])
    )
    assert (
        labels[inside].tolist()
        == tree.predict(np.r_[x[1, :2], x_cf[1, 2:]].reshape(1, -1)).tolist()
    )


def test_arrow_over_the_regions_of_a_forest(iris):
    X, y = iris
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y
    )
    x = X[[10]]
    x_cf = x.copy()
    x_cf[0, 1] -= 1.0
    x_cf[0, 3] += 1.5
    disp = CounterfactualDisplay.from_result(
        forest, result_for(x, x_cf), X_background=X
    )
    assert disp.features == (1, 3)  # -1.0 over std 0.43 beats +1.5 over std 0.76
    assert isinstance(disp.background, DecisionRegionDisplay)
    assert disp.background.x_edges is not None  # exact regions of the ensemble
    np.testing.assert_array_equal(disp.background.reference, x[0])
    disp = CounterfactualDisplay.from_result(
        forest, result_for(x, x_cf), features=("x0", "x1"), kind="regions"
    )
    assert disp.features == (0, 1)


def test_bad_input(iris):
    X, y = iris
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    x = X[:2]
    with pytest.raises(InputError, match="No counterfactual was found for row 1"):
        CounterfactualDisplay.from_result(
            tree, result_for(x, x + 1, found=[True, False]), index=1
        )
    with pytest.raises(InputError, match="twice"):
        CounterfactualDisplay.from_result(
            tree, result_for(x, x + 1), features=(0, "x0")
        )
    with pytest.raises(InputError, match="Unknown feature"):
        CounterfactualDisplay.from_result(
            tree, result_for(x, x + 1), features=(0, "width")
        )
    with pytest.raises(InputError, match="X_cf_"):
        CounterfactualDisplay.from_result(tree, SimpleNamespace(X_=x), x)
    one = DecisionTreeClassifier().fit(X[:, :1], y)
    with pytest.raises(InputError, match="at least two features"):
        CounterfactualDisplay.from_result(one, result_for(X[:1, :1], X[:1, :1] + 1))


def test_real_feature_tweak_result(iris):
    from treelens import feature_tweak

    X, y = iris
    forest = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(
        X, y
    )
    result = feature_tweak(forest, X[[60, 120]], target="other")
    assert result.found_.all()
    disp = CounterfactualDisplay.from_result(
        forest, result, index=1, X_background=X, y_background=y
    )
    x, x_cf = result.X_[1], result.X_cf_[1]
    order = np.argsort(-np.abs(x_cf - x) / X.std(axis=0), kind="stable")
    assert disp.features == (order[0], order[1])
    np.testing.assert_array_equal(disp.start, x[list(disp.features)])
    np.testing.assert_array_equal(disp.end, x_cf[list(disp.features)])
    assert disp.changed == [f"x{j}" for j in np.flatnonzero(result.changed_[1])]
    # When only the two drawn features change, the arrow ends in a region of the
    # counterfactual's class.
    if len(disp.changed) <= 2:
        assert _region_class(disp.background, disp.end) == result.cf_prediction_[1]


def _cell(background, point):
    """Row and column of the exact cell holding ``point`` (cells are (lo, hi])."""
    i = np.searchsorted(background.x_edges, np.float32(point[0]), side="left") - 1
    j = np.searchsorted(background.y_edges, np.float32(point[1]), side="left") - 1
    return j, i


def _region_class(regions, point):
    """The class drawn in the exact cell holding ``point``."""
    return regions.predictions[_cell(regions, point)]


def test_slice_through_the_counterfactual_puts_the_star_in_the_target_region(iris):
    from treelens import counterfactual

    X, y = iris
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    forest.fit(X, y)
    # Row 116's optimal counterfactual changes three features: on the slice
    # through the row, its two largest moves alone do not change the class.
    result = counterfactual(forest, X[[116]], target="other", reference=X)
    x, x_cf = result.X_[0], result.X_cf_[0]
    assert result.changed_[0].sum() == 3
    target_class = forest.predict(x_cf[None, :])[0]

    through_row = CounterfactualDisplay.from_result(forest, result, X_background=X)
    np.testing.assert_array_equal(through_row.background.reference, x)
    probe = x.copy()
    probe[list(through_row.features)] = x_cf[list(through_row.features)]
    slice_class = forest.predict(probe[None, :])[0]
    assert slice_class != target_class
    assert _region_class(through_row.background, through_row.end) == slice_class
    row_class = forest.predict(x[None, :])[0]
    assert row_class != target_class
    assert _region_class(through_row.background, through_row.start) == row_class
    assert "instance's values" in through_row.ax_.get_title()

    through_cf = CounterfactualDisplay.from_result(
        forest, result, X_background=X, slice_at="counterfactual"
    )
    assert through_cf.slice_at == "counterfactual"
    assert through_cf.features == through_row.features
    np.testing.assert_array_equal(through_cf.background.reference, x_cf)
    assert _region_class(through_cf.background, through_cf.end) == target_class
    assert "counterfactual's values" in through_cf.ax_.get_title()
    with pytest.raises(InputError, match="`slice_at` must be 'instance' or"):
        CounterfactualDisplay.from_result(forest, result, slice_at="row")


def test_title_names_only_the_drawn_features_that_moved_in_table_numbers(iris):
    X, y = iris
    X = X * 10_000  # numbers past a thousand
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    x_cf = X[[70]].copy()
    x_cf[0, 2] = 12_345.0
    disp = CounterfactualDisplay.from_result(
        tree, result_for(X[[70]], x_cf), features=(2, 3), X_background=X
    )
    assert disp.ax_.get_title() == f"counterfactual: x2 {X[70, 2]:,.0f} -> 12,345"
    unchanged = CounterfactualDisplay.from_result(
        tree, result_for(X[[70]], X[[70]]), features=(2, 3), X_background=X
    )
    assert unchanged.ax_.get_title() == "counterfactual: x2 and x3 unchanged"


def test_title_names_a_few_other_changes_and_fits_the_figure():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=200, n_features=14, random_state=0)
    names = [f"a rather long feature name {j}" for j in range(14)]
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    forest.fit(pd.DataFrame(X, columns=names), y)
    x_cf = X[:1] + np.linspace(3.0, 1.0, 14)  # every feature changes
    disp = CounterfactualDisplay.from_result(
        forest, result_for(X[:1], x_cf), X_background=X
    )
    title = disp.ax_.get_title()
    assert max(len(line) for line in title.splitlines()) <= 90
    flat = " ".join(title.split())
    assert "and 6 more; other features at the instance's values" in flat
    assert sum(f"{name}," in flat or f"{name} and" in flat for name in names) == 6


@pytest.fixture(scope="module")
def diabetes():
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True)


def _cell_value(surface, point):
    """The value drawn in the exact cell holding ``point``."""
    return surface.values[_cell(surface, point)]


def test_arrow_over_the_predicted_value_of_a_regressor(diabetes):
    from sklearn.ensemble import RandomForestRegressor

    from treelens import PredictionSurfaceDisplay, counterfactual

    X, y = diabetes
    model = RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0)
    model.fit(X, y)
    low = float(np.quantile(model.predict(X), 0.8))
    row = int(np.argmin(model.predict(X)))
    result = counterfactual(model, X[[row]], target=(low, None), reference=X)
    assert result.found_[0] and model.predict(result.X_cf_)[0] >= low
    disp = CounterfactualDisplay.from_result(
        model, result, X_background=X, y_background=y
    )
    surface = disp.background
    assert isinstance(surface, PredictionSurfaceDisplay) and surface.exact
    np.testing.assert_array_equal(surface.reference, X[row])
    # One level line, at the range's finite end: it separates the cells predicted
    # at least ``low`` from the others.
    assert len(surface.contours_) == 1
    assert surface.colorbar_.ax.lines[0].get_ydata()[0] == pytest.approx(low)
    # The cells are the model's own predictions on the slice through the row.
    point = disp.start
    probe = X[row].copy()
    probe[list(disp.features)] = point
    assert _cell_value(surface, point) == pytest.approx(model.predict([probe])[0])
    # When only the two drawn features change, the arrow ends in a cell of the
    # target range.
    if len(disp.changed) <= 2:
        assert _cell_value(surface, disp.end) >= low
    with pytest.raises(UnsupportedModelError, match="needs a classifier"):
        CounterfactualDisplay.from_result(model, result, kind="regions")


def test_arrow_over_the_anomaly_score_of_an_isolation_forest(diabetes):
    from sklearn.ensemble import IsolationForest

    from treelens import PredictionSurfaceDisplay, counterfactual

    X, _ = diabetes
    model = IsolationForest(n_estimators=10, random_state=0).fit(X)
    row = int(np.argmin(model.score_samples(X)))
    result = counterfactual(model, X[[row]], target="inlier", reference=X)
    assert result.found_[0] and model.predict(result.X_cf_)[0] == 1
    disp = CounterfactualDisplay.from_result(model, result, X_background=X)
    surface = disp.background
    assert isinstance(surface, PredictionSurfaceDisplay) and surface.negate
    # The level line is the threshold of the anomaly score drawn, -offset_.
    assert surface.colorbar_.ax.lines[0].get_ydata()[0] == pytest.approx(-model.offset_)
    assert surface.points_ is not None  # the reference rows, in white


def test_surface_refuses_a_classifier(iris):
    X, y = iris
    forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    forest.fit(X, y)
    with pytest.raises(UnsupportedModelError, match="needs a regressor"):
        CounterfactualDisplay.from_result(
            forest, result_for(X[:1], X[:1] + 1), kind="surface"
        )
    with pytest.raises(InputError, match="'surface'"):
        CounterfactualDisplay.from_result(
            forest, result_for(X[:1], X[:1] + 1), kind="contours"
        )


def test_a_row_with_a_missing_value_is_drawn_through_its_own_slice(iris):
    from treelens import counterfactual, to_forest

    X, y = iris
    X = X.copy()
    X[::3, 1] = np.nan  # the forest learns where missing values go
    forest = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    forest.fit(X, y)
    row = 120
    assert np.isnan(X[row, 1])
    result = counterfactual(forest, X[[row]], target="other", reference=X)
    x, x_cf = result.X_[0], result.X_cf_[0]
    assert np.isnan(x_cf[1])  # the missing value stays missing

    display = CounterfactualDisplay.from_result(forest, result, X_background=X)
    # No axis for the missing feature, which is not called changed.
    assert 1 not in display.features
    names = to_forest(forest).feature_names
    moved = np.flatnonzero(result.changed_[0])
    assert 1 not in moved
    assert display.changed == [names[j] for j in moved]
    assert (
        _region_class(display.background, display.start)
        == forest.predict(x[None, :])[0]
    )
    probe = x.copy()
    probe[list(display.features)] = x_cf[list(display.features)]
    assert (
        _region_class(display.background, display.end)
        == forest.predict(probe[None, :])[0]
    )


def test_rows_left_out_for_missing_values_are_counted_in_the_background(iris):
    """The row and its counterfactual are the arrow's ends, not rows of the
    background: the note counts the background's rows alone."""
    from treelens import MissingValuesWarning

    X, y = iris
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y
    )
    background = X.copy()
    background[[4, 9, 20], 3] = np.nan
    x = X[[10]]
    x_cf = x.copy()
    x_cf[0, 3] += 1.5
    with pytest.warns(MissingValuesWarning, match=f"3 of {len(X)} rows") as caught:
        disp = CounterfactualDisplay.from_result(
            forest,
            result_for(x, x_cf),
            features=(2, 3),
            X_background=background,
            y_background=y,
        )
    assert all(f"of {len(X) + 2} rows" not in str(w.message) for w in caught)
    assert len(disp.background.X) == len(X) and len(disp.background.y) == len(X)
    np.testing.assert_array_equal(disp.background.skipped_rows_, [4, 9, 20])
