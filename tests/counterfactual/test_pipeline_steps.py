"""Counterfactuals through missing indicators and ordinal bins.

The brute force reads only scikit-learn: the prediction of a present value
depends on its bin alone (its indicator is 0), so the nearest point of every
cell is the row's own value, an inner bin edge (bins take ``x >= edge`` up) or
the float64 just below one.  A present value is never made missing; a missing
value stays missing (price 0, as the pipeline routes it) or, with
``fill_missing``, is filled (the fill cost, then the move from the column's
median).  Validity is the pipeline's own ``predict``.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer

import treelens
from tests.counterfactual.brute import assert_proven_optimal
from tests.models import PIPELINE_FACTORIES
from treelens._counterfactual._problem import CounterfactualCheckWarning

COLUMNS = ["a", "b"]


def _model(seed):
    rng = np.random.default_rng(seed)
    n = 300
    X = pd.DataFrame(rng.normal(size=(n, 2)).round(3), columns=COLUMNS)
    holes = rng.random((n, 2)) < 0.25
    y = ((X["a"] + X["b"] > 0.3) ^ holes[:, 0] ^ (holes[:, 1] & (X["a"] > 0))).astype(
        int
    )
    X = X.mask(holes)

    def binned(strategy):
        return make_pipeline(
            SimpleImputer(strategy=strategy, add_indicator=True),
            KBinsDiscretizer(n_bins=5, encode="ordinal", strategy="uniform"),
        )

    columns = ColumnTransformer(
        [("a", binned("mean"), ["a"]), ("b", binned("median"), ["b"])]
    )
    model = make_pipeline(
        columns, RandomForestClassifier(3, max_depth=4, random_state=seed)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return model, X


def _edges(model):
    """Per column, the inner bin edges of its imputed values (scikit-learn's)."""
    named = model[0].named_transformers_
    return [np.asarray(named[c][-1].bin_edges_[0][1:-1], dtype=float) for c in COLUMNS]


def _brute_force(model, x, *, fill_cost=None, median=None):
    edges = _edges(model)
    choices = []
    for j, value in enumerate(x):
        cells = np.concatenate([edges[j], np.nextafter(edges[j], -np.inf)])
        if np.isnan(value):
            options = [(0.0, np.nan)]
            if fill_cost is not None:
                options += [
                    (fill_cost + abs(v - median[j]), v)
                    for v in np.concatenate([[median[j]], cells])
                ]
        else:
            options = [(abs(v - value), v) for v in np.concatenate([[value], cells])]
        choices.append(options)
    combos = list(itertools.product(*choices))
    points = pd.DataFrame([[v for _, v in c] for c in combos], columns=COLUMNS)
    costs = np.array([sum(p for p, _ in c) for c in combos])
    current = model.predict(pd.DataFrame([x], columns=COLUMNS))[0]
    valid = model.predict(points) != current
    return float(costs[valid].min()) if valid.any() else np.inf


def _search(model, X, rows, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        return treelens.optimal_counterfactual(
            model, rows, target="other", cost="l1", reference=X, infer=False, **options
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_optimum_equals_brute_force_with_values_kept_missing(seed):
    model, X = _model(seed)
    pattern = X.isna().to_numpy()
    rows = pd.concat(
        [X[(pattern == p).all(axis=1)].iloc[:3] for p in ([0, 0], [1, 0], [0, 1])]
    )
    result = _search(model, X, rows)
    for i, x in enumerate(rows.to_numpy()):
        least = _brute_force(model, x)
        assert result.found_[i] == np.isfinite(least), i
        if result.found_[i]:
            assert_proven_optimal(result.cost_[i], least)
    # Missing values stay missing; present values are never made missing.
    X_cf = result.X_cf_[result.found_].to_numpy()
    np.testing.assert_array_equal(np.isnan(X_cf), rows[result.found_].isna())
    tweak = treelens.feature_tweak(
        model, rows, target="other", cost="l1", reference=X, infer=False
    )
    assert (result.found_ >= tweak.found_).all()
    if tweak.found_.any():
        predicted = model.predict(tweak.X_cf_[tweak.found_])
        assert (predicted != model.predict(rows[tweak.found_])).all()
        assert (
            result.cost_[tweak.found_] <= tweak.cost_[tweak.found_] * (1 + 1e-6) + 1e-12
        ).all()


@pytest.mark.parametrize("fill_cost", [0.0, 0.4])
def test_the_optimum_equals_brute_force_with_values_filled(fill_cost):
    model, X = _model(3)
    rows = X[X.isna().any(axis=1)].iloc[:8]
    median = X.median().to_numpy()
    result = _search(model, X, rows, fill_missing=True, fill_cost=fill_cost)
    for i, x in enumerate(rows.to_numpy()):
        least = _brute_force(model, x, fill_cost=fill_cost, median=median)
        assert result.found_[i] == np.isfinite(least), i
        if result.found_[i]:
            assert_proven_optimal(result.cost_[i], least)
    assert result.filled_.any()


def test_a_row_that_only_a_missing_value_would_flip_is_not_found():
    # The model reads nothing but whether "a" is missing: no counterfactual
    # makes a value missing, so a row with "a" present has none.
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(200, 2)), columns=COLUMNS)
    X.loc[::3, "a"] = np.nan
    y = X["a"].isna().astype(int)
    model = make_pipeline(
        SimpleImputer(add_indicator=True), RandomForestClassifier(3, random_state=0)
    )
    model.fit(X, y)
    rows = X.iloc[:6]
    missing = rows["a"].isna().to_numpy()
    assert missing.any() and not missing.all()
    result = _search(model, X, rows)
    assert not result.found_.any()
    # Filling "a" flips the rows where it is missing, and only those.
    filled = _search(model, X, rows, fill_missing=True)
    np.testing.assert_array_equal(filled.found_, missing)
    assert (model.predict(filled.X_cf_[missing]) == 0).all()


@pytest.mark.parametrize("fill_missing", [False, True])
def test_counterfactuals_through_indicators_target_encodings_and_bins(fill_missing):
    # Numeric and categorical columns with their indicators, a target-encoded
    # and a binned one: each counterfactual flips the pipeline's own predict, a
    # present value stays present, a missing one stays missing unless filled.
    case = PIPELINE_FACTORIES["sklearn.Pipeline[indicators+bins+target]"]()
    X = case.X
    missing = X["income"].isna() | X["employment"].isna()
    rows = pd.concat([X[missing].iloc[:6], X[~missing].iloc[:3]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = treelens.optimal_counterfactual(
            case.model,
            rows,
            target="other",
            cost="l1",
            reference=X,
            infer=False,
            fill_missing=fill_missing,
        )
        before = case.model.predict(rows)
        after = case.model.predict(result.X_cf_)
    assert result.found_.all()
    np.testing.assert_array_equal(after != before, result.found_)
    was, now = rows.isna().to_numpy(), result.X_cf_.isna().to_numpy()
    assert not (now & ~was).any()
    if fill_missing:
        assert (was & ~now).any()
    else:
        np.testing.assert_array_equal(now, was)


def test_a_column_read_only_through_its_indicator_is_made_present_or_kept():
    # "note" is text that reaches the model only through MissingIndicator; a
    # counterfactual keeps a present note, fills a missing one (with
    # fill_missing) with a present value, and the pipeline agrees.
    from sklearn.impute import MissingIndicator
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    n = 300
    note = pd.Series(rng.choice(["x", "y"], n), dtype=object)
    holes = rng.random(n) < 0.4
    note[holes] = np.nan
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "note": note})
    y = ((a > 0.5) | ~holes).astype(int)
    columns = ColumnTransformer(
        [("m", MissingIndicator(features="all"), ["note"]), ("n", "passthrough", ["a"])]
    )
    model = make_pipeline(columns, DecisionTreeClassifier(max_depth=3)).fit(X, y)
    rows = X[(model.predict(X) == 0)].iloc[:5]
    kept = treelens.counterfactual(model, rows, target=1, method="optimal")
    assert kept.found_.all()
    np.testing.assert_array_equal(model.predict(kept.X_cf_), 1)
    assert kept.X_cf_["note"].isna().all()  # missing stays missing: a moves
    filled = treelens.counterfactual(
        model, rows, target=1, method="optimal", fill_missing=True, reference=X
    )
    np.testing.assert_array_equal(model.predict(filled.X_cf_), 1)
    made = filled.X_cf_["note"].notna()
    assert made.any() and filled.X_cf_["note"][made].map(type).eq(str).all()
