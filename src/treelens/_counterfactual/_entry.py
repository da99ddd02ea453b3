"""One entry point for counterfactuals: :func:`counterfactual`.

``method="auto"`` (the default) solves for the proven least-cost change within a
time budget per row and, when the budget runs out, returns the best change found
with its proven gap; ``"optimal"`` is the same search (:func:`optimal_counterfactual`);
``"tweak"`` is actionable feature tweaking as the paper defines it
(:func:`feature_tweak`).  Costs that are not a sum of per-feature terms (``"cosine"``,
callables) have no exact program: ``auto`` uses feature tweaking for them.
"""

from __future__ import annotations

from typing import Any, Literal

from .._exceptions import InputError
from .._types import (
    ArrayLike,
    Chunks,
    CostLike,
    EpsilonLike,
    IsolationForestLike,
    MarginLike,
    ModelLike,
    TargetLike,
)
from ._categorical import CategoryCost
from ._constraints import Constraints
from ._costs import is_separable
from ._missing import FillCost, FillMissing
from ._optimal import DEFAULT_MEMORY_BUDGET, optimal_counterfactual
from ._options import Diversity, check_options
from ._problem import CounterfactualResult
from ._tweak import feature_tweak

__all__ = ["counterfactual"]

Method = Literal["auto", "tweak", "optimal"]
_METHODS = ("auto", "tweak", "optimal")
#: Seconds per row the default search may take before it returns its best answer.
DEFAULT_TIME_LIMIT = 10.0


