"""Adapter for CatBoost: ``CatBoostClassifier``, ``CatBoostRegressor``, ``CatBoost``.

The trees are read from CatBoost's own JSON model (``save_model(format="json")``),
which stores every border as the float32 CatBoost compares with and every leaf
value as the double it sums.

Trees.  CatBoost grows oblivious (symmetric) trees by default: one split per
level, shared by every node of the level, and ``2 ** depth`` leaves numbered by
the outcomes of the splits, split ``k`` giving bit ``k`` of the leaf index.  Each
becomes a complete binary tree whose root tests the last split and whose level
``l`` tests split ``depth - 1 - l``; numbered breadth first, its leaves then come
in CatBoost's leaf order.  Non-symmetric trees (``grow_policy="Depthwise"`` or
``"Lossguide"``) are read node by node.

Split rule.  CatBoost sends ``x > border`` to the right (bit 1), comparing float32
values, which is the Forest's ``x <= threshold`` goes left with ``input_dtype``
float32 and the border as threshold.  NaN follows each feature's
``nan_value_treatment``: ``"AsFalse"`` (``nan_mode="Min"``) and ``"AsIs"``
(``"Forbidden"``: NaN compares false) go left, ``"AsTrue"`` (``nan_mode="Max"``)
goes right.  A border at the float32 extreme, which CatBoost adds to split the
missing values off, becomes an infinite threshold.

Scores.  ``raw = scale * (sum of leaf values) + bias`` (``scale_and_bias``); the
learning rate is already in the leaf values.  The bias is added after the trees,
as CatBoost does (``Forest.init_after_trees``), so that raw scores are the same
doubles; a scale other than 1 (only after ``set_scale_and_bias``) is folded into
the leaf values, which moves scores by a rounding error.  Multiclass trees hold
one value per class in each leaf; the Forest holds one tree per class, as for
LightGBM.  Binary models predict class 1 when ``p > 0.5`` (``positive_at_zero``
is false); other probability thresholds are refused.  ``Poisson`` and ``Tweedie``
predict ``exp(raw)`` (``prediction_type="Exponent"``, the Forest's link
``"exp"``); CatBoost's own fast exponential differs from ``numpy.exp`` by up to
two units in the last place.

Node statistics.  ``weighted_n_node_samples`` is the weight of training rows in
each node (CatBoost's ``leaf_weights``, summed up the tree), split-node values the
weighted mean of their leaves; no impurity, count or hessian sum is stored.  The
``gain`` of a split (for :func:`treelens.gain_importance`) is CatBoost's
``PredictionValuesChange`` of that node: over the pairs of leaves below it that
differ only in its outcome, ``w1 (v1 - m)^2 + w2 (v2 - m)^2`` with ``m`` their
weighted mean.

One-hot categorical features.  A one-hot split sends a row right when its
category's hash (``CalcCatFeatureHash``: CityHash64 of the label's text, see
:mod:`treelens._adapters._cityhash`) equals the split's value.  CatBoost keeps
only those hashes, not the labels, so the labels come from the user
(``to_forest(model, categories=...)``) and are hashed here; each becomes a code
of the column's :class:`~treelens.FeatureSpec`, and a label never seen goes left
(it equals no split's value), as in CatBoost.

Refused: CTR (target-statistics) encoded categorical features, text and
embedding features, multi-output and ranking losses (the log links of
``Poisson`` and ``Tweedie`` are read, as above).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._features import FeatureSpec
from .._core._forest import Forest, Tree
from .._exceptions import InputError, NotFittedError, UnsupportedModelError
from ._cityhash import catboost_category_hash
from ._dump import (
    SplitStatistics,
    boosting_forest,
    categorical_table,
    reachable_order,
    renumber,
)
from ._names import resolve_feature_names
from ._registry import register_adapter

__all__ = ["catboost_split_statistics", "forest_from_catboost_json"]

# loss -> (task, link)
_LOSSES = {
    "Logloss": ("classification", "logistic"),
    "CrossEntropy": ("classification", "logistic"),
    "MultiClass": ("classification", "softmax"),
    "RMSE": ("regression", "identity"),
    "MAE": ("regression", "identity"),
    "Quantile": ("regression", "identity"),
    "Expectile": ("regression", "identity"),
    "MAPE": ("regression", "identity"),
    "Huber": ("regression", "identity"),
    "LogCosh": ("regression", "identity"),
    "Lq": ("regression", "identity"),
    "Poisson": ("regression", "exp"),
    "Tweedie": ("regression", "exp"),
}
# Losses whose gradient is that of a scikit-learn loss (stages replayed on data).
_REPLAY_LOSSES = {
    "Logloss": "log_loss",
    "MultiClass": "log_loss",
    "RMSE": "squared_error",
}

_FLOAT32_MAX = float(np.finfo(np.float32).max)

_CTR_ADVICE = (
    "expected one-hot or numeric features only: refit with `one_hot_max_size` at "
    "least the number of categories of each categorical feature (CatBoost then "
    "one-hot encodes them), or one-hot encode them before CatBoost"
)


def _loss_name(model_json: dict[str, Any]) -> str:
    params = model_json.get("model_info", {}).get("params", {})
    loss = params.get("loss_function", {}) if isinstance(params, dict) else {}
    name = loss.get("type") if isinstance(loss, dict) else None
    if not name:
        raise InputError(
            "The CatBoost JSON model records no loss function; expected "
            "model_info.params.loss_function.type (as save_model(format='json') "
            "writes it)."
        )
    return str(name)


def _variance_power(model_json: dict[str, Any]) -> float | None:
    """The ``variance_power`` of a ``Tweedie`` loss (a parameter CatBoost
    requires, recorded as text); None for another loss or where not recorded."""
    if _loss_name(model_json) != "Tweedie":
        return None
    options = model_json["model_info"]["params"]["loss_function"].get("params")
    power = options.get("variance_power") if isinstance(options, dict) else None
    return None if power is None else float(power)


def _objective(model_json: dict[str, Any]) -> tuple[str, str, str]:
    name = _loss_name(model_json)
    if name not in _LOSSES:
        raise UnsupportedModelError(
            f"CatBoost loss {name!r} is not supported; expected one of "
            f"{sorted(_LOSSES)} (ranking and multi-output losses are not)."
        )
    task, link = _LOSSES[name]
    return name, task, link


def _check_threshold(model_json: dict[str, Any]) -> None:
    text = model_json.get("model_info", {}).get("binclass_probability_threshold")
    if text is not None and float(text) != 0.5:
        raise UnsupportedModelError(
            "CatBoost binary models with a probability threshold other than 0.5 "
            "are not supported (the Forest predicts class 1 when p > 0.5); got "
            f"binclass_probability_threshold={text}."
        )


def _features(
    model_json: dict[str, Any],
    feature_names: Sequence[str] | None,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> dict[str, Any]:
    info = model_json.get("features_info", {})
    floats = info.get("float_features", [])
    cats = info.get("categorical_features", [])
    for kind in ("text_features", "embedding_features"):
        if info.get(kind):
            raise UnsupportedModelError(
                f"CatBoost models with {kind.replace('_', ' ')} are not supported; "
                "expected numeric and one-hot categorical features only."
            )
    every = [*floats, *cats]
    n_features = 1 + max((int(f["flat_feature_index"]) for f in every), default=-1)
    ids = [""] * n_features
    for f in every:
        ids[int(f["flat_feature_index"])] = str(f.get("feature_id", ""))
    names, has_names = resolve_feature_names(
        ids if all(ids) else None, n_features, feature_names
    )
    specs = [FeatureSpec(name) for name in names]
    cat_hashes = []
    for f in cats:
        column = int(f["flat_feature_index"])
        labels = _labels_of(names[column], f, categories)
        specs[column] = FeatureSpec(names[column], "categorical", labels)
        cat_hashes.append(np.array([catboost_category_hash(v) for v in labels]))
    unknown = sorted(
        set(categories or {}) - {names[int(f["flat_feature_index"])] for f in cats}
    )
    if unknown:
        raise InputError(
            f"`categories` names {unknown}, which are not categorical features of "
            f"this CatBoost model; its categorical features are "
            f"{[names[int(f['flat_feature_index'])] for f in cats]}."
        )
    return {
        "specs": tuple(specs),
        "cat_hashes": cat_hashes,
        "n_features": n_features,
        "names": names,
        "has_names": has_names,
        "float_column": [int(f["flat_feature_index"]) for f in floats],
        "float_nan_right": [
            f.get("nan_value_treatment", "AsIs") == "AsTrue" for f in floats
        ],
        "cat_column": [int(f["flat_feature_index"]) for f in cats],
        "ctr_features": sorted(
            {
                names[int(cats[int(e["cat_feature_index"])]["flat_feature_index"])]
                for ctr in info.get("ctrs", [])
                for e in ctr.get("elements", [])
                if "cat_feature_index" in e
            }
        ),
    }


def _labels_of(
    name: str, info: dict[str, Any], categories: Mapping[str, Sequence[Any]] | None
) -> tuple[Any, ...]:
    """Category labels of one categorical feature, as the user gave them."""
    if categories is not None and name in categories:
        labels = tuple(dict.fromkeys(categories[name]))
        if any(isinstance(v, float) for v in labels):
            raise InputError(
                f"Categories of CatBoost feature {name!r} must be strings or "
                f"integers, as CatBoost takes them; got {list(labels)[:5]}."
            )
        return labels
    if info.get("values"):
        raise InputError(
            f"CatBoost keeps no category labels, only their hashes, and feature "
            f"{name!r} has one-hot splits; expected its categories, the labels the "
            f"model was trained on: to_forest(model, categories={{{name!r}: "
            "[...]}), then give that Forest to the other functions."
        )
    return ()  # never split on: every label routes alike


def _split_rule(
    split: dict[str, Any], features: dict[str, Any], index: int
) -> tuple[int, float, bool, NDArray[np.bool_] | None]:
    """Feature, threshold (``x <= t`` goes left), NaN-goes-left and, for a one-hot
    split, the left-going codes ``0 .. k`` of one split."""
    kind = split.get("split_type")
    if kind == "FloatFeature":
        position = int(split["float_feature_index"])
        border = float(np.float32(split["border"]))
        if abs(border) >= _FLOAT32_MAX:
            # The border CatBoost puts at the float32 extreme only separates
            # missing values; an infinite threshold says so, as for the other
            # libraries (it differs only for an input of exactly -3.4028235e38).
            border = float(np.copysign(np.inf, border))
        return (
            features["float_column"][position],
            border,
            not features["float_nan_right"][position],
            None,
        )
    if kind == "OneHotFeature":
        position = int(split["cat_feature_index"])
        hashes = features["cat_hashes"][position]
        # A row whose category hashes to the split's value goes right (bit 1);
        # every other category, unknown ones too, goes left.
        goes_left = np.append(hashes != int(split["value"]), True)
        return features["cat_column"][position], np.nan, True, goes_left
    if kind == "OnlineCtr":
        raise UnsupportedModelError(
            "CatBoost models with CTR-encoded categorical features are not "
            f"supported (tree {index} splits on a target statistic of "
            f"{features['ctr_features'] or 'a categorical feature'}): a CTR split "
            "compares counts of the training targets per category, stored in the "
            "model, which no set of categories expresses; " + _CTR_ADVICE + "."
        )
    raise UnsupportedModelError(
        f"CatBoost split type {kind!r} is not supported (tree {index}); expected "
        "'FloatFeature' or 'OneHotFeature'."
    )


def _oblivious_layout(depth: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Children of a complete binary tree of ``depth`` levels, breadth first."""
    n_nodes = 2 ** (depth + 1) - 1
    ids = np.arange(n_nodes, dtype=np.intp)
    inner = ids < 2**depth - 1
    return np.where(inner, 2 * ids + 1, -1), np.where(inner, 2 * ids + 2, -1)


