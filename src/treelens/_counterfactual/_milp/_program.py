"""The model-dependent part of the optimal-counterfactual program.

A tree ensemble splits each feature ``j`` at finitely many thresholds; between two
consecutive thresholds every value routes the same way through every tree.  So
the counterfactual search is a choice of one *cell* per feature, and a point in
it.  :class:`ForestProgram` holds everything about that choice that depends on the
model only, built once per model and cached on the :class:`Forest`:

- per feature, the sorted distinct thresholds ``t_0 < ... < t_{m-1}``, each
  replaced by the largest float64 value that the model's cast to its
  ``input_dtype`` still sends left (:func:`~treelens._core._float64.float64_forest`),
  and the ``m + 1`` cells ``(t_{k-1}, t_k]`` with ``t_{-1} = -inf`` and
  ``t_m = inf``: every float64 value, uncast, lies in the cell whose leaves
  the model routes it to, so the search ranges over all of them;
- per leaf of every tree, the range of cells its box covers on each feature it is
  bounded on;
- the constant constraint matrix of the mixed-integer program (Mišić, "Optimization
  of tree ensembles", Operations Research 2020), over columns

  ========  ==========================================================  ==========
  ``z``     one per cell: the cell chosen (exactly one per feature)      binary
  ``v``     one per threshold: ``v_{j,i} = [x'_j <= t_{j,i}]``           binary
  ``y``     one per leaf: the leaf reached                              continuous
  ========  ==========================================================  ==========

  and rows

  - link, one per cell: ``v_{j,0} = z_{j,0}``, ``v_{j,i} = v_{j,i-1} + z_{j,i}``,
    ``v_{j,m-1} + z_{j,m} = 1`` (so exactly one cell per feature);
  - one per tree: ``sum_leaves y = 1`` (for a row whose decision only bounds
    sums from below, relaxed to ``<= 1`` with each tree's least leaves left
    out: :func:`treelens._counterfactual._milp._solve._floor_leaves`);
  - two per split node ``s`` on ``(j, t_i)`` of tree ``T``:
    ``sum y_l <= v_{j,i}`` over the leaves of ``T`` whose box lies at or below
    ``t_i`` on feature ``j`` (the leaves under the left child, and any other),
    and ``sum y_l <= 1 - v_{j,i}`` over those wholly above;

  With binary ``z`` the split rows force ``y`` to the one leaf each tree routes
  the chosen point to, so ``y`` need not be declared integer; ``v`` is whole
  whenever ``z`` is, and declared so that HiGHS may branch on ``x_j <= t``
  (measured on 100-tree forests: a fifth to a third fewer nodes, and less time,
  on the rows that take longest).  Rows per range of
  cells inside a leaf box (``sum y_l <= z_{j,a} + ... + z_{j,b}``) tighten the
  relaxation a little but, measured on forests of 100 trees with a known
  counterfactual as cutoff, made HiGHS slower (about 1.4 times over 16 rows):
  they are left out.

  Two more ways to tighten the vote were measured and left out:

  - ``y`` declared integer, so that HiGHS may derive cover cuts from the vote
    row: on the two slowest rows of a 500-tree forest the bound after 60 s
    rose from 3.559 to 3.592 and from 6.238 to 6.278 (points 5.18 and 11.32);
    on 11 rows of a 100-tree forest of depth 8 the medians were 1.35 s and
    1.27 s against 1.43 s and 1.68 s, the totals 28.3 s and 30.9 s against
    23.5 s and 25.3 s (the long rows slower).
  - Box cuts: a box of cells in which even each tree's best leaf cannot give
    the target holds no counterfactual, so every answer leaves it on some
    feature (a row over the ``v`` of the box's edges).  Valid, but the
    relaxation already satisfies them: on the slowest row of a 100-tree
    forest of depth 6, boxes grown greedily against the LP point (the edges
    it crosses most, first) were left by 1.3 to 2.3 in sum, never less than
    1, so no cut was violated.  The LP mixes the row with a far point across
    several features at once, which "leave the box" cannot forbid.

  - Closing twin cells: once each tree's least leaves are left out (see
    ``_floor_leaves``), 5% to 40% of the thresholds of a row's program
    appear in no row over an open leaf, so the cells on their two sides
    differ only in cost and all but the cheapest of each run could be
    closed.  Solved both ways, row by row, on 20 rows each: a 100-tree
    forest of depth 6 at a median of 0.66 s against 0.79 s but 45.9 s in
    all against 41.6 s; LightGBM 0.62 s against 0.60 s.  HiGHS's presolve
    already gains what there is.

  Why the vote stays loose: each tree may route its share of a fractional
  point to the leaves that suit it, as if it coupled the features' fractional
  cells in its own way (on the slowest 500-tree row the LP point is the row's
  own cells at weight 0.74 and far cells at 0.24, and a leaf asking for the
  far side of one feature and the near side of another takes 0.24 though
  neither point reaches it).  Rows about one tree at a time cannot forbid
  that.  Rows about two leaves of different trees whose boxes are disjoint
  can: at most one is reached, and reaching either puts ``x_a`` in the union
  of their ranges on any feature ``a``, so ``y_1 + y_2`` is at most the
  mass of the cells of that union (cells ``lo..hi`` of ``a`` hold ``v_{a,hi} -
  v_{a,lo-1}``: one or two such differences).  Separated against the LP
  point in rounds, they raise the root bound a lot (500 trees, slowest row:
  6.238 to 7.993 with 22,663 rows, point 11.18; 100 trees, depth 6: 3.196 to
  3.774, optimum 4.236), but HiGHS then proves 100-tree rows slower: with
  the optimum as cutoff, 17.3 s against 4.1 s without them (depth 6) and
  24.9 s against 10.4 s (depth 8), its nodes about four times as slow and no
  fewer.  Not used; the lead for large forests.  They could only be
  static rows: HiGHS 1.16 takes no cuts from its caller during the search
  (highspy declares a lazy-constraint callback, but its MIP solver never
  calls it), so it cannot keep them in its cut pool, where rows that stop
  binding age out of the nodes' LPs.  Measured on two 500-tree rows with
  the root's LP re-solved warm after each round (3,000 most violated rows a
  round): on one proven in 52.6 s by the whole program (point 5.383), the root
  bound rose from 3.93 to 5.03 and stopped there (15,170 rows, 39 s of rounds),
  and 30 s of branch and bound over the 9,689 binding ones reached 5.19 (the
  program without them: 4.77 in the same 30 s); on the slowest (point 11.07)
  from 6.17 to 7.98 in 190 s, where it stalls, and 39 s of branch and bound
  left it at 7.98.  So the rows of two leaves close a third of the gap at most:
  not the proof of large forests either.

  More formulations were measured and left out:

  - Joint cells of feature pairs: for a pair ``(a, b)``, continuous columns
    ``w`` over the products of their cells (coarsened to the thresholds the
    leaves bounded on both use), whose sums over either feature are its
    cells, and rows ``y_l <= w`` summed over the rectangle of leaf ``l``'s box
    on ``(a, b)``.  Every tree then shares one coupling of the two features'
    fractional cells.  On the slowest row of a 100-tree forest of depth 6,
    60 pairs chosen against the LP point (four rounds, 34,861 columns,
    1,909 leaf rows) raised the root bound from 5.65 to 6.97 (optimum
    8.50), but HiGHS had not left the root after 60 s; without them it
    proves the row in 7.3 s.
  - The cells substituted out (``z_{j,i} = v_{j,i} - v_{j,i-1}``, the link
    rows replaced by ``0 <= v_{j,i} - v_{j,i-1} <= 1``): 20 rows of LightGBM
    in 30.0 s against 21.6 s (medians 0.76 s and 0.72 s).  HiGHS's presolve
    handles the link rows better than the substitution.  On four rows of a
    500-tree forest (30 s each) no better: 30.1, 28.2, 31.2 and 28.1 s
    against 26.7, 30.0, 30.4 and 13.2 s, the bounds of the rows out of time
    either side of each other.
  - Split rows left with their threshold's column alone once their leaves
    are pruned (``0 <= v <= 1``, a third of the rows of a LightGBM program)
    dropped before HiGHS sees them: 20 rows of LightGBM at medians of 0.468 s
    and 0.470 s against 0.447 s and 0.446 s with them.  HiGHS's presolve
    removes them at no measurable cost.
  - Bounds from the forest cut at a lower depth, each cut node a leaf of the
    best target fraction below it (every point's vote can only rise, so its
    optimum bounds the model's from below): on three 500-tree rows that 30 s
    leave unproven (bounds 3.29, 4.70 and 6.72 then), depth 4 proves 2.20
    and 2.77 in 3 s and reaches 5.73 in 60 s, depth 5 proves 3.78 in 24 s
    and 4.67 in 12 s.  About as strong as the full search's own bound in the
    same time, and no proof.
  - Trees added as they are needed: each tree's split rows left out (its
    ``y`` free over its live leaves, a valid relaxation), the program solved,
    and the trees whose weighted leaves meet the vote where the leaf the
    chosen cells reach does not given back their rows, until none does (then
    the point is the forest's optimum).  Nearly every tree comes back: on
    four rows of a 100-tree forest of depth 6, 93, 97, 98 and 87 trees after
    three or four solves, 35.0 s in all against 9.5 s for the whole program;
    on a slow 500-tree row 482 trees after the first solve (the row's own
    cells), and the second solve unproven after 59 s (bound 8.49, point 8.83,
    which the whole program proved in 25.7 s in the last benchmark run).  The
    relaxed trees' free vote also makes each solve harder, not easier.

  Where the 500-tree forest's time goes, and two rewritings of the link rows
  measured against it and left out.  On a row proven in 9.8 s (94 nodes,
  10,181 simplex iterations on 14,726 rows after presolve), ``perf`` puts 27%
  of the samples in HiGHS's ``HVectorBase::reIndex`` and most of the rest in
  its factor solves: the simplex's vectors are dense, as the thresholds'
  ``v`` are running sums of the cells along each feature (about 260 per
  feature), so a change in one cell reaches every ``v`` after it.

  - Cells only: ``v`` substituted out, each split row over the cells on the
    shorter side of its threshold, one row ``sum z = 1`` per feature.  Nodes
    run about twice as fast (1,062 and 1,137 in 60 s), but the matrix has ten
    times the nonzeros (960,453 against 98,370) and HiGHS can no longer
    branch on ``x <= t``: the row proven in 9.8 s has a bound of 4.01 for a
    point of 4.54 after 60 s, and a row proven in 17.4 s one of 1.45 for 1.71.
  - Short chains: ``v_i = v_b + z_{b+1} + ... + z_i``, with ``v_b`` the
    nearest threshold below ``i`` among every 8th or 16th, so that each cell
    reaches at most a few ``v`` through the chain of every 8th or 16th.  20.5
    s and 21.1 s for the row of 9.8 s, 20.8 s and 19.8 s for that of 17.4 s.

  So the nodes cannot be made much cheaper by rewriting the rows.  The slow
  rows' root bound is 6.17 for a point of 11.18 (the row's own cells at weight
  0.7 with far cells of every feature); pruning the leaves and cells by a lower
  cost (11.18 down to 7, 388 of 20,477 columns fewer) leaves it at 6.17, and
  the bound that gives each tree its best leaf within a cost independently is
  1.53.

  That bound is not a mixture of whole points: it comes from each tree
  coupling the fractional cells its own way.  Points found with a vote lead
  (``Margin(vote=...)``, 20 s each) on the two slowest rows, whose own vote is
  0, cost 11.18, 12.34, 13.93, 16.61, 19.95 and 22.63 for votes 0.50, 0.55,
  0.60, 0.71, 0.80 and 0.90 (row 18), and 8.17, 8.71, 10.43, 11.89, 15.24 and
  18.11 for 0.50 to 0.90 (row 2): the cheapest mixture of the row with any of
  them that reaches the vote costs 11.16 and 7.85, where the relaxation gives
  6.17 and 5.48 after 30 s.  A bound over the convex hull of whole points
  could come within a few percent on these rows if their vote-cost curves are
  as found, but the Lagrangian dual of the vote row reaches it only through
  inner programs as hard as the row's own: on row 18 (vote row ``sum g_l y_l >=
  500``), ``min cost - mu (g - 500)`` without the vote row had a bound of 5.37
  after 60 s at ``mu = 0.0224`` (the slope from the row to the optimum) and 3.21
  at ``mu = 0.03``, with points of 9.82 and 11.55.  Dantzig-Wolfe columns over
  groups of trees, each priced by a smaller program (branch and price), are
  the lead left; not built here, and not a proof by themselves: the bound of
  any such decomposition is at most that over the convex hull of the forest's
  whole points (the whole forest as one group), which the mixtures above put
  at 7.85 or less on row 2, whose point costs 8.17.  The gap is in the
  vote-cost curve's lack of convexity, so every decomposition still branches,
  with a column generation at each node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..._core._boxes import LeafBoxes, leaf_boxes
from ..._core._cache import derived
from ..._core._float64 import float64_forest
from ..._core._forest import Forest
from ..._exceptions import InputError

__all__ = ["ForestProgram", "forest_program"]

# Bytes of memory HiGHS and scipy need per nonzero, row and column of the program,
# measured generously (presolve, row- and column-wise copies, branch and bound).
_BYTES_PER_ENTRY = 400


@dataclass(frozen=True, eq=False)
class ForestProgram:
    """Cells, leaves and the constant constraint matrix of one forest.

    Attributes
    ----------
    n_features, n_cells, n_thresholds, n_leaves, n_trees : int
    cell_offsets : ndarray of shape (n_features + 1,)
        Cells of feature ``j`` are ``cell_offsets[j]:cell_offsets[j + 1]``.
    cell_feature : ndarray of shape (n_cells,)
    cell_low : ndarray of shape (n_cells,)
        Exclusive lower edge of each cell (``-inf`` for the first of a feature).
    cell_high : ndarray of shape (n_cells,)
        Inclusive upper edge (``inf`` for the last): the largest float64 value
        in the cell.
    cell_min : ndarray of shape (n_cells,)
        Smallest float64 value inside the cell (``-inf`` for the first).
    leaf_tree : ndarray of shape (n_leaves,)
        Tree of each leaf; leaves in the order of :func:`leaf_boxes`.
    node_leaf : ndarray of shape (n_nodes_total,)
        Leaf index of each node of the forest's flat node array (``-1`` at
        split nodes): ``node_leaf[offsets[t] + node]``.
    tree_leaf_offsets : ndarray of shape (n_trees + 1,)
    pair_leaf, pair_first, pair_last : ndarray of shape (n_pairs,)
        For each leaf and each feature its box bounds: the global indices of the
        first and last cell the box covers on that feature.
    split_tree : ndarray of shape (n_splits,)
        Tree of each split node (two rows each in ``matrix``).
    leaf_reachable : ndarray of shape (n_leaves,), bool
        False for leaves only missing values reach (behind an infinite threshold).
    matrix : scipy.sparse.csr_matrix
        The link, tree and split rows over the ``z, v, y`` columns.
    row_lower, row_upper : ndarray of shape (n_rows,)
    extra_cuts : tuple of int
        Features given an extra cut at 0 (members of one-hot groups), so that 0
        and 1 lie in different cells.
    """

    n_features: int
    cell_offsets: NDArray[np.intp]
    cell_feature: NDArray[np.intp]
    cell_low: NDArray[np.float64]
    cell_high: NDArray[np.float64]
    cell_min: NDArray[np.float64]
    leaf_tree: NDArray[np.intp]
    node_leaf: NDArray[np.intp]
    tree_leaf_offsets: NDArray[np.intp]
    pair_leaf: NDArray[np.intp]
    pair_first: NDArray[np.intp]
    pair_last: NDArray[np.intp]
    split_tree: NDArray[np.intp]
    leaf_reachable: NDArray[np.bool_]
    matrix: sp.csr_matrix
    row_lower: NDArray[np.float64]
    row_upper: NDArray[np.float64]
    extra_cuts: tuple[int, ...]

    @property
    def n_cells(self) -> int:
        return int(self.cell_feature.shape[0])

    @property
    def n_thresholds(self) -> int:
        return self.n_cells - self.n_features

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_tree.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.tree_leaf_offsets.shape[0] - 1)

    @property
    def n_link_rows(self) -> int:
        return self.n_cells

    def cell_of(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Global index of the cell holding each value, shape (n, n_features)."""
        out = np.empty(X.shape, dtype=np.intp)
        for j in range(self.n_features):  # one vectorized search per feature
            start, stop = self.cell_offsets[j], self.cell_offsets[j + 1]
            edges = self.cell_high[start : stop - 1]
            out[:, j] = start + np.searchsorted(edges, X[:, j], side="left")
        return out


