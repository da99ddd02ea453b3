"""Reading XGBoost and LightGBM models from their own model files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._exceptions import InputError, UnsupportedModelError
from ._model_checks import check_lightgbm_text, check_xgboost_json

__all__ = ["load_native_model"]

_EXPECTED = (
    "an XGBoost model (.json or .ubj, from Booster.save_model), a LightGBM model "
    "(text, from Booster.save_model), a LightGBM dump (.json, from "
    "Booster.dump_model) or a CatBoost model (.cbm or .json, from save_model)"
)


def _library(name: str, path: Path) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UnsupportedModelError(
            f"Reading {str(path)!r} needs {name}, which is not installed; expected "
            f"it installed (pip install 'treelens[{name}]')."
        ) from exc


def load_native_model(path: str | os.PathLike[str]) -> Any:
    """Load a boosting model from its library's own model file.

    Parameters
    ----------
    path : str or path-like
        One of:

        - an XGBoost model saved with ``Booster.save_model`` / ``XGBModel.save_model``
          as JSON (``.json``) or Universal Binary JSON (``.ubj``);
        - a LightGBM model saved with ``Booster.save_model`` (text, usually
          ``.txt``);
        - a LightGBM dump, ``Booster.dump_model()`` written as JSON;
        - a CatBoost model saved with ``save_model`` in its binary format
          (``.cbm``, read by CatBoost's own loader) or as JSON
          (``format="json"``, read without CatBoost).

        The format is recognized from the file's content, not its name.

    Returns
    -------
    model : xgboost.Booster, lightgbm.Booster, catboost.CatBoost or Forest
        A model of the library that wrote the file, or the
        :class:`~treelens.Forest` built from the file where it is JSON and the
        library is not needed: a LightGBM dump, a CatBoost JSON model, or an
        XGBoost JSON model when xgboost is not installed.  Either can be given to
        :func:`treelens.to_forest`.

    Raises
    ------
    InputError
        If the file does not exist or is of none of these formats.
    UnsupportedModelError
        If the library needed to read the file (LightGBM text, XGBoost UBJ,
        CatBoost binary) is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"Model file {str(path)!r} does not exist or is not a file.")
    with open(path, "rb") as handle:
        head = handle.read(64)
    stripped = head.lstrip()
    if head.startswith(b"CBM1"):  # CatBoost's binary model, read by CatBoost itself
        model = _library("catboost", path).CatBoost()
        model.load_model(str(path))
        return model
    if stripped.startswith(b"tree"):
        return _lightgbm_text(path)
    if stripped.startswith(b"{"):
        content, text = _json_content(path)
        if isinstance(content, dict) and "tree_info" in content:
            from ._lightgbm import forest_from_lightgbm_dump

            return forest_from_lightgbm_dump(content, source="lightgbm.Booster")
        if isinstance(content, dict) and "features_info" in content:
            from ._catboost import forest_from_catboost_json

            return forest_from_catboost_json(content, source="catboost.CatBoost")
        if content is None:  # Universal Binary JSON also opens with "{"
            content, text = _ubj_content(path)
        if isinstance(content, dict) and "learner" in content:
            check_xgboost_json(content, str(path))
            try:
                import xgboost
            except ImportError:  # the JSON model holds everything a Forest needs
                from ._xgboost import forest_from_xgboost_json

                return forest_from_xgboost_json(content, source="xgboost.Booster")
            booster = xgboost.Booster()
            booster.load_model(bytearray(text.encode("utf-8")))
            return booster
    raise InputError(
        f"Model file {str(path)!r} is of an unknown format; expected {_EXPECTED}; "
        f"got a file starting with {head[:16]!r}."
    )


