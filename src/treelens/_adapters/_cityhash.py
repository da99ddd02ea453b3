"""CatBoost's hash of a category label, in pure Python.

CatBoost keeps no category labels in its models, only ``CalcCatFeatureHash``
of each label: the low 32 bits of CityHash64 (version 1.0, as in CatBoost's
sources) of the label's UTF-8 text, read as a signed int32.  Computing it here
lets the CatBoost adapter match the labels a user gives to the one-hot splits
of a model, without CatBoost installed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["catboost_category_hash"]

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_K3 = 0xC949D7C7509E6557
_KMUL = 0x9DDFEA08EB382D69


def _f64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i : i + 8], "little")


def _f32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i : i + 4], "little")


def _rotate(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash16(u: int, v: int) -> int:
    a = ((u ^ v) * _KMUL) & _M
    a ^= a >> 47
    b = ((v ^ a) * _KMUL) & _M
    b ^= b >> 47
    return (b * _KMUL) & _M


def _len0to16(s: bytes) -> int:
    n = len(s)
    if n > 8:
        a, b = _f64(s, 0), _f64(s, n - 8)
        return _hash16(a, _rotate((b + n) & _M, n)) ^ b
    if n >= 4:
        return _hash16((n + (_f32(s, 0) << 3)) & _M, _f32(s, n - 4))
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) & _M) ^ ((z * _K3) & _M)) * _K2) & _M
    return _K2


def _len17to32(s: bytes) -> int:
    n = len(s)
    a = (_f64(s, 0) * _K1) & _M
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * _K2) & _M
    d = (_f64(s, n - 16) * _K0) & _M
    return _hash16(
        (_rotate((a - b) & _M, 43) + _rotate(c, 30) + d) & _M,
        (a + _rotate(b ^ _K3, 20) - c + n) & _M,
    )


def _weak32(w: int, x: int, y: int, z: int, a: int, b: int) -> tuple[int, int]:
    a = (a + w) & _M
    b = _rotate((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rotate(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def _weak32_at(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    return _weak32(_f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24), a, b)


def _len33to64(s: bytes) -> int:
    n = len(s)
    z = _f64(s, 24)
    a = (_f64(s, 0) + (n + _f64(s, n - 16)) * _K0) & _M
    b = _rotate((a + z) & _M, 52)
    c = _rotate(a, 37)
    a = (a + _f64(s, 8)) & _M
    c = (c + _rotate(a, 7)) & _M
    a = (a + _f64(s, 16)) & _M
    vf = (a + z) & _M
    vs = (b + _rotate(a, 31) + c) & _M
    a = (_f64(s, 16) + _f64(s, n - 32)) & _M
    z = _f64(s, n - 8)
    b = _rotate((a + z) & _M, 52)
    c = _rotate(a, 37)
    a = (a + _f64(s, n - 24)) & _M
    c = (c + _rotate(a, 7)) & _M
    a = (a + _f64(s, n - 16)) & _M
    wf = (a + z) & _M
    ws = (b + _rotate(a, 31) + c) & _M
    r = _shift_mix(((vf + ws) * _K2 + (wf + vs) * _K0) & _M)
    return (_shift_mix((r * _K0 + vs) & _M) * _K2) & _M


def city_hash64(s: bytes) -> int:
    """CityHash64 (version 1.0) of ``s``, as an unsigned 64-bit integer."""
    n = len(s)
    if n <= 16:
        return _len0to16(s)
    if n <= 32:
        return _len17to32(s)
    if n <= 64:
        return _len33to64(s)
    x = _f64(s, 0)
    y = _f64(s, n - 16) ^ _K1
    z = _f64(s, n - 56) ^ _K0
    v = _weak32_at(s, n - 64, n, y)
    w = _weak32_at(s, n - 32, (n * _K1) & _M, _K0)
    z = (z + _shift_mix(v[1]) * _K1) & _M
    x = (_rotate((z + x) & _M, 39) * _K1) & _M
    y = (_rotate(y, 33) * _K1) & _M
    remaining = (n - 1) & ~63
    pos = 0
    while True:
        x = (_rotate((x + y + v[0] + _f64(s, pos + 16)) & _M, 37) * _K1) & _M
        y = (_rotate((y + v[1] + _f64(s, pos + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y ^= v[0]
        z = _rotate(z ^ w[0], 33)
        v = _weak32_at(s, pos, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32_at(s, pos + 32, (z + w[1]) & _M, y)
        z, x = x, z
        pos += 64
        remaining -= 64
        if remaining == 0:
            break
    return _hash16(
        (_hash16(v[0], w[0]) + _shift_mix(y) * _K1 + z) & _M,
        (_hash16(v[1], w[1]) + x) & _M,
    )


def catboost_category_hash(label: Any) -> int:
    """The int32 CatBoost stores for a category label (its text for numbers)."""
    text = label if isinstance(label, str) else str(label)
    low = city_hash64(text.encode("utf-8")) & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low
