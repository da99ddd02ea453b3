"""A self-contained HTML report on a tree model and a data set.

:func:`render_report` computes everything with the public API (importance, node
breakdown, pictures, counterfactuals) and fills the jinja2 template shipped in
``treelens/_report/templates/report.html.j2``.  Pictures are embedded as base64
PNG, so the file opens anywhere without network access.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._core._numbers import format_number
from .._exceptions import InputError, TreelensError

__all__ = ["render_report"]

Progress = Callable[[str], None] | None

_HEADERS = {
    "mdi": "MDI",
    "mdi_std": "MDI std (trees)",
    "gain_std": "gain std (trees)",
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
        return {"text": format_number(value), "num": True}
    return {"text": str(value), "num": False}


def table_context(
    frame: pd.DataFrame,
    *,
    max_rows: int = 40,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A DataFrame as the template's table: columns, formatted cells, hidden count.

    ``headers`` renames columns beyond the report's usual headers.
    """
    shown = frame.head(max_rows)
    names = {**_HEADERS, **(headers or {})}
    return {
        "columns": [names.get(str(c), str(c)) for c in frame.columns],
        "rows": [
            [_cell(v) for v in record] for record in shown.itertuples(index=False)
        ],
        "hidden": max(0, len(frame) - max_rows),
    }


def _picture(title: str, caption: str, draw: Callable[[], Any]) -> dict[str, Any]:
    """Draw one picture; a picture that cannot be drawn says why, in words.

    Rows left out for missing values are counted in the caption.
    """
    import warnings

    from .._exceptions import MissingValuesWarning
    from ._pictures import figure_png_base64

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingValuesWarning)
        try:
            figure = draw()
        except TreelensError as exc:
            return _not_drawn(title, str(exc))
        except (ValueError, TypeError, IndexError, MemoryError):
            return _not_drawn(
                title,
                "this model and data give no picture of this kind (the drawing "
                "library refused them).",
            )
    notes = {str(w.message) for w in caught if w.category is MissingValuesWarning}
    png, width, height = figure_png_base64(figure)
    return {
        "title": title,
        "caption": " ".join([caption, *sorted(notes)]),
        "png": png,
        "width": width,
        "height": height,
        "error": None,
    }


def _not_drawn(title: str, reason: str) -> dict[str, Any]:
    return {"title": title, "caption": "", "png": None, "error": reason}


def _card(
    model: Any, forest: Any, X: Any, y: Any, *, match: str, source: str | None
) -> dict[str, Any]:
    """The model card: what the model is, its scores, and where the scores come from."""
    card = _summary(model, forest, X, y)
    n_rows = int(np.shape(X)[0])
    where = f"the {n_rows:,} rows of {source or 'the data given'}"
    if y is None:
        card["source"] = f"Not scored: {where} have no target column."
    else:
        card["source"] = f"Scores on {where}, every row."
    card["training"] = match == "training"
    if match == "training":
        card["warning"] = (
            "These rows are the model's training data: routed through its trees "
            "they give exactly the node counts the trees stored. The scores say how "
            "well the model fits them, not how well it predicts new rows, and "
            "importance measured on them is MDI again, not held-out. Give rows "
            "the model was not fitted on to estimate performance."
        )
    elif match == "other":
        card["warning"] = None
        card["source"] += (
            " They are not exactly the training rows (the counts per leaf differ "
            "from the stored ones); on held-out rows the scores estimate "
            "performance on new data."
        )
    else:
        card["warning"] = None
        card["source"] += (
            " Whether they are the training rows is unknown: this model stores no "
            "per-leaf counts to compare."
        )
    return card


