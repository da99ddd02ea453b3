"""Geometry of the partitions trees cut in two chosen features.

Pure functions on :class:`~treelens.Forest` arrays; nothing here draws or imports
matplotlib.  A *slice* is the plane of two features ``(f0, f1)`` with every other
feature held at a reference row: a node of a tree is *reachable* in the slice when
the reference row takes its side at every ancestor splitting on another feature.
The reachable leaves tile the plane, each over a rectangle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core._forest import Forest, Tree
from .._core._validation import feature_index
from .._exceptions import InputError

__all__ = [
    "Partition",
    "SliceLeaves",
    "SliceNodes",
    "cell_points",
    "missing_rows",
    "partition_rectangles",
    "plot_window",
    "points_to_draw",
    "raster_leaves",
    "region_nodes",
    "report_missing",
    "resolve_features",
    "resolve_reference",
    "resolve_tree_index",
    "resolve_window",
    "slice_leaves",
    "slice_nodes",
    "split_thresholds",
    "step_function",
]


@dataclass(frozen=True, eq=False)
class SliceNodes:
    """Every node of one tree seen in the slice of two features.

    Attributes
    ----------
    reachable : ndarray of shape (n_nodes,), dtype bool
        Whether the reference row reaches the node through its splits on the
        other features.
    lower : ndarray of shape (n_nodes, 2)
        Exclusive lower bounds of the node's box in ``f0`` and ``f1``.
    upper : ndarray of shape (n_nodes, 2)
        Inclusive upper bounds of the node's box in ``f0`` and ``f1``.
    depth : ndarray of shape (n_nodes,)
        Depth of every node.
    """

    reachable: NDArray[np.bool_]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    depth: NDArray[np.intp]


@dataclass(frozen=True, eq=False)
class Partition:
    """Rectangles of one tree's partition in a slice, clipped to a window.

    Attributes
    ----------
    rectangles : ndarray of shape (n_regions, 4)
        ``x_min, x_max, y_min, y_max`` of every region.
    nodes : ndarray of shape (n_regions,)
        Node id of the tree node each region belongs to (a leaf, or a node at the
        depth cut).
    values : ndarray of shape (n_regions, n_values)
        The node's value (class fractions or mean / raw value).
    """

    rectangles: NDArray[np.float64]
    nodes: NDArray[np.intp]
    values: NDArray[np.float64]


# ----------------------------------------------------------------- arguments
def resolve_features(
    forest_or_names: Forest | tuple[str, ...], features: Any
) -> tuple[int, int]:
    """Indices of two distinct features given by name or position.

    Raises
    ------
    InputError
        If ``features`` is not a pair, names an unknown feature, repeats one, or
        the model has a single feature.
    """
    names = (
        forest_or_names.feature_names
        if isinstance(forest_or_names, Forest)
        else tuple(forest_or_names)
    )
    if len(names) < 2:
        raise InputError(
            "A picture in two features needs a model with at least two features; "
            f"got a model with {len(names)} feature ({list(names)})."
        )
    if (
        isinstance(features, (str, bytes))
        or np.ndim(features) != 1
        or len(features) != 2
    ):
        raise InputError(
            f"`features` must be a pair of feature names or positions; got {features!r}."
        )
    index = tuple(_feature_position(names, f) for f in features)
    if index[0] == index[1]:
        raise InputError(
            "`features` must name two different features; got "
            f"{names[index[0]]!r} twice ({features!r})."
        )
    return int(index[0]), int(index[1])


def _feature_position(names: tuple[str, ...], feature: Any) -> int:
    stub = _NamesOnly(names)
    return feature_index(stub, feature)  # type: ignore[arg-type]


class _NamesOnly:
    # feature_index reads only these two attributes.
    def __init__(self, names: tuple[str, ...]) -> None:
        self.feature_names = tuple(names)
        self.n_features = len(names)


def resolve_tree_index(forest: Forest, tree_index: int | None) -> int:
    """The tree to draw: ``tree_index``, or 0 for a single tree.

    Raises
    ------
    InputError
        If ``tree_index`` is out of range or missing for an ensemble.
    """
    if tree_index is None:
        if forest.n_trees != 1:
            raise InputError(
                f"This model has {forest.n_trees} trees; expected `tree_index` "
                f"in [0, {forest.n_trees - 1}] saying which one to draw, got None."
            )
        return 0
    if isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer)):
        raise InputError(f"`tree_index` must be an integer; got {tree_index!r}.")
    if not 0 <= int(tree_index) < forest.n_trees:
        raise InputError(
            f"`tree_index` must be in [0, {forest.n_trees - 1}] for this model of "
            f"{forest.n_trees} trees; got {tree_index}."
        )
    return int(tree_index)


def _left_of(
    x: NDArray[Any], threshold: NDArray[Any], missing_go_left: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """Whether values ``x`` go left at numeric nodes: ``x <= threshold``, and a
    missing value (NaN) where the node sends missing values."""
    return np.where(np.isnan(x), missing_go_left, x <= threshold)


def _categorical_left(
    tree: Tree,
    inner: NDArray[np.intp],
    plotted: NDArray[np.bool_],
    ref: NDArray[Any],
    other_left: NDArray[np.bool_],
    n_categories: NDArray[np.intp] | None,
) -> NDArray[np.bool_]:
    """Where the reference goes at categorical nodes; refuses a plotted one."""
    from .._core._features import category_codes

    categorical = tree.is_categorical[inner]
    if not categorical.any():
        return other_left
    if (categorical & plotted).any() or n_categories is None:
        j = int(tree.feature[inner][categorical][0])
        raise InputError(
            f"Feature {j} is categorical; this picture draws numeric axes only. "
            "Expected numeric features, got a categorical one: draw it with "
            "DecisionRegionDisplay (a classifier) or PredictionSurfaceDisplay (a "
            "regressor), which show categories as bands."
        )
    nodes = inner[categorical]
    x = ref[tree.feature[nodes]].astype(np.float64)
    code = category_codes(x, n_categories[tree.feature[nodes]])
    out = other_left.copy()
    out[categorical] = np.where(
        np.isnan(x), tree.missing_go_left[nodes], tree.categorical_left[nodes, code]
    )
    return out


def resolve_reference(
    X: NDArray[np.float64] | None,
    reference: Any,
    n_features: int,
    n_categories: NDArray[np.intp] | None = None,
    feature_names: tuple[str, ...] | None = None,
) -> NDArray[np.float64]:
    """The reference row: ``reference`` if given, else the median of ``X`` (for
    categorical features, given their numbers of categories in
    ``n_categories``, the most frequent category).

    The median of each feature is taken over the rows where it has a value
    (missing values, NaN, are left out).  ``feature_names`` name a feature with
    no value at all in the error.  A given ``reference`` may miss values (NaN):
    the trees route them as they route a missing value (a row with a missing
    value, drawn through its own slice).

    Returns
    -------
    reference : ndarray of shape (n_features,), dtype float64
    """
    if reference is None:
        if X is None or X.shape[0] == 0:
            raise InputError(
                "A reference row is needed to hold the other features; expected "
                "`reference` or non-empty X, got neither."
            )
        values = np.asarray(X, dtype=np.float64)
        empty = np.flatnonzero(np.isnan(values).all(axis=0))
        if empty.size:
            which = (
                repr(feature_names[int(empty[0])])
                if feature_names is not None
                else str(int(empty[0]))
            )
            raise InputError(
                f"Feature {which} has no value in any row of X, so it has "
                "no median to hold it at; expected `reference` with a value for it."
            )
        out = np.nanmedian(values, axis=0)
        for j in np.flatnonzero(n_categories if n_categories is not None else []):
            codes = values[:, j][np.isfinite(values[:, j])]
            codes = codes[(codes >= 0) & (codes < n_categories[j])]  # type: ignore[index]
            if codes.size:
                out[j] = float(np.bincount(codes.astype(np.intp)).argmax())
        return out
    ref = np.asarray(reference, dtype=np.float64).reshape(-1)
    if ref.shape[0] != n_features or np.isinf(ref).any():
        raise InputError(
            f"`reference` must be one row of {n_features} features, each a finite "
            f"value or missing (NaN); got {ref.shape[0]} values"
            f"{' with an infinite one' if np.isinf(ref).any() else ''}."
        )
    return ref


def missing_rows(X: NDArray[Any], features: tuple[int, ...]) -> NDArray[np.intp]:
    """Positions of the rows of ``X`` missing a value (NaN) of one of ``features``."""
    cols = np.asarray(X, dtype=np.float64)[:, list(features)]
    return np.flatnonzero(np.isnan(cols).any(axis=1))


def report_missing(
    skipped: NDArray[np.intp],
    n_rows: int,
    names: tuple[str, ...],
) -> None:
    """Warn that ``skipped`` rows (of ``n_rows``) are not drawn for missing values.

    The warning names the user's line that led here.
    """
    if skipped.size:
        from .._exceptions import MissingValuesWarning, warn

        warn(
            f"{skipped.size} of {n_rows} rows have no value of "
            f"{' or '.join(repr(n) for n in names)} and are not drawn "
            f"(the first is row {int(skipped[0])}).",
            MissingValuesWarning,
        )


def points_to_draw(
    X: NDArray[Any] | None,
    features: tuple[int, int],
    feature_names: tuple[str, str],
    *,
    show: bool,
) -> tuple[NDArray[np.intp] | None, NDArray[Any] | None]:
    """The rows of ``X`` missing a value of ``features``, and the points drawn.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or None
    features : (int, int)
        The two features drawn.
    feature_names : (str, str)
        Their names, for the warning.
    show : bool
        Whether the points are drawn; when they are, a
        :class:`~treelens.MissingValuesWarning` counts the rows missing a value
        (it names the user's line that drew).

    Returns
    -------
    skipped : ndarray of int or None
        Rows missing a value of one of the features (None without ``X``).
    points : ndarray of shape (n_samples, 2) or None
        ``X`` in the two features, when drawn.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0, 2.0], [np.nan, 1.0, 2.0]])
    >>> skipped, points = points_to_draw(X, (0, 2), ("a", "c"), show=False)
    >>> skipped.tolist(), points
    ([1], None)
    """
    if X is None:
        return None, None
    skipped = missing_rows(X, features)
    if not show:
        return skipped, None
    # Name only the features whose values are missing, not both drawn.
    cols = np.asarray(X[skipped][:, list(features)], dtype=np.float64)
    gone = np.asarray(np.isnan(cols).any(axis=0), dtype=bool)
    names = tuple(name for name, g in zip(feature_names, gone) if g)
    report_missing(skipped, X.shape[0], names)
    return skipped, X[:, list(features)]


def plot_window(
    X: NDArray[Any], features: tuple[int, ...], *, margin: float = 0.05
) -> NDArray[np.float64]:
    """Plotting window around the data in the chosen features.

    Rows missing a value of one of the features (NaN) are left out.

    Returns
    -------
    window : ndarray of shape (len(features), 2)
        ``[min, max]`` per feature, widened by ``margin`` of the range (by 0.5 when
        the feature is constant).

    Raises
    ------
    InputError
        If no row has a value of every feature.
    """
    cols = np.asarray(X, dtype=np.float64)[:, list(features)]
    cols = cols[~np.isnan(cols).any(axis=1)]
    if cols.shape[0] == 0:
        raise InputError(
            f"No row of X has values of all the features {list(features)} drawn; "
            "expected at least one row without missing values in them."
        )
    low, high = cols.min(axis=0), cols.max(axis=0)
    pad = np.where(high > low, (high - low) * margin, 0.5)
    return np.column_stack([low - pad, high + pad])


def resolve_window(
    X: NDArray[Any] | None,
    features: tuple[int, ...],
    window: Any = None,
    *,
    margin: float = 0.05,
) -> NDArray[np.float64]:
    """The window drawn: ``window`` when given, else :func:`plot_window` of X.

    Parameters
    ----------
    window : pair of (low, high) per feature, optional
        ``((x0, x1), (y0, y1))`` for two features, ``(x0, x1)`` for one.

    Returns
    -------
    window : ndarray of shape (len(features), 2)

    Raises
    ------
    InputError
        If the window is not one finite increasing range per feature.
    """
    if window is None:
        if X is None or len(X) == 0:
            raise InputError(
                "The picture needs a window; expected `window` or non-empty X, got "
                "neither."
            )
        return plot_window(X, features, margin=margin)
    shape = (len(features), 2)
    try:
        out = np.asarray(window, dtype=np.float64).reshape(shape)
    except (TypeError, ValueError) as exc:
        expected = "((x0, x1), (y0, y1))" if len(features) == 2 else "(x0, x1)"
        raise InputError(
            f"`window` must be {expected}, one (low, high) range per plotted "
            f"feature; got {window!r}."
        ) from exc
    if not np.isfinite(out).all() or not (out[:, 0] < out[:, 1]).all():
        raise InputError(
            f"`window` must hold finite ranges with low < high; got {out.tolist()}."
        )
    return out


# ----------------------------------------------------------------- geometry
def slice_nodes(
    tree: Tree,
    features: tuple[int, ...],
    reference: NDArray[Any],
    dtype: Any,
    n_categories: NDArray[np.intp] | None = None,
) -> SliceNodes:
    """Reachability and boxes of every node of ``tree`` in the slice of ``features``.

    Parameters
    ----------
    tree : Tree
    features : tuple of int
        One or two plotted features.
    reference : ndarray of shape (n_features,)
        Values of the other features; cast to ``dtype`` before comparing with
        thresholds, as prediction does.
    dtype : numpy dtype
        The forest's ``input_dtype``.
    n_categories : ndarray of shape (n_features,), optional
        The forest's ``n_categories``: categorical nodes on the other features
        route the reference's category; a plotted feature may not be
        categorical (see :class:`~treelens.DecisionRegionDisplay`, which draws
        categories as bands).

    Returns
    -------
    SliceNodes
    """
    n_nodes, k = tree.n_nodes, len(features)
    ref = np.asarray(reference).astype(dtype)
    reachable = np.zeros(n_nodes, dtype=bool)
    lower = np.full((n_nodes, k), -np.inf)
    upper = np.full((n_nodes, k), np.inf)
    column = np.full(ref.shape[0], -1, dtype=np.intp)
    column[list(features)] = np.arange(k)
    reachable[0] = True
    frontier = np.array([0], dtype=np.intp)
    # One vectorized step per depth level over the reachable nodes only.
    while frontier.size:
        inner = frontier[~tree.is_leaf[frontier]]
        if not inner.size:
            break
        left, right = tree.children_left[inner], tree.children_right[inner]
        feat, thr = tree.feature[inner], tree.threshold[inner]
        col = column[feat]
        plotted = col >= 0
        other_left = _left_of(
            ref[np.where(plotted, 0, feat)], thr, tree.missing_go_left[inner]
        )
        if tree.has_categorical:
            other_left = _categorical_left(
                tree, inner, plotted, ref, other_left, n_categories
            )
        lower[left], upper[left] = lower[inner], upper[inner]
        lower[right], upper[right] = lower[inner], upper[inner]
        p = np.flatnonzero(plotted)
        upper[left[p], col[p]] = np.minimum(upper[left[p], col[p]], thr[p])
        lower[right[p], col[p]] = np.maximum(lower[right[p], col[p]], thr[p])
        reachable[left] = plotted | other_left
        reachable[right] = plotted | ~other_left
        children = np.concatenate([left, right])
        frontier = children[reachable[children]]
    return SliceNodes(
        reachable=reachable, lower=lower, upper=upper, depth=np.asarray(tree.node_depth)
    )


def region_nodes(
    tree: Tree, nodes: SliceNodes, max_depth: int | None
) -> NDArray[np.intp]:
    """Nodes drawn as regions: reachable leaves, or with ``max_depth`` the
    reachable nodes at that depth and the reachable leaves above it."""
    frontier = tree.is_leaf.copy()
    if max_depth is not None:
        frontier = (frontier & (nodes.depth <= max_depth)) | (nodes.depth == max_depth)
    return np.flatnonzero(frontier & nodes.reachable)


def partition_rectangles(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[Any],
    window: NDArray[np.float64],
    *,
    tree_index: int = 0,
    max_depth: int | None = None,
) -> Partition:
    """The exact rectangles one tree cuts in two features, clipped to a window.

    Parameters
    ----------
    forest : Forest
    features : (int, int)
        Plotted features ``f0`` (x axis) and ``f1`` (y axis).
    reference : ndarray of shape (n_features,)
        Values of the other features.
    window : ndarray of shape (2, 2)
        ``[[x_min, x_max], [y_min, y_max]]``.
    tree_index : int, default=0
    max_depth : int, optional
        Cut the tree at this depth: a node at that depth is one region.

    Returns
    -------
    Partition
        Regions in the order of their node ids; they tile the window without
        overlap.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from treelens import to_forest
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> forest = to_forest(DecisionTreeClassifier().fit(X, [0, 1, 1, 1]))
    >>> part = partition_rectangles(forest, (0, 1), X[0], np.array([[-1, 2], [-1, 2]]))
    >>> part.rectangles.shape
    (3, 4)
    """
    tree = forest.trees[tree_index]
    nodes = slice_nodes(
        tree, features, reference, forest.input_dtype, forest.n_categories
    )
    ids = region_nodes(tree, nodes, max_depth)
    x0 = np.maximum(nodes.lower[ids, 0], window[0, 0])
    x1 = np.minimum(nodes.upper[ids, 0], window[0, 1])
    y0 = np.maximum(nodes.lower[ids, 1], window[1, 0])
    y1 = np.minimum(nodes.upper[ids, 1], window[1, 1])
    keep = (x0 < x1) & (y0 < y1)
    rects = np.column_stack([x0, x1, y0, y1])[keep]
    ids = ids[keep]
    return Partition(rectangles=rects, nodes=ids, values=tree.value[ids])


def split_thresholds(
    forest: Forest,
    features: tuple[int, ...],
    reference: NDArray[Any],
    window: NDArray[np.float64],
    *,
    trees: range | list[int] | None = None,
) -> list[NDArray[np.float64]]:
    """Sorted distinct thresholds of reachable splits on each plotted feature,
    strictly inside the window, over the chosen trees (default all)."""
    found: list[list[NDArray[np.float64]]] = [[] for _ in features]
    for t in range(forest.n_trees) if trees is None else trees:
        tree = forest.trees[t]
        nodes = slice_nodes(
            tree, features, reference, forest.input_dtype, forest.n_categories
        )
        split = nodes.reachable & ~tree.is_leaf
        for k, f in enumerate(features):
            thr = tree.threshold[split & (tree.feature == f)]
            found[k].append(thr[(thr > window[k, 0]) & (thr < window[k, 1])])
    return [
        np.unique(np.concatenate(parts)) if parts else np.empty(0) for parts in found
    ]


def cell_points(edges: NDArray[np.float64], dtype: Any) -> NDArray[np.float64]:
    """One point strictly inside every cell ``(edges[i], edges[i + 1]]`` that
    stays inside once cast to ``dtype``, so routing it is routing the whole cell.

    Returns
    -------
    points : ndarray of shape (len(edges) - 1,), dtype float64
    """
    lo, hi = edges[:-1], edges[1:]
    mid = ((lo + hi) / 2).astype(dtype)
    # A midpoint may round outside a cell narrower than the dtype's spacing; then
    # take the largest value of the dtype not above the upper edge.
    bad = ~((mid > lo) & (mid <= hi))
    if bad.any():
        top = hi[bad].astype(dtype)
        top = np.where(top > hi[bad], np.nextafter(top, np.array(-np.inf, dtype)), top)
        mid[bad] = top
    return mid.astype(np.float64)


def step_function(
    forest: Forest,
    feature: int,
    reference: NDArray[Any],
    window: NDArray[np.float64],
    *,
    tree_index: int = 0,
    max_depth: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The step function one tree draws along one feature, cut at a depth.

    Returns
    -------
    edges : ndarray of shape (n_steps + 1,)
        Increasing step boundaries, from ``window[0]`` to ``window[1]``.
    values : ndarray of shape (n_steps,)
        The value of the node (first column of ``Tree.value``) on each step: a
        node at ``max_depth`` predicts its mean.
    """
    tree = forest.trees[tree_index]
    nodes = slice_nodes(
        tree, (feature,), reference, forest.input_dtype, forest.n_categories
    )
    ids = region_nodes(tree, nodes, max_depth)
    lo = np.maximum(nodes.lower[ids, 0], window[0])
    hi = np.minimum(nodes.upper[ids, 0], window[1])
    keep = lo < hi
    ids, lo, hi = ids[keep], lo[keep], hi[keep]
    order = np.argsort(lo)
    edges = np.concatenate([lo[order], hi[order][-1:]])
    return edges, tree.value[ids[order], 0]


