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

The isolation trees are written in the model's columns.  For a model that takes
a DataFrame (a pipeline, categorical columns), ``isolation_forest`` is either a
plain IsolationForest fitted on some of its numeric columns (by name), or a
Pipeline ending in one, whose preprocessing is lifted to the input columns as
the model's own pipeline is (:func:`~treelens._adapters._pipeline.lift_to_inputs`):
one-hot and ordinal columns become category-set splits, scaled thresholds go
back to raw units.  So, like the model's, its nodes on the columns an
assignment of categories fixes are constant (see
:mod:`treelens._counterfactual._categorical`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters._isolation import average_path_length, isolation_trees, path_lengths
from .._core._float64 import float64_forest, float64_tree
from .._core._forest import Forest, Tree
from .._exceptions import InputError, NotFittedError

__all__ = ["IsolationBound", "combined_forest", "resolve_isolation"]

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
    """

    source: Any
    trees: tuple[Tree, ...]
    path: tuple[NDArray[np.float64], ...]
    max_score: float
    min_path: float
    to_input: Callable[[NDArray[np.float64]], Any]
    input_dtype: Any = np.float32

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
    if isolation_forest is not given:  # a Pipeline ending in an IsolationForest
        trees, path, to_input = _lifted(forest, given, isolation_forest)
        dtype: Any = np.float64
    else:
        columns = _columns_of(forest, isolation_forest)
        trees, path = _trees(forest, isolation_forest, columns)
        to_input, dtype = _plain_input(isolation_forest, columns), np.float32
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


def _columns_of(forest: Forest, isolation_forest: Any) -> NDArray[np.intp]:
    """The model column each input column of a plain IsolationForest is: by
    name when both have names (some of the model's numeric columns), else by
    position (all of them)."""
    names = getattr(isolation_forest, "feature_names_in_", None)
    if names is not None and forest.has_labels:
        known = forest.feature_names
        columns = []
        for name in map(str, names):
            if name not in known:
                raise InputError(
                    f"`isolation_forest` reads column {name!r}, which the model does "
                    f"not take; expected some of {list(known)}."
                )
            j = known.index(name)
            if forest.features[j].kind == "categorical":
                raise InputError(
                    f"`isolation_forest` reads the categorical column {name!r} as "
                    "numbers; expected a Pipeline with the model's encoder ending in "
                    "an IsolationForest, or one fitted on numeric columns only."
                )
            columns.append(j)
        return np.array(columns, dtype=np.intp)
    _check_columns(forest, isolation_forest)
    return np.arange(forest.n_features, dtype=np.intp)


def _plain_input(
    isolation_forest: Any, columns: NDArray[np.intp]
) -> Callable[[NDArray[np.float64]], Any]:
    names = getattr(isolation_forest, "feature_names_in_", None)

    def to_input(X: NDArray[np.float64]) -> Any:
        if names is None:
            return X[:, columns]
        import pandas as pd

        return pd.DataFrame(X[:, columns], columns=list(names))

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


def _check_columns(forest: Forest, isolation_forest: Any) -> None:
    n_in = int(isolation_forest.n_features_in_)
    if n_in != forest.n_features:
        raise InputError(
            "`isolation_forest` must be fitted on the model's columns; expected "
            f"{forest.n_features} features, got an IsolationForest fitted on {n_in}."
        )
    names = getattr(isolation_forest, "feature_names_in_", None)
    if names is not None and forest.has_feature_names:
        for j, (mine, theirs) in enumerate(zip(forest.feature_names, names)):
            if mine != str(theirs):
                raise InputError(
                    "`isolation_forest` must be fitted on the model's columns in "
                    f"order; expected column {j} to be {mine!r}, got {str(theirs)!r}."
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
