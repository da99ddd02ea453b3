"""Adapter for XGBoost: ``xgboost.Booster`` and its scikit-learn wrappers.

The trees are read from the booster's own JSON model (``Booster.save_raw("json")``),
which stores every threshold and leaf value as the float32 XGBoost predicts with.

Split rule.  XGBoost sends ``x < t`` left, comparing float32 values (its matrices
hold float32).  For float32 ``x`` and ``t``, ``x < t`` holds exactly when
``x <= nextafter(t, -inf)``, so the Forest stores that float32 neighbour as its
threshold and casts inputs to float32: one ``<=`` rule, exact.  NaN follows each
node's ``default_left``.

Scores.  ``raw = base_margin + sum of leaf values``; the learning rate is already
folded into the leaf values (``learning_rate`` is 1.0 in the Forest) and DART's
tree weights are folded in too.  ``base_score`` is read from the model (XGBoost >= 2
estimates it from the data); for ``binary:logistic`` it is a probability and goes
through the logit, for the log links (``count:poisson``, ``reg:gamma``,
``reg:tweedie``) a float32 prediction whose margin is its log (``reg:logistic``,
a regressor of fractions, like ``binary:logistic``), both computed in
float32 as XGBoost does.  XGBoost's probabilities (its float32 sigmoid and
softmax) and log-link predictions (``expf(raw)``) are made with the C library's
``expf`` and ``logf``, which :mod:`treelens._core._exponential` reproduces; its
binary labels are ``p > 0.5`` of that float32 probability.  Multiclass models grow one tree per class and round
(``tree_info`` gives each tree's class).

Labels.  XGBoost predicts class 1 when its float32 ``p > 0.5``: a raw score
above 0 but too small to move ``p`` from 0.5 (below about 3e-8) predicts class
0, and so does the Forest.  Raw scores are summed in float32, tree after tree, as
XGBoost sums them (``score_dtype``).

Rounds.  A ``Booster`` is read whole, as ``Booster.predict`` uses it.  A
scikit-learn wrapper fitted with early stopping predicts with its best iteration
only, so its Forest keeps the rounds up to ``best_iteration`` (inclusive).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core._exponential import float32_log
from .._core._features import FeatureSpec
from .._core._forest import Forest, Tree
from .._exceptions import InputError, NotFittedError, UnsupportedModelError
from ._dump import (
    SplitStatistics,
    boosting_forest,
    categorical_table,
    reachable_order,
    renumber,
)
from ._names import resolve_feature_names
from ._registry import register_adapter

__all__ = ["forest_from_xgboost_json", "xgboost_split_statistics"]

# Objectives whose gradient is that of a scikit-learn loss, so that their stages
# can be replayed on data (treelens.node_statistics).
_REPLAY_LOSSES = {
    "binary:logistic": "log_loss",
    "multi:softprob": "log_loss",
    "multi:softmax": "log_loss",
    "reg:squarederror": "squared_error",
}

# The losses of the regressors with a link, by scikit-learn's names (and
# cross_entropy for fractions), not replayed on data.
_LOG_LINK_LOSSES = {
    "count:poisson": "poisson",
    "reg:gamma": "gamma",
    "reg:tweedie": "tweedie",
    "reg:logistic": "cross_entropy",
}

# objective -> (task, link)
_OBJECTIVES = {
    "binary:logistic": ("classification", "logistic"),
    "multi:softprob": ("classification", "softmax"),
    "multi:softmax": ("classification", "softmax"),
    "reg:squarederror": ("regression", "identity"),
    "reg:squaredlogerror": ("regression", "identity"),
    "reg:pseudohubererror": ("regression", "identity"),
    "reg:absoluteerror": ("regression", "identity"),
    "reg:quantileerror": ("regression", "identity"),
    "reg:logistic": ("regression", "logistic"),
    "count:poisson": ("regression", "exp"),
    "reg:gamma": ("regression", "exp"),
    "reg:tweedie": ("regression", "exp"),
}


def _learner(model_json: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(model_json, dict) or "learner" not in model_json:
        keys = list(model_json)[:5] if isinstance(model_json, dict) else None
        raise InputError(
            "Not an XGBoost JSON model; expected a mapping with a 'learner' entry "
            "(the output of `Booster.save_raw('json')`), got "
            f"{type(model_json).__name__} with keys {keys}."
        )
    return model_json["learner"]


def _objective(learner: dict[str, Any]) -> tuple[str, str, str]:
    name = str(learner["objective"]["name"])
    if name not in _OBJECTIVES:
        raise UnsupportedModelError(
            f"XGBoost objective {name!r} is not supported; expected one of "
            f"{sorted(_OBJECTIVES)}."
        )
    task, link = _OBJECTIVES[name]
    return name, task, link


def _tweedie_power(learner: dict[str, Any]) -> float | None:
    """The variance power of a ``reg:tweedie`` model (XGBoost's default 1.5), as
    given: XGBoost keeps it as a float32 and writes it with nine digits
    (``"1.29999995"`` for 1.3), and the shortest decimal of that float32 is the
    one given.  None for another objective."""
    objective = learner["objective"]
    if objective["name"] != "reg:tweedie":
        return None
    param = objective.get("tweedie_regression_param") or {}
    power = np.float32(param.get("tweedie_variance_power", 1.5))
    return float(str(power))  # numpy prints the shortest decimal that round-trips


def _gbtree(learner: dict[str, Any]) -> tuple[dict[str, Any], list[float] | None]:
    booster = learner["gradient_booster"]
    name = booster.get("name", "gbtree")
    if name == "gbtree":
        return booster["model"], None
    if name == "dart":
        return booster["gbtree"]["model"], [float(w) for w in booster["weight_drop"]]
    raise UnsupportedModelError(
        f"XGBoost booster {name!r} is not supported; expected 'gbtree' or 'dart' "
        "(tree models)."
    )


def _base_score(learner: dict[str, Any]) -> np.ndarray:
    text = str(learner["learner_model_param"]["base_score"]).strip()
    # XGBoost >= 3.1 writes a vector "[5E-1]"; older versions a scalar "5E-1".
    values = [float(v) for v in text.strip("[]").split(",") if v.strip()]
    return np.asarray(values, dtype=np.float64)


def _category_labels(encoding: dict[str, Any]) -> tuple[Any, ...] | None:
    """Labels of one feature in XGBoost's ``cats`` record (strings as UTF-8
    bytes cut at ``offsets``; numbers as ``values``), in code order."""
    values = encoding.get("values", [])
    offsets = encoding.get("offsets")
    if offsets is not None and "type" not in encoding:
        if not offsets:
            return None
        data = bytes(int(v) for v in values)
        bounds = [int(v) for v in offsets]
        if bounds[-1] != len(data):
            bounds.append(len(data))
        return tuple(data[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds))
    return tuple(v.item() if isinstance(v, np.generic) else v for v in values)


def _features(
    learner: dict[str, Any],
    model: dict[str, Any],
    trees: list[dict[str, Any]],
    names: Sequence[str],
) -> tuple[FeatureSpec, ...]:
    """Kinds of the input columns: categorical where ``feature_types`` says
    ``"c"``, with the labels XGBoost recorded (``cats``), else the codes its
    splits use."""
    types = learner.get("feature_types") or []
    encodings = (model.get("cats") or {}).get("enc") or []
    specs = [FeatureSpec(str(name)) for name in names]
    highest = np.full(len(names), -1)
    for tree in trees:
        nodes = tree.get("categories_nodes", [])
        if nodes:
            feature = np.asarray(tree["split_indices"])[nodes]
            cats = np.asarray(tree["categories"], dtype=np.intp)
            ends = np.add(tree["categories_segments"], tree["categories_sizes"]) - 1
            top = cats[np.maximum(ends, 0)] if cats.size else np.zeros(len(nodes))
            np.maximum.at(highest, feature, np.asarray(top, dtype=np.intp))
    for j, name in enumerate(names):
        if j < len(types) and types[j] == "c" or highest[j] >= 0:
            labels = _category_labels(encodings[j]) if j < len(encodings) else None
            if labels is None:
                labels = tuple(range(int(highest[j]) + 1))
            specs[j] = FeatureSpec(str(name), "categorical", labels)
    return tuple(specs)


def _round_bounds(model: dict[str, Any], n_outputs: int) -> np.ndarray:
    indptr = model.get("iteration_indptr")
    if indptr:
        return np.asarray(indptr, dtype=np.intp)
    n_trees = len(model["trees"])
    per_round = int(model["gbtree_model_param"].get("num_parallel_tree", 1)) * n_outputs
    return np.arange(0, n_trees + 1, max(per_round, 1), dtype=np.intp)


def _category_rows(
    tree: dict[str, Any], n_categories: np.ndarray, feature: np.ndarray
) -> dict[int, np.ndarray]:
    """Left-going codes ``0 .. k`` of every categorical node.

    XGBoost lists, for each categorical node, the categories that go right; any
    other code (an unseen category too) goes left.
    """
    nodes = tree.get("categories_nodes", [])
    if not nodes:
        return {}
    cats = np.asarray(tree["categories"], dtype=np.intp)
    segments = tree["categories_segments"]
    sizes = tree["categories_sizes"]
    rows = {}
    for node, start, size in zip(nodes, segments, sizes):
        k = int(n_categories[feature[node]])
        goes_left = np.ones(k + 1, dtype=bool)
        right = cats[int(start) : int(start) + int(size)]
        goes_left[right[(right >= 0) & (right < k)]] = False
        rows[int(node)] = goes_left
    return rows


def _parse_tree(
    tree: dict[str, Any],
    index: int,
    weight: float,
    feature_names: Sequence[str],
    n_categories: np.ndarray,
) -> tuple[Tree, SplitStatistics]:
    size_leaf = int(tree.get("tree_param", {}).get("size_leaf_vector", "1") or 1)
    if size_leaf > 1:
        raise UnsupportedModelError(
            "XGBoost multi-target trees (vector leaves) are not supported; expected "
            f"one value per leaf, got {size_leaf} in tree {index}."
        )
    left = np.asarray(tree["left_children"], dtype=np.intp)
    right = np.asarray(tree["right_children"], dtype=np.intp)
    feature = np.asarray(tree["split_indices"], dtype=np.intp)
    condition = np.asarray(tree["split_conditions"], dtype=np.float32)
    default_left = np.asarray(tree["default_left"], dtype=bool)
    base_weights = np.asarray(tree["base_weights"], dtype=np.float64)
    cover = np.asarray(tree["sum_hessian"], dtype=np.float64)
    gain = np.asarray(tree["loss_changes"], dtype=np.float64)
    leaf = left == -1
    rows = _category_rows(tree, n_categories, feature)
    n_all = left.shape[0]
    is_categorical, categorical_left = categorical_table(
        n_all, 1 + int(n_categories.max(initial=0)), rows
    )
    if int(tree.get("tree_param", {}).get("num_deleted", "0") or 0):
        order = reachable_order(left, right)
        is_categorical, categorical_left = (
            is_categorical[order],
            categorical_left[order],
        )
        left, right = renumber(order, left, right)
        feature, condition, default_left = (
            feature[order],
            condition[order],
            default_left[order],
        )
        base_weights, cover, gain = base_weights[order], cover[order], gain[order]
        leaf = left == -1
    # x < t  <=>  x <= nextafter(t, -inf)  for float32 x and t.
    below = np.nextafter(condition, np.float32(-np.inf)).astype(np.float64)
    value = np.where(leaf, condition.astype(np.float64), base_weights) * weight
    feature = np.where(leaf, -2, feature)
    n_nodes = left.shape[0]
    return (
        Tree(
            children_left=left,
            children_right=right,
            feature=feature,
            threshold=np.where(leaf, -2.0, np.where(is_categorical, np.nan, below)),
            missing_go_left=default_left & ~leaf,
            value=value.reshape(-1, 1),
            impurity=np.full(n_nodes, np.nan),
            n_node_samples=np.full(n_nodes, -1),
            weighted_n_node_samples=cover,
            is_categorical=is_categorical,
            categorical_left=categorical_left,
        ),
        SplitStatistics(feature=feature, gain=np.where(leaf, 0.0, gain), cover=cover),
    )


def _parse(
    model_json: dict[str, Any],
    n_rounds: int | None,
    feature_names: Sequence[str] | None,
) -> tuple[dict[str, Any], list[Tree], list[SplitStatistics]]:
    learner = _learner(model_json)
    objective, task, link = _objective(learner)
    params = learner["learner_model_param"]
    if int(params.get("num_target", "1") or 1) > 1:
        raise UnsupportedModelError(
            "XGBoost multi-output models are not supported; expected one target, "
            f"got {params['num_target']}."
        )
    n_features = int(params["num_feature"])
    names, has_names = resolve_feature_names(
        learner.get("feature_names") or None, n_features, feature_names
    )
    n_classes = int(params.get("num_class", "0") or 0)
    n_outputs = n_classes if objective.startswith("multi:") else 1
    model, weights = _gbtree(learner)
    bounds = _round_bounds(model, n_outputs)
    n_total = len(bounds) - 1
    stop = bounds[n_total if n_rounds is None else min(n_rounds, n_total)]
    raw_trees = model["trees"][:stop]
    features = _features(learner, model, model["trees"], names)
    n_categories = np.array([spec.n_categories for spec in features], dtype=np.intp)
    parsed = [
        _parse_tree(t, i, 1.0 if weights is None else weights[i], names, n_categories)
        for i, t in enumerate(raw_trees)
    ]
    base = _base_score(learner)
    # base_score is a float32 prediction; XGBoost turns it into a margin in
    # float32 with the C library's logf.
    one, score = np.float32(1.0), base.astype(np.float32)
    if link == "logistic":
        base = -float32_log(one / score - one).astype(np.float64)
    elif link == "exp":
        base = float32_log(score).astype(np.float64)
    init_raw = np.broadcast_to(base, (n_outputs,)) if base.size == 1 else base
    if init_raw.shape != (n_outputs,):
        raise InputError(
            f"XGBoost base_score has {base.size} values; expected 1 or {n_outputs}."
        )
    parallel = int(model["gbtree_model_param"].get("num_parallel_tree", "1") or 1)
    stagewise = weights is None and parallel == 1  # not DART, not a random forest
    info = {
        "objective": objective,
        "loss": (
            _LOG_LINK_LOSSES[objective]
            if objective in _LOG_LINK_LOSSES  # named in the refusal to replay it
            else _REPLAY_LOSSES.get(objective, "")
            if stagewise
            else ""
        ),
        "loss_power": _tweedie_power(learner),
        "task": task,
        "link": link,
        "names": names,
        "has_names": has_names,
        "features": features,
        "n_features": n_features,
        "n_classes": max(n_classes, 2) if task == "classification" else 0,
        "init_raw": np.array(init_raw, dtype=np.float64),
        "tree_output": np.asarray(model["tree_info"][:stop], dtype=np.intp),
    }
    return info, [p[0] for p in parsed], [p[1] for p in parsed]


def forest_from_xgboost_json(
    model_json: dict[str, Any] | str | bytes,
    *,
    feature_names: Sequence[str] | None = None,
    n_rounds: int | None = None,
    classes: Any = None,
    source: str = "xgboost.Booster",
) -> Forest:
    """Build a Forest from an XGBoost JSON model.

    Parameters
    ----------
    model_json : dict, str or bytes
        The model as ``Booster.save_raw("json")`` writes it, parsed or not.
    feature_names : sequence of str, optional
        Must equal the names stored in the model, if it stores any.
    n_rounds : int, optional
        Use only the first ``n_rounds`` boosting rounds; all by default.
    classes : array-like, optional
        Class labels of a classifier; ``0 .. n_classes - 1`` by default.
    source : str
        Dotted class path recorded as ``Forest.source``.

    Returns
    -------
    Forest
    """
    parsed = (
        json.loads(model_json)
        if isinstance(model_json, (str, bytes, bytearray))
        else model_json
    )
    info, trees, _ = _parse(parsed, n_rounds, feature_names)
    return boosting_forest(
        info,
        trees,
        classes=classes,
        criterion="xgboost_gain",
        source=source,
        init_raw=info["init_raw"],
        learning_rate=1.0,
        input_dtype=np.float32,
        loss=info["loss"],
        loss_power=info["loss_power"],
        score_dtype=np.float32,
        features=info["features"],
    )


def xgboost_split_statistics(
    model_json: dict[str, Any] | str | bytes, *, n_rounds: int | None = None
) -> list[SplitStatistics]:
    """Gain and cover at every node of every tree, aligned with the Forest's nodes."""
    parsed = (
        json.loads(model_json)
        if isinstance(model_json, (str, bytes, bytearray))
        else model_json
    )
    return _parse(parsed, n_rounds, None)[2]


