"""Constraints read off reference data: whole numbers, 0/1 flags, one-hot groups."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import treelens
from treelens import Constraints, InputError, counterfactual, feature_tweak

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from loans import loan_table

GROUP = ["employment_salaried", "employment_self_employed", "employment_unemployed"]


@pytest.fixture(scope="module")
def loans():
    X, y = loan_table(n=600, seed=1)
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:4]
    return model, X, rows


def test_inferred_constraints_hold_and_are_reported(loans):
    model, X, rows = loans
    result = counterfactual(model, rows, target=1, reference=X, cost="l2")
    assert result.inferred_["integer"] == ["income", "age", "debt"]
    assert result.inferred_["flags"] == ["has_mortgage", "defaulted_before"]
    assert result.inferred_["one_hot"] == [GROUP]
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert list(result.X_cf_.columns) == list(X.columns)
    frame = result.X_cf_[result.found_]
    assert len(frame)
    cf = frame.to_numpy(dtype=np.float64)
    names = list(X.columns)
    for name in ["income", "age", "debt", "has_mortgage", "defaulted_before", *GROUP]:
        column = cf[:, names.index(name)]
        assert (column == np.round(column)).all(), name
    for name in ["has_mortgage", "defaulted_before", *GROUP]:
        assert np.isin(cf[:, names.index(name)], (0.0, 1.0)).all(), name
    assert (cf[:, [names.index(g) for g in GROUP]].sum(axis=1) == 1).all()
    assert (model.predict(frame) == 1).all()


def test_inference_can_be_switched_off_or_narrowed(loans):
    model, X, rows = loans
    off = counterfactual(model, rows, target=1, reference=X, infer=False)
    assert off.inferred_ == {}
    only = feature_tweak(model, rows, target=1, reference=X, infer=("integer",))
    assert set(only.inferred_) == {"integer"}
    # Flag columns are whole numbers too: counted as integers when flags are off.
    assert "has_mortgage" in only.inferred_["integer"]
    # Without reference, a DataFrame's dtypes are still read (these are all
    # float64: nothing is declared); an array of floats gives no evidence at all.
    none = counterfactual(model, rows, target=1)
    assert none.inferred_ == {"integer": [], "flags": [], "one_hot": []}
    array = counterfactual(model, rows.to_numpy(), target=1)
    assert array.inferred_ == {}


def test_user_constraints_are_kept(loans):
    model, X, rows = loans
    constraints = Constraints(
        immutable=["employment_unemployed"], bounds={"has_mortgage": (0, 0)}
    )
    result = counterfactual(model, rows, target=1, reference=X, constraints=constraints)
    # A run that meets an immutable column is not grouped; a bounded flag keeps
    # the user's bounds.
    assert result.inferred_["one_hot"] == []
    assert "has_mortgage" not in result.inferred_["flags"]
    found = result.X_cf_[result.found_]
    assert (found["has_mortgage"] == 0).all()


@pytest.mark.parametrize("infer", ["yes", ("integer", "ordinal"), 3])
def test_bad_infer_is_refused(loans, infer):
    model, X, rows = loans
    with pytest.raises(InputError, match="infer"):
        counterfactual(model, rows, target=1, reference=X, infer=infer)


@pytest.mark.parametrize("search", ["optimal_counterfactual", "feature_tweak"])
def test_rows_solved_in_chunks_are_constrained_as_in_one_call(search):
    # The inference leaves out what a row explained would break, so it is made
    # once over all the rows, not per chunk: one fractional value in a late
    # chunk keeps the column free for every row, as in one call.
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=300), rng.integers(0, 10, 300).astype(float)]
    y = (X[:, 0] + 0.3 * X[:, 1] > 1.5).astype(int)
    model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y)
    rows = X[model.predict(X) == 0][:100].copy()
    rows[80, 1] += 0.5
    run = getattr(treelens, search)
    whole = run(model, rows, target=1, reference=X)
    chunked = run(model, rows, target=1, reference=X, progress=True)
    assert whole.inferred_["integer"] == [] == chunked.inferred_["integer"]
    np.testing.assert_array_equal(chunked.X_cf_, whole.X_cf_)
    np.testing.assert_array_equal(chunked.cost_, whole.cost_)
    kept = run(model, rows[:70], target=1, reference=X, progress=True)
    assert kept.inferred_["integer"] == ["x1"]  # no fractional row: inferred


def test_chunks_and_dask_partitions_infer_as_one_call():
    import dask.array as da

    import treelens.dask

    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=300), rng.integers(0, 10, 300).astype(float)]
    y = (X[:, 0] + 0.3 * X[:, 1] > 1.5).astype(int)
    model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y)
    rows = X[model.predict(X) == 0][:8].copy()
    rows[5, 1] += 0.5  # in the second chunk only
    whole = treelens.optimal_counterfactual(model, rows, target=1, reference=X)
    chunks = treelens.optimal_counterfactual(
        model, [rows[:4], rows[4:]], target=1, reference=X
    )
    parts = treelens.dask.optimal_counterfactual(
        model, da.from_array(rows, chunks=4), target=1, reference=X,
        scheduler="synchronous",
    )  # fmt: skip
    frame = treelens.dask.counterfactual_frame(
        model, da.from_array(rows, chunks=4), target=1, reference=X, optimal=True,
        scheduler="synchronous",
    ).compute()  # fmt: skip
    for result in (chunks, parts):
        assert result.inferred_ == whole.inferred_
        np.testing.assert_array_equal(result.X_cf_, whole.X_cf_)
    np.testing.assert_array_equal(frame[["cf_x0", "cf_x1"]].to_numpy(), whole.X_cf_)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.integers(1, 11))
def test_summaries_of_blocks_merge_into_those_of_their_rows(seed, cut):
    from treelens._counterfactual._inference import (
        ColumnSummary,
        RunSummary,
        constraints_from,
        infer_constraints,
    )

    # Flag columns, one-hot runs of two and three, a whole column; a few rows
    # that break a run or a flag, wherever the cut between blocks falls.
    rng = np.random.default_rng(seed)
    n = 12
    one_hot = np.eye(3)[rng.integers(0, 3, n)]
    pair = np.eye(2)[rng.integers(0, 2, n)]
    data = np.c_[
        rng.integers(0, 2, n), one_hot, pair, rng.integers(0, 5, n), rng.normal(size=n)
    ].astype(float)
    broken = rng.random(n) < 0.15
    data[broken, 1] = rng.choice([0.0, 1.0, 0.5], broken.sum())
    forest = treelens.to_forest(
        RandomForestClassifier(2, max_depth=2, random_state=0).fit(
            data, rng.integers(0, 2, n)
        )
    )
    reference, rows = data[:cut], data[cut:]
    expected = infer_constraints(
        forest, reference, rows, None, ("one_hot", "flags", "integer")
    )
    columns = ColumnSummary.of(reference).merge(ColumnSummary.of(rows))
    runs = RunSummary.of(columns.flags, reference).merge(
        RunSummary.of(columns.flags, rows)
    )
    got = constraints_from(forest, columns, runs, None, ("one_hot", "flags", "integer"))
    assert got[1] == expected[1]


def _typed_rows(points):
    """Points as the DataFrame the model was fitted on (bool, int64, float64)."""
    points = np.asarray(points, dtype=np.float64)
    return pd.DataFrame(
        {
            "b": points[:, 0].astype(bool),
            "k": points[:, 1].astype(np.int64),
            "x": points[:, 2],
        }
    )


def _typed_data(seed):
    """A bool column ``b``, an integer column ``k`` and a float column ``x``,
    and a target that depends on all three."""
    rng = np.random.default_rng(seed)
    n = 300
    X = _typed_rows(
        np.c_[rng.random(n) < 0.5, rng.integers(0, 10, n), rng.normal(size=n)]
    )
    y = (X["b"].astype(int) + (X["k"] > 4) + (X["x"] > 0) >= 2).astype(int)
    return X, y


@pytest.fixture(scope="module")
def typed():
    # A bool and an integer column the model splits on, no reference data.
    X, y = _typed_data(3)
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:6]
    return model, rows


def _assert_least_with_whole_columns(
    model, rows, costs, integer, flags, as_rows=lambda points: points
):
    """Each row's cost is the least L1 cost of every cell's nearest point with
    the ``integer`` columns whole and the ``flags`` 0 or 1 that the model itself
    (given ``as_rows(points)``) predicts as class 1."""
    from tests.counterfactual import brute

    rows = np.asarray(rows, dtype=np.float64)
    lower = np.where(np.isin(np.arange(rows.shape[1]), flags), 0.0, -np.inf)
    upper = np.where(np.isin(np.arange(rows.shape[1]), flags), 1.0, np.inf)
    for x, cost in zip(rows, costs):
        values = brute.candidate_values(
            model, x, integer=integer, lower=lower, upper=upper
        )
        points = np.array(list(itertools.product(*values)), dtype=np.float64)
        valid = model.predict(as_rows(points)) == 1
        least = float(np.abs(points[valid] - x).sum(axis=1).min())
        brute.assert_proven_optimal(float(cost), least)


def test_frame_dtypes_keep_flags_and_whole_numbers_without_reference(typed):
    model, rows = typed
    result = counterfactual(model, rows, target=1)
    assert result.inferred_ == {"integer": ["k"], "flags": ["b"], "one_hot": []}
    assert result.found_.all()
    assert result.X_cf_["b"].dtype == bool and result.X_cf_["k"].dtype == np.int64
    assert (model.predict(result.X_cf_) == 1).all()
    # Every cell's nearest point with b in {0, 1} and k whole, predicted by the
    # model itself: the answer costs the least of them.
    _assert_least_with_whole_columns(
        model, rows, result.cost_, integer=(0, 1), flags=(0,), as_rows=_typed_rows
    )
    # The flag is part of some answer, not left alone.
    assert (result.X_cf_["b"] != rows["b"]).any()
    tweaked = feature_tweak(model, rows, target=1)
    assert tweaked.inferred_ == result.inferred_
    found = tweaked.X_cf_[tweaked.found_]
    assert found["b"].dtype == bool and found["k"].dtype == np.int64


def test_frame_dtypes_are_not_read_with_infer_off(typed):
    model, rows = typed
    free = counterfactual(model, rows, target=1, infer=False)
    assert free.inferred_ == {}
    flags = free.X_cf_["b"].to_numpy(dtype=np.float64)
    assert not np.isin(flags, (0.0, 1.0)).all()  # a flag moved part way
    assert (model.predict(free.X_cf_[free.found_]) == 1).all()


def _array_data(dtype):
    """Rows of one numpy dtype: four bool columns, or three integer ones
    (0 to 9), and a target that depends on all of them."""
    rng = np.random.default_rng(5)
    n = 300
    if dtype is bool:
        X = rng.random((n, 4)) < 0.5
        y = (X[:, 0] & X[:, 1]) | (X[:, 2] & ~X[:, 3])
    else:
        X = rng.integers(0, 10, (n, 3)).astype(dtype)
        wide = X.astype(np.int64)
        y = wide[:, 0] + wide[:, 1] - wide[:, 2] > 6
    return X, y.astype(int)


def _array_model(dtype):
    """A small forest fitted on an array of ``dtype`` and six rows it declines."""
    X, y = _array_data(dtype)
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    return model, X[model.predict(X) == 0][:6]


@pytest.mark.parametrize("dtype", [bool, np.int64, np.uint8])
def test_array_dtypes_keep_flags_and_whole_numbers_without_reference(dtype):
    # A numpy array's dtype is that of every column: bool makes every column a
    # flag, an integer dtype every column whole, as a DataFrame's columns of
    # those dtypes are read.
    model, rows = _array_model(dtype)
    names = [f"x{j}" for j in range(rows.shape[1])]
    flags = dtype is bool
    expected = {"integer": [] if flags else names, "flags": names if flags else []}
    result = counterfactual(model, rows, target=1)
    assert result.inferred_ == {**expected, "one_hot": []}
    assert result.found_.all()
    assert (model.predict(result.X_cf_) == 1).all()
    everything = tuple(range(rows.shape[1]))
    _assert_least_with_whole_columns(
        model, rows, result.cost_, integer=everything, flags=everything if flags else ()
    )
    tweaked = feature_tweak(model, rows, target=1)
    assert tweaked.inferred_ == result.inferred_
    found = tweaked.X_cf_[tweaked.found_]
    assert len(found) and (found == np.round(found)).all()
    if flags:
        assert np.isin(found, (0.0, 1.0)).all()
    # Off: the columns move part way, just past a threshold.
    free = counterfactual(model, rows, target=1, infer=False)
    assert free.inferred_ == {}
    assert (model.predict(free.X_cf_) == 1).all()
    assert not (free.X_cf_ == np.round(free.X_cf_)).all()


@pytest.mark.parametrize("dtype", [bool, np.int64])
@pytest.mark.parametrize("infer", [True, False])
def test_the_warm_start_keeps_the_declared_constraints(monkeypatch, dtype, infer):
    # The local search that gives HiGHS its start moves only to the priced
    # points of cells (whole in integer columns, 0 or 1 in flags; a cell
    # without one is never entered), so the start it finds keeps the declared
    # constraints before any solve; with inference off the same rows' starts
    # stop just past a threshold.
    from treelens._counterfactual import _optimal

    model, rows = _array_model(dtype)
    starts = []
    incumbent = _optimal._incumbent

    def spy(problem, program, row, known, *, deadline):
        found, settled = incumbent(problem, program, row, known, deadline=deadline)
        if found is not None:
            starts.append(row.points[found[0]])
        return found, settled

    monkeypatch.setattr(_optimal, "_incumbent", spy)
    result = treelens.optimal_counterfactual(model, rows, target=1, infer=infer)
    assert result.found_.all() and len(starts) == len(rows)
    starts = np.array(starts)
    assert (model.predict(starts) == 1).all()
    assert (starts == np.round(starts)).all() == infer
    if dtype is bool:
        assert np.isin(starts, (0.0, 1.0)).all() == infer


def test_arrays_of_floats_and_lists_declare_nothing():
    # A list has no dtype of its own (numpy would make these rows bool).
    model, rows = _array_model(bool)
    for undeclared in (rows.astype(np.float64), rows.tolist()):
        assert counterfactual(model, undeclared, target=1).inferred_ == {}


def _declared_with_reference(typed, kind):
    """A model, rows whose dtypes declare flags or whole numbers, and reference
    data that alone would not: a fractional count (the typed frame) or a
    fractional flag (an array of bools)."""
    if kind == "frame":
        model, rows = typed
        reference = rows.to_numpy(dtype=np.float64)
        reference[0, 1] += 0.5
        return model, rows, reference
    model, rows = _array_model(bool)
    reference = rows.astype(np.float64)
    reference[0, 0] = 0.5
    return model, rows, reference


@pytest.mark.parametrize("kind", ["frame", "array"])
def test_dtypes_hold_in_chunks_and_dask_partitions_with_reference(typed, kind):
    # The dtypes outweigh reference data that does not hold whole numbers or
    # flags; rows solved in chunks or Dask partitions (constraints inferred
    # once over all of them) read them as one call over all the rows does.
    import dask.array as da
    import dask.dataframe as dd

    import treelens.dask

    model, rows, reference = _declared_with_reference(typed, kind)
    options = {"target": 1, "reference": reference}
    whole = treelens.optimal_counterfactual(model, rows, **options)
    if kind == "frame":
        assert whole.inferred_["integer"] == ["k"] and whole.inferred_["flags"] == ["b"]
        collection = dd.from_pandas(rows, npartitions=2)
    else:
        assert whole.inferred_["flags"] == ["x0", "x1", "x2", "x3"]
        collection = da.from_array(rows, chunks=(3, 4))
    chunked = treelens.optimal_counterfactual(model, rows, progress=True, **options)
    parts = treelens.dask.optimal_counterfactual(
        model, collection, scheduler="synchronous", **options
    )
    entry = treelens.dask.counterfactual(
        model, collection, scheduler="synchronous", **options
    )
    frame = treelens.dask.counterfactual_frame(
        model, collection, optimal=True, scheduler="synchronous", **options
    ).compute()
    for result in (chunked, parts, entry):
        assert result.inferred_ == whole.inferred_
        if kind == "frame":
            pd.testing.assert_frame_equal(result.X_cf_, whole.X_cf_)
        else:
            np.testing.assert_array_equal(result.X_cf_, whole.X_cf_)
        np.testing.assert_array_equal(result.cost_, whole.cost_)
    cf = frame[[c for c in frame.columns if c.startswith("cf_")]]
    np.testing.assert_array_equal(
        cf.to_numpy(), np.asarray(whole.X_cf_, dtype=np.float64)
    )


def test_frame_dtypes_in_the_search_over_missing_values():
    # Rows with missing values go through the search over fixed values, whose
    # searches take arrays: the frame's dtypes are read there the same way.
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = _typed_data(4)
    X.loc[::4, "x"] = np.nan
    model = HistGradientBoostingClassifier(max_iter=10, max_depth=3, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:6]
    assert rows["x"].isna().any()
    kept = counterfactual(model, rows, target=1)
    assert kept.inferred_ == {"integer": ["k"], "flags": ["b"], "one_hot": []}
    found = kept.X_cf_[kept.found_]
    assert len(found) and found["b"].dtype == bool and found["k"].dtype == np.int64
    assert (model.predict(found) == 1).all()
    free = counterfactual(model, rows, target=1, infer=False)
    assert free.inferred_ == {}
    flags = free.X_cf_["b"][free.found_].to_numpy(dtype=np.float64)
    assert not np.isin(flags, (0.0, 1.0)).all()


def test_array_dtypes_in_the_search_over_categories():
    # A model with a categorical column searches each assignment of it over
    # the other columns as floats: an integer array's dtype is read there too.
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    n = 400
    X = rng.integers(0, 10, (n, 3))
    X[:, 0] %= 4
    y = ((X[:, 0] == 2) | (X[:, 1] + X[:, 2] > 12)).astype(int)
    model = HistGradientBoostingClassifier(
        max_iter=10, max_depth=3, categorical_features=[0], random_state=0
    ).fit(X, y)
    rows = X[model.predict(X) == 0][:6]
    # A change of category costs more than moving the numbers.
    kept = counterfactual(model, rows, target=1, category_cost=50.0)
    assert kept.inferred_ == {"integer": ["x1", "x2"], "flags": [], "one_hot": []}
    assert kept.found_.all() and (model.predict(kept.X_cf_) == 1).all()
    assert (kept.X_cf_ == np.round(kept.X_cf_)).all()
    free = counterfactual(model, rows, target=1, category_cost=50.0, infer=False)
    assert free.inferred_ == {} and (model.predict(free.X_cf_) == 1).all()
    assert not (free.X_cf_ == np.round(free.X_cf_)).all()
