"""Tables for the command line and the report: call the public API, gather its
results as frames.

A *tables* value is an ordered mapping ``name -> (title, DataFrame)``.  It renders
as rich tables (text), as one JSON object of record lists (``--json``), or as CSV
(``--csv``; the last table only, the most detailed one).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd

from .._core._numbers import format_number
from .._exceptions import InputError, TreelensError, UnsupportedModelError

if TYPE_CHECKING:
    from .._importance._mdi import MDIImportance
    from .._importance._result import ImportanceResult
    from .._types import CostLike

__all__ = [
    "NODE_COLUMNS",
    "counterfactual_tables",
    "counterfactuals",
    "importance_frame",
    "importance_results",
    "importance_tables",
    "missing_before",
    "model_name",
    "node_frame",
    "predict",
    "renamed_features",
    "render",
    "rich_table",
    "selected_rows",
]

Tables = dict[str, tuple[str, pd.DataFrame]]
Progress = Callable[[str], None] | None

#: Columns of the per-node table shown on the terminal and in the report.
NODE_COLUMNS = (
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
# Columns shown on the terminal (the JSON and CSV outputs keep every column).
_TEXT_COLUMNS = {
    "nodes": NODE_COLUMNS,
    "changes": ("row", "option", "feature", "before", "after", "delta"),
}
_TEXT_HEADERS = {
    "feature_name": "feature",
    "n_node_samples": "samples",
    "weighted_n_node_samples": "weighted",
    "impurity": "I",
    "left_impurity": "I left",
    "right_impurity": "I right",
    "held_out_mdi": "held-out mdi",
    "debiased_mdi": "debiased mdi",
    "debiased_low": "deb. low",
    "debiased_high": "deb. high",
    "permutation_std": "perm. std",
}


def _step(progress: Progress, message: str) -> None:
    if progress is not None:
        progress(message)


def importance_frame(
    primary: Any,
    *,
    held_out: Any = None,
    permutation: Any = None,
    debiased: Any = None,
) -> pd.DataFrame:
    """One row per feature: MDI (or gain) with its spread, held-out MDI, debiased
    MDI (unnormalized, with its interval), permutation.

    Sorted by decreasing first column.  The first column is ``mdi``, or ``gain``
    for boosting libraries whose trees record gains rather than impurities; a
    ``primary`` of None (a Forest read from a model file, which keeps neither)
    leaves the columns measured on data, sorted by held-out MDI (else by
    permutation importance).
    """
    frame = pd.DataFrame()
    name = "held_out_mdi"
    if primary is not None:
        name = "gain" if "gain" in getattr(primary, "method", "").lower() else "mdi"
        frame[name] = primary.importances_
        std = getattr(primary, "std_", None)
        per_tree = getattr(primary, "per_tree_", None)
        if std is not None and (per_tree is None or len(per_tree) > 1):
            frame[f"{name}_std"] = std
    if held_out is not None:
        frame["held_out_mdi"] = held_out.importances_
    if debiased is not None:
        frame["debiased_mdi"] = debiased.importances_
        if debiased.interval_ is not None:
            frame["debiased_low"] = debiased.interval_["low"]
            frame["debiased_high"] = debiased.interval_["high"]
    if permutation is not None:
        frame["permutation"] = permutation.importances_
        if getattr(permutation, "std_", None) is not None:
            frame["permutation_std"] = permutation.std_
    if frame.empty:
        raise InputError(
            "No importance to tabulate; expected MDI, gain, held-out MDI or "
            "permutation importance, got none."
        )
    if name not in frame:  # neither stored nor held-out MDI: by permutation
        name = str(frame.columns[0])
    frame.index.name = "feature"
    return frame.sort_values(name, ascending=False, kind="stable").reset_index()


def node_frame(result: Any, tree: int) -> pd.DataFrame:
    """The per-node breakdown of one tree from an importance result's ``nodes_``."""
    nodes = result.nodes_
    return nodes[nodes["tree"] == tree].reset_index(drop=True)


