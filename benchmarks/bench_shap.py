"""TreeSHAP: treelens against shap on the same models and rows.

Prints, per model, the seconds of shap's ``TreeExplainer`` and of
``treelens.shap_values`` (path-dependent, interventional with 100 background
rows, interaction values), their ratio and the largest elementwise difference,
single-threaded and then with all cores (shap's C++ is single-threaded per
call; ``n_jobs`` is not an option of either, so "all cores" means the BLAS and
OpenMP thread pools left at their defaults), and the peak memory of each on the
deep regressor (growth of the resident set of a forked process).  Times are the best of ``--repeat`` runs, both timed end to end
(reading the model included).

Models: a 100-tree full-depth random forest, 100 extra trees, 100-stage
gradient boosting and a 100-tree ``IsolationForest`` on breast cancer (1,000 rows
drawn from it; shap explains the isolation forest's mean path length, treelens
the raw score ``-log2(-score_samples)``, the same values over ``c(max_samples)``,
compared so scaled; shap's interventional values of it do not add up to its
output, so that mode is not compared there), and a 100-tree
full-depth ``RandomForestRegressor`` fitted on ``make_regression(n_samples=20000,
n_features=20, random_state=0)`` (``--deep-rows``, 500 by default; shap is timed
on ``--deep-shap-rows`` of them and scaled, saying so).

Run: ``python benchmarks/bench_shap.py [--models rf,et,gb,iso,deep] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np


def _threads(n: int | None) -> None:
    from threadpoolctl import threadpool_limits

    global _LIMIT
    _LIMIT = threadpool_limits(limits=n)


_LIMIT = None


def _best(function, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = function()
        best = min(best, time.perf_counter() - start)
    return best, out


def _models(names, deep_rows=500):
    from sklearn.datasets import load_breast_cancer, make_regression
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        IsolationForest,
        RandomForestClassifier,
        RandomForestRegressor,
    )

    X, y = load_breast_cancer(return_X_y=True)
    rows = X[np.random.default_rng(0).integers(0, len(X), 1000)]
    background = X[np.random.default_rng(1).choice(len(X), 100, replace=False)]
    factories = {
        "rf": ("100-tree random forest (breast cancer)", RandomForestClassifier, {}),
        "et": ("100 extra trees (breast cancer)", ExtraTreesClassifier, {}),
        "gb": (
            "100-stage gradient boosting (breast cancer)",
            GradientBoostingClassifier,
            {},
        ),
    }
    for name in names:
        if name == "deep":
            Xd, yd = make_regression(n_samples=20000, n_features=20, random_state=0)
            model = RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=-1)
            model.fit(Xd, yd)
            rows_d = Xd[
                np.random.default_rng(0).choice(len(Xd), deep_rows, replace=False)
            ]
            bg_d = Xd[np.random.default_rng(1).choice(len(Xd), 100, replace=False)]
            yield (
                "deep",
                "100-tree full-depth regressor (make_regression 20000x20)",
                model,
                rows_d,
                bg_d,
            )
            continue
        if name == "iso":
            model = IsolationForest(n_estimators=100, random_state=0).fit(X)
            label = "100-tree isolation forest (breast cancer)"
            yield name, label, model, rows, background
            continue
        label, cls, params = factories[name]
        if cls is GradientBoostingClassifier:
            model = cls(n_estimators=100, random_state=0, **params).fit(X, y)
        else:
            model = cls(n_estimators=100, random_state=0, n_jobs=1, **params).fit(X, y)
        yield name, label, model, rows, background


def _shap_path(model, X):
    import shap

    return np.asarray(shap.TreeExplainer(model).shap_values(X, check_additivity=False))


def _shap_interventional(model, X, background):
    import shap

    explainer = shap.TreeExplainer(
        model, data=background, feature_perturbation="interventional"
    )
    return np.asarray(explainer.shap_values(X, check_additivity=False))


def _shap_interactions(model, X):
    import shap

    return np.asarray(shap.TreeExplainer(model).shap_interaction_values(X))


def _additivity(result, model, X):
    import treelens

    forest = treelens.to_forest(model)
    if forest.kind == "boosting":
        output = forest.raw_predict(X)
    elif forest.is_classifier:
        output = forest.predict_proba(X)
    else:
        output = forest.predict(X)[:, None]
    values = result.values_
    if values.ndim == 2:
        values = values[..., None]
    total = np.asarray(result.expected_value_).reshape(-1) + values.sum(axis=1)
    return float(np.abs(total - output).max())


def _peak_child(function, queue):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    function()
    queue.put(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)


def _peak(function):
    """Growth of the peak resident memory while ``function`` runs, in bytes,
    measured in a forked child (so native allocations count too)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_peak_child, args=(function, queue))
    child.start()
    grown = queue.get()
    child.join()
    return grown * 1024


