"""`treelens plot surface` and the prediction surface of the HTML report."""

import html
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import shap
import skops.io
from sklearn.ensemble import (
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)

from tests.cli.test_cli import assert_bad_input, run
from tests.models import PIPELINE_FACTORIES
from treelens import MissingValuesWarning
from treelens._plots._partition import cell_points
from treelens._report._page import render_report
from treelens._report._pictures import (
    picture_figure,
    surface_caption,
    surface_figure,
    top_score_features,
)

COLUMNS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A regressor, an IsolationForest and a classifier saved with skops, and
    their data with a target column."""
    root = tmp_path_factory.mktemp("surface")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=COLUMNS)
    price = pd.Series(3 * X["c"] + X["a"] ** 2 + 0.1 * rng.normal(size=120))
    regressor = RandomForestRegressor(5, max_depth=4, random_state=0).fit(X, price)
    iso = IsolationForest(n_estimators=10, max_samples=64, random_state=0).fit(X)
    classifier = RandomForestClassifier(3, max_depth=3, random_state=0)
    classifier.fit(X, price > 0)
    for name, model in [("reg", regressor), ("iso", iso), ("clf", classifier)]:
        skops.io.dump(model, root / f"{name}.skops")
    X.assign(price=price).to_csv(root / "data.csv", index=False)
    X.assign(label=price > 0).to_csv(root / "classes.csv", index=False)
    return {"root": root, "X": X, "y": price, "reg": regressor, "iso": iso}


def test_plot_surface_writes_a_png(files, tmp_path):
    root = files["root"]
    out = tmp_path / "surface.png"
    result = run("plot", "surface", root / "reg.skops", root / "data.csv",
                 "--target", "price", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "chosen.svg"
    result = run("plot", "surface", root / "reg.skops", root / "data.csv",
                 "--target", "price", "--features", "d,b", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert b"<svg" in out.read_bytes()[:500]


def test_default_pair_is_the_two_of_highest_mdi(files):
    model = files["reg"]
    top = [COLUMNS[i] for i in np.argsort(-model.feature_importances_)[:2]]
    figure = picture_figure("surface", model, files["X"], files["y"])
    ax = figure.axes[0]
    assert [ax.get_xlabel(), ax.get_ylabel()] == top


def test_isolation_forest_surface_is_its_anomaly_score(files, tmp_path):
    root, iso, X = files["root"], files["iso"], files["X"]
    out = tmp_path / "iso.png"
    result = run("plot", "surface", root / "iso.skops", root / "data.csv",
                 "--target", "price", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG")
    # Its pair is the two columns of highest mean |SHAP| (MDI is refused).
    values = shap.TreeExplainer(iso).shap_values(X)
    top = list(X.columns[np.argsort(-np.abs(values).mean(axis=0), kind="stable")][:2])
    _, display = surface_figure(iso, X, features=top)
    assert [display.ax_.get_xlabel(), display.ax_.get_ylabel()] == top
    assert picture_figure("surface", iso, X).axes[0].get_xlabel() == top[0]
    assert display.value_name == "anomaly score (-score_samples)"
    rows = np.tile(display.reference, (display.values.size, 1))
    gx, gy = np.meshgrid(
        cell_points(display.x_edges, np.float32),
        cell_points(display.y_edges, np.float32),
    )
    rows[:, display.features[0]], rows[:, display.features[1]] = gx.ravel(), gy.ravel()
    expected = -iso.score_samples(pd.DataFrame(rows, columns=COLUMNS))
    np.testing.assert_array_equal(display.values.ravel(), expected)
    assert len(display.contours_) == 1  # the threshold, -offset_


def test_plot_surface_of_a_classifier_is_one_line(files, tmp_path):
    root = files["root"]
    result = run("plot", "surface", root / "clf.skops", root / "classes.csv",
                 "--target", "label", "--out", tmp_path / "c.png")  # fmt: skip
    assert_bad_input(result, "needs a regressor or an IsolationForest")
    assert not (tmp_path / "c.png").exists()


def test_report_of_a_regressor_draws_its_surface(files):
    page = render_report(files["reg"], files["X"], files["y"], max_counterfactuals=0)
    assert 'alt="Prediction surface"' in page
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))
    model = files["reg"]
    first, second = (COLUMNS[i] for i in np.argsort(-model.feature_importances_)[:2])
    assert (
        f"The whole model's prediction over {first} and {second}, the other "
        "features held at their median, exact: one cell per rectangle" in text
    )
    assert "coloured by their target on the same scale" in text


def test_surface_caption_says_exact_or_grid_and_why(files):
    model, X = files["reg"], files["X"]
    _, exact = surface_figure(model, X, features=["a", "c"])
    assert exact.exact
    caption = surface_caption(exact)
    assert f"({exact.values.size:,} cells)" in caption
    _, grid = surface_figure(model, X, features=["a", "c"], max_cells=10)
    assert not grid.exact and grid.n_cells == exact.values.size
    assert surface_caption(grid, max_cells=10) == (
        f"on a 100 x 100 grid (the overlay of every tree's split lines has "
        f"{exact.values.size:,} cells, more than 10)"
    )


def test_caption_of_a_categorical_axis_names_its_bands():
    case = PIPELINE_FACTORIES["sklearn.Pipeline[ordinal+boosting]"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValuesWarning)
        _, display = surface_figure(
            case.model, case.X, case.y, features=["income", "employment"]
        )
    assert surface_caption(display) == (
        "one band per category of employment, income cut into 100 equal cells, "
        "each predicted at its centre"
    )


def test_isolation_pair_from_a_sample_of_many_rows(files):
    iso, X = files["iso"], files["X"]
    sampled = top_score_features(iso, X, max_rows=40)
    assert len(set(sampled)) == 2 and set(sampled) <= set(COLUMNS)
    # The same seeded sample of rows, whether X is a table or an array.
    assert top_score_features(iso, X.to_numpy(), max_rows=40) == sampled
