"""The plot command's SHAP pictures: a row's waterfall and the summary of rows."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from treelens import InputError, shap_values
from treelens._report._pictures import SUMMARY_MAX_ROWS, picture_figure


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
    return model.fit(X, y), X, y


def _widths(figure):
    return np.array([bar.get_width() for bar in figure.axes[0].patches])


def test_waterfall_draws_the_rows_shap_values_of_the_class_asked(iris):
    model, X, y = iris
    expected = shap_values(model, X.iloc[[70]]).values_[0]  # (features, classes)
    for target, column in ((None, int(np.argmax(model.predict_proba(X)[70]))), (2, 2)):
        figure = picture_figure("waterfall", model, X, y, row=70, target=target)
        want = expected[:, column]
        want = want[np.argsort(-np.abs(want), kind="stable")]
        np.testing.assert_allclose(_widths(figure), want[want != 0], atol=1e-12)


def test_summary_draws_every_rows_shap_values(iris):
    model, X, y = iris
    figure = picture_figure("summary", model, X, y, target=1)
    drawn = [c.get_offsets()[:, 0] for c in figure.axes[0].collections]
    values = shap_values(model, X).values_[:, :, 1]
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")
    for points, j in zip(drawn, order):
        np.testing.assert_allclose(np.sort(points), np.sort(values[:, j]), atol=1e-12)


def test_summary_of_many_rows_draws_a_seeded_sample():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(SUMMARY_MAX_ROWS + 500, 3)), columns=list("abc"))
    y = X["a"] + rng.normal(scale=0.1, size=len(X))
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, y)
    first = picture_figure("summary", model, X, y)
    again = picture_figure("summary", model, X, y)
    points = [c.get_offsets() for c in first.axes[0].collections]
    assert all(len(p) == SUMMARY_MAX_ROWS for p in points)
    for a, b in zip(points, (c.get_offsets() for c in again.axes[0].collections)):
        np.testing.assert_array_equal(a, b)


def test_contribution_pictures_need_data(iris):
    model, _, _ = iris
    for kind in ("waterfall", "summary"):
        with pytest.raises(InputError, match=kind):
            picture_figure(kind, model)
