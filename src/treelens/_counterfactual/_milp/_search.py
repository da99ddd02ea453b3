"""A cheap local search for a good counterfactual before the exact solve.

HiGHS proves optimality much faster when it knows a counterfactual close to the
optimum: its cost is an objective cutoff under which reduced-cost fixing at the
root removes most cells and leaves, and the primal heuristics (sub-MIPs, which
otherwise take most of the time) become unnecessary.  This module finds one on
the cell grid of :mod:`treelens._counterfactual._milp._program`, from the priced cells of a row:

1. greedy ascent from the row's own cells: each step moves the one feature to the
   one cell (or switches the one one-hot group to the one category) that raises
   the target's score margin most per unit of added cost, until the forest
   predicts the target;
2. descent: each step takes the cheapest of all moves of one feature to a cheaper
   cell, of one one-hot group to a cheaper category, or of one feature to a
   cheaper cell together with another feature to a cell next to its own, that
   the forest still assigns to the target;
3. kicks: each changed feature in turn is put back in the row's own cell (each
   one-hot group in its own category, and in each other category whose switch
   raises the margin) and held there while a greedy ascent repairs the rest,
   followed by a descent; the cheapest result is kept, and the pass repeated
   from it while it lowers the cost.

A one-hot group moves as a unit: a switch sets its hot member to 0 and another
member to 1, priced by the two members' cell terms as the program prices them,
so every point of the search keeps exactly one 1 in each group.

Every candidate of a step is scored at once.  The moves of one feature are
scored from the leaf boxes, without routing (:meth:`GridSearch.move_margins`):
with the other features held, the cells of feature ``j`` send each tree to its
current leaf or to a leaf whose box the point misses on ``j`` alone, so the
score of every single move is a sum of range updates over the cells.  Paired
moves are scored from the single moves: a second move to a neighbour cell
crosses one threshold, so only the few trees bounded there are scored again
(all second moves of a step at once).  The switches of a group share their
second move, the hot member to 0: they are the single moves from the point
with that move made (one more sum of range updates per group).  The answer is
confirmed with the forest's exact prediction, so it is always a valid
counterfactual on the grid, never costlier than where it started.

How much a better start is worth (a 100-tree forest of depth 8, the 20 rows of
``benchmarks/bench_optimal.py``): with the optimum itself as the start, medians
of 0.75 s against 1.10 s per row and the slowest row 16.5 s against 29.1 s.
The search's points cost 1.022 times the optimum on average (at most 1.072)
after one pass of kicks, 1.013 with the passes repeated.  Measured and left
out: a third move in the descent, one feature to a cheaper cell and another to
any cell of a lower total (screened by adding the two single moves' scores,
the 512 cheapest confirmed by routing), 1.012 times the optimum after one pass
of kicks, with medians of 1.11 s against 1.08 s and 83.0 s against 86.0 s in
all (depth 6: 0.49 s against 0.52 s, 24.8 s against 25.2 s); 1.011 with the
passes repeated.  A row whose optimum trades one large move for five small ones
stays out of reach: the greedy repair takes the single large move of best gain
per cost.

What switching one-hot groups is worth, measured with
``benchmarks/bench_one_hot.py`` (the loan applicants of ``benchmarks/loans.py``,
100 trees, 20 declined rows, each solved with switches and with the groups held
in turn, A, B, A, B, the faster of each row's two runs).  Where a change of
category costs about as much as the rows' optima (the employment columns at a
tenth of their ``"mad"`` weights), the points are the optimum on 16 rows against
14 (1.003 times the optimum on average against 1.039) and the 20 rows take 8.3 s
against 10.1 s at depth 6, 13 against 11 and 63.9 s against 74.8 s at depth 8;
on 20 rows of the two categories the model declines more often, 15 against 10
(1.017 against 1.154) and 7.8 s against 12.0 s at depth 6, 15 against 9 (1.058
against 1.184) and 47.7 s against 79.3 s at depth 8.  No row's point is
costlier.  Under ``"mad"`` itself, where a change of category costs more than
any of these rows' optimum, every point is the same and the search takes 1 to
4 ms a row more (0.40 s against 0.34 s for the 20 rows at depth 6, 0.77 s
against 0.70 s at depth 8), which the rows' times do not show (7.4 s against
7.3 s, 49.0 s against 48.1 s: the same starts, so the same programs solved).
Kicks try the categories whose switch raises the margin, not all of them: on a
synthetic group of 20 categories (cost ``"l1"``, no row's point better for
switching) every category made the search 2.3 times as slow, these 1.6 times
(0.37 s against 0.23 s for 20 rows).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, partial

import numpy as np
from numpy.typing import NDArray

from ..._core._forest import Forest
from ._program import ForestProgram
from ._solve import Decision

__all__ = ["REPAIR_STEPS", "GridSearch", "descend", "greedy_ascent", "kick"]

# Steps of each phase (a step changes one or two features; a few dozen suffice).
_MAX_STEPS = 200
# Candidate rows scored per batch, to bound memory (rows x trees node ids).
_BATCH_ROWS = 20_000
# From this many rows, candidates are routed tree by tree.
_PER_TREE_ROWS = 512
# Cheapest candidates of positive margin confirmed with the exact test per step.
_CONFIRM = 16
# A kick's greedy ascent may overshoot the best known objective by this factor
# (the descent that follows often brings it below).
_KICK_SLACK = 1.3
#: Steps of a repair: a greedy ascent from a counterfactual with one move undone.
#: Measured on 12 rows each of forests of 100 trees, XGBoost and LightGBM, every
#: repair that succeeded took at most 16 steps; those that ran to _MAX_STEPS all
#: failed, and on LightGBM took 0.1 s each, as long as the proof.
REPAIR_STEPS = 32


@dataclass(frozen=True, eq=False)
class GridSearch:
    """What the local search of one row needs.

    Attributes
    ----------
    forest : Forest
    program : ForestProgram
    decision : Decision
        Decision rows of the target (scores only guide the greedy ascent).
    meets : callable
        ``meets(X) -> ndarray of bool``: whether the forest assigns each row of
        ``X`` (shape (k, n_features), float64) to the target.  The exact test.
    points : ndarray of shape (n_cells,)
        The priced point of every cell (:func:`~treelens._counterfactual._milp._solve.price_cells`).
    terms : ndarray of shape (n_cells,)
        Its cost term, ``inf`` for forbidden cells.
    movable : ndarray of shape (n_features,), bool
        Features the search may change; a member of a ``one_hot`` group
        changes only with its group (a switch of two movable members).
    one_hot : tuple of ndarray of int, default=()
        Feature groups of which exactly one member is 1 (in the cell holding
        1, the others in the cell holding 0).  A group moves as a unit, by a
        *switch* (:func:`one_hot_switches`): its hot member to 0 and another
        member to 1, priced by the two members' cell terms as in the program.
    linf : bool
        The objective is the largest term rather than their sum.
    deadline : float
        :func:`time.perf_counter` time after which the search takes no new step
        (an ascent under way gives up; a descent keeps what it has).
    """

    forest: Forest
    program: ForestProgram
    decision: Decision
    meets: Callable[[NDArray[np.float64]], NDArray[np.bool_]]
    points: NDArray[np.float64]
    terms: NDArray[np.float64]
    movable: NDArray[np.bool_]
    one_hot: tuple[NDArray[np.intp], ...] = ()
    linf: bool = False
    deadline: float = np.inf

    @cached_property
    def grouped(self) -> NDArray[np.bool_]:
        """Members of the one-hot groups, shape (n_features,)."""
        out = np.zeros(self.program.n_features, dtype=bool)
        out[self.members.feature] = True
        return out

    @cached_property
    def single_cells(self) -> NDArray[np.bool_]:
        """Cells a move of one feature may go to: of finite term, of a movable
        feature outside the one-hot groups, shape (n_cells,)."""
        single = self.movable & ~self.grouped
        return np.isfinite(self.terms) & single[self.program.cell_feature]

    @cached_property
    def members(self) -> _Members:
        """The members of the one-hot groups with their cells of 0 and of 1."""
        program = self.program
        feature = np.concatenate([np.empty(0, dtype=np.intp), *self.one_hot])
        sizes = [group.size for group in self.one_hot]
        group = np.repeat(np.arange(len(sizes), dtype=np.intp), sizes)
        # The cell holding v: the first of its feature, plus the cells below v.
        first = program.cell_offsets[feature]
        zero, one = (
            first
            + np.bincount(
                program.cell_feature[program.cell_high < v],
                minlength=program.n_features,
            )[feature]
            for v in (0.0, 1.0)
        )
        return _Members(feature, group, zero, one, len(sizes))

    def out_of_time(self) -> bool:
        """Whether the deadline has passed."""
        return time.perf_counter() > self.deadline

    def objective(self, cells: NDArray[np.intp]) -> float:
        """Objective of one choice of cells, shape (n_features,)."""
        picked = self.terms[cells]
        return float(picked.max(initial=0.0) if self.linf else picked.sum())

    def margin(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """How far each row of ``X`` is inside the target (> 0 about inside)."""
        forest, decision = self.forest, self.decision
        out = np.empty(X.shape[0])
        lead = _lead(decision)
        for start in range(0, X.shape[0], _BATCH_ROWS):
            chunk = X[start : start + _BATCH_ROWS].astype(forest.input_dtype)
            if chunk.shape[0] >= _PER_TREE_ROWS:
                # Tree by tree is about twice as fast from a few hundred rows
                # (the forest's own switch sits higher, tuned for wider data).
                out_t = np.empty((forest.n_trees, chunk.shape[0]), dtype=np.intp).T
                leaves = forest._apply_per_tree(chunk, out_t)
            else:
                leaves = forest._apply(chunk)
            leaf = self.program.node_leaf[forest._flat["offsets"][None, :] + leaves]
            if lead is not None:
                # One target of two classes: the margin is linear in the leaves.
                out[start : start + _BATCH_ROWS] = lead[1] + lead[0][leaf].sum(axis=1)
                continue
            scores = decision.base + decision.scores[leaf].sum(axis=1)
            out[start : start + _BATCH_ROWS] = _margin(decision, scores)
        return out

    @cached_property
    def _leaf_values(self) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
        """Per-leaf values summed into the decision, their base, and whether
        the sum is the margin itself (one target class against one other)."""
        lead = _lead(self.decision)
        if lead is not None:
            return lead[0][:, None], np.array([lead[1]]), True
        return self.decision.scores, self.decision.base, False

    @cached_property
    def screen(self) -> float:
        """Margins below minus this are outside the target without the exact
        test: margins read from the boxes and routed sums differ by rounding
        only, far less than this share of the largest sum of values."""
        values, base, _ = self._leaf_values
        offsets = self.program.tree_leaf_offsets[:-1]
        largest = np.maximum.reduceat(np.abs(values), offsets, axis=0).sum()
        return 1e-9 * (1.0 + float(largest) + float(np.abs(base).sum()))

    @cached_property
    def _pair_feature(self) -> NDArray[np.intp]:
        return self.program.cell_feature[self.program.pair_first]

    def move_margins(self, cells: NDArray[np.intp]) -> NDArray[np.float64] | None:
        """Margin of the point of ``cells`` with its feature ``j`` moved to
        cell ``c``, for every cell ``c`` of every feature, shape (n_cells,).

        Leaves are read from the boxes: a leaf is reached where the point meets
        its cell range on every feature it bounds.  With the other features
        held, the cells of ``j`` reach, in each tree, the current leaf or a leaf
        that misses on ``j`` alone, over that leaf's range of cells; each such
        leaf adds its difference to the current leaf's value on its range (a
        difference array).  Returns None if the boxes do not give one current
        leaf per tree (the caller then routes).
        """
        scores = self.moved_scores(cells)
        if scores is None:
            return None
        return self.margin_of_scores(scores)

    def margin_of_scores(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """Margins of summed decision values (rows of :meth:`moved_scores`)."""
        _, _, linear = self._leaf_values
        return scores[..., 0] if linear else _margin(self.decision, scores)

    def moved_scores(self, cells: NDArray[np.intp]) -> NDArray[np.float64] | None:
        """The decision values summed over the trees (and the base) that
        :meth:`move_margins` turns into margins, shape (n_cells, n_values)."""
        program = self.program
        n_leaves, n_cells = program.n_leaves, program.n_cells
        at = cells[self._pair_feature]
        missed = (at < program.pair_first) | (at > program.pair_last)
        n_missed = np.bincount(program.pair_leaf[missed], minlength=n_leaves)
        n_missed[~program.leaf_reachable] = 2
        current = np.flatnonzero(n_missed == 0)
        # Leaves are numbered tree by tree: one current leaf per tree, in order.
        if not np.array_equal(program.leaf_tree[current], np.arange(program.n_trees)):
            return None
        values, base, _ = self._leaf_values
        now = base + values[current].sum(axis=0)
        alone = np.flatnonzero(missed & (n_missed[program.pair_leaf] == 1))
        leaf = program.pair_leaf[alone]
        delta = values[leaf] - values[current[program.leaf_tree[leaf]]]
        first, stop = program.pair_first[alone], program.pair_last[alone] + 1
        moved = np.empty((n_cells, values.shape[1]))
        for k in range(values.shape[1]):  # one column per class score
            change = np.bincount(first, delta[:, k], minlength=n_cells + 1)
            change -= np.bincount(stop, delta[:, k], minlength=n_cells + 1)
            moved[:, k] = now[k] + np.cumsum(change[:n_cells])
        return moved

    @cached_property
    def _pairs_by(self) -> tuple[NDArray[np.intp], ...]:
        """Pairs sorted by tree and by feature, with the start of each tree's
        and each feature's run."""
        program = self.program
        pair_tree = program.leaf_tree[program.pair_leaf]
        by_tree = np.argsort(pair_tree, kind="stable")
        by_feature = np.argsort(self._pair_feature, kind="stable")
        tree_starts = np.searchsorted(
            pair_tree[by_tree], np.arange(program.n_trees + 1)
        )
        feature_starts = np.searchsorted(
            self._pair_feature[by_feature], np.arange(program.n_features + 1)
        )
        return by_tree, tree_starts, by_feature, feature_starts

    def tree_scores(
        self,
        points: NDArray[np.intp],
        point_of: NDArray[np.intp],
        tree_of: NDArray[np.intp],
    ) -> NDArray[np.float64] | None:
        """For each of a few (point, tree) groups, the value tree ``tree_of[g]``
        gives point ``points[point_of[g]]`` with one feature moved to each
        cell, summed per point: shape (n_points, n_cells, n_values).

        The arithmetic of :meth:`moved_scores`, restricted to the listed trees
        (without the base).  None if the boxes do not give one current leaf in
        some group.
        """
        program = self.program
        n_cells = program.n_cells
        values, _, _ = self._leaf_values
        by_tree, tree_starts, _, _ = self._pairs_by
        out = np.zeros((points.shape[0], n_cells, values.shape[1]))
        if not tree_of.size:
            return out
        group, slot = _runs(tree_starts[tree_of], tree_starts[tree_of + 1])
        pair = by_tree[slot]
        leaf = program.pair_leaf[pair]
        at = points[point_of[group], self._pair_feature[pair]]
        missed = (at < program.pair_first[pair]) | (at > program.pair_last[pair])
        # One counter per (group, leaf of its tree).
        leaf_starts = program.tree_leaf_offsets
        n_group_leaves = leaf_starts[tree_of + 1] - leaf_starts[tree_of]
        counter_start = np.cumsum(n_group_leaves) - n_group_leaves
        counter = counter_start[group] + leaf - leaf_starts[tree_of[group]]
        n_missed = np.bincount(counter[missed], minlength=int(n_group_leaves.sum()))
        counter_group, counter_slot = _runs(
            leaf_starts[tree_of], leaf_starts[tree_of + 1]
        )
        n_missed[~program.leaf_reachable[counter_slot]] = 2
        at_zero = np.flatnonzero(n_missed == 0)
        if not np.array_equal(counter_group[at_zero], np.arange(tree_of.size)):
            return None
        current = values[counter_slot[at_zero]]  # (n_groups, n_values)
        alone = missed & (n_missed[counter] == 1)
        group, pair, leaf = group[alone], pair[alone], leaf[alone]
        delta = values[leaf] - current[group]
        row = point_of[group] * (n_cells + 1)
        first, stop = row + program.pair_first[pair], row + program.pair_last[pair] + 1
        size = points.shape[0] * (n_cells + 1)
        now = np.zeros((points.shape[0], values.shape[1]))
        np.add.at(now, point_of, current)
        for k in range(values.shape[1]):  # one column per class score
            change = np.bincount(first, delta[:, k], minlength=size)
            change -= np.bincount(stop, delta[:, k], minlength=size)
            change = change.reshape(points.shape[0], n_cells + 1)[:, :n_cells]
            out[:, :, k] = now[:, k : k + 1] + np.cumsum(change, axis=1)
        return out

    def cheapest_valid(
        self,
        objective: NDArray[np.float64],
        margins: NDArray[np.float64],
        rows_of: Callable[[NDArray[np.intp]], NDArray[np.float64]],
    ) -> int | None:
        """Index of the cheapest candidate the forest assigns to the target.

        Candidates are screened by their score ``margins``, and the cheapest
        few of positive margin confirmed with the exact test on their points,
        ``rows_of(index)``.
        """
        ahead = np.flatnonzero(margins > 0)
        order = ahead[np.argsort(objective[ahead], kind="stable")][:_CONFIRM]
        if not order.size:
            return None
        ok = self.meets(rows_of(order))
        return int(order[np.argmax(ok)]) if ok.any() else None


