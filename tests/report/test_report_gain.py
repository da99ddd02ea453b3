"""The report of a model whose trees record gains, not impurities."""

import html
import re

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from treelens._report._page import render_report


def test_importance_of_a_gain_model_speaks_of_gain():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    page = render_report(model, X, y, max_counterfactuals=0)
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))
    section = text[text.index("Feature importance") :][:400]
    assert "Gain is read from the trees" in section
    assert "MDI is read" not in section
    assert "gain_std" not in section and "gain std (trees)" in section
