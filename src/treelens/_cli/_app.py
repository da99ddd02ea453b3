"""The ``treelens`` console command: a thin layer over the public API.

This module parses arguments, loads files, calls treelens functions and prints or
writes what they return; nothing is computed here.

Exit codes: 0 on success; 2 on bad input or usage, with a one-line message on
stderr and no traceback; 1 on an internal error (the traceback is printed only with
``--debug``); 130 when interrupted.  Every output file is written atomically and
never over an input file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self, TypeVar

import typer

from .._exceptions import InputError, SolverError, TreelensError
from .._report._kinds import PICTURE_KINDS as PLOT_KINDS
from ._dataset_commands import (
    OutDirOpt,
    ResumeOpt,
    SchedulerOpt,
    TimeoutOpt,
    WorkersOpt,
    dataset_mode,
    importance_dataset_tables,
    tweak_dataset_tables,
)
from ._options import (
    CounterfactualOptions,
    DatasetOptions,
    names,
    option_group,
)

__all__ = ["app", "main"]

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    name="treelens",
    help="Explain tree models: importance, counterfactuals, pictures and reports.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class _State:
    debug = False
    #: The command's note lines printed so far (see :func:`_note`).
    notes: ClassVar[list[str]] = []
    #: The warnings recorded so far while the command runs (see :func:`_notes`).
    warned: ClassVar[list[Any]] = []


def _error(message: str) -> None:
    line = " ".join(str(message).split())
    typer.echo(f"treelens: error: {line}", err=True)


def _command(function: F) -> F:
    """Map exceptions to exit codes: 2 for bad input, 1 for internal errors."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _notes():
                return function(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            _error("interrupted; no output file was written.")
            raise typer.Exit(130) from None
        except Exception as exc:
            if _is_click_error(exc):
                raise
            if _State.debug:
                traceback.print_exc()
            if isinstance(exc, TreelensError) and not isinstance(exc, SolverError):
                _error(str(exc))
                raise typer.Exit(2) from None
            hint = "" if _State.debug else " (run again with --debug for the traceback)"
            _error(f"internal error: {type(exc).__name__}: {exc}{hint}")
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def _notes() -> Iterator[None]:
    """Print treelens' warnings as one ``treelens: note:`` line each, once.

    Other warnings are shown as Python shows them.  A treelens warning points at
    the first line outside treelens, which under the command line is typer's:
    shown as Python shows it, it would name that line.  The notes of the
    command and its warnings are kept meanwhile, for its JSON output (see
    :func:`_notes_so_far`).
    """
    import warnings

    caught: list[warnings.WarningMessage] = []
    _State.notes, _State.warned = [], []
    try:
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always")
            _State.warned = recorded
            try:
                yield
            finally:
                caught = list(recorded)
                _State.warned = []
    finally:
        # Shown once the recording has ended: inside it, showwarning would
        # record each warning again, onto the very list being shown.
        for text in _warning_notes(caught):
            typer.echo(f"treelens: note: {text}", err=True)
        for item in caught:
            if item.category.__module__ != TreelensError.__module__:
                warnings.showwarning(
                    item.message, item.category, item.filename, item.lineno
                )


def _warning_notes(caught: Sequence[Any]) -> list[str]:
    """The texts of treelens' warnings among ``caught``, each once, in order."""
    texts: list[str] = []
    for item in caught:
        if item.category.__module__ == TreelensError.__module__:
            text = " ".join(str(item.message).split())
            if text not in texts:
                texts.append(text)
    return texts


def _note(text: str) -> None:
    """Print ``text`` as a ``treelens: note:`` line, and keep it for the JSON
    output (see :func:`_notes_so_far`)."""
    text = " ".join(text.split())
    _State.notes.append(text)
    typer.echo(f"treelens: note: {text}", err=True)


def _notes_so_far(*more: str) -> list[str]:
    """The command's notes so far, as its JSON output lists them (``"notes"``):
    the lines printed, then ``more`` (notes the text output shows elsewhere,
    as in a table's title), then treelens' warnings (printed as the command
    ends)."""
    notes = [*_State.notes, *more]
    return notes + [t for t in _warning_notes(_State.warned) if t not in notes]


def _rendered(tables: Any, fmt: Literal["text", "json", "csv"], *more: str) -> str:
    """``tables`` rendered in ``fmt``; as JSON, with the command's notes (see
    :func:`_notes_so_far`)."""
    from .._report._tables import render

    return render(tables, fmt, notes=_notes_so_far(*more) if fmt == "json" else None)


def _is_click_error(exc: BaseException) -> bool:
    # typer >= 0.29 carries its own copy of click; recognise either by behaviour.
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def _print_version(value: bool) -> None:
    if value:
        from .._version import __version__

        typer.echo(f"treelens {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Print tracebacks of internal errors.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version.",
        ),
    ] = False,
) -> None:
    """Explain tree models: importance, counterfactuals, pictures and reports."""
    _State.debug = debug


# --------------------------------------------------------------------------- options

