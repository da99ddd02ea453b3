"""What a counterfactual must achieve: a class, "any other class", or an interval.

Shared by :func:`~treelens.feature_tweak` and :func:`~treelens.optimal_counterfactual`.

- :func:`resolve_target` checks the user's ``target`` against a :class:`Forest`
  and returns a :class:`Target`.
- :meth:`Target.meets` is the vectorized predicate "this prediction meets the
  target" (the final word on validity, applied to predictions of the full model).
- :func:`voting_trees` and :func:`target_leaf_mask` say which trees and leaves
  feature tweaking builds candidates from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest

__all__ = [
    "Target",
    "encode_classes",
    "resolve_target",
    "target_leaf_mask",
    "voting_trees",
]

TargetKind = Literal["class", "other", "interval"]


@dataclass(frozen=True)
class Target:
    """A resolved target.

    Attributes
    ----------
    kind : {"class", "other", "interval"}
        ``"class"``: the prediction must equal ``label``.  ``"other"``: the
        prediction must differ from the row's current prediction (classifiers).
        ``"interval"``: the predicted value must lie in the closed interval
        ``[low, high]``, ``low < high`` (regressors).
    label : object
        The class label (``kind == "class"``), else None.
    index : int
        Position of ``label`` in ``forest.classes_``; -1 unless ``kind == "class"``.
    low, high : float
        Interval bounds (``kind == "interval"``); ``-inf`` / ``inf`` when open.
    """

    kind: TargetKind
    label: Any = None
    index: int = -1
    low: float = -np.inf
    high: float = np.inf

    def meets(
        self, predictions: NDArray[Any], current: NDArray[Any]
    ) -> NDArray[np.bool_]:
        """Whether each prediction meets the target.

        Parameters
        ----------
        predictions : ndarray of shape (n,)
            Predictions (class labels or values) of the full model.
        current : ndarray of shape (n,)
            Prediction of the original row each prediction belongs to (used by
            ``"other"``).

        Returns
        -------
        ndarray of shape (n,), dtype bool
        """
        predictions = np.asarray(predictions)
        if self.kind == "class":
            return predictions == self.label
        if self.kind == "other":
            return predictions != np.asarray(current)
        values = predictions.astype(np.float64)
        return (values >= self.low) & (values <= self.high)

    def describe(self) -> str:
        """A short human-readable form (``"class 2"``, ``"[0.5, inf]"``, ...)."""
        if self.kind == "class":
            label = (
                self.label.item() if isinstance(self.label, np.generic) else self.label
            )
            return f"class {label!r}"
        if self.kind == "other":
            return "any other class"
        return f"[{self.low}, {self.high}]"


def _is_interval(target: Any) -> bool:
    return isinstance(target, (tuple, list, np.ndarray)) and not isinstance(target, str)


def resolve_target(forest: Forest, target: Any) -> Target:
    """Check ``target`` against ``forest`` and resolve it.

    Parameters
    ----------
    forest : Forest
    target : class label, "other", (low, high), "inlier" or "outlier"
        A class label or ``"other"`` for classifiers; an interval
        ``(low, high)`` of the predicted value for regressors (``None`` for an
        open side); for an IsolationForest, ``"inlier"`` (``score_samples`` at
        least its ``offset_``, what its ``predict`` calls 1) or ``"outlier"``
        (below it).

    Returns
    -------
    Target

    Raises
    ------
    InputError
        If the label is not one of the model's classes, an interval is given to
        a classifier, a label to a regressor, or the interval is malformed:
        not two numbers (or None), NaN, both ends open, ``low > high``, or a
        point (``low == high``), which no search can aim for.
    """
    if forest.is_classifier:
        assert forest.classes_ is not None
        classes = forest.classes_.tolist()
        if _is_interval(target):
            raise InputError(
                "An interval target is for regressors only; expected one of the "
                f"model's classes {classes} or 'other', got {target!r}."
            )
        if isinstance(target, str) and target == "other" and "other" not in classes:
            return Target(kind="other")
        for i, label in enumerate(classes):
            if _same_label(label, target):
                return Target(kind="class", label=forest.classes_[i], index=i)
        raise InputError(
            f"`target` must be one of the model's classes {classes} or 'other'; "
            f"got {target!r}."
        )
    if isinstance(target, str) and target in ("inlier", "outlier"):
        return _isolation_target(forest, target)
    if not _is_interval(target):
        raise InputError(
            "The model is a regressor, so `target` must be an interval (low, high) "
            "of the predicted value"
            + (" or 'inlier' or 'outlier'" if forest.link == "isolation" else "")
            + f"; got {target!r}."
        )
    if len(target) != 2:
        raise InputError(
            f"An interval target must have two bounds (low, high); got {len(target)} "
            f"values: {target!r}."
        )
    try:
        low = -np.inf if target[0] is None else float(target[0])
        high = np.inf if target[1] is None else float(target[1])
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"An interval target must hold two numbers (or None); got {target!r}."
        ) from exc
    if (
        np.isnan(low)
        or np.isnan(high)
        or low > high
        or (low == -np.inf and high == np.inf)
    ):
        raise InputError(
            "An interval target must satisfy low < high with at least one finite "
            f"bound and no NaN; got ({low}, {high})."
        )
    if low == high:
        # A prediction is a float64 sum of leaf values, rounded in the model's
        # own order: one value is met only by a sum equal to it in every bit,
        # which no search can aim for (the solver works within tolerances).
        raise InputError(
            "An interval target must be a range, low < high: a point target asks "
            "for a prediction equal to it in every bit, which a sum of leaf values "
            "rounded in the model's own order rarely is; expected a range around "
            f"it, such as ({low!r} - tol, {high!r} + tol); got ({low}, {high})."
        )
    return Target(kind="interval", low=low, high=high)


def _isolation_target(forest: Forest, target: str) -> Target:
    """The scores an IsolationForest calls inliers (at least its offset) or
    outliers (below it)."""
    offset = forest.isolation_offset
    if forest.link != "isolation" or offset is None:
        raise InputError(
            f"`target={target!r}` is for an IsolationForest (its scores above or "
            "below its offset_); this model is another regressor, so expected an "
            f"interval (low, high) of its predicted value, got {target!r}."
        )
    if target == "inlier":
        return Target(kind="interval", low=offset, high=np.inf)
    return Target(
        kind="interval", low=-np.inf, high=float(np.nextafter(offset, -np.inf))
    )


def _same_label(label: Any, target: Any) -> bool:
    if isinstance(label, str) != isinstance(target, str):
        return False
    try:
        return bool(label == target)
    except (TypeError, ValueError):
        return False


def encode_classes(forest: Forest, labels: NDArray[Any]) -> NDArray[np.intp]:
    """Positions of class ``labels`` in ``forest.classes_``, shape (n,)."""
    assert forest.classes_ is not None
    classes = forest.classes_
    order = np.argsort(classes, kind="stable")
    pos = np.searchsorted(classes, labels, sorter=order)
    return order[np.clip(pos, 0, len(classes) - 1)].astype(np.intp)


def voting_trees(
    forest: Forest, target: Target, leaves: NDArray[np.intp], current: NDArray[Any]
) -> NDArray[np.bool_]:
    """Trees that feature tweaking builds candidates from, per row.

    Averaging classifiers: the trees whose own prediction (argmax of their leaf's
    class fractions, first class on ties) equals the ensemble's current
    prediction.  Averaging regressors: the trees whose leaf value lies outside the
    target interval.  Boosting: every tree (trees do not vote).

    Parameters
    ----------
    forest : Forest
    target : Target
    leaves : ndarray of shape (n, n_trees)
        Leaf reached by each row in each tree (``forest._apply``).
    current : ndarray of shape (n,)
        The ensemble's prediction for each row.

    Returns
    -------
    ndarray of shape (n, n_trees), dtype bool
    """
    if forest.kind == "boosting":
        return np.ones(leaves.shape, dtype=bool)
    values = forest._tree_values(leaves)
    if forest.is_classifier:
        return np.argmax(values, axis=2) == encode_classes(forest, current)[:, None]
    value = values[:, :, 0]
    return (value < target.low) | (value > target.high)


def target_leaf_mask(
    forest: Forest, target: Target, leaves: NDArray[np.intp], current: NDArray[Any]
) -> NDArray[np.bool_]:
    """Leaves that count as target leaves, per row, over ``leaf_boxes(forest)``.

    - Averaging classifiers: the leaf's argmax class is the target class (or, for
      ``"other"``, is not the row's current class).
    - Averaging regressors: the leaf value lies in ``[low, high]``.
    - Boosting: the leaf's contribution moves the raw score towards the target
      compared with the leaf the row reaches now in the same tree (strictly):
      up for the raw output of the target class and down for the others
      (``"other"``: down for the current class, up for the others; binary
      models have one raw output, positive for the second class; regressors move
      up when below ``low``, down when above ``high``).

    Parameters
    ----------
    forest : Forest
    target : Target
    leaves : ndarray of shape (n, n_trees)
        Leaf reached by each row in each tree.
    current : ndarray of shape (n,)
        The ensemble's prediction for each row.

    Returns
    -------
    ndarray of shape (n, n_leaves_total), dtype bool
        Columns follow the rows of :func:`~treelens.leaf_boxes`.
    """
    from .._core._boxes import leaf_boxes

    boxes = leaf_boxes(forest)
    n = leaves.shape[0]
    if forest.kind != "boosting":
        if forest.is_classifier:
            leaf_class = np.argmax(boxes.value, axis=1)
            if target.kind == "class":
                return np.broadcast_to(
                    leaf_class == target.index, (n, boxes.n_leaves)
                ).copy()
            return leaf_class[None, :] != encode_classes(forest, current)[:, None]
        value = boxes.value[:, 0]
        inside = (value >= target.low) & (value <= target.high)
        return np.broadcast_to(inside, (n, boxes.n_leaves)).copy()
    direction = _boosting_direction(forest, target, current)  # (n, n_outputs)
    tree_dir = direction[:, forest.tree_output]  # (n, n_trees)
    now = forest._tree_values(leaves)[:, :, 0]  # (n, n_trees)
    delta = boxes.value[None, :, 0] - now[:, boxes.tree]
    return delta * tree_dir[:, boxes.tree] > 0


def _boosting_direction(
    forest: Forest, target: Target, current: NDArray[Any]
) -> NDArray[np.float64]:
    """+1 / -1 per row and raw output: which way that output should move."""
    n, n_out = len(current), forest.n_outputs
    if not forest.is_classifier:
        values = np.asarray(current, dtype=np.float64)
        sign = np.where(
            values < target.low, 1.0, np.where(values > target.high, -1.0, 0.0)
        )
        return sign[:, None]
    if n_out == 1:
        if target.kind == "class":
            want = np.full(n, target.index)
        else:
            want = 1 - encode_classes(forest, current)
        return np.where(want == 1, 1.0, -1.0)[:, None]
    if target.kind == "class":
        out = -np.ones((n, n_out))
        out[:, target.index] = 1.0
        return out
    out = np.ones((n, n_out))
    out[np.arange(n), encode_classes(forest, current)] = -1.0
    return out