def estimate_program_bytes(forest: Forest) -> tuple[int, int, int, int]:
    """Rough size of the program of ``forest``: (bytes, rows, columns, nonzeros)."""
    n_leaves = n_splits = depth_sum = 0
    for tree in forest.trees:
        leaves = tree.is_leaf
        n_leaves += int(leaves.sum())
        n_splits += int((~leaves).sum())
        depth_sum += int(tree.node_depth[leaves].sum())
    n_cells = n_splits + forest.n_features  # at most one new threshold per split
    rows = n_cells + forest.n_trees + 2 * n_splits
    cols = 2 * n_cells + n_leaves
    # Split rows hold each leaf once per ancestor, or more when strengthened.
    nnz = 3 * n_cells + n_leaves + 2 * depth_sum + 2 * n_splits
    return _BYTES_PER_ENTRY * (rows + cols + nnz), rows, cols, nnz


def forest_program(
    forest: Forest, *, extra_cuts: tuple[int, ...] = (), memory_budget: float = 1e9
) -> ForestProgram:
    """Build (or fetch from the forest's cache) the program of ``forest``.

    Parameters
    ----------
    forest : Forest
    extra_cuts : tuple of int, default=()
        Features that get an additional cut at 0 (one-hot members).
    memory_budget : float, default=1e9
        Budget in bytes; a model whose program would need more is refused.

    Raises
    ------
    InputError
        If the program would exceed ``memory_budget``.
    """
    cache: dict[tuple[int, ...], ForestProgram] = derived(
        forest, "forest_programs", dict
    )
    key = tuple(sorted(extra_cuts))
    if key in cache:
        return cache[key]
    size, rows, cols, nnz = estimate_program_bytes(forest)
    if size > memory_budget:
        raise InputError(
            f"The optimization program of this model ({forest.n_trees} trees) would "
            f"have about {rows:,} constraints, {cols:,} variables and {nnz:,} "
            f"nonzeros, needing about {size / 1e6:,.0f} MB; expected at most "
            f"`memory_budget` = {memory_budget / 1e6:,.0f} MB. Use a smaller model or raise "
            "`memory_budget`."
        )
    program = _build(forest, key)
    cache[key] = program
    return program


