"""Adapter for scikit-learn's HistGradientBoostingClassifier and Regressor.

The trees are read from the fitted ``_predictors`` (one ``TreePredictor`` per
iteration and raw output).  Each split stores the real-valued threshold of its bin
(``num_threshold``): scikit-learn predicts on raw float64 inputs with
``x <= num_threshold`` and sends NaN to ``missing_go_to_left``, which is the Forest's
rule with ``input_dtype`` float64.

Scores.  ``raw = _baseline_prediction + sum of leaf values``; leaf values already
carry the learning rate (``learning_rate`` is 1.0 in the Forest).  The values the
library keeps at split nodes do not, so they are multiplied by the learning rate
here to be on the leaves' scale.  The link follows the loss: identity for
``squared_error``, ``absolute_error`` and ``quantile``; logistic for binary and
softmax for multiclass ``log_loss``.  Losses with a log link (``poisson``,
``gamma``) are refused.

Node statistics.  ``n_node_samples`` is the stored training count; no hessian sum
is kept, so ``weighted_n_node_samples`` is NaN; ``gain`` (for
:func:`treelens.gain_importance`) is the stored split gain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core._forest import Forest, Tree
from .._exceptions import UnsupportedModelError
from ._dump import SplitStatistics
from ._registry import register_adapter
from ._sklearn import _allow_missing, _check_fitted, _class_path, _resolve_names

__all__ = ["hist_split_statistics"]

_LINKS = {
    "IdentityLink": "identity",
    "LogitLink": "logistic",
    "MultinomialLogit": "softmax",
}


def _link(model: Any) -> str:
    name = type(model._loss.link).__name__
    if name not in _LINKS:
        loss = model.loss if isinstance(model.loss, str) else type(model.loss).__name__
        raise UnsupportedModelError(
            f"{type(model).__name__} with loss {loss!r} is not supported: its link "
            f"({name}) is none of identity, logistic or softmax; expected loss "
            "'squared_error', 'absolute_error', 'quantile' or 'log_loss'."
        )
    return _LINKS[name]


def _check_numerical(model: Any, names: Sequence[str]) -> None:
    categorical = getattr(model, "is_categorical_", None)
    if categorical is not None and np.any(categorical):
        which = [names[int(i)] for i in np.flatnonzero(categorical)]
        raise UnsupportedModelError(
            f"{type(model).__name__} with categorical features is not supported "
            f"(categorical splits); expected numerical features only, got "
            f"categorical features {which}."
        )


def _tree(nodes: Any, learning_rate: float) -> tuple[Tree, SplitStatistics]:
    leaf = nodes["is_leaf"].astype(bool)
    feature = np.where(leaf, -2, nodes["feature_idx"]).astype(np.intp)
    # Split nodes keep the unshrunk value; leaves are already shrunk.
    value = np.where(leaf, nodes["value"], learning_rate * nodes["value"])
    n_nodes = leaf.shape[0]
    tree = Tree(
        children_left=np.where(leaf, -1, nodes["left"].astype(np.intp)),
        children_right=np.where(leaf, -1, nodes["right"].astype(np.intp)),
        feature=feature,
        threshold=np.where(leaf, -2.0, nodes["num_threshold"]),
        missing_go_left=nodes["missing_go_to_left"].astype(bool) & ~leaf,
        value=value.reshape(-1, 1),
        impurity=np.full(n_nodes, np.nan),
        n_node_samples=nodes["count"].astype(np.intp),
        weighted_n_node_samples=np.full(n_nodes, np.nan),
    )
    stats = SplitStatistics(
        feature=feature,
        gain=np.where(leaf, 0.0, nodes["gain"]),
        cover=np.full(n_nodes, np.nan),
    )
    return tree, stats


def _parse(
    model: Any, feature_names: Sequence[str] | None
) -> tuple[dict[str, Any], list[Tree], list[SplitStatistics]]:
    _check_fitted(model)
    names, has_names = _resolve_names(model, feature_names)
    _check_numerical(model, names)
    link = _link(model)
    learning_rate = float(model.learning_rate)
    parsed = [
        _tree(predictor.nodes, learning_rate)
        for predictors in model._predictors
        for predictor in predictors
    ]
    n_outputs = int(model.n_trees_per_iteration_)
    info = {
        "names": names,
        "has_names": has_names,
        "link": link,
        "n_outputs": n_outputs,
        "init_raw": np.asarray(model._baseline_prediction, dtype=np.float64).reshape(
            -1
        ),
        "tree_output": np.tile(
            np.arange(n_outputs, dtype=np.intp), len(model._predictors)
        ),
    }
    return info, [p[0] for p in parsed], [p[1] for p in parsed]


def hist_split_statistics(model: Any) -> list[SplitStatistics]:
    """Split gains of every node of every tree, aligned with the Forest's nodes."""
    return _parse(model, None)[2]


@register_adapter(
    "sklearn.HistGradientBoostingClassifier", "sklearn.HistGradientBoostingRegressor"
)
def _hist_gradient_boosting(model: Any, feature_names: Sequence[str] | None) -> Forest:
    info, trees, _ = _parse(model, feature_names)
    is_classifier = hasattr(model, "classes_")
    return Forest(
        trees=tuple(trees),
        kind="boosting",
        task="classification" if is_classifier else "regression",
        n_features=int(model.n_features_in_),
        feature_names=info["names"],
        has_feature_names=info["has_names"],
        classes_=model.classes_ if is_classifier else None,
        criterion="hist_gradient_boosting_gain",
        init_raw=info["init_raw"],
        learning_rate=1.0,
        link=info["link"],
        tree_output=info["tree_output"],
        input_dtype=np.float64,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        loss=model.loss if model.loss in ("squared_error", "log_loss") else "",
        positive_at_zero=False,
    )
