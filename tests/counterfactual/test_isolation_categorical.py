"""An IsolationForest bound over categorical columns and missing values.

The brute force reads the thresholds from scikit-learn's own tree arrays (the
columns a ColumnTransformer passes through keep their units), takes both float64
neighbours of each as the model reads it after its cast, and checks validity with the pipeline's own ``predict`` and
the anomaly score with the isolation pipeline's own ``score_samples``.
"""

import itertools
import re
import warnings

import lightgbm
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    IsolationForest,
    RandomForestClassifier,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

from tests.counterfactual import brute
from tests.counterfactual.brute import assert_proven_optimal, last_going_left
from treelens import InputError, optimal_counterfactual
from treelens._counterfactual._problem import CounterfactualCheckWarning

COLORS = ["blue", "green", "red"]


def _frame(seed, n=240):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {"color": rng.choice(COLORS, n), "size": rng.normal(size=n).round(3)}
    )
    y = ((frame["color"] == "red") ^ (frame["size"] > 0.3)).astype(int)
    return frame, y


def _encoder(**options):
    return ColumnTransformer(
        [("onehot", OneHotEncoder(**options), ["color"])], remainder="passthrough"
    )


def _thresholds(estimators, column):
    """Split thresholds of scikit-learn trees on transformed column ``column``."""
    out = []
    for estimator in estimators:
        tree = estimator.tree_
        split = tree.children_left >= 0
        out.extend(tree.threshold[split & (tree.feature == column)].tolist())
    return np.array(out)


def _neighbours(x, thresholds, dtype=np.float32):
    """``x`` and both float64 neighbours of each threshold ``t`` of a tree that
    compares in ``dtype``: the last double whose cast goes left and the next
    (for float32, near the midpoint of the float32 values around ``t``, where
    scikit-learn's cast, rounding to nearest, switches sides)."""
    down = last_going_left(np.asarray(thresholds, dtype=np.float64), dtype)
    values = [x, down, np.nextafter(down, np.inf)]
    return np.unique(np.concatenate([np.atleast_1d(v) for v in values]))


def _bound(scores):
    """A bound between two scores the data reach (none sits on it: the search
    counts points within a millionth of the bound as outside)."""
    values = np.unique(scores)
    i = int(0.6 * values.size)
    return float((values[i] + values[i + 1]) / 2)


def _brute_force(model, iso, row, bound, sizes):
    """Least cost of a point the model moves to another class within the bound:
    a colour (1 per change) and a size (l1)."""
    points = pd.DataFrame(
        list(itertools.product(COLORS, sizes)), columns=["color", "size"]
    )
    valid = model.predict(points) != model.predict(row)[0]
    valid &= -iso.score_samples(points) <= bound
    cost = (points["color"] != row["color"].iloc[0]).astype(float) + np.abs(
        points["size"] - row["size"].iloc[0]
    )
    return float(cost[valid].min()) if valid.any() else np.inf


@pytest.mark.parametrize("seed", [0, 1])
def test_the_bounded_optimum_over_categories_equals_brute_force(seed):
    frame, y = _frame(seed)
    model = make_pipeline(
        _encoder(), RandomForestClassifier(3, max_depth=3, random_state=seed)
    ).fit(frame, y)
    iso = make_pipeline(
        _encoder(), IsolationForest(n_estimators=4, max_samples=24, random_state=seed)
    ).fit(frame)
    bound = _bound(-iso.score_samples(frame))
    rows = frame.iloc[:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, rows, target="other", cost="l1",
            isolation_forest=iso, max_anomaly_score=bound,
        )  # fmt: skip
    # The size is the last transformed column (after the three colours).
    thresholds = np.r_[
        _thresholds(model[-1].estimators_, 3), _thresholds(iso[-1].estimators_, 3)
    ]
    found = result.found_
    assert found.any()
    scores = -iso.score_samples(result.X_cf_[found])
    assert (scores <= bound).all()
    np.testing.assert_allclose(result.anomaly_score_[found], scores)
    assert (model.predict(result.X_cf_[found]) != model.predict(rows[found])).all()
    for i in range(len(rows)):
        row = rows.iloc[i : i + 1]
        # The lifted pipeline searches doubles (its thresholds in raw units).
        sizes = _neighbours(row["size"].iloc[0], thresholds)
        least = _brute_force(model, iso, row, bound, sizes)
        assert found[i] == np.isfinite(least)
        if found[i]:
            assert_proven_optimal(result.cost_[i], least)