ModelArg = Annotated[
    Path,
    typer.Argument(
        metavar="MODEL",
        help="Fitted model: .skops; .pkl/.joblib with --trust-pickle; XGBoost "
        ".json/.ubj, LightGBM .txt or CatBoost .cbm/.json.",
        show_default=False,
    ),
]
RowsArg = Annotated[
    Path,
    typer.Argument(
        metavar="DATA", help="CSV/Parquet rows to explain.", show_default=False
    ),
]
TrustPickle = Annotated[
    bool,
    typer.Option(
        "--trust-pickle",
        help="Allow pickle/joblib model files. Unpickling runs arbitrary code from "
        "the file: use only for files you trust.",
    ),
]
TrustTypes = Annotated[
    list[str] | None,
    typer.Option(
        "--trust",
        metavar="TYPE",
        help="Trust this type in a .skops file (repeatable); see the refusal message.",
    ),
]
TargetCol = Annotated[
    str | None,
    typer.Option("--target", metavar="COL", help="Column of the data holding y."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="Print CSV instead of tables.")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", "-o", metavar="FILE", help="Write the output to FILE (atomically)."
    ),
]


def _exclusive(first: tuple[str, Any], second: tuple[str, Any]) -> None:
    """Refuse two options that exclude each other, given together.

    Each option is ``(name, value)``; it counts as given when its value is
    neither None nor False (the defaults of such options).
    """
    if all(value is not None and value is not False for _, value in (first, second)):
        raise InputError(
            f"{first[0]} and {second[0]} exclude each other; expected at most one, "
            "got both."
        )


def _format(json_out: bool, csv_out: bool) -> Literal["text", "json", "csv"]:
    _exclusive(("--json", json_out), ("--csv", csv_out))
    return "json" if json_out else "csv" if csv_out else "text"


@dataclasses.dataclass(frozen=True)
class _Loaded:
    """A model file and a data file, read and matched.

    ``shown`` is what explanations are computed on: the model itself, or, for a
    model fitted without feature names, its Forest named after the data file's
    columns (``X`` is then a DataFrame of those columns); ``renamed`` maps the
    model's default names to the file's (empty when nothing was renamed).
    """

    model: Any
    forest: Any
    X: Any
    y: Any
    shown: Any
    renamed: dict[str, str]

    def unnamed_X(self) -> Any:
        """``X`` as the model itself takes it (an array when it has no names)."""
        return self.X.to_numpy() if self.renamed else self.X


def _load(
    model_path: Path,
    data_path: Path | None,
    *,
    target: str | None,
    trust_pickle: bool,
    trust: Sequence[str] | None,
    rename: bool = True,
) -> _Loaded:
    """Load the model and its forest, then the data matched to the model (with
    ``rename``, a model without feature names is shown under the data file's)."""
    from .._adapters import to_forest
    from .._io._files import as_categories, check_target, load_data, load_model

    model = load_model(model_path, trust_pickle=trust_pickle, trusted=trust or ())
    forest = to_forest(model)
    X: Any = None
    y: Any = None
    shown: Any = model
    renamed: dict[str, str] = {}
    if data_path is not None:
        X, y = load_data(
            data_path,
            feature_names=forest.feature_names,
            has_feature_names=forest.has_feature_names,
            target=target,
            features=forest.features,
        )
        if y is not None:
            y = check_target(y, classes=forest.classes_, path=data_path)
        if forest.has_labels and _reads_category_dtype(model):
            X = as_categories(X, forest.features)  # a CSV file's text categories
        if rename:
            shown, renamed = _named_after(model, list(X.columns), data_path)
        if not renamed and not forest.has_feature_names:
            X = X.to_numpy()
    elif target is not None:
        raise InputError(f"--target {target} needs a data file; got none.")
    return _Loaded(model, forest, X, y, shown, renamed)


def _named_after(
    model: Any, columns: Sequence[str], data_path: Path
) -> tuple[Any, dict[str, str]]:
    """The model shown under the names of the data's feature ``columns`` (in
    file order) when it has none of its own, with a note saying so, and the
    map from its default names to them; else the model itself and ``{}``."""
    from .._adapters import to_forest
    from .._io._files import named_by_columns

    named = named_by_columns(model, columns)
    if named is None:
        return model, {}
    default = to_forest(model).feature_names
    _note(
        f"the model was fitted without feature names; its {named.n_features} "
        f"features are shown under the column names of {str(data_path)!r}, in "
        f"file order ({_listed(named.feature_names)})."
    )
    return named, dict(zip(default, named.feature_names, strict=True))


def _listed(names: Sequence[str], limit: int = 6) -> str:
    """``a, b, c`` or, past ``limit`` names, ``a, b, ..., z``."""
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join([*names[: limit - 1], "...", names[-1]])


def _reads_category_dtype(model: Any) -> bool:
    """Whether the model's own ``predict`` takes categories only as pandas
    categories (the scikit-learn wrappers of LightGBM and XGBoost)."""
    from .._adapters._registry import class_key

    return class_key(type(model)).startswith(("lightgbm.LGBM", "xgboost.XGB"))


