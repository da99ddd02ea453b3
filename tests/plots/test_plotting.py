"""Pictures without matplotlib, saving through matplotlib, and a few tolerant
pixel checks."""

import builtins
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treelens import (
    CounterfactualDisplay,
    DecisionRegionDisplay,
    ForestGridDisplay,
    ImportanceDisplay,
    PartitionDisplay,
    RegressionStepsDisplay,
    TreeDiagramDisplay,
    export_dot,
    to_forest,
)
from treelens._plots._partition import partition_rectangles, plot_window


@pytest.fixture(scope="module")
def iris_tree():
    X, y = load_iris(return_X_y=True)
    return DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y), X, y


@pytest.fixture
def no_matplotlib(monkeypatch):
    """Make every ``import matplotlib...`` fail, as on a machine without it."""
    for name in [
        m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr("builtins.__import__", fake_import)


def test_every_picture_says_how_to_install_matplotlib(iris_tree, no_matplotlib):
    tree, X, y = iris_tree
    Xs = X[:, :1]
    reg = DecisionTreeRegressor(max_depth=2).fit(Xs, y.astype(float))
    importance = SimpleNamespace(importances_=pd.Series({"a": 1.0}), std_=None)
    cf = SimpleNamespace(X_=X[:1], X_cf_=X[:1] + 1, found_=np.array([True]))
    calls = [
        lambda: PartitionDisplay.from_estimator(tree, X),
        lambda: DecisionRegionDisplay.from_estimator(tree, X, grid_resolution=5),
        lambda: ForestGridDisplay.from_estimator(tree, X, y, n_trees=1),
        lambda: RegressionStepsDisplay.from_estimator(reg, Xs),
        lambda: ImportanceDisplay.from_result(importance),
        lambda: TreeDiagramDisplay.from_estimator(tree),
        lambda: CounterfactualDisplay.from_result(tree, cf),
    ]
    for call in calls:
        with pytest.raises(ImportError, match="pip install matplotlib"):
            call()
    # Geometry and DOT text need no matplotlib.
    assert "matplotlib" not in sys.modules
    assert export_dot(tree).startswith("digraph Tree {")
    window = plot_window(X, (2, 3))
    assert (
        len(partition_rectangles(to_forest(tree), (2, 3), X[0], window).rectangles) > 1
    )
    assert "matplotlib" not in sys.modules


def test_importing_treelens_does_not_import_matplotlib():
    import subprocess

    code = "import sys, treelens; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_no_show_no_save(iris_tree, monkeypatch, tmp_path):
    import matplotlib.pyplot as plt

    tree, X, _y = iris_tree
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plt.show() called"))
    PartitionDisplay.from_estimator(tree, X, features=(2, 3))
    TreeDiagramDisplay.from_estimator(tree)
    assert list(tmp_path.iterdir()) == []


def test_saving_to_png_svg_pdf(iris_tree, tmp_path):
    tree, X, y = iris_tree
    disp = PartitionDisplay.from_estimator(tree, X, features=(2, 3), y=y)
    disp.figure_.savefig(tmp_path / "p.png", dpi=50)
    disp.figure_.savefig(tmp_path / "p.svg")
    disp.figure_.savefig(tmp_path / "p.pdf")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "p.svg").read_bytes()[:500]
    assert (tmp_path / "p.pdf").read_bytes()[:5] == b"%PDF-"


def render(disp, path):
    import matplotlib.image as mpimg

    disp.figure_.savefig(path, dpi=40)
    return mpimg.imread(path)[..., :3]


def test_two_renderings_agree_and_regions_are_not_blank(iris_tree, tmp_path):
    tree, X, y = iris_tree
    first = render(
        PartitionDisplay.from_estimator(tree, X, features=(2, 3), y=y),
        tmp_path / "a.png",
    )
    second = render(
        PartitionDisplay.from_estimator(tree, X, features=(2, 3), y=y),
        tmp_path / "b.png",
    )
    assert first.shape == second.shape
    assert np.abs(first - second).mean() < 1e-3
    # The regions colour a good part of the picture in at least three hues.
    colourful = (first.max(axis=2) - first.min(axis=2)) > 0.15
    assert colourful.mean() > 0.3
    hues = {tuple(np.round(p, 1)) for p in first[colourful]}
    assert len(hues) >= 3


def test_region_picture_changes_with_the_depth_cut(iris_tree, tmp_path):
    tree, X, _y = iris_tree
    shallow = render(
        PartitionDisplay.from_estimator(tree, X, features=(2, 3), max_depth=1),
        tmp_path / "s.png",
    )
    deep = render(
        PartitionDisplay.from_estimator(tree, X, features=(2, 3)), tmp_path / "d.png"
    )
    assert np.abs(shallow - deep).mean() > 5e-3
