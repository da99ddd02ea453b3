"""Actionable feature tweaking (Tolomei, Silvestri, Haines and Lalmas, KDD 2017).

For a row ``x`` that the ensemble does not assign to the target: every tree whose
own prediction for ``x`` equals the ensemble's (every tree, for boosting) offers
its target leaves; each leaf gives one candidate, the epsilon-satisfactory
instance of the path to it; the candidate of least cost that the *whole* ensemble
assigns to the target wins.

Speed comes from doing this on whole arrays: candidates are built from the cached
:func:`~treelens.leaf_boxes` for many (row, leaf) pairs at once and kept as their
few changed features (:mod:`treelens._counterfactual._candidates`); their costs are computed
first; validity is checked in order of increasing cost, in chunks, stopping at
each row's first valid candidate.  A check routes only the (candidate, tree) pairs
whose path the change can flip, after bounds have discarded candidates that cannot
reach the target (:mod:`treelens._counterfactual._incremental`).  That returns exactly what
checking every candidate with the model would, at a fraction of the work.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._boxes import LeafBoxes, leaf_boxes
from .._core._chunks import DEFAULT_CHUNK_ROWS, is_chunk_stream
from .._core._features import category_codes
from .._core._validation import check_memory_budget
from .._exceptions import InputError
from .._types import ArrayLike, Chunks, CostLike, EpsilonLike, ModelLike, TargetLike
from ._candidates import Changes, candidate_changes, change_costs
from ._categorical import (
    CategoryCost,
    CategoryPlan,
    check_category_cost,
    check_fill,
    needs_fixed_search,
    search_with_fixed,
)
from ._category_moves import category_moves, held_reach
from ._constraints import Constraints
from ._incremental import IncrementalPredictor
from ._missing import FillCost, FillMissing
from ._problem import (
    REASON_NO_FLIP,
    REASON_NOT_REACHABLE,
    CounterfactualResult,
    Problem,
    finish,
    prepare_problem,
)
from ._streaming import check_candidate_budget, search_all_in_chunks
from ._targets import target_leaf_mask, voting_trees

__all__ = ["feature_tweak"]

Mode = Literal["minimal", "paper"]

#: Default bound on the bytes any chunk of work allocates.
DEFAULT_MEMORY_BUDGET = 2**30
# Candidates checked per row in the first round; four times more every round.
_FIRST_CHECK = 8
_MAX_CHECK = 8192
# Arguments of feature_tweak that tweak_rows does not take.
_NOT_FOR_ROWS = ("progress", "category_cost", "fill_missing", "fill_cost")


def feature_tweak(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    target: TargetLike,
    cost: CostLike = "auto",
    epsilon: EpsilonLike = 0.0,
    mode: Mode = "minimal",
    constraints: Constraints | None = None,
    reference: ArrayLike | None = None,
    infer: bool | tuple[str, ...] = True,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
    category_cost: CategoryCost = None,
    fill_missing: FillMissing = False,
    fill_cost: FillCost = None,
) -> CounterfactualResult:
    """Least-cost counterfactuals built from single leaves (actionable feature tweaking).

    For each row ``x`` not already assigned to ``target``: every tree whose own
    prediction equals the ensemble's (every tree for boosting) contributes one
    candidate per *target leaf*, the point of that leaf's box reached from ``x``
    (see ``mode``); the valid candidate (the source model predicts the target)
    of least ``cost`` is returned.  The answer equals checking every candidate
    one by one; ties go to the lower tree index, then the lower leaf node id.

    Parameters
    ----------
    model : fitted estimator or Forest
        Any model :func:`~treelens.to_forest` reads.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows to explain (one row may be 1-D), in the model's input columns: for a
        pipeline or a model with categorical columns, the DataFrame it takes
        (labels, booleans, missing values).  A missing value stays missing
        (unless ``fill_missing``) and is routed as the model routes it (NaN is
        refused where the model refuses it).
    target : class label, "other", (low, high), "inlier" or "outlier"
        Classifiers: a class label, or ``"other"`` (any class but the current
        one).  Regressors: a closed interval of the predicted value, ``low <
        high`` (``None`` for an open side; a point, ``low == high``, is refused:
        a float64 sum of leaf values rarely equals it in every bit); an
        IsolationForest (whose prediction is ``score_samples``) also takes
        ``"inlier"`` and ``"outlier"``, as its ``predict`` calls them.  Target
        leaves are leaves predicting the target class (argmax of their class
        fractions; for ``"other"``, not the current class) or with a value
        inside the interval; for boosting, leaves whose contribution moves the
        raw score towards the target compared with the leaf ``x`` reaches in
        the same tree.
    cost : str, array-like, mapping or callable, default="auto"
        ``"auto"``: ``"mad"`` with ``reference`` (scale-free), else ``"l1"``
        (the result's ``cost_name_`` says which); ``"l2"``, ``"l1"``, ``"l0"``, ``"linf"``, ``"cosine"``, ``"mad"``
        (L1 scaled by each feature's median absolute deviation in
        ``reference``), per-feature weights (weighted L1), ``{"norm": ...,
        "weights": ...}``, or a vectorized callable ``cost(x, candidates)``
        returning shape (n_candidates,).
    epsilon : float, array-like of shape (n_features,) or "auto", default=0.0
        The paper's epsilon: how far past a threshold a moved value lands.
        ``0``: the next value of the model's dtype past it (float32 for
        scikit-learn and XGBoost, float64 for LightGBM).  ``"auto"``: 1% of
        each feature's standard deviation in ``reference``.
    mode : {"minimal", "paper"}, default="minimal"
        ``"minimal"`` moves ``x`` only on the features where it violates the
        leaf's box, to the nearest point of the box shrunk by ``epsilon`` on each
        side; the box intersects repeated conditions on one feature, and a box
        narrower than ``2 * epsilon`` gives its midpoint.  ``"paper"`` sets every
        feature tested on the path to ``threshold - epsilon`` or ``threshold +
        epsilon`` as the paper does, even those ``x`` already satisfies (with two
        conditions on one feature, the shrunk box's end nearer to ``x``).
        Features not on the path keep their value in both modes.
    constraints : Constraints, optional
        Immutable, increase-only, decrease-only, bounded, integer and one-hot
        features, applied while candidates are built: a leaf whose box cannot be
        reached under them gives no candidate.
    reference : array-like of shape (n_reference, n_features), optional
        Data for costs, epsilon, inferred constraints (typically the training set).
    infer : bool or tuple of {"integer", "flags", "one_hot"}, default=True
        Constraints read off ``reference`` and the rows' dtypes (see
        :func:`~treelens.counterfactual`), reported in ``inferred_``.
    memory_budget : int, default=2**30
        Largest number of bytes one chunk of work allocates (at least one row's).
    progress : bool, default=False
        Show a progress bar over the rows.  ``X`` may also be an iterable of
        chunks (arrays or DataFrames), processed one by one
        (:mod:`treelens._counterfactual._streaming`).
    category_cost : float, mapping or None, default=None
        Cost of a change of category added to the numeric cost: 1 per changed
        column (None), a number, or per column a number or ``(from, to)`` table
        (:mod:`treelens._counterfactual._categorical`).
    fill_missing : bool or list of str or int, default=False
        Missing values that may be filled: none (a missing value stays
        missing), every mutable column's (True), or the columns named.  Each is
        searched both kept missing and filled: a filled number starts from its
        column's median in ``reference`` (needed; ``fill_start_``), a filled
        category may be any allowed one, and ``filled_`` says which were.
        ``cost_`` = the norm of the numeric moves (a filled value's from its
        start) + the category change costs + the fill costs.
    fill_cost : float, mapping or None, default=None
        Price of one filled value: 1 (None, as a category change), a number, or
        per column (others 1).

    Returns
    -------
    CounterfactualResult
        ``found_``, ``X_cf_``, ``cost_``, ``reason_``, ``tree_``, ``leaf_`` per
        row.  Rows already at the target are found with cost 0 and no change.
        Every counterfactual is confirmed with the source model's own
        ``predict``.

    Raises
    ------
    InputError
        On a target the model cannot predict, bad constraints, NaN in ``X``, a
        cost callable returning the wrong shape, an unknown ``mode``.

    See Also
    --------
    optimal_counterfactual : The least-cost counterfactual over all trees at once.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from treelens import feature_tweak
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> result = feature_tweak(model, X[:3], target=2, reference=X)
    >>> result.found_.tolist(), model.predict(result.X_cf_).tolist()
    ([True, True, True], [2, 2, 2])
    """
    if progress or is_chunk_stream(X):
        return _tweak_in_chunks(model, X, locals())
    if mode not in ("minimal", "paper"):
        raise InputError(f"`mode` must be 'minimal' or 'paper'; got {mode!r}.")
    check_memory_budget(memory_budget)
    check_category_cost(model, category_cost)
    check_fill(model, fill_missing, fill_cost, reference, constraints)
    if needs_fixed_search(model, X):
        return search_with_fixed(
            tweak_rows, model, X, target=target, cost=cost, epsilon=epsilon,
            constraints=constraints, reference=reference,
            category_cost=category_cost, method="feature_tweak",
            options={"mode": mode, "memory_budget": memory_budget, "infer": infer,
                     "confirm": False},  # each answer is confirmed there
            moves_categories=True, fill_missing=fill_missing, fill_cost=fill_cost,
        )  # fmt: skip
    given = {k: v for k, v in locals().items() if k not in _NOT_FOR_ROWS}
    return tweak_rows(**given)


def _tweak_in_chunks(model: Any, X: Any, given: dict[str, Any]) -> CounterfactualResult:
    """:func:`feature_tweak` chunk by chunk, constrained as one call would be."""
    check_candidate_budget(to_forest(model), given["target"], given["memory_budget"])
    options = {k: v for k, v in given.items() if k not in ("model", "X")}
    return search_all_in_chunks(
        feature_tweak,
        model,
        X,
        options,
        chunk_rows=DEFAULT_CHUNK_ROWS,
        description="feature tweaking",
    )


def tweak_rows(
    model: Any,
    X: Any,
    *,
    target: Any,
    cost: Any,
    epsilon: Any,
    mode: Mode,
    constraints: Constraints | None,
    reference: Any,
    infer: Any = True,
    memory_budget: int,
    categories: CategoryPlan | None = None,
    confirm: bool = True,
) -> CounterfactualResult:
    """:func:`feature_tweak` of complete rows; categorical columns move as
    ``categories`` says (each candidate takes the cheapest category its leaf
    admits), or are held without it (leaves that do not admit a row's
    categories are then out of reach).  ``confirm=False``: the caller confirms
    the answers with the source model (see :func:`finish`)."""
    check_candidate_budget(to_forest(model), target, memory_budget)
    problem = prepare_problem(
        model,
        X,
        target=target,
        cost=cost,
        epsilon=epsilon,
        constraints=constraints,
        reference=reference,
        infer=infer,
    )
    n, n_features = problem.X.shape
    out = {
        "X_cf": np.full((n, n_features), np.nan),
        "cost": np.full(n, np.inf),
        "found": np.zeros(n, dtype=bool),
        "reason": np.full(n, None, dtype=object),
        "tree": np.full(n, -1, dtype=np.intp),
        "leaf": np.full(n, -1, dtype=np.intp),
    }
    todo = np.flatnonzero(~problem.at_target)
    search = _Search(problem, mode, int(memory_budget), categories)
    for rows in search.row_blocks(todo):
        search.run(rows, out)
    if not confirm:
        problem = dataclasses.replace(problem, confirmed_by_caller=True)
    return finish(problem, **out, method="feature_tweak")


class _Search:
    """The vectorized search over blocks of rows, within a memory budget."""

    def __init__(
        self,
        problem: Problem,
        mode: Mode,
        budget: int,
        categories: CategoryPlan | None = None,
    ) -> None:
        self.problem = problem
        self.categories = categories
        self.forest = problem.forest
        self.boxes: LeafBoxes = leaf_boxes(problem.forest)
        self.mode = mode
        self.budget = budget
        n_features, n_trees = problem.X.shape[1], self.forest.n_trees
        # About twenty (pair, feature) float64 temporaries while building candidates.
        self.bytes_per_pair = 160 * n_features + 64
        # Per (row, leaf) cell of the masks: booleans plus float deltas for boosting.
        self.bytes_per_cell = 32 if self.forest.kind == "boosting" else 4
        # Per candidate checked: its whole row, the (candidate, tree) marks, and
        # the routing of the pairs that may change leaf.
        self.bytes_per_check = 16 * n_features + 48 * n_trees + 64

    def row_blocks(self, rows: NDArray[np.intp]) -> list[NDArray[np.intp]]:
        per_row = max(1, self.boxes.n_leaves * self.bytes_per_cell)
        size = max(1, self.budget // (4 * per_row))
        return [rows[i : i + size] for i in range(0, rows.size, size)]

    def run(self, rows: NDArray[np.intp], out: dict[str, NDArray[Any]]) -> None:
        """Search rows ``rows`` (global indices), writing into the ``out`` arrays."""
        problem, boxes = self.problem, self.boxes
        leaves, current = problem.leaves[rows], problem.current[rows]
        votes = voting_trees(self.forest, problem.target, leaves, current)
        mask = target_leaf_mask(self.forest, problem.target, leaves, current)
        mask &= votes[:, boxes.tree]
        for j, admitted in boxes.allowed.items():
            mask &= self._category_reach(j, admitted, problem.X[rows, j])
        counts = mask.sum(axis=1)
        # Sub-blocks whose (row, leaf) pairs fit the budget; a row is never split.
        limit = max(1, self.budget // self.bytes_per_pair)
        start = 0
        while start < rows.size:
            total = np.cumsum(counts[start:])
            stop = start + max(1, int(np.searchsorted(total, limit, side="right")))
            self._run_pairs(rows[start:stop], mask[start:stop], out)
            start = stop

    def _category_reach(
        self, j: int, admitted: NDArray[np.bool_], x: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        """Mask of shape (rows, leaves): leaves a row can reach on categorical
        feature ``j`` (its own category admitted and allowed, or another one
        admitted and allowed when the column may move; see
        :mod:`._category_moves`)."""
        own = category_codes(x, admitted.shape[1] - 1)
        plan = self.categories
        if plan is None or j not in plan.allowed or plan.immutable[j]:
            return held_reach(self.boxes, j)[own]
        return category_moves(self.boxes, j, plan.allowed[j], plan.costs[j]).reach[own]

    def _category_changes(
        self, X: NDArray[np.float64], changes: Changes, costs: NDArray[np.float64]
    ) -> tuple[Changes, NDArray[np.float64]]:
        """``changes`` with each candidate's categories (see :class:`CategoryPlan`)
        and their change costs added."""
        plan = self.categories
        if plan is None or not self.boxes.allowed:
            return changes, costs
        n = changes.n_candidates
        owners, features, values, prices = [], [], [], []
        for j, admitted in self.boxes.allowed.items():
            if j not in plan.allowed or plan.immutable[j]:
                continue
            k = admitted.shape[1] - 1
            own = category_codes(X[:, j], k)[changes.row]  # coded once per row
            ok = plan.allowed[j]
            moves = category_moves(self.boxes, j, ok, plan.costs[j])
            keep, table_to, table_price = moves.keep, moves.to, moves.price
            if keep is not None and table_to is not None and table_price is not None:
                move = np.flatnonzero(~keep[own, changes.leaf])
                at = (own[move], changes.leaf[move])
                to, price = table_to[at], table_price[at]
            else:  # tables too large to keep: the moves of these candidates
                leaf = admitted[changes.leaf]
                move = np.flatnonzero(~(leaf[np.arange(n), own] & ok[own]))
                table = np.where(
                    leaf[move, :k] & ok[:k], plan.costs[j][own[move], :k], np.inf
                )
                to = np.argmin(table, axis=1)
                price = table[np.arange(move.size), to]
            if not move.size:
                continue
            owners.append(move)
            features.append(np.full(move.size, j, dtype=np.intp))
            values.append(to.astype(np.float64))
            prices.append(price)
        if not owners:
            return changes, costs
        extra_owner = np.concatenate(owners)
        owner = np.concatenate([changes.owner, extra_owner])
        order = np.argsort(owner, kind="stable")
        counts = np.bincount(owner, minlength=n)
        merged = Changes(
            row=changes.row,
            leaf=changes.leaf,
            ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.intp),
            feature=np.concatenate([changes.feature, *features])[order],
            value=np.concatenate([changes.value, *values])[order],
        )
        added = np.bincount(extra_owner, weights=np.concatenate(prices), minlength=n)
        return merged, costs + added

    def _run_pairs(
        self,
        rows: NDArray[np.intp],
        mask: NDArray[np.bool_],
        out: dict[str, NDArray[Any]],
    ) -> None:
        problem, boxes = self.problem, self.boxes
        pair_row, pair_leaf = np.nonzero(mask)
        X = problem.X[rows]
        changes, reachable = candidate_changes(
            problem, boxes, X, pair_row, pair_leaf, self.mode
        )
        out["reason"][rows[~reachable]] = REASON_NOT_REACHABLE
        out["reason"][rows[reachable]] = REASON_NO_FLIP
        if not changes.n_candidates:
            return
        costs = change_costs(problem, X, changes)
        changes, costs = self._category_changes(X, changes, costs)
        # Rows, then cost, then leaf order (tree index, then node id): the
        # deterministic tie-break.  Candidates come by row and, within a row, by
        # leaf, so two stable sorts give that order (the second a radix sort on
        # small row numbers), twice as fast as a three-key lexsort.
        order = np.argsort(costs, kind="stable")
        row_key = changes.row[order]
        if rows.size <= np.iinfo(np.int16).max:
            row_key = row_key.astype(np.int16)
        order = order[np.argsort(row_key, kind="stable")]
        changes, costs = changes.take(order), costs[order]
        unique = changes.first_of_duplicates(costs)
        if not unique.all():
            kept = np.flatnonzero(unique)
            changes, costs = changes.take(kept), costs[kept]
        predictor = IncrementalPredictor(
            self.forest, problem.target, X, problem.leaves[rows], problem.current[rows]
        )
        # Candidates are checked in cost order a few at a time per row, so the
        # routing work (and the bound that rules many out) is spent only on those
        # before each row's first valid one.
        winner = self._first_valid(changes, predictor, rows.size)
        local = np.flatnonzero(winner >= 0)
        chosen = winner[local]
        target_rows = rows[local]
        out["X_cf"][target_rows] = changes.take(chosen).dense(X)
        out["cost"][target_rows] = costs[chosen]
        out["found"][target_rows] = True
        out["reason"][target_rows] = None
        out["tree"][target_rows] = boxes.tree[changes.leaf[chosen]]
        out["leaf"][target_rows] = boxes.node[changes.leaf[chosen]]

    def _first_valid(
        self,
        changes: Changes,
        predictor: IncrementalPredictor,
        n_rows: int,
    ) -> NDArray[np.intp]:
        """Index of each row's first valid candidate in sorted order (-1 if none).

        Candidates are sorted by row, then cost.  Each round checks the next few
        candidates of every unresolved row in one pass; the chunk per row grows
        fourfold each round.
        """
        starts = np.searchsorted(changes.row, np.arange(n_rows + 1))
        count = np.diff(starts)
        pos = np.zeros(n_rows, dtype=np.intp)
        winner = np.full(n_rows, -1, dtype=np.intp)
        per_round = max(1, self.budget // self.bytes_per_check)
        chunk = _FIRST_CHECK
        while True:
            active = np.flatnonzero((winner < 0) & (pos < count))
            if not active.size:
                return winner
            take = np.minimum(chunk, count[active] - pos[active])
            fits = np.cumsum(take) <= per_round
            fits[0] = True
            active, take = active[fits], take[fits]
            total = int(take.sum())
            offsets = np.cumsum(take) - take
            idx = np.repeat(starts[active] + pos[active] - offsets, take) + np.arange(
                total
            )
            owner = np.repeat(active, take)
            ok = predictor.valid(changes.take(idx))
            if ok.any():
                # idx grows within each row, so the first hit per row is its least.
                hit_rows, first = np.unique(owner[ok], return_index=True)
                winner[hit_rows] = idx[ok][first]
            pos[active] += take
            chunk = min(4 * chunk, _MAX_CHECK)
