"""Optimal counterfactuals: the least-cost change, proven with a mixed-integer program.

Feature tweaking tries one leaf box at a time; the exact answer is a choice of one
*cell* per feature (the values between two consecutive thresholds of the whole
ensemble route identically through every tree) such that the leaves reached make
the ensemble predict the target (Cui et al., KDD 2015; Parmentier and Vidal,
ICML 2021).  treelens writes it as a mixed-integer program (see
:mod:`._milp._program` and :mod:`._milp._solve`) and solves it with HiGHS
through highspy.

Exactness.  With ``d = x' - x`` and the cell chosen for each feature, every separable
cost is a sum (or, for ``"linf"``, a maximum) of per-feature terms that
depend on the cell only, so the objective is linear in the cell binaries
and exact.  Ties between classes are strict where the model's rule is
strict: the program asks the winning score to lead by ``1e-6`` times the
spread of the scores compared (the sum over the trees of each tree's
range of that score difference: ``2e-4`` of summed probabilities, that is
``2e-6`` of averaged ones, for a binary forest of 100 trees), so that
HiGHS's integrality tolerance cannot fake a win.  Answers are exact up to
that margin; in the rare case the model's own prediction still disagrees,
the margin is raised and the row solved again.

Rows already at the target.  A row the model already assigns to the target is
its own answer at cost 0, unless a ``margin``, ``min_leaf_samples`` or
``isolation_forest`` is asked: then it is searched like any other row, and the
answer is the least-cost point meeting the target and those conditions (the
row itself, at cost 0, where it meets them); ``at_target_`` marks such rows.

Ranges no prediction meets.  A regressor's target range that no prediction can
reach is reported ``"infeasible"`` at once, before any search: when the link's
range misses it, or when no choice of one leaf per tree (ignoring which leaves
a point can reach together) adds up to a prediction inside it, enumerated for
models of at most about ``2**32`` leaf combinations (a single tree, or a few
small ones; see :mod:`._attainable`).  On larger models a range between
attainable predictions is left to the solver, which may run to ``time_limit``
before it proves that nothing meets it.  A point range (``low == high``) is
refused: a prediction is a float64 sum of leaf values rounded in the model's
own order, equal to a given value in every bit only by chance, and the solver
works within tolerances of about ``1e-7``; ask for a range around the value.
A range narrower than the margin of a retry (about ``1e-5`` of the score
spread), whose solver answers the model's own arithmetic rejects, is reported
``"time_limit"`` with the reason, never ``"infeasible"``: narrowing it for the
retry proves nothing about the range asked.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .._core._chunks import is_chunk_stream
from .._core._forest import Forest
from .._core._validation import check_memory_budget
from .._exceptions import InputError
from .._types import (
    ArrayLike,
    Chunks,
    CostLike,
    EpsilonLike,
    IsolationForestLike,
    MarginLike,
    ModelLike,
    TargetLike,
)
from ._attainable import no_leaves_meet
from ._categorical import (
    CategoryCost,
    check_category_cost,
    check_fill,
    needs_fixed_search,
    search_with_fixed,
)
from ._constraints import Constraints
from ._isolation import IsolationBound, combined_forest
from ._milp._program import ForestProgram, forest_program
from ._milp._search import REPAIR_STEPS, GridSearch, descend, greedy_ascent, kick
from ._milp._solve import (
    STRICT_MARGIN,
    Decision,
    MilpOutcome,
    decision_for,
    price_cells,
    solve_cells,
)
from ._missing import FillCost, FillMissing
from ._options import Diversity, Option, check_options, option_cut
from ._problem import (
    REASON_AT_TARGET,
    REASON_INFEASIBLE,
    REASON_NEAR_TIE,
    REASON_NO_OPTION,
    REASON_TIME_LIMIT,
    REASON_TOO_NARROW,
    CounterfactualResult,
    Problem,
    finish,
    prepare_problem,
    stack_options,
)
from ._streaming import search_all_in_chunks
from ._targets import encode_classes

__all__ = ["optimal_counterfactual", "optimal_rows"]

#: Default bound on the memory the program of one model may need (bytes).
DEFAULT_MEMORY_BUDGET = 2**30
# Margins tried in turn when the model's own prediction rejects an answer whose
# scores sit within HiGHS's tolerances of a tie.
_MARGINS = (STRICT_MARGIN, 1e-5, 1e-4)
# Share of each row's time limit the local search of the warm start may take
# (0.1-0.5 s for 100 trees of depth 6, about 1 s for 500 trees).
_SEARCH_SHARE = 0.1
# Rows per chunk of a chunked run: solves take about a second per row.
_OPTIMAL_CHUNK_ROWS = 64
# Cells and objective of a known counterfactual, computed when asked for.
_Known = Callable[[], "tuple[NDArray[np.intp], float] | None"]


def optimal_counterfactual(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    target: TargetLike,
    cost: CostLike = "auto",
    epsilon: EpsilonLike = 0.0,
    margin: MarginLike = None,
    constraints: Constraints | None = None,
    reference: ArrayLike | None = None,
    infer: bool | tuple[str, ...] = True,
    time_limit: float = 30.0,
    warm_start: bool = True,
    n_counterfactuals: int = 1,
    diversity: Diversity = "moves",
    min_leaf_samples: int | None = None,
    isolation_forest: IsolationForestLike = None,
    max_anomaly_score: float | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
    category_cost: CategoryCost = None,
    fill_missing: FillMissing = False,
    fill_cost: FillCost = None,
) -> CounterfactualResult:
    """Least-cost counterfactuals over the whole ensemble, proven optimal.

    For each row ``x``, the point ``x'`` of least ``cost`` that the model
    assigns to the target: one *cell* per feature (values between consecutive
    thresholds of all trees), a mixed-integer program solved by HiGHS (module
    docstring).  A moved value lands on the float64 value nearest the threshold
    that the model still routes past it after its own cast (float32 for
    scikit-learn, XGBoost and CatBoost), so the answer is the least cost over
    *all* valid float64 points; such a point flips back under the least
    perturbation: ask for ``margin`` for the least-cost one that does not.
    Rows at the target are searched only for a margin or plausibility bound;
    ranges no prediction reaches are infeasible at once where provable.

    Parameters
    ----------
    model : fitted estimator or Forest
    X : array-like of shape (n_samples, n_features), or an iterable of chunks
        Rows to explain, as for :func:`~treelens.feature_tweak` (for a pipeline
        or a model with categorical columns, the DataFrame it takes).
    target : class label, "other", (low, high), "inlier" or "outlier"
        As for :func:`~treelens.feature_tweak` (ties follow the model).
    cost : str, array-like or mapping, default="auto"
        ``"auto"``: ``"mad"`` (L1 in median absolute deviations) with
        ``reference``, else ``"l1"``; any separable cost of
        :func:`~treelens.feature_tweak` (``"l2"`` minimizes the sum of squared
        terms, same minimizer).  ``"cosine"`` and callables are refused.
    epsilon : float, array-like of shape (n_features,) or "auto", default=0.0
        How far inside a cell a moved value lands; ``0`` is its double nearest
        the row (``"auto"``: 1% of each feature's spread; use ``margin`` for robustness).
    margin : float, array-like of shape (n_features,) or Margin, optional
        A robustness margin (:class:`~treelens.Margin`): every mutable feature
        but one-hot members keeps it from every threshold (moves within it reach
        the same leaves), and the target leads the vote by at least ``vote``.
    constraints : Constraints, optional
    reference : array-like of shape (n_reference, n_features), optional
        Data for ``"mad"`` costs, margins as fractions of spread, inferred
        constraints and plausibility figures (typically the training set).
    infer : bool or tuple of {"integer", "flags", "one_hot"}, default=True
        Constraints read off ``reference`` and the rows' dtypes (see
        :func:`~treelens.counterfactual`), reported in ``inferred_``.
    time_limit : float, default=30.0
        Seconds per row and option (a tenth at most for the local search).
    warm_start : bool, default=True
        Start HiGHS from a counterfactual found by a local search from the row
        (or, when that finds none, from feature tweaking's answer).
    n_counterfactuals : int, default=1
        Options per row, in cost order, each proven optimal given the earlier
        ones (no-good cuts); one entry per row and option (``row_``, ``option_``).
    diversity : {"moves", "features"}, default="moves"
        Each option leaves out a (feature, direction) change (``"moves"``) or a
        changed feature (``"features"``) of every earlier one (:mod:`._options`;
        a change to a category is a move, and so is a missing value filled).
    min_leaf_samples : int, optional
        Every reached leaf holds at least this many rows (of ``reference``,
        routed, else the stored training counts).
    isolation_forest : IsolationForest or Pipeline ending in one, optional
        On the model's columns (for a DataFrame, some numeric ones or a Pipeline
        lifted like the model's): its trees join the program, and the anomaly
        score ``-score_samples(x')`` (``anomaly_score_``) stays at most
        ``max_anomaly_score``.
    max_anomaly_score : float, optional
        In ``(0, 1]``; default ``-isolation_forest.offset_`` (an inlier).
    memory_budget : int, default=2**30
        Largest number of bytes the model's program may need.
    progress : bool, default=False
    category_cost : float, mapping or None, default=None
        As :func:`~treelens.feature_tweak`; one solve per combination of
        categories (each with ``time_limit``), so optimal over all of them.
    fill_missing : bool or list of str or int, default=False
    fill_cost : float, mapping or None, default=None
        Missing values that may be filled and their price, as
        :func:`~treelens.feature_tweak`; kept and filled both solved, so optimal.

    Returns
    -------
    CounterfactualResult
        As :func:`~treelens.feature_tweak`, plus ``status_`` (``"optimal"``,
        ``"time_limit"``: the best found, with its proven relative gap in
        ``gap_``, or ``"infeasible"``: proven that no change meets the target
        and conditions), plausibility figures (``leaf_support_``, ``anomaly_score_``,
        ``nearest_distance_``), options' ``row_`` and ``option_``.  Every
        counterfactual is confirmed with the source model's ``predict``.

    Raises
    ------
    InputError
        As :func:`~treelens.feature_tweak`; a cost that is not separable; a bad
        ``time_limit``, ``margin``, ``n_counterfactuals``, ``min_leaf_samples``,
        ``max_anomaly_score``; an ``isolation_forest`` that is not an
        IsolationForest fitted on the model's columns.

    See Also
    --------
    counterfactual, feature_tweak

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(10, max_depth=3, random_state=0).fit(X, y)
    >>> result = optimal_counterfactual(model, X[:2], target=2, reference=X)
    >>> result.status_.tolist(), model.predict(result.X_cf_).tolist()
    (['optimal', 'optimal'], [2, 2])
    """
    if progress or is_chunk_stream(X):  # solved chunk by chunk, same answers
        return _in_chunks(model, X, locals())
    _check_time_limit(time_limit)
    check_memory_budget(memory_budget)
    n_options = check_options(n_counterfactuals, diversity)
    check_category_cost(model, category_cost)
    check_fill(model, fill_missing, fill_cost, reference, constraints)
    if needs_fixed_search(model, X, isolation_forest):
        return search_with_fixed(optimal_rows, model, X,
                                 **_arguments(locals()))  # fmt: skip
    given = locals()
    return optimal_rows(
        model,
        cast(ArrayLike, X),  # not chunks: those were solved chunk by chunk
        time_limit=time_limit,
        warm_start=warm_start,
        memory_budget=memory_budget,
        n_counterfactuals=n_options,
        diversity=diversity,
        **{k: given[k] for k in _PROBLEM_ARGUMENTS},
    )


def optimal_rows(
    model: ModelLike,
    X: ArrayLike,
    *,
    time_limit: float,
    warm_start: bool,
    memory_budget: int,
    n_counterfactuals: int = 1,
    diversity: Diversity = "moves",
    excluded: list[list[Option]] | None = None,
    below: NDArray[np.float64] | None = None,
    **problem_arguments: Any,
) -> CounterfactualResult:
    """The exact search of :func:`optimal_counterfactual` on rows of numbers.

    ``excluded``, one list per row of ``X``: options (:class:`Option`) every
    answer of that row must differ from, as if they were earlier options (the
    search over categories passes those of earlier options found under other
    categories).  ``below``, one cost per row of ``X``: only answers cheaper
    than it are sought (the search over categories passes what an assignment
    must beat); a row with none is reported ``"infeasible"``, which then means
    "nothing cheaper".  ``problem_arguments`` are those of
    :func:`prepare_problem`.
    """
    problem = prepare_problem(model, X, **problem_arguments)
    program = _program_of(problem, float(memory_budget))
    todo = np.flatnonzero(~problem.at_target)
    tweak = None
    if warm_start and todo.size and excluded is None:
        tweak = _Tweaks(
            partial(
                _tweak_start,
                problem,
                target=problem_arguments["target"],
                cost=problem_arguments["cost"],
                constraints=problem_arguments["constraints"],
                infer=problem_arguments.get("infer", True),
                memory_budget=memory_budget,
            ),
            todo,
        )
        if problem.epsilon.any():
            # Every row's answer is compared with feature tweaking's below.
            tweak.compute_all()
    given = None if excluded is None else [excluded[i] for i in todo.tolist()]
    upper = np.full(problem.X.shape[0], np.inf) if below is None else below
    return _solve_rows(
        problem, program, todo, tweak, float(time_limit), warm_start,
        n_counterfactuals, diversity, given, upper,
    )  # fmt: skip


def _in_chunks(model: Any, X: Any, given: dict[str, Any]) -> CounterfactualResult:
    options = {k: v for k, v in given.items() if k not in ("model", "X")}
    return search_all_in_chunks(
        optimal_counterfactual,
        model,
        X,
        options,
        chunk_rows=_OPTIMAL_CHUNK_ROWS,
        description="optimal counterfactuals",
    )


# The arguments of optimal_counterfactual that prepare_problem checks.
_PROBLEM_ARGUMENTS = (
    "target",
    "cost",
    "epsilon",
    "constraints",
    "reference",
    "margin",
    "infer",
    "min_leaf_samples",
    "isolation_forest",
    "max_anomaly_score",
)


def _program_of(problem: Problem, memory_budget: float) -> ForestProgram:
    """The model's program, for a problem whose cost must be separable."""
    if not problem.cost.separable:
        raise InputError(
            "optimal_counterfactual needs a separable cost (a weighted l1, l2, l0 or "
            "linf norm of x' - x, or 'mad'); got "
            f"{problem.cost.name!r}, which is not a sum of per-feature terms. Use "
            "feature_tweak for it."
        )
    resolved = problem.constraints
    one_hot_features = tuple(int(j) for group in resolved.one_hot for j in group)
    forest = problem.forest
    if problem.isolation is not None:
        # Built for this call: the program of the model and the isolation trees.
        forest = combined_forest(forest, problem.isolation)
    return forest_program(
        forest, extra_cuts=one_hot_features, memory_budget=memory_budget
    )


def _check_time_limit(time_limit: object) -> None:
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, (int, float, np.integer, np.floating))
        or not np.isfinite(time_limit)
        or time_limit <= 0
    ):
        raise InputError(
            f"`time_limit` must be a positive, finite number of seconds; got "
            f"{time_limit!r}."
        )


