"""DecisionRegionDisplay and ForestGridDisplay."""

import sys

import numpy as np
import pytest
from matplotlib.colors import to_rgba
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
from sklearn.tree import DecisionTreeClassifier

import treelens
from treelens import (
    DataDisplay,
    DecisionRegionDisplay,
    ForestGridDisplay,
    InputError,
    PartitionDisplay,
    UnsupportedModelError,
    to_forest,
)
from treelens._plots._display_regions import exact_regions


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
    assert disp.predictions.shape == (30, 30) and disp.grid.shape == (900, 4)
    np.testing.assert_array_equal(disp.predictions.ravel(), model.predict(disp.grid))
    # The grid spans the window in the chosen features, the others at the median.
    np.testing.assert_allclose(
        disp.grid[:, [0, 1]], np.tile(np.median(X, axis=0)[[0, 1]], (900, 1))
    )
    np.testing.assert_allclose(disp.xx[0, [0, -1]], disp.window[0])
    np.testing.assert_allclose(disp.grid[:, 2], disp.xx.ravel())
    # The image drawn holds one pixel per grid point.
    assert disp.surface_.get_array().shape[:2] == (30, 30)


def test_predict_proba_and_decision_function_responses(iris):
    X, y = iris
    model = LogisticRegression(max_iter=300).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(
        model, X, features=(0, 1), response_method="predict_proba", grid_resolution=12
    )
    np.testing.assert_allclose(
        disp.response.reshape(-1, 3), model.predict_proba(disp.grid)
    )
    Xb, yb = make_moons(80, noise=0.2, random_state=0)
    gb = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(Xb, yb)
    disp = DecisionRegionDisplay.from_estimator(
        gb, Xb, response_method="decision_function", grid_resolution=15
    )
    np.testing.assert_allclose(
        disp.response.ravel(), gb.decision_function(disp.grid), rtol=1e-12
    )
    disp = DecisionRegionDisplay.from_estimator(
        gb, Xb, response_method="predict_proba", grid_resolution=15
    )
    np.testing.assert_allclose(
        disp.response.reshape(-1, 2), gb.predict_proba(disp.grid), rtol=1e-12
    )


def test_svc_support_vectors_highlighted():
    X, y = make_moons(60, noise=0.25, random_state=1)
    svc = SVC(C=1.0).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(svc, X, y=y, grid_resolution=20)
    np.testing.assert_array_equal(disp.support_vectors, svc.support_vectors_)
    np.testing.assert_allclose(disp.support_artist_.get_offsets(), svc.support_vectors_)
    assert (
        disp.support_artist_.get_facecolors().size == 0
        or disp.support_artist_.get_facecolors()[:, 3].max() == 0
    )  # hollow rings
    no_sv = DecisionRegionDisplay.from_estimator(
        KNeighborsClassifier().fit(X, y), X, grid_resolution=5
    )
    assert no_sv.support_vectors is None


def test_exact_regions_of_a_forest(iris, forest):
    X, _y = iris
    disp = DecisionRegionDisplay.from_estimator(forest, X, features=(2, 3), exact=True)
    # Any point of the window is predicted as the cell containing it.
    rng = np.random.default_rng(0)
    pts = (
        np.column_stack(
            [rng.uniform(*disp.window[0], 2000), rng.uniform(*disp.window[1], 2000)]
        )
        .astype(np.float32)
        .astype(np.float64)
    )
    rows = np.tile(disp.reference, (2000, 1))
    rows[:, [2, 3]] = pts
    i = np.searchsorted(disp.x_edges, pts[:, 0], side="left") - 1
    j = np.searchsorted(disp.y_edges, pts[:, 1], side="left") - 1
    np.testing.assert_array_equal(disp.predictions[j, i], forest.predict(rows))
    # Edges are the window and the thresholds of every tree that splits there.
    thresholds = np.concatenate(
        [e.tree_.threshold[e.tree_.feature == 2] for e in forest.estimators_]
    )
    inside = thresholds[
        (thresholds > disp.window[0, 0]) & (thresholds < disp.window[0, 1])
    ]
    assert set(disp.x_edges[1:-1]) <= set(inside)
    # Boundary segments separate cells of different classes, along cell edges.
    seg = disp.boundary_segments_
    assert len(seg) > 0
    assert (
        np.isin(seg[:, :, 0], disp.x_edges).all()
        and np.isin(seg[:, :, 1], disp.y_edges).all()
    )


