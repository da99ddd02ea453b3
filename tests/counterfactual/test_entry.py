"""treelens.counterfactual: one entry point over the exact search and tweaking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from tests.counterfactual.test_optimal_counterfactual import _model
from treelens import (
    InputError,
    Margin,
    counterfactual,
    feature_tweak,
    optimal_counterfactual,
)
from treelens._counterfactual._problem import REASON_TIME_LIMIT


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    model = RandomForestClassifier(n_estimators=30, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) == 0][:12]
    return model, X, rows


def test_auto_finds_every_row_tweaking_misses(cancer):
    model, X, rows = cancer
    tweak = counterfactual(model, rows, target=1, method="tweak", reference=X)
    auto = counterfactual(model, rows, target=1, reference=X)
    assert auto.method_ == "optimal_counterfactual" and tweak.method_ == "feature_tweak"
    assert auto.found_.all() and not tweak.found_.all()
    assert (auto.status_ == "optimal").all()
    assert (auto.cost_[tweak.found_] <= tweak.cost_[tweak.found_] * (1 + 1e-6)).all()
    assert (model.predict(auto.X_cf_) == 1).all()


def test_methods_match_the_functions(cancer):
    model, X, rows = cancer
    rows = rows[:3]
    exact = optimal_counterfactual(model, rows, target=1, reference=X, time_limit=10)
    same = counterfactual(model, rows, target=1, method="optimal", reference=X)
    np.testing.assert_array_equal(same.X_cf_, exact.X_cf_)
    tweak = feature_tweak(model, rows, target=1, cost="l2", mode="paper")
    again = counterfactual(
        model, rows, target=1, method="tweak", cost="l2", mode="paper"
    )
    np.testing.assert_array_equal(again.X_cf_, tweak.X_cf_)


def test_auto_tweaks_costs_without_a_program():
    model, X = _model("rf_binary", 0)
    result = counterfactual(model, X[:3], target=1, cost="cosine")
    assert result.method_ == "feature_tweak" and result.cost_name_ == "cosine"


def test_a_time_limit_returns_the_best_found_with_its_gap(cancer):
    model, _, rows = cancer
    result = counterfactual(model, rows[:4], target=1, time_limit=0.02)
    assert set(result.status_) <= {"optimal", "time_limit"}
    stopped = result.status_ == "time_limit"
    assert (result.gap_[stopped & result.found_] >= 0).all()
    assert (result.gap_[~stopped] == 0).all()
    # "Not found" only with the time-out stated.
    assert (result.reason_[~result.found_] == REASON_TIME_LIMIT).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "fast"}, "method"),
        ({"method": "tweak", "margin": 0.1}, "margin"),
        ({"cost": "cosine", "margin": Margin(vote=0.1)}, "margin"),
        # mode was dropped without a word by the exact search.
        ({"mode": "paper"}, "`mode` chooses feature tweaking's candidates"),
        ({"method": "optimal", "mode": "paper"}, "mode='paper'"),
        # inf is positive: the message said "a positive number ... got inf".
        ({"time_limit": float("inf")}, "positive, finite number of seconds; got inf"),
    ],
)
def test_bad_input(kwargs, match):
    model, X = _model("rf_binary", 0)
    with pytest.raises(InputError, match=match):
        counterfactual(model, X[:1], target=1, **kwargs)


@pytest.mark.parametrize("method", ["auto", "tweak"])
def test_reference_without_rows_or_with_other_columns_is_refused(method):
    # An empty reference gave a "mad" cost of unit weights, leaf support 0 and
    # numpy's "Mean of empty slice" warnings; a misfit one was called "X".
    model, X = _model("rf_binary", 0)
    with pytest.raises(InputError, match="`reference` must hold at least one row"):
        counterfactual(model, X[:1], target=1, method=method, reference=X[:0])
    with pytest.raises(InputError, match="`reference` does not fit the model"):
        counterfactual(model, X[:1], target=1, method=method, reference=X[:, :-1])


@pytest.mark.parametrize("method", ["auto", "tweak"])
@pytest.mark.parametrize(
    ("category_cost", "match"),
    [
        ({"x0": 2.0}, "names 'x0', which is not a categorical column"),
        (-1.0, "must be non-negative"),
        ("high", "must be None, a number, or a mapping"),
    ],
)
def test_category_cost_is_checked_for_a_model_without_categories(
    method, category_cost, match
):
    # It was only read where categories are searched, so a model without
    # categorical columns took any value without a word.
    model, X = _model("rf_binary", 0)
    with pytest.raises(InputError, match=match):
        counterfactual(
            model, X[:1], target=1, method=method, category_cost=category_cost
        )


def test_auto_reaches_target_ranges_of_boosted_regressors():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] * X[:, 3]
    model = GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) < 0][:8]
    low = float(np.quantile(model.predict(X), 0.95))
    target = (low, low + 0.1)
    tweak = counterfactual(model, rows, target=target, method="tweak")
    auto = counterfactual(model, rows, target=target)
    assert auto.found_.all() and (auto.status_ == "optimal").all()
    predicted = model.predict(auto.X_cf_)
    assert ((predicted >= low) & (predicted <= low + 0.1)).all()
    assert tweak.found_.sum() < auto.found_.sum()
    found = tweak.found_
    assert (auto.cost_[found] <= tweak.cost_[found] * (1 + 1e-6)).all()


@pytest.mark.filterwarnings("error")
# (A point such as (0.0, 0.0) is refused as any point is: see
# test_unreachable_ranges.)
@pytest.mark.parametrize("target", [(None, 0.0), (-0.5, 0.0), (-1.0, -0.5)])
def test_a_range_a_log_link_cannot_reach_is_infeasible_without_warnings(target):
    # A Poisson model predicts more than 0: the raw range of (None, 0) is
    # empty, and the local search warned "invalid value encountered in
    # subtract" (inf - inf) on its way to "infeasible".
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.poisson(np.exp(0.5 * X[:, 0] + 0.3 * X[:, 1]))
    model = HistGradientBoostingRegressor(max_iter=15, max_depth=3, loss="poisson")
    model.fit(X, y)
    result = counterfactual(model, X[:3], target=target, n_counterfactuals=2)
    assert not result.found_.any()
    assert (result.status_ == "infeasible").all()
    assert np.isnan(result.gap_).all()


class _CountingTree(DecisionTreeClassifier):
    """A tree whose ``predict`` counts its calls and can be made to disagree."""

    def predict(self, X, check_input=True):
        self.calls_ = [*getattr(self, "calls_", []), X]
        if getattr(self, "disagree_", False):
            return np.zeros(len(X), dtype=int)
        return super().predict(X, check_input=check_input)


@pytest.mark.parametrize(
    "search", [counterfactual, optimal_counterfactual, feature_tweak]
)
def test_names_given_to_an_unnamed_model_keep_it_behind_its_forest(search):
    """``to_forest(model, feature_names=...)`` renames a model fitted on an
    array: its counterfactuals are confirmed with the model's own predict, on
    arrays (its columns by position), and rejected where it disagrees."""
    from sklearn.datasets import load_iris

    from treelens import to_forest
    from treelens._exceptions import CounterfactualCheckWarning

    X, y = load_iris(return_X_y=True)
    model = _CountingTree(max_depth=2, random_state=0).fit(X, y)
    names = ["d", "c", "b", "a"]
    forest = to_forest(model, feature_names=names)
    assert forest.fitted_model is model and forest.feature_names == tuple(names)
    rows = pd.DataFrame(X[:100:25], columns=names)  # none of class 2
    result = search(forest, rows, target=2, cost="l1")
    assert result.found_.all() and model.calls_
    assert all(isinstance(Z, np.ndarray) and Z.shape[1] == 4 for Z in model.calls_)
    np.testing.assert_array_equal(
        DecisionTreeClassifier.predict(model, np.asarray(result.X_cf_)), 2
    )
    model.disagree_ = True
    with pytest.warns(CounterfactualCheckWarning, match="failed the source model"):
        rejected = search(forest, rows, target=2, cost="l1")
    assert not rejected.found_.any()


def test_names_of_the_model_itself_change_nothing():
    """Names a model already has, or an unnamed model's default names, leave
    the model's own Forest: no fitted model behind it."""
    from sklearn.datasets import load_iris

    from treelens import to_forest

    X, y = load_iris(return_X_y=True, as_frame=True)
    named = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert to_forest(named, feature_names=list(X.columns)).fitted_model is None
    unnamed = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X.to_numpy(), y)
    default = [f"x{i}" for i in range(4)]
    assert to_forest(unnamed, feature_names=default).fitted_model is None