def _summary(model: Any, forest: Any, X: Any, y: Any) -> dict[str, Any]:
    from ._tables import model_name

    depths = [t.max_depth for t in forest.trees]
    leaves = sum(t.n_leaves for t in forest.trees)
    summary = [
        ("Model", model_name(model)),
        ("Kind", f"{forest.kind} ({forest.task})"),
        ("Trees", str(forest.n_trees)),
        (
            "Depth",
            f"{min(depths)} to {max(depths)}"
            if min(depths) != max(depths)
            else str(max(depths)),
        ),
        ("Leaves", f"{leaves:,} in all"),
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
            with warnings.catch_warnings():
                # Rows of one class: scikit-learn warns, and the score is that
                # class's recall, as defined.
                warnings.simplefilter("ignore", UserWarning)
                balanced = balanced_accuracy_score(truth, predicted)
            scores.append(("Balanced accuracy", f"{balanced:.4f}"))
        else:
            from sklearn.metrics import mean_absolute_error, r2_score

            truth = truth.astype(float)
            if truth.size > 1:  # R² is undefined on one row
                scores.append(("R²", f"{r2_score(truth, predicted):.4f}"))
            scores.append(
                ("Mean absolute error", f"{mean_absolute_error(truth, predicted):.4g}")
            )
            scores += _deviance(forest, truth, np.asarray(predicted, float))
    name = summary[0][1]
    return {"name": name, "summary": summary, "scores": scores}


def _deviance(forest: Any, truth: Any, predicted: Any) -> list[tuple[str, str]]:
    """The mean deviance of the loss a linked regressor was fitted on
    (``forest.loss``), which suits counts, amounts and fractions better than R²:
    Poisson (counts at or above 0), gamma (amounts above 0), Tweedie of power
    ``p = forest.loss_power`` (targets at or above 0 for ``1 <= p < 2``, above 0
    for ``p >= 2``), cross-entropy (fractions in [0, 1]); nothing where the
    targets fall outside its domain, for a Tweedie loss of unknown power or for
    another loss."""
    from sklearn.metrics import (
        mean_gamma_deviance,
        mean_poisson_deviance,
        mean_tweedie_deviance,
    )

    loss, power = forest.loss, forest.loss_power
    if loss == "tweedie" and power is not None:
        if (power >= 2 and (truth > 0).all()) or (
            1 <= power < 2 and (truth >= 0).all()
        ):
            deviance = mean_tweedie_deviance(truth, predicted, power=power)
            return [(f"Mean Tweedie deviance (power {power:g})", f"{deviance:.4g}")]
        return []
    if loss == "poisson" and (truth >= 0).all():
        return [
            ("Mean Poisson deviance", f"{mean_poisson_deviance(truth, predicted):.4g}")
        ]
    if loss == "gamma" and (truth > 0).all():
        return [("Mean gamma deviance", f"{mean_gamma_deviance(truth, predicted):.4g}")]
    if loss == "cross_entropy" and ((truth >= 0) & (truth <= 1)).all():
        p = np.clip(predicted, 1e-15, 1 - 1e-15)
        entropy = -(truth * np.log(p) + (1 - truth) * np.log1p(-p)).mean()
        return [("Mean cross-entropy", f"{entropy:.4g}")]
    return []


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


#: Rows the report uses by default for the work that grows with rows (held-out
#: and debiased MDI, permutation importance): a random sample of this many rows,
#: drawn with ``random_state``; ``sample_rows=None`` uses every row.
DEFAULT_SAMPLE_ROWS = 5_000
#: Permutation importance predicts every row once per feature and shuffle, so it
#: scores at most this many rows of the sample, shuffling each feature this often.
PERMUTATION_ROWS = 1_000
PERMUTATION_REPEATS = 3


def render_report(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    target: Any = None,
    rows: Sequence[int] | None = None,
    max_counterfactuals: int = 5,
    cost: str = "auto",
    constraints: Mapping[str, Any] | None = None,
    reference: Any = None,
    optimal: bool = False,
    time_limit: float = 10.0,
    fill_missing: bool | list[str] = False,
    fill_cost: float | None = None,
    sample_rows: int | None = DEFAULT_SAMPLE_ROWS,
    random_state: int = 0,
    source: str | None = None,
    title: str | None = None,
    fitted: Any = None,
    progress: Progress = None,
) -> str:
    """Explain ``model`` on ``X`` in one self-contained HTML page, answers first.

    The page holds, in this order: the model card with its scores on ``(X, y)``
    and where they come from (with a warning when ``X`` is the training data:
    its node counts replayed through the trees equal the stored ones); the answer
    for the chosen rows (prediction and the least costly change that reaches
    ``target``); importance (MDI, and with ``y`` held-out MDI, debiased MDI and
    permutation importance) as a table and a chart with a note on which to trust;
    the pictures (tree, partition, and a classifier's regions or a regressor's
    surface in the two most important features; the SHAP dependence of the top
    column); and, folded, the per-node breakdown of the first tree.
    An IsolationForest gets a page of its scores instead
    (:mod:`treelens._report._anomaly`): ``y`` then marks known anomalies,
    ``target`` defaults to ``"inlier"`` and ``rows`` to its most anomalous
    outliers.

    Parameters
    ----------
    model : fitted tree model
    X : DataFrame or array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        True targets; enables scores, held-out MDI and permutation importance.
    target : class label or (low, high), optional
        Class the counterfactuals aim for; default the model's last class.  For
        a regressor the range of predicted values they aim for (either end None
        when open); without it the page says how to ask for counterfactuals.
    rows : sequence of int, optional
        Rows of ``X`` (positions) to answer for; default the first
        ``max_counterfactuals`` complete rows not predicted as ``target`` (of a
        regressor, predicted outside the range).
    max_counterfactuals : int, default=5
        Rows answered for when ``rows`` is not given.
    cost : str, default="auto"
        Cost of the counterfactuals (see :func:`~treelens.counterfactual`;
        ``"auto"`` is L1 in median absolute deviations of ``reference``).
    constraints : mapping, optional
        ``immutable``, ``increase_only``, ``decrease_only``, ``integer`` (lists of
        feature names) and ``bounds`` (name -> (low, high)), as
        :class:`~treelens.Constraints` takes them.
    reference : array-like of shape (n_reference, n_features), optional
        Data for the counterfactuals' epsilon and scaled costs; default ``X``.
    optimal : bool, default=False
        Only proven least-cost counterfactuals (``method="optimal"``); by
        default :func:`treelens.counterfactual`'s ``"auto"``, which returns
        them within ``time_limit`` and else the best found with its gap.
    time_limit : float, default=10.0
        Seconds per row.
    fill_missing : bool or list of str, default=False
        Missing values the counterfactuals may fill (all, or those of the columns
        named), at ``fill_cost`` each (default 1), as :func:`treelens.counterfactual`.
    fill_cost : float, optional
    sample_rows : int or None, default=5000
        Held-out and debiased MDI use a random sample of this many rows (all
        rows when there are fewer, or with None), and permutation importance
        the first 1,000 rows of that sample, shuffling each feature 3 times; the
        pictures draw that sample's points.  The page says how many rows each
        figure used.  Scores and counterfactuals use every row.
    random_state : int, default=0
        Seed of the sample and of permutation importance.
    source : str, optional
        Name of the data (a file name) for the page.
    title : str, optional
    fitted : fitted model, optional
        The model fitted without feature names that ``model`` renames (default
        a Forest's ``fitted_model``): gain, training rows and predictions are its.
    progress : callable, optional
        Called with a short message before each stage.

    Returns
    -------
    str
        The HTML document.
    """
    from .._importance._training import training_data_match

    model, fitted, forest = _behind(model, fitted)
    _check_arguments(X, y, rows, max_counterfactuals, sample_rows)
    context: dict[str, Any] = {
        "title": title or "treelens report",
        "data": {"n_rows": int(np.shape(X)[0]), "target": getattr(y, "name", None)},
        "counterfactuals": None,
    }
    search = {
        "cost": cost, "constraints": constraints, "reference": reference,
        "optimal": optimal, "time_limit": time_limit, "fill_missing": fill_missing,
        "fill_cost": fill_cost,
    }  # fmt: skip
    if forest.link == "isolation":
        _step(progress, "model card, answer, importance and pictures of the scores")
        sample = _sample(X, None, sample_rows, random_state)[0]
        page = {
            "target": target,
            "rows": rows,
            "max_counterfactuals": max_counterfactuals,
        }
        return _render(
            context | _anomaly_page(model, forest, X, y, sample, search, source, page)
        )
    classes: Any = [] if forest.classes_ is None else forest.classes_
    if y is not None and forest.task == "classification":
        y = _checked_classes(y, classes)
    X_used, y_used = _sample(X, y, sample_rows, random_state)
    _step(progress, "model card")
    match = training_data_match(model if fitted is None else fitted, X)
    context["model"] = _card(model, forest, X, y, match=match, source=source)
    if rows or max_counterfactuals > 0:
        _step(progress, "answer: counterfactuals")
        goal = classes[-1] if target is None and len(classes) else target
        context["counterfactuals"] = _answer(
            model, X, y, goal, (X_used, y_used), max_counterfactuals, rows, search
        )
    _step(progress, f"importance on {_rows_text(X_used, X)}")
    context["importance"] = _importance_section(
        model, X_used, y_used, training=match == "training", n_rows=np.shape(X)[0],
        fitted=fitted,
    )  # fmt: skip
    mdi = context["importance"].pop("mdi")
    _step(progress, "pictures")
    # The points drawn and the median row holding the other features come from
    # the same bounded sample: a scatter of every row of a large table adds
    # seconds and nothing a reader can see.
    context["pictures"] = _pictures(model, forest, X_used, y_used)
    context["pictures_note"] = _points_note(X_used, X)
    _step(progress, "per-node breakdown")
    context["nodes"] = _nodes_section(mdi, forest)
    _step(progress, "writing the page")
    return _render(context)


def _behind(model: Any, fitted: Any) -> tuple[Any, Any, Any]:
    """``model``, the fitted model behind it (``fitted`` when given, else the
    ``fitted_model`` of a Forest) and its Forest.  A Forest then holds
    ``fitted`` as its ``fitted_model``, so that what predicts through it (the
    scores, permutation importance, the confirmations of counterfactuals) is
    that model's own predict."""
    import dataclasses

    from .._adapters import to_forest
    from .._core._forest import Forest

    if not isinstance(model, Forest):
        return model, fitted, to_forest(model)
    if fitted is None:
        return model, model.fitted_model, model
    # A Forest read from a model file is no fitted model: nothing to attach.
    if model.fitted_model is not fitted and not isinstance(fitted, Forest):
        model = dataclasses.replace(model, fitted_model=fitted)
    return model, fitted, model


def _points_note(X_used: Any, X: Any) -> str:
    """Which rows the pictures draw, when a sample of ``X``."""
    if X_used is X:
        return ""
    return f"The points drawn and the median row are those of {_rows_text(X_used, X)}."


def _check_arguments(
    X: Any,
    y: Any,
    rows: Sequence[int] | None,
    max_counterfactuals: int,
    sample_rows: int | None,
) -> None:
    """Refuse rows that are not positions of ``X``, targets of another length, and
    counts that are not whole and non-negative (``sample_rows`` positive)."""
    n_rows = int(np.shape(X)[0])
    if y is not None and len(y) != n_rows:
        raise InputError(
            f"`y` must hold one target per row of X ({n_rows} rows); got {len(y)}."
        )
    for name, value, least in (
        ("max_counterfactuals", max_counterfactuals, 0),
        ("sample_rows", sample_rows, 1),
    ):
        if value is None and name == "sample_rows":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InputError(f"`{name}` must be a whole number; got {value!r}.")
        if value < least:
            raise InputError(f"`{name}` must be at least {least}; got {value}.")
    for row in rows if rows is not None else ():
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)):
            raise InputError(
                f"`rows` must hold positions of rows of X (whole numbers); got {row!r}."
            )
        if not 0 <= row < n_rows:
            raise InputError(
                f"`rows` must be positions of rows of X, from 0 to {n_rows - 1}; got "
                f"{row}."
            )


