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

__all__ = ["bootstrap_counts", "bootstrap_indices", "subsample_masks"]

# scikit-learn's RAND_R_MAX: each tree draws one seed below it when it is fitted.
_RAND_R_MAX = 2**31 - 1


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
        ``ExtraTreesClassifier``/``Regressor`` fitted with bootstrap), bagged
        trees (``BaggingClassifier``/``Regressor``: their drawn samples), or
        gradient boosting with ``subsample < 1`` (its in-bag masks).
    n_samples : int
        Rows of the training data given; must be the rows the model was fitted on.

    Returns
    -------
    ndarray of shape (n_trees, n_samples), dtype int64
        Zero marks a row out of that tree's bag.
    """
    estimators = getattr(model, "estimators_", None)
    if hasattr(model, "subsample") and estimators is not None:
        return subsample_masks(model, n_samples).astype(np.int64)
    if hasattr(model, "estimators_features_") and estimators is not None:
        return _bagged_counts(model, n_samples)
    if not getattr(model, "bootstrap", False) or estimators is None:
        raise UnsupportedModelError(
            "Out-of-bag rows exist only for a scikit-learn forest fitted with "
            f"bootstrap=True; got {type(model).__name__}"
            f"{'' if estimators is None else ' with bootstrap=False'}.  Give "
            "held-out data instead (oob=False), or `in_bag` counts of your own."
        )
    _check_fitted_rows(model, n_samples)
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


def _check_fitted_rows(model: Any, n_samples: int) -> None:
    fitted_rows = getattr(model, "_n_samples", None)
    if fitted_rows is not None and int(fitted_rows) != n_samples:
        raise InputError(
            "Out-of-bag importance needs the training data the forest was fitted "
            f"on; expected {int(fitted_rows)} rows, got {n_samples}."
        )


def _bagged_counts(model: Any, n_samples: int) -> NDArray[np.int64]:
    """In-bag counts of bagged trees, from the samples scikit-learn draws again
    (``estimators_samples_``: each tree is fitted on every row, weighted by
    how often the row was drawn)."""
    _check_fitted_rows(model, n_samples)
    counts = np.stack(
        [
            np.bincount(np.asarray(drawn), minlength=n_samples)
            for drawn in model.estimators_samples_
        ]
    ).astype(np.int64)
    if (counts > 0).all():
        raise UnsupportedModelError(
            f"Every tree of this {type(model).__name__} was fitted on every row "
            "(bootstrap=False, max_samples=1.0), so no row is out of bag; give "
            "held-out data instead (oob=False)."
        )
    return counts


def subsample_masks(model: Any, n_samples: int) -> NDArray[np.bool_]:
    """In-bag rows of every stage tree of scikit-learn gradient boosting.

    With ``subsample < 1`` each stage fits its trees on ``int(subsample *
    n_samples)`` rows drawn without replacement from the model's
    ``RandomState(random_state)``: ``uniform(size=n_samples)`` and the rule
    ``u_i (n - i) < n_inbag - n_bagged`` (``_random_sample_mask``), after which
    each of the stage's trees draws one seed from the same stream when it is fitted.
    The stream is replayed here.

    Parameters
    ----------
    model : fitted GradientBoostingClassifier or GradientBoostingRegressor
        With an integer ``random_state``, ``subsample < 1`` and no early stopping.
    n_samples : int
        Rows of the training data.

    Returns
    -------
    ndarray of shape (n_trees, n_samples), dtype bool
        True for the rows each tree was fitted on, trees in stage order.
    """
    subsample = float(getattr(model, "subsample", 1.0))
    seed = getattr(model, "random_state", None)
    if subsample >= 1.0:
        raise UnsupportedModelError(
            "Gradient boosting has out-of-bag rows only with subsample < 1; got "
            f"subsample={subsample}.  Give held-out data instead (oob=False)."
        )
    if not isinstance(seed, Integral) or isinstance(seed, bool):
        raise UnsupportedModelError(
            "The subsamples of gradient boosting can be drawn again only from an "
            f"integer random_state; got random_state={seed!r}."
        )
    if getattr(model, "n_iter_no_change", None) is not None:
        raise UnsupportedModelError(
            "Gradient boosting fitted with n_iter_no_change holds out a validation "
            "split first; expected n_iter_no_change=None for out-of-bag rows."
        )
    estimators = np.asarray(model.estimators_)
    n_stages, per_stage = estimators.shape
    n_inbag = max(1, int(subsample * n_samples))
    random_state = np.random.RandomState(int(seed))
    masks = np.zeros((n_stages * per_stage, n_samples), dtype=bool)
    steps = np.arange(n_samples, 0, -1, dtype=np.float64)  # n - i
    for stage in range(n_stages):
        u = random_state.uniform(size=n_samples)
        mask = _mask_from_uniform(u, steps, n_inbag)
        masks[stage * per_stage : (stage + 1) * per_stage] = mask
        for _ in range(per_stage):
            random_state.randint(0, _RAND_R_MAX)
    return masks


def _mask_from_uniform(
    u: NDArray[np.float64], steps: NDArray[np.float64], n_inbag: int
) -> NDArray[np.bool_]:
    """scikit-learn's ``_random_sample_mask`` rule for given uniforms.

    Row ``i`` is taken when ``u_i (n - i) < n_inbag - n_taken`` (selection
    sampling): each decision depends on the count taken before it, so this is a
    loop over the rows, once per stage (not on the path of the trees' nodes).
    """
    mask = np.zeros(u.size, dtype=bool)
    taken = 0
    for i, (ui, step) in enumerate(zip(u.tolist(), steps.tolist())):
        if ui * step < n_inbag - taken:
            mask[i] = True
            taken += 1
    return mask
