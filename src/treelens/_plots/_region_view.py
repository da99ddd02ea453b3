"""Choosing the two features and the reference row of a decision-region picture.

With every other feature at its median, a model often predicts one class over the
whole window of its two most important features: the picture says nothing.
:func:`choose_region_view` tries the pairs among the most important features and
a few reference rows, and keeps the view whose predicted classes are split most
evenly.  No drawing; tree models are predicted from their leaves' boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._common import class_labels
from ._display_regions import DecisionRegionDisplay, as_array, forest_or_none
from ._partition import resolve_reference

__all__ = ["RegionView", "choose_region_view"]


@dataclass(frozen=True, eq=False)
class RegionView:
    """Two features and a reference row for a decision-region picture.

    Attributes
    ----------
    features : (str, str)
    reference : ndarray of shape (n_features,)
    reference_label : str
        Where the reference comes from (``"the median of the data"``, ``"the
        median of the rows predicted benign"``).
    share : float
        Part of the window predicted as another class than the most common one
        (0: one class everywhere).
    caption : str
        How the view was chosen, for the picture's caption.
    """

    features: tuple[str, str]
    reference: NDArray[np.float64]
    reference_label: str
    share: float
    caption: str


def _typical_row(X: NDArray[np.float64], forest: Any) -> NDArray[np.float64] | None:
    """The median row of ``X`` (missing values left out, the most frequent
    category of a categorical column), or None when a column has no value."""
    n_categories = forest.n_categories if forest is not None else None
    try:
        return resolve_reference(X, None, X.shape[1], n_categories)
    except InputError:
        return None


def _references(
    model: Any, X: NDArray[np.float64], class_names: Sequence[str] | None
) -> list[tuple[NDArray[np.float64], str]]:
    """The median row; the row the model is least sure of; the median row of
    each predicted class.

    Medians leave missing values out and take a categorical column's most
    frequent category; the least sure row is one with every value present.
    """
    forest = forest_or_none(model)
    n_categories = forest.n_categories if forest is not None else None
    # A column with no value at all leaves no reference: refused, naming it.
    median = resolve_reference(X, None, X.shape[1], n_categories)
    out = [(median, "the median of the data")]
    complete = np.isfinite(X).all(axis=1)
    proba: NDArray[np.float64] | None = None
    if forest is not None:  # X holds codes (as_array): routed as they are
        leaves = forest._leaves_of_codes(X)
        if forest.is_classifier:
            proba = forest._proba_from_leaves(leaves)
        predicted = np.asarray(forest._predict_from_leaves(leaves))
    else:
        if hasattr(model, "predict_proba"):
            proba = np.asarray(model.predict_proba(X))
        predicted = np.asarray(model.predict(X))
    if proba is not None and complete.any():
        proba = np.sort(proba, axis=1)
        gap = proba[:, -1] - proba[:, -2] if proba.shape[1] > 1 else proba[:, 0]
        row = int(np.flatnonzero(complete)[np.argmin(gap[complete])])
        out.append((X[row], f"row {row}, the one the model is least sure of"))
    classes = list(np.asarray(model.classes_))
    names = class_labels(classes, class_names)
    for c in np.unique(predicted):  # one step per class
        typical = _typical_row(X[predicted == c], forest)
        if typical is None:
            continue
        name = names[classes.index(c)] if c in classes else str(c)
        out.append((typical, f"the median of the rows predicted {name}"))
    return out


def choose_region_view(
    model: Any,
    X: Any,
    candidates: Sequence[str],
    *,
    class_names: Sequence[str] | None = None,
    resolution: int = 24,
) -> RegionView:
    """The pair of ``candidates`` and the reference row whose regions show most.

    Every pair of ``candidates`` (say the six most important features) is
    predicted on a ``resolution`` x ``resolution`` grid over the data's window,
    the other features held at the median row, at the row the model is least
    sure of (smallest gap between its two highest class probabilities), then at
    the median row of each predicted class; the view whose predictions are split most evenly between
    classes wins (ties: the earlier pair, the median first).

    Parameters
    ----------
    model : fitted classifier
    X : array-like of shape (n_samples, n_features)
    candidates : sequence of str
        Feature names in order of preference, at least two.
    class_names : sequence of str, optional
        Names of the model's classes, for the caption.
    resolution : int, default=24

    Returns
    -------
    RegionView

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> top = forest.feature_names_in_[forest.feature_importances_.argsort()[::-1][:4]]
    >>> choose_region_view(forest, X, list(top)).share > 0
    True
    """
    forest = forest_or_none(model)
    Xa = as_array(X, forest)
    names = list(candidates)
    pairs = list(combinations(names, 2))
    best: tuple[float, tuple[str, str], NDArray[np.float64], str] | None = None
    for reference, label in _references(model, Xa, class_names):
        for pair in pairs:
            view = DecisionRegionDisplay._compute(
                model,
                Xa,
                features=pair,
                reference=reference,
                grid_resolution=resolution,
            )
            _, counts = np.unique(view.predictions, return_counts=True)
            share = 1.0 - counts.max() / counts.sum()
            if best is None or share > best[0] + 1e-12:
                best = (share, pair, reference, label)
    if best is None:
        raise InputError(f"`candidates` must name at least two features; got {names}.")
    share, pair, reference, label = best
    if share == 0.0:
        caption = (
            f"{pair[0]} and {pair[1]}, {label}: every pair of the "
            f"{len(names)} most important features and every reference row tried "
            "predicts one class over the whole window, so this view shows one class."
        )
    else:
        caption = (
            f"{pair[0]} and {pair[1]}, the other features at {label}: of the pairs "
            f"of the {len(names)} most important features, with the other features "
            "at the data's median, at the row the model is least sure of or at the "
            "median of each predicted class, the view most evenly split between "
            f"classes ({share:.0%} of the window outside the most common one)."
        )
    return RegionView(
        features=(str(pair[0]), str(pair[1])),
        reference=reference,
        reference_label=label,
        share=float(share),
        caption=caption,
    )