def run(names, repeat, deep_shap_rows, threads_label, deep_rows=500):
    lines: list[str] = []
    for key, label, model, rows, background in _models(names, deep_rows):
        lines += _compare(
            key, label, model, rows, background, repeat, deep_shap_rows, threads_label
        )
    return lines


def _compare(
    key, label, model, rows, background, repeat, deep_shap_rows, threads_label
):
    import treelens

    lines: list[str] = []

    def emit(text):
        print(text, flush=True)
        lines.append(text)

    n = rows.shape[0]
    # shap explains an isolation forest's mean path length: c(max_samples) times
    # treelens' raw score.
    unit = 1.0
    if key == "iso":
        from treelens._adapters._isolation import average_path_length

        unit = float(average_path_length(np.array([model.max_samples_]))[0])
    shap_rows = rows[:deep_shap_rows] if key == "deep" else rows
    scale = n / shap_rows.shape[0]
    t_ours, ours = _best(lambda: treelens.shap_values(model, rows), repeat)
    t_shap, theirs = _best(
        lambda: _shap_path(model, shap_rows), 1 if key == "deep" else repeat
    )
    t_shap *= scale
    diff = np.abs(
        theirs.reshape(-1, *ours.values_.shape[1:]) / unit
        - ours.values_[: shap_rows.shape[0]]
    ).max()
    note = f" (shap on {shap_rows.shape[0]} rows, scaled)" if scale != 1 else ""
    emit(
        f"[{threads_label}] {label}, {n} rows{note}\n"
        f"  path-dependent: shap {t_shap:8.3f} s  treelens {t_ours:8.3f} s  "
        f"speed-up {t_shap / t_ours:6.2f}x  max |diff| {diff:.1e}  "
        f"additivity {_additivity(ours, model, rows):.1e}"
    )
    if key == "deep":
        emit(
            "  interventional: not run on the deep regressor (the per-leaf "
            "background tables of 1.26 million leaves take too long on this machine)"
        )
    elif key == "iso":
        emit("  interventional: not compared (shap's do not add up to the output)")
    else:
        t_int, inter = _best(
            lambda: treelens.shap_values(
                model, rows, method="interventional", background=background
            ),
            repeat,
        )
        # shap's interventional values take long: timed on 200 rows, scaled.
        few = rows[:200]
        t_shap_int, theirs = _best(
            lambda: _shap_interventional(model, few, background), 1
        )
        t_shap_int *= n / few.shape[0]
        diff = np.abs(
            theirs.reshape(-1, *inter.values_.shape[1:]) - inter.values_[:200]
        ).max()
        emit(
            f"  interventional (100 background rows; shap on 200 rows, scaled): "
            f"shap {t_shap_int:8.3f} s  treelens {t_int:8.3f} s  speed-up "
            f"{t_shap_int / t_int:6.2f}x  treelens/path {t_int / t_ours:5.2f}  "
            f"max |diff| {diff:.1e}  additivity {_additivity(inter, model, rows):.1e}"
        )
    if key != "deep":
        inter_rows = rows[:200]
        t_pair, pairs = _best(
            lambda: treelens.shap_interaction_values(model, inter_rows), 1
        )
        t_shap_pair, theirs = _best(lambda: _shap_interactions(model, inter_rows), 1)
        t_path200, _ = _best(lambda: treelens.shap_values(model, inter_rows), repeat)
        diff = np.abs(theirs.reshape(pairs.values_.shape) / unit - pairs.values_).max()
        emit(
            f"  interactions (200 rows): shap {t_shap_pair:8.3f} s  treelens "
            f"{t_pair:8.3f} s  speed-up {t_shap_pair / t_pair:6.2f}x  "
            f"treelens/values {t_pair / t_path200:5.2f}  max |diff| {diff:.1e}"
        )
    else:
        few = rows[:deep_shap_rows]
        peak_ours = _peak(lambda: treelens.shap_values(model, few))
        peak_shap = _peak(lambda: _shap_path(model, few))
        emit(
            f"  peak memory growth ({few.shape[0]} rows, resident): shap "
            f"{peak_shap / 2**20:.1f} MiB  treelens {peak_ours / 2**20:.1f} MiB"
        )
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="rf,et,gb,iso,deep")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--deep-shap-rows", type=int, default=10)
    parser.add_argument("--deep-rows", type=int, default=500)
    parser.add_argument("--single-only", action="store_true")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    names = args.models.split(",")
    print(f"machine: {os.cpu_count()} cores (shared with other work: times are noisy)")
    _threads(1)
    run(names, args.repeat, args.deep_shap_rows, "1 thread", args.deep_rows)
    if not args.single_only:
        # The deep regressor once only (single-threaded): it takes long.
        _threads(None)
        shallow = [name for name in names if name != "deep"]
        run(shallow, args.repeat, args.deep_shap_rows, f"{os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
