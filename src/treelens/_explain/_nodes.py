"""Node tables of a whole Forest and the paths rows take through it.

Every tree's nodes are numbered globally (tree ``j``'s node ``i`` is
``offsets[j] + i``, the numbering of :meth:`Forest._flat`), so one gather reads
a node fact for every (row, tree) pair at once.  A row's path through a tree is
recovered from the leaf the Forest's own routing sends it to, walking up the
parents: the routing is never repeated, so missing values and float32
thresholds go exactly where the model sends them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest

__all__ = ["NodeTables", "node_tables", "path_nodes"]


@dataclass(frozen=True, eq=False)
class NodeTables:
    """Facts of every node of a Forest, indexed by global node id.

    Attributes
    ----------
    offsets : ndarray of shape (n_trees,)
        Global id of each tree's root.
    tree : ndarray of shape (n_nodes,)
        Tree each node belongs to.
    parent : ndarray of shape (n_nodes,)
        Global id of each node's parent, ``-1`` at roots.
    depth : ndarray of shape (n_nodes,)
        Depth of each node within its tree.
    feature : ndarray of shape (n_nodes,)
        Feature tested at split nodes, ``-2`` at leaves.
    threshold, missing_go_left, left : ndarray of shape (n_nodes,)
        As in :class:`~treelens.Tree`; ``left`` holds global ids.
    value : ndarray of shape (n_nodes, n_values)
        Node values of every tree side by side (all trees have as many values).
    max_depth : int
        Depth of the deepest leaf of any tree.
    is_categorical : ndarray of shape (n_nodes,)
        Whether each node tests category membership.
    categorical_left : ndarray of shape (n_nodes, width)
        The codes each categorical node sends left (as in
        :class:`~treelens.Tree`, padded with False to the widest tree; width 0
        when no tree has a categorical split).
    """

    offsets: NDArray[np.intp]
    tree: NDArray[np.intp]
    parent: NDArray[np.intp]
    depth: NDArray[np.intp]
    feature: NDArray[np.intp]
    threshold: NDArray[np.float64]
    missing_go_left: NDArray[np.bool_]
    left: NDArray[np.intp]
    value: NDArray[np.float64]
    max_depth: int
    is_categorical: NDArray[np.bool_]
    categorical_left: NDArray[np.bool_]


_CACHE: weakref.WeakKeyDictionary[Forest, NodeTables] = weakref.WeakKeyDictionary()


def node_tables(forest: Forest) -> NodeTables:
    """The global node tables of ``forest`` (computed once per Forest)."""
    cached = _CACHE.get(forest)
    if cached is not None:
        return cached
    trees = forest.trees
    sizes = np.array([t.n_nodes for t in trees], dtype=np.intp)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)

    def shifted(local: NDArray[np.intp], offset: int) -> NDArray[np.intp]:
        return np.where(local < 0, -1, local + offset)

    tables = NodeTables(
        offsets=offsets,
        tree=np.repeat(np.arange(len(trees), dtype=np.intp), sizes),
        parent=np.concatenate(
            [shifted(t.parent, o) for t, o in zip(trees, offsets)]
        ).astype(np.intp),
        depth=np.concatenate([t.node_depth for t in trees]).astype(np.intp),
        feature=np.concatenate([t.feature for t in trees]).astype(np.intp),
        threshold=np.concatenate([t.threshold for t in trees]),
        missing_go_left=np.concatenate([t.missing_go_left for t in trees]),
        left=np.concatenate(
            [shifted(t.children_left, o) for t, o in zip(trees, offsets)]
        ).astype(np.intp),
        value=np.concatenate([t.value for t in trees], axis=0),
        max_depth=max((t.max_depth for t in trees), default=0),
        is_categorical=np.concatenate(
            [np.asarray(t.is_categorical, dtype=bool) for t in trees]
        ),
        categorical_left=_categorical_table(forest, int(sizes.sum())),
    )
    _CACHE[forest] = tables
    return tables


def _categorical_table(forest: Forest, n_nodes: int) -> NDArray[np.bool_]:
    lefts = [np.asarray(t.categorical_left, dtype=bool) for t in forest.trees]
    width = max((left.shape[1] for left in lefts), default=0)
    table = np.zeros((n_nodes, width), dtype=bool)
    start = 0
    for left in lefts:
        table[start : start + left.shape[0], : left.shape[1]] = left
        start += left.shape[0]
    return table


def path_nodes(tables: NodeTables, leaves: NDArray[Any]) -> NDArray[np.intp]:
    """The nodes on every (row, tree) path, root first.

    Parameters
    ----------
    tables : NodeTables
    leaves : ndarray of shape (n_rows, n_trees)
        Leaf reached in each tree (local node ids, as :meth:`Forest.apply`).

    Returns
    -------
    paths : ndarray of shape (n_rows, n_trees, max_depth + 1)
        Global node ids; ``paths[r, j, d]`` is the node at depth ``d``, ``-1``
        past the leaf.
    """
    n_rows, n_trees = leaves.shape
    width = tables.max_depth + 1
    paths = np.full((n_rows * n_trees, width), -1, dtype=np.intp)
    current = (np.asarray(leaves, dtype=np.intp) + tables.offsets).reshape(-1)
    pair = np.arange(current.size)
    # One step per level, from the leaves up: every pair at once.
    while current.size:
        paths[pair, tables.depth[current]] = current
        current = tables.parent[current]
        keep = current >= 0
        pair, current = pair[keep], current[keep]
    return paths.reshape(n_rows, n_trees, width)
