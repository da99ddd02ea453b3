"""Reading models and data files, and writing output files safely.

Used by the command line; the functions are plain Python so notebooks can use them
too.  Every failure caused by the user's files is raised as an :class:`InputError`
(or :class:`UnsafeModelError`) whose message names the file.

Model files
-----------
- ``.skops``: loaded with :func:`skops.io.load` after checking its types with
  :func:`skops.io.get_untrusted_types`.  Types outside skops' own trusted set are
  accepted only if treelens knows them to be model internals of a library it
  supports (:data:`TRUSTED_MODEL_TYPES`) or the caller lists them in ``trusted``.
- ``.pkl``, ``.pickle``, ``.joblib`` (or any file that starts like a pickle):
  unpickling runs arbitrary code, so these load only with ``trust_pickle=True``.
- XGBoost (``.json``, ``.ubj``), LightGBM (``.txt``) and CatBoost (``.cbm``,
  ``.json``) native model files, through the boosting adapters' loader.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .._core._features import feature_columns
from .._core._forest import Forest
from .._exceptions import InputError, TreelensError, UnsafeModelError

__all__ = [
    "TRUSTED_MODEL_TYPES",
    "as_categories",
    "atomic_write",
    "check_output_path",
    "check_target",
    "load_data",
    "load_model",
    "named_by_columns",
]

#: Types that skops does not trust by default but that are the fitted internals of
#: models treelens reads: constructing them runs only their library's own code.
TRUSTED_MODEL_TYPES: frozenset[str] = frozenset(
    {
        "sklearn.tree._tree.Tree",
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
        "xgboost.core.Booster",
        "xgboost.sklearn.XGBClassifier",
        "xgboost.sklearn.XGBRegressor",
        "lightgbm.basic.Booster",
        "lightgbm.sklearn.LGBMClassifier",
        "lightgbm.sklearn.LGBMRegressor",
        "catboost.core.CatBoostClassifier",
        "catboost.core.CatBoostRegressor",
        "collections.OrderedDict",
        # Preprocessing of pipelines: a dtype parameter (OneHotEncoder's
        # dtype=np.float64) and ColumnTransformer's column selector, which only
        # stores the pattern and dtypes it selects by.
        "numpy.dtype",
        "sklearn.compose._column_transformer.make_column_selector",
        # HistGradientBoosting with categorical_features="from_dtype" keeps a
        # preprocessor whose FunctionTransformer calls check_array through a
        # partial (the function a partial wraps is checked on its own).
        "functools.partial",
        "sklearn.utils.validation.check_array",
    }
)

_PICKLE_SUFFIXES = {".pkl", ".pickle", ".joblib"}
_SKOPS_SUFFIXES = {".skops"}
_NATIVE_SUFFIXES = {".json", ".ubj", ".txt", ".model", ".bst", ".cbm"}
_CSV_SUFFIXES = {".csv", ".tsv"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}


def _check_readable(path: Path, what: str) -> None:
    if not path.exists():
        raise InputError(f"{what} file {str(path)!r} does not exist.")
    if path.is_dir():
        raise InputError(f"{what} path {str(path)!r} is a directory; expected a file.")
    if not os.access(path, os.R_OK):
        raise InputError(f"{what} file {str(path)!r} is not readable.")


def _sniff(path: Path) -> str:
    """Guess a model file's format from its first bytes."""
    with open(path, "rb") as handle:
        head = handle.read(16)
    if head.startswith(b"PK"):
        return "skops"
    # Pickle protocol 2+ opens with PROTO (0x80); joblib compresses with zlib (0x78).
    if head[:1] in (b"\x80", b"\x78") or head.startswith(b"\x1f\x8b"):
        return "pickle"
    stripped = head.lstrip()
    if stripped.startswith((b"{", b"tree", b"CBM1")):
        return "native"
    return "unknown"


