"""``treelens explain``: one row's path in words, its contributions and its remedy.

Calls :func:`treelens.decision_path`, :func:`treelens.saabas_values` and the
counterfactual search of the ``tweak`` command, and lays their results out as
text (the sentence, then the contributions and the counterfactual side by side)
or as one JSON object.
"""

from __future__ import annotations

import io
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._exceptions import InputError
from .._report._tables import (
    counterfactual_result_tables,
    counterfactuals,
    prediction_spread,
    rich_table,
)

__all__ = ["RowExplanation", "explain_row", "render_explanation", "row_contributions"]


@dataclass(frozen=True)
class RowExplanation:
    """What ``treelens explain`` shows about one data row."""

    row: int
    sentence: str
    path: pd.DataFrame
    contributions: pd.DataFrame
    bias: float
    prediction: float
    output: str | None
    output_space: str
    counterfactual: pd.DataFrame | None
    counterfactual_summary: dict[str, Any] | None
    note: str
    #: How the prediction follows from the raw score: ``"exp"`` (a log link),
    #: ``"logistic"`` (a regressor of fractions), ``"isolation"`` (an
    #: IsolationForest's ``score_samples``) or ``"identity"``.
    link: str = "identity"


def check_row(row: int, n_rows: int) -> int:
    """``row`` as numbered in the data file (0-based), or an InputError."""
    if not 0 <= row < n_rows:
        raise InputError(
            f"--row must be a row of the data file, in [0, {n_rows - 1}] (the file "
            f"has {n_rows} rows, numbered from 0); got {row}."
        )
    return row


def _take(X: Any, row: int) -> Any:
    return X.iloc[[row]] if hasattr(X, "iloc") else np.asarray(X)[[row]]


def row_contributions(
    result: Any, *, top: int
) -> tuple[pd.DataFrame, str | None, float, float]:
    """The largest contributions of a one-row result, for the output it predicts.

    Returns the table (feature, value, contribution; the rest grouped in one
    line), the output's name (None for single-output models), the bias and the
    prediction.
    """
    values = np.asarray(result.values_)[0]
    bias, prediction = result.bias_, np.asarray(result.prediction_)[0]
    output = None
    if values.ndim == 2:
        k = int(np.argmax(prediction))
        values, bias, prediction = values[:, k], np.asarray(bias)[k], prediction[k]
        output = result.output_names_[k]
    order = np.argsort(-np.abs(values), kind="stable")
    order = order[values[order] != 0]
    shown, rest = order[:top], order[top:]
    data = result.data_.iloc[0]
    frame = pd.DataFrame(
        {
            "feature": [result.feature_names_[j] for j in shown],
            "value": [data.iloc[j] for j in shown],
            "contribution": values[shown],
        }
    )
    if rest.size:
        grouped = pd.DataFrame(
            {
                "feature": [f"{rest.size} other features"],
                "value": [np.nan],
                "contribution": [float(values[rest].sum())],
            }
        )
        frame = pd.concat([frame, grouped], ignore_index=True)
    return frame, output, float(bias), float(prediction)


def path_table(result: Any, *, top: int) -> pd.DataFrame:
    """The row's path as a table: a single tree's whole path, or the ensemble's
    most deciding features with the number of trees testing them."""
    frame = result.to_frame()
    if result.leaves_.shape[1] == 1:
        frame = frame.sort_values("first_depth", kind="stable")
        return (
            frame[["feature", "condition", "first_depth"]]
            .rename(columns={"first_depth": "depth"})
            .reset_index(drop=True)
        )
    order = result.feature_order_[0][:top]
    counts = result.feature_counts_[0]
    depth = result.mean_first_depth_[0]
    n_trees = result.n_trees_
    rows = [
        {
            "feature": result.feature_names_[j],
            "value": result.data_.iloc[0, j],
            "trees": f"{counts[j]} of {n_trees}",
            "mean depth": float(depth[j]),
        }
        for j in order
        if counts[j] > 0
    ]
    return pd.DataFrame(rows)