def test_exact_overlay_too_fine_is_refused(iris, forest):
    X, _y = iris
    full = DecisionRegionDisplay.from_estimator(forest, X, features=(2, 3), exact=True)
    n_cells = full.predictions.size
    with pytest.raises(
        InputError, match=f"{n_cells:,} cells.*max_cells={n_cells - 1:,}"
    ):
        DecisionRegionDisplay.from_estimator(
            forest, X, features=(2, 3), exact=True, max_cells=n_cells - 1
        )
    at_cap = DecisionRegionDisplay.from_estimator(
        forest, X, features=(2, 3), exact=True, max_cells=n_cells
    )
    np.testing.assert_array_equal(at_cap.predictions, full.predictions)


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
    assert len(grid.axes_) == 4 and len(grid.partitions) == 3
    for t in range(3):
        est = model.estimators_[t]
        oob = _generate_unsampled_indices(est.random_state, len(X), len(X), None)
        expected = np.mean(est.predict(X[oob]) == y[oob])
        assert grid.oob_accuracy[t] == pytest.approx(expected, abs=1e-12)
        assert grid.axes_[t].get_title() == (
            f"tree {t}: OOB accuracy {expected:.3f} on {len(oob)} rows"
        )
        assert grid.oob_counts[t] == len(oob)
        assert grid.partitions[t].tree_index == t
    assert grid.forest_oob_accuracy == pytest.approx(model.oob_score_, abs=1e-12)
    assert (
        grid.axes_[3]
        .get_title()
        .endswith(f"OOB accuracy {model.oob_score_:.3f} on {len(X)} rows")
    )
    np.testing.assert_array_equal(
        grid.regions.predictions.shape,
        (len(grid.regions.y_edges) - 1, len(grid.regions.x_edges) - 1),
    )


def test_forest_grid_without_bootstrap_or_labels(iris):
    X, y = iris
    model = RandomForestClassifier(n_estimators=4, bootstrap=False, random_state=0).fit(
        X, y
    )
    grid = ForestGridDisplay.from_estimator(model, X, y, n_trees=2, ncols=2)
    assert grid.oob_accuracy is None and grid.titles_[0] == "tree 0"
    assert grid.axes_.size == 3
    with pytest.raises(InputError, match=r"`n_trees` must be in \[1, 4\]"):
        ForestGridDisplay.from_estimator(model, X, y, n_trees=5)


def test_forest_grid_gives_no_out_of_bag_figures_on_other_rows(iris):
    """Rows other than the training data have no out-of-bag trees: no figures
    in the titles rather than accuracies of bootstrap draws over other rows."""
    X, y = iris
    model = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    grid = ForestGridDisplay.from_estimator(model, X[::3], y[::3], n_trees=2)
    assert grid.oob_accuracy is None and grid.forest_oob_accuracy is None
    assert grid.titles_[0] == "tree 0"


def test_forest_grid_warns_about_rows_without_out_of_bag_trees(iris):
    X, y = iris
    # Three trees leave some rows in every bootstrap sample.
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, y)
    in_bag = np.zeros(len(X), dtype=int)
    for est in model.estimators_:
        oob = _generate_unsampled_indices(est.random_state, len(X), len(X), None)
        in_bag[np.setdiff1d(np.arange(len(X)), oob)] += 1
    never_out = int((in_bag == 3).sum())
    assert never_out > 0
    message = f"{never_out} of 150 rows"
    line = sys._getframe().f_lineno + 2
    with pytest.warns(treelens.OutOfBagWarning, match=message) as rec:
        grid = ForestGridDisplay.from_estimator(model, X, y, features=(2, 3), n_trees=1)
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)  # the user's call
    assert grid.forest_oob_count == len(X) - never_out
    assert grid.titles_[-1].endswith(f"on {len(X) - never_out} rows")


