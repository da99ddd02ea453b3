"""Feature names of models read from other libraries' dumps."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._exceptions import InputError

__all__ = ["resolve_feature_names"]


def resolve_feature_names(
    model_names: Sequence[str] | None,
    n_features: int,
    feature_names: Sequence[str] | None,
    *,
    auto_pattern: str | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Feature names for a Forest and whether they are real (matched by name).

    Parameters
    ----------
    model_names : sequence of str or None
        The names the model stores (None or empty when it has none).
    n_features : int
    feature_names : sequence of str or None
        Names given by the user; must equal the model's real names if it has any.
    auto_pattern : str, optional
        Regular expression with one ``(\\d+)`` group matching the names a library
        invents for unnamed columns (LightGBM's ``Column_0``); such names count as
        no names.

    Returns
    -------
    names : tuple of str of length n_features
    has_names : bool
    """
    names = [str(n) for n in model_names] if model_names else None
    if (
        names is not None
        and auto_pattern is not None
        and all(
            (match := re.fullmatch(auto_pattern, n)) and int(match.group(1)) == i
            for i, n in enumerate(names)
        )
    ):
        names = None
    if names is not None and len(names) != n_features:
        raise InputError(
            f"The model stores {len(names)} feature names but has {n_features} "
            "features; expected one name per feature."
        )
    if feature_names is not None:
        given = tuple(str(n) for n in feature_names)
        if len(given) != n_features:
            raise InputError(
                f"`feature_names` must have one name per feature; expected "
                f"{n_features}, got {len(given)}."
            )
        if names is not None and list(given) != names:
            raise InputError(
                "`feature_names` differ from the feature names stored in the model; "
                f"expected {names}, got {list(given)}."
            )
        return given, True
    if names is not None:
        return tuple(names), True
    return tuple(f"x{i}" for i in range(n_features)), False