# ------------------------------------------------------- all trees at once
def _flat_nodes(forest: Forest) -> dict[str, NDArray[Any]]:
    """Every tree's nodes in one array with global child ids (the Forest's own)."""
    return forest._flat


@dataclass(frozen=True, eq=False)
class SliceLeaves:
    """The reachable leaves of every tree in a slice, with their boxes.

    Attributes
    ----------
    tree : ndarray of shape (n,)
        Tree of each leaf.
    node : ndarray of shape (n,)
        Node id of each leaf within its tree.
    lower, upper : ndarray of shape (n, 2)
        Exclusive lower and inclusive upper bounds in ``f0`` and ``f1``.
    """

    tree: NDArray[np.intp]
    node: NDArray[np.intp]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]


def slice_leaves(
    forest: Forest, features: tuple[int, int], reference: NDArray[Any]
) -> SliceLeaves:
    """Reachable leaves of all trees in the slice of ``features`` through ``reference``.

    One vectorized step per depth level over all trees together; for every tree
    the leaves returned tile the plane of the two features.
    """
    flat = _flat_nodes(forest)
    ref = np.asarray(reference).astype(forest.input_dtype)
    column = np.full(ref.shape[0], -1, dtype=np.intp)
    column[list(features)] = [0, 1]
    n_total = flat["left"].shape[0]
    lower = np.full((n_total, 2), -np.inf)
    upper = np.full((n_total, 2), np.inf)
    frontier = flat["offsets"].copy()
    found = []
    while frontier.size:
        leaf = flat["is_leaf"][frontier]
        found.append(frontier[leaf])
        inner = frontier[~leaf]
        if not inner.size:
            break
        left, right = flat["left"][inner], flat["right"][inner]
        feat, thr = flat["feature"][inner], flat["threshold"][inner]
        col = column[feat]
        plotted = col >= 0
        lower[left], upper[left] = lower[inner], upper[inner]
        lower[right], upper[right] = lower[inner], upper[inner]
        p = np.flatnonzero(plotted)
        upper[left[p], col[p]] = np.minimum(upper[left[p], col[p]], thr[p])
        lower[right[p], col[p]] = np.maximum(lower[right[p], col[p]], thr[p])
        # A split on another feature sends the reference one way only.
        goes_left = _left_of(
            ref[np.where(plotted, 0, feat)], thr, flat["missing_go_left"][inner]
        )
        if "is_categorical" in flat:
            goes_left = _flat_categorical_left(flat, inner, plotted, ref, goes_left)
        frontier = np.concatenate(
            [left[plotted | goes_left], right[plotted | ~goes_left]]
        )
    ids = np.concatenate(found) if found else np.empty(0, np.intp)
    tree = np.searchsorted(flat["offsets"], ids, side="right") - 1
    return SliceLeaves(
        tree=tree, node=ids - flat["offsets"][tree], lower=lower[ids], upper=upper[ids]
    )


