"""Actionability constraints on counterfactuals.

:class:`Constraints` is what users write (features by name or position);
:meth:`Constraints.resolve` checks it against a :class:`Forest` once and returns
:class:`ResolvedConstraints`, plain per-feature arrays that
:func:`~treelens.feature_tweak` and :func:`~treelens.optimal_counterfactual` both
read:

- :meth:`ResolvedConstraints.feasible_intervals` gives, for each row ``x``, the
  closed interval ``[lo, hi]`` every feature may take (bounds, direction,
  immutability, integrality rounded inwards);
- :meth:`ResolvedConstraints.choose_one_hot` picks the hot member of each one-hot
  group for many candidates at once;
- :meth:`ResolvedConstraints.satisfied` checks finished rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError

if TYPE_CHECKING:
    from .._core._forest import Forest

__all__ = ["CONSTRAINT_KEYWORDS", "Constraints", "ResolvedConstraints"]

#: The keyword arguments of :class:`Constraints`, which are also its attributes.
CONSTRAINT_KEYWORDS = (
    "immutable",
    "increase_only",
    "decrease_only",
    "bounds",
    "integer",
    "one_hot",
    "allowed",
)

FeatureKey = str | int


class Constraints:
    """What a counterfactual may change, and how.

    Features are given by name or by position.  Constraints are applied while
    candidates are built, never as a filter afterwards.

    Parameters
    ----------
    immutable : iterable of str or int, default=()
        Features that must keep their value.
    increase_only : iterable of str or int, default=()
        Features that may only grow (``x'[j] >= x[j]``).
    decrease_only : iterable of str or int, default=()
        Features that may only shrink (``x'[j] <= x[j]``).
    bounds : mapping of feature to (low, high), optional
        Closed range every counterfactual value must lie in; ``None`` for an open
        side.
    integer : iterable of str or int, default=()
        Features whose counterfactual values must be whole numbers (the rows
        given must hold whole numbers there too).
    one_hot : iterable of iterables of str or int, default=()
        Groups of 0/1 features of which exactly one is 1, in the rows given and in
        every counterfactual.  A group is either wholly immutable or not at all.
    allowed : mapping of column to iterable of categories, optional
        Categorical columns only (a pipeline's or a model's categorical
        columns): the categories a counterfactual may hold there.  A row whose
        category is not allowed must change it.

    Raises
    ------
    InputError
        When a list is given as a lone name or number (``immutable="age"``,
        which would read as the features ``'a'``, ``'g'``, ``'e'``), or a
        one-hot group as a lone name.  Features are checked against the model
        by :meth:`resolve`.

    Examples
    --------
    >>> from treelens import Constraints
    >>> Constraints(immutable=["age"], bounds={"income": (0, None)})
    Constraints(immutable=['age'], bounds={'income': (0, None)})
    """

    def __init__(
        self,
        *,
        immutable: Iterable[FeatureKey] = (),
        increase_only: Iterable[FeatureKey] = (),
        decrease_only: Iterable[FeatureKey] = (),
        bounds: Mapping[FeatureKey, Sequence[float | None]] | None = None,
        integer: Iterable[FeatureKey] = (),
        one_hot: Iterable[Iterable[FeatureKey]] = (),
        allowed: Mapping[FeatureKey, Iterable[object]] | None = None,
    ) -> None:
        self.immutable = _features("immutable", immutable)
        self.increase_only = _features("increase_only", increase_only)
        self.decrease_only = _features("decrease_only", decrease_only)
        self.bounds = dict(bounds or {})
        self.integer = _features("integer", integer)
        groups = _features("one_hot", one_hot, _GROUPS)
        if any(
            isinstance(g, (str, bytes)) or not isinstance(g, Iterable) for g in groups
        ):
            raise InputError(
                f"`one_hot` of Constraints must be {_GROUPS} (one group: "
                f"one_hot=[['a', 'b']]); got {one_hot!r}."
            )
        self.one_hot = [list(group) for group in groups]
        self.allowed = {
            key: _features(f"allowed[{key!r}]", values, "a list of categories")
            for key, values in (allowed or {}).items()
        }

    def __repr__(self) -> str:
        parts = [
            f"{name}={getattr(self, name)!r}"
            for name in CONSTRAINT_KEYWORDS
            if getattr(self, name)
        ]
        return f"Constraints({', '.join(parts)})"

    def resolve(self, forest: Forest) -> ResolvedConstraints:
        """Check the constraints against ``forest`` and turn them into arrays.

        Raises
        ------
        InputError
            On unknown features, a feature both increase-only and decrease-only,
            bounds with low > high or that leave an integer or one-hot feature no
            value, a feature in two one-hot groups, a one-hot group of fewer than
            two features, and an immutable feature in a one-hot group whose other
            members may change (a change of category would have to change it).
        """
        from .._core._validation import feature_index

        n = forest.n_features
        names = forest.feature_names
        for key in self.allowed:
            j = feature_index(forest, key)
            if not forest.features[j].is_categorical:
                raise InputError(
                    f"`allowed` applies to categorical columns; {names[j]!r} is "
                    f"{forest.features[j].kind}."
                )

        def mask(keys: Iterable[FeatureKey]) -> NDArray[np.bool_]:
            out = np.zeros(n, dtype=bool)
            for key in keys:
                out[feature_index(forest, key)] = True
            return out

        immutable = mask(self.immutable)
        increase = mask(self.increase_only)
        decrease = mask(self.decrease_only)
        integer = mask(self.integer)
        for first, second, a, b in (
            ("increase-only", "decrease-only", increase, decrease),
            ("immutable", "increase-only", immutable, increase),
            ("immutable", "decrease-only", immutable, decrease),
        ):
            both = np.flatnonzero(a & b)
            if both.size:
                raise InputError(
                    f"Contradictory constraints on feature {names[both[0]]!r}: it is "
                    f"declared both {first} and {second}; expected at most one of "
                    "immutable, increase-only and decrease-only."
                )
        lower = np.full(n, -np.inf)
        upper = np.full(n, np.inf)
        for key, pair in self.bounds.items():
            j = feature_index(forest, key)
            try:
                lo_raw, hi_raw = pair
                lo = -np.inf if lo_raw is None else float(lo_raw)
                hi = np.inf if hi_raw is None else float(hi_raw)
            except (TypeError, ValueError) as exc:
                raise InputError(
                    f"Bounds of feature {names[j]!r} must be a pair (low, high) of "
                    f"numbers or None; got {pair!r}."
                ) from exc
            if np.isnan(lo) or np.isnan(hi) or lo > hi:
                raise InputError(
                    f"Contradictory bounds for feature {names[j]!r}: expected "
                    f"low <= high, got ({lo}, {hi})."
                )
            lower[j], upper[j] = max(lower[j], lo), min(upper[j], hi)
        groups: list[NDArray[np.intp]] = []
        seen = np.zeros(n, dtype=bool)
        for raw_group in self.one_hot:
            group = np.array(
                [feature_index(forest, key) for key in raw_group], dtype=np.intp
            )
            if np.unique(group).size != group.size or group.size < 2:
                raise InputError(
                    "A one-hot group must name at least two distinct features; got "
                    f"{raw_group!r}."
                )
            if seen[group].any():
                j = group[seen[group]][0]
                raise InputError(
                    f"Feature {names[j]!r} belongs to two one-hot groups; expected "
                    "each feature in at most one group."
                )
            seen[group] = True
            fixed = immutable[group]
            if fixed.any() and not fixed.all():
                j = group[fixed][0]
                raise InputError(
                    f"Feature {names[j]!r} is immutable but belongs to the one-hot "
                    f"group {[names[g] for g in group]} whose other members may "
                    "change; a change of category would have to change it. Expected "
                    "the whole group immutable or none of it."
                )
            integer[group] = True
            lower[group] = np.maximum(lower[group], 0.0)
            upper[group] = np.minimum(upper[group], 1.0)
            groups.append(group)
        empty = np.flatnonzero(integer & (np.ceil(lower) > np.floor(upper)))
        if empty.size:
            j = empty[0]
            raise InputError(
                f"Contradictory constraints on feature {names[j]!r}: it must be a "
                f"whole number{' in a one-hot group (0 or 1)' if seen[j] else ''} "
                f"within [{lower[j]}, {upper[j]}], which holds none."
            )
        return ResolvedConstraints(
            n_features=n,
            feature_names=names,
            immutable=immutable,
            increase_only=increase,
            decrease_only=decrease,
            lower=lower,
            upper=upper,
            integer=integer,
            one_hot=tuple(groups),
        )


_GROUPS = "a list of groups, each a list of features"


def _features(
    name: str, value: Any, expected: str = "a list of features (names or positions)"
) -> list[Any]:
    """``value`` as a list; a lone string or number (which ``list`` would split
    into characters or refuse) is refused, naming the argument."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        lone = isinstance(value, (str, int)) and expected != _GROUPS
        hint = f" (for one, write [{value!r}])" if lone else ""
        raise InputError(
            f"`{name}` of Constraints must be {expected}; got {value!r}{hint}."
        )
    return list(value)


@dataclass(frozen=True, eq=False)
class ResolvedConstraints:
    """Constraints as per-feature arrays, checked against one forest.

    Attributes
    ----------
    n_features : int
    feature_names : tuple of str
    immutable, increase_only, decrease_only, integer : ndarray of shape (n_features,), bool
        One-hot members are also marked ``integer``.
    lower, upper : ndarray of shape (n_features,), float64
        Closed bounds (``-inf`` / ``inf`` when open; ``[0, 1]`` at least for
        one-hot members).
    one_hot : tuple of ndarray of int
        Feature indices of each one-hot group.
    """

    n_features: int
    feature_names: tuple[str, ...]
    immutable: NDArray[np.bool_]
    increase_only: NDArray[np.bool_]
    decrease_only: NDArray[np.bool_]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    integer: NDArray[np.bool_]
    one_hot: tuple[NDArray[np.intp], ...]

    @classmethod
    def none(cls, forest: Forest) -> ResolvedConstraints:
        """No constraint at all."""
        return Constraints().resolve(forest)

    @property
    def trivial(self) -> bool:
        """Whether nothing is constrained at all."""
        return not (
            self.immutable.any()
            or self.increase_only.any()
            or self.decrease_only.any()
            or self.integer.any()
            or np.isfinite(self.lower).any()
            or np.isfinite(self.upper).any()
            or self.one_hot
        )

    @property
    def in_one_hot(self) -> NDArray[np.bool_]:
        """Mask of shape (n_features,), true for members of a one-hot group."""
        out = np.zeros(self.n_features, dtype=bool)
        for group in self.one_hot:
            out[group] = True
        return out

    def check_rows(
        self, X: NDArray[np.float64], *, labels: Sequence[Any] | None = None
    ) -> None:
        """Check that the given rows respect integrality and one-hot groups.

        ``labels`` name the rows in messages (default: their positions).

        Raises
        ------
        InputError
            If an integer feature holds a fractional value, or a one-hot group is
            not exactly one 1 and zeros.
        """
        finite = np.where(np.isnan(X), 0.0, X)
        bad = self.integer[None, :] & (finite != np.round(finite))
        if bad.any():
            r, j = np.argwhere(bad)[0]
            raise InputError(
                f"Feature {self.feature_names[j]!r} is declared integer, but row "
                f"{r if labels is None else labels[r]} holds {float(X[r, j])}; "
                "expected a whole number."
            )
        for group in self.one_hot:
            block = X[:, group]
            ok = np.isin(block, (0.0, 1.0)).all(axis=1) & (block.sum(axis=1) == 1)
            if not ok.all():
                r = int(np.flatnonzero(~ok)[0])
                raise InputError(
                    f"Row {r if labels is None else labels[r]} is not one-hot in the group "
                    f"{[self.feature_names[g] for g in group]}: expected exactly one 1 "
                    f"and zeros elsewhere, got {block[r].tolist()}."
                )

    def feasible_intervals(
        self, X: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Closed interval each feature of a counterfactual of each row may take.

        ``lo = max(bound low, x if increase-only or immutable)`` and
        ``hi = min(bound high, x if decrease-only or immutable)``; for integer
        features both ends are rounded inwards (``ceil(lo)``, ``floor(hi)``).  The
        interval is empty (``lo > hi``) when ``x`` lies outside its bounds in the
        one direction it may not move.

        Parameters
        ----------
        X : ndarray of shape (n, n_features)

        Returns
        -------
        lo, hi : ndarray of shape (n, n_features)
        """
        lo = np.broadcast_to(self.lower, X.shape).copy()
        hi = np.broadcast_to(self.upper, X.shape).copy()
        up = self.increase_only | self.immutable
        down = self.decrease_only | self.immutable
        lo[:, up] = np.maximum(lo[:, up], X[:, up])
        hi[:, down] = np.minimum(hi[:, down], X[:, down])
        lo[:, self.integer] = np.ceil(lo[:, self.integer])
        hi[:, self.integer] = np.floor(hi[:, self.integer])
        return lo, hi

    def choose_one_hot(
        self,
        x_rows: NDArray[np.float64],
        allow0: NDArray[np.bool_],
        allow1: NDArray[np.bool_],
        group: NDArray[np.intp],
        weights: NDArray[np.float64] | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Values of one one-hot group for many candidates at once.

        The current hot member is kept when the candidate allows it; otherwise the
        hot member is the allowed one of least ``weights`` (ties: first in the
        group).  A member ``m`` can be hot when it may be 1 and every other member
        may be 0.

        Parameters
        ----------
        x_rows : ndarray of shape (k, n_features)
            The original row of each candidate.
        allow0, allow1 : ndarray of shape (k, len(group)), bool
            Whether each member may be 0 / 1 in each candidate.
        group : ndarray of int
            Feature indices of the group.
        weights : ndarray of shape (n_features,), optional
            Per-feature cost weights used to prefer the cheapest member.

        Returns
        -------
        values : ndarray of shape (k, len(group))
        feasible : ndarray of shape (k,), bool
        """
        k, m = allow0.shape
        blocked0 = (~allow0).sum(axis=1, keepdims=True)
        can_be_hot = allow1 & (blocked0 - (~allow0) == 0)
        current = np.argmax(x_rows[:, group], axis=1)
        keep = can_be_hot[np.arange(k), current]
        w = (
            np.ones(m)
            if weights is None
            else np.asarray(weights, dtype=np.float64)[group]
        )
        penalty = np.where(can_be_hot, w[None, :], np.inf)
        best = np.argmin(penalty, axis=1)  # first of the least weight on ties
        hot = np.where(keep, current, best)
        feasible = can_be_hot.any(axis=1)
        values = np.zeros((k, m))
        values[np.arange(k), hot] = 1.0
        return values, feasible

    def satisfied(
        self,
        X: NDArray[np.float64],
        X_cf: NDArray[np.float64],
        *,
        atol: float = 0.0,
        missing: NDArray[np.bool_] | None = None,
    ) -> NDArray[np.bool_]:
        """Whether each counterfactual row respects every constraint.

        Parameters
        ----------
        X, X_cf : ndarray of shape (n, n_features)
            Original rows and their counterfactuals.
        missing : ndarray of shape (n, n_features), bool, optional
            Values missing in the row and kept missing: no value, so no
            bound, direction or integrality applies to them.

        Returns
        -------
        ndarray of shape (n,), bool
        """
        skip = np.zeros(X.shape, dtype=bool) if missing is None else missing
        ok = np.ones(X.shape[0], dtype=bool)
        same = (X_cf == X) | skip
        ok &= same[:, self.immutable].all(axis=1)
        up = (X_cf >= X - atol) | skip
        ok &= up[:, self.increase_only].all(axis=1)
        down = (X_cf <= X + atol) | skip
        ok &= down[:, self.decrease_only].all(axis=1)
        inside = (X_cf >= self.lower - atol) & (X_cf <= self.upper + atol)
        ok &= (inside | skip).all(axis=1)
        whole = (X_cf == np.round(X_cf)) | skip
        ok &= whole[:, self.integer].all(axis=1)
        for group in self.one_hot:
            block = X_cf[:, group]
            ok &= np.isin(block, (0.0, 1.0)).all(axis=1) & (block.sum(axis=1) == 1)
        return ok