def _anomaly_page(
    model: Any,
    forest: Any,
    X: Any,
    y: Any,
    sample: Any,
    search: dict[str, Any],
    source: str | None,
    page: dict[str, Any],
) -> dict[str, Any]:
    """The sections of an IsolationForest's page, built with this module's
    answer, picture and table builders; ``page`` holds the target, the rows and
    how many rows to answer for."""
    from ._anomaly import anomaly_sections

    return anomaly_sections(
        model,
        forest,
        X,
        y,
        sample,
        answer=_counterfactual_section,
        search=search,
        picture=_picture,
        table=table_context,
        source=source,
        **page,
    )


def _render(context: dict[str, Any]) -> str:
    import jinja2

    from .._version import __version__

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("treelens._report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    template = environment.get_template("report.html.j2")
    return template.render(version=__version__, **context)


def _checked_classes(y: Any, classes: Any) -> Any:
    y = _as_classes(y, classes)
    unknown = sorted({str(v) for v in np.unique(y)} - {str(c) for c in classes})
    if unknown:
        raise InputError(
            f"The target column holds classes the model does not know {unknown}; "
            f"expected some of {[str(c) for c in classes]}."
        )
    return y


def _sample(
    X: Any, y: Any, sample_rows: int | None, random_state: int
) -> tuple[Any, Any]:
    """A random sample of ``sample_rows`` rows (in data order), or all rows."""
    n = int(np.shape(X)[0])
    if sample_rows is None or n <= sample_rows:
        return X, y
    positions = np.sort(
        np.random.default_rng(random_state).choice(n, sample_rows, replace=False)
    )
    X_used = X.iloc[positions] if hasattr(X, "iloc") else np.asarray(X)[positions]
    if y is None:
        return X_used, None
    y_used = y.iloc[positions] if hasattr(y, "iloc") else np.asarray(y)[positions]
    return X_used, y_used


def _rows_text(used: Any, X: Any) -> str:
    n_used, n = int(np.shape(used)[0]), int(np.shape(X)[0])
    if n_used == n:
        return f"all {n:,} rows"
    return f"a random sample of {n_used:,} of the {n:,} rows"


def _nodes_section(mdi: Any, forest: Any) -> dict[str, Any] | None:
    if mdi is None:
        return None
    frame = _node_table(mdi)
    return {
        "tree": 0,
        "n_trees": forest.n_trees,
        "n_nodes": len(frame),
        "table": table_context(frame, max_rows=63),
    }


def _importance_section(
    model: Any,
    X: Any,
    y: Any,
    *,
    training: bool = False,
    n_rows: int | None = None,
    fitted: Any = None,
) -> dict[str, Any]:
    from .._plots._display_importance import ImportanceDisplay
    from ._importance_note import importance_note
    from ._pictures import new_figure
    from ._tables import importance_frame, importance_results

    results = importance_results(
        model,
        X,
        y,
        permutation=y is not None,
        n_repeats=PERMUTATION_REPEATS,
        permutation_rows=PERMUTATION_ROWS,
        fitted=fitted,
    )
    primary, held, perm, debiased = (
        results["primary"],
        results["held_out"],
        results["permutation"],
        results["debiased"],
    )
    if primary is None and held is None and perm is None:
        # A Forest read from a model file, and no target: nothing to measure.
        return {
            "mdi": None,
            "notes": results["notes"],
            "rows_note": None,
            "training": False,
            "table": None,
            "has_held_out": False,
            "note": None,
            "pictures": [],
        }
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
    headers = {"held_out_mdi": "MDI on the given data"} if training else {}
    n_used = int(np.shape(X)[0])
    rows_note = None
    if y is not None:
        total = n_used if n_rows is None else int(n_rows)
        used = (
            f"all {total:,} rows"
            if n_used == total
            else f"a random sample of {n_used:,} of the {total:,} rows (every row "
            "with --all-rows)"
        )
        measure = "MDI" if results["mdi"] is not None else "Gain"
        rows_note = (
            f"{measure} is read from the trees (their training rows). The other "
            f"columns are measured on {used}"
            if primary is not None
            else f"Every column is measured on {used}"
        )
        if results["permutation"] is not None:
            n_perm = min(n_used, PERMUTATION_ROWS)
            rows_note += (
                f"; permutation importance on {n_perm:,} of them "
                f"({PERMUTATION_REPEATS} shuffles per feature)"
            )
        rows_note += "."
    return {
        "mdi": results["mdi"],
        "notes": results["notes"],
        "rows_note": rows_note,
        "training": training,
        "table": table_context(frame, max_rows=15, headers=headers),
        "has_held_out": held is not None,
        "note": importance_note(frame, has_data=y is not None),
        "pictures": [_picture("Importance", caption, chart)],
    }


def _node_table(mdi: Any) -> pd.DataFrame:
    from ._tables import NODE_COLUMNS

    nodes = mdi.nodes_
    frame = nodes[nodes["tree"] == 0]
    columns = [c for c in NODE_COLUMNS if c in frame.columns]
    return (
        frame[columns].reset_index(drop=True)
        if columns
        else frame.reset_index(drop=True)
    )


def _pictures(model: Any, forest: Any, X: Any, y: Any) -> list[dict[str, Any]]:
    from ._pictures import (
        dependence_entry,
        picture_figure,
        surface_caption,
        surface_figure,
        top_features,
        top_score_features,
    )

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
    pair = top_features(model, 2, X=X)
    others = "the other features held at their median"
    try:
        cut = top_features(model, 2, numeric=True, X=X)
    except InputError as exc:
        pictures.append(_not_drawn("Partition", str(exc)))
    else:
        pictures.append(
            _picture(
                "Partition",
                f"The rectangles the first tree cuts in {cut[0]} and {cut[1]}, "
                f"{others}.",
                lambda: picture_figure("partition", model, X, y, features=cut),
            )
        )
    if forest.task == "classification":
        pictures.append(_region_picture(model, forest, X, y))
    else:
        # How the surface is computed (exact or a grid) is known once drawn.
        drawn: dict[str, Any] = {}

        def surface() -> Any:
            figure, drawn["display"] = surface_figure(model, X, y, features=pair)
            return figure

        entry = _picture("Prediction surface", "", surface)
        if "display" in drawn:
            coloured = (
                ", coloured by their target on the same scale" if y is not None else ""
            )
            text = (
                f"The whole model's prediction over {pair[0]} and {pair[1]}, "
                f"{others}, {surface_caption(drawn['display'])}; the dots are the "
                f"rows{coloured}."
            )
            entry["caption"] = " ".join([text, entry["caption"]]).strip()
        pictures.append(entry)
    try:
        top = top_score_features(model, X, 1)[0]
    except TreelensError as exc:
        pictures.append(_not_drawn("SHAP dependence", str(exc)))
    else:
        pictures.append(dependence_entry(model, X, top, _picture))
    return pictures


def _region_picture(model: Any, forest: Any, X: Any, y: Any) -> dict[str, Any]:
    """The decision regions in the view that shows the most classes, with a
    caption saying how the features and the reference row were chosen."""
    from .._plots._region_view import choose_region_view
    from ._pictures import picture_figure, top_features

    candidates = top_features(model, min(6, forest.n_features), X=X)
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


def _no_range(model: Any, X: Any) -> dict[str, Any]:
    """The answer section of a regressor's page when no target range was given:
    how to ask, and where the predictions lie."""
    from ._tables import prediction_spread

    spread = prediction_spread(model, X)
    return {
        "intro": "No counterfactuals: a regressor's counterfactuals aim for a range "
        "of its predicted value, and none was given (--target-range LOW:HIGH on the "
        "command line, target=(low, high) in Python; either end may be left open)."
        + (f" {spread}" if spread else ""),
        "notes": [],
        "rows": None,
    }


def _answer(
    model: Any,
    X: Any,
    y: Any,
    goal: Any,
    background: tuple[Any, Any],
    max_rows: int,
    rows: Sequence[int] | None,
    search: dict[str, Any],
) -> dict[str, Any]:
    """The answer section: the counterfactuals that reach ``goal`` (see
    :func:`_counterfactual_section`), or, for a regressor given no range (``goal``
    None), how to ask for them."""
    if goal is None:
        return _no_range(model, X)
    return _counterfactual_section(
        model, X, y, goal, max_rows, rows=rows, background=background, **search
    )


def _goal_words(goal: Any, isolation: bool) -> tuple[str, str]:
    """How the page says that the target is reached, and that a row meets it: a
    class, an IsolationForest's inlier or outlier, or a regressor's range of
    predicted values."""
    if isinstance(goal, (tuple, list)):
        low, high = goal
        if low is None:
            where = f"at most {format_number(float(high))}"
        elif high is None:
            where = f"at least {format_number(float(low))}"
        else:
            where = (
                f"within [{format_number(float(low))}, {format_number(float(high))}]"
            )
        if isolation:  # a range of score_samples
            return f"score it {where}", f"scored {where}"
        return f"predict a value {where}", f"predicted {where}"
    if isolation:
        return f"call it an {goal}", f"called an {goal}"
    return f"predict {goal}", f"predicted as class {goal}"


def _under_arrow(forest: Any) -> str:
    """What the counterfactual's arrow is drawn over (see CounterfactualDisplay)."""
    if forest.kind == "tree":
        return "partition"
    if forest.link == "isolation":
        return "anomaly score (-score_samples; the line is the target's bound)"
    if forest.is_classifier:
        return "regions"
    return "predicted value (the ends of the target range the lines)"


def _counterfactual_section(
    model: Any,
    X: Any,
    y: Any,
    goal: Any,
    max_rows: int,
    *,
    rows: Sequence[int] | None = None,
    cost: str,
    constraints: Mapping[str, Any] | None = None,
    reference: Any,
    optimal: bool,
    time_limit: float,
    fill_missing: bool | list[str] = False,
    fill_cost: float | None = None,
    background: tuple[Any, Any] | None = None,
    which: str | None = None,
) -> dict[str, Any]:
    """The answer for the chosen rows; ``background`` (rows and targets, default
    ``X`` and ``y``) are the points drawn behind the counterfactual's arrow (a
    classifier's only: it is drawn over the class regions); ``which`` says in
    words which rows these are, default their numbers or how they were chosen."""
    import warnings

    from .._adapters import to_forest
    from .._exceptions import MemoryBudgetError, MissingValuesWarning
    from ._tables import cost_words, counterfactual_result_tables, counterfactuals

    method = "least-cost counterfactuals (mixed-integer program)"
    rows, skipped = _complete_rows(model, X, rows)
    if rows is not None and not rows:
        return {"intro": "No chosen row is complete.", "notes": skipped, "rows": None}
    method_notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingValuesWarning)
        try:
            chosen, result = counterfactuals(
                model,
                X,
                target=goal,
                rows=rows,
                max_rows=max_rows,
                cost=cost,
                constraints=constraints,
                reference=reference,
                optimal=optimal,
                time_limit=time_limit,
                fill_missing=fill_missing,
                fill_cost=fill_cost,
                notes=method_notes,
            )
        except MemoryBudgetError as exc:
            # The rest of the page still answers; say plainly what could not be.
            return {
                "intro": "No change is computed for this model: it is too large for "
                "both counterfactual searches within their memory budget.",
                "notes": [*method_notes, str(exc)],
                "rows": None,
            }
    notes = [str(w.message) for w in caught if w.category is MissingValuesWarning]
    notes += skipped + method_notes
    if method_notes:
        method = "feature tweaking"
    forest = to_forest(model)
    isolation = forest.link == "isolation"
    reach, met = _goal_words(goal, isolation)
    if result is None:
        return {
            "intro": f"Every row is already {met}; nothing to change.",
            "notes": notes,
            "rows": None,
        }
    tables = counterfactual_result_tables(result, chosen, result.prediction_)
    table = tables["rows"][1]
    found = int(table["found"].sum())
    numbers = f"rows {', '.join(str(r) for r in chosen)}"
    if which is not None:
        which = f"{which} ({numbers})"
    elif rows is not None:
        which = numbers
    else:
        which = f"the first {len(table)} rows not {met}"
    fixed = _constraints_text(constraints)
    intro = (
        f"For {which}: the {'score' if isolation else 'prediction'}, and the least "
        f"costly change ({method}, "
        f"cost: {cost_words(result)}{fixed}) that makes the model {reach}; found for "
        f"{found} of {len(table)}. Row numbers count data rows from 0."
    )
    pictures = (
        _arrow_pictures(model, forest, result, chosen, background or (X, y), reach)
        if found
        else []
    )
    from ._why import why_this_decision

    return {
        "intro": intro,
        "notes": notes,
        "rows": table_context(
            table, headers={"prediction": "score_samples"} if isolation else None
        ),
        "changes": table_context(_changes_shown(tables["changes"][1]), max_rows=60),
        "pictures": pictures,
        "why": why_this_decision(
            model, X, chosen, result, picture=_picture, table=table_context
        ),
    }


