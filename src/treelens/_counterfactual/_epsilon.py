"""How far past a threshold a counterfactual moves, and landing safely after a cast.

Shared by :func:`~treelens.feature_tweak` and :func:`~treelens.optimal_counterfactual`.

By default (``epsilon=0``) feature tweaking moves a value to the *next
representable value* past the threshold in the dtype the model compares in
(float32 for scikit-learn, XGBoost and CatBoost, float64 for LightGBM and
scikit-learn's histogram boosting).  The optimal search goes further: its cells
hold every float64 value, routed as the model's cast routes it
(:func:`~treelens._core._float64.float64_forest`), so a moved value lands on the
double nearest the threshold that still goes past it, and its least cost is the
least over all valid float64 points.  A robustness margin is a
separate, explicit request (:class:`Margin`, resolved by :func:`resolve_margin`):
every mutable feature then sits at least its margin away from every threshold,
so no perturbation within the margin changes a leaf.

A tree sends ``x`` left when ``x.astype(input_dtype) <= threshold`` (scikit-learn
casts to float32, thresholds are float64).  A value meant to be just above a
threshold can round back onto it after the cast, so:

- :func:`resolve_epsilon` makes ``"auto"`` margins at least a few float32 (or
  float64) spacings wide at the feature's largest threshold;
- :func:`land_inside` moves any value whose cast would leave its intended box
  ``(lower, upper]`` to the nearest value of ``input_dtype`` inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest

__all__ = [
    "AUTO_FRACTION",
    "Margin",
    "ResolvedMargin",
    "land_inside",
    "resolve_epsilon",
    "resolve_margin",
    "split_thresholds",
]

#: ``"auto"`` epsilon as a fraction of each feature's spread.
AUTO_FRACTION = 0.01
# Spacings of input_dtype at the largest threshold that the margin always exceeds.
_SAFETY_SPACINGS = 4.0


def split_thresholds(forest: Forest) -> list[NDArray[np.float64]]:
    """Sorted distinct thresholds of every feature over all trees."""
    flat = forest._flat
    inner = ~flat["is_leaf"]
    if "is_categorical" in flat:
        inner &= ~flat["is_categorical"]  # their threshold is NaN and unused
    feature, threshold = flat["feature"][inner], flat["threshold"][inner]
    return [np.unique(threshold[feature == j]) for j in range(forest.n_features)]


def _floor(
    forest: Forest, thresholds: list[NDArray[np.float64]]
) -> NDArray[np.float64]:
    dtype = forest.input_dtype
    largest = np.array([np.abs(t).max() if t.size else 0.0 for t in thresholds])
    spacing = np.spacing(largest.astype(dtype)).astype(np.float64)
    return _SAFETY_SPACINGS * spacing


def resolve_epsilon(
    forest: Forest, epsilon: Any, reference: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Per-feature margin past thresholds, shape (n_features,).

    Parameters
    ----------
    forest : Forest
    epsilon : float, array-like of shape (n_features,) or "auto"
        A non-negative scalar for every feature (``0``: the next representable
        value past the threshold), one value per feature, or ``"auto"``: ``0.01`` times the feature's standard deviation in
        ``reference``, or without reference the range of its thresholds (the
        largest absolute threshold when it has one; 0 for features never split),
        and never less than 4 spacings of ``input_dtype`` at its largest
        threshold, so that ``threshold +- epsilon`` lands on the intended side
        after the cast.
    reference : ndarray of shape (n_reference, n_features), optional

    Returns
    -------
    ndarray of shape (n_features,)

    Raises
    ------
    InputError
        On a negative or non-finite epsilon, a wrong length, or an unknown string.
    """
    n = forest.n_features
    if isinstance(epsilon, str):
        if epsilon != "auto":
            raise InputError(
                "`epsilon` must be a non-negative number, one per feature, or "
                f"'auto'; got {epsilon!r}."
            )
        # Splits that only separate missing values sit at an infinite threshold;
        # they say nothing about a feature's scale.
        thresholds = [t[np.isfinite(t)] for t in split_thresholds(forest)]
        spread = _spread(forest, reference)
        return np.maximum(AUTO_FRACTION * spread, _floor(forest, thresholds))
    try:
        out = np.asarray(epsilon, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            "`epsilon` must be a non-negative number, one per feature, or 'auto'; "
            f"got {epsilon!r}."
        ) from exc
    if out.ndim == 0:
        out = np.full(n, float(out))
    if out.shape != (n,):
        raise InputError(
            f"`epsilon` must be a scalar or have one value per feature, shape ({n},); "
            f"got shape {out.shape}."
        )
    if not np.isfinite(out).all() or (out < 0).any():
        raise InputError(
            f"`epsilon` must be finite and non-negative; got {out.tolist()}."
        )
    return out


