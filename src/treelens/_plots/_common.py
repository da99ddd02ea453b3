"""Small helpers shared by the Display classes.

matplotlib is imported only inside the functions that draw, through
:func:`require_matplotlib`, so ``import treelens`` works without it.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RenamedAttributes",
    "class_colors",
    "model_feature_names",
    "require_matplotlib",
    "resolve_axes",
]

_INSTALL_HINT = (
    "treelens needs matplotlib to draw pictures; expected it to be importable, but "
    "it is not installed. Install it with `pip install matplotlib`."
)


def require_matplotlib() -> Any:
    """Import and return ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        With the command to install matplotlib when it is missing.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return plt


def resolve_axes(ax: Any) -> Any:
    """``ax``, or a new figure's axes when ``ax`` is None."""
    plt = require_matplotlib()
    if ax is None:
        _, ax = plt.subplots()
    return ax


def class_colors(n_classes: int) -> NDArray[np.float64]:
    """One RGBA colour per class, shape (n_classes, 4): tab10, then tab20."""
    plt = require_matplotlib()
    cmap = plt.get_cmap("tab10" if n_classes <= 10 else "tab20")
    return np.asarray(cmap(np.arange(n_classes) % cmap.N), dtype=np.float64)


def model_feature_names(model: Any, n_features: int) -> tuple[str, ...]:
    """Feature names of any fitted estimator: ``feature_names_in_`` or ``x0, x1, ...``."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None and len(names) == n_features:
        return tuple(map(str, names))
    return tuple(f"x{i}" for i in range(n_features))


class RenamedAttributes:
    """Old attribute names of a Display, still readable with a FutureWarning.

    Displays once stored their parameters with a trailing ``_`` (``features_``,
    ``X_``); they now store them under their plain names, as scikit-learn does,
    and only what :meth:`plot` creates ends in ``_``. ``_renamed`` maps each old
    name to the new one.
    """

    _renamed: ClassVar[dict[str, str]] = {}

    def __getattr__(self, name: str) -> Any:
        new = type(self)._renamed.get(name)
        if new is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        warnings.warn(
            f"`{type(self).__name__}.{name}` is now `{new}` (parameters keep their "
            "plain names; only what `plot` draws ends in `_`); the old name will "
            "be removed in a future release.",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(self, new)
