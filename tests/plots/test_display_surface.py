"""PredictionSurfaceDisplay: a regressor's (an IsolationForest's) value over two
features, exact on the overlay of the split lines or on a grid."""

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

import treelens
from tests.models import MODEL_FACTORIES, PIPELINE_FACTORIES, library_predictions
from treelens import (
    DecisionRegionDisplay,
    InputError,
    MissingValuesWarning,
    PredictionSurfaceDisplay,
    UnsupportedModelError,
)
from treelens._plots._partition import cell_points


def _data(seed=0, n=150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 2 * X[:, 0] + X[:, 1] ** 2 - X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _rows(reference, features, xs, ys):
    """Rows at every (x, y) of a grid, the other features at the reference."""
    gx, gy = np.meshgrid(xs, ys)
    rows = np.tile(reference, (gx.size, 1))
    rows[:, features[0]], rows[:, features[1]] = gx.ravel(), gy.ravel()
    return rows


def _model_output(model, rows):
    """What the surface draws, by the library itself: ``predict``, or an
    IsolationForest's ``score_samples``."""
    if isinstance(model, IsolationForest):
        return model.score_samples(rows)
    return model.predict(rows)


def _cell_rows(disp, dtype=np.float32):
    px = cell_points(disp.x_edges, dtype)
    py = cell_points(disp.y_edges, dtype)
    return _rows(disp.reference, disp.features, px, py)


def _in_window(disp, n, seed=0):
    """Random rows in the window, float32 values, and the cell of each."""
    rng = np.random.default_rng(seed)
    px = rng.uniform(*disp.window[0], n).astype(np.float32).astype(np.float64)
    py = rng.uniform(*disp.window[1], n).astype(np.float32).astype(np.float64)
    rows = np.tile(disp.reference, (n, 1))
    rows[:, disp.features[0]], rows[:, disp.features[1]] = px, py
    # A cell is (edge_i, edge_i+1]: a value on an edge belongs to the left cell.
    i = np.searchsorted(disp.x_edges, px, side="left") - 1
    j = np.searchsorted(disp.y_edges, py, side="left") - 1
    return rows, j, i


EXACT_MODELS = {
    "random-forest": lambda: RandomForestRegressor(
        n_estimators=5, max_depth=4, random_state=0
    ),
    "gradient-boosting": lambda: GradientBoostingRegressor(
        n_estimators=5, max_depth=3, random_state=0
    ),
    "hist-gradient-boosting": lambda: HistGradientBoostingRegressor(
        max_iter=5, max_leaf_nodes=8, random_state=0
    ),
    "isolation-forest": lambda: IsolationForest(
        n_estimators=5, max_samples=64, random_state=0
    ),
}


# ------------------------------------------------------------------- exact mode
@pytest.mark.parametrize("name", list(EXACT_MODELS))
def test_exact_cells_are_the_models_output_bit_for_bit(name):
    X, y = _data()
    model = EXACT_MODELS[name]().fit(X, y)
    disp = PredictionSurfaceDisplay.from_estimator(
        model, X, features=(0, 2), exact=True
    )
    assert disp.exact and disp.xx is None and disp.grid is None
    n_y, n_x = disp.y_edges.size - 1, disp.x_edges.size - 1
    assert disp.values.shape == (n_y, n_x) and disp.n_cells == n_x * n_y > 1
    # One point inside every cell.
    expected = _model_output(model, _cell_rows(disp))
    np.testing.assert_array_equal(disp.values.ravel(), expected)
    # Every point of the window gets its cell's value: the cells are exact.
    rows, j, i = _in_window(disp, 3000)
    np.testing.assert_array_equal(disp.values[j, i], _model_output(model, rows))
    # The other features at the median of X; the window around the data.
    np.testing.assert_array_equal(disp.reference, np.median(X, axis=0))
    assert (
        disp.x_edges[0] == disp.window[0, 0] and disp.y_edges[-1] == disp.window[1, 1]
    )
    # The mesh drawn is the values, one quadrilateral per cell.
    np.testing.assert_array_equal(
        np.asarray(disp.surface_.get_array()).ravel(), disp.values.ravel()
    )


def test_isolation_forest_is_its_score_and_negated_its_anomaly_score():
    X, _ = _data()
    model = IsolationForest(n_estimators=5, max_samples=64, random_state=0).fit(X)
    plain = PredictionSurfaceDisplay.from_estimator(model, X, features=(1, 2))
    anomaly = PredictionSurfaceDisplay.from_estimator(
        model, X, features=(1, 2), negate=True, levels=-model.offset_
    )
    assert plain.value_name == "score_samples"
    assert anomaly.value_name == "anomaly score (-score_samples)"
    assert anomaly.colorbar_.ax.get_ylabel() == "anomaly score (-score_samples)"
    expected = model.score_samples(_cell_rows(anomaly))
    np.testing.assert_array_equal(anomaly.values.ravel(), -expected)
    # The threshold line parts the cells the model calls outliers from the others.
    outlier = model.predict(_cell_rows(anomaly)).reshape(anomaly.values.shape) == -1
    segments = anomaly.contour_segments_[0]
    assert len(segments) > 0
    x_mid = 0.5 * (anomaly.x_edges[:-1] + anomaly.x_edges[1:])
    y_mid = 0.5 * (anomaly.y_edges[:-1] + anomaly.y_edges[1:])
    for (x0, y0), (x1, y1) in segments:
        if x0 == x1:  # vertical: the cells left and right of it differ
            j = np.searchsorted(y_mid, 0.5 * (y0 + y1))
            i = np.searchsorted(anomaly.x_edges, x0) - 1
            assert outlier[j, i] != outlier[j, i + 1]
        else:
            i = np.searchsorted(x_mid, 0.5 * (x0 + x1))
            j = np.searchsorted(anomaly.y_edges, y0) - 1
            assert outlier[j, i] != outlier[j + 1, i]


def test_toy_tree_by_hand():
    # y = x0 + 2 x1 on the four corners: one cell per corner, level 1.5 between
    # the bottom row (0, 1) and the top row (2, 3).
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    tree = DecisionTreeRegressor(random_state=0).fit(X, [0.0, 1.0, 2.0, 3.0])
    disp = PredictionSurfaceDisplay.from_estimator(tree, X, levels=[1.5])
    np.testing.assert_allclose(disp.x_edges, [-0.05, 0.5, 1.05])
    np.testing.assert_allclose(disp.y_edges, [-0.05, 0.5, 1.05])
    np.testing.assert_array_equal(disp.values, [[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(
        disp.contour_segments_[0],
        [[[-0.05, 0.5], [0.5, 0.5]], [[0.5, 0.5], [1.05, 0.5]]],
    )
    assert len(disp.contours_) == 1
    negated = PredictionSurfaceDisplay.from_estimator(
        tree, X, [0.0, 1.0, 2.0, 3.0], negate=True
    )
    np.testing.assert_array_equal(negated.values, [[-0.0, -1.0], [-2.0, -3.0]])
    assert negated.value_name == "-prediction"
    np.testing.assert_array_equal(negated.points_.get_array(), [0, -1, -2, -3])


def test_exact_auto_falls_back_to_the_grid_past_max_cells():
    X, y = _data()
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    full = PredictionSurfaceDisplay.from_estimator(model, X, exact=True)
    n_cells = full.values.size
    assert full.n_cells == n_cells
    at_cap = PredictionSurfaceDisplay.from_estimator(model, X, max_cells=n_cells)
    assert at_cap.exact
    np.testing.assert_array_equal(at_cap.values, full.values)
    fallback = PredictionSurfaceDisplay.from_estimator(
        model, X, max_cells=n_cells - 1, grid_resolution=12
    )
    assert not fallback.exact and fallback.values.shape == (12, 12)
    assert fallback.n_cells == n_cells
    with pytest.raises(
        InputError, match=rf"{n_cells:,} cells.*max_cells={n_cells - 1:,}"
    ):
        PredictionSurfaceDisplay.from_estimator(
            model, X, exact=True, max_cells=n_cells - 1
        )


# -------------------------------------------------------------------- grid mode
@pytest.mark.parametrize(
    "make_model",
    [
        lambda: RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0),
        lambda: GradientBoostingRegressor(n_estimators=5, random_state=0),
        lambda: IsolationForest(n_estimators=5, random_state=0),
        lambda: KNeighborsRegressor(n_neighbors=5),
    ],
    ids=["forest", "boosting", "isolation", "knn"],
)
def test_grid_values_equal_the_models_output_on_the_grid_rows(make_model):
    X, y = _data()
    model = make_model().fit(X, y)
    disp = PredictionSurfaceDisplay.from_estimator(
        model, X, y, features=(2, 0), exact=False, grid_resolution=15
    )
    assert not disp.exact and disp.x_edges is None
    assert disp.values.shape == (15, 15) and disp.grid.shape == (225, 3)
    np.testing.assert_array_equal(disp.values.ravel(), _model_output(model, disp.grid))
    # The grid spans the window in the chosen features, the other at the median.
    np.testing.assert_array_equal(disp.grid[:, 1], np.median(X[:, 1]))
    np.testing.assert_allclose(disp.xx[0, [0, -1]], disp.window[0])
    np.testing.assert_allclose(disp.yy[[0, -1], 0], disp.window[1])
    np.testing.assert_array_equal(disp.grid[:, 2], disp.xx.ravel())
    np.testing.assert_array_equal(disp.grid[:, 0], disp.yy.ravel())
    assert np.asarray(disp.surface_.get_array()).size == 225


def test_any_regressor_is_drawn_on_the_grid_with_names():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = KNeighborsRegressor().fit(frame, y)
    disp = PredictionSurfaceDisplay.from_estimator(
        model, frame, pd.Series(y, name="price"), features=("c", "a"), grid_resolution=9
    )
    assert disp.features == (2, 0) and disp.feature_names == ("c", "a")
    rows = pd.DataFrame(disp.grid, columns=["a", "b", "c"])
    np.testing.assert_array_equal(disp.values.ravel(), model.predict(rows))
    assert disp.value_name == "price" and disp.n_cells is None
    assert disp.colorbar_.ax.get_ylabel() == "price"
    assert (disp.ax_.get_xlabel(), disp.ax_.get_ylabel()) == ("c", "a")
    with pytest.raises(UnsupportedModelError, match="exact=True.*KNeighborsRegressor"):
        PredictionSurfaceDisplay.from_estimator(model, frame, exact=True)


def test_an_outlier_detector_that_is_not_a_tree_model_draws_its_scores():
    from sklearn.neighbors import LocalOutlierFactor

    X, _ = _data()
    model = LocalOutlierFactor(n_neighbors=10, novelty=True).fit(X)
    disp = PredictionSurfaceDisplay.from_estimator(model, X, grid_resolution=8)
    np.testing.assert_array_equal(disp.values.ravel(), model.score_samples(disp.grid))
    assert disp.value_name == "score_samples"


# ------------------------------------------------------------------ drawing
def test_points_share_the_surface_colour_scale():
    X, y = _data()
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, y)
    disp = PredictionSurfaceDisplay.from_estimator(model, X, y, levels=[0.0, 1.0])
    assert disp.points_.norm is disp.surface_.norm
    np.testing.assert_array_equal(disp.points_.get_array(), y)
    np.testing.assert_array_equal(disp.points_.get_offsets(), X[:, :2])
    norm = disp.surface_.norm
    assert norm.vmin == min(y.min(), disp.values.min())
    assert norm.vmax == max(y.max(), disp.values.max())
    assert len(disp.contours_) == 2 and disp.colorbar_ is not None
    assert disp.ax_.get_xlim() == tuple(disp.window[0])
    plain = PredictionSurfaceDisplay.from_estimator(model, X, colorbar=False)
    assert plain.colorbar_ is None and plain.contours_ == []
    assert plain.points_.get_array() is None  # one colour, no target
    assert plain.surface_.norm.vmax == plain.values.max()


def test_rows_missing_a_drawn_value_are_counted():
    case = MODEL_FACTORIES["sklearn.RandomForestRegressor"]()
    missing = np.flatnonzero(np.isnan(case.X[:, [0, 1]]).any(axis=1))
    assert missing.size
    with pytest.warns(MissingValuesWarning, match=f"{missing.size} of 120 rows"):
        disp = PredictionSurfaceDisplay.from_estimator(case.model, case.X, case.y)
    np.testing.assert_array_equal(disp.skipped_rows_, missing)
    # The median holds out missing values.
    np.testing.assert_array_equal(disp.reference, np.nanmedian(case.X, axis=0))


def test_a_categorical_axis_is_bands_of_the_models_prediction():
    case = PIPELINE_FACTORIES["sklearn.Pipeline[ordinal+boosting]"]()
    forest = treelens.to_forest(case.model)
    labels = forest.features[forest.feature_names.index("employment")].categories
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValuesWarning)
        disp = PredictionSurfaceDisplay.from_estimator(
            case.model, case.X, features=("income", "employment"), grid_resolution=7
        )
    assert not disp.exact and disp.category_labels[1] == labels
    np.testing.assert_array_equal(disp.y_edges, np.arange(len(labels) + 1) - 0.5)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == list(labels)
    # Every band at every income is the pipeline's own prediction.
    centres = 0.5 * (disp.x_edges[:-1] + disp.x_edges[1:])
    base = case.X.iloc[[0]].copy()
    for j, column in enumerate(forest.feature_names):
        spec = forest.features[j]
        if column in ("income", "employment") or spec.dropped:
            continue
        code = disp.reference[j]
        base[column] = spec.categories[int(code)] if spec.categories else code
    rows = base.loc[base.index.repeat(centres.size * len(labels))].copy()
    rows["employment"] = np.repeat(list(labels), centres.size)
    rows["income"] = np.tile(centres, len(labels))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = case.model.predict(rows)
    np.testing.assert_array_equal(disp.values.ravel(), expected)


# ------------------------------------------------------------ every regressor
#: Every supported model that predicts a value (the Booster factory of
#: LightGBM is a regressor, XGBoost's and CatBoost's generic ones classifiers).
REGRESSORS = sorted(
    name
    for name in MODEL_FACTORIES
    if name not in PIPELINE_FACTORIES
    and ("Regressor" in name or name in ("lightgbm.Booster", "sklearn.IsolationForest"))
)


@pytest.mark.parametrize("name", REGRESSORS)
def test_every_supported_regressor_is_exact_on_every_cell(name):
    case = MODEL_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    assert not forest.is_classifier
    # Native boosters have no `predict(X)` of scikit-learn's; their Forest draws.
    drawn = case.model if hasattr(case.model, "n_features_in_") else forest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValuesWarning)
        disp = PredictionSurfaceDisplay.from_estimator(
            drawn, case.X, features=(0, 1), exact=True
        )
    rows = _cell_rows(disp, forest.input_dtype)
    expected = library_predictions(case.model, rows)["predict"]
    np.testing.assert_array_equal(disp.values.ravel(), expected)