def land_inside(
    values: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    dtype: Any,
    floor: NDArray[np.float64] | None = None,
    ceil: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Make every value land in its box ``(lower, upper]`` after the cast to ``dtype``.

    Values whose cast already lands inside are returned unchanged (in float64);
    the others become the nearest value ``v`` of ``dtype`` with ``v`` in the box
    and, when given, ``floor <= v <= ceil`` (a closed range on the value itself,
    such as a feasible interval).  Boxes holding no such value are left as they
    are (the model's own check then rejects the candidate).

    Parameters
    ----------
    values, lower, upper : ndarray of the same shape
        ``lower`` is exclusive, ``upper`` inclusive (``-inf`` / ``inf`` allowed).
    dtype : numpy dtype
        The forest's ``input_dtype``.
    floor, ceil : ndarray of the same shape, optional
        Closed range the returned values must also respect.

    Returns
    -------
    ndarray of the same shape, float64
    """
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = values.astype(dtype).astype(np.float64)
    too_low = cast <= lower
    too_high = cast > upper
    if not (too_low.any() or too_high.any()):
        return values
    out = values.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        lo = _above(lower[too_low], dtype, strict=True)
        if floor is not None:
            lo = np.maximum(lo, _above(floor[too_low], dtype, strict=False))
        hi = _below(upper[too_high], dtype)
        if ceil is not None:
            hi = np.minimum(hi, _below(ceil[too_high], dtype))
    out[too_low] = lo
    out[too_high] = hi
    return out


def _above(
    bound: NDArray[np.float64], dtype: np.dtype, *, strict: bool
) -> NDArray[np.float64]:
    """Least value of ``dtype`` above ``bound`` (``>`` if strict, else ``>=``), as float64."""
    near = bound.astype(dtype)
    back = near.astype(np.float64)
    step = (back <= bound) if strict else (back < bound)
    return np.where(step, np.nextafter(near, dtype.type(np.inf)), near).astype(
        np.float64
    )


def _below(bound: NDArray[np.float64], dtype: np.dtype) -> NDArray[np.float64]:
    """Greatest value of ``dtype`` at most ``bound``, as float64."""
    near = bound.astype(dtype)
    step = near.astype(np.float64) > bound
    return np.where(step, np.nextafter(near, dtype.type(-np.inf)), near).astype(
        np.float64
    )


def _spread(
    forest: Forest, reference: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Each feature's standard deviation in ``reference``, else its threshold range."""
    thresholds = [t[np.isfinite(t)] for t in split_thresholds(forest)]
    if reference is not None:
        spread = np.nanstd(reference, axis=0)
    else:
        spread = np.array(
            [
                (t[-1] - t[0]) if t.size > 1 else (abs(t[0]) if t.size else 0.0)
                for t in thresholds
            ]
        )
    return np.where(np.isfinite(spread), spread, 0.0)


@dataclass(frozen=True)
class Margin:
    """A robustness margin for counterfactuals (none by default).

    The least-cost counterfactual sits one double past the thresholds it
    crosses (as the model reads it after its cast); a margin asks for one that stays valid when the point
    moves a little.

    Parameters
    ----------
    features : float or array-like of shape (n_features,), default=0.0
        Distance in feature units that every mutable feature of the
        counterfactual keeps from every split threshold, so that moving each
        feature by up to this much (all at once) reaches the same leaves.
    fraction : float, default=0.0
        The same distance as a fraction of each feature's spread (standard
        deviation in ``reference``, else the range of its thresholds).  With
        both, each feature takes the larger.
    vote : float, default=0.0
        Least lead of the target in the model's output: for forest classifiers
        in averaged class probability (the target's probability exceeds every
        other class's by at least ``vote``), for boosted classifiers in raw
        score, for regressors in predicted value (the prediction stays ``vote``
        inside the target range; for regressors with a log link, the raw score,
        the log of the prediction, stays ``vote`` inside the log of the range).

    Examples
    --------
    >>> from treelens import Margin
    >>> Margin(fraction=0.01, vote=0.05)
    Margin(features=0.0, fraction=0.01, vote=0.05)
    """

    features: float | Any = 0.0
    fraction: float = 0.0
    vote: float = 0.0


@dataclass(frozen=True)
class ResolvedMargin:
    """A margin per feature (feature units) and a vote lead (model units)."""

    features: NDArray[np.float64]
    vote: float

    @property
    def any(self) -> bool:
        return bool((self.features > 0).any() or self.vote > 0)


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise InputError(
            f"`margin` {name} must be a finite non-negative number; got {value!r}."
        )
    if not np.isfinite(value) or value < 0:
        raise InputError(
            f"`margin` {name} must be a finite non-negative number; got {value!r}."
        )
    return float(value)


def resolve_margin(
    forest: Forest, margin: Any, reference: NDArray[np.float64] | None = None
) -> ResolvedMargin:
    """Check a user's ``margin`` (None, a number or array in feature units, or a
    :class:`Margin`) and resolve it per feature.

    Raises
    ------
    InputError
        On a negative or non-finite margin, a wrong length, or another type.
    """
    n = forest.n_features
    if margin is None:
        return ResolvedMargin(np.zeros(n), 0.0)
    if not isinstance(margin, Margin):
        margin = Margin(features=margin)
    try:
        features = np.asarray(margin.features, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(
            "`margin` must be None, a non-negative number or one per feature (feature "
            f"units), or a treelens.Margin; got {margin.features!r}."
        ) from exc
    if features.ndim == 0:
        features = np.full(n, float(features))
    if features.shape != (n,):
        raise InputError(
            f"`margin` in feature units must be a scalar or one value per feature, "
            f"shape ({n},); got shape {features.shape}."
        )
    if not np.isfinite(features).all() or (features < 0).any():
        raise InputError(
            "`margin` in feature units must be finite and non-negative; got "
            f"{features.tolist()}."
        )
    fraction = _non_negative("fraction", margin.fraction)
    vote = _non_negative("vote", margin.vote)
    if fraction > 0:
        features = np.maximum(features, fraction * _spread(forest, reference))
    return ResolvedMargin(features, vote)