def importance_results(
    model: Any,
    X: Any = None,
    y: Any = None,
    *,
    permutation: bool = False,
    n_repeats: int = 5,
    random_state: int = 0,
    oob: bool = False,
    permutation_rows: int | None = None,
    fitted: Any = None,
    progress: Progress = None,
) -> dict[str, Any]:
    """Every importance that applies to ``model``, and notes on those that do not.

    ``permutation_rows`` bounds the rows permutation importance scores (the
    first ones of ``X``, which the report passes as a random sample already).
    ``fitted`` is the fitted model ``model`` was built from when ``model`` is
    its Forest under other feature names (a data file's): its gain is read
    from it.

    Returns a dict with ``primary`` (MDI, or the normalized total gain of XGBoost
    and LightGBM models, whose trees record gains instead of impurities; None
    for a Forest read from a model file, which keeps neither), ``mdi`` (None
    when unavailable), ``held_out``, ``debiased`` (MDI-oob on the rows given, or
    on each tree's out-of-bag rows with ``oob`` when the data are the training
    data) and ``permutation`` (None when not asked or not available) and
    ``notes`` (list of str).
    """
    from .._importance._debiased import debiased_mdi_importance
    from .._importance._mdi import mdi_importance
    from .._importance._permutation import permutation_importance

    _step(progress, "MDI importance")
    mdi: MDIImportance | None
    try:
        mdi = mdi_importance(model)
        primary: ImportanceResult | None = mdi
        notes: list[str] = []
    except TreelensError:
        mdi = None
        primary, notes = _gain(model, fitted)
    held = perm = debiased = None
    if X is not None and y is not None:
        _step(progress, "held-out MDI importance")
        try:
            held = mdi_importance(model, X=X, y=y)
        except UnsupportedModelError as exc:  # bad data is an error, never a note
            notes.append(f"no held-out MDI: {exc}")
        _step(progress, "debiased MDI importance")
        try:
            debiased = debiased_mdi_importance(
                model, X, y, oob=oob, random_state=random_state
            )
        except TreelensError as exc:
            # Asked for out-of-bag rows of other rows than the training data:
            # bad input, not a measure that does not apply to this model.
            if oob and isinstance(exc, InputError):
                raise
            notes.append(f"no debiased MDI: {exc}")
        if permutation and len(X) < 2:
            # Shuffling one row changes nothing, and R² needs two rows.
            notes.append("no permutation importance: it needs at least two rows")
        elif permutation:
            _step(progress, "permutation importance")
            X_perm, y_perm = X, y
            if permutation_rows is not None and len(X) > permutation_rows:
                X_perm, y_perm = _head(X, permutation_rows), _head(y, permutation_rows)
            perm = permutation_importance(
                model, X_perm, y_perm, n_repeats=n_repeats, random_state=random_state
            )
    return {
        "primary": primary,
        "mdi": mdi,
        "held_out": held,
        "debiased": debiased,
        "permutation": perm,
        "notes": notes,
    }


# Where the gain of a model read into a Forest can be had instead.
_GAIN_FILES = {
    "catboost": "; its .cbm file, read by CatBoost, gives CatBoost's gain",
    "lightgbm": "; its text model file (Booster.save_model) gives LightGBM's gain",
    "xgboost": "; with xgboost installed its JSON file gives XGBoost's gain",
}


def _gain(model: Any, fitted: Any) -> tuple[Any, list[str]]:
    """The normalized total gain of a model whose trees record no impurities,
    with its note; None and a note saying why for a Forest read from a model
    file, which keeps no split gains."""
    from .._adapters import to_forest
    from .._core._forest import Forest
    from .._importance._gain import gain_importance

    forest = to_forest(model)
    if isinstance(model if fitted is None else fitted, Forest):
        library = forest.source.split(".")[0]
        return None, [
            f"no MDI or gain: this {forest.source or 'tree'} model was read into a "
            "treelens Forest (as a JSON model file is), which keeps its trees' "
            "predictions but neither node impurities nor the library's split gains"
            + _GAIN_FILES.get(library, "")
        ]
    gain = gain_importance(
        model if fitted is None else fitted,
        normalize=True,
        feature_names=None if fitted is None else forest.feature_names,
    )
    note = (
        "gain: the library's total split gain per feature, normalized to sum to "
        "one, since this model records no node impurities for MDI"
    )
    return gain, [note]


