"""Adapter for LightGBM: ``lightgbm.Booster`` and its scikit-learn wrappers.

The trees are read from ``Booster.dump_model()``, whose thresholds and leaf values
are the doubles LightGBM predicts with.  Nodes are numbered depth first, left child
first, the root being 0.

Split rule.  LightGBM sends ``x <= threshold`` left comparing doubles, as the
Forest does (``input_dtype`` float64), after reading inputs with
``|x| <= 1e-35`` as 0.0; thresholds inside that band are moved to its edge so
that the raw input gives the same answer; a threshold written as 1e300 (its
stand-in for infinity) becomes +inf.  Missing values depend on each node's
``missing_type``: ``"NaN"`` sends NaN to the ``default_left`` side; ``"None"``
(the feature had no missing values in training) first turns NaN into 0.0, so NaN
goes left iff ``0.0 <= threshold``.  ``"Zero"`` (``zero_as_missing=True``) also
routes values near zero by the default side, which one ``<=`` test cannot express;
such models are refused.

Categorical splits.  A node ``"1||4||7"`` sends the categories listed left and
every other value right: NaN, a negative number, a category never listed.
LightGBM casts a value to int first, so it reads 3.7 as category 3 and -0.5 as
0; the Forest encodes a number so too (``FeatureSpec.truncates``), keeping its
codes ``0 .. max seen`` for the categories of a model fitted on numbers (those
that never occurred in training go right at every node, as LightGBM sends
them), and the pandas categories of one fitted on a ``category`` column, whose
arrays hold codes.

Scores.  The learning rate (``shrinkage``) and the initial score
(``boost_from_average``) are already in the leaf values, so ``init_raw`` is 0 and
``learning_rate`` 1.0; random-forest mode (``average_output``) averages the rounds,
so its ``learning_rate`` is ``1 / n_rounds`` (LightGBM's own ``raw_score`` output
is then the unaveraged sum, while its probabilities come from the average, which
is what ``Forest.raw_predict`` gives).  Multiclass models grow one tree per class
and round, class-minor.  The log links (``poisson``, ``gamma``, ``tweedie``)
predict ``exp(raw)`` (the Forest's link ``"exp"``), ``cross_entropy`` (a
regressor of fractions) ``1 / (1 + exp(-raw))`` (link ``"logistic"``), both with
the C library's ``exp`` (``Forest.c_exponential``).

Node statistics.  ``n_node_samples`` are the dump's counts; ``weighted_n_node_samples``
the hessian sums (``leaf_weight``, summed up the tree for split nodes because the
dump prints ``internal_weight`` with six digits only); ``value`` the leaf values
and, at split nodes, ``internal_value``; impurity is NaN (not stored).

Rounds.  ``dump_model()`` keeps the best iteration when the model has one, and
otherwise every round, as ``predict`` does by default; the Forest holds those.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core._features import FeatureSpec
from .._core._forest import Forest, Tree
from .._exceptions import InputError, NotFittedError, UnsupportedModelError
from ._dump import SplitStatistics, boosting_forest, categorical_table
from ._names import resolve_feature_names
from ._registry import register_adapter

__all__ = ["forest_from_lightgbm_dump", "lightgbm_split_statistics"]

_REGRESSION = ("regression", "regression_l1", "huber", "fair", "quantile", "mape")
# Objectives whose prediction is exp(raw score).
_LOG_LINK = ("poisson", "gamma", "tweedie")
# Regression of fractions in [0, 1], whose prediction is 1 / (1 + exp(-raw)).
_CROSS_ENTROPY = ("cross_entropy", "xentropy")
_SUPPORTED = ("binary", "multiclass", *_REGRESSION, *_LOG_LINK, *_CROSS_ENTROPY)


def _objective(dump: dict[str, Any]) -> tuple[str, str, str]:
    """Task, link and (for replaying stages) scikit-learn loss name."""
    text = str(dump.get("objective", "")).strip()
    parts = text.split()
    name = parts[0] if parts else "custom"
    options = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
    flags = {p for p in parts[1:] if ":" not in p}
    if name == "binary":
        sigmoid = float(options.get("sigmoid", "1"))
        if sigmoid == 1.0:
            return "classification", "logistic", "log_loss"
        if sigmoid == 2.0:
            return "classification", "exponential", ""
        raise UnsupportedModelError(
            "LightGBM binary models with sigmoid other than 1 or 2 are not "
            f"supported; got objective {text!r}."
        )
    if name == "multiclass":
        return "classification", "softmax", "log_loss"
    if name in _LOG_LINK:  # named in the refusal to replay the loss
        return "regression", "exp", name
    if name in _CROSS_ENTROPY:
        return "regression", "logistic", "cross_entropy"
    if name in _REGRESSION and "sqrt" not in flags:
        return "regression", "identity", "squared_error" if name == "regression" else ""
    raise UnsupportedModelError(
        f"LightGBM objective {text or 'custom'!r} is not supported; expected one of "
        f"{list(_SUPPORTED)} (regression without reg_sqrt)."
    )


# LightGBM reads every input with |x| <= kZeroThreshold (1e-35f as a double) as 0.0.
_ZERO = float(np.float32(1e-35))
# LightGBM writes an infinite threshold (every number goes left) as 1e300.
_HUGE = 1e300


def _zero_band_threshold(cut: float) -> float:
    """The threshold that sends raw inputs where LightGBM sends them.

    Inputs in ``[-_ZERO, _ZERO]`` are compared as 0.0, so for a threshold inside
    that band the set going left is ``x <= _ZERO`` (``cut >= 0``) or
    ``x < -_ZERO`` (``cut < 0``); elsewhere the band and 0.0 fall on the same
    side and the threshold stands.  A threshold of 1e300 stands for +inf.
    """
    if -_ZERO <= cut < _ZERO:
        return _ZERO if cut >= 0.0 else float(np.nextafter(-_ZERO, -np.inf))
    if cut >= _HUGE:
        return np.inf
    return cut


def _numeric_missing_left(
    node: dict[str, Any], cut: float, missing_type: str, index: int, name: str
) -> bool:
    if missing_type == "NaN":
        return bool(node.get("default_left", True))
    if missing_type == "None":
        return 0.0 <= cut
    raise UnsupportedModelError(
        f"LightGBM splits with missing_type {missing_type!r} "
        "(zero_as_missing=True) are not supported: they route values near "
        "zero like missing ones, which one threshold cannot express; "
        f"expected 'None' or 'NaN' (tree {index}, feature {name!r})."
    )


def _flatten(
    root: dict[str, Any],
    index: int,
    feature_names: Sequence[str],
    n_categories: np.ndarray,
) -> tuple[Tree, SplitStatistics]:
    """Arrays of one nested ``tree_structure``, nodes in depth-first order."""
    left: list[int] = []
    right: list[int] = []
    feature: list[int] = []
    threshold: list[float] = []
    missing_left: list[bool] = []
    value: list[float] = []
    count: list[int] = []
    cover: list[float] = []
    gain: list[float] = []
    depth: list[int] = []
    categorical: dict[int, np.ndarray] = {}
    stack: list[tuple[dict[str, Any], int]] = [(root, -1)]
    while stack:
        node, parent = stack.pop()
        node_id = len(left)
        depth.append(0 if parent < 0 else depth[parent] + 1)
        if parent >= 0:
            # Right children are pushed first, so a parent's left child is
            # always numbered before its right child.
            if left[parent] == -3:
                left[parent] = node_id
            else:
                right[parent] = node_id
        if "leaf_value" in node:
            if "leaf_const" in node:  # how the dump writes a leaf of a linear tree
                raise _linear_trees_refused()
            left.append(-1)
            right.append(-1)
            feature.append(-2)
            threshold.append(-2.0)
            missing_left.append(False)
            value.append(float(node["leaf_value"]))
            count.append(int(node.get("leaf_count", -1)))
            cover.append(float(node.get("leaf_weight", np.nan)))
            gain.append(0.0)
            continue
        split_feature = int(node["split_feature"])
        decision = node.get("decision_type", "<=")
        missing_type = node.get("missing_type", "None")
        if decision == "==":
            categorical[node_id] = _category_set(
                str(node["threshold"]), int(n_categories[split_feature])
            )
            # LightGBM sends NaN, negative and unseen categories right.
            cut, goes_left = np.nan, False
        elif decision != "<=":
            raise UnsupportedModelError(
                f"LightGBM split decision {decision!r} is not supported; expected "
                f"'<=' or '==' (feature {feature_names[split_feature]!r}, tree "
                f"{index})."
            )
        else:
            cut = _zero_band_threshold(float(node["threshold"]))
            goes_left = _numeric_missing_left(
                node, cut, missing_type, index, feature_names[split_feature]
            )
        left.append(-3)  # filled in when the left child is numbered
        right.append(-3)
        feature.append(split_feature)
        threshold.append(cut)
        missing_left.append(goes_left)
        value.append(float(node.get("internal_value", np.nan)))
        count.append(int(node.get("internal_count", -1)))
        cover.append(float(node.get("internal_weight", np.nan)))
        gain.append(float(node.get("split_gain", 0.0)))
        stack.append((node["right_child"], node_id))
        stack.append((node["left_child"], node_id))
    n_nodes = len(left)
    feature_array = np.asarray(feature, dtype=np.intp)
    cover_array = _exact_cover(
        np.asarray(left), np.asarray(right), np.asarray(depth), np.asarray(cover)
    )
    is_categorical, categorical_left = categorical_table(
        n_nodes, 1 + int(n_categories.max(initial=0)), categorical
    )
    tree = Tree(
        children_left=np.asarray(left),
        children_right=np.asarray(right),
        feature=feature_array,
        threshold=np.asarray(threshold),
        missing_go_left=np.asarray(missing_left),
        value=np.asarray(value).reshape(-1, 1),
        impurity=np.full(n_nodes, np.nan),
        n_node_samples=np.asarray(count),
        weighted_n_node_samples=cover_array,
        is_categorical=is_categorical,
        categorical_left=categorical_left,
    )
    return tree, SplitStatistics(
        feature=feature_array, gain=np.asarray(gain), cover=cover_array
    )


def _linear_trees_refused() -> UnsupportedModelError:
    # LightGBM 4 marks a linear tree only by its leaves' ``leaf_const`` and
    # ``leaf_coeff``; reading ``leaf_value`` alone would predict wrongly.
    return UnsupportedModelError(
        "LightGBM linear trees (linear_tree=True) are not supported; expected "
        "constant leaves."
    )


def _category_set(threshold: str, k: int) -> np.ndarray:
    """Left-going codes ``0 .. k`` of a categorical split ``"1||4||7"`` (the
    categories listed go left; every other one, unseen ones too, goes right)."""
    goes_left = np.zeros(k + 1, dtype=bool)
    codes = np.array([int(v) for v in threshold.split("||") if v != ""], dtype=np.intp)
    goes_left[codes[(codes >= 0) & (codes < k)]] = True
    return goes_left


def _features(dump: dict[str, Any], names: Sequence[str]) -> tuple[FeatureSpec, ...]:
    """Kinds of the input columns: categorical where LightGBM lists category
    values (``feature_infos``), with the pandas categories the model was fitted
    with (``pandas_categorical``), else the integers ``0 .. max seen``, which
    it reads from any number by its whole part."""
    infos = dump.get("feature_infos", {})
    stored = list(dump.get("feature_names") or names)
    seen = {
        j: infos[stored[j]]["values"]
        for j in range(len(names))
        if isinstance(infos.get(stored[j]), dict) and infos[stored[j]].get("values")
    }
    pandas = dump.get("pandas_categorical") or []
    if pandas and len(pandas) != len(seen):
        raise UnsupportedModelError(
            f"The LightGBM model has {len(seen)} categorical features but pandas "
            f"categories for {len(pandas)} columns, so its codes cannot be matched "
            "to labels; expected every categorical feature given as a pandas "
            "categorical column (or none)."
        )
    specs = [FeatureSpec(str(name)) for name in names]
    for position, (j, values) in enumerate(sorted(seen.items())):
        if pandas:
            labels = tuple(
                v.item() if isinstance(v, np.generic) else v for v in pandas[position]
            )
        else:
            labels = tuple(range(max((int(v) for v in values), default=-1) + 1))
        # LightGBM casts a number to int (3.7 is category 3); the codes of
        # pandas categories reach it only as codes.
        specs[j] = FeatureSpec(
            str(names[j]), "categorical", labels, truncates=not pandas
        )
    return tuple(specs)


def _exact_cover(
    left: np.ndarray, right: np.ndarray, depth: np.ndarray, cover: np.ndarray
) -> np.ndarray:
    """Hessian sums of split nodes as the sum of their leaves' sums.

    The dump prints ``internal_weight`` with six significant digits only, but
    ``leaf_weight`` in full; summing the leaves bottom up, one depth level at a
    time, recovers the split nodes' sums to double precision.
    """
    cover = cover.astype(np.float64, copy=True)
    if np.isnan(cover[left == -1]).any():
        return cover
    for level in range(int(depth.max()), -1, -1):
        inner = np.flatnonzero((depth == level) & (left != -1))
        cover[inner] = cover[left[inner]] + cover[right[inner]]
    return cover


def _parse(
    dump: dict[str, Any], feature_names: Sequence[str] | None
) -> tuple[dict[str, Any], list[Tree], list[SplitStatistics]]:
    if not isinstance(dump, dict) or "tree_info" not in dump:
        raise InputError(
            "Not a LightGBM model dump; expected the mapping `Booster.dump_model()` "
            f"returns (with 'tree_info'), got {type(dump).__name__}."
        )
    task, link, loss = _objective(dump)
    n_features = int(dump["max_feature_idx"]) + 1
    names, has_names = resolve_feature_names(
        dump.get("feature_names"),
        n_features,
        feature_names,
        auto_pattern=r"Column_(\d+)",
    )
    infos = dump["tree_info"]
    if any(info.get("is_linear") for info in infos):
        raise _linear_trees_refused()
    features = _features(dump, names)
    n_categories = np.array([spec.n_categories for spec in features], dtype=np.intp)
    parsed = [
        _flatten(info["tree_structure"], i, names, n_categories)
        for i, info in enumerate(infos)
    ]
    per_round = int(dump.get("num_tree_per_iteration", 1))
    n_rounds = len(infos) // per_round
    n_classes = int(dump.get("num_class", 1))
    info = {
        "loss": "" if dump.get("average_output") else loss,
        "task": task,
        "link": link,
        "names": names,
        "has_names": has_names,
        "features": features,
        "n_features": n_features,
        "n_classes": max(n_classes, 2) if task == "classification" else 0,
        "n_outputs": per_round,
        "learning_rate": 1.0 / n_rounds
        if dump.get("average_output") and n_rounds
        else 1.0,
        "tree_output": np.tile(np.arange(per_round, dtype=np.intp), n_rounds),
    }
    return info, [p[0] for p in parsed], [p[1] for p in parsed]


def forest_from_lightgbm_dump(
    dump: dict[str, Any],
    *,
    feature_names: Sequence[str] | None = None,
    classes: Any = None,
    source: str = "lightgbm.Booster",
    boosting: str = "gbdt",
    tweedie_variance_power: float = 1.5,
) -> Forest:
    """Build a Forest from a LightGBM model dump.

    Parameters
    ----------
    dump : dict
        The mapping ``Booster.dump_model()`` returns.
    feature_names : sequence of str, optional
        Must equal the names stored in the model, unless those are LightGBM's
        invented ``Column_0, Column_1, ...``.
    classes : array-like, optional
        Class labels of a classifier; ``0 .. n_classes - 1`` by default.
    source : str
        Dotted class path recorded as ``Forest.source``.
    boosting : str, default="gbdt"
        LightGBM's ``boosting`` parameter, which the dump does not record.  Only
        gradient boosting (``"gbdt"``, ``"goss"``) gets a ``Forest.loss`` whose stages
        :func:`treelens.node_statistics` can replay (DART rescales its trees
        after fitting them; random forests fit every tree on the same gradient).
    tweedie_variance_power : float, default=1.5
        LightGBM's ``tweedie_variance_power``, which the dump does not record
        either: the ``Forest.loss_power`` of a ``"tweedie"`` loss.

    Returns
    -------
    Forest
    """
    info, trees, _ = _parse(dump, feature_names)
    loss = info["loss"] if boosting in ("gbdt", "goss") else ""
    return boosting_forest(
        info,
        trees,
        classes=classes,
        criterion="lightgbm_gain",
        source=source,
        init_raw=np.zeros(info["n_outputs"]),
        learning_rate=info["learning_rate"],
        input_dtype=np.float64,
        c_exponential=True,
        loss=loss,
        loss_power=float(tweedie_variance_power) if loss == "tweedie" else None,
        features=info["features"],
        # Fitted on numbers, it reads an array's numbers as they are (by
        # their whole part); fitted on pandas categories, as their codes.
        arrays_hold_labels=any(spec.truncates for spec in info["features"]),
    )


def lightgbm_split_statistics(dump: dict[str, Any]) -> list[SplitStatistics]:
    """Gain and cover at every node of every tree, aligned with the Forest's nodes."""
    return _parse(dump, None)[2]


