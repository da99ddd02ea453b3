"""Plausible counterfactuals: a bound on an IsolationForest's anomaly score.

scikit-learn's :class:`~sklearn.ensemble.IsolationForest` scores a point ``x`` by
the path lengths of the leaves it reaches (Liu et al., 2008): in tree ``t`` the
leaf's depth (the root at 0) plus ``c(n)``, the average path length of an
unsuccessful search in a binary search tree of the ``n`` training rows the leaf
held (``c(1) = 0``, ``c(2) = 1``, ``c(n) = 2 (ln(n - 1) + gamma) - 2 (n - 1) / n``),
and

    anomaly(x) = 2 ** (-sum_t h_t(x) / (n_trees * c(max_samples))),

which is ``-score_samples(x)`` (in ``(0, 1]``, larger is more anomalous; the
forest calls a point an outlier when it exceeds ``-offset_``).  So
``anomaly(x) <= m`` is a linear condition on the leaves reached,

    sum_t h_t(x) >= -n_trees * c(max_samples) * log2(m),

and the exact search encodes the IsolationForest as further trees of its program
(their leaves' ``y`` columns and this one row), as OCEAN does (Parmentier and
Vidal, ICML 2021).  Every answer is confirmed with the IsolationForest's own
``score_samples``.

The isolation trees are written in the model's columns.  ``isolation_forest``
is one of

- a plain IsolationForest fitted with feature names: it reads each of its
  columns by name, in its own order (the source scores a counterfactual laid
  out so); they may be any of the model's columns, and the others are not
  bound by it;
- a plain IsolationForest fitted without names (or beside a model without
  any): it reads the model's columns by position, as the array the model
  itself reads;
- a Pipeline ending in an IsolationForest, whose preprocessing is lifted to
  the input columns as the model's own pipeline is
  (:func:`~treelens._adapters._pipeline.lift_to_inputs`): one-hot and ordinal
  columns become category-set splits, scaled thresholds go back to raw units.

A plain IsolationForest reads a categorical column by its labels, which must
be numbers (a model fitted on numbers: HistGradientBoosting, LightGBM,
XGBoost, a Pipeline's encoders fitted on an array); its splits on their
values become category-set splits on the codes.

So, like the model's, its nodes on the columns an assignment of categories
fixes are constant (see :mod:`treelens._counterfactual._categorical`).  A
column the model does not read by value (one its pipeline drops, or one whose
missingness alone it reads) has no value the search could hold: an
IsolationForest splitting it is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters._isolation import average_path_length, isolation_trees, path_lengths
from .._core._features import category_codes, label_numbers
from .._core._float64 import float64_forest, float64_tree
from .._core._forest import Forest, Tree
from .._exceptions import InputError, NotFittedError

__all__ = [
    "IsolationBound",
    "combined_forest",
    "reads_categories",
    "resolve_isolation",
]

# The path-length row asks this much more (relative) than the bound needs, so
# that float rounding in the IsolationForest's own sum cannot tip a point that
# sits on the bound: points within it of the bound count as outside.
_RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class IsolationBound:
    """A fitted IsolationForest as trees over the model's features, and a bound.

    Attributes
    ----------
    source : IsolationForest
        The estimator given (its ``score_samples`` confirms every answer).
    trees : tuple of Tree
        Its trees, split features mapped to the model's columns.
    path : tuple of ndarray
        Per tree, per node: depth plus ``c(n_node_samples)`` (meaningful at leaves).
    max_score : float
        Largest anomaly score (``-score_samples``) a counterfactual may have.
    min_path : float
        Least sum of the path lengths that meets it (with a relative tolerance).
    to_input : callable
        The source's input for rows of the model's columns (codes).
    input_dtype : dtype
        The dtype its thresholds compare in: float32 for an IsolationForest's
        own trees, float64 for trees lifted through a pipeline (raw units).
    by_label : tuple of int
        The categorical columns its trees split by the value of their labels
        (a plain IsolationForest, by name or by position).  A number that is
        none of the labels has no code of its own there, so rows holding one
        in these columns are refused.
    """

    source: Any
    trees: tuple[Tree, ...]
    path: tuple[NDArray[np.float64], ...]
    max_score: float
    min_path: float
    to_input: Callable[[NDArray[np.float64]], Any]
    input_dtype: Any = np.float32
    by_label: tuple[int, ...] = ()

    def scores(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Anomaly score of each row of ``X``: ``-score_samples`` of the source."""
        if not len(X):
            return np.zeros(0)
        rows = self.to_input(np.asarray(X, dtype=np.float64))
        return -np.asarray(self.source.score_samples(rows), dtype=np.float64)

    def meets(self, X: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each row of ``X`` meets the bound, by the source's own score."""
        return self.scores(X) <= self.max_score


def resolve_isolation(
    forest: Forest, isolation_forest: Any, max_anomaly_score: Any
) -> IsolationBound | None:
    """Check the plausibility options and build the bound (None without one).

    ``isolation_forest`` may also be a bound already resolved (the searches over
    fixed categories pass one on), returned as it is.

    Raises
    ------
    InputError
        On an estimator that is not an IsolationForest (or a Pipeline ending in
        one), one fitted on other columns, or a bound that is not a number in
        ``(0, 1]``.
    NotFittedError
        On an IsolationForest that is not fitted.
    """
    if isinstance(isolation_forest, IsolationBound):
        return isolation_forest
    if isolation_forest is None:
        if max_anomaly_score is not None:
            raise InputError(
                "`max_anomaly_score` bounds the score of an `isolation_forest`; "
                f"expected one too, got max_anomaly_score={max_anomaly_score!r} "
                "and isolation_forest=None."
            )
        return None
    given = isolation_forest
    isolation_forest = _final_step(given)
    if not hasattr(isolation_forest, "estimators_"):
        raise NotFittedError(
            "`isolation_forest` is not fitted; expected an IsolationForest fitted "
            "on the model's columns (call fit on reference data first)."
        )
    by_label: tuple[int, ...] = ()
    if isolation_forest is not given:  # a Pipeline ending in an IsolationForest
        trees, path, to_input = _lifted(forest, given, isolation_forest)
        dtype: Any = np.float64
    else:
        columns = _columns_of(forest, isolation_forest)
        trees, path = _trees(forest, isolation_forest, columns)
        by_name = _by_name(forest, isolation_forest)
        trees, by_label = _split_by_value(forest, trees, by_name=by_name)
        to_input, dtype = _plain_input(forest, isolation_forest, columns), np.float32
    offset = float(isolation_forest.offset_)
    bound = -offset if max_anomaly_score is None else max_anomaly_score
    if (
        isinstance(bound, bool)
        or not isinstance(bound, (int, float, np.integer, np.floating))
        or not np.isfinite(bound)
        or not 0 < bound <= 1
    ):
        raise InputError(
            "`max_anomaly_score` must be a finite number in (0, 1] (the "
            "IsolationForest's anomaly score, -score_samples, that a "
            f"counterfactual may reach); got {max_anomaly_score!r}."
        )
    denominator = len(trees) * float(
        average_path_length(np.array([isolation_forest.max_samples_]))[0]
    )
    need = -denominator * float(np.log2(bound))
    return IsolationBound(
        source=given,
        trees=trees,
        path=path,
        max_score=float(bound),
        min_path=need + _RELATIVE_TOLERANCE * max(abs(need), 1.0) if need > 0 else 0.0,
        to_input=to_input,
        input_dtype=dtype,
        by_label=by_label,
    )


def _final_step(isolation_forest: Any) -> Any:
    """The IsolationForest given, or the last step of a Pipeline ending in one."""
    from sklearn.ensemble import IsolationForest
    from sklearn.pipeline import Pipeline

    last = isolation_forest
    if isinstance(isolation_forest, Pipeline):
        last = isolation_forest.steps[-1][1]
    if not isinstance(last, IsolationForest):
        raise InputError(
            "`isolation_forest` must be a fitted sklearn.ensemble.IsolationForest "
            "(or a Pipeline ending in one); got "
            f"{type(isolation_forest).__name__}"
            + (
                f" ending in {type(last).__name__}."
                if last is not isolation_forest
                else "."
            )
        )
    return last


def _by_name(forest: Forest, isolation_forest: Any) -> bool:
    """Whether a plain IsolationForest reads the model's columns by name (both
    have names, or the model has categories to tell apart), not by position."""
    names = getattr(isolation_forest, "feature_names_in_", None)
    return names is not None and (forest.has_feature_names or forest.has_labels)


def reads_categories(forest: Forest, isolation_forest: Any) -> bool:
    """Whether the trees of ``isolation_forest`` (not yet resolved) may split
    categorical columns of ``forest`` as category sets: a Pipeline's, lifted
    through its encoders, or a plain IsolationForest reading a categorical
    column of the model (by position, or by name) by its labels' values."""
    if isolation_forest is None or isinstance(isolation_forest, IsolationBound):
        return False
    from sklearn.pipeline import Pipeline

    if isinstance(isolation_forest, Pipeline):
        return True
    if not _by_name(forest, isolation_forest):
        return any(spec.is_categorical for spec in forest.features)
    names = {str(name) for name in isolation_forest.feature_names_in_}
    return any(spec.is_categorical and spec.name in names for spec in forest.features)


def _columns_of(forest: Forest, isolation_forest: Any) -> NDArray[np.intp]:
    """The model column each input column of a plain IsolationForest is: by
    name when it reads them so (any of the model's columns, in any order; the
    others are not read), else by position (all of them)."""
    if not _by_name(forest, isolation_forest):
        _check_count(forest, isolation_forest)
        return np.arange(forest.n_features, dtype=np.intp)
    names = [str(name) for name in isolation_forest.feature_names_in_]
    known = forest.feature_names
    extra = [name for name in names if name not in known]
    if extra:
        raise InputError(
            f"`isolation_forest` reads {_columns(extra)}, which the model does "
            f"not take; expected some of the model's columns {list(known)[:20]} "
            f"(any of them, in any order), got an IsolationForest fitted on "
            f"{names[:20]}."
        )
    return np.array([known.index(name) for name in names], dtype=np.intp)


def _columns(names: list[str]) -> str:
    """``column 'a'``, ``columns 'a', 'b'``, or the first five ``and 3
    more``, as a message names them."""
    shown = ", ".join(map(repr, names[:5]))
    if len(names) > 5:
        shown += f" and {len(names) - 5} more"
    return f"column{'s' * (len(names) > 1)} {shown}"


def _split_by_value(
    forest: Forest, trees: tuple[Tree, ...], *, by_name: bool
) -> tuple[tuple[Tree, ...], tuple[int, ...]]:
    """The trees of a plain IsolationForest (split features already the
    model's columns; read by name or by position, as ``by_name`` says) with
    each split on a categorical column, whose labels it reads as numbers,
    made a category-set split on the codes; and those columns.

    Code ``c`` goes left where ``float32(label_c) <= threshold``, as the
    IsolationForest compares the label itself; the unknown code where a
    missing value goes (the source is given NaN for it, see
    :func:`_plain_input`).

    Raises
    ------
    InputError
        On a split of a column the model does not read by value (dropped by
        its pipeline, or read only as missing or not), or of a categorical
        column whose labels are not numbers.
    """
    used = np.zeros(forest.n_features, dtype=bool)
    for tree in trees:
        used[tree.feature[~tree.is_leaf]] = True
    k = forest.n_categories
    labels = np.full((forest.n_features, int(k.max(initial=0)) + 1), np.nan)
    for j in np.flatnonzero(used).tolist():
        spec = forest.features[j]
        _check_read_by_value(forest, j, by_name=by_name)
        if spec.is_categorical:
            numbers = label_numbers(spec)
            assert numbers is not None  # checked above
            labels[j, : numbers.size] = numbers
    categorical = used & (k > 0)
    if not categorical.any():
        return trees, ()
    with np.errstate(over="ignore"):
        cast = labels.astype(np.float32).astype(np.float64)
    out = []
    for tree in trees:
        nodes = np.flatnonzero(~tree.is_leaf & categorical[np.maximum(tree.feature, 0)])
        if not nodes.size:
            out.append(tree)
            continue
        feature = tree.feature[nodes]
        width = int(k[feature].max()) + 1
        with np.errstate(invalid="ignore"):  # NaN past each column's codes
            go = cast[feature, :width] <= tree.threshold[nodes, None]
        go[np.arange(nodes.size), k[feature]] = tree.missing_go_left[nodes]
        table = np.zeros((tree.n_nodes, width), dtype=bool)
        table[nodes] = go
        is_categorical = np.zeros(tree.n_nodes, dtype=bool)
        is_categorical[nodes] = True
        threshold = tree.threshold.copy()
        threshold[nodes] = np.nan
        out.append(
            dataclasses.replace(
                tree,
                threshold=threshold,
                is_categorical=is_categorical,
                categorical_left=table,
            )
        )
    return tuple(out), tuple(np.flatnonzero(categorical).tolist())


def _check_read_by_value(forest: Forest, j: int, *, by_name: bool) -> None:
    """Refuse a split of a plain IsolationForest on column ``j`` that it
    cannot read as the model's codes say (see :func:`_split_by_value`)."""
    spec = forest.features[j]
    if spec.dropped or spec.presence_only:
        reads = (
            "never reads (its pipeline drops it)"
            if spec.dropped
            else "reads only as missing or not"
        )
        what = (
            f"splits column {spec.name!r}, which the model {reads}, so no "
            "counterfactual holds its value"
        )
    elif spec.is_categorical and label_numbers(spec) is None:
        how = (
            "reads the categorical column"
            if by_name
            else "(fitted without feature names) splits column"
        )
        what = (
            f"{how} {spec.name!r} {'' if by_name else 'by position '}as numbers, "
            "where the model reads the categories "
            f"{list(spec.categories or ())[:20]}, which are not numbers"
        )
    else:
        return
    raise InputError(
        f"`isolation_forest` {what}; expected an IsolationForest fitted on "
        "columns the model reads, categorical ones holding labels that are "
        "numbers, or a Pipeline with the model's preprocessing ending in an "
        "IsolationForest."
    )


def _plain_input(
    forest: Forest, isolation_forest: Any, columns: NDArray[np.intp]
) -> Callable[[NDArray[np.float64]], Any]:
    """The source's input for rows of the model's codes: its columns, laid
    out in its own order (a DataFrame under its names, when it has them), a
    categorical column as its labels (NaN for the unknown code, which stands
    for no one label; its trees send it where NaN goes)."""
    names = getattr(isolation_forest, "feature_names_in_", None)
    labels = {}
    for i, j in enumerate(columns.tolist()):
        numbers = label_numbers(forest.features[j])
        if numbers is not None:
            labels[i] = np.append(numbers, np.nan)

    def to_input(X: NDArray[np.float64]) -> Any:
        rows = X[:, columns]
        for i, values in labels.items():
            rows[:, i] = values[category_codes(rows[:, i], values.size - 1)]
        if names is None:
            return rows
        import pandas as pd

        return pd.DataFrame(rows, columns=list(names))

    return to_input


def _lifted(
    forest: Forest, pipeline: Any, isolation_forest: Any
) -> tuple[
    tuple[Tree, ...],
    tuple[NDArray[np.float64], ...],
    Callable[[NDArray[np.float64]], Any],
]:
    """The trees of a Pipeline ending in an IsolationForest, lifted through its
    preprocessing to the model's columns, and the source's input (the
    model's columns by name, or by position for a Pipeline fitted without
    names beside a Forest that renamed a model fitted without any)."""
    from .._adapters._pipeline import lift_to_inputs
    from .._core._features import decode

    n_in = int(isolation_forest.n_features_in_)
    own, path = _trees(forest, isolation_forest, np.arange(n_in, dtype=np.intp))
    inner = Forest(
        trees=own,
        kind="forest",
        task="regression",
        n_features=n_in,
        feature_names=tuple(f"z{i}" for i in range(n_in)),
        input_dtype=np.float32,
        allow_missing=True,  # the source's own scoring says (see the search)
    )
    lifted = lift_to_inputs(pipeline, inner)
    # A pipeline fitted without names, beside a model fitted without any
    # shown under a data file's (``fitted_model``), reads the same columns
    # by position: under the model's names, given arrays.
    by_position = not lifted.has_feature_names and forest.fitted_model is not None
    if by_position:
        if lifted.n_features != forest.n_features:
            raise InputError(
                "`isolation_forest` (fitted without feature names) must be fitted "
                f"on the model's columns; expected {forest.n_features} features, "
                f"got a Pipeline fitted on {lifted.n_features}."
            )
        lifted = lift_to_inputs(pipeline, inner, forest.feature_names)
    columns = _lifted_columns(forest, lifted)
    trees = []
    for tree in lifted.trees:
        split = ~tree.is_leaf
        feature = tree.feature.copy()
        feature[split] = columns[tree.feature[split]]
        trees.append(dataclasses.replace(tree, feature=feature))
    names = list(lifted.feature_names)

    def to_input(X: NDArray[np.float64]) -> Any:
        frame = decode(forest, X)[names]
        return frame.to_numpy() if by_position else frame

    return tuple(trees), path, to_input


def _lifted_columns(forest: Forest, lifted: Forest) -> NDArray[np.intp]:
    """The model column of each input column of the isolation pipeline; the
    columns its trees read must be the model's, in the same encoding."""
    used = np.zeros(lifted.n_features, dtype=bool)
    for tree in lifted.trees:
        used[tree.feature[~tree.is_leaf]] = True
    known = forest.feature_names
    columns = np.full(lifted.n_features, -1, dtype=np.intp)
    for i, spec in enumerate(lifted.features):
        if spec.name in known:
            columns[i] = known.index(spec.name)
        if not used[i]:
            columns[i] = max(columns[i], 0)  # never read: any column will do
            continue
        if columns[i] < 0:
            raise InputError(
                f"`isolation_forest` reads column {spec.name!r}, which the model "
                f"does not take; expected some of {list(known)}."
            )
        mine = forest.features[columns[i]]
        if mine.dropped or mine.kind != spec.kind or mine.categories != spec.categories:
            raise InputError(
                f"`isolation_forest` reads column {spec.name!r} as {spec.kind}"
                f"{'' if spec.categories is None else f' {list(spec.categories)}'}"
                f", the model as {'dropped' if mine.dropped else mine.kind}"
                f"{'' if mine.categories is None else f' {list(mine.categories)}'}; "
                "expected the same encoding (fit both on the same data)."
            )
    return columns


def _check_count(forest: Forest, isolation_forest: Any) -> None:
    """An IsolationForest read by position has one column per model column."""
    n_in = int(isolation_forest.n_features_in_)
    if n_in != forest.n_features:
        raise InputError(
            "`isolation_forest` must be fitted on the model's columns (read by "
            f"position); expected {forest.n_features} features, got an "
            f"IsolationForest fitted on {n_in}."
        )


def _trees(
    forest: Forest, isolation_forest: Any, columns: NDArray[np.intp]
) -> tuple[tuple[Tree, ...], tuple[NDArray[np.float64], ...]]:
    """The isolation trees, input column ``i`` as column ``columns[i]``, and
    the path length of a row ending at each of their nodes."""
    width = forest.trees[0].value.shape[1] if forest.trees else 1
    trees, paths = [], []
    for tree in isolation_trees(isolation_forest):
        split = ~tree.is_leaf
        mapped = tree.feature.copy()
        mapped[split] = columns[tree.feature[split]]
        paths.append(path_lengths(tree))
        # Zero values of the model's width: these trees add nothing to its vote.
        trees.append(
            dataclasses.replace(
                tree, feature=mapped, value=np.zeros((tree.n_nodes, width))
            )
        )
    return tuple(trees), tuple(paths)


def combined_forest(forest: Forest, bound: IsolationBound) -> Forest:
    """``forest`` with the isolation trees appended (for the program's cells and
    leaves only: its predictions are not the model's).

    Each part is first made to compare float64 values uncast as it routes them
    after its own cast (:func:`~treelens._core._float64.float64_forest`), so
    the model's trees and the isolation trees share one grid of float64 cells.
    """
    isolation = tuple(float64_tree(tree, bound.input_dtype) for tree in bound.trees)
    return dataclasses.replace(
        forest,
        trees=float64_forest(forest).trees + isolation,
        tree_output=np.concatenate(
            [forest.tree_output, np.zeros(len(bound.trees), dtype=np.intp)]
        ),
        # Weights in importances are the model's; these trees are not.
        tree_weight=np.zeros(0),
        input_dtype=np.float64,
        fitted_model=None,  # its predictions are not the model's
    )
