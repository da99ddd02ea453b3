"""What each input column of a Forest is, and turning raw tables into codes.

A :class:`FeatureSpec` says whether a column is numeric, categorical (with its
category labels) or boolean.  The routing works on one float64 matrix: numeric
columns as they are, booleans as 0/1, and a categorical column with ``k``
categories as its codes ``0 .. k - 1``; NaN is missing, and any other value (a
label the model never saw, a negative or non-integer code) is "unknown", code
``k``.  :func:`encode` builds that matrix from a DataFrame in the user's own
columns; :func:`decode` turns codes back into the user's labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._exceptions import InputError
from ._cache import derived

if TYPE_CHECKING:
    from ._forest import Forest

__all__ = [
    "FeatureSpec",
    "NoneAs",
    "category_codes",
    "decode",
    "encode",
    "feature_columns",
    "has_labels",
    "label_numbers",
    "missing_labels",
    "numeric_features",
    "numeric_labels",
    "reads_labels",
    "refuse_nones",
    "series_as_row",
    "split_condition",
    "split_conditions",
]

_NONE = np.array(None, dtype=object)  # compared element-wise with object arrays

FeatureKind = Literal["numeric", "categorical", "boolean"]
NoneAs = Literal["missing", "value", "only"]


@dataclass(frozen=True)
class FeatureSpec:
    """One input column of a :class:`~treelens.Forest`.

    Parameters
    ----------
    name : str
        The column's name.
    kind : {"numeric", "categorical", "boolean"}
        Numeric columns are compared with thresholds; categorical columns are
        given to the trees as codes ``0 .. k - 1`` of ``categories`` (code ``k``
        for a value the model never saw); booleans as 0 and 1.
    categories : tuple or None
        Categorical columns only: the labels, in code order.
    dropped : bool
        Whether the model never reads the column (a pipeline drops it): any
        value is accepted and no tree splits on it.
    accepts_missing : bool or None
        Whether a missing value in this column is routed (True) or refused
        (False); None: as the forest's ``allow_missing``.
    accepts_unknown : bool
        Categorical columns only: whether a label the model never saw is
        routed (code ``k``, True) or refused (False, as a scikit-learn encoder
        with ``handle_unknown="error"`` refuses it).
    none_as : {"missing", "value", "only"}
        How ``None`` in an object column is read: as a missing value like NaN
        ("missing"); as a value of its own ("value": a category when it is one
        of ``categories``, else a label the model never saw; present for a
        ``presence_only`` column; refused in a numeric column, where it is no
        number), as scikit-learn's encoders, missing indicators and text
        imputers read it; or as the column's only missing value ("only": NaN
        and pandas' NA are refused), as an imputer or indicator with
        ``missing_values=None`` reads it.
    presence_only : bool
        Whether the model reads only whether the value is missing (a missing
        indicator alone): any value, text included, is "not missing".
    truncates : bool
        Categorical columns only: whether the model reads a number ``v > -1``
        as the label ``trunc(v)``, its whole part, as LightGBM casts its
        categorical values to integers (3.7 is category 3, -0.5 category 0),
        rather than reading a number that is no label as one it never saw.

    Examples
    --------
    >>> spec = FeatureSpec("employment", "categorical", ("salaried", "self-employed"))
    >>> spec.n_categories
    2
    """

    name: str
    kind: FeatureKind = "numeric"
    categories: tuple[Any, ...] | None = None
    dropped: bool = False
    accepts_missing: bool | None = None
    accepts_unknown: bool = True
    none_as: NoneAs = "missing"
    presence_only: bool = False
    truncates: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("numeric", "categorical", "boolean"):
            raise InputError(
                f"FeatureSpec `kind` must be 'numeric', 'categorical' or 'boolean'; "
                f"got {self.kind!r} for column {self.name!r}."
            )
        if self.none_as not in ("missing", "value", "only"):
            raise InputError(
                f"FeatureSpec `none_as` must be 'missing', 'value' or 'only'; got "
                f"{self.none_as!r} for column {self.name!r}."
            )
        if self.kind == "categorical":
            if self.categories is None:
                raise InputError(
                    f"Categorical column {self.name!r} needs its `categories`; got None."
                )
            object.__setattr__(self, "categories", tuple(self.categories))
        elif self.categories is not None:
            raise InputError(
                f"Only categorical columns have `categories`; column {self.name!r} "
                f"is {self.kind}."
            )
        if self.truncates and self.kind != "categorical":
            raise InputError(
                f"Only categorical columns read numbers by their whole part "
                f"(`truncates`); column {self.name!r} is {self.kind}."
            )

    @property
    def is_categorical(self) -> bool:
        """Whether the column is categorical."""
        return self.kind == "categorical"

    @property
    def n_categories(self) -> int:
        """Number of categories ``k`` (0 for other kinds); code ``k`` is unknown."""
        return len(self.categories) if self.categories is not None else 0


def numeric_features(names: Sequence[str]) -> tuple[FeatureSpec, ...]:
    """A numeric :class:`FeatureSpec` per name (the default of every Forest)."""
    return tuple(FeatureSpec(str(name)) for name in names)


def label_numbers(spec: FeatureSpec) -> NDArray[np.float64] | None:
    """A categorical column's labels as float64 numbers, in code order; None
    when the column is not categorical, is dropped, or has a label that is not
    a number.

    Examples
    --------
    >>> label_numbers(FeatureSpec("rooms", "categorical", (1, 2, 5))).tolist()
    [1.0, 2.0, 5.0]
    >>> label_numbers(FeatureSpec("color", "categorical", ("red", "blue"))) is None
    True
    """
    if not spec.is_categorical or spec.dropped or not spec.categories:
        return None
    if _label_kind(spec.categories) != "number":
        return None
    return np.array(spec.categories, dtype=np.float64)


def numeric_labels(spec: FeatureSpec) -> bool:
    """Whether a categorical column's labels are numbers other than its codes
    ``0 .. k - 1`` (so that a number could be read either way)."""
    if label_numbers(spec) is None:
        return False
    labels = list(spec.categories or ())
    return labels != list(range(len(labels)))


def category_codes(x: NDArray[Any], k: NDArray[np.intp] | int) -> NDArray[np.intp]:
    """Code ``0 .. k`` of routing values ``x``: ``k`` for anything not a valid code.

    NaN also becomes ``k``; callers route missing values on their own.
    """
    with np.errstate(invalid="ignore"):
        valid = (x >= 0) & (x < k) & (x == np.floor(x))
    return np.where(valid, x, k).astype(np.intp)


def _label_kind(values: Sequence[Any]) -> str:
    kinds = {
        "number"
        if isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_))
        else "other"
        for v in values
    }
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _show(value: Any) -> str:
    """A value as a message shows it: ``3``, ``'red'`` (no numpy type names)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def missing_labels(spec: FeatureSpec, values: NDArray[Any]) -> NDArray[np.bool_]:
    """Which of a column's ``values`` (object array) are missing as the model
    reads them: NaN and pandas' missing values, and ``None`` unless the column
    reads it as a value (``spec.none_as == "value"``); ``None`` alone when it
    is the column's only missing value (``"only"``)."""
    missing = np.asarray(pd.isna(values), dtype=bool)
    if spec.none_as != "missing" and missing.any():
        where = np.flatnonzero(missing)
        nones = _nones(values[where])
        missing[where] = nones if spec.none_as == "only" else ~nones
    return missing