def _load_model(
    model_path: Path, trust_pickle: bool, trust: Sequence[str] | None
) -> Any:
    from .._io._files import load_model

    return load_model(model_path, trust_pickle=trust_pickle, trusted=trust or ())


def _dataset_model(
    model_path: Path,
    data: Path,
    target: str | None,
    trust_pickle: bool,
    trust: Sequence[str] | None,
) -> Any:
    """The model of a Parquet dataset run, shown under the dataset's column
    names when it has none (as :func:`_load` shows it under a data file's)."""
    from .._io._dataset import dataset_feature_columns

    model = _load_model(model_path, trust_pickle, trust)
    columns = dataset_feature_columns(data, exclude=[] if target is None else [target])
    return _named_after(model, columns, data)[0]


def _emit(
    text: str,
    *,
    out: Path | None,
    inputs: Sequence[Path],
) -> None:
    if out is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    from .._io._files import atomic_write

    atomic_write(out, text, inputs=inputs)
    typer.echo(f"Wrote {out}", err=True)


def _checked_inputs(out: Path | None, *paths: Path | None) -> list[Path]:
    """The input files given, after checking that ``out`` may be written
    (not one of them)."""
    inputs = [p for p in paths if p is not None]
    if out is not None:
        from .._io._files import check_output_path

        check_output_path(out, inputs=inputs)
    return inputs


# ------------------------------------------------------------------------ importance


@app.command()
@_command
def importance(
    model_path: ModelArg,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", metavar="FILE", help="CSV/Parquet data for held-out importance."
        ),
    ] = None,
    target: TargetCol = None,
    nodes: Annotated[
        bool, typer.Option("--nodes", help="Also show the per-node breakdown.")
    ] = False,
    tree: Annotated[
        int, typer.Option("--tree", help="Tree whose nodes --nodes shows.")
    ] = 0,
    permutation: Annotated[
        bool,
        typer.Option("--permutation", help="Also compute permutation importance."),
    ] = False,
    n_repeats: Annotated[
        int, typer.Option("--n-repeats", help="Permutation repeats.", min=1)
    ] = 5,
    random_state: Annotated[int, typer.Option("--random-state")] = 0,
    oob: Annotated[
        bool,
        typer.Option(
            "--oob",
            help="DATA is the exact training set: debiased MDI from each tree's "
            "out-of-bag rows (bootstrap forests).",
        ),
    ] = False,
    top: Annotated[
        int | None, typer.Option("--top", help="Show the top K features only.", min=1)
    ] = None,
    shap: Annotated[
        bool,
        typer.Option(
            "--shap",
            help="Also the mean absolute SHAP value of each feature over the rows "
            "of --data (no --target needed; an IsolationForest's one importance).",
        ),
    ] = False,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
    out: OutOpt = None,
    trust_pickle: TrustPickle = False,
    trust: TrustTypes = None,
    out_dir: OutDirOpt = None,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    resume: ResumeOpt = False,
    timeout: TimeoutOpt = 10.0,
) -> None:
    """MDI, held-out MDI, debiased MDI (MDI-oob), permutation importance and the
    mean absolute SHAP value.

    Example: treelens importance model.skops --data test.csv --target label --nodes
    """
    from .._report._tables import (
        importance_tables,
        renamed_features,
        shap_table,
    )

    fmt = _format(json_out, csv_out)
    inputs = _checked_inputs(out, model_path, data)
    if data is not None and target is None and not shap:
        raise InputError(
            "--data needs --target COL: held-out and permutation importance compare "
            "predictions with the true target; got no --target (--shap needs none)."
        )
    if permutation and data is None:
        raise InputError("--permutation needs --data FILE --target COL; got no data.")
    if oob and data is None:
        raise InputError(
            "--oob needs the training data as --data FILE --target COL; got no data."
        )
    if shap and data is None:
        raise InputError("--shap explains the rows of --data FILE; got no data.")
    if shap and out_dir is not None:
        raise InputError(
            "--shap is computed in memory; expected no --out-dir, got "
            f"{str(out_dir)!r}."
        )
    if dataset_mode(data, out_dir, scheduler=scheduler, workers=workers, resume=resume):
        assert data is not None and out_dir is not None  # dataset mode needs both
        tables = importance_dataset_tables(
            _dataset_model(model_path, data, target, trust_pickle, trust),
            data,
            out_dir,
            target=target,
            permutation=permutation,
            top=top,
            scheduler=scheduler,
            workers=workers,
            resume=resume,
            timeout=timeout,
        )
        return _emit(_rendered(tables, fmt), out=out, inputs=inputs)
    loaded = _load(
        model_path, data, target=target, trust_pickle=trust_pickle, trust=trust
    )
    # Computed on the model itself (gain and out-of-bag rows need it), then
    # shown under the data file's names where the model has none.
    model, forest, X, y = loaded.model, loaded.forest, loaded.unnamed_X(), loaded.y
    if not 0 <= tree < forest.n_trees:
        raise InputError(
            f"--tree must be in [0, {forest.n_trees - 1}] for this model; got {tree}."
        )
    if not shap:
        from .._importance._replay import refuse_isolation

        refuse_isolation(forest, "MDI")
    notes: list[str] = []  # in the table's title as text
    with _Progress(enabled=fmt == "text" or out is not None) as progress:
        # An IsolationForest's trees split at random: SHAP is its one importance.
        tables = (
            importance_tables(
                model,
                X if y is not None else None,
                y,
                nodes=nodes,
                tree=tree,
                permutation=permutation,
                n_repeats=n_repeats,
                random_state=random_state,
                oob=oob,
                top=top,
                required=not shap,
                progress=progress.step,
                notes=notes,
            )
            if not (shap and forest.link == "isolation")
            else {}
        )
        if shap:
            progress.step("mean absolute SHAP values")
            tables["shap"] = shap_table(model, X, top=top)
    tables = renamed_features(tables, loaded.renamed)
    _emit(_rendered(tables, fmt, *notes), out=out, inputs=inputs)


