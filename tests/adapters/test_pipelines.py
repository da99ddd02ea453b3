"""scikit-learn Pipelines lifted to their input columns: predictions on the raw
frame equal the pipeline's, steps are carried back exactly, others refused."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.feature_selection import SelectKBest, f_regression
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import PIPELINE_FACTORIES, make_mixed_data, probe_frame
from treelens import InputError, UnsupportedModelError

CATEGORICAL = ["employment", "region"]


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _assert_parity(model, X, strict=False):
    forest = treelens.to_forest(model)
    # Encoders with handle_unknown="error" refuse unknown and unseen missing values.
    probe = probe_frame(forest, X, missing=not strict, unknown=not strict)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = model.predict(probe)
        proba = model.predict_proba(probe) if forest.is_classifier else None
    np.testing.assert_array_equal(forest.predict(probe), expected)
    if proba is not None:
        np.testing.assert_allclose(forest.predict_proba(probe), proba, atol=1e-12)
    return forest


@pytest.mark.parametrize(
    "encoder",
    [
        OneHotEncoder(),
        OneHotEncoder(handle_unknown="ignore"),
        OneHotEncoder(handle_unknown="ignore", drop="first"),
        OneHotEncoder(drop="if_binary", handle_unknown="ignore"),
        OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=3),
        OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=10),
        OrdinalEncoder(),
        OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
        OrdinalEncoder(
            handle_unknown="use_encoded_value",
            unknown_value=9,
            encoded_missing_value=-5,
        ),
        OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan),
        OrdinalEncoder(max_categories=3),
    ],
    ids=repr,
)
@pytest.mark.parametrize("seed", [0, 1])
def test_encoders_become_categorical_splits(encoder, seed):
    X, y = make_mixed_data(seed, task="classification", n_samples=200)
    columns = ColumnTransformer(
        [("c", encoder, CATEGORICAL)], remainder=SimpleImputer(strategy="median")
    )
    model = make_pipeline(
        columns, DecisionTreeClassifier(max_depth=6, random_state=seed)
    )
    X = X.drop(columns=["id"])
    model = _fit(model, X, y)
    forest = _assert_parity(model, X, strict=encoder.handle_unknown == "error")
    assert [s.kind for s in forest.features[2:4]] == ["categorical"] * 2
    assert forest.has_categorical


@pytest.mark.parametrize(
    "scaler",
    [
        StandardScaler(),
        StandardScaler(with_mean=False),
        MinMaxScaler(),
        MinMaxScaler(feature_range=(-3, 7), clip=True),
        MaxAbsScaler(),
        RobustScaler(),
        RobustScaler(quantile_range=(10, 90), with_centering=False),
        "passthrough",
    ],
    ids=repr,
)
def test_scalers_map_thresholds_back_to_raw_units(scaler):
    X, y = make_mixed_data(2, task="regression", n_samples=300)
    X = X[["income", "age", "owner"]]
    estimator = DecisionTreeRegressor(max_depth=8, random_state=0)
    model = _fit(make_pipeline(scaler, estimator), X, y)
    forest = _assert_parity(model, X)
    # Thresholds are raw values: income splits sit among incomes.
    thresholds = np.concatenate(
        [t.threshold[~t.is_leaf & (t.feature == 0)] for t in forest.trees]
    )
    finite = thresholds[np.isfinite(thresholds)]
    assert finite.size and np.all((finite > 0) & (finite < 200_000))


def test_scalers_before_a_float64_model_routing_missing_values():
    X, y = make_mixed_data(2, task="regression", n_samples=300)
    X = X[["income", "age"]]
    model = make_pipeline(
        RobustScaler(), HistGradientBoostingRegressor(max_iter=5, random_state=0)
    )
    _assert_parity(_fit(model, X, y), X)


def test_imputer_sets_the_missing_direction():
    X, y = make_mixed_data(3, task="regression", n_samples=300)
    X = X[["income", "age"]]
    model = _fit(
        make_pipeline(
            SimpleImputer(strategy="constant", fill_value=80_000),
            StandardScaler(),
            RandomForestRegressor(5, max_depth=5, random_state=0),
        ),
        X,
        y,
    )
    forest = _assert_parity(model, X)
    rows = pd.DataFrame({"income": [np.nan, 80_000.0], "age": [40, 40]})
    np.testing.assert_array_equal(forest.apply(rows)[0], forest.apply(rows)[1])


def test_selectors_passthrough_and_drop():
    X, y = make_mixed_data(4, task="regression", n_samples=200)
    columns = ColumnTransformer(
        [
            ("a", "passthrough", ["age"]),
            ("b", "drop", ["income"]),
            (
                "c",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent"),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                make_column_selector(pattern="employment"),
            ),
        ],
        remainder="drop",
    )
    model = _fit(
        Pipeline(
            [
                ("columns", columns),
                ("nothing", "passthrough"),
                ("select", SelectKBest(f_regression, k=3)),
                ("tree", DecisionTreeRegressor(max_depth=4, random_state=0)),
            ]
        ),
        X,
        y,
    )
    forest = _assert_parity(model, X)
    kinds = {s.name: (s.kind, s.dropped) for s in forest.features}
    assert kinds["income"] == ("numeric", True)
    assert kinds["employment"][0] == "categorical"


def test_boosting_classifier_with_ordinal_codes():
    X, y = make_mixed_data(5, task="classification", n_samples=200)
    columns = ColumnTransformer(
        [
            (
                "o",
                OrdinalEncoder(
                    handle_unknown="use_encoded_value",
                    unknown_value=-1,
                    encoded_missing_value=-1,
                ),
                CATEGORICAL,
            )
        ],
        remainder=SimpleImputer(),
    )
    model = _fit(
        make_pipeline(
            columns.set_params(remainder="drop"),
            GradientBoostingClassifier(n_estimators=10, random_state=0),
        ),
        X,
        y,
    )
    _assert_parity(model, X)


def test_pipeline_factories_are_lifted():
    for name, factory in PIPELINE_FACTORIES.items():
        case = factory()
        forest = treelens.to_forest(case.model)
        assert forest.feature_names == tuple(case.X.columns), name
        assert forest.source == "sklearn.pipeline.Pipeline"


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    ("step", "name"),
    [(PCA(2), "PCA"), (FunctionTransformer(np.log1p), "FunctionTransformer")],
)
def test_unsupported_step_is_named_with_the_alternative(step, name):
    X, y = make_mixed_data(0, task="regression")
    X = X[["income", "age"]].fillna(0)
    model = _fit(make_pipeline(step, DecisionTreeRegressor(max_depth=2)), X, y)
    with pytest.raises(
        UnsupportedModelError, match=rf"'{name.lower()}' \({name}\).*pipeline\[-1\]"
    ):
        treelens.to_forest(model)


def test_last_step_must_be_a_tree_model():
    X, y = make_mixed_data(0, task="classification")
    X = X[["income", "age"]].fillna(0)
    model = _fit(make_pipeline(StandardScaler(), LogisticRegression()), X, y)
    with pytest.raises(UnsupportedModelError, match="last step.*'logisticregression'"):
        treelens.to_forest(model)


def test_missing_column_and_numbers_for_labels_are_named():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    forest = treelens.to_forest(case.model)
    with pytest.raises(
        InputError, match=r"missing the model's column\(s\) \['region'\]"
    ):
        forest.predict(case.X.drop(columns=["region"]))
    bad = case.X.assign(employment=3)
    with pytest.raises(InputError, match="'employment'.*numbers such as 3"):
        forest.predict(bad)
    with pytest.raises(InputError, match="'income' must hold numbers.*'lots'"):
        forest.predict(case.X.assign(income="lots"))


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_many_rows_route_through_the_final_model_to_the_same_leaves(name):
    import dataclasses
    import pickle

    case = PIPELINE_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    assert forest.input_map is not None
    codes = forest.validate_X(probe_frame(forest, case.X))
    assert codes.shape[0] >= 64  # routed through the map
    alone = dataclasses.replace(forest, input_map=None)  # routed per depth level
    np.testing.assert_array_equal(forest._apply(codes), alone._apply(codes))
    # A Forest with other trees (as the searches over fixed categories build)
    # does not use the map made for these.
    fewer = dataclasses.replace(
        forest, trees=forest.trees[:1], tree_output=forest.tree_output[:1]
    )
    np.testing.assert_array_equal(fewer._apply(codes), alone._apply(codes)[:, :1])
    # Picklable, for Dask workers.
    again = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(again._apply(codes), alone._apply(codes))


@pytest.mark.parametrize(
    "encoder",
    [
        OneHotEncoder(handle_unknown="ignore"),
        OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
    ],
)
def test_a_pipeline_fitted_on_an_array_reads_its_numbers_as_labels(encoder):
    # The encoders map an array's numbers by value (10, 20, 30); the lifted
    # Forest read them as the codes 0, 1, 2, so it predicted, explained and
    # searched counterfactuals for other rows than the pipeline's.
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.choice([10.0, 20.0, 30.0], 300), rng.normal(size=300)])
    y = ((X[:, 0] == 20.0) ^ (X[:, 1] > 0.5)).astype(int)
    columns = ColumnTransformer([("code", encoder, [0])], remainder="passthrough")
    model = make_pipeline(
        columns, RandomForestClassifier(n_estimators=5, random_state=0)
    ).fit(X, y)
    probe = np.column_stack([[10.0, 20.0, 30.0, 1.0, 25.0], np.zeros(5)])
    forest = treelens.to_forest(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown categories
        expected = model.predict_proba(probe)
    np.testing.assert_array_equal(forest.predict_proba(probe), expected)
    result = treelens.shap_values(model, probe)
    np.testing.assert_allclose(
        result.expected_value_ + result.values_.sum(axis=1), expected, atol=1e-12
    )
    rows = X[model.predict(X) == 0][:4]
    found = treelens.feature_tweak(model, rows, target=1, cost="l1")
    assert found.found_.any()
    X_cf = np.asarray(found.X_cf_)[found.found_]
    assert set(X_cf[:, 0]) <= {10.0, 20.0, 30.0}
    np.testing.assert_array_equal(model.predict(X_cf), 1)
    np.testing.assert_array_equal(found.X_, rows)
