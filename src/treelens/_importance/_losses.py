"""Negative gradients of scikit-learn's gradient-boosting losses.

Each stage tree of a gradient-boosting model is a regression tree fitted on the
negative gradient of the loss at the raw prediction of the stages before it (the
"pseudo-residuals").  Replaying a model's training on data needs exactly the
formulas scikit-learn uses (``sklearn._loss``), reproduced here in numpy.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, softmax

from .._exceptions import UnsupportedModelError

__all__ = ["BOOSTING_LOSSES", "negative_gradient"]

#: Losses whose pseudo-residuals :func:`negative_gradient` computes.
BOOSTING_LOSSES = (
    "absolute_error",
    "exponential",
    "huber",
    "log_loss",
    "quantile",
    "squared_error",
)


def _huber_delta(
    y: NDArray[np.float64],
    raw: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    alpha: float,
) -> float:
    # scikit-learn's own (private) helper, as its training calls it, so that the
    # replay reproduces each stage's delta to the bit.
    from sklearn.utils.stats import _weighted_percentile

    return float(_weighted_percentile(np.abs(y - raw), sample_weight, 100 * alpha))


def negative_gradient(
    loss: str,
    y: NDArray[np.float64],
    raw: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    *,
    alpha: float | None = None,
) -> NDArray[np.float64]:
    """Pseudo-residuals ``-d loss / d raw`` at the current raw predictions.

    Parameters
    ----------
    loss : str
        One of :data:`BOOSTING_LOSSES`.
    y : ndarray of shape (n_samples,)
        Targets; for classifiers the index of each sample's class.
    raw : ndarray of shape (n_samples, n_outputs)
        Raw predictions of the stages fitted so far.
    sample_weight : ndarray of shape (n_samples,)
        Used only by the Huber loss, whose ``delta`` is the weighted
        ``alpha``-quantile of the absolute residuals at each stage.
    alpha : float, optional
        Quantile of the ``"huber"`` and ``"quantile"`` losses.

    Returns
    -------
    negative_gradient : ndarray of shape (n_samples, n_outputs)
    """
    if loss == "log_loss" and raw.shape[1] > 1:
        onehot = np.arange(raw.shape[1])[np.newaxis, :] == y[:, np.newaxis]
        return onehot - softmax(raw, axis=1)
    r = raw[:, 0]
    if loss == "squared_error":
        out = y - r
    elif loss == "absolute_error":
        out = np.where(r > y, -1.0, 1.0)
    elif loss == "quantile":
        assert alpha is not None
        out = np.where(y >= r, alpha, alpha - 1.0)
    elif loss == "huber":
        assert alpha is not None
        delta = _huber_delta(y, r, sample_weight, alpha)
        residual = r - y
        gradient = np.where(
            np.abs(residual) <= delta, residual, np.where(residual >= 0, delta, -delta)
        )
        out = -gradient
    elif loss == "log_loss":
        out = y - expit(r)
    elif loss == "exponential":
        exp_raw = np.exp(r)
        out = y / exp_raw - (1.0 - y) * exp_raw
    else:
        raise UnsupportedModelError(
            f"Cannot replay gradient boosting with loss {loss!r}; expected one of "
            f"{list(BOOSTING_LOSSES)}."
        )
    return out[:, np.newaxis]
