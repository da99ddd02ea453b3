"""treelens on Dask collections: counterfactuals and node statistics at scale.

The functions here take a ``dask.dataframe.DataFrame`` or a 2-D ``dask.array``
and run on whatever Dask scheduler is active: the threaded or process scheduler
of plain ``dask``, or a ``distributed.Client`` connected to a cluster (see
:func:`connect`).  Results equal those of the single-machine functions row for
row:

- counterfactuals (:func:`feature_tweak`, :func:`optimal_counterfactual`) are
  computed per partition; the model is shipped once to each worker
  (``Client.scatter(..., broadcast=True)`` under distributed, one shared graph key
  otherwise), not once per task;
- node statistics (:func:`node_statistics`, :func:`mdi_importance`) are computed
  per partition as additive per-node sums, added exactly in a tree reduction,
  and turned into statistics once: held-out MDI over a Dask dataset is the
  single-machine result.

dask and distributed are the ``treelens[dask]`` extra; they are imported only when
these functions run.

Examples
--------
>>> import dask.dataframe as dd, pandas as pd
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> import treelens.dask
>>> X, y = load_iris(return_X_y=True, as_frame=True)
>>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
>>> stats = treelens.dask.node_statistics(
...     model, dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3))
>>> int(stats.n_node_samples_[0][0])  # every row reaches the root
150
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._adapters import to_forest
from ._core._forest import Forest
from ._counterfactual._entry import counterfactual as _entry_single
from ._counterfactual._optimal import optimal_counterfactual as _optimal_single
from ._counterfactual._problem import CounterfactualResult
from ._counterfactual._tweak import feature_tweak as _tweak_single
from ._exceptions import InputError, SchedulerUnreachableError
from ._explain._shap import ShapResult
from ._explain._shap import shap_values as _shap_single
from ._importance._mdi import MDIImportance
from ._importance._node_statistics import NodeStatistics
from ._importance._node_sums import NodeSums
from ._io._cluster import connect, local_cluster
from ._types import ArrayLike, ModelLike, TargetLike

if TYPE_CHECKING:
    import dask.dataframe as dd

__all__ = [
    "SchedulerUnreachableError",
    "connect",
    "counterfactual",
    "counterfactual_frame",
    "feature_tweak",
    "local_cluster",
    "mdi_importance",
    "node_statistics",
    "optimal_counterfactual",
    "shap_values",
]


# ------------------------------------------------------------- schedulers
def _active_client() -> Any:
    try:
        from distributed import get_client
    except ImportError:  # pragma: no cover - distributed is part of the extra
        return None
    try:
        return get_client()
    except ValueError:
        return None


def ship(obj: Any, scheduler: Any = None) -> Any:
    """A reference to ``obj`` that tasks share, so it travels once per worker.

    Under a distributed client (and no other ``scheduler`` asked for) the object
    is scattered to every worker (``broadcast=True``) and a future is returned;
    otherwise it becomes one ``dask.delayed`` key that every task depends on.
    """
    client = _active_client() if scheduler is None else None
    if client is not None:
        # A list of one, so that a tuple travels as one object.
        return client.scatter([obj], broadcast=True, hash=False)[0]
    import dask

    return dask.delayed(obj, traverse=False)


# -------------------------------------------------------------- partitions
def _is_dask(X: Any, kind: Literal["DataFrame", "Series", "Array"]) -> bool:
    """Whether ``X`` is a dask DataFrame, Series or Array; dask is imported only
    for objects of its own modules."""
    if not type(X).__module__.startswith("dask"):
        return False
    if kind == "Array":
        import dask.array as da

        return isinstance(X, da.Array)
    import dask.dataframe as dd

    return isinstance(X, getattr(dd, kind))


def check_columns(forest: Forest, columns: Sequence[Any]) -> None:
    """Raise when ``columns`` are not the model's features (any order)."""
    names = [str(c) for c in columns]
    if forest.has_feature_names:
        expected = list(forest.feature_names)
        missing = [n for n in expected if n not in names]
        extra = [n for n in names if n not in expected]
        if missing or extra or len(names) != len(expected):
            raise InputError(
                "The columns of the Dask collection must be the model's features "
                f"{expected}; missing {missing}, unexpected {extra}."
            )
    elif len(names) != forest.n_features:
        raise InputError(
            f"The Dask collection has {len(names)} columns, but the model expects "
            f"{forest.n_features} features."
        )