def _build(forest: Forest, extra_cuts: tuple[int, ...]) -> ForestProgram:
    """The program of ``forest`` (see the module's docstring), in four steps: the
    cells, the cell range of every leaf box, the split rows, the matrix."""
    # Cells of float64 values: every value a user may give, not only the model's.
    forest = float64_forest(forest)
    flat = forest._flat
    grid = _cell_grid(forest, extra_cuts)
    boxes = leaf_boxes(forest)
    ranges = _leaf_ranges(boxes, grid)
    split_rows, split_cols = _split_rows(forest, grid, ranges)
    matrix, row_lower, row_upper = _assemble(
        forest, grid, boxes, split_rows, split_cols
    )
    leaf_global = flat["offsets"][boxes.tree] + boxes.node
    node_leaf = np.full(flat["left"].size, -1, dtype=np.intp)
    node_leaf[leaf_global] = np.arange(leaf_global.size)
    for array in (grid.cell_low, grid.cell_high, grid.cell_min, node_leaf):
        array.setflags(write=False)
    return ForestProgram(
        n_features=forest.n_features,
        cell_offsets=grid.cell_offsets,
        cell_feature=grid.cell_feature,
        cell_low=grid.cell_low,
        cell_high=grid.cell_high,
        cell_min=grid.cell_min,
        leaf_tree=boxes.tree,
        node_leaf=node_leaf,
        tree_leaf_offsets=boxes.tree_offsets,
        pair_leaf=ranges.leaf.astype(np.intp),
        pair_first=ranges.first.astype(np.intp),
        pair_last=ranges.last.astype(np.intp),
        split_tree=grid.split_tree,
        leaf_reachable=ranges.reachable,
        matrix=matrix,
        row_lower=row_lower,
        row_upper=row_upper,
        extra_cuts=extra_cuts,
    )


