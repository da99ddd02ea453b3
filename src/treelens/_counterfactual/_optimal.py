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
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._chunks import is_chunk_stream
from .._core._validation import check_memory_budget
from .._exceptions import InputError
from .._types import ArrayLike, Chunks, CostLike, EpsilonLike, ModelLike, TargetLike
from ._constraints import Constraints
from ._milp._program import ForestProgram, forest_program
from ._milp._search import GridSearch, descend, greedy_ascent, kick
from ._milp._solve import (
    STRICT_MARGIN,
    Decision,
    MilpOutcome,
    decision_for,
    price_cells,
    solve_cells,
)
from ._problem import (
    REASON_INFEASIBLE,
    REASON_TIME_LIMIT,
    CounterfactualResult,
    Problem,
    finish,
    prepare_problem,
)
from ._streaming import search_in_chunks
from ._targets import encode_classes

__all__ = ["optimal_counterfactual"]

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


def optimal_counterfactual(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    target: TargetLike,
    cost: CostLike = "l1",
    epsilon: EpsilonLike = "auto",
    constraints: Constraints | None = None,
    reference: ArrayLike | None = None,
    time_limit: float = 30.0,
    warm_start: bool = True,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
) -> CounterfactualResult:
    """Least-cost counterfactuals over the whole ensemble, proven optimal.

    For each row ``x`` not already assigned to ``target``, finds the point
    ``x'`` of least ``cost`` that the model assigns to the target.  Each feature
    of ``x'`` lies in one *cell*: an interval ``(t_k, t_{k+1}]`` between two
    consecutive split thresholds of that feature over all trees, on the values
    the model sees after casting to its input dtype.  Within a cell, the point
    is ``x_j`` itself if it lies there, else the nearest point of the cell kept
    ``epsilon_j`` away from its thresholds (its midpoint when the cell is
    narrower than ``2 epsilon_j``; the nearest whole number for integer
    features).  The choice of cells is a mixed-integer program (one binary per
    cell, the leaf each tree reaches, the ensemble's decision as linear rows on
    the reached leaves), solved by HiGHS (through ``highspy``).

    Parameters
    ----------
    model : fitted estimator or Forest
        Any model :func:`~treelens.to_forest` reads.
    X : array-like of shape (n_samples, n_features)
        Rows to explain (one row may be 1-D).  NaN is refused.
    target : class label, "other", or (low, high)
        As for :func:`~treelens.feature_tweak`: a class label or ``"other"``
        (any class but the current one) for classifiers, a closed interval of
        the predicted value for regressors.  Ties between classes follow the
        model (the first class wins an exact tie of averaged probabilities).
    cost : str, array-like or mapping, default="l1"
        Any separable cost of :func:`~treelens.feature_tweak`: ``"l1"``,
        ``"l2"`` (the sum of squared terms is minimized, which has the same
        minimizer), ``"l0"``, ``"linf"`` (through an auxiliary variable),
        ``"mad"``, per-feature weights or ``{"norm": ..., "weights": ...}``.
        ``"cosine"`` and callables are not separable and are refused.
    epsilon : float, array-like of shape (n_features,) or "auto", default="auto"
        How far inside a cell a moved value lands, as for
        :func:`~treelens.feature_tweak`.  ``0`` gives the exact nearest value of
        the cell (one float32 step past a threshold for scikit-learn models).
    constraints : Constraints, optional
        Immutable, increase-only, decrease-only, bounded, integer and one-hot
        features; they restrict the cells each feature may take.
    reference : array-like of shape (n_reference, n_features), optional
        Data for ``"mad"`` costs and ``"auto"`` epsilon (typically the
        training set).
    time_limit : float, default=30.0
        Seconds each row may take: the local search of the warm start (at
        most a tenth of it) and then HiGHS.
    warm_start : bool, default=True
        Find a counterfactual before the exact search (feature tweaking's answer
        and a local search over the cells): its cost is a cutoff HiGHS prunes
        against from the start, and it is returned when the time limit stops
        the search first, so the answer is never costlier than feature
        tweaking's.  ``False`` runs the program alone.
    memory_budget : int, default=2**30
        Largest number of bytes the program of the model may need; larger
        models are refused with the program's size.
    progress : bool, default=False
        Show a progress bar over the rows.  ``X`` may also be an iterable of
        chunks (arrays or DataFrames), solved chunk by chunk
        (:mod:`treelens._counterfactual._streaming`).

    Returns
    -------
    CounterfactualResult
        As for :func:`~treelens.feature_tweak`, plus per row ``status_``:
        ``"optimal"`` (proven least cost; also for rows already at the target),
        ``"time_limit"`` (the best answer found when the time ran out, with its
        proven relative gap ``(cost - lower bound) / cost`` in ``gap_``) or
        ``"infeasible"`` (proven that no change reaches the target under the
        constraints).  ``gap_`` is 0 for optimal rows, NaN for infeasible ones
        and inf when nothing was found in time.  Every counterfactual is
        confirmed with the source model's own ``predict``; costs are exact up to
        a margin at ties between classes (see the module's notes).

    Raises
    ------
    InputError
        As :func:`~treelens.feature_tweak`, and for a cost that is not
        separable, a ``time_limit`` that is not a positive number, or a model
        whose program would exceed ``memory_budget``.

    See Also
    --------
    feature_tweak : The fast heuristic built from single leaves.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from treelens import optimal_counterfactual
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> result = optimal_counterfactual(model, X[:2], target=2, reference=X)
    >>> result.status_.tolist(), model.predict(result.X_cf_).tolist()
    (['optimal', 'optimal'], [2, 2])
    """
    if progress or is_chunk_stream(X):
        # Exact solves take about a second per row: small chunks keep the
        # progress bar moving.
        search = partial(
            optimal_counterfactual,
            model,
            target=target,
            cost=cost,
            epsilon=epsilon,
            constraints=constraints,
            reference=reference,
            time_limit=time_limit,
            warm_start=warm_start,
            memory_budget=memory_budget,
        )
        return search_in_chunks(
            search,
            X,
            chunk_rows=_OPTIMAL_CHUNK_ROWS,
            progress=progress,
            description="optimal counterfactuals",
        )
    _check_time_limit(time_limit)
    check_memory_budget(memory_budget)
    problem = prepare_problem(
        model,
        X,
        target=target,
        cost=cost,
        epsilon=epsilon,
        constraints=constraints,
        reference=reference,
    )
    program = _program_of(problem, float(memory_budget))
    todo = np.flatnonzero(~problem.at_target)
    tweak = (
        _tweak_start(problem, todo, target, cost, constraints, int(memory_budget))
        if warm_start and todo.size
        else None
    )
    return _solve_rows(problem, program, todo, tweak, float(time_limit), warm_start)


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
    return forest_program(
        problem.forest, extra_cuts=one_hot_features, memory_budget=memory_budget
    )