# ----------------------------------------------------------------------------- tweak


def _parse_rows(text: str, n_rows: int) -> list[int]:
    rows: list[int] = []
    for part in names(text):
        try:
            low, dash, high = part[1:].partition("-")
            if dash:
                first, last = int(part[0] + low), int(high)
                if last < first:
                    raise ValueError
                rows.extend(range(first, last + 1))
            else:
                rows.append(int(part))
        except ValueError:
            raise InputError(
                f"--rows must be row numbers or ranges like 0,3,5-9; got {part!r}."
            ) from None
    bad = [r for r in rows if not 0 <= r < n_rows]
    if bad:
        raise InputError(
            f"--rows must be in [0, {n_rows - 1}] (the data has {n_rows} rows); "
            f"got {bad[0]}."
        )
    if not rows:
        raise InputError(f"--rows must name at least one row; got {text!r}.")
    return rows


def _parse_class(forest: Any, text: str) -> Any:
    if forest.link == "isolation" and text in ("inlier", "outlier"):
        return text
    if forest.task != "classification":
        raise InputError(
            "--target-class needs a classifier (or 'inlier' or 'outlier' for an "
            "IsolationForest); this model is a regressor, use --target-range "
            "LOW:HIGH."
        )
    if text == "other":
        return "other"
    for label in forest.classes_:
        if str(label) == text:
            return label.item() if hasattr(label, "item") else label
    raise InputError(
        f"--target-class must be one of the model's classes "
        f"{[str(c) for c in forest.classes_]} or 'other'; got {text!r}."
    )


def _parse_range(forest: Any, text: str) -> tuple[float | None, float | None]:
    if forest.task != "regression":
        raise InputError(
            "--target-range needs a regressor; this model is a classifier, use "
            "--target-class C."
        )
    low, sep, high = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return (
            float(low) if low.strip() else None,
            float(high) if high.strip() else None,
        )
    except ValueError:
        raise InputError(
            f"--target-range must look like LOW:HIGH; got {text!r}."
        ) from None


def _parse_target(
    forest: Any, target_class: str | None, target_range: str | None
) -> Any:
    if target_class is not None and target_range is not None:
        raise InputError("--target-class and --target-range exclude each other.")
    if target_class is not None:
        return _parse_class(forest, target_class)
    if target_range is not None:
        return _parse_range(forest, target_range)
    if forest.link == "isolation":
        wanted = "--target-class inlier or --target-class outlier"
    elif forest.task == "regression":
        wanted = "--target-range LOW:HIGH (this model is a regressor)"
    else:
        classes = ", ".join(str(c) for c in forest.classes_)
        wanted = f"--target-class C, one of {classes} or 'other' (this model is a classifier)"
    raise InputError(f"The counterfactuals need a target: {wanted}; got none.")


def _optional_target(
    forest: Any, target_class: str | None, target_range: str | None
) -> Any:
    """The target given by either option, or None when neither is given."""
    if target_class is None and target_range is None:
        return None
    return _parse_target(forest, target_class, target_range)


def _one_per_row(n_counterfactuals: int, min_leaf_samples: int | None) -> None:
    if n_counterfactuals != 1 or min_leaf_samples is not None:
        raise InputError(
            "--options and --min-leaf-samples work on tables; Parquet datasets "
            "(--out-dir) hold one counterfactual per row without them, expected "
            f"--options 1, got {n_counterfactuals} (--min-leaf-samples "
            f"{min_leaf_samples})."
        )


_NO_SEARCH = CounterfactualOptions()
#: Search options that explain and report both offer: the cost and the moves allowed.
_COST_FIELDS = ("cost", "immutable", "increase_only", "decrease_only")
# Missing values that may be filled: the advice of a search kept from them.
_FILL_FIELDS = ("fill_missing", "fill_missing_all", "fill_cost")
_NO_DATASET = DatasetOptions()


