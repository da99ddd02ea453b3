r"""Exact TreeSHAP terms of one bucket of leaves for a block of rows.

For a leaf with value :math:`v` whose path tests the features :math:`F`
(:math:`|F| = d`), a row meets the path's condition on feature :math:`j`
(:math:`o_j = 1`) or not (:math:`o_j = 0`); the leaf's share of the game
"prediction knowing only the features in :math:`S`" is a product over
:math:`F`, and features off the path are null players.

**Path-dependent** (the expectation under the training cover, as TreeSHAP):
the factor of :math:`j` is :math:`o_j` when :math:`j \in S` and its cover
fraction :math:`z_j` otherwise.  With the Shapley weights written as
:math:`\frac{s!(d-s-1)!}{d!} = \int_0^1 t^s (1-t)^{d-1-s}\,dt`,

.. math::

    \phi_i = v\,(o_i - z_i) \int_0^1 \prod_{j \in F, j \ne i}
             \bigl(z_j + t\,(o_j - z_j)\bigr)\,dt,

a polynomial of degree :math:`d - 1` integrated exactly by Gauss-Legendre
quadrature on :math:`\lceil d/2 \rceil` points.  Interaction values (the Shapley
interaction index, as shap) are
:math:`\Phi_{ij} = \tfrac12 v (o_i - z_i)(o_j - z_j) \int_0^1 \prod_{k \ne i, j}
(\dots)\,dt`.

**Interventional** (the mean over background rows :math:`b`, each with its own
pattern :math:`u^b`): the hybrid point reaches the leaf iff every feature is met
by the row (:math:`j \in S`) or by :math:`b`.  Only pairs with
:math:`u^b \supseteq Z` (:math:`Z` the features the row fails) count; with
:math:`a` the features met by the row but not by :math:`b`, the Shapley values
of one pair are :math:`v\frac{(a-1)!\,|Z|!}{(a+|Z|)!}` for those :math:`a`
features and :math:`-v\frac{a!\,(|Z|-1)!}{(a+|Z|)!}` for each feature of
:math:`Z`.  Since :math:`a = d - |u^b|`, everything follows from the number of
background rows per pattern and popcount, summed over supersets: a table of
the :math:`2^d` patterns per leaf, built once from the background; a row then
costs one lookup per leaf.  Leaves with too many path features for a table use
the background patterns directly.
"""

from __future__ import annotations

from math import factorial

import numpy as np
from numpy.typing import NDArray

from ._shap_leaves import LeafBucket

__all__ = [
    "background_patterns",
    "interventional_table",
    "interventional_terms",
    "path_interactions",
    "path_table",
    "path_terms",
    "table_terms",
]