def importance_tables(
    model: Any,
    X: Any = None,
    y: Any = None,
    *,
    nodes: bool = False,
    tree: int = 0,
    permutation: bool = False,
    n_repeats: int = 5,
    random_state: int = 0,
    oob: bool = False,
    top: int | None = None,
    required: bool = True,
    progress: Progress = None,
    notes: list[str] | None = None,
) -> Tables:
    """Compute the importance tables the ``importance`` command shows.

    A model with no importance but those measured on data (a Forest read from
    a model file), given no data, gets no table when not ``required`` (the
    command shows SHAP values instead), else a refusal saying what to give.
    The notes on the measures that do not apply (or replace MDI) are in the
    importance table's title, and appended to ``notes`` when given.
    """
    results = importance_results(
        model,
        X,
        y,
        permutation=permutation,
        n_repeats=n_repeats,
        random_state=random_state,
        oob=oob,
        progress=progress,
    )
    if notes is not None:
        notes.extend(results["notes"])
    measured = [results[k] for k in ("primary", "held_out", "permutation")]
    if all(m is None for m in measured):
        if not required:
            return {}
        given = "no data" if y is None else "no --permutation"
        raise InputError(
            f"This model's importance can only be measured on data "
            f"({'; '.join(results['notes'])}); expected --data FILE --target COL "
            f"for held-out MDI, --permutation, or --shap; got {given}."
        )
    frame = importance_frame(
        results["primary"],
        held_out=results["held_out"],
        permutation=results["permutation"],
        debiased=results["debiased"],
    )
    if top is not None:
        frame = frame.head(top)
    title = "Feature importance"
    if results["notes"]:
        title += " (" + "; ".join(results["notes"]) + ")"
    tables: Tables = {"importance": (title, frame)}
    if nodes:
        if results["mdi"] is None:
            raise InputError(
                "--nodes shows the per-node MDI breakdown, which needs node "
                f"impurities; this model ({type(model).__name__}) records none."
            )
        tables["nodes"] = (
            f"Per-node MDI breakdown of tree {tree} (training statistics)",
            node_frame(results["mdi"], tree),
        )
    return tables


def renamed_features(tables: Tables, renamed: Mapping[str, str]) -> Tables:
    """``tables`` with the feature names of their ``feature`` and
    ``feature_name`` columns renamed (a model's default names ``x0, x1, ...``
    to those of a data file's columns); the same tables when ``renamed`` is
    empty."""
    if not renamed:
        return tables
    out: Tables = {}
    for name, (title, frame) in tables.items():
        columns = [c for c in ("feature", "feature_name") if c in frame.columns]
        if columns:
            frame = frame.assign(
                **{c: frame[c].map(lambda v: renamed.get(v, v)) for c in columns}
            )
        out[name] = (title, frame)
    return out


def shap_table(model: Any, X: Any, *, top: int | None = None) -> tuple[str, Any]:
    """The mean absolute SHAP value of each feature over the rows ``X``, with
    its bootstrap interval, largest first (:func:`treelens.shap_importance`)."""
    from .._explain._shap_importance import shap_importance

    result = shap_importance(model, X)
    frame = pd.DataFrame({"mean_abs_shap": result.importances_})
    if result.interval_ is not None:
        frame["low"] = result.interval_["low"]
        frame["high"] = result.interval_["high"]
    frame.index.name = "feature"
    frame = frame.sort_values("mean_abs_shap", ascending=False, kind="stable")
    if top is not None:
        frame = frame.head(top)
    title = f"Mean absolute SHAP value; {result.interval_method}"
    return title, frame.reset_index()


def model_name(model: Any) -> str:
    """The model's library and class, ``sklearn.RandomForestClassifier``; for a
    Forest, those of the model it was read from (``catboost.CatBoost``)."""
    from .._core._forest import Forest

    if isinstance(model, Forest) and model.source:
        parts = model.source.split(".")
        return f"{parts[0]}.{parts[-1]}"
    return f"{type(model).__module__.split('.')[0]}.{type(model).__name__}"


