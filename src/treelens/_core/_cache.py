"""The one cache of what is derived from a :class:`~treelens.Forest`.

A Forest is immutable, so anything computed from it alone (routing tables, leaf
boxes, compiled trees, programs of the counterfactual search) can be kept with it.
Every such value is stored here, under a key naming what it is, in a private
dict of the Forest (or Tree) instance, and values given to it with :func:`keep`
in a second one; nothing else writes into a Forest.

Derived values are left out when the owner is pickled or copied
(:func:`without_derived`, the owner's ``__getstate__``): they are rebuilt on
first use, and they can be many times the size of the trees themselves (the
program of the counterfactual search of a 200-tree forest of depth 8 made its
pickle 13 times larger).  Values given with :func:`keep` cannot be rebuilt
from the owner alone, so they stay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["derived", "derived_property", "keep", "kept", "without_derived"]

T = TypeVar("T")

_SLOT = "_treelens_derived"
_KEPT_SLOT = "_treelens_kept"


def derived(owner: object, key: str, build: Callable[[], T]) -> T:
    """The value cached under ``key`` for ``owner``, built once by ``build()``.

    Parameters
    ----------
    owner : Forest or Tree
        The immutable object the value is derived from.
    key : str
        What the value is (for example ``"leaf_boxes"``).
    build : callable
        Computes the value on first use.

    Returns
    -------
    object
        The cached value.
    """
    cache: dict[str, Any] = owner.__dict__.setdefault(_SLOT, {})
    try:
        return cache[key]
    except KeyError:
        value = cache[key] = build()
        return value


def keep(owner: object, key: str, value: object) -> None:
    """Keep ``value`` for ``owner`` under ``key``, replacing what was there.

    For a value that is given to the owner rather than computed from it (a
    forest restricted to fixed categories keeps the node support of the whole
    forest); read it back with :func:`kept`.
    """
    owner.__dict__.setdefault(_KEPT_SLOT, {})[key] = value


def kept(owner: object, key: str) -> Any:
    """The value kept for ``owner`` under ``key``, or None when there is none.

    Examples
    --------
    >>> class Owner:
    ...     pass
    >>> owner = Owner()
    >>> kept(owner, "support") is None
    True
    >>> keep(owner, "support", [1, 2])
    >>> kept(owner, "support")
    [1, 2]
    """
    return owner.__dict__.get(_KEPT_SLOT, {}).get(key)


def without_derived(owner: object) -> dict[str, Any]:
    """The instance dict of ``owner`` without its derived values: the state it
    pickles and copies with (see the module's docstring).

    Examples
    --------
    >>> class Owner:
    ...     pass
    >>> owner = Owner()
    >>> owner.name = "tree"
    >>> _ = derived(owner, "size", lambda: 3)
    >>> keep(owner, "support", [1, 2])
    >>> sorted(without_derived(owner))
    ['_treelens_kept', 'name']
    """
    return {name: value for name, value in owner.__dict__.items() if name != _SLOT}


class derived_property(Generic[T]):
    """A read-only property whose value is computed once and kept by :func:`derived`."""

    def __init__(self, function: Callable[[Any], T]) -> None:
        self.function = function
        self.__doc__ = function.__doc__
        self.name = function.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> derived_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> T: ...

    def __get__(self, instance: object | None, owner: type) -> Any:
        if instance is None:
            return self
        return derived(instance, self.name, lambda: self.function(instance))
