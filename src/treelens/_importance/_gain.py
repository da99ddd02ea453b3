"""Gain, cover and split-count importance of boosting models, read from their dumps.

These are the importances the boosting libraries report themselves
(XGBoost's ``get_score(importance_type="total_gain")``, LightGBM's
``feature_importance("gain")``), recomputed from the same per-node records so that
they come with their per-tree breakdown and in treelens's result object.

What they are, and how they differ from scikit-learn's MDI: the gain of a split
is the library's own regularized second-order loss reduction (about
``G_L^2 / (H_L + lambda) + G_R^2 / (H_R + lambda) - G^2 / (H + lambda)`` from the
sums of gradients ``G`` and hessians ``H`` of the rows in each node), not the
weighted impurity decrease of squared error or Gini that MDI sums; the cover of a
node is its hessian sum.  They are not normalized unless asked, not averaged over
trees, and measured on the training data only.  For an MDI comparable with
scikit-learn's gradient boosting, replay the stages on data with
``treelens.mdi_importance(model, X, y)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._adapters import to_forest
from .._adapters._dump import SplitStatistics
from .._adapters._registry import class_key
from .._core._forest import Forest
from .._exceptions import InputError, UnsupportedModelError
from .._types import ModelLike
from ._replay import refuse_isolation
from ._result import ImportanceResult

__all__ = ["gain_importance"]

ImportanceType = Literal["gain", "cover", "split"]

_LABELS = {"gain": "total gain", "cover": "total cover", "split": "split count"}


def _xgboost_statistics(model: Any) -> tuple[str, list[SplitStatistics]]:
    from .._adapters._xgboost import (
        _booster_json,
        wrapper_source,
        xgboost_split_statistics,
    )

    if hasattr(model, "get_booster"):
        model_json, n_rounds = wrapper_source(model)
    else:
        model_json, n_rounds = _booster_json(model), None
    return "XGBoost", xgboost_split_statistics(model_json, n_rounds=n_rounds)


def _lightgbm_statistics(model: Any) -> tuple[str, list[SplitStatistics]]:
    from .._adapters._lightgbm import booster_of, lightgbm_split_statistics

    return "LightGBM", lightgbm_split_statistics(booster_of(model).dump_model())


def _catboost_statistics(model: Any) -> tuple[str, list[SplitStatistics]]:
    from .._adapters._catboost import catboost_model_json, catboost_split_statistics

    return "CatBoost", catboost_split_statistics(catboost_model_json(model))


def _hist_statistics(model: Any) -> tuple[str, list[SplitStatistics]]:
    from .._adapters._sklearn_hist import hist_split_statistics

    return "HistGradientBoosting", hist_split_statistics(model)


_SOURCES: dict[str, Callable[[Any], tuple[str, list[SplitStatistics]]]] = {
    "xgboost.Booster": _xgboost_statistics,
    "xgboost.XGBModel": _xgboost_statistics,
    "lightgbm.Booster": _lightgbm_statistics,
    "lightgbm.LGBMModel": _lightgbm_statistics,
    "catboost.CatBoost": _catboost_statistics,
    "sklearn.HistGradientBoostingClassifier": _hist_statistics,
    "sklearn.HistGradientBoostingRegressor": _hist_statistics,
}


def _statistics(model: Any) -> tuple[str, list[SplitStatistics]]:
    if isinstance(model, Forest):
        raise InputError(
            "gain_importance needs the fitted model itself, not a Forest: the "
            "split gains are read from the library's model dump; expected an "
            "XGBoost, LightGBM or HistGradientBoosting model, got a Forest."
        )
    for cls in type(model).__mro__:
        source = _SOURCES.get(class_key(cls))
        if source is not None:
            return source(model)
    raise UnsupportedModelError(
        f"gain_importance reads the split gains that boosting libraries record; "
        f"expected an XGBoost, LightGBM or HistGradientBoosting model, got "
        f"{type(model).__module__}.{type(model).__qualname__}. For scikit-learn "
        "trees and forests use treelens.mdi_importance."
    )


def gain_importance(
    model: ModelLike,
    *,
    importance_type: ImportanceType = "gain",
    normalize: bool = False,
    feature_names: Sequence[str] | None = None,
) -> ImportanceResult:
    """Gain, cover or split-count importance a boosting library records.

    For every feature, the sum over all split nodes on that feature, in all
    trees, of the split's gain (``"gain"``), of the node's hessian sum
    (``"cover"``), or of 1 (``"split"``):

    ``importance[f] = sum over trees t, split nodes s of t with feature f of q(s)``

    With ``normalize=False`` these equal XGBoost's
    ``get_score(importance_type="total_gain" | "total_cover" | "weight")`` and
    LightGBM's ``feature_importance("gain" | "split")`` (features never split on
    get 0).

    Parameters
    ----------
    model : xgboost.Booster, XGBClassifier, XGBRegressor, lightgbm.Booster, \
