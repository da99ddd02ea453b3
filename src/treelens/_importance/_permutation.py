"""Permutation importance, as a treelens importance result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from .._core._validation import (
    check_sample_weight,
    check_X,
    check_y,
    column_names,
    in_feature_order,
)
from .._exceptions import InputError
from .._types import ArrayLike, ModelLike, RandomStateLike, ScoringLike
from ._groups import resolve_groups
from ._intervals import DEFAULT_N_BOOTSTRAP, bootstrap_interval, check_interval_options
from ._replay import refuse_isolation
from ._result import ImportanceResult

__all__ = [
    "GroupedPermutationImportance",
    "grouped_permutation_importance",
    "permutation_importance",
]


def permutation_importance(
    model: ModelLike,
    X: ArrayLike,
    y: ArrayLike,
    *,
    n_repeats: int = 5,
    random_state: RandomStateLike = None,
    scoring: ScoringLike = None,
    n_jobs: int | None = None,
    sample_weight: ArrayLike | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
) -> ImportanceResult:
    """Permutation importance of every feature, by scikit-learn.

    A thin wrapper over :func:`sklearn.inspection.permutation_importance`: the
    drop in score when one feature's column is shuffled, averaged over
    ``n_repeats`` shuffles.  Inputs are checked against the model first.

    Parameters
    ----------
    model : fitted estimator or Forest
        A supported tree model.  A model that scikit-learn cannot score
        itself (a :class:`~treelens.Forest`, or a booster read from a model
        file, which has no ``score``) is scored through its Forest, which
        predicts as the model does; a Forest with a ``fitted_model`` (a model
        fitted without feature names, renamed) by that model's predictions.
    X : array-like of shape (n_samples, n_features)
        Preferably held-out rows.
    y : array-like of shape (n_samples,)
    n_repeats : int, default=5
    random_state : int, RandomState instance or None, default=None
    scoring : str, callable or None, default=None
        As scikit-learn's; None uses the model's ``score``.
    n_jobs : int or None, default=None
    sample_weight : array-like of shape (n_samples,), optional
    n_bootstrap : int, default=200
        Replicates of ``interval_``, a percentile bootstrap over the repeats
        (0: none).
    confidence : float, default=0.95

    Returns
    -------
    ImportanceResult
        ``importances_`` the mean drop, ``std_`` its standard deviation over the
        repeats, ``per_tree_`` None, ``method`` ``"permutation"``.

    Raises
    ------
    InputError
        If ``X``, ``y`` or ``sample_weight`` do not fit the model, ``n_repeats``
        is not a positive integer, or ``scoring`` is not one known metric.

    See Also
    --------
    mdi_importance : importance from the trees' impurity decreases.
    grouped_permutation_importance : columns permuted together in groups.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> result = permutation_importance(model, X, y, n_repeats=2, random_state=0)
    >>> result.method, result.importances_.shape
    ('permutation', (4,))
    """
    from sklearn.inspection import permutation_importance as sklearn_permutation

    check_interval_options(n_bootstrap, confidence)
    forest, _, sample_weight = _checked_data(model, X, y, sample_weight)
    model = _scored_model(model, forest)
    scorer = _checked_scorer(model, scoring, n_repeats)
    names = column_names(X)
    if names is not None and forest.has_feature_names:
        X = in_feature_order(forest, X)
    result = sklearn_permutation(
        model,
        X,
        y,
        scoring=scorer,
        n_repeats=int(n_repeats),
        n_jobs=n_jobs,
        random_state=random_state,
        sample_weight=sample_weight,
    )
    index = list(forest.feature_names)
    interval, interval_method = _repeat_interval(
        np.asarray(result.importances), index, n_bootstrap, confidence, random_state
    )
    return ImportanceResult(
        importances_=pd.Series(
            np.asarray(result.importances_mean), index=index, name="importance"
        ),
        std_=pd.Series(np.asarray(result.importances_std), index=index, name="std"),
        per_tree_=None,
        method="permutation",
        interval_=interval,
        interval_method=interval_method,
        can_be_negative=True,
    )


def _checked_data(
    model: Any, X: Any, y: Any, sample_weight: Any
) -> tuple[Forest, NDArray[Any], NDArray[np.float64] | None]:
    """The model as a Forest, ``X`` checked against it, and the weights checked.

    ``y`` is checked against the model and ``X``; ``sample_weight`` None stays
    None.
    """
    forest = to_forest(model)
    refuse_isolation(forest, "Permutation importance")
    checked = check_X(forest, X)
    n_samples = checked.shape[0]
    check_y(forest, y, n_samples)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, n_samples)
    return forest, checked, sample_weight


def _scored_model(model: Any, forest: Forest) -> Any:
    """What scikit-learn scores: the model itself when it is an estimator with
    ``fit`` and ``score``, else its Forest, which predicts as the model does (a
    Forest, or a booster read from a model file, which has no ``score``)."""
    is_estimator = hasattr(model, "fit") and hasattr(model, "score")
    if is_estimator and not isinstance(model, Forest):
        return model
    from ._scored import scored_forest

    return scored_forest(forest)


def _checked_scorer(model: Any, scoring: Any, n_repeats: Any) -> Any:
    """The scorer ``scoring`` names for ``model``, after checking ``n_repeats``.

    One score per permutation is what the importances are made of, so the
    several metrics of a list or dict (which scikit-learn accepts) are refused.
    """
    from sklearn.metrics import check_scoring

    if (
        isinstance(n_repeats, bool)
        or not isinstance(n_repeats, (int, np.integer))
        or n_repeats < 1
    ):
        raise InputError(f"`n_repeats` must be a positive integer; got {n_repeats!r}.")
    expected = (
        "expected a scikit-learn scorer name (sklearn.metrics.get_scorer_names()), "
        "a callable scorer(model, X, y) or None"
    )
    if scoring is not None and not isinstance(scoring, str) and not callable(scoring):
        raise InputError(
            f"`scoring` must name one metric; {expected}, got {scoring!r}."
        )
    try:
        return check_scoring(model, scoring=scoring)
    except ValueError as exc:  # scikit-learn's InvalidParameterError among them
        raise InputError(
            f"`scoring` is not a known scorer; {expected}, got {scoring!r}."
        ) from exc


def _repeat_interval(
    per_repeat: Any, index: list[str], n_bootstrap: int, confidence: float, seed: Any
) -> tuple[pd.DataFrame | None, str]:
    """Bootstrap over the repeats; ``per_repeat`` is (n_features, n_repeats)."""
    seed = seed if isinstance(seed, (int, np.integer)) else 0
    interval = bootstrap_interval(
        per_repeat.T,
        index,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        random_state=int(seed),
    )
    if interval is None:
        return None, ""
    return interval, (
        f"{confidence:.0%} percentile bootstrap over {per_repeat.shape[1]} "
        f"repeats, {n_bootstrap} replicates"
    )


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class GroupedPermutationImportance(ImportanceResult):
    """Permutation importance of groups of columns permuted together.

    Attributes
    ----------
    importances_ : pandas.Series of shape (n_groups,)
        Mean drop in score when the group's columns are shuffled together (one
        row permutation for all of them), indexed by group name.
    std_ : pandas.Series of shape (n_groups,)
        Standard deviation over the repeats (``ddof=0``, as scikit-learn).
    interval_ : pandas.DataFrame of shape (n_groups, 2) or None
        Percentile bootstrap interval over the repeats.
    groups_ : dict of str to list of str
        The columns of each group, in the model's feature order.
    importances_per_repeat_ : pandas.DataFrame of shape (n_repeats, n_groups)
    baseline_score_ : float
        The score of the unpermuted data.
    """

    groups_: dict[str, list[str]]
    importances_per_repeat_: pd.DataFrame
    baseline_score_: float


def grouped_permutation_importance(
    model: ModelLike,
    X: ArrayLike,
    y: ArrayLike,
    *,
    groups: Mapping[str, Sequence[Any]] | Sequence[Sequence[Any]] | None = None,
    one_hot: bool = True,
    correlation_threshold: float | None = None,
    scoring: ScoringLike = None,
    n_repeats: int = 5,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    sample_weight: ArrayLike | None = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    confidence: float = 0.95,
) -> GroupedPermutationImportance:
    """Permutation importance of groups of columns, shuffled together.

    One-hot columns of one feature, or strongly correlated columns, tell the
    model the same thing: shuffled one at a time, each looks unimportant because
    the others still carry it.  Each group's columns are shuffled with one row
    permutation.  Scoring, repeats and random streams are scikit-learn's
    (:func:`sklearn.metrics.check_scoring`, one ``RandomState`` seeded alike for
    every group, the permutation reshuffled at each repeat), so a group of one
    column gives exactly :func:`sklearn.inspection.permutation_importance`.

    A scikit-learn ``Pipeline`` is scored on the raw rows it takes, one group
    per input column by construction: shuffling an input column shuffles
    every column its steps derive from it (its one-hot columns) together, so a
    pipeline's columns need no listing.  Categorical and boolean input columns
    are never joined into found groups (``one_hot``, ``correlation_threshold``).

    Parameters
    ----------
    model : fitted estimator
    X : array-like of shape (n_samples, n_features)
        Preferably held-out rows (for a pipeline, the DataFrame it takes).
    y : array-like of shape (n_samples,)
    groups : mapping of name to columns, or sequence of column lists, optional
        Groups given by name or index; they take precedence over found groups.
    one_hot : bool, default=True
        Also group runs of adjacent 0/1 columns with exactly one 1 in every row
        (named after their common prefix, ``color_red, color_blue -> color``).
    correlation_threshold : float in (0, 1], optional
        Also group the remaining columns whose absolute Pearson correlation
        reaches it (connected components).
    scoring, n_repeats, random_state, n_jobs, sample_weight
        As :func:`permutation_importance`.
    n_bootstrap : int, default=200
    confidence : float, default=0.95

    Returns
    -------
    GroupedPermutationImportance

    See Also
    --------
    permutation_importance : one column at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> rng = np.random.RandomState(0)
    >>> color = rng.randint(0, 3, 200)
    >>> X = np.column_stack([rng.normal(size=200), np.eye(3)[color]])
    >>> y = (color == 1).astype(int)
    >>> model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> result = grouped_permutation_importance(model, X, y, random_state=0)
    >>> result.groups_
    {'x0': ['x0'], 'x1+x2+x3': ['x1', 'x2', 'x3']}
    """
    from joblib import Parallel, delayed
    from sklearn.utils import check_random_state

    check_interval_options(n_bootstrap, confidence)
    forest, checked, sample_weight = _checked_data(model, X, y, sample_weight)
    model = _scored_model(model, forest)
    scorer = _checked_scorer(model, scoring, n_repeats)
    names = list(forest.feature_names)
    if column_names(X) is not None and forest.has_feature_names:
        X = in_feature_order(forest, X)
    elif column_names(X) is None:
        X = np.array(X, copy=True)
    found = resolve_groups(
        checked,
        names,
        groups,
        one_hot=one_hot,
        correlation_threshold=correlation_threshold,
        # A pipeline's (or a categorical model's) labelled columns stay whole.
        searchable=[spec.kind == "numeric" for spec in forest.features]
        if forest.features
        else None,
    )
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    baseline = _score(scorer, model, X, y, sample_weight)
    scores = Parallel(n_jobs=n_jobs)(
        delayed(_permuted_scores)(
            model, X, y, sample_weight, cols, seed, int(n_repeats), scorer
        )
        for cols in found.values()
    )
    per_repeat = baseline - np.array(scores)  # (n_groups, n_repeats)
    index = list(found)
    interval, interval_method = _repeat_interval(
        per_repeat, index, n_bootstrap, confidence, random_state
    )
    return GroupedPermutationImportance(
        importances_=pd.Series(per_repeat.mean(axis=1), index=index, name="importance"),
        std_=pd.Series(per_repeat.std(axis=1), index=index, name="std"),
        method="grouped permutation",
        interval_=interval,
        interval_method=interval_method,
        can_be_negative=True,
        groups_={k: [names[c] for c in v] for k, v in found.items()},
        importances_per_repeat_=pd.DataFrame(
            per_repeat.T,
            columns=index,
            index=pd.RangeIndex(int(n_repeats), name="repeat"),
        ),
        baseline_score_=float(baseline),
    )


def _score(scorer: Any, model: Any, X: Any, y: Any, sample_weight: Any) -> float:
    if sample_weight is not None:
        return float(scorer(model, X, y, sample_weight=sample_weight))
    return float(scorer(model, X, y))


def _permuted_scores(
    model: Any,
    X: Any,
    y: Any,
    sample_weight: Any,
    cols: list[int],
    seed: int,
    n_repeats: int,
    scorer: Any,
) -> list[float]:
    """Scores with the columns ``cols`` shuffled together, repeat after repeat.

    As scikit-learn's ``_calculate_permutation_scores``: one ``RandomState(seed)``
    per group reshuffles one index array in place each repeat, and the columns
    already shuffled are indexed by it again.
    """
    random_state = np.random.RandomState(seed)
    X_permuted = X.copy()
    shuffling = np.arange(X_permuted.shape[0])
    scores = []
    for _ in range(n_repeats):
        random_state.shuffle(shuffling)
        if hasattr(X_permuted, "iloc"):
            block = X_permuted.iloc[shuffling, cols]
            block.index = X_permuted.index
            X_permuted[list(X_permuted.columns[cols])] = block
        else:
            X_permuted[:, cols] = X_permuted[np.ix_(shuffling, np.asarray(cols))]
        scores.append(_score(scorer, model, X_permuted, y, sample_weight))
    return scores
