"""The report's counterfactual picture: the slice that shows the counterfactual in
the target's region."""

import html
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import treelens
from tests.plots.test_display_counterfactual import _region_class
from treelens import CounterfactualDisplay
from treelens._report._page import render_report


@pytest.fixture
def drawn(monkeypatch):
    """Every CounterfactualDisplay the report draws."""
    displays = []
    original = CounterfactualDisplay.from_result.__func__

    def spy(cls, *args, **kwargs):
        display = original(cls, *args, **kwargs)
        displays.append(display)
        return display

    monkeypatch.setattr(CounterfactualDisplay, "from_result", classmethod(spy))
    return displays


def _text(page):
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X.iloc[:200], y.iloc[:200]


def test_many_changes_are_drawn_through_the_counterfactual(cancer, drawn):
    X, y = cancer
    model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, y)
    page = render_report(model, X, y, target=1, max_counterfactuals=1)
    (display,) = drawn
    row = int(np.flatnonzero(model.predict(X) != 1)[0])
    result = treelens.counterfactual(model, X.iloc[[row]], target=1, reference=X)
    n_changed = int(result.changed_[0].sum())
    assert n_changed > 2  # the premise: more than the two drawn features change
    x_cf = np.asarray(result.X_cf_, dtype=float)[0]
    np.testing.assert_array_equal(display.x_cf, x_cf)
    assert display.slice_at == "counterfactual"
    np.testing.assert_array_equal(display.background.reference, x_cf)
    # The end of the arrow lies in the target's region, as the model predicts.
    assert model.predict(pd.DataFrame([x_cf], columns=X.columns))[0] == 1
    assert _region_class(display.background, display.end) == 1
    assert (
        f"every other feature at the counterfactual's value ({n_changed - 2} more "
        "changed), so the end of the arrow lies where the model would predict 1."
    ) in _text(page)


def test_two_changes_are_drawn_through_the_row(cancer, drawn):
    X, y = cancer
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    page = render_report(model, X, y, target=1, max_counterfactuals=1)
    (display,) = drawn
    assert len(display.changed) <= 2
    assert display.slice_at == "instance"
    np.testing.assert_array_equal(display.background.reference, display.x)
    assert "every other feature at the row's value." in _text(page)