def predict(model: Any, X: Any) -> Any:
    """What the model's Forest predicts, by the model itself: its ``predict``
    (an IsolationForest's ``score_samples``), through treelens for boosters
    without ``predict(X)``; a Forest's own, unless it renamed the features of
    a model fitted without names (its ``fitted_model``), which predicts."""
    from .._adapters import to_forest
    from .._adapters._native import booster_predict
    from .._core._forest import Forest

    if isinstance(model, Forest):  # (whose classes_ is no sign of a model)
        if model.fitted_model is not None:
            from .._core._validation import by_position

            return predict(model.fitted_model, by_position(model, X))
        return np.asarray(model.predict(X))
    if hasattr(model, "classes_") or hasattr(model, "n_features_in_"):
        if to_forest(model).link == "isolation":
            return np.asarray(model.score_samples(X))
        # CatBoost's predict of a model read from a file gives raw scores.
        predicted = booster_predict(model, X)
        if predicted is not None:
            return np.asarray(predicted)
        return np.asarray(model.predict(X))
    return np.asarray(to_forest(model).predict(X))


def selected_rows(
    model: Any, X: Any, target: Any, *, rows: Sequence[int] | None, max_rows: int
) -> list[int]:
    """The rows given, else the first ``max_rows`` not already predicted as target."""
    if rows is not None:
        return list(rows)
    incomplete = refused_missing(model, X)
    # Rows with missing values the model refuses cannot be predicted: they
    # count as declined, and are passed over with a note.
    complete = np.flatnonzero(~incomplete)
    known = predict(model, X.iloc[complete] if hasattr(X, "iloc") else X[complete])
    predicted = np.empty(len(incomplete), dtype=np.asarray(known).dtype)
    predicted[complete] = known
    from .._adapters import to_forest
    from .._counterfactual._targets import resolve_target

    goal = resolve_target(to_forest(model), target)
    if goal.kind == "other":
        declined = np.ones(len(predicted), dtype=bool)
    else:
        declined = ~np.asarray(goal.meets(predicted, predicted), dtype=bool)
    declined |= incomplete
    chosen = np.flatnonzero(declined & ~incomplete)[:max_rows]
    last = chosen[-1] if len(chosen) == max_rows else len(declined)
    skipped = np.flatnonzero(declined[:last] & incomplete[:last])
    if skipped.size:
        from .._exceptions import MissingValuesWarning, warn

        warn(
            f"Passed over {skipped.size} row{'s' if skipped.size > 1 else ''} with "
            f"missing values the model does not route (the first is row "
            f"{int(skipped[0])}); they get no counterfactual.",
            MissingValuesWarning,
        )
    return [int(i) for i in chosen]


def prediction_spread(model: Any, X: Any) -> str:
    """Where a regressor's predictions on ``X`` lie, and a target range to try:
    a sentence for a page or note that asks for ``--target-range`` (empty when
    the model routes no row)."""
    complete = ~np.asarray(refused_missing(model, X), dtype=bool)
    if not complete.any():
        return ""
    rows = X[complete] if hasattr(X, "iloc") else np.asarray(X)[complete]
    low, median, high = np.percentile(
        np.asarray(predict(model, rows), dtype=np.float64), [0, 50, 100]
    )
    return (
        f"The predictions of these rows run from {format_number(low)} to "
        f"{format_number(high)} (median {format_number(median)}): for example "
        f"--target-range {format_number(median).replace(',', '')}: asks what would "
        "bring the rows below the median up to it."
    )


def refused_missing(model: Any, X: Any) -> Any:
    """Rows with a missing value the model does not route (a model that routes
    missing values gets counterfactuals that keep them missing)."""
    from .._adapters import to_forest

    missing = (
        X.isna().to_numpy() if hasattr(X, "isna") else np.isnan(np.asarray(X, float))
    )
    forest = to_forest(model)
    if forest.features:
        routed = np.array(
            [
                spec.dropped
                or (
                    forest.allow_missing
                    if spec.accepts_missing is None
                    else spec.accepts_missing
                )
                for spec in forest.features
            ]
        )
    else:
        routed = np.full(missing.shape[1], forest.allow_missing)
    return np.asarray((missing & ~routed).any(axis=1), dtype=bool)