def test_a_plain_isolation_forest_on_rows_with_missing_values():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    model = HistGradientBoostingClassifier(max_iter=3, max_depth=2, random_state=0)
    model.fit(X, y)
    iso = IsolationForest(n_estimators=4, max_samples=24, random_state=0).fit(X)
    bound = _bound(-iso.score_samples(X))
    rows = X[np.isnan(X).sum(axis=1) == 1][:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, rows, target="other", cost="l1",
            isolation_forest=iso, max_anomaly_score=bound,
        )  # fmt: skip
    # The model compares float64 values, the IsolationForest float32 casts.
    own = [
        [
            t
            for e in model._predictors
            for p in e
            for f, t, leaf in zip(
                p.nodes["feature_idx"], p.nodes["num_threshold"], p.nodes["is_leaf"]
            )
            if f == j and not leaf
        ]
        for j in range(2)
    ]
    found = result.found_
    assert found.any()
    assert (-iso.score_samples(result.X_cf_[found]) <= bound).all()
    for i, x in enumerate(rows):
        missing = np.isnan(x)
        assert np.isnan(result.X_cf_[i][missing]).all() or not found[i]
        # The missing value stays missing: only the other one moves.
        j = int(np.flatnonzero(~missing)[0])
        values = np.union1d(
            _neighbours(x[j], own[j], np.float64),
            _neighbours(x[j], _thresholds(iso.estimators_, j)),
        )
        points = np.repeat(x[None, :], values.size, axis=0)
        points[:, j] = values
        valid = model.predict(points) != model.predict(x[None, :])[0]
        valid &= -iso.score_samples(points) <= bound
        least = np.abs(values - x[j])[valid].min() if valid.any() else np.inf
        assert found[i] == np.isfinite(least)
        if found[i]:
            assert_proven_optimal(result.cost_[i], least)


def test_isolation_forests_in_other_columns_are_refused_naming_the_column():
    frame, y = _frame(4)
    model = make_pipeline(
        _encoder(handle_unknown="ignore"), RandomForestClassifier(3, random_state=0)
    ).fit(frame, y)
    rows = frame.iloc[:3].copy()
    codes = frame.assign(color=frame["color"].map(COLORS.index))
    on_codes = IsolationForest(n_estimators=3, random_state=0).fit(codes)
    with pytest.raises(InputError, match="categorical column 'color' as numbers"):
        optimal_counterfactual(model, rows, target="other", isolation_forest=on_codes)
    other = IsolationForest(n_estimators=3, random_state=0)
    other.fit(frame[["size"]].rename(columns={"size": "weight"}))
    with pytest.raises(InputError, match="column 'weight'"):
        optimal_counterfactual(model, rows, target="other", isolation_forest=other)
    # An isolation pipeline whose encoder refuses a missing colour.
    strict = make_pipeline(
        _encoder(), IsolationForest(n_estimators=3, random_state=0)
    ).fit(frame)
    rows.loc[rows.index[0], "color"] = np.nan
    with pytest.raises(InputError, match="'color' has missing values"):
        optimal_counterfactual(model, rows, target="other", isolation_forest=strict)
    # A plain one on the numeric column is accepted.
    size_only = IsolationForest(n_estimators=3, random_state=0).fit(frame[["size"]])
    result = optimal_counterfactual(
        model, rows.iloc[1:], target="other", cost="l1", isolation_forest=size_only
    )
    found = result.found_
    assert (
        -size_only.score_samples(result.X_cf_.loc[found, ["size"]])
        <= result.max_anomaly_score_
    ).all()


def test_a_category_only_the_isolation_forest_reads_may_change():
    frame, y = _frame(5)
    shapes = ["circle", "square"]
    frame["shape"] = np.random.default_rng(6).choice(shapes, len(frame))
    encoder = ColumnTransformer(
        [("onehot", OneHotEncoder(), ["color", "shape"])], remainder="passthrough"
    )
    model = make_pipeline(
        encoder, DecisionTreeClassifier(max_depth=2, random_state=0)
    ).fit(frame, y)
    # The model never splits on the shape (its one-hot columns are 3 and 4).
    tree = model[-1].tree_
    assert not np.isin(tree.feature[tree.children_left >= 0], [3, 4]).any()
    iso = make_pipeline(
        clone(encoder), IsolationForest(n_estimators=4, max_samples=24, random_state=1)
    ).fit(frame)
    assert any(
        np.isin(e.tree_.feature[e.tree_.children_left >= 0], [3, 4]).any()
        for e in iso[-1].estimators_
    )
    bound = _bound(-iso.score_samples(frame))
    rows = frame.iloc[:4]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, rows, target="other", cost="l1",
            isolation_forest=iso, max_anomaly_score=bound,
        )  # fmt: skip
    thresholds = np.r_[_thresholds([model[-1]], 5), _thresholds(iso[-1].estimators_, 5)]
    for i in range(len(rows)):
        row = rows.iloc[i]
        sizes = _neighbours(row["size"], thresholds)
        points = pd.DataFrame(
            list(itertools.product(COLORS, shapes, sizes)),
            columns=["color", "shape", "size"],
        )
        valid = model.predict(points) != model.predict(rows.iloc[i : i + 1])[0]
        valid &= -iso.score_samples(points) <= bound
        cost = (
            (points["color"] != row["color"]).astype(float)
            + (points["shape"] != row["shape"]).astype(float)
            + np.abs(points["size"] - row["size"])
        )
        least = float(cost[valid].min()) if valid.any() else np.inf
        assert result.found_[i] == np.isfinite(least)
        if result.found_[i]:
            assert_proven_optimal(result.cost_[i], least)
            x_cf = result.X_cf_.iloc[i : i + 1]
            assert -iso.score_samples(x_cf)[0] <= bound


