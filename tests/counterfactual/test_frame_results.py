"""Rows given as a DataFrame come back as DataFrames in the model's columns.

A model fitted on a DataFrame of numbers (no Pipeline, no categories) is the
common case: its counterfactuals must be rows its own ``predict`` takes without
a feature-name warning, in the user's column dtypes, indexed as the input.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

import treelens
from treelens._counterfactual._frame import counterfactual_table


def _table(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Synthetic numbers: a float, a float32, a whole count and a 0/1 flag."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "income": rng.normal(50.0, 15.0, n),
            "ratio": rng.uniform(0, 1, n).astype(np.float32),
            "children": rng.integers(0, 5, n),
            "owner": rng.integers(0, 2, n),
        }
    )
    score = (X["income"] - 50) / 15 + 2 * X["ratio"] - 0.3 * X["children"] + X["owner"]
    y = (score + rng.normal(0, 0.5, n) > 1.0).astype(int).to_numpy()
    return X, y


@pytest.fixture(scope="module")
def fitted() -> tuple[RandomForestClassifier, pd.DataFrame, pd.DataFrame]:
    X, y = _table()
    model = RandomForestClassifier(30, max_depth=4, random_state=0).fit(X, y)
    declined = X[model.predict(X) == 0].iloc[:6]
    declined.index = [f"applicant {i}" for i in range(len(declined))]
    return model, X, declined


@pytest.mark.parametrize("method", ["auto", "optimal", "tweak"])
def test_frame_in_frame_out(fitted, method: str) -> None:
    model, X, declined = fitted
    result = treelens.counterfactual(
        model, declined, target=1, method=method, reference=X, time_limit=20
    )
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert isinstance(result.X_, pd.DataFrame)
    assert list(result.X_cf_.columns) == list(X.columns)
    assert list(result.X_cf_.index) == list(declined.index)
    found = result.found_
    assert found.any()
    with warnings.catch_warnings():
        # No "X does not have valid feature names" from scikit-learn.
        warnings.simplefilter("error")
        assert (model.predict(result.X_cf_[found]) == 1).all()
    # Whole columns stay whole (inferred from the reference) and keep their dtype.
    for column in ("children", "owner"):
        assert result.X_cf_.loc[found, column].dtype == X[column].dtype
    assert set(result.X_cf_.loc[found, "owner"]) <= {0, 1}
    np.testing.assert_array_equal(result.X_.to_numpy(), declined.to_numpy())


def test_columns_reordered(fitted) -> None:
    model, X, declined = fitted
    shuffled = declined[["owner", "children", "ratio", "income"]]
    result = treelens.counterfactual(model, shuffled, target=1, reference=X)
    plain = treelens.counterfactual(model, declined, target=1, reference=X)
    # The model's columns, in its order.
    assert list(result.X_cf_.columns) == list(X.columns)
    assert list(result.X_.columns) == list(X.columns)
    pd.testing.assert_frame_equal(result.X_cf_, plain.X_cf_)
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_options_repeat_the_index(fitted) -> None:
    model, X, declined = fitted
    rows = declined.iloc[:2]
    result = treelens.counterfactual(
        model, rows, target=1, reference=X, n_counterfactuals=2, time_limit=20
    )
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert list(result.X_cf_.index) == list(np.repeat(rows.index, 2))
    assert result.option_.tolist() == [1, 2, 1, 2]
    found = result.found_
    assert (model.predict(result.X_cf_[found]) == 1).all()


def test_bare_forest_of_a_frame_model(fitted) -> None:
    model, X, declined = fitted
    result = treelens.counterfactual(
        treelens.to_forest(model), declined, target=1, reference=X
    )
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_hist_gradient_boosting_frame() -> None:
    X, y = _table(seed=1)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    declined = X[model.predict(X) == 0].iloc[:3]
    result = treelens.counterfactual(model, declined, target=1, reference=X)
    assert isinstance(result.X_cf_, pd.DataFrame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_array_model_keeps_arrays() -> None:
    """A model fitted on an array has no column names to match a frame's."""
    X, y = _table()
    model = RandomForestClassifier(20, max_depth=3, random_state=0).fit(X.to_numpy(), y)
    declined = X.to_numpy()[model.predict(X.to_numpy()) == 0][:3]
    result = treelens.counterfactual(model, declined, target=1)
    assert isinstance(result.X_cf_, np.ndarray)
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_chunks_of_frames_equal_one_call(fitted) -> None:
    model, X, declined = fitted
    whole = treelens.feature_tweak(model, declined, target=1, reference=X)
    chunks = (declined.iloc[i : i + 4] for i in range(0, len(declined), 4))
    parts = treelens.feature_tweak(model, chunks, target=1, reference=X)
    pd.testing.assert_frame_equal(parts.X_cf_, whole.X_cf_)
    pd.testing.assert_frame_equal(parts.X_, whole.X_)