@dataclass(frozen=True)
class _CellGrid:
    """The cells of every feature and the threshold of every split node.

    Thresholds are the sorted distinct (feature, threshold) pairs of the splits
    (of a forest comparing float64 values uncast) and of the extra cuts, one block per feature;
    threshold ``i`` of feature ``j`` is the upper edge of cell ``i`` and the lower
    edge of cell ``i + 1`` of that feature.
    """

    thr_value: NDArray[np.float64]  # (n_thr,)
    thr_offsets: NDArray[np.intp]  # (n_features + 1,)
    n_thr_per: NDArray[np.intp]  # (n_features,)
    cell_offsets: NDArray[np.intp]  # (n_features + 1,)
    cell_feature: NDArray[np.intp]  # (n_cells,)
    thr_cell: NDArray[np.intp]  # (n_thr,) global index of the cell below it
    cell_low: NDArray[np.float64]  # (n_cells,)
    cell_high: NDArray[np.float64]
    cell_min: NDArray[np.float64]  # least float64 value in the cell
    split_node: NDArray[np.intp]  # global node id of every finite split
    split_feature: NDArray[np.intp]
    split_thr: NDArray[np.intp]  # global threshold index (v column) of each split
    split_tree: NDArray[np.intp]

    @property
    def n_thr(self) -> int:
        return int(self.thr_offsets[-1])

    @property
    def n_cells(self) -> int:
        return int(self.cell_offsets[-1])