def _tweak_start(
    problem: Problem,
    todo: NDArray[np.intp],
    *,
    target: Any,
    cost: Any,
    constraints: Constraints | None,
    infer: Any,
    memory_budget: int,
) -> CounterfactualResult:
    """Feature tweaking's answers for the rows ``todo``: a start for the local
    search."""
    from ._tweak import feature_tweak

    return feature_tweak(
        problem.forest,
        problem.X[todo],
        target=target,
        cost=cost,
        epsilon=problem.epsilon,
        constraints=constraints,
        reference=problem.reference,
        infer=infer,
        memory_budget=int(memory_budget),
    )


@dataclass
class _Tweaks:
    """Feature tweaking's answers for the rows ``todo`` (positions in it), each
    computed when first asked for, or all at once by :meth:`compute_all`.

    The local search asks only when its climb from the row itself finds
    nothing.  Measured on 20 rows each of 100-tree forests of depth 6 and 8,
    XGBoost and LightGBM (standardized breast cancer, L1), the search from
    feature tweaking's point improved the best point found from the row on
    two rows of 80 (depth 8), and a third came out better without it; solved
    side by side on the same rows, LightGBM took a median of 0.61 s a row
    without it against 0.65 s with it (19.3 s against 20.9 s in all), the
    forest of depth 8 1.51 s against 1.61 s (119.5 s against 120.2 s).
    """

    compute: Callable[[NDArray[np.intp]], CounterfactualResult]
    todo: NDArray[np.intp]
    _all: CounterfactualResult | None = dataclasses.field(default=None, init=False)
    _one: dict[int, CounterfactualResult] = dataclasses.field(
        default_factory=dict, init=False
    )

    def compute_all(self) -> CounterfactualResult:
        if self._all is None:
            self._all = self.compute(self.todo)
        return self._all

    def answer(self, position: int) -> tuple[NDArray[np.float64], float] | None:
        """Feature tweaking's point for row ``todo[position]`` and its cost
        (None when it found none)."""
        if self._all is not None:
            result, at = self._all, position
        else:
            if position not in self._one:
                self._one[position] = self.compute(self.todo[position : position + 1])
            result, at = self._one[position], 0
        if not result.found_[at]:
            return None
        return result.X_cf_[at], float(result.cost_[at])


