"""The decision path of each row, in the user's columns and in words.

Rows are routed once by the Forest (so missing values and float32 thresholds go
where the model sends them); the nodes of every (row, tree) path are recovered
from the leaves (:func:`~treelens._explain._nodes.path_nodes`) and every fact of
a split met is gathered for all rows and trees at once.  The tests a path makes
on one feature are then merged into one interval, ``low < x <= high``, by a
sorted reduction over (row, tree, feature).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._adapters import to_forest
from .._core._forest import Forest
from .._core._numbers import format_number as plain_number
from .._exceptions import InputError
from .._types import ArrayLike, ModelLike
from ._data import checked_rows
from ._nodes import NodeTables, node_tables, path_nodes

__all__ = ["DecisionPath", "decision_path"]

#: The tests a split can make, as ``conditions_["test"]`` spells them.
TESTS = ("<=", ">", "is missing", "is not missing", "in")
_LE, _GT, _MISSING, _NOT_MISSING, _IN = range(5)


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class DecisionPath:
    """The paths rows take through a model, split by split and merged per feature.

    Attributes
    ----------
    conditions_ : pandas.DataFrame
        One row per split met: ``row`` (the label of the row in ``data_``),
        ``tree``, ``depth``, ``node`` (within its tree), ``feature``, ``test``
        (``"<="``, ``">"``, ``"is missing"``, ``"is not missing"``, ``"in"``
        for a categorical split), ``threshold`` (NaN at categorical splits),
        ``categories`` (categorical splits: the labels of the side the row
        took, with ``"(unseen)"`` when unknown categories go there too; None
        elsewhere) and ``value`` (the row's value of the feature, in the user's
        units); in row, tree, depth order.
    rules_ : pandas.DataFrame
        The tests of one path on one feature merged: one row per (row, tree,
        feature tested) with ``low`` and ``high`` (the row's value satisfies
        ``low < value <= high``; infinite where unbounded), ``missing`` (the
        path routed the value as missing), ``categories`` (categorical
        features: the labels every categorical test of the path allows; None
        elsewhere), ``first_depth`` (depth of the path's first test of the
        feature) and ``n_tests``.
    leaves_ : ndarray of shape (n_rows, n_trees)
        Leaf reached in each tree (node id within the tree).
    leaf_values_ : ndarray of shape (n_rows, n_trees, n_values)
        What each tree's leaf adds to the model's output: class fractions or
        values for forests and trees, the raw score (learning rate applied)
        for boosting.
    prediction_ : ndarray of shape (n_rows,)
        The model's prediction (class labels for classifiers).
    proba_ : ndarray of shape (n_rows, n_classes) or None
        Class probabilities, for classifiers.
    feature_counts_ : ndarray of shape (n_rows, n_features)
        Number of the model's trees whose path tests each feature (of
        ``n_trees_``).
    mean_first_depth_ : ndarray of shape (n_rows, n_features)
        Mean over those trees of the depth of the first test of the feature
        (NaN where no tree tests it).
    feature_order_ : ndarray of shape (n_rows, n_features)
        Feature indices from the most deciding: most trees first, then the
        earliest tested, then by position.
    sentences_ : tuple of str
        A plain-language sentence per row.
    feature_names_ : tuple of str
    data_ : pandas.DataFrame of shape (n_rows, n_features)
        The rows, in the user's units.
    n_trees_ : int
        Number of the model's trees.  The columns of ``leaves_`` are the
        Forest's trees, which hold a multiclass AdaBoost's trees once per class
        (:attr:`Forest.tree_copies`); elsewhere the two are equal.

    See Also
    --------
    treelens.decision_path, treelens.saabas_values
    """

    conditions_: pd.DataFrame
    rules_: pd.DataFrame
    leaves_: NDArray[np.intp]
    leaf_values_: NDArray[np.float64]
    prediction_: NDArray[Any]
    proba_: NDArray[np.float64] | None
    feature_counts_: NDArray[np.intp]
    mean_first_depth_: NDArray[np.float64]
    feature_order_: NDArray[np.intp]
    sentences_: tuple[str, ...]
    feature_names_: tuple[str, ...]
    data_: pd.DataFrame
    n_trees_: int

    def __repr__(self) -> str:
        return (
            f"DecisionPath(n_rows={self.leaves_.shape[0]}, n_trees={self.n_trees_}, "
            f"n_conditions={len(self.conditions_)})"
        )

    def to_frame(self) -> pd.DataFrame:
        """The merged rules with each one in words.

        Returns
        -------
        frame : pandas.DataFrame
            ``rules_`` with a column ``condition`` such as
            ``"worst radius 21.1 > 16.8"`` or ``"age 41 in (30, 45]"``.
        """
        frame = self.rules_.copy()
        frame["condition"] = [
            rule_text(f, v, lo, hi, m, c)
            for f, v, lo, hi, m, c in zip(
                frame["feature"].astype(str),
                frame["value"],
                frame["low"],
                frame["high"],
                frame["missing"],
                frame["categories"],
            )
        ]
        return frame


def decision_path(
    model: ModelLike, X: ArrayLike, *, max_conditions: int = 3
) -> DecisionPath:
    """The conditions each row meets on its way through the model, and why.

    Per row and tree: every split met (``conditions_``) and, merged over the
    tree's path, one interval per feature (``rules_``: "worst radius 21.1 >
    16.8"), with the value the leaf adds.  For an ensemble the features are
    ranked by how many trees test them on the row's paths and how early; the
    sentence of a row names the prediction and its ``max_conditions`` most
    deciding features, each with the bound most of those trees set (the median
    of their thresholds) and in how many trees.  A single tree's sentence lists
    its whole path.

    Parameters
    ----------
    model : fitted tree model or Forest
    X : array-like of shape (n_rows, n_features)
        Rows to explain; a DataFrame is matched to the model's features by name.
    max_conditions : int, default=3
        Features named in an ensemble's sentences.

    Returns
    -------
    DecisionPath

    Raises
    ------
    InputError
        If ``X`` does not match the model's features, or ``max_conditions`` is
        not a positive integer.

    See Also
    --------
    treelens.saabas_values : how much each feature moved the prediction.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> decision_path(model, X.iloc[[100]]).sentences_[0]
    'Predicted 2 (probability 0.98) because petal width (cm) 2.5 > 1.75.'
    """
    if (
        isinstance(max_conditions, bool)
        or not isinstance(max_conditions, (int, np.integer))
        or max_conditions < 1
    ):
        raise InputError(
            f"`max_conditions` must be a positive integer; got {max_conditions!r}."
        )
    forest = to_forest(model)
    routed, data = checked_rows(forest, X)
    tables = node_tables(forest)
    leaves = forest._apply(routed)
    global_leaves = leaves + tables.offsets
    steps = _steps(tables, path_nodes(tables, leaves), routed)
    values = data.to_numpy()
    conditions = _conditions_frame(forest, tables, steps, data, values)
    rules = _merge(steps, forest.n_trees, forest.n_features)
    rules_frame = _rules_frame(forest, rules, data, values)
    counts, mean_depth, order = _ranking(rules, routed.shape[0], forest.n_features)
    # The copies of one of the model's trees test alike: count it once.
    counts //= forest.tree_copies
    proba = forest._proba_from_leaves(leaves) if forest.is_classifier else None
    prediction = forest._predict_from_leaves(leaves)
    leaf_values = tables.value[global_leaves]
    if forest.kind == "boosting":
        leaf_values = leaf_values * forest.learning_rate
    sentences = _sentences(
        forest,
        values,
        rules,
        list(rules_frame["categories"]),
        order,
        counts,
        prediction,
        proba,
        max_conditions,
    )
    return DecisionPath(
        conditions_=conditions,
        rules_=rules_frame,
        leaves_=leaves,
        leaf_values_=leaf_values,
        prediction_=prediction,
        proba_=proba,
        feature_counts_=counts,
        mean_first_depth_=mean_depth,
        feature_order_=order,
        sentences_=tuple(sentences),
        feature_names_=forest.feature_names,
        data_=data,
        n_trees_=forest.n_trees // forest.tree_copies,
    )


# ---------------------------------------------------------------- splits met
def _steps(
    tables: NodeTables, paths: NDArray[np.intp], routed: NDArray[Any]
) -> dict[str, NDArray[Any]]:
    """Every split met, as parallel arrays in (row, tree, depth) order."""
    child = paths[:, :, 1:]
    row, tree, depth = np.nonzero(child >= 0)
    node = paths[row, tree, depth]
    nxt = child[row, tree, depth]
    feature = tables.feature[node]
    threshold = tables.threshold[node]
    went_left = nxt == tables.left[node]
    missing = np.isnan(routed[row, feature])
    test = np.where(went_left, _LE, _GT)
    # A split on an infinite threshold separates only missing values.
    test[~missing & ~np.isfinite(threshold)] = _NOT_MISSING
    categorical = tables.is_categorical[node]
    test[categorical] = _IN
    test[missing] = _MISSING
    # The codes each step allows (all of them at numeric steps).
    allowed = np.ones((node.size, tables.categorical_left.shape[1]), dtype=bool)
    if categorical.any():
        side = tables.categorical_left[node[categorical]]
        allowed[categorical] = np.where(went_left[categorical, None], side, ~side)
    return {
        "row": row,
        "tree": tree,
        "depth": depth,
        "node": node - tables.offsets[tree],
        "feature": feature,
        "threshold": threshold,
        "test": test,
        "allowed": allowed,
        "categorical": categorical & ~missing,
    }


def _conditions_frame(
    forest: Forest,
    tables: NodeTables,
    steps: dict[str, NDArray[Any]],
    data: pd.DataFrame,
    values: NDArray[Any],
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": data.index.to_numpy()[steps["row"]],
            "tree": steps["tree"],
            "depth": steps["depth"],
            "node": steps["node"],
            "feature": pd.Categorical.from_codes(
                steps["feature"], categories=pd.Index(forest.feature_names)
            ),
            "test": pd.Categorical.from_codes(
                steps["test"], categories=pd.Index(TESTS)
            ),
            "threshold": steps["threshold"],
            "categories": _category_sets(
                forest, steps["feature"], steps["allowed"], steps["categorical"]
            ),
            "value": values[steps["row"], steps["feature"]],
        }
    )


def _category_sets(
    forest: Forest,
    feature: NDArray[np.intp],
    allowed: NDArray[np.bool_],
    categorical: NDArray[np.bool_],
) -> list[tuple[Any, ...] | None]:
    """The labels allowed at each categorical step or rule; None elsewhere."""
    out: list[tuple[Any, ...] | None] = [None] * feature.size
    for i in np.flatnonzero(categorical):
        spec = forest.features[feature[i]]
        assert spec.categories is not None
        k = spec.n_categories
        labels = tuple(c for c, ok in zip(spec.categories, allowed[i, :k]) if ok)
        out[i] = labels + (UNSEEN,) if allowed[i, k] else labels
    return out


#: Stands for the categories a model never saw in a set of allowed labels.
UNSEEN = "(unseen)"


def _merge(
    steps: dict[str, NDArray[Any]], n_trees: int, n_features: int
) -> dict[str, NDArray[Any]]:
    """One interval per (row, tree, feature) of a path."""
    key = (steps["row"] * n_trees + steps["tree"]) * n_features + steps["feature"]
    order = np.argsort(key, kind="stable")  # depth order kept within a group
    key = key[order]
    if key.size == 0:
        starts = np.zeros(0, dtype=np.intp)
    else:
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    test = steps["test"][order]
    threshold = steps["threshold"][order]
    low = np.where(test == _GT, threshold, -np.inf)
    high = np.where(test == _LE, threshold, np.inf)
    missing = test == _MISSING
    allowed = steps["allowed"][order]
    categorical = steps["categorical"][order]
    if key.size == 0:
        reduce_max = reduce_min = reduce_any = lambda a: a[:0]
        reduce_all = reduce_any
    else:

        def reduce_max(a: NDArray[Any]) -> NDArray[Any]:
            return np.maximum.reduceat(a, starts)

        def reduce_min(a: NDArray[Any]) -> NDArray[Any]:
            return np.minimum.reduceat(a, starts)

        def reduce_any(a: NDArray[Any]) -> NDArray[Any]:
            return np.logical_or.reduceat(a, starts)

        def reduce_all(a: NDArray[Any]) -> NDArray[Any]:
            return np.logical_and.reduceat(a, starts, axis=0)

    first = order[starts]
    return {
        "row": steps["row"][first],
        "tree": steps["tree"][first],
        "feature": steps["feature"][first],
        "low": reduce_max(low),
        "high": reduce_min(high),
        "missing": reduce_any(missing),
        "allowed": (
            reduce_all(allowed)
            if allowed.shape[1]
            else np.zeros((starts.size, 0), dtype=bool)
        ),
        "categorical": reduce_any(categorical),
        "first_depth": steps["depth"][first],
        "n_tests": np.diff(np.append(starts, key.size)),
    }


def _rules_frame(
    forest: Forest,
    rules: dict[str, NDArray[Any]],
    data: pd.DataFrame,
    values: NDArray[Any],
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": data.index.to_numpy()[rules["row"]],
            "tree": rules["tree"],
            "feature": pd.Categorical.from_codes(
                rules["feature"], categories=pd.Index(forest.feature_names)
            ),
            "value": values[rules["row"], rules["feature"]],
            "low": rules["low"],
            "high": rules["high"],
            "missing": rules["missing"],
            "categories": _category_sets(
                forest, rules["feature"], rules["allowed"], rules["categorical"]
            ),
            "first_depth": rules["first_depth"],
            "n_tests": rules["n_tests"],
        }
    )


def _ranking(
    rules: dict[str, NDArray[Any]], n_rows: int, n_features: int
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]:
    """Trees testing each (row, feature), mean first depth, and the order."""
    cell = rules["row"] * n_features + rules["feature"]
    size = n_rows * n_features
    counts = np.bincount(cell, minlength=size).reshape(n_rows, n_features)
    depth_sum = np.bincount(cell, weights=rules["first_depth"], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_depth = depth_sum.reshape(n_rows, n_features) / counts
    position = np.broadcast_to(np.arange(n_features), (n_rows, n_features))
    depth_key = np.where(counts > 0, mean_depth, np.inf)
    order = np.lexsort((position, depth_key, -counts), axis=-1)
    return counts.astype(np.intp), mean_depth, order.astype(np.intp)


# ------------------------------------------------------------------- words
def format_number(value: Any) -> str:
    """A number as a sentence shows it: in its own scale, four significant digits
    (see :func:`treelens._core._numbers.format_number`)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return plain_number(number)


