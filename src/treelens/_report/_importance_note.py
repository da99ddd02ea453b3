"""The report's plain-language note on which importance to trust.

Kept apart from the rest of the report so that the note, and the measurements it
quotes, change in one place.  The numbers are those of the measurement written
in the README (section "Debiased MDI"): ``make_classification(n_samples=2000,
n_features=5, n_informative=3, n_redundant=0, flip_y=0.25, random_state=0)`` plus
a standard-normal and a 3-level noise column, a 200-tree random forest fitted on
75% of the rows, importances on the other 25%.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["importance_note"]


def importance_note(frame: pd.DataFrame | None, *, has_data: bool) -> dict[str, Any]:
    """Context of the template block ``importance_note.html.j2``.

    Parameters
    ----------
    frame : pandas.DataFrame or None
        The importance table (``importance_frame``): one row per feature.
    has_data : bool
        Whether held-out data with a target were given.

    Returns
    -------
    dict
        ``has_data``, ``has_debiased`` and ``unsupported``: the features MDI
        credits (at least half an equal share) whose debiased MDI interval
        includes zero.
    """
    has_debiased = frame is not None and "debiased_low" in frame.columns
    unsupported: list[str] = []
    if frame is not None and has_debiased and "mdi" in frame.columns and len(frame):
        share = 0.5 / len(frame)
        covers_zero = (frame["debiased_low"] <= 0) & (frame["debiased_high"] >= 0)
        credited = frame["mdi"] >= share
        unsupported = [str(f) for f in frame.loc[covers_zero & credited, "feature"]]
    return {
        "has_data": has_data,
        "has_debiased": has_debiased,
        "unsupported": unsupported,
    }