def _flat_categorical_left(
    flat: dict[str, NDArray[Any]],
    inner: NDArray[np.intp],
    plotted: NDArray[np.bool_],
    ref: NDArray[Any],
    goes_left: NDArray[np.bool_],
) -> NDArray[np.bool_]:
    """Where the reference goes at the categorical nodes of other features than
    the plotted ones: by the node's category set, as the forest routes it
    (``_categorical_left`` for the nodes of one tree)."""
    from .._core._features import category_codes

    categorical = flat["is_categorical"][inner] & ~plotted
    if not categorical.any():
        return goes_left
    nodes = inner[categorical]
    x = ref[flat["feature"][nodes]].astype(np.float64)
    code = category_codes(x, flat["k"][nodes])
    out = goes_left.copy()
    out[categorical] = np.where(
        np.isnan(x),
        flat["missing_go_left"][nodes],
        flat["categorical_left"][nodes, code],
    )
    return out


# Trees times grid cells rasterized at once; bounds the integer buffer.
_RASTER_CELLS = 4_000_000


def raster_leaves(
    forest: Forest,
    features: tuple[int, int],
    reference: NDArray[Any],
    xs: NDArray[np.float64],
    ys: NDArray[np.float64],
) -> NDArray[np.intp]:
    """Leaf of every tree at every point of a grid, without routing any point.

    Each reachable leaf covers a block of grid indices (its box, found by binary
    search on the sorted grid coordinates after the ``input_dtype`` cast); the
    blocks of one tree tile the grid, so summing their node ids with a 2-D
    difference array and cumulative sums gives each point's leaf exactly.

    Parameters
    ----------
    xs : ndarray of shape (n_x,), increasing
    ys : ndarray of shape (n_y,), increasing

    Returns
    -------
    leaves : ndarray of shape (n_y * n_x, n_trees)
        Node id of the leaf reached, rows row-major over y then x, as
        ``Forest.apply`` on the grid rows.
    """
    leaves = slice_leaves(forest, features, reference)
    xq = np.asarray(xs).astype(forest.input_dtype).astype(np.float64)
    yq = np.asarray(ys).astype(forest.input_dtype).astype(np.float64)
    nx, ny = xq.size, yq.size
    # A point p lies in (lower, upper] when lower < p <= upper.
    ix0 = np.searchsorted(xq, leaves.lower[:, 0], side="right")
    ix1 = np.searchsorted(xq, leaves.upper[:, 0], side="right")
    iy0 = np.searchsorted(yq, leaves.lower[:, 1], side="right")
    iy1 = np.searchsorted(yq, leaves.upper[:, 1], side="right")
    keep = (ix0 < ix1) & (iy0 < iy1)
    out = np.empty((ny * nx, forest.n_trees), dtype=np.intp)
    per_chunk = max(1, _RASTER_CELLS // ((nx + 1) * (ny + 1)))
    for start in range(0, forest.n_trees, per_chunk):
        stop = min(start + per_chunk, forest.n_trees)
        sel = keep & (leaves.tree >= start) & (leaves.tree < stop)
        t, node = leaves.tree[sel] - start, leaves.node[sel]
        a0, a1, b0, b1 = ix0[sel], ix1[sel], iy0[sel], iy1[sel]
        diff = np.zeros((stop - start, ny + 1, nx + 1), dtype=np.intp)
        np.add.at(diff, (t, b0, a0), node)
        np.add.at(diff, (t, b0, a1), -node)
        np.add.at(diff, (t, b1, a0), -node)
        np.add.at(diff, (t, b1, a1), node)
        grid = diff.cumsum(axis=1).cumsum(axis=2)[:, :ny, :nx]
        out[:, start:stop] = grid.reshape(stop - start, -1).T
    return out
