"""Rows the model already gives the target, with a margin or plausibility bound.

Such a row used to come back unchanged at cost 0 whatever was asked.  It is now
searched like any other row: the answer is the least-cost point that meets the
target and the conditions (the row itself where it meets them), checked here by
hand on a stump and by brute force on small forests, every point confirmed with
the source model's own ``predict``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import IsolationForest
from sklearn.tree import DecisionTreeClassifier

from tests.counterfactual import brute
from tests.counterfactual.test_optimal_counterfactual import _model
from tests.counterfactual.test_plausibility import _support
from treelens import Margin, counterfactual, feature_tweak, optimal_counterfactual
from treelens._counterfactual._problem import REASON_AT_TARGET


@pytest.fixture(scope="module")
def stump():
    """Class 1 when ``x > 0.5`` (scikit-learn's threshold, exactly 0.5)."""
    model = DecisionTreeClassifier(max_depth=1).fit([[0.0], [1.0]], [0, 1])
    assert model.tree_.threshold[0] == 0.5
    return model


def test_a_margin_moves_a_row_at_the_target_that_sits_too_close(stump):
    rows = np.array([[0.6], [1.0], [0.2]])
    result = optimal_counterfactual(stump, rows, target=1, cost="l1", margin=0.3)
    assert result.at_target_.tolist() == [True, True, False]
    assert result.found_.all() and (result.status_ == "optimal").all()
    # x' - 0.3 must still go right of 0.5: x' = 0.8 (up to the float32 step
    # scikit-learn's cast needs), from 0.6 at cost 0.2; 1.0 keeps its margin
    # as it is; 0.2 moves by 0.6.
    np.testing.assert_allclose(result.cost_, [0.2, 0.0, 0.6], atol=1e-6)
    assert (result.cost_[[0, 2]] >= [0.2, 0.6]).all()
    assert result.X_cf_[1, 0] == 1.0
    assert result.reason_.tolist() == [None, None, None]
    for shift in (-0.3, 0.0, 0.3):
        assert (stump.predict(result.X_cf_ + shift) == 1).all()
    # Without the margin the row at the target is its own answer, as before.
    plain = optimal_counterfactual(stump, rows, target=1, cost="l1")
    assert plain.cost_[0] == 0 and plain.X_cf_[0, 0] == 0.6
    assert plain.at_target_.tolist() == [True, True, False]


def test_a_vote_margin_searches_rows_at_the_target():
    model, X = _model("rf_binary", 7, n_features=3, n_trees=9, depth=3)
    proba = model.predict_proba(X)[:, 1]
    # Rows the forest gives class 1 by a thin vote.
    rows = X[(proba > 0.5) & (proba < 0.6)][:4]
    assert len(rows)
    result = counterfactual(model, rows, target=1, cost="l1", margin=Margin(vote=0.3))
    assert result.at_target_.all()
    found = result.found_
    assert found.any() and (result.cost_[found] > 0).all()
    lead = model.predict_proba(result.X_cf_[found])
    assert (lead[:, 1] - lead[:, 0] >= 0.3 - 1e-9).all()
    assert (model.predict(result.X_cf_[found]) == 1).all()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_min_leaf_samples_for_rows_at_the_target_is_the_brute_force_optimum(seed):
    model, X = _model("rf_binary", seed, n_features=3, n_trees=3, depth=3)
    at = X[model.predict(X) == 1]
    support = _support(model, X, at)
    least = int(np.median(support)) + 1
    rows = np.vstack([at[support < least][:2], at[support >= least][:1]])
    result = optimal_counterfactual(
        model, rows, target=1, cost="l1", reference=X, min_leaf_samples=least,
        infer=False,
    )  # fmt: skip
    assert result.at_target_.all()
    for i, x in enumerate(rows):
        expected, _ = brute.least_cost(
            model, x, 1, "l1", keep=lambda P: _support(model, X, P) >= least
        )
        if np.isinf(expected):
            assert result.status_[i] == "infeasible" and not result.found_[i]
            continue
        assert result.status_[i] == "optimal"
        brute.assert_proven_optimal(result.cost_[i], expected)
        assert model.predict(result.X_cf_[i : i + 1])[0] == 1
        assert _support(model, X, result.X_cf_[i : i + 1])[0] >= least
    # The supported row is its own answer; the others had to move.
    assert result.cost_[-1] == 0 and (result.X_cf_[-1] == rows[-1]).all()
    assert (result.cost_[:-1] > 0).all()


def test_an_outlier_at_the_target_is_made_an_inlier():
    model, X = _model("rf_binary", 5, n_features=3, n_trees=4, depth=3)
    iso = IsolationForest(n_estimators=5, max_samples=32, random_state=0).fit(X)
    at = X[(model.predict(X) == 1) & (iso.predict(X) == -1)][:2]
    assert len(at)
    result = optimal_counterfactual(
        model, at, target=1, cost="l1", isolation_forest=iso, infer=False
    )
    assert result.at_target_.all()
    bound = -iso.offset_
    for i, x in enumerate(at):
        expected, _ = brute.least_cost(
            model, x, 1, "l1",
            keep=lambda P: -iso.score_samples(P) <= bound,
            extra_thresholds=brute.isolation_thresholds(iso),
        )  # fmt: skip
        assert np.isfinite(expected) and expected > 0
        brute.assert_proven_optimal(result.cost_[i], expected)
    assert (iso.predict(result.X_cf_) == 1).all()
    assert (model.predict(result.X_cf_) == 1).all()


def test_a_row_that_is_its_own_answer_has_one_option(stump):
    rows = np.array([[1.0], [0.6]])
    result = optimal_counterfactual(
        stump, rows, target=1, cost="l1", margin=0.3, n_counterfactuals=2
    )
    assert result.found_.tolist() == [True, False, True, False]
    assert result.cost_[0] == 0 and result.reason_[1] == REASON_AT_TARGET
    assert result.status_[1] == "optimal" and np.isnan(result.gap_[1])
    # The row that had to move has its further options searched: none exists
    # on one feature that does not move it up again.
    assert result.reason_[3] != REASON_AT_TARGET
    assert result.status_[3] == "infeasible"


def test_a_row_at_the_target_over_categories_keeps_the_margin():
    # The search over a model's categories searched rows already at the target
    # only under other categories, never under their own.
    frame = pd.DataFrame(
        {
            "x": np.r_[np.linspace(0, 1, 40), np.linspace(0, 1, 40)],
            "kind": pd.Categorical(["a"] * 40 + ["b"] * 40),
        }
    )
    y = ((frame["x"] > 0.5) & (frame["kind"] == "a")).astype(int)
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=5, categorical_features=["kind"], random_state=0
    ).fit(frame, y)
    row = pd.DataFrame({"x": [0.55], "kind": pd.Categorical(["a"], ["a", "b"])})
    assert model.predict(row)[0] == 1
    plain = optimal_counterfactual(model, row, target=1, cost="l1")
    robust = optimal_counterfactual(model, row, target=1, cost="l1", margin=0.2)
    assert plain.cost_[0] == 0 and robust.at_target_[0]
    assert robust.found_[0] and robust.cost_[0] > 0
    x = float(robust.X_cf_["x"].iloc[0])
    for shift in (-0.2, 0.0, 0.2):
        moved = robust.X_cf_.assign(x=x + shift)
        assert model.predict(moved)[0] == 1


def test_feature_tweak_states_rows_at_the_target(stump):
    result = feature_tweak(stump, np.array([[0.6], [0.2]]), target=1)
    assert result.at_target_.tolist() == [True, False]
    assert result.cost_[0] == 0
    other = counterfactual(stump, np.array([[0.6]]), target="other")
    assert not other.at_target_[0]