# Models fitted on an array [size, label] whose second column is categorical;
# the labels each reads there (numbers: the array holds them).
def _hist(X, y):
    model = HistGradientBoostingClassifier(
        max_iter=3, max_depth=2, categorical_features=[1], random_state=0
    )
    return model.fit(X, y)


def _lightgbm(X, y):
    model = lightgbm.LGBMClassifier(
        n_estimators=3, num_leaves=4, min_child_samples=5, random_state=0, verbose=-1
    )
    return model.fit(X, y, categorical_feature=[1])


def _encoded(encoder, final):
    def fit(X, y):
        step = ColumnTransformer([("encode", encoder, [1])], remainder="passthrough")
        return make_pipeline(step, final).fit(X, y)

    return fit


def _stump(X, y):
    """A stump on the size alone (fitted to ``size > 0.3``): only the
    IsolationForest reads the label."""
    tree = DecisionTreeClassifier(max_depth=1, random_state=0)
    model = _encoded(OneHotEncoder(), tree)(X, X[:, 0] > 0.3)
    assert model[-1].tree_.feature[0] == 3  # the size, after three one-hot columns
    return model


ARRAY_MODELS = {
    "hist": (_hist, (1.0, 5.0, 9.0)),
    "lightgbm": (_lightgbm, (0.0, 1.0, 2.0)),
    "onehot": (
        _encoded(
            OneHotEncoder(), RandomForestClassifier(3, max_depth=3, random_state=0)
        ),
        (10.0, 20.0, 30.0),
    ),
    "ordinal": (
        _encoded(
            OrdinalEncoder(), RandomForestClassifier(3, max_depth=3, random_state=0)
        ),
        (10.0, 20.0, 30.0),
    ),
    "stump": (_stump, (10.0, 20.0, 30.0)),
}


def _array(seed, labels, n=240):
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=n).round(3), rng.choice(labels, n)]
    y = ((X[:, 1] == labels[-1]) ^ (X[:, 0] > 0.3)).astype(int)
    return X, y


def _assert_least_over_labels(model, iso, rows, labels, bound, *, as_given, read):
    """The optimum bounded by ``iso`` of each of ``rows`` (an array [size,
    label], or a frame ``as_given`` makes of one) is the least cost over the
    labels and the size's cells (the thresholds of both, ``read`` naming the
    model column of each of the IsolationForest's columns), validity by the
    model's own ``predict`` and the bound by the IsolationForest's own
    ``score_samples`` on its columns, in its order."""

    def score(points):
        points = as_given(points)
        if hasattr(points, "iloc"):
            points = points[list(iso.feature_names_in_)]
        return -iso.score_samples(points)

    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(
            model, as_given(rows), target="other", cost="l1",
            isolation_forest=iso, max_anomaly_score=bound,
        )  # fmt: skip
    found = result.found_
    assert found.any()
    X_cf = np.asarray(result.X_cf_, dtype=np.float64)[found]
    assert np.isin(X_cf[:, 1], labels).all()
    np.testing.assert_array_equal(result.anomaly_score_[found], score(X_cf))
    assert (score(X_cf) <= bound).all()
    own = model.predict(as_given(rows))
    assert (model.predict(as_given(X_cf)) != own[found]).all()
    extra = {read[i]: t for i, t in brute.isolation_thresholds(iso).items()}
    for i, x in enumerate(rows):
        sizes = brute.candidate_values(model, x, extra_thresholds=extra)[0]
        points = np.array(list(itertools.product(sizes, labels)))
        valid = model.predict(as_given(points)) != own[i]
        valid &= score(points) <= bound
        cost = np.abs(points[:, 0] - x[0]) + (points[:, 1] != x[1])
        least = float(cost[valid].min()) if valid.any() else np.inf
        assert found[i] == np.isfinite(least)
        if found[i]:
            assert_proven_optimal(result.cost_[i], least)


