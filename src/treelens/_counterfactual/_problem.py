"""What counterfactual searches share: checked inputs, the result, the final check.

Used by :func:`~treelens.feature_tweak` and :func:`~treelens.optimal_counterfactual`:

- :func:`prepare_problem` validates the public arguments once and returns a
  :class:`Problem` (forest, rows in float64, target, cost, epsilon, constraints,
  current leaves and predictions, rows already at the target);
- :func:`finish` confirms every counterfactual with the *source model's own*
  ``predict`` (the Forest is not trusted for that) and against the constraints,
  and builds the :class:`CounterfactualResult`.  A row that fails is a bug: it is
  reported with a :class:`CounterfactualCheckWarning` and returned as not found,
  never as valid.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._features import category_codes, has_labels
from .._core._forest import Forest
from .._core._validation import row_label
from .._exceptions import CounterfactualCheckWarning, InputError, warn
from ._constraints import Constraints, ResolvedConstraints
from ._costs import Cost, resolve_cost
from ._dtypes import nullable_like
from ._epsilon import ResolvedMargin, resolve_epsilon, resolve_margin
from ._inference import DeclaredColumns, infer_constraints, resolve_infer
from ._isolation import IsolationBound, resolve_isolation
from ._missing import FillPlan
from ._plausibility import (
    check_min_leaf_samples,
    nearest_distance,
    node_support,
    point_support,
)
from ._targets import Target, resolve_target

__all__ = [
    "REASON_AT_TARGET",
    "REASON_CHECK_FAILED",
    "REASON_INFEASIBLE",
    "REASON_NEAR_TIE",
    "REASON_NOT_REACHABLE",
    "REASON_NO_FLIP",
    "REASON_NO_OPTION",
    "REASON_TIME_LIMIT",
    "REASON_TOO_NARROW",
    "CounterfactualResult",
    "Problem",
    "as_float64",
    "declared_columns",
    "finish",
    "own_target",
    "prepare_problem",
    "reference_float64",
    "source_predict",
    "stack_options",
]

#: No leaf of the target can be reached under the constraints (no candidate at all).
REASON_NOT_REACHABLE = "no target leaf reachable under the constraints"
#: Candidates exist but none makes the whole ensemble predict the target.
REASON_NO_FLIP = "no candidate flips the ensemble"
#: The exact search proved that no change reaches the target.
REASON_INFEASIBLE = "infeasible: no change reaches the target under the constraints"
#: The exact search stopped at its time limit before finding any counterfactual.
REASON_TIME_LIMIT = "time limit reached before any counterfactual was found"
#: The solver's answers met a range only within its tolerances, the model's own
#: predict rejected them, and the range padded to be safe held nothing: not proven.
REASON_TOO_NARROW = (
    "not settled: the target range is too narrow to hit within the model's "
    "arithmetic (the model's own sums rejected the solver's near misses, and the "
    "range narrowed for safety held none); nothing proved it unreachable: widen "
    "the range"
)
#: As :data:`REASON_TOO_NARROW` for a class: answers only within a tie.
REASON_NEAR_TIE = (
    "not settled: the solver's answers reach the target only within a tie the "
    "model's own sums decide otherwise, and a safer margin found none; nothing "
    "proved the target unreachable"
)
#: A further option of a diverse set: nothing else reaches the target (proven).
REASON_NO_OPTION = (
    "no further option: every other change that reaches the target repeats an "
    "earlier option"
)
#: A further option of a row that already has the target.
REASON_AT_TARGET = (
    "the row already has the target (and the margin and plausibility bounds asked)"
)
#: The source model's own predict (or a constraint) rejected the answer: a bug.
REASON_CHECK_FAILED = (
    "rejected by the source model's predict or the constraints (a bug)"
)


@dataclass(frozen=True, eq=False)
class CounterfactualResult:
    """Counterfactuals of a batch of rows.

    One entry per row, or with ``n_counterfactuals=k`` one per row and option
    (``n_samples`` is then ``k`` times the rows given, row by row, options in
    cost order); ``row_`` and ``option_`` say which.

    Attributes
    ----------
    X_ : ndarray or DataFrame of shape (n_samples, n_features)
        The rows given (a DataFrame in the model's columns when given as one).
    X_cf_ : ndarray or DataFrame of shape (n_samples, n_features)
        The counterfactual of each row; NaN where none was found; the row itself
        where it already met the target (and the margin and plausibility
        bounds asked, if any).  When the rows were given as a DataFrame naming
        the model's columns (a model fitted on a DataFrame, a pipeline, a model
        with categorical splits), a DataFrame in the model's columns and order
        with the rows' index and the given dtypes where the values allow (a
        whole-number column stays integer, a flag boolean; where some row has
        no counterfactual, pandas' nullable ``Int64``, ``boolean``, ... with
        ``<NA>`` in it, as a numpy integer or bool column cannot hold a missing
        value), categories as labels; the model's own ``predict`` takes its
        found rows as they are.
    found_ : ndarray of shape (n_samples,), bool
    cost_ : ndarray of shape (n_samples,)
        Cost of each counterfactual; ``inf`` where none was found, 0 where the row
        itself is the answer.
    at_target_ : ndarray of shape (n_samples,), bool
        Whether the model already gave the row the target (never for
        ``"other"``).  Such a row is its own answer at cost 0, unless a
        ``margin``, ``min_leaf_samples`` or ``isolation_forest`` is asked: then
        it is searched like any other row, and its answer is the least-cost
        point that meets the target *and* them (the row itself at cost 0 where
        it does; ``status_`` and ``reason_`` as for any row).
    reason_ : ndarray of shape (n_samples,), object
        None where found, else why not (one of the ``REASON_*`` strings).
    tree_ : ndarray of shape (n_samples,), int
        Tree whose leaf the counterfactual was built from; -1 when not applicable.
    leaf_ : ndarray of shape (n_samples,), int
        Node id of that leaf in its tree; -1 when not applicable.
    prediction_ : ndarray of shape (n_samples,)
        The model's prediction for each row.
    cf_prediction_ : ndarray of shape (n_samples,), object
        The source model's prediction for each counterfactual; None where not found.
    feature_names_ : tuple of str
    target_ : Target
    cost_name_ : str
    method_ : str
        ``"feature_tweak"`` or ``"optimal_counterfactual"``.
    status_ : ndarray of shape (n_samples,), object, or None
        Exact search only: ``"optimal"``, ``"time_limit"`` or ``"infeasible"``
        (proven).  ``"time_limit"`` is every answer not proven, also one
        stopped before the clock ran out (``reason_`` says why, as for a
        range too narrow to hit within the model's arithmetic).
    gap_ : ndarray of shape (n_samples,), or None
        Exact search only: proven relative optimality gap (0 when optimal).
    epsilon_ : ndarray of shape (n_features,)
        How far past a threshold moved values were placed (0: as close as the
        model's arithmetic allows; see ``epsilon`` of the search).
    margin_ : ndarray of shape (n_features,)
        Robustness margin each mutable feature keeps from every threshold
        (feature units; 0 without a margin).
    vote_margin_ : float
        Least lead of the target in the model's output asked for (0: none).
    leaf_support_ : ndarray of shape (n_samples,)
        Fewest rows held by any tree's leaf the counterfactual reaches (routed
        reference rows, else stored training counts; NaN where unknown or not
        found).
    nearest_distance_ : ndarray of shape (n_samples,)
        Cost from the counterfactual to its nearest reference row (L1 in
        median absolute deviations for costs that are not separable; NaN
        without reference or where not found).
    min_leaf_samples_ : int or None
        Least leaf support asked for.
    anomaly_score_ : ndarray of shape (n_samples,) or None
        With an ``isolation_forest``: its anomaly score of each counterfactual,
        ``-score_samples`` (in ``(0, 1]``, larger is more anomalous; NaN where
        not found); None without one.
    max_anomaly_score_ : float or None
        The bound on it asked for (None without an ``isolation_forest``).
    inferred_ : dict
        Constraints read off ``reference`` and off the dtypes of rows given as
        a DataFrame (bool columns flags, integer columns whole numbers):
        ``{"integer": [...], "flags": [...], "one_hot": [[...], ...]}``
        (feature names); empty with ``infer=False``, and for rows given as an
        array without reference.
    row_ : ndarray of shape (n_samples,), int
        Position of each entry's row in the rows given.
    option_ : ndarray of shape (n_samples,), int
        Option number of each entry (1 for the least-cost one).
    missing_ : ndarray of shape (n_samples, n_features), bool, or None
        Which values of the rows were missing (they stay missing in ``X_cf_``
        unless ``fill_missing`` allowed them to be filled).
    filled_ : ndarray of shape (n_samples, n_features), bool, or None
        Which missing values each counterfactual fills (all False without
        ``fill_missing``).
    fill_start_ : ndarray of shape (n_features,) or None
        With ``fill_missing``: where a filled numeric value starts, its cost
        measured from there (the column's median in the reference data; NaN for
        categorical columns and columns not filled); None without it.
    X_codes_, X_cf_codes_ : ndarray of shape (n_samples, n_features) or None
        With labelled rows: ``X_`` and ``X_cf_`` as the routing codes
        (:meth:`Forest.encode`).
    features_ : tuple of FeatureSpec or None
        With labelled rows: what each column is.
    """

    X_: NDArray[np.float64]
    X_cf_: NDArray[np.float64]
    found_: NDArray[np.bool_]
    cost_: NDArray[np.float64]
    reason_: NDArray[np.object_]
    tree_: NDArray[np.intp]
    leaf_: NDArray[np.intp]
    prediction_: NDArray[Any]
    cf_prediction_: NDArray[np.object_]
    feature_names_: tuple[str, ...]
    target_: Target
    cost_name_: str
    method_: str
    status_: NDArray[np.object_] | None = None
    gap_: NDArray[np.float64] | None = None
    epsilon_: NDArray[np.float64] | None = None
    margin_: NDArray[np.float64] | None = None
    vote_margin_: float = 0.0
    leaf_support_: NDArray[np.float64] | None = None
    nearest_distance_: NDArray[np.float64] | None = None
    min_leaf_samples_: int | None = None
    anomaly_score_: NDArray[np.float64] | None = None
    max_anomaly_score_: float | None = None
    inferred_: dict[str, Any] = dataclasses.field(default_factory=dict)
    row_: NDArray[np.intp] | None = None
    option_: NDArray[np.intp] | None = None
    missing_: NDArray[np.bool_] | None = None
    filled_: NDArray[np.bool_] | None = None
    fill_start_: NDArray[np.float64] | None = None
    X_codes_: NDArray[np.float64] | None = None
    X_cf_codes_: NDArray[np.float64] | None = None
    features_: tuple[Any, ...] | None = None
    at_target_: NDArray[np.bool_] | None = None

    def __post_init__(self) -> None:
        n = int(self.found_.shape[0])
        if self.at_target_ is None:
            object.__setattr__(self, "at_target_", np.zeros(n, dtype=bool))
        if self.row_ is None:
            object.__setattr__(self, "row_", np.arange(n, dtype=np.intp))
        if self.option_ is None:
            object.__setattr__(self, "option_", np.ones(n, dtype=np.intp))
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def __len__(self) -> int:
        return int(self.found_.shape[0])

    def _arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self.X_codes_ is not None and self.X_cf_codes_ is not None:
            return self.X_codes_, self.X_cf_codes_
        return np.asarray(self.X_), np.asarray(self.X_cf_)

    @property
    def changed_(self) -> NDArray[np.bool_]:
        """Mask of shape (n_samples, n_features): features each counterfactual changes."""
        before, after = self._arrays()
        same = (after == before) | (np.isnan(after) & np.isnan(before))
        return self.found_[:, None] & ~same

    def _value(self, table: Any, i: Any, j: Any) -> Any:
        if hasattr(table, "iloc"):
            value = table.iloc[i, j]
            value = value.item() if isinstance(value, np.generic) else value
            # A column held as floats only because another option's row is
            # missing (NaN) shows its whole values as the input's dtype does.
            like = getattr(self.X_, "dtypes", None)
            if like is not None and isinstance(value, float) and value.is_integer():
                kind = like.iloc[j].kind if j < len(like) else "f"
                if kind in "iu":
                    return int(value)
                if kind == "b" and value in (0.0, 1.0):
                    return bool(value)
            return value
        return float(table[i, j])

    def changes(self, i: int) -> list[tuple[str, Any, Any]]:
        """``(feature, before, after)`` for every feature row ``i`` changes
        (labels for categorical columns)."""
        return [
            (
                self.feature_names_[j],
                self._value(self.X_, i, j),
                self._value(self.X_cf_, i, j),
            )
            for j in np.flatnonzero(self.changed_[i])
        ]

    def to_frame(self) -> Any:
        """One row per changed feature of every found counterfactual.

        Returns
        -------
        pandas.DataFrame
            Columns ``row`` (position in the rows given), ``option``,
            ``feature``, ``before``, ``after``, ``delta``, ``cost``, ``tree``,
            ``leaf``; with ``fill_missing``, ``filled`` after ``delta`` (a
            missing value filled: ``before`` is missing, ``delta`` NaN).
        """
        import pandas as pd

        assert self.row_ is not None and self.option_ is not None
        rows, cols = np.nonzero(self.changed_)
        codes_before, codes_after = self._arrays()
        delta = codes_after[rows, cols] - codes_before[rows, cols]
        if hasattr(self.X_cf_, "iloc"):
            before: Any = np.array(
                [self._value(self.X_, r, c) for r, c in zip(rows, cols)], dtype=object
            )
            after: Any = np.array(
                [self._value(self.X_cf_, r, c) for r, c in zip(rows, cols)],
                dtype=object,
            )
            if self.features_ is not None:
                categorical = np.array(
                    [self.features_[c].kind != "numeric" for c in cols], dtype=bool
                )
                delta = np.where(categorical, np.nan, delta)
        else:
            before, after = codes_before[rows, cols], codes_after[rows, cols]
        frame = pd.DataFrame(
            {
                "row": self.row_[rows],
                "option": self.option_[rows],
                "feature": np.array(self.feature_names_, dtype=object)[cols],
                "before": before,
                "after": after,
                "delta": delta,
                "cost": self.cost_[rows],
                "tree": self.tree_[rows],
                "leaf": self.leaf_[rows],
            }
        )
        if self.fill_start_ is not None and self.filled_ is not None:
            frame.insert(6, "filled", self.filled_[rows, cols])
        return frame

    def __repr__(self) -> str:
        return (
            f"CounterfactualResult(method={self.method_!r}, n_samples={len(self)}, "
            f"found={int(self.found_.sum())}, target={self.target_.describe()!r}, "
            f"cost={self.cost_name_!r})"
        )


@dataclass(frozen=True, eq=False)
class Problem:
    """Validated inputs of a counterfactual search.

    Attributes
    ----------
    forest : Forest
    source : object or None
        The model the user gave, or the ``fitted_model`` of the Forest given
        (None when it was a bare Forest).
    X : ndarray of shape (n, n_features), float64
        The rows as given (not cast).
    leaves : ndarray of shape (n, n_trees)
        Leaf each row reaches now.
    current : ndarray of shape (n,)
        The model's prediction for each row.
    at_target : ndarray of shape (n,), bool
        Rows returned as they are: the model already gives them the target
        and no margin or plausibility bound is asked (else they are searched).
    target : Target
    cost : Cost
    epsilon : ndarray of shape (n_features,)
    constraints : ResolvedConstraints
    reference : ndarray of shape (n_reference, n_features) or None
    margin : ResolvedMargin
    inferred : dict
        Constraints read off the reference data and the dtypes of rows given
        as a DataFrame (see :mod:`treelens._counterfactual._inference`).
    support : ndarray of shape (n_nodes_total,) or None
        Rows reaching each node (reference replayed, else stored counts).
    min_leaf_samples : int or None
        Least support every reached leaf must have.
    frame : DataFrame or None
        The rows as the user gave them, when given as a DataFrame that names
        every column of the model (see :func:`_user_frame`): results are
        returned in the same columns and dtypes, and the source model predicts
        on DataFrames in them.
    declared : DeclaredColumns or None
        What the dtypes of the rows as given declare (:func:`declared_columns`),
        for the searches over fixed values, which take arrays of floats.
    isolation : IsolationBound or None
        The bound on an IsolationForest's anomaly score, when one is asked.
    fill : FillPlan or None
        Which missing values may be filled, at what price and from where (see
        :mod:`treelens._counterfactual._missing`); None: every missing value
        stays missing.
    given : ndarray of shape (n, n_features) or None
        The rows as given, when an array whose numbers are labels in the
        forest's ``label_columns`` (``X`` holds their codes): results are
        returned in those labels.
    confirmed_by_caller : bool
        Whether the caller confirms the answers with the source model itself
        (the searches of :func:`~._categorical.search_with_fixed`, on a forest
        with fixed features, whose answers are confirmed on the whole model):
        :func:`finish` then skips the predictions and the plausibility figures.
    by_position : bool
        Whether ``source`` is the ``fitted_model`` of a Forest that renamed its
        features: fitted without feature names, it reads the columns by
        position (see :func:`source_predict`).
    """

    forest: Forest
    source: Any
    X: NDArray[np.float64]
    leaves: NDArray[np.intp]
    current: NDArray[Any]
    at_target: NDArray[np.bool_]
    target: Target
    cost: Cost
    epsilon: NDArray[np.float64]
    constraints: ResolvedConstraints
    reference: NDArray[np.float64] | None
    margin: ResolvedMargin
    inferred: dict[str, Any]
    support: NDArray[np.float64] | None = None
    min_leaf_samples: int | None = None
    frame: Any = None
    declared: DeclaredColumns | None = None
    isolation: IsolationBound | None = None
    fill: FillPlan | None = None
    given: NDArray[np.float64] | None = None
    confirmed_by_caller: bool = False
    by_position: bool = False


def own_target(target: Target, current: NDArray[Any]) -> NDArray[np.bool_]:
    """Whether the model's prediction of each row, ``current``, already meets
    ``target`` (never for ``"other"``: another class than the row's own)."""
    if target.kind == "other":
        return np.zeros(len(current), dtype=bool)
    return np.asarray(target.meets(current, current), dtype=bool)


def as_float64(forest: Forest, X: Any) -> NDArray[np.float64]:
    """``X`` checked by :meth:`Forest.validate_X`, kept in float64 (not cast);
    a table of labels is encoded (:meth:`Forest.encode`)."""
    from .._core._validation import checked_float64

    return checked_float64(forest, X)


def reference_float64(forest: Forest, reference: Any) -> NDArray[np.float64]:
    """``reference`` checked as the rows are (see :func:`as_float64`), the errors
    naming it, and refused without a row: its medians, spreads and leaf counts
    would all be empty."""
    try:
        ref = as_float64(forest, reference)
    except InputError as exc:
        raise InputError(f"`reference` does not fit the model: {exc}") from exc
    if ref.shape[0] == 0:
        raise InputError(
            "`reference` must hold at least one row (typically the training "
            "set); got 0 rows."
        )
    return ref


def prepare_problem(
    model: Any,
    X: Any,
    *,
    target: Any,
    cost: Any,
    epsilon: Any,
    constraints: Constraints | None,
    reference: Any,
    margin: Any = None,
    infer: Any = True,
    min_leaf_samples: Any = None,
    allow_nan: bool = False,
    isolation_forest: Any = None,
    max_anomaly_score: Any = None,
) -> Problem:
    """Validate the public arguments of a counterfactual search (see :class:`Problem`).

    Raises
    ------
    InputError
        On any bad argument (see :func:`~treelens.feature_tweak`), including NaN
        in ``X`` unless ``allow_nan`` (the search over fixed missing values).
    """
    forest = to_forest(model)
    # A Forest renamed after a data file's columns still has its fitted model
    # behind it, which reads the columns by position.
    renamed = isinstance(model, Forest) and model.fitted_model is not None
    source = model.fitted_model if isinstance(model, Forest) else model
    rows = as_float64(forest, X)
    frame = _user_frame(forest, X)
    given = None
    if frame is None and forest.label_columns.size and not has_labels(X):
        given = np.array(X, dtype=np.float64, ndmin=2)
    if constraints is not None and not isinstance(constraints, Constraints):
        raise InputError(
            "`constraints` must be a treelens.Constraints or None; got "
            f"{type(constraints).__name__}."
        )
    # Contradictory constraints are refused before anything about the rows
    # (resolved again below once inferred constraints are added).
    resolved = (constraints or Constraints()).resolve(forest)
    if np.isnan(rows).any() and not allow_nan:
        r, j = np.argwhere(np.isnan(rows))[0]
        raise InputError(
            f"X contains NaN at row {row_label(X, int(r))}, feature {forest.feature_names[j]!r}; "
            "counterfactuals need complete rows, expected finite numbers (impute "
            "missing values first)."
        )
    resolved_target = resolve_target(forest, target)
    ref = None if reference is None else reference_float64(forest, reference)
    declared = declared_columns(forest, X, frame)
    constraints, inferred = infer_constraints(
        forest, ref, rows, constraints, resolve_infer(infer), declared
    )
    if inferred:
        resolved = (constraints or Constraints()).resolve(forest)
    resolved.check_rows(rows, labels=[row_label(X, i) for i in range(len(rows))])
    leaves = forest._apply(rows.astype(forest.input_dtype))
    current = forest._predict_from_leaves(leaves)
    least = check_min_leaf_samples(min_leaf_samples)
    support = node_support(forest, ref)
    if least is not None and support is None:
        raise InputError(
            "`min_leaf_samples` needs leaf counts: expected reference data (routed "
            "to count the rows of every leaf) or a model that stores its training "
            f"counts; this {forest.kind} model stores none and `reference` is None."
        )
    isolation = resolve_isolation(forest, isolation_forest, max_anomaly_score)
    resolved_margin = resolve_margin(forest, margin, ref)
    # A row the model already gives the target is its own answer, unless a
    # margin or a plausibility bound is asked: then it is searched like any
    # other row (the row itself at cost 0 where it meets them).
    conditions = resolved_margin.any or least is not None or isolation is not None
    return Problem(
        forest=forest,
        source=source,
        X=rows,
        leaves=leaves,
        current=current,
        at_target=own_target(resolved_target, current) & (not conditions),
        target=resolved_target,
        cost=resolve_cost(forest, cost, ref),
        epsilon=resolve_epsilon(forest, epsilon, ref),
        constraints=resolved,
        reference=ref,
        margin=resolved_margin,
        inferred=inferred,
        support=support,
        min_leaf_samples=least,
        frame=frame,
        declared=declared,
        isolation=isolation,
        given=given,
        by_position=renamed,
    )


def _given_units(
    problem: Problem, X_cf: NDArray[np.float64], predicted: Any
) -> tuple[dict[str, Any], Any, Any]:
    """The result's codes, ``X_`` and ``X_cf_``: in the user's table when the
    rows were one (``predicted``: the frame the source model predicted on,
    if it covers every row), in the labels of an array whose numbers are
    labels, else the codes themselves."""
    if problem.frame is None and problem.given is None:
        return {}, problem.X.copy(), X_cf
    codes = {
        "X_codes_": problem.X.copy(),
        "X_cf_codes_": X_cf,
        "features_": problem.forest.features,
    }
    if problem.frame is None and problem.given is not None:
        return codes, problem.given.copy(), _given_labels(problem, X_cf)
    from .._core._features import decode

    X_cf_given = (
        predicted
        if predicted is not None
        else nullable_like(
            decode(problem.forest, X_cf, like=problem.frame), problem.frame
        )
    )
    return codes, problem.frame.copy(), X_cf_given


def _given_labels(
    problem: Problem,
    X_cf: NDArray[np.float64],
    rows: NDArray[np.intp] | None = None,
) -> NDArray[np.float64]:
    """Counterfactual codes ``X_cf`` (of the rows ``rows``, all by default)
    in the units of the array given: the forest's ``label_columns`` as labels
    (a value left as it was, a label the model never saw included, as
    given); the other columns as they are."""
    out = X_cf.copy()
    if problem.given is None:
        return out
    given = problem.given if rows is None else problem.given[rows]
    X = problem.X if rows is None else problem.X[rows]
    for j in problem.forest.label_columns:
        labels = np.array(problem.forest.features[j].categories, dtype=np.float64)
        code = X_cf[:, j]
        kept = (code == X[:, j]) | np.isnan(code)
        known = ~np.isnan(code) & (code >= 0) & (code < labels.size)
        out[:, j] = np.where(
            kept,
            np.where(np.isnan(code), np.nan, given[:, j]),
            labels[np.where(known, code, 0).astype(np.intp)],
        )
    return out


def _keep_own_values(problem: Problem, X_cf: NDArray[np.float64]) -> None:
    """Put back, in place, each categorical value of ``X_cf`` that keeps its
    row's category as the row holds it: rows given as codes may hold a number
    that is no code (a category the model never saw, such as 12 beside codes
    ``0 .. 9``), which the searches carry as the unknown code ``k``; kept, it
    is returned as given.  (Rows encoded from labels hold codes already.)"""
    forest = problem.forest
    columns = np.array(
        [spec.is_categorical and not spec.dropped for spec in forest.features],
        dtype=bool,
    )
    if not columns.any():
        return
    k = forest.n_categories[columns]
    own, new = problem.X[:, columns], X_cf[:, columns]
    kept = ~np.isnan(own) & ~np.isnan(new)
    kept &= category_codes(own, k) == category_codes(new, k)
    X_cf[:, columns] = np.where(kept, own, new)


def declared_columns(
    forest: Forest, X: Any, frame: Any = None
) -> DeclaredColumns | None:
    """What the dtypes of the rows ``X`` declare of the model's columns: those
    of the DataFrame in the model's columns (``frame``, by default read off
    ``X`` by :func:`_user_frame`), else the dtype of a numpy array
    (:class:`DeclaredColumns`); None when they declare nothing."""
    if frame is None:
        frame = _user_frame(forest, X)
    if frame is not None:
        return DeclaredColumns.of(forest, frame)
    return DeclaredColumns.of_array(forest, X)


def _user_frame(forest: Forest, X: Any) -> Any:
    """The user's rows as a DataFrame in the model's columns, or None.

    A Series is taken as one row.  A DataFrame holding labels is kept as
    given (its columns are the lifted Pipeline's input).  A numeric DataFrame
    is kept, reduced to the model's columns in the model's order, when it
    names every one of them; else, and for a model fitted on arrays (whose
    columns have no names to match), the results stay arrays.
    """
    from .._core._features import series_as_row

    if not hasattr(X, "iloc"):
        return None
    X = series_as_row(X)
    if forest.has_labels:
        return X
    names = list(forest.feature_names)
    if not forest.has_feature_names or not set(names) <= set(X.columns):
        return None
    return X[names]


def source_predict(
    problem: Problem,
    X: NDArray[np.float64],
    keep: dict[str, Any] | None = None,
    rows: NDArray[np.intp] | None = None,
) -> NDArray[Any]:
    """Predictions of the source model (or the bare Forest) for rows ``X`` (of
    the user's rows ``rows``, all by default); the rows decoded to the user's
    columns are kept in ``keep["frame"]``.

    What the Forest predicts: the model's ``predict``, or for an
    IsolationForest (link ``"isolation"``) its ``score_samples``.
    """
    if problem.source is None:
        forest = problem.forest
        return forest._predict_from_leaves(forest._leaves_of_codes(X))
    from .._adapters._native import booster_predict

    if problem.forest.has_labels and not hasattr(problem.source, "classes_"):
        # A Booster of categories (XGBoost, LightGBM) reads their codes: it has
        # no predict of a frame of labels.
        predicted = booster_predict(problem.source, X)
        if predicted is not None:
            return predicted
    predict = (
        problem.source.score_samples
        if problem.forest.link == "isolation"
        else problem.source.predict
    )
    # The user's own rows, so that a label the model never saw, kept, stays
    # that label and a column the model never reads keeps the row's value.
    like = problem.frame
    if like is not None and rows is not None:
        like = like.iloc[rows]
    if problem.by_position:
        return _predict_by_position(
            problem, predict, X, like=like, keep=keep, rows=rows
        )
    if problem.forest.has_labels:
        from .._core._features import decode

        frame = decode(problem.forest, X, like=like)
        if keep is not None:
            keep["frame"] = frame
        numbers = _fitted_on_numbers(problem.source, frame) if like is None else None
        if numbers is not None:
            # The array as returned: a category kept as given (one the model
            # never saw, which the frame holds as missing) is read as given.
            return np.asarray(predict(_given_labels(problem, X, rows)))
        if like is None:
            frame = _categorical_dtypes(problem.forest, frame)
        return np.asarray(predict(frame))

    predicted = booster_predict(problem.source, X)  # XGBoost / LightGBM Boosters
    if predicted is not None:
        return predicted
    if problem.frame is not None:
        # The model predicts on rows in the user's columns and dtypes.
        from .._core._features import decode

        frame = decode(problem.forest, X, like=like)
        if keep is not None:
            keep["frame"] = frame
        return np.asarray(predict(frame))
    names = getattr(problem.source, "feature_names_in_", None)
    if names is not None:
        import pandas as pd

        return np.asarray(predict(pd.DataFrame(X, columns=list(names))))
    return np.asarray(predict(X))


def _predict_by_position(
    problem: Problem,
    predict: Any,
    X: NDArray[np.float64],
    *,
    like: Any,
    keep: dict[str, Any] | None,
    rows: NDArray[np.intp] | None,
) -> NDArray[Any]:
    """``predict`` of a model fitted without feature names (the
    ``fitted_model`` of a Forest named after a data file's columns) for rows
    ``X``, given as the array it was fitted on: its columns by position, never
    by the names the Forest gave them.  The rows decoded to the user's
    columns (labels, dtypes) are kept in ``keep["frame"]``."""
    from .._adapters._native import booster_predict

    predicted = booster_predict(problem.source, X)  # XGBoost / LightGBM Boosters
    if predicted is not None:
        return predicted
    if like is None and not problem.forest.has_labels:
        return np.asarray(predict(X))
    from .._core._features import decode

    frame = decode(problem.forest, X, like=like)
    if keep is not None:
        keep["frame"] = frame
    numbers = _fitted_on_numbers(problem.source, frame)
    if numbers is not None and like is None:
        numbers = _given_labels(problem, X, rows)  # kept categories as given
    return np.asarray(predict(frame.to_numpy() if numbers is None else numbers))


def _categorical_dtypes(forest: Forest, frame: Any) -> Any:
    """``frame`` (labels decoded from codes given as an array) with each
    categorical column a pandas Categorical of the model's categories, as a
    model fitted on a DataFrame of ``category`` columns (LightGBM) needs."""
    import pandas as pd

    frame = frame.copy()
    for spec in forest.features:
        if spec.is_categorical and spec.name in frame.columns:
            frame[spec.name] = pd.Categorical(
                frame[spec.name], categories=list(spec.categories or ())
            )
    return frame


def _fitted_on_numbers(source: Any, frame: Any) -> NDArray[np.float64] | None:
    """``frame``'s labels as an array of numbers for an estimator fitted on an
    array (it has ``n_features_in_`` but no column names: HistGradientBoosting
    or LightGBM given categorical codes), which refuses a DataFrame of object
    columns or warns on its column names; None otherwise."""
    fitted_on_array = hasattr(source, "n_features_in_") and (
        getattr(source, "feature_names_in_", None) is None
    )
    if not fitted_on_array:
        return None
    try:
        return np.asarray(frame.to_numpy(dtype=np.float64, na_value=np.nan))
    except (TypeError, ValueError):
        return None  # labels that are not numbers


def _filled_start(
    problem: Problem, rows: NDArray[np.intp], X_cf: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The rows ``rows`` with each filled missing value at its start, where
    costs and constraints measure it from: a numeric column's start in the
    fill plan, a categorical column's category taken (it carries no price
    beyond the fill cost); NaN where the value may not be filled."""
    start = problem.X[rows].copy()
    filled = np.isnan(start) & ~np.isnan(X_cf)
    if not filled.any():
        return start
    fill = problem.fill
    if fill is None:
        return start
    categorical = np.array(
        [spec.is_categorical for spec in problem.forest.features], dtype=bool
    )
    value = np.where(categorical, X_cf, fill.start)
    value = np.where(fill.allowed, value, np.nan)
    start[filled] = value[filled]
    return start


#: Reasons of a row not found that hold only while its missing values stay missing.
_SEARCHED_REASONS = frozenset({REASON_INFEASIBLE, REASON_NOT_REACHABLE, REASON_NO_FLIP})


def _say_kept_missing(
    problem: Problem, reason: NDArray[np.object_], found: NDArray[np.bool_]
) -> None:
    """Name, in the reason of each row not found, the missing values that the
    search kept missing although ``fill_missing`` could allow filling them.

    A missing value stays missing by default, so "infeasible" is a proof under
    that condition only; the user is told which values and how to lift it.
    """
    fillable = np.array(
        [not spec.dropped for spec in problem.forest.features], dtype=bool
    )
    fillable &= ~problem.constraints.immutable
    if problem.fill is not None:
        fillable &= ~problem.fill.allowed
    kept = np.isnan(problem.X) & fillable
    for i in np.flatnonzero(~found & kept.any(axis=1)):
        if reason[i] not in _SEARCHED_REASONS:
            continue
        names = [problem.forest.feature_names[j] for j in np.flatnonzero(kept[i])]
        listed = ", ".join(repr(name) for name in names)
        values = "value" if len(names) == 1 else "values"
        reason[i] = (
            f"{reason[i]}, with the missing {values} of {listed} kept missing "
            "(fill_missing allows filling; --fill-missing on the command line)"
        )


def finish(
    problem: Problem,
    *,
    X_cf: NDArray[np.float64],
    found: NDArray[np.bool_],
    cost: NDArray[np.float64],
    reason: NDArray[np.object_],
    tree: NDArray[np.intp] | None = None,
    leaf: NDArray[np.intp] | None = None,
    method: str,
    status: NDArray[np.object_] | None = None,
    gap: NDArray[np.float64] | None = None,
) -> CounterfactualResult:
    """Confirm the counterfactuals and build the result.

    Rows of ``problem.at_target`` are set to found, cost 0, ``X_cf = X``.  Every
    other found row is checked with the source model's ``predict`` and the
    constraints; a row that fails is turned into "not found" with
    ``REASON_CHECK_FAILED`` and a :class:`CounterfactualCheckWarning`.

    Arrays have one entry (row) per row of ``problem.X``; ``tree``, ``leaf``,
    ``status`` and ``gap`` are optional.  A problem whose caller confirms the
    answers itself (``problem.confirmed_by_caller``) has its constraints
    checked, but not its predictions, and no leaf support or nearest distance
    computed (NaN; ``cf_prediction_`` None).
    """
    confirm = not problem.confirmed_by_caller
    n = problem.X.shape[0]
    X_cf = np.array(X_cf, dtype=np.float64)
    found = np.array(found, dtype=bool)
    cost = np.array(cost, dtype=np.float64)
    reason = np.array(reason, dtype=object)
    tree = (
        np.full(n, -1, dtype=np.intp) if tree is None else np.array(tree, dtype=np.intp)
    )
    leaf = (
        np.full(n, -1, dtype=np.intp) if leaf is None else np.array(leaf, dtype=np.intp)
    )
    at = problem.at_target
    X_cf[at], found[at], cost[at], tree[at], leaf[at] = problem.X[at], True, 0.0, -1, -1
    _keep_own_values(problem, X_cf)
    reason[at] = None
    cf_prediction = np.full(n, None, dtype=object)
    check = found & ~at
    decoded: dict[str, Any] = {}
    if check.any():
        rows = np.flatnonzero(check)
        predicted: NDArray[Any] = np.full(rows.size, None, dtype=object)
        ok = np.ones(rows.size, dtype=bool)
        if confirm:
            predicted = source_predict(problem, X_cf[rows], keep=decoded, rows=rows)
            ok = problem.target.meets(predicted, problem.current[rows])
        # A missing value stays missing unless it may be filled (from its
        # start); every other value is finite.
        missing = np.isnan(problem.X[rows])
        kept_missing = missing & np.isnan(X_cf[rows])
        start = _filled_start(problem, rows, X_cf[rows])
        # A value filled where filling is not allowed has no start: refused.
        ok &= ~(np.isnan(start) & ~kept_missing).any(axis=1)
        ok &= problem.constraints.satisfied(
            np.where(kept_missing, 0.0, start),
            np.where(kept_missing, 0.0, X_cf[rows]),
            missing=kept_missing,
        )
        ok &= (np.isfinite(X_cf[rows]) | kept_missing).all(axis=1)
        if problem.isolation is not None:
            ok &= problem.isolation.meets(X_cf[rows])
        cf_prediction[rows] = predicted
        bad = rows[~ok]
        if bad.size:
            warn(
                f"{bad.size} counterfactual(s) (rows {bad[:10].tolist()}) failed the "
                "source model's predict or the constraints and are returned as not "
                "found; this is a bug in treelens, please report it.",
                CounterfactualCheckWarning,
            )
            found[bad], reason[bad], cf_prediction[bad] = (
                False,
                REASON_CHECK_FAILED,
                None,
            )
    if at.any():
        cf_prediction[at] = problem.current[at]
    X_cf[~found] = np.nan
    support, distance = _plausibility(
        problem, X_cf, found if confirm else np.zeros_like(found)
    )
    anomaly = None
    if problem.isolation is not None:
        anomaly = np.full(n, np.nan)
        anomaly[found] = problem.isolation.scores(X_cf[found])
    cost[~found] = np.inf
    tree[~found] = -1
    leaf[~found] = -1
    reason[found] = None
    _say_kept_missing(problem, reason, found)
    # Every row checked and found: the rows the source model predicted.
    same = "frame" in decoded and bool(check.all() and found.all())
    codes, X_given, X_cf_given = _given_units(
        problem, X_cf, decoded["frame"] if same else None
    )
    missing = np.isnan(problem.X)
    return CounterfactualResult(
        **codes,
        missing_=missing,
        filled_=missing & ~np.isnan(X_cf),
        fill_start_=None if problem.fill is None else problem.fill.start.copy(),
        X_=X_given,
        X_cf_=X_cf_given,
        found_=found,
        cost_=cost,
        reason_=reason,
        tree_=tree,
        leaf_=leaf,
        prediction_=np.asarray(problem.current).copy(),
        cf_prediction_=cf_prediction,
        feature_names_=problem.forest.feature_names,
        target_=problem.target,
        cost_name_=problem.cost.name,
        method_=method,
        status_=None if status is None else np.array(status, dtype=object),
        gap_=None if gap is None else np.array(gap, dtype=np.float64),
        epsilon_=problem.epsilon.copy(),
        margin_=problem.margin.features.copy(),
        vote_margin_=problem.margin.vote,
        leaf_support_=support,
        nearest_distance_=distance,
        min_leaf_samples_=problem.min_leaf_samples,
        anomaly_score_=anomaly,
        max_anomaly_score_=(
            None if problem.isolation is None else problem.isolation.max_score
        ),
        inferred_=problem.inferred,
        at_target_=own_target(problem.target, problem.current),
    )


def _plausibility(
    problem: Problem, X_cf: NDArray[np.float64], found: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Leaf support and nearest reference distance of the ``found`` rows of
    ``X_cf`` (NaN elsewhere)."""
    n = X_cf.shape[0]
    support = np.full(n, np.nan)
    distance = np.full(n, np.nan)
    if found.any():
        support[found] = point_support(problem.forest, problem.support, X_cf[found])
        mad = None
        if problem.reference is not None and not problem.cost.separable:
            from ._costs import mad_weights

            mad = mad_weights(problem.reference)
        distance[found] = nearest_distance(
            problem.cost, problem.reference, X_cf[found], mad
        )
    return support, distance


def stack_options(
    results: list[CounterfactualResult], problem: Problem
) -> CounterfactualResult:
    """One result from the results of each option (same rows of ``problem``),
    row by row.

    Rows whose first option is the row itself (it already had the target, and
    met the margin and plausibility bounds asked) have that one option: a
    further one would have to leave out one of its moves, and it makes none.
    Their further options are not found, with :data:`REASON_AT_TARGET`.  Rows given
    as a DataFrame give ``X_`` and ``X_cf_`` as DataFrames in the same columns
    and dtypes, each row's index label repeated for its options.
    """
    if len(results) == 1:
        return results[0]
    before, after = results[0]._arrays()
    same = (after == before) | (np.isnan(after) & np.isnan(before))
    itself = results[0].found_ & same.all(axis=1)
    k, n = len(results), len(results[0])
    changes: dict[str, Any] = {}
    per_feature = {"epsilon_", "margin_", "row_", "option_", "fill_start_"}
    for item in dataclasses.fields(results[0]):
        first = getattr(results[0], item.name)
        if isinstance(first, np.ndarray) and item.name not in per_feature:
            stacked = np.stack([getattr(r, item.name) for r in results], axis=1)
            changes[item.name] = stacked.reshape((n * k, *first.shape[1:])).copy()
    grid = np.zeros((n, k), dtype=bool)
    grid[:, 1:] = itself[:, None]
    later = grid.ravel()
    changes["found_"][later] = False
    for name in ("X_cf_", "X_cf_codes_"):
        if name in changes:
            changes[name][later] = np.nan
    changes["cost_"][later] = np.inf
    changes["reason_"][later] = REASON_AT_TARGET
    changes["cf_prediction_"][later] = None
    for name in ("leaf_support_", "nearest_distance_", "anomaly_score_"):
        if name in changes:
            changes[name][later] = np.nan
    if "status_" in changes:
        changes["status_"][later] = "optimal"
        changes["gap_"][later] = np.nan
    changes["row_"] = np.repeat(np.arange(n, dtype=np.intp), k)
    changes["option_"] = np.tile(np.arange(1, k + 1, dtype=np.intp), n)
    if problem.frame is not None:
        from .._core._features import decode

        frame = problem.frame.iloc[changes["row_"]]
        changes["X_"] = frame.copy()
        X_cf = nullable_like(
            decode(problem.forest, changes["X_cf_codes_"], like=frame), frame
        )
        X_cf.index = frame.index
        changes["X_cf_"] = X_cf
    return dataclasses.replace(results[0], **changes)
