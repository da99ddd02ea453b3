"""The report of a raw XGBoost or LightGBM Booster shows the Booster's own numbers.

A raw Booster (no scikit-learn wrapper) has no ``predict(X)`` of labels, and the
Forest built from it keeps no ``fitted_model``: the report predicts through the
Forest.  That Forest repeats each library's arithmetic (XGBoost's float32 sums,
sigmoid and softmax, with the C library's ``expf``; LightGBM's float64 sums and
the C library's ``exp``), so its probabilities and values are the Booster's
own ``predict`` to the last bit, and the page shows exactly those.
"""

from __future__ import annotations

import lightgbm
import numpy as np
import pandas as pd
import pytest
import xgboost
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    mean_absolute_error,
    r2_score,
)

import treelens
from tests.models import make_data
from tests.report.test_report_object import _text
from treelens._core._numbers import format_number
from treelens._explain._path import decision_path
from treelens._report._tables import predict

CASES = [
    ("xgboost", "binary:logistic"),
    ("xgboost", "multi:softprob"),
    ("xgboost", "reg:squarederror"),
    ("lightgbm", "binary"),
    ("lightgbm", "multiclass"),
    ("lightgbm", "regression"),
]


def _booster(library, objective, X, y):
    """A Booster trained by the library's own ``train``, and its ``predict`` of X
    (probabilities of class 1, of every class, or values)."""
    n_classes = 3 if objective.startswith("multi") else 2
    if library == "xgboost":
        params = {"objective": objective, "max_depth": 3, "eta": 0.5, "nthread": 1}
        if n_classes == 3:
            params["num_class"] = 3
        booster = xgboost.train(params, xgboost.DMatrix(X, y), 6)
        return booster, booster.predict(xgboost.DMatrix(X))
    params = {"objective": objective, "num_leaves": 6, "verbose": -1, "num_threads": 1}
    if n_classes == 3:
        params["num_class"] = 3
    booster = lightgbm.train(params, lightgbm.Dataset(X, y, params={"verbose": -1}), 6)
    return booster, booster.predict(X)


@pytest.mark.parametrize(("library", "objective"), CASES)
def test_the_report_of_a_raw_booster_shows_its_own_predictions(library, objective):
    regression = objective.startswith("reg")
    n_classes = 3 if objective.startswith("multi") else 2
    task = "regression" if regression else "classification"
    X, y = make_data(4, task=task, n_classes=n_classes)
    X = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    booster, own = _booster(library, objective, X, y)
    assert treelens.to_forest(booster).fitted_model is None
    # What the report reads (its scores, the sentences of its rows): the
    # Forest's predictions and probabilities, the Booster's own to the last bit.
    path = decision_path(booster, X)
    if regression:
        np.testing.assert_array_equal(path.prediction_, own)
        np.testing.assert_array_equal(predict(booster, X), own)
        target = (float(np.median(own)), None)
        rows = np.flatnonzero(own < target[0])[:3]
        shown = [f"Predicted {format_number(own[r])}" for r in rows]
        scores = [
            f"R² {r2_score(y, own):.4f}",
            f"Mean absolute error {mean_absolute_error(y, own):.4g}",
        ]
    else:
        proba = own if own.ndim == 2 else np.c_[1 - own, own]
        labels = np.argmax(proba, axis=1) if own.ndim == 2 else (own > 0.5) * 1
        np.testing.assert_array_equal(path.proba_, proba)
        np.testing.assert_array_equal(path.prediction_, labels)
        np.testing.assert_array_equal(predict(booster, X), labels)
        target = n_classes - 1
        rows = np.flatnonzero(labels != target)[:3]
        shown = [
            f"Predicted {labels[r]} (probability {proba[r, labels[r]]:.2f})"
            for r in rows
        ]
        scores = [
            f"Accuracy {accuracy_score(y, labels):.4f}",
            f"Balanced accuracy {balanced_accuracy_score(y, labels):.4f}",
        ]
    page = treelens.report(
        booster, X, y, target=target, rows=rows.tolist(), time_limit=5
    )
    text = _text(page.html)
    for expected in scores:
        assert expected in text
    for r, sentence in zip(rows, shown):
        assert f"Row {r} {sentence}" in text