@dataclass(frozen=True)
class _Members:
    """The members of the one-hot groups, laid end to end, group by group.

    Attributes
    ----------
    feature, group : ndarray of shape (n_members,)
        Feature and group of each member.
    zero, one : ndarray of shape (n_members,)
        Its cell holding 0 and its cell holding 1 (apart: the program cuts
        members at 0).
    n_groups : int
    """

    feature: NDArray[np.intp]
    group: NDArray[np.intp]
    zero: NDArray[np.intp]
    one: NDArray[np.intp]
    n_groups: int


def one_hot_switches(
    search: GridSearch, cells: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every switch of a one-hot group from ``cells``, as two cells each.

    A switch puts a member ``m`` that is 0 in its cell of 1 (``first``) and
    the group's hot member ``h`` in its cell of 0 (``second``).  Switches
    whose cells have an infinite term (an immutable group, a member bounded
    to 0 or 1, an earlier option's move) or whose members are not both
    movable are left out, as are groups without exactly one hot member.

    Returns
    -------
    first, second : ndarray of shape (n_switches,)
    """
    members = search.members
    hot = cells[members.feature] == members.one
    n_hot = np.bincount(members.group[hot], minlength=members.n_groups)
    hot_member = np.zeros(members.n_groups, dtype=np.intp)
    hot_member[members.group[hot]] = np.flatnonzero(hot)
    switch = np.flatnonzero(~hot & (n_hot[members.group] == 1))
    into = hot_member[members.group[switch]]
    first, second = members.one[switch], members.zero[into]
    movable = search.movable
    ok = (
        np.isfinite(search.terms[first])
        & np.isfinite(search.terms[second])
        & movable[members.feature[switch]]
        & movable[members.feature[into]]
    )
    return first[ok], second[ok]


def _lead(decision: Decision) -> tuple[NDArray[np.float64], float] | None:
    """Per-leaf lead of the target class over the other, and the base lead,
    when the decision is one class against one other (else None)."""
    if (
        decision.kind != "classes"
        or decision.scores.shape[1] != 2
        or len(decision.targets) != 1
    ):
        return None
    k = decision.targets[0]
    sign = 1.0 if k == 1 else -1.0
    scores, base = decision.scores, decision.base
    return sign * (scores[:, 1] - scores[:, 0]), float(sign * (base[1] - base[0]))


def _margin(decision: Decision, scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Least lead of the best target class over every other class (or of the
    value over the nearer interval end), per row of ``scores`` (n, n_scores)."""
    if decision.kind == "interval":
        value = scores[:, 0]
        return np.minimum(value - decision.low, decision.high - value)
    best = np.full(scores.shape[0], -np.inf)
    for k in decision.targets:  # a handful of classes
        others = np.delete(scores, k, axis=1)
        lead = scores[:, k] - (others.max(axis=1) if others.shape[1] else 0.0)
        best = np.maximum(best, lead)
    return best


def _objectives(
    search: GridSearch,
    cells: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
) -> NDArray[np.float64]:
    """Objective of ``cells`` after each move: the feature of ``first[i]`` to
    that cell and, where ``second[i] >= 0``, the feature of ``second[i]`` too."""
    feature_of = search.program.cell_feature
    terms = np.tile(search.terms[cells], (first.size, 1))
    index = np.arange(first.size)
    terms[index, feature_of[first]] = search.terms[first]
    pair = second >= 0
    terms[index[pair], feature_of[second[pair]]] = search.terms[second[pair]]
    return terms.max(axis=1, initial=0.0) if search.linf else terms.sum(axis=1)


def _move_rows(
    search: GridSearch,
    cells: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    index: NDArray[np.intp],
) -> NDArray[np.float64]:
    """Points of ``cells`` after the moves ``index`` (as :func:`_objectives`)."""
    feature_of = search.program.cell_feature
    rows = np.tile(search.points[cells], (index.size, 1))
    span = np.arange(index.size)
    rows[span, feature_of[first[index]]] = search.points[first[index]]
    to = second[index]
    pair = to >= 0
    rows[span[pair], feature_of[to[pair]]] = search.points[to[pair]]
    return rows


def _move_margins(
    search: GridSearch,
    cells: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    scores: NDArray[np.float64] | None,
) -> tuple[NDArray[np.float64], float]:
    """Margin of the point of ``cells`` after each single move or switch (as
    :func:`_objectives`), and of the point itself; ``scores``:
    :meth:`GridSearch.moved_scores` of ``cells``.

    Switches share one second move per group (its hot member to 0): their
    margins are the single moves' from the point with that move made.  Moves
    the boxes cannot score are routed.
    """
    if scores is None:
        rows = _move_rows(search, cells, first, second, np.arange(first.size))
        return search.margin(rows), float(
            search.margin(search.points[cells][None, :])[0]
        )
    every = search.margin_of_scores(scores)
    margins = every[first]
    feature_of = search.program.cell_feature
    for to in np.unique(second[second >= 0]):  # one per one-hot group
        moved = cells.copy()
        moved[feature_of[to]] = to
        switch = np.flatnonzero(second == to)
        moved_scores = search.moved_scores(moved)
        if moved_scores is None:
            rows = _move_rows(search, cells, first, second, switch)
            margins[switch] = search.margin(rows)
        else:
            margins[switch] = search.margin_of_scores(moved_scores[first[switch]])
    # Feature 0 "moved" to its own cell is the point itself.
    return margins, float(every[cells[0]])


def _apply(
    search: GridSearch, cells: NDArray[np.intp], first: int, second: int
) -> None:
    """Make one move (as :func:`_objectives`) in ``cells``, in place."""
    feature_of = search.program.cell_feature
    cells[feature_of[first]] = first
    if second >= 0:
        cells[feature_of[second]] = second


def greedy_ascent(
    search: GridSearch,
    cells: NDArray[np.intp],
    bound: float = np.inf,
    max_steps: int = _MAX_STEPS,
) -> NDArray[np.intp] | None:
    """Move one feature (or switch one one-hot group) at a time, most margin
    gained per unit of cost first, until the forest predicts the target.

    Parameters
    ----------
    search : GridSearch
    cells : ndarray of shape (n_features,)
        Starting cells (those of the row itself), each of finite term.
    bound : float, default=inf
        Objective of a known counterfactual: moves that reach it are not tried.
    max_steps : int, default=200
        Moves at most (fewer for a repair, :data:`REPAIR_STEPS`).

    Returns
    -------
    ndarray of shape (n_features,) or None
        Cells the forest assigns to the target, or None when the ascent stalls
        (or every move reaches ``bound``).
    """
    program = search.program
    cells = cells.copy()
    point = search.points[cells][None, :]
    if search.meets(point)[0]:
        return cells
    for _ in range(max_steps):
        single = np.flatnonzero(
            search.single_cells
            & (np.arange(program.n_cells) != cells[program.cell_feature])
        )
        switch_first, switch_second = one_hot_switches(search, cells)
        first = np.concatenate([single, switch_first])
        second = np.concatenate([np.full(single.size, -1), switch_second])
        if not first.size or search.out_of_time():
            return None
        objective = _objectives(search, cells, first, second)
        below = objective < bound
        first, second, objective = first[below], second[below], objective[below]
        if not first.size:
            return None
        margins, margin = _move_margins(
            search, cells, first, second, search.moved_scores(cells)
        )
        gain = margins - margin
        added = np.maximum(objective - search.objective(cells), 1e-12)
        ratio = np.where(gain > 0, gain / added, -np.inf)
        best = int(np.argmax(ratio))
        if not np.isfinite(ratio[best]):
            return None
        _apply(search, cells, int(first[best]), int(second[best]))
        # The exact test only where the scores do not already rule it out.
        if (
            margins[best] > -search.screen
            and search.meets(search.points[cells][None, :])[0]
        ):
            return cells
    return None


def descend(search: GridSearch, cells: NDArray[np.intp]) -> NDArray[np.intp]:
    """Cheapest valid single or paired move, repeated while it lowers the cost.

    Single moves take one feature to any cheaper cell, or switch a one-hot
    group to a member of lower terms (:func:`one_hot_switches`); paired moves
    take one feature to a cheaper cell and another to a cell next to its own
    (either side).  Only moves the forest still assigns to the target are
    taken.

    Parameters
    ----------
    search : GridSearch
    cells : ndarray of shape (n_features,)
        A valid counterfactual's cells.

    Returns
    -------
    ndarray of shape (n_features,)
        Valid cells of objective at most that of ``cells``.
    """
    program = search.program
    feature_of = program.cell_feature
    allowed = search.single_cells
    terms = search.terms
    cells = cells.copy()
    for _ in range(_MAX_STEPS):
        current = search.objective(cells)
        cheaper = np.flatnonzero(allowed & (terms < terms[cells][feature_of]))
        first, second = _cheaper_switches(search, cells, current)
        first = np.concatenate([cheaper, first])
        second = np.concatenate([np.full(cheaper.size, -1), second])
        if not first.size or search.out_of_time():
            break
        objective = _objectives(search, cells, first, second)
        scores = search.moved_scores(cells)
        margins, _ = _move_margins(search, cells, first, second, scores)
        rows_of = partial(_move_rows, search, cells.copy(), first, second)
        best = search.cheapest_valid(objective, margins, rows_of)
        if best is not None:
            _apply(search, cells, int(first[best]), int(second[best]))
            continue
        # Paired moves: cheaper cell of feature j, a neighbour cell of feature k.
        near = np.concatenate([cells - 1, cells + 1])
        owner = np.tile(np.arange(program.n_features), 2)
        inside = (near >= program.cell_offsets[owner]) & (
            near < program.cell_offsets[owner + 1]
        )
        near = near[inside]
        near = near[allowed[near]]
        first, second = np.repeat(cheaper, near.size), np.tile(near, cheaper.size)
        apart = feature_of[first] != feature_of[second]
        first, second = first[apart], second[apart]
        objective = _objectives(search, cells, first, second)
        better = objective < current
        first, second, objective = first[better], second[better], objective[better]
        if not first.size:
            break
        rows_of = partial(_move_rows, search, cells.copy(), first, second)
        paired = _paired_margins(search, cells, first, second, scores)
        margins = (
            search.margin(rows_of(np.arange(first.size))) if paired is None else paired
        )
        best = search.cheapest_valid(objective, margins, rows_of)
        if best is None:
            break
        _apply(search, cells, int(first[best]), int(second[best]))
    return cells


def _cheaper_switches(
    search: GridSearch, cells: NDArray[np.intp], current: float
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The switches of :func:`one_hot_switches` that lower the sum of the two
    members' terms without raising the objective above ``current``."""
    first, second = one_hot_switches(search, cells)
    feature_of, terms = search.program.cell_feature, search.terms
    now = terms[cells[feature_of[first]]] + terms[cells[feature_of[second]]]
    lower = terms[first] + terms[second] < now
    lower &= _objectives(search, cells, first, second) <= current
    return first[lower], second[lower]


def _paired_margins(
    search: GridSearch,
    cells: NDArray[np.intp],
    first: NDArray[np.intp],
    second: NDArray[np.intp],
    base: NDArray[np.float64] | None = None,
) -> NDArray[np.float64] | None:
    """Margins of the moves to ``first[i]`` and ``second[i]`` together: the
    single-move margins from each distinct second move (a few per feature);
    ``base``: :meth:`GridSearch.moved_scores` of ``cells`` when known."""
    program = search.program
    feature_of = program.cell_feature
    if base is None:
        base = search.moved_scores(cells)
    if base is None:
        return None
    seconds, which = np.unique(second, return_inverse=True)
    moved = np.tile(cells, (seconds.size, 1))
    moved[np.arange(seconds.size), feature_of[seconds]] = seconds
    # A second move to a neighbour cell crosses one threshold: only the trees
    # with a leaf bounded there change; their values are taken out of the
    # base and put back as the moved point routes.
    _, _, by_feature, feature_starts = search._pairs_by
    k = feature_of[seconds]
    point, slot = _runs(feature_starts[k], feature_starts[k + 1])
    pair = by_feature[slot]
    low, high = program.pair_first[pair], program.pair_last[pair]
    was = (cells[k[point]] >= low) & (cells[k[point]] <= high)
    now = (seconds[point] >= low) & (seconds[point] <= high)
    tree = program.leaf_tree[program.pair_leaf[pair[was != now]]]
    key = np.unique(point[was != now] * program.n_trees + tree)
    point_of, tree_of = key // program.n_trees, key % program.n_trees
    before = search.tree_scores(np.tile(cells, (seconds.size, 1)), point_of, tree_of)
    after = search.tree_scores(moved, point_of, tree_of)
    if before is None or after is None:
        return None
    scores = base[first] - before[which, first] + after[which, first]
    return search.margin_of_scores(scores)


def _runs(
    starts: NDArray[np.intp], stops: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The ranges ``starts[g]:stops[g]`` laid end to end: the group and the
    value of each entry."""
    lengths = stops - starts
    group = np.repeat(np.arange(starts.size), lengths)
    offset = np.cumsum(lengths) - lengths
    return group, np.arange(int(lengths.sum())) - offset[group] + starts[group]


def kick(
    search: GridSearch, cells: NDArray[np.intp], own: NDArray[np.intp]
) -> NDArray[np.intp]:
    """Put each changed feature back in its own cell (and each one-hot group
    in its own category and in the others the forest prefers), held there
    while the greedy ascent repairs the rest, then descend; keep the cheapest
    result, and start again from it while a pass lowers the cost.

    A pass from a cheaper point puts back another set of features.  Measured on
    the 20 rows of a 100-tree forest of depth 8 (``benchmarks/bench_optimal.py``):
    points 1.013 times the optimum on average against 1.022 after one pass, and
    the slowest proof 16.2 s against 27.9 s (that row's start is then the
    optimum); on a 500-tree forest, rows the proof leaves unfinished at 30 s
    start from points up to 4.2% cheaper than the proof's own.

    Parameters
    ----------
    search : GridSearch
    cells : ndarray of shape (n_features,)
        A valid counterfactual's cells.
    own : ndarray of shape (n_features,)
        The cells of the row itself.

    Returns
    -------
    ndarray of shape (n_features,)
        Valid cells of objective at most that of ``cells``.
    """
    best, best_value = cells, search.objective(cells)
    # Each pass that goes on lowers the cost over finitely many cells.
    while not search.out_of_time():
        found = _kick_pass(search, best, own)
        value = search.objective(found)
        if value >= best_value:
            break
        best, best_value = found, value
    return best


def _kick_pass(
    search: GridSearch, cells: NDArray[np.intp], own: NDArray[np.intp]
) -> NDArray[np.intp]:
    """One pass of :func:`kick`: each kick of :func:`_kicks` tried once."""
    best, best_value = cells, search.objective(cells)
    for unit, to in _kicks(search, cells, own):  # a handful of them
        if search.out_of_time():
            break
        held_terms = search.terms[to]
        floor = held_terms.max() if search.linf else held_terms.sum()
        if floor >= best_value:
            continue  # every point with ``unit`` at ``to`` costs more
        movable = search.movable.copy()
        movable[unit] = False
        start = best.copy()
        start[unit] = to
        held = replace(search, movable=movable)
        climbed = greedy_ascent(
            held, start, bound=_KICK_SLACK * best_value, max_steps=REPAIR_STEPS
        )
        if climbed is None:
            continue
        found = descend(search, climbed)
        value = search.objective(found)
        if value < best_value:
            best, best_value = found, value
    return best


def _kicks(
    search: GridSearch, cells: NDArray[np.intp], own: NDArray[np.intp]
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """Features and their cells to hold them in, one kick each: the movable
    features outside the one-hot groups that ``cells`` change, in the row's
    own cell, then each one-hot group in its own category and in each other
    category whose switch from ``cells`` raises the margin (the cells of 0
    and of 1 of its members)."""
    back = (cells != own) & np.isfinite(search.terms[own]) & search.movable
    kicks = [(np.array([j]), own[[j]]) for j in np.flatnonzero(back & ~search.grouped)]
    members = search.members
    gains = np.zeros(members.feature.size, dtype=bool)
    first, second = one_hot_switches(search, cells)
    if first.size:
        margins, margin = _move_margins(
            search, cells, first, second, search.moved_scores(cells)
        )
        # A switch's first cell is its new hot member's cell of 1.
        gains[np.isin(members.one, first[margins > margin])] = True
    for g, group in enumerate(search.one_hot):  # a handful of groups
        if not search.movable[group].all():
            continue
        of = members.group == g
        category = np.where(
            np.eye(group.size, dtype=bool), members.one[of], members.zero[of]
        )
        tried = gains[of] | (own[group] == members.one[of])
        tried &= np.isfinite(search.terms[category]).all(axis=1)
        tried &= (category != cells[group]).any(axis=1)
        kicks += [(group, to) for to in category[tried]]
    return kicks
