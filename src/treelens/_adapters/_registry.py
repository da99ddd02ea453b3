"""The adapter registry: which function turns which model class into a Forest.

Adapters register under the name ``"<top-level package>.<ClassName>"`` (for
example ``"sklearn.RandomForestClassifier"``).  This module imports no adapter and
no library: the adapter modules import :func:`register_adapter` from here, and the
package's ``__init__`` imports them all (none imports its library at module level).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._core._forest import Forest

__all__ = ["Adapter", "adapter_of", "class_key", "register_adapter", "registered"]

Adapter = Callable[[Any, "Sequence[str] | None"], Forest]

_REGISTRY: dict[str, Adapter] = {}


def register_adapter(*names: str) -> Callable[[Adapter], Adapter]:
    """Register the decorated function as the adapter of the named model classes.

    Parameters
    ----------
    *names : str
        ``"<top-level package>.<ClassName>"`` of each model class, for example
        ``"sklearn.RandomForestClassifier"``.

    Returns
    -------
    callable
        A decorator that registers its function and returns it unchanged.
    """

    def decorator(function: Adapter) -> Adapter:
        for name in names:
            _REGISTRY[name] = function
        return function

    return decorator


def class_key(cls: type) -> str:
    """The registry name of a class: ``"<top-level package>.<qualified name>"``."""
    return f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def adapter_of(model: object) -> Adapter | None:
    """The adapter of ``model``'s class or of its nearest registered base class."""
    for cls in type(model).__mro__:
        adapter = _REGISTRY.get(class_key(cls))
        if adapter is not None:
            return adapter
    return None


def registered() -> list[str]:
    """Every registered model class name, sorted."""
    return sorted(_REGISTRY)