def gauss_legendre(d: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights on [0, 1] exact for polynomials of degree ``d - 1``."""
    q = max(1, (d + 1) // 2)
    x, w = np.polynomial.legendre.leggauss(q)
    return (x + 1.0) / 2.0, w / 2.0


def _factors(
    o: NDArray[np.bool_], z: NDArray[np.float64], t: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``z + t (o - z)`` at every node ``t``: shape ``o.shape + (q,)``."""
    zt = z[..., None]
    met = zt + t * (1.0 - zt)
    failed = zt * (1.0 - t)
    return np.where(o[..., None], met, failed)


def _others(f: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
    """Product of ``f`` over ``axis`` leaving each position out (no division)."""
    f = np.moveaxis(f, axis, -1)
    n = f.shape[-1]
    out = np.ones_like(f)
    if n > 1:
        np.cumprod(f[..., :-1], axis=-1, out=out[..., 1:])
        suffix = np.cumprod(f[..., :0:-1], axis=-1)[..., ::-1]
        out[..., :-1] *= suffix
    return np.moveaxis(out, -1, axis)


def path_terms(bucket: LeafBucket, o: NDArray[np.bool_]) -> NDArray[np.float64]:
    r"""Path-dependent terms :math:`(o_i - z_i)\int\prod_{j\ne i}` (without
    :math:`v`): shape ``o.shape`` = (n_rows, n_leaves, d)."""
    t, w = gauss_legendre(bucket.d)
    f = _factors(o, bucket.z, t)
    integral = _others(f, axis=-2) @ w
    return (o - bucket.z) * integral


def _all_patterns(d: int) -> NDArray[np.bool_]:
    """Every pattern of ``d`` bits, row ``p`` holding the bits of ``p``."""
    return (np.arange(2**d)[:, None] >> np.arange(d)) & 1 == 1


def pattern_index(o: NDArray[np.bool_]) -> NDArray[np.intp]:
    """The integer ``sum_s o_s 2**s`` of each pattern (last axis)."""
    return o.astype(np.intp) @ (np.intp(1) << np.arange(o.shape[-1], dtype=np.intp))


def path_table(bucket: LeafBucket) -> NDArray[np.float64]:
    """Path-dependent terms of every pattern: shape (n_leaves, 2**d, d)."""
    patterns = _all_patterns(bucket.d)
    o = np.broadcast_to(patterns[:, None, :], (patterns.shape[0], *bucket.z.shape))
    return np.ascontiguousarray(path_terms(bucket, o).transpose(1, 0, 2))


def table_terms(
    table: NDArray[np.float64], o: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Terms of the rows' patterns looked up in a per-leaf table."""
    index = pattern_index(o)  # (n_rows, n_leaves)
    n_leaves, n_patterns, d = table.shape
    flat = table.reshape(n_leaves * n_patterns, d)
    return flat[index + np.arange(n_leaves) * n_patterns]


# ------------------------------------------------------------ interventional
def _weights(d: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``wa[a, z] = (a-1)! z! / (a+z)!`` (a >= 1) and ``wb[a, z] = a! (z-1)! /
    (a+z)!`` (z >= 1), zero elsewhere; exact ratios of integers."""
    wa = np.zeros((d + 1, d + 1))
    wb = np.zeros((d + 1, d + 1))
    for a in range(d + 1):
        for z in range(d + 1):
            if a >= 1:
                wa[a, z] = factorial(a - 1) * factorial(z) / factorial(a + z)
            if z >= 1:
                wb[a, z] = factorial(a) * factorial(z - 1) / factorial(a + z)
    return wa, wb


def background_patterns(
    bucket: LeafBucket, background: NDArray[np.float64]
) -> NDArray[np.intp]:
    """Pattern index of every background row for every leaf: (n_bg, n_leaves)."""
    return pattern_index(bucket.pattern(background))


def interventional_table(
    bucket: LeafBucket, patterns: NDArray[np.intp], n_background: int
) -> NDArray[np.float64]:
    """Interventional terms (without ``v``, averaged over the background) of
    every row pattern: shape (n_leaves, 2**d, d)."""
    d, n_leaves = bucket.d, bucket.n_leaves
    size = 2**d
    popcount = _all_patterns(d).sum(axis=1)
    # counts[l, r, mask]: background rows of pattern `mask` (popcount r).
    flat = (np.arange(n_leaves) * (d + 1) + popcount[patterns]) * size + patterns
    counts = np.bincount(flat.reshape(-1), minlength=n_leaves * (d + 1) * size)
    counts = counts.reshape(n_leaves, d + 1, size).astype(np.float64)
    # Sum over supersets, one bit at a time.
    for bit in range(d):
        view = counts.reshape(n_leaves, d + 1, size >> (bit + 1), 2, 1 << bit)
        view[:, :, :, 0, :] += view[:, :, :, 1, :]
    wa, wb = _weights(d)
    ranks = np.arange(d + 1)
    # w[r, mask] for a = d - r and z = popcount(mask) (or popcount - 1).
    a = (d - ranks)[:, None]
    wa0 = wa[a, popcount[None, :]]
    wa1 = wa[a, np.maximum(popcount - 1, 0)[None, :]] * (popcount >= 1)
    wb0 = wb[a, popcount[None, :]]
    ea0 = np.einsum("lrm,rm->lm", counts, wa0)
    ea1 = np.einsum("lrm,rm->lm", counts, wa1)
    eb0 = np.einsum("lrm,rm->lm", counts, wb0)
    full = size - 1
    zero_mask = full - np.arange(size)  # Z = complement of the row pattern o
    bits = np.intp(1) << np.arange(d)
    o = _all_patterns(d)  # (size, d)
    zmask = zero_mask[:, None]
    met = ea0[:, zero_mask][:, :, None] - ea1[:, zmask | bits]
    failed = -eb0[:, zero_mask][:, :, None]
    return np.where(o[None], met, failed) / n_background


def background_groups(
    patterns: NDArray[np.intp],
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Distinct background patterns per leaf and their counts, padded:
    shapes (n_leaves, n_distinct) (padding has count 0)."""
    n_bg, n_leaves = patterns.shape
    ordered = np.sort(patterns, axis=0)
    new = np.ones_like(ordered, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    n_distinct = int(new.sum(axis=0).max())
    rank = np.cumsum(new, axis=0) - 1  # (n_bg, n_leaves)
    distinct = np.zeros((n_leaves, n_distinct), dtype=np.intp)
    counts = np.zeros((n_leaves, n_distinct))
    cols = np.broadcast_to(np.arange(n_leaves), (n_bg, n_leaves))
    distinct[cols, rank] = ordered
    np.add.at(counts, (cols, rank), 1.0)
    return distinct, counts


def interventional_terms(
    bucket: LeafBucket,
    o: NDArray[np.bool_],
    distinct: NDArray[np.intp],
    counts: NDArray[np.float64],
    n_background: int,
) -> NDArray[np.float64]:
    """Interventional terms from the distinct background patterns of each leaf
    (for leaves too deep for a table): shape (n_rows, n_leaves, d)."""
    d = bucket.d
    u = (distinct[..., None] >> np.arange(d)) & 1 == 1  # (n_leaves, n_distinct, d)
    wa, wb = _weights(d)
    n_failed = d - o.sum(axis=-1)  # (n_rows, n_leaves)
    oo = o[:, :, None, :]
    counts_ok = np.all(oo | u[None], axis=-1) * counts[None]  # (rows, leaves, p)
    a = np.sum(oo & ~u[None], axis=-1)
    zf = n_failed[:, :, None]
    gain = counts_ok * wa[a, zf]
    loss = (counts_ok * wb[a, zf]).sum(axis=-1)
    met = np.einsum("rlp,lps->rls", gain, ~u)
    return np.where(o, met, -loss[..., None]) / n_background


# --------------------------------------------------------------- interactions
def path_interactions(bucket: LeafBucket, o: NDArray[np.bool_]) -> NDArray[np.float64]:
    r"""Off-diagonal path-dependent interaction terms (without :math:`v`):
    shape (n_rows, n_leaves, d, d), zero on the diagonal."""
    d = bucket.d
    out = np.zeros((*o.shape, d))
    if d < 2:
        return out
    t, w = gauss_legendre(d)
    f = _factors(o, bucket.z, t)  # (r, l, d, q)
    delta = o - bucket.z  # (r, l, d)
    for s in range(d):
        g = f.copy()
        g[:, :, s, :] = 1.0
        integral = _others(g, axis=-2) @ w  # (r, l, d): prod over k != s, s'
        out[:, :, s, :] = 0.5 * delta[:, :, s, None] * delta * integral
        out[:, :, s, s] = 0.0
    return out
