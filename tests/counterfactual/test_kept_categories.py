"""A category a counterfactual keeps comes back exactly as the row gave it, and
is read as the model reads it.

Rows given to a model fitted on numbers may hold, in a categorical column, a
number that is no category: one the model never saw (12 beside 0 .. 9), or for
LightGBM, which casts its categorical values to integers, a number it reads by
its whole part (3.5 as category 3).  Validity is always the model's own
``predict`` (a Booster's probabilities) on ``X_cf_`` as returned.
"""

import itertools
import warnings

import lightgbm
import numpy as np
import pandas as pd
import pytest
import xgboost
from sklearn.ensemble import HistGradientBoostingClassifier

from tests.counterfactual import brute
from treelens import Constraints, feature_tweak, optimal_counterfactual
from treelens._counterfactual._problem import CounterfactualCheckWarning

CODES = tuple(range(10))


def _data(seed=0, n=600):
    """[size, code]: codes 0 .. 9."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(CODES, n).astype(float)
    X = np.c_[rng.normal(size=n).round(3), codes]
    effect = np.array([0, 3, -2, 1, 0, -1, 2, -3, 1, 0])
    y = effect[codes.astype(int)] + 3 * X[:, 0] + rng.normal(size=n) * 0.3 > 0
    return X, y.astype(int)


class _Booster:
    """A LightGBM Booster with the wrapper's ``predict`` (class labels)."""

    def __init__(self, booster):
        self.booster = booster

    def predict(self, X):
        return (self.booster.predict(np.asarray(X, dtype=np.float64)) > 0.5).astype(int)


def _lightgbm(X, y):
    model = lightgbm.LGBMClassifier(
        n_estimators=20, num_leaves=8, min_child_samples=2, random_state=0, verbose=-1
    )
    return model.fit(X, y, categorical_feature=[1])


def _values(X):
    """Rows as float64 numbers, NaN where missing (a frame's ``<NA>`` too)."""
    if hasattr(X, "iloc"):
        return X.astype(object).to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X, dtype=np.float64)


def _frame(X, kind):
    """``X`` as a frame: the code column as numbers, or as pandas categories
    (the codes and 12) for ``kind`` "category"."""
    frame = pd.DataFrame({"size": X[:, 0], "code": X[:, 1]})
    if kind == "category":
        codes = frame["code"].astype(np.int64)
        frame["code"] = pd.Categorical(codes, categories=[*CODES, 12])
    return frame


def _fitted(kind):
    """(model, its predict, how rows are given) of each kind."""
    X, y = _data()
    as_array = np.asarray
    if kind == "lightgbm":
        model = _lightgbm(X, y)
        return model, model.predict, as_array
    if kind == "lightgbm.Booster":
        booster = _lightgbm(X, y).booster_
        return booster, _Booster(booster).predict, as_array
    if kind == "lightgbm-frame":
        model = lightgbm.LGBMClassifier(
            n_estimators=20, num_leaves=8, min_child_samples=2, verbose=-1
        ).fit(_frame(X, "number"), y, categorical_feature=["code"])
        return model, model.predict, lambda rows: _frame(rows, "number")
    if kind == "xgboost":
        model = xgboost.XGBClassifier(
            n_estimators=10, max_depth=3, enable_categorical=True,
            feature_types=["q", "c"], tree_method="hist",
        ).fit(X, y)  # fmt: skip
        return model, model.predict, as_array
    options = {"max_iter": 10, "max_depth": 3, "random_state": 0}
    if kind == "hist":
        model = HistGradientBoostingClassifier(categorical_features=[1], **options)
        return model.fit(X, y), model.predict, as_array
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", **options)
    model.fit(_frame(X, "category"), y)
    return model, model.predict, lambda rows: _frame(rows, "category")


KINDS = [
    "lightgbm", "lightgbm.Booster", "lightgbm-frame", "xgboost", "hist",
    "hist-category",
]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_a_category_the_model_never_saw_is_kept_as_given(kind):
    """A row holding 12 where the model saw 0 .. 9, its category immutable:
    every counterfactual keeps 12 (it came back as the unknown code 10)."""
    model, predict, as_given = _fitted(kind)
    rows = np.c_[np.linspace(-2, 2, 9), np.full(9, 12.0)]
    frozen = Constraints(immutable=[1])
    for search, options in (
        (feature_tweak, {}),
        (optimal_counterfactual, {}),
        (optimal_counterfactual, {"n_counterfactuals": 2}),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error", CounterfactualCheckWarning)
            result = search(
                model, as_given(rows), target="other", constraints=frozen, **options
            )
        found = result.found_
        assert found.any()
        X_cf = _values(result.X_cf_)[found]
        np.testing.assert_array_equal(X_cf[:, 1], 12.0)
        own = predict(as_given(rows))[result.row_[found]]
        assert (predict(result.X_cf_)[found] != own).all()


@pytest.mark.parametrize("kind", ["lightgbm", "lightgbm.Booster", "lightgbm-frame"])
def test_lightgbm_counterfactuals_read_a_number_by_its_whole_part(kind):
    """Rows holding numbers that are no code (3.5, 7.9, -0.5, 12): the optimum
    is the least cost over the size's cells and every code or the row's own
    number (1 per change of category), validity by LightGBM's own predict
    (which reads 3.5 as category 3); a number kept comes back as given."""
    model, predict, as_given = _fitted(kind)
    rows = np.array([[0.0, 3.5], [1.0, 3.5], [-1.0, 7.9], [2.0, -0.5], [0.3, 12.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, as_given(rows), target="other", cost="l1"
        )
    X_cf = _values(result.X_cf_)
    own = predict(as_given(rows))
    assert result.found_.all()
    assert (predict(result.X_cf_) != own).all()
    for i, x in enumerate(rows):
        sizes = brute.candidate_values(model, x)[0]
        points = np.array(list(itertools.product(sizes, [x[1], *CODES])))
        valid = predict(as_given(points)) != own[i]
        cost = np.abs(points[:, 0] - x[0]) + (points[:, 1] != x[1])
        brute.assert_proven_optimal(result.cost_[i], float(cost[valid].min()))
        assert X_cf[i, 1] in (x[1], *CODES)
        # Kept, the row's own number; changed, a code LightGBM reads as another.
        if X_cf[i, 1] != x[1]:
            assert np.trunc(X_cf[i, 1]) != np.trunc(x[1]) or x[1] < 0
