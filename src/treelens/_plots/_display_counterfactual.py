"""CounterfactualDisplay: an instance and its counterfactual as an arrow."""

from __future__ import annotations

import textwrap
import warnings
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from .._core._numbers import format_number
from .._exceptions import InputError
from ._common import (
    RenamedAttributes,
    model_feature_names,
    require_matplotlib,
    resolve_axes,
)
from ._display_partition import PartitionDisplay
from ._display_regions import (
    DecisionRegionDisplay,
    as_array,
    forest_or_none,
    is_classifier_model,
)
from ._display_surface import PredictionSurfaceDisplay
from ._partition import resolve_features

__all__ = ["CounterfactualDisplay"]

# The title names this many other changed features at most, and wraps its lines
# at this many characters (a default figure's width in the title's small font).
_NAMED_OTHERS = 6
_TITLE_WIDTH = 90


def changed_features(
    x: NDArray[np.float64], x_cf: NDArray[np.float64], scale: NDArray[np.float64]
) -> NDArray[np.intp]:
    """Features ordered by how much they changed, in units of ``scale``, largest
    first; those missing (NaN) in ``x`` or ``x_cf``, which no axis can place,
    last."""
    scale = np.where(scale > 0, scale, 1.0)
    change = np.abs(x_cf - x) / scale
    return np.argsort(-np.nan_to_num(change, nan=-1.0), kind="stable")


