"""XGBoost's float32 arithmetic reproduced: base margins, probabilities, labels.

XGBoost turns its float32 ``base_score`` into a margin with ``logf``, sums the
trees in float32 and makes probabilities with its own float32 sigmoid and
softmax (the C library's ``expf``); binary labels are ``p > 0.5`` of that float32
probability.  The Forest's raw scores, probabilities and labels equal XGBoost's
bit for bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json

import numpy as np
import xgboost
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treelens
from tests.models import make_data, probe_inputs
from treelens._core._exponential import float32_log


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_classes=st.sampled_from([2, 3, 4]),
    forest=st.booleans(),
    n_trees=st.integers(1, 30),
    depth=st.integers(1, 5),
    rate=st.sampled_from([0.05, 0.3, 1.0]),
    seed=st.integers(0, 10_000),
)
def test_probabilities_and_labels_equal_xgboosts_bit_for_bit(
    n_classes, forest, n_trees, depth, rate, seed
):
    X, y = make_data(seed, task="classification", n_classes=n_classes, missing=True)
    cls = xgboost.XGBRFClassifier if forest else xgboost.XGBClassifier
    model = cls(
        n_estimators=n_trees,
        max_depth=depth,
        learning_rate=rate,
        n_jobs=1,
        random_state=seed,
    ).fit(X, y)
    converted = treelens.to_forest(model)
    probe = probe_inputs(converted, X, seed, missing=True)
    raw = model.predict(probe, output_margin=True).reshape(len(probe), -1)
    np.testing.assert_array_equal(converted.raw_predict(probe), raw)
    np.testing.assert_array_equal(
        converted.predict_proba(probe), model.predict_proba(probe)
    )
    np.testing.assert_array_equal(converted.predict(probe), model.predict(probe))


def test_a_raw_score_too_small_to_move_the_probability_predicts_class_zero():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    model = xgboost.XGBClassifier(n_estimators=1, max_depth=1, base_score=0.5)
    model.fit(X, (X[:, 0] > 0).astype(int))
    document = json.loads(model.get_booster().save_raw("json"))
    tree = document["learner"]["gradient_booster"]["model"]["trees"][0]
    for i, child in enumerate(tree["left_children"]):
        if child == -1:  # every leaf adds 1e-8: p = 1 / (expf(-1e-8) + 1) = 0.5
            tree["split_conditions"][i] = tree["base_weights"][i] = 1e-8
    tiny = xgboost.XGBClassifier()
    tiny.load_model(bytearray(json.dumps(document), "utf-8"))
    forest = treelens.to_forest(tiny)
    assert (forest.raw_predict(X) > 0).all()
    assert (tiny.predict(X) == 0).all() and (tiny.predict_proba(X) == 0.5).all()
    np.testing.assert_array_equal(forest.predict(X), tiny.predict(X))
    np.testing.assert_array_equal(forest.predict_proba(X), tiny.predict_proba(X))


def test_float32_logarithm_is_the_c_librarys():
    logf = ctypes.CDLL(ctypes.util.find_library("m")).logf
    logf.restype, logf.argtypes = ctypes.c_float, [ctypes.c_float]
    x = np.exp(np.random.default_rng(1).uniform(-40, 40, 50_000)).astype(np.float32)
    expected = np.array([logf(float(v)) for v in x.tolist()], dtype=np.float32)
    np.testing.assert_array_equal(float32_log(x), expected)
    assert (np.log(x) != expected).any()  # numpy's own float32 log is not it
