"""scikit-learn Pipelines, lifted to the columns the pipeline takes.

``to_forest(pipeline)`` reads the final tree model and carries every split back
through the preprocessing (see :mod:`._pipeline_steps`), so the Forest routes the
DataFrame the pipeline is given:

- a split on a numeric column that went through scalers and imputers becomes a
  split on the raw column, at the largest raw value that still goes left (found
  by bisection over doubles with the steps' own ``transform``, so exact), with
  missing values sent where the imputed value goes;
- a split on a one-hot, ordinal or target-encoded column becomes a categorical
  split on the encoded input column: each category, an unknown category (code
  ``k``) and a missing value go where their encoded value goes;
- a split on a ``KBinsDiscretizer(encode="ordinal")`` bin index becomes a split
  on the raw column just below a bin edge (a value equal to an edge is in the bin
  above it, as scikit-learn's ``searchsorted(..., side="right")`` puts it);
- a split on a missing indicator (``SimpleImputer(add_indicator=True)``,
  ``MissingIndicator``) becomes a split on "is missing" of the input column:
  every number goes one way (threshold ``+inf``, or ``-inf``), a missing value
  the other; on a categorical column every category, and one never seen, goes
  one way.  The indicator's columns belong to their input column, so
  contributions, SHAP values and importances of an indicator are credited to it.

Counterfactuals search the lifted Forest, so they honour the indicators
exactly: a present value is never made missing (a leaf reached only by
missing values is out of its reach), a missing value stays missing, routed as
the pipeline routes it, unless ``fill_missing`` allows it to be filled, and a
filled value is then a number, whose indicator is 0, as in the pipeline.

A column that reaches the model only through its missing indicator is
presence-only (``FeatureSpec.presence_only``): any value, text included, is
"not missing".  An encoder after an indicator that it never saw set (the
column was complete when fitted) refuses the column's missing values, and so
does the Forest; so does an encoder with ``handle_unknown="error"`` refuse a
category (or a missing value) it never saw.  ``None`` in an object column is
read as the steps read it (``FeatureSpec.none_as``): a value of its own to the
encoders, missing indicators and text imputers, NaN after a step that converts
the column to numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._features import FeatureSpec, NoneAs, category_codes
from .._core._forest import Forest, Tree
from .._exceptions import InputError, UnsupportedModelError
from ._pipeline_steps import ColumnMap, as_numbers, input_maps, lift_step
from ._registry import register_adapter

__all__ = ["PipelineParts", "lift_to_inputs", "pipeline_parts"]

# Bisection steps over the ordered bit patterns of doubles: 64 always suffice.
_BISECTION_STEPS = 66


def _ordered_keys(x: NDArray[np.float64]) -> NDArray[np.int64]:
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, np.int64(-(2**63)) - bits)


def _from_keys(keys: NDArray[np.int64]) -> NDArray[np.float64]:
    bits = np.where(keys >= 0, keys, np.int64(-(2**63)) - keys)
    return bits.view(np.float64)


def _inner_go_left(
    inner: Forest,
    nodes: dict[str, NDArray[Any]],
    z: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """Whether value ``z[i]`` of the encoded column goes left at node ``i``
    (arrays of node fields in ``nodes``); ``z`` may be 2-D, one column per probe."""
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore"):
        cast = z.astype(inner.input_dtype).astype(np.float64)
    thr = nodes["threshold"].reshape(-1, *([1] * (z.ndim - 1)))
    with np.errstate(invalid="ignore"):
        go = cast <= thr
    categorical = nodes["is_categorical"]
    if categorical.any():
        k = inner.n_categories[nodes["feature"]].reshape(-1, *([1] * (z.ndim - 1)))
        code = category_codes(z, k)
        table = nodes["categorical_left"]
        rows = np.broadcast_to(
            np.arange(z.shape[0]).reshape(-1, *([1] * (z.ndim - 1))), z.shape
        )
        go = np.where(
            categorical.reshape(-1, *([1] * (z.ndim - 1))), table[rows, code], go
        )
    missing_left = nodes["missing_go_left"].reshape(-1, *([1] * (z.ndim - 1)))
    return np.where(np.isnan(z), missing_left, go)


def _raw_thresholds(
    inner: Forest, nodes: dict[str, NDArray[Any]], column: ColumnMap
) -> NDArray[np.float64]:
    """The largest raw value going left at each numeric node: a raw ``x`` goes
    left iff ``x <= result`` (``-inf``: no finite value goes left)."""
    n = nodes["threshold"].shape[0]
    top = np.finfo(np.float64).max
    lo = np.full(n, _ordered_keys(np.array(-top)))
    hi = np.full(n, _ordered_keys(np.array(top)))
    no_nan = {**nodes, "missing_go_left": np.zeros(n, dtype=bool)}

    def left(keys: NDArray[np.int64]) -> NDArray[np.bool_]:
        return _inner_go_left(inner, no_nan, column.numeric(_from_keys(keys)))

    none_left = ~left(lo)
    all_left = left(hi)
    # Invariant: lo goes left, hi goes right.
    for _ in range(_BISECTION_STEPS):
        if np.all(hi <= lo + 1):
            break
        # (lo + hi) // 2 without overflowing int64.
        mid = lo // 2 + hi // 2 + (lo % 2 + hi % 2) // 2
        goes = left(mid)
        lo = np.where(goes, mid, lo)
        hi = np.where(goes, hi, mid)
    out = _from_keys(lo)
    out = np.where(none_left, -np.inf, out)
    return np.where(all_left, np.inf, out)


def _lift_feature(
    inner: Forest,
    flat: dict[str, NDArray[Any]],
    where: NDArray[np.intp],
    column: ColumnMap,
    out: dict[str, NDArray[Any]],
) -> None:
    """Rewrite the split nodes ``where`` (flat ids) on one encoded column."""
    nodes = {
        name: flat[name][where]
        for name in ("feature", "threshold", "missing_go_left", "is_categorical")
    }
    nodes["categorical_left"] = flat["categorical_left"][where]
    out["feature"][where] = column.source
    if column.is_categorical:
        assert column.values is not None
        values = np.broadcast_to(column.values, (where.size, column.values.size))
        go = _inner_go_left(inner, nodes, values)
        k = len(column.categories or ())
        out["is_categorical"][where] = True
        out["threshold"][where] = np.nan
        out["categorical_left"][where, : k + 1] = go[:, : k + 1]
        out["missing_go_left"][where] = go[:, k + 1]
        return
    if nodes["is_categorical"].any():
        raise UnsupportedModelError(
            "A categorical split of the final model reads a column that the "
            "preprocessing scales or imputes; expected categorical splits on "
            "encoded or passed-through columns only."
        )
    out["threshold"][where] = _raw_thresholds(inner, nodes, column)
    missing = column.numeric(np.full(where.size, np.nan))
    out["missing_go_left"][where] = _inner_go_left(inner, nodes, missing)


def _column_specs(
    names: Sequence[str], maps: list[ColumnMap], n_inputs: int
) -> tuple[FeatureSpec, ...]:
    """One spec per input column, from the maps reading it: a missing indicator
    takes its column's kind from the other maps (presence only when it is
    alone: any value, text too, is "not missing"; its sentinel the one category
    when it reads one)."""
    specs: list[FeatureSpec | None] = [None] * n_inputs
    for column in sorted(maps, key=lambda c: c.flags_missing):
        previous = specs[column.source]
        name = names[column.source]
        _check_sentinel(column, previous)
        if column.flags_missing:
            if previous is None:
                specs[column.source] = _indicator_spec(name, column)
            continue
        spec = FeatureSpec(
            name,
            "categorical" if column.is_categorical else "numeric",
            column.categories,
            accepts_unknown=not column.refuses_unknown,
            none_as=_none_as(column),
        )
        if previous is not None:
            spec = _merged(previous, spec)
        specs[column.source] = spec
    return tuple(
        spec if spec is not None else FeatureSpec(names[i], dropped=True)
        for i, spec in enumerate(specs)
    )


def _merged(previous: FeatureSpec, spec: FeatureSpec) -> FeatureSpec:
    """One spec for a column two maps read alike (refused where either
    refuses)."""
    only = {previous.none_as, spec.none_as} & {"only"}
    if (previous.kind, previous.categories) != (spec.kind, spec.categories) or (
        only and previous.none_as != spec.none_as
    ):
        raise UnsupportedModelError(
            f"Column {spec.name!r} reaches the model both as {previous.kind} "
            f"(categories {previous.categories}, None read as "
            f"{previous.none_as!r}) and as {spec.kind} (categories "
            f"{spec.categories}, None read as {spec.none_as!r}); expected one "
            "encoding per column."
        )
    # Refused by one encoder, refused by the pipeline; a numeric column that
    # one step keeps None of refuses None.
    refuses_none = not spec.is_categorical and "value" in (
        previous.none_as,
        spec.none_as,
    )
    return replace(
        spec,
        accepts_unknown=previous.accepts_unknown and spec.accepts_unknown,
        none_as="value" if refuses_none else spec.none_as,
    )


def _check_sentinel(column: ColumnMap, previous: FeatureSpec | None) -> None:
    """Refuse a sentinel (``missing_values=-1``) that a Forest cannot state: on
    a column reaching the model as a number (the imputed value's thresholds do
    not say where the sentinel goes), or read by an indicator of a column that
    reaches the model without the sentinel among its categories."""
    sentinel = column.sentinel
    if sentinel is None or column.is_categorical:
        return
    if not column.flags_missing:
        reason = "imputes it, and the column then reaches the model as a number"
    elif previous is not None and sentinel.value not in (previous.categories or ()):
        reason = "marks it, and the column also reaches the model as a number"
    else:
        return
    raise UnsupportedModelError(
        f"{sentinel.describe()} reads {sentinel.value!r} as missing in column "
        f"{column.name!r}, {reason}: a Forest compares that column's numbers with "
        "thresholds, which cannot send the sentinel apart from its neighbours. "
        "Expected missing_values=np.nan (or pd.NA, or None in an object column), "
        "or an encoder after the imputer. To explain the model alone, give "
        "`pipeline[-1]` and the transformed data `pipeline[:-1].transform(X)`."
    )


def _indicator_spec(name: str, column: ColumnMap) -> FeatureSpec:
    """The spec of a column only a missing indicator reads: presence only, or
    the indicator's sentinel as the one category (any other value, never seen,
    is present; NaN is refused, as the indicator refuses it)."""
    if column.sentinel is not None:
        return FeatureSpec(
            name,
            "categorical",
            (column.sentinel.value,),
            none_as=_none_as(column),
        )
    return FeatureSpec(name, presence_only=True, none_as=_none_as(column))


def _none_as(column: ColumnMap) -> NoneAs:
    """How the Forest reads ``None`` of ``column``'s input: a value of its own
    to the encoders and indicators, and to a numeric column whose NaN the
    pipeline fills but whose ``None`` it keeps (which the Forest then refuses);
    the only missing value after ``missing_values=None``; else missing."""
    if column.none_as == "only":
        return "only"
    if column.is_categorical or column.flags_missing:
        return "value" if column.none_as == "value" else "missing"
    return "value" if as_numbers(column).none_skips_fill else "missing"


def _indicators_on_categories(
    maps: list[ColumnMap], specs: tuple[FeatureSpec, ...]
) -> list[ColumnMap]:
    """Missing indicators of categorical columns as categorical maps (every
    category, and one never seen, is a present value)."""
    return [
        column.on_categories(specs[column.source].categories or ())
        if column.flags_missing and specs[column.source].is_categorical
        else column
        for column in maps
    ]


def _with_missing(
    specs: tuple[FeatureSpec, ...], maps: list[ColumnMap], inner: Forest
) -> tuple[FeatureSpec, ...]:
    """Columns whose missing values the pipeline routes: encoded ones, imputed
    ones, and all when the final model routes NaN."""
    routed = np.ones(len(specs), dtype=bool)
    for column in maps:
        routed[column.source] &= not column.refuses_missing
        if not column.is_categorical and not inner.allow_missing:
            filled = not np.isnan(column.numeric(np.array([np.nan])))[0]
            routed[column.source] &= filled
    return tuple(
        replace(spec, accepts_missing=bool(ok)) for spec, ok in zip(specs, routed)
    )


def _lift_trees(
    inner: Forest, maps: list[ColumnMap], specs: tuple[FeatureSpec, ...]
) -> tuple[Tree, ...]:
    flat = dict(inner._flat)
    n_total = flat["left"].size
    if "categorical_left" not in flat:
        flat["categorical_left"] = np.zeros((n_total, 0), dtype=bool)
        flat["is_categorical"] = np.zeros(n_total, dtype=bool)
    k_max = max((s.n_categories for s in specs), default=0)
    out = {
        "feature": flat["feature"].copy(),
        "threshold": flat["threshold"].astype(np.float64),
        "missing_go_left": flat["missing_go_left"].copy(),
        "is_categorical": np.zeros(n_total, dtype=bool),
        "categorical_left": np.zeros((n_total, k_max + 1), dtype=bool),
    }
    split = ~flat["is_leaf"]
    for j, column in enumerate(maps):
        where = np.flatnonzero(split & (flat["feature"] == j))
        if where.size:
            _lift_feature(inner, flat, where, column, out)
    k = np.array([s.n_categories for s in specs], dtype=np.intp)
    trees = []
    for tree, start in zip(inner.trees, flat["offsets"]):
        part = slice(int(start), int(start) + tree.n_nodes)
        categorical = out["is_categorical"][part]
        width = (
            int(k[out["feature"][part][categorical]].max()) + 1
            if categorical.any()
            else 0
        )
        trees.append(
            replace(
                tree,
                feature=out["feature"][part],
                threshold=out["threshold"][part],
                missing_go_left=out["missing_go_left"][part],
                is_categorical=categorical,
                categorical_left=out["categorical_left"][part, :width],
            )
        )
    return tuple(trees)


def _input_names(
    pipeline: Any, feature_names: Sequence[str] | None
) -> tuple[tuple[str, ...], bool]:
    # The first step that is not "passthrough" saw the pipeline's input.
    first = next(
        step
        for _, step in pipeline.steps
        if not (step is None or isinstance(step, str))
    )
    fitted = getattr(first, "feature_names_in_", None)
    n = int(first.n_features_in_)
    if feature_names is not None:
        names = tuple(map(str, feature_names))
        if len(names) != n or (fitted is not None and names != tuple(map(str, fitted))):
            raise InputError(
                "`feature_names` must be the pipeline's input columns; expected "
                f"{list(map(str, fitted)) if fitted is not None else n} names, got "
                f"{list(names)}."
            )
        return names, True
    if fitted is not None:
        return tuple(map(str, fitted)), True
    return tuple(f"x{i}" for i in range(n)), False


@dataclass(frozen=True, eq=False)
class _ColumnsMap:
    """The lifted Forest's rows mapped to the final model's input, column by
    column as the preprocessing computes them (see ``Forest.input_map``)."""

    forest: Forest
    trees: tuple[Tree, ...]
    maps: tuple[ColumnMap, ...]

    def transform(self, X: NDArray[Any]) -> NDArray[Any]:
        codes = np.asarray(X, dtype=np.float64)
        out = np.empty((codes.shape[0], len(self.maps)))
        for i, column in enumerate(self.maps):  # one vectorized step per column
            x = codes[:, column.source]
            if column.is_categorical:
                assert column.values is not None
                k = len(column.categories or ())
                missing = np.isnan(x)
                code = category_codes(np.where(missing, 0.0, x), k)
                out[:, i] = column.values[np.where(missing, k + 1, code)]
            else:
                out[:, i] = column.numeric(x)
        return out.astype(self.forest.input_dtype)


@dataclass(frozen=True, eq=False)
class PipelineParts:
    """A pipeline seen as its final model on the transformed columns.

    Attributes
    ----------
    forest : Forest
        The final model's Forest, over the columns the preprocessing outputs.
    source : ndarray of shape (n_transformed,), int
        The pipeline's input column each transformed column derives from.
    n_inputs : int
        Number of input columns of the pipeline.
    preprocessing : object
        ``pipeline[:-1]``: its ``transform`` gives the final model's input.
    """

    forest: Forest
    source: NDArray[np.intp]
    n_inputs: int
    preprocessing: Any

    def groups(self) -> NDArray[np.float64]:
        """The ``(n_transformed, n_inputs)`` 0/1 matrix of which input column
        each transformed column derives from (products with it sum per input
        column)."""
        out = np.zeros((self.source.size, self.n_inputs))
        out[np.arange(self.source.size), self.source] = 1.0
        return out

    def transform(self, frame: Any) -> NDArray[np.float64]:
        """The final model's input for the pipeline's input rows ``frame``."""
        out = self.preprocessing.transform(frame)
        if hasattr(out, "toarray"):
            out = out.toarray()
        if hasattr(out, "to_numpy"):
            # Output set to pandas keeps nullable columns (Int64, boolean),
            # whose pandas.NA numpy cannot read as a float.
            return np.asarray(out.to_numpy(dtype=np.float64, na_value=np.nan))
        return np.asarray(out, dtype=np.float64)


def pipeline_parts(model: Any) -> PipelineParts | None:
    """The final model and the column map of a scikit-learn Pipeline (None for
    any other model, a Forest included)."""
    from ._registry import adapter_of

    if isinstance(model, Forest) or adapter_of(model) is not _pipeline:
        return None
    _fitted(model)
    *steps, (_, final) = model.steps
    adapter = adapter_of(final)
    if adapter is None or not steps:
        return None  # to_forest(model) names the problem, or nothing to lift
    names, _ = _input_names(model, None)
    maps = input_maps(names)
    for name, step in steps:
        maps = lift_step(name, step, maps)
    return PipelineParts(
        forest=adapter(final, None),
        source=np.array([column.source for column in maps], dtype=np.intp),
        n_inputs=len(names),
        preprocessing=model[:-1],
    )


def _fitted(model: Any) -> None:
    from sklearn.utils.validation import check_is_fitted

    from .._exceptions import NotFittedError

    try:
        check_is_fitted(model)
    except Exception as exc:  # scikit-learn's NotFittedError
        raise NotFittedError(
            "This Pipeline is not fitted yet; expected a fitted pipeline. Call "
            "`fit` first."
        ) from exc


@register_adapter("sklearn.Pipeline")
def _pipeline(model: Any, feature_names: Sequence[str] | None) -> Forest:
    from ._registry import adapter_of, registered

    _fitted(model)
    final_name, final = model.steps[-1]
    adapter = adapter_of(final)
    if adapter is None:
        raise UnsupportedModelError(
            f"The last step of the Pipeline, {final_name!r} "
            f"({type(final).__name__}), is not a supported tree model; expected "
            f"one of {', '.join(m for m in registered() if m != 'sklearn.Pipeline')}."
        )
    return lift_to_inputs(model, adapter(final, None), feature_names)


def lift_to_inputs(
    model: Any, inner: Forest, feature_names: Sequence[str] | None = None
) -> Forest:
    """``inner``, a Forest over the output of the pipeline's preprocessing
    (``model[:-1]``), lifted to the pipeline's input columns as
    ``to_forest(model)`` lifts the pipeline's own last step (the trees keep
    their nodes; only the split rules change).

    Raises
    ------
    UnsupportedModelError
        On a preprocessing step that cannot be lifted, or one whose output is not
        the columns ``inner`` reads.
    """
    _fitted(model)
    *steps, (final_name, _) = model.steps
    names, has_names = _input_names(model, feature_names)
    maps = input_maps(names)
    for name, step in steps:
        maps = lift_step(name, step, maps)
    if len(maps) != inner.n_features:
        raise UnsupportedModelError(
            f"The preprocessing of the Pipeline outputs {len(maps)} columns but its "
            f"last step {final_name!r} reads {inner.n_features}; expected the same."
        )
    specs = _column_specs(names, maps, len(names))
    maps = _indicators_on_categories(maps, specs)
    specs = _with_missing(specs, maps, inner)
    trees = _lift_trees(inner, maps, specs)
    missing_ok = any(spec.accepts_missing for spec in specs if not spec.dropped)
    return replace(
        inner,
        trees=trees,
        input_map=_ColumnsMap(forest=inner, trees=trees, maps=tuple(maps)),
        n_features=len(names),
        feature_names=names,
        has_feature_names=has_names,
        features=specs,
        input_dtype=np.float64,
        allow_missing=bool(missing_ok),
        arrays_hold_labels=True,  # the encoders read the values they are given
        source=f"{type(model).__module__}.{type(model).__qualname__}",
    )