def rule_text(
    feature: str,
    value: Any,
    low: float,
    high: float,
    missing: bool,
    categories: tuple[Any, ...] | None = None,
) -> str:
    """One merged condition in words: ``"worst radius 21.1 > 16.8"``,
    ``"employment is self-employed"``."""
    if missing:
        return f"{feature} is missing"
    if categories is not None:
        known = [c for c in categories if c != UNSEEN]
        if value not in known:
            return f"{feature} is {value}, a category the model never saw"
        if len(known) == 1:
            return f"{feature} is {value}"
        return f"{feature} is {value}, in {{{', '.join(map(str, known))}}}"
    shown = format_number(value)
    if np.isfinite(low) and np.isfinite(high):
        return f"{feature} {shown} in ({format_number(low)}, {format_number(high)}]"
    if np.isfinite(low):
        return f"{feature} {shown} > {format_number(low)}"
    if np.isfinite(high):
        return f"{feature} {shown} <= {format_number(high)}"
    return f"{feature} {shown} is not missing"


def _prediction_text(
    forest: Forest, label: Any, proba: NDArray[np.float64] | None, row: int
) -> str:
    if forest.link == "isolation":  # score_samples, as the model gives it
        return f"Scored {format_number(label)} (anomaly score {format_number(-label)})"
    if proba is None:
        return f"Predicted {format_number(label)}"
    assert forest.classes_ is not None
    index = int(np.flatnonzero(forest.classes_ == label)[0])
    return f"Predicted {label} (probability {proba[row, index]:.2f})"


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _sentences(
    forest: Forest,
    values: NDArray[Any],
    rules: dict[str, NDArray[Any]],
    categories: list[tuple[Any, ...] | None],
    order: NDArray[np.intp],
    counts: NDArray[np.intp],
    prediction: NDArray[Any],
    proba: NDArray[np.float64] | None,
    max_conditions: int,
) -> list[str]:
    n_rows = order.shape[0]
    names = forest.feature_names
    position = rules["row"]
    if forest.n_trees == 1:
        texts = [
            rule_text(names[f], v, lo, hi, m, c)
            for f, v, lo, hi, m, c in zip(
                rules["feature"],
                values[rules["row"], rules["feature"]],
                rules["low"],
                rules["high"],
                rules["missing"],
                categories,
            )
        ]
        by_depth = np.lexsort((rules["first_depth"], position))
        per_row: list[list[str]] = [[] for _ in range(n_rows)]
        for i in by_depth:
            per_row[position[i]].append(texts[i])
        clauses = [_join(parts) for parts in per_row]
    else:
        clauses = _ensemble_clauses(
            forest, values, rules, order, counts, max_conditions
        )
    out = []
    for r in range(n_rows):
        head = _prediction_text(forest, prediction[r], proba, r)
        if not clauses[r]:
            out.append(f"{head}: every tree is a single leaf.")
        elif forest.n_trees == 1:
            out.append(f"{head} because {clauses[r]}.")
        else:
            out.append(f"{head}, mainly because {clauses[r]}.")
    return out


