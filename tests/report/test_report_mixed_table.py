"""The report of a pipeline over a table with categories and missing values."""

import html
import re

import numpy as np
import pytest

from tests.models import PIPELINE_FACTORIES
from treelens._report._page import render_report


def _text(page):
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture(scope="module")
def case():
    return PIPELINE_FACTORIES["sklearn.Pipeline"]()


@pytest.fixture(scope="module")
def page(case):
    X = case.X.iloc[:150]
    return render_report(case.model, X, case.y[:150], max_counterfactuals=3)


def test_decision_regions_are_drawn_over_missing_values(page):
    text = _text(page)
    caption = text[text.index("Decision regions") :][:400]
    assert "No view could be chosen" not in caption
    assert "NaN" not in caption and "`reference`" not in caption
    assert "The whole model's predicted class over" in caption


def test_changes_show_no_tree_and_leaf_of_the_exact_search(page):
    text = _text(page)
    section = text[text.index("Changes, one per feature") :][:200]
    assert "before after delta cost" in section
    assert "tree" not in section and "leaf" not in section
    assert "-1" not in section


def test_no_changes_table_when_no_counterfactual_was_found(case):
    # A row whose target cannot be reached with its income kept missing.
    X = case.X
    missing = X["income"].isna().to_numpy()
    predicted = case.model.predict(X)
    rows = [i for i in range(len(X)) if missing[i] and predicted[i] == 0][:1]
    assert rows
    page = render_report(
        case.model,
        X.iloc[rows],
        case.y[rows],
        target=1,
        constraints={"immutable": ["employment", "region", "age", "owner"]},
    )
    text = _text(page)
    assert "found for 0 of 1" in text
    assert "Changes, one per feature" not in text


def test_one_row_gives_no_undefined_scores_and_no_warnings():
    import warnings

    import numpy as np
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    for model, y in [
        (RandomForestRegressor(3, max_depth=2, random_state=0), X[:, 0]),
        (RandomForestClassifier(3, max_depth=2, random_state=0), X[:, 0] > 0),
    ]:
        model.fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            text = _text(render_report(model, X[:1], y[:1], max_counterfactuals=0))
        scores = text[text.index("Scores on this data") :][:120]
        assert "nan" not in scores and "R²" not in scores


def test_partition_is_drawn_in_the_top_numeric_features(page):
    text = _text(page)
    caption = text[text.index("Tree diagram.") :][:600]
    assert "The rectangles the first tree cuts in income and age" in caption
    assert "is categorical" not in caption


def test_the_arrow_starts_from_the_first_complete_row_answered(case):
    """The first row answered misses its income (the counterfactual fills it):
    the arrow is drawn for the next row, whose values are all there."""
    X = case.X
    declined = case.model.predict(X) == 0
    missing = X["income"].isna().to_numpy()
    complete = X.notna().all(axis=1).to_numpy()
    rows = [
        int(np.flatnonzero(declined & missing)[0]),
        int(np.flatnonzero(declined & complete)[0]),
    ]
    page = render_report(
        case.model,
        X,
        case.y,
        rows=rows,
        target=1,
        fill_missing=["income"],
        constraints={"immutable": ["age", "employment", "region", "owner"]},
    )
    text = _text(page)
    assert "found for 2 of 2" in text
    assert f"Counterfactual of row {rows[1]}." in text
    assert "`reference` must be" not in text
    changes = text[text.index("Changes, one per feature") :][:200]
    assert "income missing" in changes


def test_counterfactual_answer_says_how_its_cost_is_measured(page):
    text = _text(page)
    assert (
        "cost: L1 in median absolute deviations of the data, each column's change "
        "divided by its typical spread" in text
    )