def _feature_partitions(forest: Forest, X: Any) -> list[Any]:
    """Delayed pandas/numpy partitions of ``X`` after checking its columns."""
    if _is_dask(X, "DataFrame"):
        check_columns(forest, list(X.columns))
        if forest.has_feature_names:
            X = X[list(forest.feature_names)]
        return list(X.to_delayed())
    if _is_dask(X, "Array"):
        if X.ndim != 2:
            raise InputError(
                f"X must be a 2-D dask array of shape (n_samples, {forest.n_features}); "
                f"got {X.ndim} dimensions."
            )
        if X.shape[1] != forest.n_features:
            raise InputError(
                f"The dask array has {X.shape[1]} columns, but the model expects "
                f"{forest.n_features} features."
            )
        X = X.rechunk({1: -1})
        return list(X.to_delayed().ravel())
    raise InputError(
        "X must be a dask.dataframe.DataFrame or a 2-D dask.array; got "
        f"{type(X).__module__}.{type(X).__qualname__}."
    )


def _label_partitions(X: Any, y: Any, n_parts: int, name: str) -> list[Any] | None:
    if y is None:
        return None
    if _is_dask(y, "Series") or _is_dask(y, "DataFrame"):
        parts = list(y.to_delayed())
    elif _is_dask(y, "Array"):
        if _is_dask(X, "Array"):
            y = y.rechunk((X.chunks[0],))  # the row blocks of X
        parts = list(y.to_delayed().ravel())
    else:
        raise InputError(
            f"`{name}` must be a dask Series or dask array partitioned like X, or a "
            f"column name of X; got {type(y).__qualname__}."
        )
    if len(parts) != n_parts:
        raise InputError(
            f"`{name}` must be partitioned like X; expected {n_parts} partitions, got "
            f"{len(parts)}."
        )
    return parts


def _split_columns(X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any, Any]:
    """Take ``y`` and ``sample_weight`` given as column names out of ``X``."""
    named = {
        k: v
        for k, v in (("y", y), ("sample_weight", sample_weight))
        if isinstance(v, str)
    }
    for name, column in named.items():
        if not _is_dask(X, "DataFrame") or column not in X.columns:
            raise InputError(
                f"`{name}` names the column {column!r}, but X has no such column; "
                f"expected one of {list(getattr(X, 'columns', []))}."
            )
    if not named:
        return X, y, sample_weight
    y = X[y] if isinstance(y, str) else y
    sample_weight = (
        X[sample_weight] if isinstance(sample_weight, str) else sample_weight
    )
    return X.drop(columns=list(named.values())), y, sample_weight


def _compute(tasks: list[Any], scheduler: Any, progress: bool) -> list[Any]:
    import dask

    client = _active_client() if scheduler is None else None
    if client is not None:
        futures = client.compute(tasks)
        if progress:
            from distributed import as_completed

            from ._core._chunks import ProgressBar

            with ProgressBar(
                enabled=True, total=len(futures), description="partitions"
            ) as bar:
                for _ in as_completed(futures):
                    bar.advance(1)
        return client.gather(futures)
    if progress:
        from dask.diagnostics import ProgressBar as DaskProgressBar

        with DaskProgressBar():
            return list(dask.compute(*tasks, scheduler=scheduler))
    return list(dask.compute(*tasks, scheduler=scheduler))


def _call_part(function: Callable[..., Any], shared: Any, part: Any) -> Any:
    model, kwargs = shared
    return function(model, part, **kwargs)


def _partition_tasks(
    part_function: Callable[..., Any],
    function: Callable[..., Any],
    model: Any,
    X: Any,
    kwargs: dict[str, Any],
    scheduler: Any,
    *args: Any,
) -> tuple[Forest, list[Any]]:
    """The model as a Forest, and one delayed ``part_function(function, shared,
    partition, *args)`` per partition of ``X``, where ``shared`` holds the model
    and ``kwargs``."""
    import dask

    forest = to_forest(model)
    parts = _feature_partitions(forest, X)
    # The model and the arguments (reference data can be large) travel once.
    shared = ship((model, kwargs), scheduler)
    task = dask.delayed(part_function, pure=True)
    return forest, [task(function, shared, part, *args) for part in parts]


