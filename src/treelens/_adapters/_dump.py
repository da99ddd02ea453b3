"""Helpers shared by the adapters that read another library's model dump."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core._forest import Forest, Tree

__all__ = ["SplitStatistics", "boosting_forest", "reachable_order"]


def boosting_forest(
    info: Mapping[str, Any],
    trees: Sequence[Tree],
    *,
    classes: ArrayLike | None,
    criterion: str,
    source: str,
    **fields: Any,
) -> Forest:
    """The Forest of a parsed boosting dump (XGBoost, LightGBM, CatBoost).

    ``info`` holds what every dump parser reads alike (``task``, ``n_features``,
    ``names``, ``has_names``, ``link``, ``tree_output``); ``fields`` are the
    Forest fields in which the libraries differ (``init_raw``, ``learning_rate``,
    ``input_dtype``, ``loss``, ``features``, ...).  A classifier's ``classes``
    default to ``0 .. info["n_classes"] - 1``.
    """
    is_classifier = info["task"] == "classification"
    if is_classifier and classes is None:
        classes = np.arange(info["n_classes"])
    return Forest(
        trees=tuple(trees),
        kind="boosting",
        task=info["task"],
        n_features=info["n_features"],
        feature_names=info["names"],
        has_feature_names=info["has_names"],
        classes_=np.asarray(classes) if is_classifier else None,
        criterion=criterion,
        link=info["link"],
        tree_output=info["tree_output"],
        allow_missing=True,
        source=source,
        positive_at_zero=False,
        **fields,
    )


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


def categorical_table(
    n_nodes: int, width: int, rows: dict[int, NDArray[np.bool_]]
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """``is_categorical`` and ``categorical_left`` of a Tree from the left-going
    codes of its categorical nodes (``rows[node]``: bool array over codes
    ``0 .. k``, the last being the unknown code).  Width 0 without such nodes."""
    is_categorical = np.zeros(n_nodes, dtype=bool)
    if not rows:
        return is_categorical, np.zeros((n_nodes, 0), dtype=bool)
    table = np.zeros((n_nodes, width), dtype=bool)
    for node, goes_left in rows.items():
        is_categorical[node] = True
        table[node, : goes_left.size] = goes_left
    return is_categorical, table


def bitset_members(words: NDArray[np.integer], n_codes: int) -> NDArray[np.bool_]:
    """Membership of codes ``0 .. n_codes - 1`` in a bitset of 32-bit words
    (bit ``c % 32`` of word ``c // 32``)."""
    codes = np.arange(n_codes)
    words = np.asarray(words, dtype=np.uint64)
    inside = codes // 32 < words.size
    word = words[np.minimum(codes // 32, max(words.size - 1, 0))] if words.size else 0
    return inside & ((np.asarray(word) >> (codes % 32).astype(np.uint64)) & 1).astype(
        bool
    )
