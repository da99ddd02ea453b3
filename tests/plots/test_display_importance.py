"""ImportanceDisplay: sorted bars, top-k, error bars, several measures side by side."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier

from treelens import (
    ImportanceDisplay,
    InputError,
    mdi_importance,
    permutation_importance,
)


@pytest.fixture(scope="module")
def wine_forest():
    X, y = load_wine(return_X_y=True, as_frame=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(
        X, y
    )
    return model, X, y


def test_bars_sorted_with_spread_across_trees(wine_forest):
    model, _X, _y = wine_forest
    result = mdi_importance(model)
    disp = ImportanceDisplay.from_result(result, top_k=5)
    expected = result.importances_.sort_values(ascending=False).head(5)
    assert disp.importances.index.tolist() == expected.index.tolist()
    bars = disp.bars_[0]
    widths = np.array([b.get_width() for b in bars])
    np.testing.assert_allclose(widths, expected.to_numpy())
    # The first feature is drawn on top.
    tops = np.array([b.get_y() for b in bars])
    assert np.all(np.diff(tops) < 0)
    ticks = disp.ax_.get_yticks()
    labels = [t.get_text() for t in disp.ax_.get_yticklabels()]
    assert [labels[k] for k in np.argsort(-ticks)] == expected.index.tolist()
    # Default whiskers: one standard error of the mean over the trees.
    per_tree = result.per_tree_[expected.index].to_numpy()
    sem = per_tree.std(axis=0, ddof=1) / np.sqrt(len(per_tree))
    segments = np.asarray(disp.whiskers_[0].get_segments())[:5]
    np.testing.assert_allclose(segments[:, 1, 0], expected + sem)
    np.testing.assert_allclose(segments[:, 0, 0], np.maximum(expected - sem, 0))
    np.testing.assert_allclose(segments[:, 0, 1], tops + 0.4, atol=1e-12)
    assert "s.e. of mean, 10 trees" in disp.ax_.get_legend().get_texts()[0].get_text()
    # Per-tree standard deviations on request.
    disp = ImportanceDisplay.from_result(result, top_k=5, error_bars="std")
    segments = np.asarray(disp.whiskers_[0].get_segments())[:5]
    np.testing.assert_allclose(
        segments[:, 1, 0] - segments[:, 0, 0], 2 * result.std_[expected.index]
    )


def test_several_measures_side_by_side(wine_forest):
    model, X, y = wine_forest
    train = mdi_importance(model)
    held_out = mdi_importance(model, X.iloc[::2], y.iloc[::2])
    perm = permutation_importance(
        model, X.iloc[:60], y.iloc[:60], n_repeats=2, random_state=0
    )
    disp = ImportanceDisplay.from_result([train, held_out, perm])
    assert disp.methods == [train.method, held_out.method, perm.method]
    assert len(disp.bars_) == 3 and all(len(b) == X.shape[1] for b in disp.bars_)
    np.testing.assert_allclose(
        [b.get_width() for b in disp.bars_[2]],
        perm.importances_[disp.importances.index],
    )
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert [text.split(" (whiskers")[0] for text in legend] == disp.methods
    # Permutation importance: its spread over repeats, as before.
    assert legend[2] == f"{perm.method} (whiskers: \u00b11 std, repeats)"
    n = X.shape[1]
    segments = np.asarray(disp.whiskers_[2].get_segments())[:n]
    np.testing.assert_allclose(
        segments[:, 1, 0] - segments[:, 0, 0], 2 * perm.std_[disp.importances.index]
    )


@pytest.mark.parametrize("size", ["small", "x-large"])
def test_legend_below_the_axis_label_does_not_cover_it(wine_forest, size):
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    model, X, y = wine_forest
    results = [mdi_importance(model), mdi_importance(model, X, y)]
    with mpl.rc_context({"axes.labelsize": size, "xtick.labelsize": size}):
        figure = Figure(figsize=(6.4, 5), layout="constrained")
        disp = ImportanceDisplay.from_result(results, ax=figure.subplots())
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        label = disp.ax_.xaxis.label.get_window_extent(renderer)
        ticks = [t.get_window_extent(renderer) for t in disp.ax_.get_xticklabels()]
        legend = disp.ax_.get_legend().get_window_extent(renderer)
    assert legend.y1 <= min(label.y0, *(t.y0 for t in ticks))


def test_from_estimator_and_duck_typed_results(wine_forest):
    model, _X, _y = wine_forest
    disp = ImportanceDisplay.from_estimator(model, top_k=3)
    np.testing.assert_allclose(
        disp.importances.iloc[:, 0], np.sort(model.feature_importances_)[::-1][:3]
    )
    plain = SimpleNamespace(importances_=pd.Series({"a": 0.2, "b": 0.5}), std_=None)
    disp = ImportanceDisplay.from_result({"mine": plain}, sort=False)
    assert disp.importances.index.tolist() == ["a", "b"] and disp.methods == ["mine"]
    assert disp.whiskers_ == [None]


def test_bad_input():
    with pytest.raises(InputError, match="importances_"):
        ImportanceDisplay.from_result(object())
    plain = SimpleNamespace(importances_=pd.Series({"a": 0.2}), std_=None)
    with pytest.raises(InputError, match="top_k"):
        ImportanceDisplay.from_result(plain, top_k=0)


@pytest.mark.parametrize("error_bars", ["auto", "iqr"])
def test_no_whisker_below_zero_nor_swamping_the_bars(error_bars):
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    boosting = GradientBoostingClassifier(
        n_estimators=60, max_depth=1, random_state=0
    ).fit(X, y)
    for model in (forest, boosting):
        result = mdi_importance(model)
        # Per-tree standard deviations cross zero for these models ...
        assert (result.importances_ - result.std_ < 0).any()
        disp = ImportanceDisplay.from_result(result, error_bars=error_bars)
        segments = np.asarray(disp.whiskers_[0].get_segments())
        # ... the default whiskers never do, and stay near the bars.
        assert segments[:, :, 0].min() >= 0
        top = disp.importances.iloc[0, 0]
        assert segments[:, :, 0].max() <= 1.5 * top
        assert disp.ax_.get_xlim()[1] <= 2 * top


def test_bad_error_bars(wine_forest):
    model, _X, _y = wine_forest
    with pytest.raises(InputError, match="`error_bars` must be"):
        ImportanceDisplay.from_result(mdi_importance(model), error_bars="ci")


@pytest.mark.parametrize("can_be_negative", [False, True])
def test_result_intervals_drawn_and_clipped_only_where_values_cannot_be_negative(
    can_be_negative,
):
    index = ["a", "b"]
    result = SimpleNamespace(
        importances_=pd.Series([0.5, 0.02], index=index),
        std_=None,
        interval_=pd.DataFrame({"low": [0.4, -0.05], "high": [0.6, 0.1]}, index=index),
        interval_method="95% bootstrap",
        can_be_negative=can_be_negative,
        method="m",
    )
    disp = ImportanceDisplay.from_result(result, error_bars="interval")
    segments = np.asarray(disp.whiskers_[0].get_segments())[:2]
    low = [0.4, -0.05 if can_be_negative else 0.0]
    np.testing.assert_allclose(segments[:, 0, 0], low)
    np.testing.assert_allclose(segments[:, 1, 0], [0.6, 0.1])
    assert disp.ax_.get_legend().get_texts()[0].get_text() == (
        "m (whiskers: 95% bootstrap)"
    )


def test_intervals_and_negative_values(wine_forest):
    from treelens import debiased_mdi_importance

    model, X, y = wine_forest
    debiased = debiased_mdi_importance(model, X.iloc[::2], y.iloc[::2])
    train = mdi_importance(model)
    disp = ImportanceDisplay.from_result([train, debiased])
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    # MDI keeps its default whiskers; debiased MDI shows its bootstrap interval,
    # which may reach below zero.
    assert "s.e. of mean" in legend[0]
    assert "percentile bootstrap" in legend[1]
    index = disp.importances.index
    np.testing.assert_allclose(
        disp.lower[debiased.method], debiased.interval_["low"][index]
    )
    np.testing.assert_allclose(
        disp.upper[debiased.method], debiased.interval_["high"][index]
    )
    shown = ImportanceDisplay.from_result([train, debiased], error_bars="interval")
    np.testing.assert_allclose(
        shown.lower[train.method], np.maximum(train.interval_["low"][index], 0)
    )
    assert (shown.lower[train.method] >= 0).all()
