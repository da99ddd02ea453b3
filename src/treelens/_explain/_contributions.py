"""Saabas contributions: the change in node value along each row's path.

Every split a row passes moves the node value from the parent's to the child's;
that change is credited to the feature the parent tests (Saabas 2014, the
method of ``treeinterpreter``).  Summed over a path, the changes telescope:
``leaf value = root value + sum of changes``, so over the ensemble

    prediction = bias + sum over features of contributions

exactly (to rounding), where ``bias`` combines the trees' root values as the
model combines its trees.

The changes are precomputed once per node (scaled as the model combines trees:
``1 / n_trees`` for averaging ensembles, the learning rate for boosting); each
row's are then gathered from the leaf the Forest's routing gives, walking up the
parents one level at a time for all (row, tree) pairs at once, and summed per
(row, feature, output) with one ``bincount`` per level.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from .._types import ArrayLike, ModelLike
from ._data import checked_rows, output_names
from ._nodes import NodeTables, node_tables

__all__ = ["SaabasValues", "saabas_values"]

OutputSpace = Literal["probability", "raw", "value"]

# Rows routed and gathered at once: bounds the (rows x trees) temporaries.
_CHUNK_CELLS = 2_000_000
# Largest table of per-leaf sums of changes, in (leaf, feature x output) cells:
# kept for the whole forest when it fits, else built for blocks of trees in
# turn when enough rows pay for it; paths are walked up otherwise.
_TABLE_CELLS = 1 << 22


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SaabasValues:
    """Per-row, per-feature Saabas contributions and the bias they start from.

    ``bias_ + values_.sum(axis=1) == prediction_`` for every row (and output),
    to rounding (about 1e-15 relative).

    Attributes
    ----------
    values_ : ndarray of shape (n_rows, n_features) or (n_rows, n_features, n_outputs)
        Contribution of each feature to each row's prediction.  Two dimensions
        for regressors and binary boosting (its raw score); three for
        classifiers that average class probabilities (forests and single trees,
        binary included: one column per class) and multiclass boosting (one raw
        score per class).
    bias_ : float or ndarray of shape (n_outputs,)
        The prediction before any split: the trees' root values combined as the
        model combines its trees (with boosting's initial score).
    prediction_ : ndarray of shape (n_rows,) or (n_rows, n_outputs)
        The model's output the contributions add up to (computed in float64).
    output_space_ : {"probability", "raw", "value"}
        What the outputs are: class probabilities (forests, trees), raw scores
        before the link (boosting classifiers), or predicted values
        (regressors).
    output_names_ : tuple of str or None
        The classes, for three-dimensional ``values_``; else None.
    feature_names_ : tuple of str
    data_ : pandas.DataFrame of shape (n_rows, n_features)
        The rows explained, in the user's units.

    See Also
    --------
    treelens.saabas_values, treelens.decision_path
    """

    values_: NDArray[np.float64]
    bias_: float | NDArray[np.float64]
    prediction_: NDArray[np.float64]
    output_space_: OutputSpace
    output_names_: tuple[str, ...] | None
    feature_names_: tuple[str, ...]
    data_: pd.DataFrame

    def __repr__(self) -> str:
        outputs = (
            "" if self.output_names_ is None else f", outputs={self.output_names_!r}"
        )
        return (
            f"SaabasValues(output_space={self.output_space_!r}, "
            f"n_rows={self.values_.shape[0]}, n_features={self.values_.shape[1]}"
            f"{outputs})"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per (row, [output,] feature): its value and contribution.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``row`` (the index of ``data_``), ``output`` (for
            three-dimensional values), ``feature``, ``value`` and
            ``contribution``; rows in row, output, feature order.
        """
        n_rows, n_features = self.values_.shape[:2]
        names = np.asarray(self.feature_names_, dtype=object)
        feature_values = self.data_.to_numpy(dtype=object)
        if self.values_.ndim == 2:
            return pd.DataFrame(
                {
                    "row": np.repeat(self.data_.index.to_numpy(), n_features),
                    "feature": np.tile(names, n_rows),
                    "value": feature_values.reshape(-1),
                    "contribution": self.values_.reshape(-1),
                }
            )
        n_outputs = self.values_.shape[2]
        assert self.output_names_ is not None
        # (row, output, feature) order.
        moved = np.moveaxis(self.values_, 2, 1)
        return pd.DataFrame(
            {
                "row": np.repeat(self.data_.index.to_numpy(), n_outputs * n_features),
                "output": np.tile(
                    np.repeat(np.asarray(self.output_names_, object), n_features),
                    n_rows,
                ),
                "feature": np.tile(names, n_rows * n_outputs),
                "value": np.repeat(feature_values, n_outputs, axis=0).reshape(-1),
                "contribution": moved.reshape(-1),
            }
        )


def saabas_values(model: ModelLike, X: ArrayLike) -> SaabasValues:
    """Saabas contributions of every feature to every row's prediction.

    Along a row's path each split changes the node value from the parent's to
    the child's; the change is credited to the feature the parent tests, and
    summed over the trees as the model combines them, in the model's own output
    space: probabilities for forests and trees, the raw score for boosting (one
    per class for multiclass; the log of the prediction for regressors with a
    log link), values for regressors.  Equal to
    ``treeinterpreter``'s ``predict`` for the scikit-learn models it supports,
    and defined for every model treelens reads.

    A scikit-learn ``Pipeline`` is explained in its input columns: every split
    of the final model is read on the input column it derives from (its
    lifted Forest), so a column's contribution is the sum of the contributions
    the final model gives the columns a step derives from it (one-hot columns
    add up to their column) and equals Saabas on ``pipeline[-1]`` over
    ``pipeline[:-1].transform(X)`` summed per input column.

    Parameters
    ----------
    model : fitted tree model or Forest
    X : array-like of shape (n_rows, n_features)
        Rows to explain; a DataFrame is matched to the model's features by name
        (for a pipeline, the raw DataFrame it takes).

    Returns
    -------
    SaabasValues
        ``bias_ + values_.sum(axis=1) == prediction_``.

    Raises
    ------
    InputError
        If ``X`` does not match the model's features.

    See Also
    --------
    treelens.decision_path : the conditions of each path, in words.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> result = saabas_values(model, X[:5])
    >>> result.values_.shape
    (5, 10)
    >>> bool(np.allclose(result.bias_ + result.values_.sum(axis=1),
    ...                  model.predict(X[:5])))
    True
    """
    forest = to_forest(model)
    routed, data = checked_rows(forest, X)
    changes = _changes(forest)
    n_rows, n_features = routed.shape
    n_outputs = changes.init.shape[0]
    values = np.empty((n_rows, n_features * n_outputs))
    prediction = np.empty((n_rows, n_outputs))
    n_nodes = changes.tables.parent.size
    rows = max(1, _CHUNK_CELLS // max(1, forest.n_trees))
    for start in range(0, n_rows, rows):
        stop = min(n_rows, start + rows)
        leaves = forest._apply(routed[start:stop]) + changes.tables.offsets
        reached = _indicator(leaves, n_nodes)
        values[start:stop] = _path_sums(changes, leaves, n_features * n_outputs)
        prediction[start:stop] = changes.init + reached @ changes.node_value
    roots = changes.tables.offsets[np.newaxis, :]
    bias = (changes.init + _indicator(roots, n_nodes) @ changes.node_value)[0]
    values = values.reshape(n_rows, n_features, n_outputs)
    space: OutputSpace = (
        "raw"
        if forest.kind == "boosting"
        and (forest.is_classifier or forest.link != "identity")
        else "value"
        if not forest.is_classifier
        else "probability"
    )
    if n_outputs == 1:
        return SaabasValues(
            values_=values[:, :, 0],
            bias_=float(bias[0]),
            prediction_=prediction[:, 0],
            output_space_=space,
            output_names_=None,
            feature_names_=forest.feature_names,
            data_=data,
        )
    return SaabasValues(
        values_=values,
        bias_=bias,
        prediction_=prediction,
        output_space_=space,
        output_names_=output_names(forest),
        feature_names_=forest.feature_names,
        data_=data,
    )


@dataclass(frozen=True, eq=False)
class _Changes:
    """The value changes of a Forest's nodes, ready to be gathered.

    ``columns[i]`` and ``weights[i]`` (shape (n_nodes, width)) say where the
    change into node ``i`` goes in a row's flattened (feature, output) vector,
    ``feature[parent] * n_outputs + output``, and how much it is (zero at roots).
    ``node_value`` is each node's value as it enters the model's sum (scaled,
    one column per output).  ``leaf_table`` holds, per leaf, the sum of the
    changes along its path, or None when the forest is too large to keep it;
    ``tree_entries`` is the number of (leaf, path node) pairs of each tree
    (what building its table costs) and ``tree_cells`` the size of its table.
    """

    tables: NodeTables
    columns: NDArray[np.intp]
    weights: NDArray[np.float64]
    node_value: NDArray[np.float64]
    init: NDArray[np.float64]
    leaf_table: _LeafTable | None
    tree_entries: NDArray[np.intp]
    tree_cells: NDArray[np.intp]


@dataclass(frozen=True, eq=False)
class _LeafTable:
    """Per-leaf sums of path changes: ``sums[row_of[leaf]]`` is the flattened
    (feature, output) vector of ``leaf`` (a global node id)."""

    row_of: NDArray[np.intp]
    sums: NDArray[np.float64]


_CHANGES: weakref.WeakKeyDictionary[Forest, _Changes] = weakref.WeakKeyDictionary()


def _changes(forest: Forest) -> _Changes:
    """The (cached) node changes of ``forest``, scaled as the model combines trees."""
    cached = _CHANGES.get(forest)
    if cached is not None:
        return cached
    tables = node_tables(forest)
    n_nodes, n_values = tables.value.shape
    if forest.kind == "boosting":
        scale = float(forest.learning_rate)
        init = np.asarray(forest.init_raw, dtype=np.float64).copy()
        # One raw value per node, added to the output its tree feeds.
        output = np.asarray(forest.tree_output)[tables.tree][:, np.newaxis]
    else:
        scale = 1.0 / max(1, forest.n_trees)
        init = np.zeros(n_values)
        output = np.broadcast_to(np.arange(n_values), (n_nodes, n_values))
    n_outputs = init.shape[0]
    has_parent = tables.parent >= 0
    weights = np.zeros((n_nodes, output.shape[1]))
    weights[has_parent] = (
        tables.value[has_parent] - tables.value[tables.parent[has_parent]]
    ) * scale
    parent_feature = np.where(has_parent, tables.feature[tables.parent], 0)
    columns = parent_feature[:, np.newaxis] * n_outputs + output
    node_value = np.zeros((n_nodes, n_outputs))
    np.put_along_axis(node_value, output, tables.value * scale, axis=1)
    leaves = np.flatnonzero(tables.left < 0)
    tree_entries = (
        np.bincount(
            tables.tree[leaves], weights=tables.depth[leaves], minlength=forest.n_trees
        ).astype(np.intp)
        * output.shape[1]
    )
    width = forest.n_features * n_outputs
    tree_cells = np.bincount(tables.tree[leaves], minlength=forest.n_trees) * width
    parts = (tables, columns, weights, node_value, init)
    changes = _Changes(*parts, None, tree_entries, tree_cells)
    if tree_cells.sum() <= _TABLE_CELLS:
        table = _leaf_table(changes, width, leaves)
        changes = _Changes(*parts, table, tree_entries, tree_cells)
    _CHANGES[forest] = changes
    return changes


def _walk_up(
    changes: _Changes, leaves: NDArray[np.intp]
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """For every level, the (start, node) pairs still below a root.

    ``start`` indexes the flattened ``leaves``; ``node`` is the node whose
    change (from its parent) the pair passes at that level.
    """
    parent = changes.tables.parent
    current = leaves.reshape(-1)
    start = np.arange(current.size)
    while current.size:
        keep = parent[current] >= 0
        start, current = start[keep], current[keep]
        if current.size:
            yield start, current
        current = parent[current]


def _leaf_table(changes: _Changes, width: int, leaves: NDArray[np.intp]) -> _LeafTable:
    """The per-leaf sums of path changes of the given (global) leaves."""
    index, weights = [], []
    for start, node in _walk_up(changes, leaves):
        index.append((start[:, np.newaxis] * width + changes.columns[node]).ravel())
        weights.append(changes.weights[node].ravel())
    size = leaves.size * width
    sums: NDArray[np.float64] = (
        np.bincount(
            np.concatenate(index), np.concatenate(weights), minlength=size
        ).astype(np.float64, copy=False)
        if index
        else np.zeros(size)
    )
    row_of = np.full(changes.tables.parent.size, -1, dtype=np.intp)
    row_of[leaves] = np.arange(leaves.size)
    return _LeafTable(row_of, sums.reshape(leaves.size, width))


def _table_sums(table: _LeafTable, leaves: NDArray[np.intp]) -> NDArray[np.float64]:
    """Sum over the given trees' leaves of their path sums, per row."""
    reached = _indicator(table.row_of[leaves], table.sums.shape[0])
    return np.asarray(reached @ table.sums)


def _indicator(nodes: NDArray[np.intp], n_nodes: int) -> Any:
    """Sparse (n_rows, n_nodes) matrix of ones at the nodes each row reached."""
    from scipy.sparse import csr_matrix

    n_rows, n_trees = nodes.shape
    return csr_matrix(
        (
            np.ones(n_rows * n_trees),
            nodes.reshape(-1),
            np.arange(0, n_rows * n_trees + 1, n_trees),
        ),
        shape=(n_rows, n_nodes),
    )


def _blocked_sums(
    changes: _Changes, leaves: NDArray[np.intp], width: int
) -> NDArray[np.float64]:
    """Path sums through leaf tables built for blocks of trees in turn."""
    total = np.zeros((leaves.shape[0], width))
    is_leaf = changes.tables.left < 0
    start, n_trees = 0, leaves.shape[1]
    while start < n_trees:
        # As many trees as fit in _TABLE_CELLS (at least one).
        cumulative = np.cumsum(changes.tree_cells[start:])
        fit = int(np.searchsorted(cumulative, _TABLE_CELLS, side="right"))
        stop = start + max(1, fit)
        tree = changes.tables.tree
        block = np.flatnonzero(is_leaf & (tree >= start) & (tree < stop))
        table = _leaf_table(changes, width, block)
        total += _table_sums(table, leaves[:, start:stop])
        start = stop
    return total


def _path_sums(
    changes: _Changes, leaves: NDArray[np.intp], width: int
) -> NDArray[np.float64]:
    """Sum over trees of every row's path changes, shape (n_rows, width)."""
    n_rows, n_trees = leaves.shape
    if changes.leaf_table is not None:
        return _table_sums(changes.leaf_table, leaves)
    walked = n_rows * n_trees * changes.tables.max_depth
    if (
        changes.tree_entries.sum() <= walked
        and changes.tree_cells.max() <= _TABLE_CELLS
    ):
        # Many rows: building the leaf tables, a block of trees at a time, costs
        # less than walking every row's paths.
        return _blocked_sums(changes, leaves, width)
    total = np.zeros(n_rows * width)
    for start, node in _walk_up(changes, leaves):
        row = start // n_trees
        index = row[:, np.newaxis] * width + changes.columns[node]
        total += np.bincount(
            index.reshape(-1),
            weights=changes.weights[node].reshape(-1),
            minlength=total.size,
        )
    return total.reshape(n_rows, width)
