"""RegressionStepsDisplay: truncated step functions of one regression tree."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from treelens import InputError, RegressionStepsDisplay, UnsupportedModelError
from treelens._plots._partition import cell_points


@pytest.fixture(scope="module")
def noisy_sine():
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 6, 120)).reshape(-1, 1)
    return X, np.sin(X).ravel() + rng.normal(0, 0.2, 120)


def truncated_predict(model, X, depth):
    """Value of the node at ``depth`` on each row's path (or of its leaf)."""
    path = model.decision_path(X.astype(np.float32)).toarray().astype(bool)
    node_depth = np.zeros(model.tree_.node_count, dtype=int)
    for node in range(model.tree_.node_count):  # test oracle, small tree
        for child in (
            model.tree_.children_left[node],
            model.tree_.children_right[node],
        ):
            if child >= 0:
                node_depth[child] = node_depth[node] + 1
    keep = path & (node_depth <= depth)[None, :]
    node = np.where(keep, node_depth[None, :], -1).argmax(axis=1)
    return model.tree_.value[node, 0, 0]


def test_steps_equal_truncated_tree(noisy_sine):
    X, y = noisy_sine
    model = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y)
    disp = RegressionStepsDisplay.from_estimator(
        model, X, y, depths=[0, 1, 2, 3, 5, None]
    )
    for depth, (edges, values) in zip(disp.depths, disp.steps):
        assert np.all(np.diff(edges) > 0)
        np.testing.assert_allclose(edges[[0, -1]], disp.window)
        points = cell_points(edges, np.float32).reshape(-1, 1)
        expected = (
            model.predict(points)
            if depth is None
            else truncated_predict(model, points, depth)
        )
        np.testing.assert_allclose(values, expected, rtol=1e-12)
        if depth is not None:
            assert len(values) <= 2**depth
    # A dense sweep agrees too: the step function is the truncated tree everywhere.
    grid = np.linspace(*disp.window, 500).reshape(-1, 1)
    edges, values = disp.steps[2]
    at = np.clip(
        np.searchsorted(edges, grid.ravel().astype(np.float32), side="left") - 1,
        0,
        len(values) - 1,
    )
    np.testing.assert_allclose(values[at], truncated_predict(model, grid, 2))
    assert len(disp.lines_) == 6
    np.testing.assert_allclose(disp.lines_[2].get_data().values, values)


def test_default_depths_and_refit(noisy_sine):
    X, y = noisy_sine
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y)
    disp = RegressionStepsDisplay.from_estimator(model, X, y, refit=True)
    assert disp.depths == [1, 2, 3, None]
    for depth, (edges, values) in zip(disp.depths, disp.refit_steps):
        refit = DecisionTreeRegressor(
            max_depth=depth if depth is not None else 5, random_state=0
        ).fit(X, y)
        points = cell_points(edges, np.float32).reshape(-1, 1)
        np.testing.assert_allclose(values, refit.predict(points))


def test_tree_of_a_forest_and_other_features_at_reference():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(100, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    forest = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(
        X, y
    )
    disp = RegressionStepsDisplay.from_estimator(
        forest, X, feature="x0", tree_index=1, depths=[None], reference=[0, 0.9]
    )
    edges, values = disp.steps[0]
    points = np.column_stack(
        [cell_points(edges, np.float32), np.full(len(values), 0.9)]
    )
    np.testing.assert_allclose(values, forest.estimators_[1].predict(points))


def test_bad_input(noisy_sine):
    X, y = noisy_sine
    with pytest.raises(
        UnsupportedModelError, match="regression tree; got the classifier"
    ):
        RegressionStepsDisplay.from_estimator(DecisionTreeClassifier().fit(X, y > 0), X)
    X2 = np.column_stack([X, X])
    model = DecisionTreeRegressor(max_depth=2).fit(X2, y)
    with pytest.raises(InputError, match="expected `feature`"):
        RegressionStepsDisplay.from_estimator(model, X2)
    with pytest.raises(InputError, match="Unknown feature"):
        RegressionStepsDisplay.from_estimator(model, X2, feature="time")
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(InputError, match="tree_index"):
        RegressionStepsDisplay.from_estimator(forest, X, tree_index=2)
    with pytest.raises(InputError, match="needs y"):
        RegressionStepsDisplay.from_estimator(
            DecisionTreeRegressor().fit(X, y), X, refit=True
        )


def test_open_steps_inside_the_window_labelled_by_depth():
    # A sine shifted well above 0: any point at y = 0 would be an edge artifact.
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 6, 150)).reshape(-1, 1)
    y = 3 + np.sin(X).ravel()
    model = DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y)
    disp = RegressionStepsDisplay.from_estimator(
        model, X, y, depths=[1, 3, None], window=(0.5, 5.0)
    )
    assert disp.labels_ == ["depth 1", "depth 3", "depth 5 (full)"]
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert legend[-3:] == disp.labels_
    assert disp.ax_.get_xlim() == (0.5, 5.0)
    predicted = np.unique(model.tree_.value[:, 0, 0])
    for line, (edges, values) in zip(disp.lines_, disp.steps):
        np.testing.assert_allclose(edges[[0, -1]], [0.5, 5.0])
        vertices = line.get_path().vertices
        assert vertices[:, 0].min() >= 0.5 and vertices[:, 0].max() <= 5.0
        # Every drawn height is a value the truncated tree predicts; none is 0.
        assert np.isin(vertices[:, 1], values).all()
        assert np.isin(values, predicted).all() and not (vertices[:, 1] == 0).any()
    with pytest.raises(InputError, match="`window` must"):
        RegressionStepsDisplay.from_estimator(model, X, y, window=(5.0, 0.5))
