"""Counterfactuals over categorical columns and missing values.

A categorical column's cells are its categories.  A search over a forest with
categorical splits (or over rows with missing values) enumerates, for each row,
the *assignments* of its categorical columns: one category per column, among
those the constraints allow, in increasing order of their change cost.  With an
assignment fixed, and each missing value of the row fixed as missing, every
node on those columns routes one way: the search runs on the forest where
those nodes are constant (thresholds of ``+inf`` or ``-inf``), over the numeric
columns only, with the numeric engine as it is (:func:`feature_tweak` or
:func:`optimal_counterfactual`).  The answer of a row is its cheapest over the
assignments:

    cost = numeric cost (the chosen norm over the numeric columns)
           + sum of the change costs of the categorical columns changed,

so an exact numeric search stays exact (the minimum over every assignment).
Assignments whose category cost alone is at least the best total found are
skipped.  A missing value stays missing, unless ``fill_missing`` allows it to be
filled: then "filled" is one more choice of the row's assignments, with its
fill cost (:mod:`treelens._counterfactual._missing`).

Several options per row (``n_counterfactuals=k``): option ``o`` is the least,
over the assignments, of the assignment's price plus the cheapest numeric point
under it whose moves (categorical and numeric, see :mod:`._options`) leave out a
move of every earlier option.  An earlier option binds the numeric search under
an assignment only when the assignment makes all of its categorical moves; the
numeric search then excludes its numeric moves, as it excludes its own earlier
options.  An assignment under which a binding option moves no number holds no
further option.  Answers under an assignment whose binding options did not
change are kept from the earlier options, and assignments are pruned as for one.

Feature tweaking needs no assignments: its candidates are the nearest points of
single leaf boxes, and a box holds a set of categories per categorical column,
so a candidate keeps a row's category when its leaf admits it and otherwise
takes the admitted category of least change cost (:class:`CategoryPlan`).  One
search runs per pattern of missing values (their nodes fixed as above) and
per choice of the values filled among them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._cache import derived
from .._core._features import FeatureSpec, category_codes
from .._core._forest import Forest, Tree
from .._exceptions import InputError
from ._constraints import Constraints
from ._inference import DeclaredColumns, resolve_infer
from ._isolation import IsolationBound, reads_categories
from ._milp._solve import MIP_REL_GAP
from ._missing import FillPlan, resolve_fill
from ._options import CategoryOption, Diversity, Option, option_moves
from ._plausibility import keep_support
from ._problem import (
    REASON_INFEASIBLE,
    REASON_NO_FLIP,
    REASON_NO_OPTION,
    REASON_TIME_LIMIT,
    CounterfactualResult,
    Problem,
    as_float64,
    finish,
    prepare_problem,
    reference_float64,
    stack_options,
)

__all__ = [
    "CategoryCost",
    "CategoryPlan",
    "check_category_cost",
    "check_fill",
    "needs_fixed_search",
    "resolve_category_cost",
    "search_with_fixed",
]

#: Most category assignments searched per row.
MAX_ASSIGNMENTS = 4096
# The value of a filled numeric column in an assignment: not fixed, it starts
# from the fill plan's start.
_FILLED = np.inf

CategoryCost = float | Mapping[str, Any] | None


def needs_fixed_search(model: Any, X: Any, isolation_forest: Any = None) -> bool:
    """Whether a search must go through assignments: categorical splits (of the
    model, or of an isolation forest's read in its columns), or NaN in the
    rows."""
    forest = to_forest(model)
    if forest.has_categorical or reads_categories(forest, isolation_forest):
        return True
    try:
        rows = as_float64(forest, X)
    except InputError:
        return False
    return bool(np.isnan(rows).any())


def check_fill(
    model: Any,
    fill_missing: Any,
    fill_cost: Any,
    reference: Any,
    constraints: Constraints | None,
) -> None:
    """Check ``fill_missing`` and ``fill_cost`` at the public boundary, whether
    or not the rows have missing values (see :func:`resolve_fill`)."""
    if (fill_missing is None or fill_missing is False) and fill_cost is None:
        return
    forest = to_forest(model)
    ref = None if reference is None else reference_float64(forest, reference)
    resolve_fill(forest, fill_missing, fill_cost, ref, constraints)


def split_categorical(forest: Forest, extra: tuple[Tree, ...] = ()) -> NDArray[np.intp]:
    """Categorical features some tree splits on, sorted (kept with the forest);
    with ``extra`` (an isolation forest's trees), theirs too."""

    def build() -> NDArray[np.intp]:
        found = [tree.feature[tree.is_categorical] for tree in forest.trees]
        out = np.unique(np.concatenate([np.empty(0, np.intp), *found]))
        out = out.astype(np.intp)
        out.setflags(write=False)
        return out

    own = derived(forest, "split_categorical", build)
    if not extra:
        return own
    found = [tree.feature[tree.is_categorical] for tree in extra]
    return np.unique(np.concatenate([own, *found])).astype(np.intp)


def _isolation_trees(problem: Any) -> tuple[Tree, ...]:
    return () if problem.isolation is None else problem.isolation.trees


def assigned_categorical(forest: Forest, problem: Any) -> NDArray[np.intp]:
    """The categorical columns an assignment holds: those the model's trees
    split on, and those of an isolation forest's (they are constant in every
    search; their missing values may be filled)."""
    return split_categorical(forest, _isolation_trees(problem))


def check_category_cost(model: Any, category_cost: CategoryCost) -> None:
    """Check ``category_cost`` at the public boundary, whether or not the search
    goes through categories (see :func:`resolve_category_cost`)."""
    if category_cost is not None:
        resolve_category_cost(to_forest(model), category_cost)


def resolve_category_cost(
    forest: Forest, category_cost: CategoryCost
) -> dict[int, NDArray[np.float64]]:
    """The ``(k + 1, k + 1)`` change-cost matrix of each categorical feature
    (rows: from, columns: to; the last code is "unknown"); the diagonal is 0.

    ``None``: 1 per changed column; a number: that for every change; a mapping
    from column name to a number, or to a table of pairs (a mapping
    ``{(from, to): cost}`` or a DataFrame indexed by ``from`` with ``to`` as
    columns; pairs not given cost 1).
    """
    out: dict[int, NDArray[np.float64]] = {}
    per_column: Mapping[str, Any] = {}
    default = 1.0
    if category_cost is None:
        pass
    elif isinstance(category_cost, (int, float, np.integer, np.floating)):
        default = float(category_cost)
    elif isinstance(category_cost, Mapping):
        per_column = category_cost
    else:
        raise InputError(
            "`category_cost` must be None, a number, or a mapping from column to a "
            f"number or a table of (from, to) costs; got {type(category_cost).__name__}."
        )
    categorical = [spec.name for spec in forest.features if spec.is_categorical]
    for key in per_column:
        if key not in categorical:
            expected = (
                f"one of {categorical}"
                if categorical
                else "a categorical column, and the model has none"
            )
            raise InputError(
                f"`category_cost` names {key!r}, which is not a categorical column; "
                f"expected {expected}."
            )
    for j, spec in enumerate(forest.features):
        if not spec.is_categorical:
            continue
        k = spec.n_categories
        matrix = np.full((k + 1, k + 1), default)
        given = per_column.get(spec.name)
        if given is not None:
            matrix = _pair_table(spec, given, matrix)
        np.fill_diagonal(matrix, 0.0)
        if (matrix < 0).any() or np.isnan(matrix).any():
            raise InputError(
                f"Category change costs of {spec.name!r} must be non-negative numbers."
            )
        out[j] = matrix
    if default < 0:
        raise InputError(f"`category_cost` must be non-negative; got {default}.")
    return out


def _pair_table(
    spec: FeatureSpec, given: Any, matrix: NDArray[np.float64]
) -> NDArray[np.float64]:
    if isinstance(given, (int, float, np.integer, np.floating)):
        return np.full_like(matrix, float(given))
    labels = list(spec.categories or ())
    if isinstance(given, pd.DataFrame):
        given = {(a, b): given.loc[a, b] for a in given.index for b in given.columns}
    for pair, value in dict(given).items():
        a, b = pair
        for label in (a, b):
            if label not in labels:
                raise InputError(
                    f"`category_cost` of {spec.name!r} names category {label!r}; "
                    f"expected one of {labels}."
                )
        matrix[labels.index(a), labels.index(b)] = float(value)
    return matrix


def allowed_codes(
    forest: Forest, constraints: Constraints | None
) -> dict[int, NDArray[np.bool_]]:
    """Per categorical feature, the codes a counterfactual may hold: all by
    default (a row may keep a category the model never saw, code ``k``, but is
    never moved to it); with ``Constraints(allowed=...)`` the categories given."""
    out = {}
    allowed = getattr(constraints, "allowed", None) or {}
    names = forest.feature_names
    for key in allowed:
        j = _categorical_index(forest, key, "allowed")
        spec = forest.features[j]
        labels = list(spec.categories or ())
        mask = np.zeros(spec.n_categories + 1, dtype=bool)
        for label in allowed[key]:
            if label not in labels:
                raise InputError(
                    f"The allowed categories of {names[j]!r} include {label!r}, "
                    f"which the model does not know; expected some of {labels}."
                )
            mask[labels.index(label)] = True
        if not mask.any():
            raise InputError(
                f"The allowed categories of {names[j]!r} are empty, which leaves "
                f"every row without a value; expected some of {labels}."
            )
        out[j] = mask
    for j, spec in enumerate(forest.features):
        if spec.is_categorical and j not in out:
            out[j] = np.ones(spec.n_categories + 1, dtype=bool)
    return out


def _categorical_index(forest: Forest, key: Any, what: str) -> int:
    from .._core._validation import feature_index

    j = feature_index(forest, key)
    if not forest.features[j].is_categorical:
        raise InputError(
            f"`{what}` applies to categorical columns; {forest.feature_names[j]!r} "
            f"is {forest.features[j].kind}."
        )
    return j


def fixed_forest(forest: Forest, fixed: tuple[tuple[int, float], ...]) -> Forest:
    """``forest`` with every node on a fixed feature routing as its fixed value
    does, whatever the input (cached per assignment)."""
    cache = forest.__dict__.setdefault("_fixed_forests", {})
    key = tuple((j, "nan" if np.isnan(v) else float(v)) for j, v in fixed)
    if key in cache:
        return cache[key]
    values = dict(fixed)
    trees = fixed_trees(forest.trees, values, forest.n_categories)
    features = tuple(
        FeatureSpec(spec.name) if j in values else spec
        for j, spec in enumerate(forest.features)
    )
    # The searches hand it routing codes, never the user's labels.
    out = replace(
        forest,
        trees=tuple(trees),
        features=features,
        has_feature_names=False,
        arrays_hold_labels=False,
        fitted_model=None,  # its trees are no longer the model's
    )
    cache[key] = out
    return out


def fixed_trees(
    trees: tuple[Tree, ...], values: dict[int, float], k: NDArray[np.intp]
) -> tuple[Tree, ...]:
    """``trees`` with every node on a feature of ``values`` routing as that
    value does (thresholds of ``+inf`` or ``-inf``); ``k`` holds the number of
    categories of each feature."""
    out = []
    for tree in trees:
        on_fixed = ~tree.is_leaf & np.isin(tree.feature, list(values))
        if not on_fixed.any():
            out.append(tree)
            continue
        nodes = np.flatnonzero(on_fixed)
        x = np.array([values[int(f)] for f in tree.feature[nodes]])
        go_left = _go_left(tree, nodes, x, k)
        threshold = tree.threshold.copy()
        threshold[nodes] = np.where(go_left, np.inf, -np.inf)
        categorical = tree.is_categorical.copy()
        categorical[nodes] = False
        missing_left = tree.missing_go_left.copy()
        missing_left[nodes] = go_left
        out.append(
            replace(
                tree,
                threshold=threshold,
                is_categorical=categorical,
                missing_go_left=missing_left,
            )
        )
    return tuple(out)


def fixed_isolation(
    forest: Forest, bound: IsolationBound, fixed: tuple[tuple[int, float], ...]
) -> IsolationBound:
    """The isolation bound of a search with the features of ``fixed`` held at
    their values: its nodes on them constant, and the source scoring rows with
    those values put back (the search writes 0 there)."""
    values = dict(fixed)
    columns = np.array(list(values), dtype=np.intp)
    held = np.array(list(values.values()), dtype=np.float64)
    source_input = bound.to_input

    def to_input(X: NDArray[np.float64]) -> Any:
        X = np.array(X, dtype=np.float64)
        X[:, columns] = held
        return source_input(X)

    return replace(
        bound,
        trees=fixed_trees(bound.trees, values, forest.n_categories),
        to_input=to_input,
    )


def _check_isolation_missing(forest: Forest, problem: Any) -> None:
    """Refuse rows whose missing value meets an isolation forest that cannot
    take it: per column its trees split on, one row missing there (its other
    missing values put at 0) is scored by the source itself."""
    bound = problem.isolation
    if bound is None:
        return
    read = np.zeros(forest.n_features, dtype=bool)
    for tree in bound.trees:
        read[tree.feature[~tree.is_leaf]] = True
    missing = np.isnan(problem.X)
    for j in np.flatnonzero(missing.any(axis=0) & read).tolist():
        probe = np.nan_to_num(problem.X[np.flatnonzero(missing[:, j])[:1]])
        probe[:, j] = np.nan
        try:
            bound.scores(probe)
        except ValueError as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(
                f"Column {forest.feature_names[j]!r} has missing values, which the "
                "`isolation_forest` cannot take (its trees split on the column): "
                f"{reason}; expected one that accepts missing values (say a "
                "Pipeline with an imputer), or rows without them."
            ) from exc


def _check_isolation_unseen(forest: Forest, problem: Any) -> None:
    """Refuse rows holding, in a column whose labels an isolation forest reads
    by value, a number that is none of the labels: a category the model never
    saw (the unknown code stands for every such label alike, and the source
    would read the row's own), or a number the model reads by its whole part
    (3.5 as its category 3, which the source reads as 3.5)."""
    bound = problem.isolation
    if bound is None:
        return
    from .._core._features import label_numbers
    from .._core._validation import row_label

    rows = problem.X if problem.frame is None else problem.frame
    for j in bound.by_label:
        spec = forest.features[j]
        x = problem.X[:, j]
        k = int(forest.n_categories[j])
        code = category_codes(x, k)
        numbers = label_numbers(spec)
        assert numbers is not None  # the columns of by_label are
        labels = np.append(numbers, np.nan)
        own = _own_numbers(problem, j)
        wrong = np.flatnonzero(~np.isnan(x) & ~(own == labels[code]))
        if not wrong.size:
            continue
        i = int(wrong[0])
        what = (
            "a category the model never saw, whose value"
            if code[i] == k
            else f"{float(own[i])!r}, which the model reads as its category "
            f"{(spec.categories or ())[code[i]]!r} but whose value"
        )
        raise InputError(
            f"Row {row_label(rows, i)} holds in column {spec.name!r} {what} the "
            "`isolation_forest` reads as a number; expected one of the model's "
            f"categories {list(spec.categories or ())[:20]}."
        )


def _own_numbers(problem: Any, j: int) -> NDArray[np.float64]:
    """Column ``j`` of the rows as given, as numbers (NaN where none)."""
    if problem.given is not None:
        return np.asarray(problem.given[:, j], dtype=np.float64)
    from .._core._features import feature_columns

    forest, frame = problem.forest, problem.frame
    names = [] if frame is None else [str(c) for c in frame.columns]
    names = feature_columns(names, forest.feature_names)
    if forest.feature_names[j] not in names:
        return np.asarray(problem.X[:, j], dtype=np.float64)
    column = frame.iloc[:, names.index(forest.feature_names[j])].astype(object)
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)


def _go_left(
    tree: Tree, nodes: NDArray[np.intp], x: NDArray[np.float64], k: NDArray[np.intp]
) -> NDArray[np.bool_]:
    with np.errstate(invalid="ignore"):
        go = x <= tree.threshold[nodes]
    cat = tree.is_categorical[nodes]
    if cat.any():
        code = category_codes(x[cat], k[tree.feature[nodes][cat]])
        go[cat] = tree.categorical_left[nodes[cat], code]
    return np.where(np.isnan(x), tree.missing_go_left[nodes], go)


def _assignments(
    codes: NDArray[np.float64],
    cats: NDArray[np.intp],
    allowed: dict[int, NDArray[np.bool_]],
    immutable: NDArray[np.bool_],
    costs: dict[int, NDArray[np.float64]],
    k: NDArray[np.intp],
    names: tuple[str, ...],
    fill: FillPlan | None = None,
    filled_numeric: tuple[int, ...] = (),
) -> list[tuple[float, tuple[float, ...]]]:
    """Assignments of one row, ``(price, values)``, cheapest first: one value
    per categorical column of ``cats``, then one per numeric column of
    ``filled_numeric`` (missing in the row, allowed to be filled: NaN, or
    :data:`_FILLED`); the price sums category change and fill costs."""
    options: list[list[tuple[float, float]]] = []
    for j in cats.tolist():
        x = codes[j]
        if np.isnan(x):
            options.append([(0.0, np.nan)])  # stays missing, or is filled
            if fill is not None and fill.allowed[j]:
                options[-1] += [
                    (float(fill.cost[j]), float(c))
                    for c in np.flatnonzero(allowed[j][: k[j]]).tolist()
                ]
            continue
        own = int(category_codes(np.array([x]), k[j])[0])
        choices = [(0.0, float(own))] if allowed[j][own] else []
        if immutable[j] and not choices:
            choices = [(0.0, float(own))]
        if not immutable[j]:
            choices += [
                (float(costs[j][own, c]), float(c))
                for c in np.flatnonzero(allowed[j][: k[j]]).tolist()
                if c != own
            ]
        options.append(choices)
    for j in filled_numeric:
        assert fill is not None
        options.append([(0.0, np.nan), (float(fill.cost[j]), _FILLED)])
    total = int(np.prod([len(o) for o in options])) if options else 1
    if total > MAX_ASSIGNMENTS:
        columns = [names[j] for j in (*cats.tolist(), *filled_numeric)]
        raise InputError(
            f"A row has {total} combinations of categories and filled values to "
            f"search over the columns {columns}; expected at most "
            f"{MAX_ASSIGNMENTS}. Declare some of them immutable, restrict them "
            "with Constraints(allowed=...) or fill fewer columns."
        )
    out = [
        (sum(c for c, _ in combo), tuple(v for _, v in combo))
        for combo in itertools.product(*options)
    ]
    out.sort(key=lambda item: item[0])
    return out


def _sub_constraints(
    forest: Forest,
    constraints: Constraints | None,
    fixed: NDArray[np.intp],
    declared: DeclaredColumns | None = None,
    infer: Any = True,
) -> Constraints:
    """The user's constraints on numeric columns, with the fixed ones immutable;
    the columns the dtypes of the user's rows declare integer or boolean
    (``declared``) stay whole (0 or 1) as ``infer`` asks (the searches under
    fixed values take arrays of floats, whose dtype says nothing).

    A fixed column holds a placeholder (a category's assignment, or a missing
    value kept missing, written 0), so the user's bounds, directions and
    integrality of it are left out: they are about values it does not take.
    """
    base = constraints or Constraints()
    names = forest.feature_names
    kinds = {name: spec.kind for name, spec in zip(names, forest.features)}
    held = set(fixed.tolist())
    held_names = {names[j] for j in held}

    def name_of(key: Any) -> Any:
        if isinstance(key, (int, np.integer)):
            # An index out of range is refused when the constraints resolve.
            return names[key] if 0 <= key < len(names) else key
        return key

    def numeric(keys: Any) -> list[Any]:
        keep = []
        for key in keys:
            if kinds.get(name_of(key)) == "categorical":
                continue
            keep.append(key)
        return keep

    def free(keys: Any) -> list[Any]:
        return [key for key in keys if name_of(key) not in held_names]

    for attribute in ("increase_only", "decrease_only", "integer", "bounds"):
        for key in getattr(base, attribute):
            name = name_of(key)
            if kinds.get(name) == "categorical":
                raise InputError(
                    f"`{attribute}` applies to numeric columns; {name!r} is "
                    "categorical (restrict it with Constraints(allowed=...))."
                )
    bounds = {k: v for k, v in base.bounds.items() if k in numeric(free([k]))}
    integer = free(base.integer)
    inferred = resolve_infer(infer)
    if declared is not None and ("integer" in inferred or "flags" in inferred):
        for j in np.flatnonzero(declared.integer).tolist():
            if j in held:
                continue
            flag = "flags" in inferred and declared.flags[j]
            if flag and names[j] not in bounds and j not in bounds:
                integer.append(j)
                bounds[j] = (0, 1)
            elif "integer" in inferred:
                integer.append(j)
    return Constraints(
        immutable=[*numeric(base.immutable), *fixed.tolist()],
        increase_only=free(base.increase_only),
        decrease_only=free(base.decrease_only),
        bounds=bounds,
        integer=integer,
        one_hot=base.one_hot,
    )


Fixed = tuple[tuple[int, float], ...]
Key = tuple[tuple[int, Any], ...]


def search_with_fixed(
    search: Callable[..., CounterfactualResult],
    model: Any,
    X: Any,
    *,
    target: Any,
    cost: Any,
    epsilon: Any,
    constraints: Constraints | None,
    reference: Any,
    category_cost: CategoryCost,
    method: str,
    options: dict[str, Any],
    moves_categories: bool = False,
    fill_missing: Any = False,
    fill_cost: Any = None,
) -> CounterfactualResult:
    """The counterfactuals of ``search`` over every category assignment (see the
    module docstring); ``fill_missing`` and ``fill_cost`` as
    :func:`~treelens.optimal_counterfactual` takes them.

    With ``moves_categories``, ``search`` moves categorical columns itself (it
    takes a :class:`CategoryPlan`): one call per pattern of missing values,
    instead of one per assignment.  ``options["n_counterfactuals"]`` above 1
    asks for several options per row (:func:`_search_options`); ``search`` then
    takes ``excluded`` and ``diversity`` (see
    :func:`~treelens._counterfactual._optimal.optimal_rows`).
    """
    forest = to_forest(model)
    n_options = options.pop("n_counterfactuals", 1)
    diversity = options.pop("diversity", "moves")
    if n_options != 1 and moves_categories:
        raise InputError(
            "`n_counterfactuals` needs the exact search; got "
            f"n_counterfactuals={n_options!r} with {method}."
        )
    problem = prepare_problem(
        model,
        X,
        target=target,
        cost=cost,
        epsilon=epsilon,
        # The rows' dtypes are read (and reported) by prepare_problem itself.
        constraints=_sub_constraints(forest, constraints, np.empty(0, np.intp)),
        reference=reference,
        margin=options.get("margin"),
        infer=options.get("infer", True),
        min_leaf_samples=options.get("min_leaf_samples"),
        allow_nan=True,
        isolation_forest=options.pop("isolation_forest", None),
        max_anomaly_score=options.pop("max_anomaly_score", None),
    )
    _check_isolation_missing(forest, problem)
    _check_isolation_unseen(forest, problem)
    fill = resolve_fill(forest, fill_missing, fill_cost, problem.reference, constraints)
    if fill is not None:
        problem = replace(problem, fill=fill.fitted_to(problem.constraints))
    # Leaf support is counted on the whole forest: the searches over fixed
    # categories read it, not counts of their own (every row there goes the
    # fixed way).  The cost and epsilon are resolved once, on the whole
    # reference (missing values ignored), for every search alike.
    cost, epsilon = _resolved(problem, cost), problem.epsilon
    n_features = problem.X.shape[1]
    cats = assigned_categorical(forest, problem)
    used = split_features(forest, _isolation_trees(problem))
    costs = resolve_category_cost(forest, category_cost)
    allowed = allowed_codes(forest, constraints)
    immutable = np.zeros(n_features, dtype=bool)
    for key in (constraints or Constraints()).immutable:
        from .._core._validation import feature_index

        immutable[feature_index(forest, key)] = True
    ref = problem.reference
    ref_rows = None if ref is None else np.nan_to_num(ref)
    todo = np.flatnonzero(~problem.at_target)
    arguments = (target, cost, epsilon, options)
    if moves_categories:
        state = _State.empty(problem)
        categorical = (cats, allowed, immutable, costs)
        _search_per_missing_pattern(search, forest, problem, todo, categorical,
                                    constraints, ref_rows, arguments, state)  # fmt: skip
        return _finish(problem, state, method)
    pairs: list[tuple[float, int, Fixed]] = []
    for i in todo.tolist():
        pairs += _row_pairs(forest, i, problem.X[i], (cats, allowed, immutable, costs),
                            problem.fill, used)  # fmt: skip
    pairs.sort(key=lambda item: item[0])
    exact = method == "optimal_counterfactual"
    context = _Context(search, forest, problem, constraints, ref_rows, arguments, exact)
    return _search_options(context, pairs, n_options, diversity, method)


def _resolved(problem: Any, cost: Any) -> Any:
    """A separable cost as its norm and resolved weights, else as given."""
    if not problem.cost.separable:
        return cost
    return {"norm": problem.cost.norm, "weights": problem.cost.weights.copy()}


def split_features(forest: Forest, extra: tuple[Tree, ...] = ()) -> NDArray[np.bool_]:
    """Mask of shape (n_features,): features some tree (of the forest, or
    ``extra``) splits on."""
    used = np.zeros(forest.n_features, dtype=bool)
    for tree in forest.trees + extra:
        used[tree.feature[~tree.is_leaf]] = True
    return used


def _row_pairs(
    forest: Forest,
    i: int,
    x: NDArray[np.float64],
    categorical: tuple[Any, ...],
    fill: FillPlan | None,
    used: NDArray[np.bool_],
) -> list[tuple[float, int, tuple[tuple[int, float], ...]]]:
    """``(price, row, fixed values)`` of every assignment of row ``i``: the
    categorical columns' values, missing numeric values kept missing (fixed)
    or filled (not fixed: they start from the plan's start) when some tree
    splits on them (``used``)."""
    cats, allowed, immutable, costs = categorical
    cat_set = set(cats.tolist())
    missing = [j for j in np.flatnonzero(np.isnan(x)).tolist() if j not in cat_set]
    filled: tuple[int, ...] = ()
    if fill is not None:
        filled = tuple(j for j in missing if fill.allowed[j] and used[j])
    kept = [(j, np.nan) for j in missing if j not in filled]
    out = []
    for price, values in _assignments(
        x, cats, allowed, immutable, costs, forest.n_categories,
        forest.feature_names, fill, filled,
    ):  # fmt: skip
        chosen = zip((*cats.tolist(), *filled), values)
        fixed = [(j, v) for j, v in chosen if v != _FILLED] + kept
        out.append((price, i, tuple(sorted(fixed))))
    return out


@dataclass
class _State:
    """The best answer of each row found so far (for one option)."""

    X_cf: NDArray[np.float64]
    found: NDArray[np.bool_]
    cost: NDArray[np.float64]
    reason: NDArray[np.object_]
    tree: NDArray[np.intp]
    leaf: NDArray[np.intp]
    status: NDArray[np.object_]
    gap: NDArray[np.float64]
    #: Least total cost any assignment searched so far may still reach: its
    #: price plus the numeric search's proven lower bound (its cost where
    #: proven optimal, ``inf`` where proven infeasible).
    bound: NDArray[np.float64]

    @classmethod
    def empty(cls, problem: Problem) -> _State:
        n, n_features = problem.X.shape
        status = np.full(n, "infeasible", dtype=object)
        gap = np.full(n, np.inf)
        status[problem.at_target], gap[problem.at_target] = "optimal", 0.0
        bound = np.where(problem.at_target, 0.0, np.inf)
        return cls(
            X_cf=np.full((n, n_features), np.nan),
            found=np.zeros(n, dtype=bool),
            cost=np.full(n, np.inf),
            reason=np.full(n, None, dtype=object),
            tree=np.full(n, -1, dtype=np.intp),
            leaf=np.full(n, -1, dtype=np.intp),
            status=status,
            gap=gap,
            bound=bound,
        )


@dataclass
class _Under:
    """The answers of some rows under one assignment: the numeric search's
    (its cost alone, without the assignment's price), the fixed values
    written in; ``status`` ``"infeasible"`` where proven that none exists."""

    found: NDArray[np.bool_]
    X_cf: NDArray[np.float64]
    cost: NDArray[np.float64]
    tree: NDArray[np.intp]
    leaf: NDArray[np.intp]
    status: NDArray[np.object_]
    gap: NDArray[np.float64]
    reason: NDArray[np.object_]

    @classmethod
    def empty(cls, m: int, n_features: int) -> _Under:
        return cls(
            found=np.zeros(m, dtype=bool),
            X_cf=np.full((m, n_features), np.nan),
            cost=np.full(m, np.inf),
            tree=np.full(m, -1, dtype=np.intp),
            leaf=np.full(m, -1, dtype=np.intp),
            status=np.full(m, "infeasible", dtype=object),
            gap=np.full(m, np.inf),
            reason=np.full(m, None, dtype=object),
        )

    @classmethod
    def gather(cls, entries: list[tuple[_Under, int]]) -> _Under:
        """The rows ``position`` of the answers ``under``, stacked."""
        names = [item.name for item in fields(cls)]
        return cls(
            **{
                name: np.stack([getattr(u, name)[p] for u, p in entries])
                for name in names
            }
        )

    def keep(self, positions: NDArray[np.intp], result: CounterfactualResult) -> None:
        """Keep ``result``'s answers (of the rows ``positions``) where cheaper."""
        found = result.found_
        m = found.size
        status = np.full(m, "optimal", dtype=object)
        gap = np.zeros(m)
        if result.status_ is not None:
            status = np.asarray(result.status_, dtype=object)
            gap = np.zeros(m) if result.gap_ is None else np.asarray(result.gap_)
        better = found & (result.cost_ < self.cost[positions])
        p = positions[better]
        self.found[p] = True
        self.X_cf[p] = np.asarray(result.X_cf_)[better]
        self.cost[p] = result.cost_[better]
        self.tree[p], self.leaf[p] = result.tree_[better], result.leaf_[better]
        self.status[p], self.gap[p], self.reason[p] = status[better], gap[better], None
        lost = positions[~found]
        keep = (self.reason[lost] == None) & ~self.found[lost]
        self.reason[lost[keep]] = result.reason_[~found][keep]
        timed = positions[status == "time_limit"]
        self.status[timed[self.status[timed] == "infeasible"]] = "time_limit"

    def write(self, fixed: Fixed) -> None:
        """Write the fixed values into the answers."""
        for j, v in fixed:
            self.X_cf[:, j] = v


def _record(rows: NDArray[np.intp], under: _Under, price: float, state: _State) -> None:
    """Keep, per row, the cheaper of its best answer and its answer under an
    assignment of category cost ``price`` (rows are distinct)."""
    total = under.cost + price
    better = under.found & (total < state.cost[rows])
    r = rows[better]
    state.X_cf[r], state.cost[r], state.found[r] = (
        under.X_cf[better],
        total[better],
        True,
    )
    state.tree[r], state.leaf[r] = under.tree[better], under.leaf[better]
    state.status[r], state.gap[r] = under.status[better], under.gap[better]
    state.reason[r] = None
    lost = rows[~under.found]
    keep = state.reason[lost] == None
    state.reason[lost[keep]] = under.reason[~under.found][keep]
    timed = rows[under.status == "time_limit"]
    state.status[timed[state.status[timed] == "infeasible"]] = "time_limit"
    # What this assignment may still reach: a time limit proves only the
    # numeric search's bound (0 when it found nothing).
    with np.errstate(invalid="ignore"):
        numeric = np.where(
            under.found & np.isfinite(under.gap), under.cost * (1 - under.gap), 0.0
        )
    reach = np.where(
        under.status == "optimal",
        np.where(under.found, total, np.inf),
        np.where(under.status == "infeasible", np.inf, price + numeric),
    )
    state.bound[rows] = np.minimum(state.bound[rows], reach)


def _finish(problem: Problem, state: _State, method: str) -> CounterfactualResult:
    exact = method == "optimal_counterfactual"
    unresolved = (~state.found) & (state.reason == None) & ~problem.at_target
    if exact:
        timed = state.status == "time_limit"
        state.reason[unresolved & timed] = REASON_TIME_LIMIT
        state.reason[unresolved & ~timed] = REASON_INFEASIBLE
    else:
        state.reason[unresolved] = REASON_NO_FLIP
    if exact:
        # The best answer is proven only if no assignment cut short by its time
        # limit may still reach below it.
        found = state.found & ~problem.at_target
        gap = np.zeros(found.size)
        cost, bound = state.cost[found], np.maximum(state.bound[found], 0.0)
        excess = np.maximum(cost - bound, 0.0)
        gap[found] = np.divide(excess, cost, out=np.zeros_like(excess), where=cost > 0)
        short = found & (gap > MIP_REL_GAP)
        state.status[short] = "time_limit"
        state.status[found & ~short] = "optimal"
        state.gap[found] = np.where(short[found], gap[found], 0.0)
    return finish(
        problem,
        X_cf=state.X_cf,
        found=state.found,
        cost=state.cost,
        reason=state.reason,
        tree=state.tree,
        leaf=state.leaf,
        method=method,
        status=state.status if exact else None,
        # As the numeric search states them: 0 where proven (a row already at
        # the target included), NaN where proven infeasible, inf where the time
        # ran out before any answer.
        gap=np.where(
            state.found | problem.at_target,
            state.gap,
            np.where(state.status == "infeasible", np.nan, np.inf),
        )
        if exact
        else None,
    )


@dataclass(frozen=True, eq=False)
class CategoryPlan:
    """How feature tweaking moves categorical columns (see :func:`feature_tweak`).

    A candidate built from a leaf keeps a row's category when the leaf's box
    admits it (and the constraints allow it), else takes the admitted category
    of least change cost (the lowest code on ties): the categorical side of the
    leaf's nearest point, as the numeric side is.

    Attributes
    ----------
    allowed : dict of int to ndarray of shape (k + 1,), bool
        Codes a counterfactual may hold, per categorical feature.
    immutable : ndarray of shape (n_features,), bool
    costs : dict of int to ndarray of shape (k + 1, k + 1)
        Change cost from each code (rows) to each code (columns).
    """

    allowed: dict[int, NDArray[np.bool_]]
    immutable: NDArray[np.bool_]
    costs: dict[int, NDArray[np.float64]]


def _search_per_missing_pattern(
    search: Callable[..., CounterfactualResult],
    forest: Forest,
    problem: Problem,
    todo: NDArray[np.intp],
    categorical: tuple[Any, ...],
    constraints: Constraints | None,
    ref_rows: NDArray[np.float64] | None,
    arguments: tuple[Any, Any, Any, dict[str, Any]],
    state: _State,
) -> None:
    """One search per pattern of missing values and choice of the values
    filled among them, categories moved by the search itself
    (:class:`CategoryPlan`)."""
    target_spec, cost_spec, epsilon, options = arguments
    codes = problem.X
    missing = np.isnan(codes[todo])
    patterns, which = np.unique(missing, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        members = todo[np.ravel(which) == p]
        for filled, price in _fill_choices(forest, problem.fill, pattern):
            nan_j = np.flatnonzero(pattern & ~filled)
            fixed = tuple((int(j), np.nan) for j in nan_j)
            sub = fixed_forest(forest, fixed)
            keep_support(sub, problem.support)
            X = codes[members].copy()
            X[:, nan_j] = 0.0  # never read: every node on them is constant
            plan = _filled_plan(forest, problem.fill, categorical, filled, X)
            under = _Under.empty(members.size, codes.shape[1])
            run = np.ones(members.size, dtype=bool)
            if problem.target.kind == "other" and filled.any():
                # "Another class than the row's own prediction": rows the
                # filled values alone move are done.
                leaves = sub._leaves_of_codes(X)
                moved = sub._predict_from_leaves(leaves) != problem.current[members]
                under.found[moved], under.X_cf[moved] = True, X[moved]
                under.cost[moved], under.status[moved] = 0.0, "optimal"
                under.gap[moved] = 0.0
                run = ~moved
            if run.any():
                result = search(
                    sub,
                    X[run],
                    target=target_spec,
                    cost=cost_spec,
                    epsilon=epsilon,
                    constraints=_sub_constraints(
                        forest,
                        constraints,
                        nan_j,
                        problem.declared,
                        options.get("infer", True),
                    ),
                    reference=None
                    if ref_rows is None
                    else _fixed_reference(ref_rows, nan_j),
                    categories=plan,
                    **options,
                )
                under.keep(np.flatnonzero(run), result)
            under.write(fixed)
            _record(members, under, price, state)


def _fill_choices(
    forest: Forest, fill: FillPlan | None, pattern: NDArray[np.bool_]
) -> list[tuple[NDArray[np.bool_], float]]:
    """Each choice of the missing values of ``pattern`` to fill (those the plan
    allows and some tree splits on), as a mask, with its price."""
    none = np.zeros(pattern.size, dtype=bool)
    if fill is None:
        return [(none, 0.0)]
    fillable = np.flatnonzero(pattern & fill.allowed & split_features(forest))
    if 2**fillable.size > MAX_ASSIGNMENTS:
        raise InputError(
            f"A row has {2**fillable.size} choices of missing values to fill over "
            f"the columns {[forest.feature_names[j] for j in fillable]}; expected "
            f"at most {MAX_ASSIGNMENTS}. Fill fewer columns."
        )
    out = []
    for choice in itertools.product((False, True), repeat=fillable.size):
        filled = none.copy()
        filled[fillable[np.array(choice, dtype=bool)]] = True
        out.append((filled, float(fill.cost[filled].sum())))
    return out


def _filled_plan(
    forest: Forest,
    fill: FillPlan | None,
    categorical: tuple[Any, ...],
    filled: NDArray[np.bool_],
    X: NDArray[np.float64],
) -> CategoryPlan:
    """The category plan of a search whose ``filled`` values are filled, and
    their start written into ``X``: a numeric value at the plan's start, a
    categorical one as the "unknown" code ``k`` that may not be kept, from which
    any allowed category costs 0 (the fill cost is the price)."""
    _, allowed, immutable, costs = categorical
    allowed, costs = dict(allowed), dict(costs)
    for j in np.flatnonzero(filled).tolist():
        spec = forest.features[j]
        if not spec.is_categorical:
            assert fill is not None
            X[:, j] = fill.start[j]
            continue
        k = spec.n_categories
        X[:, j] = float(k)
        allowed[j] = allowed[j].copy()
        allowed[j][k] = False
        costs[j] = costs[j].copy()
        costs[j][k] = 0.0
    return CategoryPlan(allowed=allowed, immutable=immutable, costs=costs)


def _key(fixed: Fixed) -> Key:
    return tuple((j, "nan" if np.isnan(v) else float(v)) for j, v in fixed)


@dataclass(frozen=True)
class _Context:
    """What every search under an assignment shares."""

    search: Callable[..., CounterfactualResult]
    forest: Forest
    problem: Problem
    constraints: Constraints | None
    ref_rows: NDArray[np.float64] | None
    arguments: tuple[Any, Any, Any, dict[str, Any]]
    #: Whether ``search`` is the exact one, which takes ``below``: the cost an
    #: answer must be under (what the row's best answer less the assignment's
    #: price leaves), so that assignments that cannot win are dismissed by
    #: HiGHS under that cutoff instead of solved to their own optimum.
    exact: bool = False


def _search_options(
    context: _Context,
    pairs: list[tuple[float, int, Fixed]],
    n_options: int,
    diversity: Diversity,
    method: str,
) -> CounterfactualResult:
    """Option after option, the cheapest answer of each row over the
    assignments that differs from the row's earlier options.

    An earlier option binds the numeric search under an assignment only when
    the assignment makes all of its categorical moves
    (:class:`~treelens._counterfactual._options.CategoryOption`); an answer
    under an assignment whose binding options are the same as for an earlier
    option is that option's answer again (kept in ``cache``).
    """
    problem = context.problem
    codes = problem.X
    n, n_features = codes.shape
    cats = assigned_categorical(context.forest, context.problem)
    fixed_columns = np.zeros((n, n_features), dtype=bool)
    fixed_columns[:, cats] = True
    fixed_columns |= np.isnan(codes)
    earlier: list[list[CategoryOption]] = [[] for _ in range(n)]
    cache: dict[tuple[int, Key], tuple[int, _Under, int]] = {}
    results: list[CounterfactualResult] = []
    active = ~problem.at_target
    for option in range(n_options):
        state = _State.empty(problem)
        if results:
            # No earlier option, so none under more conditions either.
            last = results[-1]
            assert last.status_ is not None and last.gap_ is not None  # exact
            gone = ~problem.at_target & ~active
            state.status[gone] = last.status_[gone]
            state.gap[gone] = last.gap_[gone]
            state.reason[gone] = [r or REASON_NO_OPTION for r in last.reason_[gone]]
        _search_levels(context, pairs, active, state, earlier, cache, diversity)
        if option:
            lost = active & ~state.found & (state.status == "infeasible")
            state.reason[lost] = REASON_NO_OPTION
        results.append(_finish(problem, state, method))
        active &= results[-1].found_
        if not option:
            # A row that is its own answer has no further option (see
            # stack_options).
            same = (state.X_cf == codes) | (np.isnan(state.X_cf) & np.isnan(codes))
            active &= ~same.all(axis=1)
        for i in np.flatnonzero(active).tolist():
            x, x_cf, held = codes[i], state.X_cf[i], fixed_columns[i]
            moves = option_moves(
                x, [(j, x_cf[j]) for j in np.flatnonzero(held).tolist()],
                context.forest.n_categories, diversity,
            )  # fmt: skip
            numeric = Option(
                np.where(held, 0.0, x), np.where(held, 0.0, x_cf), diversity
            )
            earlier[i].append(CategoryOption(moves, numeric))
    return stack_options(results, problem)


def _search_levels(
    context: _Context,
    pairs: list[tuple[float, int, Fixed]],
    active: NDArray[np.bool_],
    state: _State,
    earlier: list[list[CategoryOption]],
    cache: dict[tuple[int, Key], tuple[int, _Under, int]],
    diversity: Diversity,
) -> None:
    """One option of the ``active`` rows: assignments by increasing category
    cost, rows sharing one searched together, each skipped once its price
    alone reaches the row's best."""
    codes = context.problem.X
    k = context.forest.n_categories
    cats = assigned_categorical(context.forest, context.problem)
    levels = sorted({price for price, i, _ in pairs if active[i]})
    for level in levels:
        groups: dict[Key, list[int]] = {}
        exact: dict[Key, Fixed] = {}
        for price, i, fixed in pairs:
            if price == level and active[i] and price < state.cost[i]:
                groups.setdefault(_key(fixed), []).append(i)
                exact.setdefault(_key(fixed), fixed)
        ordered = _reaching_first(context.forest, context.problem, groups, exact)
        for group_key in ordered:
            members, fixed = groups[group_key], exact[group_key]
            searched: list[int] = []
            excluded: list[list[Option]] = []
            again: list[int] = []
            for i in members:
                if state.cost[i] <= level:
                    continue  # an assignment of this price needs no number
                binding: list[CategoryOption] = []
                if earlier[i]:
                    moves = option_moves(
                        codes[i], _held_values(codes[i], fixed, cats), k, diversity
                    )
                    binding = [e for e in earlier[i] if e.binds(moves)]
                    if not all(e.has_numeric_moves for e in binding):
                        continue  # every point under it repeats an earlier option
                entry = cache.get((i, group_key))
                if entry is not None and entry[0] == len(binding):
                    again.append(i)
                else:
                    searched.append(i)
                    excluded.append([e.numeric for e in binding])
            if searched:
                rows = np.array(searched, dtype=np.intp)
                below = state.cost[rows] - level
                under = _search_group(context, fixed, rows, excluded, diversity, below)
                _record(rows, under, level, state)
                for p, i in enumerate(searched):
                    if under.found[p] or not (context.exact and np.isfinite(below[p])):
                        # An answer under the cutoff is the assignment's own
                        # best; "none under it" holds for this option only.
                        cache[(i, group_key)] = (len(excluded[p]), under, p)
            if again:
                under = _Under.gather([cache[(i, group_key)][1:] for i in again])
                _record(np.array(again, dtype=np.intp), under, level, state)


def _reaching_first(
    forest: Forest,
    problem: Problem,
    groups: dict[Key, list[int]],
    exact: dict[Key, Fixed],
) -> list[Key]:
    """The assignments of one price, those under which some row reaches the
    target with its own numbers first.

    Such an assignment answers at its price alone, which no other one of the
    same price beats: searched first, it dismisses them all, where otherwise
    each could first be proven to have no answer (0.15 s apiece on a 50-tree
    pipeline).  One prediction of every row under every assignment; a filled
    value (no number yet) counts as not reaching.
    """
    keys = list(groups)
    if len(keys) < 2:
        return keys
    owner = np.concatenate([np.full(len(groups[k]), n) for n, k in enumerate(keys)])
    rows = np.concatenate([groups[k] for k in keys])
    X = problem.X[rows].copy()
    unknown = np.zeros(rows.size, dtype=bool)
    for n, k in enumerate(keys):  # one per assignment, not per row
        mine = owner == n
        for j, value in exact[k]:
            if value == _FILLED:
                unknown[mine] = True
            else:  # a category, or a missing value kept missing (NaN)
                X[mine, j] = value
    predicted = forest._predict_from_leaves(forest._apply(X.astype(forest.input_dtype)))
    reached = problem.target.meets(predicted, problem.current[rows])
    first = np.zeros(len(keys), dtype=bool)
    first[owner[reached & ~unknown]] = True
    return [k for n, k in enumerate(keys) if first[n]] + [
        k for n, k in enumerate(keys) if not first[n]
    ]


def _held_values(
    x: NDArray[np.float64], fixed: Fixed, cats: NDArray[np.intp]
) -> list[tuple[int, float]]:
    """The values an assignment gives the categorical columns and the missing
    values of row ``x`` (:data:`_FILLED` for one filled)."""
    values = dict(fixed)
    held = sorted({*cats.tolist(), *np.flatnonzero(np.isnan(x)).tolist()})
    return [(j, values.get(j, _FILLED)) for j in held]


def _search_group(
    context: _Context,
    fixed: Fixed,
    rows: NDArray[np.intp],
    excluded: list[list[Option]],
    diversity: Diversity,
    below: NDArray[np.float64] | None = None,
) -> _Under:
    """Search ``rows`` with the features of ``fixed`` held at their values, each
    row's answer differing from the options ``excluded`` for it and, with an
    exact search, costing less than ``below`` (else reported infeasible)."""
    problem, forest = context.problem, context.forest
    target_spec, cost_spec, epsilon, options = context.arguments
    sub = fixed_forest(forest, fixed)
    keep_support(sub, problem.support)
    fixed_j = np.array([j for j, _ in fixed], dtype=np.intp)
    X = problem.X[rows].copy()
    X[:, fixed_j] = 0.0  # never read: every node on them is constant
    if problem.fill is not None:  # the values filled, at their start
        X = np.where(np.isnan(X), problem.fill.start, X)
    under = _Under.empty(rows.size, X.shape[1])
    target = problem.target
    run = np.ones(rows.size, dtype=bool)
    sub_constraints = _sub_constraints(
        forest,
        context.constraints,
        fixed_j,
        problem.declared,
        options.get("infer", True),
    )
    ref_rows = context.ref_rows
    sub_reference = None if ref_rows is None else _fixed_reference(ref_rows, fixed_j)
    searches: list[tuple[Any, NDArray[np.bool_]]] = [(target_spec, run)]
    strict = (
        problem.margin.any
        or problem.min_leaf_samples is not None
        or problem.isolation is not None
    )
    if problem.isolation is not None:  # its trees with the same nodes fixed
        bound = fixed_isolation(forest, problem.isolation, fixed)
        options = {**options, "isolation_forest": bound, "max_anomaly_score": None}
    # A row the change of category alone gives the target must still keep the
    # margin and the leaf support: the search on ``sub`` is given them, so it
    # searches such rows too (see prepare_problem).
    if target.kind == "other" and strict:
        # "Another class than the row's own prediction" with a margin or leaf
        # support to keep: one search per class the row may move to.
        current = problem.current[rows]
        classes = forest.classes_ if forest.classes_ is not None else ()
        searches = [(k, current != k) for k in classes]
    elif target.kind == "other":
        # "Another class than the row's own prediction", not than the prediction
        # under this assignment: rows this assignment already moves are done
        # (they move no number, which differs from every binding option).
        predicted = sub._predict_from_leaves(sub._leaves_of_codes(X))
        moved = np.flatnonzero(predicted != problem.current[rows])
        under.found[moved], under.X_cf[moved], under.cost[moved] = True, X[moved], 0.0
        under.status[moved], under.gap[moved] = "optimal", 0.0
        searches = [(target_spec, ~under.found)]
    for goal, run in searches:
        if not run.any():
            continue
        positions = np.flatnonzero(run)
        extra: dict[str, Any] = {}
        if any(excluded[p] for p in positions.tolist()):
            extra = {
                "excluded": [excluded[p] for p in positions],
                "diversity": diversity,
            }
        if context.exact and below is not None and np.isfinite(below[run]).any():
            extra["below"] = below[run]
        result = context.search(
            sub,
            X[run],
            target=goal,
            cost=cost_spec,
            epsilon=epsilon,
            constraints=sub_constraints,
            reference=sub_reference,
            **options,
            **extra,
        )
        under.keep(positions, result)
    under.write(fixed)
    return under


def _fixed_reference(
    ref: NDArray[np.float64], fixed_j: NDArray[np.intp]
) -> NDArray[np.float64]:
    out = ref.copy()
    out[:, fixed_j] = 0.0
    return out