@app.command()
@_command
@option_group("search", CounterfactualOptions)
@option_group("dataset", DatasetOptions)
def tweak(
    model_path: ModelArg,
    data: RowsArg,
    target_class: Annotated[
        str | None,
        typer.Option(
            "--target-class",
            metavar="C",
            help="Class to reach, or 'other' ('inlier' or 'outlier' for an "
            "IsolationForest).",
        ),
    ] = None,
    target_range: Annotated[
        str | None,
        typer.Option("--target-range", metavar="LOW:HIGH", help="Regressors: range."),
    ] = None,
    target: TargetCol = None,
    rows: Annotated[
        str | None,
        typer.Option(
            "--rows",
            metavar="SPEC",
            help="Rows like 0,3,5-9 (0-based); default: the first --max-rows rows "
            "not already predicted as the target.",
        ),
    ] = None,
    max_rows: Annotated[
        int | None,
        typer.Option(
            "--max-rows", min=1, help="Without --rows: how many rows (default 10)."
        ),
    ] = None,
    search: CounterfactualOptions = _NO_SEARCH,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
    out: OutOpt = None,
    trust_pickle: TrustPickle = False,
    trust: TrustTypes = None,
    dataset: DatasetOptions = _NO_DATASET,
) -> None:
    """Counterfactuals: the smallest changes that give the chosen rows the target.

    Example: treelens tweak model.skops rows.csv --target-class 1 --rows 0-4
    --immutable age --cost l1
    """
    from .._report._tables import counterfactual_tables, prediction_spread

    _exclusive(("--rows", rows), ("--max-rows", max_rows))
    method = search.search()
    fmt = _format(json_out, csv_out)
    inputs = _checked_inputs(out, model_path, data, search.isolation_forest)
    constraints = search.constraints()
    if dataset_mode(
        data,
        dataset.out_dir,
        scheduler=dataset.scheduler,
        workers=dataset.workers,
        resume=dataset.resume,
    ):
        from .._adapters import to_forest

        assert dataset.out_dir is not None  # dataset mode needs it
        _one_per_row(search.n_counterfactuals, search.min_leaf_samples)
        if search.isolation_forest is not None or search.max_anomaly_score is not None:
            raise InputError(
                "--isolation-forest and --max-anomaly-score work on tables; Parquet "
                "datasets (--out-dir) are searched without them, expected neither."
            )
        if search.fill() or search.fill_cost is not None:
            raise InputError(
                "--fill-missing, --fill-missing-all and --fill-cost work on tables; "
                "Parquet datasets (--out-dir) keep missing values missing, expected "
                "none of them."
            )
        model = _dataset_model(model_path, data, target, trust_pickle, trust)
        tables = tweak_dataset_tables(
            model,
            data,
            dataset.out_dir,
            target=_parse_target(to_forest(model), target_class, target_range),
            cost=search.cost,
            mode=search.mode,
            constraints=constraints,
            optimal=method != "tweak",
            time_limit=search.time_limit,
            scheduler=dataset.scheduler,
            workers=dataset.workers,
            resume=dataset.resume,
            timeout=dataset.timeout,
        )
        return _emit(_rendered(tables, fmt), out=out, inputs=inputs)
    loaded = _load(
        model_path, data, target=target, trust_pickle=trust_pickle, trust=trust
    )
    model, X = loaded.shown, loaded.X
    forest = loaded.forest
    regressor = forest.task == "regression" and forest.link != "isolation"
    if target_range is None and target_class is None and regressor:
        # Say where its predictions lie.
        spread = prediction_spread(model, X).replace("these rows", "the data")
        raise InputError(
            "The counterfactuals need a target: --target-range LOW:HIGH (this "
            f"model is a regressor); got none. {spread}".strip()
        )
    goal = _parse_target(loaded.forest, target_class, target_range)
    n_rows = X.shape[0]
    selected = _parse_rows(rows, n_rows) if rows is not None else None
    iso = None
    if search.isolation_forest is not None:
        # As it was fitted: one fitted without names reads the model's
        # columns by position, as the model renamed after the file's does.
        iso = _load_model(search.isolation_forest, trust_pickle, trust)
    notes: list[str] = []
    with _Progress(enabled=True) as progress:
        tables = counterfactual_tables(
            model,
            X,
            target=goal,
            rows=selected,
            max_rows=10 if max_rows is None else max_rows,
            cost=search.cost,
            mode=search.mode,
            constraints=constraints,
            method=method,
            time_limit=search.time_limit,
            n_counterfactuals=search.n_counterfactuals,
            infer=not search.no_infer,
            min_leaf_samples=search.min_leaf_samples,
            isolation_forest=iso,
            max_anomaly_score=search.max_anomaly_score,
            fill_missing=search.fill(),
            fill_cost=search.fill_cost,
            progress=progress.step,
            notes=notes,
        )
    for note in notes:
        _note(note)
    _emit(_rendered(tables, fmt), out=out, inputs=inputs)


