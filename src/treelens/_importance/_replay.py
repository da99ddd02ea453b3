"""Replaying a model's training rules on data: the one place for each rule.

Node statistics computed in one pass (:func:`~treelens.node_statistics`) and from
summed per-chunk node sums (:mod:`._streaming`, Dask, Parquet parts) both weigh
rows and replay boosting stages through the functions here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from ._losses import BOOSTING_LOSSES, negative_gradient

__all__ = [
    "CLASSIFICATION_CRITERIA",
    "MERGEABLE_CRITERIA",
    "REGRESSION_CRITERIA",
    "check_replayable",
    "class_factors",
    "fitted_weights",
    "refuse_isolation",
    "row_class_weights",
    "stage_residuals",
]

CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss")
REGRESSION_CRITERIA = (
    "squared_error",
    "friedman_mse",
    "absolute_error",
    "poisson",
)
#: Criteria whose node statistics are sums over rows, so chunks add up exactly.
MERGEABLE_CRITERIA = frozenset(
    {"gini", "entropy", "log_loss", "squared_error", "friedman_mse", "poisson"}
)


def refuse_isolation(forest: Forest, what: str) -> None:
    """Refuse an IsolationForest's Forest for ``what`` (an importance of
    impurity or of a score against a target).

    Raises
    ------
    UnsupportedModelError
        When ``forest`` is an IsolationForest's (link ``"isolation"``).
    """
    if forest.link == "isolation":
        raise UnsupportedModelError(
            f"{what} is not defined for {forest.source or 'an IsolationForest'}: "
            "its trees split at random on rows without a target, so no split "
            "decreases an impurity and no prediction is scored against y; "
            "expected a classifier or regressor. To rank the columns by what "
            "they add to the anomaly score, use treelens.shap_importance "
            "(treelens importance --data FILE --shap)."
        )


def check_replayable(forest: Forest, target: NDArray[Any]) -> None:
    """Refuse a model whose statistics cannot be recomputed from ``target``.

    Raises
    ------
    UnsupportedModelError
        For a boosting loss or a tree criterion treelens cannot replay.
    InputError
        For negative targets of a poisson tree.
    """
    refuse_isolation(forest, "Importance replayed on data")
    if forest.kind == "boosting":
        if forest.link == "samme":
            raise UnsupportedModelError(
                f"Cannot replay the stages of {forest.source or 'AdaBoost'} on "
                "other rows: each tree was fitted on rows reweighted by the "
                "errors of the trees before it; expected the model's own "
                "statistics (no X and y) or permutation importance."
            )
        if forest.loss not in BOOSTING_LOSSES:
            raise UnsupportedModelError(
                f"Cannot replay the stages of {forest.source or 'this model'} on "
                f"other rows: expected one of the losses {list(BOOSTING_LOSSES)}, "
                + (f"got {forest.loss!r}." if forest.loss else "got another loss.")
            )
        return
    known = CLASSIFICATION_CRITERIA if forest.is_classifier else REGRESSION_CRITERIA
    if forest.criterion not in known:
        raise UnsupportedModelError(
            f"Cannot recompute impurities under criterion {forest.criterion!r}; "
            f"expected one of {list(known)}."
        )
    if forest.criterion == "poisson" and np.any(target < 0):
        raise InputError(
            "y must be non-negative for a model with the poisson criterion; got "
            f"{float(target.min())}."
        )


def class_factors(
    forest: Forest, class_weights: NDArray[np.float64], class_rows: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Class weight of each class from the class totals of the whole data.

    ``"balanced"`` (and ``"balanced_subsample"``, equal on the whole sample) is
    ``total / (n_classes_present * class_total)``, where scikit-learn's forests
    total the sample weights of each class and its single trees count rows; a
    ``class_weight`` dict is applied as is.

    Parameters
    ----------
    forest : Forest
    class_weights : ndarray of shape (n_classes,)
        Sum of ``sample_weight`` over the rows of each class.
    class_rows : ndarray of shape (n_classes,)
        Rows of each class.

    Returns
    -------
    ndarray of shape (n_classes,)
    """
    n_classes = forest.n_classes
    class_weight = forest.class_weight
    if class_weight is None:
        return np.ones(n_classes)
    if isinstance(class_weight, str):
        totals = class_weights if forest.kind == "forest" else class_rows
        present = class_rows > 0
        factors = np.ones(n_classes)
        factors[present] = totals[present].sum() / (
            np.count_nonzero(present) * totals[present]
        )
        return factors
    classes = [] if forest.classes_ is None else forest.classes_.tolist()
    return np.array([float(class_weight.get(c, 1.0)) for c in classes])


def row_class_weights(
    forest: Forest, target: NDArray[np.intp], sample_weight: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The class weight of every row (see :func:`class_factors`)."""
    n = forest.n_classes
    factors = class_factors(
        forest,
        np.bincount(target, sample_weight, minlength=n).astype(np.float64),
        np.bincount(target, minlength=n).astype(np.float64),
    )
    return factors[target]


def fitted_weights(
    forest: Forest, target: NDArray[np.intp], sample_weight: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The weight every row had where the trees were grown: ``sample_weight``
    times its class weight (:func:`row_class_weights`) for a classifier that is
    not boosting (boosting trees fit residuals), else ``sample_weight``."""
    if forest.is_classifier and forest.kind != "boosting":
        return sample_weight * row_class_weights(forest, target, sample_weight)
    return sample_weight


def stage_residuals(
    forest: Forest,
    leaves: NDArray[np.intp],
    target: NDArray[Any],
    sample_weight: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The pseudo-residual each stage tree of a boosting Forest was fitted on.

    Each stage's trees see the negative gradient of the model's loss at the raw
    prediction of the stages before it (one column per class for multiclass);
    the raw prediction then advances by the model's own leaf values.

    Parameters
    ----------
    forest : Forest
        A boosting Forest.
    leaves : ndarray of shape (n_samples, n_trees)
        Leaf each row reaches in each tree.
    target : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    ndarray of shape (n_samples, n_trees)
    """
    n_outputs = forest.n_outputs
    y = target.astype(np.float64)
    raw = np.tile(forest.init_raw, (leaves.shape[0], 1))
    out = np.empty(leaves.shape)
    for start in range(0, forest.n_trees, n_outputs):
        stage = range(start, min(start + n_outputs, forest.n_trees))
        residual = negative_gradient(
            forest.loss, y, raw, sample_weight, alpha=forest.loss_alpha
        )
        for j in stage:
            out[:, j] = residual[:, int(forest.tree_output[j])]
        for j in stage:
            k = int(forest.tree_output[j])
            raw[:, k] += forest.learning_rate * forest.trees[j].value[leaves[:, j], 0]
    return out