def _arrow_pictures(
    model: Any,
    forest: Any,
    result: Any,
    chosen: Sequence[int],
    background: tuple[Any, Any],
    reach: str,
) -> list[dict[str, Any]]:
    """The first counterfactual found, drawn as an arrow from its row over the
    model's regions: the first one whose row has every value, since the
    picture holds the features it does not draw at the row's values (a row
    missing one, kept or filled, has none to hold it at)."""
    from .._plots._display_counterfactual import CounterfactualDisplay
    from ._pictures import new_figure

    rows = pd.DataFrame(np.asarray(result.X_, dtype=object))
    complete = rows.notna().all(axis=1).to_numpy()
    candidates = np.flatnonzero(np.asarray(result.found_, dtype=bool) & complete)
    if not candidates.size:
        return [
            _not_drawn(
                "Counterfactual",
                "every row with a counterfactual misses a value, and the picture "
                "holds the features it does not draw at the row's values",
            )
        ]
    index = int(candidates[0])
    # With more than the two drawn features changed, the slice through the
    # row can show the counterfactual outside the target's region; the slice
    # through the counterfactual shows it inside.
    n_changed = int(np.asarray(result.changed_)[index].sum())
    through: Literal["instance", "counterfactual"] = (
        "counterfactual" if n_changed > 2 else "instance"
    )

    def arrow() -> Any:
        figure, ax = new_figure(6.4, 5)
        drawn = model if hasattr(model, "n_features_in_") else forest
        points, targets = background
        CounterfactualDisplay.from_result(
            drawn,
            result,
            index=index,
            X_background=points,
            y_background=targets,
            slice_at=through,
            ax=ax,
        )
        return figure

    held = (
        f"every other feature at the counterfactual's value ({n_changed - 2} "
        f"more changed), so the end of the arrow lies where the model would {reach}"
        if through == "counterfactual"
        else "every other feature at the row's value"
    )
    return [
        _picture(
            f"Counterfactual of row {chosen[index]}",
            "The row (start of the arrow) and its counterfactual (end), over the "
            f"model's {_under_arrow(forest)} in the two features that changed "
            f"most, {held}.",
            arrow,
        )
    ]


