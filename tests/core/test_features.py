"""encode and decode of raw tables against a reference written column by column
in pandas (the rules of their docstrings, without the numpy fast paths)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treelens import FeatureSpec, Forest, Tree
from treelens._core._features import decode, encode

LABELS = ("salaried", "self-employed", "retired")


def _forest(features):
    leaf = {
        "children_left": [-1],
        "children_right": [-1],
        "feature": [-2],
        "threshold": [-2.0],
        "missing_go_left": [False],
        "value": [[0.0]],
        "impurity": [0.0],
        "n_node_samples": [1],
        "weighted_n_node_samples": [1.0],
    }
    names = tuple(spec.name for spec in features)
    return Forest(
        (Tree(**leaf),),
        "tree",
        "regression",
        len(names),
        names,
        has_feature_names=True,
        allow_missing=True,
        features=tuple(features),
    )


def _reference_like(column, model, spec):
    if spec.dropped:
        if len(model) == len(column):  # the same rows: their own values
            own = model.reset_index(drop=True)
            return own.where(column.notna().to_numpy())
        first = model.iloc[0] if len(model) else None
        return pd.Series([first] * len(column), dtype=model.dtype)
    dtype = model.dtype
    if spec.kind == "categorical" and isinstance(dtype, pd.CategoricalDtype):
        return column.astype(dtype)
    if spec.kind != "numeric" and dtype.kind != "b":
        return column
    try:
        cast = column.astype(dtype)
    except (TypeError, ValueError):
        return column
    same = (cast.astype(object) == column.astype(object)) | (
        cast.isna() & column.isna()
    )
    return cast if bool(same.all()) else column


def _reference_decode(forest, codes, like):
    columns = {}
    for j, spec in enumerate(forest.features):
        x = codes[:, j]
        if spec.kind == "categorical":
            # Missing: the first missing value of the user's column (None and
            # nan are different categories to an encoder), else nan.
            missing = np.nan
            if like is not None and spec.name in like.columns:
                user = like[spec.name]
                if (
                    not isinstance(user.dtype, pd.CategoricalDtype)
                    and user.isna().any()
                ):
                    missing = user[user.isna()].iloc[0]
            labels = np.array(list(spec.categories) + [missing], dtype=object)
            k = spec.n_categories
            with np.errstate(invalid="ignore"):
                valid = (x >= 0) & (x < k) & (x == np.floor(x))
            code = np.where(valid, x, k).astype(np.intp)
            column = pd.Series(labels[code], dtype=object)
        elif spec.kind == "boolean":
            column = pd.Series(x > 0.5, dtype=object).where(~np.isnan(x), None)
        else:
            column = pd.Series(x)
        if like is not None and spec.name in like.columns:
            column = _reference_like(column, like[spec.name], spec)
        # The user's categorical and nullable dtypes are kept (numpy values
        # would lose them, and hold pd.NA as an object where one is missing).
        kept = like is not None and not isinstance(column.dtype, np.dtype)
        columns[spec.name] = column.array if kept else column.to_numpy()
    index = like.index if like is not None and len(like) == len(codes) else None
    return pd.DataFrame(columns, index=index)


# (dtype of the user's column, kind of the Forest's column, values of the user's column)
NUMERIC_DTYPES = ["float64", "float32", "int64", "uint8", "bool", "Int64", "object"]
COLUMNS = [
    *[(dtype, "numeric") for dtype in NUMERIC_DTYPES],
    ("object", "categorical"),
    ("str", "categorical"),
    ("category", "categorical"),
    ("bool", "categorical"),
    ("bool", "boolean"),
    ("float64", "dropped"),
]
VALUES = [0.0, 1.0, -0.0, 2.0, 3.0, -1.0, 0.5, 1e20, 2.0**53 + 2, np.nan, 300.0]


def _user_column(dtype, kind, n):
    if kind == "categorical" and dtype != "bool":
        column = pd.Series((list(LABELS) * n)[:n], dtype=object)
        return column.astype(dtype) if dtype != "object" else column
    if dtype == "bool" or kind == "boolean":
        return pd.Series([True, False] * n, dtype=bool)[:n]
    if dtype == "object":
        return pd.Series([1.5] * n, dtype=object)
    return pd.Series(np.arange(n) % 2, dtype="int64").astype(dtype)


def _spec(name, dtype, kind):
    if kind == "categorical":
        categories = (True, False) if dtype == "bool" else LABELS
        return FeatureSpec(name, "categorical", categories)
    if kind == "dropped":
        return FeatureSpec(name, dropped=True)
    return FeatureSpec(name, kind)


def _decode_both(columns, codes, with_like):
    names = [f"c{i}" for i in range(len(columns))]
    forest = _forest([_spec(nm, *col) for nm, col in zip(names, columns)])
    like = None
    if with_like:
        n = codes.shape[0]
        index = pd.RangeIndex(10, 10 + n)
        like = pd.DataFrame(
            {
                nm: _user_column(*col, n).set_axis(index)
                for nm, col in zip(names, columns)
            }
        )
        assert [str(d) for d in like.dtypes] == [d for d, _ in columns]
    return decode(forest, codes, like=like), _reference_decode(forest, codes, like)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
# A label outside the user's Categorical dtype becomes missing (pandas warns).
@pytest.mark.filterwarnings("ignore:Constructing a Categorical with a dtype")
@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: "-".join(c))
def test_decode_of_every_value_equals_the_pandas_reference(column):
    # Every value alone, and next to a whole number or a missing value.
    tables = [np.array([[a]]) for a in VALUES]
    tables += [np.array([[a], [b]]) for a in VALUES for b in (1.0, np.nan)]
    for with_like in (False, True):
        for codes in tables:
            got, expected = _decode_both([column], codes, with_like)
            pd.testing.assert_frame_equal(got, expected)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
@pytest.mark.filterwarnings("ignore:Constructing a Categorical with a dtype")
@settings(max_examples=40, deadline=None)
@given(
    chosen=st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=6),
    n=st.integers(1, 4),
    data=st.data(),
)
def test_decode_of_mixed_tables_equals_the_pandas_reference(chosen, n, data):
    codes = np.array(
        data.draw(
            st.lists(
                st.lists(st.sampled_from(VALUES), min_size=n, max_size=n),
                min_size=len(chosen),
                max_size=len(chosen),
            )
        ),
        dtype=np.float64,
    ).T
    got, expected = _decode_both(chosen, codes, with_like=True)
    pd.testing.assert_frame_equal(got, expected)


def _reference_encode_column(spec, column):
    if spec.dropped:
        return np.zeros(column.shape[0])
    if spec.kind == "categorical":
        missing = np.asarray(pd.isna(column), dtype=bool)
        if isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        codes = pd.Index(list(spec.categories), dtype=object).get_indexer(
            pd.Index(column.to_numpy(dtype=object), dtype=object)
        )
        out = np.where(codes < 0, spec.n_categories, codes).astype(np.float64)
        out[missing] = np.nan
        return out
    if column.dtype.kind == "b":
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    converted = pd.to_numeric(column, errors="coerce")
    return converted.to_numpy(dtype=np.float64, na_value=np.nan)


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(
        ["float64", "float32", "int64", "uint8", "bool", "Int64", "Float64"]
    ),
    labels=st.lists(
        st.sampled_from([*LABELS, "unseen", None, np.nan]), min_size=1, max_size=5
    ),
    label_dtype=st.sampled_from(["object", "str", "category"]),
    numbers=st.lists(st.sampled_from([0, 1, 3, 250, None]), min_size=5, max_size=5),
    shuffle=st.booleans(),
)
def test_encode_equals_the_pandas_reference(
    dtype, labels, label_dtype, numbers, shuffle
):
    n = len(labels)
    if dtype in ("int64", "uint8", "bool"):  # no missing values in these
        numbers = [0 if v is None else v for v in numbers]
    number = pd.Series(numbers[:n], dtype=object).astype(
        dtype if dtype != "bool" else "int64"
    )
    if dtype == "bool":
        number = number > 0
    label = pd.Series(labels, dtype=object)
    if label_dtype != "object":
        label = label.astype(label_dtype)
    frame = pd.DataFrame({"number": number, "label": label, "other": 1.0})
    forest = _forest(
        [
            FeatureSpec("number"),
            FeatureSpec("label", "categorical", LABELS),
            FeatureSpec("other", dropped=True),
        ]
    )
    given_frame = frame[["other", "label", "number"]] if shuffle else frame
    got = encode(forest, given_frame)
    expected = np.column_stack(
        [_reference_encode_column(spec, frame[spec.name]) for spec in forest.features]
    )
    np.testing.assert_array_equal(got, expected)
