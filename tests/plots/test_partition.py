"""Partition geometry and PartitionDisplay: exact rectangles from the tree structure."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_rgba
from sklearn.datasets import load_iris
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from treelens import InputError, PartitionDisplay, to_forest
from treelens._plots._partition import cell_points, partition_rectangles, plot_window


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def centres(rectangles, reference, features):
    rows = np.tile(reference, (len(rectangles), 1))
    rows[:, features[0]] = rectangles[:, :2].mean(axis=1)
    rows[:, features[1]] = rectangles[:, 2:].mean(axis=1)
    return rows


def assert_tiles(rectangles, window):
    """Rectangles cover the window exactly once: areas add up, no pair overlaps."""
    r = rectangles
    assert (r[:, 0] >= window[0, 0]).all() and (r[:, 1] <= window[0, 1]).all()
    assert (r[:, 2] >= window[1, 0]).all() and (r[:, 3] <= window[1, 1]).all()
    area = ((r[:, 1] - r[:, 0]) * (r[:, 3] - r[:, 2])).sum()
    np.testing.assert_allclose(area, np.prod(window[:, 1] - window[:, 0]), rtol=1e-9)
    dx = np.minimum(r[:, None, 1], r[None, :, 1]) - np.maximum(
        r[:, None, 0], r[None, :, 0]
    )
    dy = np.minimum(r[:, None, 3], r[None, :, 3]) - np.maximum(
        r[:, None, 2], r[None, :, 2]
    )
    overlap = np.clip(dx, 0, None) * np.clip(dy, 0, None)
    np.fill_diagonal(overlap, 0)
    assert overlap.max() <= 1e-12


def test_toy_tree_by_hand():
    # x0 <= 0.5 -> class 0; else x1 <= 0.5 -> class 1, else class 2.
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    tree = DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 2])
    disp = PartitionDisplay.from_estimator(tree, X, y=[0, 0, 1, 2])
    order = np.argsort(disp.labels)
    np.testing.assert_allclose(
        disp.rectangles[order],
        [[-0.05, 0.5, -0.05, 1.05], [0.5, 1.05, -0.05, 0.5], [0.5, 1.05, 0.5, 1.05]],
    )
    assert disp.labels[order].tolist() == [0, 1, 2]
    np.testing.assert_allclose(
        disp.split_segments[np.argsort(disp.split_segments[:, 0, 1])],
        [[[0.5, -0.05], [0.5, 1.05]], [[0.5, 0.5], [1.05, 0.5]]],
    )


def test_rectangles_coloured_by_prediction_at_centre(iris):
    X, y = iris
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    disp = PartitionDisplay.from_estimator(tree, X, features=(2, 3), y=y)
    rows = centres(disp.rectangles, disp.reference, (2, 3))
    np.testing.assert_array_equal(disp.labels, tree.predict(rows))
    # The artist: one face per rectangle, in the colour of its class.
    faces = disp.collection_.get_facecolors()
    assert len(faces) == len(disp.rectangles)
    palette = np.array([to_rgba(f"C{k}") for k in range(3)])
    np.testing.assert_allclose(faces[:, :3], palette[disp.labels][:, :3])
    assert_tiles(disp.rectangles, disp.window)


def test_other_features_held_at_reference(iris):
    X, y = iris
    tree = DecisionTreeClassifier(random_state=1).fit(X, y)
    for reference in (X[0], X[75], X[140]):
        disp = PartitionDisplay.from_estimator(
            tree, X, features=("x0", "x1"), reference=reference
        )
        rows = centres(disp.rectangles, reference, (0, 1))
        np.testing.assert_array_equal(disp.labels, tree.predict(rows))
        assert_tiles(disp.rectangles, disp.window)
        np.testing.assert_array_equal(disp.reference, reference)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    depth=st.one_of(st.none(), st.integers(0, 4)),
    regression=st.booleans(),
)
def test_partition_properties_on_random_trees(seed, depth, regression):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4)).astype(np.float32).astype(np.float64)
    y = rng.normal(size=60) if regression else rng.integers(0, 3, size=60)
    model = (DecisionTreeRegressor if regression else DecisionTreeClassifier)(
        max_depth=6, random_state=seed
    ).fit(X, y)
    forest = to_forest(model)
    features = tuple(int(f) for f in rng.choice(4, size=2, replace=False))
    reference = X[rng.integers(60)]
    window = plot_window(X, features)
    part = partition_rectangles(forest, features, reference, window, max_depth=depth)
    assert_tiles(part.rectangles, window)
    rows = centres(part.rectangles, reference, features)
    if depth is None:
        expected = model.predict(rows)
        got = (
            part.values[:, 0]
            if regression
            else model.classes_[part.values.argmax(axis=1)]
        )
        np.testing.assert_array_equal(got, expected)
    else:
        assert len(part.rectangles) <= 2**depth
        # A cut region holds the node every centre passes at that depth (or its leaf).
        path = model.decision_path(rows.astype(np.float32)).toarray().astype(bool)
        node_depth = forest.trees[0].node_depth
        reached = np.where(
            path & (node_depth <= depth)[None, :], node_depth[None, :], -1
        ).argmax(axis=1)
        np.testing.assert_array_equal(part.nodes, reached)


def test_depth_cut_regions_and_majority_class(iris):
    X, y = iris
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    for depth in range(4):
        disp = PartitionDisplay.from_estimator(
            tree, X, features=(2, 3), max_depth=depth
        )
        assert len(disp.rectangles) <= 2**depth
        assert_tiles(disp.rectangles, disp.window)
        values = tree.tree_.value[disp.nodes, 0]
        np.testing.assert_array_equal(disp.labels, tree.classes_[values.argmax(axis=1)])
        assert (to_forest(tree).trees[0].node_depth[disp.nodes] <= depth).all()
    # depth 0: one region, the root, coloured by the overall majority.
    root = PartitionDisplay.from_estimator(tree, X, features=(2, 3), max_depth=0)
    assert root.nodes.tolist() == [0] and len(root.split_segments) == 0


def test_tree_of_a_forest_and_of_boosting(iris):
    X, y = iris
    rf = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    disp = PartitionDisplay.from_estimator(rf, X, features=(0, 2), tree_index=2)
    rows = centres(disp.rectangles, disp.reference, (0, 2))
    np.testing.assert_array_equal(disp.labels, rf.estimators_[2].predict(rows))
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(
        X, y
    )
    disp = PartitionDisplay.from_estimator(gb, X, features=(2, 3), tree_index=4)
    assert disp.classes is None  # stage trees hold raw values, drawn with a colour map
    stage = gb.estimators_[1, 1]
    rows = centres(disp.rectangles, disp.reference, (2, 3))
    np.testing.assert_allclose(disp.labels, stage.predict(rows.astype(np.float32)))


def test_regression_tree_regions_show_node_means():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 3))
    y = X[:, 0] * 3 + X[:, 1]
    tree = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    disp = PartitionDisplay.from_estimator(tree, X, features=(0, 1), y=y)
    rows = centres(disp.rectangles, disp.reference, (0, 1))
    np.testing.assert_allclose(disp.labels, tree.predict(rows))
    assert disp.classes is None
    assert len(disp.figure_.axes) == 2  # the axes and its colour bar


def test_dataframe_and_names(iris):
    import pandas as pd

    X, y = iris
    frame = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(frame, y)
    disp = PartitionDisplay.from_estimator(tree, frame, features=("pl", "pw"))
    assert disp.feature_names == ("pl", "pw")
    assert disp.ax_.get_xlabel() == "pl" and disp.ax_.get_ylabel() == "pw"


def test_cell_points_stay_inside_after_float32_cast():
    t = np.float64(np.float32(1.1))
    edges = np.array([0.0, t, np.nextafter(t, 2.0), 2.0])
    points = cell_points(edges, np.float32)
    assert ((points > edges[:-1]) & (points <= edges[1:]))[[0, 2]].all()


def test_bad_features(iris):
    X, y = iris
    tree = DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(InputError, match="Unknown feature 'petal'"):
        PartitionDisplay.from_estimator(tree, X, features=("petal", "x1"))
    with pytest.raises(InputError, match=r"in \[0, 3\]; got 7"):
        PartitionDisplay.from_estimator(tree, X, features=(0, 7))
    with pytest.raises(InputError, match="two different features; got 'x2' twice"):
        PartitionDisplay.from_estimator(tree, X, features=(2, "x2"))
    with pytest.raises(InputError, match="pair"):
        PartitionDisplay.from_estimator(tree, X, features="x0")


def test_tree_index_out_of_range(iris):
    X, y = iris
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(InputError, match=r"`tree_index` must be in \[0, 2\].*got 3"):
        PartitionDisplay.from_estimator(rf, X, tree_index=3)
    with pytest.raises(InputError, match="expected `tree_index`"):
        PartitionDisplay.from_estimator(rf, X)
    tree = DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(InputError, match=r"\[0, 0\]"):
        PartitionDisplay.from_estimator(tree, X, tree_index=-1)


def test_one_feature_model_refused():
    X = np.arange(10.0).reshape(-1, 1)
    tree = DecisionTreeClassifier().fit(X, X.ravel() > 4)
    with pytest.raises(
        InputError, match="at least two features; got a model with 1 feature"
    ):
        PartitionDisplay.from_estimator(tree, X)


def test_public_names():
    for name in (
        "PartitionDisplay",
        "DecisionRegionDisplay",
        "ForestGridDisplay",
        "RegressionStepsDisplay",
        "ImportanceDisplay",
        "TreeDiagramDisplay",
        "CounterfactualDisplay",
        "export_dot",
    ):
        assert name in treelens.__all__
    assert treelens.__all__ == sorted(treelens.__all__)


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 10_000), kind=st.sampled_from(["forest", "boosting", "tree"])
)
def test_rasterized_leaves_equal_apply(seed, kind):
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

    from treelens._plots._partition import raster_leaves

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(50, 3))
    y = X[:, 0] - X[:, 2] + rng.normal(size=50)
    model = {
        "forest": RandomForestRegressor(n_estimators=4, max_depth=5, random_state=seed),
        "boosting": GradientBoostingRegressor(
            n_estimators=4, max_depth=3, random_state=seed
        ),
        "tree": DecisionTreeRegressor(random_state=seed),
    }[kind].fit(X, y)
    forest = to_forest(model)
    features = tuple(int(f) for f in rng.choice(3, size=2, replace=False))
    reference = X[rng.integers(50)]
    # Grid points include the thresholds themselves (x <= t goes left).
    thresholds = np.concatenate([t.threshold[~t.is_leaf] for t in forest.trees])
    xs = np.unique(np.concatenate([rng.uniform(-3, 3, 15), thresholds[:5]]))
    ys = np.unique(np.concatenate([rng.uniform(-3, 3, 11), thresholds[-5:]]))
    leaves = raster_leaves(forest, features, reference, xs, ys)
    xx, yy = np.meshgrid(xs, ys)
    rows = np.tile(reference, (xx.size, 1))
    rows[:, features[0]], rows[:, features[1]] = xx.ravel(), yy.ravel()
    np.testing.assert_array_equal(leaves, forest.apply(rows))
