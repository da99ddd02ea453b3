"""Is this data the model's training data?  Replay node counts and compare.

A tree stores how many training rows reached each of its leaves
(``n_node_samples``, and ``weighted_n_node_samples`` counting a bootstrap
sample's repeats).  Routing the given rows through a few trees and counting them
per leaf gives the same numbers exactly when the rows are the training rows: a
score measured on them says how well the model fits, not how well it predicts.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest

__all__ = ["training_data_match"]

Match = Literal["training", "other", "unknown"]


def _bootstrap_weights(model: Any, n_rows: int, n_trees: int) -> list[Any] | None:
    """Each checked tree's bootstrap multiplicities, as scikit-learn draws them.

    None when the model is no scikit-learn bootstrap forest; an empty list entry
    can not occur: a list of ``n_trees`` arrays of length ``n_rows``.
    """
    if not getattr(model, "bootstrap", False) or not hasattr(model, "estimators_"):
        return None
    try:
        from sklearn.ensemble._forest import _generate_sample_indices
    except ImportError:  # the private helper moved: say "unknown", never guess
        return []
    n_boot = getattr(model, "_n_samples_bootstrap", None)
    if n_boot is None:
        return []
    weights = []
    for tree in model.estimators_[:n_trees]:
        try:
            drawn = _generate_sample_indices(tree.random_state, n_rows, n_boot)
        except TypeError:  # newer scikit-learn also takes the sample weights
            drawn = _generate_sample_indices(tree.random_state, n_rows, n_boot, None)
        weights.append(np.bincount(drawn, minlength=n_rows).astype(np.float64))
    return weights


def _leaf_counts(
    forest: Forest, leaves: NDArray[np.intp], t: int, weights: Any
) -> tuple[NDArray[Any], NDArray[Any]]:
    tree = forest.trees[t]
    is_leaf = tree.children_left == -1
    if weights is None:
        counts = np.bincount(leaves[:, t], minlength=tree.children_left.shape[0])
        return counts[is_leaf], tree.n_node_samples[is_leaf]
    counts = np.bincount(
        leaves[:, t], weights=weights, minlength=tree.children_left.shape[0]
    )
    return counts[is_leaf], tree.weighted_n_node_samples[is_leaf]


def training_data_match(model: Any, X: Any, *, n_trees: int = 3) -> Match:
    """Whether ``X`` holds exactly the rows ``model`` was fitted on.

    Parameters
    ----------
    model : fitted tree model or Forest
    X : array-like of shape (n_samples, n_features)
    n_trees : int, default=3
        Trees checked (the first ones); one mismatch decides.

    Returns
    -------
    {"training", "other", "unknown"}
        ``"training"`` when the rows counted per leaf equal the stored counts in
        every checked tree; ``"other"`` when they differ; ``"unknown"`` when the
        model stores no counts (XGBoost) or its bootstrap cannot be rebuilt.
    """
    forest = to_forest(model)
    checked = min(n_trees, forest.n_trees)
    if any((forest.trees[t].n_node_samples < 0).any() for t in range(checked)):
        return "unknown"
    array = forest.validate_X(X)
    weights = _bootstrap_weights(model, array.shape[0], checked)
    if weights is not None and len(weights) < checked:
        return "unknown"
    # Route through the checked trees only: a few trees of a large forest.
    first = dataclasses.replace(
        forest,
        trees=forest.trees[:checked],
        tree_output=forest.tree_output[:checked],
        tree_weight=forest.tree_weight[:checked],
        fitted_model=None,  # some of the model's trees only
    )
    leaves = first._apply(array)
    for t in range(checked):
        found, stored = _leaf_counts(
            forest, leaves, t, None if weights is None else weights[t]
        )
        if not np.allclose(found, stored, rtol=0, atol=1e-6):
            return "other"
    return "training"