def _bottom_up(
    left: NDArray[np.intp],
    right: NDArray[np.intp],
    leaf_value: NDArray[np.float64],
    leaf_weight: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Weights (sums) and values (weighted means) of every node from its leaves.

    Children always have larger ids than their parent, so one pass from the last
    node to the first sees every child before its parent.
    """
    value, weight = leaf_value.copy(), leaf_weight.copy()
    for node in np.flatnonzero(left != -1)[::-1]:
        a, b = left[node], right[node]
        weight[node] = weight[a] + weight[b]
        if weight[node] > 0:
            value[node] = (weight[a] * value[a] + weight[b] * value[b]) / weight[node]
        else:
            value[node] = 0.5 * (value[a] + value[b])
    return value, weight


def _oblivious_gain(
    leaf_values: NDArray[np.float64], weights: NDArray[np.float64], depth: int
) -> NDArray[np.float64]:
    """CatBoost's PredictionValuesChange of every node, breadth first (0 at leaves).

    ``leaf_values`` of shape (2 ** depth,), one output.
    """
    gains = [np.zeros(2**depth)]
    for level in range(depth - 1, -1, -1):
        k = depth - 1 - level
        v = leaf_values.reshape(2**level, 2, 2**k)
        w = weights.reshape(2**level, 2, 2**k)
        total = w[:, 0] + w[:, 1]
        both = (w[:, 0] > 0) & (w[:, 1] > 0)
        mean = np.where(
            both, (v[:, 0] * w[:, 0] + v[:, 1] * w[:, 1]) / np.where(both, total, 1), 0
        )
        effect = (v[:, 0] - mean) ** 2 * w[:, 0] + (v[:, 1] - mean) ** 2 * w[:, 1]
        gains.append(np.where(both, effect, 0.0).sum(axis=1))
    return np.concatenate(gains[::-1])


def _oblivious_trees(
    tree: dict[str, Any], index: int, features: dict[str, Any], n_outputs: int
) -> list[tuple[Tree, SplitStatistics]]:
    """One Tree per output of one oblivious tree, and their split statistics."""
    splits = tree.get("splits", [])
    depth = len(splits)
    rules = [_split_rule(s, features, index) for s in splits]
    left, right = _oblivious_layout(depth)
    n_nodes = left.shape[0]
    first_leaf = 2**depth - 1
    inner = left != -1
    # Level l (nodes 2**l - 1 .. 2**(l + 1) - 2) tests split depth - 1 - l.
    level = np.floor(np.log2(np.arange(n_nodes) + 1.0)).astype(np.intp)
    split_of = np.where(inner, depth - 1 - level, 0)
    rule_feature = np.asarray([r[0] for r in rules] or [0], dtype=np.intp)
    rule_threshold = np.asarray([r[1] for r in rules] or [0.0])
    rule_nan_left = np.asarray([r[2] for r in rules] or [False])
    feature = np.where(inner, rule_feature[split_of], -2)
    threshold = np.where(inner, rule_threshold[split_of], -2.0)
    missing_left = inner & rule_nan_left[split_of]
    cat_rows = {
        int(node): rules[split_of[node]][3]
        for node in np.flatnonzero(inner)
        if rules[split_of[node]][3] is not None
    }
    values = np.asarray(tree["leaf_values"], dtype=np.float64).reshape(-1, n_outputs)
    if values.shape[0] != 2**depth:
        raise InputError(
            f"CatBoost tree {index} has {depth} splits but {values.shape[0]} "
            f"leaves; expected {2**depth}."
        )
    weights = np.asarray(
        tree.get("leaf_weights") or np.full(values.shape[0], np.nan), dtype=np.float64
    )
    out = []
    for dim in range(n_outputs):
        leaf_value = np.zeros(n_nodes)
        leaf_value[first_leaf:] = values[:, dim]
        leaf_weight = np.zeros(n_nodes)
        leaf_weight[first_leaf:] = weights
        value, weight = _bottom_up(left, right, leaf_value, leaf_weight)
        gain = _oblivious_gain(values[:, dim], np.nan_to_num(weights), depth)
        out.append(
            _assemble(
                (left, right, feature, threshold, missing_left),
                value,
                weight,
                gain,
                cat_rows,
            )
        )
    return out


def _flatten_nested(
    root: dict[str, Any], index: int, features: dict[str, Any], n_outputs: int
) -> list[tuple[Tree, SplitStatistics]]:
    """One Tree per output of one non-symmetric tree (nodes depth first)."""
    left: list[int] = []
    right: list[int] = []
    feature: list[int] = []
    threshold: list[float] = []
    missing_left: list[bool] = []
    leaf_values: list[NDArray[np.float64]] = []
    leaf_weight: list[float] = []
    cat_rows: dict[int, NDArray[np.bool_]] = {}
    stack: list[tuple[dict[str, Any], int]] = [(root, -1)]
    while stack:
        node, parent = stack.pop()
        node_id = len(left)
        if parent >= 0:
            # The left child is pushed last, so it is numbered first.
            if left[parent] == -3:
                left[parent] = node_id
            else:
                right[parent] = node_id
        if "split" not in node:
            left.append(-1)
            right.append(-1)
            feature.append(-2)
            threshold.append(-2.0)
            missing_left.append(False)
            leaf_values.append(np.ravel(np.asarray(node["value"], dtype=np.float64)))
            leaf_weight.append(float(node.get("weight", np.nan)))
            continue
        column, cut, nan_left, goes_left = _split_rule(node["split"], features, index)
        if goes_left is not None:
            cat_rows[node_id] = goes_left
        left.append(-3)
        right.append(-3)
        feature.append(column)
        threshold.append(cut)
        missing_left.append(nan_left)
        leaf_values.append(np.zeros(n_outputs))
        leaf_weight.append(0.0)
        stack.append((node["right"], node_id))
        stack.append((node["left"], node_id))
    arrays = (
        np.asarray(left, dtype=np.intp),
        np.asarray(right, dtype=np.intp),
        np.asarray(feature, dtype=np.intp),
        np.asarray(threshold),
        np.asarray(missing_left, dtype=bool),
    )
    # Depth-first numbering: children after parents, as _bottom_up needs.
    values = np.vstack(leaf_values)
    out = []
    for dim in range(n_outputs):
        value, weight = _bottom_up(
            arrays[0], arrays[1], values[:, dim], np.nan_to_num(leaf_weight)
        )
        a, b = arrays[0], arrays[1]
        inner = a != -1
        safe_a, safe_b = np.where(inner, a, 0), np.where(inner, b, 0)
        gain = np.where(
            inner,
            weight[safe_a] * (value[safe_a] - value) ** 2
            + weight[safe_b] * (value[safe_b] - value) ** 2,
            0.0,
        )
        weight = np.where(np.isnan(leaf_weight).any(), np.nan, weight)
        out.append(_assemble(arrays, value, weight, gain, cat_rows))
    return out


def _live_nodes(
    left: NDArray[np.intp],
    right: NDArray[np.intp],
    feature: NDArray[np.intp],
    threshold: NDArray[np.float64],
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """Drop the splits whose outcome the splits above them decide.

    An oblivious tree repeats each split across a level, so a node may test a
    feature whose side its ancestors already fixed (``x <= 0.1`` above
    ``x <= 0.3``): one of its subtrees is unreachable.  Such a node is replaced by
    the child every row reaches (NaN too: a feature's NaN side is the same at
    every node).  Returns the kept node ids (root first, breadth first) and their
    renumbered children.
    """
    n_nodes = left.shape[0]
    inner = np.flatnonzero(left != -1)
    n_features = int(feature.max()) + 1 if inner.size else 1
    lower = np.full((n_nodes, n_features), -np.inf)
    upper = np.full((n_nodes, n_features), np.inf)
    # Parents come before children, level by level.
    frontier = np.array([0], dtype=np.intp)
    while frontier.size:
        split = frontier[left[frontier] != -1]
        f, t = feature[split], threshold[split]
        for child, bound, side in (
            (left, upper, np.minimum),
            (right, lower, np.maximum),
        ):
            kids = child[split]
            lower[kids], upper[kids] = lower[split], upper[split]
            bound[kids, f] = side(bound[split, f], t)
        frontier = np.concatenate([left[split], right[split]])
    ids = np.arange(n_nodes, dtype=np.intp)
    f = np.maximum(feature, 0)
    # Infinite thresholds separate missing values, which no bound decides.
    decidable = (left != -1) & np.isfinite(threshold)
    always_left = decidable & (threshold >= upper[ids, f])
    always_right = decidable & (threshold <= lower[ids, f])
    target = np.where(always_left, left, np.where(always_right, right, ids))
    while True:  # at most depth steps
        nxt = target[target]
        if np.array_equal(nxt, target):
            break
        target = nxt
    new_left = np.where(left == -1, -1, target[np.maximum(left, 0)])
    new_right = np.where(right == -1, -1, target[np.maximum(right, 0)])
    # The root has no ancestors, so it is never dropped.
    order = reachable_order(new_left, new_right)
    kept_left, kept_right = renumber(order, new_left, new_right)
    return order, kept_left, kept_right


def _assemble(
    structure: tuple[NDArray[Any], ...],
    value: NDArray[np.float64],
    weight: NDArray[np.float64],
    gain: NDArray[np.float64],
    cat_rows: dict[int, NDArray[np.bool_]],
) -> tuple[Tree, SplitStatistics]:
    left, right, feature, threshold, missing_left = structure
    keep, left, right = _live_nodes(left, right, feature, threshold)
    position = {int(node): i for i, node in enumerate(keep)}
    width = 1 + max((row.size - 1 for row in cat_rows.values()), default=-1)
    is_categorical, categorical_left = categorical_table(
        keep.size,
        width,
        {position[n]: row for n, row in cat_rows.items() if n in position},
    )
    feature, threshold, missing_left = (
        feature[keep],
        threshold[keep],
        missing_left[keep],
    )
    value, weight, gain = value[keep], weight[keep], gain[keep]
    n_nodes = left.shape[0]
    tree = Tree(
        children_left=left,
        children_right=right,
        feature=feature,
        threshold=threshold,
        missing_go_left=missing_left,
        value=value.reshape(-1, 1),
        impurity=np.full(n_nodes, np.nan),
        n_node_samples=np.full(n_nodes, -1),
        weighted_n_node_samples=weight,
        is_categorical=is_categorical,
        categorical_left=categorical_left,
    )
    stats = SplitStatistics(
        feature=np.asarray(feature, dtype=np.intp),
        gain=gain,
        cover=np.full(n_nodes, np.nan),
    )
    return tree, stats


def _parse(
    model_json: dict[str, Any],
    feature_names: Sequence[str] | None,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> tuple[dict[str, Any], list[Tree], list[SplitStatistics]]:
    if not isinstance(model_json, dict) or not (
        "oblivious_trees" in model_json or "trees" in model_json
    ):
        keys = list(model_json)[:5] if isinstance(model_json, dict) else None
        raise InputError(
            "Not a CatBoost JSON model; expected a mapping with 'oblivious_trees' "
            "or 'trees' (as save_model(format='json') writes it), got "
            f"{type(model_json).__name__} with keys {keys}."
        )
    loss, task, link = _objective(model_json)
    if task == "classification":
        _check_threshold(model_json)
    features = _features(model_json, feature_names, categories)
    scale, bias = model_json.get("scale_and_bias", [1.0, [0.0]])
    bias = np.ravel(np.asarray(bias, dtype=np.float64))
    n_outputs = max(1, bias.size)
    oblivious = "oblivious_trees" in model_json
    raw_trees = model_json["oblivious_trees" if oblivious else "trees"]
    read = _oblivious_trees if oblivious else _flatten_nested
    parsed = [
        pair
        for i, tree in enumerate(raw_trees)
        for pair in read(tree, i, features, n_outputs)
    ]
    class_params = model_json.get("model_info", {}).get("class_params", {})
    info = {
        # The log links' losses by scikit-learn's names (named in the refusal
        # to replay them).
        "loss": loss.lower() if link == "exp" else _REPLAY_LOSSES.get(loss, ""),
        "loss_power": _variance_power(model_json),
        "task": task,
        "link": link,
        "scale": float(scale),
        "init_raw": bias if bias.size == n_outputs else np.zeros(n_outputs),
        "n_outputs": n_outputs,
        "tree_output": np.tile(np.arange(n_outputs, dtype=np.intp), len(raw_trees)),
        "classes": class_params.get("class_names"),
        **features,
    }
    return info, [p[0] for p in parsed], [p[1] for p in parsed]


def _read_json(model_json: dict[str, Any] | str | bytes) -> dict[str, Any]:
    if isinstance(model_json, (str, bytes, bytearray)):
        return json.loads(model_json)
    return model_json


def forest_from_catboost_json(
    model_json: dict[str, Any] | str | bytes,
    *,
    feature_names: Sequence[str] | None = None,
    classes: Any = None,
    source: str = "catboost.CatBoost",
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> Forest:
    """Build a Forest from a CatBoost JSON model.

    Parameters
    ----------
    model_json : dict, str or bytes
        The model as ``save_model(path, format="json")`` writes it, parsed or not.
    feature_names : sequence of str, optional
        Must equal the names stored in the model, if it stores any.
    classes : array-like, optional
        Class labels of a classifier; by default the model's ``class_names``,
        else ``0 .. n_classes - 1``.
    source : str
        Dotted class path recorded as ``Forest.source``.
    categories : mapping of str to sequence, optional
        The category labels (strings or integers) of each categorical feature,
        by name.  CatBoost stores only hashes of the labels, so a feature with
        one-hot splits needs them; labels are matched to the splits by CatBoost's
        own hash, and labels not given route as categories the model never saw.

    Returns
    -------
    Forest
    """
    info, trees, _ = _parse(_read_json(model_json), feature_names, categories)
    is_classifier = info["task"] == "classification"
    if is_classifier and classes is None:
        classes = info["classes"] or np.arange(max(2, info["n_outputs"]))
    if info["scale"] != 1.0:
        trees = [_scaled(tree, info["scale"]) for tree in trees]
    return boosting_forest(
        info,
        trees,
        classes=classes,
        criterion="catboost_prediction_values_change",
        source=source,
        init_raw=info["init_raw"],
        learning_rate=1.0,
        input_dtype=np.float32,
        loss=info["loss"],
        loss_power=info["loss_power"],
        init_after_trees=True,
        features=info["specs"],
    )


def _scaled(tree: Tree, scale: float) -> Tree:
    return replace(tree, value=tree.value * scale)


def catboost_split_statistics(
    model_json: dict[str, Any] | str | bytes,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> list[SplitStatistics]:
    """PredictionValuesChange of every node of every tree, aligned with the
    Forest's nodes (no cover: CatBoost keeps no hessian sums)."""
    return _parse(_read_json(model_json), None, categories)[2]


# ---------------------------------------------------------------- model objects
def _class_path(model: Any) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def catboost_model_json(model: Any) -> dict[str, Any]:
    """The JSON model of a fitted CatBoost model (through a temporary file)."""
    if not model.is_fitted():
        raise NotFittedError(
            f"This {type(model).__name__} is not fitted yet; expected a fitted model. "
            "Call `fit` first."
        )
    handle, path = tempfile.mkstemp(suffix=".json")
    os.close(handle)
    try:
        model.save_model(path, format="json")
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    finally:
        os.remove(path)


@register_adapter(
    "catboost.CatBoostClassifier", "catboost.CatBoostRegressor", "catboost.CatBoost"
)
def _catboost(
    model: Any,
    feature_names: Sequence[str] | None,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> Forest:
    classes = getattr(model, "classes_", None) if model.is_fitted() else None
    return forest_from_catboost_json(
        catboost_model_json(model),
        feature_names=feature_names,
        classes=None if classes is None or len(classes) == 0 else classes,
        source=_class_path(model),
        categories=categories,
    )


_catboost.accepts_categories = True  # type: ignore[attr-defined]


def _is_classifier(model: Any) -> bool:
    loss = str(model.get_all_params().get("loss_function", "")).split(":")[0]
    return _LOSSES.get(loss, ("", ""))[0] == "classification"


def catboost_predict(model: Any, X: Any) -> NDArray[Any]:
    """Labels (classifiers) or values (regressors) a CatBoost model predicts, one
    per row, as ``Forest.predict`` gives them."""
    if _is_classifier(model):
        return np.asarray(model.predict(X, prediction_type="Class")).reshape(-1)
    loss = str(model.get_all_params().get("loss_function", "")).split(":")[0]
    kind = "Exponent" if _LOSSES.get(loss, ("", ""))[1] == "exp" else "RawFormulaVal"
    return np.asarray(model.predict(X, prediction_type=kind)).reshape(-1)