def test_chunks_of_a_labelled_pipeline_equal_one_call() -> None:
    """Every chunk's rows, not the first chunk's alone (each chunk's result
    holds a DataFrame of labels)."""
    from treelens._cli._demo_mixed import applicants, applicants_pipeline

    X, y = applicants(400, 0)
    model = applicants_pipeline(20, 4).fit(X, y)
    reference = X.dropna()
    rows = reference[model.predict(reference) == 0].iloc[:8]
    whole = treelens.feature_tweak(model, rows, target=1, reference=reference)
    chunks = (rows.iloc[i : i + 3] for i in range(0, 8, 3))
    parts = treelens.feature_tweak(model, chunks, target=1, reference=reference)
    assert len(parts.X_cf_) == len(parts.found_) == 8
    pd.testing.assert_frame_equal(parts.X_cf_, whole.X_cf_)
    assert (model.predict(parts.X_cf_[parts.found_]) == 1).all()


def test_one_row_as_a_series(fitted) -> None:
    model, X, declined = fitted
    row = declined.iloc[1]
    result = treelens.counterfactual(model, row, target=1, reference=X)
    framed = treelens.counterfactual(model, declined.iloc[1:2], target=1, reference=X)
    assert list(result.X_cf_.index) == [row.name]
    # A Series of mixed numbers holds them as floats: the dtypes follow it.
    pd.testing.assert_frame_equal(result.X_cf_, framed.X_cf_, check_dtype=False)
    assert (model.predict(result.X_cf_) == 1).all()


def test_one_row_of_a_labelled_pipeline_as_a_series() -> None:
    from treelens._cli._demo_mixed import applicants, applicants_pipeline

    X, y = applicants(400, 0)
    model = applicants_pipeline(20, 4).fit(X, y)
    reference = X.dropna()
    row = reference[model.predict(reference) == 0].iloc[0]
    result = treelens.counterfactual(model, row, target=1, reference=reference)
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert list(result.X_cf_.columns) == list(X.columns)
    assert result.X_cf_["employment"].iloc[0] in set(X["employment"])
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()


def test_whole_columns_read_whole_in_the_changes_when_an_option_is_missing():
    # Options that run out leave missing rows in X_cf_, whose integer and flag
    # columns are then pandas' nullable ones; the changes show the input's
    # integers and booleans.
    X, y = _table(seed=3)
    X["owner"] = X["owner"].astype(bool)
    model = RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)
    declined = X[model.predict(X) == 0].iloc[:3]
    result = treelens.counterfactual(
        model, declined, target=1, reference=X, n_counterfactuals=8
    )
    assert not result.found_.all()  # some options ran out
    assert result.X_cf_["children"].dtype == "Int64"
    assert result.X_cf_["owner"].dtype == "boolean"
    changes = result.to_frame()
    whole = changes[changes.feature.isin(["children", "owner"])]
    assert set(whole.feature) == {"children", "owner"}
    for feature, before, after in whole[["feature", "before", "after"]].itertuples(
        index=False
    ):
        kind = bool if feature == "owner" else int
        assert type(before) is kind and type(after) is kind
    for i in np.flatnonzero(result.found_):
        for feature, before, after in result.changes(int(i)):
            if feature == "children":
                assert type(after) is int


