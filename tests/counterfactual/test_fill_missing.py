"""Missing values a counterfactual may fill (``fill_missing``, ``fill_cost``).

The brute force enumerates, for a missing value, "stays missing" (price 0) and
"filled" (the fill cost, then the value moves from the column's median in the
reference, computed here with numpy) over both neighbours of every threshold,
and checks validity with the source model's own ``predict``.
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline

import treelens
from tests.categorical_forests import random_codes, random_forest, reference_leaf
from tests.counterfactual.brute import assert_proven_optimal, candidate_values
from treelens import Constraints, InputError, feature_tweak, optimal_counterfactual
from treelens._counterfactual._problem import CounterfactualCheckWarning


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.2).astype(int)
    X[rng.random(X.shape) < 0.25] = np.nan
    return X, y


def _brute_force(model, x, target, fill_cost, median):
    """Least l1 cost over every point of the grid, each missing value kept
    missing or filled (fill cost plus the move from the median)."""
    start = np.where(np.isnan(x), median, x)
    grids = candidate_values(model, start)
    choices = []
    for j, column in enumerate(grids):
        if np.isnan(x[j]):
            filled = [(fill_cost + abs(v - median[j]), v) for v in column]
            choices.append([(0.0, np.nan), *filled])
        else:
            choices.append([(abs(v - x[j]), v) for v in column])
    points = np.array([[v for _, v in c] for c in itertools.product(*choices)])
    costs = np.array([sum(p for p, _ in c) for c in itertools.product(*choices)])
    predicted = model.predict(points)
    current = model.predict(x[None, :])[0]
    valid = predicted != current if target == "other" else predicted == target
    return float(costs[valid].min()) if valid.any() else np.inf


@pytest.mark.parametrize("fill_cost", [0.0, 0.3, 1.0])
def test_the_optimum_with_filling_equals_brute_force(fill_cost):
    X, y = _data()
    model = HistGradientBoostingClassifier(max_iter=4, max_depth=2, random_state=0).fit(
        X, y
    )
    rows = X[np.isnan(X).sum(axis=1) == 1][:6]
    median = np.nanmedian(X, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, rows, target="other", cost="l1", reference=X,
            fill_missing=True, fill_cost=fill_cost, infer=False,
        )  # fmt: skip
        kept = optimal_counterfactual(
            model, rows, target="other", cost="l1", reference=X, infer=False
        )
    np.testing.assert_array_equal(result.fill_start_, median)
    for i, x in enumerate(rows):
        least = _brute_force(model, x, "other", fill_cost, median)
        assert result.found_[i] == np.isfinite(least)
        if result.found_[i]:
            assert_proven_optimal(result.cost_[i], least)
            # The source model's own predict confirms it.
            cf = result.X_cf_[i]
            assert model.predict(cf[None, :])[0] != model.predict(x[None, :])[0]
            missing = np.isnan(x)
            assert (result.filled_[i] == (missing & ~np.isnan(cf))).all()
            assert (result.missing_[i] == missing).all()
            # The cost is the fill cost plus the move from the median.
            start = np.where(result.filled_[i], median, x)
            moved = np.nansum(np.abs(cf - start))
            assert result.cost_[i] == pytest.approx(
                moved + fill_cost * result.filled_[i].sum(), abs=1e-9
            )
        # Filling is an option: never dearer than keeping the value missing.
        assert result.cost_[i] <= kept.cost_[i] * (1 + 1e-6) + 1e-12
    assert result.filled_.any()


def test_filling_in_a_pipeline_with_an_imputer():
    X, y = _data(1)
    frame = pd.DataFrame(X, columns=["income", "debt"])
    model = make_pipeline(
        SimpleImputer(strategy="mean"), RandomForestClassifier(8, random_state=0)
    ).fit(frame, y)
    rows = frame[frame.isna().any(axis=1)].iloc[:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        kept = optimal_counterfactual(model, rows, target="other", cost="l1")
        filled = treelens.counterfactual(
            model, rows, target="other", cost="l1", reference=frame,
            fill_missing=["income"], fill_cost={"income": 0.01}, infer=False,
        )  # fmt: skip
        tweak = feature_tweak(
            model, rows, target="other", cost="l1", reference=frame,
            fill_missing=["income"], fill_cost={"income": 0.01}, infer=False,
        )  # fmt: skip
    # A row missing both values has no counterfactual unless one is filled.
    assert (filled.found_ >= kept.found_).all() and filled.found_.all()
    assert not kept.filled_.any()
    assert filled.filled_[:, 1].sum() == 0  # only income may be filled
    assert filled.filled_[:, 0].any()
    predicted = model.predict(pd.DataFrame(filled.X_cf_, columns=rows.columns))
    assert (predicted != model.predict(rows)).all()
    assert (filled.cost_ <= kept.cost_ * (1 + 1e-6) + 1e-12).all()
    assert not kept.found_[rows.isna().all(axis=1).to_numpy()].any()
    assert (filled.cost_[tweak.found_] <= tweak.cost_[tweak.found_] + 1e-9).all()
    frame_out = filled.to_frame()
    filled_rows = frame_out[frame_out.filled]
    assert len(filled_rows) == filled.filled_.sum()
    assert (filled_rows.feature == "income").all()
    assert filled_rows.before.isna().all() and filled_rows.delta.isna().all()
    # A debt that stays missing stays missing.
    debt_missing = rows["debt"].isna().to_numpy()
    assert np.isnan(np.asarray(filled.X_cf_)[debt_missing, 1]).all()


@pytest.mark.parametrize("method", ["optimal", "tweak"])
def test_a_row_not_found_names_the_values_kept_missing(method):
    # A row missing both values has no counterfactual while they stay missing:
    # its reason names them and the option that lifts the condition, unless the
    # column may not be filled at all (immutable) or is filled already.
    X, y = _data(1)
    frame = pd.DataFrame(X, columns=["income", "debt"])
    model = make_pipeline(
        SimpleImputer(strategy="mean"), RandomForestClassifier(8, random_state=0)
    ).fit(frame, y)
    rows = frame[frame.isna().all(axis=1)].iloc[:2]
    assert len(rows) == 2

    def reasons(**options):
        result = treelens.counterfactual(
            model, rows, target="other", cost="l1", reference=frame,
            method=method, infer=False, **options,
        )  # fmt: skip
        assert not result.found_.any()
        return list(result.reason_)

    for reason in reasons():
        assert reason.endswith(
            "with the missing values of 'income', 'debt' kept missing "
            "(fill_missing allows filling; --fill-missing on the command line)"
        )
    for reason in reasons(constraints=Constraints(immutable=["income"])):
        assert "of 'debt' kept missing" in reason and "'income'" not in reason
    both_fixed = reasons(constraints=Constraints(immutable=["income", "debt"]))
    assert all("kept missing" not in reason for reason in both_fixed)


def test_a_dear_fill_is_never_taken():
    X, y = _data(2)
    model = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(X, y)
    rows = X[np.isnan(X).any(axis=1)][:5]
    kept = optimal_counterfactual(model, rows, target="other", cost="l1")
    dear = optimal_counterfactual(
        model, rows, target="other", cost="l1", reference=X,
        fill_missing=True, fill_cost=1e6,
    )  # fmt: skip
    found = kept.found_
    assert found.any() and not found.all()  # a row missing both has none
    assert not dear.filled_[found].any()
    np.testing.assert_allclose(dear.cost_[found], kept.cost_[found], rtol=1e-6)
    # Where nothing else reaches the target, filling does, at its price.
    assert dear.found_[~found].all() and (dear.cost_[~found] >= 1e6).all()


@pytest.fixture(scope="module")
def small():
    X, y = _data(3)
    return HistGradientBoostingClassifier(max_iter=2, random_state=0).fit(X, y), X


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fill_missing": ["wealth"]}, "fill_missing.*'wealth'"),
        ({"fill_missing": [0], "fill_cost": -1.0}, "fill_cost.*-1.0"),
        ({"fill_missing": [0], "fill_cost": np.inf}, "fill_cost.*inf"),
        ({"fill_missing": [0], "fill_cost": {1: 2.0}}, "fill_cost.*'x1'"),
        ({"fill_missing": [0], "fill_cost": {0: np.nan}}, "fill_cost of 'x0'.*nan"),
        ({"fill_cost": 2.0}, "fill_cost.*fill_missing"),
        ({"fill_missing": True, "reference": None}, "reference"),
        (
            {"fill_missing": ["x0"], "constraints": Constraints(immutable=["x0"])},
            "'x0'.*immutable",
        ),
    ],
)
def test_bad_fill_options_are_refused_naming_the_value(small, options, message):
    model, X = small
    given = {"reference": X, **options}
    for search in (feature_tweak, optimal_counterfactual, treelens.counterfactual):
        with pytest.raises(InputError, match=message):
            search(model, X[:3], target="other", **given)


def _predict_by_walk(forest, points):
    """Mean of the leaves each point reaches, walked node by node."""
    return np.array(
        [
            np.mean(
                [
                    tree.value[reference_leaf(tree, forest, x), 0]
                    for tree in forest.trees
                ]
            )
            for x in points
        ]
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_a_missing_category_filled_costs_the_fill_cost(seed):
    rng = np.random.default_rng(seed)
    forest = random_forest(rng, n_trees=3, max_depth=3)
    reference = random_codes(rng, 30)
    x = np.array([np.nan, float(rng.choice([-1.0, 0.25, 1.0])), float(rng.integers(4))])
    values = np.unique(_predict_by_walk(forest, random_codes(rng, 60)))
    middle = max(0, int(0.7 * values.size) - 1)
    upper = values[min(middle + 1, values.size - 1)]
    low = (values[middle] + upper) / 2 if upper > values[middle] else values[middle]
    target = (float(low) + 1e-9, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        exact = optimal_counterfactual(
            forest, x[None, :], target=target, cost="l1", reference=reference,
            fill_missing=["color"], fill_cost=0.5, warm_start=False,
        )  # fmt: skip
        tweak = feature_tweak(
            forest, x[None, :], target=target, cost="l1", reference=reference,
            fill_missing=["color"], fill_cost=0.5,
        )  # fmt: skip
    # Brute force: colour kept missing (0) or any colour (0.5), shape kept (0)
    # or changed (1), size over both neighbours of every threshold.
    sizes = candidate_values(forest, x)[1]
    colors = [(0.0, np.nan)] + [(0.5, float(c)) for c in range(3)]
    shapes = [(0.0 if c == x[2] else 1.0, float(c)) for c in range(4)]
    combos = list(
        itertools.product(colors, [(abs(v - x[1]), v) for v in sizes], shapes)
    )
    points = np.array([[v for _, v in combo] for combo in combos])
    costs = np.array([sum(p for p, _ in combo) for combo in combos])
    valid = _predict_by_walk(forest, points) >= target[0]
    least = float(costs[valid].min()) if valid.any() else np.inf
    assert exact.found_[0] == np.isfinite(least)
    if exact.found_[0]:
        assert_proven_optimal(exact.cost_[0], least)
        assert exact.filled_[0, 0] == (not np.isnan(exact.X_cf_[0, 0]))
    if tweak.found_[0]:
        assert _predict_by_walk(forest, tweak.X_cf_)[0] >= target[0]
        assert tweak.cost_[0] >= exact.cost_[0] * (1 - 1e-6) - 1e-12
        # The tweak's cost is its own moves plus the prices, as stated.
        cf = tweak.X_cf_[0]
        price = 0.5 * (not np.isnan(cf[0])) + float(cf[2] != x[2])
        assert tweak.cost_[0] == pytest.approx(abs(cf[1] - x[1]) + price, abs=1e-9)


@pytest.mark.parametrize("search", [feature_tweak, optimal_counterfactual])
@pytest.mark.parametrize(
    "constraints",
    [
        Constraints(bounds={1: (5.0, 10.0)}),
        Constraints(increase_only=[1]),
        Constraints(decrease_only=[1]),
        Constraints(integer=[1], bounds={1: (0.5, 9.5)}),
    ],
    ids=["bounds", "increase", "decrease", "integer"],
)
def test_constraints_on_a_value_kept_missing_do_not_apply_to_it(search, constraints):
    # A value kept missing was held at 0 under its column's constraints: a
    # bound without 0 made every such row "infeasible", and a direction raised
    # "declared both immutable and increase-only" (never declared immutable).
    X, y = _data()
    model = HistGradientBoostingClassifier(max_iter=4, max_depth=2, random_state=0)
    model.fit(X, y)
    rows = X[np.isnan(X[:, 1]) & ~np.isnan(X[:, 0])][:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        free = search(model, rows, target="other", cost="l1")
        held = search(model, rows, target="other", cost="l1", constraints=constraints)
    assert free.found_.any()
    np.testing.assert_array_equal(held.found_, free.found_)
    np.testing.assert_array_equal(held.cost_, free.cost_)
    assert np.isnan(np.asarray(held.X_cf_)[held.found_, 1]).all()