def _nones(values: NDArray[Any]) -> NDArray[np.bool_]:
    """Which of ``values`` (object array) are ``None``."""
    return np.asarray(np.equal(values, _NONE), dtype=bool)


def _refuse_none_apart(spec: FeatureSpec, values: NDArray[Any]) -> None:
    """Refuse what a column reads apart from its missing values and cannot
    route: NaN and pandas' NA where ``None`` is the only missing value, and
    ``None`` in a numeric column that reads it as a value."""
    numeric = spec.kind == "numeric" and not spec.presence_only
    if spec.none_as == "missing" or (spec.none_as == "value" and not numeric):
        return
    absent = np.asarray(pd.isna(values), dtype=bool)
    if not absent.any():
        return
    where = np.flatnonzero(absent)
    nones = _nones(values[where])
    if spec.none_as == "only" and not nones.all():
        raise InputError(
            f"Column {spec.name!r} holds {_show(values[where[~nones][0]])}, which "
            "the model refuses: its only missing value is None (a step with "
            "missing_values=None, which refuses NaN); expected a value or None."
        )
    if spec.none_as == "value" and nones.any():
        raise InputError(
            f"Column {spec.name!r} holds None, which the model reads apart from "
            "a missing value (an imputer of an object column with "
            "missing_values=np.nan fills NaN but keeps None, which the model "
            "then reads unfilled); expected a number, or NaN for a missing value."
        )