def _lightgbm_text(path: Path) -> Any:
    """A LightGBM Booster from a text model whose structure was checked first."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"Model file {str(path)!r} starts like a LightGBM text model but is not "
            f"text (byte {exc.start} is not UTF-8); the file is damaged."
        ) from None
    check_lightgbm_text(text, str(path))
    lightgbm = _library("lightgbm", path)
    try:
        return lightgbm.Booster(model_str=text)
    except lightgbm.basic.LightGBMError as exc:
        raise InputError(
            f"LightGBM could not read model file {str(path)!r}: {exc}"
        ) from exc


def _json_content(path: Path) -> tuple[Any, str]:
    """The parsed JSON and its text; (None, "") for a binary (UBJ) file."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, ""
    try:
        return json.loads(text), text
    except ValueError as exc:
        if path.suffix.lower() == ".ubj":
            return None, ""
        line = getattr(exc, "lineno", "?")
        column = getattr(exc, "colno", "?")
        message = getattr(exc, "msg", str(exc))
        raise InputError(
            f"Model file {str(path)!r} is not valid JSON ({message}, line {line}, "
            f"column {column}); expected {_EXPECTED}."
        ) from None


#: Run in a child process: XGBoost's UBJ reader trusts its input, so a damaged
#: file may crash it; the child's crash becomes an error here.
_UBJ_TO_JSON = """
import sys, xgboost
booster = xgboost.Booster(model_file=sys.argv[1])
sys.stdout.buffer.write(bytes(booster.save_raw(raw_format="json")))
"""


def _ubj_content(path: Path) -> tuple[Any, str]:
    """The JSON of an XGBoost UBJ model, converted by XGBoost in a child process."""
    import signal
    import subprocess
    import sys

    _library("xgboost", path)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _UBJ_TO_JSON, str(path)],
            capture_output=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InputError(
            f"XGBoost did not finish reading model file {str(path)!r} within 300 s; "
            "the file is damaged or not an XGBoost model."
        ) from None
    if done.returncode != 0:
        if done.returncode < 0:
            name = signal.Signals(-done.returncode).name
            detail = f"XGBoost's reader crashed ({name})"
        else:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = (
                f"XGBoost could not read it ({lines[-1] if lines else 'no message'})"
            )
        raise InputError(
            f"Model file {str(path)!r} is of an unknown format or damaged: {detail}; "
            f"expected {_EXPECTED}."
        )
    text = done.stdout.decode("utf-8")
    return json.loads(text), text


def booster_predict(model: Any, X: Any) -> Any:
    """Labels or values a library Booster predicts for ``X``, as ``Forest.predict``.

    ``xgboost.Booster.predict`` needs a DMatrix, and both libraries' Boosters
    return class probabilities rather than labels; CatBoost returns labels of
    multiclass models as a column, and its generic ``CatBoost`` class raw scores.
    Returns None for any other model, whose own ``predict`` already gives labels
    or values.

    Parameters
    ----------
    model : object
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    y_pred : ndarray of shape (n_samples,) or None
        For classifiers, class indices ``0 .. n_classes - 1`` (a Booster knows no
        labels; CatBoost models give their labels): ``p > 0.5`` for binary models, the argmax of the probabilities
        otherwise.
    """
    import numpy as np

    from ._registry import class_key

    key = class_key(type(model))
    if key == "xgboost.Booster":
        import xgboost

        # Categorical features take their codes, as the Forest routes them.
        types = model.feature_types
        matrix = xgboost.DMatrix(
            np.asarray(X),
            feature_names=model.feature_names,
            feature_types=types,
            enable_categorical=bool(types) and "c" in types,
        )
        output = model.predict(matrix)
        objective = json.loads(model.save_config())["learner"]["objective"]["name"]
    elif key == "lightgbm.Booster":
        output = model.predict(np.asarray(X))
        objective = str(model.dump_model(num_iteration=1).get("objective", ""))
    elif key.startswith("catboost."):
        from ._catboost import catboost_predict

        return catboost_predict(model, X)
    else:
        return None
    if objective.startswith(("binary", "multi:softprob", "multiclass")):
        output = np.asarray(output)
        return (
            (output > 0.5).astype(np.intp)
            if output.ndim == 1
            else np.argmax(output, axis=1)
        )
    if objective.startswith("multi:softmax"):
        return np.asarray(output).astype(np.intp)
    return np.asarray(output)
