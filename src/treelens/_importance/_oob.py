"""The bootstrap samples of a fitted scikit-learn forest, drawn again from its seeds.

A scikit-learn forest fitted with ``bootstrap=True`` stores no bootstrap sample:
each tree keeps the integer seed (``estimator.random_state``) its sample was
drawn from.  :func:`bootstrap_indices` draws the sample again exactly as
scikit-learn does (``sklearn.ensemble._forest._generate_sample_indices``): a
``RandomState`` seeded with the tree's seed draws ``n_samples_bootstrap`` row
indices uniformly (``randint``), or in proportion to the fit's sample weights
(``choice(..., p=w / w.sum())``) when the forest was fitted with weights.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError, UnsupportedModelError

__all__ = ["bootstrap_counts", "bootstrap_indices"]


def bootstrap_indices(
    seed: int,
    n_samples: int,
    n_samples_bootstrap: int,
    sample_weight: NDArray[np.float64] | None = None,
) -> NDArray[np.int32]:
    """Row indices of one tree's bootstrap sample, as scikit-learn draws them.

    Parameters
    ----------
    seed : int
        The tree's ``random_state``.
    n_samples : int
        Rows of the training data.
    n_samples_bootstrap : int
        Rows drawn (``n_samples`` unless ``max_samples`` was set).
    sample_weight : ndarray of shape (n_samples,), optional
        The weights the forest was fitted with (times expanded class weights);
        rows are then drawn in proportion to them.

    Returns
    -------
    ndarray of shape (n_samples_bootstrap,), dtype int32
    """
    random_state = np.random.RandomState(seed)
    if sample_weight is None:
        drawn = random_state.randint(0, n_samples, n_samples_bootstrap)
    else:
        p = sample_weight / np.sum(sample_weight)
        drawn = random_state.choice(n_samples, n_samples_bootstrap, replace=True, p=p)
    return drawn.astype(np.int32)


def _n_samples_bootstrap(model: Any, n_samples: int) -> int:
    stored = getattr(model, "_n_samples_bootstrap", None)
    if isinstance(stored, Integral):
        return int(stored)
    max_samples = getattr(model, "max_samples", None)
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, Integral):
        return int(max_samples)
    if isinstance(max_samples, Real):
        return max(round(n_samples * float(max_samples)), 1)
    raise UnsupportedModelError(
        f"Cannot tell how many rows each tree of {type(model).__name__} drew; "
        f"expected max_samples None, an int or a float, got {max_samples!r}."
    )


def bootstrap_counts(model: Any, n_samples: int) -> NDArray[np.int64]:
    """How often each training row is in each tree's bootstrap sample.

    Parameters
    ----------
    model : fitted scikit-learn forest with ``bootstrap=True``
        (``RandomForestClassifier``, ``RandomForestRegressor``,
        ``ExtraTreesClassifier``/``Regressor`` fitted with bootstrap).
    n_samples : int
        Rows of the training data given; must be the rows the model was fitted on.

    Returns
    -------
    ndarray of shape (n_trees, n_samples), dtype int64
        Zero marks a row out of that tree's bag.
    """
    estimators = getattr(model, "estimators_", None)
    if not getattr(model, "bootstrap", False) or estimators is None:
        raise UnsupportedModelError(
            "Out-of-bag rows exist only for a scikit-learn forest fitted with "
            f"bootstrap=True; got {type(model).__name__}"
            f"{'' if estimators is None else ' with bootstrap=False'}.  Give "
            "held-out data instead (oob=False), or `in_bag` counts of your own."
        )
    fitted_rows = getattr(model, "_n_samples", None)
    if fitted_rows is not None and int(fitted_rows) != n_samples:
        raise InputError(
            "Out-of-bag importance needs the training data the forest was fitted "
            f"on; expected {int(fitted_rows)} rows, got {n_samples}."
        )
    sample_weight = getattr(model, "_sample_weight", None)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    n_boot = _n_samples_bootstrap(model, n_samples)
    counts = np.empty((len(estimators), n_samples), dtype=np.int64)
    for t, estimator in enumerate(estimators):
        drawn = bootstrap_indices(
            estimator.random_state, n_samples, n_boot, sample_weight
        )
        counts[t] = np.bincount(drawn, minlength=n_samples)
    return counts