def _head(data: Any, n: int) -> Any:
    return data.iloc[:n] if hasattr(data, "iloc") else np.asarray(data)[:n]


def _take_rows(X: Any, rows: Sequence[int]) -> Any:
    return X.iloc[list(rows)] if hasattr(X, "iloc") else np.asarray(X)[list(rows)]


def counterfactuals(
    model: Any,
    X: Any,
    *,
    target: Any,
    rows: Sequence[int] | None = None,
    max_rows: int = 10,
    cost: str = "auto",
    mode: str = "minimal",
    constraints: Mapping[str, Any] | None = None,
    method: str = "auto",
    optimal: bool = False,
    time_limit: float = 10.0,
    n_counterfactuals: int = 1,
    infer: bool = True,
    min_leaf_samples: int | None = None,
    isolation_forest: Any = None,
    max_anomaly_score: float | None = None,
    fill_missing: bool | list[str] = False,
    fill_cost: float | None = None,
    reference: Any = None,
    progress: Progress = None,
    notes: list[str] | None = None,
) -> tuple[list[int], Any]:
    """Counterfactuals of the chosen rows: the data row numbers and the result.

    The result is None when no row needs a change.  ``method`` is that of
    :func:`treelens.counterfactual` (``optimal`` is ``method="optimal"``), except
    that ``"auto"`` on a model too large for the exact search is feature
    tweaking (see :func:`exact_or_tweak`; its note is appended to ``notes``);
    ``constraints`` holds plain lists (``immutable``, ``increase_only``, ...).
    """
    from .._adapters import to_forest
    from .._counterfactual._entry import counterfactual

    built = _constraints(constraints)
    if built is not None:  # contradictory constraints are refused before any work
        built.resolve(to_forest(model))
    chosen = selected_rows(model, X, target, rows=rows, max_rows=max_rows)
    if not chosen:
        return chosen, None
    subset = _take_rows(X, chosen)
    method = "optimal" if optimal else method
    exact_only = (
        n_counterfactuals != 1
        or min_leaf_samples is not None
        or isolation_forest is not None
        or max_anomaly_score is not None
    )
    method, note = exact_or_tweak(model, method, cost, exact_only=exact_only)
    if note and notes is not None:
        notes.append(note)
    words = {"tweak": "feature tweaking", "optimal": "optimal counterfactuals"}
    _step(progress, f"{words.get(method, 'counterfactuals')} for {len(chosen)} rows")
    result = counterfactual(
        model,
        subset,
        target=target,
        method=cast(Literal["auto", "tweak", "optimal"], method),  # checked there
        cost=cast("CostLike", cost),  # checked there
        mode=cast(Literal["minimal", "paper"], mode),  # checked there
        constraints=built,
        reference=_take_rows(X, list(np.flatnonzero(~refused_missing(model, X))))
        if reference is None
        else reference,
        time_limit=time_limit,
        n_counterfactuals=n_counterfactuals,
        infer=infer,
        min_leaf_samples=min_leaf_samples,
        isolation_forest=isolation_forest,
        max_anomaly_score=max_anomaly_score,
        fill_missing=fill_missing,
        fill_cost=fill_cost,
    )
    return chosen, result


#: How each cost (the result's ``cost_name_``) measures a change, in words.
_COST_WORDS = {
    "mad": "L1 in median absolute deviations of the data, each column's change "
    "divided by its typical spread",
    "l1": "L1, the sum of the changes in the columns' own units",
    "l2": "L2, the Euclidean length of the change in the columns' own units",
    "l0": "L0, the number of columns changed",
    "linf": "L-infinity, the largest change of one column in its own units",
    "cosine": "cosine distance between the row and the counterfactual",
    "callable": "the given cost function",
}


def cost_words(result: Any) -> str:
    """How a counterfactual result's ``cost`` is measured, in words."""
    name = str(result.cost_name_)
    words = _COST_WORDS.get(name)
    if words is None and name.startswith("weighted_"):
        words = f"{name.removeprefix('weighted_').upper()} with the given weights"
    return words or name


def cost_note(result: Any) -> str:
    """The line that says how a counterfactual result's ``cost`` is measured."""
    text = f"Cost: {cost_words(result)}"
    if getattr(result, "features_", None) and any(
        spec.kind == "categorical" for spec in result.features_
    ):
        text += "; a change of category adds 1"
    return text + "."