def _refuse_unknown(
    spec: FeatureSpec, values: NDArray[Any], unseen: NDArray[np.bool_]
) -> None:
    if spec.accepts_unknown or not unseen.any():
        return
    value = values[int(np.flatnonzero(unseen)[0])]
    raise InputError(
        f"Column {spec.name!r} holds {_show(value)}, a category the model never "
        "saw, which it refuses (an encoder with handle_unknown='error'); expected "
        f"one of {list(spec.categories or ())[:20]}."
    )


def _whole_parts(spec: FeatureSpec, column: pd.Series) -> pd.Series:
    """A numeric ``column`` as a model that truncates reads it (see
    ``FeatureSpec.truncates``): each number above -1 its whole part."""
    if not spec.truncates or not (
        isinstance(column.dtype, np.dtype) and column.dtype.kind in "iuf"
    ):
        return column
    values = column.to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        whole = np.where(values > -1, np.trunc(values), values)
    return pd.Series(whole, index=column.index)


def _encode_categorical(spec: FeatureSpec, column: pd.Series) -> NDArray[np.float64]:
    assert spec.categories is not None
    k = spec.n_categories
    column = _whole_parts(spec, column)
    values = np.asarray(column, dtype=object)
    _refuse_none_apart(spec, values)
    missing = missing_labels(spec, values)
    if (
        k
        and not missing.all()
        and column.dtype.kind in "iuf"
        and _label_kind(spec.categories) == "other"
    ):
        raise InputError(
            f"Column {spec.name!r} is categorical with categories "
            f"{list(spec.categories)[:10]}; got numbers such as "
            f"{_show(column[~missing].iloc[0])}, which the model never saw. Give the "
            "category labels."
        )
    # Index lookup compares numbers by value: an integer column read as floats
    # keeps matching integer categories.
    codes = (
        _category_index(spec).get_indexer(pd.Index(values, dtype=object))
        if k
        else np.zeros(column.shape[0], dtype=np.intp)
    )
    if spec.none_as == "value" and None in spec.categories:
        # An Index lookup matches None to any missing value, and NaN to None.
        nones = np.equal(values, _NONE) & ~missing
        codes = np.where(missing, -1, codes)
        codes[nones] = spec.categories.index(None)
    _refuse_unknown(spec, values, (codes < 0) & ~missing)
    out = np.where(codes < 0, k, codes).astype(np.float64)
    out[missing] = np.nan
    return out


def _encode_presence(spec: FeatureSpec, column: pd.Series) -> NDArray[np.float64]:
    """0 for a present value, NaN for a missing one, whatever the dtype."""
    values = np.asarray(column, dtype=object)
    _refuse_none_apart(spec, values)
    return np.where(missing_labels(spec, values), np.nan, 0.0)


def _encode_numeric(forest: Forest, X: NDArray[np.float64]) -> NDArray[np.float64]:
    """A numeric array with its ``forest.label_columns`` encoded by label (a
    shape the forest does not take is left for the caller to refuse)."""
    columns = forest.label_columns
    if not columns.size or X.ndim not in (1, 2) or X.shape[-1] != forest.n_features:
        return X
    out = np.array(X, dtype=np.float64, ndmin=2)
    for j in columns:
        out[:, j] = _encode_categorical(forest.features[j], pd.Series(out[:, j]))
    return out


