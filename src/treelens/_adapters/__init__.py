"""Adapters: one small function per library turning a fitted model into a Forest.

Adapters register under the name ``"<top-level package>.<ClassName>"`` (for
example ``"sklearn.RandomForestClassifier"``).  Dispatch walks the model's class
hierarchy, so subclasses of a supported estimator work too, and never imports a
library: a model object can only exist if its library is already imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._forest import Forest
from .._exceptions import UnsupportedModelError

__all__ = ["register_adapter", "supported_models", "to_forest"]

Adapter = Callable[[Any, "Sequence[str] | None"], Forest]

_REGISTRY: dict[str, Adapter] = {}


def register_adapter(*names: str) -> Callable[[Adapter], Adapter]:
    """Register ``function`` as the adapter for the named model classes."""

    def decorator(function: Adapter) -> Adapter:
        for name in names:
            _REGISTRY[name] = function
        return function

    return decorator


def _class_key(cls: type) -> str:
    return f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def supported_models() -> list[str]:
    """Names of every model class treelens can read, sorted."""
    _load_builtin_adapters()
    return sorted(_REGISTRY)


def _load_builtin_adapters() -> None:
    # Importing these modules only registers functions; none imports its library
    # at module level.
    from . import (  # noqa: F401
        _catboost,
        _lightgbm,
        _sklearn,
        _sklearn_hist,
        _xgboost,
    )


def to_forest(
    model: Any,
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
        when it was fitted on a DataFrame, else ``x0, x1, ...``.
    categories : mapping of str to sequence, optional
        CatBoost models only: the category labels of each categorical feature,
        by name.  CatBoost keeps only hashes of the labels, so the Forest of a
        model with one-hot splits needs them (every other library records its
        categories).

    Returns
    -------
    Forest

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
            from .._exceptions import InputError

            raise InputError(
                "`feature_names` differ from the names the Forest already holds; "
                f"expected {list(model.feature_names)}, got {list(feature_names)}."
            )
        return model
    _load_builtin_adapters()
    for cls in type(model).__mro__:
        adapter = _REGISTRY.get(_class_key(cls))
        if adapter is None:
            continue
        if categories is None:
            return adapter(model, feature_names)
        if not getattr(adapter, "accepts_categories", False):
            from .._exceptions import InputError

            raise InputError(
                "`categories` is for CatBoost models only, whose files keep no "
                f"category labels; got it for a {type(model).__qualname__}, whose "
                "categories are read from the model."
            )
        return adapter(model, feature_names, categories=categories)  # type: ignore[call-arg]
    raise UnsupportedModelError(
        f"Unsupported model {type(model).__module__}.{type(model).__qualname__}; "
        f"expected one of: {', '.join(supported_models())}."
    )
