"""How each column a scikit-learn preprocessing step outputs derives from one input
column of the pipeline.

The lifting walks the steps with a list of :class:`ColumnMap`, one per column the
current step outputs: which input column it comes from, and either

- a numeric map: the raw value (missing values first replaced by ``fill``, as a
  ``SimpleImputer`` does) passed through non-decreasing functions (the scalers,
  a ``KBinsDiscretizer``'s ordinal bins);
- a missing-indicator map (``flags_missing``): a function of whether the input
  value is missing only, one value for every number and one for a missing value
  (``SimpleImputer(add_indicator=True)``, ``MissingIndicator``, possibly scaled
  or encoded after); or
- a categorical map: the value the step outputs for each category of the input
  column, for a category the encoder never saw, and for a missing value (probed
  through the encoder's own ``transform``, so ``drop``, ``handle_unknown``,
  infrequent categories and a ``TargetEncoder``'s encodings are as scikit-learn
  computes them; a scaler after it scales these values).

Numeric functions repeat the fitted steps' own float64 operations in their
order, so the lifted thresholds reproduce scikit-learn's arithmetic bit for bit:
a threshold on a scaled column, or on a bin index, becomes the largest raw value
that still goes left.  A split on a missing indicator becomes a split whose
numbers all go one way and whose missing value goes the other way ("is
missing"); on a categorical column every category goes one way.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._exceptions import UnsupportedModelError

__all__ = ["ColumnMap", "Sentinel", "as_numbers", "input_maps", "lift_step"]

_SCALERS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")
_ENCODERS = ("OneHotEncoder", "OrdinalEncoder", "TargetEncoder")
_UNKNOWN_LABEL = "\x00treelens: a category never seen"


@dataclass(frozen=True)
class ColumnMap:
    """One output column of the preprocessing, as a function of input column
    ``source``.

    Attributes
    ----------
    source : int
        Index of the pipeline's input column.
    name : str
        Name of that column (for messages).
    fill : object
        Value a missing input is replaced with before anything else (a
        ``SimpleImputer`` on the raw column), when ``filled``.
    functions : tuple of callables
        Non-decreasing functions applied in order to the (filled) raw value, each
        ``f(values: ndarray of float64) -> ndarray of float64`` (NaN in, NaN out,
        except a missing indicator's, which reads NaN as missing).
    categories : tuple or None
        For a categorical map: the input column's categories (missing values
        excluded), in code order.
    values : ndarray of shape (k + 2,) or None
        For a categorical map: the output for each category code ``0 .. k - 1``,
        for an unknown category (code ``k``), and for a missing value.
    refuses_missing : bool
        Whether a step the missing value reaches refuses NaN.
    flags_missing : bool
        Whether the column depends only on whether the input value is missing
        (a missing indicator): one value for every number, one for NaN.
    refuses_unknown : bool
        Whether the encoder refuses a category it never saw
        (``handle_unknown="error"``).
    none_as : {"missing", "value", "only"}
        How the steps so far read ``None`` of an object column: as a value of
        its own (encoders, missing indicators and text imputers keep object
        columns as they are, and ``None`` is not NaN to them), as missing (a
        step that converts the column to floats made it NaN), or as the only
        missing value (a step with ``missing_values=None``, which refuses NaN).
    filled : bool
        Whether ``fill`` is set (it may be ``None``, the most frequent value of
        a column holding only ``None``).
    sentinel : Sentinel or None
        The value other than NaN and ``None`` that a step reads as missing
        (``missing_values=-1``), in place of NaN, which that step refuses.
    none_skips_fill : bool
        Whether ``None`` became NaN only after ``fill`` replaced NaN (a text
        imputer kept it), so that it reaches the later steps unfilled.
    """

    source: int
    name: str = ""
    fill: Any = None
    functions: tuple[Callable[[NDArray[np.float64]], NDArray[np.float64]], ...] = ()
    categories: tuple[Any, ...] | None = None
    values: NDArray[np.float64] | None = field(default=None, compare=False)
    refuses_missing: bool = False
    flags_missing: bool = False
    refuses_unknown: bool = False
    none_as: str = "value"
    filled: bool = False
    sentinel: Sentinel | None = None
    none_skips_fill: bool = False

    @property
    def is_categorical(self) -> bool:
        return self.categories is not None

    @property
    def is_raw(self) -> bool:
        """Whether the column is still the raw input (possibly imputed)."""
        return not self.functions and self.categories is None

    def on_categories(self, categories: tuple[Any, ...]) -> ColumnMap:
        """A missing-indicator map as a categorical map over the input column's
        ``categories``: every category, and one never seen, is a present value
        (but the ``sentinel``'s category, a missing value to the indicator)."""
        present, missing = self.numeric(np.array([0.0, np.nan]))
        values = np.full(len(categories) + 2, present)
        values[-1] = missing
        if self.sentinel is not None:
            values[categories.index(self.sentinel.value)] = missing
            values[-1] = np.nan  # NaN itself: refused by the step
        return replace(self, functions=(), categories=categories, values=values)

    def numeric(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """The column's value for raw numbers ``x`` (NaN is a missing value)."""
        out = np.asarray(x, dtype=np.float64)
        if self.filled and self.fill is not None:
            out = np.where(np.isnan(out), float(self.fill), out)
        for function in self.functions:
            out = function(out)
        return out


def _refuse(step_name: str, step: Any, reason: str) -> UnsupportedModelError:
    return UnsupportedModelError(
        f"Pipeline step {step_name!r} ({type(step).__name__}) {reason}; expected "
        "ColumnTransformer, OneHotEncoder, OrdinalEncoder, TargetEncoder, "
        "StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, SimpleImputer "
        "(add_indicator too), MissingIndicator, KBinsDiscretizer "
        "(encode='ordinal'), a feature selector, 'passthrough' or 'drop'. To "
        "explain the model alone, give `pipeline[-1]` and the transformed data "
        "`pipeline[:-1].transform(X)`."
    )


@dataclass(frozen=True)
class Sentinel:
    """A value other than NaN and ``None`` that step ``step`` (of class
    ``kind``) reads as missing, as its ``missing_values``."""

    value: Any
    step: str
    kind: str

    def describe(self) -> str:
        """The step as messages name it."""
        return (
            f"Pipeline step {self.step!r} ({self.kind}, missing_values={self.value!r})"
        )


def as_numbers(column: ColumnMap) -> ColumnMap:
    """``column`` once a step converts it to floats: ``None`` becomes NaN, after
    the fill when a text imputer filled NaN and kept ``None``."""
    if column.is_categorical or column.none_as != "value":
        return column
    skips = column.filled and column.fill is not None
    return replace(column, none_as="missing", none_skips_fill=skips)


def _frame(step: Any, columns: NDArray[Any]) -> Any:
    names = getattr(step, "feature_names_in_", None)
    if names is None:
        return columns
    frame = pd.DataFrame(columns, columns=list(names))
    for j in range(columns.shape[1]):
        if columns.dtype == object and any(v is None for v in columns[:, j]):
            # pandas would infer text and make None NaN: an object column keeps
            # None, as the user's object column holds it.
            frame.isetitem(j, cast(Any, pd.Series(columns[:, j], dtype=object)))
    return frame


@dataclass(frozen=True)
class _Scale:
    """Column ``i`` of a fitted scaler's ``transform``, with the same float64
    operations in the same order (so bit for bit); picklable."""

    multiply: float | None = None
    add: float = 0.0
    subtract: float | None = None
    divide: float | None = None
    clip: tuple[float, float] | None = None

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.array(x, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # the bisection's ends
            if self.multiply is not None:
                out *= self.multiply
                out += self.add
            elif self.subtract is not None:
                out -= self.subtract
            if self.divide is not None:
                out /= self.divide
            if self.clip is not None:
                np.clip(out, self.clip[0], self.clip[1], out=out)
        return out


@dataclass(frozen=True)
class _Fill:
    """A missing value replaced by ``value`` (an imputer after other steps)."""

    value: float

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(np.isnan(x), self.value, x)


@dataclass(frozen=True)
class _Indicator:
    """A missing indicator: ``missing`` where the value is NaN, else ``present``
    (a ``MissingIndicator``'s 0 and 1, or what a later encoder makes of them)."""

    present: float = 0.0
    missing: float = 1.0

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(np.isnan(x), self.missing, self.present)


@dataclass(frozen=True, eq=False)
class _Bins:
    """A ``KBinsDiscretizer``'s ordinal bin index, as its ``transform`` computes
    it: ``searchsorted(bin_edges[1:-1], x, side="right")``, so a value equal to
    an edge goes to the bin above it (after the cast to the step's ``dtype``)."""

    inner_edges: NDArray[np.float64]
    dtype: Any = np.float64

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(over="ignore"):  # the bisection's ends, in float32
            cast = np.asarray(x).astype(self.dtype)
        index = np.searchsorted(self.inner_edges, cast, side="right")
        return np.where(np.isnan(x), np.nan, index.astype(np.float64))


def _scaler_function(step: Any, i: int) -> _Scale:
    """Column ``i`` of a fitted scaler's ``transform`` (see :class:`_Scale`)."""
    name = type(step).__qualname__
    if name == "StandardScaler":
        return _Scale(
            subtract=float(step.mean_[i]) if step.with_mean else None,
            divide=float(step.scale_[i]) if step.scale_ is not None else None,
        )
    if name == "RobustScaler":
        return _Scale(
            subtract=float(step.center_[i]) if step.with_centering else None,
            divide=float(step.scale_[i]) if step.with_scaling else None,
        )
    if name == "MaxAbsScaler":
        return _Scale(divide=float(step.scale_[i]))
    # MinMaxScaler: X *= scale_; X += min_
    clip = None
    if step.clip:
        clip = (float(step.feature_range[0]), float(step.feature_range[1]))
    return _Scale(multiply=float(step.scale_[i]), add=float(step.min_[i]), clip=clip)


def _lift_scaler(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    scale = getattr(step, "scale_", None)
    if scale is not None and np.any(np.asarray(scale) <= 0):
        raise _refuse(name, step, "has a non-positive scale")
    out = []
    for i, column in enumerate(maps):
        function = _scaler_function(step, i)
        if column.is_categorical:
            # Each category's encoded value, scaled with the same float64
            # operations: the final model compares exactly these.
            assert column.values is not None
            out.append(replace(column, values=function(column.values)))
            continue
        column = as_numbers(column)
        out.append(replace(column, functions=(*column.functions, function)))
    return out


def _lift_imputer(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    maps = _read_missing(name, step, maps)
    statistics = np.asarray(step.statistics_, dtype=object)
    keep = np.ones(len(maps), dtype=bool)
    if step.strategy != "constant" and not getattr(step, "keep_empty_features", False):
        # Only NaN marks a column without values: an object column holding only
        # None has None as its most frequent value, and is kept.
        keep = ~np.array([_is_nan(v) for v in statistics], dtype=bool)
    # The text strategies keep an object column as it is (None a value); the
    # others convert it to floats first, None to NaN.
    if step.strategy not in ("most_frequent", "constant"):
        maps = [as_numbers(m) for m in maps]
    out = []
    for i in np.flatnonzero(keep):
        column, fill = maps[i], statistics[i]
        if column.is_categorical:
            raise _refuse(name, step, "imputes an encoded column")
        if column.is_raw:
            if not column.filled:
                column = replace(column, fill=fill, filled=True)
        else:
            column = replace(column, functions=(*column.functions, _Fill(float(fill))))
        out.append(column)
    if step.add_indicator:
        # scikit-learn appends the indicator's columns after the imputed ones.
        out.extend(_indicator_maps(name, step.indicator_, maps))
    return out


def _read_missing(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    """``maps`` as an imputer or a missing indicator reads them, by its
    ``missing_values``: NaN as it is; ``pd.NA`` (pandas' missing values, so
    ``None`` too) as missing; ``None`` as the only missing value; any other
    value as a :class:`Sentinel`.  Each but NaN and ``pd.NA`` makes the step
    refuse NaN, and is read on the raw column only."""
    missing = step.missing_values
    if _is_nan(missing):
        return maps
    if missing is pd.NA:
        for column in maps:
            if column.none_as == "value" and column.filled:
                raise _refuse(
                    name,
                    step,
                    f"imputes None of column {column.name!r}, which an earlier "
                    "imputer kept apart from the NaN it filled",
                )
        return [m if m.is_categorical else replace(m, none_as="missing") for m in maps]
    for column in maps:
        if not column.is_raw or column.filled or column.none_as != "value":
            raise _refuse(
                name,
                step,
                f"reads {missing!r} as missing in column {column.name!r}, which an "
                f"earlier step changed; expected missing_values={missing!r} on the "
                "raw column only",
            )
    if missing is None:
        return [replace(m, none_as="only") for m in maps]
    sentinel = Sentinel(missing, name, type(step).__name__)
    return [replace(m, sentinel=sentinel, refuses_missing=True) for m in maps]


def _is_nan(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


def _reaches_as_missing(column: ColumnMap) -> bool:
    """Whether a missing input value is still missing in this column."""
    if column.is_categorical:
        assert column.values is not None
        return bool(np.isnan(column.values[-1]))
    if column.filled:
        return False
    return bool(np.isnan(column.numeric(np.array([np.nan])))[0])


def _indicator_maps(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    """A ``MissingIndicator`` (alone or an imputer's ``indicator_``) over
    ``maps`` already read by its ``missing_values``: one missing-indicator map
    per column in ``features_``."""
    features = np.asarray(step.features_, dtype=np.intp)
    if any(maps[i].is_categorical for i in features):
        raise _refuse(name, step, "marks missing values of an encoded column")
    unmarked = np.setdiff1d(np.arange(len(maps)), features)
    refused = [int(i) for i in unmarked if _reaches_as_missing(maps[i])]
    if step.error_on_new and refused:
        raise _refuse(
            name,
            step,
            f"refuses missing values in its input columns {refused}, which were "
            "complete when it was fitted (error_on_new=True; give error_on_new="
            "False or features='all')",
        )
    return [
        ColumnMap(
            maps[i].source,
            maps[i].name,
            functions=(_Indicator(0.0, 1.0 if _reaches_as_missing(maps[i]) else 0.0),),
            refuses_missing=maps[i].refuses_missing,
            flags_missing=True,
            none_as=maps[i].none_as,
            sentinel=maps[i].sentinel,
        )
        for i in features
    ]


def _lift_bins(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    """A ``KBinsDiscretizer(encode="ordinal")``: each column's bin index, a
    non-decreasing step function of the raw value (NaN refused, as it is)."""
    if step.encode != "ordinal":
        raise _refuse(
            name,
            step,
            f"encodes its bins with encode={step.encode!r}: a split on one bin's "
            "column tests an interval of the raw column, which no single threshold "
            "states; expected encode='ordinal'",
        )
    dtype = np.float64 if step.dtype is None else step.dtype
    out = []
    for edges, column in zip(step.bin_edges_, maps):
        if column.is_categorical:
            raise _refuse(name, step, "bins an encoded (categorical) column")
        bins = _Bins(np.asarray(edges, dtype=np.float64)[1:-1], dtype)
        column = as_numbers(column)
        out.append(replace(column, functions=(*column.functions, bins)))
    return _mark_missing(step, out)


def _labels(categories: NDArray[Any], none_as: str) -> list[Any]:
    """An encoder's categories of one column that are labels: all but NaN, and
    but ``None`` when the column reads it as missing."""
    return [
        c.item() if isinstance(c, np.generic) else c
        for c in categories
        if not (_is_nan(c) or (c is None and none_as != "value") or c is pd.NA)
    ]


def _first_label(categories: NDArray[Any]) -> Any:
    """A category the encoder takes in the other columns of a probe row (None
    too: the only category of a column holding only None)."""
    return next((c for c in categories if not _is_nan(c)), np.nan)


def _probe_rows(categories: list[NDArray[Any]], i: int, column: ColumnMap) -> list[Any]:
    """Probe values for column ``i``: each category, an unknown one, a missing one."""
    known = _labels(categories[i], column.none_as)
    if np.asarray(categories[i]).dtype.kind in "iuf":
        unknown: Any = (max(known) + 1) if known else 0
    else:
        unknown = _UNKNOWN_LABEL
    if column.filled:
        missing = column.fill
    elif column.none_as == "missing" and any(c is None for c in categories[i]):
        missing = None  # the encoder saw None, where the column reads NaN
    else:
        missing = np.nan
    return [*known, unknown, missing]


def _transform_rows(step: Any, matrix: NDArray[Any]) -> NDArray[np.float64] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            encoded = step.transform(_frame(step, matrix))
        except ValueError:
            return None
    if hasattr(encoded, "toarray"):
        encoded = encoded.toarray()
    return np.asarray(encoded, dtype=np.float64)


def _probe(
    name: str, step: Any, maps: list[ColumnMap], i: int
) -> tuple[NDArray[np.float64], bool, bool]:
    """The encoder's outputs for column ``i``'s probes (rows: each category, an
    unknown one, a missing one), NaN rows where the encoder refuses a probe;
    and whether it refuses the unknown one (``handle_unknown="error"``) and
    the missing one (a missing value it never saw)."""
    categories = list(step.categories_)
    rows = _probe_rows(categories, i, maps[i])
    base = [_first_label(cats) for cats in categories]
    matrix = np.empty((len(rows), len(base)), dtype=object)
    matrix[:] = np.array(base, dtype=object)
    matrix[:, i] = np.array(rows, dtype=object)
    n = len(rows)
    if n > 2:
        known = _transform_rows(step, matrix[:-2])
        assert known is not None  # the encoder's own categories always transform
        # Each extra probe follows a known row: scikit-learn reads a column
        # holding only None as unknown, but None among labels as missing.
        extra = [_transform_rows(step, matrix[[0, r]]) for r in (n - 2, n - 1)]
        extra = [None if e is None else e[1:] for e in extra]
    else:
        # A column the encoder saw only missing: no label to probe.
        extra = [_transform_rows(step, matrix[[r]]) for r in (0, 1)]
        seen = next((e for e in extra if e is not None), None)
        if seen is None:
            raise _refuse(
                name, step, f"refuses every value of its column {i}, even missing"
            )
        known = np.empty((0, seen.shape[1]))
    width = known.shape[1]
    block = np.vstack(
        [known] + [np.full((1, width), np.nan) if e is None else e for e in extra]
    )
    return block, extra[0] is None, extra[1] is None


def _output_slices(step: Any, n_inputs: int) -> list[slice]:
    counts = getattr(step, "_n_features_outs", None)
    if counts is None:
        # A multiclass TargetEncoder outputs one column per class, input by input.
        multiclass = getattr(step, "target_type_", None) == "multiclass"
        counts = [len(step.classes_) if multiclass else 1] * n_inputs
    ends = np.cumsum(counts)
    return [slice(int(e - c), int(e)) for c, e in zip(counts, ends)]


def _encoded_indicator(
    name: str, step: Any, maps: list[ColumnMap], i: int, block_of: slice
) -> list[ColumnMap]:
    """Encoder outputs of column ``i``, a missing indicator: the encoder's
    output for the indicator's value on a number and on a missing value (an
    encoder refusing the latter refuses missing values, as the pipeline does)."""
    column = maps[i]
    categories = [c for c in step.categories_[i] if not pd.isna(c)]
    is_bool = bool(categories) and all(
        isinstance(c, (bool, np.bool_)) for c in categories
    )
    base = [_first_label(cats) for cats in step.categories_]
    outputs: list[NDArray[np.float64]] = []
    refuses = False
    for value in column.numeric(np.array([0.0, np.nan])):
        # The value as the encoder received it: False/True from an object array.
        row = np.array([base], dtype=object)
        row[0, i] = bool(value) if is_bool and value in (0.0, 1.0) else float(value)
        encoded = _transform_rows(step, row)
        if encoded is None and not outputs:
            raise _refuse(name, step, f"refuses the missing indicator's value {value}")
        refuses = encoded is None
        width = block_of.stop - block_of.start
        outputs.append(
            np.full(width, np.nan) if encoded is None else encoded[0, block_of]
        )
    return [
        replace(
            column,
            functions=(_Indicator(float(p), float(m)),),
            refuses_missing=column.refuses_missing or refuses,
        )
        for p, m in zip(*outputs)
    ]


def _lift_encoder(
    name: str, step: Any, maps: list[ColumnMap], one_hot: bool
) -> list[ColumnMap]:
    for column in maps:
        if not (column.is_raw or column.flags_missing):
            raise _refuse(name, step, "encodes a column that an earlier step changed")
    slices = _output_slices(step, len(maps))
    out = []
    for i, column in enumerate(maps):
        if column.flags_missing:
            out.extend(_encoded_indicator(name, step, maps, i, slices[i]))
            continue
        categories = tuple(_labels(step.categories_[i], column.none_as))
        block, unknown, missing = _probe(name, step, maps, i)
        block = block[:, slices[i]]
        if column.sentinel is not None:
            categories, block = _with_sentinel(column.sentinel, categories, block)
        # A probe the encoder refuses (handle_unknown="error"; a missing value
        # it never saw) makes a row the pipeline refuses: so does the Forest.
        if one_hot:
            block = np.where(np.isnan(block), 0.0, block)
        for j in range(block.shape[1]):
            out.append(
                ColumnMap(
                    column.source,
                    column.name,
                    categories=categories,
                    values=block[:, j],
                    refuses_missing=column.refuses_missing or bool(missing),
                    refuses_unknown=bool(unknown),
                    none_as=column.none_as,
                )
            )
    return out


def _with_sentinel(
    sentinel: Sentinel, categories: tuple[Any, ...], block: NDArray[np.float64]
) -> tuple[tuple[Any, ...], NDArray[np.float64]]:
    """Categories and probe block (rows: each category, an unknown one, a
    missing one) of a column whose missing value is ``sentinel``, imputed
    before the encoder: the sentinel is a category of its own, encoded as the
    imputed value (the missing row), and NaN is refused, as the imputer
    refuses it."""
    *known, unknown, filled = block
    nan_row = np.full_like(filled, np.nan)
    if sentinel.value in categories:  # the imputed value is the sentinel itself
        return categories, np.vstack([*known, unknown, nan_row])
    rows = [*known, filled, unknown, nan_row]
    return (*categories, sentinel.value), np.vstack(rows)


def _lift_column_transformer(
    name: str, step: Any, maps: list[ColumnMap]
) -> list[ColumnMap]:
    from sklearn.preprocessing import FunctionTransformer

    indices = step._transformer_to_input_indices
    out: list[ColumnMap] = []
    for sub_name, transformer, _ in step.transformers_:
        columns = [maps[c] for c in indices.get(sub_name, [])]
        if not columns or (isinstance(transformer, str) and transformer == "drop"):
            continue
        if isinstance(transformer, FunctionTransformer) and transformer.func is None:
            transformer = "passthrough"  # how a fitted ColumnTransformer stores it
        out.extend(lift_step(f"{name}/{sub_name}", transformer, columns))
    return out


def lift_step(name: str, step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    """The column maps after ``step``, given those of its input columns."""
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return list(maps)
    if isinstance(step, str) and step == "drop":
        return []
    cls = type(step)
    module = cls.__module__
    if not module.startswith("sklearn."):
        raise _refuse(name, step, "is not a scikit-learn preprocessing step")
    qualname = cls.__qualname__
    if qualname == "Pipeline":
        for sub_name, sub_step in step.steps:
            maps = lift_step(f"{name}/{sub_name}", sub_step, maps)
        return maps
    if qualname == "ColumnTransformer":
        return _lift_column_transformer(name, step, maps)
    if qualname in _ENCODERS:
        return _lift_encoder(name, step, maps, qualname == "OneHotEncoder")
    if qualname in _SCALERS:
        return _lift_scaler(name, step, maps)
    if qualname == "SimpleImputer":
        return _lift_imputer(name, step, maps)
    if qualname == "MissingIndicator":
        return _indicator_maps(name, step, _read_missing(name, step, maps))
    if qualname == "KBinsDiscretizer":
        return _lift_bins(name, step, maps)
    from sklearn.feature_selection import SelectorMixin

    if isinstance(step, SelectorMixin):
        support = np.asarray(step.get_support(), dtype=bool)
        return _mark_missing(step, [c for c, kept in zip(maps, support) if kept])
    raise _refuse(name, step, "cannot be carried back to the input columns")


def _mark_missing(step: Any, maps: list[ColumnMap]) -> list[ColumnMap]:
    """Maps whose missing values reach ``step`` unfilled, marked if it refuses NaN."""
    from sklearn.utils import get_tags

    if get_tags(step).input_tags.allow_nan:
        return maps
    return [
        replace(c, refuses_missing=True)
        if not c.is_categorical and np.isnan(c.numeric(np.array([np.nan])))[0]
        else c
        for c in maps
    ]


def input_maps(names: Sequence[str]) -> list[ColumnMap]:
    """One raw map per input column of the pipeline, named ``names``."""
    return [ColumnMap(i, str(name)) for i, name in enumerate(names)]
