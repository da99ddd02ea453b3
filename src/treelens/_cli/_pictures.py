"""Pictures for the command line and the HTML report, drawn off-screen.

Figures are made with :class:`matplotlib.figure.Figure` directly (no pyplot, no
global backend or style change) and turned into bytes; the Display classes do the
computing and drawing.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._exceptions import InputError, TreelensError
from ._tables import importance_results

__all__ = [
    "PICTURE_KINDS",
    "draw_picture",
    "figure_bytes",
    "figure_png_base64",
    "new_figure",
    "picture_figure",
    "top_features",
]

#: Pictures the ``plot`` command draws.
PICTURE_KINDS = (
    "partition",
    "region",
    "forest-grid",
    "regression-steps",
    "importance",
    "tree",
    "counterfactual",
)


def new_figure(
    width: float = 6.4, height: float = 4.8, *, nrows: int = 1, ncols: int = 1
) -> tuple[Any, Any]:
    """A figure outside pyplot and its axes (an array when ``nrows * ncols > 1``)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.subplots(nrows, ncols, squeeze=nrows * ncols == 1)
    return figure, axes


def figure_bytes(figure: Any, fmt: str = "png", *, dpi: int = 100) -> bytes:
    """The figure saved as ``fmt`` (png, svg or pdf)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def figure_png_base64(figure: Any, *, dpi: int = 80) -> tuple[str, int, int]:
    """PNG bytes of ``figure`` as base64 text, with the pixel width and height."""
    data = figure_bytes(figure, "png", dpi=dpi)
    # PNG header: width and height are big-endian integers at bytes 16..24.
    width = int.from_bytes(data[16:20], "big")
    height = int.from_bytes(data[20:24], "big")
    return base64.b64encode(data).decode("ascii"), width, height


def top_features(model: Any, k: int = 2) -> list[str]:
    """Names of the ``k`` features of highest MDI (ties in feature order)."""
    from .._adapters import to_forest

    forest = to_forest(model)
    if forest.n_features < k:
        raise InputError(
            f"The picture needs {k} features; this model has {forest.n_features}."
        )
    primary = importance_results(model)["primary"]
    values = np.asarray(primary.importances_, dtype=float)
    order = np.argsort(-values, kind="stable")[:k]
    return [forest.feature_names[i] for i in order]


def _pair(model: Any, features: Sequence[str] | None) -> tuple[str, str]:
    if features is None:
        first, second = top_features(model, 2)
        return first, second
    if len(features) != 2:
        raise InputError(
            f"--features must name two features separated by a comma; got {list(features)}."
        )
    return features[0], features[1]


def _need_data(kind: str, X: Any) -> None:
    if X is None:
        raise InputError(f"The {kind} picture needs a data file; got none.")


def _tree_index(tree: int | None) -> int:
    return 0 if tree is None else tree


def picture_figure(
    kind: str,
    model: Any,
    X: Any = None,
    y: Any = None,
    *,
    features: Sequence[str] | None = None,
    tree: int | None = None,
    max_depth: int | None = None,
    row: int | None = None,
    target: Any = None,
    oob: bool = False,
    reference: Any = None,
) -> Any:
    """Draw one picture of :data:`PICTURE_KINDS` and return its matplotlib figure."""
    from .._adapters import to_forest
    from .._counterfactual._tweak import feature_tweak
    from .._importance._mdi import mdi_importance
    from .._plots._display_counterfactual import CounterfactualDisplay
    from .._plots._display_importance import ImportanceDisplay
    from .._plots._display_partition import ForestGridDisplay, PartitionDisplay
    from .._plots._display_regions import DecisionRegionDisplay
    from .._plots._display_steps import RegressionStepsDisplay
    from .._plots._display_tree import TreeDiagramDisplay

    forest = to_forest(model)
    # Native boosters (xgboost.Booster, lightgbm.Booster) have no scikit-learn
    # predict(X); the pictures draw their Forest, which predicts the same.
    drawn = model if hasattr(model, "n_features_in_") else forest
    if kind == "importance":
        figure, ax = new_figure(6.4, max(2.5, 0.3 * min(forest.n_features, 20) + 1.2))
        found = importance_results(model, X, y)
        shown = [
            r
            for r in (found["primary"], found["held_out"], found["debiased"])
            if r is not None
        ]
        ImportanceDisplay.from_result(shown, ax=ax, top_k=20)
        return figure
    if kind == "tree":
        figure, ax = new_figure(12, 6.5)
        try:
            mdi = mdi_importance(model)
        except TreelensError:  # boosting libraries record gains, not impurities
            mdi = None
        annotate = ("samples", "value", "impurity") + (("mdi",) if mdi else ())
        TreeDiagramDisplay.from_estimator(
            model,
            tree_index=_tree_index(tree),
            max_depth=3 if max_depth is None else max_depth,
            annotate=annotate,
            importance=mdi,
            path_of=None if row is None else np.asarray(_row(X, row), dtype=float)[0],
            ax=ax,
        )
        return figure
    _need_data(kind, X)
    if kind == "regression-steps":
        figure, ax = new_figure(7, 4.5)
        feature = None if features is None else features[0]
        RegressionStepsDisplay.from_estimator(
            drawn, X, y, feature=feature, tree_index=tree, ax=ax
        )
        return figure
    pair = _pair(model, features)
    if kind == "partition":
        figure, ax = new_figure(6.4, 5)
        PartitionDisplay.from_estimator(
            drawn,
            X,
            features=pair,
            y=y,
            tree_index=_tree_index(tree),
            max_depth=max_depth,
            ax=ax,
        )
        return figure
    if kind == "region":
        figure, ax = new_figure(6.4, 5)
        DecisionRegionDisplay.from_estimator(
            drawn, X, y, features=pair, reference=reference, ax=ax
        )
        return figure
    if kind == "forest-grid":
        n_trees = min(3, forest.n_trees)
        figure, axes = new_figure(3.6 * (n_trees + 1), 3.6, ncols=n_trees + 1)
        # Out-of-bag accuracy is meaningful only on the exact training rows.
        ForestGridDisplay.from_estimator(
            drawn,
            X,
            y if oob else None,
            features=pair,
            n_trees=n_trees,
            max_depth=max_depth,
            axes=axes,
        )
        return figure
    if kind == "counterfactual":
        if row is None or target is None:
            raise InputError(
                "The counterfactual picture needs --row I and --target-class C; got "
                f"row={row}, target-class={target}."
            )
        result = feature_tweak(model, _row(X, row), target=target, reference=X)
        figure, ax = new_figure(6.4, 5)
        CounterfactualDisplay.from_result(
            drawn,
            result,
            features=pair if features else None,
            X_background=X,
            y_background=y,
            ax=ax,
        )
        return figure
    raise InputError(f"KIND must be one of {list(PICTURE_KINDS)}; got {kind!r}.")


def _row(X: Any, row: int) -> Any:
    if X is None:
        raise InputError("--row needs a data file; got none.")
    return X.iloc[[row]] if hasattr(X, "iloc") else np.asarray(X)[[row]]


def draw_picture(
    kind: str,
    model: Any,
    X: Any = None,
    y: Any = None,
    *,
    fmt: str = "png",
    dpi: int = 100,
    **kwargs: Any,
) -> bytes:
    """Draw one picture and return the file's bytes in ``fmt``."""
    figure = picture_figure(kind, model, X, y, **kwargs)
    return figure_bytes(figure, fmt, dpi=dpi)
