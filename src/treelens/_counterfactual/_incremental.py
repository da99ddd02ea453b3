"""Predictions of candidates that differ from their row in a few features.

A candidate follows its row's path in a tree until a node of that path tests a
changed feature with a threshold between the old and the new value (after the
cast to ``input_dtype``): only then can its leaf differ.  :class:`IncrementalPredictor`
finds those (candidate, tree) pairs from the rows' paths, routes only them, and
adds the leaf value differences to the rows' own sums.  Predictions within a hair
of a decision boundary are recomputed with the :class:`Forest`'s own exact path,
so the answer is the model's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._core._cache import derived
from .._core._features import category_codes

if TYPE_CHECKING:
    from .._core._forest import Forest
    from ._candidates import Changes
    from ._targets import Target

__all__ = ["IncrementalPredictor", "Router"]

# Relative margin below which an incremental sum is not trusted to decide.
_TIE_TOLERANCE = 1e-9
# Largest (row, threshold code) lookup table, in cells (8 bytes each).
_TABLE_CELLS = 4_000_000


class Router:
    """Flat arrays to route (sample, tree) pairs; built once per forest and cached.

    Leaves loop onto themselves with threshold ``+inf``, so every pair takes
    ``max_depth`` steps without bookkeeping.
    """

    def __init__(self, forest: Forest) -> None:
        flat = forest._flat
        is_leaf = flat["is_leaf"]
        n = is_leaf.size
        own = np.arange(n, dtype=np.intp)
        self.is_leaf = is_leaf
        self.feature = np.where(is_leaf, 0, flat["feature"]).astype(np.intp)
        self.threshold = np.where(is_leaf, np.inf, flat["threshold"])
        child = np.empty(2 * n, dtype=np.intp)
        child[0::2] = np.where(is_leaf, own, flat["left"])
        child[1::2] = np.where(is_leaf, own, flat["right"])
        self.child = child
        self.depth = int(flat["max_depth"])
        self.offsets = flat["offsets"].astype(np.intp)
        sizes = np.diff(np.append(self.offsets, n))
        self.node_tree = np.repeat(np.arange(forest.n_trees, dtype=np.intp), sizes)
        # Every split threshold gets a code: its rank among the distinct thresholds
        # of its feature, offset per feature, so codes sort by (feature, threshold).
        inner = ~is_leaf
        self.thresholds: list[NDArray[np.float64]] = []
        code = np.full(n, -1, dtype=np.intp)
        start = 0
        self.code_offset = np.zeros(forest.n_features + 1, dtype=np.intp)
        for j in range(forest.n_features):
            nodes = np.flatnonzero(inner & (flat["feature"] == j))
            unique = np.unique(flat["threshold"][nodes])
            code[nodes] = start + np.searchsorted(unique, flat["threshold"][nodes])
            self.thresholds.append(unique)
            start += unique.size
            self.code_offset[j + 1] = start
        self.code = code
        self.n_codes = max(start, 1)
        self.categorical_feature = np.zeros(forest.n_features, dtype=bool)
        if "is_categorical" in flat:
            on = flat["feature"][inner & flat["is_categorical"]]
            self.categorical_feature[np.unique(on)] = True
        # Categorical nodes (see Forest._flat's routing tables): a value goes
        # right iff it is above split_threshold (NaN at categorical nodes) or
        # its category's entry at categorical_row + code is set.
        self.categorical: tuple[NDArray[Any], ...] | None = None
        self.split_threshold = self.threshold
        if "routing_codes" in flat:
            right = ~flat["routing_left"].reshape(-1, int(flat["routing_width"]))
            right[-1] = False  # the row of the numeric nodes
            self.split_threshold = np.where(is_leaf, np.inf, flat["routing_threshold"])
            self.categorical = (
                flat["routing_codes"],
                flat["routing_row"],
                right.ravel(),
            )

    @classmethod
    def of(cls, forest: Forest) -> Router:
        return derived(forest, "incremental_router", lambda: cls(forest))

    def route(
        self, X: NDArray[np.float64], sample: NDArray[np.intp], tree: NDArray[np.intp]
    ) -> NDArray[np.intp]:
        """Global leaf node reached by row ``sample[i]`` of ``X`` in tree ``tree[i]``.

        ``X`` holds values already cast to the input dtype (as float64).
        """
        flat_x, flat_code = X.ravel(), self._codes(X)
        base = sample * X.shape[1]
        node = self.offsets[tree]
        for _ in range(self.depth):
            at = base + self.feature.take(node)
            right = self._right(node, flat_x.take(at), flat_code, at)
            node = self.child.take(2 * node + right)
        return node

    def _codes(self, X: NDArray[np.float64]) -> NDArray[np.intp] | None:
        """The category code of every value of ``X`` (flat), if the forest has
        categorical splits."""
        if self.categorical is None:
            return None
        return category_codes(X, self.categorical[0]).ravel()

    def _right(
        self,
        node: NDArray[np.intp],
        value: NDArray[np.float64],
        flat_code: NDArray[np.intp] | None,
        at: NDArray[np.intp],
    ) -> Any:
        if self.categorical is None or flat_code is None:
            return value > self.threshold.take(node)
        _, row, right = self.categorical
        go_right = value > self.split_threshold.take(node)
        go_right |= right.take(row.take(node) + flat_code.take(at))
        return go_right

    def paths(
        self, X: NDArray[np.float64]
    ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Split nodes on the path of every row in every tree: ``(row, node)``."""
        n, n_trees = X.shape[0], self.offsets.size
        flat_x = X.ravel()
        sample = np.repeat(np.arange(n, dtype=np.intp), n_trees)
        base = sample * X.shape[1]
        node = np.tile(self.offsets, n)
        rows, nodes = [], []
        flat_code = self._codes(X)
        for _ in range(self.depth):
            inner = ~self.is_leaf.take(node)
            rows.append(sample[inner])
            nodes.append(node[inner])
            at = base + self.feature.take(node)
            right = self._right(node, flat_x.take(at), flat_code, at)
            node = self.child.take(2 * node + right)
        return np.concatenate(rows), np.concatenate(nodes)


