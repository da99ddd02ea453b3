"""A regressor's page and pictures answer towards a range of its predicted value."""

import html
import re

import numpy as np
import pytest
import skops.io
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

import treelens
from tests.cli.test_cli import assert_bad_input, run
from treelens._core._numbers import format_number
from treelens._report._page import render_report


@pytest.fixture(scope="module")
def diabetes(tmp_path_factory):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0)
    model.fit(X, y)
    root = tmp_path_factory.mktemp("regressor")
    skops.io.dump(model, root / "forest.skops")
    X.assign(target=y).iloc[:80].to_csv(root / "data.csv", index=False)
    return model, X, y, root


def _text(page):
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _answer(page):
    text = _text(page)
    start = text.index("The answer for the chosen rows")
    return text[start : text.index("Feature importance", start)]


def test_counterfactuals_reach_the_range_and_are_those_of_the_library(diabetes):
    model, X, y, _ = diabetes
    low = 200.0
    page = render_report(model, X, y, target=(low, None), max_counterfactuals=3)
    answer = _answer(page)
    below = np.flatnonzero(model.predict(X) < low)[:3]
    assert "For the first 3 rows not predicted at least 200:" in answer
    assert "that makes the model predict a value at least 200; found for 3 of 3" in (
        answer
    )
    # The rows answered and their costs are those of treelens.counterfactual's
    # default, and every counterfactual reaches the range by the model's predict.
    result = treelens.counterfactual(
        model, X.iloc[below], target=(low, None), reference=X
    )
    assert (model.predict(result.X_cf_) >= low).all()
    table = re.findall(
        r'<tr><td class="num">(\d+)</td><td class="num">[^<]*</td><td>yes</td>'
        r'<td class="num">([^<]+)</td>',
        page,
    )
    assert [int(r) for r, _ in table] == [int(r) for r in below]
    assert [c for _, c in table] == [format_number(c) for c in result.cost_]
    # The arrow is drawn over the predicted value, the range's end a level line.
    assert f'alt="Counterfactual of row {below[0]}"' in page
    assert "the ends of the target range the lines" in _text(page)


def test_a_closed_range_and_rows_already_inside_it(diabetes):
    model, X, y, _ = diabetes
    predicted = model.predict(X)
    inside = (predicted >= 100) & (predicted <= 150)
    page = render_report(model, X[inside], y[inside], target=(100, 150))
    assert "Every row is already predicted within [100, 150]; nothing to change." in (
        _answer(page)
    )


def test_without_a_range_the_page_says_how_to_ask(diabetes):
    model, X, y, _ = diabetes
    page = render_report(model, X, y, max_counterfactuals=2)
    answer = _answer(page)
    assert "No counterfactuals: a regressor's counterfactuals aim for a range" in (
        answer
    )
    low, median, high = np.percentile(model.predict(X), [0, 50, 100])
    assert (
        f"The predictions of these rows run from {format_number(low)} to "
        f"{format_number(high)} (median {format_number(median)}): for example "
        f"--target-range {format_number(median)}:" in answer
    )
    assert 'href="#answer"' in page


def test_command_line_report_and_plot_take_a_target_range(diabetes, tmp_path):
    model, X, _, root = diabetes
    out = tmp_path / "report.html"
    result = run("report", root / "forest.skops", root / "data.csv", "--target",
                 "target", "--target-range", ":100", "--max-counterfactuals", "2",
                 "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    answer = _answer(out.read_text())
    assert "that makes the model predict a value at most 100; found for 2 of 2" in (
        answer
    )
    picture = tmp_path / "cf.png"
    above = int(np.flatnonzero(model.predict(X.iloc[:80]) > 100)[0])
    result = run("plot", "counterfactual", root / "forest.skops", root / "data.csv",
                 "--target", "target", "--row", above, "--target-range", ":100",
                 "--out", picture)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_command_line_refuses_a_wrong_target(diabetes, tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    _, X, y, root = diabetes
    classifier = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    skops.io.dump(classifier.fit(X, y > 150), tmp_path / "classifier.skops")
    X.iloc[:20].to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "report.html"
    result = run("report", tmp_path / "classifier.skops", tmp_path / "rows.csv",
                 "--target-range", "0:1", "--out", out)  # fmt: skip
    assert_bad_input(result, "--target-range needs a regressor")
    result = run("report", root / "forest.skops", tmp_path / "rows.csv",
                 "--target-range", "100", "--out", out)  # fmt: skip
    assert_bad_input(result, "--target-range must look like LOW:HIGH; got '100'")
    result = run("report", root / "forest.skops", tmp_path / "rows.csv",
                 "--target-class", "1", "--out", out)  # fmt: skip
    assert_bad_input(result, "--target-class needs a classifier")
    result = run("plot", "counterfactual", root / "forest.skops",
                 tmp_path / "rows.csv", "--row", "0", "--out", tmp_path / "cf.png")  # fmt: skip
    assert_bad_input(result, "--target-range LOW:HIGH for a regressor")
    # A row already in the range has no move to draw: said, not drawn as a dot.
    model = diabetes[0]
    inside = int(np.flatnonzero(model.predict(X.iloc[:20]) <= 150)[0])
    result = run("plot", "counterfactual", root / "forest.skops",
                 tmp_path / "rows.csv", "--row", inside, "--target-range", ":150",
                 "--out", tmp_path / "cf.png")  # fmt: skip
    assert_bad_input(result, f"Row {inside} already meets the target")
    assert not (tmp_path / "cf.png").exists()
    assert not out.exists()