def explain_row(
    model: Any,
    X: Any,
    row: int,
    *,
    target: Any,
    top: int = 8,
    cost: str = "l2",
    constraints: Mapping[str, Any] | None = None,
    reference: Any = None,
    optimal: bool = False,
    time_limit: float = 30.0,
    fill_missing: bool | list[str] = False,
    fill_cost: float | None = None,
) -> RowExplanation:
    """Everything ``treelens explain`` shows about data row ``row`` of ``X``.

    ``target`` is what the counterfactual aims for (a class, ``"other"``, or a
    range); None skips the counterfactual (regressors without a range).
    ``optimal`` proves the counterfactual least costly
    (:func:`treelens.optimal_counterfactual`) instead of feature tweaking;
    ``fill_missing`` and ``fill_cost`` are :func:`treelens.counterfactual`'s.
    """
    from .._adapters import to_forest
    from .._explain._contributions import saabas_values
    from .._explain._path import decision_path

    row = check_row(row, len(X))
    one = _take(X, row)
    path = decision_path(model, one, max_conditions=3)
    contributions = saabas_values(model, one)
    table, output, bias, prediction = row_contributions(contributions, top=top)
    changes = summary = None
    note = ""
    if target is None:
        spread = prediction_spread(model, X).replace("these rows", "the data")
        note = "no counterfactual: give --target-range LOW:HIGH for a regressor." + (
            f" {spread}" if spread else ""
        )
    else:
        notes: list[str] = []
        chosen, result = counterfactuals(
            model,
            X,
            target=target,
            rows=[row],
            cost=cost,
            constraints=constraints,
            reference=X if reference is None else reference,
            optimal=optimal,
            time_limit=time_limit,
            fill_missing=fill_missing,
            fill_cost=fill_cost,
            notes=notes,
        )
        note = " ".join(notes)
        if result is None:
            note = "no counterfactual: the row already has the target"
        else:
            tables = counterfactual_result_tables(result, chosen, result.prediction_)
            summary = {str(k): v for k, v in tables["rows"][1].iloc[0].items()}
            changes = tables["changes"][1][["feature", "before", "after"]]
            if not summary["found"]:
                note = f"no counterfactual found: {summary['reason']} {note}".strip()
    return RowExplanation(
        row=row,
        sentence=path.sentences_[0],
        path=path_table(path, top=top),
        contributions=table,
        bias=bias,
        prediction=prediction,
        output=output,
        output_space=contributions.output_space_,
        counterfactual=changes,
        counterfactual_summary=summary,
        note=note,
        link=_regression_link(to_forest(model)),
    )


def _plain(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame | None) -> list[dict[str, Any]] | None:
    if frame is None:
        return None
    return [
        {str(k): _plain(v) for k, v in record.items()}
        for record in frame.to_dict(orient="records")
    ]


def render_explanation(
    explanation: RowExplanation,
    *,
    json_out: bool,
    notes: Sequence[str] | None = None,
) -> str:
    """The explanation as text (rich tables) or JSON; the JSON lists ``notes``
    (the command's note lines) as ``"notes"``, an empty list when None."""
    if json_out:
        summary = explanation.counterfactual_summary
        payload = {
            "row": explanation.row,
            "sentence": explanation.sentence,
            "path": _records(explanation.path),
            "contributions": {
                "output": explanation.output,
                "output_space": explanation.output_space,
                "link": explanation.link,
                "bias": explanation.bias,
                "prediction": explanation.prediction,
                "top": _records(explanation.contributions),
            },
            "counterfactual": None
            if summary is None
            else {
                **{str(k): _plain(v) for k, v in summary.items() if k != "changes"},
                "changes": _records(explanation.counterfactual),
            },
            "note": explanation.note or None,
            "notes": list(notes or ()),
        }
        return json.dumps(payload, indent=2, default=str) + "\n"
    return _text(explanation)


# How the contributions' output space reads in a sentence.
_SPACE_NAMES = {"raw": "raw score", "value": "prediction"}
# What a regressor's raw score is of its prediction, by link.
_LINK_NAMES = {
    "exp": "the log of the prediction",
    "logistic": "the logit of the prediction",
    "isolation": "the mean path length over c(max_samples): -log2(-prediction)",
}


def _regression_link(forest: Any) -> str:
    """The link of a boosted regressor's prediction (``"identity"`` for any
    other model: a classifier's raw score is explained as such)."""
    return (
        forest.link
        if forest.kind == "boosting" and not forest.is_classifier
        else "identity"
    )


def _missing_named(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with a feature's missing value (``value``, or ``before`` a
    filled one) written ``missing`` rather than left blank (the grouped "N
    other features" line has no value)."""
    grouped = frame["feature"].astype(str).str.fullmatch(r"\d+ other features")
    out = frame
    for column in ("value", "before"):
        if column not in frame:
            continue
        missing = frame[column].isna() & ~grouped
        if missing.any():
            out = out.copy() if out is frame else out
            out[column] = out[column].astype(object)
            out.loc[missing, column] = "missing"
    return out


def _text(explanation: RowExplanation) -> str:
    from rich.console import Console
    from rich.table import Table

    width = max(100, shutil.get_terminal_size((120, 24)).columns)
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(f"Row {explanation.row}: {explanation.sentence}")
    console.print()
    console.print(rich_table("Decision path", _missing_named(explanation.path)))
    space = _SPACE_NAMES.get(explanation.output_space, explanation.output_space)
    shown = f"{space} of class {explanation.output}" if explanation.output else space
    if explanation.link in _LINK_NAMES:
        shown += f" ({_LINK_NAMES[explanation.link]})"
    contributions = rich_table(
        f"Contributions to the {shown}: {explanation.bias:.4g} (bias) -> "
        f"{explanation.prediction:.4g}",
        _missing_named(explanation.contributions),
    )
    if explanation.counterfactual is not None and len(explanation.counterfactual):
        summary = explanation.counterfactual_summary or {}
        remedy: Any = rich_table(
            f"Counterfactual (cost {summary.get('cost', float('nan')):.4g})",
            _missing_named(explanation.counterfactual),
        )
    else:
        remedy = explanation.note or "no counterfactual"
    grid = Table.grid(padding=(0, 4))
    grid.add_column()
    grid.add_column()
    grid.add_row(contributions, remedy)
    console.print(grid)
    if explanation.note and remedy is not explanation.note:
        console.print(explanation.note)
    return console.export_text()
