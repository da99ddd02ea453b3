"""Imputers and missing indicators whose ``missing_values`` is not NaN, and
``None`` among numbers stored as objects, read as scikit-learn reads them.

``missing_values=None`` imputes (or marks) ``None`` alone and refuses NaN;
a sentinel (``"missing"``, ``-1``) is imputed like a missing value and NaN is
refused; ``pd.NA`` imputes NaN and ``None`` alike.  A ``"most_frequent"`` or
``"constant"`` imputer with the default ``missing_values=np.nan`` fills NaN
but keeps ``None``, which the final model then reads unfilled.  Every
reference is the pipeline's own ``predict``, row by row, a row it refuses
being refused by the Forest too.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeRegressor

import treelens
from tests.models import predictions_or_refusals
from treelens import InputError, UnsupportedModelError
from treelens._core._features import decode

_LABELS = np.array(["a", "b", "c", "d"], dtype=object)


def _objects(values):
    # An object column keeps None (pandas would infer text and make it NaN).
    return pd.Series(values, dtype=object)


def _data(seed, n=240):
    """Columns for each way of marking a missing value: text with None
    (``text``), numbers stored as objects with None (``numbers``), text with a
    ``"missing"`` sentinel (``marked``), numbers with a ``-1`` sentinel
    (``coded``), numbers stored as objects with None and NaN (``mixed``) and a
    plain number; the target reads the markers."""
    rng = np.random.default_rng(seed)
    holes = rng.random((n, 5)) < 0.2
    holes[:4] = False  # every column keeps values
    text = rng.choice(_LABELS, n)
    numbers = rng.integers(0, 6, n).astype(float)
    coded = rng.normal(size=n).round(2)
    mixed = rng.integers(0, 4, n).astype(float).astype(object)
    mixed[holes[:, 4] & (np.arange(n) % 2 == 0)] = None
    mixed[holes[:, 4] & (np.arange(n) % 2 == 1)] = np.nan
    X = pd.DataFrame(
        {
            "text": _objects(np.where(holes[:, 0], None, text)),
            "numbers": _objects(np.where(holes[:, 1], None, numbers)),
            "marked": _objects(np.where(holes[:, 2], "missing", text[::-1])),
            "coded": np.where(holes[:, 3], -1.0, coded),
            "mixed": _objects(mixed),
            "x": rng.normal(size=n).round(2),
        }
    )
    y = (
        X["x"]
        + numbers / 3
        + (text == "b")
        + holes @ np.array([1.5, -1.0, 2.0, -1.5, 1.0])
        + 0.2 * rng.normal(size=n)
    )
    return X, y.to_numpy()


def _probe(X):
    """Rows of ``X`` with each column in turn set to None, NaN, pandas' NA, its
    sentinel, labels and numbers seen and never seen."""
    values = {
        "text": [None, np.nan, pd.NA, "a", "b", "never seen", "missing", 3.0],
        "numbers": [None, np.nan, pd.NA, 0.0, 2.0, 2.5, 9.0, -1.0],
        "marked": [None, np.nan, "missing", "a", "c", "never seen", 3.0],
        "coded": [np.nan, -1.0, -1.0000001, 0.0, 0.5, -3.0, 99.0],
        # (pandas' NA: the imputers with missing_values=np.nan refuse it.)
        "mixed": [None, np.nan, 0.0, 1.0, 3.0, 7.0],
    }
    rows = []
    for name, column in values.items():
        block = X.iloc[np.arange(len(column)) % 8].copy()
        block[name] = _objects(column).set_axis(block.index)
        rows.append(block)
    frame = pd.concat([X.iloc[:20], *rows], ignore_index=True)
    for name in ("text", "numbers", "marked", "mixed"):
        frame[name] = _objects(frame[name].to_numpy(dtype=object))
    return frame


def _assert_same(model, X, probe=None):
    """The Forest predicts each probe row as the pipeline does, and refuses
    exactly the rows the pipeline refuses."""
    forest = treelens.to_forest(model)
    probe = _probe(X) if probe is None else probe
    expected = predictions_or_refusals(model.predict, probe)
    got = predictions_or_refusals(forest.predict, probe)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert np.isfinite(expected).sum() > 20
    return forest


def _fit(columns, final, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_pipeline(columns, final).fit(X, y)


def _imputer(missing, strategy="most_frequent", **options):
    return SimpleImputer(missing_values=missing, strategy=strategy, **options)


def _one_hot():
    return OneHotEncoder(handle_unknown="ignore", sparse_output=False)


def _cases():
    return {
        "none-one-hot": [
            (
                "t",
                make_pipeline(_imputer(None), _one_hot()),
                ["text"],
            )
        ],
        "none-ordinal-indicator": [
            (
                "t",
                make_pipeline(
                    _imputer(None, "constant", fill_value="z", add_indicator=True),
                    OrdinalEncoder(
                        handle_unknown="use_encoded_value", unknown_value=-1
                    ),
                ),
                ["text"],
            )
        ],
        "none-numbers": [
            ("n", _imputer(None, add_indicator=True), ["numbers"]),
            (
                "s",
                make_pipeline(
                    _imputer(None, "constant", fill_value=-2.5), StandardScaler()
                ),
                ["numbers"],
            ),
        ],
        "none-indicator": [
            ("m", MissingIndicator(missing_values=None), ["text", "numbers"])
        ],
        "sentinel-one-hot-indicator": [
            (
                "k",
                make_pipeline(
                    _imputer("missing", add_indicator=True),
                    _one_hot(),
                ),
                ["marked"],
            )
        ],
        "sentinel-indicator": [
            ("m", MissingIndicator(missing_values="missing"), ["marked"]),
            ("c", MissingIndicator(missing_values=-1), ["coded"]),
        ],
        "sentinel-number-one-hot": [
            (
                "c",
                make_pipeline(
                    _imputer(-1, "constant", fill_value=0.0),
                    _one_hot(),
                ),
                ["coded"],
            ),
        ],
        "na": [
            ("n", _imputer(pd.NA, add_indicator=True), ["mixed", "numbers"]),
            (
                "t",
                make_pipeline(_imputer(pd.NA), _one_hot()),
                ["text"],
            ),
        ],
    }


_FINALS = {
    "tree": lambda seed: DecisionTreeRegressor(max_depth=8, random_state=seed),
    "forest": lambda seed: RandomForestRegressor(5, max_depth=6, random_state=seed),
    "hist": lambda seed: HistGradientBoostingRegressor(max_iter=8, random_state=seed),
}


@pytest.mark.parametrize("final", sorted(_FINALS))
@pytest.mark.parametrize("case", sorted(_cases()))
def test_missing_values_other_than_nan_predict_as_the_pipeline(case, final):
    X, y = _data(0)
    columns = ColumnTransformer([*_cases()[case], ("x", "passthrough", ["x"])])
    model = _fit(columns, _FINALS[final](0), X, y)
    _assert_same(model, X)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    case=st.sampled_from(sorted(_cases())),
    final=st.sampled_from(sorted(_FINALS)),
)
def test_random_missing_values_other_than_nan_predict_as_the_pipeline(
    seed, case, final
):
    X, y = _data(seed, n=160)
    columns = ColumnTransformer([*_cases()[case], ("x", "passthrough", ["x"])])
    model = _fit(columns, _FINALS[final](seed), X, y)
    _assert_same(model, X)


def test_none_as_the_only_missing_value_is_decoded_back_to_none():
    # None is imputed, NaN refused: the rows decoded from their codes hold
    # None again, which the pipeline reads as they do.
    X, y = _data(1)
    cases = _cases()
    columns = ColumnTransformer(
        [*cases["none-one-hot"], *cases["none-numbers"], ("x", "passthrough", ["x"])]
    )
    model = _fit(columns, DecisionTreeRegressor(max_depth=8, random_state=0), X, y)
    forest = treelens.to_forest(model)
    for name in ("text", "numbers"):
        assert forest.features[list(X.columns).index(name)].none_as == "only"
    rows = X.iloc[:40]
    assert rows[["text", "numbers"]].isna().any().all()
    decoded = decode(forest, forest.encode(rows), like=rows)
    assert (
        decoded["numbers"].map(lambda v: v is None).sum()
        == rows["numbers"].isna().sum()
    )
    np.testing.assert_array_equal(model.predict(decoded), model.predict(rows))
    with pytest.raises(InputError, match=r"'numbers' holds nan.*only missing value"):
        forest.predict(rows.assign(numbers=np.nan))


def test_a_counterfactual_keeps_none_missing_and_flips_the_pipeline():
    X, y = _data(2)
    cases = _cases()
    columns = ColumnTransformer(
        [*cases["none-one-hot"], *cases["none-numbers"], ("x", "passthrough", ["x"])]
    )
    model = _fit(columns, RandomForestClassifier(5, random_state=0), X, y > 1.0)
    rows = X[X["numbers"].isna() | X["text"].isna()].iloc[:6]
    result = treelens.counterfactual(model, rows, target="other", method="optimal")
    assert result.found_.any()
    found = result.X_cf_[result.found_]
    assert (model.predict(found) != model.predict(rows[result.found_])).all()
    # A missing value (None) stays None: the pipeline reads it there.
    for name in ("text", "numbers"):
        was = rows[name][result.found_].isna().to_numpy()
        assert found[name][was].map(lambda v: v is None).all()


# -------------------------------------------- None kept by a NaN text imputer
@pytest.mark.parametrize("strategy", ["most_frequent", "constant"])
@pytest.mark.parametrize("final", sorted(_FINALS))
def test_none_a_text_imputer_keeps_among_numbers_is_refused(strategy, final):
    # scikit-learn fills NaN of the object column and keeps None, which the
    # final model then reads as a missing value of its own: the Forest, whose
    # numeric column reads one missing value, refuses None, naming the column,
    # and predicts every other row as the pipeline does.
    X, y = _data(3)
    imputer = SimpleImputer(strategy=strategy, fill_value=1.5)
    columns = ColumnTransformer(
        [("n", imputer, ["mixed"]), ("x", "passthrough", ["x"])]
    )
    model = _fit(columns, _FINALS[final](0), X, y)
    forest = treelens.to_forest(model)
    probe = _probe(X)
    nones = probe["mixed"].map(lambda v: v is None).to_numpy()
    expected = predictions_or_refusals(model.predict, probe[~nones])
    np.testing.assert_array_equal(forest.predict(probe[~nones]), expected)
    with pytest.raises(InputError, match=r"Column 'mixed' holds None.*NaN"):
        forest.predict(probe[nones])
    # The reason: None and NaN are different rows to the pipeline.
    rows = X.iloc[:200]
    apart = model.predict(rows.assign(mixed=_objects([None] * 200))) != model.predict(
        rows.assign(mixed=np.nan)
    )
    assert apart.any() or final == "hist"


def test_none_converted_to_nan_before_the_fill_is_a_missing_value():
    # A "mean" imputer converts the column to floats first: None is NaN, filled.
    X, y = _data(4)
    columns = ColumnTransformer(
        [
            ("n", SimpleImputer(strategy="median"), ["mixed"]),
            ("x", "passthrough", ["x"]),
        ]
    )
    model = _fit(columns, DecisionTreeRegressor(max_depth=6, random_state=0), X, y)
    forest = _assert_same(model, X)
    assert forest.features[list(X.columns).index("mixed")].none_as == "missing"


# ---------------------------------------------------------------- refusals
def _refused_cases():
    return {
        "sentinel-as-number": (
            [("c", _imputer(-1, "mean"), ["coded"])],
            (
                r"'columntransformer/c' \(SimpleImputer, missing_values=-1\) reads "
                r"-1 as missing in column 'coded', imputes it, and the column then "
                r"reaches the model as a number"
            ),
        ),
        "sentinel-indicator-of-a-number": (
            [
                ("m", MissingIndicator(missing_values=-1), ["coded"]),
                ("c", "passthrough", ["coded"]),
            ],
            (
                r"'columntransformer/m' \(MissingIndicator, missing_values=-1\) "
                r"reads -1 as missing in column 'coded', marks it, and the column "
                r"also reaches the model as a number"
            ),
        ),
        "sentinel-after-a-scaler": (
            [
                (
                    "c",
                    make_pipeline(StandardScaler(), _imputer(0.0, "constant")),
                    ["coded"],
                )
            ],
            (
                r"'columntransformer/c/simpleimputer' \(SimpleImputer\) reads 0.0 "
                r"as missing in column 'coded', which an earlier step changed"
            ),
        ),
        "none-and-none-a-category": (
            [
                *_cases()["none-one-hot"],
                ("o", _one_hot(), ["text"]),
            ],
            r"Column 'text' reaches the model both as categorical",
        ),
    }


@pytest.mark.parametrize("case", sorted(_refused_cases()))
def test_missing_values_a_forest_cannot_state_are_refused_naming_step_and_column(
    case,
):
    X, y = _data(5)
    transformers, message = _refused_cases()[case]
    columns = ColumnTransformer([*transformers, ("x", "passthrough", ["x"])])
    model = _fit(columns, DecisionTreeRegressor(max_depth=4, random_state=0), X, y)
    with pytest.raises(UnsupportedModelError, match=message):
        treelens.to_forest(model)