def _check_time_limit(time_limit: object) -> None:
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, (int, float, np.integer, np.floating))
        or not np.isfinite(time_limit)
        or time_limit <= 0
    ):
        raise InputError(
            f"`time_limit` must be a positive number of seconds; got {time_limit!r}."
        )


def _tweak_start(
    problem: Problem,
    todo: NDArray[np.intp],
    target: Any,
    cost: Any,
    constraints: Constraints | None,
    memory_budget: int,
) -> CounterfactualResult:
    """Feature tweaking's answers for the rows ``todo``: a first cutoff."""
    from ._tweak import feature_tweak

    return feature_tweak(
        problem.forest,
        problem.X[todo],
        target=target,
        cost=cost,
        epsilon=problem.epsilon,
        constraints=constraints,
        reference=problem.reference,
        memory_budget=memory_budget,
    )


def _solve_rows(
    problem: Problem,
    program: ForestProgram,
    todo: NDArray[np.intp],
    tweak: CounterfactualResult | None,
    time_limit: float,
    warm_start: bool = True,
) -> CounterfactualResult:
    n, n_features = problem.X.shape
    X_cf = np.full((n, n_features), np.nan)
    cost = np.full(n, np.inf)
    found = np.zeros(n, dtype=bool)
    reason = np.full(n, None, dtype=object)
    status = np.full(n, "optimal", dtype=object)
    gap = np.zeros(n)
    resolved = problem.constraints
    lo, hi = resolved.feasible_intervals(problem.X)
    norm = problem.cost.norm
    one_hot = resolved.one_hot
    for position, i in enumerate(todo):  # one program per row
        x = problem.X[i]
        points, terms = price_cells(
            program,
            x,
            lo[i],
            hi[i],
            resolved.integer,
            problem.epsilon,
            problem.cost.terms,
        )
        one_cells = points == 1.0 if one_hot else None
        decision = _decision(problem, i)
        deadline = time.perf_counter() + time_limit
        known = None
        if tweak is not None and tweak.found_[position]:
            known = _on_grid(program, tweak.X_cf_[position], points, terms, norm)
        incumbent, settled = known, False
        if warm_start:
            incumbent, settled = _incumbent(
                problem,
                program,
                decision,
                points,
                terms,
                known,
                i,
                deadline=time.perf_counter() + _SEARCH_SHARE * time_limit,
            )
        outcome = _solve_checked(
            problem,
            program,
            decision,
            points,
            terms,
            incumbent,
            one_cells,
            deadline,
            i,
            heuristics=not settled,
        )
        if outcome.cells is not None:
            X_cf[i] = points[outcome.cells]
            cost[i] = problem.cost.many(x[None, :], X_cf[i][None, :])[0]
            found[i] = True
        if (
            tweak is not None
            and tweak.found_[position]
            and tweak.cost_[position] < cost[i]
        ):
            # Feature tweaking's point may sit closer than epsilon to another
            # tree's threshold, which the cells avoid: never return more than it.
            X_cf[i], cost[i], found[i] = (
                tweak.X_cf_[position],
                tweak.cost_[position],
                True,
            )
        if found[i]:
            stopped = outcome.status == "time_limit"
            status[i] = "time_limit" if stopped else "optimal"
            gap[i] = _gap(cost[i], outcome.bound, norm) if stopped else 0.0
        elif outcome.status == "infeasible":
            status[i], reason[i], gap[i] = "infeasible", REASON_INFEASIBLE, np.nan
        else:
            status[i], reason[i], gap[i] = "time_limit", REASON_TIME_LIMIT, np.inf
    return finish(
        problem,
        X_cf=X_cf,
        found=found,
        cost=cost,
        reason=reason,
        method="optimal_counterfactual",
        status=status,
        gap=gap,
    )