def load_model(
    path: str | os.PathLike[str],
    *,
    trust_pickle: bool = False,
    trusted: Sequence[str] = (),
) -> Any:
    """Load a fitted model from a file, refusing files that would run untrusted code.

    Parameters
    ----------
    path : path-like
        A ``.skops`` file, a pickle/joblib file, or an XGBoost/LightGBM native
        model file.
    trust_pickle : bool, default=False
        Allow pickle and joblib files.  Unpickling runs arbitrary code from the
        file: pass True only for files you made yourself or fully trust.
    trusted : sequence of str, default=()
        Extra fully qualified type names to trust in a ``.skops`` file, in
        addition to skops' defaults and :data:`TRUSTED_MODEL_TYPES`.

    Returns
    -------
    model : object
        The fitted model.

    Raises
    ------
    InputError
        If the file is missing, unreadable, or not a model file treelens can read.
    UnsafeModelError
        If the file is a pickle and ``trust_pickle`` is false, or a skops file
        holding types that are not trusted.
    """
    path = Path(path)
    _check_readable(path, "Model")
    suffix = path.suffix.lower()
    kind = _sniff(path)
    if suffix in _PICKLE_SUFFIXES or kind == "pickle":
        return _load_pickle(path, trust_pickle=trust_pickle)
    if suffix in _SKOPS_SUFFIXES or kind == "skops":
        return _load_skops(path, trusted=trusted)
    if suffix in _NATIVE_SUFFIXES or kind == "native":
        return _load_native(path)
    raise InputError(
        f"Cannot tell the format of model file {str(path)!r}; expected a .skops "
        "file, a pickle/joblib file (.pkl, .pickle, .joblib, with --trust-pickle), "
        "or an XGBoost (.json, .ubj), LightGBM (.txt) or CatBoost (.cbm, .json) "
        "model file."
    )