def _ensemble_clauses(
    forest: Forest,
    values: NDArray[Any],
    rules: dict[str, NDArray[Any]],
    order: NDArray[np.intp],
    counts: NDArray[np.intp],
    max_conditions: int,
) -> list[str]:
    """Per row, its most deciding features with the bound most trees set."""
    n_rows, n_features = order.shape
    top = np.zeros((n_rows, n_features), dtype=bool)
    chosen = order[:, :max_conditions]
    np.put_along_axis(top, chosen, True, axis=1)
    top &= counts > 0
    keep = top[rules["row"], rules["feature"]]
    low, high = rules["low"][keep], rules["high"][keep]
    direction = np.where(
        rules["missing"][keep],
        2,
        np.where(
            rules["categorical"][keep],
            4,
            np.where(np.isfinite(low), 0, np.where(np.isfinite(high), 1, 3)),
        ),
    )
    bound = np.where(direction == 0, low, np.where(direction == 1, high, np.nan))
    table = pd.DataFrame(
        {
            "row": rules["row"][keep],
            "feature": rules["feature"][keep],
            "direction": direction,
            "bound": bound,
        }
    )
    grouped = table.groupby(["row", "feature", "direction"], sort=False)["bound"]
    summary = grouped.agg(["size", "median"]).reset_index()
    # The direction most of the trees take; ties go to the lower code.
    summary = summary.sort_values(
        ["row", "feature", "size", "direction"], ascending=[True, True, False, True]
    ).drop_duplicates(["row", "feature"])
    lookup = {
        (int(r), int(f)): (int(d), float(m))
        for r, f, d, m in zip(
            summary["row"], summary["feature"], summary["direction"], summary["median"]
        )
    }
    names = forest.feature_names
    out = []
    for r in range(n_rows):
        parts = []
        for f in chosen[r]:
            if counts[r, f] == 0:
                continue
            d, m = lookup[(r, int(f))]
            value = values[r, f]
            text = rule_text(
                names[f],
                value,
                m if d == 0 else -np.inf,
                m if d == 1 else np.inf,
                d == 2,
                _own_category(forest, int(f), value) if d == 4 else None,
            )
            n_trees = forest.n_trees // forest.tree_copies
            parts.append(f"{text} ({counts[r, f]} of {n_trees} trees)")
        out.append(_join(parts))
    return out


def _own_category(forest: Forest, feature: int, value: Any) -> tuple[Any, ...]:
    """The row's own label as an allowed set, empty when the model never saw it."""
    categories = forest.features[feature].categories or ()
    return (value,) if value in categories else ()
