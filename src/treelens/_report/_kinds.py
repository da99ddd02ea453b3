"""Names the command line parses before any heavy module is imported."""

from __future__ import annotations

__all__ = ["PICTURE_KINDS"]

#: Pictures the ``plot`` command draws.
PICTURE_KINDS = (
    "partition",
    "region",
    "forest-grid",
    "regression-steps",
    "surface",
    "importance",
    "tree",
    "counterfactual",
    "dependence",
    "waterfall",
    "summary",
)
