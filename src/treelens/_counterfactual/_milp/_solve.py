"""The instance-dependent part of the optimal-counterfactual program, and its solve.

:mod:`treelens._counterfactual._milp._program` builds, once per model, the cells of every feature
and the constant rows tying cells to the leaves each tree reaches.  Here, per row
``x``:

1. :func:`price_cells` gives every cell the point nearest to ``x`` inside it (under
   the constraints) and that point's cost term, which makes any separable cost
   exact in a linear objective;
2. :func:`solve_cells` prunes cells that alone cost more than the cutoff (the cost
   of a known counterfactual), leaves whose box meets no remaining cell, and trees
   whose remaining leaves all agree; adds the decision rows of the target;
   leaves out each tree's least leaves when those rows only bound from below
   (:func:`_floor_leaves`); and solves with HiGHS
   (:func:`treelens._counterfactual._milp._highs.solve_milp`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..._core._cache import derived
from ..._core._forest import Forest
from ..._exceptions import SolverError
from ._highs import HighsResult, HighsStatus, solve_milp
from ._program import ForestProgram

__all__ = [
    "DOMINATED_COLUMNS",
    "PRESOLVE_RULES_OFF",
    "PROBING",
    "Decision",
    "MilpOutcome",
    "decision_for",
    "price_cells",
    "solve_cells",
]

# A strict inequality between ensemble scores is written ``>= margin * spread``,
# where ``spread`` is the sum over trees of the range of the scores compared.
# HiGHS accepts binaries off by up to 1e-6 (its integrality tolerance), which
# lets every tree's leaf weights leak about that share of its range into the
# vote: a margin of 1e-6 alone was met by leaked weight at exact ties on most
# rows of depth-8 forests, each costing a second solve.  Every answer is also
# confirmed with the model afterwards.
STRICT_MARGIN = 1e-6
# Relative optimality gap under which HiGHS stops and reports optimality.
MIP_REL_GAP = 1e-6
#: Bits of HiGHS's presolve rules (``presolve_rule_off``) for probing and for
#: dominated columns, rules 15 and 5 of HiGHS 1.16 (run with
#: ``log_dev_level=1``, HiGHS lists its rules and bits).
PROBING, DOMINATED_COLUMNS = 1 << 15, 1 << 5
#: The presolve rules every program is solved without (see _highs_options).
PRESOLVE_RULES_OFF = PROBING | DOMINATED_COLUMNS
# HiGHS options when a known counterfactual gives the cutoff.
_WITHOUT_HEURISTICS: dict[str, Any] = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_run_zi_round": False,
    "mip_heuristic_run_shifting": False,
    "mip_heuristic_run_feasibility_jump": False,
}


@dataclass(frozen=True, eq=False)
class Decision:
    """What the reached leaves must add up to, as linear rows.

    For classifiers, with ``score_c = base_c + sum_trees scores[leaf, c]``, class
    ``k`` wins when ``score_k - score_j >= 0`` for every ``j`` (``> 0`` where
    ``strict[k, j]``); the prediction must be one of ``targets``.  For regressors,
    ``low <= base + sum_trees scores[leaf, 0] <= high``.  With ``path``, also
    ``sum_trees path[leaf] >= min_path`` (an IsolationForest's trees, whose
    leaves score nothing, bounding the anomaly score).

    Attributes
    ----------
    kind : {"classes", "interval"}
    scores : ndarray of shape (n_leaves, n_scores)
    base : ndarray of shape (n_scores,)
    targets : tuple of int
    strict : ndarray of shape (n_scores, n_scores), bool
    low, high : float
    path : ndarray of shape (n_leaves,), optional
        Path length of every leaf (0 at the model's own leaves).
    min_path : float
    """

    kind: Literal["classes", "interval"]
    scores: NDArray[np.float64]
    base: NDArray[np.float64]
    targets: tuple[int, ...] = ()
    strict: NDArray[np.bool_] | None = None
    low: float = -np.inf
    high: float = np.inf
    path: NDArray[np.float64] | None = None
    min_path: float = 0.0


def _forest_scores(forest: Forest) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-leaf score vectors and the base vector whose sum the model thresholds."""
    from ..._core._boxes import leaf_boxes

    boxes = leaf_boxes(forest)
    if forest.kind != "boosting":
        if forest.is_classifier:
            return boxes.value, np.zeros(boxes.value.shape[1])
        # The mean of the trees, as the model computes it.
        return boxes.value[:, :1] / forest.n_trees, np.zeros(1)
    contribution = forest.learning_rate * boxes.value[:, 0]
    if forest.is_classifier and forest.n_outputs == 1:
        scores = np.zeros((boxes.n_leaves, 2))
        scores[:, 1] = contribution
        return scores, np.array([0.0, forest.init_raw[0]])
    n_outputs = forest.n_outputs
    scores = np.zeros((boxes.n_leaves, n_outputs))
    scores[np.arange(boxes.n_leaves), forest.tree_output[boxes.tree]] = contribution
    return scores, forest.init_raw.astype(np.float64)


def decision_for(
    forest: Forest,
    *,
    targets: tuple[int, ...] = (),
    low: float = -np.inf,
    high: float = np.inf,
) -> Decision:
    """The decision rows for reaching one of the class positions ``targets``
    (classifiers) or a prediction in ``[low, high]`` (regressors).

    Ties follow the model: scikit-learn's ``argmax`` gives the first class, so
    class ``k`` must beat earlier classes strictly; binary gradient boosting
    predicts the second class when the raw score is ``>= 0``.
    """
    scores, base = derived(forest, "milp_scores", lambda: _forest_scores(forest))
    if not forest.is_classifier:
        return Decision(kind="interval", scores=scores, base=base, low=low, high=high)
    k = scores.shape[1]
    later = np.arange(k)[None, :] < np.arange(k)[:, None]  # strict[k, j] = j < k
    if forest.kind == "boosting" and forest.n_outputs == 1:
        later = np.array([[False, True], [False, False]])
    return Decision(
        kind="classes", scores=scores, base=base, targets=targets, strict=later
    )


def price_cells(
    program: ForestProgram,
    x: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    integer: NDArray[np.bool_],
    epsilon: NDArray[np.float64],
    terms: Any,
    margin: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The point of every cell nearest to ``x``, and its cost term.

    Within cell ``(a, b]`` of feature ``j`` and the feasible interval
    ``[lo_j, hi_j]``: ``x_j`` itself when it lies there; otherwise the nearest
    point of the cell shrunk by ``epsilon_j`` at each threshold edge (its
    midpoint when the cell is narrower than ``2 epsilon_j``).  With
    ``epsilon_j = 0`` that is the cell's edge nearest ``x_j``: the float64
    value nearest the threshold that the model, after its own cast, still
    routes past it.  Integer features take the nearest whole number in the
    cell.

    Where ``margin_j > 0`` the point ``p`` must keep the whole interval
    ``[p - margin_j, p + margin_j]`` inside the cell (every value in it, after
    the model's cast, routes like ``p``): ``x_j`` stays only when it does, cells
    narrower than that hold no point, and ``epsilon_j`` is not used.

    Parameters
    ----------
    program : ForestProgram
    x, lo, hi, epsilon : ndarray of shape (n_features,)
    integer : ndarray of shape (n_features,), bool
    terms : callable
        ``terms(delta) -> per-feature cost terms`` for ``delta`` of shape
        (k, n_features) (``Cost.terms``).

    Returns
    -------
    points : ndarray of shape (n_cells,)
    cost_terms : ndarray of shape (n_cells,)
        ``inf`` for cells holding no feasible point.
    """
    f = program.cell_feature
    xc, is_int = x[f], integer[f]
    # Feasible values of the cell: [cell_min, cell_high] within [lo, hi].
    r_lo = np.maximum(program.cell_min, lo[f])
    r_hi = np.minimum(program.cell_high, hi[f])
    m = np.zeros(f.size) if margin is None else margin[f]
    robust = m > 0
    if robust.any():
        r_lo, r_hi = _robust_range(program, r_lo, r_hi, m, robust)
    r_lo = np.where(is_int, np.ceil(r_lo), r_lo)
    r_hi = np.where(is_int, np.floor(r_hi), r_hi)
    feasible = r_lo <= r_hi
    # Kept away from the thresholds by epsilon where the cell is wide enough.
    eps = np.where(is_int | robust, 0.0, epsilon[f])
    with np.errstate(invalid="ignore"):
        s_lo = np.maximum(r_lo, program.cell_low + eps)
        s_hi = np.minimum(r_hi, program.cell_high - eps)
        narrow = ~(s_lo <= s_hi)
        middle = np.clip(0.5 * (r_lo + r_hi), r_lo, r_hi)
        middle = np.where(is_int, np.clip(np.round(middle), r_lo, r_hi), middle)
    s_lo = np.where(narrow, middle, s_lo)
    s_hi = np.where(narrow, middle, s_hi)
    # x itself in the cell the model routes it to, when the constraints let it stay.
    stay = (x >= lo) & (x <= hi) & (~integer | (x == np.round(x)))
    inside = (xc >= program.cell_min) & (xc <= program.cell_high) & stay[f]
    inside &= ~robust | ((xc - m >= program.cell_min) & (xc + m <= program.cell_high))
    feasible |= inside
    points = np.where(inside, xc, np.clip(xc, s_lo, s_hi))
    points = np.where(feasible, points, np.nan)
    # Cost.terms works on rows of n_features deltas: lay the cells out as a
    # (cells per feature, n_features) table.
    local = np.arange(f.size) - program.cell_offsets[f]
    table = np.zeros((int(local.max(initial=0)) + 1, program.n_features))
    table[local, f] = np.where(feasible, points - xc, 0.0)
    cost_terms = np.where(feasible, terms(table)[local, f], np.inf)
    return points, cost_terms


def _robust_range(
    program: ForestProgram,
    r_lo: NDArray[np.float64],
    r_hi: NDArray[np.float64],
    m: NDArray[np.float64],
    robust: NDArray[np.bool_],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Shrink each cell's range so that ``[p - m, p + m]`` stays in the cell.

    The cell holds exactly the float64 values from ``cell_min`` to
    ``cell_high``: ``p - m >= cell_min`` and ``p + m <= cell_high``, checked
    after rounding (a difference rounded up onto ``cell_min`` is nearer it than
    the float64 below), make every float64 value within ``m`` of ``p`` route
    into the cell.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        low = program.cell_min + m
        short = np.isfinite(low) & (low - m < program.cell_min)
        low[short] = np.nextafter(low[short], np.inf)
        high = program.cell_high - m
        over = np.isfinite(high) & (high + m > program.cell_high)
        high[over] = np.nextafter(high[over], -np.inf)
    return (
        np.where(robust, np.maximum(r_lo, low), r_lo),
        np.where(robust, np.minimum(r_hi, high), r_hi),
    )


@dataclass(frozen=True)
class MilpOutcome:
    """What one solve found.

    Attributes
    ----------
    status : {"optimal", "time_limit", "infeasible"}
    cells : ndarray of shape (n_features,) or None
        Global cell index chosen for each feature (None when no solution).
    objective : float
        Objective of ``cells`` (sum of terms, or their max for linf); inf if None.
    bound : float
        Proven lower bound on the objective (``-inf`` when unknown).
    unsettled : bool, default=False
        With ``status="time_limit"``: stopped not by the clock but because
        the model rejected the solver's answers, which met the target only
        within its tolerances, and a safer margin left none (nothing proved
        that no answer exists).
    """

    status: Literal["optimal", "time_limit", "infeasible"]
    cells: NDArray[np.intp] | None
    objective: float
    bound: float
    unsettled: bool = False


def solve_cells(
    program: ForestProgram,
    decision: Decision,
    cost_terms: NDArray[np.float64],
    *,
    linf: bool = False,
    cutoff: float = np.inf,
    **options: Any,
) -> MilpOutcome:
    """Least-cost choice of one cell per feature meeting ``decision``, with the
    objective scaled so that the cutoff (else the largest term) is 1 when it is
    far from 1.

    The program's speed then does not depend on the units of the cost: terms in
    squared currency and in median absolute deviations give HiGHS numbers of
    the same size.  Objectives within ``[0.01, 100]`` are left as they are (the
    options of :func:`_highs_options` were tuned on them).  Objectives and
    bounds are returned in the original units.  Arguments as
    :func:`_solve_cells`.
    """
    finite = cost_terms[np.isfinite(cost_terms)]
    if np.isfinite(cutoff) and cutoff > 0:
        scale = float(cutoff)
    else:
        scale = float(finite.max(initial=0.0))
    if not (np.isfinite(scale) and scale > 0) or 1e-2 <= scale <= 1e2:
        scale = 1.0
    with np.errstate(over="ignore"):
        # Only terms far above the cutoff can overflow: inf, they are dropped
        # as they would be anyway.
        scaled = cost_terms / scale
    outcome = _solve_cells(
        program,
        decision,
        scaled,
        linf=linf,
        cutoff=cutoff / scale,
        **options,
    )
    if outcome.cells is None:
        return MilpOutcome(outcome.status, None, np.inf, outcome.bound * scale)
    picked = cost_terms[outcome.cells]
    value = float(picked.max(initial=0.0) if linf else picked.sum())
    return MilpOutcome(
        outcome.status, outcome.cells, value, min(value, outcome.bound * scale)
    )


def _solve_cells(
    program: ForestProgram,
    decision: Decision,
    cost_terms: NDArray[np.float64],
    *,
    linf: bool = False,
    cutoff: float = np.inf,
    one_hot: tuple[NDArray[np.intp], ...] = (),
    one_cells: NDArray[np.bool_] | None = None,
    time_limit: float = 30.0,
    margin: float = STRICT_MARGIN,
    lead: float = 0.0,
    cuts: tuple[tuple[NDArray[np.intp], float], ...] = (),
    leaf_allowed: NDArray[np.bool_] | None = None,
    heuristics: bool | None = None,
) -> MilpOutcome:
    """Least-cost choice of one cell per feature meeting ``decision``.

    The program is the model's constant part (:class:`ForestProgram`: columns
    ``z`` cells, ``v`` thresholds, ``y`` leaves; link, tree and split rows), cut
    down to what can matter under ``cutoff`` (:func:`_prune`), and extended by
    this row's blocks:

    ==========  ===============================================  ===============
    block       columns                                          rows
    ==========  ===============================================  ===============
    decision    ``w``: one binary per target class when there    the score rows
                are several (the class that wins)                of the target
                                                                 (:func:`_decision_rows`)
    cost        ``c_j``: the cost term of feature ``j``'s cell;  ``c_j = sum terms
                ``s = max_j c_j`` for linf                       * z`` (and ``s >= c_j``)
    one-hot     none                                             one cell of value 1
                                                                 per group
    ==========  ===============================================  ===============

    The objective is ``sum_j c_j`` (or ``s``); HiGHS runs with the options of
    :func:`_highs_options` and its answer is decoded by :func:`_decode`.

    Parameters
    ----------
    program : ForestProgram
    decision : Decision
    cost_terms : ndarray of shape (n_cells,)
        Cost term of each cell, ``inf`` for forbidden cells.
    linf : bool, default=False
        Minimize the largest term instead of their sum.
    cutoff : float, default=inf
        Only solutions of objective at most ``cutoff`` are sought; cells whose
        term alone exceeds it are dropped.
    one_hot : tuple of ndarray of int
        Feature groups of which exactly one must take a cell in ``one_cells``.
    one_cells : ndarray of shape (n_cells,), bool
        Cells whose point is 1 (members of one-hot groups).
    time_limit : float
        Seconds for HiGHS.
    margin : float
        Margin of strict inequalities, relative to the spread of the scores
        compared (the sum over the trees of each tree's range, at least 1);
        above :data:`STRICT_MARGIN` (a retry after the model disagreed) also
        of non-strict ones and, scaled likewise or by the interval's ends, of
        interval ends.
    lead : float, default=0.0
        Least lead of the target's score (a robustness margin on the vote).
    cuts : tuple of (ndarray of int, float)
        Rows ``sum z[cells] <= bound`` (no-good cuts between options).
    leaf_allowed : ndarray of shape (n_leaves,), bool, optional
        Leaves the counterfactual may reach (those of enough support).
    heuristics : bool, optional
        Run HiGHS's primal heuristics; by default only without a cutoff (a
        counterfactual close to the optimum makes them a waste of time; a poor
        one, from a local search cut short, does not).

    Returns
    -------
    MilpOutcome
    """
    pruned = _prune(program, decision, cost_terms, cutoff, linf, leaf_allowed)
    if pruned is None:
        return _INFEASIBLE
    rows = _ExtraRows()
    n_choice = _decision_rows(pruned, decision, margin, rows, lead)
    if n_choice is None or not _path_row(pruned, margin, rows):
        return _INFEASIBLE
    n_leaf_rows = rows.n_rows  # the only rows over the leaves' columns
    for cut_cells, bound in cuts:
        rows.add(cut_cells, np.ones(cut_cells.size), -np.inf, bound)
    c0 = pruned.n_base + n_choice
    objective = _cost_rows(program, pruned, cost_terms, linf, c0, rows)
    if one_hot:
        assert one_cells is not None
        _one_hot_rows(program, one_hot, one_cells, rows)
    n_cols = objective.size
    matrix, row_lower, row_upper, col_upper = _assemble(
        program, pruned, rows, n_leaf_rows, n_cols
    )
    n_cells = program.n_cells
    integrality = _integrality(program, pruned, n_choice, n_cols)
    col_upper[:n_cells] = pruned.allowed
    col_upper[c0:] = cutoff + pruned.slack if np.isfinite(cutoff) else np.inf
    options = _highs_options(time_limit, cutoff, pruned.slack, heuristics)
    started = time.perf_counter()

    def solve(options: dict[str, Any]) -> HighsResult:
        return solve_milp(
            objective,
            integrality,
            np.zeros(n_cols),
            col_upper,
            matrix,
            row_lower,
            row_upper,
            options,
        )

    def left() -> float:
        return max(float(time_limit) - (time.perf_counter() - started), 1e-3)

    result = solve(options)
    if _solve_error(result) and options["presolve"]:
        # HiGHS's presolve occasionally ends in a "solve error" on these
        # programs; the same program without presolve solves.
        result = solve({**options, "presolve": False, "time_limit": left()})
    if _solve_error(result) and np.isfinite(cutoff):
        # Pruned to the cutoff, a program whose only answers sit at the cutoff
        # can end in a "solve error" too (a point off by the strict margin
        # within tolerances); the program without the cutoff solves.
        return _solve_cells(
            program,
            decision,
            cost_terms,
            linf=linf,
            one_hot=one_hot,
            one_cells=one_cells,
            time_limit=left(),
            margin=margin,
            lead=lead,
            cuts=cuts,
            leaf_allowed=leaf_allowed,
            heuristics=heuristics,
        )
    return _decode(result, program, pruned.allowed, cost_terms, linf)


def _assemble(
    program: ForestProgram,
    pruned: _Pruned,
    rows: _ExtraRows,
    n_leaf_rows: int,
    n_cols: int,
) -> tuple[
    sp.csr_matrix, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    """The program's rows (the kept constant ones, then ``rows``, of which the
    first ``n_leaf_rows`` are the only ones over the leaves), their bounds, and
    the columns' upper bounds (1, or 0 for the floors of :func:`_floor_leaves`).
    """
    static = pruned.static  # sliced for this call: resized in place
    static.resize((static.shape[0], n_cols))
    extra, extra_lower = rows.matrix(n_cols), rows.lower
    leaf_rows = slice(0, n_leaf_rows)
    floors = _floor_leaves(
        pruned, extra[leaf_rows], extra_lower[leaf_rows], rows.upper[leaf_rows]
    )
    if floors is not None:
        extra = sp.vstack([floors.rows, extra[n_leaf_rows:]], format="csr")
        extra_lower = np.r_[floors.lower, extra_lower[n_leaf_rows:]]
    matrix = sp.vstack([static, extra], format="csr")
    row_lower = np.concatenate([program.row_lower[pruned.row_keep], extra_lower])
    row_upper = np.concatenate([program.row_upper[pruned.row_keep], rows.upper])
    col_upper = np.ones(n_cols)
    if floors is not None:
        # Tree rows ``sum y <= 1`` (they follow the link rows); floors fixed at 0.
        row_lower[program.n_cells + np.flatnonzero(~pruned.exact_trees)] = -np.inf
        col_upper[pruned.y_columns[floors.dropped]] = 0.0
    return matrix, row_lower, row_upper, col_upper


def _integrality(
    program: ForestProgram, pruned: _Pruned, n_choice: int, n_cols: int
) -> NDArray[np.int8]:
    """Which columns are whole: the cells ``z``, the thresholds ``v`` (see
    :mod:`._program`), and the class choice.

    Measured on the 500-tree forest, continuous ``v`` (whole whenever ``z``
    is) solved some rows faster, but HiGHS 1.16 crashed (a segmentation
    fault) on about one in five runs of tiny programs so declared: kept
    integral.
    """
    integrality = np.zeros(n_cols, dtype=np.int8)
    integrality[: program.n_cells + program.n_thresholds] = 1
    integrality[pruned.n_base : pruned.n_base + n_choice] = 1
    return integrality


_INFEASIBLE = MilpOutcome("infeasible", None, np.inf, np.inf)


@dataclass(frozen=True)
class _Pruned:
    """The part of a program that can matter under a cutoff.

    Attributes
    ----------
    allowed : ndarray of shape (n_cells,), bool
        Cells of finite term not above the cutoff.
    slack : float
        Tolerance of comparisons with the cutoff.
    base : ndarray of shape (n_outputs,)
        The decision's base plus the scores of trees whose live leaves all
        score the same (they add a constant).
    y_leaves : ndarray of int
        Leaves kept as ``y`` columns: live leaves of the other trees.
    y_scores : ndarray of shape (len(y_leaves), n_outputs)
    y_path : ndarray of shape (len(y_leaves),) or None
        Path length of each kept leaf (with a decision's ``path``).
    need_path : float
        Least sum of ``y_path`` over the kept trees (``-inf`` without).
    tree_starts : ndarray of int or None
        Start of each kept tree's run in ``y_leaves`` (None when none is kept).
    row_keep : ndarray of int
        Rows of the program kept: every link row, and the tree and split rows
        of the kept trees.
    static : sparse matrix
        ``program.matrix`` on the kept rows and columns (``z``, ``v``, kept ``y``).
    n_base : int
        Columns of ``static``.
    exact_trees : ndarray of shape (n_kept_trees,), bool
        Kept trees (in the order of ``tree_starts``) with live leaves outside
        ``leaf_allowed``: their tree rows must stay ``sum y = 1`` so that a
        point routed to such a leaf is infeasible.
    """

    allowed: NDArray[np.bool_]
    slack: float
    base: NDArray[np.float64]
    y_leaves: NDArray[np.intp]
    y_scores: NDArray[np.float64]
    y_path: NDArray[np.float64] | None
    need_path: float
    tree_starts: NDArray[np.intp] | None
    row_keep: NDArray[np.intp]
    static: sp.csr_matrix
    n_base: int
    exact_trees: NDArray[np.bool_]

    @property
    def y_columns(self) -> NDArray[np.intp]:
        """Column of each kept leaf."""
        return np.arange(self.n_base - self.y_leaves.size, self.n_base)

    def reach(self, diff: NDArray[np.float64]) -> tuple[float, float]:
        """Least and greatest ``sum_trees diff[leaf reached]`` over the kept trees."""
        if self.tree_starts is None:
            return 0.0, 0.0
        return (
            float(np.minimum.reduceat(diff, self.tree_starts).sum()),
            float(np.maximum.reduceat(diff, self.tree_starts).sum()),
        )


def _prune(
    program: ForestProgram,
    decision: Decision,
    cost_terms: NDArray[np.float64],
    cutoff: float,
    linf: bool,
    leaf_allowed: NDArray[np.bool_] | None = None,
) -> _Pruned | None:
    """Drop cells, leaves and trees that cannot matter under ``cutoff``.

    A leaf is dead when entering its box costs more than the cutoff on its own
    (or meets no allowed cell on some feature): the least term over the cells
    its box covers, summed (max for linf) over the features it bounds.  Trees
    whose live leaves all score the same add a constant.  Leaves outside
    ``leaf_allowed`` stay reachable: their trees keep their rows (never folded
    into a constant), without the leaves' columns, so that a point routed to
    one of them is infeasible.  None when some feature has no allowed cell.
    """
    n_cells, n_thr = program.n_cells, program.n_thresholds
    slack = 1e-9 * abs(cutoff) + 1e-12 if np.isfinite(cutoff) else np.inf
    allowed = np.isfinite(cost_terms) & (cost_terms <= cutoff + slack)
    if not np.logical_or.reduceat(allowed, program.cell_offsets[:-1]).all():
        return None
    pair_least = _range_min(
        np.where(allowed, cost_terms, np.inf), program.pair_first, program.pair_last
    )
    if linf:
        entry = np.zeros(program.n_leaves)
        np.maximum.at(entry, program.pair_leaf, pair_least)
    else:
        entry = np.bincount(
            program.pair_leaf, weights=pair_least, minlength=program.n_leaves
        ).astype(np.float64)
    live = np.isfinite(entry) & (entry <= cutoff + slack) & program.leaf_reachable
    scores = decision.scores
    offsets = program.tree_leaf_offsets[:-1]
    usable = live
    banned_tree = np.zeros(program.n_trees, dtype=bool)
    if leaf_allowed is not None:
        usable = live & leaf_allowed
        banned_tree = np.logical_or.reduceat(live & ~leaf_allowed, offsets)
        if not np.logical_or.reduceat(usable, offsets).all():
            return None
    if decision.path is not None:  # a further score that must stay high
        scores = np.column_stack([scores, decision.path])
    hi_s = np.maximum.reduceat(
        np.where(live[:, None], scores, -np.inf), offsets, axis=0
    )
    lo_s = np.minimum.reduceat(np.where(live[:, None], scores, np.inf), offsets, axis=0)
    constant_tree = (hi_s == lo_s).all(axis=1) & ~banned_tree
    base = lo_s[constant_tree].sum(axis=0)
    need_path = -np.inf
    y_path = None
    if decision.path is not None:
        need_path = decision.min_path - base[-1]
        base, scores = base[:-1], scores[:, :-1]
    y_leaves = np.flatnonzero(usable & ~constant_tree[program.leaf_tree])
    split_keep = np.flatnonzero(~constant_tree[program.split_tree])
    split_rows = n_cells + program.n_trees + 2 * split_keep
    row_keep = np.concatenate(
        [
            np.arange(n_cells),
            n_cells + np.flatnonzero(~constant_tree),
            np.column_stack([split_rows, split_rows + 1]).ravel(),
        ]
    )
    static = program.matrix[row_keep][
        :, np.r_[0 : n_cells + n_thr, n_cells + n_thr + y_leaves]
    ]
    y_trees = program.leaf_tree[y_leaves]
    tree_starts = (
        np.flatnonzero(np.r_[True, y_trees[1:] != y_trees[:-1]])
        if y_leaves.size
        else None
    )
    if decision.path is not None:
        y_path = decision.path[y_leaves]
    return _Pruned(
        allowed=allowed,
        slack=slack,
        base=decision.base + base,
        y_leaves=y_leaves,
        y_scores=scores[y_leaves],
        y_path=y_path,
        need_path=float(need_path),
        tree_starts=tree_starts,
        row_keep=row_keep,
        static=static,
        n_base=n_cells + n_thr + y_leaves.size,
        exact_trees=banned_tree[~constant_tree],
    )


class _ExtraRows:
    """Rows added to a program, gathered in coordinate form."""

    def __init__(self) -> None:
        self._rows: list[NDArray[np.intp]] = []
        self._cols: list[NDArray[np.intp]] = []
        self._vals: list[NDArray[np.float64]] = []
        self._lower: list[float] = []
        self._upper: list[float] = []

    def add(
        self,
        columns: NDArray[np.intp],
        values: NDArray[np.float64],
        lo: float,
        hi: float,
    ) -> None:
        """One row ``lo <= sum values * x[columns] <= hi``."""
        self.add_many(
            np.zeros(len(columns), dtype=np.intp),
            columns,
            values,
            np.array([lo]),
            np.array([hi]),
        )

    def add_many(
        self,
        row: NDArray[np.intp],
        columns: NDArray[np.intp],
        values: NDArray[np.float64],
        lo: NDArray[np.float64],
        hi: NDArray[np.float64],
    ) -> None:
        """Rows ``lo <= sum values * x[columns] <= hi``, ``row`` numbering them from 0."""
        self._rows.append(len(self._lower) + np.asarray(row, dtype=np.intp))
        self._cols.append(np.asarray(columns, dtype=np.intp))
        self._vals.append(np.asarray(values, dtype=np.float64))
        self._lower.extend(np.asarray(lo, dtype=np.float64).tolist())
        self._upper.extend(np.asarray(hi, dtype=np.float64).tolist())

    @property
    def n_rows(self) -> int:
        return len(self._lower)

    @property
    def lower(self) -> NDArray[np.float64]:
        return np.asarray(self._lower, dtype=np.float64)

    @property
    def upper(self) -> NDArray[np.float64]:
        return np.asarray(self._upper, dtype=np.float64)

    def matrix(self, n_cols: int) -> sp.csr_matrix:
        if not self._lower:
            return sp.csr_matrix((0, n_cols))
        return sp.csr_matrix(
            (
                np.concatenate(self._vals),
                (np.concatenate(self._rows), np.concatenate(self._cols)),
            ),
            shape=(len(self._lower), n_cols),
        )


def _decision_rows(
    pruned: _Pruned,
    decision: Decision,
    margin: float,
    rows: _ExtraRows,
    lead: float = 0.0,
) -> int | None:
    """Add the rows of reaching the decision; return the choice binaries added.

    An interval asks ``low <= sum y * score <= high``.  A class ``k`` must beat
    every other class ``j``: ``sum y * (score_k - score_j) >= need`` where
    ``need`` is the margin (strict pairs, or all on a retry) minus the base
    difference; pairs met whatever leaves are reached are dropped.  With several
    reachable target classes a binary ``w_k`` per class picks the one that
    wins (``sum w = 1``; the rows of other classes are relaxed by their range).
    None when the decision cannot be met.
    """
    y_range = pruned.y_columns
    y_scores, base = pruned.y_scores, pruned.base
    retry = margin > STRICT_MARGIN  # a retry also keeps non-strict rows off ties
    if decision.kind == "interval":
        ends = [abs(e) for e in (decision.low, decision.high) if np.isfinite(e)]
        least, most = pruned.reach(y_scores[:, 0])
        pad = margin * max([1.0, most - least, *ends]) if retry or lead else 0.0
        pad += lead
        low, high = decision.low - base[0] + pad, decision.high - base[0] - pad
        if most < low or least > high:
            return None
        rows.add(y_range, y_scores[:, 0], low, high)
        return 0
    assert decision.strict is not None
    needs = []
    for k in decision.targets:
        pending = []
        for j in range(y_scores.shape[1]):
            if j == k:
                continue
            diff = y_scores[:, k] - y_scores[:, j]
            least, most = pruned.reach(diff)
            gap = margin * max(1.0, most - least)
            strict = decision.strict[k, j] or retry or lead > 0
            need = lead + (gap if strict else 0.0) - (base[k] - base[j])
            if most < need:
                break  # class k cannot win
            if least < need:
                pending.append((diff, need, need - least))
        else:
            needs.append(pending)
    if not needs:
        return None
    n_choice = len(needs) if len(needs) > 1 else 0
    for position, pending in enumerate(needs):
        for diff, need, big in pending:
            if n_choice:
                # Enforced only for the class chosen: D >= need - big * (1 - w).
                rows.add(
                    np.r_[y_range, pruned.n_base + position],
                    np.r_[diff, -big],
                    need - big,
                    np.inf,
                )
            else:
                rows.add(y_range, diff, need, np.inf)
    if n_choice:
        rows.add(pruned.n_base + np.arange(n_choice), np.ones(n_choice), 1.0, 1.0)
    return n_choice


@dataclass(frozen=True)
class _Floors:
    """The leaf rows of a program with every tree's least leaves left out.

    Attributes
    ----------
    rows : sparse matrix
        The rows over the leaves, each tree's least coefficient subtracted.
    lower : ndarray
        Their lower bounds, lowered by the sum of those least coefficients.
    dropped : ndarray of shape (len(y_leaves),), bool
        Leaves at their tree's least coefficient in every row.
    """

    rows: sp.csr_matrix
    lower: NDArray[np.float64]
    dropped: NDArray[np.bool_]


def _floor_leaves(
    pruned: _Pruned,
    rows: sp.csr_matrix,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> _Floors | None:
    """Leave out each tree's leaves that add least to every leaf row.

    When every row over the leaves' columns only bounds a sum from below (a
    class's lead, a regression's lower end, an anomaly bound), a tree helps
    most by reaching a leaf of large coefficients.  Subtract from every row,
    tree by tree, the least coefficient of the tree's leaves (moving it into
    the row's bound) and relax the tree's row to ``sum y <= 1``: with whole
    cells the split rows still allow only the leaf the point reaches, whose
    ``y`` HiGHS sets to 1 when it helps, and the leaves now at 0 in every row
    need no column.  The set of valid cell choices is the same.  On random
    forests about half the leaves are such floors (pure leaves of the other
    class): replayed on 20 declined rows of standardized breast cancer per
    forest (100 trees, L1), depth 6 took 35.7 s in all instead of 54.7 s
    (median 0.72 s against 1.04 s), depth 8 116 s instead of 156 s with 19
    rows proven in 30 s instead of 17, LightGBM (one floor per tree) 15.8 s
    instead of 19.7 s.  On 500 trees the root bound is a little lower (6.17
    against 6.24 on the slowest row) and the rows as far from proven.

    None when some row also bounds from above (a regression's upper end) or
    when there is no tree to reduce.  Trees in ``pruned.exact_trees`` keep
    their leaves and their equality.
    """
    if pruned.tree_starts is None or np.isfinite(upper).any():
        return None
    y = pruned.y_columns
    y0, starts = int(y[0]), pruned.tree_starts
    tree_of = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, y.size]))
    free = ~pruned.exact_trees
    coef = rows[:, y0 : pruned.n_base].toarray()
    floor = (
        np.minimum.reduceat(coef, starts, axis=1)
        if coef.shape[0]
        else np.zeros((0, starts.size))
    )
    floor[:, ~free] = 0.0
    coef -= floor[:, tree_of]
    dropped = free[tree_of] & (coef <= 0.0).all(axis=0)
    shifted = sp.hstack(
        [rows[:, :y0], sp.csr_matrix(coef), rows[:, pruned.n_base :]], format="csr"
    )
    return _Floors(shifted, lower - floor.sum(axis=1), dropped)


def _path_row(pruned: _Pruned, margin: float, rows: _ExtraRows) -> bool:
    """Add the row ``sum y * path >= need`` of an anomaly bound; False when the
    kept trees cannot reach it.

    The need is raised by ``margin`` times the spread of the path sums, so that
    leaves weighted within HiGHS's tolerances cannot fake it (a retry after the
    IsolationForest disagreed raises the margin).
    """
    if pruned.y_path is None or not pruned.need_path > 0:
        return True  # path lengths are never negative
    least, most = pruned.reach(pruned.y_path)
    need = pruned.need_path + margin * max(1.0, most - least)
    if most < need:
        return False
    if least < need:
        rows.add(pruned.y_columns, pruned.y_path, need, np.inf)
    return True


def _cost_rows(
    program: ForestProgram,
    pruned: _Pruned,
    cost_terms: NDArray[np.float64],
    linf: bool,
    c0: int,
    rows: _ExtraRows,
) -> NDArray[np.float64]:
    """Add the cost columns (from ``c0``) and rows; return the objective."""
    n_features = program.n_features
    n_cols = c0 + n_features + (1 if linf else 0)
    terms = np.where(pruned.allowed, cost_terms, 0.0)
    features = np.arange(n_features)
    rows.add_many(
        np.r_[program.cell_feature, features],
        np.r_[np.arange(program.n_cells), c0 + features],
        np.r_[-terms, np.ones(n_features)],
        np.zeros(n_features),
        np.zeros(n_features),
    )
    objective = np.zeros(n_cols)
    if linf:
        objective[-1] = 1.0
        rows.add_many(
            np.r_[features, features],
            np.r_[c0 + features, np.full(n_features, n_cols - 1)],
            np.r_[-np.ones(n_features), np.ones(n_features)],
            np.zeros(n_features),
            np.full(n_features, np.inf),
        )
    else:
        # The cutoff is HiGHS's objective bound, not a row: the row made the
        # relaxation harder to solve (1.1 times slower over 16 rows).  Measured
        # again with the options of _highs_options, on the same programs of a
        # 100-tree forest: easy rows 10-30% slower, and the long rows' gains
        # with HiGHS's default seed (12 rows of depth 6 in 17.5 s against
        # 24.1 s) gone with two other seeds.
        objective[c0 : c0 + n_features] = 1.0
    return objective


def _one_hot_rows(
    program: ForestProgram,
    one_hot: tuple[NDArray[np.intp], ...],
    one_cells: NDArray[np.bool_],
    rows: _ExtraRows,
) -> None:
    """Exactly one feature of each one-hot group takes a cell of value 1."""
    for group in one_hot:
        cells = np.concatenate(
            [
                np.arange(program.cell_offsets[j], program.cell_offsets[j + 1])
                for j in group
            ]
        )
        cells = cells[one_cells[cells]]
        rows.add(cells, np.ones(cells.size), 1.0, 1.0)


def _highs_options(
    time_limit: float, cutoff: float, slack: float, heuristics: bool | None
) -> dict[str, Any]:
    """HiGHS options for a counterfactual program, each one measured.

    On the slow rows of a 500-tree forest the time goes to HiGHS's rounds of
    cuts at the root, before any node: on one row, root bound 6.238 after 5 s,
    then ten rounds of about 6 s each raised it to 6.246 by 60 s (point
    11.32), with 278 simplex iterations in all; the samples fall in the cut
    separators (tableau rows, c-MIR, path aggregation), not in the LP.  HiGHS
    1.16 has no option that limits those rounds (the loop ends when the bound
    stalls, a tenth of the integers are fixed, no cut is found, or after
    ``2 sqrt(log2 tree size)`` rounds, about 160 here).  Measured again on
    another slow row of the same forest (27 s to over 30 s), HiGHS left
    the root after 2.6 s (bound 6.45, point 8.82), and the time then went to the
    simplex of the nodes' LPs (about seven nodes a second on 15,400 rows, the
    samples in HiGHS's factor solves), which the simplex options do not
    reach: the MIP solver sets its own (dual edge weights ``0`` and ``1`` gave
    the same nodes in the same time).

    Also measured and left at HiGHS's choice: one thread (``threads=1``)
    instead of both, on 20 replayed LightGBM programs medians of 0.58 s and
    0.62 s against 0.40 s and 0.47 s.  HiGHS 1.16 runs its branch and bound
    on two workers by default ("using up to 2 workers across 2 threads"): on
    the slowest 500-tree row, 57 s of CPU in 34 s and a gap of 0.399 after
    30 s, against 33 s of CPU and 0.448 with ``threads=1``; ``parallel="on"``
    changes nothing (three slow rows, the same gaps).  Solving two halves of a
    program on the two cores does not pay: split at the root on the
    relaxation's most fractional column, three rows whose whole programs took
    10.8 s, 20.8 s and 10.2 s took 13.8 s and 16.8 s, 17.8 s and 19.6 s, 12.4 s
    and 3.2 s per half (each half presolves and solves its root again, 3 s to
    5 s of it).  The options below that were tuned on 100-tree forests were
    tried again on three 500-tree rows out of time at 30 s (gaps 0.135, 0.116
    and 0.168): HiGHS's default ``mip_pscost_minreliable=8`` proved the third
    (29.5 s, a point 0.3% cheaper than the one found) but left the others at
    0.270 and 0.252; cuts at the nodes 0.138, 0.210, 0.186; restarts 0.181,
    0.232, 0.205.  On four 500-tree rows that are proven in 7 s to 27 s (the
    rows around the median), each solved both ways in turn: with
    ``mip_pscost_minreliable=8`` 29.7 s (out of time, gap 0.268), 8.6 s, 29.8 s
    (out of time, gap 0.139) and 11.7 s against 26.9, 8.1, 9.6 and 7.9 s;
    with ``=4`` two rows out of time as well; with restarts 27.0, 8.5, 26.1
    and 6.6 s against 22.2, 7.1, 8.2 and 7.4 s.  The interior point solver
    ``hipo`` is not built into highspy 1.16's wheels.
    """
    options: dict[str, Any] = {
        "time_limit": float(time_limit),
        "mip_rel_gap": MIP_REL_GAP,
        # The full presolve without probing and without dominated columns.
        # - Probing took about 0.4 s of every row of a 100-tree forest, also of
        #   rows proven at the root.  Replayed on the same programs: 12 rows of
        #   a forest of depth 6 at a median of 1.14 s against 1.60 s, 6 of
        #   depth 8 at 2.6 s against 3.1 s, one more of 9 rows of a 500-tree
        #   forest proven within 30 s; 20 rows of LightGBM at 0.41-0.48 s
        #   against 0.58-0.64 s by the initial sweep alone (presolve_mode=1,
        #   which was faster than the full presolve with probing).
        # - Dominated columns: on a declined row of a 100-tree XGBoost model
        #   (standardized breast cancer, L1) the full presolve, with or without
        #   probing, declared a cost of 0.1314 optimal (and 0.2382 without a
        #   cutoff) where a point of cost 0.1234 meets the target, found with
        #   presolve off or the initial sweep.  The cells one representable
        #   step past a threshold have cost terms of about 1e-8.  Without
        #   dominated columns (or without doubleton equations, or without the
        #   aggregator) the optimum is right; on 20 rows each of XGBoost,
        #   LightGBM and a 100-tree forest every configuration then agrees, and
        #   leaving dominated columns out costs no time measurably (medians
        #   1.04 s and 0.63 s against 1.04 s and 0.64 s).
        # The rest of the full presolve matters to forests: without it their
        # long rows are about 1.5 times slower.
        "presolve": True,
        "presolve_rule_off": PRESOLVE_RULES_OFF,
        # Measured on forests of 100 trees: trusting pseudocosts at once (fewer
        # strong-branching LPs) and skipping symmetry detection are faster.
        "mip_pscost_minreliable": 0,
        "mip_detect_symmetry": False,
        # Measured on 20 rows of a 100-tree forest of depth 6: a restart after
        # root fixing and cut rounds at every node cost more than they save
        # (median solve 2.7 s with them, 1.2 s without).
        "mip_allow_restart": False,
        "mip_allow_cut_separation_at_nodes": False,
        # The root LP by the interior point method (then crossover to a basis
        # the nodes start from): on 500 trees it takes 3 s instead of 11 s by
        # dual simplex, and solves are about 1.2 times faster on 100 trees.
        "mip_lp_solver": "ipx",
    }
    if np.isfinite(cutoff):
        # A known answer bounds the search: HiGHS prunes against it (and fixes
        # columns by reduced cost at the root) from the start, and its primal
        # heuristics, which otherwise take most of the time, are not needed.
        options["objective_bound"] = cutoff + slack
        if not heuristics:
            options.update(_WITHOUT_HEURISTICS)
    return options


def _solve_error(result: HighsResult) -> bool:
    """Whether HiGHS stopped with no point for another reason than a limit or
    infeasibility."""
    return result.x is None and result.status not in (
        HighsStatus.LIMIT,
        HighsStatus.INFEASIBLE,
    )


def _decode(
    result: HighsResult,
    program: ForestProgram,
    allowed: NDArray[np.bool_],
    cost_terms: NDArray[np.float64],
    linf: bool,
) -> MilpOutcome:
    """The cells HiGHS chose, their cost and the proven bound.

    Raises
    ------
    SolverError
        When HiGHS failed or returned a point that picks other than one cell
        per feature.
    """
    if result.status == HighsStatus.INFEASIBLE:
        return _INFEASIBLE
    bound = result.mip_dual_bound
    bound = -np.inf if bound is None or not np.isfinite(bound) else float(bound)
    if result.x is None:
        if result.status == HighsStatus.LIMIT:
            return MilpOutcome("time_limit", None, np.inf, bound)
        raise SolverError(
            f"HiGHS could not solve the counterfactual program: {result.message}"
        )
    chosen = np.flatnonzero((result.x[: program.n_cells] > 0.5) & allowed)
    if not np.array_equal(program.cell_feature[chosen], np.arange(program.n_features)):
        raise SolverError(
            "HiGHS returned a solution that does not pick one cell per feature "
            f"(status {result.status.name}: {result.message})."
        )
    picked = cost_terms[chosen]
    value = float(picked.max(initial=0.0) if linf else picked.sum())
    if result.status == HighsStatus.OPTIMAL:
        return MilpOutcome(
            "optimal", chosen, value, min(value, max(bound, value * (1 - MIP_REL_GAP)))
        )
    return MilpOutcome("time_limit", chosen, value, min(bound, value))


def _range_min(
    values: NDArray[np.float64], first: NDArray[np.intp], last: NDArray[np.intp]
) -> NDArray[np.float64]:
    """``min(values[first[q] : last[q] + 1])`` for every query, with a sparse table."""
    table = [values]
    width = 1
    while 2 * width <= values.size:
        prev = table[-1]
        table.append(np.minimum(prev[: prev.size - width], prev[width:]))
        width *= 2
    length = last - first + 1
    level = np.floor(np.log2(np.maximum(length, 1))).astype(np.intp)
    out = np.empty(first.size)
    for k in np.unique(level):  # a handful of levels
        sel = level == k
        row = table[k]
        out[sel] = np.minimum(row[first[sel]], row[last[sel] - (1 << k) + 1])
    return out