@dataclass
class _Row:
    """What the searches of one row share: its priced cells and decision."""

    i: int
    x: NDArray[np.float64]
    points: NDArray[np.float64]
    terms: NDArray[np.float64]
    one_cells: NDArray[np.bool_] | None
    decision: Decision
    own: NDArray[np.intp]


@dataclass
class _Answers:
    """Per option and row: the counterfactual, its cost and how it was settled."""

    X_cf: NDArray[np.float64]
    cost: NDArray[np.float64]
    found: NDArray[np.bool_]
    reason: NDArray[np.object_]
    status: NDArray[np.object_]
    gap: NDArray[np.float64]

    @classmethod
    def empty(cls, k: int, n: int, n_features: int) -> _Answers:
        return cls(
            X_cf=np.full((k, n, n_features), np.nan),
            cost=np.full((k, n), np.inf),
            found=np.zeros((k, n), dtype=bool),
            reason=np.full((k, n), None, dtype=object),
            status=np.full((k, n), "optimal", dtype=object),
            gap=np.zeros((k, n)),
        )


def _arguments(given: dict[str, Any]) -> dict[str, Any]:
    """The arguments of :func:`optimal_counterfactual` the search over
    categories passes on."""
    shared = (
        *("target", "cost", "epsilon", "constraints", "reference", "category_cost"),
        *("fill_missing", "fill_cost"),
    )
    options = (
        "time_limit",
        "warm_start",
        "memory_budget",
        "margin",
        "infer",
        "min_leaf_samples",
        "n_counterfactuals",
        "diversity",
        "isolation_forest",
        "max_anomaly_score",
    )
    return {
        **{name: given[name] for name in shared},
        "options": {name: given[name] for name in options},
        "method": "optimal_counterfactual",
    }


