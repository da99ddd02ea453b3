"""Structure checks of XGBoost and LightGBM model files, before their loaders run.

The libraries' own loaders trust their files: an XGBoost JSON model whose root is
its own child loads, and every later walk down that tree never ends; an
out-of-range feature index reads past an array; a LightGBM text model cut short
crashes LightGBM's parser (a segmentation fault or ``std::terminate``).  These
checks read the file's structure in plain Python and raise an
:class:`~treelens.InputError` naming the tree, node and field, so no file reaches
a loader unless every tree is a proper binary tree over the model's features.

A tree is proper when its child arrays agree in length, every child index is a
node of the tree, the root is nobody's child and every other node is the child of
at most one node: then the nodes reachable from the root form a tree (a cycle
would give some node two parents, or make the root a child).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._exceptions import InputError

__all__ = ["check_lightgbm_text", "check_xgboost_json"]


def _where(path: str, tree: int, field: str | None = None) -> str:
    field_text = f", field {field!r}" if field else ""
    return f"Model file {path!r}, tree {tree}{field_text}"


def _check_children(
    left: np.ndarray,
    right: np.ndarray,
    *,
    is_leaf: np.ndarray,
    n_nodes: int,
    path: str,
    tree: int,
) -> None:
    """Children in range, the root nobody's child, at most one parent per node."""
    children = np.concatenate([left[~is_leaf], right[~is_leaf]])
    bad = (children < 0) | (children >= n_nodes)
    if bad.any():
        raise InputError(
            f"{_where(path, tree)}: a child index is {int(children[bad][0])}; "
            f"expected a node in [0, {n_nodes - 1}]. The file is damaged."
        )
    parents = np.bincount(children, minlength=n_nodes)
    if n_nodes and parents[0]:
        raise InputError(
            f"{_where(path, tree)}: the root is the child of a node (a cycle); "
            "expected a tree. The file is damaged."
        )
    twice = np.flatnonzero(parents > 1)
    if twice.size:
        raise InputError(
            f"{_where(path, tree)}: node {int(twice[0])} is the child of "
            f"{int(parents[twice[0]])} nodes (a cycle or a shared subtree); expected "
            "one parent per node. The file is damaged."
        )


# ----------------------------------------------------------------------- XGBoost

_XGB_NODE_FIELDS = (
    "left_children",
    "right_children",
    "split_indices",
    "split_conditions",
    "default_left",
    "base_weights",
)


def _get(mapping: Any, keys: Sequence[str], path: str) -> Any:
    node = mapping
    for depth, key in enumerate(keys):
        if not isinstance(node, Mapping) or key not in node:
            dotted = ".".join(keys[: depth + 1])
            raise InputError(
                f"Model file {path!r} is an XGBoost JSON model without {dotted!r}; "
                "expected the output of Booster.save_model('model.json'). The file "
                "is incomplete or was edited."
            )
        node = node[key]
    return node


