"""The local search's switches of one-hot groups, against groups held fixed.

On declined rows of the synthetic loan applicants of ``loans.py`` (a one-hot
employment type of three columns, inferred from the reference data) and a
random forest of 100 trees: per row, the default ``optimal_counterfactual``
with the local search switching one-hot groups (as shipped) and with the
groups held where the row has them (as before), run in turn A, B, A, B in one
process (the machine may be shared).  Reported per way: the median and total
seconds per row (the faster of each row's two runs), the seconds of the first
option's local search, how often its point is the optimum and its mean cost
over the optimum's, and the rows whose optimum changes the category.

Costs: ``"mad"`` (the default with reference data, under which a change of
category costs about 5, more than most rows' optimum) and the same weights with
the employment columns' divided by ``--category-discount`` (changes of category
about as costly as the optima); ``--options 3`` asks three options per row (the
searches of the later options hold the groups either way).

Run: ``python benchmarks/bench_one_hot.py [--rows 20] [--depth 6]
[--category-discount 10] [--options 1] [--time-limit 30] [--not-salaried]
[--verbose]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from loans import loan_table
from sklearn.ensemble import RandomForestClassifier

import treelens
from treelens._counterfactual import _optimal
from treelens._counterfactual._costs import mad_weights


@contextlib.contextmanager
def _recorded(held: bool, log: list[tuple[float, float]]) -> Iterator[None]:
    """Record each local search's (seconds, objective); with ``held``, the
    one-hot groups stay where the row has them."""
    grid_search, incumbent = _optimal._grid_search, _optimal._incumbent

    def holding(*args: Any, **kwargs: Any) -> Any:
        search = grid_search(*args, **kwargs)
        if not held:
            return search
        return dataclasses.replace(search, movable=~search.grouped)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        found, settled = incumbent(*args, **kwargs)
        value = np.inf if found is None else found[1]
        log.append((time.perf_counter() - start, value))
        return found, settled

    _optimal._grid_search, _optimal._incumbent = holding, timed
    try:
        yield
    finally:
        _optimal._grid_search, _optimal._incumbent = grid_search, incumbent


def _solve(model: Any, row: Any, held: bool, options: dict[str, Any]) -> dict:
    log: list[tuple[float, float]] = []
    with _recorded(held, log), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # feature names
        start = time.perf_counter()
        result = treelens.optimal_counterfactual(model, row, **options)
        seconds = time.perf_counter() - start
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()
    x_cf = np.asarray(result.X_cf_, dtype=float)
    employment = [c.startswith("employment") for c in row.columns]
    return {
        "seconds": seconds,
        "search": sum(s for s, _ in log),
        "start": log[0][1] if log else np.inf,
        "cost": float(result.cost_[0]),
        "proven": int((result.status_ == "optimal").sum()),
        "found": int(result.found_.sum()),
        "switch": bool(
            result.found_[0]
            and (x_cf[0, employment] != row.to_numpy()[0, employment]).any()
        ),
    }


def _row_line(per_way: dict[bool, list[dict]]) -> str:
    parts = []
    for held in (False, True):
        first = per_way[held][0]
        seconds = min(r["seconds"] for r in per_way[held])
        parts.append(
            f"{'held' if held else 'switch'} {seconds:.3f} s, start "
            f"{first['start']:.4f}, cost {first['cost']:.4f}"
        )
    return "; ".join(parts)


def run(args: argparse.Namespace, discount: float) -> None:
    X, y = loan_table(5000, seed=0)
    model = RandomForestClassifier(
        100, max_depth=args.depth, random_state=0, n_jobs=1
    ).fit(X, y)
    rows, _ = loan_table(2000, seed=1)
    declined = model.predict(rows) == 0
    if args.not_salaried:
        declined &= rows["employment_salaried"].to_numpy() == 0
    declined = rows.iloc[np.flatnonzero(declined)[: args.rows]]
    weights = mad_weights(X.to_numpy(dtype=float))
    weights[[c.startswith("employment") for c in X.columns]] /= discount
    cost: Any = "mad" if discount == 1 else {"norm": "l1", "weights": weights}
    options = {
        "target": 1,
        "reference": X,
        "cost": cost,
        "time_limit": args.time_limit,
        "n_counterfactuals": args.options,
    }
    _solve(model, declined.iloc[:1], False, options)  # the program, built once
    runs: dict[bool, list[list[dict]]] = {False: [], True: []}
    for i in range(len(declined)):
        row = declined.iloc[i : i + 1]
        per_way: dict[bool, list[dict]] = {False: [], True: []}
        for _ in range(2):
            for held in (False, True):
                per_way[held].append(_solve(model, row, held, options))
        for held in (False, True):
            runs[held].append(per_way[held])
        if args.verbose:
            print(f"    row {i}: {_row_line(per_way)}", flush=True)
    label = "mad" if discount == 1 else f"mad, categories / {discount:g}"
    kind = "declined rows not salaried" if args.not_salaried else "declined rows"
    print(
        f"100 trees, depth {args.depth}, {len(declined)} {kind}, cost "
        f"{label}, {args.options} option(s):"
    )
    optimum = np.array(
        [min(r["cost"] for r in a + b) for a, b in zip(runs[False], runs[True])]
    )
    for held in (False, True):
        best = [min(pair, key=lambda r: r["seconds"]) for pair in runs[held]]
        seconds = np.array([r["seconds"] for r in best])
        search = np.array([r["search"] for r in best])
        start = np.array([r["start"] for r in best])
        ratio = start[optimum > 0] / optimum[optimum > 0]
        exact = int(np.isclose(start, optimum, rtol=1e-9, atol=1e-12).sum())
        print(
            f"    {'groups held   ' if held else 'groups switch '}: median "
            f"{np.median(seconds):.3f} s, total {seconds.sum():.2f} s (search "
            f"{search.sum():.2f} s); start = optimum on {exact}/{len(best)}, "
            f"mean start / optimum {np.mean(ratio):.3f}; optimum changes the "
            f"category on {sum(r['switch'] for r in best)}; options found "
            f"{sum(r['found'] for r in best)}, proven {sum(r['proven'] for r in best)}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--category-discount", type=float, default=10.0)
    parser.add_argument("--options", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument(
        "--not-salaried",
        action="store_true",
        help="only rows of the two categories the model declines more often",
    )
    parser.add_argument("--verbose", action="store_true", help="print each row")
    args = parser.parse_args()
    for discount in (1.0, args.category_discount):
        run(args, discount)


if __name__ == "__main__":
    main()
