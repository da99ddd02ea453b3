"""RegressionStepsDisplay: a regression tree's step function cut at several depths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._validation import feature_index
from .._exceptions import InputError, UnsupportedModelError
from ._common import RenamedAttributes, require_matplotlib, resolve_axes
from ._display_regions import as_array, reference_array
from ._partition import (
    resolve_reference,
    resolve_tree_index,
    resolve_window,
    step_function,
)

__all__ = ["RegressionStepsDisplay"]


class RegressionStepsDisplay(RenamedAttributes):
    """The step function of one regression tree, truncated at several depths.

    Truncating at depth ``d`` makes every node at depth ``d`` a leaf predicting
    its own (weighted) mean, so every curve comes from the one fitted tree.  With
    ``refit=True`` each depth is also compared with a tree refitted with
    ``max_depth=d`` on the same data.  Curves are drawn as open steps: no
    vertical line joins them to zero at the window's edges.

    Parameters
    ----------
    depths : list of int or None
        The depths drawn (None: the full tree).
    steps : list of (ndarray, ndarray)
        Per depth, ``(edges, values)``: edges of shape (n_steps + 1,) and the
        value on each step, shape (n_steps,).
    refit_steps : list of (ndarray, ndarray) or None
        The same for the refitted trees.
    feature : int
    feature_name : str
    reference : ndarray of shape (n_features,)
    window : ndarray of shape (2,)
        ``(x0, x1)`` of the x axis.
    tree_index : int
    tree_depth : int
        Depth of the full tree, for the labels (``"depth 5 (full)"``).
    X, y : ndarray or None
        The points drawn.

    Attributes
    ----------
    labels_ : list of str
        Legend label of every depth.
    lines_ : list of matplotlib StepPatch
        One per depth, after :meth:`plot`.
    ax_, figure_

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> X = np.linspace(0, 6, 80).reshape(-1, 1)
    >>> tree = DecisionTreeRegressor(max_depth=4).fit(X, np.sin(X).ravel())
    >>> disp = RegressionStepsDisplay.from_estimator(tree, X, np.sin(X).ravel(),
    ...                                             depths=[1, 2, None])
    >>> [len(values) for edges, values in disp.steps]
    [2, 4, 16]
    >>> disp.labels_
    ['depth 1', 'depth 2', 'depth 4 (full)']
    """

    _renamed: ClassVar[dict[str, str]] = {
        "depths_": "depths",
        "steps_": "steps",
        "refit_steps_": "refit_steps",
        "feature_": "feature",
        "feature_name_": "feature_name",
        "reference_": "reference",
        "window_": "window",
        "tree_index_": "tree_index",
        "X_": "X",
        "y_": "y",
    }

    def __init__(
        self,
        *,
        depths: list[int | None],
        steps: list[tuple[NDArray[np.float64], NDArray[np.float64]]],
        refit_steps: list[tuple[NDArray[np.float64], NDArray[np.float64]]] | None,
        feature: int,
        feature_name: str,
        reference: NDArray[np.float64],
        window: NDArray[np.float64],
        tree_index: int = 0,
        tree_depth: int | None = None,
        X: NDArray[np.float64] | None = None,
        y: NDArray[np.float64] | None = None,
    ) -> None:
        self.depths = depths
        self.steps = steps
        self.refit_steps = refit_steps
        self.feature = feature
        self.feature_name = feature_name
        self.reference = reference
        self.window = window
        self.tree_index = tree_index
        self.tree_depth = tree_depth
        self.X, self.y = X, y

    @classmethod
    def from_estimator(
        cls,
        model: Any,
        X: Any,
        y: Any = None,
        *,
        feature: Any = None,
        depths: Sequence[int | None] | None = None,
        tree_index: int | None = None,
        refit: bool = False,
        reference: Any = None,
        window: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> RegressionStepsDisplay:
        """Compute the truncated step functions and draw them.

        Parameters
        ----------
        model : fitted regression tree, or a regression ensemble with ``tree_index``
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Targets drawn as points; required with ``refit=True``.
        feature : str or int, optional
            The feature on the x axis; may be omitted for a one-feature model.
        depths : sequence of int or None, optional
            Depths to cut at (None: the full tree); default 1, 2, 3 up to the
            tree's depth, and the full tree.
        tree_index : int, optional
        refit : bool, default=False
            Also fit a fresh tree with ``max_depth=d`` for every depth ``d``.
        reference : array-like of shape (n_features,), optional
            Values of the other features; default the median of X.
        window : (float, float), optional
            ``(x0, x1)`` of the x axis; default the data's range plus 5%.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        RegressionStepsDisplay
        """
        forest = to_forest(model)
        if forest.task != "regression":
            raise UnsupportedModelError(
                "RegressionStepsDisplay draws the steps of a regression tree; got the "
                f"classifier {type(model).__name__}."
            )
        t = resolve_tree_index(forest, tree_index)
        if feature is None:
            if forest.n_features != 1:
                raise InputError(
                    f"This model has {forest.n_features} features; expected `feature` "
                    "saying which one to draw, got None."
                )
            feature = 0
        f = feature_index(forest, feature)
        Xa = as_array(X, forest)
        ref = resolve_reference(
            Xa,
            reference_array(reference, forest),
            forest.n_features,
            forest.n_categories,
            forest.feature_names,
        )
        span = resolve_window(Xa, (f,), window)[0]
        tree_depth = forest.trees[t].max_depth
        if depths is None:
            depths = [d for d in (1, 2, 3) if d < tree_depth] + [None]
        depths = list(depths)
        for d in depths:
            if d is not None and (isinstance(d, bool) or int(d) < 0):
                raise InputError(
                    f"`depths` must hold non-negative integers or None; got {d!r}."
                )
        steps = [
            step_function(forest, f, ref, span, tree_index=t, max_depth=d)
            for d in depths
        ]
        refit_steps = None
        yv = None if y is None else np.asarray(y, dtype=np.float64)
        if refit:
            refit_steps = _refit_steps(model, forest, Xa, yv, f, ref, span, depths)
        display = cls(
            depths=depths,
            steps=steps,
            refit_steps=refit_steps,
            feature=f,
            feature_name=forest.feature_names[f],
            reference=ref,
            window=span,
            tree_index=t,
            tree_depth=tree_depth,
            X=Xa,
            y=yv,
        )
        return display.plot(ax=ax, **kwargs)

    def _label(self, depth: int | None) -> str:
        full = self.tree_depth
        if full is None:
            return "full tree" if depth is None else f"depth {depth}"
        if depth is None or depth >= full:
            return f"depth {full} (full)"
        return f"depth {depth}"

    def plot(
        self,
        ax: Any = None,
        *,
        show_points: bool = True,
        legend: bool = True,
        cmap: Any = "viridis",
        **kwargs: Any,
    ) -> RegressionStepsDisplay:
        """Draw the data and one step curve per depth.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        show_points : bool, default=True
        legend : bool, default=True
        cmap : str or Colormap, default="viridis"
            Colours of the depths, shallow to deep.
        **kwargs
            Passed to every :meth:`matplotlib.axes.Axes.stairs` curve (for
            example ``linewidth``, ``linestyle``, ``color``).

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        ax = resolve_axes(ax)
        if show_points and self.X is not None and self.y is not None:
            ax.scatter(
                self.X[:, self.feature],
                self.y,
                s=10,
                c="0.5",
                alpha=0.6,
                label="data",
            )
        colors = plt.get_cmap(cmap)
        n = len(self.depths)
        self.lines_ = []
        self.labels_ = [self._label(d) for d in self.depths]
        for k, (depth, (edges, values)) in enumerate(zip(self.depths, self.steps)):
            style = {
                "color": colors(k / max(n - 1, 1) * 0.9),
                "linewidth": 1.8,
                "label": self.labels_[k],
                **kwargs,
            }
            # baseline=None: an open step curve, with no drop to 0 at its ends.
            self.lines_.append(ax.stairs(values, edges, baseline=None, **style))
            if self.refit_steps is not None and depth is not None:
                r_edges, r_values = self.refit_steps[k]
                ax.stairs(
                    r_values,
                    r_edges,
                    baseline=None,
                    **{
                        **style,
                        "linewidth": 1.0,
                        "linestyle": "--",
                        "label": f"refit, max_depth={depth}",
                    },
                )
        ax.set_xlim(*self.window)
        ax.set_xlabel(self.feature_name)
        ax.set_ylabel("prediction")
        if legend:
            ax.legend(fontsize="small", loc="best")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _refit_steps(
    model: Any,
    forest: Any,
    X: NDArray[np.float64],
    y: NDArray[np.float64] | None,
    feature: int,
    reference: NDArray[np.float64],
    window: NDArray[np.float64],
    depths: list[int | None],
) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    if y is None:
        raise InputError("`refit=True` fits new trees and needs y; got y=None.")
    if forest.kind != "tree" or not hasattr(model, "get_params"):
        raise UnsupportedModelError(
            "`refit=True` needs a scikit-learn decision tree to refit; got "
            f"{type(model).__name__}."
        )
    from sklearn.base import clone

    out = []
    for depth in depths:
        # depth None: the estimator's own settings, i.e. the full tree refitted.
        params = {} if depth is None else {"max_depth": depth}
        refitted = clone(model).set_params(**params).fit(X, y)
        out.append(step_function(to_forest(refitted), feature, reference, window))
    return out
