"""treelens.dask: results over a Dask cluster equal the single-machine results."""

from __future__ import annotations

import time

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

import treelens
import treelens.dask as tdask
from treelens import InputError

N = 240
FEATURES = [f"f{i}" for i in range(5)]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(N, 5, n_informative=3, n_classes=3, random_state=1)
    X = pd.DataFrame(X, columns=FEATURES)
    y = pd.Series(y, name="label")
    weights = pd.Series(np.random.default_rng(1).random(N), name="w")
    forest = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0)
    forest.fit(X.iloc[:120], y.iloc[:120])
    boosting = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0)
    boosting.fit(X.iloc[:120], y.iloc[:120])
    frame = dd.from_pandas(X.assign(label=y, w=weights), npartitions=4)
    return X, y, weights, forest, boosting, frame


def test_without_a_client_the_model_is_one_shared_graph_key(data):
    # Runs before the cluster fixture exists, so no distributed client is active.
    X, y, _, forest, _, frame = data
    shared = tdask.ship(forest)
    assert isinstance(shared, distributed.Future) is False
    import dask

    parts = frame.to_delayed()
    tasks = [dask.delayed(len)(shared, p) for p in parts]
    graph = dict(dask.delayed(list)(tasks).__dask_graph__())
    holding_model = [k for k, v in graph.items() if getattr(v, "value", v) is forest]
    assert len(holding_model) == 1
    got = tdask.mdi_importance(
        forest, frame.drop(columns=["w"]), "label", scheduler="sync"
    )
    expected = treelens.mdi_importance(forest, X, y)
    np.testing.assert_allclose(got.importances_, expected.importances_, atol=1e-12)


@pytest.fixture(scope="module")
def client(dask_cluster):
    with distributed.Client(dask_cluster) as c:
        yield c


def test_model_is_scattered_once_to_every_worker(client, data):
    forest = data[3]
    future = tdask.ship(forest)
    assert isinstance(future, distributed.Future)
    holders = client.who_has([future])[future.key]
    assert len(holders) == 2


def _assert_same_statistics(a, b):
    for name in ("n_node_samples_", "weighted_n_node_samples_", "value_", "impurity_"):
        for u, v in zip(getattr(a, name), getattr(b, name), strict=True):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12, err_msg=name)


def test_node_statistics_and_mdi_over_the_cluster_equal_one_machine(client, data):
    X, y, weights, forest, boosting, frame = data
    for model in (forest, boosting):
        got = tdask.node_statistics(
            model, frame[FEATURES], frame["label"], sample_weight=frame["w"]
        )
        _assert_same_statistics(
            treelens.node_statistics(model, X, y, sample_weight=weights), got
        )
        mdi = tdask.mdi_importance(model, frame, "label", sample_weight="w")
        expected = treelens.mdi_importance(model, X, y, sample_weight=weights)
        np.testing.assert_allclose(mdi.importances_, expected.importances_, atol=1e-12)
        np.testing.assert_allclose(
            mdi.nodes_["share"], expected.nodes_["share"], atol=1e-12
        )
    # A dask array with a dask array of labels.
    Xa = da.from_array(X.to_numpy(), chunks=(70, 5))
    ya = da.from_array(y.to_numpy(), chunks=50)  # other row blocks than X
    got = tdask.mdi_importance(forest, Xa, ya)
    np.testing.assert_allclose(
        got.importances_, treelens.mdi_importance(forest, X, y).importances_, atol=1e-12
    )
    # Another scheduler asked for while a client is active.
    threaded = tdask.mdi_importance(forest, Xa, ya, scheduler="threads")
    np.testing.assert_allclose(threaded.importances_, got.importances_, atol=1e-12)


def test_feature_tweak_over_the_cluster_equals_one_machine_row_for_row(client, data):
    X, _, _, forest, _, frame = data
    kwargs = {"target": 2, "cost": "l1", "reference": X}
    expected = treelens.feature_tweak(forest, X, **kwargs)
    got = tdask.feature_tweak(forest, frame[list(reversed(FEATURES))], **kwargs)
    assert len(got) == N
    np.testing.assert_array_equal(got.found_, expected.found_)
    np.testing.assert_array_equal(got.X_cf_, expected.X_cf_)
    np.testing.assert_array_equal(got.cost_, expected.cost_)
    np.testing.assert_array_equal(got.tree_, expected.tree_)
    np.testing.assert_array_equal(got.leaf_, expected.leaf_)
    assert got.reason_.tolist() == expected.reason_.tolist()
    pd.testing.assert_frame_equal(got.to_frame(), expected.to_frame())


def test_columns_that_do_not_match_the_model_are_refused(client, data):
    _, _, _, forest, _, frame = data
    with pytest.raises(InputError, match=r"missing \['f1'\]"):
        tdask.feature_tweak(forest, frame[["f0", "f2", "f3", "f4"]], target=2)
    with pytest.raises(InputError, match="unexpected"):
        tdask.node_statistics(forest, frame.drop(columns=["w"]), frame["label"])
    with pytest.raises(InputError, match="4 columns"):
        tdask.feature_tweak(forest, da.zeros((10, 4), chunks=5), target=2)


def test_an_unreachable_scheduler_fails_fast_with_a_clear_error():
    start = time.monotonic()
    with pytest.raises(tdask.SchedulerUnreachableError, match="within 1 s"):
        tdask.connect("tcp://127.0.0.1:9", timeout=1)
    assert time.monotonic() - start < 10
    assert issubclass(tdask.SchedulerUnreachableError, treelens.TreelensError)


def test_optimal_counterfactual_over_the_cluster_equals_one_machine(client):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=2)
    X = pd.DataFrame(X, columns=["a", "b", "c"])
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    rows = X.iloc[:8]
    expected = treelens.optimal_counterfactual(model, rows, target=1, reference=X)
    got = tdask.optimal_counterfactual(
        model, dd.from_pandas(rows, npartitions=2), target=1, reference=X
    )
    np.testing.assert_array_equal(got.X_cf_, expected.X_cf_)
    np.testing.assert_array_equal(got.cost_, expected.cost_)
    assert got.status_.tolist() == expected.status_.tolist()


@pytest.mark.parametrize("method", ["auto", "tweak"])
def test_the_entry_point_over_the_cluster_equals_one_machine(client, method):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=3)
    X = pd.DataFrame(X, columns=["a", "b", "c"])
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    rows = X.iloc[:8]
    options = {"target": "other", "reference": X, "method": method}
    expected = treelens.counterfactual(model, rows, **options)
    got = tdask.counterfactual(model, dd.from_pandas(rows, npartitions=2), **options)
    assert got.method_ == expected.method_ and got.cost_name_ == "mad"
    np.testing.assert_array_equal(got.X_cf_, expected.X_cf_)
    np.testing.assert_array_equal(got.cost_, expected.cost_)
    with pytest.raises(InputError, match="`method` must be one of"):
        tdask.counterfactual(
            model, dd.from_pandas(rows, npartitions=2), target=1, method="best"
        )


def test_counterfactual_frame_is_lazy_and_equals_one_machine(client, data):
    X, _, _, forest, _, frame = data
    lazy = tdask.counterfactual_frame(forest, frame[FEATURES], target=2, reference=X)
    got = lazy.compute()
    expected = treelens.feature_tweak(forest, X, target=2, reference=X)
    assert got.index.tolist() == X.index.tolist()
    np.testing.assert_array_equal(got["found"], expected.found_)
    np.testing.assert_array_equal(got[[f"cf_{f}" for f in FEATURES]], expected.X_cf_)