# ------------------------------------------------------------------ properties
@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["forest", "extra", "boosting", "hist", "tree"]),
)
def test_exact_surface_of_random_forests_is_the_models_prediction(seed, kind):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4))
    X[:, 3] = rng.integers(0, 3, 60)  # ties: thresholds between discrete values
    y = X[:, 0] * X[:, 3] - X[:, 1] + rng.normal(size=60)
    model = {
        "forest": RandomForestRegressor(n_estimators=4, max_depth=5, random_state=seed),
        "extra": ExtraTreesRegressor(n_estimators=4, max_depth=5, random_state=seed),
        "boosting": GradientBoostingRegressor(
            n_estimators=4, max_depth=3, random_state=seed
        ),
        "hist": HistGradientBoostingRegressor(
            max_iter=4, max_leaf_nodes=6, min_samples_leaf=3, random_state=seed
        ),
        "tree": DecisionTreeRegressor(max_depth=6, random_state=seed),
    }[kind].fit(X, y)
    features = tuple(int(f) for f in rng.choice(4, size=2, replace=False))
    disp = PredictionSurfaceDisplay.from_estimator(
        model,
        X,
        features=features,
        reference=X[rng.integers(60)],
        exact=True,
        show_points=False,
        colorbar=False,
    )
    # Cells tile the window and hold the model's prediction everywhere in them.
    assert (np.diff(disp.x_edges) > 0).all() and (np.diff(disp.y_edges) > 0).all()
    np.testing.assert_array_equal(disp.values.ravel(), model.predict(_cell_rows(disp)))
    rows, j, i = _in_window(disp, 400, seed)
    np.testing.assert_array_equal(disp.values[j, i], model.predict(rows))
    # The grid agrees with the cells at every grid point.
    grid = PredictionSurfaceDisplay.from_estimator(
        model,
        X,
        features=features,
        reference=disp.reference,
        exact=False,
        grid_resolution=9,
        show_points=False,
        colorbar=False,
    )
    np.testing.assert_array_equal(grid.values.ravel(), model.predict(grid.grid))
    plt.close(disp.figure_)
    plt.close(grid.figure_)


