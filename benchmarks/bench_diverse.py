"""Several different counterfactuals per row against one.

For declined rows of a 100-tree, depth-6 random forest on standardized
``load_breast_cancer`` (target class 1, L1 cost): the time per row of
``n_counterfactuals=3`` (each option proven optimal given the earlier ones) and of
one counterfactual, their ratio, how many options were proven, and the cost of
the second and third options against the first.

The same on the lifted pipeline of ``bench_pipelines.py`` (synthetic loan
applicants: numbers with missing incomes, two text columns, a boolean;
``OneHotEncoder`` + a random forest), searched in the input's columns over
every combination of categories: ``n_counterfactuals=3`` against one (the aim:
at most 4 times), every option confirmed with the pipeline's own ``predict``.

Run: ``python benchmarks/bench_diverse.py [--rows 10] [--time-limit 30]
[--pipeline-rows 5] [--pipeline-trees 50]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.preprocessing import StandardScaler

import treelens
from treelens._counterfactual._milp._program import forest_program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--diversity", default="moves")
    parser.add_argument("--pipeline-rows", type=int, default=5)
    parser.add_argument("--pipeline-trees", type=int, default=50)
    parser.add_argument("--pipeline-depth", type=int, default=6)
    args = parser.parse_args()
    numeric(args)
    pipeline(args)


def numeric(args: argparse.Namespace) -> None:
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = RandomForestClassifier(
        n_estimators=100, max_depth=6, random_state=0, n_jobs=1
    ).fit(X, y)
    forest = treelens.to_forest(model)
    forest_program(forest)
    declined = np.flatnonzero(model.predict(X) == 0)[: args.rows]
    common = {"target": 1, "cost": "l1", "time_limit": args.time_limit}
    one_times, three_times, proven, ratios = [], [], 0, []
    for i in declined:
        start = time.perf_counter()
        treelens.optimal_counterfactual(forest, X[i : i + 1], **common)
        one_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        three = treelens.optimal_counterfactual(
            forest,
            X[i : i + 1],
            n_counterfactuals=3,
            diversity=args.diversity,
            **common,
        )
        three_times.append(time.perf_counter() - start)
        proven += int((three.status_ == "optimal").sum())
        assert (model.predict(three.X_cf_[three.found_]) == 1).all()
        if three.found_.all():
            ratios.append(three.cost_[1:] / three.cost_[0])
    one, three = np.array(one_times), np.array(three_times)
    print(
        f"100 trees, depth 6, {len(declined)} rows, diversity={args.diversity!r}: "
        f"one counterfactual median {np.median(one):.2f} s (p90 "
        f"{np.percentile(one, 90):.2f} s); three options median {np.median(three):.2f} s "
        f"(p90 {np.percentile(three, 90):.2f} s); median ratio per row "
        f"{np.median(three / one):.2f}; options proven {proven}/{3 * len(declined)}; "
        f"mean cost of options 2 and 3 / option 1: "
        f"{np.round(np.mean(ratios, axis=0), 3).tolist() if ratios else 'n/a'}"
    )


def pipeline(args: argparse.Namespace) -> None:
    from bench_pipelines import applicants, preprocessing
    from sklearn.pipeline import make_pipeline

    X_train, y_train = applicants(5_000, seed=0)
    X, _ = applicants(2_000, seed=1)
    columns = preprocessing()
    forest_model = RandomForestClassifier(
        args.pipeline_trees, max_depth=args.pipeline_depth, random_state=0, n_jobs=1
    )
    model = make_pipeline(columns, forest_model).fit(X_train, y_train)
    declined = X.iloc[np.flatnonzero(model.predict(X) == 0)[: args.pipeline_rows]]
    common = {"target": 1, "reference": X_train, "time_limit": args.time_limit}
    one_times, three_times, proven, found = [], [], 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # feature names
        treelens.optimal_counterfactual(model, declined.iloc[:1], **common)  # warm-up
        for i in range(len(declined)):
            row = declined.iloc[i : i + 1]
            start = time.perf_counter()
            treelens.optimal_counterfactual(model, row, **common)
            one_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            three = treelens.optimal_counterfactual(
                model, row, n_counterfactuals=3, diversity=args.diversity, **common
            )
            three_times.append(time.perf_counter() - start)
            proven += int((three.status_ == "optimal").sum())
            found += int(three.found_.sum())
            assert (model.predict(three.X_cf_[three.found_]) == 1).all()
    one, three_t = np.array(one_times), np.array(three_times)
    print(
        f"lifted pipeline ({args.pipeline_trees} trees, depth {args.pipeline_depth}, "
        f"4 x 5 categories), {len(declined)} rows, cost 'mad': one counterfactual "
        f"median {np.median(one):.2f} s; three options median {np.median(three_t):.2f} "
        f"s; ratio of medians {np.median(three_t) / np.median(one):.2f} (aim <= 4); "
        f"median ratio per row {np.median(three_t / one):.2f}; options found {found}, "
        f"proven {proven}/{3 * len(declined)}"
    )


if __name__ == "__main__":
    main()