def _cell_grid(forest: Forest, extra_cuts: tuple[int, ...]) -> _CellGrid:
    """The cells of ``forest``, a forest of float64 thresholds compared uncast."""
    n_features = forest.n_features
    flat = forest._flat
    # A split at an infinite threshold (missing-value-only splits) sends every
    # finite value one way: it adds no cell, and the other side is unreachable.
    split = ~flat["is_leaf"] & np.isfinite(flat["threshold"])
    split_feature = flat["feature"][split]
    split_threshold = flat["threshold"][split]
    cut_feature = np.concatenate([split_feature, np.asarray(extra_cuts, dtype=np.intp)])
    cut_value = np.concatenate([split_threshold, np.zeros(len(extra_cuts))])
    order = np.lexsort((cut_value, cut_feature))
    cut_feature, cut_value = cut_feature[order], cut_value[order]
    keep = np.ones(cut_feature.size, dtype=bool)
    keep[1:] = (cut_feature[1:] != cut_feature[:-1]) | (cut_value[1:] != cut_value[:-1])
    thr_feature, thr_value = cut_feature[keep], cut_value[keep]
    n_thr_per = np.bincount(thr_feature, minlength=n_features)
    thr_offsets = np.concatenate([[0], np.cumsum(n_thr_per)]).astype(np.intp)
    cell_offsets = (thr_offsets + np.arange(n_features + 1)).astype(np.intp)
    n_thr, n_cells = int(thr_offsets[-1]), int(cell_offsets[-1])
    thr_cell = np.arange(n_thr) + thr_feature
    cell_high = np.full(n_cells, np.inf)
    cell_high[thr_cell] = thr_value
    cell_low = np.full(n_cells, -np.inf)
    cell_low[thr_cell + 1] = thr_value
    cell_min = np.full(n_cells, -np.inf)
    cell_min[thr_cell + 1] = np.nextafter(thr_value, np.inf)
    split_thr = thr_offsets[split_feature] + _search_within(
        thr_value, thr_offsets, split_feature, split_threshold
    )
    n_nodes = flat["left"].size
    node_tree = np.repeat(
        np.arange(forest.n_trees), np.diff(np.append(flat["offsets"], n_nodes))
    )
    inner = np.flatnonzero(split)
    return _CellGrid(
        thr_value=thr_value,
        thr_offsets=thr_offsets,
        n_thr_per=n_thr_per,
        cell_offsets=cell_offsets,
        cell_feature=np.repeat(np.arange(n_features, dtype=np.intp), n_thr_per + 1),
        thr_cell=thr_cell,
        cell_low=cell_low,
        cell_high=cell_high,
        cell_min=cell_min,
        split_node=inner,
        split_feature=split_feature,
        split_thr=split_thr,
        split_tree=node_tree[inner],
    )


