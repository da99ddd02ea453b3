"""Percentile bootstrap intervals for feature importances.

Every importance treelens computes is an average over units that can be
resampled: the trees of a forest (MDI, held-out MDI, debiased MDI), the repeats
of a permutation importance, and for debiased MDI also the evaluation rows.
One replicate draws the units with replacement and recomputes the average; the
interval is the pair of ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
quantiles of the replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._exceptions import InputError

__all__ = ["DEFAULT_N_BOOTSTRAP", "bootstrap_interval", "check_interval_options"]

#: Replicates drawn when the caller does not say.
DEFAULT_N_BOOTSTRAP = 200

# Replicates whose row multiplicities are drawn at once (bounds the temporary
# (replicates, rows) array).
_ROW_BATCH_CELLS = 4_000_000


def check_interval_options(n_bootstrap: int, confidence: float) -> None:
    """Raise unless ``n_bootstrap`` and ``confidence`` are usable."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise InputError(
            f"`n_bootstrap` must be a non-negative integer; got {n_bootstrap!r}."
        )
    if n_bootstrap < 0:
        raise InputError(f"`n_bootstrap` must be non-negative; got {n_bootstrap}.")
    if not 0.0 < float(confidence) < 1.0:
        raise InputError(
            f"`confidence` must be strictly between 0 and 1; got {confidence!r}."
        )


def bootstrap_interval(
    per_unit: NDArray[np.float64],
    index: list[str],
    *,
    normalize: bool = False,
    row_contributions: NDArray[np.float64] | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> pd.DataFrame | None:
    r"""Percentile bootstrap interval of the mean of ``per_unit`` over its rows.

    Parameters
    ----------
    per_unit : ndarray of shape (n_units, n_features)
        One row per resampled unit (tree or repeat); the importance is the mean
        of the rows.
    index : list of str
        Feature names, the index of the result.
    normalize : bool, default=False
        Divide each replicate by its sum when positive, as MDI normalizes.
    row_contributions : ndarray of shape (n_rows, n_features), optional
        Each evaluation row's part of the importance (the importance is their
        sum).  When given, every replicate also draws the rows with
        replacement (multiplicities :math:`m_i`) and adds
        :math:`\sum_i (m_i - 1) c_i`: a bootstrap over trees and rows at once.
    n_bootstrap : int, default=200
        Replicates; 0 gives None.
    confidence : float, default=0.95
    random_state : int or None, default=0

    Returns
    -------
    pandas.DataFrame of shape (n_features, 2) or None
        Columns ``low`` and ``high``; None without units or replicates.
    """
    per_unit = np.asarray(per_unit, dtype=np.float64)
    n_units = per_unit.shape[0]
    if n_bootstrap == 0 or n_units == 0:
        return None
    rng = np.random.default_rng(random_state)
    draws = rng.integers(0, n_units, size=(n_bootstrap, n_units))
    # Mean of the drawn rows, replicate by replicate, without a
    # (replicates, units, features) temporary: counts of each unit per replicate.
    counts = np.zeros((n_bootstrap, n_units))
    np.add.at(counts, (np.arange(n_bootstrap)[:, np.newaxis], draws), 1.0)
    replicates = counts @ per_unit / n_units
    if row_contributions is not None and row_contributions.shape[0]:
        replicates += _row_deviations(row_contributions, n_bootstrap, rng)
    if normalize:
        totals = replicates.sum(axis=1, keepdims=True)
        replicates = np.divide(
            replicates, totals, out=replicates.copy(), where=totals > 0
        )
    alpha = (1.0 - float(confidence)) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return pd.DataFrame({"low": low, "high": high}, index=pd.Index(index))


def _row_deviations(
    contributions: NDArray[np.float64], n_bootstrap: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """:math:`\\sum_i (m_i - 1) c_i` for multinomial row multiplicities."""
    n_rows = contributions.shape[0]
    out = np.empty((n_bootstrap, contributions.shape[1]))
    batch = max(1, _ROW_BATCH_CELLS // max(n_rows, 1))
    for start in range(0, n_bootstrap, batch):
        size = min(batch, n_bootstrap - start)
        # Rows drawn with replacement; their counts are multinomial multiplicities.
        drawn = rng.integers(0, n_rows, size=(size, n_rows))
        drawn += (np.arange(size) * n_rows)[:, np.newaxis]
        multiplicities = np.bincount(drawn.ravel(), minlength=size * n_rows)
        multiplicities = multiplicities.reshape(size, n_rows).astype(np.float64)
        out[start : start + size] = (multiplicities - 1.0) @ contributions
    return out