# --------------------------------------------------------------------------- explain


@app.command()
@_command
@option_group(
    "search",
    CounterfactualOptions,
    fields=(*_COST_FIELDS, "optimal", "time_limit", *_FILL_FIELDS),
)
def explain(
    model_path: ModelArg,
    data: RowsArg,
    row: Annotated[
        int,
        typer.Option(
            "--row", help="The data row to explain (0-based, as in the file)."
        ),
    ],
    target: TargetCol = None,
    target_class: Annotated[
        str | None,
        typer.Option(
            "--target-class",
            metavar="C",
            help="Counterfactual: class to reach; default 'other' (any other "
            "class; 'inlier' or 'outlier' for an IsolationForest).",
        ),
    ] = None,
    target_range: Annotated[
        str | None,
        typer.Option(
            "--target-range", metavar="LOW:HIGH", help="Counterfactual of a regressor."
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", help="Contributions and features shown.", min=1)
    ] = 8,
    search: CounterfactualOptions = _NO_SEARCH,
    json_out: JsonOpt = False,
    out: OutOpt = None,
    trust_pickle: TrustPickle = False,
    trust: TrustTypes = None,
) -> None:
    """Why one row was decided so: its path in words, the contributions of its
    features, and the smallest change that would alter the decision.

    Example: treelens explain model.skops applicants.csv --row 7 --target-class 1
    """
    from ._explain import check_row, explain_row, render_explanation

    inputs = _checked_inputs(out, model_path, data)
    loaded = _load(
        model_path, data, target=target, trust_pickle=trust_pickle, trust=trust
    )
    model, forest, X = loaded.shown, loaded.forest, loaded.X
    check_row(row, X.shape[0])
    if target_class is None and target_range is None:
        goal = "other" if forest.is_classifier else None
        if forest.link == "isolation":  # an IsolationForest: what makes it normal
            goal = "inlier"
    else:
        goal = _parse_target(forest, target_class, target_range)
    constraints = search.constraints()
    with _Progress(enabled=not json_out or out is not None):
        explanation = explain_row(
            model,
            X,
            row,
            target=goal,
            top=top,
            cost=search.cost,
            constraints=constraints,
            optimal=search.optimal,
            time_limit=search.time_limit,
            fill_missing=search.fill(),
            fill_cost=search.fill_cost,
        )
    text = render_explanation(
        explanation, json_out=json_out, notes=_notes_so_far() if json_out else None
    )
    _emit(text, out=out, inputs=inputs)


# ------------------------------------------------------------------------------ plot


@app.command()
@_command
def plot(
    kind: Annotated[
        str,
        typer.Argument(
            metavar="KIND", help=f"One of: {', '.join(PLOT_KINDS)}.", show_default=False
        ),
    ],
    model_path: ModelArg,
    data: Annotated[
        Path | None,
        typer.Argument(
            metavar="DATA",
            help="CSV/Parquet data (most pictures need it).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="FILE", help="Picture file (.png, .svg, .pdf)."
        ),
    ] = Path("treelens.png"),
    target: TargetCol = None,
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            metavar="A,B",
            help="Two features; default the two most important by MDI (by mean "
            "|SHAP| for an IsolationForest). regression-steps: one; dependence: "
            "the feature (default the one of highest mean |SHAP|), then "
            "optionally the one colouring it (default its strongest interaction).",
        ),
    ] = None,
    tree: Annotated[int | None, typer.Option("--tree", help="Tree index.")] = None,
    max_depth: Annotated[
        int | None,
        typer.Option("--max-depth", min=0, help="Cut the picture at a depth."),
    ] = None,
    row: Annotated[
        int | None,
        typer.Option(
            "--row", help="counterfactual, tree, waterfall (default 0): the data row."
        ),
    ] = None,
    target_class: Annotated[
        str | None,
        typer.Option(
            "--target-class",
            metavar="C",
            help="counterfactual: the class to reach; waterfall, summary: the class "
            "whose SHAP values are drawn.",
        ),
    ] = None,
    target_range: Annotated[
        str | None,
        typer.Option(
            "--target-range",
            metavar="LOW:HIGH",
            help="counterfactual of a regressor: the range of predicted values.",
        ),
    ] = None,
    oob: Annotated[
        bool,
        typer.Option(
            "--oob",
            help="forest-grid: DATA is the exact training set; show out-of-bag accuracy.",
        ),
    ] = False,
    slice_at: Annotated[
        str | None,
        typer.Option(
            "--slice-at",
            metavar="instance|counterfactual",
            help="counterfactual: hold the features not drawn at the row's values "
            "(instance, the default) or at the counterfactual's (then the star "
            "lies in the target's region).",
        ),
    ] = None,
    dpi: Annotated[int, typer.Option("--dpi", min=20, max=600)] = 100,
    trust_pickle: TrustPickle = False,
    trust: TrustTypes = None,
) -> None:
    """Draw one picture to a file.

    waterfall: one row's exact SHAP values; summary: the SHAP values of DATA's
    rows, feature by feature (of at most 2,000 rows: a seeded sample of more).

    Example: treelens plot partition model.skops data.csv --target label --out p.png
    """
    from .._report._pictures import draw_picture

    if kind not in PLOT_KINDS:
        raise InputError(f"KIND must be one of {list(PLOT_KINDS)}; got {kind!r}.")
    _applies_to(kind, "--slice-at", slice_at is not None, "counterfactual")
    _applies_to(kind, "--oob", oob, "forest-grid")
    _applies_to(kind, "--row", row is not None, "counterfactual", "tree", "waterfall")
    if slice_at is None:
        slice_at = "instance"
    if slice_at not in ("instance", "counterfactual"):
        raise InputError(
            f"--slice-at must be 'instance' or 'counterfactual'; got {slice_at!r}."
        )
    inputs = _checked_inputs(out, model_path, data)
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in {"png", "svg", "pdf"}:
        raise InputError(f"--out must end in .png, .svg or .pdf; got {str(out)!r}.")
    # Out-of-bag rows are drawn by the fitted model itself, under its own names.
    loaded = _load(
        model_path,
        data,
        target=target,
        trust_pickle=trust_pickle,
        trust=trust,
        rename=not oob,
    )
    model, forest, X, y = loaded.shown, loaded.forest, loaded.X, loaded.y
    if row is not None and X is None:
        raise InputError(f"--row {row} needs a data file (DATA); got none.")
    if row is not None and not 0 <= row < X.shape[0]:
        raise InputError(f"--row must be in [0, {X.shape[0] - 1}]; got {row}.")
    if tree is not None and not 0 <= tree < forest.n_trees:
        raise InputError(
            f"--tree must be in [0, {forest.n_trees - 1}] for this model; got {tree}."
        )
    goal = _optional_target(forest, target_class, target_range)
    picture = draw_picture(
        kind,
        model,
        X,
        y,
        features=names(features) or None,
        tree=tree,
        max_depth=max_depth,
        row=row,
        target=goal,
        oob=oob,
        slice_at=slice_at,
        fmt=suffix,
        dpi=dpi,
    )
    _emit_bytes(picture, out=out, inputs=inputs)


