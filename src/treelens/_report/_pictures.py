"""Pictures for the command line and the HTML report, drawn off-screen.

Figures are made with :class:`matplotlib.figure.Figure` directly (no pyplot, no
global backend or style change) and turned into bytes; the Display classes do the
computing and drawing.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from .._core._forest import Forest
from .._core._numbers import format_number
from .._exceptions import InputError, TreelensError
from ._kinds import PICTURE_KINDS
from ._tables import exact_or_tweak, importance_results

__all__ = [
    "PICTURE_KINDS",
    "SURFACE_CELLS",
    "dependence_entry",
    "draw_picture",
    "figure_bytes",
    "figure_png_base64",
    "new_figure",
    "picture_figure",
    "surface_caption",
    "surface_figure",
    "top_features",
    "top_score_features",
]

#: Cells of the overlay of every tree's split lines up to which a prediction
#: surface is drawn exactly; the grid above.
SURFACE_CELLS = 250_000


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


def top_features(
    model: Any, k: int = 2, *, numeric: bool = False, X: Any = None
) -> list[str]:
    """Names of the ``k`` features of highest MDI (ties in feature order); with
    ``numeric``, of the numeric features only (a partition's axes).

    A model whose trees record no impurities ranks by its gain; a Forest read
    from a model file, which keeps neither, by the mean absolute SHAP value
    over the rows of ``X`` (see :func:`top_score_features`).
    """
    from .._adapters import to_forest

    forest = to_forest(model)
    if forest.n_features < k:
        raise InputError(
            f"The picture needs {k} features; this model has {forest.n_features}."
        )
    results = importance_results(model)
    if results["primary"] is not None:
        values = np.asarray(results["primary"].importances_, dtype=float)
    elif X is not None:
        ranked = top_score_features(model, X, forest.n_features)
        values = -np.array([ranked.index(n) for n in forest.feature_names], float)
    else:
        raise InputError(
            f"The picture's features are chosen by importance, and this model has "
            f"none without data ({results['notes'][0]}); expected --features, or "
            "a data file to rank the features by mean |SHAP| over its rows."
        )
    order = np.argsort(-values, kind="stable")
    if numeric:
        order = order[[forest.features[i].kind == "numeric" for i in order]]
        if order.size < k:
            raise InputError(
                f"A partition draws {k} numeric features; this model has "
                f"{order.size} ({', '.join(forest.feature_names[i] for i in order)}"
                "). Draw its categories with the region picture instead."
            )
    return [forest.feature_names[i] for i in order[:k]]


def sampled(X: Any, max_rows: int) -> Any:
    """``X``, or past ``max_rows`` rows a random sample of that many, in their
    order (seeded, so the same data gives the same sample)."""
    n_rows = int(np.shape(X)[0])
    if n_rows <= max_rows:
        return X
    rows = np.sort(np.random.default_rng(0).choice(n_rows, max_rows, replace=False))
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def top_score_features(
    model: Any, X: Any, k: int = 2, *, max_rows: int = 5_000
) -> list[str]:
    """Names of the ``k`` features of highest mean absolute SHAP value over the
    rows of ``X`` (ties in feature order): the ranking of an IsolationForest,
    whose trees hold no impurity for MDI.  Past ``max_rows`` rows, over a
    random sample of that many (seeded, so the choice does not change)."""
    from .._explain._shap_importance import shap_importance

    result = shap_importance(model, sampled(X, max_rows), n_bootstrap=0)
    importances = result.importances_
    if importances.size < k:
        raise InputError(
            f"The picture needs {k} features; this model has {importances.size}."
        )
    order = np.argsort(-importances.to_numpy(), kind="stable")[:k]
    return [str(importances.index[i]) for i in order]


def _pair(
    model: Any, features: Sequence[str] | None, *, numeric: bool = False, X: Any = None
) -> tuple[str, str]:
    if features is None:
        first, second = top_features(model, 2, numeric=numeric, X=X)
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


@dataclass(frozen=True)
class PictureRequest:
    """What the ``plot`` command asks of a picture.

    ``drawn`` is the model the Displays draw: the model itself, or its Forest for
    native boosters (xgboost.Booster, lightgbm.Booster), which have no
    scikit-learn ``predict(X)`` but whose Forest predicts the same.
    """

    model: Any
    forest: Forest
    X: Any = None
    y: Any = None
    features: Sequence[str] | None = None
    tree: int | None = None
    max_depth: int | None = None
    row: int | None = None
    target: Any = None
    oob: bool = False
    reference: Any = None
    slice_at: Literal["instance", "counterfactual"] = "instance"

    @property
    def drawn(self) -> Any:
        return self.model if hasattr(self.model, "n_features_in_") else self.forest

    def pair(self, *, numeric: bool = False) -> tuple[str, str]:
        """The two features drawn: those asked for, else the two of highest MDI
        (of an IsolationForest, of highest mean |SHAP| over the data); with
        ``numeric``, the two numeric ones of highest MDI (a partition's axes)."""
        if (
            self.features is None
            and self.forest.link == "isolation"
            and self.X is not None
        ):
            first, second = top_score_features(self.model, self.X, 2)
            return first, second
        return _pair(self.model, self.features, numeric=numeric, X=self.X)


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
    slice_at: Literal["instance", "counterfactual"] = "instance",
) -> Any:
    """Draw one picture of :data:`PICTURE_KINDS` and return its matplotlib figure."""
    from .._adapters import to_forest

    draw = _PICTURES.get(kind)
    if draw is None:
        raise InputError(f"KIND must be one of {list(PICTURE_KINDS)}; got {kind!r}.")
    request = PictureRequest(
        model,
        to_forest(model),
        X,
        y,
        features,
        tree,
        max_depth,
        row,
        target,
        oob,
        reference,
        slice_at,
    )
    if kind not in _WITHOUT_DATA:
        _need_data(kind, X)
    return draw(request)


def _importance_picture(request: PictureRequest) -> Any:
    from .._plots._display_importance import ImportanceDisplay

    n_shown = min(request.forest.n_features, 20)
    found = importance_results(request.model, request.X, request.y)
    shown = [
        r
        for r in (found["primary"], found["held_out"], found["debiased"])
        if r is not None
    ]
    if not shown:  # a Forest read from a model file, and no target
        raise InputError(
            f"The importance picture has nothing to draw ({found['notes'][0]}); "
            "expected DATA with --target COL for held-out MDI; got no target."
        )
    # Room for the legend below the axes: one line per method.
    figure, ax = new_figure(6.4, max(2.5, 0.3 * n_shown + 1.2) + 0.25 * len(shown))
    ImportanceDisplay.from_result(shown, ax=ax, top_k=20)
    return figure


def _tree_picture(request: PictureRequest) -> Any:
    from .._importance._mdi import mdi_importance
    from .._plots._display_tree import TreeDiagramDisplay

    figure, ax = new_figure(12, 6.5)
    try:
        mdi = mdi_importance(request.model)
    except TreelensError:  # boosting libraries record gains, not impurities
        mdi = None
    # An IsolationForest's trees hold no impurity (they split at random).
    measured = () if request.forest.link == "isolation" else ("impurity",)
    annotate = ("samples", "value", *measured) + (("mdi",) if mdi else ())
    row = request.row
    TreeDiagramDisplay.from_estimator(
        request.model,
        tree_index=_tree_index(request.tree),
        max_depth=3 if request.max_depth is None else request.max_depth,
        annotate=annotate,
        importance=mdi,
        path_of=None if row is None else _path_row(request.X, row),
        ax=ax,
        grow_figure=True,  # the figure is ours: widen it rather than shrink text
    )
    return figure


def _steps_picture(request: PictureRequest) -> Any:
    from .._plots._display_steps import RegressionStepsDisplay

    figure, ax = new_figure(7, 4.5)
    feature = None if request.features is None else request.features[0]
    RegressionStepsDisplay.from_estimator(
        request.drawn,
        request.X,
        request.y,
        feature=feature,
        tree_index=request.tree,
        ax=ax,
    )
    return figure


def _partition_picture(request: PictureRequest) -> Any:
    from .._plots._display_partition import PartitionDisplay

    figure, ax = new_figure(6.4, 5)
    PartitionDisplay.from_estimator(
        request.drawn,
        request.X,
        features=request.pair(numeric=True),
        y=request.y,
        tree_index=_tree_index(request.tree),
        max_depth=request.max_depth,
        ax=ax,
    )
    return figure


def _region_picture(request: PictureRequest) -> Any:
    from .._plots._display_regions import DecisionRegionDisplay

    figure, ax = new_figure(6.4, 5)
    DecisionRegionDisplay.from_estimator(
        request.drawn,
        request.X,
        request.y,
        features=request.pair(),
        reference=request.reference,
        ax=ax,
    )
    return figure


def surface_figure(
    model: Any,
    X: Any,
    y: Any = None,
    *,
    features: Sequence[str],
    reference: Any = None,
    exact: bool | Literal["auto"] = "auto",
    max_cells: int = SURFACE_CELLS,
) -> tuple[Any, Any]:
    """The whole model's prediction over two features, and its Display.

    An IsolationForest's is its anomaly score, ``-score_samples`` (higher is
    more anomalous), with its threshold ``-offset_`` as a white line; its ``y``
    (labels of anomalies, if any) is not drawn.  Exact up to ``max_cells``
    cells with ``exact="auto"``, the grid above.
    """
    from .._adapters import to_forest
    from .._plots._display_surface import PredictionSurfaceDisplay

    forest = to_forest(model)
    # Native boosters have no scikit-learn `predict(X)`; their Forest predicts.
    drawn = model if hasattr(model, "n_features_in_") else forest
    style: dict[str, Any] = {}
    if forest.link == "isolation":
        offset = forest.isolation_offset
        style = {
            "negate": True,
            "levels": None if offset is None else -float(offset),
            "cmap": "magma_r",
            "contour_kwargs": {"colors": "white"},
        }
        y = None
    figure, ax = new_figure(6.4, 5)
    display = PredictionSurfaceDisplay.from_estimator(
        drawn,
        X,
        y,
        features=(features[0], features[1]),
        reference=reference,
        exact=exact,
        max_cells=max_cells,
        ax=ax,
        **style,
    )
    return figure, display


def surface_caption(display: Any, *, max_cells: int = SURFACE_CELLS) -> str:
    """How a prediction surface was computed, as a phrase: exact, in bands of
    categories, or on a grid and why."""
    if display.exact:
        return (
            "exact: one cell per rectangle that every tree's splits cut "
            f"({display.values.size:,} cells), each predicted as the model predicts"
        )
    n_y, n_x = display.values.shape
    if display.category_labels is not None:
        axes = list(zip(display.feature_names, display.category_labels, (n_x, n_y)))
        bands = " and ".join(name for name, labels, _ in axes if labels is not None)
        numeric = [
            f", {name} cut into {n} equal cells, each predicted at its centre"
            for name, labels, n in axes
            if labels is None
        ]
        return f"one band per category of {bands}{''.join(numeric)}"
    why = (
        f" (the overlay of every tree's split lines has {display.n_cells:,} "
        f"cells, more than {max_cells:,})"
        if display.n_cells is not None
        else ""
    )
    return f"on a {n_x} x {n_y} grid{why}"


def _surface_picture(request: PictureRequest) -> Any:
    figure, _ = surface_figure(
        request.model,
        request.X,
        request.y,
        features=request.pair(),
        reference=request.reference,
    )
    return figure


def _forest_grid_picture(request: PictureRequest) -> Any:
    from .._plots._display_partition import ForestGridDisplay

    n_trees = min(3, request.forest.n_trees)
    figure, axes = new_figure(3.6 * (n_trees + 1), 3.6, ncols=n_trees + 1)
    # Out-of-bag accuracy is meaningful only on the exact training rows.
    fitted_rows = getattr(request.model, "_n_samples", None)
    n_rows = 0 if request.X is None else int(request.X.shape[0])
    if request.oob and fitted_rows is not None and int(fitted_rows) != n_rows:
        raise InputError(
            "--oob needs the training data the forest was fitted on (out-of-bag "
            f"rows are rows of it); expected {int(fitted_rows)} rows, got {n_rows}."
        )
    ForestGridDisplay.from_estimator(
        request.drawn,
        request.X,
        request.y if request.oob else None,
        features=request.pair(numeric=True),
        n_trees=n_trees,
        max_depth=request.max_depth,
        axes=axes,
    )
    return figure


def _counterfactual_picture(request: PictureRequest) -> Any:
    """The row's counterfactual as ``tweak`` finds it by default (the least
    costly within 10 s, else the best found; feature tweaking for a model too
    large for the exact search), over the model's regions or predicted value."""
    from .._counterfactual._entry import counterfactual
    from .._plots._display_counterfactual import CounterfactualDisplay

    if request.row is None or request.target is None:
        raise InputError(
            "The counterfactual picture needs --row I and --target-class C (or "
            f"--target-range LOW:HIGH for a regressor); got row={request.row}, "
            f"target={request.target}."
        )
    pair = request.pair()
    X = request.X
    method, _ = exact_or_tweak(request.model, "auto", "auto")
    result = counterfactual(
        request.model,
        _row(X, request.row),
        target=request.target,
        method=cast(Literal["auto", "tweak"], method),
        reference=X,
        time_limit=10.0,
    )
    if not result.found_[0]:
        raise InputError(
            f"Row {request.row} has no counterfactual to draw: "
            f"{result.reason_[0] or 'none was found'}."
        )
    if not np.asarray(result.changed_)[0].any():
        predicted = result.prediction_[0]
        if isinstance(predicted, (float, np.floating)):
            predicted = format_number(float(predicted))
        raise InputError(
            f"Row {request.row} already meets the target (its prediction is "
            f"{predicted}); there is no change to draw. Choose a row the model does "
            "not already predict as the target."
        )
    figure, ax = new_figure(6.4, 5)
    CounterfactualDisplay.from_result(
        request.drawn,
        result,
        features=pair if request.features else None,
        X_background=X,
        y_background=request.y,
        slice_at=request.slice_at,
        ax=ax,
    )
    return figure


def _dependence_picture(request: PictureRequest) -> Any:
    from .._plots._display_dependence import DependenceDisplay

    features = list(request.features or [])
    if len(features) > 2:
        raise InputError(
            "--features of the dependence picture must name one feature, or two: "
            f"the feature and the one colouring its points; got {features}."
        )
    feature = (
        features[0] if features else top_score_features(request.model, request.X, 1)[0]
    )
    figure, ax = new_figure(6.4, 4.8)
    DependenceDisplay.from_estimator(
        request.model,
        request.X,
        feature,
        interaction=features[1] if len(features) == 2 else "auto",
        ax=ax,
    )
    return figure


def dependence_entry(
    model: Any, X: Any, feature: str, picture: Callable[..., dict[str, Any]]
) -> dict[str, Any]:
    """A report's SHAP dependence picture of ``feature`` over the rows of ``X``,
    built with the report's ``picture`` (title, caption, draw); the caption
    names the output and the interacting feature chosen, known once drawn."""
    from .._plots._display_dependence import DependenceDisplay

    drawn: dict[str, Any] = {}

    def draw() -> Any:
        figure, ax = new_figure(6.4, 4.8)
        drawn["display"] = DependenceDisplay.from_estimator(model, X, feature, ax=ax)
        return figure

    entry = picture("SHAP dependence", "", draw)
    if "display" in drawn:
        display = drawn["display"]
        output = (
            f" for output {display.output_name}"
            if display.output_name is not None
            else ""
        )
        partner = display.interaction_feature
        colour = (
            f", coloured by {partner}, the feature whose exact SHAP interaction "
            "with it is largest"
            if partner is not None
            else ""
        )
        text = (
            f"Each row's exact SHAP value of {feature}{output} (the column that "
            f"moves the model most on these rows) against its value{colour}."
        )
        entry["caption"] = " ".join([text, entry["caption"]]).strip()
    return entry


def _waterfall_picture(request: PictureRequest) -> Any:
    from .._plots._display_contributions import WaterfallDisplay

    figure, ax = new_figure(6.4, 4.8)
    WaterfallDisplay.from_estimator(
        request.model,
        request.X,
        row=0 if request.row is None else request.row,
        method="shap",
        output=_output(request),
        ax=ax,
    )
    return figure


#: Rows the summary picture draws at most (a seeded sample of larger data).
SUMMARY_MAX_ROWS = 2_000


def _summary_picture(request: PictureRequest) -> Any:
    from .._plots._display_contributions import ContributionSummaryDisplay

    figure, ax = new_figure(6.4, 5.2)
    ContributionSummaryDisplay.from_estimator(
        request.model,
        sampled(request.X, SUMMARY_MAX_ROWS),
        method="shap",
        output=_output(request),
        ax=ax,
    )
    return figure


def _output(request: PictureRequest) -> Any:
    """The class a classifier's contribution pictures show: the target class
    when given (``--target-class``), else the displays' default."""
    target = request.target
    if request.forest.is_classifier and target is not None and target != "other":
        return target
    return None


#: How each kind of :data:`PICTURE_KINDS` is drawn.
_PICTURES: dict[str, Callable[[PictureRequest], Any]] = {
    "partition": _partition_picture,
    "region": _region_picture,
    "forest-grid": _forest_grid_picture,
    "regression-steps": _steps_picture,
    "surface": _surface_picture,
    "importance": _importance_picture,
    "tree": _tree_picture,
    "counterfactual": _counterfactual_picture,
    "dependence": _dependence_picture,
    "waterfall": _waterfall_picture,
    "summary": _summary_picture,
}
#: Kinds drawn from the model alone.
_WITHOUT_DATA = frozenset({"importance", "tree"})


def _path_row(X: Any, row: int) -> Any:
    """One data row for a diagram's path: a one-row frame when the table holds
    labels (the forest encodes it), else numbers."""
    selected = _row(X, row)
    if hasattr(selected, "dtypes") and any(
        d.kind not in "biuf" for d in selected.dtypes
    ):
        return selected
    return np.asarray(selected, dtype=float)[0]


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