@dataclass(frozen=True)
class _LeafRanges:
    """The range of cells ``first..last`` each reachable leaf box covers on each
    feature it is bounded on, one entry per (leaf, feature) pair."""

    leaf: NDArray[np.intp]
    feature: NDArray[np.intp]
    first: NDArray[np.intp]
    last: NDArray[np.intp]
    reachable: NDArray[np.bool_]  # (n_leaves,)


def _leaf_ranges(boxes: LeafBoxes, grid: _CellGrid) -> _LeafRanges:
    reachable = ~((boxes.lower == np.inf) | (boxes.upper == -np.inf)).any(axis=1)
    bounded = (np.isfinite(boxes.lower) | np.isfinite(boxes.upper)) & reachable[:, None]
    leaf, feature = np.nonzero(bounded)
    lower = boxes.lower[leaf, feature]
    upper = boxes.upper[leaf, feature]
    first = np.where(
        np.isfinite(lower),
        _search_within(grid.thr_value, grid.thr_offsets, feature, lower) + 1,
        0,
    )
    last = np.where(
        np.isfinite(upper),
        _search_within(grid.thr_value, grid.thr_offsets, feature, upper),
        grid.n_thr_per[feature],
    )
    return _LeafRanges(
        leaf=leaf,
        feature=feature,
        first=grid.cell_offsets[feature] + first,
        last=grid.cell_offsets[feature] + last,
        reachable=reachable,
    )


