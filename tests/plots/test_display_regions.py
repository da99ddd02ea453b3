"""DecisionRegionDisplay and ForestGridDisplay."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_moons
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.ensemble._forest import _generate_unsampled_indices
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

from treelens import (
    DecisionRegionDisplay,
    ForestGridDisplay,
    InputError,
    UnsupportedModelError,
)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def forest(iris):
    X, y = iris
    return RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    "make_model",
    [
        lambda: RandomForestClassifier(n_estimators=5, random_state=0),
        lambda: GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0),
        lambda: KNeighborsClassifier(n_neighbors=5),
        lambda: LogisticRegression(max_iter=300),
        lambda: SVC(),
    ],
    ids=["forest", "boosting", "knn", "logistic", "svc"],
)
def test_grid_predictions_equal_predict(iris, make_model):
    X, y = iris
    model = make_model().fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(
        model, X, features=(2, 3), y=y, grid_resolution=30
    )
    assert disp.predictions_.shape == (30, 30) and disp.grid_.shape == (900, 4)
    np.testing.assert_array_equal(disp.predictions_.ravel(), model.predict(disp.grid_))
    # The grid spans the window in the chosen features, the others at the median.
    np.testing.assert_allclose(
        disp.grid_[:, [0, 1]], np.tile(np.median(X, axis=0)[[0, 1]], (900, 1))
    )
    np.testing.assert_allclose(disp.xx_[0, [0, -1]], disp.window_[0])
    np.testing.assert_allclose(disp.grid_[:, 2], disp.xx_.ravel())
    # The image drawn holds one pixel per grid point.
    assert disp.surface_.get_array().shape[:2] == (30, 30)


def test_predict_proba_and_decision_function_responses(iris):
    X, y = iris
    model = LogisticRegression(max_iter=300).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(
        model, X, features=(0, 1), response_method="predict_proba", grid_resolution=12
    )
    np.testing.assert_allclose(
        disp.response_.reshape(-1, 3), model.predict_proba(disp.grid_)
    )
    Xb, yb = make_moons(80, noise=0.2, random_state=0)
    gb = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(Xb, yb)
    disp = DecisionRegionDisplay.from_estimator(
        gb, Xb, response_method="decision_function", grid_resolution=15
    )
    np.testing.assert_allclose(
        disp.response_.ravel(), gb.decision_function(disp.grid_), rtol=1e-12
    )
    disp = DecisionRegionDisplay.from_estimator(
        gb, Xb, response_method="predict_proba", grid_resolution=15
    )
    np.testing.assert_allclose(
        disp.response_.reshape(-1, 2), gb.predict_proba(disp.grid_), rtol=1e-12
    )


def test_svc_support_vectors_highlighted():
    X, y = make_moons(60, noise=0.25, random_state=1)
    svc = SVC(C=1.0).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(svc, X, y=y, grid_resolution=20)
    np.testing.assert_array_equal(disp.support_vectors_, svc.support_vectors_)
    np.testing.assert_allclose(disp.support_artist_.get_offsets(), svc.support_vectors_)
    assert (
        disp.support_artist_.get_facecolors().size == 0
        or disp.support_artist_.get_facecolors()[:, 3].max() == 0
    )  # hollow rings
    no_sv = DecisionRegionDisplay.from_estimator(
        KNeighborsClassifier().fit(X, y), X, grid_resolution=5
    )
    assert no_sv.support_vectors_ is None


def test_exact_regions_of_a_forest(iris, forest):
    X, _y = iris
    disp = DecisionRegionDisplay.from_estimator(forest, X, features=(2, 3), exact=True)
    # Any point of the window is predicted as the cell containing it.
    rng = np.random.default_rng(0)
    pts = (
        np.column_stack(
            [rng.uniform(*disp.window_[0], 2000), rng.uniform(*disp.window_[1], 2000)]
        )
        .astype(np.float32)
        .astype(np.float64)
    )
    rows = np.tile(disp.reference_, (2000, 1))
    rows[:, [2, 3]] = pts
    i = np.searchsorted(disp.x_edges_, pts[:, 0], side="left") - 1
    j = np.searchsorted(disp.y_edges_, pts[:, 1], side="left") - 1
    np.testing.assert_array_equal(disp.predictions_[j, i], forest.predict(rows))
    # Edges are the window and the thresholds of every tree that splits there.
    thresholds = np.concatenate(
        [e.tree_.threshold[e.tree_.feature == 2] for e in forest.estimators_]
    )
    inside = thresholds[
        (thresholds > disp.window_[0, 0]) & (thresholds < disp.window_[0, 1])
    ]
    assert set(disp.x_edges_[1:-1]) <= set(inside)
    # Boundary segments separate cells of different classes, along cell edges.
    seg = disp.boundary_segments_
    assert len(seg) > 0
    assert (
        np.isin(seg[:, :, 0], disp.x_edges_).all()
        and np.isin(seg[:, :, 1], disp.y_edges_).all()
    )


def test_exact_overlay_too_fine_is_refused(iris, forest):
    X, _y = iris
    full = DecisionRegionDisplay.from_estimator(forest, X, features=(2, 3), exact=True)
    n_cells = full.predictions_.size
    with pytest.raises(
        InputError, match=f"{n_cells:,} cells.*max_cells={n_cells - 1:,}"
    ):
        DecisionRegionDisplay.from_estimator(
            forest, X, features=(2, 3), exact=True, max_cells=n_cells - 1
        )
    at_cap = DecisionRegionDisplay.from_estimator(
        forest, X, features=(2, 3), exact=True, max_cells=n_cells
    )
    np.testing.assert_array_equal(at_cap.predictions_, full.predictions_)


@pytest.mark.parametrize("bad", [0, -5, 2.5, "many", True])
def test_bad_max_cells(iris, forest, bad):
    X, _y = iris
    with pytest.raises(InputError, match="max_cells"):
        DecisionRegionDisplay.from_estimator(forest, X, exact=True, max_cells=bad)


def test_exact_refused_for_non_tree_models(iris):
    X, y = iris
    with pytest.raises(UnsupportedModelError, match="exact=True"):
        DecisionRegionDisplay.from_estimator(
            KNeighborsClassifier().fit(X, y), X, exact=True
        )


def test_regression_model_refused(iris):
    X, y = iris
    reg = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y.astype(float))
    with pytest.raises(
        UnsupportedModelError, match="needs a classifier; got the regressor"
    ):
        DecisionRegionDisplay.from_estimator(reg, X)
    with pytest.raises(UnsupportedModelError, match="needs a classifier"):
        ForestGridDisplay.from_estimator(reg, X)
    from sklearn.linear_model import LinearRegression

    with pytest.raises(UnsupportedModelError, match="LinearRegression"):
        DecisionRegionDisplay.from_estimator(LinearRegression().fit(X, y), X)


def test_region_bad_input(iris, forest):
    X, y = iris
    with pytest.raises(InputError, match="Unknown feature"):
        DecisionRegionDisplay.from_estimator(forest, X, features=("x0", "sepal"))
    with pytest.raises(InputError, match="twice"):
        DecisionRegionDisplay.from_estimator(forest, X, features=(1, 1))
    knn = KNeighborsClassifier().fit(X, y)
    with pytest.raises(InputError, match="twice"):
        DecisionRegionDisplay.from_estimator(knn, X, features=("x3", 3))
    with pytest.raises(InputError, match="response_method"):
        DecisionRegionDisplay.from_estimator(forest, X, response_method="proba")
    X1 = X[:, :1]
    one = RandomForestClassifier(n_estimators=2, random_state=0).fit(X1, y)
    with pytest.raises(InputError, match="at least two features"):
        DecisionRegionDisplay.from_estimator(one, X1)
    with pytest.raises(InputError, match="at least two features"):
        DecisionRegionDisplay.from_estimator(KNeighborsClassifier().fit(X1, y), X1)


def test_forest_grid_oob_accuracy_in_titles(iris):
    X, y = iris
    model = RandomForestClassifier(
        n_estimators=12, max_depth=4, oob_score=True, random_state=3
    ).fit(X, y)
    grid = ForestGridDisplay.from_estimator(model, X, y, features=(2, 3), n_trees=3)
    assert len(grid.axes_) == 4 and len(grid.partitions_) == 3
    for t in range(3):
        est = model.estimators_[t]
        oob = _generate_unsampled_indices(est.random_state, len(X), len(X), None)
        expected = np.mean(est.predict(X[oob]) == y[oob])
        assert grid.oob_accuracy_[t] == pytest.approx(expected, abs=1e-12)
        assert grid.axes_[t].get_title() == f"tree {t}: OOB accuracy {expected:.3f}"
        assert grid.partitions_[t].tree_index_ == t
    assert grid.forest_oob_accuracy_ == pytest.approx(model.oob_score_, abs=1e-12)
    assert grid.axes_[3].get_title().endswith(f"OOB accuracy {model.oob_score_:.3f}")
    np.testing.assert_array_equal(
        grid.regions_.predictions_.shape,
        (len(grid.regions_.y_edges_) - 1, len(grid.regions_.x_edges_) - 1),
    )


def test_forest_grid_without_bootstrap_or_labels(iris):
    X, y = iris
    model = RandomForestClassifier(n_estimators=4, bootstrap=False, random_state=0).fit(
        X, y
    )
    grid = ForestGridDisplay.from_estimator(model, X, y, n_trees=2, ncols=2)
    assert grid.oob_accuracy_ is None and grid.titles_[0] == "tree 0"
    assert grid.axes_.size == 3
    with pytest.raises(InputError, match=r"`n_trees` must be in \[1, 4\]"):
        ForestGridDisplay.from_estimator(model, X, y, n_trees=5)