@pytest.mark.parametrize("kind", list(ARRAY_MODELS))
def test_an_unnamed_isolation_forest_reads_the_models_array_by_position(kind):
    """An IsolationForest fitted without names on the array the model was
    fitted on reads its categorical column by the labels' values (splits on
    them become category sets): the optimum over points whose score by its
    own ``score_samples`` on the model's array passes the bound (brute force
    over the labels and the size's cells), in the labels the array holds."""
    fit, labels = ARRAY_MODELS[kind]
    X, y = _array(7, labels)
    model = fit(X, y)
    iso = IsolationForest(n_estimators=4, max_samples=24, random_state=2).fit(X)
    assert 1 in brute.isolation_thresholds(iso)  # it splits the labels
    bound = _bound(-iso.score_samples(X))
    _assert_least_over_labels(
        model, iso, X[:6], labels, bound, as_given=lambda points: points, read=[0, 1]
    )


def _labelled(X, kind):
    """The array [size, label] as a frame whose label column holds integers,
    or pandas categories of them (``kind`` "category")."""
    label = X[:, 1].astype(np.int64)
    frame = pd.DataFrame({"size": X[:, 0], "label": label})
    if kind == "category":
        frame["label"] = pd.Categorical(label, categories=[1, 5, 9])
    return frame


def _hist_frame(frame, y):
    return HistGradientBoostingClassifier(
        max_iter=3, max_depth=2, categorical_features=["label"], random_state=0
    ).fit(frame, y)


def _lightgbm_frame(frame, y):
    model = lightgbm.LGBMClassifier(
        n_estimators=3, num_leaves=4, min_child_samples=5, random_state=0, verbose=-1
    )
    return model.fit(frame, y, categorical_feature=["label"])


# Models fitted on a frame whose label column holds numbers (or pandas
# categories of numbers), the labels, and that column's kind.
FRAME_MODELS = {
    "hist": (_hist_frame, (1.0, 5.0, 9.0), "int"),
    "hist-category": (_hist_frame, (1.0, 5.0, 9.0), "category"),
    "lightgbm": (_lightgbm_frame, (0.0, 1.0, 2.0), "int"),
}


@pytest.mark.parametrize("kind", list(FRAME_MODELS))
@pytest.mark.parametrize("columns", [["label", "size"], ["label"]])
def test_a_named_isolation_forest_reads_number_labels_by_value(kind, columns):
    """An IsolationForest fitted with names on some of the model's columns,
    in any order, its categorical column included, reads the labels (numbers)
    by value as one fitted without names does: the optimum over points its own
    ``score_samples`` on its columns keeps within the bound (brute force); the
    columns it does not read are free."""
    fit, labels, dtype = FRAME_MODELS[kind]
    X, y = _array(7, labels)
    frame = _labelled(X, dtype)
    model = fit(frame, y)
    iso = IsolationForest(n_estimators=4, max_samples=24, random_state=2)
    iso.fit(frame[columns])
    assert 0 in brute.isolation_thresholds(iso)  # it splits the labels
    bound = _bound(-iso.score_samples(frame[columns]))
    read = [list(frame.columns).index(name) for name in columns]
    _assert_least_over_labels(
        model, iso, X[:6], labels, bound,
        as_given=lambda points: _labelled(points, dtype), read=read,
    )  # fmt: skip


def _text_categories(kind):
    """A model of the colours as text (a one-hot Pipeline, or LightGBM on a
    ``category`` column), and its rows."""
    frame, y = _frame(8)
    if kind == "pipeline":
        model = make_pipeline(
            _encoder(), RandomForestClassifier(3, max_depth=3, random_state=0)
        )
        return model.fit(frame, y), frame
    frame = frame.assign(color=frame["color"].astype("category"))
    model = lightgbm.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1)
    return model.fit(frame, y), frame


_EXPECTED_READER = (
    "expected an IsolationForest fitted on columns the model reads, categorical "
    "ones holding labels that are numbers, or a Pipeline with the model's "
    "preprocessing ending in an IsolationForest."
)


