"""Small helpers shared by the Display classes.

matplotlib is imported only inside the functions that draw, through
:func:`require_matplotlib`, so ``import treelens`` works without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._exceptions import warn

__all__ = [
    "MARKERS",
    "RenamedAttributes",
    "add_lines",
    "class_colors",
    "class_labels",
    "model_feature_names",
    "require_matplotlib",
    "resolve_axes",
    "scatter_classes",
    "set_window",
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


def set_window(ax: Any, window: Any, feature_names: Sequence[str]) -> None:
    """Limit ``ax`` to ``window`` (``[[x0, x1], [y0, y1]]``) and label its axes
    with the two ``feature_names``."""
    ax.set_xlim(*window[0])
    ax.set_ylim(*window[1])
    ax.set_xlabel(feature_names[0])
    ax.set_ylabel(feature_names[1])


def add_lines(ax: Any, segments: Any, style: dict[str, Any] | None) -> Any:
    """Draw line ``segments`` (``[[x0, y0], [x1, y1]]`` each) as one
    LineCollection, black and thin unless ``style`` says otherwise.

    The axes' limits are left alone (``autolim=False``): the Displays set them
    to their window.

    Returns
    -------
    matplotlib LineCollection
    """
    require_matplotlib()
    from matplotlib.collections import LineCollection

    lines = LineCollection(
        list(segments), **{"colors": "k", "linewidths": 0.8, **(style or {})}
    )
    ax.add_collection(lines, autolim=False)
    return lines


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
        warn(
            f"`{type(self).__name__}.{name}` is now `{new}` (parameters keep their "
            "plain names; only what `plot` draws ends in `_`); the old name will "
            "be removed in a future release.",
            FutureWarning,
        )
        return getattr(self, new)


#: Markers of the classes, in class order, so classes differ by shape too.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def class_labels(classes: Any, class_names: Any = None) -> list[str]:
    """Legend text of every class: ``class_names`` when given, else the classes.

    Raises
    ------
    InputError
        If ``class_names`` does not hold one name per class.
    """
    from .._exceptions import InputError

    if class_names is None:
        return [str(c) for c in classes]
    names = [str(c) for c in class_names]
    if len(names) != len(classes):
        raise InputError(
            f"`class_names` must hold one name per class ({len(classes)}: "
            f"{[str(c) for c in classes]}); got {len(names)}: {names}."
        )
    return names


def scatter_classes(
    ax: Any,
    points: NDArray[np.float64],
    y: NDArray[Any],
    classes: NDArray[Any],
    labels: list[str],
    colors: NDArray[np.float64],
    *,
    markers: Any = None,
    **kwargs: Any,
) -> list[Any]:
    """One scatter per class present in ``y``, each with its colour, marker and
    label (the legend entry of the class).

    Parameters
    ----------
    markers : str or sequence of str, optional
        One marker for all classes, or one per class; default :data:`MARKERS`.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.scatter`, over the defaults
        ``s=18, edgecolors="k", linewidths=0.4``.

    Returns
    -------
    list of matplotlib PathCollection
        One per class present, in class order.
    """
    if markers is None:
        markers = MARKERS
    elif isinstance(markers, str):
        markers = (markers,)
    artists = []
    for k, c in enumerate(classes):  # one step per class
        rows = np.asarray(y == c)
        if not rows.any():
            continue
        style = {
            "s": 18,
            "edgecolors": "k",
            "linewidths": 0.4,
            "marker": markers[k % len(markers)],
            "color": colors[k],
            "label": labels[k],
            **kwargs,
        }
        artists.append(ax.scatter(points[rows, 0], points[rows, 1], **style))
    return artists