def _solve_rows(
    problem: Problem,
    program: ForestProgram,
    todo: NDArray[np.intp],
    tweak: _Tweaks | None,
    time_limit: float,
    warm_start: bool = True,
    n_options: int = 1,
    diversity: Diversity = "moves",
    excluded: list[list[Option]] | None = None,
    below: NDArray[np.float64] | None = None,
) -> CounterfactualResult:
    """Solve each row of ``todo`` for ``n_options`` options; ``excluded``: per
    row of ``todo``, options every answer must differ from as well; ``below``:
    per row of the problem, the cost every answer must be under."""
    n, n_features = problem.X.shape
    out = _Answers.empty(n_options, n, n_features)
    unreachable = bool(todo.size) and _unreachable(problem)
    for position, i in enumerate(todo):  # one program per row and option
        if unreachable:
            out.status[:, i], out.reason[:, i] = "infeasible", REASON_INFEASIBLE
            out.gap[:, i] = np.nan
            continue
        row = _price_row(problem, program, int(i))
        known = None
        if tweak is not None:
            known = partial(_tweak_cells, tweak, position, program, row, problem)
        earlier: list[Option] = [] if excluded is None else list(excluded[position])
        n_given = len(earlier)
        limit = np.inf if below is None else float(below[i])  # a cost
        upper = limit**2 if problem.cost.norm == "l2" else limit  # an objective
        for option in range(n_options):
            if option and not out.found[option - 1, i]:
                # No earlier option, so none under more conditions either.
                out.status[option, i] = out.status[option - 1, i]
                out.reason[option, i] = out.reason[option - 1, i] or REASON_NO_OPTION
                out.gap[option, i] = out.gap[option - 1, i]
                continue
            if option and np.array_equal(
                out.X_cf[option - 1, i], row.x, equal_nan=True
            ):
                # The row itself (already at the target, and meeting the margin
                # and plausibility bounds): a further option would have to
                # leave out one of its moves, and it makes none.
                out.status[option, i], out.reason[option, i] = (
                    "optimal",
                    REASON_AT_TARGET,
                )
                out.gap[option, i] = np.nan
                continue
            outcome = _solve_option(
                problem, program, row, known, earlier, n_given, time_limit,
                warm_start, upper,
            )  # fmt: skip
            _record(problem, program, row, outcome, out, option)
            tweaked = None
            if (
                not option
                and tweak is not None
                and problem.epsilon.any()
                and not problem.margin.any
                and problem.min_leaf_samples is None
                and problem.isolation is None
            ):
                tweaked = tweak.answer(position)
            if tweaked is not None and tweaked[1] < min(out.cost[0, i], limit):
                # With a positive epsilon, feature tweaking's point may sit closer
                # than epsilon to another tree's threshold, which the cells avoid:
                # never return more than it (it is no robust answer, though).
                out.X_cf[0, i] = tweaked[0]
                out.cost[0, i], out.found[0, i] = tweaked[1], True
                out.status[0, i], out.reason[0, i] = "optimal", None
            if out.found[option, i]:
                earlier.append(Option(row.x, out.X_cf[option, i], diversity))
    results = [
        finish(
            problem,
            X_cf=out.X_cf[o],
            found=out.found[o],
            cost=out.cost[o],
            reason=out.reason[o],
            method="optimal_counterfactual",
            status=out.status[o],
            gap=out.gap[o],
        )
        for o in range(n_options)
    ]
    return stack_options(results, problem)


