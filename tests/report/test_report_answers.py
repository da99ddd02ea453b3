"""The report answers first: model card, answer, importance, pictures, folded nodes."""

import html
import re

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from tests.cli.test_catalog import FEATURES, loan_table
from treelens._core._numbers import format_number
from treelens._report._page import render_report


@pytest.fixture(scope="module")
def loans():
    table = loan_table(600)
    X, y = table[FEATURES], table["approved"]
    model = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0)
    return model.fit(X, y), X, y


def _text(page):
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_sections_come_answers_first_and_nodes_folded(loans):
    model, X, y = loans
    page = render_report(model, X, y, max_counterfactuals=2)
    order = [page.index(f'id="{a}"') for a in ("model", "answer", "importance")]
    order += [page.index('id="pictures"'), page.index('id="nodes"')]
    assert order == sorted(order)
    nodes = page[page.index('id="nodes"') :]
    assert "<details>" in nodes and nodes.index("<details>") < nodes.index("<table>")


def test_training_data_is_recognised_and_named(loans):
    model, X, y = loans
    training = render_report(model, X, y, max_counterfactuals=0)
    assert 'id="training-data-warning"' in training
    assert "MDI on the given data" in training and "held-out MDI</th>" not in training
    held_out = render_report(model, X.iloc[::2], y.iloc[::2], max_counterfactuals=0)
    assert 'id="training-data-warning"' not in held_out
    assert "held-out MDI" in held_out and "MDI on the given data" not in held_out
    assert "not exactly the training rows" in _text(held_out)


def test_rows_constraints_and_missing_values(loans):
    model, X, y = loans
    missing = int(np.flatnonzero(X["income"].isna())[0])
    declined = np.flatnonzero(
        (model.predict(X) != 1) & X.notna().all(axis=1).to_numpy()
    )[:2]
    rows = [missing, *map(int, declined)]
    page = render_report(
        model, X, y, rows=rows, constraints={"immutable": ["age"]}, cost="l1"
    )
    text = _text(page)
    # The forest routes missing values: the row with one is answered too.
    assert f"For rows {missing}, {declined[0]}, {declined[1]}:" in text
    assert "age fixed" in text
    assert "found for 3 of 3" in text
    answer = text[text.index("The answer for the chosen rows") :]
    answer = answer[: answer.index("Feature importance")]
    assert not re.search(r"\bage:", answer)  # immutable: never changed


def test_sample_of_rows_is_said(loans):
    model, X, y = loans
    page = render_report(model, X, y, max_counterfactuals=0, sample_rows=200)
    assert "a random sample of 200 of the 600 rows" in _text(page)
    page = render_report(model, X, y, max_counterfactuals=0, sample_rows=None)
    assert "measured on all 600 rows; permutation importance on 600 of them" in _text(
        page
    )


def test_numbers_print_in_their_own_scale():
    assert [format_number(v) for v in (22000.0, 15870.4, 0.04632, 2.5e-7)] == [
        "22,000",
        "15,870",
        "0.04632",
        "2.500e-07",
    ]


def test_a_picture_that_cannot_be_drawn_says_why_in_words(loans):
    model, X, y = loans
    only_missing = X.copy()
    only_missing["income"] = np.nan
    page = render_report(model, only_missing, y, max_counterfactuals=0)
    assert "Partition is not drawn: Feature 'income' has no value in any row" in _text(
        page
    )
    assert "Axis limits" not in page


def test_a_model_too_large_for_the_exact_search_is_answered_by_tweaking(
    loans, monkeypatch
):
    from treelens._report import _tables

    model, X, y = loans
    monkeypatch.setattr(_tables, "EXACT_PROGRAM_BUDGET", 1)
    notes: list[str] = []
    _, result = _tables.counterfactuals(
        model, X.fillna(0), target=1, max_rows=2, notes=notes
    )
    assert result.method_ == "feature_tweak" and len(notes) == 1
    assert "so feature tweaking answered" in notes[0]
    page = _text(render_report(model, X, y, max_counterfactuals=2))
    assert "so feature tweaking answered" in page and "(feature tweaking, " in page
    # Options only the exact search has keep it (the library says what is wrong).
    assert _tables.exact_or_tweak(model, "auto", "l1", exact_only=True) == ("auto", "")
    monkeypatch.undo()
    assert _tables.exact_or_tweak(model, "auto", "l1") == ("auto", "")
