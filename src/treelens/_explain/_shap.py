"""Exact TreeSHAP values and interaction values, computed on the Forest.

:func:`shap_values` and :func:`shap_interaction_values` explain every model that
:func:`treelens.to_forest` reads, from its normalized arrays only: the same
routing rules as the model (thresholds compared in the model's input dtype,
missing values sent the way each split sends them), with exact arithmetic (no
sampling), vectorized over rows and leaves.  See
:mod:`treelens._explain._shap_kernels` for the formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._adapters._pipeline import PipelineParts, pipeline_parts
from .._core._chunks import (
    DEFAULT_MEMORY_BUDGET,
    iter_chunks,
    n_rows,
    rows_per_chunk,
    run_in_chunks,
)
from .._core._features import decode, has_labels, series_as_row
from .._core._forest import Forest
from .._core._validation import check_X, column_names
from .._exceptions import BackgroundError, InputError, OutputTooLargeError
from .._types import ArrayLike, Chunks, ModelLike
from ._shap_kernels import (
    background_groups,
    background_patterns,
    interventional_table,
    interventional_terms,
    path_interactions,
    path_table,
    path_terms,
    table_terms,
)
from ._shap_leaves import LeafBucket, expected_value, forest_leaves

__all__ = [
    "ShapResult",
    "concat_shap_results",
    "shap_interaction_values",
    "shap_values",
]

Method = Literal["path", "interventional"]
_METHODS = ("path", "interventional")

#: Float cells of the arrays of one kernel call (a few megabytes, so that
#: they stay near the caches).
_CELLS = 1 << 19
#: Rows of one kernel call: the leaves of a block are prepared once for all
#: the rows of a chunk, then explained this many rows at a time.
_SUB_ROWS = 128
#: Rows explained at once (the leaves of a bucket are then cut in blocks).
_MAX_CHUNK_ROWS = 2048
#: Leaves whose paths are extracted at once (a group of trees).
_GROUP_LEAVES = 1 << 16
#: Forests with at most this many leaves keep every group between chunks.
_CACHE_LEAVES = 1 << 18
#: Largest table of interventional terms, in float cells per bucket block.
_TABLE_CELLS = 1 << 24


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ShapResult:
    """SHAP values (or interaction values) of some rows.

    Attributes
    ----------
    values_ : ndarray
        ``(n_rows, n_features)`` for a regressor or a model explained in one
        raw margin (binary boosting); ``(n_rows, n_features, n_outputs)`` for
        several outputs: the classes of multiclass models and both class
        probabilities of a binary forest or tree classifier (the two slices are
        opposite).  Interaction values have one more feature axis:
        ``(n_rows, n_features, n_features[, n_outputs])``, each row's matrix
        symmetric and summing over its last feature axis to the SHAP values.
    expected_value_ : float or ndarray of shape (n_outputs,)
        The explained output averaged over the training cover (``"path"``) or
        the background (``"interventional"``):
        ``expected_value_ + values_.sum(axis=1)`` is the model's output.
    feature_names : tuple of str
    output_names : tuple of str or None
        Class labels of the outputs, or None for one output.
    output : {"probability", "raw", "value"}
        What is explained: class probabilities (forests and trees of
        classifiers), raw scores before the link (boosting), or predicted values
        (regression).
    method : {"path", "interventional"}
    interactions : bool
        Whether ``values_`` are interaction values.
    index : pandas.Index
        Row labels (those of the DataFrame given, else a range).

    See Also
    --------
    treelens.shap_values, treelens.shap_interaction_values

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import treelens
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> result = treelens.shap_values(model, X.iloc[:2])
    >>> result.values_.shape, result.output_names
    ((2, 4, 3), ('0', '1', '2'))
    >>> list(result.frame(output=2).columns)[:2]
    ['sepal length (cm)', 'sepal width (cm)']
    """

    values_: NDArray[np.float64]
    expected_value_: float | NDArray[np.float64]
    feature_names: tuple[str, ...]
    output_names: tuple[str, ...] | None
    output: str
    method: str
    interactions: bool = False
    index: pd.Index

    @property
    def n_outputs(self) -> int:
        """Number of explained outputs."""
        return 1 if self.output_names is None else len(self.output_names)

    def frame(self, output: Any = None) -> pd.DataFrame:
        """The SHAP values of one output as a DataFrame, one column per feature.

        Parameters
        ----------
        output : class label or int, optional
            Which output (required when there are several): one of
            ``output_names`` or its position.

        Returns
        -------
        frame : pandas.DataFrame of shape (n_rows, n_features)
            Indexed like the rows explained.  For interaction values, the
            diagonal (main effects) is given.
        """
        values = self.values_
        if self.interactions:
            values = np.diagonal(values, axis1=1, axis2=2)
            if values.ndim == 3:  # (rows, outputs, features) after diagonal
                values = values.transpose(0, 2, 1)
        if self.output_names is not None:
            values = values[:, :, self._output_position(output)]
        elif output is not None:
            raise InputError(
                f"This result has one output; `output` must be None, got {output!r}."
            )
        return pd.DataFrame(values, index=self.index, columns=list(self.feature_names))

    def _output_position(self, output: Any) -> int:
        names = self.output_names or ()
        if output is None:
            raise InputError(
                f"This result has {len(names)} outputs; give `output`, one of "
                f"{list(names)}."
            )
        if output in names:
            return names.index(output)
        if str(output) in names:
            return names.index(str(output))
        if isinstance(output, (int, np.integer)) and 0 <= output < len(names):
            return int(output)
        raise InputError(
            f"`output` must be one of {list(names)} (or a position); got {output!r}."
        )

    def to_frame(self) -> pd.DataFrame:
        """Every value in long form.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``row``, ``output`` (several outputs only), ``feature``
            (and ``other_feature`` for interaction values) and ``value``.
        """
        names = list(self.feature_names)
        values = self.values_
        if self.output_names is None:
            values = values[..., None]
        axes: dict[str, Any] = {"row": np.asarray(self.index)}
        axes["feature"] = names
        if self.interactions:
            axes["other_feature"] = names
        axes["output"] = list(self.output_names or [None])
        grids = np.meshgrid(*[np.arange(len(v)) for v in axes.values()], indexing="ij")
        columns = {
            key: np.asarray(v, dtype=object)[g.reshape(-1)]
            for (key, v), g in zip(axes.items(), grids)
        }
        columns["row"] = np.asarray(axes["row"])[grids[0].reshape(-1)]
        frame = pd.DataFrame(columns)
        frame["value"] = values.reshape(-1)
        if self.output_names is None:
            frame = frame.drop(columns="output")
        return frame

    def __repr__(self) -> str:
        kind = "interaction values" if self.interactions else "SHAP values"
        return (
            f"{type(self).__name__}({kind}, method={self.method!r}, "
            f"output={self.output!r}, shape={self.values_.shape})"
        )


# ------------------------------------------------------------------ engine
def _split(bucket: LeafBucket, size: int) -> list[LeafBucket]:
    """The bucket cut in blocks of at most ``size`` leaves."""
    if bucket.n_leaves <= size:
        return [bucket]
    out = []
    for start in range(0, bucket.n_leaves, size):
        part = slice(start, start + size)
        out.append(
            LeafBucket(
                d=bucket.d,
                leaf=bucket.leaf[part],
                feature=bucket.feature[part],
                lo=bucket.lo[part],
                hi=bucket.hi[part],
                nan_ok=bucket.nan_ok[part],
                z=bucket.z[part],
                value=bucket.value[part],
                allowed=None if bucket.allowed is None else bucket.allowed[part],
                n_categories=None
                if bucket.n_categories is None
                else bucket.n_categories[part],
            )
        )
    return out


class _Block:
    """One block of leaves and how its terms are computed."""

    def __init__(self, bucket: LeafBucket) -> None:
        self.bucket = bucket
        self.table: NDArray[np.float64] | None = None
        self.groups: tuple[NDArray[np.intp], NDArray[np.float64]] | None = None


class _Engine:
    """Everything row-independent for a forest and a method, built per group of
    trees (of at most ``_GROUP_LEAVES`` leaves) and kept when the forest is
    small enough (``_CACHE_LEAVES``), so that deep forests never hold every
    leaf's path at once."""

    def __init__(
        self,
        forest: Forest,
        method: str,
        background: NDArray[Any] | None,
        *,
        chunk_rows: int,
        expected_rows: int | None,
        interactions: bool,
    ) -> None:
        self.forest = forest
        self.method = method
        self.interactions = interactions
        self.background = background
        self.n_background = 0 if background is None else background.shape[0]
        self.chunk_rows = chunk_rows
        self.expected_rows = expected_rows
        self.n_features = forest.n_features
        self.n_outputs = forest.n_outputs
        self.expected = expected_value(forest, background)
        n_leaves = np.array([t.n_leaves for t in forest.trees], dtype=np.intp)
        self.groups: list[tuple[int, int]] = []
        start, total = 0, 0
        for j, count in enumerate(n_leaves):
            if total and total + count > _GROUP_LEAVES:
                self.groups.append((start, j))
                start, total = j, 0
            total += int(count)
        self.groups.append((start, forest.n_trees))
        self.cache: dict[int, list[_Block]] | None = (
            {} if int(n_leaves.sum()) <= _CACHE_LEAVES else None
        )

    def blocks(self, group: int) -> list[_Block]:
        """The blocks of leaves of one group of trees, prepared for the method."""
        if self.cache is not None and group in self.cache:
            return self.cache[group]
        start, stop = self.groups[group]
        leaves = forest_leaves(
            self.forest, need_cover=self.method == "path", start=start, stop=stop
        )
        blocks = []
        for bucket in leaves.buckets:
            d = bucket.d
            q = (d + 1) // 2
            rows = min(self.chunk_rows, _SUB_ROWS)
            if self.interactions:
                per_leaf = rows * d * (d + q)
            else:
                per_leaf = rows * (d + q) * 2
            size = max(1, _CELLS // max(1, per_leaf))
            for part in _split(bucket, size):
                block = _Block(part)
                if self.method == "interventional":
                    self._prepare_background(block)
                elif not self.interactions and self._path_table_pays(part):
                    block.table = path_table(part)
                blocks.append(block)
        if self.cache is not None:
            self.cache[group] = blocks
        return blocks

    def _all_blocks(self) -> Any:
        for group in range(len(self.groups)):
            yield from self.blocks(group)

    def _path_table_pays(self, bucket: LeafBucket) -> bool:
        rows = self.expected_rows if self.expected_rows is not None else 0
        return 2 ** (bucket.d + 1) <= rows and 2**bucket.d * bucket.d <= 4096

    def _prepare_background(self, block: _Block) -> None:
        assert self.background is not None
        bucket = block.bucket
        patterns = background_patterns(bucket, np.ascontiguousarray(self.background.T))
        groups = background_groups(patterns)
        # A table of the 2**d patterns costs about 3 (d + 1) 2**d per leaf once;
        # the background patterns cost (distinct patterns) d per leaf and row.
        size = 2**bucket.d
        rows = self.expected_rows if self.expected_rows is not None else 2**30
        table_cost = 3 * (bucket.d + 1) * size
        pattern_cost = rows * groups[0].shape[1] * bucket.d
        if size * bucket.d * bucket.n_leaves <= _TABLE_CELLS and (
            table_cost <= pattern_cost
        ):
            block.table = interventional_table(bucket, patterns, self.n_background)
        else:
            block.groups = groups

    def terms(self, block: _Block, Xt: NDArray[Any]) -> NDArray[np.float64]:
        """Terms of one block for the rows of ``Xt`` (n_features, n_rows):
        shape (n_leaves, d, n_rows)."""
        o = block.bucket.pattern(Xt)
        if block.table is not None:
            return table_terms(block.table, o)
        if block.groups is not None:
            distinct, counts = block.groups
            # (leaves, patterns, rows) arrays: cut the rows further.
            per_row = o.shape[0] * distinct.shape[1] * 4
            rows = max(1, _CELLS // max(1, per_row))
            return np.concatenate(
                [
                    interventional_terms(
                        block.bucket,
                        o[:, :, i : i + rows],
                        distinct,
                        counts,
                        self.n_background,
                    )
                    for i in range(0, o.shape[2], rows)
                ],
                axis=2,
            )
        return path_terms(block.bucket, o)

    def values(self, X: NDArray[Any]) -> NDArray[np.float64]:
        """SHAP values of the rows of ``X``: (n_rows, n_features, n_outputs)."""
        n = X.shape[0]
        Xt = np.ascontiguousarray(X.T)
        parts = [
            (np.ascontiguousarray(Xt[:, i : i + _SUB_ROWS]), slice(i, i + _SUB_ROWS))
            for i in range(0, n, _SUB_ROWS)
        ]
        out = np.zeros((self.n_outputs, self.n_features, n))
        for block in self._all_blocks():
            for part, rows in parts:
                block.bucket.add_to(out[:, :, rows], self.terms(block, part))
        return out.transpose(2, 1, 0)

    def interaction_values(self, X: NDArray[Any]) -> NDArray[np.float64]:
        """Interaction values: (n_rows, n_features, n_features, n_outputs)."""
        n, n_features = X.shape[0], self.n_features
        Xt = np.ascontiguousarray(X.T)
        n_out = self.n_outputs
        pairs: NDArray[np.float64] = np.zeros((n_out, n_features * n_features, n))
        for block in self._all_blocks():
            bucket = block.bucket
            terms = path_interactions(bucket, bucket.pattern(Xt)).reshape(-1, n)
            for k, scatter in enumerate(_pair_scatter(bucket, n_features)):
                if scatter.nnz:
                    pairs[k] += scatter @ terms
        pairs = pairs.reshape(n_out, n_features, n_features, n).transpose(3, 1, 2, 0)
        values = self.values(X)
        diagonal = values - pairs.sum(axis=2)
        idx = np.arange(n_features)
        pairs[:, idx, idx, :] = diagonal
        return pairs


def _pair_scatter(bucket: LeafBucket, n_features: int) -> list[Any]:
    from scipy import sparse

    cache = bucket.__dict__.setdefault("_pair_scatter_cache", {})
    if n_features not in cache:
        n, d = bucket.feature.shape
        f = bucket.feature
        rows = (f[:, :, None] * n_features + f[:, None, :]).reshape(-1)
        columns = np.arange(n * d * d)
        out = []
        for k in range(bucket.value.shape[1]):
            weights = np.repeat(bucket.value[:, k], d * d)
            keep = weights != 0
            out.append(
                sparse.csr_matrix(
                    (weights[keep], (rows[keep], columns[keep])),
                    shape=(n_features * n_features, n * d * d),
                )
            )
        cache[n_features] = out
    return cache[n_features]


# -------------------------------------------------------------- validation
def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in _METHODS:
        raise InputError(f"`method` must be one of {list(_METHODS)}; got {method!r}.")
    return method


def _check_background(
    forest: Forest, method: str, background: Any
) -> NDArray[Any] | None:
    if method == "path":
        if background is not None:
            raise BackgroundError(
                "`background` is used by method='interventional' only; the "
                "path-dependent method weighs branches by the training cover. "
                "Expected background=None with method='path'."
            )
        return None
    if background is None:
        raise BackgroundError(
            "method='interventional' needs a `background` dataset (for example "
            "100 training rows); got None."
        )
    try:
        array = check_X(forest, background)
    except InputError as exc:
        raise BackgroundError(f"The background does not fit the model: {exc}") from exc
    if array.shape[0] < 1:
        raise BackgroundError("The background must have at least 1 row; got 0 rows.")
    return array


def _output_kind(forest: Forest) -> tuple[str, tuple[str, ...] | None]:
    if forest.kind == "boosting":
        output = "raw"
    else:
        output = "probability" if forest.is_classifier else "value"
    if forest.n_outputs == 1:
        return output, None
    classes = forest.classes_
    if classes is not None and len(classes) == forest.n_outputs:
        return output, tuple(str(c) for c in classes)
    return output, tuple(str(k) for k in range(forest.n_outputs))


def _check_rows(forest: Forest, X: Any) -> NDArray[Any]:
    array = check_X(forest, X)
    if array.shape[0] == 0:
        raise InputError(
            f"X must have at least one row to explain; got shape {array.shape}."
        )
    return array


def _transformed(
    parts: PipelineParts, forest: Forest, X: Any, codes: NDArray[Any]
) -> NDArray[Any]:
    """The final model's input for a pipeline's rows ``X`` (validated as
    ``codes``): labels (a DataFrame, or an object array in the model's column
    order) go through the preprocessing as they are, codes are first decoded to
    the labels they stand for."""
    X = series_as_row(X)
    frame: Any
    if column_names(X) is not None:
        frame = X
    elif has_labels(X):
        # Decoding the codes instead would turn a label the encoders never saw
        # (the unknown code) into a missing value, which they encode otherwise.
        frame = np.asarray(X, dtype=object).reshape(codes.shape)
        if forest.has_feature_names:
            names = list(forest.feature_names)
            frame = pd.DataFrame(frame, columns=names).infer_objects()
    else:
        frame = decode(forest, codes)
        # The numbers the encoders read as labels stay as given (for the same
        # reason); the other categorical columns of an array hold codes.
        given = np.asarray(X, dtype=np.float64).reshape(codes.shape)
        for j in forest.label_columns:
            frame[frame.columns[j]] = given[:, j]
        if not forest.has_feature_names:
            frame = frame.to_numpy(dtype=object)
    return parts.transform(frame).astype(parts.forest.input_dtype)


def _per_input_column(
    parts: PipelineParts, values: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Values of the transformed columns summed per input column of the
    pipeline (both feature axes of interaction values)."""
    groups = parts.groups()
    if values.ndim == 4:
        return np.einsum("ijlk,jf,lg->ifgk", values, groups, groups)
    return np.einsum("ijk,jf->ifk", values, groups)


def _row_index(X: Any, n: int) -> pd.Index:
    index = getattr(X, "index", None)
    if column_names(X) is not None and index is not None and len(index) == n:
        return pd.Index(index)
    return pd.RangeIndex(n)


def _compute(
    model: Any,
    X: Any,
    *,
    method: Any,
    background: Any,
    interactions: bool,
    memory_budget: float | None,
    progress: bool,
) -> ShapResult:
    forest = to_forest(model)
    # A pipeline is explained as its final model on the transformed columns,
    # then summed per input column (see shap_values).
    parts = pipeline_parts(model)
    inner = forest if parts is None else parts.forest
    method = _check_method(method)
    if interactions and method != "path":
        raise InputError(
            "Interaction values are computed path-dependent only; expected "
            f"method='path', got {method!r}."
        )
    bg = _check_background(forest, method, background)
    if parts is not None and bg is not None:
        bg = _transformed(parts, forest, background, bg)
    output, output_names = _output_kind(forest)
    n_out, n_features = inner.n_outputs, inner.n_features
    total = n_rows(X)
    per_row = 8.0 * n_features * n_out * (3 + (2 * n_features if interactions else 0))
    if interactions and total is not None and memory_budget is not None:
        size = 8.0 * total * n_features * n_features * n_out
        if size > memory_budget:
            raise OutputTooLargeError(
                f"Interaction values of {total} rows x {n_features}^2 features x "
                f"{n_out} outputs take {size / 2**20:.1f} MiB, more than the "
                f"memory budget of {memory_budget / 2**20:.1f} MiB; expected "
                "fewer rows (or a larger `memory_budget`)."
            )
    chunk = min(
        _MAX_CHUNK_ROWS,
        rows_per_chunk(memory_budget, per_row, what="the SHAP values of one row"),
    )
    engine = _Engine(
        inner,
        method,
        bg,
        chunk_rows=min(chunk, total or chunk),
        expected_rows=total,
        interactions=interactions,
    )
    indexes: list[pd.Index] = []

    def explain(part: Any) -> NDArray[np.float64]:
        array = _check_rows(forest, part)
        indexes.append(_row_index(part, array.shape[0]))
        if parts is not None:
            array = _transformed(parts, forest, part, array)
        values = (
            engine.interaction_values(array) if interactions else engine.values(array)
        )
        return values if parts is None else _per_input_column(parts, values)

    def combine(parts: list[NDArray[np.float64]]) -> NDArray[np.float64]:
        if not parts:
            raise InputError("X must have at least one row to explain; got none.")
        return np.concatenate(parts)

    values = run_in_chunks(
        explain,
        iter_chunks(X, chunk),
        combine=combine,
        progress=progress,
        total=total,
        description="SHAP values",
    )
    if len(indexes) == 1:
        index = indexes[0]
    elif all(isinstance(i, pd.RangeIndex) for i in indexes):
        index = pd.RangeIndex(values.shape[0])
    else:
        index = pd.Index(np.concatenate([np.asarray(i) for i in indexes]))
    expected: float | NDArray[np.float64] = np.asarray(engine.expected, dtype=float)
    if output_names is None:
        values = values[..., 0]
        expected = float(np.asarray(expected)[0])
    return ShapResult(
        values_=values,
        expected_value_=expected,
        feature_names=tuple(forest.feature_names),
        output_names=output_names,
        output=output,
        method=method,
        interactions=interactions,
        index=index,
    )


def shap_values(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    method: Method = "path",
    background: ArrayLike | None = None,
    memory_budget: float | None = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
) -> ShapResult:
    r"""Exact SHAP values of every row of ``X`` (TreeSHAP).

    Parameters
    ----------
    model : fitted tree model or Forest
        Any model :func:`treelens.to_forest` reads.
    X : array-like of shape (n_rows, n_features), or an iterable of chunks
        Rows to explain; a DataFrame is matched to the model's features by name.
        An iterable of arrays or DataFrames is explained chunk by chunk.
    method : {"path", "interventional"}, default="path"
        ``"path"``: path-dependent TreeSHAP, the expectation of the model given
        the known features under the training cover of each split (as shap's
        ``feature_perturbation="tree_path_dependent"``).  ``"interventional"``:
        the mean, over the ``background`` rows, of the Shapley values of the
        game where unknown features take the background row's values (as
        shap's ``feature_perturbation="interventional"``), computed exactly
        from per-leaf background statistics.
    background : array-like of shape (n_background, n_features), optional
        Background rows; required by ``"interventional"``, refused by ``"path"``.
    memory_budget : int or None, default=2**30
        Bytes one chunk of rows may take.
    progress : bool, default=False
        Show a progress bar over the rows.

    Returns
    -------
    ShapResult
        ``values_`` of shape ``(n_rows, n_features)`` for regressors and binary
        boosting (one raw margin), ``(n_rows, n_features, n_outputs)`` for
        multiclass models and for classifier forests and trees (class
        probabilities; a binary one gives both classes).  Explained outputs:
        probabilities for forests and trees of classifiers, raw scores for
        boosting, values for regressors.
        ``expected_value_ + values_.sum(axis=1)`` equals that output.

    Raises
    ------
    InputError
        If ``X`` does not match the model or ``method`` is unknown.
    BackgroundError
        If the background is missing, has other columns or no rows.

    See Also
    --------
    shap_interaction_values : pairwise interaction values.

    Notes
    -----
    Path-dependent values weigh each branch by the cover the library's own
    TreeSHAP uses: sample counts for LightGBM and HistGradientBoosting, hessian
    sums for XGBoost, weighted sample counts for scikit-learn.

    A scikit-learn ``Pipeline`` takes its raw rows (a DataFrame of labels,
    booleans, missing values) and is explained in its input columns: TreeSHAP
    runs on the final model over ``pipeline[:-1].transform(X)`` (the values
    shap gives ``pipeline[-1]``), and the values of the columns a step derives
    from one input column (its one-hot columns) are summed into that column,
    ``phi[employment] = sum of phi[employment_*]``; interaction values are
    summed over both axes.  The sum keeps additivity (``expected_value_ +
    values_.sum(axis=1)`` is the output); columns the pipeline drops get 0.  The
    lifted Forest of a pipeline (``to_forest(pipeline)``) given instead
    explains the game of the input columns themselves, one player per column.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> import treelens
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> result = treelens.shap_values(model, X.iloc[:3])
    >>> result.values_.shape
    (3, 10)
    >>> bool(abs(result.expected_value_ + result.values_.sum(axis=1)
    ...          - model.predict(X.iloc[:3])).max() < 1e-9)
    True
    """
    return _compute(
        model,
        X,
        method=method,
        background=background,
        interactions=False,
        memory_budget=memory_budget,
        progress=progress,
    )


def shap_interaction_values(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    memory_budget: float | None = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
) -> ShapResult:
    r"""Exact path-dependent SHAP interaction values of every row of ``X``.

    The Shapley interaction index of each pair of features (as shap's
    ``shap_interaction_values``): off the diagonal, half the pair's
    interaction; on it, the SHAP value minus the row's interactions.

    Parameters
    ----------
    model : fitted tree model or Forest
    X : array-like of shape (n_rows, n_features), or an iterable of chunks
    memory_budget : int or None, default=2**30
        Bytes the result and one chunk may take; interaction values of more
        rows than fit are refused (the message says how large they would be).
    progress : bool, default=False

    Returns
    -------
    ShapResult
        ``values_`` of shape ``(n_rows, n_features, n_features)``, or
        ``(n_rows, n_features, n_features, n_outputs)`` for several outputs;
        ``values_.sum(axis=2)`` are the SHAP values.

    Raises
    ------
    OutputTooLargeError
        If the interaction values would exceed ``memory_budget``.

    See Also
    --------
    shap_values

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> import treelens
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> result = treelens.shap_interaction_values(model, X[:2])
    >>> result.values_.shape
    (2, 10, 10)
    """
    return _compute(
        model,
        X,
        method="path",
        background=None,
        interactions=True,
        memory_budget=memory_budget,
        progress=progress,
    )


def concat_shap_results(results: list[ShapResult]) -> ShapResult:
    """One result from the results of consecutive blocks of rows (the blocks of
    one model, method and background: their expected values are equal)."""
    first = results[0]
    indexes = [r.index for r in results]
    if all(isinstance(i, pd.RangeIndex) for i in indexes):
        index: pd.Index = pd.RangeIndex(sum(len(i) for i in indexes))
    else:
        index = pd.Index(np.concatenate([np.asarray(i) for i in indexes]))
    return ShapResult(
        values_=np.concatenate([r.values_ for r in results]),
        expected_value_=first.expected_value_,
        feature_names=first.feature_names,
        output_names=first.output_names,
        output=first.output,
        method=first.method,
        interactions=first.interactions,
        index=index,
    )
