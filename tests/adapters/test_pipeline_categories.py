"""Encoders of a scikit-learn Pipeline read as the pipeline reads them: a
category an encoder with ``handle_unknown="error"`` never saw is refused, a
scaler after encoded columns scales their encodings, and ``None`` in an object
column is what each step makes of it (a category of its own, a category never
seen, or a missing value).  Every reference is the pipeline's own ``predict``
or ``transform``."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import make_mixed_data, probe_frame
from treelens import InputError
from treelens._adapters._pipeline import pipeline_parts
from treelens._core._features import decode


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _predict(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown categories
        return model.predict(X)


def _data(seed=0, n_samples=300):
    X, y = make_mixed_data(seed, task="regression", n_samples=n_samples)
    return X[["income", "age", "employment", "region"]], y


# ------------------------------------------------- handle_unknown="error"
@pytest.mark.parametrize(
    "encoder", [OneHotEncoder, OrdinalEncoder], ids=["one-hot", "ordinal"]
)
def test_a_category_the_encoder_refuses_is_refused_naming_it(encoder):
    X, y = _data(1)
    X = X.assign(employment=X["employment"].fillna("salaried"))
    columns = ColumnTransformer(
        [("c", encoder(), ["employment", "region"]), ("n", "passthrough", ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=6)), X, y)
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("region")]
    assert spec.is_categorical and not spec.accepts_unknown
    rows = X.iloc[:6].copy()
    np.testing.assert_array_equal(forest.predict(rows), model.predict(rows))
    # The pipeline refuses a category it never saw, and a missing value it
    # never saw (NaN is a category to the encoder): so does the Forest.
    for value in ("moon", np.nan, None):
        bad = rows.assign(region=rows["region"].astype(object))
        bad.iloc[2, bad.columns.get_loc("region")] = value
        with pytest.raises(ValueError):
            model.predict(bad)
        with pytest.raises(InputError, match="'region'") as info:
            forest.predict(bad)
        if value == "moon":
            message = str(info.value)
            assert "'moon'" in message and "'north'" in message
    # Given as codes, the unknown code k is refused too.
    codes = forest.encode(rows)
    codes[0, list(X.columns).index("region")] = spec.n_categories
    with pytest.raises(InputError, match="'region'.*code"):
        forest.predict(codes)


@pytest.mark.parametrize(
    "encoder",
    [
        OneHotEncoder(handle_unknown="ignore"),
        OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=20),
        OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
    ],
    ids=["ignore", "infrequent", "encoded-value"],
)
def test_encoders_routing_unknown_categories_keep_routing_them(encoder):
    X, y = _data(2)
    columns = ColumnTransformer([("c", encoder, ["employment", "region"])])
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=6)), X, y)
    forest = treelens.to_forest(model)
    assert all(s.accepts_unknown for s in forest.features)
    probe = X.iloc[:5].assign(region=["moon", "north", "moon", "east", "west"])
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))


# -------------------------------------------------- scalers after encoders
def _scalers():
    return {
        "standard": StandardScaler(),
        "min-max": MinMaxScaler(),
        "clipped": MinMaxScaler(feature_range=(-1, 1), clip=True),
        "max-abs": MaxAbsScaler(),
        "robust": RobustScaler(),
    }


@pytest.mark.parametrize("scaler", sorted(_scalers()))
def test_a_scaler_after_one_hot_columns_predicts_as_the_pipeline(scaler):
    X, y = _data(3)
    columns = ColumnTransformer(
        [
            ("n", SimpleImputer(), ["income", "age"]),
            ("c", OneHotEncoder(handle_unknown="ignore"), ["employment", "region"]),
        ]
    )
    model = _fit(
        make_pipeline(columns, _scalers()[scaler], DecisionTreeRegressor(max_depth=8)),
        X,
        y,
    )
    forest = treelens.to_forest(model)
    # Numbers at, just below and just above every lifted threshold; every
    # category, one never seen, missing values.
    probe = probe_frame(forest, X)
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))
    j = list(X.columns).index("income")
    thresholds = np.concatenate(
        [t.threshold[(t.children_left >= 0) & (t.feature == j)] for t in forest.trees]
    )
    assert np.isfinite(thresholds).any()
    near = np.concatenate(
        [
            thresholds,
            np.nextafter(thresholds, -np.inf),
            np.nextafter(thresholds, np.inf),
        ]
    )
    rows = pd.concat([X.iloc[:1]] * near.size, ignore_index=True).assign(income=near)
    np.testing.assert_array_equal(forest.predict(rows), model.predict(rows))


@pytest.mark.parametrize("scaler", sorted(_scalers()))
def test_a_scaler_after_target_encodings_predicts_as_the_pipeline(scaler):
    X, y = _data(4)
    steps = make_pipeline(TargetEncoder(random_state=0), _scalers()[scaler])
    columns = ColumnTransformer(
        [("t", steps, ["employment", "region"]), ("n", "passthrough", ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=8)), X, y)
    forest = treelens.to_forest(model)
    assert forest.features[list(X.columns).index("region")].is_categorical
    probe = probe_frame(forest, X)
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))
    # Each category on its own, as the tree compares its scaled encoding.
    labels = list(forest.features[list(X.columns).index("region")].categories)
    rows = X.iloc[[0] * (len(labels) + 3)].assign(
        region=[*labels, "moon", None, np.nan]
    )
    np.testing.assert_array_equal(forest.predict(rows), _predict(model, rows))


# ------------------------------------------------------ None in object columns
def _none_and_nan(seed):
    """Text columns holding None and NaN apart, both seen when fitted, the
    target reading which one a row holds."""
    X, y = _data(seed)
    employment = X["employment"].to_numpy(dtype=object)
    employment[np.arange(employment.size) % 7 == 3] = np.nan
    employment[np.arange(employment.size) % 7 == 5] = None
    # An object column (pandas makes None NaN in a column it infers as text).
    X = X.assign(employment=pd.Series(employment, index=X.index, dtype=object))
    y = y + 5.0 * (np.arange(y.size) % 7 == 5) - 4.0 * (np.arange(y.size) % 7 == 3)
    return X, y


def _none_probe(X):
    values = [None, np.nan, "salaried", "moon", "retired"] * 2
    return X.iloc[[0] * 5 + [1] * 5].assign(
        employment=pd.Series(values, index=X.index[[0] * 5 + [1] * 5], dtype=object)
    )


@pytest.mark.parametrize(
    "steps",
    [
        lambda: OneHotEncoder(handle_unknown="ignore"),
        lambda: OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
        lambda: make_pipeline(
            SimpleImputer(strategy="most_frequent"),
            OneHotEncoder(handle_unknown="ignore"),
        ),
        lambda: make_pipeline(
            SimpleImputer(strategy="constant", fill_value="none"),
            OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
        ),
        lambda: TargetEncoder(random_state=0),
    ],
    ids=["one-hot", "ordinal", "imputed-one-hot", "imputed-ordinal", "target"],
)
def test_none_is_read_as_each_encoder_reads_it(steps):
    # The encoders (and a text imputer before them) keep an object column as
    # it is: None is a category of its own, apart from NaN.
    X, y = _none_and_nan(5)
    columns = ColumnTransformer(
        [("c", steps(), ["employment"]), ("n", "passthrough", ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=8)), X, y)
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("employment")]
    assert spec.none_as == "value" and None in spec.categories
    assert np.unique(_predict(model, _none_probe(X))[:2]).size == 2  # None, NaN
    probe = _none_probe(X)
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))
    # Codes decode to the same labels, None kept apart from NaN.
    decoded = decode(forest, forest.encode(probe), like=probe)
    np.testing.assert_array_equal(_predict(model, decoded), _predict(model, probe))
    # Explanations are the final model's, on the pipeline's own transform.
    parts = pipeline_parts(model)
    Xt = parts.transform(probe)
    mine = treelens.shap_values(model, probe).values_
    final = treelens.shap_values(model[-1], Xt).values_
    np.testing.assert_allclose(mine, final @ parts.groups(), rtol=0, atol=1e-9)


def test_a_column_holding_only_none_is_a_category_not_missing():
    X, y = _data(6)
    X = X.assign(note=pd.Series([None] * len(X), dtype=object))
    steps = make_pipeline(
        SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")
    )
    columns = ColumnTransformer([("c", steps, ["note"]), ("n", "passthrough", ["age"])])
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=4)), X, y)
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("note")]
    assert spec.is_categorical and spec.categories == (None,)
    probe = X.iloc[:4].assign(
        note=pd.Series([None, np.nan, "text", None], index=X.index[:4], dtype=object)
    )
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))
    # Encoded beside another column by an encoder refusing unknown categories:
    # None is the column's one category, NaN and text are refused.
    columns = ColumnTransformer([("c", OneHotEncoder(), ["note", "region"])])
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=4)), X, y)
    forest = treelens.to_forest(model)
    rows = X.iloc[:4]
    np.testing.assert_array_equal(forest.predict(rows), model.predict(rows))
    for value in (np.nan, "text"):
        bad = rows.assign(note=pd.Series([value] * 4, index=rows.index, dtype=object))
        with pytest.raises(ValueError):
            model.predict(bad)
        with pytest.raises(InputError, match="'note'"):
            forest.predict(bad)


def _nan_not_none(column):
    """Where ``column`` holds a missing value other than None."""
    is_none = column.map(lambda v: v is None).to_numpy(dtype=bool)
    return column.isna().to_numpy() & ~is_none


def _assert_presence_only(model, X):
    """``employment`` reaches ``model`` only through its missing indicator,
    which reads None as present: the Forest predicts as the pipeline does."""
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("employment")]
    assert spec.presence_only and spec.none_as == "value"
    probe = _none_probe(X)
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))
    assert forest.predict(probe)[0] != forest.predict(probe)[1]  # None, NaN apart


def test_a_missing_indicator_reads_none_as_present():
    X, _ = _none_and_nan(7)
    columns = ColumnTransformer(
        [
            ("m", MissingIndicator(features="all"), ["employment"]),
            ("n", "passthrough", ["age"]),
        ]
    )
    nan = _nan_not_none(X["employment"])
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=3)), X, nan)
    _assert_presence_only(model, X)


@pytest.mark.parametrize("strategy", ["most_frequent", "constant"])
def test_a_text_imputers_indicator_reads_none_as_present(strategy):
    # The imputed column is dropped; its indicator alone reaches the model.
    X, _ = _none_and_nan(8)
    nan = _nan_not_none(X["employment"])
    imputer = SimpleImputer(strategy=strategy, fill_value="none", add_indicator=True)
    text = make_pipeline(imputer, ColumnTransformer([("flag", "passthrough", [1])]))
    columns = ColumnTransformer(
        [("t", text, ["employment"]), ("n", "passthrough", ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=2)), X, nan)
    _assert_presence_only(model, X)


@pytest.mark.parametrize(
    "encoder",
    [OneHotEncoder(handle_unknown="ignore"), OneHotEncoder(), OrdinalEncoder()],
    ids=["one-hot-ignore", "one-hot-error", "ordinal-error"],
)
def test_a_column_the_encoder_saw_only_missing_predicts_as_the_pipeline(encoder):
    X, y = _data(8)
    X = X.assign(empty=np.full(len(X), np.nan))
    columns = ColumnTransformer(
        [("c", encoder, ["empty", "region"]), ("n", "passthrough", ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeRegressor(max_depth=5)), X, y)
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("empty")]
    assert spec.is_categorical and spec.categories == ()
    rows = X.iloc[:6]
    np.testing.assert_array_equal(forest.predict(rows), model.predict(rows))
    # A value there is a category the encoder never saw.
    seen = rows.assign(empty=[1.0, 2.0, np.nan, 3.0, np.nan, 1.0])
    if getattr(encoder, "handle_unknown", "error") == "ignore":
        np.testing.assert_array_equal(forest.predict(seen), _predict(model, seen))
    else:
        with pytest.raises(ValueError):
            model.predict(seen)
        with pytest.raises(InputError, match="'empty'"):
            forest.predict(seen)