def test_forest_panel_is_exact_and_falls_back_to_a_raster(iris):
    X, y = iris
    model = RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0)
    model.fit(X, y)
    grid = ForestGridDisplay.from_estimator(model, X, features=(2, 3), n_trees=2)
    x_edges, y_edges, labels = exact_regions(
        to_forest(model), (2, 3), grid.regions.reference, grid.regions.window
    )
    assert grid.regions.exact
    np.testing.assert_array_equal(grid.regions.x_edges, x_edges)
    np.testing.assert_array_equal(grid.regions.y_edges, y_edges)
    np.testing.assert_array_equal(grid.regions.predictions, labels)
    # The mesh drawn holds one cell per exact region, in the predicted class.
    mesh = grid.regions.surface_
    assert mesh.get_array().size == labels.size
    np.testing.assert_array_equal(
        np.asarray(mesh.get_array()).ravel(),
        np.searchsorted(model.classes_, labels).ravel(),
    )
    assert "raster" not in grid.titles_[-1]
    small = ForestGridDisplay.from_estimator(
        model, X, features=(2, 3), n_trees=1, max_cells=10
    )
    assert not small.regions.exact and small.regions.n_cells == labels.size
    assert f"raster: {labels.size:,} exact cells over the cap" in small.titles_[-1]


def test_window_class_names_and_styles_in_the_axes(iris, forest):
    X, y = iris
    names = ["setosa", "versicolor", "virginica"]
    window = ((0.0, 8.0), (-1.0, 3.5))
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    for disp in (
        DecisionRegionDisplay.from_estimator(
            forest, X, y, features=(2, 3), window=window, class_names=names, exact=True
        ),
        DecisionRegionDisplay.from_estimator(
            forest,
            X,
            y,
            features=(2, 3),
            window=window,
            class_names=names,
            grid_resolution=30,
            boundary_kwargs={"colors": "red", "linestyles": "--", "label": "forest"},
            markers=["o", "s", "^"],
        ),
        PartitionDisplay.from_estimator(
            tree, X, y, features=(2, 3), window=window, class_names=names
        ),
        DataDisplay.from_data(X, y, features=(2, 3), window=window, class_names=names),
    ):
        ax = disp.ax_
        assert ax.get_xlim() == window[0] and ax.get_ylim() == window[1]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend[:3] == names
        # One scatter per class, each with its own marker.
        paths = [
            tuple(map(tuple, c.get_paths()[0].vertices.round(3))) for c in disp.points_
        ]
        assert len(disp.points_) == 3 and len(set(paths)) == 3
    # Regions fill the window even where there are no data.
    exact = DecisionRegionDisplay.from_estimator(
        forest, X, features=(2, 3), window=window, exact=True
    )
    assert exact.x_edges[[0, -1]].tolist() == [0.0, 8.0]
    assert exact.y_edges[[0, -1]].tolist() == [-1.0, 3.5]
    styled = DecisionRegionDisplay.from_estimator(
        forest,
        X,
        y,
        features=(2, 3),
        grid_resolution=30,
        show_regions=False,
        boundary_kwargs={"colors": "red", "linestyles": "--", "label": "forest"},
    )
    assert styled.surface_ is None
    np.testing.assert_allclose(styled.boundaries_.get_colors()[0], to_rgba("red"))
    assert styled.boundaries_.get_linestyle()[0][1] is not None  # dashed
    assert "forest" in [t.get_text() for t in styled.ax_.get_legend().get_texts()]
    with pytest.raises(InputError, match="`class_names` must hold one name per class"):
        DecisionRegionDisplay.from_estimator(forest, X, class_names=["a", "b"])
    with pytest.raises(InputError, match="`window` must"):
        DecisionRegionDisplay.from_estimator(forest, X, window=((0, 1), (2, 1)))