def _int_array(values: Any, path: str, tree: int, field: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1 or not np.isfinite(array).all():
        raise InputError(
            f"{_where(path, tree, field)}: expected a list of integers; got "
            f"{str(values)[:60]}."
        )
    return array.astype(np.int64)


def check_xgboost_json(content: Any, path: str) -> None:
    """Check an XGBoost JSON model's structure (see the module docstring).

    Raises
    ------
    InputError
        If an entry XGBoost needs is missing (the objective, the number of
        features, the trees), the node arrays of a tree differ in length, a child
        index or feature index is out of range, or a tree is not a tree.
    """
    learner = _get(content, ("learner",), path)
    _get(content, ("learner", "objective", "name"), path)
    n_features_text = _get(
        content, ("learner", "learner_model_param", "num_feature"), path
    )
    try:
        n_features = int(n_features_text)
    except (TypeError, ValueError):
        raise InputError(
            f"Model file {path!r}: learner_model_param.num_feature must be an "
            f"integer; got {n_features_text!r}."
        ) from None
    booster = _get(learner, ("gradient_booster",), path)
    keys = ("gbtree", "model", "trees") if "gbtree" in booster else ("model", "trees")
    trees = _get(booster, keys, path)
    if not isinstance(trees, list):
        raise InputError(
            f"Model file {path!r}: the trees must be a list; got "
            f"{type(trees).__name__}."
        )
    for index, tree in enumerate(trees):
        if not isinstance(tree, Mapping):
            raise InputError(f"{_where(path, index)}: expected a JSON object.")
        missing = [f for f in _XGB_NODE_FIELDS if f not in tree]
        if missing:
            raise InputError(
                f"{_where(path, index)}: the fields {missing} are missing; expected "
                f"every node field {list(_XGB_NODE_FIELDS)}."
            )
        sizes = {
            f: len(tree[f]) for f in _XGB_NODE_FIELDS if hasattr(tree[f], "__len__")
        }
        if len(set(sizes.values())) != 1 or len(sizes) != len(_XGB_NODE_FIELDS):
            raise InputError(
                f"{_where(path, index)}: the node fields have different lengths "
                f"{sizes}; expected one entry per node in each."
            )
        n_nodes = next(iter(sizes.values()))
        if n_nodes == 0:
            raise InputError(f"{_where(path, index)}: the tree has no nodes.")
        left = _int_array(tree["left_children"], path, index, "left_children")
        right = _int_array(tree["right_children"], path, index, "right_children")
        feature = _int_array(tree["split_indices"], path, index, "split_indices")
        is_leaf = left == -1
        if (is_leaf != (right == -1)).any():
            node = int(np.flatnonzero(is_leaf != (right == -1))[0])
            raise InputError(
                f"{_where(path, index)}: node {node} has one child; expected two "
                "children or none."
            )
        _check_children(
            left, right, is_leaf=is_leaf, n_nodes=n_nodes, path=path, tree=index
        )
        bad = ~is_leaf & ((feature < 0) | (feature >= n_features))
        if bad.any():
            node = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{_where(path, index, 'split_indices')}: node {node} splits on "
                f"feature {int(feature[node])}; expected a feature in "
                f"[0, {n_features - 1}] (the model has {n_features} features)."
            )


# ---------------------------------------------------------------------- LightGBM

_TREE_LINE = re.compile(r"^Tree=(\d+)$", re.MULTILINE)
_SPLIT_FIELDS = (
    "split_feature",
    "threshold",
    "decision_type",
    "left_child",
    "right_child",
)
_LEAF_FIELDS = ("leaf_value",)


def _fields(block: str) -> dict[str, str]:
    fields = {}
    for line in block.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _numbers(text: str, path: str, tree: int, field: str, count: int) -> np.ndarray:
    try:
        values = np.asarray([float(v) for v in text.split()], dtype=np.float64)
    except ValueError:
        raise InputError(
            f"{_where(path, tree, field)}: expected {count} numbers; got "
            f"{text[:60]!r}. The file is damaged."
        ) from None
    if values.size != count:
        raise InputError(
            f"{_where(path, tree, field)}: expected {count} values; got "
            f"{values.size}. The file is cut short or was edited."
        )
    return values