def _decision(problem: Problem, i: int) -> Decision:
    forest, target = problem.forest, problem.target
    if target.kind == "interval":
        return decision_for(forest, low=target.low, high=target.high)
    if target.kind == "class":
        return decision_for(forest, targets=(target.index,))
    current = int(encode_classes(forest, problem.current[i : i + 1])[0])
    return decision_for(
        forest, targets=tuple(k for k in range(forest.n_classes) if k != current)
    )


def _on_grid(
    program: ForestProgram,
    x_cf: NDArray[np.float64],
    points: NDArray[np.float64],
    terms: NDArray[np.float64],
    norm: str | None,
) -> tuple[NDArray[np.intp], float] | None:
    """Cells of a known counterfactual, and their objective on the grid."""
    cells = program.cell_of(
        x_cf.astype(program.input_dtype).astype(np.float64)[None, :]
    )[0]
    picked = terms[cells]
    if not np.isfinite(picked).all():
        return None
    return cells, float(picked.max(initial=0.0) if norm == "linf" else picked.sum())


def _incumbent(
    problem: Problem,
    program: ForestProgram,
    decision: Decision,
    points: NDArray[np.float64],
    terms: NDArray[np.float64],
    known: tuple[NDArray[np.intp], float] | None,
    i: int,
    *,
    deadline: float,
) -> tuple[tuple[NDArray[np.intp], float] | None, bool]:
    """The best counterfactual the local search finds by ``deadline``, from the
    row itself and from a known one (feature tweaking's, on the grid), as cells
    and objective (None if none), and whether the search ran to its end."""
    forest = problem.forest
    search = GridSearch(
        forest=forest,
        program=program,
        decision=decision,
        meets=lambda X: _meets_many(problem, X, i),
        points=points,
        terms=terms,
        movable=~problem.constraints.in_one_hot,
        linf=problem.cost.norm == "linf",
        deadline=deadline,
    )
    found = []
    if known is not None and search.meets(points[known[0]][None, :])[0]:
        found.append(descend(search, known[0]))
    own = program.cell_of(
        problem.X[i].astype(program.input_dtype).astype(np.float64)[None, :]
    )[0]
    if np.isfinite(terms[own]).all():
        climbed = greedy_ascent(search, own)
        if climbed is not None:
            found.append(descend(search, climbed))
    if not found:
        return None, not search.out_of_time()
    cells = kick(search, min(found, key=search.objective), own)
    settled = not search.out_of_time()
    # Every step was confirmed with the forest; checked once more, as the cutoff
    # it gives proves nothing cheaper exists only if it is a counterfactual.
    if not search.meets(points[cells][None, :])[0]:
        return None, settled
    return (cells, search.objective(cells)), settled


