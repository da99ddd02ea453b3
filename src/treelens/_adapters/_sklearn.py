"""Adapter for scikit-learn's decision trees, random forests, extra trees,
bagged trees, gradient boosting and AdaBoost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .._core._forest import Forest, Link, Tree
from .._exceptions import InputError, NotFittedError, UnsupportedModelError
from ._registry import register_adapter

__all__: list[str] = []

_SINGLE_TREES = (
    "sklearn.DecisionTreeClassifier",
    "sklearn.DecisionTreeRegressor",
    "sklearn.ExtraTreeClassifier",
    "sklearn.ExtraTreeRegressor",
)
_AVERAGING = (
    "sklearn.RandomForestClassifier",
    "sklearn.RandomForestRegressor",
    "sklearn.ExtraTreesClassifier",
    "sklearn.ExtraTreesRegressor",
)
_BOOSTING = ("sklearn.GradientBoostingClassifier", "sklearn.GradientBoostingRegressor")
_BAGGING = ("sklearn.BaggingClassifier", "sklearn.BaggingRegressor")
_ADABOOST = ("sklearn.AdaBoostClassifier",)
_TREE_CLASSES = (
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
)


def _class_path(model: Any) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def _check_fitted(model: Any) -> None:
    from sklearn.exceptions import NotFittedError as SklearnNotFitted
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except SklearnNotFitted as exc:
        raise NotFittedError(
            f"This {type(model).__name__} is not fitted yet; expected a fitted model, "
            "got one without fitted attributes. Call `fit` first."
        ) from exc


def _resolve_names(
    model: Any, feature_names: Sequence[str] | None
) -> tuple[tuple[str, ...], bool]:
    n_features = int(model.n_features_in_)
    fitted = getattr(model, "feature_names_in_", None)
    if feature_names is not None:
        names = tuple(str(n) for n in feature_names)
        if len(names) != n_features:
            raise InputError(
                f"`feature_names` must have one name per feature; expected "
                f"{n_features}, got {len(names)}."
            )
        if fitted is not None and names != tuple(map(str, fitted)):
            raise InputError(
                "`feature_names` differ from the model's `feature_names_in_`; "
                f"expected {list(map(str, fitted))}, got {list(names)}."
            )
        return names, True
    if fitted is not None:
        return tuple(map(str, fitted)), True
    return tuple(f"x{i}" for i in range(n_features)), False


def _allow_missing(model: Any) -> bool:
    try:
        from sklearn.utils import get_tags
    except ImportError:  # scikit-learn < 1.6
        return bool(model._get_tags().get("allow_nan", False))
    return bool(get_tags(model).input_tags.allow_nan)


def tree_from_sklearn(tree_: Any) -> Tree:
    """Build a :class:`Tree` from a scikit-learn ``Tree`` object (``estimator.tree_``)."""
    if tree_.n_outputs != 1:
        raise UnsupportedModelError(
            "Multi-output trees are not supported; expected a tree with one output, "
            f"got one with {tree_.n_outputs} outputs."
        )
    missing = getattr(tree_, "missing_go_to_left", None)
    if missing is None:
        missing = np.zeros(tree_.node_count, dtype=bool)
    return Tree(
        children_left=tree_.children_left,
        children_right=tree_.children_right,
        feature=tree_.feature,
        threshold=tree_.threshold,
        missing_go_left=np.asarray(missing).astype(bool),
        value=tree_.value[:, 0, :],
        impurity=tree_.impurity,
        n_node_samples=tree_.n_node_samples,
        weighted_n_node_samples=tree_.weighted_n_node_samples,
    )


def _check_single_output(model: Any) -> None:
    n_outputs = getattr(model, "n_outputs_", 1)
    if n_outputs != 1:
        raise UnsupportedModelError(
            f"Multi-output models are not supported; expected a {type(model).__name__} "
            f"fitted on one target, got one fitted on {n_outputs} targets."
        )


@register_adapter(*_SINGLE_TREES, *_AVERAGING)
def _averaging(model: Any, feature_names: Sequence[str] | None) -> Forest:
    _check_fitted(model)
    _check_single_output(model)
    names, has_names = _resolve_names(model, feature_names)
    is_single = hasattr(model, "tree_")
    estimators = [model] if is_single else list(model.estimators_)
    is_classifier = hasattr(model, "classes_")
    return Forest(
        trees=tuple(tree_from_sklearn(e.tree_) for e in estimators),
        kind="tree" if is_single else "forest",
        task="classification" if is_classifier else "regression",
        n_features=int(model.n_features_in_),
        feature_names=names,
        has_feature_names=has_names,
        classes_=model.classes_ if is_classifier else None,
        criterion=str(model.criterion),
        input_dtype=np.float32,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        class_weight=_class_weight(model) if is_classifier else None,
    )


@register_adapter(*_BAGGING)
def _bagging(model: Any, feature_names: Sequence[str] | None) -> Forest:
    """Bagged decision trees: the average of the trees' outputs, as a random
    forest, each tree reading the subset of columns it was fitted on.

    ``BaggingClassifier.predict_proba`` adds up the trees' class fractions in
    order and divides by the number of trees;
    ``BaggingRegressor.predict`` averages the trees' predictions likewise.
    """
    _check_fitted(model)
    base = _tree_template(model)
    _check_single_output(model.estimators_[0])
    names, has_names = _resolve_names(model, feature_names)
    is_classifier = hasattr(model, "classes_")
    n_classes = len(model.classes_) if is_classifier else 1
    trees = []
    for estimator, features in zip(model.estimators_, model.estimators_features_):
        tree = tree_from_sklearn(estimator.tree_)
        columns = np.asarray(features, dtype=np.intp)
        split = tree.feature >= 0
        feature = np.where(split, columns[np.where(split, tree.feature, 0)], -2)
        value = tree.value
        if is_classifier and value.shape[1] != n_classes:
            # scikit-learn fits every tree on all rows, weighted by how often
            # each was drawn, so each knows every class.
            raise UnsupportedModelError(
                f"A tree of this {type(model).__name__} knows {value.shape[1]} "
                f"classes; expected the model's {n_classes}."
            )
        trees.append(
            Tree(
                children_left=tree.children_left,
                children_right=tree.children_right,
                feature=feature,
                threshold=tree.threshold,
                missing_go_left=tree.missing_go_left,
                value=value,
                impurity=tree.impurity,
                n_node_samples=tree.n_node_samples,
                weighted_n_node_samples=tree.weighted_n_node_samples,
            )
        )
    return Forest(
        trees=tuple(trees),
        kind="forest",
        task="classification" if is_classifier else "regression",
        n_features=int(model.n_features_in_),
        feature_names=names,
        has_feature_names=has_names,
        classes_=model.classes_ if is_classifier else None,
        criterion=str(base.criterion),
        input_dtype=np.float32,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        class_weight=_class_weight(base) if is_classifier else None,
    )


def _tree_template(model: Any) -> Any:
    """The unfitted template of an ensemble's trees, refused unless a
    scikit-learn decision tree."""
    base = model.estimator_
    if type(base).__module__.split(".")[0] != "sklearn" or (
        type(base).__name__ not in _TREE_CLASSES
    ):
        raise UnsupportedModelError(
            f"{type(model).__name__} is supported with decision trees only; "
            f"expected an estimator among {', '.join(_TREE_CLASSES)}, got "
            f"{type(base).__name__}."
        )
    return base


@register_adapter(*_ADABOOST)
def _adaboost(model: Any, feature_names: Sequence[str] | None) -> Forest:
    """AdaBoost (SAMME) over decision trees: a weighted vote of the trees' labels.

    ``AdaBoostClassifier.decision_function`` adds, tree after tree, each tree's
    weight ``w`` to the class it predicts and ``-w / (K - 1)`` to every other
    class, then divides by the total of the weights; with two classes it keeps
    the second class's sum minus the first's.  The Forest holds the same terms:

    - two classes: one tree per estimator, its node values ``w`` where the node
      predicts the second class and ``-w`` elsewhere, the sum divided by half
      the total (``raw_divisor``): the raw score is ``decision_function``, to
      the last bit, and a score of exactly 0 predicts the first class;
    - ``K > 2`` classes: each estimator once per class (stage-major, as
      multiclass boosting), with values ``w`` where the node predicts that
      class and ``-1 / (K - 1) * w`` elsewhere; the raw scores are
      ``decision_function``.

    ``link="samme"`` turns them into ``predict_proba``; the trees' weights are
    their weights in MDI, as in ``feature_importances_``.
    """
    _check_fitted(model)
    _tree_template(model)
    names, has_names = _resolve_names(model, feature_names)
    n_classes = len(model.classes_)
    if n_classes < 2:
        raise UnsupportedModelError(
            f"This AdaBoostClassifier was fitted on {n_classes} class; expected at "
            "least 2 classes."
        )
    total = model.estimator_weights_.sum()  # as decision_function divides
    if not (np.isfinite(total) and total > 0):
        raise UnsupportedModelError(
            "This AdaBoostClassifier's estimator weights sum to "
            f"{float(total)!r}; expected a positive total."
        )
    n_outputs = 1 if n_classes == 2 else n_classes
    trees, weights = [], []
    for estimator, weight in zip(model.estimators_, model.estimator_weights_):
        _check_single_output(estimator)
        tree = tree_from_sklearn(estimator.tree_)
        if tree.value.shape[1] != n_classes:
            raise UnsupportedModelError(
                f"A tree of this AdaBoostClassifier knows {tree.value.shape[1]} "
                f"classes; expected the model's {n_classes}."
            )
        # The class each node predicts, as the tree's own `predict`.
        label = np.argmax(tree.value, axis=1)
        other = -1 / (n_classes - 1) * weight
        votes = [1] if n_classes == 2 else range(n_classes)
        for k in votes:
            value = np.where(label == k, weight, other).astype(np.float64)
            trees.append(replace(tree, value=value[:, None]))
            weights.append(float(weight))
    divisor = float(total / 2) if n_classes == 2 else float(total)
    return Forest(
        trees=tuple(trees),
        kind="boosting",
        task="classification",
        n_features=int(model.n_features_in_),
        feature_names=names,
        has_feature_names=has_names,
        classes_=model.classes_,
        criterion=str(model.estimator_.criterion),
        init_raw=np.zeros(n_outputs),
        learning_rate=1.0 / divisor,
        link="samme",
        tree_output=np.tile(np.arange(n_outputs), len(trees) // n_outputs),
        input_dtype=np.float32,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        positive_at_zero=False,
        raw_divisor=divisor,
        tree_weight=np.asarray(weights),
    )


def _class_weight(model: Any) -> dict[Any, float] | str | None:
    class_weight = getattr(model, "class_weight", None)
    if isinstance(class_weight, dict):
        return {key: float(weight) for key, weight in class_weight.items()}
    return class_weight


@register_adapter(*_BOOSTING)
def _gradient_boosting(model: Any, feature_names: Sequence[str] | None) -> Forest:
    _check_fitted(model)
    names, has_names = _resolve_names(model, feature_names)
    n_features = int(model.n_features_in_)
    init = model.init
    if init is not None and init != "zero":
        raise UnsupportedModelError(
            "Gradient boosting with a custom `init` estimator is not supported: its "
            "initial score depends on each row; expected init=None or 'zero', got "
            f"{type(init).__name__}."
        )
    init_raw = np.asarray(
        model._raw_predict_init(np.zeros((1, n_features), np.float32))
    )
    stages = model.estimators_
    n_stages, n_outputs = stages.shape
    is_classifier = hasattr(model, "classes_")
    link: Link
    if not is_classifier:
        link = "identity"
    elif model.loss == "exponential":
        link = "exponential"
    else:
        link = "logistic" if n_outputs == 1 else "softmax"
    return Forest(
        trees=tuple(
            tree_from_sklearn(stages[i, k].tree_)
            for i in range(n_stages)
            for k in range(n_outputs)
        ),
        kind="boosting",
        task="classification" if is_classifier else "regression",
        n_features=n_features,
        feature_names=names,
        has_feature_names=has_names,
        classes_=model.classes_ if is_classifier else None,
        # The stage trees' own criterion: scikit-learn >= 1.9 fits them with
        # squared_error whatever the (deprecated) `criterion` parameter says.
        criterion=str(stages[0, 0].criterion),
        init_raw=init_raw.reshape(-1),
        learning_rate=float(model.learning_rate),
        link=link,
        tree_output=np.tile(np.arange(n_outputs), n_stages),
        input_dtype=np.float32,
        allow_missing=_allow_missing(model),
        source=_class_path(model),
        loss=str(model.loss),
        loss_alpha=float(model.alpha) if model.loss in ("huber", "quantile") else None,
    )