def _category_index(spec: FeatureSpec) -> pd.Index:
    """The object Index of a categorical column's labels, built once per spec
    (kept with the spec itself, not by value: labels equal as values, such as
    ``1``, ``1.0`` and ``True``, are different categories)."""
    return derived(
        spec,
        "category_index",
        lambda: pd.Index(list(spec.categories or ()), dtype=object),
    )


def _encode_column(spec: FeatureSpec, column: pd.Series) -> NDArray[np.float64]:
    if spec.dropped:
        return np.zeros(column.shape[0])
    if spec.kind == "categorical":
        return _encode_categorical(spec, column)
    if spec.presence_only:
        return _encode_presence(spec, column)
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iufb":
        # Plain numbers or booleans: nothing to convert and nothing to refuse
        # (but NaN, where None is the only missing value).
        out = column.to_numpy(dtype=np.float64)
        if spec.none_as == "only" and np.isnan(out).any():
            _refuse_none_apart(spec, out.astype(object))
        return out
    _refuse_none_apart(spec, np.asarray(column, dtype=object))
    if column.dtype.kind == "b":
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    converted = pd.to_numeric(column, errors="coerce")
    bad = np.asarray(converted.isna() & ~column.isna(), dtype=bool)
    if bad.any():
        raise InputError(
            f"Column {spec.name!r} must hold numbers (the model treats it as "
            f"{spec.kind}); got {_show(column[bad].iloc[0])}."
        )
    return converted.to_numpy(dtype=np.float64, na_value=np.nan)


def refuse_nones(forest: Forest, frame: pd.DataFrame) -> None:
    """Refuse ``None`` in the numeric columns of ``frame`` (the model's
    columns, in its order) that read it apart from NaN (``none_as="value"``):
    what :func:`encode` refuses, for a table read as numbers."""
    for spec, (_, column) in zip(forest.features, frame.items()):
        numeric = spec.none_as == "value" and not spec.is_categorical
        if numeric and column.dtype == object:
            _refuse_none_apart(spec, column.to_numpy())


def feature_columns(names: Sequence[str], features: Sequence[str]) -> list[str]:
    """The column ``names`` of a table, read as the model's ``features``.

    A name that is no feature's stands for the feature it becomes with its
    spaces written as underscores, unless a column has that name already:
    LightGBM stores the columns of a DataFrame so (``"mean radius"`` as
    ``"mean_radius"``) and predicts on the user's own table.

    Examples
    --------
    >>> feature_columns(["mean radius", "age"], ["age", "mean_radius"])
    ['mean_radius', 'age']
    """
    known = set(features)
    taken = set(names)
    out = []
    for name in names:
        alias = name.replace(" ", "_")
        if name not in known and alias in known and alias not in taken:
            taken.add(alias)
            name = alias
        out.append(name)
    return out


def has_labels(X: Any) -> bool:
    """Whether ``X`` holds labels (a DataFrame or a non-numeric array), not codes."""
    if hasattr(X, "iloc"):
        return True
    array = np.asarray(X)
    return array.dtype.kind not in "biuf"


def reads_labels(forest: Forest, X: Any) -> bool:
    """Whether ``forest`` reads ``X`` as labels in some column: a table of
    labels (:func:`has_labels`), or a numeric array for a model that reads
    labels from one (``Forest.label_columns``)."""
    return has_labels(X) or bool(forest.label_columns.size)


def series_as_row(X: Any) -> Any:
    """``X`` itself, or a Series taken as one row: a one-row DataFrame whose
    columns are its index and whose index is its name (dtypes inferred)."""
    if isinstance(X, pd.Series):
        return X.to_frame().T.infer_objects()
    return X


