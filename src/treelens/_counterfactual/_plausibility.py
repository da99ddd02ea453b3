"""How typical a counterfactual is: leaf support and distance to the data.

- *Leaf support* of a point: the fewest rows that any tree's leaf reached by it
  held, counted by routing the reference data when it is given, else from the
  training counts the model stores (``n_node_samples``).  ``min_leaf_samples``
  asks every reached leaf to hold at least that many: in the exact search the
  leaves below it are removed from the program, so the answer is the least-cost
  counterfactual in well-supported leaves.
- *Distance to the nearest reference row*, under the result's cost (L1 in median
  absolute deviations when the cost is not separable).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._core._cache import derived, keep, kept
from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest
    from ._costs import Cost

__all__ = [
    "check_min_leaf_samples",
    "keep_support",
    "nearest_distance",
    "node_support",
    "point_support",
]

# Where a forest keeps the node support it was given (see keep_support).
_KEPT_SUPPORT = "given_node_support"
# Numbers (reference rows x counterfactuals x features) compared per block.
_BLOCK = 4_000_000


def check_min_leaf_samples(value: Any) -> int | None:
    """``None`` or a positive whole number.

    Raises
    ------
    InputError
        On anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(
            "`min_leaf_samples` must be None or a positive integer (rows each "
            f"reached leaf must hold); got {value!r}."
        )
    return int(value)


def node_support(
    forest: Forest, reference: NDArray[np.float64] | None
) -> NDArray[np.float64] | None:
    """Rows reaching each node of the forest's flat node array (read at its leaves).

    Counted by routing ``reference`` when given (its rows are counted at the
    leaves they reach; internal nodes count 0), else the stored training counts
    (every node); None when neither is known.  The counts of the last reference
    are kept with the forest (a call per row with the same reference routes it
    once), under a digest of its values; the array returned is read-only.
    """
    given = kept(forest, _KEPT_SUPPORT)
    if given is not None:
        return given
    offsets = forest._flat["offsets"]
    n_nodes = int(forest._flat["left"].size)
    if reference is not None:
        values = np.ascontiguousarray(reference, dtype=np.float64)
        digest = hashlib.blake2b(values.tobytes(), digest_size=16)
        digest.update(repr(values.shape).encode())
        last: dict[str, Any] = derived(forest, "reference_support", dict)
        if last.get("digest") != digest.digest():
            leaves = forest._apply(values.astype(forest.input_dtype))
            flat = (offsets[None, :] + leaves).ravel()
            counts = np.bincount(flat, minlength=n_nodes).astype(np.float64)
            counts.setflags(write=False)
            last.update(digest=digest.digest(), support=counts)
        return last["support"]
    stored = np.concatenate([tree.n_node_samples for tree in forest.trees])
    if (stored < 0).any():
        return None
    return stored.astype(np.float64)


def keep_support(forest: Forest, support: NDArray[np.float64] | None) -> None:
    """Give ``forest`` the node support of another forest with the same nodes
    (a forest whose nodes on fixed categories route one way reads the support
    of the whole forest, not counts of its own)."""
    keep(forest, _KEPT_SUPPORT, support)


def point_support(
    forest: Forest, support: NDArray[np.float64] | None, X: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Leaf support of each row of ``X`` (NaN without support counts)."""
    if support is None or not len(X):
        return np.full(len(X), np.nan)
    leaves = forest._apply(X.astype(forest.input_dtype))
    return support[forest._flat["offsets"][None, :] + leaves].min(axis=1)


def nearest_distance(
    cost: Cost,
    reference: NDArray[np.float64] | None,
    X: NDArray[np.float64],
    mad: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Distance of each row of ``X`` to its nearest reference row (NaN without
    reference), under ``cost`` when separable, else L1 scaled by ``mad``."""
    out = np.full(len(X), np.nan)
    if reference is None or not len(reference) or not len(X):
        return out
    ref = reference[np.isfinite(reference).all(axis=1)]
    if not len(ref):
        return out
    step = max(1, _BLOCK // (len(ref) * X.shape[1]))
    for start in range(0, len(X), step):
        block = X[start : start + step]
        delta = ref[None, :, :] - block[:, None, :]
        if cost.separable:
            terms = cost.terms(delta)
            out[start : start + step] = cost.combine(terms).min(axis=1)
        else:
            weights = np.ones(X.shape[1]) if mad is None else mad
            out[start : start + step] = np.abs(weights * delta).sum(axis=2).min(axis=1)
    return out