#: Largest exact-search program (estimated bytes) that ``method="auto"`` builds on
#: the command line; a larger model gets feature tweaking, with a note.
EXACT_PROGRAM_BUDGET = 512 * 2**20


def exact_or_tweak(
    model: Any, method: str, cost: Any, *, exact_only: bool = False
) -> tuple[str, str]:
    """The search the command line runs for ``method``, and a note when it differs.

    ``"auto"`` builds the exact program of the whole forest, whose size grows with
    its leaves (a fully grown forest of 100 trees on 50,000 rows needs gigabytes
    and minutes).  When its estimate exceeds :data:`EXACT_PROGRAM_BUDGET`, the
    command line answers with feature tweaking instead and says so;
    ``--method optimal`` runs the exact search all the same, as does
    ``exact_only`` (options that only the exact search has, such as
    ``--options K``: the library then says why the model is too large).
    """
    from .._adapters import to_forest
    from .._counterfactual._costs import is_separable
    from .._counterfactual._milp._program import estimate_program_bytes

    if method != "auto" or exact_only or not is_separable(cost):
        return method, ""
    size = estimate_program_bytes(to_forest(model))[0]
    if size <= EXACT_PROGRAM_BUDGET:
        return method, ""
    return "tweak", (
        f"The exact search's program of this model would need about "
        f"{format_number(size / 2**20)} MB (more than "
        f"{EXACT_PROGRAM_BUDGET // 2**20} MB), so feature tweaking answered: fast, "
        "but it may find no change or a costlier one than the least; --method "
        "optimal (--optimal in report and explain) runs the exact search anyway."
    )


def counterfactual_tables(model: Any, X: Any, **kwargs: Any) -> Tables:
    """Compute counterfactuals (see :func:`counterfactuals`) and tabulate them.

    Returns the tables ``rows`` (one row per data row: prediction, found, cost,
    the changes in words, reason) and ``changes`` (the result's ``to_frame()``: one
    row per changed feature, with the data row number).
    """
    chosen, result = counterfactuals(model, X, **kwargs)
    notes = kwargs.get("notes")
    if notes is not None and result is not None:
        notes.append(cost_note(result))
    if result is None:
        empty = pd.DataFrame(columns=["row", "found", "cost", "changes", "reason"])
        return {
            "rows": ("No row needs a change: every row already has the target", empty)
        }
    return counterfactual_result_tables(result, chosen, result.prediction_)


def counterfactual_result_tables(
    result: Any, rows: Sequence[int], predicted: Any
) -> Tables:
    """Tabulate a counterfactual result for data rows ``rows``."""
    changes = result.to_frame().copy()
    row_column = next((c for c in ("row", "instance", "sample") if c in changes), None)
    if row_column is not None:
        changes[row_column] = [rows[int(i)] for i in changes[row_column]]
        changes = changes.rename(columns={row_column: "row"})
    summary = []
    status = getattr(result, "status_", None)
    positions = getattr(result, "row_", None)
    if positions is None:
        positions = np.arange(len(result.found_))
    options = getattr(result, "option_", None)
    if options is None:
        options = np.ones(len(result.found_), dtype=np.intp)
    several = int(np.max(options, initial=1)) > 1
    for i, position in enumerate(positions):
        row = rows[int(position)]
        moved = changes[changes["row"] == row] if "row" in changes else changes.iloc[:0]
        if several and "option" in moved:
            moved = moved[moved["option"] == options[i]]
        words = "; ".join(
            f"{r.feature}: missing -> {_short(r.after)} (filled)"
            if getattr(r, "filled", False)
            else f"{r.feature}: {_short(r.before)} -> {_short(r.after)}"
            for r in moved.itertuples()
        )
        entry: dict[str, Any] = {"row": row}
        if several:
            entry["option"] = int(options[i])
        entry.update(
            {
                "prediction": _plain(np.asarray(predicted)[i]),
                "found": bool(result.found_[i]),
                "cost": float(result.cost_[i]),
                "changes": words,
                "reason": result.reason_[i] or "",
            }
        )
        if status is not None:
            entry["status"] = status[i]
            entry["gap"] = float(result.gap_[i])
        summary.append(entry)
    if not several and "option" in changes:
        changes = changes.drop(columns="option")
    inferred = getattr(result, "inferred_", None) or {}
    extra: Tables = {}
    if any(inferred.values()):
        kinds = {
            "integer": "whole numbers",
            "flags": "0/1 flags",
            "one_hot": "one-hot group",
        }
        lines = [
            {"kind": kinds[kind], "features": ", ".join(item)}
            if isinstance(item, list)
            else {"kind": kinds[kind], "features": item}
            for kind, items in inferred.items()
            for item in items
        ]
        extra["inferred"] = (
            "Constraints inferred from the data (--no-infer to switch off)",
            pd.DataFrame(lines),
        )
    # CSV output is the last table: the changes stay last.
    return {
        **extra,
        "rows": ("Counterfactuals", pd.DataFrame(summary)),
        "changes": ("Changes, one per feature", changes.reset_index(drop=True)),
    }


