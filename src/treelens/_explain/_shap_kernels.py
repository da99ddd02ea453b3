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

from functools import lru_cache
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


@lru_cache(maxsize=64)
def gauss_legendre(d: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights on [0, 1] exact for polynomials of degree ``d - 1``."""
    q = max(1, (d + 1) // 2)
    x, w = np.polynomial.legendre.leggauss(q)
    return (x + 1.0) / 2.0, w / 2.0


def _factors(
    o: NDArray[np.bool_], z: NDArray[np.float64], t: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``z + t (o - z)`` at every node ``t``: shape (n_leaves, d, q, n_rows) for
    patterns ``o`` of shape (n_leaves, d, n_rows)."""
    zt = z[:, :, None]
    met = (zt + t * (1.0 - zt))[..., None]
    failed = (zt * (1.0 - t))[..., None]
    return np.where(o[:, :, None, :], met, failed)


def _others(f: NDArray[np.float64]) -> NDArray[np.float64]:
    """Product of ``f`` over axis 1 leaving each position out (no division)."""
    n = f.shape[1]
    out = np.empty_like(f)
    out[:, 0] = 1.0
    if n > 1:
        np.cumprod(f[:, :-1], axis=1, out=out[:, 1:])
        suffix = f[:, -1].copy()
        for s in range(n - 2, -1, -1):
            out[:, s] *= suffix
            if s:
                suffix *= f[:, s]
    return out


def path_terms(bucket: LeafBucket, o: NDArray[np.bool_]) -> NDArray[np.float64]:
    r"""Path-dependent terms :math:`(o_i - z_i)\int\prod_{j\ne i}` (without
    :math:`v`) of patterns ``o`` of shape (n_leaves, d, n_rows); same shape.

    With every cover fraction positive, the product over a leaf's slots is
    :math:`\prod_s A_s \prod_{s: o_s} B_s / A_s` (:math:`A = z (1 - t)`,
    :math:`B = z + t (1 - z)`): its logarithm is one small matrix product per
    leaf, and the integrals of the products leaving one slot out are two more
    (weights :math:`w_q / A_s` and :math:`w_q / B_s`), so no array of shape
    (leaves, d, nodes, rows) is ever formed.
    """
    if not bucket.z_positive:
        return _path_terms_direct(bucket, o)
    log_ratio, log_base, weight_failed, weight_met = bucket_quadrature(bucket)
    met = o.astype(np.float64)
    # einsum's optimized contraction is several times faster than matmul's
    # loop over many small matrices.
    log_product = np.einsum("lqd,ldr->lqr", log_ratio, met, optimize=True)
    log_product += log_base[:, :, None]
    product = np.exp(log_product, out=log_product)
    integral = np.einsum("ldq,lqr->ldr", weight_met, product, optimize=True)
    failed = np.einsum("ldq,lqr->ldr", weight_failed, product, optimize=True)
    np.copyto(integral, failed, where=~o)
    met -= bucket.z[..., None]
    integral *= met
    return integral


def bucket_quadrature(
    bucket: LeafBucket,
) -> tuple[NDArray[np.float64], ...]:
    """Per leaf: log(B / A) as (l, q, d), sum of log A (l, q), w / A and w / B
    as (l, d, q); cached on the bucket."""
    cache = bucket.__dict__
    if "_quadrature" not in cache:
        t, w = gauss_legendre(bucket.d)
        z = bucket.z[:, :, None]
        failed = z * (1.0 - t)
        met = z + t * (1.0 - z)
        log_failed, log_met = np.log(failed), np.log(met)
        cache["_quadrature"] = (
            np.ascontiguousarray((log_met - log_failed).transpose(0, 2, 1)),
            log_failed.sum(axis=1),
            w / failed,
            w / met,
        )
    return cache["_quadrature"]


def _path_terms_direct(bucket: LeafBucket, o: NDArray[np.bool_]) -> NDArray[np.float64]:
    """:func:`path_terms` with empty branches (zero cover fractions)."""
    t, w = gauss_legendre(bucket.d)
    f = _factors(o, bucket.z, t)  # (l, d, q, r)
    integral = np.einsum("ldqr,q->ldr", _others(f), w)
    integral *= o - bucket.z[..., None]
    return integral


def _all_patterns(d: int) -> NDArray[np.bool_]:
    """Every pattern of ``d`` bits, row ``p`` holding the bits of ``p``."""
    return (np.arange(2**d)[:, None] >> np.arange(d)) & 1 == 1


def pattern_index(o: NDArray[np.bool_]) -> NDArray[np.intp]:
    """The integer ``sum_s o[:, s] 2**s`` of patterns (n_leaves, d, n): (n_leaves, n)."""
    index = o[:, 0].astype(np.intp)
    for s in range(1, o.shape[1]):
        index |= o[:, s].astype(np.intp) << s
    return index


def path_table(bucket: LeafBucket) -> NDArray[np.float64]:
    """Path-dependent terms of every pattern: shape (n_leaves, d, 2**d)."""
    patterns = _all_patterns(bucket.d).T  # (d, 2**d)
    o = np.broadcast_to(patterns, (bucket.n_leaves, *patterns.shape))
    return np.ascontiguousarray(path_terms(bucket, o))


def table_terms(
    table: NDArray[np.float64], o: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Terms of the rows' patterns looked up in a per-leaf table (n_leaves, d,
    2**d): shape (n_leaves, d, n_rows)."""
    n_leaves, d, n_patterns = table.shape
    index = pattern_index(o)  # (n_leaves, n_rows)
    index += (np.arange(n_leaves, dtype=np.intp) * (d * n_patterns))[:, None]
    out = np.empty(o.shape)
    flat = table.reshape(-1)
    for s in range(d):
        np.take(flat[s * n_patterns :], index, out=out[:, s, :])
    return out


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
    bucket: LeafBucket, background_t: NDArray[np.float64]
) -> NDArray[np.intp]:
    """Pattern index of every background row (given transposed) for every
    leaf: (n_leaves, n_background)."""
    return pattern_index(bucket.pattern(background_t))


def interventional_table(
    bucket: LeafBucket, patterns: NDArray[np.intp], n_background: int
) -> NDArray[np.float64]:
    """Interventional terms (without ``v``, averaged over the background) of
    every row pattern: shape (n_leaves, d, 2**d)."""
    d, n_leaves = bucket.d, bucket.n_leaves
    size = 2**d
    popcount = _all_patterns(d).sum(axis=1)
    # counts[l, r, mask]: background rows of pattern `mask` (popcount r).
    flat = (np.arange(n_leaves)[:, None] * (d + 1) + popcount[patterns]) * size
    flat += patterns
    counts = np.bincount(flat.reshape(-1), minlength=n_leaves * (d + 1) * size)
    counts = counts.reshape(n_leaves, d + 1, size).astype(np.float64)
    # Sum over supersets, one bit at a time.
    for bit in range(d):
        view = counts.reshape(n_leaves, d + 1, size >> (bit + 1), 2, 1 << bit)
        view[:, :, :, 0, :] += view[:, :, :, 1, :]
    wa, wb = _weights(d)
    # w[r, mask] for a = d - r and z = popcount(mask) (or popcount - 1).
    a = (d - np.arange(d + 1))[:, None]
    wa0 = wa[a, popcount[None, :]]
    wa1 = wa[a, np.maximum(popcount - 1, 0)[None, :]] * (popcount >= 1)
    wb0 = wb[a, popcount[None, :]]
    ea0 = np.einsum("lrm,rm->lm", counts, wa0)
    ea1 = np.einsum("lrm,rm->lm", counts, wa1)
    eb0 = np.einsum("lrm,rm->lm", counts, wb0)
    zero_mask = size - 1 - np.arange(size)  # Z: the complement of the pattern o
    bits = (np.intp(1) << np.arange(d))[:, None]
    o = _all_patterns(d).T  # (d, size)
    met = ea0[:, None, zero_mask] - ea1[:, zero_mask[None, :] | bits]
    failed = -eb0[:, None, zero_mask]
    return np.ascontiguousarray(np.where(o[None], met, failed) / n_background)


def background_groups(
    patterns: NDArray[np.intp],
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Distinct background patterns per leaf (``patterns`` of shape (n_leaves,
    n_background)) and their counts, padded with count 0: (n_leaves, n_distinct)."""
    n_leaves, n_bg = patterns.shape
    ordered = np.sort(patterns, axis=1)
    new = np.ones_like(ordered, dtype=bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    n_distinct = int(new.sum(axis=1).max())
    rank = np.cumsum(new, axis=1) - 1
    distinct = np.zeros((n_leaves, n_distinct), dtype=np.intp)
    counts = np.zeros((n_leaves, n_distinct))
    rows = np.broadcast_to(np.arange(n_leaves)[:, None], (n_leaves, n_bg))
    distinct[rows, rank] = ordered
    np.add.at(counts, (rows, rank), 1.0)
    return distinct, counts


def interventional_terms(
    bucket: LeafBucket,
    o: NDArray[np.bool_],
    distinct: NDArray[np.intp],
    counts: NDArray[np.float64],
    n_background: int,
) -> NDArray[np.float64]:
    """Interventional terms from the distinct background patterns of each leaf
    (leaves with too many path features for a table): shape (n_leaves, d,
    n_rows) for patterns ``o`` of that shape."""
    d = bucket.d
    u = (distinct[..., None] >> np.arange(d)) & 1 == 1  # (n_leaves, n_distinct, d)
    wa, wb = _weights(d)
    n_failed = d - o.sum(axis=1)  # (n_leaves, n_rows)
    qualifies = np.ones((*u.shape[:2], o.shape[2]), dtype=bool)
    a = np.zeros(qualifies.shape, dtype=np.intp)
    for s in range(d):
        row_meets = o[:, None, s, :]
        qualifies &= row_meets | u[:, :, s, None]
        a += row_meets & ~u[:, :, s, None]
    weight = qualifies * counts[:, :, None]
    zf = n_failed[:, None, :]
    gain = weight * wa[a, zf]
    loss = np.einsum("lpr,lpr->lr", weight, wb[a, zf])
    met = np.einsum("lpr,lps->lsr", gain, ~u)
    return np.where(o, met, -loss[:, None, :]) / n_background


# --------------------------------------------------------------- interactions
def path_interactions(bucket: LeafBucket, o: NDArray[np.bool_]) -> NDArray[np.float64]:
    r"""Off-diagonal path-dependent interaction terms (without :math:`v`) of
    patterns (n_leaves, d, n_rows): shape (n_leaves, d, d, n_rows), zero on the
    diagonal."""
    n_leaves, d, n = o.shape
    out = np.zeros((n_leaves, d, d, n))
    if d < 2:
        return out
    t, w = gauss_legendre(d)
    f = _factors(o, bucket.z, t)  # (l, d, q, r)
    delta = o - bucket.z[..., None]  # (l, d, r)
    for s in range(d):
        g = f.copy()
        g[:, s] = 1.0
        integral = np.einsum("ldqr,q->ldr", _others(g), w)  # prod over k != s, s'
        out[:, s] = 0.5 * delta[:, s, None, :] * delta * integral
        out[:, s, s] = 0.0
    return out