LGBMClassifier, LGBMRegressor, HistGradientBoostingClassifier or \
HistGradientBoostingRegressor
        The fitted model (not a Forest: the gains come from its dump).  The
        trees used are those of :func:`treelens.to_forest` (the best iteration
        of a wrapper fitted with early stopping).
    importance_type : {"gain", "cover", "split"}, default="gain"
        ``"cover"`` needs hessian sums: XGBoost and LightGBM keep them,
        HistGradientBoosting does not.
    normalize : bool, default=False
        Divide by the total so that the importances sum to 1.
    feature_names : sequence of str, optional
        As for :func:`treelens.to_forest`.

    Returns
    -------
    ImportanceResult
        ``importances_`` (one value per feature), ``per_tree_`` of shape
        (n_trees, n_features) holding each tree's share multiplied by the
        number of trees (so the mean of its rows is ``importances_``),
        ``std_`` the standard deviation of those rows, and ``method`` such as
        ``"total gain (XGBoost)"``.

    Raises
    ------
    UnsupportedModelError
        If the model is not one of the above, or ``"cover"`` is asked of a
        HistGradientBoosting model.

    See Also
    --------
    treelens.mdi_importance : Mean decrease in impurity of scikit-learn trees.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> model = HistGradientBoostingRegressor(max_iter=5).fit(X, 3 * X[:, 0])
    >>> result = gain_importance(model, normalize=True)
    >>> result.importances_.idxmax(), result.method
    ('x0', 'total gain (HistGradientBoosting)')
    """
    if importance_type not in _LABELS:
        raise InputError(
            f"`importance_type` must be one of {list(_LABELS)}; got {importance_type!r}."
        )
    forest = to_forest(model, feature_names)
    refuse_isolation(forest, "Gain importance")
    library, statistics = _statistics(model)
    n_trees, n_features = len(statistics), forest.n_features
    per_tree = np.zeros((n_trees, n_features))
    for t, stats in enumerate(statistics):
        split = stats.feature >= 0
        if importance_type == "gain":
            weights = stats.gain[split]
        elif importance_type == "cover":
            weights = stats.cover[split]
            if np.isnan(weights).any():
                raise UnsupportedModelError(
                    f"{library} models keep no hessian sums, so they have no cover "
                    "importance; expected importance_type 'gain' or 'split', got "
                    "'cover'."
                )
        else:
            weights = np.ones(int(split.sum()))
        per_tree[t] = np.bincount(stats.feature[split], weights, minlength=n_features)
    total = per_tree.sum(axis=0)
    if normalize:
        scale = total.sum()
        if scale > 0:
            total, per_tree = total / scale, per_tree / scale
    names = list(forest.feature_names)
    shares = per_tree * n_trees
    return ImportanceResult(
        importances_=pd.Series(total, index=names, name="importance"),
        std_=pd.Series(
            shares.std(axis=0) if n_trees else np.zeros(n_features), index=names
        ),
        per_tree_=pd.DataFrame(shares, columns=names),
        method=f"{_LABELS[importance_type]} ({library})",
    )