# ------------------------------------------------------------ counterfactuals
def _map_counterfactuals(
    function: Callable[..., Any],
    model: Any,
    X: Any,
    scheduler: Any,
    progress: bool,
    kwargs: dict[str, Any],
) -> Any:
    import dataclasses

    from ._counterfactual._streaming import concat_counterfactuals

    kwargs, inferred = _inferred_once(model, X, kwargs, scheduler)
    _, tasks = _partition_tasks(_call_part, function, model, X, kwargs, scheduler)
    result = concat_counterfactuals(_compute(tasks, scheduler, progress))
    if inferred is None:
        return result
    return dataclasses.replace(result, inferred_=inferred)


def _column_summary(forest: Forest, part: Any) -> Any:
    """A partition's column summary and what its dtypes declare, as the
    in-memory search reads them off the same rows."""
    from ._counterfactual._inference import ColumnSummary
    from ._counterfactual._problem import as_float64, declared_columns

    return ColumnSummary.of(as_float64(forest, part)), declared_columns(forest, part)


def _run_summary(forest: Forest, flags: Any, part: Any) -> Any:
    from ._counterfactual._inference import RunSummary
    from ._counterfactual._problem import as_float64

    return RunSummary.of(flags, as_float64(forest, part))


def _inferred_once(
    model: Any, X: Any, kwargs: dict[str, Any], scheduler: Any
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The searches' arguments with the constraints inferred once over the
    reference and every partition (two passes of summaries, where the
    partitions are: the values and dtypes of each, then its runs of flags),
    as one call over all rows infers them; and the inferences.  Unchanged
    (and None) without reference or inference."""
    import dask

    from ._counterfactual._inference import infer_over_blocks, resolve_infer
    from ._counterfactual._problem import reference_float64

    reference = kwargs.get("reference")
    kinds = resolve_infer(kwargs.get("infer", True))
    if reference is None or not kinds:
        return kwargs, None
    forest = to_forest(model)
    parts = _feature_partitions(forest, X)
    ref = reference_float64(forest, reference)
    columns = dask.delayed(_column_summary, pure=True)
    runs = dask.delayed(_run_summary, pure=True)
    constraints, inferred = infer_over_blocks(
        forest,
        ref,
        _compute([columns(forest, p) for p in parts], scheduler, False),
        lambda flags: _compute(
            [runs(forest, flags, p) for p in parts], scheduler, False
        ),
        kwargs.get("constraints"),
        kinds,
    )
    return {**kwargs, "constraints": constraints, "infer": False}, inferred


def feature_tweak(
    model: ModelLike,
    X: Any,
    *,
    target: TargetLike,
    scheduler: str | None = None,
    progress: bool = False,
    **kwargs: Any,
) -> CounterfactualResult:
    """:func:`treelens.feature_tweak` over a Dask collection, partition by partition.

    Parameters
    ----------
    model : fitted tree model
    X : dask.dataframe.DataFrame or dask.array of shape (n_samples, n_features)
    target, **kwargs
        As :func:`treelens.feature_tweak`.
    scheduler : str or None
        Passed to ``dask.compute`` (``"threads"``, ``"processes"``,
        ``"synchronous"``); None uses the active distributed client if any, else
        Dask's default.
    progress : bool, default=False
        Show progress over partitions.

    Returns
    -------
    CounterfactualResult
        Equal row for row to ``treelens.feature_tweak(model, X.compute(), ...)``.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> result = treelens.dask.feature_tweak(model, da.from_array(X[:4], chunks=2),
    ...                                      target=2)
    >>> result.found_.tolist(), model.predict(result.X_cf_).tolist()
    ([True, True, True, True], [2, 2, 2, 2])
    """
    return _map_counterfactuals(
        _tweak_single, model, X, scheduler, progress, {"target": target, **kwargs}
    )


def optimal_counterfactual(
    model: ModelLike,
    X: Any,
    *,
    target: TargetLike,
    scheduler: str | None = None,
    progress: bool = False,
    **kwargs: Any,
) -> CounterfactualResult:
    """:func:`treelens.optimal_counterfactual` over a Dask collection.

    Parameters and result as :func:`feature_tweak` of this module.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> result = treelens.dask.optimal_counterfactual(
    ...     model, da.from_array(X[:4], chunks=2), target=2)
    >>> result.status_.tolist(), model.predict(result.X_cf_).tolist()
    (['optimal', 'optimal', 'optimal', 'optimal'], [2, 2, 2, 2])
    """
    return _map_counterfactuals(
        _optimal_single, model, X, scheduler, progress, {"target": target, **kwargs}
    )


def counterfactual(
    model: ModelLike,
    X: Any,
    *,
    target: TargetLike,
    scheduler: str | None = None,
    progress: bool = False,
    **kwargs: Any,
) -> CounterfactualResult:
    """:func:`treelens.counterfactual` (``method="auto"`` by default) over a Dask
    collection, partition by partition.

    Parameters and result as :func:`feature_tweak` of this module; ``kwargs``
    as :func:`treelens.counterfactual` (``method``, ``cost``, ``time_limit``,
    ``n_counterfactuals``, ...).

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> result = treelens.dask.counterfactual(
    ...     model, da.from_array(X[:4], chunks=2), target=2, reference=X)
    >>> result.status_.tolist(), result.cost_name_
    (['optimal', 'optimal', 'optimal', 'optimal'], 'mad')
    >>> model.predict(result.X_cf_).tolist()
    [2, 2, 2, 2]
    """
    return _map_counterfactuals(
        _entry_single, model, X, scheduler, progress, {"target": target, **kwargs}
    )


def _frame_part(
    function: Callable[..., Any], shared: Any, part: Any, optimal: bool
) -> Any:
    import pandas as pd

    from ._counterfactual._frame import counterfactual_table

    model, kwargs = shared
    result = function(model, part, **kwargs)
    frame = counterfactual_table(result, to_forest(model), 0, optimal).drop(
        columns="row"
    )
    frame.index = (
        part.index if isinstance(part, pd.DataFrame) else pd.RangeIndex(len(frame))
    )
    return frame


def counterfactual_frame(
    model: ModelLike,
    X: Any,
    *,
    target: TargetLike,
    optimal: bool = False,
    scheduler: str | None = None,
    **kwargs: Any,
) -> dd.DataFrame:
    """Counterfactuals of every row as a lazy Dask DataFrame, one partition per
    partition of ``X``: for datasets larger than the client's memory.

    Parameters
    ----------
    model : fitted tree model
    X : dask.dataframe.DataFrame or dask.array of shape (n_samples, n_features)
    target, **kwargs
        As :func:`treelens.feature_tweak` (or
        :func:`treelens.optimal_counterfactual` with ``optimal=True``).
    optimal : bool, default=False
        Proven least-cost counterfactuals instead of feature tweaking.
    scheduler : str or None
        The scheduler the result will be computed with; None for the active
        distributed client if any (the model is then scattered to its workers).

    Returns
    -------
    dask.dataframe.DataFrame
        Indexed like ``X`` (a range per partition for a dask array), with columns
        ``found``, ``cost``, ``reason`` (and ``status``, ``gap`` when
        ``optimal``) and the counterfactual values as ``cf_<feature>`` (NaN where
        none was found).  Write it with ``.to_parquet(...)`` or compute it.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> frame = treelens.dask.counterfactual_frame(
    ...     model, da.from_array(X[:4], chunks=2), target=2)
    >>> frame.npartitions, list(frame.columns)
    (2, ['found', 'cost', 'reason', 'cf_x0', 'cf_x1', 'cf_x2', 'cf_x3'])
    >>> frame.compute()["found"].tolist()
    [True, True, True, True]
    """
    import dask.dataframe as dd
    import pandas as pd

    from ._counterfactual._frame import counterfactual_columns

    function = _optimal_single if optimal else _tweak_single
    kwargs, _ = _inferred_once(model, X, {"target": target, **kwargs}, scheduler)
    forest, tasks = _partition_tasks(
        _frame_part,
        function,
        model,
        X,
        {"target": target, **kwargs},
        scheduler,
        optimal,
    )
    dtypes = {"int": np.int64, "bool": bool, "float": float, "str": object}
    columns = counterfactual_columns(forest, optimal)
    del columns["row"]
    meta = pd.DataFrame({k: pd.Series(dtype=dtypes[v]) for k, v in columns.items()})
    return dd.from_delayed(
        tasks,
        meta=meta,
        verify_meta=False,
    )


# --------------------------------------------------------- node statistics
def _sums_part(forest: Forest, X: Any, y: Any, sample_weight: Any) -> Any:
    from ._importance._streaming import chunk_node_sums

    return chunk_node_sums(forest, X, y, sample_weight)


def _add(*parts: Any) -> Any:
    from ._importance._node_sums import sum_node_sums

    return sum_node_sums(parts)


def node_sums(
    model: ModelLike,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    scheduler: str | None = None,
    progress: bool = False,
    split_every: int = 8,
) -> NodeSums:
    """Per-node partial sums over a Dask collection, summed in a tree reduction.

    Returns
    -------
    NodeSums
    """
    import dask

    from ._importance._node_sums import check_mergeable

    forest = to_forest(model)
    if y is None:
        raise InputError("`y` is required for node statistics; got None.")
    X, y, sample_weight = _split_columns(X, y, sample_weight)
    parts = _feature_partitions(forest, X)
    y_parts = _label_partitions(X, y, len(parts), "y")
    w_parts = _label_partitions(X, sample_weight, len(parts), "sample_weight")
    check_mergeable(forest)
    assert y_parts is not None  # y is not None
    shared = ship(forest, scheduler)
    task = dask.delayed(_sums_part, pure=True)
    level = [
        task(shared, part, y_parts[i], None if w_parts is None else w_parts[i])
        for i, part in enumerate(parts)
    ]
    add = dask.delayed(_add, pure=True)
    while len(level) > 1:
        level = [
            add(*level[i : i + split_every]) for i in range(0, len(level), split_every)
        ]
    return _compute(level, scheduler, progress)[0]


def node_statistics(
    model: ModelLike,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> NodeStatistics:
    """:func:`treelens.node_statistics` over a Dask collection.

    Parameters
    ----------
    model : fitted tree model
    X : dask.dataframe.DataFrame or dask.array of shape (n_samples, n_features)
    y : dask Series, dask array, or the name of a column of X
        Partitioned like X.
    sample_weight : dask Series, dask array or column name of X, optional
    scheduler, progress
        As :func:`feature_tweak` of this module.

    Returns
    -------
    The same result as :func:`treelens.node_statistics` on the computed data.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> data = dd.from_pandas(X.assign(species=y), npartitions=3)
    >>> stats = treelens.dask.node_statistics(model, data, "species")
    >>> stats.n_node_samples_[0][:3].tolist()
    [150, 50, 100]
    """
    from ._importance._node_statistics import statistics_from_node_sums

    sums = node_sums(
        model, X, y, sample_weight=sample_weight, scheduler=scheduler, progress=progress
    )
    return statistics_from_node_sums(to_forest(model), sums)


def mdi_importance(
    model: ModelLike,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> MDIImportance:
    """Held-out MDI (:func:`treelens.mdi_importance` with ``X`` and ``y``) over a
    Dask collection; equal to the single-machine result.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens.dask
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> held_out = treelens.dask.mdi_importance(
    ...     model, da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    >>> held_out.importances_.equals(treelens.mdi_importance(model, X, y).importances_)
    True
    """
    from ._importance._mdi import mdi_from_sums

    sums = node_sums(
        model, X, y, sample_weight=sample_weight, scheduler=scheduler, progress=progress
    )
    return mdi_from_sums(to_forest(model), sums)


# ------------------------------------------------------------- SHAP values
def shap_values(
    model: ModelLike,
    X: Any,
    *,
    method: Literal["path", "interventional"] = "path",
    background: ArrayLike | None = None,
    memory_budget: float | None = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> ShapResult:
    """:func:`treelens.shap_values` of a Dask collection, one task per partition.

    The model and the background travel once to each worker; the values of the
    partitions are concatenated in order.

    Parameters
    ----------
    model : fitted tree model or Forest
    X : dask.dataframe.DataFrame or dask.array of shape (n_samples, n_features)
    method, background, memory_budget
        As :func:`treelens.shap_values` (``memory_budget`` None: its default).
    scheduler, progress
        As :func:`feature_tweak` of this module.

    Returns
    -------
    ShapResult
        Equal to the single-machine result on the computed rows.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> import treelens.dask
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = DecisionTreeRegressor(max_depth=3).fit(X, y)
    >>> result = treelens.dask.shap_values(model, da.from_array(X, chunks=(100, 10)))
    >>> result.values_.shape
    (442, 10)
    """
    from ._explain._shap import concat_shap_results

    kwargs: dict[str, Any] = {"method": method, "background": background}
    if memory_budget is not None:
        kwargs["memory_budget"] = memory_budget
    _, tasks = _partition_tasks(_call_part, _shap_single, model, X, kwargs, scheduler)
    return concat_shap_results(list(_compute(tasks, scheduler, progress)))
