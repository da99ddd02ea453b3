"""Adapters: one small function per library turning a fitted model into a Forest.

Dispatch walks the model's class hierarchy (see :mod:`._registry`), so subclasses
of a supported estimator work too, and never imports a library: a model object can
only exist if its library is already imported.

:func:`to_forest` is the one place where a model's Forest is built, and it keeps
the Forest of each model it has seen while the model is unchanged, so that every
function called on one model shares one Forest (and everything cached with it).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from .._types import ModelLike
from . import (  # noqa: F401 (registration)
    _catboost,
    _isolation,
    _lightgbm,
    _pipeline,
    _sklearn,
    _sklearn_hist,
    _xgboost,
)
from ._registry import adapter_of, register_adapter, registered

__all__ = ["register_adapter", "supported_models", "to_forest"]


def supported_models() -> list[str]:
    """Names of every model class treelens can read, sorted.

    Returns
    -------
    list of str
        ``"<top-level package>.<ClassName>"`` of each supported model class.

    Examples
    --------
    >>> "sklearn.RandomForestClassifier" in supported_models()
    True
    """
    return registered()


def to_forest(
    model: ModelLike,
    feature_names: Sequence[str] | None = None,
    *,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> Forest:
    """Normalize a fitted tree model into a :class:`~treelens.Forest`.

    Parameters
    ----------
    model : fitted estimator or Forest
        A supported tree model (see :func:`supported_models`); a ``Forest`` is
        returned unchanged.
    feature_names : sequence of str, optional
        Names of the features.  Defaults to the model's ``feature_names_in_``
        when it was fitted on a DataFrame, else ``x0, x1, ...``.  Names given
        to a model fitted without any keep the model behind the Forest as its
        ``fitted_model``: it reads its columns by position, and confirms the
        counterfactuals found on the Forest with its own ``predict``.
    categories : mapping of str to sequence, optional
        CatBoost models only: the category labels of each categorical feature,
        by name.  CatBoost keeps only hashes of the labels, so the Forest of a
        model with one-hot splits needs them (every other library records its
        categories).

    Returns
    -------
    Forest
        The same Forest object on every call for an unchanged model (refitting
        the model builds a new one).

    Raises
    ------
    UnsupportedModelError
        If the model is of an unsupported class or uses an unsupported option.
    NotFittedError
        If the model has not been fitted.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = to_forest(DecisionTreeClassifier(max_depth=2).fit(X, y))
    >>> forest.kind, forest.n_trees, forest.n_classes
    ('tree', 1, 3)
    """
    if isinstance(model, Forest):
        if feature_names is not None and tuple(feature_names) != model.feature_names:
            raise InputError(
                "`feature_names` differ from the names the Forest already holds; "
                f"expected {list(model.feature_names)}, got {list(feature_names)}."
            )
        return model
    if feature_names is not None or categories is not None:
        forest = _build(model, feature_names, categories)
        if feature_names is None:
            return forest
        own = (
            to_forest(model) if categories is None else _build(model, None, categories)
        )
        return _standing_for(model, own, forest)
    signature = _fitted_signature(model)
    if signature:
        try:
            cached = _FORESTS.get(model)
        except TypeError:  # unhashable or not weakly referable
            return _build(model, None)
        if cached is not None and _same(cached[0], signature):
            return cached[1]
    forest = _build(model, None)
    if signature:
        try:
            _FORESTS[model] = (signature, forest)
        except TypeError:
            pass
    return forest


def _standing_for(model: Any, own: Forest, forest: Forest) -> Forest:
    """``forest``, built under names the user gave, with ``model`` as its
    ``fitted_model`` when the model has no feature names of its own (``own``
    is its Forest without the names given) and the names are others than its
    default ones: the model reads its columns by position, so counterfactuals
    found on the renamed Forest are confirmed with its own ``predict`` on
    arrays (see :class:`~treelens.Forest`)."""
    if own.has_feature_names or own.feature_names == forest.feature_names:
        return forest
    return dataclasses.replace(forest, fitted_model=model)


def _build(
    model: Any,
    feature_names: Sequence[str] | None,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> Forest:
    adapter = adapter_of(model)
    if adapter is None:
        raise UnsupportedModelError(
            f"Unsupported model {type(model).__module__}.{type(model).__qualname__}; "
            f"expected one of: {', '.join(supported_models())}."
        )
    if categories is None:
        return adapter(model, feature_names)
    if not getattr(adapter, "accepts_categories", False):
        raise InputError(
            "`categories` is for CatBoost models only, whose files keep no "
            f"category labels; got it for a {type(model).__qualname__}, whose "
            "categories are read from the model."
        )
    return adapter(model, feature_names, categories=categories)  # type: ignore[call-arg]


# Forests of the models seen recently.  An entry is reused only while every fitted
# attribute (name ending in "_") is the same object with the same length;
# refitting rebinds them (warm starts change their length).  A pipeline's are
# those of its steps, and of the fitted transformers of a ColumnTransformer, so
# that refitting one of them in place is seen too.
_FORESTS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], Forest]] = (
    weakref.WeakKeyDictionary()
)

# Values that a refit can bind again as the very same object (True, small ints,
# interned strings): they cannot tell one fit from the next.
_SHARED = (bool, int, float, str, bytes, type(None))


def _fitted_signature(model: Any) -> tuple[Any, ...] | None:
    """What to compare to see a refit, or None when the model shows nothing
    that a refit rebinds (it is then not cached)."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list):  # a Pipeline: the fitted attributes of its steps
        # The trees live in the last step: without a signature of its own, a
        # refit of it alone would go unseen.
        final = steps[-1][1] if steps else None
        if isinstance(final, str) or _fitted_signature(final) is None:
            return None
        return _parts_signature(steps)
    try:
        attributes = vars(model)
    except TypeError:
        return None
    own = tuple(
        (name, value, len(value) if hasattr(value, "__len__") else None)
        for name, value in sorted(attributes.items())
        if name.endswith("_") and not name.startswith("_")
    )
    # A LightGBM wrapper, say, keeps its booster private and shows only
    # ``fitted_ = True``, the same object after every refit.
    if all(isinstance(value, _SHARED) for _, value, _ in own):
        return None
    fitted = attributes.get("transformers_")
    if isinstance(fitted, list):  # a ColumnTransformer's fitted transformers
        parts = [part[:2] for part in fitted if isinstance(part, tuple)]
        return own + _parts_signature(parts)
    return own


def _parts_signature(parts: list[Any]) -> tuple[Any, ...]:
    """The fitted signatures of named parts ``(name, estimator)``, prefixed
    with their names ("drop" and "passthrough" have none, nor have stateless
    transformers)."""
    out: list[Any] = []
    for name, part in parts:
        inner = _fitted_signature(part) if not isinstance(part, str) else ()
        out.extend((f"{name}.{n}", v, size) for n, v, size in inner or ())
    return tuple(out)


def _same(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    return len(old) == len(new) and all(
        a[0] == b[0] and a[1] is b[1] and a[2] == b[2] for a, b in zip(old, new)
    )
