"""An IsolationForest bound over categorical columns and missing values.

The brute force reads the thresholds from scikit-learn's own tree arrays (the
columns a ColumnTransformer passes through keep their units), takes both float64
neighbours of each as the model reads it after its cast, and checks validity with the pipeline's own ``predict`` and
the anomaly score with the isolation pipeline's own ``score_samples``.
"""

import itertools
import warnings

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
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier

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
