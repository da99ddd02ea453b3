"""DependenceDisplay: one feature's SHAP values against the feature's values.

The SHAP values come from :func:`treelens.shap_values`, the choice of the
colouring feature from :func:`treelens.shap_interaction_values`; this module
only selects, places and draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._exceptions import InputError
from .._types import ArrayLike, FeatureKey, ModelLike
from ._common import require_matplotlib, resolve_axes
from ._contributions import Explanation, explanation_of, swarm_offsets

__all__ = [
    "INTERACTION_SAMPLE",
    "DependenceDisplay",
    "feature_axis",
    "interaction_strengths",
]

#: Rows the interaction values of ``interaction="auto"`` are computed on, at
#: most: they cost 15 to 40 times the SHAP values (2,000 rows of breast cancer:
#: 4.6 s for a 100-tree random forest, 39 s for 100 extra trees), and a sample
#: of 500 chose as the 2,000 rows did for 27 to 29 of the 30 features.
INTERACTION_SAMPLE = 500

#: Half the width of a category's band of points.
_BAND = 0.3


# ------------------------------------------------------------------ arrays
def interaction_strengths(
    interactions: NDArray[np.float64], feature: int
) -> NDArray[np.float64]:
    """Mean absolute SHAP interaction value of ``feature`` with every feature.

    Parameters
    ----------
    interactions : ndarray of shape (n_rows, n_features, n_features)
        One output's interaction values.
    feature : int

    Returns
    -------
    ndarray of shape (n_features,)
        ``mean over rows of |interactions[:, feature, k]|``; NaN at ``feature``
        itself (the diagonal holds its main effect, not an interaction).
    """
    strengths = np.abs(np.asarray(interactions, dtype=np.float64)[:, feature, :])
    out = strengths.mean(axis=0)
    out[feature] = np.nan
    return out


def _strongest(strengths: NDArray[np.float64]) -> int | None:
    """Position of the largest strength (the first of ties), None when every
    strength is zero (the feature interacts with none)."""
    known = np.where(np.isnan(strengths), -np.inf, strengths)
    if known.size == 0 or not known.max() > 0:
        return None
    return int(np.argmax(known))


def feature_axis(
    values: Any, categories: Sequence[Any] | None = None
) -> tuple[NDArray[np.float64], tuple[str, ...] | None]:
    """Numbers to place a feature's values on an axis, and its category labels.

    Parameters
    ----------
    values : array-like of shape (n_rows,)
        Numbers, or labels (text, booleans, a pandas categorical).
    categories : sequence, optional
        The labels of a categorical feature, in the order they are drawn;
        default: none for numbers, else the categories of a pandas
        categorical, else the labels sorted as text.  Labels not among them
        are drawn after them.

    Returns
    -------
    positions : ndarray of shape (n_rows,)
        The numbers, or each label's position among the labels; NaN where
        the value is missing.
    labels : tuple of str or None
        The labels of positions ``0, 1, ...``; None for numbers.
    """
    dtype = getattr(values, "dtype", None)
    if categories is None and isinstance(dtype, pd.CategoricalDtype):
        categories = list(dtype.categories)
    cells = np.asarray(values, dtype=object).reshape(-1)
    missing = np.asarray(pd.isna(pd.Series(cells, dtype=object)), dtype=bool)
    known = cells[~missing]
    if categories is None:
        is_bool = pd.api.types.infer_dtype(known, skipna=True) == "boolean"
        numbers = pd.to_numeric(pd.Series(known, dtype=object), errors="coerce")
        if not is_bool and not numbers.isna().any():
            out = np.full(cells.shape, np.nan)
            out[~missing] = numbers.to_numpy(dtype=np.float64)
            return out, None
        categories = []
    labels = list(categories)
    seen = pd.Index(labels, dtype=object)
    extra = [v for v in pd.unique(known) if v not in seen]
    labels += sorted(extra, key=str)
    codes = pd.Index(labels, dtype=object).get_indexer(pd.Index(known, dtype=object))
    out = np.full(cells.shape, np.nan)
    out[~missing] = codes
    return out, tuple(str(label) for label in labels)


def _position(names: tuple[str, ...], key: Any, what: str) -> int:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if 0 <= int(key) < len(names):
            return int(key)
    elif isinstance(key, str) and key in names:
        return names.index(key)
    raise InputError(
        f"`{what}` must be one of the features {list(names)[:20]} (or a position "
        f"below {len(names)}); got {key!r}."
    )


def _output_position(result: Any, explanation: Explanation) -> int | None:
    """Which output of ``result`` the explanation holds (None for one output)."""
    if explanation.output_name is None:
        return None
    names = getattr(result, "output_names_", None) or getattr(
        result, "output_names", None
    )
    if names is not None:
        return tuple(map(str, names)).index(explanation.output_name)
    return int(explanation.output_name)


def _check_single_output(values: NDArray[Any], n_axes: int, output: Any) -> None:
    if values.ndim == n_axes and output is not None:
        raise InputError(
            "This result has one output (a regressor, or binary boosting explained "
            f"in one raw margin); expected output=None, got {output!r}."
        )


def _rows_of(X: Any, rows: NDArray[np.intp]) -> Any:
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def _category_labels(forest: Any, feature: int) -> tuple[Any, ...] | None:
    spec = forest.features[feature]
    return tuple(spec.categories) if spec.is_categorical else None


def _as_labels(column: Any, categories: tuple[Any, ...], codes: bool) -> Any:
    """A categorical column as labels: as given, or decoded from the model's
    codes (an encoded numeric array), unknown codes missing."""
    if not codes:
        return column
    x = np.asarray(column, dtype=np.float64)
    k = len(categories)
    with np.errstate(invalid="ignore"):
        valid = (x >= 0) & (x < k) & (x == np.floor(x))
    labels = np.array([*categories, None], dtype=object)
    return labels[np.where(valid, x, k).astype(np.intp)]


# ----------------------------------------------------------------- display
class DependenceDisplay:
    """One feature's SHAP values against its values, coloured by the feature
    it interacts with most (a SHAP dependence plot).

    Each row is a point: its value of the feature on the x axis (a
    categorical feature's labels as ticks, its points spread in a band around
    each), the feature's SHAP value on the y axis, and the colour of its value
    of the interacting feature (blue low, red high; grey missing), named on
    the colour bar.  A horizontal line marks 0.  Rows missing the feature's
    value are not drawn (the title counts them).

    Parameters
    ----------
    shap_values : ndarray of shape (n_rows,)
        The feature's SHAP values.
    feature_values : array-like of shape (n_rows,)
        The feature's values (numbers, or labels).
    feature_name : str
    interaction_feature : str, optional
        The feature the points are coloured by; None: one colour.
    color_values : array-like of shape (n_rows,), optional
        Its values.
    category_labels : sequence, optional
        The categories of a categorical feature, in drawing order (default:
        a pandas categorical's, else labels sorted as text).
    color_category_labels : sequence, optional
        The same for the interacting feature.
    interaction_strengths : ndarray of shape (n_features,), optional
        Mean absolute interaction value of the feature with each feature (NaN
        at the feature itself), when they were computed.
    output_name : str, optional
        The output (class) explained.

    Attributes
    ----------
    x_ : ndarray of shape (n_rows,)
        Horizontal positions: the values, or the category's position plus
        the point's offset in its band; NaN where missing.
    y_ : ndarray of shape (n_rows,)
        The SHAP values drawn.
    colors_ : ndarray of shape (n_rows,) or None
        The interacting feature's values as numbers (a category's position);
        NaN drawn grey.  None without an interacting feature.
    x_labels_, color_labels_ : tuple of str or None
        Labels of categorical positions ``0, 1, ...``, None for numbers.
    missing_ : ndarray of bool, shape (n_rows,)
        Rows missing the feature's value, not drawn.
    collection_ : matplotlib PathCollection
    colorbar_ : matplotlib Colorbar or None
    zero_line_ : matplotlib Line2D
    ax_, figure_

    See Also
    --------
    ContributionSummaryDisplay : every feature's values at once.
    treelens.shap_values, treelens.shap_interaction_values

    Examples
    --------
    >>> import numpy as np
    >>> display = DependenceDisplay(
    ...     shap_values=np.array([-1.0, 0.5, 2.0]),
    ...     feature_values=np.array([0.1, 0.4, 0.9]), feature_name="a",
    ...     interaction_feature="b", color_values=["x", "y", None])
    >>> display.plot().colors_.tolist()
    [0.0, 1.0, nan]
    >>> display.color_labels_
    ('x', 'y')
    """

    def __init__(
        self,
        *,
        shap_values: NDArray[np.float64],
        feature_values: Any,
        feature_name: str,
        interaction_feature: str | None = None,
        color_values: Any = None,
        category_labels: Sequence[Any] | None = None,
        color_category_labels: Sequence[Any] | None = None,
        interaction_strengths: NDArray[np.float64] | None = None,
        output_name: str | None = None,
    ) -> None:
        self.shap_values = shap_values
        self.feature_values = feature_values
        self.feature_name = feature_name
        self.interaction_feature = interaction_feature
        self.color_values = color_values
        self.category_labels = category_labels
        self.color_category_labels = color_category_labels
        self.interaction_strengths = interaction_strengths
        self.output_name = output_name

    @classmethod
    def from_result(
        cls,
        result: Any,
        *,
        feature: FeatureKey,
        X: ArrayLike | None = None,
        interaction: FeatureKey | Literal["auto"] | None = None,
        output: Any = None,
        ax: Any = None,
        **kwargs: Any,
    ) -> DependenceDisplay:
        """Draw one feature of a SHAP result.

        Parameters
        ----------
        result : ShapResult or any object with ``values_`` and ``expected_value_``
            SHAP values (:func:`treelens.shap_values`), or interaction values
            (:func:`treelens.shap_interaction_values`, ``interactions=True``):
            their sums over the last feature axis are the SHAP values drawn.
        feature : str or int
            The feature drawn, by name or position.
        X : DataFrame or array-like of shape (n_rows, n_features), optional
            The rows explained (needed unless the result keeps them as
            ``data_``).
        interaction : str, int, "auto" or None, default=None
            The feature colouring the points; ``"auto"`` (interaction values
            only): the one of largest mean absolute interaction value with
            ``feature``, as :meth:`from_estimator` explains.
        output : class label or position, optional
            For results with one value per class: the class; default the
            last (the positive class of a binary model).  Refused (must be
            None) for one output.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        DependenceDisplay
        """
        values = np.asarray(getattr(result, "values_", np.zeros((0, 0))))
        pairs = None
        if getattr(result, "interactions", False):
            _check_single_output(values, 3, output)
            pairs = values
            result = SimpleNamespace(
                values_=values.sum(axis=2),
                expected_value_=getattr(result, "expected_value_", None),
                feature_names=getattr(result, "feature_names", None),
                output_names=getattr(result, "output_names", None),
                data_=getattr(result, "data_", None),
            )
        else:
            _check_single_output(values, 2, output)
        explanation = explanation_of(result, output=output, X=X)
        f = _position(explanation.feature_names, feature, "feature")
        strengths = None
        if pairs is not None:
            k = _output_position(result, explanation)
            strengths = interaction_strengths(pairs if k is None else pairs[..., k], f)
        elif isinstance(interaction, str) and interaction == "auto":
            raise InputError(
                "interaction='auto' needs interaction values (a result of "
                "treelens.shap_interaction_values, or from_estimator); got SHAP "
                "values alone. Give a feature, or None for one colour."
            )
        return cls._from_explanation(
            explanation,
            f,
            interaction,
            strengths,
            categories=None,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def from_estimator(
        cls,
        model: ModelLike,
        X: ArrayLike,
        feature: FeatureKey,
        *,
        interaction: FeatureKey | Literal["auto"] | None = "auto",
        output: Any = None,
        method: Literal["path", "interventional"] = "path",
        background: ArrayLike | None = None,
        interaction_sample: int | None = INTERACTION_SAMPLE,
        random_state: int | None = 0,
        ax: Any = None,
        **kwargs: Any,
    ) -> DependenceDisplay:
        """Compute the SHAP values of ``X`` and draw those of one feature.

        Parameters
        ----------
        model : fitted tree model or Forest
            Any model :func:`treelens.to_forest` reads (a ``Pipeline``
            included: its input columns are drawn, categories by label).
        X : DataFrame or array-like of shape (n_rows, n_features)
        feature : str or int
            The feature drawn, by name or position.
        interaction : str, int, "auto" or None, default="auto"
            The feature colouring the points.  ``"auto"``: the feature ``k``
            of largest ``mean over rows of |Phi[:, feature, k]|``, ``Phi``
            the exact SHAP interaction values
            (:func:`treelens.shap_interaction_values`, off the diagonal), so
            the colour shows the interaction the model actually holds; shap's
            ``dependence_plot`` guesses it instead from how the SHAP values
            vary within bins of the feature.  No colour when the feature
            interacts with no other.  None: one colour.
        output : class label or position, optional
            For models explained in one value per class (classifier forests
            and trees, multiclass boosting): the class; default the last (the
            positive class of a binary model).  Refused (must be None) for
            one output: regressors, and binary boosting, explained in one raw
            margin (of the positive class).
        method : {"path", "interventional"}, default="path"
            The SHAP values drawn (:func:`treelens.shap_values`); the
            interaction values of ``"auto"`` are path-dependent either way.
        background : array-like of shape (n_background, n_features), optional
            For ``method="interventional"``.
        interaction_sample : int or None, default=500
            ``"auto"`` computes the interaction values on a random sample of
            this many rows when ``X`` has more (they cost 15 to 40 times the
            SHAP values: 500 rows of breast cancer take 0.9 s for a 100-tree
            random forest, 7 s for 100 extra trees); None: on every row.
        random_state : int or None, default=0
            Seed of that sample.
        ax : matplotlib Axes, optional
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        DependenceDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
        >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
        >>> display = DependenceDisplay.from_estimator(model, X.iloc[:50], "bmi")
        >>> display.interaction_feature in X.columns
        True
        >>> bool((display.x_ == X["bmi"].iloc[:50]).all())
        True
        """
        from .._adapters import to_forest
        from .._core._features import reads_labels
        from .._explain._shap import shap_interaction_values, shap_values

        result = shap_values(model, X, method=method, background=background)
        _check_single_output(result.values_, 2, output)
        explanation = explanation_of(result, output=output, X=X)
        f = _position(explanation.feature_names, feature, "feature")
        forest = to_forest(model)
        strengths = None
        if isinstance(interaction, str) and interaction == "auto":
            rows = _sample(len(explanation.row_names), interaction_sample, random_state)
            pairs = shap_interaction_values(
                model, X if rows is None else _rows_of(X, rows)
            ).values_
            k = _output_position(result, explanation)
            strengths = interaction_strengths(pairs if k is None else pairs[..., k], f)
        categories = {
            j: labels
            for j in range(forest.n_features)
            if (labels := _category_labels(forest, j)) is not None
        }
        if categories and not reads_labels(forest, X):
            # An encoded array holds the model's codes: show their labels.
            assert explanation.data is not None
            data = explanation.data.copy()
            for j, labels in categories.items():
                data.iloc[:, j] = _as_labels(data.iloc[:, j], labels, codes=True)
            explanation = Explanation(
                explanation.values,
                explanation.base_value,
                explanation.feature_names,
                data,
                explanation.output_name,
                explanation.row_names,
            )
        return cls._from_explanation(
            explanation,
            f,
            interaction,
            strengths,
            categories=categories,
            ax=ax,
            **kwargs,
        )

    @classmethod
    def _from_explanation(
        cls,
        explanation: Explanation,
        feature: int,
        interaction: Any,
        strengths: NDArray[np.float64] | None,
        *,
        categories: dict[int, tuple[Any, ...]] | None,
        ax: Any,
        **kwargs: Any,
    ) -> DependenceDisplay:
        names = explanation.feature_names
        data = explanation.data
        if data is None:
            raise InputError(
                "X must be given to draw the feature's values (the result keeps no "
                "`data_`); got None."
            )
        if isinstance(interaction, str) and interaction == "auto":
            assert strengths is not None
            other = _strongest(strengths)
        elif interaction is None:
            other = None
        else:
            other = _position(names, interaction, "interaction")
            if other == feature:
                raise InputError(
                    "`interaction` must be another feature than `feature` "
                    f"({names[feature]!r}); got {interaction!r}."
                )
        categories = categories or {}
        display = cls(
            shap_values=explanation.values[:, feature],
            feature_values=data.iloc[:, feature],
            feature_name=names[feature],
            interaction_feature=None if other is None else names[other],
            color_values=None if other is None else data.iloc[:, other],
            category_labels=categories.get(feature),
            color_category_labels=None if other is None else categories.get(other),
            interaction_strengths=strengths,
            output_name=explanation.output_name,
        )
        return display.plot(ax=ax, **kwargs)

    def plot(self, ax: Any = None, **kwargs: Any) -> DependenceDisplay:
        """Draw the points.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        **kwargs
            Passed to ``Axes.scatter`` (e.g. ``s``, ``alpha``, ``cmap``).

        Returns
        -------
        self
        """
        plt = require_matplotlib()
        y = np.asarray(self.shap_values, dtype=np.float64).reshape(-1)
        x, x_labels = feature_axis(self.feature_values, self.category_labels)
        if x.shape != y.shape:
            raise InputError(
                f"`feature_values` must hold one value per SHAP value ({y.size}); "
                f"got {x.size}."
            )
        missing = np.isnan(x)
        if x_labels is not None:
            for code in range(len(x_labels)):
                rows = x == code
                x[rows] += swarm_offsets(y[rows], width=_BAND)
        ax = resolve_axes(ax)
        cmap = plt.get_cmap(kwargs.pop("cmap", "coolwarm"))
        style = {"s": 12, "alpha": 0.8, **kwargs}
        colors, color_labels, mappable = None, None, None
        if self.interaction_feature is not None:
            colors, color_labels = feature_axis(
                self.color_values, self.color_category_labels
            )
            mappable = _color_scale(colors, color_labels, cmap)
            rgba = np.zeros((y.size, 4))
            known = ~np.isnan(colors)
            rgba[known] = mappable.to_rgba(colors[known])
            rgba[~known] = (0.6, 0.6, 0.6, 1.0)
            style["c"] = rgba[~missing]
        else:
            style.setdefault("color", "C0")
        self.collection_ = ax.scatter(x[~missing], y[~missing], **style)
        self.colorbar_ = None
        if mappable is not None:
            self.colorbar_ = ax.figure.colorbar(
                mappable, ax=ax, label=self.interaction_feature
            )
            if color_labels is not None:
                self.colorbar_.set_ticks(
                    np.arange(len(color_labels)), labels=list(color_labels)
                )
        if x_labels is not None:
            ax.set_xticks(np.arange(len(x_labels)), list(x_labels))
        self.zero_line_ = ax.axhline(0, color="0.5", linewidth=0.8, zorder=0)
        ax.set_xlabel(self.feature_name)
        label = f"SHAP value of {self.feature_name}"
        if self.output_name is not None:
            label += f" (output {self.output_name})"
        ax.set_ylabel(label)
        if missing.any():
            ax.set_title(
                f"{int(missing.sum())} rows missing {self.feature_name} not drawn",
                fontsize="small",
            )
        self.x_, self.y_, self.colors_ = x, y, colors
        self.x_labels_, self.color_labels_ = x_labels, color_labels
        self.missing_ = missing
        self.ax_, self.figure_ = ax, ax.figure
        return self


def _color_scale(
    colors: NDArray[np.float64], labels: tuple[str, ...] | None, cmap: Any
) -> Any:
    """The colour scale of the interacting feature: its range, or one step per
    category."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    if labels is not None:
        cmap = cmap.resampled(max(1, len(labels)))
        norm = Normalize(-0.5, len(labels) - 0.5)
    else:
        known = colors[~np.isnan(colors)]
        low, high = (known.min(), known.max()) if known.size else (0.0, 1.0)
        norm = Normalize(low, high if high > low else low + 1.0)
    mappable = ScalarMappable(norm=norm, cmap=cmap)
    mappable.set_array(np.asarray([]))
    return mappable


def _sample(
    n_rows: int, size: int | None, random_state: int | None
) -> NDArray[np.intp] | None:
    """Sorted positions of ``size`` random rows, None for every row."""
    if size is not None and (
        isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1
    ):
        raise InputError(
            f"`interaction_sample` must be a positive integer or None; got {size!r}."
        )
    if size is None or n_rows <= size:
        return None
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n_rows, int(size), replace=False))