def _spread(background: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standard deviation of every column over its values (missing ones, NaN,
    left out); 1 where a column has fewer than two values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with no value
        spread = np.nanstd(background, axis=0)
    return np.where((~np.isnan(background)).sum(axis=0) > 1, spread, 1.0)


def _differs(x: NDArray[np.float64], x_cf: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where ``x_cf`` differs from ``x``, a value missing (NaN) in both being
    the same."""
    return ~((x == x_cf) | (np.isnan(x) & np.isnan(x_cf)))


class CounterfactualDisplay(RenamedAttributes):
    """An instance and its counterfactual, as an arrow over the model's regions.

    The picture is a slice: the two features that changed most (relative to
    their spread in the data) are on the axes, every other feature is held at
    the instance's value (``slice_at="instance"``, where the instance's point
    shows its own prediction) or at the counterfactual's (``"counterfactual"``,
    where the star shows the counterfactual's prediction, in the target's region
    even when more than the two drawn features changed).  Below the arrow is the
    partition of a single tree, the exact class regions of a classifier
    ensemble, or the predicted value of a regressor ensemble (an
    IsolationForest's anomaly score), with level lines at the ends of the target
    range.

    Parameters
    ----------
    features : (int, int)
    feature_names : (str, str)
    x : ndarray of shape (n_features,)
        The instance.
    x_cf : ndarray of shape (n_features,)
        Its counterfactual.
    changed : list of str
        Names of every feature that changed.
    background : PartitionDisplay, DecisionRegionDisplay or PredictionSurfaceDisplay
        The regions or surface under the arrow, drawn by :meth:`plot`.
    category_labels : (tuple of str or None, tuple of str or None), optional
        The category labels of each drawn feature that is categorical (the
        title names categories, not codes).
    slice_at : {"instance", "counterfactual"}, default="instance"
        The row whose other features the background holds (named in the title
        when other features changed).

    Attributes
    ----------
    start, end : ndarray of shape (2,)
        The arrow's ends in the two features.
    arrow_ : matplotlib FancyArrowPatch
    ax_, figure_

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from treelens import feature_tweak
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> result = feature_tweak(tree, X[[70]], target="other")
    >>> disp = CounterfactualDisplay.from_result(tree, result, X_background=X)
    >>> disp.ax_ is disp.background.ax_
    True
    """

    _renamed: ClassVar[dict[str, str]] = {
        name + "_": name
        for name in (
            "features",
            "feature_names",
            "x",
            "x_cf",
            "start",
            "end",
            "changed",
            "background",
        )
    }

    def __init__(
        self,
        *,
        features: tuple[int, int],
        feature_names: tuple[str, str],
        x: NDArray[np.float64],
        x_cf: NDArray[np.float64],
        changed: list[str],
        background: Any,
        category_labels: tuple[Any, Any] | None = None,
        slice_at: Literal["instance", "counterfactual"] = "instance",
    ) -> None:
        self.features = features
        self.feature_names = feature_names
        self.x, self.x_cf = x, x_cf
        self.start = x[list(features)]
        self.end = x_cf[list(features)]
        self.changed = changed
        self.background = background
        self.category_labels = category_labels
        self.slice_at = slice_at

    @classmethod
    def from_result(
        cls,
        model: Any,
        result: Any,
        X: Any = None,
        *,
        index: int = 0,
        features: tuple[Any, Any] | None = None,
        X_background: Any = None,
        y_background: Any = None,
        kind: Literal["auto", "partition", "regions", "surface"] = "auto",
        slice_at: Literal["instance", "counterfactual"] = "instance",
        window: Any = None,
        class_names: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> CounterfactualDisplay:
        """Draw the move from ``X[index]`` to its counterfactual.

        Parameters
        ----------
        model : fitted model the counterfactuals were computed for
        result : counterfactual result
            Anything with ``X_cf_`` (array-like of shape (n_samples,
            n_features)) and optionally ``found_`` (bool per row) and ``X_``.
        X : array-like of shape (n_samples, n_features), optional
            The instances; default ``result.X_``.
        index : int, default=0
            Which row to draw.
        features : pair of str or int, optional
            Default: the two features that changed most.
        X_background : array-like of shape (n, n_features), optional
            Data setting the window and drawn as points (e.g. training data).
        y_background : array-like of shape (n,), optional
        kind : {"auto", "partition", "regions", "surface"}, default="auto"
            Background: a single tree's partition, a classifier's regions or a
            regressor's (or IsolationForest's) prediction surface, with level
            lines at the finite ends of ``result.target_``'s range (drawn as the
            anomaly score ``-score_samples`` for an IsolationForest); "auto"
            picks the partition for a single tree, else the regions of a
            classifier and the surface of any other model.
        slice_at : {"instance", "counterfactual"}, default="instance"
            Hold the features not drawn at the instance's values or at the
            counterfactual's.  When more than the two drawn features changed,
            only the slice through the counterfactual shows the star in the
            target's region (and only the instance's shows the instance's own
            prediction at its point).
        window : ((x0, x1), (y0, y1)), optional
            Default the range of the background data, the instance and its
            counterfactual, plus 5%.
        class_names : sequence of str, optional
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        CounterfactualDisplay
        """
        if slice_at not in ("instance", "counterfactual"):
            raise InputError(
                f"`slice_at` must be 'instance' or 'counterfactual'; got {slice_at!r}."
            )
        forest = forest_or_none(model)
        Xa, x, x_cf = _instance_and_counterfactual(forest, result, X, index)
        n_features = Xa.shape[1]
        names = (
            forest.feature_names
            if forest is not None
            else model_feature_names(model, n_features)
        )
        background = Xa if X_background is None else as_array(X_background, forest)
        if features is None:
            if n_features < 2:
                resolve_features(names, (0, 0))  # raises: a 2-D picture of one feature
            order = changed_features(x, x_cf, _spread(background))
            features = (int(order[0]), int(order[1]))
        f0, f1 = resolve_features(names, features)
        window_data = np.vstack([background, x, x_cf])
        if kind == "auto":
            if forest is not None and forest.kind == "tree":
                kind = "partition"
            else:
                kind = "regions" if is_classifier_model(model, forest) else "surface"
        if kind not in ("partition", "regions", "surface"):
            raise InputError(
                "`kind` must be 'auto', 'partition', 'regions' or 'surface'; got "
                f"{kind!r}."
            )
        y_bg = None
        if y_background is not None:
            y_bg = np.concatenate(
                [
                    np.asarray(y_background),
                    np.asarray(_predict_rows(model, forest, np.vstack([x, x_cf]))),
                ]
            )
        common = {
            "features": (f0, f1),
            "reference": x if slice_at == "instance" else x_cf,
            "window": window,
            "class_names": class_names,
        }
        background_kwargs: dict[str, Any] = {"show_points": y_bg is not None}
        if kind == "partition":
            bg: Any = PartitionDisplay._compute(model, window_data, y_bg, **common)
        elif kind == "regions":
            bg = DecisionRegionDisplay._compute(
                model, window_data, y_bg, exact=forest is not None, **common
            )
        else:
            bg, background_kwargs = _surface(
                model, forest, result, window_data, y_bg, X_background, common
            )
        # The row and its counterfactual widen the window and are drawn as the
        # arrow's ends: the points, and the rows counted as left out for missing
        # values, are the background's own.
        n_background = background.shape[0]
        bg.X = bg.X[:n_background]
        if bg.y is not None:
            bg.y = bg.y[:n_background]
        display = cls(
            features=(f0, f1),
            feature_names=(names[f0], names[f1]),
            x=x,
            x_cf=x_cf,
            changed=[names[j] for j in np.flatnonzero(_differs(x, x_cf))],
            background=bg,
            # Categorical axes are titled with their labels, not their codes.
            category_labels=(_labels(forest, f0), _labels(forest, f1)),
            slice_at=slice_at,
        )
        kwargs.setdefault("background_kwargs", background_kwargs)
        return display.plot(ax=ax, **kwargs)

    def plot(
        self,
        ax: Any = None,
        *,
        background_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> CounterfactualDisplay:
        """Draw the background regions, then the arrow and both points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            A new figure's axes when None.
        background_kwargs : dict, optional
            Passed to the background's ``plot`` (``alpha``, ``markers``,
            ``show_points``, ...).
        **kwargs
            Styling of the arrow, passed to matplotlib's FancyArrowPatch
            (``color``, ``linewidth``, ``arrowstyle``).

        Returns
        -------
        self
        """
        require_matplotlib()
        from matplotlib.patches import FancyArrowPatch

        ax = resolve_axes(ax)
        self.background.plot(ax=ax, **(background_kwargs or {}))
        ax.scatter(*self.start, s=80, c="k", marker="o", zorder=4, label="instance")
        ax.scatter(
            *self.end,
            s=110,
            c="gold",
            edgecolors="k",
            marker="*",
            zorder=4,
            label="counterfactual",
        )
        style = {
            "arrowstyle": "-|>",
            "mutation_scale": 16,
            "color": "k",
            "linewidth": 1.6,
            "zorder": 3,
            **kwargs,
        }
        self.arrow_ = FancyArrowPatch(tuple(self.start), tuple(self.end), **style)
        ax.add_patch(self.arrow_)
        others = [n for n in self.changed if n not in self.feature_names]
        labels = self.category_labels or (None, None)
        # The drawn features that moved (both, one, or none when only others did).
        moved = [
            f"{n} {_shown(a, c)} -> {_shown(b, c)}"
            for n, a, b, c in zip(self.feature_names, self.start, self.end, labels)
            if not (a == b or (np.isnan(a) and np.isnan(b)))
        ]
        title = textwrap.fill(
            "counterfactual: "
            + (", ".join(moved) or f"{' and '.join(self.feature_names)} unchanged"),
            _TITLE_WIDTH,
        )
        if others:
            named = ", ".join(others[:_NAMED_OTHERS])
            if len(others) > _NAMED_OTHERS:
                named += f" and {len(others) - _NAMED_OTHERS} more"
            where = "instance" if self.slice_at == "instance" else "counterfactual"
            also = f"(also changed: {named}; other features at the {where}'s values)"
            title += "\n" + textwrap.fill(also, _TITLE_WIDTH)
        ax.set_title(title, fontsize="small")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _instance_and_counterfactual(
    forest: Any, result: Any, X: Any, index: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The instances as an array, and row ``index`` and its counterfactual (the
    codes of a result in the user's columns, categories, else its values)."""
    X = getattr(result, "X_", None) if X is None else X
    if X is None or not hasattr(result, "X_cf_"):
        raise InputError(
            "CounterfactualDisplay needs the instances and `result.X_cf_`; got "
            f"X={'None' if X is None else 'given'} and a {type(result).__name__}"
            f"{'' if hasattr(result, 'X_cf_') else ' without X_cf_'}."
        )
    Xa = as_array(X, forest)
    cf = getattr(result, "X_cf_codes_", None)
    X_cf = np.asarray(result.X_cf_ if cf is None else cf, dtype=np.float64)
    X_cf = X_cf.reshape(Xa.shape[0], -1)
    if not -Xa.shape[0] <= index < Xa.shape[0]:
        raise InputError(f"`index` must be in [0, {Xa.shape[0] - 1}]; got {index}.")
    found = getattr(result, "found_", None)
    if found is not None and not bool(np.asarray(found)[index]):
        raise InputError(
            f"No counterfactual was found for row {index}; expected a row with "
            "found_ true."
        )
    return Xa, Xa[index], X_cf[index]


