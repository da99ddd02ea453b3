"""The candidates of feature tweaking, built for many (row, leaf) pairs at once.

A candidate is its row with a few features changed, so candidates are kept as
*changes*: per candidate, the features it changes and their new values
(:class:`Changes`, compressed rows).  When no one-hot group is declared and every
row lies in its feasible intervals, only the features a leaf's box constrains are
computed (:func:`candidate_changes` works on those entries alone); otherwise whole
rows are built (:func:`dense_candidates`).  Both apply the same per-value rule,
:func:`entry_values`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._core._cache import derived
from ._epsilon import land_inside

if TYPE_CHECKING:
    from .._core._boxes import LeafBoxes
    from ._problem import Problem

__all__ = [
    "Changes",
    "candidate_changes",
    "change_costs",
    "dense_candidates",
    "entry_values",
]

Mode = Literal["minimal", "paper"]


def entry_values(
    x: NDArray[np.float64],
    feasible_lo: NDArray[np.float64],
    feasible_hi: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    eps: NDArray[np.float64],
    integer: NDArray[np.bool_],
    mode: Mode,
    dtype: Any,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Value of one feature of a candidate, elementwise over arrays of one shape.

    ``x`` is the row's value, ``[feasible_lo, feasible_hi]`` what the constraints
    allow, ``(lower, upper]`` the leaf's box on that feature.  ``"minimal"`` keeps
    ``x`` when its cast lies in the box (and it is feasible); otherwise the value
    is the point nearest to ``x`` (``"minimal"``) or to the paper's point
    (``"paper"``: ``lower + eps`` or ``upper - eps``, the end nearer to ``x`` when
    both are finite) of the box shrunk by ``eps`` within the feasible interval,
    or, when that is empty, of the box itself within it.  Boxes narrower than
    ``2 eps`` shrink to their midpoint.  Integer features take the nearest whole
    number of the box.  Values then land inside the box after the cast to
    ``dtype`` (:func:`~treelens._counterfactual._epsilon.land_inside`).

    Returns
    -------
    values : ndarray, float64
    ok : ndarray, bool
        False where the box holds no feasible value.
    """
    shrunk_lo, shrunk_hi = lower + eps, upper - eps
    narrow = shrunk_lo > shrunk_hi
    if narrow.any():
        with np.errstate(invalid="ignore"):
            mid = 0.5 * (lower + upper)
        shrunk_lo = np.where(narrow, mid, shrunk_lo)
        shrunk_hi = np.where(narrow, mid, shrunk_hi)
    if mode == "paper":
        has_lo, has_hi = np.isfinite(lower), np.isfinite(upper)
        to_lo = np.abs(x - shrunk_lo) <= np.abs(x - shrunk_hi)
        point = np.where(
            has_lo & has_hi,
            np.where(to_lo, shrunk_lo, shrunk_hi),
            np.where(has_lo, shrunk_lo, np.where(has_hi, shrunk_hi, x)),
        )
    else:
        point = x
    # Preferred: the shrunk box within the feasible interval; else any point of the
    # box itself within it (the shrinking is a margin, not a constraint).
    want_lo = np.maximum(shrunk_lo, feasible_lo)
    want_hi = np.minimum(shrunk_hi, feasible_hi)
    preferred = want_lo <= want_hi
    any_lo = np.maximum(lower, feasible_lo)
    any_hi = np.minimum(upper, feasible_hi)
    possible = (any_lo < any_hi) | ((any_lo == any_hi) & (any_lo > lower))
    values = np.where(
        preferred,
        np.clip(point, want_lo, np.maximum(want_lo, want_hi)),
        np.clip(point, any_lo, np.maximum(any_lo, any_hi)),
    )
    ok = preferred | possible
    if mode == "minimal":
        x_cast = x.astype(dtype).astype(np.float64)
        inside = (
            (x_cast > lower)
            & (x_cast <= upper)
            & (x >= feasible_lo)
            & (x <= feasible_hi)
        )
        values = np.where(inside, x, values)
        ok = ok | inside
    values = land_inside(values, lower, upper, dtype, feasible_lo, feasible_hi)
    # Boxes such as (inf, inf], left by splits that only separate missing values,
    # hold no finite value; a box whose feasible part holds no value of the
    # dtype (an upper bound at the threshold the box lies above) holds none
    # either: its value lands outside the box or the bounds.
    with np.errstate(over="ignore", invalid="ignore"):
        cast = values.astype(dtype).astype(np.float64)
    ok &= np.isfinite(values) & (cast > lower) & (cast <= upper)
    ok &= (values >= feasible_lo) & (values <= feasible_hi)
    integer = np.broadcast_to(integer, values.shape)
    if integer.any():
        lo_int = np.maximum(np.floor(lower) + 1, feasible_lo)
        hi_int = np.minimum(np.floor(upper), feasible_hi)
        whole = np.clip(np.rint(point), lo_int, np.maximum(lo_int, hi_int))
        values = np.where(integer, whole, values)
        ok = np.where(integer, lo_int <= hi_int, ok)
    return values, ok