def _applies_to(kind: str, option: str, given: bool, *kinds: str) -> None:
    """Refuse ``option``, when ``given``, on a picture it does not change."""
    if given and kind not in kinds:
        raise InputError(
            f"{option} applies to the {_either(kinds)} picture only; got it "
            f"with KIND {kind!r}."
        )


def _either(words: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def _emit_bytes(content: bytes, *, out: Path, inputs: Sequence[Path]) -> None:
    from .._io._files import atomic_write

    atomic_write(out, content, inputs=inputs)
    typer.echo(f"Wrote {out}", err=True)


# ---------------------------------------------------------------------------- report


@app.command()
@_command
@option_group(
    "search",
    CounterfactualOptions,
    fields=(
        *_COST_FIELDS,
        "integer",
        "bounds",
        "optimal",
        "time_limit",
        *_FILL_FIELDS,
    ),
)
def report(
    model_path: ModelArg,
    data: Annotated[
        Path,
        typer.Argument(
            metavar="DATA", help="CSV/Parquet data to explain.", show_default=False
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="FILE", help="HTML file to write.")
    ] = Path("report.html"),
    target: TargetCol = None,
    target_class: Annotated[
        str | None,
        typer.Option(
            "--target-class",
            metavar="C",
            help="Class the counterfactuals aim for; default the last class (for "
            "an IsolationForest: inlier, or outlier).",
        ),
    ] = None,
    target_range: Annotated[
        str | None,
        typer.Option(
            "--target-range",
            metavar="LOW:HIGH",
            help="Regressors: the range of predicted values the counterfactuals "
            "aim for (either end may be empty).",
        ),
    ] = None,
    rows: Annotated[
        str | None,
        typer.Option(
            "--rows",
            metavar="SPEC",
            help="Rows to answer for, like 0,3,5-9 (0-based); default: the first "
            "--max-counterfactuals complete rows not predicted as the target (for "
            "an IsolationForest: its most anomalous outliers).",
        ),
    ] = None,
    max_counterfactuals: Annotated[
        int | None,
        typer.Option(
            "--max-counterfactuals",
            min=0,
            help="Without --rows: how many rows to answer for (default 5).",
        ),
    ] = None,
    search: CounterfactualOptions = _NO_SEARCH,
    sample_rows: Annotated[
        int | None,
        typer.Option(
            "--sample-rows",
            min=1,
            help="Held-out and debiased MDI, permutation importance (its first "
            "1,000) and the pictures' points use a random sample of this many rows "
            "(default 5000).",
        ),
    ] = None,
    all_rows: Annotated[
        bool, typer.Option("--all-rows", help="Use every row instead of a sample.")
    ] = False,
    random_state: Annotated[int, typer.Option("--random-state")] = 0,
    title: Annotated[str | None, typer.Option("--title")] = None,
    trust_pickle: TrustPickle = False,
    trust: TrustTypes = None,
) -> None:
    """Everything in one self-contained HTML file, answers first.

    A regressor's counterfactuals aim for --target-range LOW:HIGH.  An
    IsolationForest gets a report of its anomaly scores (--target then names
    a column of known anomalies: 0/1, booleans or -1/1).

    Example: treelens report model.skops test.csv --target label --rows 3,17
    --immutable age --out report.html
    """
    from .._report._page import DEFAULT_SAMPLE_ROWS, render_report

    _exclusive(("--all-rows", all_rows), ("--sample-rows", sample_rows))
    _exclusive(("--rows", rows), ("--max-counterfactuals", max_counterfactuals))
    if max_counterfactuals is None:
        max_counterfactuals = 5
    inputs = _checked_inputs(out, model_path, data)
    constraints = search.constraints()
    with _Progress(enabled=True) as progress:
        progress.step("loading the model and the data")
        loaded = _load(
            model_path, data, target=target, trust_pickle=trust_pickle, trust=trust
        )
        X = loaded.X
        goal = _optional_target(loaded.forest, target_class, target_range)
        selected = _parse_rows(rows, X.shape[0]) if rows is not None else None
        html = render_report(
            loaded.shown,
            X,
            loaded.y,
            fitted=loaded.model if loaded.renamed else None,
            target=goal,
            rows=selected,
            max_counterfactuals=max_counterfactuals,
            cost=search.cost,
            constraints=constraints,
            optimal=search.optimal,
            time_limit=search.time_limit,
            fill_missing=search.fill(),
            fill_cost=search.fill_cost,
            sample_rows=None if all_rows else sample_rows or DEFAULT_SAMPLE_ROWS,
            random_state=random_state,
            source=data.name,
            title=title or f"treelens report: {model_path.name}",
            progress=progress.step,
        )
    _emit(html, out=out, inputs=inputs)


# ------------------------------------------------------------------------------ demo


@app.command()
@_command
def demo(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="DIR", help="Directory for the report and pictures."
        ),
    ] = Path("treelens-demo"),
) -> None:
    """Train models on scikit-learn's bundled datasets and explain them.

    Prints the key tables and writes an HTML report and pictures to DIR.
    """
    from ._demo import run_demo

    if out.exists() and not out.is_dir():
        raise InputError(f"--out must be a directory; {str(out)!r} is a file.")
    run_demo(out_dir=out)


