"""A scikit-learn Pipeline lifted to its input columns, next to the pipeline itself.

A synthetic table of loan applicants (numbers with missing incomes, two text
columns, a boolean), a pipeline ``ColumnTransformer(SimpleImputer +
StandardScaler, OneHotEncoder(handle_unknown="ignore"), passthrough)`` +
``RandomForestClassifier(100 trees)``:

- ``to_forest(pipeline)`` and ``forest.predict`` on 100,000 raw rows against
  ``pipeline.predict`` on the same frame (predictions checked equal);
- ``feature_tweak`` per row on the pipeline (raw frame, categorical columns
  searched over their categories) against ``feature_tweak`` of the same forest
  on the encoded matrix (``pipeline[:-1].transform``), as one would without
  the lifting; the lifting should cost at most 1.5 times.  The lifted search
  covers every category of every categorical column (a candidate takes the
  cheapest category its leaf admits) and confirms its answers with the
  pipeline's own ``predict``; the encoded search moves one-hot columns freely
  and checks with the forest's ``predict`` (given the bare Forest), or with the
  scikit-learn forest's own ``predict`` (given ``pipeline[-1]``, as the lifted
  search is checked with the pipeline's: a fixed cost of a few tens of
  milliseconds per call for 100 trees).  Both are timed one call per row and
  all rows in one call.  The goal is on the ratio to the scikit-learn forest,
  where both sides confirm their answers with their source model's own
  ``predict``; the ratio to the bare Forest is printed too (one call per row,
  it holds the pipeline's own ``transform`` and ``predict``, which no search
  can avoid).  The searches are timed in turn, best of three rounds, so that a
  burst of load on a shared machine hits them alike.

Run: ``python benchmarks/bench_pipelines.py [--rows 100000] [--tweak-rows 20]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import treelens


def applicants(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    employment = rng.choice(["salaried", "self-employed", "unemployed", "retired"], n)
    region = rng.choice(["north", "south", "east", "west", "centre"], n)
    income = rng.normal(50_000, 15_000, n)
    age = rng.integers(18, 80, n)
    owner = rng.random(n) < 0.5
    signal = (
        (income - 50_000) / 15_000
        - 1.5 * (employment == "unemployed")
        + 0.7 * (employment == "self-employed")
        + 0.3 * (region == "north")
        + 0.5 * owner
        + (age - 50) / 30
        + 0.3 * rng.normal(size=n)
    )
    income[rng.random(n) < 0.05] = np.nan
    X = pd.DataFrame(
        {
            "income": income,
            "age": age,
            "employment": employment.astype(object),
            "region": region.astype(object),
            "owner": owner,
        }
    )
    return X, (signal > 0).astype(int)


def preprocessing() -> ColumnTransformer:
    """The pipeline's preprocessing: imputed and scaled income, one-hot
    categories, the other columns passed through."""
    return ColumnTransformer(
        [
            ("income", make_pipeline(SimpleImputer(), StandardScaler()), ["income"]),
            (
                "categories",
                OneHotEncoder(handle_unknown="ignore"),
                ["employment", "region"],
            ),
        ],
        remainder="passthrough",
    )


def best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def best_in_turn(functions: dict, repeats: int = 3) -> dict:
    """Best time of each function, the functions run in turn ``repeats`` times."""
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, function in functions.items():
            best[name] = min(best[name], best_of(function, repeats=1))
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--tweak-rows", type=int, default=20)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    X_train, y_train = applicants(5_000, seed=0)
    X, _ = applicants(args.rows, seed=1)
    columns = preprocessing()
    forest_model = RandomForestClassifier(
        args.trees, max_depth=8, random_state=0, n_jobs=1
    )
    pipeline = make_pipeline(columns, forest_model).fit(X_train, y_train)
    build = best_of(lambda: treelens.to_forest(pipeline), repeats=1)
    forest = treelens.to_forest(pipeline)
    ours = best_of(lambda: forest.predict(X))
    theirs = best_of(lambda: pipeline.predict(X))
    assert (forest.predict(X) == pipeline.predict(X)).all()
    print(f"{args.trees}-tree pipeline, {args.rows:,} rows")
    print(f"  to_forest(pipeline)            {build:8.3f} s")
    print(f"  lifted forest.predict          {ours:8.3f} s")
    print(f"  pipeline.predict               {theirs:8.3f} s")
    print(f"  ratio predict lifted/pipeline  {ours / theirs:8.2f}")

    declined = X.iloc[np.flatnonzero(pipeline.predict(X) == 0)[: args.tweak_rows]]
    declined = declined.dropna()
    encoded = np.asarray(pipeline[:-1].transform(declined), dtype=np.float64)
    final = treelens.to_forest(pipeline[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        treelens.feature_tweak(pipeline, declined.iloc[:1], target=1, cost="l1")
        treelens.feature_tweak(final, encoded[:1], target=1, cost="l1")

        def lifted() -> None:
            for i in range(len(declined)):
                treelens.feature_tweak(
                    pipeline, declined.iloc[i : i + 1], target=1, cost="l1"
                )

        def plain() -> None:
            for i in range(len(encoded)):
                treelens.feature_tweak(final, encoded[i : i + 1], target=1, cost="l1")

        def estimator() -> None:
            for i in range(len(encoded)):
                treelens.feature_tweak(
                    pipeline[-1], encoded[i : i + 1], target=1, cost="l1"
                )

        n = len(declined)
        per_row = best_in_turn(
            {"lifted": lifted, "plain": plain, "estimator": estimator}
        )
        t_lifted, t_plain, t_estimator = (per_row[k] / n for k in per_row)
        batch = best_in_turn(
            {
                "lifted": lambda: treelens.feature_tweak(
                    pipeline, declined, target=1, cost="l1"
                ),
                "plain": lambda: treelens.feature_tweak(
                    final, encoded, target=1, cost="l1"
                ),
                "estimator": lambda: treelens.feature_tweak(
                    pipeline[-1], encoded, target=1, cost="l1"
                ),
            }
        )
        b_lifted, b_plain, b_estimator = (batch[k] / n for k in batch)
        found = treelens.feature_tweak(pipeline, declined, target=1, cost="l1")
    goal = "(goal <= 1.5)"
    print(f"feature_tweak per row ({n} declined rows, l1)")
    print(f"  on the pipeline (raw frame)    {t_lifted * 1000:8.1f} ms")
    print(f"  encoded, the forest estimator  {t_estimator * 1000:8.1f} ms")
    print(f"  ratio lifted/estimator         {t_lifted / t_estimator:8.2f}  {goal}")
    print(f"  encoded, the bare Forest       {t_plain * 1000:8.1f} ms")
    print(f"  ratio lifted/bare Forest       {t_lifted / t_plain:8.2f}")
    print(f"feature_tweak of all {n} rows in one call, per row")
    print(f"  on the pipeline (raw frame)    {b_lifted * 1000:8.1f} ms")
    print(f"  encoded, the forest estimator  {b_estimator * 1000:8.1f} ms")
    print(f"  ratio lifted/estimator         {b_lifted / b_estimator:8.2f}  {goal}")
    print(f"  encoded, the bare Forest       {b_plain * 1000:8.1f} ms")
    print(f"  ratio lifted/bare Forest       {b_lifted / b_plain:8.2f}")
    print(f"  found on the pipeline          {int(found.found_.sum())}/{n}")


if __name__ == "__main__":
    main()