def dense_candidates(
    problem: Problem,
    x: NDArray[np.float64],
    feasible_lo: NDArray[np.float64],
    feasible_hi: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    mode: Mode,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Whole candidate rows for ``k`` (row, leaf box) pairs, one-hot groups included.

    Parameters
    ----------
    problem : Problem
    x, feasible_lo, feasible_hi, lower, upper : ndarray of shape (k, n_features)
        The row of each pair, its feasible intervals, and the leaf's box.
    mode : {"minimal", "paper"}

    Returns
    -------
    values : ndarray of shape (k, n_features)
    feasible : ndarray of shape (k,), bool
    """
    constraints = problem.constraints
    in_group = constraints.in_one_hot
    values, ok = entry_values(
        x,
        feasible_lo,
        feasible_hi,
        lower,
        upper,
        problem.epsilon,
        constraints.integer & ~in_group,
        mode,
        problem.forest.input_dtype,
    )
    ok[:, in_group] = True
    feasible = ok.all(axis=1)
    weights = problem.cost.weights if problem.cost.separable else None
    for group in constraints.one_hot:
        lo_g, hi_g = lower[:, group], upper[:, group]
        flo_g, fhi_g = feasible_lo[:, group], feasible_hi[:, group]
        allow0 = (lo_g < 0) & (hi_g >= 0) & (flo_g <= 0) & (fhi_g >= 0)
        allow1 = (lo_g < 1) & (hi_g >= 1) & (flo_g <= 1) & (fhi_g >= 1)
        group_values, group_ok = constraints.choose_one_hot(
            x, allow0, allow1, group, weights
        )
        values[:, group] = group_values
        feasible &= group_ok
    return values, np.asarray(feasible, dtype=bool)


@dataclass(frozen=True, eq=False)
class Changes:
    """Feasible candidates of a block of rows, as changes to their rows.

    Attributes
    ----------
    row : ndarray of shape (k,)
        Local row (within the block) of each candidate.
    leaf : ndarray of shape (k,)
        Leaf (row of :class:`~treelens.LeafBoxes`) each candidate comes from.
    ptr : ndarray of shape (k + 1,)
        Changes of candidate ``i`` are entries ``ptr[i]:ptr[i + 1]``.
    feature, value : ndarray of shape (n_changes,)
        Changed feature and its new value, by candidate then feature.
    """

    row: NDArray[np.intp]
    leaf: NDArray[np.intp]
    ptr: NDArray[np.intp]
    feature: NDArray[np.intp]
    value: NDArray[np.float64]

    @property
    def n_candidates(self) -> int:
        return int(self.row.shape[0])

    @property
    def owner(self) -> NDArray[np.intp]:
        """Candidate of each change, shape (n_changes,)."""
        return np.repeat(np.arange(self.n_candidates), np.diff(self.ptr))

    def take(self, index: NDArray[np.intp]) -> Changes:
        """The candidates ``index``, in that order."""
        return self.take_with_source(index)[0]

    def take_with_source(
        self, index: NDArray[np.intp]
    ) -> tuple[Changes, NDArray[np.intp]]:
        """The candidates ``index`` and, for each of their changes, its old position."""
        counts = self.ptr[index + 1] - self.ptr[index]
        source = _ranges(self.ptr[index], counts)
        return Changes(
            row=self.row[index],
            leaf=self.leaf[index],
            ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.intp),
            feature=self.feature[source],
            value=self.value[source],
        ), source

    def first_of_duplicates(self, costs: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Mask dropping candidates equal to the one just before them in cost order.

        Several leaves often give the same point; such duplicates have the same row,
        cost and validity, so only the first can win.  Candidates must be sorted by
        row then cost; a duplicate is confirmed change by change.
        """
        k = self.n_candidates
        counts = np.diff(self.ptr)
        suspect = (
            np.flatnonzero(
                (self.row[1:] == self.row[:-1])
                & (costs[1:] == costs[:-1])
                & (counts[1:] == counts[:-1])
            )
            + 1
        )
        keep = np.ones(k, dtype=bool)
        if not suspect.size:
            return keep
        n = counts[suspect]
        a = _ranges(self.ptr[suspect], n)
        b = _ranges(self.ptr[suspect - 1], n)
        differs = (self.feature[a] != self.feature[b]) | (
            self.value[a] != self.value[b]
        )
        owner = np.repeat(np.arange(suspect.size), n)
        same = np.bincount(owner[differs], minlength=suspect.size) == 0
        keep[suspect[same]] = False
        return keep

    def dense(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Whole candidate rows, shape (k, n_features), from the block's rows ``X``."""
        out = X[self.row]
        out[self.owner, self.feature] = self.value
        return out


def _ranges(starts: NDArray[np.intp], counts: NDArray[np.intp]) -> NDArray[np.intp]:
    """Concatenation of ``arange(s, s + c)`` for every start and count."""
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(total)


def leaf_entries(
    boxes: LeafBoxes, forest: Any
) -> tuple[
    NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]
]:
    """Features each leaf's box constrains, compressed and cached per forest.

    Returns
    -------
    ptr : ndarray of shape (n_leaves_total + 1,)
        Entries of leaf ``i`` are ``ptr[i]:ptr[i + 1]``.
    feature, lower, upper : ndarray of shape (n_entries,)
        The constrained feature and the box's bounds on it.
    """
    return derived(forest, "tweak_leaf_entries", lambda: _build_leaf_entries(boxes))


def _build_leaf_entries(
    boxes: LeafBoxes,
) -> tuple[
    NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]
]:
    # Any bound but the default: a lower bound of +inf (a split that only
    # separates missing values) makes the box empty and must be seen.
    constrained = (boxes.lower != -np.inf) | (boxes.upper != np.inf)
    leaf, feature = np.nonzero(constrained)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(leaf, minlength=boxes.n_leaves))])
    return (
        ptr.astype(np.intp),
        feature.astype(np.intp),
        boxes.lower[leaf, feature],
        boxes.upper[leaf, feature],
    )


