"""Groups of columns that permutation importance permutes together.

A one-hot encoded categorical feature, or a set of strongly correlated columns,
carries one piece of information spread over several columns: permuting one of
them at a time leaves the others to tell the model what was shuffled, so each
column looks unimportant.  These helpers find such groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError

__all__ = ["correlated_groups", "one_hot_groups", "resolve_groups"]

# Separators stripped from the end of a one-hot group's common name prefix.
_SEPARATORS = "_=:.[ -"


def _is_binary(column: NDArray[Any]) -> bool:
    return bool(np.all((column == 0) | (column == 1)))


def one_hot_groups(X: NDArray[Any]) -> list[list[int]]:
    """Runs of adjacent 0/1 columns with exactly one 1 in every row.

    Encoders (pandas ``get_dummies``, scikit-learn's ``OneHotEncoder``) write the
    columns of one feature next to each other.  A run starts at a 0/1 column and
    grows while the next column is 0/1 and no row has two ones; it is a group once
    every row has exactly one 1 (all-zero columns right after it, categories absent
    from the data, join it).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    list of list of int
        Column indices of each group of two columns or more.
    """
    X = np.asarray(X)
    if X.dtype.kind not in "biuf" or X.shape[0] == 0:
        return []
    n_columns = X.shape[1]
    binary = [_is_binary(X[:, j]) for j in range(n_columns)]
    groups: list[list[int]] = []
    start = 0
    while start < n_columns:
        end = _one_hot_end(X, binary, start)
        if end is None:
            start += 1
            continue
        while end + 1 < n_columns and binary[end + 1] and not X[:, end + 1].any():
            end += 1
        groups.append(list(range(start, end + 1)))
        start = end + 1
    return groups


def _one_hot_end(X: NDArray[Any], binary: list[bool], start: int) -> int | None:
    """Last column of the one-hot run starting at ``start``, or None."""
    if not binary[start]:
        return None
    total = X[:, start].astype(np.float64)
    end = start
    while end + 1 < len(binary) and binary[end + 1]:
        total = total + X[:, end + 1]
        if np.any(total > 1):
            return None
        end += 1
        if np.all(total == 1):
            return end
    return None


def correlated_groups(
    X: NDArray[Any], threshold: float, columns: Sequence[int]
) -> list[list[int]]:
    """Connected components of ``|Pearson correlation| >= threshold``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    threshold : float in (0, 1]
    columns : sequence of int
        The columns to group (constant columns never join a group).

    Returns
    -------
    list of list of int
        Components of two columns or more, each sorted.
    """
    columns = list(columns)
    if len(columns) < 2:
        return []
    values = np.asarray(X[:, columns], dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.corrcoef(values, rowvar=False)
    linked = np.nan_to_num(np.abs(corr)) >= threshold
    parent = list(range(len(columns)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(linked, 1))):
        parent[find(int(i))] = find(int(j))
    components: dict[int, list[int]] = {}
    for i in range(len(columns)):
        components.setdefault(find(i), []).append(columns[i])
    return [sorted(c) for c in components.values() if len(c) > 1]


def _common_name(names: list[str]) -> str:
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    # Up to the last separator: "color_red", "color_rose" -> "color", while
    # "x1", "x2" share no name ("x1+x2").
    cut = max(prefix.rfind(c) for c in _SEPARATORS)
    prefix = prefix[:cut].rstrip(_SEPARATORS) if cut > 0 else ""
    return prefix if prefix else "+".join(names)


def resolve_groups(
    X: NDArray[Any],
    names: list[str],
    groups: Mapping[str, Sequence[Any]] | Sequence[Sequence[Any]] | None,
    *,
    one_hot: bool,
    correlation_threshold: float | None,
    searchable: Sequence[bool] | None = None,
) -> dict[str, list[int]]:
    """Name -> column indices of every group, covering each column once.

    Groups given by the user come first; then, among the other columns, one-hot
    runs (``one_hot``), then correlated components (``correlation_threshold``);
    every column left is a group of its own, named after it.  Only the columns
    ``searchable`` marks (default: all) join found groups: a categorical
    column's codes are labels, not numbers to correlate.
    """
    allowed = [True] * len(names) if searchable is None else list(searchable)
    position = {name: j for j, name in enumerate(names)}
    taken: dict[int, str] = {}
    out: dict[str, list[int]] = {}

    def add(name: str, cols: list[int]) -> None:
        while name in out or (name in position and position[name] not in cols):
            name += "'"
        out[name] = cols
        for c in cols:
            taken[c] = name

    for name, cols in _user_groups(groups, names, position):
        clash = [names[c] for c in cols if c in taken]
        if clash:
            raise InputError(
                f"Each column may be in one group only; {clash} are in group "
                f"{taken[position[clash[0]]]!r} and in group {name!r}."
            )
        add(name, cols)
    free = [j for j in range(len(names)) if j not in taken and allowed[j]]
    if one_hot:
        for cols in one_hot_groups(X[:, free]):
            cols = [free[c] for c in cols]
            add(_common_name([names[c] for c in cols]), cols)
    if correlation_threshold is not None:
        threshold = float(correlation_threshold)
        if not 0.0 < threshold <= 1.0:
            raise InputError(
                "`correlation_threshold` must be in (0, 1]; got "
                f"{correlation_threshold!r}."
            )
        free = [j for j in range(len(names)) if j not in taken and allowed[j]]
        for cols in correlated_groups(X, threshold, free):
            add("+".join(names[c] for c in cols), cols)
    for j in range(len(names)):
        if j not in taken:
            out[names[j]] = [j]
    return dict(sorted(out.items(), key=lambda item: min(item[1])))


def _user_groups(
    groups: Mapping[str, Sequence[Any]] | Sequence[Sequence[Any]] | None,
    names: list[str],
    position: dict[str, int],
) -> list[tuple[str, list[int]]]:
    if groups is None:
        return []
    if isinstance(groups, Mapping):
        items = [(str(k), list(v)) for k, v in groups.items()]
    elif isinstance(groups, Sequence) and not isinstance(groups, (str, bytes)):
        items = [("", list(v)) for v in groups]
    else:
        raise InputError(
            "`groups` must map group names to columns or be a sequence of column "
            f"lists; got {type(groups).__name__}."
        )
    out = []
    for name, members in items:
        if isinstance(members, (str, bytes)) or not members:
            raise InputError(
                f"Each group must list at least one column; got {members!r}."
            )
        cols = []
        for member in members:
            if isinstance(member, (int, np.integer)) and not isinstance(member, bool):
                if not 0 <= int(member) < len(names):
                    raise InputError(
                        f"Group column index {member} is out of range; expected 0 "
                        f"to {len(names) - 1}."
                    )
                cols.append(int(member))
            elif str(member) in position:
                cols.append(position[str(member)])
            else:
                raise InputError(
                    f"Group column {member!r} is not a feature; expected one of "
                    f"{names}."
                )
        cols = sorted(set(cols))
        out.append((name or "+".join(names[c] for c in cols), cols))
    return out