def missing_before(changes: pd.DataFrame) -> pd.DataFrame:
    """A changes table whose ``before`` reads "missing" for a value the
    counterfactual fills (a missing value kept missing is no change)."""
    if "before" not in changes or not changes["before"].isna().any():
        return changes
    out = changes.copy()
    out["before"] = out["before"].astype(object).where(out["before"].notna(), "missing")
    return out


def _constraints(spec: Mapping[str, Any] | None) -> Any:
    """Build the tweak module's constraints object from plain lists, or None."""
    if not spec or not any(spec.values()):
        return None
    from .._counterfactual._constraints import Constraints

    return Constraints(**{k: v for k, v in spec.items() if v})


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _short(value: Any) -> str:
    return format_number(_plain(value))


# --------------------------------------------------------------------------- output


def rich_table(title: str, frame: pd.DataFrame, *, max_rows: int = 60) -> Any:
    """A rich Table of ``frame``, numbers right-aligned in 4 significant digits."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False)
    for name in frame.columns:
        numeric = pd.api.types.is_numeric_dtype(frame[name]) and not (
            pd.api.types.is_bool_dtype(frame[name])
        )
        table.add_column(str(name), justify="right" if numeric else "left")
    for record in frame.head(max_rows).itertuples(index=False):
        table.add_row(*(_cell(v) for v in record))
    if len(frame) > max_rows:
        table.caption = (
            f"{len(frame) - max_rows} more rows not shown (use --json or --csv)"
        )
    return table


def _cell(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "" if math.isnan(value) else "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # row numbers and counts read best without separators
    return format_number(value)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for record in frame.to_dict(orient="records"):
        clean = {}
        for key, value in record.items():
            value = _plain(value)
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            clean[str(key)] = value
        out.append(clean)
    return out


def render(
    tables: Tables,
    fmt: Literal["text", "json", "csv"],
    *,
    width: int | None = None,
    notes: Sequence[str] | None = None,
) -> str:
    """Render tables as text (rich), JSON or CSV (the last table).

    The JSON object has one list of records per table, and, when ``notes`` is
    given, the list ``"notes"`` (the notes the command printed).
    """
    if fmt == "json":
        payload: dict[str, Any] = {
            name: _records(frame) for name, (_, frame) in tables.items()
        }
        if notes is not None:
            payload["notes"] = list(notes)
        return json.dumps(payload, indent=2, default=str) + "\n"
    if fmt == "csv":
        _, frame = list(tables.values())[-1]
        return frame.to_csv(index=False)
    from rich.console import Console

    if width is None:
        width = max(100, shutil.get_terminal_size((120, 24)).columns)
    console = Console(
        width=width, record=True, file=cast(IO[str], _Null()), color_system=None
    )
    for name, (title, frame) in tables.items():
        columns = [
            c for c in _TEXT_COLUMNS.get(name, frame.columns) if c in frame.columns
        ]
        shown = frame[columns].rename(columns=_TEXT_HEADERS)
        if name == "changes":
            shown = missing_before(shown)
        console.print(rich_table(title, shown))
        console.print()
    return console.export_text()


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