def _split_rows(
    forest: Forest, grid: _CellGrid, ranges: _LeafRanges
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row (``2 s`` left, ``2 s + 1`` right, per split ``s``) and leaf of every ``y``
    entry of the split rows.

    At a split on (j, t) of tree T, every leaf of T whose box lies wholly at or
    below t on feature j (not only the leaves under the split) forces
    x'_j <= t, and every leaf wholly above forces x'_j > t: the strengthened rows
    give a much tighter relaxation than the subtree alone.
    """
    n_features = forest.n_features
    split_cell = grid.thr_cell[grid.split_thr]  # the cell just below each split
    leaf_tree = leaf_boxes(forest).tree
    pair_key = leaf_tree[ranges.leaf] * n_features + ranges.feature
    split_of, pair = _same_key_pairs(
        pair_key, grid.split_tree * n_features + grid.split_feature
    )
    left = ranges.last[pair] <= split_cell[split_of]
    right = ranges.first[pair] > split_cell[split_of]
    rows = np.concatenate([2 * split_of[left], 2 * split_of[right] + 1])
    cols = np.concatenate([ranges.leaf[pair[left]], ranges.leaf[pair[right]]])
    return rows, cols


def _assemble(
    forest: Forest,
    grid: _CellGrid,
    boxes: LeafBoxes,
    split_rows: NDArray[np.intp],
    split_cols: NDArray[np.intp],
) -> tuple[sp.csr_matrix, NDArray[np.float64], NDArray[np.float64]]:
    """The matrix ``[link | tree | split] x [z | v | y]`` and its row bounds."""
    n_cells, n_thr = grid.n_cells, grid.n_thr
    n_leaves, n_splits = boxes.tree.size, grid.split_node.size
    z0, v0, y0 = 0, n_cells, n_cells + n_thr
    r_tree, r_split = n_cells, n_cells + forest.n_trees
    # Link row c of feature j (local k): v_k - v_{k-1} - z_k = 0; the last one
    # v_{m-1} + z_m = 1.
    cells = np.arange(n_cells)
    local = cells - grid.cell_offsets[grid.cell_feature]
    is_last = local == grid.n_thr_per[grid.cell_feature]
    prev = local >= 1
    rows = [cells, cells[~is_last], cells[prev]]
    cols = [
        z0 + cells,
        v0 + grid.thr_offsets[grid.cell_feature[~is_last]] + local[~is_last],
        v0 + grid.thr_offsets[grid.cell_feature[prev]] + local[prev] - 1,
    ]
    vals = [
        np.where(is_last, 1.0, -1.0),
        np.ones(int((~is_last).sum())),
        np.where(is_last[prev], 1.0, -1.0),
    ]
    link_bound = np.where(is_last, 1.0, 0.0)
    # Tree rows: one leaf per tree.
    rows.append(r_tree + boxes.tree)
    cols.append(y0 + np.arange(n_leaves))
    vals.append(np.ones(n_leaves))
    # Split rows: the leaves on each side, and -v (left) / +v (right).
    rows += [
        r_split + split_rows,
        r_split + 2 * np.arange(n_splits),
        r_split + 2 * np.arange(n_splits) + 1,
    ]
    cols += [y0 + split_cols, v0 + grid.split_thr, v0 + grid.split_thr]
    vals += [np.ones(split_rows.size), -np.ones(n_splits), np.ones(n_splits)]
    matrix = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(r_split + 2 * n_splits, y0 + n_leaves),
    )
    row_lower = np.concatenate(
        [link_bound, np.ones(forest.n_trees), np.full(2 * n_splits, -np.inf)]
    )
    row_upper = np.concatenate(
        [link_bound, np.ones(forest.n_trees), np.tile([0.0, 1.0], n_splits)]
    )
    return matrix, row_lower, row_upper


def _search_within(
    values: NDArray[np.float64],
    offsets: NDArray[np.intp],
    feature: NDArray[np.intp],
    query: NDArray[np.float64],
) -> NDArray[np.intp]:
    """Index of ``query`` within its feature's block of sorted ``values``.

    Every query value is one of the block's values.
    """
    out = np.empty(query.size, dtype=np.intp)
    for j in np.unique(feature):  # one vectorized search per feature
        sel = feature == j
        out[sel] = np.searchsorted(values[offsets[j] : offsets[j + 1]], query[sel])
    return out


def _same_key_pairs(
    pair_key: NDArray[np.intp], query_key: NDArray[np.intp]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every (query, pair) with equal keys, as two index arrays."""
    order = np.argsort(pair_key, kind="stable")
    keys = pair_key[order]
    start = np.searchsorted(keys, query_key, side="left")
    count = np.searchsorted(keys, query_key, side="right") - start
    query = np.repeat(np.arange(query_key.size), count)
    within = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    return query, order[np.repeat(start, count) + within]