def candidate_changes(
    problem: Problem,
    boxes: LeafBoxes,
    X: NDArray[np.float64],
    pair_row: NDArray[np.intp],
    pair_leaf: NDArray[np.intp],
    mode: Mode,
) -> tuple[Changes, NDArray[np.bool_]]:
    """Build the candidates of (row, leaf) pairs and keep the feasible ones.

    Parameters
    ----------
    problem : Problem
    boxes : LeafBoxes
    X : ndarray of shape (n_rows, n_features)
        The block's rows.
    pair_row, pair_leaf : ndarray of shape (k,)
        Local row and leaf of each pair, by row.
    mode : {"minimal", "paper"}

    Returns
    -------
    changes : Changes
        The feasible candidates, in pair order.
    reachable : ndarray of shape (n_rows,), bool
        Rows with at least one feasible candidate.
    """
    constraints = problem.constraints
    lo, hi = constraints.feasible_intervals(X)
    n_rows = X.shape[0]
    k = pair_row.size
    sparse = not constraints.one_hot and bool(((X >= lo) & (X <= hi)).all())
    if sparse:
        # Features a box does not constrain keep their (feasible) value: only the
        # constrained entries are computed.
        ptr, leaf_feature, leaf_lower, leaf_upper = leaf_entries(boxes, problem.forest)
        counts = ptr[pair_leaf + 1] - ptr[pair_leaf]
        source = _ranges(ptr[pair_leaf], counts)
        owner = np.repeat(np.arange(k), counts)
        feature = leaf_feature[source]
        flat = pair_row[owner] * X.shape[1] + feature
        x = X.ravel().take(flat)
        if constraints.trivial:
            shape = x.shape
            feasible_lo = np.broadcast_to(-np.inf, shape)
            feasible_hi = np.broadcast_to(np.inf, shape)
        else:
            feasible_lo, feasible_hi = lo.ravel().take(flat), hi.ravel().take(flat)
        values, ok = entry_values(
            x,
            feasible_lo,
            feasible_hi,
            leaf_lower[source],
            leaf_upper[source],
            problem.epsilon[feature],
            constraints.integer[feature],
            mode,
            problem.forest.input_dtype,
        )
        feasible = np.bincount(owner[~ok], minlength=k) == 0
        changed = values != x
    else:
        values, feasible = dense_candidates(
            problem,
            X[pair_row],
            lo[pair_row],
            hi[pair_row],
            boxes.lower[pair_leaf],
            boxes.upper[pair_leaf],
            mode,
        )
        changed_2d = values != X[pair_row]
        owner, feature = np.nonzero(changed_2d)
        values = values[owner, feature]
        changed = np.ones(owner.size, dtype=bool)
    keep = changed & feasible[owner]
    owner, feature, values = owner[keep], feature[keep], values[keep]
    new_index = np.cumsum(feasible) - 1
    kept = np.flatnonzero(feasible)
    counts = np.bincount(new_index[owner], minlength=kept.size)
    changes = Changes(
        row=pair_row[kept],
        leaf=pair_leaf[kept],
        ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.intp),
        feature=feature.astype(np.intp),
        value=values,
    )
    reachable = np.bincount(pair_row[kept], minlength=n_rows) > 0
    return changes, reachable


