"""Float64 forests: every double, uncast, routed as the model routes it after its cast.

The definition is checked directly: ``T`` goes left after the float32 cast and the
next double does not (casting is monotone, so ``T`` is then the last double going
left).  Whole forests are checked against each library's own predictions on
doubles at, just below and just above every such ``T``, and against the float32
routing of the source Forest (itself checked against the libraries).
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import treelens
from tests.models import MODEL_FACTORIES, PIPELINE_FACTORIES, library_predictions
from treelens._core._float64 import float64_forest, float64_thresholds

FLOAT32_MAX = float(np.finfo(np.float32).max)


def _goes_left(values, t):
    """Whether the float32 cast of each double is at most ``t`` (compared as
    doubles: numpy would compare a float32 with a Python float in float32)."""
    with np.errstate(over="ignore"):
        cast = np.asarray(values, dtype=np.float64).astype(np.float32)
    return cast.astype(np.float64) <= np.float64(t)


@given(t=st.floats(allow_nan=False, allow_infinity=False))
@example(t=0.0)
@example(t=-0.0)
@example(t=float(np.float32(0.1)))  # a float32 value: its own threshold
@example(t=0.1)  # between two float32 values
@example(t=(float(np.float32(1.0)) + float(np.nextafter(np.float32(1), 2))) / 2)
@example(t=5e-324)
@example(t=-1.5e-45)
@example(t=FLOAT32_MAX)
@example(t=-FLOAT32_MAX)
@example(t=1e39)  # past float32's range: its values and more go left
@example(t=-1e39)  # only what the cast sends to -inf goes left
def test_the_threshold_is_the_last_double_going_left(t):
    T = float64_thresholds(np.array([t]), np.float32)[0]
    assert _goes_left(T, t)
    assert not _goes_left(np.nextafter(T, np.inf), t)


def test_ties_follow_the_cast_rounding_to_even():
    # Between 1 and the next float32 the midpoint rounds to 1 (even
    # significand); between that float32 and the one after, to the latter.
    one, up = np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2))
    middle = (float(one) + float(up)) / 2
    assert float64_thresholds([1.0], np.float32)[0] == middle
    middle_up = (float(up) + float(np.nextafter(up, np.float32(2)))) / 2
    assert float64_thresholds([float(up)], np.float32)[0] == np.nextafter(
        middle_up, -np.inf
    )


def test_float64_and_non_finite_thresholds_are_kept():
    t = np.array([0.1, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(float64_thresholds(t, np.float64), t)
    np.testing.assert_array_equal(float64_thresholds(t, np.float32)[1:], t[1:])
    with pytest.raises(TypeError, match="float32 or float64"):
        float64_thresholds(t, np.float16)


def _doubles_at_thresholds(forest, wide, X):
    """Rows of ``X`` with one feature set to each threshold of the float64 forest
    ``wide``, the double below it and the double above."""
    split = ~wide._flat["is_leaf"] & np.isfinite(wide._flat["threshold"])
    if "is_categorical" in wide._flat:
        split &= ~wide._flat["is_categorical"]
    feature, T = wide._flat["feature"][split], wide._flat["threshold"][split]
    values = np.concatenate([np.nextafter(T, -np.inf), T, np.nextafter(T, np.inf)])
    rows = X[np.arange(values.size) % len(X)].copy()
    rows[np.arange(values.size), np.tile(feature, 3)] = values
    return rows


@pytest.mark.parametrize("name", sorted(set(MODEL_FACTORIES) - set(PIPELINE_FACTORIES)))
def test_models_route_doubles_as_their_float64_forests(name):
    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    wide = float64_forest(forest)
    assert wide.input_dtype == np.float64
    assert float64_forest(forest) is wide
    if forest.input_dtype == np.float64:
        assert wide is forest
        return
    complete = case.X[~np.isnan(case.X).any(axis=1)]
    rows = _doubles_at_thresholds(forest, wide, complete)
    # Some of these doubles sit strictly between two float32 values.
    assert (rows.astype(np.float32).astype(np.float64) != rows).any()
    np.testing.assert_array_equal(wide.apply(rows), forest.apply(rows))
    own = library_predictions(case.model, rows)
    np.testing.assert_array_equal(wide.predict(rows), own["predict"])
    if own["raw"] is not None:
        np.testing.assert_allclose(
            wide.raw_predict(rows),
            np.reshape(own["raw"], (len(rows), -1)),
            rtol=0,
            atol=1e-6 if forest.score_dtype == np.float32 else 1e-12,
        )