def encode(forest: Forest, X: Any) -> NDArray[np.float64]:
    """The float64 routing matrix of ``X`` given in the model's input columns.

    Parameters
    ----------
    forest : Forest
    X : DataFrame or array-like of shape (n_samples, n_features)
        A DataFrame is matched to the forest's columns by name (when the forest
        knows names) and its categorical columns hold labels: each label becomes
        its code, a label the model never saw the unknown code ``k``, a missing
        value NaN; booleans become 0/1.  A numeric array is taken as already
        encoded (codes for categorical columns), except in the columns of
        ``forest.label_columns``, whose numbers are labels the model reads; an
        object array holds labels, column by column in the forest's order.

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float64

    Raises
    ------
    InputError
        If a column is missing, a numeric column holds text, or a categorical
        column with text categories is given as numbers.
    """
    if not has_labels(X):
        return _encode_numeric(forest, np.asarray(X, dtype=np.float64))
    X = series_as_row(X)
    if hasattr(X, "iloc"):
        frame = X
        expected = list(forest.feature_names)
        names = feature_columns([str(c) for c in frame.columns], expected)
        if names != expected:
            missing = [n for n in expected if n not in names]
            if missing and len(names) == len(expected) and not forest.has_feature_names:
                frame = frame.set_axis(expected, axis=1)
            elif missing:
                raise InputError(
                    f"X is missing the model's column(s) {missing}; expected the "
                    f"columns {expected[:20]}, got {names[:20]}."
                )
            else:
                frame = frame.set_axis(names, axis=1)[expected]
    else:
        array = np.asarray(X, dtype=object)
        if array.ndim == 1:
            array = array.reshape(1, -1)
        if array.ndim != 2 or array.shape[1] != forest.n_features:
            raise InputError(
                f"X must be 2-D of shape (n_samples, {forest.n_features}); got an "
                f"array of shape {array.shape}."
            )
        frame = pd.DataFrame(array, columns=list(forest.feature_names))
    out = np.empty((frame.shape[0], forest.n_features))
    # DataFrame.items is the cheap way to each column (no indexer to resolve).
    for j, (spec, (_, column)) in enumerate(zip(forest.features, frame.items())):
        out[:, j] = _encode_column(spec, column)
    return out


def decode(
    forest: Forest, codes: NDArray[Any], like: pd.DataFrame | None = None
) -> pd.DataFrame:
    """A DataFrame in the user's columns from a routing matrix.

    Categorical codes become their labels (the unknown code and NaN become
    missing: the missing value ``like``'s column holds, else ``nan``), booleans become ``bool``; with ``like`` (the user's frame), each
    column takes the dtype of ``like``'s column where no value changes, and
    columns the model never reads hold ``like``'s first value.  When ``like``
    holds the same rows as ``codes``, those columns hold each row's own value
    instead (missing where the row's codes are), and the unknown code of a row
    whose own label the model never saw decodes to that label (it was kept,
    not made missing: an encoder may send the two different ways).
    """
    codes = np.asarray(codes, dtype=np.float64)
    dtypes = {} if like is None else dict(zip(like.columns, like.dtypes))
    columns = {
        spec.name: _decode_column(spec, codes[:, j], like, dtypes)
        for j, spec in enumerate(forest.features)
    }
    index = like.index if like is not None and len(like) == len(codes) else None
    frame = pd.DataFrame(columns, index=index)
    for j, values in enumerate(columns.values()):
        if (
            isinstance(values, np.ndarray)
            and values.dtype == object
            and np.equal(values, _NONE).any()
        ):
            # pandas would infer text and make None NaN, which scikit-learn's
            # encoders read apart from None.
            frame.isetitem(
                j, cast(Any, pd.Series(values, index=frame.index, dtype=object))
            )
    return frame