def _solve_checked(
    problem: Problem,
    program: ForestProgram,
    decision: Decision,
    points: NDArray[np.float64],
    terms: NDArray[np.float64],
    incumbent: tuple[NDArray[np.intp], float] | None,
    one_cells: NDArray[np.bool_] | None,
    deadline: float,
    i: int,
    *,
    heuristics: bool = True,
) -> MilpOutcome:
    """Solve, and confirm with the forest; raise the margin if a tie was misjudged.

    A known counterfactual (``incumbent``: its cells and objective) bounds the
    search; when nothing beats it, it is the answer.  ``heuristics``: whether
    HiGHS's primal heuristics run under that bound (not worth it when the
    local search ran to its end).
    """
    cutoff = np.inf if incumbent is None else incumbent[1]
    outcome = MilpOutcome("infeasible", None, np.inf, np.inf)
    for margin in _MARGINS:
        remaining = max(deadline - time.perf_counter(), 1e-3)
        outcome = solve_cells(
            program,
            decision,
            terms,
            linf=problem.cost.norm == "linf",
            cutoff=cutoff,
            one_hot=problem.constraints.one_hot,
            one_cells=one_cells,
            time_limit=remaining,
            margin=margin,
            heuristics=heuristics,
        )
        if outcome.cells is None or _meets(problem, points[outcome.cells], i):
            break
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
    problem: Problem, X_cf: NDArray[np.float64], i: int
) -> NDArray[np.bool_]:
    """Whether the forest assigns each row of ``X_cf`` to the target of row ``i``."""
    forest = problem.forest
    predicted = forest._predict_from_leaves(
        forest._apply(X_cf.astype(forest.input_dtype))
    )
    current = np.repeat(problem.current[i : i + 1], X_cf.shape[0])
    return np.asarray(problem.target.meets(predicted, current), dtype=bool)


def _meets(problem: Problem, x_cf: NDArray[np.float64], i: int) -> bool:
    forest = problem.forest
    leaves = forest._apply(x_cf.astype(forest.input_dtype)[None, :])
    predicted = forest._predict_from_leaves(leaves)
    return bool(problem.target.meets(predicted, problem.current[i : i + 1])[0])


def _gap(cost: float, bound: float, norm: str | None) -> float:
    """Proven relative gap ``(cost - lower bound) / cost`` (the bound is squared for l2)."""
    # Costs are never negative, so 0 is always a proven lower bound.
    bound = max(bound, 0.0)
    if norm == "l2":
        bound = float(np.sqrt(bound))
    return float(max(cost - bound, 0.0) / cost) if cost > 0 else 0.0