def _unreachable(problem: Problem) -> bool:
    """Whether no prediction lies in the target's interval whatever the trees
    add up to, proven before any search: a link's range misses it (a log link
    predicts more than 0, so ``(None, 0)`` is out of reach; its raw interval
    is empty), or no choice of one leaf per tree (of enough support, with
    ``min_leaf_samples``) adds up to a raw score inside it, which
    :func:`no_leaves_meet` settles for models of few combinations."""
    target, forest = problem.target, problem.forest
    if target.kind != "interval":
        return False
    low, high = forest.raw_interval(target.low, target.high)
    if not low <= high or high == -np.inf or low == np.inf:
        return True
    from .._core._boxes import leaf_boxes

    decision = decision_for(forest, low=low, high=high)
    boxes = leaf_boxes(forest)
    keep = np.ones(boxes.n_leaves, dtype=bool)
    if problem.min_leaf_samples is not None:
        assert problem.support is not None
        flat = forest._flat["offsets"][boxes.tree] + boxes.node
        keep = problem.support[flat] >= problem.min_leaf_samples
    # The leaves grouped by tree with one sort, not one mask per tree (500
    # masks over 100,000 leaves on every search of a large forest).
    tree = boxes.tree[keep]
    counts = np.bincount(tree, minlength=forest.n_trees)
    order = np.argsort(tree, kind="stable")
    per_tree = np.split(decision.scores[keep, 0][order], np.cumsum(counts)[:-1])
    return no_leaves_meet(
        per_tree,
        float(decision.base[0]),
        low,
        high,
        score_dtype=forest.score_dtype,
    )


def _price_row(problem: Problem, program: ForestProgram, i: int) -> _Row:
    resolved = problem.constraints
    lo, hi = resolved.feasible_intervals(problem.X[i : i + 1])
    x = problem.X[i]
    points, terms = price_cells(
        program,
        x,
        lo[0],
        hi[0],
        resolved.integer,
        problem.epsilon,
        problem.cost.terms,
        robust_margin(problem),
    )
    own = program.cell_of(x[None, :])[0]
    return _Row(
        i=i,
        x=x,
        points=points,
        terms=terms,
        one_cells=points == 1.0 if resolved.one_hot else None,
        decision=_decision(problem, i),
        own=own,
    )


def _solve_option(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    known: _Known | None,
    earlier: list[Option],
    n_given: int,
    time_limit: float,
    warm_start: bool,
    upper: float = np.inf,
) -> MilpOutcome:
    """The least-cost counterfactual of ``row`` that differs from every earlier
    option (see :mod:`treelens._counterfactual._options`) and whose objective
    is under ``upper``; the first ``n_given`` options were found under other
    conditions (the other assignments of a search over categories)."""
    deadline = time.perf_counter() + time_limit
    search_deadline = time.perf_counter() + _SEARCH_SHARE * time_limit
    incumbent: tuple[NDArray[np.intp], float] | None = None
    settled = False
    if warm_start and not earlier:
        incumbent, settled = _incumbent(
            problem, program, row, known, deadline=search_deadline
        )
    elif warm_start:
        incumbent, settled = _option_incumbent(
            problem, program, row, earlier, earlier[n_given:], deadline=search_deadline
        )
    if incumbent is not None and incumbent[1] >= upper:
        incumbent, settled = None, False
    cuts = tuple(option_cut(o, program, row.points, row.x) for o in earlier)
    return _solve_checked(
        problem,
        program,
        row,
        incumbent,
        deadline,
        cuts=cuts,
        heuristics=not settled,
        upper=upper,
    )


