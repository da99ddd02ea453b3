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
``squared_error``, ``absolute_error`` and ``quantile``; ``exp`` (the log link)
for ``poisson`` and ``gamma``, whose predictions are ``exp(raw)``; logistic for
binary and softmax for multiclass ``log_loss``.

Categorical features.  scikit-learn encodes each categorical column with an
``OrdinalEncoder`` whose codes are what the trees compare (the encoder puts these
columns first; the Forest maps feature indices back to the input columns).  Its
categories become the column's :class:`~treelens.FeatureSpec`, and the numbers of
an array are such labels (``Forest.arrays_hold_labels``); a categorical node
sends code ``c`` left iff ``c`` is in the node's bitset
(``raw_left_cat_bitsets``); a category never seen in training is encoded as NaN by
scikit-learn and so follows the missing-value side, which is the unknown code's
column.

Node statistics.  ``n_node_samples`` is the stored training count; no hessian sum
is kept, so ``weighted_n_node_samples`` is NaN; ``gain`` (for
:func:`treelens.gain_importance`) is the stored split gain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._features import FeatureSpec
from .._core._forest import Forest, Tree
from .._exceptions import UnsupportedModelError
from ._dump import SplitStatistics, bitset_members, categorical_table
from ._registry import register_adapter
from ._sklearn import _allow_missing, _check_fitted, _class_path, _resolve_names

__all__ = ["hist_split_statistics"]

_LINKS = {
    "IdentityLink": "identity",
    "LogLink": "exp",
    "LogitLink": "logistic",
    "MultinomialLogit": "softmax",
}


def _link(model: Any) -> str:
    name = type(model._loss.link).__name__
    if name not in _LINKS:
        loss = model.loss if isinstance(model.loss, str) else type(model.loss).__name__
        raise UnsupportedModelError(
            f"{type(model).__name__} with loss {loss!r} is not supported: its link "
            f"({name}) is none of identity, log, logistic or softmax; expected "
            "loss 'squared_error', 'absolute_error', 'quantile', 'poisson', "
            "'gamma' or 'log_loss'."
        )
    return _LINKS[name]


def _categories(model: Any) -> dict[int, tuple[Any, ...]]:
    """Categories of each categorical input column, in code order.

    scikit-learn encodes categorical columns with an ``OrdinalEncoder`` (unknown
    categories become NaN) whose codes are the values its trees compare.
    """
    categorical = getattr(model, "is_categorical_", None)
    if categorical is None or not np.any(categorical):
        return {}
    encoder = model._preprocessor.named_transformers_["encoder"]
    out = {}
    for column, labels in zip(np.flatnonzero(categorical), encoder.categories_):
        labels = [v.item() if isinstance(v, np.generic) else v for v in labels]
        if labels and isinstance(labels[-1], float) and np.isnan(labels[-1]):
            labels = labels[:-1]  # the encoder lists NaN last; it is missing
        out[int(column)] = tuple(labels)
    return out


def _column_of(model: Any) -> NDArray[np.intp]:
    """Input column of each feature index the trees use: the preprocessor puts
    the categorical columns first."""
    categorical = getattr(model, "is_categorical_", None)
    n = int(model.n_features_in_)
    if categorical is None or not np.any(categorical):
        return np.arange(n, dtype=np.intp)
    mask = np.asarray(categorical, dtype=bool)
    return np.concatenate([np.flatnonzero(mask), np.flatnonzero(~mask)]).astype(np.intp)


def _tree(
    predictor: Any,
    learning_rate: float,
    column_of: NDArray[np.intp],
    n_categories: NDArray[np.intp],
) -> tuple[Tree, SplitStatistics]:
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    feature = np.where(leaf, -2, column_of[nodes["feature_idx"]]).astype(np.intp)
    # Split nodes keep the unshrunk value; leaves are already shrunk.
    value = np.where(leaf, nodes["value"], learning_rate * nodes["value"])
    n_nodes = leaf.shape[0]
    missing_left = nodes["missing_go_to_left"].astype(bool) & ~leaf
    categorical = nodes["is_categorical"].astype(bool) & ~leaf
    rows = {}
    for node in np.flatnonzero(categorical):
        k = int(n_categories[feature[node]])
        bitset = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][node]]
        # Codes 0 .. k - 1 by the bitset; unknown categories as missing values.
        rows[int(node)] = np.append(bitset_members(bitset, k), missing_left[node])
    width = 1 + int(n_categories.max()) if rows else 0
    is_categorical, categorical_left = categorical_table(n_nodes, width, rows)
    tree = Tree(
        children_left=np.where(leaf, -1, nodes["left"].astype(np.intp)),
        children_right=np.where(leaf, -1, nodes["right"].astype(np.intp)),
        feature=feature,
        threshold=np.where(
            leaf, -2.0, np.where(categorical, np.nan, nodes["num_threshold"])
        ),
        missing_go_left=missing_left,
        value=value.reshape(-1, 1),
        impurity=np.full(n_nodes, np.nan),
        n_node_samples=nodes["count"].astype(np.intp),
        weighted_n_node_samples=np.full(n_nodes, np.nan),
        is_categorical=is_categorical,
        categorical_left=categorical_left,
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
    link = _link(model)
    learning_rate = float(model.learning_rate)
    categories = _categories(model)
    features = tuple(
        FeatureSpec(name, "categorical", categories[j])
        if j in categories
        else FeatureSpec(name)
        for j, name in enumerate(names)
    )
    n_categories = np.array([spec.n_categories for spec in features], dtype=np.intp)
    column_of = _column_of(model)
    parsed = [
        _tree(predictor, learning_rate, column_of, n_categories)
        for predictors in model._predictors
        for predictor in predictors
    ]
    n_outputs = int(model.n_trees_per_iteration_)
    info = {
        "names": names,
        "has_names": has_names,
        "features": features,
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
        # Named where treelens replays it, and for the log links (whose
        # refusal to replay names it); others are "" (not replayed).
        loss=model.loss
        if model.loss in ("squared_error", "log_loss", "poisson", "gamma")
        else "",
        positive_at_zero=False,
        features=info["features"],
        # Its encoder maps the numbers of an array's categorical column by value.
        arrays_hold_labels=True,
    )