def _changes_shown(changes: pd.DataFrame) -> pd.DataFrame:
    """The changes table without its ``tree`` and ``leaf`` columns when no change
    comes from a leaf (-1: every search but feature tweaking), a filled value's
    ``before`` reading "missing"."""
    from ._tables import missing_before

    sources = [c for c in ("tree", "leaf") if c in changes]
    if sources and (changes[sources] == -1).all(axis=None):
        changes = changes.drop(columns=sources)
    return missing_before(changes)


def _constraints_text(constraints: Mapping[str, Any] | None) -> str:
    """The constraints in words, for the answer's introduction."""
    if not constraints:
        return ""
    words = {
        "immutable": "fixed",
        "increase_only": "may only increase",
        "decrease_only": "may only decrease",
        "integer": "whole numbers",
    }
    parts = [
        f"{', '.join(map(str, constraints[key]))} {label}"
        for key, label in words.items()
        if constraints.get(key)
    ]
    for name, (low, high) in (constraints.get("bounds") or {}).items():
        low_text = "" if low is None else format_number(float(low))
        high_text = "" if high is None else format_number(float(high))
        parts.append(f"{name} within [{low_text}, {high_text}]")
    for name, categories in (constraints.get("allowed") or {}).items():
        parts.append(f"{name} one of {', '.join(map(str, categories))}")
    for group in constraints.get("one_hot") or ():
        parts.append(f"{', '.join(map(str, group))} one-hot")
    return "; " + "; ".join(parts) if parts else ""


def _complete_rows(
    model: Any, X: Any, rows: Sequence[int] | None
) -> tuple[list[int] | None, list[str]]:
    """The chosen rows without missing values the model refuses, and a note
    naming those left out (a model that routes missing values gets
    counterfactuals that keep them missing)."""
    from ._tables import refused_missing

    if rows is None:
        return None, []
    chosen = X.iloc[list(rows)] if hasattr(X, "iloc") else np.asarray(X)[list(rows)]
    incomplete = refused_missing(model, chosen)
    missing = (
        chosen.isna().to_numpy()
        if hasattr(chosen, "isna")
        else np.isnan(np.asarray(chosen, dtype=np.float64))
    )
    names = list(getattr(X, "columns", range(missing.shape[1])))
    notes = []
    for position in np.flatnonzero(incomplete):
        empty = [str(names[j]) for j in np.flatnonzero(missing[position])]
        notes.append(
            f"Row {rows[int(position)]} has no value of {', '.join(empty)}, which "
            "the model does not route, so it gets no counterfactual."
        )
    return [r for r, bad in zip(rows, incomplete, strict=True) if not bad], notes
