"""Explanations of a scikit-learn Pipeline speak in its input columns: decision
paths name categories, Saabas and SHAP values are summed per input column (the
columns a step derives from one input column add up to it)."""

import warnings

import numpy as np
import pytest

import treelens
from tests.models import PIPELINE_FACTORIES
from treelens._adapters._pipeline import pipeline_parts


def _case(name):
    case = PIPELINE_FACTORIES[name](0)
    model = case.model
    X = case.X.iloc[:12]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Xt = np.asarray(model[:-1].transform(X), dtype=np.float64)
    parts = pipeline_parts(model)
    return model, X, Xt, parts


def _summed(values, parts):
    """Values of the transformed columns summed per input column, by hand."""
    out = np.zeros((values.shape[0], parts.n_inputs, *values.shape[2:]))
    for j, source in enumerate(parts.source):
        out[:, source] += values[:, j]
    return out


def _output(model, X):
    forest = treelens.to_forest(model)
    if forest.is_classifier:
        return model.predict_proba(X)
    return model.predict(X)


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_shap_values_are_the_final_models_summed_per_input_column(name):
    model, X, Xt, parts = _case(name)
    result = treelens.shap_values(model, X)
    final = treelens.shap_values(model[-1], Xt)
    assert result.feature_names == tuple(X.columns)
    np.testing.assert_allclose(
        result.values_, _summed(final.values_, parts), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(result.expected_value_, final.expected_value_)
    # Additivity: the base value and the per-column values give the output.
    total = np.asarray(result.expected_value_) + result.values_.sum(axis=1)
    np.testing.assert_allclose(total, _output(model, X), rtol=0, atol=1e-9)
    # Columns the pipeline drops explain nothing.
    dropped = [j for j, s in enumerate(treelens.to_forest(model).features) if s.dropped]
    assert dropped and np.all(result.values_[:, dropped] == 0)


def test_shap_values_equal_shaps_on_the_final_model_summed_per_group():
    shap = pytest.importorskip("shap")
    model, X, Xt, parts = _case("sklearn.Pipeline")
    expected = np.asarray(shap.TreeExplainer(model[-1]).shap_values(Xt))
    if expected.ndim == 3 and expected.shape[0] == 2:  # older shap: per class
        expected = np.moveaxis(expected, 0, -1)
    result = treelens.shap_values(model, X)
    np.testing.assert_allclose(
        result.values_, _summed(expected, parts), rtol=0, atol=1e-9
    )


def test_interventional_values_and_interactions_sum_per_input_column():
    model, X, Xt, parts = _case("sklearn.Pipeline[ordinal+boosting]")
    background = X.iloc[-6:]
    result = treelens.shap_values(
        model, X, method="interventional", background=background
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bg = np.asarray(model[:-1].transform(background), dtype=np.float64)
    final = treelens.shap_values(model[-1], Xt, method="interventional", background=bg)
    np.testing.assert_allclose(
        result.values_, _summed(final.values_, parts), rtol=0, atol=1e-12
    )
    interactions = treelens.shap_interaction_values(model, X)
    assert interactions.values_.shape == (len(X), X.shape[1], X.shape[1])
    np.testing.assert_allclose(
        interactions.values_.sum(axis=2),
        treelens.shap_values(model, X).values_,
        rtol=0,
        atol=1e-9,
    )


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_saabas_values_are_the_final_models_summed_per_input_column(name):
    model, X, Xt, parts = _case(name)
    result = treelens.saabas_values(model, X)
    final = treelens.saabas_values(model[-1], Xt)
    np.testing.assert_allclose(
        result.values_, _summed(final.values_, parts), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(result.bias_, final.bias_)
    np.testing.assert_allclose(result.prediction_, final.prediction_)


def test_decision_path_names_categories_and_raw_units():
    model, X, _, _ = _case("sklearn.Pipeline")
    path = treelens.decision_path(model, X.iloc[:4])
    text = " ".join(path.sentences_)
    assert "employment" in text or "region" in text or "income" in text
    assert "onehot" not in text and "categories__" not in text
    forest = treelens.to_forest(model)
    # Every categorical condition is stated as categories of its own column.
    conditions = path.conditions_
    categorical = conditions[conditions["feature"].isin(["employment", "region"])]
    assert len(categorical) and (categorical["test"] == "in").all()
    for feature, categories in zip(categorical["feature"], categorical["categories"]):
        labels = set(forest.features[list(X.columns).index(feature)].categories)
        assert set(categories) - {"(unseen)"} <= labels
    # The row's own category, in words ("employment is unemployed").
    named = 0
    for sentence, own in zip(path.sentences_, X["employment"].iloc[:4]):
        if "employment" in sentence and own is not None:
            assert f"employment is {own}" in sentence, sentence
            named += 1
    assert named


def test_shap_values_of_a_pipeline_with_pandas_output_and_nullable_columns():
    # set_output(transform="pandas") keeps Int64 and boolean columns, whose
    # pandas.NA numpy cannot cast to float; the final model reads them as NaN.
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    n = 80
    X = pd.DataFrame(
        {
            "age": pd.array(rng.integers(18, 80, n), dtype="Int64"),
            "flag": pd.array(rng.random(n) < 0.4, dtype="boolean"),
            "city": rng.choice(["a", "b", "c"], n),
        }
    )
    X.loc[[1, 5], "age"] = pd.NA
    X.loc[[2, 7], "flag"] = pd.NA
    y = ((X["age"].fillna(40) > 45) ^ (X["city"] == "b")).to_numpy(dtype=int)
    encode = ColumnTransformer(
        [("city", OneHotEncoder(sparse_output=False), ["city"])],
        remainder="passthrough",
    ).set_output(transform="pandas")
    model = make_pipeline(
        encode, RandomForestClassifier(n_estimators=4, random_state=0)
    ).fit(X, y)
    result = treelens.shap_values(model, X)
    total = result.expected_value_ + result.values_.sum(axis=1)
    np.testing.assert_allclose(total, model.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_labels_given_as_an_object_array_reach_the_preprocessing_as_they_are(name):
    # Decoding the routing codes turned a label the encoders never saw (the
    # unknown code) into a missing value, which they encode differently.
    model, X, _, _ = _case(name)
    X = X.copy()
    X["employment"] = "astronaut"
    rows = X.to_numpy(dtype=object)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = treelens.shap_values(model, rows)
        expected = _output(model, X)
        by_frame = treelens.shap_values(model, X)
    total = np.asarray(result.expected_value_) + result.values_.sum(axis=1)
    np.testing.assert_allclose(total, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.values_, by_frame.values_, rtol=0, atol=1e-12)
    # The one warning expected: an encoder that maps unknown categories to its
    # infrequent one says it met "astronaut" (scikit-learn's, by design).
    for item in caught:
        assert str(item.message).startswith("Found unknown categories in columns"), (
            item.message
        )
