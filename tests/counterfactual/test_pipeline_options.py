"""The options of the exact search on a pipeline's raw rows: the default entry
point, robustness margins and leaf support, also with several options per row.
Every answer is confirmed with the pipeline's own predict (finish() warns
otherwise, made an error here)."""

import warnings

import numpy as np
import pandas as pd

import treelens
from tests.models import PIPELINE_FACTORIES
from treelens import Margin
from treelens._counterfactual._problem import CounterfactualCheckWarning


def _case():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    rows = case.X.iloc[:6]
    return case.model, case.X, rows


def _search(model, rows, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", CounterfactualCheckWarning)
        return treelens.counterfactual(model, rows, target="other", **options)


def _predict(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return model.predict(X)


def test_the_entry_point_answers_in_the_users_columns():
    model, X, rows = _case()
    result = _search(model, rows, reference=X, time_limit=5.0)
    assert result.method_ == "optimal_counterfactual" and result.cost_name_ == "mad"
    assert isinstance(result.X_cf_, pd.DataFrame)
    found = result.found_
    assert found.any()
    assert (_predict(model, result.X_cf_[found]) != _predict(model, rows[found])).all()
    # Categorical columns are no numbers to infer constraints on.
    assert "employment" not in result.inferred_.get("integer", [])
    assert (result.status_[found] == "optimal").all()


def test_a_margin_keeps_numeric_columns_away_from_thresholds():
    model, X, rows = _case()
    income = list(X.columns).index("income")
    margin = np.zeros(X.shape[1])
    margin[income] = 50.0
    result = _search(model, rows, reference=X, margin=Margin(features=margin))
    found = np.flatnonzero(result.found_)
    assert found.size
    assert result.margin_[income] == 50.0
    # Moving the income by less than the margin keeps every answer valid.
    for shift in (-49.0, 49.0):
        moved = result.X_cf_.iloc[found].copy()
        moved["income"] = moved["income"] + shift
        predicted = _predict(model, moved)
        assert (predicted != _predict(model, rows.iloc[found])).all()


def test_min_leaf_samples_counts_the_whole_forests_leaves():
    model, X, rows = _case()
    least = 8
    result = _search(model, rows, reference=X, min_leaf_samples=least)
    found = result.found_
    assert found.any() and result.min_leaf_samples_ == least
    forest = treelens.to_forest(model)
    leaves = forest.apply(result.X_cf_[found])
    reference = forest.apply(X)
    for tree in range(forest.n_trees):
        counts = np.bincount(reference[:, tree], minlength=leaves.max() + 1)
        assert (counts[leaves[:, tree]] >= least).all()
    np.testing.assert_array_equal(
        result.leaf_support_[found],
        np.min(
            [
                np.bincount(reference[:, t], minlength=leaves.max() + 1)[leaves[:, t]]
                for t in range(forest.n_trees)
            ],
            axis=0,
        ),
    )


def test_several_options_per_row_keep_the_leaf_support():
    model, X, rows = _case()
    least = 8
    result = _search(
        model, rows, reference=X, min_leaf_samples=least, n_counterfactuals=2
    )
    assert len(result) == 2 * len(rows)
    assert list(result.X_cf_.columns) == list(rows.columns)
    found = result.found_
    assert found[1::2].any()
    assert (result.leaf_support_[found] >= least).all()
    predicted = _predict(model, result.X_cf_[found])
    own = _predict(model, rows.iloc[result.row_[found]])
    assert (predicted != own).all()
    first, second = result.cost_[0::2], result.cost_[1::2]
    both = result.found_[0::2] & result.found_[1::2]
    assert (second[both] >= first[both] - 1e-12).all()
