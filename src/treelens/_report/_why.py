"""The report's "why this decision" blocks: for each counterfactual row, the
path sentence, the waterfall of its contributions and its counterfactual.

Kept apart from :mod:`treelens._report._page` (which calls
:func:`why_this_decision` for the rows its counterfactual section shows) and
drawn by its own template, ``templates/_why.html.j2``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["why_this_decision"]


def why_this_decision(
    model: Any,
    X: Any,
    rows: Sequence[int],
    result: Any,
    *,
    picture: Callable[[str, str, Callable[[], Any]], dict[str, Any]],
    table: Callable[[pd.DataFrame], dict[str, Any]],
    max_display: int = 8,
) -> list[dict[str, Any]]:
    """One block per data row of ``rows`` (the rows of counterfactual ``result``).

    ``picture(title, caption, draw)`` and ``table(frame)`` turn a figure and a
    frame into the template's pictures and tables.
    """
    from .._explain._contributions import saabas_values
    from .._explain._path import decision_path
    from .._plots._display_contributions import WaterfallDisplay
    from ._pictures import new_figure
    from ._tables import missing_before

    subset = X.iloc[list(rows)] if hasattr(X, "iloc") else np.asarray(X)[list(rows)]
    paths = decision_path(model, subset)
    contributions = saabas_values(model, subset)
    changes = result.to_frame()
    row_column = next((c for c in ("row", "instance", "sample") if c in changes), None)
    blocks = []
    for i, row in enumerate(rows):

        def draw(i: int = i) -> Any:
            figure, ax = new_figure(5.2, 3.6)
            WaterfallDisplay.from_result(
                contributions, row=i, max_display=max_display, ax=ax
            )
            return figure

        mine = changes[changes[row_column] == i] if row_column is not None else changes
        shown = [c for c in ("feature", "before", "after") if c in mine.columns]
        blocks.append(
            {
                "row": int(row),
                "sentence": paths.sentences_[i],
                "waterfall": picture(
                    f"Contributions of row {row}",
                    "From the bias (dashed line) to the prediction (solid line), "
                    "the largest Saabas contributions, the rest grouped.",
                    draw,
                ),
                "found": bool(result.found_[i]),
                "reason": result.reason_[i] or "",
                "changes": table(missing_before(mine[shown].reset_index(drop=True))),
            }
        )
    return blocks
