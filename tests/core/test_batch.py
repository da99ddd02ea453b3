"""Streaming batches: chunking, progress, and exact combination of chunk results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor

import treelens
from treelens import InputError, UnsupportedModelError
from treelens._core._chunks import (
    MemoryBudgetError,
    is_chunk_stream,
    iter_chunks,
    iter_labelled_chunks,
    rows_per_chunk,
)
from treelens._importance._node_sums import NodeSums

N = 300


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    Xc, yc = make_classification(N, 5, n_informative=3, n_classes=3, random_state=0)
    Xr, yr = make_regression(N, 5, random_state=0)
    w = rng.random(N)
    w[::13] = 0.0
    return Xc, yc, Xr, yr, w


def _models(data):
    Xc, yc, Xr, yr, _ = data
    half = N // 2
    return [
        (
            RandomForestClassifier(
                4, max_depth=5, class_weight="balanced", random_state=0
            ).fit(Xc[:half], yc[:half]),
            Xc,
            yc,
        ),
        (
            RandomForestClassifier(
                3,
                max_depth=4,
                criterion="entropy",
                class_weight={0: 0.0, 2: 3.0},
                random_state=0,
            ).fit(Xc[:half], yc[:half]),
            Xc,
            yc,
        ),
        (
            RandomForestRegressor(
                3, max_depth=5, criterion="poisson", random_state=0
            ).fit(Xr[:half], np.abs(yr[:half])),
            Xr,
            np.abs(yr),
        ),
        (
            GradientBoostingClassifier(n_estimators=4, max_depth=3, random_state=0).fit(
                Xc[:half], yc[:half]
            ),
            Xc,
            yc,
        ),
        (
            GradientBoostingRegressor(
                n_estimators=4, max_depth=3, loss="absolute_error", random_state=0
            ).fit(Xr[:half], yr[:half]),
            Xr,
            yr,
        ),
    ]


def _assert_same_statistics(a, b):
    for name in ("n_node_samples_", "weighted_n_node_samples_", "value_", "impurity_"):
        for u, v in zip(getattr(a, name), getattr(b, name), strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12, err_msg=name)
    np.testing.assert_array_equal(
        np.concatenate(a.n_node_samples_), np.concatenate(b.n_node_samples_)
    )


def test_chunked_node_statistics_and_mdi_equal_the_single_pass(data):
    w = data[4]
    for model, X, y in _models(data):
        whole = treelens.node_statistics(model, X, y, sample_weight=w)
        chunks = [
            (X[i : i + 70], y[i : i + 70], w[i : i + 70]) for i in range(0, N, 70)
        ]
        _assert_same_statistics(
            whole, treelens.node_statistics(model, iter(chunks), None)
        )
        # A plain array over the budget is split into chunks too.
        small = treelens.node_statistics(
            model, X, y, sample_weight=w, memory_budget=40_000
        )
        _assert_same_statistics(whole, small)
        expected = treelens.mdi_importance(model, X, y, sample_weight=w)
        got = treelens.mdi_importance(model, iter(chunks))
        np.testing.assert_allclose(got.importances_, expected.importances_, atol=1e-12)
        np.testing.assert_allclose(got.per_tree_, expected.per_tree_, atol=1e-12)
        assert got.method == expected.method


def test_streams_of_dataframes_with_separate_y_and_weights(data):
    w = data[4]
    model, X, y = _models(data)[0]
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    X_chunks = [frame.iloc[i : i + 100] for i in range(0, N, 100)]
    y_chunks = (y[i : i + 100] for i in range(0, N, 100))
    got = treelens.node_statistics(model, X_chunks, y_chunks, sample_weight=w)
    _assert_same_statistics(treelens.node_statistics(model, X, y, sample_weight=w), got)


def test_node_sums_round_trip_through_a_frame(data):
    model, X, y = _models(data)[0]
    forest = treelens.to_forest(model)
    from treelens._importance._streaming import chunk_node_sums

    sums = chunk_node_sums(forest, X, y)
    again = NodeSums.from_frame(sums.to_frame())
    np.testing.assert_array_equal(again.sums, sums.sums)


def test_absolute_error_is_exact_in_one_chunk_and_refused_across_chunks(data):
    _, _, Xr, yr, _ = data
    model = DecisionTreeRegressor(
        criterion="absolute_error", max_depth=3, random_state=0
    )
    model.fit(Xr, yr)
    single = treelens.node_statistics(model, Xr, yr, progress=False)
    np.testing.assert_allclose(single.impurity_[0], model.tree_.impurity, atol=1e-12)
    # A progress bar over one array still goes the exact single-pass way.
    _assert_same_statistics(
        single, treelens.node_statistics(model, Xr, yr, progress=True)
    )
    chunks = [(Xr[:100], yr[:100]), (Xr[100:], yr[100:])]
    with pytest.raises(UnsupportedModelError, match="absolute_error"):
        treelens.node_statistics(model, chunks, None)


def test_misaligned_chunks_are_refused(data):
    model, X, y = _models(data)[0]
    with pytest.raises(InputError, match="more rows than X"):
        treelens.node_statistics(model, [X[:100], X[100:200]], y)
    with pytest.raises(InputError, match="fewer chunks"):
        treelens.node_statistics(model, iter([X[:100], X[100:]]), iter([y[:100]]))
    with pytest.raises(InputError, match="no rows"):
        treelens.node_statistics(model, iter([]), None)


def test_chunking_helpers():
    X = np.arange(20.0).reshape(10, 2)
    assert [c.shape[0] for c in iter_chunks(X, 4)] == [4, 4, 2]
    frame = pd.DataFrame(X)
    parts = list(iter_chunks([frame, frame.iloc[:3]], 4))
    assert [len(p) for p in parts] == [4, 4, 2, 3]
    assert all(isinstance(p, pd.DataFrame) for p in parts)
    assert not is_chunk_stream([[1.0, 2.0], [3.0, 4.0]])  # a 2-D list is one array
    assert is_chunk_stream([X, X]) and is_chunk_stream(iter([X]))
    triples = list(iter_labelled_chunks(iter([X, X]), np.arange(20), None, 6))
    assert [t[1].tolist() for t in triples] == [
        [0, 1, 2, 3, 4, 5],
        [6, 7, 8, 9],
        [10, 11, 12, 13, 14, 15],
        [16, 17, 18, 19],
    ]


def test_a_budget_too_small_for_one_row_is_refused():
    with pytest.raises(MemoryBudgetError, match="too small"):
        rows_per_chunk(1_000, 4_096, what="one row")
    with pytest.raises(MemoryBudgetError, match="positive"):
        rows_per_chunk(0, 10)
    assert rows_per_chunk(10_000, 100, max_rows=None) == 100
    assert issubclass(MemoryBudgetError, InputError)


def test_node_statistics_budget_too_small_for_one_row(data):
    model, X, y = _models(data)[0]
    with pytest.raises(MemoryBudgetError, match="too small"):
        treelens.node_statistics(model, iter([X]), y, memory_budget=16)


def test_progress_bar_reports_rows(data, capsys):
    model, X, y = _models(data)[0]
    treelens.node_statistics(model, X, y, progress=True, memory_budget=40_000)
    err = capsys.readouterr().err
    assert "node statistics" in err and f"{N}/{N}" in err


# ------------------------------------------------------------- counterfactuals
@pytest.fixture(scope="module")
def tweak_case(data):
    Xc, yc, _, _, _ = data
    model = RandomForestClassifier(6, max_depth=4, random_state=0).fit(Xc, yc)
    return model, Xc


def _assert_same_counterfactuals(got, expected):
    assert len(got) == len(expected)
    for name in ("found_", "X_cf_", "cost_", "tree_", "leaf_", "X_", "prediction_"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name), name)
    assert got.reason_.tolist() == expected.reason_.tolist()
    assert got.cf_prediction_.tolist() == expected.cf_prediction_.tolist()


def test_feature_tweak_over_chunks_equals_one_call(tweak_case, capsys):
    model, X = tweak_case
    expected = treelens.feature_tweak(model, X, target=2, cost="l1", reference=X)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
    chunks = (frame.iloc[i : i + 77] for i in range(0, N, 77))
    got = treelens.feature_tweak(model, chunks, target=2, cost="l1", reference=X)
    _assert_same_counterfactuals(got, expected)
    again = treelens.feature_tweak(
        model, X, target=2, cost="l1", reference=X, progress=True
    )
    _assert_same_counterfactuals(again, expected)
    err = capsys.readouterr().err
    assert "feature tweaking" in err and f"{N}/{N}" in err


def test_feature_tweak_refuses_a_budget_too_small_for_one_row_of_candidates():
    X, y = make_classification(400, 20, n_informative=8, random_state=0)
    model = RandomForestClassifier(30, max_depth=6, random_state=0).fit(X, y)
    with pytest.raises(MemoryBudgetError, match="candidates of one row"):
        treelens.feature_tweak(model, X[:5], target=1, memory_budget=2**20)
    with pytest.raises(MemoryBudgetError, match="candidates of one row"):
        treelens.feature_tweak(model, iter([X[:5]]), target=1, memory_budget=2**20)
    # A budget that holds them works.
    result = treelens.feature_tweak(model, X[:5], target=1, memory_budget=2**26)
    assert len(result) == 5


def test_dask_is_imported_only_when_used():
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(treelens.__file__).resolve().parent.parent)
    code = (
        "import sys, treelens, treelens._cli._app, treelens.dask; "
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={"PYTHONPATH": src}, timeout=60
    )


def test_optimal_counterfactual_over_chunks_equals_one_call():
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=2)
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    rows = X[:8]
    expected = treelens.optimal_counterfactual(model, rows, target=1, reference=X)
    got = treelens.optimal_counterfactual(
        model, iter([rows[:3], rows[3:]]), target=1, reference=X, progress=True
    )
    _assert_same_counterfactuals(got, expected)
    assert got.status_.tolist() == expected.status_.tolist()
    np.testing.assert_array_equal(got.gap_, expected.gap_)
