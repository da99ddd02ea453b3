"""Routing large inputs through scikit-learn's compiled trees, one thread per core.

A :class:`~treelens.Forest` whose input dtype is float32 routes samples exactly as
scikit-learn's ``Tree.apply`` does: ``float32(x) <= threshold`` (a float64), NaN to
the side ``missing_go_left`` names.  So its trees can be rebuilt as scikit-learn
``Tree`` objects, whatever library they came from, and routed by that compiled
loop.  It releases the GIL, so a thread pool routes several trees at once (one
thread per core, see :func:`routing_threads`): on large inputs this is as fast
as scikit-learn's own ``apply`` on one core and scales with the cores, where a
numpy loop per depth level is bound to one.

The rebuild goes through the state scikit-learn itself pickles a tree with.
Should a future scikit-learn change that state, :func:`compiled_trees` returns
``None`` and the Forest keeps its numpy routing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from ._forest import Forest

__all__ = ["apply_compiled", "compiled_trees", "map_compiled", "routing_threads"]

T = TypeVar("T")

# Most threads a single routing call starts.
_MAX_THREADS = 8


def routing_threads() -> int:
    """Threads a routing call may use.

    The cores this process may run on (its CPU affinity), no more than
    ``OMP_NUM_THREADS`` when that is set (as Dask workers and job schedulers do,
    and as scikit-learn honours for its own threads), and at most
    ``_MAX_THREADS``.
    """
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        available = os.cpu_count() or 1
    limit = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if limit.isdigit() and int(limit) > 0:
        available = min(available, int(limit))
    return max(1, min(available, _MAX_THREADS))


def compiled_trees(forest: Forest) -> list[Any] | None:
    """scikit-learn ``Tree`` objects routing like the forest's trees, or ``None``.

    ``None`` when the forest's input dtype is not float32 (scikit-learn routes
    float32 only), when a tree has categorical splits (which scikit-learn's
    ``Tree`` cannot hold) or when this scikit-learn cannot be given a tree's state.
    """
    if np.dtype(forest.input_dtype) != np.float32 or forest.has_categorical:
        return None
    try:
        from sklearn.tree._tree import NODE_DTYPE, Tree

        trees = []
        one_class = np.ones(1, dtype=np.intp)
        for tree in forest.trees:
            n = tree.n_nodes
            nodes = np.zeros(n, dtype=NODE_DTYPE)
            nodes["left_child"] = tree.children_left
            nodes["right_child"] = tree.children_right
            nodes["feature"] = tree.feature
            nodes["threshold"] = tree.threshold
            nodes["missing_go_to_left"] = tree.missing_go_left
            compiled = Tree(forest.n_features, one_class, 1)
            compiled.__setstate__(
                {
                    "max_depth": tree.max_depth,
                    "node_count": n,
                    "nodes": nodes,
                    "values": np.zeros((n, 1, 1)),
                }
            )
            trees.append(compiled)
    except (ImportError, KeyError, TypeError, ValueError):
        return None
    return trees


def map_compiled(
    trees: list[Any],
    X: NDArray[np.float32],
    function: Callable[[int, NDArray[np.intp]], T],
    *,
    threads: int | None = None,
) -> list[T]:
    """``function(j, leaves_j)`` for every tree ``j``, routed and run on a thread pool.

    ``leaves_j`` holds the leaf each row of ``X`` (float32) reaches in tree ``j``.
    While one thread runs ``function`` (numpy work that mostly holds the GIL),
    the others route trees in compiled code that releases it.  Results come back
    in tree order.  ``threads`` caps the pool (default :func:`routing_threads`);
    one thread routes in the calling thread, without a pool.
    """
    X = np.ascontiguousarray(X, dtype=np.float32)

    def work(j: int) -> T:
        return function(j, trees[j].apply(X))

    n_threads = min(routing_threads() if threads is None else threads, len(trees))
    if n_threads <= 1:
        return [work(j) for j in range(len(trees))]
    with ThreadPoolExecutor(n_threads) as pool:
        # list() re-raises the first error of any tree.
        return list(pool.map(work, range(len(trees))))


def apply_compiled(
    trees: list[Any],
    X: NDArray[np.float32],
    out: NDArray[np.intp],
    *,
    threads: int | None = None,
) -> NDArray[np.intp]:
    """Leaf of every row of ``X`` in every tree, written into ``out`` (n, n_trees).

    ``X`` is float32; ``out`` is best a transposed tree-major array, so that each
    tree's column is one contiguous write.  ``threads`` as in :func:`map_compiled`.
    """

    def store(j: int, leaves: NDArray[np.intp]) -> None:
        out[:, j] = leaves

    map_compiled(trees, X, store, threads=threads)
    return out