# --------------------------------------------------------------------------- helpers


class _Progress:
    """One line per stage on stderr: seconds since the start, CPU seconds of the
    process, and its peak memory.

    Shown when stderr is a terminal, or when the environment sets
    ``TREELENS_PROGRESS=1``; otherwise scripts and pipes see nothing but the
    output and, on failure, the one error line.
    """

    def __init__(self, *, enabled: bool) -> None:
        import os

        forced = os.environ.get("TREELENS_PROGRESS") == "1"
        self.enabled = enabled and (forced or sys.stderr.isatty())
        self._started = 0.0

    def __enter__(self) -> Self:
        import time

        self._started = time.perf_counter()
        return self

    def step(self, message: str) -> None:
        if self.enabled:
            import time

            elapsed = time.perf_counter() - self._started
            typer.echo(
                f"treelens: [{elapsed:6.1f} s, cpu {time.process_time():6.1f} s, "
                f"{_peak_mb():5.0f} MB] {message}",
                err=True,
            )

    def __exit__(self, *exc: object) -> None:
        if self.enabled and exc[0] is None:
            self.step("done")


def _peak_mb() -> float:
    """Peak resident memory of this process so far, in MB (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: remove the output being written and exit with 130 at once.

    Unwinding a KeyboardInterrupt out of a solver, a thread pool or numpy took
    the process down instead of ending it on some interrupts; nothing needs to
    be undone but the temporary file of an output being written.
    """
    from .._io._files import discard_temporary_files

    discard_temporary_files()
    _error("interrupted; no output file was written.")
    sys.stderr.flush()
    os._exit(130)


@contextlib.contextmanager
def _stop_at_once_on_ctrl_c() -> Iterator[None]:
    """Within the command, Ctrl-C exits at once (see :func:`_interrupted`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``treelens`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    _State.debug = "--debug" in args
    if _State.debug:
        # Accept --debug anywhere on the line.
        args = ["--debug"] + [a for a in args if a != "--debug"]
    command = typer.main.get_command(app)
    try:
        with _stop_at_once_on_ctrl_c():
            code = command.main(args=args, prog_name="treelens", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        _error("interrupted; no output file was written.")
        sys.exit(130)
    except Exception as exc:
        if not _is_click_error(exc):
            raise
        message = exc.format_message()  # type: ignore[attr-defined]
        context = getattr(exc, "ctx", None)
        if getattr(exc, "exit_code", 1) == 2 and context is not None:
            message += f" (see {context.command_path} --help)"
        _error(message)
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    sys.exit(code if isinstance(code, int) else 0)
