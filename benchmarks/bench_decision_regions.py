"""Decision regions of a 100-tree forest on a 50x50 grid: a per-point predict loop
(the hand-written region painter) against DecisionRegionDisplay.

Usage::

    python benchmarks/bench_decision_regions.py [--loop-points N]

``--loop-points`` times the loop on the first N grid points only (default: all
2500) and reports per grid point, so the ratio stays comparable.
"""

from __future__ import annotations

import argparse
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from treelens import DecisionRegionDisplay

GRID = 50


def best_of(repeats: int, function, setup=None) -> float:
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loop-points", type=int, default=GRID * GRID)
    args = parser.parse_args()

    X, y = make_classification(
        n_samples=1000, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    model = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    fig, ax = plt.subplots()

    def display(exact: bool = False) -> DecisionRegionDisplay:
        return DecisionRegionDisplay.from_estimator(
            model,
            X,
            features=(0, 1),
            grid_resolution=GRID,
            exact=exact,
            ax=ax,
            show_points=False,
        )

    disp = display()
    grid = disp.grid
    n_loop = min(args.loop_points, len(grid))

    def loop() -> np.ndarray:
        return np.array([model.predict(row.reshape(1, -1))[0] for row in grid[:n_loop]])

    looped = loop()  # also checks that both give the same classes
    assert (looped == disp.predictions.ravel()[:n_loop]).all()
    t_loop = best_of(1, loop) / n_loop
    t_display = best_of(5, display, setup=ax.clear) / len(grid)
    t_exact = best_of(3, lambda: display(exact=True), setup=ax.clear)
    ax.clear()
    exact = display(exact=True)
    n_cells = exact.predictions.size

    print(
        f"forest: 100 trees, 3 classes, 6 features; grid {GRID}x{GRID} = {len(grid)} points"
    )
    print(
        f"per-point predict loop      : {t_loop * 1e6:10.1f} us per grid point "
        f"(timed on {n_loop} points)"
    )
    print(
        f"DecisionRegionDisplay (grid): {t_display * 1e6:10.1f} us per grid point "
        f"({t_display * len(grid) * 1e3:.1f} ms in all, drawing included)"
    )
    print(
        f"ratio per grid point        : {t_loop / t_display:10.0f}x  (target >= 500x)"
    )
    print(f"exact regions from leaf boxes: {t_exact * 1e3:.1f} ms for {n_cells} cells")
    plt.close(fig)


if __name__ == "__main__":
    main()