@pytest.mark.parametrize("method", ["auto", "tweak"])
def test_nullable_columns_with_missing_values(method: str) -> None:
    # pd.NA in "Int64", "Float64" or "boolean" columns was refused ("X must
    # hold numbers only ... NAType") though the model predicts such rows, and
    # counterfactuals were handed to the model's predict as objects holding
    # pd.NA, which it cannot read.
    X, y = _table()
    X = X.astype({"income": "Float64", "children": "Int64", "owner": "boolean"})
    X.loc[::7, "income"] = pd.NA
    X.loc[::5, "children"] = pd.NA
    X.loc[::9, "owner"] = pd.NA
    model = HistGradientBoostingClassifier(max_iter=15, max_depth=3, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:6]
    assert rows.isna().any().any()
    result = treelens.counterfactual(model, rows, target=1, method=method)
    assert result.found_.any()
    assert (model.predict(result.X_cf_[result.found_]) == 1).all()
    assert (result.missing_ == rows.isna().to_numpy()).all()
    nullable = ["income", "children", "owner"]
    assert (result.X_cf_.dtypes[nullable] == rows.dtypes[nullable]).all()


@pytest.mark.parametrize("method", ["optimal", "tweak"])
def test_integer_and_flag_columns_stay_integer_and_flag_with_rows_missing(
    method: str,
) -> None:
    # A row without a counterfactual turned every whole-number column of X_cf_
    # to float64; it is now pandas' nullable counterpart of the user's dtype,
    # <NA> where no counterfactual was found.
    X, y = _table(seed=4)
    X["owner"] = X["owner"].astype(bool)
    X["children"] = X["children"].astype(np.int32)
    model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y)
    predicted = model.predict(X)
    # Two rows the model declines, two it approves; nothing may move, so the
    # declined rows have no counterfactual and the approved are their own.
    rows = pd.concat([X[predicted == 0].iloc[:2], X[predicted == 1].iloc[:2]])
    result = treelens.counterfactual(
        model, rows, target=1, method=method, reference=X,
        constraints=treelens.Constraints(immutable=list(X.columns)),
    )  # fmt: skip
    assert result.found_.tolist() == [False, False, True, True]
    cf = result.X_cf_
    assert cf["children"].dtype == "Int32"
    assert cf["owner"].dtype == "boolean"
    assert cf["income"].dtype == np.float64
    missing = ~result.found_
    assert cf.loc[missing, ["children", "owner"]].isna().all().all()
    assert cf.loc[missing, "income"].isna().all()
    found = cf[result.found_]
    # The found rows hold the rows' own values and predict as they are.
    np.testing.assert_array_equal(
        found.astype({"children": np.int32, "owner": bool}).to_numpy(),
        rows[result.found_].to_numpy(),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (model.predict(found) == 1).all()
    # The flat table of Parquet parts and Dask reads <NA> as NaN.
    table = counterfactual_table(
        result, treelens.to_forest(model), 0, optimal=method == "optimal"
    )
    assert table["cf_children"].dtype == np.float64
    assert table["cf_children"].isna().tolist() == [True, True, False, False]


def test_a_moved_integer_column_that_is_not_whole_stays_float() -> None:
    # Without an integer constraint (infer=False) a whole-number column may
    # move to a fraction: no integer dtype holds it, so it stays float64.
    X, y = _table(seed=4)
    model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y)
    declined = X[model.predict(X) == 0].iloc[:12]
    result = treelens.counterfactual(
        model, declined, target=1, infer=False, cost="l1",
        constraints=treelens.Constraints(immutable=["income", "ratio", "owner"]),
    )  # fmt: skip
    cf = result.X_cf_
    assert result.found_.any() and not result.found_.all()
    moved = cf.loc[result.found_, "children"].to_numpy()
    assert not np.equal(moved, np.round(moved)).all()
    assert cf["children"].dtype == np.float64
    assert cf["owner"].dtype == "Int64"  # unmoved: whole, some rows missing
    assert (model.predict(cf[result.found_]) == 1).all()
