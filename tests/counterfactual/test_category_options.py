"""Several options per row over categorical columns and missing values: each
option is the least-cost valid point that differs from the earlier ones,
checked by brute force over every category and every numeric cell.

A move is a changed number with its direction, or a categorical column changed
to one category (``diversity="moves"``); with ``"features"`` a changed column,
whatever its direction or new category.  An option differs from an earlier one
when it leaves out one of the earlier one's moves.  Validity is the model's own
``predict`` on the user's frame; nothing of treelens' counterfactual code is
used by the brute force.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from threadpoolctl import threadpool_limits

import treelens
from tests.counterfactual import brute
from treelens import InputError, counterfactual, optimal_counterfactual
from treelens._counterfactual._problem import (
    REASON_INFEASIBLE,
    REASON_NO_OPTION,
    CounterfactualCheckWarning,
)

COLOURS = ["blue", "green", "red"]
NUMBERS = ["a", "b"]


def _frame(seed, n=120, missing=False):
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS, n)
    a, b = rng.normal(size=n), rng.normal(size=n)
    score = a - 0.5 * b + np.select([colour == "red", colour == "green"], [1.2, -0.8])
    y = (score + 0.3 * rng.normal(size=n) > 0).astype(int)
    if missing:
        a[rng.random(n) < 0.15] = np.nan
    frame = pd.DataFrame({"colour": pd.Categorical(colour, COLOURS), "a": a, "b": b})
    return frame, y


def _pipeline(seed, depth):
    X, y = _frame(seed)
    encoder = ColumnTransformer(
        [("colour", OneHotEncoder(handle_unknown="ignore"), ["colour"])],
        remainder="passthrough",
    )
    forest = RandomForestClassifier(3, max_depth=depth, random_state=seed)
    return Pipeline([("encode", encoder), ("forest", forest)]).fit(X, y), X


def _native(seed, depth, missing=False):
    X, y = _frame(seed, missing=missing)
    model = HistGradientBoostingClassifier(
        max_iter=3, max_depth=depth, categorical_features="from_dtype",
        min_samples_leaf=5, random_state=seed,
    )  # fmt: skip
    with threadpool_limits(1):  # OpenMP threads only slow so small a fit down
        return model.fit(X, y), X


def _candidates(model, row):
    """Per column: every category; for numbers, the row's value and both
    neighbours (in the model's dtype) of every threshold the trees compare the
    column with; a missing value stays missing."""
    forest = treelens.to_forest(model)
    codes = np.zeros(forest.n_features)
    codes[1:] = row[NUMBERS].to_numpy(dtype=np.float64)
    numbers = brute.candidate_values(forest, np.nan_to_num(codes))
    columns = [COLOURS]
    for j, name in enumerate(NUMBERS, start=1):
        value = row[name]
        columns.append([np.nan] if np.isnan(value) else list(numbers[j]))
    return columns


def _moves(row, points, diversity):
    """The moves of each point (a frozenset per point)."""
    out = []
    for colour, a, b in points:
        moves = set()
        if colour != row["colour"]:
            moves.add(("colour", colour if diversity == "moves" else None))
        for name, value in zip(NUMBERS, (a, b)):
            before = row[name]
            if np.isnan(before) or value == before:
                continue
            moves.add((name, np.sign(value - before) if diversity == "moves" else None))
        out.append(frozenset(moves))
    return out


def _brute_options(model, row, k, diversity, found):
    """The least cost of option after option, given the options returned
    before it (``found``: their points), by brute force."""
    points = list(itertools.product(*_candidates(model, row)))
    frame = pd.DataFrame(points, columns=["colour", *NUMBERS])
    frame["colour"] = pd.Categorical(frame["colour"], COLOURS)
    before = row[NUMBERS].to_numpy(dtype=np.float64)
    numeric = frame[NUMBERS].to_numpy(dtype=np.float64)
    cost = np.nansum(np.abs(numeric - before), axis=1)
    cost += (frame["colour"] != row["colour"]).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        own = model.predict(row.to_frame().T.astype(frame.dtypes.to_dict()))[0]
        valid = model.predict(frame) != own
    moves = _moves(row, points, diversity)
    least = []
    for o in range(k):
        earlier = _moves(row, found[:o], diversity)
        keep = valid & np.array([not any(e <= m for e in earlier) for m in moves])
        least.append(float(cost[keep].min()) if keep.any() else np.inf)
    return least


def _check(model, X, i, diversity, k=3):
    row = X.iloc[i]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, X.iloc[[i]], target="other", cost="l1",
            n_counterfactuals=k, diversity=diversity,
        )  # fmt: skip
    assert result.row_.tolist() == [0] * k
    assert result.option_.tolist() == list(range(1, k + 1))
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert (result.X_cf_.dtypes == X.dtypes).all()
    found = result.found_
    points = [
        tuple(result.X_cf_.iloc[o][["colour", *NUMBERS]]) for o in np.flatnonzero(found)
    ]
    least = _brute_options(model, row, k, diversity, points)
    for o in range(k):
        if np.isinf(least[o]):
            assert not found[o] and result.status_[o] == "infeasible"
            assert result.reason_[o] == (REASON_NO_OPTION if o else REASON_INFEASIBLE)
            assert not found[o:].any()
            break
        assert found[o] and result.status_[o] == "optimal"
        brute.assert_proven_optimal(result.cost_[o], least[o])
    assert (np.diff(result.cost_[found]) >= -1e-12).all()  # cost order
    moves = _moves(row, points, diversity)
    for a in range(len(moves)):
        for b in range(a):
            assert not moves[b] <= moves[a]  # leaves out a move of each earlier one
    if not found.any():
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        predicted = model.predict(result.X_cf_[found])
        own = model.predict(X.iloc[[i]])[0]
    assert (predicted != own).all()
    # Missing values stay missing in every option.
    missing = row.isna().to_numpy()
    assert result.X_cf_[found].isna().to_numpy()[:, missing].all()
    return result


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    depth=st.integers(2, 3),
    diversity=st.sampled_from(["moves", "features"]),
)
def test_pipeline_options_are_optimal_given_the_earlier_ones(seed, depth, diversity):
    model, X = _pipeline(seed, depth)
    _check(model, X, seed % len(X), diversity)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    depth=st.integers(2, 3),
    diversity=st.sampled_from(["moves", "features"]),
)
def test_native_categorical_options_are_optimal_given_the_earlier_ones(
    seed, depth, diversity
):
    model, X = _native(seed, depth)
    _check(model, X, seed % len(X), diversity)


@pytest.mark.parametrize("diversity", ["moves", "features"])
def test_options_of_rows_with_missing_values(diversity):
    model, X = _native(1, 3, missing=True)
    rows = np.flatnonzero(X["a"].isna().to_numpy())[:3]
    found = [_check(model, X, int(i), diversity).found_ for i in rows]
    assert sum(f.sum() for f in found) >= 4  # rows with several options


def test_options_of_several_rows_form_one_table():
    model, X = _pipeline(1, 3)
    rows = X.iloc[:4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        one = counterfactual(model, rows, target="other")
        three = counterfactual(model, rows, target="other", n_counterfactuals=3)
    assert len(three) == 12 and three.row_.tolist() == np.repeat(range(4), 3).tolist()
    assert list(three.X_cf_.index) == list(np.repeat(rows.index, 3))
    assert three.X_.shape == (12, 3)
    # The first option is the single counterfactual.
    np.testing.assert_allclose(three.cost_[::3], one.cost_, rtol=1e-9)
    frame = three.to_frame()
    assert set(frame["option"]) <= {1, 2, 3} and set(frame["row"]) <= set(range(4))
    colour = frame[frame.feature == "colour"]
    assert colour["after"].isin(COLOURS).all() and colour["delta"].isna().all()


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_n_counterfactuals_must_be_a_positive_integer(k):
    model, X = _pipeline(0, 2)
    with pytest.raises(InputError, match="n_counterfactuals"):
        optimal_counterfactual(model, X.iloc[:1], target="other", n_counterfactuals=k)


# ------------------------------------------------- options with values filled
def _fill_options_brute(model, x, fill_cost, median, found, diversity, k):
    """Least l1 cost of each option given the returned earlier ones: a missing
    value kept missing (no move) or filled (its fill cost plus the move from
    the median; "filled" is one move, whatever the value)."""
    start = np.where(np.isnan(x), median, x)
    grids = brute.candidate_values(model, start)
    choices = []
    for j, column in enumerate(grids):
        if np.isnan(x[j]):
            choices.append(
                [(0.0, np.nan)] + [(fill_cost + abs(v - median[j]), v) for v in column]
            )
        else:
            choices.append([(abs(v - x[j]), v) for v in column])
    combos = list(itertools.product(*choices))
    points = np.array([[v for _, v in c] for c in combos])
    costs = np.array([sum(p for p, _ in c) for c in combos])
    valid = model.predict(points) != model.predict(x[None, :])[0]

    def moves(p):
        out = set()
        for j, (before, after) in enumerate(zip(x, p)):
            if np.isnan(before):
                if not np.isnan(after):
                    out.add((j, "filled"))
            elif after != before:
                out.add((j, np.sign(after - before) if diversity == "moves" else None))
        return frozenset(out)

    every = [moves(p) for p in points]
    least = []
    for o in range(k):
        earlier = [moves(p) for p in found[:o]]
        keep = valid & np.array([not any(e <= m for e in earlier) for m in every])
        least.append(float(costs[keep].min()) if keep.any() else np.inf)
    return least, moves


@pytest.mark.parametrize(
    ("fill_cost", "diversity"), [(0.3, "moves"), (0.0, "features")]
)
def test_options_with_values_filled_are_optimal_given_the_earlier_ones(
    fill_cost, diversity
):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] > 0.2).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    model = HistGradientBoostingClassifier(max_iter=3, max_depth=3, random_state=0)
    with threadpool_limits(1):
        model.fit(X, y)
    rows = X[np.isnan(X).sum(axis=1) == 1][:4]
    median = np.nanmedian(X, axis=0)
    k = 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, rows, target="other", cost="l1", reference=X, infer=False,
            fill_missing=True, fill_cost=fill_cost, n_counterfactuals=k,
            diversity=diversity,
        )  # fmt: skip
    np.testing.assert_array_equal(result.fill_start_, median)
    assert result.filled_.shape == (k * len(rows), X.shape[1])
    several = 0
    for r, x in enumerate(rows):
        entries = slice(k * r, k * (r + 1))
        found = result.found_[entries]
        points = result.X_cf_[entries][found]
        least, moves = _fill_options_brute(
            model, x, fill_cost, median, points, diversity, k
        )
        for o in range(k):
            if np.isinf(least[o]):
                assert not found[o:].any()
                break
            assert found[o]
            brute.assert_proven_optimal(result.cost_[entries][o], least[o])
        assert (model.predict(points) != model.predict(x[None, :])[0]).all()
        sets = [moves(p) for p in points]
        assert all(not sets[b] <= sets[a] for a in range(len(sets)) for b in range(a))
        several += int(found.sum() >= 2)
    assert several >= 2, several


def test_an_assignment_cut_short_leaves_the_row_unproven(monkeypatch):
    # The cheapest combination of categories (the row's own) ends at its time
    # limit with nothing proven: an answer under another combination, proven
    # there, is not proven optimal for the row, and its gap says how far the
    # proof got (the own combination's price is 0, its numeric bound 0).
    from treelens._counterfactual import _optimal
    from treelens._counterfactual._milp._solve import MilpOutcome

    model, X = _pipeline(1, 3)
    row = X[model.predict(X) == 0].iloc[[0]]
    calls = []
    solve = _optimal.solve_cells

    def first_times_out(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            return MilpOutcome("time_limit", None, np.inf, 0.0)
        return solve(*args, **kwargs)

    monkeypatch.setattr(_optimal, "solve_cells", first_times_out)
    result = optimal_counterfactual(
        model, row, target=1, cost="l1", warm_start=False, category_cost=0.01
    )
    assert calls  # the own combination was searched, and cut short
    assert result.found_[0]
    # The answer lies under another combination of categories.
    categorical = row.select_dtypes(exclude="number").columns
    assert (result.X_cf_.iloc[0][categorical] != row.iloc[0][categorical]).any()
    assert model.predict(result.X_cf_)[0] == 1
    assert result.status_[0] == "time_limit"
    assert 0 < result.gap_[0] <= 1


def test_a_row_missing_its_category_gets_a_counterfactual():
    # The counterfactual keeps the category missing as nan, the missing value
    # of the user's column (an encoder takes None as a category of its own).
    rng = np.random.default_rng(0)
    n = 300
    employment = rng.choice(["salaried", "self-employed", "none"], n).astype(object)
    income = rng.normal(size=n)
    y = (income + (employment == "salaried") > 0.5).astype(int)
    employment[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"employment": employment, "income": income})
    encoder = ColumnTransformer(
        [("oh", OneHotEncoder(handle_unknown="ignore"), ["employment"])],
        remainder="passthrough",
    )
    forest = RandomForestClassifier(20, max_depth=4, random_state=0)
    model = Pipeline([("encode", encoder), ("forest", forest)]).fit(X, y)
    rows = X[X["employment"].isna() & (model.predict(X) == 0)].iloc[:2]
    assert len(rows) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = counterfactual(model, rows, target=1)
    assert result.found_.all()
    assert (model.predict(result.X_cf_) == 1).all()
    assert result.X_cf_["employment"].isna().all()
    assert result.missing_ is not None
