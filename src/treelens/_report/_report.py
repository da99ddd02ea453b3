"""The HTML report from Python: :func:`report` and the :class:`Report` it returns.

The command line's ``treelens report`` needs a saved model and a data file; a
notebook has both in memory.  :func:`report` builds the same page
(:func:`treelens._report._page.render_report`) from them, shows it inline in
Jupyter (in a sandboxed frame, so that the page's style stays inside it) and
writes it atomically with :meth:`Report.save`.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._exceptions import InputError
from .._types import ArrayLike, ModelLike, TargetLike

if TYPE_CHECKING:
    from .._counterfactual._constraints import Constraints

__all__ = ["Report", "report"]


class Report:
    """A self-contained HTML report (see :func:`report`).

    Parameters
    ----------
    html : str
        The HTML document.

    Attributes
    ----------
    html : str
        The document: pictures embedded, nothing fetched from the network.

    Examples
    --------
    >>> page = Report("<!DOCTYPE html><html><body>hello</body></html>")
    >>> page
    <treelens Report: 46 characters; .save(path) writes it>
    >>> "srcdoc=" in page._repr_html_()
    True
    """

    def __init__(self, html: str) -> None:
        self.html = html

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the document to ``path`` atomically (all of it, or nothing).

        Parameters
        ----------
        path : path-like
            An ``.html`` file; an existing file is replaced.

        Returns
        -------
        Path
            The file written.
        """
        from .._io._files import atomic_write

        return atomic_write(path, self.html)

    def _repr_html_(self) -> str:
        """The page inline in Jupyter, in a sandboxed frame (its style stays in)."""
        return (
            '<iframe sandbox="" style="width:100%;height:800px;border:1px solid #ddd" '
            f'srcdoc="{html.escape(self.html, quote=True)}"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<treelens Report: {len(self.html)} characters; .save(path) writes it>"


def report(
    model: ModelLike,
    X: ArrayLike,
    y: ArrayLike | None = None,
    *,
    target: TargetLike | None = None,
    rows: Sequence[int] | None = None,
    max_counterfactuals: int = 5,
    cost: str = "auto",
    constraints: Constraints | Mapping[str, Any] | None = None,
    reference: ArrayLike | None = None,
    optimal: bool = False,
    time_limit: float = 10.0,
    sample_rows: int | None = 5000,
    random_state: int = 0,
    title: str | None = None,
) -> Report:
    """Explain ``model`` on ``X`` in one self-contained HTML page, answers first.

    The page of ``treelens report`` on the command line: the model card with its
    scores on ``(X, y)``; the answer for the chosen rows (prediction, why, and
    the least costly change that reaches ``target``, by
    :func:`treelens.counterfactual`'s ``"auto"`` method); importance (MDI, and
    with ``y`` held-out and debiased MDI and permutation importance) with a note
    on which to trust; the pictures; and, folded, the per-node breakdown of the
    first tree.  An IsolationForest gets a page of its anomaly scores.

    Parameters
    ----------
    model : fitted tree model or Pipeline ending in one
    X : DataFrame or array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        True targets (an IsolationForest's: known anomalies, 0/1, booleans or
        -1/1); enables the scores, held-out MDI and permutation importance.
    target : class label or (low, high), optional
        What the counterfactuals aim for: a class (default the model's last), a
        regressor's range of predicted values (without one a regressor's page
        says how to ask), an IsolationForest's ``"inlier"`` (default) or
        ``"outlier"``.
    rows : sequence of int, optional
        Positions of the rows of ``X`` to answer for; default the first
        ``max_counterfactuals`` rows not meeting ``target`` (an
        IsolationForest's most anomalous outliers).
    max_counterfactuals : int, default=5
    cost : str, default="auto"
        Cost of the counterfactuals (see :func:`treelens.counterfactual`).
    constraints : Constraints or mapping, optional
        A :class:`treelens.Constraints`, or the same keywords as a mapping.
    reference : array-like of shape (n_reference, n_features), optional
        Data scaling the counterfactuals' cost; default ``X``.
    optimal : bool, default=False
        Only proven least-cost counterfactuals (``method="optimal"``).
    time_limit : float, default=10.0
        Seconds per row of the counterfactual search.
    sample_rows : int or None, default=5000
        Held-out and debiased MDI, permutation importance (its first 1,000)
        and the pictures' points use a random sample of this many rows; None
        for all.
    random_state : int, default=0
    title : str, optional

    Returns
    -------
    Report
        ``.html`` the document, ``.save(path)`` to write it; shown inline in
        Jupyter.

    Raises
    ------
    InputError
        On a ``constraints`` that is neither, and any bad input the page's
        computations refuse.
    """
    from ._page import render_report

    document = render_report(
        model,
        X,
        y,
        target=target,
        rows=rows,
        max_counterfactuals=max_counterfactuals,
        cost=cost,
        constraints=_constraint_lists(constraints),
        reference=reference,
        optimal=optimal,
        time_limit=time_limit,
        sample_rows=sample_rows,
        random_state=random_state,
        title=title,
    )
    return Report(document)


def _constraint_lists(constraints: Any) -> dict[str, Any] | None:
    """The report's plain form of ``constraints`` (a Constraints or a mapping)."""
    from .._counterfactual._constraints import CONSTRAINT_KEYWORDS, Constraints

    if constraints is None:
        return None
    if isinstance(constraints, Constraints):
        return {key: getattr(constraints, key) for key in CONSTRAINT_KEYWORDS}
    if isinstance(constraints, Mapping):
        unknown = sorted(set(map(str, constraints)) - set(CONSTRAINT_KEYWORDS))
        if unknown:
            raise InputError(
                f"`constraints` keys must be among {list(CONSTRAINT_KEYWORDS)}; got "
                f"{unknown}."
            )
        return dict(constraints)
    raise InputError(
        "`constraints` must be a treelens.Constraints or a mapping of its "
        f"keywords; got {type(constraints).__name__}."
    )