@pytest.mark.parametrize("kind", ["pipeline", "lightgbm"])
@pytest.mark.parametrize("named", [True, False])
def test_an_isolation_forest_beside_text_categories_is_refused(kind, named):
    """No number stands for a colour the model reads as text: an
    IsolationForest splitting that column as numbers, by name or by position,
    is refused naming it; so is one fitted without names on the one-hot
    matrix (other columns than the model's)."""
    model, frame = _text_categories(kind)
    codes = frame.assign(color=frame["color"].map(COLORS.index).astype(float))
    iso = IsolationForest(n_estimators=3, random_state=0)
    iso.fit(codes if named else codes.to_numpy())
    assert 0 in brute.isolation_thresholds(iso)
    how = (
        "reads the categorical column 'color' as numbers"
        if named
        else "(fitted without feature names) splits column 'color' by position "
        "as numbers"
    )
    message = (
        f"`isolation_forest` {how}, where the model reads the categories "
        f"['blue', 'green', 'red'], which are not numbers; {_EXPECTED_READER}"
    )
    rows = frame.iloc[:2]
    with pytest.raises(InputError, match=re.escape(message)):
        optimal_counterfactual(model, rows, target="other", isolation_forest=iso)
    if named:
        return
    onehot = IsolationForest(n_estimators=3, random_state=0)
    onehot.fit(_encoder().fit_transform(frame))
    message = "(read by position); expected 2 features, got an IsolationForest "
    with pytest.raises(InputError, match=re.escape(message + "fitted on 4.")):
        optimal_counterfactual(model, rows, target="other", isolation_forest=onehot)


@pytest.mark.parametrize("named", [True, False])
def test_an_isolation_forest_splitting_a_column_the_model_drops_is_refused(named):
    """The model never reads a column its pipeline drops, so a counterfactual
    holds no value there for the IsolationForest to read: refused, by name or
    by position alike."""
    rng = np.random.default_rng(9)
    frame, y = _frame(9)
    frame["noise"] = rng.normal(size=len(frame))
    if not named:
        frame = frame.assign(color=frame["color"].map(COLORS.index))
    encoder = ColumnTransformer(
        [("onehot", OneHotEncoder(), [0]), ("size", "passthrough", [1])]
    )
    data = frame if named else frame.to_numpy(dtype=float)
    model = make_pipeline(encoder, RandomForestClassifier(3, random_state=0))
    model.fit(data, y)
    iso = IsolationForest(n_estimators=3, random_state=0)
    iso.fit(frame[["size", "noise"]] if named else data)
    message = (
        f"`isolation_forest` splits column '{'noise' if named else 'x2'}', which the "
        "model never reads (its pipeline drops it), so no counterfactual holds its "
        "value; expected"
    )
    rows = data[:2]
    with pytest.raises(InputError, match=re.escape(message)):
        optimal_counterfactual(model, rows, target="other", isolation_forest=iso)


@pytest.mark.parametrize(
    ("kind", "named", "value", "category", "categories"),
    [
        ("hist", False, 7.0, None, "[1.0, 5.0, 9.0]"),
        ("hist", True, 7.0, None, "[1, 5, 9]"),
        ("lightgbm", False, 1.5, 1, "[0, 1, 2]"),
        ("lightgbm", True, 0.5, 0, "[0, 1, 2]"),
    ],
)
def test_a_number_that_is_no_label_is_refused_where_read_by_value(
    kind, named, value, category, categories
):
    """The unknown code stands for every label the model never saw, and
    LightGBM reads a number by its whole part (1.5 as category 1), while the
    IsolationForest, by name or by position, would read the row's own
    number: refused, naming the row, the column and the labels."""
    fit, labels, _ = FRAME_MODELS[kind]
    X, y = _array(8, labels)
    rows = X[:2].copy()
    rows[1, 1] = value
    if named:
        frame = _labelled(X, "int")
        model, rows = fit(frame, y), frame.iloc[:2].assign(label=rows[:, 1])
        iso = IsolationForest(n_estimators=3, random_state=0).fit(frame)
    else:
        model = _hist(X, y) if kind == "hist" else _lightgbm(X, y)
        iso = IsolationForest(n_estimators=3, random_state=0).fit(X)
    what = (
        "a category the model never saw, whose value"
        if category is None
        else f"{value}, which the model reads as its category {category} but "
        "whose value"
    )
    message = (
        f"Row 1 holds in column '{'label' if named else 'x1'}' {what} the "
        "`isolation_forest` reads as a number; expected one of the model's "
        f"categories {categories}."
    )
    with pytest.raises(InputError, match=re.escape(message)):
        optimal_counterfactual(model, rows, target="other", isolation_forest=iso)
