"""Numbers as people read them (tables, pages, sentences): the column's own
scale, no scientific notation.

``24983.5`` prints as ``24,984``, ``0.04632`` as ``0.04632``, ``12.5`` as
``12.5``; only magnitudes outside ``[1e-4, 1e15)`` use an exponent.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_number"]


def format_number(value: Any, *, digits: int = 4) -> str:
    """``value`` as text: thousands separators from 1,000, ``digits`` significant
    digits below, an exponent only for very large or very small magnitudes.

    Examples
    --------
    >>> [format_number(v) for v in (22000.0, 15870.4, 0.04632, 3.5, 7, -1234.5)]
    ['22,000', '15,870', '0.04632', '3.5', '7', '-1,234']
    """
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not isinstance(value, float):
        return str(value)
    if not math.isfinite(value):
        return "" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 1e15 or size < 1e-4:
        return f"{value:.{digits - 1}e}"
    text = f"{value:.{digits}g}"
    if size >= 10 ** (digits - 1) or abs(float(text)) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return text