def _record(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    outcome: MilpOutcome,
    out: _Answers,
    option: int,
) -> None:
    i = row.i
    if outcome.cells is not None:
        out.X_cf[option, i] = row.points[outcome.cells]
        out.cost[option, i] = problem.cost.many(
            row.x[None, :], out.X_cf[option, i][None, :]
        )[0]
        out.found[option, i] = True
        stopped = outcome.status == "time_limit"
        out.status[option, i] = "time_limit" if stopped else "optimal"
        out.gap[option, i] = (
            _gap(out.cost[option, i], outcome.bound, problem.cost.norm)
            if stopped
            else 0.0
        )
    elif outcome.status == "infeasible":
        out.status[option, i] = "infeasible"
        out.reason[option, i] = REASON_INFEASIBLE if not option else REASON_NO_OPTION
        out.gap[option, i] = np.nan
    else:
        reason = REASON_TIME_LIMIT
        if outcome.unsettled:
            narrow = problem.target.kind == "interval"
            reason = REASON_TOO_NARROW if narrow else REASON_NEAR_TIE
        out.status[option, i], out.reason[option, i] = "time_limit", reason
        out.gap[option, i] = np.inf


def robust_margin(problem: Problem) -> NDArray[np.float64]:
    """The margin per feature, zero where it does not apply (immutable features
    and one-hot members, which do not move by small amounts)."""
    resolved = problem.constraints
    fixed = (
        resolved.immutable | resolved.in_one_hot | (resolved.lower == resolved.upper)
    )
    return np.where(fixed, 0.0, problem.margin.features)


def _leaf_allowed(problem: Problem, program: ForestProgram) -> NDArray[np.bool_] | None:
    """Leaves of enough support, in the program's leaf order (None: all)."""
    if problem.min_leaf_samples is None:
        return None
    assert problem.support is not None
    from .._core._boxes import leaf_boxes

    boxes = leaf_boxes(problem.forest)
    flat = problem.forest._flat["offsets"][boxes.tree] + boxes.node
    allowed = problem.support[flat] >= problem.min_leaf_samples
    # The isolation trees' leaves, after the model's, need no support.
    return np.r_[allowed, np.ones(program.n_leaves - allowed.size, dtype=bool)]


def vote_lead(problem: Problem) -> float:
    """The margin's vote lead in the units of the program's scores.

    Forest classifiers sum each tree's class probabilities (the lead is asked in
    averaged probability); boosting and regressors score in the model's units.
    """
    forest = problem.forest
    if forest.is_classifier and forest.kind != "boosting":
        return problem.margin.vote * forest.n_trees
    return problem.margin.vote


def _decision(problem: Problem, i: int) -> Decision:
    forest, target = problem.forest, problem.target
    if target.kind == "interval":
        low, high = forest.raw_interval(target.low, target.high)
        decision = decision_for(forest, low=low, high=high)
    elif target.kind == "class":
        decision = decision_for(forest, targets=(target.index,))
    else:
        current = int(encode_classes(forest, problem.current[i : i + 1])[0])
        decision = decision_for(
            forest, targets=tuple(k for k in range(forest.n_classes) if k != current)
        )
    if problem.isolation is None:
        return decision
    return _with_isolation(decision, problem.isolation)


def _with_isolation(decision: Decision, isolation: IsolationBound) -> Decision:
    """The decision over the leaves of the model and then of the isolation trees
    (which score nothing), with the least sum of their path lengths."""
    path = np.concatenate(
        [np.zeros(decision.scores.shape[0])]
        + [p[tree.is_leaf] for tree, p in zip(isolation.trees, isolation.path)]
    )
    scores = np.zeros((path.size, decision.scores.shape[1]))
    scores[: decision.scores.shape[0]] = decision.scores
    return dataclasses.replace(
        decision, scores=scores, path=path, min_path=isolation.min_path
    )


def _tweak_cells(
    tweak: _Tweaks, position: int, program: ForestProgram, row: _Row, problem: Problem
) -> tuple[NDArray[np.intp], float] | None:
    """Feature tweaking's counterfactual of ``row`` on the grid (None if none)."""
    answer = tweak.answer(position)
    if answer is None:
        return None
    return _on_grid(program, answer[0], row.points, row.terms, problem.cost.norm)


def _on_grid(
    program: ForestProgram,
    x_cf: NDArray[np.float64],
    points: NDArray[np.float64],
    terms: NDArray[np.float64],
    norm: str | None,
) -> tuple[NDArray[np.intp], float] | None:
    """Cells of a known counterfactual, and their objective on the grid."""
    cells = program.cell_of(x_cf[None, :])[0]
    picked = terms[cells]
    if not np.isfinite(picked).all():
        return None
    return cells, float(picked.max(initial=0.0) if norm == "linf" else picked.sum())