def _surface(
    model: Any,
    forest: Any,
    result: Any,
    window_data: NDArray[np.float64],
    y_bg: Any,
    X_background: Any,
    common: dict[str, Any],
) -> tuple[PredictionSurfaceDisplay, dict[str, Any]]:
    """The predicted value under the arrow, and how to draw it: the points of
    the background data coloured by their targets (an IsolationForest's in
    white: its targets are labels, not scores), level lines at the finite ends
    of the result's target range."""
    isolation = forest is not None and forest.link == "isolation"
    bg = PredictionSurfaceDisplay._compute(
        model,
        window_data,
        None if isolation else y_bg,
        features=common["features"],
        reference=common["reference"],
        window=common["window"],
        negate=isolation,
    )
    target = getattr(result, "target_", None)
    ends = [getattr(target, "low", -np.inf), getattr(target, "high", np.inf)]
    levels = [(-end if isolation else end) for end in ends if np.isfinite(end)]
    return bg, {"show_points": X_background is not None, "levels": levels}


def _predict_rows(model: Any, forest: Any, rows: NDArray[np.float64]) -> NDArray[Any]:
    if forest is not None:  # the rows are codes (as_array)
        return forest._predict_from_leaves(forest._leaves_of_codes(rows))
    return np.asarray(model.predict(rows))


def _shown(value: float, categories: Any) -> str:
    """A value as the title shows it: its category's label, or the number."""
    if categories is not None and 0 <= value < len(categories) and value == int(value):
        return str(categories[int(value)])
    return "missing" if np.isnan(value) else format_number(float(value))


def _labels(forest: Any, f: int) -> Any:
    """The category labels of feature ``f`` (None for a numeric one)."""
    if forest is not None and forest.n_categories[f]:
        return forest.features[f].categories
    return None
