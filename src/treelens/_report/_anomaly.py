"""The HTML report's sections for an IsolationForest: scores, not predictions.

An IsolationForest has no target and its trees split at random, so the sections
of :func:`~treelens._report._page.render_report` built on a target or on impurity
(accuracy, MDI, held-out and debiased MDI, permutation importance, decision
regions, the per-node breakdown) say nothing about it.  Its report holds instead:

- the model card with how many rows the model calls outliers, its threshold, and
  the spread of the anomaly scores (``-score_samples``); with a target column of
  known anomalies (0/1, booleans, or -1/1 as the model's ``predict``), how well
  the anomaly score ranks them (ROC AUC and average precision);
- the answer for the most anomalous rows: why each scores as it does, and the
  least costly change that makes the model call it an inlier;
- importance as the mean absolute SHAP value of each column, with its bootstrap
  interval over the rows (:func:`treelens.shap_importance`);
- pictures: the scores' histogram with the threshold, the first tree, the
  exact map of the whole model's score over the two columns that move it most,
  and the SHAP dependence plot of the column that moves it most.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._core._numbers import format_number

__all__ = ["anomaly_sections", "anomaly_targets"]

Picture = Callable[[str, str, Callable[[], Any]], dict[str, Any]]


def anomaly_targets(y: Any) -> Any:
    """``y`` as booleans, True for a known anomaly, or None when ``y`` is not a
    label of anomalies: two values among 0/1, False/True or -1/1 (-1 an outlier,
    as the model's ``predict``).  Missing labels are not allowed."""
    if y is None:
        return None
    values = pd.Series(np.asarray(y)).dropna()
    if len(values) != len(np.asarray(y)) or values.nunique() != 2:
        return None
    if values.dtype == bool:
        return values.to_numpy()
    try:
        numbers = values.astype(float).to_numpy()
    except (TypeError, ValueError):
        return None
    found = set(np.unique(numbers).tolist())
    if found == {0.0, 1.0}:
        return numbers == 1.0
    if found == {-1.0, 1.0}:
        return numbers == -1.0
    return None


def _anomaly_scores(model: Any, X: Any) -> Any:
    """``-score_samples`` of each row: the model's own, or its Forest's (bit for
    bit the same) for a Forest named after a data file's columns.  A row is an
    outlier where this exceeds ``-offset_`` (``predict`` -1)."""
    from ._tables import predict

    return -np.asarray(predict(model, X), dtype=float)


def _card(
    model: Any, forest: Any, X: Any, y: Any, *, source: str | None
) -> dict[str, Any]:
    """The model card: the model, how many rows it calls outliers, its scores."""
    from ._tables import model_name

    depths = [t.max_depth for t in forest.trees]
    name = model_name(model)
    anomaly = _anomaly_scores(model, X)
    outlier = anomaly > -float(forest.isolation_offset)
    n_rows = int(anomaly.size)
    threshold = -float(forest.isolation_offset)
    median, high, top = (
        format_number(float(v)) for v in np.quantile(anomaly, [0.5, 0.95, 1.0])
    )
    summary = [
        ("Model", name),
        ("Kind", "isolation forest (anomaly scores)"),
        ("Trees", str(forest.n_trees)),
        (
            "Depth",
            f"{min(depths)} to {max(depths)}"
            if min(depths) != max(depths)
            else str(max(depths)),
        ),
        ("Leaves", f"{sum(t.n_leaves for t in forest.trees):,} in all"),
        ("Features", str(forest.n_features)),
    ]
    scores = [
        (
            "Outliers",
            f"{int(outlier.sum()):,} of {n_rows:,} rows ({outlier.mean():.1%})",
        ),
        ("Threshold", f"an anomaly score above {format_number(threshold)}"),
        ("Anomaly score", f"median {median}, 95th percentile {high}, highest {top}"),
    ]
    where = f"the {n_rows:,} rows of {source or 'the data given'}"
    text = (
        f"Scores of {where}, every row: the anomaly score is the model's "
        "score_samples negated (higher is more anomalous), an outlier a row its "
        "predict calls -1."
    )
    known = anomaly_targets(y)
    if known is not None:
        from sklearn.metrics import average_precision_score, roc_auc_score

        scores.append(("ROC AUC", f"{roc_auc_score(known, anomaly):.4f}"))
        scores.append(
            ("Average precision", f"{average_precision_score(known, anomaly):.4f}")
        )
        scores.append(("Known anomalies", f"{int(known.sum()):,}"))
        text += (
            " ROC AUC and average precision say how well the anomaly score ranks "
            "the rows the target column marks as anomalies (1, True, or -1 as "
            "predict) above the others."
        )
    elif y is not None:
        text += (
            " The target column is not a label of anomalies (two values, 0/1, "
            "False/True or -1/1), so it scores nothing."
        )
    return {
        "name": name,
        "summary": summary,
        "scores": scores,
        "source": text,
        "training": False,
        "warning": None,
    }


def most_anomalous_rows(model: Any, X: Any, k: int) -> list[int]:
    """Positions of the ``k`` complete rows the model calls outliers with the
    highest anomaly scores, most anomalous first."""
    from .._adapters import to_forest
    from ._tables import refused_missing

    anomaly = _anomaly_scores(model, X)
    offset = float(to_forest(model).isolation_offset or 0.0)
    candidates = (anomaly > -offset) & ~np.asarray(refused_missing(model, X))
    positions = np.flatnonzero(candidates)
    order = np.argsort(-anomaly[positions], kind="stable")[:k]
    return [int(p) for p in positions[order]]


def _importance(
    model: Any, X: Any, picture: Picture, table: Any, *, n_rows: int
) -> dict[str, Any]:
    """Mean |SHAP| of the rows ``X`` (a sample of ``n_rows``) as the report's
    importance section."""
    from .._explain._shap_importance import shap_importance
    from .._plots._display_importance import ImportanceDisplay
    from ._pictures import new_figure

    result = shap_importance(model, X)
    interval, spread = result.interval_, result.std_
    assert interval is not None and spread is not None  # shap_importance's own
    frame = pd.DataFrame(
        {
            "feature": result.importances_.index,
            "mean |SHAP|": result.importances_.to_numpy(),
            "95% low": interval["low"].to_numpy(),
            "95% high": interval["high"].to_numpy(),
            "std over rows": spread.to_numpy(),
        }
    ).sort_values("mean |SHAP|", ascending=False, kind="stable")

    def chart() -> Any:
        n = min(len(frame), 15)
        figure, ax = new_figure(6.4, max(2.5, 0.28 * n + 1.2))
        ImportanceDisplay.from_result(result, ax=ax, top_k=15, error_bars="interval")
        return figure

    n_used = int(np.shape(X)[0])
    used = (
        f"all {n_used:,} rows"
        if n_used == n_rows
        else f"a random sample of {n_used:,} of the {n_rows:,} rows (every row "
        "with --all-rows)"
    )
    return {
        "frame": frame,
        "notes": [
            (
                "An IsolationForest's trees split at random on rows without a "
                "target, "
                "so no split decreases an impurity and nothing is scored against a "
                "target: MDI, held-out and debiased MDI and permutation importance do "
                "not apply. Each column is ranked instead by the mean absolute SHAP "
                "value of the anomaly score's raw form (the mean path length over "
                "c(max_samples), which -log2 of the anomaly score gives): how far, on "
                "average, the column moves a row's score, in either direction."
            ),
        ],
        "rows_note": f"Measured on {used}, with a 95% bootstrap interval over "
        "the rows.",
        "training": False,
        "table": table(frame, max_rows=15),
        "has_held_out": False,
        "note": None,
        "pictures": [
            picture(
                "Importance",
                "Mean absolute SHAP value of each column, largest on top; the "
                "whiskers are the 95% bootstrap interval over the rows.",
                chart,
            )
        ],
    }


def _histogram(model: Any, forest: Any, X: Any) -> Any:
    from ._pictures import new_figure

    anomaly = _anomaly_scores(model, X)
    threshold = -float(forest.isolation_offset)
    figure, ax = new_figure(6.4, 3.6)
    bins = np.histogram_bin_edges(anomaly, bins="auto")[:101]
    ax.hist(anomaly[anomaly <= threshold], bins=bins, color="#7b8794", label="inliers")
    ax.hist(anomaly[anomaly > threshold], bins=bins, color="#d64545", label="outliers")
    ax.axvline(threshold, color="black", linestyle="--", label="threshold")
    ax.set_xlabel("anomaly score (-score_samples)")
    ax.set_ylabel("rows")
    ax.legend(frameon=False)
    return figure


#: Cells of the exact score map at most: the overlay of every tree's split
#: lines in the two columns, each cell scored through every tree at once.
MAP_CELLS = 1_000_000


def _score_map(
    forest: Any, X: Any, pair: Sequence[str], picture: Picture
) -> dict[str, Any]:
    """The whole model's anomaly score over two columns, the others held at
    their median (:class:`~treelens.PredictionSurfaceDisplay` of
    ``-score_samples``, its threshold ``-offset_`` a white line), with the rows
    drawn on top; the caption says how it was computed (exact cells, or bands
    of a categorical column), known once drawn."""
    from ._pictures import surface_caption, surface_figure

    drawn: dict[str, Any] = {}

    def draw() -> Any:
        figure, drawn["display"] = surface_figure(
            forest, X, features=pair, exact=True, max_cells=MAP_CELLS
        )
        return figure

    entry = picture("Anomaly score map", "", draw)
    if "display" in drawn:
        text = (
            f"The whole model's anomaly score over {pair[0]} and {pair[1]}, the two "
            "columns that move the score most, the other features held at their "
            f"median, {surface_caption(drawn['display'], max_cells=MAP_CELLS)}; the "
            "white line is the threshold, the dots the rows."
        )
        entry["caption"] = " ".join([text, entry["caption"]]).strip()
    return entry


def _pictures(
    model: Any, forest: Any, X: Any, X_used: Any, top: Sequence[str], picture: Picture
) -> list[dict[str, Any]]:
    """The scores' histogram over ``X``; the tree and its partition drawn with
    the sample ``X_used``."""
    from ._pictures import dependence_entry, picture_figure

    pictures = [
        picture(
            "Anomaly scores",
            "How many rows score how high; the dashed line is the model's "
            "threshold (its offset_), right of which a row is an outlier.",
            lambda: _histogram(model, forest, X),
        ),
        picture(
            "Tree diagram",
            "The first tree cut at depth 3; each node shows its samples and value "
            "(a leaf's value is its path length: depth plus c of its samples).",
            lambda: picture_figure("tree", model, X_used, None),
        ),
    ]
    if len(top) >= 2:
        pair = list(top[:2])
        pictures.append(_score_map(forest, X_used, pair, picture))
    if top:
        pictures.append(dependence_entry(model, X_used, top[0], picture))
    return pictures


def anomaly_sections(
    model: Any,
    forest: Any,
    X: Any,
    y: Any,
    X_used: Any,
    *,
    answer: Callable[..., dict[str, Any]],
    target: Any,
    rows: Sequence[int] | None,
    max_counterfactuals: int,
    search: Mapping[str, Any],
    picture: Picture,
    table: Any,
    source: str | None,
) -> dict[str, Any]:
    """The report's context for an IsolationForest.

    ``answer`` is the report's counterfactual section (called with the goal, the
    rows and ``search``'s options), ``picture`` and ``table`` its picture and
    table builders; ``X_used`` the sample the importance and pictures use.
    """
    goal = "inlier" if target is None else target
    context: dict[str, Any] = {
        "model": _card(model, forest, X, y, source=source),
        "counterfactuals": None,
        "nodes": None,
    }
    chosen = (
        list(rows)
        if rows is not None
        else most_anomalous_rows(model, X, max_counterfactuals)
    )
    if chosen:
        which = (
            None
            if rows is not None
            else f"the {len(chosen)} most anomalous rows the model calls outliers"
        )
        context["counterfactuals"] = answer(
            model,
            X,
            None,
            goal,
            len(chosen),
            rows=chosen,
            which=which,
            background=(X_used, None),
            **search,
        )
    elif max_counterfactuals > 0:
        context["counterfactuals"] = {
            "intro": "The model calls no complete row an outlier; nothing to change.",
            "notes": [],
            "rows": None,
        }
    importance = _importance(model, X_used, picture, table, n_rows=np.shape(X)[0])
    frame = importance.pop("frame")
    context["importance"] = importance
    context["pictures"] = _pictures(
        model, forest, X, X_used, list(frame["feature"]), picture
    )
    n_used, n = int(np.shape(X_used)[0]), int(np.shape(X)[0])
    context["pictures_note"] = (
        ""
        if n_used == n
        else f"The score map's dots and median row are those of a random sample of "
        f"{n_used:,} of the {n:,} rows; the histogram counts every row."
    )
    return context