def _decode_column(
    spec: FeatureSpec,
    x: NDArray[np.float64],
    like: pd.DataFrame | None,
    dtypes: dict[Any, Any],
) -> NDArray[Any] | pd.Categorical:
    """One column of :func:`decode`: numpy for the common cases, pandas for
    the rest (booleans, dropped columns, extension dtypes of ``like``; a
    categorical dtype of ``like`` is kept)."""
    values: NDArray[Any] | None = None
    if spec.presence_only:
        return _decode_presence(spec, x, like)
    if spec.kind == "categorical":
        assert spec.categories is not None
        missing = {"value": np.nan, "only": None}.get(
            spec.none_as, _missing_marker(like, spec.name)
        )
        labels = np.array(list(spec.categories) + [missing], dtype=object)
        values = labels[category_codes(x, spec.n_categories)]
        if like is not None and len(like) == len(x) and spec.name in dtypes:
            values = _kept_unseen(values, x, like[spec.name], spec)
    elif spec.kind == "numeric":
        values = x
        if spec.none_as == "only" and np.isnan(x).any():
            # None is the column's missing value: NaN would be refused.
            values = x.astype(object)
            values[np.isnan(x)] = None
            return values
    if values is not None and spec.name not in dtypes:
        return values
    if values is not None and like is not None and not spec.dropped:
        fast = _like_array(values, dtypes[spec.name], spec)
        if fast is not None:
            return fast
    column: Any = (
        pd.Series(x > 0.5, dtype=object).where(~np.isnan(x), None)
        if values is None
        else pd.Series(values, dtype=values.dtype)
    )
    if like is not None and spec.name in dtypes:
        column = _like(column, like[spec.name], spec)
    if isinstance(column.dtype, pd.CategoricalDtype):
        # The user's categorical dtype, which numpy values would lose.
        return pd.Categorical(column)
    if like is not None and not isinstance(column.dtype, np.dtype):
        # The user's nullable dtype ("Int64", "boolean"): numpy would give
        # int64 or bool, or objects holding pd.NA where a value is missing,
        # which the model's own predict cannot read.
        return column.array
    return np.asarray(column.to_numpy())


def _decode_presence(
    spec: FeatureSpec, x: NDArray[np.float64], like: pd.DataFrame | None
) -> NDArray[Any]:
    """A presence-only column: the row's own value in ``like`` while present,
    NaN where missing; a value made present that was missing takes the first
    present value of ``like`` (any present value is read alike), else 0 in a
    numeric column and ``"<not missing>"`` in any other."""
    if like is None or spec.name not in like.columns:
        return x
    column = like[spec.name]
    own = column.to_numpy(dtype=object)
    own_missing = missing_labels(spec, own)
    if (~own_missing).any():
        stand_in = own[~own_missing][0]
    else:
        numeric = pd.api.types.is_numeric_dtype(column.dtype)
        stand_in = 0.0 if numeric else "<not missing>"
    if len(own) == len(x):
        values = own.copy()
    else:
        values = np.full(len(x), stand_in, dtype=object)
        own_missing = np.zeros(len(x), dtype=bool)
    present = ~np.isnan(x)
    values[present & own_missing] = stand_in
    values[~present & ~own_missing] = None if spec.none_as == "only" else np.nan
    return values


def _kept_unseen(
    values: NDArray[Any], x: NDArray[np.float64], own: pd.Series, spec: FeatureSpec
) -> NDArray[Any]:
    """``values`` with the unknown code (not NaN) of each row whose own label in
    ``own`` is one the model never saw put back to that label; for a model
    that reads numbers by their whole part, each code read off the row's own
    number (3.7 read as 3) put back to that number."""
    if spec.truncates:
        read = _encode_categorical(spec, own.reset_index(drop=True))
        keep = read == x  # never where missing (NaN)
        if keep.any():
            values = values.copy()
            values[keep] = own.to_numpy(dtype=object)[keep]
        return values
    unknown = x == spec.n_categories
    if not unknown.any():
        return values
    known = set(spec.categories or ())
    labels = own.to_numpy(dtype=object)
    missing = missing_labels(spec, labels)
    unseen = np.array(
        [not m and v not in known for v, m in zip(labels, missing)], dtype=bool
    )
    keep = unknown & unseen
    if not keep.any():
        return values
    values = values.copy()
    values[keep] = labels[keep]
    return values


def _missing_marker(like: pd.DataFrame | None, name: str) -> Any:
    """The missing value of a categorical column: the one the user's column
    holds (``None`` and ``nan`` are different categories to scikit-learn's
    encoders), else ``nan``."""
    if like is not None and name in like.columns:
        column = like[name]
        if not isinstance(column.dtype, pd.CategoricalDtype):
            absent = column[column.isna()]
            if len(absent):
                return absent.iloc[0]
    return np.nan


