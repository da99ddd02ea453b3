"""Every routing path of Forest.apply reaches the same leaves.

Small inputs step all trees one depth level at a time; large float32 inputs go
through scikit-learn's compiled trees on a thread pool; large inputs of other
dtypes go tree by tree over cache-sized blocks.  All must agree leaf for leaf,
with values exactly at thresholds and NaN included.
"""

import numpy as np
import pytest
import sklearn.tree._tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import ExtraTreesClassifier, RandomForestRegressor

import treelens
from tests.models import (
    MODEL_FACTORIES,
    PIPELINE_FACTORIES,
    make_data,
    probe_frame,
    probe_inputs,
)
from treelens._core import _compiled_routing
from treelens._core._compiled_routing import apply_compiled, compiled_trees


def _all_paths(forest, X):
    """Leaves from each path that applies to ``forest``, by name."""
    X = forest.validate_X(X)
    n = X.shape[0]
    paths = {
        "levels": forest._apply_chunk(X, forest._flat) - forest._flat["offsets"],
        "blocks": forest._apply_per_tree(X, np.empty((forest.n_trees, n), np.intp).T),
        "apply": forest.apply(X),
    }
    trees = compiled_trees(forest)
    if trees is not None:
        paths["compiled"] = apply_compiled(
            trees, X, np.empty((n, forest.n_trees), np.intp)
        )
    return paths


def _assert_agree(paths):
    first = paths.pop("levels")
    for name, leaves in paths.items():
        np.testing.assert_array_equal(leaves, first, err_msg=name)


@pytest.mark.parametrize("name", sorted(MODEL_FACTORIES))
def test_every_path_agrees_on_every_supported_model(name):
    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    if name in PIPELINE_FACTORIES:
        X = probe_frame(forest, case.X, missing=case.missing)
    else:
        X = probe_inputs(forest, case.X, missing=case.missing)
    paths = _all_paths(forest, X)
    # float32 models (scikit-learn, XGBoost) use the compiled trees; LightGBM
    # compares float64 inputs, which scikit-learn's trees cannot.
    assert ("compiled" in paths) == (np.dtype(forest.input_dtype) == np.float32)
    _assert_agree(paths)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    max_depth=st.integers(1, 8),
    missing=st.booleans(),
    classification=st.booleans(),
)
def test_random_forests_route_alike_on_every_path(
    seed, max_depth, missing, classification
):
    task = "classification" if classification else "regression"
    X, y = make_data(seed, task=task, missing=missing)
    cls = ExtraTreesClassifier if classification else RandomForestRegressor
    model = cls(n_estimators=5, max_depth=max_depth, random_state=seed).fit(X, y)
    forest = treelens.to_forest(model)
    _assert_agree(_all_paths(forest, probe_inputs(forest, X, seed, missing=missing)))


@pytest.mark.parametrize("threads", [1, 3])
def test_thread_count_does_not_change_leaves(monkeypatch, threads):
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"]()
    forest = treelens.to_forest(case.model)
    X = forest.validate_X(probe_inputs(forest, case.X, missing=case.missing))
    monkeypatch.setattr(_compiled_routing, "routing_threads", lambda: threads)
    out = np.empty((X.shape[0], forest.n_trees), np.intp)
    leaves = apply_compiled(compiled_trees(forest), X, out)
    np.testing.assert_array_equal(leaves, np.asarray(case.model.apply(X)))


def test_numpy_routing_when_scikit_learn_refuses_the_tree_state(monkeypatch):
    # A scikit-learn whose tree state differs: the Forest keeps its own routing.
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"]()
    forest = treelens.to_forest(case.model)
    X = np.tile(probe_inputs(forest, case.X, missing=case.missing), (50, 1))
    assert X.shape[0] >= 4096
    expected = np.asarray(case.model.apply(X))
    monkeypatch.setattr(sklearn.tree._tree, "NODE_DTYPE", np.dtype([("other", "f8")]))
    assert forest._compiled_trees is None
    np.testing.assert_array_equal(forest.apply(X), expected)


@pytest.mark.parametrize(
    ("omp", "expected"), [(None, 2), ("1", 1), ("3", 2), ("1,2", 1), ("bad", 2)]
)
def test_routing_threads_follow_affinity_and_omp_num_threads(
    monkeypatch, omp, expected
):
    monkeypatch.setattr(_compiled_routing.os, "sched_getaffinity", lambda pid: {0, 1})
    if omp is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", omp)
    assert _compiled_routing.routing_threads() == expected
