"""Helpers shared by the adapters that read another library's model dump."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["SplitStatistics", "reachable_order"]


@dataclass(frozen=True)
class SplitStatistics:
    """What a boosting library records at each node of one tree, beside the tree.

    Node ids are those of the matching :class:`~treelens.Tree`.

    Parameters
    ----------
    feature : ndarray of shape (n_nodes,)
        Feature index at split nodes, ``-2`` at leaves.
    gain : ndarray of shape (n_nodes,)
        Loss reduction the library recorded for each split (0 at leaves).
    cover : ndarray of shape (n_nodes,)
        Hessian sum ("cover") at each node; NaN where the library keeps none.
    """

    feature: NDArray[np.intp]
    gain: NDArray[np.float64]
    cover: NDArray[np.float64]


def reachable_order(
    left: NDArray[np.intp], right: NDArray[np.intp]
) -> NDArray[np.intp]:
    """Ids of the nodes reachable from the root, root first, in breadth-first order.

    Libraries may keep deleted (pruned) nodes in their arrays; renumbering the
    reachable nodes in this order drops them.  One vectorized step per depth level.
    """
    order = [np.array([0], dtype=np.intp)]
    frontier = order[0]
    while frontier.size:
        inner = frontier[left[frontier] != -1]
        frontier = np.stack([left[inner], right[inner]], axis=1).reshape(-1)
        order.append(frontier)
    return np.concatenate(order)


def renumber(
    order: NDArray[np.intp], left: NDArray[np.intp], right: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Children arrays of the nodes ``order``, renumbered to positions in ``order``."""
    new_id = np.full(left.shape[0], -1, dtype=np.intp)
    new_id[order] = np.arange(order.size, dtype=np.intp)
    old_left, old_right = left[order], right[order]
    new_left = np.where(old_left == -1, -1, new_id[np.maximum(old_left, 0)])
    new_right = np.where(old_right == -1, -1, new_id[np.maximum(old_right, 0)])
    return new_left, new_right