def _check_lightgbm_tree(block: str, index: int, n_features: int, path: str) -> None:
    fields = _fields(block)
    try:
        n_leaves = int(fields["num_leaves"])
    except (KeyError, ValueError):
        raise InputError(
            f"{_where(path, index, 'num_leaves')}: missing or not an integer. The "
            "file is cut short or was edited."
        ) from None
    if n_leaves < 1:
        raise InputError(f"{_where(path, index, 'num_leaves')}: got {n_leaves}.")
    needed = _LEAF_FIELDS + (_SPLIT_FIELDS if n_leaves > 1 else ())
    missing = [f for f in needed if f not in fields]
    if missing:
        raise InputError(
            f"{_where(path, index)}: the fields {missing} are missing. The file is "
            "cut short or was edited."
        )
    _numbers(fields["leaf_value"], path, index, "leaf_value", n_leaves)
    if n_leaves == 1:
        return
    n_split = n_leaves - 1
    arrays = {f: _numbers(fields[f], path, index, f, n_split) for f in _SPLIT_FIELDS}
    left = arrays["left_child"].astype(np.int64)
    right = arrays["right_child"].astype(np.int64)
    # Children: internal node k >= 0, leaf k written as ~k = -(k + 1).
    for name, child in (("left_child", left), ("right_child", right)):
        bad = (child >= n_split) | (child < -n_leaves)
        if bad.any():
            raise InputError(
                f"{_where(path, index, name)}: child {int(child[bad][0])} is out of "
                f"range; expected an internal node in [0, {n_split - 1}] or a leaf "
                f"in [-{n_leaves}, -1]."
            )
    # Nodes 0..n_split-1 internal, n_split.. the leaves (~k mapped to n_split + k).
    as_node = lambda c: np.where(c >= 0, c, n_split + (-c - 1))
    _check_children(
        as_node(left),
        as_node(right),
        is_leaf=np.zeros(n_split, dtype=bool),
        n_nodes=n_split + n_leaves,
        path=path,
        tree=index,
    )
    feature = arrays["split_feature"].astype(np.int64)
    bad = (feature < 0) | (feature >= n_features)
    if bad.any():
        raise InputError(
            f"{_where(path, index, 'split_feature')}: a node splits on feature "
            f"{int(feature[bad][0])}; expected a feature in [0, {n_features - 1}]."
        )


def check_lightgbm_text(text: str, path: str) -> None:
    """Check a LightGBM text model's structure (see the module docstring).

    Every tree section must be complete: its arrays of the lengths ``num_leaves``
    gives, children and features in range, a tree; the sections must end with
    ``end of trees`` and match the byte sizes the header's ``tree_sizes`` lists,
    which LightGBM's parser uses to find them.

    Raises
    ------
    InputError
        Naming the tree and field that is missing, short or out of range.
    """
    header_end = _TREE_LINE.search(text)
    header = _fields(text[: header_end.start()] if header_end else text)
    try:
        n_features = int(header["max_feature_idx"]) + 1
    except (KeyError, ValueError):
        raise InputError(
            f"Model file {path!r} is not a complete LightGBM text model: its header "
            "has no max_feature_idx; expected the output of Booster.save_model."
        ) from None
    end = text.find("\nend of trees")
    if header_end is None or end < 0:
        raise InputError(
            f"Model file {path!r} is not a complete LightGBM text model: "
            f"{'no tree section' if header_end is None else 'no end of trees line'}"
            " was found. The file is cut short or was edited."
        )
    tail = text[end + len("\nend of trees") :]
    if tail.strip() and "\nend of parameters" not in tail:
        raise InputError(
            f"Model file {path!r} is not a complete LightGBM text model: the "
            "sections after the trees have no end of parameters line. The file is "
            "cut short or was edited."
        )
    starts = [m.start() for m in _TREE_LINE.finditer(text, 0, end + 1)]
    numbers = [int(m.group(1)) for m in _TREE_LINE.finditer(text, 0, end + 1)]
    if numbers != list(range(len(numbers))):
        raise InputError(
            f"Model file {path!r}: the tree sections are numbered {numbers[:10]}; "
            "expected 0, 1, 2, ... The file was edited."
        )
    sizes = header.get("tree_sizes")
    if sizes is not None:
        found = [b - a for a, b in zip(starts, starts[1:] + [end + 1], strict=True)]
        try:
            listed = [int(v) for v in sizes.split()]
        except ValueError:
            listed = None
        if listed != found:
            raise InputError(
                f"Model file {path!r}: the tree sections do not have the sizes the "
                f"header's tree_sizes lists ({len(found)} sections found, "
                f"{0 if listed is None else len(listed)} listed). The file is cut "
                "short or was edited."
            )
    for index, (a, b) in enumerate(zip(starts, starts[1:] + [end + 1], strict=True)):
        _check_lightgbm_tree(text[a:b], index, n_features, path)