def _like_array(
    values: NDArray[Any], dtype: Any, spec: FeatureSpec
) -> NDArray[Any] | None:
    """What :func:`_like` gives for the common dtypes, in numpy (``values``:
    object labels of a categorical column, floats of a numeric one); None for
    the other cases (then :func:`_like` decides)."""
    if spec.kind == "categorical":
        if spec.truncates and isinstance(dtype, np.dtype) and dtype.kind in "iuf":
            # A model that reads numbers (LightGBM) takes no object column.
            return _numbers_like(values.astype(np.float64), dtype)
        # Labels stay labels, but for a categorical or boolean dtype.
        keep = not isinstance(dtype, pd.CategoricalDtype) and dtype.kind != "b"
        return values if keep else None
    if not isinstance(dtype, np.dtype):
        return None  # extension dtypes: nullable numbers, strings
    return _numbers_like(values, dtype)


def _numbers_like(
    values: NDArray[np.float64], dtype: np.dtype[Any]
) -> NDArray[Any] | None:
    """Floats ``values`` in ``dtype`` where no value changes (see
    :func:`_like_array`)."""
    if dtype.kind == "f":
        cast = values.astype(dtype)
        both_nan = np.isnan(cast) & np.isnan(values)
        return cast if bool(((cast == values) | both_nan).all()) else values
    if dtype.kind in "iu":
        if not np.isfinite(values).all():
            return values  # pandas refuses to cast NaN to integers
        with np.errstate(invalid="ignore", over="ignore"):
            cast = values.astype(dtype)
        # A whole float equals its integer cast exactly (numpy compares in
        # float64, exact for such a pair); any other float differs.
        return cast if bool((cast == values).all()) else values
    if dtype.kind == "b":
        whole = bool(((values == 0) | (values == 1)).all())
        return values.astype(bool) if whole else values
    return None


def _like(column: pd.Series, model: pd.Series, spec: FeatureSpec) -> pd.Series:
    """``column`` in the dtype of the user's ``model`` column when no value
    changes (an integer column stays integer while the values are whole)."""
    if spec.dropped:
        if len(model) == len(column):
            # The same rows: each keeps its own value (missing where its codes
            # are, a row without an answer).
            return model.reset_index(drop=True).where(column.notna().to_numpy())
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


def split_condition(
    forest: Forest,
    tree_index: int,
    node: int,
    *,
    names: Sequence[str] | None = None,
    number_format: str = ".4g",
) -> str:
    """The rule sending a row left at a split node, in the user's terms.

    ``"income <= 4.12e+04"`` for a numeric split; ``"employment in {retired,
    unemployed}"`` for a categorical one (the categories going left; a category
    the model never saw is listed as ``<unknown>`` when it goes left too).

    Examples
    --------
    >>> import numpy as np
    >>> from treelens import FeatureSpec, Forest, Tree
    >>> tree = Tree([1, -1, -1], [2, -1, -1], [0, -2, -2], [np.nan, -2, -2],
    ...             [False] * 3, [[0.0]] * 3, [0.0] * 3, [1] * 3, [1.0] * 3,
    ...             is_categorical=[True, False, False],
    ...             categorical_left=[[True, False, True]] + [[False] * 3] * 2)
    >>> spec = FeatureSpec("color", "categorical", ("red", "blue"))
    >>> forest = Forest((tree,), "tree", "regression", 1, ("color",), features=(spec,))
    >>> split_condition(forest, 0, 0)
    'color in {red, <unknown>}'
    """
    tree = forest.trees[tree_index]
    feature = int(tree.feature[node])
    name = (names if names is not None else forest.feature_names)[feature]
    if not tree.is_categorical[node]:
        return f"{name} <= {format(float(tree.threshold[node]), number_format)}"
    spec = forest.features[feature]
    labels = [str(c) for c in spec.categories or ()] + ["<unknown>"]
    left = tree.categorical_left[node, : len(labels)]
    return f"{name} in {{{', '.join(np.asarray(labels, dtype=object)[left])}}}"


def split_conditions(
    forest: Forest, tree_index: int, nodes: NDArray[np.intp]
) -> list[str]:
    """:func:`split_condition` of several split nodes of one tree."""
    return [split_condition(forest, tree_index, int(n)) for n in nodes]