def test_data_display_without_classes():
    X = np.arange(12.0).reshape(6, 2)
    disp = DataDisplay.from_data(X, features=(1, 0), feature_names=["a", "b"])
    np.testing.assert_allclose(disp.points_[0].get_offsets(), X[:, [1, 0]])
    assert disp.ax_.get_xlabel() == "b" and disp.ax_.get_legend() is None


def test_svm_margins_and_a_decision_function_legend_matching_its_scale():
    from sklearn.datasets import make_blobs

    X, y = make_blobs(80, centers=2, random_state=0)
    svc = SVC(kernel="linear", C=1.0).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(
        svc,
        X,
        y,
        margins=True,
        response_method="decision_function",
        grid_resolution=60,
    )
    np.testing.assert_allclose(disp.decision, disp.response)
    np.testing.assert_allclose(
        disp.decision.ravel(), svc.decision_function(disp.grid), rtol=1e-12
    )
    assert list(disp.margins_.levels) == [-1.0, 0.0, 1.0]
    # The levels drawn lie where the decision function takes them.
    for level, path in zip(disp.margins_.levels, disp.margins_.get_paths()):
        vertices = path.vertices
        np.testing.assert_allclose(svc.decision_function(vertices), level, atol=0.05)
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert "decision function = 0" in legend and "decision function = \u00b11" in legend
    # Legend patches and points use the colour scale's ends, as the colour bar.
    cmap = disp.surface_.get_cmap()
    low, high = cmap(0.1), cmap(0.9)
    np.testing.assert_allclose(disp.points_[0].get_facecolor()[0], low)
    np.testing.assert_allclose(disp.points_[1].get_facecolor()[0], high)
    assert disp.surface_.norm(0.0) == pytest.approx(0.5)
    plain = DecisionRegionDisplay.from_estimator(svc, X, y, grid_resolution=20)
    assert plain.margins_ is None
    iris_X, iris_y = load_iris(return_X_y=True)
    with pytest.raises(InputError, match="binary decision function"):
        DecisionRegionDisplay.from_estimator(
            SVC().fit(iris_X, iris_y), iris_X, margins=True, grid_resolution=10
        )
    with pytest.raises(InputError, match="no `decision_function`"):
        DecisionRegionDisplay.from_estimator(
            KNeighborsClassifier().fit(X, y), X, margins=True, grid_resolution=10
        )


def _with_missing(iris):
    """Iris with a third of the first feature missing, and a model that learned
    where missing values go."""
    X, y = iris
    X = X.copy()
    X[::3, 0] = np.nan
    return X, y


@pytest.mark.parametrize(
    "make_model",
    [
        lambda: RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0),
        lambda: treelens_hgb(),
    ],
    ids=["forest", "hist-boosting"],
)
def test_exact_regions_through_a_row_with_a_missing_value(iris, make_model):
    X, y = _with_missing(iris)
    model = make_model().fit(X, y)
    reference = X[0].copy()  # its first feature is missing
    assert np.isnan(reference[0])
    disp = DecisionRegionDisplay.from_estimator(
        model, X, features=(2, 3), reference=reference, exact=True
    )
    rng = np.random.default_rng(1)
    pts = np.column_stack(
        [rng.uniform(*disp.window[0], 2000), rng.uniform(*disp.window[1], 2000)]
    )
    pts = pts.astype(np.float32).astype(np.float64)
    rows = np.tile(reference, (2000, 1))
    rows[:, [2, 3]] = pts
    i = np.searchsorted(disp.x_edges, pts[:, 0], side="left") - 1
    j = np.searchsorted(disp.y_edges, pts[:, 1], side="left") - 1
    np.testing.assert_array_equal(disp.predictions[j, i], model.predict(rows))


