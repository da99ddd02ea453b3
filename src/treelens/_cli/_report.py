"""A self-contained HTML report on a tree model and a data set.

:func:`render_report` computes everything with the public API (importance, node
breakdown, pictures, counterfactuals) and fills the jinja2 template shipped in
``treelens/templates/report.html.j2``.  Pictures are embedded as base64 PNG, so
the file opens anywhere without network access.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .._exceptions import InputError, TreelensError

__all__ = ["render_report"]

Progress = Callable[[str], None] | None

_NODE_COLUMNS = (
    "node",
    "depth",
    "feature_name",
    "n_node_samples",
    "weighted_n_node_samples",
    "impurity",
    "left_impurity",
    "right_impurity",
    "decrease",
    "share",
)
_HEADERS = {
    "mdi": "MDI",
    "mdi_std": "MDI std (trees)",
    "held_out_mdi": "held-out MDI",
    "debiased_mdi": "debiased MDI",
    "debiased_low": "debiased 95% low",
    "debiased_high": "debiased 95% high",
    "permutation": "permutation",
    "permutation_std": "permutation std",
    "feature_name": "feature",
    "n_node_samples": "samples",
    "weighted_n_node_samples": "weighted samples",
    "impurity": "impurity",
    "left_impurity": "left impurity",
    "right_impurity": "right impurity",
}


def _step(progress: Progress, message: str) -> None:
    if progress is not None:
        progress(message)


def _cell(value: Any) -> dict[str, Any]:
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, bool) or value is None:
        return {
            "text": "" if value is None else ("yes" if value else "no"),
            "num": False,
        }
    if isinstance(value, (int, np.integer)):
        return {"text": str(value), "num": True}
    if isinstance(value, float):
        if not math.isfinite(value):
            return {"text": "" if math.isnan(value) else "–", "num": True}
        return {"text": f"{value:.4g}", "num": True}
    return {"text": str(value), "num": False}


def table_context(frame: pd.DataFrame, *, max_rows: int = 40) -> dict[str, Any]:
    """A DataFrame as the template's table: columns, formatted cells, hidden count."""
    shown = frame.head(max_rows)
    return {
        "columns": [_HEADERS.get(str(c), str(c)) for c in frame.columns],
        "rows": [
            [_cell(v) for v in record] for record in shown.itertuples(index=False)
        ],
        "hidden": max(0, len(frame) - max_rows),
    }


def _picture(title: str, caption: str, draw: Callable[[], Any]) -> dict[str, Any]:
    """Draw one picture; a picture that does not apply says why instead."""
    from ._pictures import figure_png_base64

    try:
        figure = draw()
    except (TreelensError, ValueError, TypeError) as exc:
        return {"title": title, "caption": caption, "png": None, "error": str(exc)}
    png, width, height = figure_png_base64(figure)
    return {
        "title": title,
        "caption": caption,
        "png": png,
        "width": width,
        "height": height,
        "error": None,
    }


def _summary(model: Any, forest: Any, X: Any, y: Any) -> dict[str, Any]:
    depths = [t.max_depth for t in forest.trees]
    leaves = sum(t.n_leaves for t in forest.trees)
    summary = [
        ("Model", f"{type(model).__module__.split('.')[0]}.{type(model).__name__}"),
        ("Kind", f"{forest.kind} ({forest.task})"),
        ("Trees", str(forest.n_trees)),
        (
            "Depth",
            f"{min(depths)} to {max(depths)}"
            if min(depths) != max(depths)
            else str(max(depths)),
        ),
        ("Leaves", f"{leaves} in all"),
        ("Features", str(forest.n_features)),
        ("Criterion", str(forest.criterion)),
    ]
    if forest.classes_ is not None:
        summary.append(("Classes", ", ".join(str(c) for c in forest.classes_)))
    scores = []
    if y is not None:
        from ._tables import predict

        predicted = predict(model, X)
        truth = np.asarray(y)
        if forest.task == "classification":
            from sklearn.metrics import accuracy_score, balanced_accuracy_score

            truth = _as_classes(truth, forest.classes_)
            scores.append(("Accuracy", f"{accuracy_score(truth, predicted):.4f}"))
            scores.append(
                (
                    "Balanced accuracy",
                    f"{balanced_accuracy_score(truth, predicted):.4f}",
                )
            )
        else:
            from sklearn.metrics import mean_absolute_error, r2_score

            truth = truth.astype(float)
            scores.append(("R²", f"{r2_score(truth, predicted):.4f}"))
            scores.append(
                ("Mean absolute error", f"{mean_absolute_error(truth, predicted):.4g}")
            )
    name = summary[0][1]
    return {"name": name, "summary": summary, "scores": scores}


