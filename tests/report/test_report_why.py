"""The report's "why this decision" blocks beside each counterfactual row."""

from __future__ import annotations

import html
import re

import pandas as pd
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from treelens import decision_path
from treelens._report._page import render_report
from treelens._report._tables import counterfactuals


def test_each_counterfactual_row_has_its_sentence_and_waterfall():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X, y = X.iloc[::5], y.iloc[::5].rename("species")
    model = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
    model.fit(X, y)
    page = render_report(model, X, y, max_counterfactuals=3)
    rows, result = counterfactuals(model, X, target=2, max_rows=3)
    assert "Why this decision" in page
    sentences = decision_path(model, X.iloc[rows]).sentences_
    for row, sentence in zip(rows, sentences):
        assert f"<h4>Row {row}</h4>" in page
        assert html.escape(sentence) in page
        assert f'alt="Contributions of row {row}"' in page
    # The changes shown beside a found row are its counterfactual's.
    changes = result.to_frame()
    first = int(pd.Series(result.found_).idxmax())
    block = page.split(f"<h4>Row {rows[first]}</h4>", 1)[1].split("<h4>Row ", 1)[0]
    for feature in changes[changes["row"] == first]["feature"]:
        assert re.search(rf"<td>{re.escape(str(feature))}</td>", block)