class IncrementalPredictor:
    """Decides whether candidates of a block of rows meet the target.

    The target is written, per row, as ``Q`` margins that are sums over trees:
    ``S_c - S_k`` for each other class ``k`` (target class ``c``; all must be
    positive), ``S_k - S_c0`` (``"other"``, current class ``c0``; one must be
    non-negative), ``value - low`` and ``high - value`` (intervals), ``+-raw``
    (binary boosting).  For each batch of candidates: the (candidate, tree) pairs
    whose leaf may change (from the rows' paths); upper bounds on the margins from
    each such tree's best leaf, which discard candidates that cannot reach the
    target; exact routing of the remaining pairs only, the margins updated with the
    leaf value differences; and the Forest's own exact path for any margin within a
    hair of zero.

    Parameters
    ----------
    forest : Forest
    target : Target
    X : ndarray of shape (n_rows, n_features)
        The block's rows (float64, uncast).
    leaves : ndarray of shape (n_rows, n_trees)
        Leaf of each row in each tree (node ids within trees).
    current : ndarray of shape (n_rows,)
        The model's prediction for each row.
    """

    def __init__(
        self,
        forest: Forest,
        target: Target,
        X: NDArray[np.float64],
        leaves: NDArray[np.intp],
        current: NDArray[Any],
    ) -> None:
        self.forest = forest
        self.target = target
        self.current = current
        self.router = router = Router.of(forest)
        self.dtype = forest.input_dtype
        self.X_cast = X.astype(self.dtype).astype(np.float64)
        self.row_nodes = leaves + router.offsets[None, :]
        self.node_value, leaf_max, leaf_min, pair_max = _node_values(forest)
        old = self.node_value[self.row_nodes]  # (n_rows, n_trees, n_values)
        n_rows, n_trees = leaves.shape
        # "all": every margin must be positive; "any": one margin non-negative.
        self.any_mode = target.kind == "other" and forest.n_outputs > 1
        self.vector = forest.is_classifier and forest.kind != "boosting"
        if self.vector:
            base = old.sum(axis=1)
            first, second = self._class_pairs(n_rows)
            r = np.arange(n_rows)[:, None]
            self.first, self.second = first, second
            self.margin0 = base[r, first] - base[r, second]
            shape = (n_rows, n_trees, first.shape[1])
            a = np.broadcast_to(first[:, None, :], shape)
            b = np.broadcast_to(second[:, None, :], shape)
            old_diff = np.take_along_axis(old, a, axis=2) - np.take_along_axis(
                old, b, axis=2
            )
            best = pair_max[np.arange(n_trees)[None, :, None], a, b]
            self.gain = best - old_diff  # (n_rows, n_trees, Q)
            # Each node's margins, per kind of row (rows share their pairs of
            # classes when the target is a class; "other" depends on the row's class).
            self.node_margin, self.row_kind = self._node_margins(first, second)
            scale = np.abs(base).max(axis=1)
        else:
            coef, self.margin0 = self._scalar_margins(leaves, old[:, :, 0], n_rows)
            self.coef = coef  # (n_rows, n_trees, Q)
            rise = coef * (leaf_max[None, :, :1] - old[:, :, :1])
            fall = coef * (leaf_min[None, :, :1] - old[:, :, :1])
            self.gain = np.maximum(rise, fall)
            scale = np.abs(self.margin0).max(
                axis=1, initial=0.0, where=np.isfinite(self.margin0)
            )
        # Scores summed in float32 (XGBoost) round far more than float64 sums.
        self.tie = max(_TIE_TOLERANCE, 8 * float(np.finfo(forest.score_dtype).eps))
        self.tolerance = self.tie * (1.0 + n_trees + scale)
        rows, nodes = router.paths(self.X_cast)
        keys = rows * router.n_codes + router.code[nodes]
        order = np.argsort(keys, kind="stable")
        self.path_keys = keys[order]
        self.path_tree = router.node_tree[nodes[order]]
        # Where each (row, threshold code) starts among the sorted path nodes, as a
        # table when it is small: two lookups per change instead of two searches.
        self.code_table = None
        if n_rows * (router.n_codes + 1) <= _TABLE_CELLS:
            grid = np.arange(n_rows)[:, None] * router.n_codes + np.arange(
                router.n_codes + 1
            )
            self.code_table = np.searchsorted(self.path_keys, grid.ravel()).reshape(
                grid.shape
            )
        # Running sums of the gains of path nodes: a change's flipped nodes are a
        # contiguous run, so their total gain is a difference of two entries.
        path_gain = self.gain[rows[order], self.path_tree]
        self.gain_prefix = np.vstack(
            [np.zeros((1, path_gain.shape[1])), np.cumsum(path_gain, axis=0)]
        )

    def _node_margins(
        self, first: NDArray[np.intp], second: NDArray[np.intp]
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """Margins ``value[a] - value[b]`` of every node, per kind of row.

        Returns
        -------
        node_margin : ndarray of shape (n_kinds, n_nodes_total, Q)
        row_kind : ndarray of shape (n_rows,)
        """
        q = first.shape[1]
        kinds, row_kind = np.unique(
            np.hstack([first, second]), axis=0, return_inverse=True
        )
        value = self.node_value
        margin = (
            value[:, kinds[:, :q]] - value[:, kinds[:, q:]]
        )  # (n_nodes, n_kinds, Q)
        return np.ascontiguousarray(np.moveaxis(margin, 1, 0)), row_kind.ravel()

    def _class_pairs(self, n_rows: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Class indices (a, b) of each margin ``S_a - S_b``, shape (n_rows, Q)."""
        from ._targets import encode_classes

        n_classes = self.forest.n_classes
        if self.target.kind == "class":
            c = self.target.index
            others = np.array([k for k in range(n_classes) if k != c], dtype=np.intp)
            return np.full((n_rows, others.size), c, dtype=np.intp), np.tile(
                others, (n_rows, 1)
            )
        c0 = encode_classes(self.forest, self.current)
        everyone = np.arange(n_classes)
        others = np.array([everyone[everyone != c] for c in range(n_classes)])[c0]
        return others.astype(np.intp), np.repeat(c0[:, None], n_classes - 1, axis=1)

    def _scalar_margins(
        self, leaves: NDArray[np.intp], old: NDArray[np.float64], n_rows: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per (row, tree, margin) coefficient of a tree's value, and base margins."""
        forest, target = self.forest, self.target
        n_trees = forest.n_trees
        if not forest.is_classifier:
            if forest.kind == "boosting":
                value, step = (
                    forest._raw_from_leaves(leaves)[:, 0],
                    forest.learning_rate,
                )
            else:
                value, step = old.sum(axis=1) / n_trees, 1.0 / n_trees
            coef = np.empty((n_rows, n_trees, 2))
            coef[:, :, 0], coef[:, :, 1] = step, -step
            low, high = forest.raw_interval(target.low, target.high)
            with np.errstate(invalid="ignore"):
                base = np.column_stack([value - low, high - value])
            return coef, base
        raw = forest._raw_from_leaves(leaves)
        step = forest.learning_rate
        if raw.shape[1] == 1:
            from ._targets import encode_classes

            want = (
                np.full(n_rows, target.index)
                if target.kind == "class"
                else 1 - encode_classes(forest, self.current)
            )
            sign = np.where(want == 1, 1.0, -1.0)
            coef = np.broadcast_to(
                (step * sign)[:, None, None], (n_rows, n_trees, 1)
            ).copy()
            return coef, (sign * raw[:, 0])[:, None]
        first, second = self._class_pairs(n_rows)
        out = forest.tree_output[None, :, None]
        coef = step * (
            (out == first[:, None, :]).astype(float) - (out == second[:, None, :])
        )
        r = np.arange(n_rows)[:, None]
        return coef, raw[r, first] - raw[r, second]

    def flips(self, changes: Changes) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """For every change, the run ``[start, stop)`` of path nodes it flips.

        The nodes are those of the change's row's paths, sorted by feature and
        threshold; the run holds the nodes testing the changed feature with a
        threshold between the old and the new value (after the cast).
        """
        router = self.router
        feature = changes.feature
        row = changes.row[changes.owner]
        old = self.X_cast[row, feature]
        new = changes.value.astype(self.dtype).astype(np.float64)
        low, high = np.minimum(old, new), np.maximum(old, new)
        code_lo = np.empty(feature.size, dtype=np.intp)
        code_hi = np.empty(feature.size, dtype=np.intp)
        by_feature = np.argsort(feature, kind="stable")
        bounds = np.searchsorted(
            feature[by_feature], np.arange(self.X_cast.shape[1] + 1)
        )
        for j in np.flatnonzero(np.diff(bounds)):
            at = by_feature[bounds[j] : bounds[j + 1]]
            thresholds, offset = router.thresholds[j], router.code_offset[j]
            # A node flips when low <= threshold < high.
            if router.categorical_feature[j]:
                # Any change of category may flip every node on the feature.
                code_lo[at], code_hi[at] = offset, router.code_offset[j + 1]
                continue
            code_lo[at] = offset + np.searchsorted(thresholds, low[at], side="left")
            code_hi[at] = offset + np.searchsorted(thresholds, high[at], side="left")
        if self.code_table is not None:
            return self.code_table[row, code_lo], self.code_table[row, code_hi]
        key = row * router.n_codes
        return (
            np.searchsorted(self.path_keys, key + code_lo),
            np.searchsorted(self.path_keys, key + code_hi),
        )

    def _affected(
        self,
        k: int,
        owner: NDArray[np.intp],
        start: NDArray[np.intp],
        stop: NDArray[np.intp],
    ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """(candidate, tree) pairs whose leaf may differ from the row's: sorted, unique."""
        counts = stop - start
        total = int(counts.sum())
        offsets = np.cumsum(counts) - counts
        index = np.repeat(start - offsets, counts) + np.arange(total)
        mark = np.zeros((k, self.forest.n_trees), dtype=bool)
        mark[np.repeat(owner, counts), self.path_tree[index]] = True
        rows, trees = np.nonzero(mark)
        return rows.astype(np.intp), trees.astype(np.intp)

    def _hopeless(
        self, bound: NDArray[np.float64], tolerance: NDArray[np.float64]
    ) -> NDArray[np.bool_]:
        below = bound < -tolerance[:, None]
        out = below.all(axis=1) if self.any_mode else below.any(axis=1)
        return np.asarray(out, dtype=bool)

    def _margins(
        self,
        k: int,
        cand: NDArray[np.intp],
        terms: NDArray[np.float64],
        row: NDArray[np.intp],
    ) -> NDArray[np.float64]:
        """Base margins of each candidate's row plus its pairs' ``terms`` (pairs, Q)."""
        out = self.margin0[row].copy()
        for q in range(out.shape[1]):
            out[:, q] += np.bincount(cand, weights=terms[:, q], minlength=k)
        return out

    def hopeless(
        self,
        changes: Changes,
        flips: tuple[NDArray[np.intp], NDArray[np.intp]] | None = None,
    ) -> NDArray[np.bool_]:
        """Candidates a loose bound proves invalid, shape (k,).

        The bound lets every tree whose path a change flips reach its best leaf,
        counting a tree flipped twice twice; gains are non-negative, so it stays
        an upper bound on every margin.
        """
        k = changes.n_candidates
        row = changes.row
        start, stop = self.flips(changes) if flips is None else flips
        loose = self.margin0[row].copy()
        run_gain = self.gain_prefix[stop] - self.gain_prefix[start]
        owner = changes.owner
        for q in range(loose.shape[1]):
            loose[:, q] += np.bincount(owner, weights=run_gain[:, q], minlength=k)
        # Running sums round; widen the margin by their size.
        slack = self.tolerance[row] + self.tie * np.abs(self.gain_prefix[-1]).max(
            initial=0.0
        )
        return self._hopeless(loose, slack)

    def valid(
        self,
        changes: Changes,
        flips: tuple[NDArray[np.intp], NDArray[np.intp]] | None = None,
    ) -> NDArray[np.bool_]:
        """Whether the model assigns each candidate to the target, shape (k,).

        ``flips`` may give :meth:`flips` of ``changes`` computed beforehand.
        """
        forest = self.forest
        k = changes.n_candidates
        row = changes.row
        tolerance = self.tolerance[row]
        owner = changes.owner
        start, stop = self.flips(changes) if flips is None else flips
        ok = np.zeros(k, dtype=bool)
        keep = ~self.hopeless(changes, (start, stop))
        if not keep.any():
            return ok
        # The (candidate, tree) pairs of the candidates still in the running.
        alive = np.flatnonzero(keep)
        local = np.cumsum(keep) - 1
        entry_keep = keep[owner]
        cand, tree = self._affected(
            alive.size, local[owner[entry_keep]], start[entry_keep], stop[entry_keep]
        )
        cand = alive[cand]
        pair_row = row[cand]
        n_trees = forest.n_trees
        cell = pair_row * n_trees + tree  # (row, tree) cell of each pair
        q = self.margin0.shape[1]
        best = self._margins(k, cand, self.gain.reshape(-1, q).take(cell, axis=0), row)
        keep &= ~self._hopeless(best, tolerance)
        if not keep.any():
            return ok
        keep_pair = keep[cand]
        cand, tree, pair_row = cand[keep_pair], tree[keep_pair], pair_row[keep_pair]
        # Whole rows (cast) of the candidates left, to route their pairs exactly.
        left = np.flatnonzero(keep)
        position = np.cumsum(keep) - 1
        survivors = changes.take(left)
        dense = survivors.dense(self.X_cast)
        dense[survivors.owner, survivors.feature] = survivors.value.astype(
            self.dtype
        ).astype(np.float64)
        new = self.router.route(dense, position[cand], tree)
        cell = pair_row * n_trees + tree
        old = self.row_nodes.ravel().take(cell)
        if self.vector:
            kind = self.row_kind[pair_row]
            margin = self.node_margin.reshape(-1, q)
            base = kind * self.node_margin.shape[1]
            terms = margin.take(base + new, axis=0) - margin.take(base + old, axis=0)
        else:
            step = self.node_value[new, 0] - self.node_value[old, 0]
            terms = self.coef.reshape(-1, q).take(cell, axis=0) * step[:, None]
        margins = self._margins(k, cand, terms, row)
        above = margins > tolerance[:, None]
        below = margins < -tolerance[:, None]
        if self.any_mode:
            sure, refuted = above.any(axis=1), below.all(axis=1)
        else:
            sure, refuted = above.all(axis=1), below.any(axis=1)
        ok = keep & sure
        unsure = keep & ~sure & ~refuted
        if unsure.any():
            exact = forest._apply(dense[position[unsure]].astype(self.dtype))
            predicted = forest._predict_from_leaves(exact)
            ok[unsure] = self.target.meets(predicted, self.current[row[unsure]])
        return ok


def _node_values(
    forest: Forest,
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    """Cached per forest: values of all nodes (n_nodes_total, n_values); per tree the
    largest and smallest leaf value (n_trees, n_values) and, for averaging
    classifiers, the largest ``value[a] - value[b]`` over leaves (n_trees, C, C)."""
    return derived(forest, "node_values", lambda: _build_node_values(forest))


def _build_node_values(
    forest: Forest,
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]:
    from .._core._boxes import leaf_boxes

    boxes = leaf_boxes(forest)
    starts = boxes.tree_offsets[:-1]
    value = boxes.value
    pair_max = np.zeros((forest.n_trees, 1, 1))
    if forest.is_classifier and forest.kind != "boosting":
        pair_max = np.maximum.reduceat(
            value[:, :, None] - value[:, None, :], starts, axis=0
        )
    return (
        forest._flat_values,
        np.maximum.reduceat(value, starts, axis=0),
        np.minimum.reduceat(value, starts, axis=0),
        pair_max,
    )