def _tweedie_variance_power(booster: Any) -> float:
    """The ``tweedie_variance_power`` a Booster was fitted with, as its model
    string records it among its parameters (LightGBM's default 1.5 if not)."""
    # The parameters follow the trees, of which one round is enough.
    text = booster.model_to_string(num_iteration=1)
    match = re.search(r"^\[tweedie_variance_power: ([^\]]+)\]$", text, re.MULTILINE)
    return float(match.group(1)) if match else 1.5


def _class_path(model: Any) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def booster_of(model: Any) -> Any:
    """The fitted ``lightgbm.Booster`` of a Booster or scikit-learn wrapper."""
    if hasattr(model, "dump_model"):
        return model
    try:
        return model.booster_
    except Exception as exc:  # LightGBM raises scikit-learn's NotFittedError
        raise NotFittedError(
            f"This {type(model).__name__} is not fitted yet; expected a fitted model. "
            "Call `fit` first."
        ) from exc


@register_adapter(
    "lightgbm.Booster", "lightgbm.LGBMClassifier", "lightgbm.LGBMRegressor"
)
def _lightgbm(model: Any, feature_names: Sequence[str] | None) -> Forest:
    booster = booster_of(model)
    params = getattr(booster, "params", None) or {}
    boosting = params.get("boosting", params.get("boosting_type", "gbdt"))
    dump = booster.dump_model()
    # The dump does not record the Tweedie power; read it only where it is used.
    tweedie = _objective(dump)[2] == "tweedie"
    return forest_from_lightgbm_dump(
        dump,
        feature_names=feature_names,
        classes=getattr(model, "classes_", None) if booster is not model else None,
        source=_class_path(model),
        boosting=str(boosting),
        tweedie_variance_power=_tweedie_variance_power(booster) if tweedie else 1.5,
    )