def _load_pickle(path: Path, *, trust_pickle: bool) -> Any:
    if not trust_pickle:
        raise UnsafeModelError(
            f"Refusing to load {str(path)!r}: it is a pickle/joblib file, and "
            "unpickling runs arbitrary code from the file. Pass --trust-pickle "
            "(trust_pickle=True) only if you trust its origin, or save the model "
            "with skops (skops.io.dump) instead."
        )
    import joblib

    try:
        return joblib.load(path)
    except Exception as exc:  # any failure of the unpickler means a bad file
        raise InputError(
            f"Could not read model file {str(path)!r} as a pickle/joblib file: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _load_skops(path: Path, *, trusted: Sequence[str]) -> Any:
    """Load a skops file whose every type is trusted, reading the archive once.

    ``skops.io.load`` audits every type before it builds anything and refuses a
    file holding a type outside skops' defaults and ``trusted``; only then are the
    untrusted types listed, for the message.
    """
    import skops.io
    from skops.io.exceptions import UntrustedTypesFoundException

    allowed = sorted(TRUSTED_MODEL_TYPES | set(trusted))
    try:
        return skops.io.load(path, trusted=allowed)
    except UntrustedTypesFoundException:
        pass
    except Exception as exc:  # a corrupt archive fails in many ways
        raise InputError(
            f"Could not read model file {str(path)!r} as a skops file: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    try:
        untrusted = skops.io.get_untrusted_types(file=path)
    except Exception as exc:  # the archive read once already
        raise InputError(
            f"Could not read model file {str(path)!r} as a skops file: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    refused = sorted(set(untrusted) - set(allowed))
    raise UnsafeModelError(
        f"Refusing to load {str(path)!r}: it holds types that are not trusted "
        f"({', '.join(refused)}). Check them, then pass --trust TYPE for each "
        "(trusted=[...]) to load it."
    )


def _load_native(path: Path) -> Any:
    try:
        from .._adapters._native import load_native_model
    except ImportError:
        raise InputError(
            f"Cannot read {str(path)!r}: reading XGBoost or LightGBM native model "
            "files is not available in this version of treelens; save the model "
            "with skops (skops.io.dump) instead."
        ) from None
    try:
        return load_native_model(path)
    except TreelensError:
        raise
    except Exception as exc:
        raise InputError(
            f"Could not read model file {str(path)!r} as an XGBoost, LightGBM or "
            f"CatBoost model file: {type(exc).__name__}: {exc}"
        ) from exc


def _csv_separator(path: Path) -> str:
    """The field separator of a CSV file, from its header line.

    A file written with ``;`` (as spreadsheets do where the comma is the decimal
    mark) or tabs is read with that separator when its header holds no comma.
    """
    if path.suffix.lower() == ".tsv":
        return "\t"
    with open(path, encoding="utf-8", errors="replace") as handle:
        header = handle.readline()
    if "," not in header:
        for separator in (";", "\t", "|"):
            if separator in header:
                return separator
    return ","


def _header(path: Path, separator: str) -> list[str]:
    """Column names exactly as the file spells them (pandas renames duplicates)."""
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        return [str(name) for name in pq.read_schema(path).names]
    import csv

    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        row = next(csv.reader(handle, delimiter=separator), [])
    return [name.strip() for name in row]


def _check_unique(names: Sequence[str], path: Path) -> None:
    seen: dict[str, int] = {}
    for position, name in enumerate(names):
        if name in seen:
            raise InputError(
                f"Column {name!r} appears twice in {str(path)!r} (columns "
                f"{seen[name] + 1} and {position + 1}); expected unique column names."
            )
        seen[name] = position


def _read_table(path: Path, text_columns: Sequence[str] = ()) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix not in _PARQUET_SUFFIXES | _CSV_SUFFIXES:
        raise InputError(
            f"Unknown data file type {suffix or '(none)'!r} for {str(path)!r}; "
            "expected .csv, .tsv, .parquet or .pq."
        )
    try:
        separator = "," if suffix in _PARQUET_SUFFIXES else _csv_separator(path)
        _check_unique(_header(path, separator), path)
        if suffix in _PARQUET_SUFFIXES:
            return pd.read_parquet(path)
        # Columns of text categories are read as text ("007" stays "007").
        dtype = dict.fromkeys(text_columns, str) or None
        return pd.read_csv(path, sep=separator, dtype=dtype)
    except TreelensError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(
            f"Data file {str(path)!r} must be UTF-8 text; got byte "
            f"0x{exc.object[exc.start]:02x}, which UTF-8 does not allow there "
            "(re-save the file with UTF-8 encoding)."
        ) from exc
    except Exception as exc:  # pandas and pyarrow raise many error classes
        raise InputError(
            f"Could not read data file {str(path)!r}: {type(exc).__name__}: {exc}"
        ) from exc


def _numeric_frame(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Convert every column to float64, refusing text and infinity; boolean
    columns (``True``/``False`` in a CSV file) stay booleans, so that answers
    speak of them as the data does (``flag: False -> True``).

    A Parquet column stored as text is refused even when its values read as
    numbers: its type says it is not numeric.  In a CSV file, where every value
    is text, values that are not numbers are refused.  Empty cells (NaN) are kept:
    they mark missing values.  Errors name the column and the data row, counted
    from 0 as ``--rows`` counts.
    """
    typed = path.suffix.lower() in _PARQUET_SUFFIXES
    out = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype == bool:
            out[name] = column
            continue
        if pd.api.types.is_bool_dtype(column) or pd.api.types.is_numeric_dtype(column):
            converted = column.astype(np.float64)
        else:
            present = np.flatnonzero(column.notna().to_numpy())
            if typed and present.size:
                row = int(present[0])
                raise InputError(
                    f"Column {str(name)!r} of {str(path)!r} must hold numbers; it is "
                    f"stored as text (for example {str(column.iloc[row])!r} at data "
                    f"row {row}). Store it as a numeric column."
                )
            converted = pd.to_numeric(column, errors="coerce")
            bad = converted.isna() & column.notna()
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise InputError(
                    f"Column {str(name)!r} of {str(path)!r} must hold numbers; got "
                    f"{str(column.iloc[row])!r} at data row {row}."
                )
            converted = converted.astype(np.float64)
        infinite = np.flatnonzero(np.isinf(converted.to_numpy()))
        if infinite.size:
            row = int(infinite[0])
            raise InputError(
                f"Column {str(name)!r} of {str(path)!r} must hold finite numbers (or "
                f"empty cells for missing values); got {converted.iloc[row]} at data "
                f"row {row}."
            )
        out[name] = converted
    return pd.DataFrame(out, index=frame.index)


def _mixed_frame(
    frame: pd.DataFrame, path: Path, features: Sequence[Any]
) -> pd.DataFrame:
    """Cast each column to what the model expects: numbers for numeric columns,
    labels for categorical ones (numbers read from text categories become
    text), as read for columns the model never reads or reads as present or
    missing only."""
    out = {}
    for spec, name in zip(features, frame.columns):
        column = frame[name]
        if spec.dropped or spec.presence_only:
            out[name] = column
        elif spec.kind == "categorical":
            categories = list(spec.categories or ())
            text = bool(categories) and all(isinstance(c, str) for c in categories)
            if text and pd.api.types.is_numeric_dtype(column):
                column = column.astype(object).where(column.isna(), column.astype(str))
            out[name] = column
        else:
            out[name] = _numeric_frame(frame[[name]], path)[name]
    return pd.DataFrame(out, index=frame.index)


def load_data(
    path: str | os.PathLike[str],
    *,
    feature_names: Sequence[str],
    has_feature_names: bool = True,
    target: str | None = None,
    features: Sequence[Any] | None = None,
) -> tuple[pd.DataFrame, pd.Series | None]:
    """Read a CSV or Parquet file into the model's features and an optional target.

    Parameters
    ----------
    path : path-like
        ``.csv``, ``.tsv``, ``.parquet`` or ``.pq`` file with a header row.
    feature_names : sequence of str
        The model's features.
    has_feature_names : bool, default=True
        Whether the model knows its feature names.  If true, columns are matched by
        name (any order; a column named with spaces where the model has
        underscores, as LightGBM stores names, is matched too); otherwise the
        columns other than ``target`` are taken in file order and must number
        ``len(feature_names)``.
    target : str, optional
        Name of the column holding the true labels or values.
    features : sequence of FeatureSpec, optional
        What each of the model's columns is (``Forest.features``).  When some
        are categorical, or never read by the model, those columns keep their
        labels (CSV text categories are read as text) and only the numeric
        ones are converted; a label the model never saw is left to the model
        (routed as it routes unknown categories).

    Returns
    -------
    X : DataFrame of shape (n_samples, n_features)
        The features, float64 (labels in categorical columns), in the model's
        order.  When the model has no feature
        names the file's column names are kept.
    y : Series of shape (n_samples,) or None
        The target column, as read, or None when ``target`` is None.

    Raises
    ------
    InputError
        If the file is missing or unreadable, the target column is absent, columns
        are missing or unexpected (all of them are named), or a feature holds a
        value that is not a number.
    """
    path = Path(path)
    _check_readable(path, "Data")
    mixed = features is not None and any(
        spec.kind != "numeric" or spec.dropped or spec.presence_only
        for spec in features
    )
    text_columns = (
        [
            spec.name
            for spec in features
            if spec.kind == "categorical"
            and all(isinstance(c, str) for c in spec.categories or ())
        ]
        if mixed and features is not None
        else []
    )
    frame = _read_table(path, text_columns)
    frame.columns = [str(c) for c in frame.columns]
    if frame.shape[0] == 0:
        raise InputError(f"Data file {str(path)!r} has no rows; expected at least one.")
    y = None
    if target is not None:
        if target not in frame.columns:
            raise InputError(
                f"Target column {target!r} is not in {str(path)!r}; expected one of "
                f"{list(frame.columns)}."
            )
        y = frame.pop(target)
    expected = [str(n) for n in feature_names]
    if has_feature_names:
        frame = frame.set_axis(
            feature_columns([str(c) for c in frame.columns], expected), axis=1
        )
        columns = list(frame.columns)
        missing = [n for n in expected if n not in columns]
        extra = [n for n in columns if n not in expected]
        if missing or extra:
            hint = ""
            if any(str(n).startswith("Unnamed: ") for n in extra):
                hint = (
                    " (a column without a name is usually an index written with "
                    "the data: save the file with index=False)"
                )
            elif extra and target is None:
                hint = " (name the target column with --target)"
            raise InputError(
                f"The columns of {str(path)!r} must be the model's features; "
                f"missing {missing}, unexpected {extra}{hint}."
            )
        frame = frame[expected]
    elif frame.shape[1] != len(expected):
        raise InputError(
            f"{str(path)!r} has {frame.shape[1]} feature columns, but the model "
            f"(fitted without feature names) expects {len(expected)}; name the "
            "target column with --target."
        )
    if mixed and features is not None and has_feature_names:
        return _mixed_frame(frame, path, features), y
    return _numeric_frame(frame, path), y


def named_by_columns(model: Any, columns: Sequence[str]) -> Forest | None:
    """The Forest of a model fitted without feature names, its features named
    after a data file's columns, or None when there is nothing to rename.

    A model fitted on an array reads a file's columns in file order (see
    :func:`load_data`), so the file's names are those of its features, one
    for one.  A model that knows its feature names keeps them: None.

    Parameters
    ----------
    model : fitted model or Forest
        As :func:`load_model` returns it.
    columns : sequence of str
        The data file's feature columns, in file order (the target aside).

    Returns
    -------
    Forest or None
        The model's Forest under the names ``columns``, with the model as its
        ``fitted_model`` (which reads the columns by position); None when the
        model has feature names, the number of columns differs from its number
        of features, or the columns already bear its default names.
    """
    from .._adapters import to_forest

    forest = to_forest(model)
    names = tuple(str(c) for c in columns)
    if (
        forest.has_feature_names
        or len(names) != forest.n_features
        or names == forest.feature_names
    ):
        return None
    if not isinstance(model, Forest):
        # The model stays behind its renamed Forest (its ``fitted_model``):
        # it confirms counterfactuals.
        return to_forest(model, feature_names=names)
    # A Forest read from a model file: the same trees under other names.
    features = tuple(
        dataclasses.replace(spec, name=name)
        for spec, name in zip(forest.features, names)  # empty: all numeric
    )
    return dataclasses.replace(
        forest, feature_names=names, has_feature_names=True, features=features
    )


def as_categories(X: pd.DataFrame, features: Sequence[Any]) -> pd.DataFrame:
    """``X`` with its categorical columns as pandas categories, for libraries
    that read categories from the column's dtype only (LightGBM and XGBoost
    refuse text): the model's labels first, so that their codes are those it
    was fitted on, then any label it never saw (a code past them, which the
    Forest reads as unknown too).

    Parameters
    ----------
    X : DataFrame of shape (n_samples, n_features)
        As :func:`load_data` returns it, in the model's column order.
    features : sequence of FeatureSpec
        ``Forest.features``.

    Returns
    -------
    DataFrame
        A copy when a column changed; columns already categories are kept.
    """
    out = X
    for spec, name in zip(features, X.columns):
        column = X[name]
        if spec.kind != "categorical" or isinstance(column.dtype, pd.CategoricalDtype):
            continue
        known = list(spec.categories or ())
        seen = set(map(str, known))
        unseen = sorted({v for v in column.dropna() if str(v) not in seen}, key=str)
        if out is X:
            out = X.copy()
        out[name] = pd.Categorical(column, categories=[*known, *unseen])
    return out


def check_target(
    y: pd.Series,
    *,
    classes: Any = None,
    path: str | os.PathLike[str] = "the data",
) -> pd.Series:
    """The target column in the form the model predicts, or a clear refusal.

    Parameters
    ----------
    y : Series of shape (n_samples,)
        The target column as read from the file (named by ``y.name``).
    classes : array-like, optional
        The model's class labels; None for a regressor.
    path : path-like
        The data file, for messages.

    Returns
    -------
    Series of shape (n_samples,)
        Labels in the dtype of ``classes`` (a CSV column of 0/1 may have been read
        as floats or text), or float64 values for a regressor; the index is kept.

    Raises
    ------
    InputError
        If a row has no target, a label is not one of ``classes``, or a
        regressor's target is not a finite number; the message names the column,
        the value and its data row (counted from 0).
    """
    where = f"Target column {str(y.name)!r} of {str(path)!r}"
    missing = np.flatnonzero(y.isna().to_numpy())
    if missing.size:
        raise InputError(
            f"{where} must hold a value in every row; data row {int(missing[0])} is "
            "empty."
        )
    if classes is None:
        values = pd.to_numeric(y, errors="coerce").astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(values.to_numpy()))
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"{where} must hold finite numbers for a regressor; got "
                f"{str(y.iloc[row])!r} at data row {row}."
            )
        return values
    classes = np.asarray(classes)
    lookup = {_label_text(c): c for c in classes.tolist()}
    texts = [_label_text(v) for v in y.tolist()]
    unknown = [i for i, text in enumerate(texts) if text not in lookup]
    if unknown:
        row = unknown[0]
        raise InputError(
            f"{where} must hold the model's classes {list(lookup)}; got "
            f"{texts[row]!r} at data row {row}"
            + (f" ({len(unknown)} rows in all)." if len(unknown) > 1 else ".")
        )
    return pd.Series(
        np.asarray([lookup[t] for t in texts], dtype=classes.dtype),
        index=y.index,
        name=y.name,
    )


def _label_text(value: Any) -> str:
    """A label as text, with 1.0 read as 1 (a CSV reads labels 0/1 as floats)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def check_output_path(
    path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = ()
) -> Path:
    """Check that ``path`` can be written as an output file, before any work.

    Parameters
    ----------
    path : path-like
        The output file.
    inputs : sequence of path-like
        Files read by the same command; the output may not be any of them.

    Returns
    -------
    Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    InputError
        If ``path`` is a directory, is one of ``inputs``, or its directory does not
        exist or is not writable.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(
            f"Output path {str(path)!r} is a directory; expected a file name."
        )
    target = path.resolve()
    for source in inputs:
        source = Path(source)
        if source.exists() and (target == source.resolve() or _same_file(path, source)):
            raise InputError(
                f"Output path {str(path)!r} is an input file; expected a new file "
                "name, so that the input is never overwritten."
            )
    parent = target.parent
    if not parent.is_dir():
        raise InputError(
            f"Cannot write {str(path)!r}: directory {str(parent)!r} does not exist."
        )
    # Creating (and removing) the temporary file now proves the directory writable.
    try:
        handle, temp = tempfile.mkstemp(
            dir=parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as exc:
        raise InputError(
            f"Cannot write {str(path)!r}: {exc.strerror or exc}; expected a writable "
            "directory."
        ) from exc
    os.close(handle)
    os.unlink(temp)
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


#: Temporary files being written at this moment, removed by
#: :func:`discard_temporary_files` when the process must stop at once.
_WRITING: set[str] = set()


def discard_temporary_files() -> None:
    """Remove the temporary files of the writes in progress (their destinations
    stay as they were); for a process about to exit without unwinding."""
    for temp in list(_WRITING):
        with contextlib.suppress(OSError):
            os.unlink(temp)


@contextlib.contextmanager
def _temporary_sibling(path: Path) -> Iterator[tuple[IO[bytes], str]]:
    handle, temp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    _WRITING.add(temp)
    stream = os.fdopen(handle, "wb")
    try:
        yield stream, temp
    except BaseException:
        # Also on KeyboardInterrupt: the destination is left exactly as it was.
        stream.close()
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    finally:
        _WRITING.discard(temp)


def atomic_write(
    path: str | os.PathLike[str],
    content: bytes | str | Callable[[IO[bytes]], None],
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Write a file atomically: all of ``content`` appears at ``path``, or nothing.

    The content goes to a temporary file in the same directory, is flushed and
    fsynced, and then renamed over ``path`` with :func:`os.replace`, which is atomic
    on POSIX and Windows.  An error or interrupt (Ctrl-C) before the rename removes
    the temporary file and leaves ``path`` untouched.

    Parameters
    ----------
    path : path-like
        Destination file.
    content : bytes, str or callable
        The bytes to write, text (written as UTF-8), or a function that writes to
        the binary stream it is given.
    inputs : sequence of path-like
        Files the output may not replace (see :func:`check_output_path`).

    Returns
    -------
    Path
        The destination.
    """
    path = check_output_path(path, inputs=inputs)
    try:
        with _temporary_sibling(path) as (stream, temp):
            if callable(content):
                content(stream)
            else:
                stream.write(
                    content.encode("utf-8") if isinstance(content, str) else content
                )
            stream.flush()
            os.fsync(stream.fileno())
            stream.close()
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temp, 0o666 & ~umask)
            os.replace(temp, path)
    except OSError as exc:
        raise InputError(f"Cannot write {str(path)!r}: {exc.strerror or exc}.") from exc
    with contextlib.suppress(OSError):
        directory = os.open(path.resolve().parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    return path
