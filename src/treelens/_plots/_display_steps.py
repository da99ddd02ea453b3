"""RegressionStepsDisplay: a regression tree's step function cut at several depths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._validation import feature_index
from .._exceptions import InputError, UnsupportedModelError
from ._common import require_matplotlib, resolve_axes
from ._display_regions import as_array
from ._partition import (
    plot_window,
    resolve_reference,
    resolve_tree_index,
    step_function,
)

__all__ = ["RegressionStepsDisplay"]


class RegressionStepsDisplay:
    """The step function of one regression tree, truncated at several depths.

    Truncating at depth ``d`` makes every node at depth ``d`` a leaf predicting
    its own (weighted) mean, so every curve comes from the one fitted tree.  With
    ``refit=True`` each depth is also compared with a tree refitted with
    ``max_depth=d`` on the same data.

    Attributes
    ----------
    depths_ : list of int or None
        The depths drawn (None: the full tree).
    steps_ : list of (ndarray, ndarray)
        Per depth, ``(edges, values)``: edges of shape (n_steps + 1,) and the
        value on each step, shape (n_steps,).
    refit_steps_ : list of (ndarray, ndarray) or None
        The same for the refitted trees.
    feature_, feature_name_, reference_, window_, tree_index_
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
    ...                                             depths=[1, 2])
    >>> [len(values) for edges, values in disp.steps_]
    [2, 4]
    """

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
        X: NDArray[np.float64] | None = None,
        y: NDArray[np.float64] | None = None,
    ) -> None:
        self.depths_ = depths
        self.steps_ = steps
        self.refit_steps_ = refit_steps
        self.feature_ = feature
        self.feature_name_ = feature_name
        self.reference_ = reference
        self.window_ = window
        self.tree_index_ = tree_index
        self.X_, self.y_ = X, y

    @classmethod
    def from_estimator(
        cls,
        estimator: Any,
        X: Any,
        y: Any = None,
        *,
        feature: Any = None,
        depths: Sequence[int | None] | None = None,
        tree_index: int | None = None,
        refit: bool = False,
        reference: Any = None,
        ax: Any = None,
        **plot_kwargs: Any,
    ) -> RegressionStepsDisplay:
        """Compute the truncated step functions and draw them.

        Parameters
        ----------
        estimator : fitted regression tree, or a regression ensemble with ``tree_index``
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
        ax : matplotlib Axes, optional

        Returns
        -------
        RegressionStepsDisplay
        """
        forest = to_forest(estimator)
        if forest.task != "regression":
            raise UnsupportedModelError(
                "RegressionStepsDisplay draws the steps of a regression tree; got the "
                f"classifier {type(estimator).__name__}."
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
        ref = resolve_reference(Xa, reference, forest.n_features)
        window = plot_window(Xa, (f,))[0]
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
            step_function(forest, f, ref, window, tree_index=t, max_depth=d)
            for d in depths
        ]
        refit_steps = None
        yv = None if y is None else np.asarray(y, dtype=np.float64)
        if refit:
            refit_steps = _refit_steps(
                estimator, forest, Xa, yv, f, ref, window, depths
            )
        display = cls(
            depths=depths,
            steps=steps,
            refit_steps=refit_steps,
            feature=f,
            feature_name=forest.feature_names[f],
            reference=ref,
            window=window,
            tree_index=t,
            X=Xa,
            y=yv,
        )
        return display.plot(ax=ax, **plot_kwargs)

    def plot(
        self, ax: Any = None, *, show_points: bool = True, legend: bool = True
    ) -> RegressionStepsDisplay:
        """Draw the data and one step curve per depth.

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        ax = resolve_axes(ax)
        if show_points and self.X_ is not None and self.y_ is not None:
            ax.scatter(
                self.X_[:, self.feature_],
                self.y_,
                s=10,
                c="0.5",
                alpha=0.6,
                label="data",
            )
        cmap = plt.get_cmap("viridis")
        n = len(self.depths_)
        self.lines_ = []
        for k, (depth, (edges, values)) in enumerate(zip(self.depths_, self.steps_)):
            color = cmap(k / max(n - 1, 1) * 0.9)
            label = "full tree" if depth is None else f"depth {depth}"
            self.lines_.append(
                ax.stairs(values, edges, color=color, linewidth=1.8, label=label)
            )
            if self.refit_steps_ is not None and depth is not None:
                r_edges, r_values = self.refit_steps_[k]
                ax.stairs(
                    r_values,
                    r_edges,
                    color=color,
                    linewidth=1.0,
                    linestyle="--",
                    label=f"refit, max_depth={depth}",
                )
        ax.set_xlim(*self.window_)
        ax.set_xlabel(self.feature_name_)
        ax.set_ylabel("prediction")
        if legend:
            ax.legend(fontsize="small", loc="best")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _refit_steps(
    estimator: Any,
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
    if forest.kind != "tree" or not hasattr(estimator, "get_params"):
        raise UnsupportedModelError(
            "`refit=True` needs a scikit-learn decision tree to refit; got "
            f"{type(estimator).__name__}."
        )
    from sklearn.base import clone

    out = []
    for depth in depths:
        # depth None: the estimator's own settings, i.e. the full tree refitted.
        params = {} if depth is None else {"max_depth": depth}
        model = clone(estimator).set_params(**params).fit(X, y)
        out.append(step_function(to_forest(model), feature, reference, window))
    return out