# ------------------------------------------------------------------- bad input
def test_classifiers_are_refused_with_the_display_for_them():
    X, y = _data()
    labels = (y > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, labels)
    with pytest.raises(
        UnsupportedModelError,
        match="needs a regressor or an IsolationForest; got the classifier "
        "RandomForestClassifier. Use DecisionRegionDisplay",
    ):
        PredictionSurfaceDisplay.from_estimator(forest, X)
    with pytest.raises(UnsupportedModelError, match="classifier KNeighborsClassifier"):
        PredictionSurfaceDisplay.from_estimator(
            KNeighborsClassifier().fit(X, labels), X
        )
    # And the reverse: the regions of a regressor point here.
    regressor = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="Use PredictionSurfaceDisplay"):
        DecisionRegionDisplay.from_estimator(regressor, X)


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "many", True, None])
def test_bad_grid_resolution(bad):
    X, y = _data()
    model = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(
        InputError,
        match=rf"`grid_resolution` must be an integer of at least 2; got {bad!r}",
    ):
        PredictionSurfaceDisplay.from_estimator(model, X, grid_resolution=bad)


def test_bad_input_names_what_was_wrong():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = RandomForestRegressor(n_estimators=2, random_state=0).fit(frame, y)
    with pytest.raises(InputError, match="Unknown feature 'colour'"):
        PredictionSurfaceDisplay.from_estimator(model, frame, features=("a", "colour"))
    knn = KNeighborsRegressor().fit(frame, y)
    with pytest.raises(InputError, match="Unknown feature 'colour'"):
        PredictionSurfaceDisplay.from_estimator(knn, frame, features=("colour", "a"))
    with pytest.raises(InputError, match="'b' twice"):
        PredictionSurfaceDisplay.from_estimator(model, frame, features=("b", 1))
    with pytest.raises(InputError, match="`exact` must be True, False or 'auto'"):
        PredictionSurfaceDisplay.from_estimator(model, frame, exact="yes")
    for bad in (0, 2.5, "many"):
        with pytest.raises(InputError, match="`max_cells` must be a positive"):
            PredictionSurfaceDisplay.from_estimator(model, frame, max_cells=bad)
    with pytest.raises(InputError, match=r"one value per row of X \(150\); got"):
        PredictionSurfaceDisplay.from_estimator(model, frame, y[:10])
    with pytest.raises(InputError, match="`y` colours the points.*numeric"):
        PredictionSurfaceDisplay.from_estimator(model, frame, ["x"] * 150)
    with pytest.raises(InputError, match="`levels` must be a number"):
        PredictionSurfaceDisplay.from_estimator(model, frame, levels="high")
    with pytest.raises(InputError, match="`levels` must be finite"):
        PredictionSurfaceDisplay.from_estimator(model, frame, levels=[0.0, np.nan])
    with pytest.raises(InputError, match="`negate` must be True or False"):
        PredictionSurfaceDisplay.from_estimator(model, frame, negate="yes")
    one = RandomForestRegressor(n_estimators=2, random_state=0).fit(X[:, :1], y)
    with pytest.raises(InputError, match="at least two features"):
        PredictionSurfaceDisplay.from_estimator(one, X[:, :1])


def test_too_many_cells_with_exact_true_is_refused():
    X, y = _data(n=400)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    with pytest.raises(InputError, match=r"cells, each predicted by all 10 trees"):
        PredictionSurfaceDisplay.from_estimator(model, X, exact=True, max_cells=1000)