def counterfactual(
    model: ModelLike,
    X: ArrayLike | Chunks,
    *,
    target: TargetLike,
    method: Method = "auto",
    cost: CostLike = "auto",
    epsilon: EpsilonLike = 0.0,
    margin: MarginLike = None,
    constraints: Constraints | None = None,
    reference: ArrayLike | None = None,
    infer: bool | tuple[str, ...] = True,
    time_limit: float = DEFAULT_TIME_LIMIT,
    n_counterfactuals: int = 1,
    diversity: Diversity = "moves",
    min_leaf_samples: int | None = None,
    isolation_forest: IsolationForestLike = None,
    max_anomaly_score: float | None = None,
    mode: Literal["minimal", "paper"] = "minimal",
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: bool = False,
    category_cost: CategoryCost = None,
    fill_missing: FillMissing = False,
    fill_cost: FillCost = None,
) -> CounterfactualResult:
    """Counterfactuals: the least-cost changes that give each row the target.

    Parameters
    ----------
    model : fitted estimator or Forest
        Any model :func:`~treelens.to_forest` reads.
    X : array-like of shape (n_samples, n_features)
        Rows to explain (one row may be 1-D), or an iterable of chunks; for a
        pipeline or a model with categorical columns, the DataFrame it takes.
        Rows given as a DataFrame that names the model's columns give ``X_cf_``
        as a DataFrame in them (categories as labels).
    target : class label, "other", (low, high), "inlier" or "outlier"
        A class (or ``"other"``); a range ``low < high`` of a regressor's
        prediction (``None``: open); ``"inlier"``/``"outlier"`` (IsolationForest).
    method : {"auto", "tweak", "optimal"}, default="auto"
        ``"auto"``: the proven least-cost change, or when ``time_limit`` stops
        the search first, the best change found with its proven gap
        (``status_ == "time_limit"``, ``gap_``); feature tweaking for costs
        that are not separable.  ``"optimal"``: :func:`optimal_counterfactual`
        (refuses costs that are not separable).  ``"tweak"``:
        :func:`feature_tweak` (Tolomei et al., 2017), fast but often finds
        nothing or a costlier change.
    cost : str, array-like, mapping or callable, default="auto"
        ``"auto"``: L1 in median absolute deviations (``"mad"``) when
        ``reference`` is given, else ``"l1"``; any cost of
        :func:`feature_tweak`.  The result's ``cost_name_`` says which.
    epsilon : float, array-like or "auto", default=0.0
        How far past a threshold a moved value lands; ``0``: as close as the
        model's arithmetic allows (see :func:`optimal_counterfactual`).
    margin : float, array-like or Margin, optional
        A robustness margin (:class:`~treelens.Margin`), sought also for rows
        already at the target (``at_target_``); not for ``method="tweak"``.
    constraints : Constraints, optional
    reference : array-like of shape (n_reference, n_features), optional
        Typically the training set: it makes the default cost scale-free.
    infer : bool or tuple of {"integer", "flags", "one_hot"}, default=True
        Constraints read off ``reference`` and the rows (whole numbers stay
        whole, 0/1 flags 0 or 1, adjacent flags with one 1 per row move as a
        one-hot group), and off the rows' dtypes even without it (bool: flags,
        integer: whole; a DataFrame's per column, an array's for all), added to
        ``constraints``, reported in ``inferred_``.  ``False``: off; a tuple: kinds.
    time_limit : float, default=10.0
        Seconds per row (and option) for ``"auto"`` and ``"optimal"``.
    n_counterfactuals : int, default=1
        Options per row, each differing from the earlier ones and proven
        least-cost given them (see :func:`optimal_counterfactual`); the result
        holds one entry per row and option (``row_``, ``option_``).  Needs the
        exact search.
    diversity : {"moves", "features"}, default="moves"
        How options differ (see :func:`optimal_counterfactual`).
    min_leaf_samples : int, optional
        Every reached leaf holds at least this many rows (of ``reference``,
        else the stored training counts); needs the exact search.
    isolation_forest : IsolationForest or Pipeline ending in one, optional
        Fitted on the model's columns (typically on ``reference``; for a
        DataFrame, on some numeric columns, or a Pipeline with the model's
        preprocessing): the anomaly score ``-score_samples(x')`` stays at most
        ``max_anomaly_score`` (``anomaly_score_``); needs the exact search.
    max_anomaly_score : float, optional
        In ``(0, 1]``; by default ``-isolation_forest.offset_`` (the
        IsolationForest's ``predict`` calls the counterfactual an inlier).
    mode : {"minimal", "paper"}, default="minimal"
        Candidates of ``"tweak"`` (see :func:`feature_tweak`); the exact search
        refuses ``"paper"``.
    memory_budget : int, default=2**30
    progress : bool, default=False
    category_cost : float, mapping or None, default=None
        Cost of a change of category, added to the numeric cost: 1 per changed
        categorical column (None), a number, or per column a number or a table
        of ``(from, to)`` costs (see :func:`feature_tweak`).
    fill_missing : bool or list of str or int, default=False
    fill_cost : float, mapping or None, default=None
        Missing values that may be filled and the price of each, as
        :func:`~treelens.feature_tweak`; searched kept and filled (one solve
        each), so the answer stays optimal over both.

    Returns
    -------
    CounterfactualResult
        ``method_`` names the search that ran; ``status_`` and ``gap_`` are
        set for the exact search.

    Raises
    ------
    InputError
        On an unknown ``method``, a margin with ``method="tweak"``, a ``mode``
        other than ``"minimal"`` with the exact search, and every bad input of
        the searches.

    See Also
    --------
    optimal_counterfactual : The exact search with all its options.
    feature_tweak : The paper's heuristic.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from treelens import counterfactual
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
    >>> model = model.fit(X, y)
    >>> result = counterfactual(model, X[:2], target=2, reference=X)
    >>> result.status_.tolist(), result.cost_name_, model.predict(result.X_cf_).tolist()
    (['optimal', 'optimal'], 'mad', [2, 2])
    """
    exact_search = _check_call(method, mode, cost, n_counterfactuals, diversity)
    shared: dict[str, Any] = {"target": target, "cost": cost, "epsilon": epsilon}
    shared.update(constraints=constraints, reference=reference, infer=infer)
    shared.update(memory_budget=memory_budget, progress=progress)
    shared.update(category_cost=category_cost)
    shared.update(fill_missing=fill_missing, fill_cost=fill_cost)
    exact: dict[str, Any] = {
        "margin": margin,
        "n_counterfactuals": n_counterfactuals,
        "min_leaf_samples": min_leaf_samples,
        "isolation_forest": isolation_forest,
        "max_anomaly_score": max_anomaly_score,
    }
    if not exact_search:
        _refuse_exact_options(exact, method, cost)
        return feature_tweak(model, X, mode=mode, **shared)
    return optimal_counterfactual(
        model, X, time_limit=time_limit, diversity=diversity, **shared, **exact
    )


def _check_call(
    method: Any, mode: Any, cost: Any, n_counterfactuals: Any, diversity: Any
) -> bool:
    """Check the options of :func:`counterfactual`; whether the exact search runs."""
    if method not in _METHODS:
        raise InputError(f"`method` must be one of {list(_METHODS)}; got {method!r}.")
    check_options(n_counterfactuals, diversity)
    exact = not (method == "tweak" or (method == "auto" and not is_separable(cost)))
    if exact and mode != "minimal":
        raise InputError(
            "`mode` chooses feature tweaking's candidates; expected it with "
            f"method='tweak' (or a cost that is not separable), got mode={mode!r} "
            f"with method={method!r} and cost={cost!r}, the exact search."
        )
    return exact


def _refuse_exact_options(options: dict[str, Any], method: str, cost: Any) -> None:
    """Options of the exact search given to feature tweaking are refused."""
    for name, value in options.items():
        given = value != 1 if name == "n_counterfactuals" else value is not None
        if given:
            raise InputError(
                f"`{name}` needs the exact search (method='auto' or 'optimal' "
                f"with a separable cost); got method={method!r}, cost={cost!r}."
            )
