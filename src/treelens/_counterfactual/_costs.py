"""Costs of moving a row ``x`` to a counterfactual ``x'``.

Shared by :func:`~treelens.feature_tweak` and :func:`~treelens.optimal_counterfactual`.
:func:`resolve_cost` turns the user's ``cost`` into a :class:`Cost`.  With
``d = x' - x`` and per-feature weights ``w`` (1 unless given):

========================  ===================================================
``"auto"`` (the default)  ``"mad"`` when reference data is given (scale-free:
                          each feature's change in its own typical spread),
                          else ``"l1"``; the result's ``cost_name_`` says which
``"l1"``                  ``sum_j w_j |d_j|``
``"l2"``                  ``sqrt(sum_j (w_j d_j)^2)``
``"l0"``                  ``sum_j w_j [d_j != 0]`` (number of changed features)
``"linf"``                ``max_j w_j |d_j|``
``"cosine"``              ``1 - <x, x'> / (|x| |x'|)`` (0 when ``x' == x``;
                          1 when a norm is 0)
``"mad"``                 L1 with ``w_j = 1 / MAD_j``, the median absolute
                          deviation of feature ``j`` in ``reference``
                          (its standard deviation when the MAD is 0, else 1)
array of shape (n_f,)     weighted L1 with these weights
``{"norm": n,             weighted ``n`` (one of l1, l2, l0, linf); weights an
"weights": w}``           array or a mapping feature -> weight (others 1)
callable                  ``cost(x, candidates) -> (n_candidates,)`` with ``x``
                          of shape (n_features,) and candidates of shape
                          (n_candidates, n_features)
========================  ===================================================

Every cost but ``"cosine"`` and callables is *separable*: ``Cost.norm`` and
``Cost.weights`` describe it, :meth:`Cost.terms` gives the per-feature terms and
:meth:`Cost.combine` folds them (sum; sqrt of the sum for l2; max for linf), so a
linear program can use the terms directly (for l2 minimizing the sum of squared
terms has the same minimizer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest

__all__ = ["Cost", "is_separable", "resolve_cost"]

Norm = Literal["l1", "l2", "l0", "linf"]
_NORMS = ("l1", "l2", "l0", "linf")
CostFunction = Callable[[NDArray[np.float64], NDArray[np.float64]], Any]


@dataclass(frozen=True, eq=False)
class Cost:
    """A resolved cost.

    Attributes
    ----------
    name : str
        ``"l1"``, ``"l2"``, ``"l0"``, ``"linf"``, ``"cosine"``, ``"mad"``,
        ``"weighted_<norm>"`` or ``"callable"``.
    norm : {"l1", "l2", "l0", "linf"} or None
        The separable norm (None for cosine and callables).
    weights : ndarray of shape (n_features,)
        Per-feature weights of the separable norm (ones otherwise).
    function : callable or None
        The user's callable.
    """

    name: str
    norm: Norm | None
    weights: NDArray[np.float64]
    function: CostFunction | None = None

    @property
    def separable(self) -> bool:
        """Whether the cost is a weighted norm of ``x' - x``."""
        return self.norm is not None

    def terms(self, delta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per-feature terms of a separable cost, same shape as ``delta``.

        ``w|d|`` for l1 and linf, ``(w d)^2`` for l2, ``w [d != 0]`` for l0.
        """
        if self.norm == "l2":
            return (self.weights * delta) ** 2
        if self.norm == "l0":
            return self.weights * (delta != 0)
        return self.weights * np.abs(delta)

    def terms_of(
        self, feature: NDArray[np.intp], delta: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Separable terms of scattered changes: feature ``feature[i]`` moved by ``delta[i]``."""
        weights = self.weights[feature]
        if self.norm == "l2":
            return (weights * delta) ** 2
        if self.norm == "l0":
            return weights * (delta != 0)
        return weights * np.abs(delta)

    def combine(self, terms: NDArray[np.float64]) -> NDArray[np.float64]:
        """Fold per-feature terms (last axis) into the cost."""
        if self.norm == "l2":
            return np.sqrt(terms.sum(axis=-1))
        if self.norm == "linf":
            return terms.max(axis=-1, initial=0.0)
        return terms.sum(axis=-1)

    def many(
        self, X: NDArray[np.float64], candidates: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Cost of each candidate from its own row, vectorized over both.

        Parameters
        ----------
        X : ndarray of shape (k, n_features)
            The original row of each candidate (rows may repeat).
        candidates : ndarray of shape (k, n_features)

        Returns
        -------
        ndarray of shape (k,)
        """
        if self.function is not None:
            raise TypeError("Callable costs are evaluated per row with __call__.")
        if self.norm is not None:
            return self.combine(self.terms(candidates - X))
        dot = np.einsum("ij,ij->i", X, candidates)
        norms = np.linalg.norm(X, axis=1) * np.linalg.norm(candidates, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(norms > 0, 1.0 - dot / np.where(norms > 0, norms, 1.0), 1.0)
        out = np.maximum(out, 0.0)
        return np.where((candidates == X).all(axis=1), 0.0, out)

    def __call__(
        self, x: NDArray[np.float64], candidates: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Cost of moving one row ``x`` (n_features,) to each of ``candidates``.

        Returns
        -------
        ndarray of shape (n_candidates,)

        Raises
        ------
        InputError
            If a callable cost returns anything but ``n_candidates`` real numbers.
        """
        candidates = np.atleast_2d(candidates)
        if self.function is None:
            return self.many(np.broadcast_to(x, candidates.shape), candidates)
        raw = self.function(x.copy(), candidates.copy())
        try:
            out = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"A cost callable must return numbers; got {type(raw).__name__}."
            ) from exc
        if out.shape != (candidates.shape[0],):
            raise InputError(
                "A cost callable must return one cost per candidate, of shape "
                f"({candidates.shape[0]},); got shape {out.shape}."
            )
        if np.isnan(out).any():
            raise InputError("A cost callable returned NaN; expected real numbers.")
        return out


def resolve_cost(
    forest: Forest, cost: Any, reference: NDArray[np.float64] | None = None
) -> Cost:
    """Check the user's ``cost`` and resolve it (see the module docstring).

    Parameters
    ----------
    forest : Forest
    cost : str, array-like, mapping or callable
    reference : ndarray of shape (n_reference, n_features), optional
        Reference data, needed by ``"mad"``.

    Returns
    -------
    Cost

    Raises
    ------
    InputError
        On an unknown name, weights of the wrong length or negative, or ``"mad"``
        without reference data.
    """
    n = forest.n_features
    ones = np.ones(n)
    if callable(cost):
        return Cost(name="callable", norm=None, weights=ones, function=cost)
    if isinstance(cost, str):
        if cost == "auto":
            cost = "l1" if reference is None else "mad"
        if cost in _NORMS:
            return Cost(name=cost, norm=cost, weights=ones)
        if cost == "cosine":
            return Cost(name="cosine", norm=None, weights=ones)
        if cost == "mad":
            if reference is None:
                raise InputError(
                    "cost='mad' scales each feature by its median absolute deviation "
                    "in `reference`; expected reference data, got None."
                )
            return Cost(name="mad", norm="l1", weights=mad_weights(reference))
        raise InputError(
            "Unknown cost; expected one of 'auto', 'l1', 'l2', 'l0', 'linf', 'cosine', "
            f"'mad', per-feature weights or a callable, got {cost!r}."
        )
    if isinstance(cost, Mapping):
        norm = cost.get("norm", "l1")
        if norm not in _NORMS or set(cost) - {"norm", "weights"}:
            raise InputError(
                "A cost mapping must have keys 'norm' (one of 'l1', 'l2', 'l0', "
                f"'linf') and 'weights'; got {dict(cost)!r}."
            )
        weights = _weights(forest, cost.get("weights", ones))
        return Cost(name=f"weighted_{norm}", norm=norm, weights=weights)
    return Cost(name="weighted_l1", norm="l1", weights=_weights(forest, cost))


def _weights(forest: Forest, weights: Any) -> NDArray[np.float64]:
    n = forest.n_features
    if isinstance(weights, Mapping):
        from .._core._validation import feature_index

        out = np.ones(n)
        for key, w in weights.items():
            out[feature_index(forest, key)] = float(w)
    else:
        try:
            out = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"Cost weights must be numbers, one per feature; got {weights!r}."
            ) from exc
        if out.shape != (n,):
            raise InputError(
                f"Cost weights must have one entry per feature, shape ({n},); got "
                f"shape {out.shape}."
            )
    if not np.isfinite(out).all() or (out < 0).any():
        raise InputError(
            f"Cost weights must be finite and non-negative; got {out.tolist()}."
        )
    return out


def mad_weights(reference: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 / MAD`` per feature (``1 / std`` where the MAD is 0, else 1).

    Missing values (NaN) are left out; a feature with no value at all weighs 1.
    """
    reference = np.asarray(reference, dtype=np.float64)
    scale = np.ones(reference.shape[1])
    # numpy warns on a column of NaN only: such columns keep the scale 1.
    present = ~np.isnan(reference).all(axis=0)
    values = reference[:, present]
    median = np.nanmedian(values, axis=0)
    mad = np.nanmedian(np.abs(values - median), axis=0)
    std = np.nanstd(values, axis=0)
    scale[present] = np.where(mad > 0, mad, np.where(std > 0, std, 1.0))
    return 1.0 / scale


def is_separable(cost: Any) -> bool:
    """Whether a user's ``cost`` (before resolution) is a sum of per-feature terms:
    everything but ``"cosine"`` and callables."""
    return not (callable(cost) or (isinstance(cost, str) and cost == "cosine"))