def _grid_search(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    *,
    deadline: float,
    terms: NDArray[np.float64] | None = None,
    earlier: list[Option] | None = None,
) -> GridSearch:
    """The local search of ``row``; with ``earlier`` options, only points that
    differ from each count as counterfactuals, and the one-hot groups stay in
    the categories the search starts from.

    The ascent does not see the earlier options: switching groups, it takes
    the switch of an earlier option again and the moves that went with it, a
    point no later option may be.  Measured on the 20 rows of
    ``benchmarks/bench_one_hot.py`` with three options (categories at a tenth
    of their ``"mad"`` weights): with switches in these searches too, two rows
    whose third option they then missed took 37.2 s and 3.9 s against 17.9 s
    and 1.2 s with no switch anywhere, all 20 rows 116 s against 97 s; with
    switches for the first option only, 84.4 s against 86.6 s.
    """
    i, decision = row.i, row.decision

    def meets(X: NDArray[np.float64]) -> NDArray[np.bool_]:
        ok = _meets_many(problem, X, i, program, decision)
        for option in earlier or ():
            ok &= option.allows(row.x, X)
        return ok

    movable = np.ones(program.n_features, dtype=bool)
    if earlier:
        movable = ~problem.constraints.in_one_hot
    return GridSearch(
        forest=problem.forest,
        program=program,
        decision=decision,
        meets=meets,
        points=row.points,
        terms=row.terms if terms is None else terms,
        movable=movable,
        one_hot=problem.constraints.one_hot,
        linf=problem.cost.norm == "linf",
        deadline=deadline,
    )


def _incumbent(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    known: _Known | None,
    *,
    deadline: float,
) -> tuple[tuple[NDArray[np.intp], float] | None, bool]:
    """The best counterfactual the local search finds by ``deadline``, from the
    row itself or, when the climb from there finds none, from a known one
    (``known()``: feature tweaking's, on the grid), as cells and objective
    (None if none), and whether the search ran to its end."""
    search = _grid_search(problem, program, row, deadline=deadline)
    points, own = row.points, row.own
    found = None
    if np.isfinite(row.terms[own]).all():
        climbed = greedy_ascent(search, own)
        if climbed is not None:
            found = descend(search, climbed)
    if found is None and known is not None:
        # Also out of time: feature tweaking's point is an answer at once.
        start = known()
        if start is not None and search.meets(points[start[0]][None, :])[0]:
            found = descend(search, start[0])
    if found is None:
        return None, not search.out_of_time()
    cells = kick(search, found, own)
    settled = not search.out_of_time()
    # Every step was confirmed with the forest; checked once more, as the cutoff
    # it gives proves nothing cheaper exists only if it is a counterfactual.
    if not search.meets(points[cells][None, :])[0]:
        return None, settled
    return (cells, search.objective(cells)), settled


def _option_incumbent(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    earlier: list[Option],
    undo: list[Option],
    *,
    deadline: float,
) -> tuple[tuple[NDArray[np.intp], float] | None, bool]:
    """A counterfactual that differs from every earlier option, by local search.

    Per move of an option of ``undo`` (earlier options found under the same
    conditions, the last one's first), with every cell repeating that move
    forbidden, a climb from that option with the move undone (a one-hot
    member's with its whole group; the next option is most often an earlier
    one with one move traded for another); if none succeeds, climbs from the
    row with each move of the last option so forbidden.  Each climb stops at
    the cost of the best found so far (a repair also after
    :data:`REPAIR_STEPS` moves) and is followed by a descent; the best is then
    kicked (:func:`kick`).  Every step is confirmed with the forest and the
    earlier options.
    """
    best: tuple[NDArray[np.intp], float] | None = None
    best_search: GridSearch | None = None
    settled = True

    def starts(
        option: Option, repair: bool
    ) -> list[tuple[GridSearch, NDArray[np.intp]]]:
        """Per move of ``option``: the search with that move forbidden, and its
        start (the option with the move undone for a repair, else the row)."""
        out = []
        blocked_cells = option.blocked_cells(program, row.points, row.x)
        for j, blocked in zip(np.flatnonzero(option.moved), blocked_cells):
            terms = row.terms.copy()
            terms[blocked] = np.inf
            search = _grid_search(
                problem, program, row, deadline=deadline, terms=terms, earlier=earlier
            )
            start = row.own.copy()
            if repair:
                moved = option.moved
                start[moved] = program.cell_of(option.x_cf[None, :])[0][moved]
                # A one-hot member goes back with its group (exactly one 1).
                back = next((g for g in problem.constraints.one_hot if j in g), [j])
                start[back] = row.own[back]
            if np.isfinite(terms[start]).all():
                out.append((search, start))
        return out

    for repair in (True, False):
        if not repair and best is not None:
            break
        sources = list(reversed(undo)) if repair else [earlier[-1]]
        steps = {"max_steps": REPAIR_STEPS} if repair else {}
        for search, start in [c for o in sources for c in starts(o, repair)]:
            if search.out_of_time():
                return best, False
            bound = np.inf if best is None else best[1]
            climbed = greedy_ascent(search, start, bound=bound, **steps)
            settled &= not search.out_of_time()
            if climbed is None:
                continue
            cells = descend(search, climbed)
            if search.meets(row.points[cells][None, :])[0]:
                objective = search.objective(cells)
                if best is None or objective < best[1]:
                    best, best_search = (cells, objective), search
    if best is not None and best_search is not None:
        cells = kick(best_search, best[0], row.own)
        best = (cells, best_search.objective(cells))
        settled &= not best_search.out_of_time()
    return best, settled and best is not None