def _as_classes(y: Any, classes: Any) -> Any:
    """``y`` in the dtype of the model's classes where the data file read it otherwise.

    A CSV column of labels 0/1 may come back as floats or text; labels are
    converted only where every value maps to a class exactly.
    """
    y = np.asarray(y)
    if classes is None or y.dtype == classes.dtype:
        return y
    if np.issubdtype(classes.dtype, np.number) and np.issubdtype(y.dtype, np.number):
        cast = y.astype(classes.dtype)
        return cast if np.array_equal(cast, y) else y
    lookup = {str(c): c for c in classes}
    if all(str(v) in lookup for v in np.unique(y.astype(str))):
        return np.asarray([lookup[str(v)] for v in y], dtype=classes.dtype)
    return y


def render_report(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    target: Any = None,
    max_counterfactuals: int = 5,
    cost: str = "auto",
    reference: Any = None,
    optimal: bool = False,
    time_limit: float = 10.0,
    title: str | None = None,
    progress: Progress = None,
) -> str:
    """Explain ``model`` on ``X`` in one self-contained HTML page.

    The page holds: a model summary and its scores on ``(X, y)``; MDI importance
    (and, when ``y`` is given, held-out MDI and permutation importance) as a table
    and a chart, with a plain-language note on how MDI is computed and when it
    misleads; the per-node breakdown of the first tree; the tree diagram; the
    partition and decision-region pictures of the two most important features; and
    counterfactuals for the first rows not predicted as ``target``.

    Parameters
    ----------
    model : fitted tree model
    X : DataFrame or array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        True targets; enables scores, held-out MDI and permutation importance.
    target : class label, optional
        Class the counterfactuals aim for; default the model's last class.
        Regressors get no counterfactual section.
    max_counterfactuals : int, default=5
        Rows explained.
    cost : str, default="auto"
        Cost of the counterfactuals (see :func:`~treelens.counterfactual`;
        ``"auto"`` is L1 in median absolute deviations of ``reference``).
    reference : array-like of shape (n_reference, n_features), optional
        Data for the counterfactuals' epsilon and scaled costs; default ``X``.
    optimal : bool, default=False
        Only proven least-cost counterfactuals (``method="optimal"``); by
        default :func:`treelens.counterfactual`'s ``"auto"``, which returns
        them within ``time_limit`` and else the best found with its gap.
    time_limit : float, default=10.0
        Seconds per row.
    title : str, optional
    progress : callable, optional
        Called with a short message before each step.

    Returns
    -------
    str
        The HTML document.
    """
    import jinja2

    from .._adapters import to_forest
    from .._version import __version__

    forest = to_forest(model)
    target_name = getattr(y, "name", None)
    classes: Any = [] if forest.classes_ is None else forest.classes_
    if y is not None and forest.task == "classification":
        y = _as_classes(y, classes)
        unknown = sorted({str(v) for v in np.unique(y)} - {str(c) for c in classes})
        if unknown:
            raise InputError(
                f"The target column holds classes the model does not know {unknown}; "
                f"expected some of {[str(c) for c in classes]}."
            )
    _step(progress, "model summary")
    context: dict[str, Any] = {
        "title": title or "treelens report",
        "version": __version__,
        "model": _summary(model, forest, X, y),
        "data": {"n_rows": int(np.shape(X)[0]), "target": target_name},
    }
    _step(progress, "importance")
    context["importance"] = _importance_section(model, X, y)
    mdi = context["importance"].pop("mdi")
    context["nodes"] = (
        None
        if mdi is None
        else {
            "tree": 0,
            "n_trees": forest.n_trees,
            "table": table_context(_node_table(mdi), max_rows=63),
        }
    )
    _step(progress, "pictures")
    context["pictures"] = _pictures(model, forest, X, y)
    context["counterfactuals"] = None
    if forest.task == "classification" and max_counterfactuals > 0:
        _step(progress, "counterfactuals")
        goal = classes[-1] if target is None else target
        context["counterfactuals"] = _counterfactual_section(
            model,
            X,
            y,
            goal,
            max_counterfactuals,
            cost=cost,
            reference=reference,
            optimal=optimal,
            time_limit=time_limit,
        )
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("treelens._cli", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template("report.html.j2").render(**context)


def _importance_section(model: Any, X: Any, y: Any) -> dict[str, Any]:
    from .._plots._display_importance import ImportanceDisplay
    from ._importance_note import importance_note
    from ._pictures import new_figure
    from ._tables import importance_frame, importance_results

    results = importance_results(
        model, X, y, permutation=y is not None and hasattr(model, "score")
    )
    primary, held, perm, debiased = (
        results["primary"],
        results["held_out"],
        results["permutation"],
        results["debiased"],
    )
    frame = importance_frame(
        primary, held_out=held, permutation=perm, debiased=debiased
    )

    def chart() -> Any:
        n = min(len(frame), 15)
        shown = [r for r in (primary, held, debiased, perm) if r is not None]
        # Room for the legend below the axes: one line per method.
        figure, ax = new_figure(6.4, max(2.5, 0.28 * n + 1.2) + 0.25 * len(shown))
        ImportanceDisplay.from_result(shown, ax=ax, top_k=15)
        return figure

    caption = (
        "Bars sorted by importance; the legend says what each method's whiskers "
        "show (debiased MDI is unnormalized and may be negative)."
    )
    return {
        "mdi": results["mdi"],
        "notes": results["notes"],
        "table": table_context(frame, max_rows=15),
        "has_held_out": held is not None,
        "note": importance_note(frame, has_data=y is not None),
        "pictures": [_picture("Importance", caption, chart)],
    }


def _node_table(mdi: Any) -> pd.DataFrame:
    nodes = mdi.nodes_
    frame = nodes[nodes["tree"] == 0]
    columns = [c for c in _NODE_COLUMNS if c in frame.columns]
    return (
        frame[columns].reset_index(drop=True)
        if columns
        else frame.reset_index(drop=True)
    )


def _pictures(model: Any, forest: Any, X: Any, y: Any) -> list[dict[str, Any]]:
    from ._pictures import picture_figure, top_features

    pictures = [
        _picture(
            "Tree diagram",
            "The first tree cut at depth 3; each node shows its samples, value, "
            "impurity and MDI decrease.",
            lambda: picture_figure("tree", model, X, y),
        )
    ]
    if forest.n_features < 2:
        if forest.task == "regression":
            pictures.append(
                _picture(
                    "Regression steps",
                    "The fitted step function at several depths.",
                    lambda: picture_figure("regression-steps", model, X, y),
                )
            )
        return pictures
    pair = top_features(model, 2)
    others = "the other features held at their median"
    pictures.append(
        _picture(
            "Partition",
            f"The rectangles the first tree cuts in {pair[0]} and {pair[1]}, {others}.",
            lambda: picture_figure("partition", model, X, y, features=pair),
        )
    )
    if forest.task == "classification":
        pictures.append(_region_picture(model, forest, X, y))
    return pictures


def _region_picture(model: Any, forest: Any, X: Any, y: Any) -> dict[str, Any]:
    """The decision regions in the view that shows the most classes, with a
    caption saying how the features and the reference row were chosen."""
    from .._plots._region_view import choose_region_view
    from ._pictures import picture_figure, top_features

    candidates = top_features(model, min(6, forest.n_features))
    drawn = model if hasattr(model, "n_features_in_") else forest
    try:
        view = choose_region_view(drawn, X, candidates)
    except (TreelensError, ValueError, TypeError) as exc:
        return _picture(
            "Decision regions",
            f"No view could be chosen ({exc}).",
            lambda: picture_figure("region", model, X, y, features=candidates[:2]),
        )
    return _picture(
        "Decision regions",
        f"The whole model's predicted class over {view.caption}",
        lambda: picture_figure(
            "region", model, X, y, features=view.features, reference=view.reference
        ),
    )


def _counterfactual_section(
    model: Any,
    X: Any,
    y: Any,
    goal: Any,
    max_rows: int,
    *,
    cost: str,
    reference: Any,
    optimal: bool,
    time_limit: float,
) -> dict[str, Any]:
    from .._adapters import to_forest
    from .._plots._display_counterfactual import CounterfactualDisplay
    from ._pictures import new_figure
    from ._tables import counterfactual_result_tables, counterfactuals

    method = "least-cost counterfactuals (mixed-integer program)"
    chosen, result = counterfactuals(
        model,
        X,
        target=goal,
        max_rows=max_rows,
        cost=cost,
        reference=reference,
        optimal=optimal,
        time_limit=time_limit,
    )
    if result is None:
        return {
            "intro": f"Every row is already predicted as class {goal}; nothing to change.",
            "rows": None,
        }
    tables = counterfactual_result_tables(result, chosen, result.prediction_)
    rows = tables["rows"][1]
    found = int(rows["found"].sum())
    intro = (
        f"For the first {len(rows)} rows not predicted as class {goal}: the least costly "
        f"change ({method}, {result.cost_name_} cost) that makes the model predict {goal}; "
        f"found for {found} of {len(rows)}. Row numbers count data rows from 0."
    )
    pictures = []
    if found:
        index = int(np.flatnonzero(result.found_)[0])

        def arrow() -> Any:
            figure, ax = new_figure(6.4, 5)
            drawn = model if hasattr(model, "n_features_in_") else to_forest(model)
            CounterfactualDisplay.from_result(
                drawn, result, index=index, X_background=X, y_background=y, ax=ax
            )
            return figure

        pictures.append(
            _picture(
                f"Counterfactual of row {chosen[index]}",
                "The row (start of the arrow) and its counterfactual (end), over the "
                "model's regions in the two features that changed most.",
                arrow,
            )
        )
    from ._why import why_this_decision

    return {
        "intro": intro,
        "rows": table_context(rows),
        "changes": table_context(tables["changes"][1], max_rows=60),
        "pictures": pictures,
        "why": why_this_decision(
            model, X, chosen, result, picture=_picture, table=table_context
        ),
    }