# ---------------------------------------------------------------- model objects
def _class_path(model: Any) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def _booster_json(booster: Any) -> dict[str, Any]:
    return json.loads(bytes(booster.save_raw(raw_format="json")))


def _wrapper_booster(model: Any) -> Any:
    try:
        return model.get_booster()
    except Exception as exc:  # xgboost raises scikit-learn's NotFittedError
        raise NotFittedError(
            f"This {type(model).__name__} is not fitted yet; expected a fitted model. "
            "Call `fit` first."
        ) from exc


def _wrapper_rounds(booster: Any) -> int | None:
    best = booster.attr("best_iteration")
    return None if best is None else int(best) + 1


def wrapper_source(model: Any) -> tuple[dict[str, Any], int | None]:
    """The JSON model and number of rounds a scikit-learn wrapper predicts with."""
    missing = getattr(model, "missing", np.nan)
    if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
        raise UnsupportedModelError(
            f"XGBoost models with `missing={missing!r}` are not supported; expected "
            "missing=nan (NaN marks missing values)."
        )
    booster = _wrapper_booster(model)
    return _booster_json(booster), _wrapper_rounds(booster)


@register_adapter("xgboost.Booster")
def _booster(model: Any, feature_names: Sequence[str] | None) -> Forest:
    return forest_from_xgboost_json(
        _booster_json(model), feature_names=feature_names, source=_class_path(model)
    )


@register_adapter(
    "xgboost.XGBClassifier",
    "xgboost.XGBRegressor",
    "xgboost.XGBRFClassifier",
    "xgboost.XGBRFRegressor",
)
def _wrapper(model: Any, feature_names: Sequence[str] | None) -> Forest:
    model_json, n_rounds = wrapper_source(model)
    return forest_from_xgboost_json(
        model_json,
        feature_names=feature_names,
        n_rounds=n_rounds,
        classes=getattr(model, "classes_", None),
        source=_class_path(model),
    )