def _solve_checked(
    problem: Problem,
    program: ForestProgram,
    row: _Row,
    incumbent: tuple[NDArray[np.intp], float] | None,
    deadline: float,
    *,
    cuts: tuple[tuple[NDArray[np.intp], float], ...] = (),
    heuristics: bool = True,
    upper: float = np.inf,
) -> MilpOutcome:
    """Solve, and confirm with the forest; raise the margin if a tie was misjudged.

    A known counterfactual (``incumbent``: its cells and objective) bounds the
    search; when nothing beats it, it is the answer.  ``heuristics``: whether
    HiGHS's primal heuristics run under that bound (not worth it when the
    local search ran to its end).  ``upper``: an objective the answer must not
    exceed, known from elsewhere (with no answer under it, the outcome is
    ``"infeasible"``).  When a raised margin leaves no answer after the model
    rejected one, nothing is proven: the outcome is ``"time_limit"``, marked
    ``unsettled`` (a known answer is then returned with its gap, not as
    optimal).
    """
    cutoff = upper if incumbent is None else min(incumbent[1], upper)
    outcome = MilpOutcome("infeasible", None, np.inf, np.inf)
    rejected: MilpOutcome | None = None  # the first answer the model rejected
    for margin in _MARGINS:
        remaining = max(deadline - time.perf_counter(), 1e-3)
        outcome = solve_cells(
            program,
            row.decision,
            row.terms,
            linf=problem.cost.norm == "linf",
            cutoff=cutoff,
            one_hot=problem.constraints.one_hot,
            one_cells=row.one_cells,
            time_limit=remaining,
            margin=margin,
            lead=vote_lead(problem),
            cuts=cuts,
            leaf_allowed=_leaf_allowed(problem, program),
            heuristics=heuristics,
        )
        if outcome.cells is None or _meets(
            problem, row.points[outcome.cells], row.i, program, row.decision
        ):
            break
        rejected = rejected or outcome
    if rejected is not None and outcome.status == "infeasible":
        # The wider margin cut off every answer, but the first solve found one
        # within tolerance of the target: a range narrower than the margin
        # (about 1e-5 of the score spread) or a near tie, not a proof.
        outcome = MilpOutcome("time_limit", None, np.inf, rejected.bound, True)
    # An answer the forest still rejects goes on to the final check, which
    # reports it as a bug rather than returning it.
    if incumbent is not None and (
        outcome.cells is None or outcome.objective > incumbent[1]
    ):
        if outcome.status != "time_limit":
            # Proven that nothing beats the incumbent: it is optimal.
            return MilpOutcome("optimal", incumbent[0], incumbent[1], incumbent[1])
        return MilpOutcome(
            "time_limit", incumbent[0], incumbent[1], min(outcome.bound, incumbent[1])
        )
    return outcome


def _meets_many(
    problem: Problem,
    X_cf: NDArray[np.float64],
    i: int,
    program: ForestProgram,
    decision: Decision,
) -> NDArray[np.bool_]:
    """Whether the forest assigns each row of ``X_cf`` to the target of row ``i``
    (with the margin's lead in the vote, when one is asked)."""
    forest = problem.forest
    leaves = forest._apply(X_cf.astype(forest.input_dtype))
    predicted = forest._predict_from_leaves(leaves)
    current = np.repeat(problem.current[i : i + 1], X_cf.shape[0])
    ok = np.asarray(problem.target.meets(predicted, current), dtype=bool)
    lead = vote_lead(problem)
    if lead > 0:
        ok &= _leads(forest, program, decision, leaves, lead)
    if problem.min_leaf_samples is not None:
        assert problem.support is not None
        reached = problem.support[forest._flat["offsets"][None, :] + leaves]
        ok &= (reached >= problem.min_leaf_samples).all(axis=1)
    if problem.isolation is not None and ok.any():
        ok[ok] = problem.isolation.meets(X_cf[ok])
    return ok


def _leads(
    forest: Forest,
    program: ForestProgram,
    decision: Decision,
    leaves: NDArray[np.intp],
    lead: float,
) -> NDArray[np.bool_]:
    """Whether the scores of the reached ``leaves`` give the target its lead."""
    index = program.node_leaf[forest._flat["offsets"][None, :] + leaves]
    total = decision.base + decision.scores[index].sum(axis=1)
    tolerance = 1e-9 * (1.0 + lead)
    if decision.kind == "interval":
        score = total[:, 0]
        return (score >= decision.low + lead - tolerance) & (
            score <= decision.high - lead + tolerance
        )
    ok = np.zeros(total.shape[0], dtype=bool)
    for k in decision.targets:
        others = np.delete(total, k, axis=1)
        ok |= (total[:, k : k + 1] - others >= lead - tolerance).all(axis=1)
    return ok


def _meets(
    problem: Problem,
    x_cf: NDArray[np.float64],
    i: int,
    program: ForestProgram,
    decision: Decision,
) -> bool:
    return bool(_meets_many(problem, x_cf[None, :], i, program, decision)[0])


def _gap(cost: float, bound: float, norm: str | None) -> float:
    """Proven relative gap ``(cost - lower bound) / cost`` (the bound is squared for l2)."""
    # Costs are never negative, so 0 is always a proven lower bound.
    bound = max(bound, 0.0)
    if norm == "l2":
        bound = float(np.sqrt(bound))
    return float(max(cost - bound, 0.0) / cost) if cost > 0 else 0.0