def change_costs(
    problem: Problem, X: NDArray[np.float64], changes: Changes
) -> NDArray[np.float64]:
    """Cost of every candidate from its row, shape (k,)."""
    cost = problem.cost
    k = changes.n_candidates
    owner = changes.owner
    x = X[changes.row[owner], changes.feature]
    delta = changes.value - x
    if cost.function is not None:
        dense = changes.dense(X)
        out = np.empty(k)
        bounds = np.searchsorted(changes.row, np.arange(X.shape[0] + 1))
        # A user callable takes one row at a time by its contract.
        for r in np.flatnonzero(np.diff(bounds)):
            part = slice(bounds[r], bounds[r + 1])
            out[part] = cost(X[r], dense[part])
        return out
    if cost.norm is None:  # cosine: 1 - <x, x'> / (|x| |x'|), from the changes
        x_sq = np.einsum("ij,ij->i", X, X)[changes.row]
        dot = x_sq + np.bincount(owner, weights=x * delta, minlength=k)
        cand_sq = x_sq + np.bincount(
            owner, weights=delta * (2 * x + delta), minlength=k
        )
        norms = np.sqrt(x_sq) * np.sqrt(np.maximum(cand_sq, 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(norms > 0, 1.0 - dot / np.where(norms > 0, norms, 1.0), 1.0)
        out = np.maximum(out, 0.0)
        return np.where(np.diff(changes.ptr) == 0, 0.0, out)
    terms = cost.terms_of(changes.feature, delta)
    if cost.norm == "linf":
        out = np.zeros(k)
        np.maximum.at(out, owner, terms)
        return out
    total = np.bincount(owner, weights=terms, minlength=k).astype(np.float64)
    return np.sqrt(total) if cost.norm == "l2" else total