def test_partition_through_a_row_with_a_missing_value(iris):
    X, y = _with_missing(iris)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert (tree.tree_.feature == 0).any()  # the missing feature is split on
    reference = X[0].copy()
    disp = PartitionDisplay.from_estimator(
        tree, X, y, features=(2, 3), reference=reference
    )
    # Each rectangle's centre, with the missing value held, reaches its leaf.
    rects = np.asarray(disp.rectangles)
    centres = np.tile(reference, (len(rects), 1))
    centres[:, 2] = (rects[:, 0] + rects[:, 1]) / 2
    centres[:, 3] = (rects[:, 2] + rects[:, 3]) / 2
    np.testing.assert_array_equal(tree.apply(centres), disp.nodes)


def test_an_infinite_reference_is_refused(iris, forest):
    X, _y = iris
    reference = X[0].copy()
    reference[1] = np.inf
    with pytest.raises(InputError, match="infinite"):
        DecisionRegionDisplay.from_estimator(forest, X, reference=reference)


def treelens_hgb():
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=20, random_state=0)


def test_data_display_draws_categories_at_their_codes():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "size": [1.0, 2.0, 3.0, 4.0, np.nan],
            "city": pd.Categorical(
                ["Paris", "Lyon", None, "Paris", "Nice"],
                categories=["Paris", "Nice", "Lyon"],  # the dtype's order is kept
            ),
            "colour": ["red", "blue", "red", "green", "blue"],  # sorted
        }
    )
    disp = DataDisplay.from_data(frame, [0, 1, 0, 1, 1], features=("city", "colour"))
    np.testing.assert_array_equal(disp.X[:, 1], [0, 2, np.nan, 0, 1])
    np.testing.assert_array_equal(disp.X[:, 2], [2, 0, 2, 1, 0])
    assert disp.category_labels == (("Paris", "Nice", "Lyon"), ("blue", "green", "red"))
    ticks = [t.get_text() for t in disp.ax_.get_xticklabels()]
    assert ticks == ["Paris", "Nice", "Lyon"]
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [
        "blue",
        "green",
        "red",
    ]
    numeric = DataDisplay.from_data(frame, features=("size", "colour"))
    assert numeric.category_labels == (None, ("blue", "green", "red"))
    with pytest.raises(InputError, match="not numbers"):
        DataDisplay.from_data(frame.to_numpy(), features=(0, 1))


@pytest.mark.filterwarnings("ignore::treelens.MissingValuesWarning")
def test_regions_of_numeric_features_hold_categories_where_the_reference_has_them():
    """A slice through two numeric columns of a model that also splits on
    categories: every grid point is predicted as the model predicts the row,
    the reference's categories routed by each node's category set."""
    from tests.models import PIPELINE_FACTORIES

    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    forest = treelens.to_forest(case.model)
    codes = forest.encode(case.X)
    rows = np.flatnonzero(np.isfinite(codes).all(axis=1))[:8]
    assert rows.size
    for row in rows:
        for exact in (False, True):
            disp = DecisionRegionDisplay.from_estimator(
                forest,
                codes,
                features=("income", "age"),
                reference=codes[row],
                grid_resolution=25,
                exact=exact,
            )
            if exact:
                assert disp.x_edges is not None
                xs = (disp.x_edges[:-1] + disp.x_edges[1:]) / 2
                ys = (disp.y_edges[:-1] + disp.y_edges[1:]) / 2
                xx, yy = np.meshgrid(xs, ys)
                points = np.tile(codes[row], (xx.size, 1))
                f0, f1 = (forest.feature_names.index(n) for n in ("income", "age"))
                points[:, f0], points[:, f1] = xx.ravel(), yy.ravel()
            else:
                points = disp.grid
            np.testing.assert_array_equal(
                disp.predictions.ravel(), forest.predict(points)
            )
