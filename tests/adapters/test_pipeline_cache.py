"""The Forest of a pipeline is built once and kept while the pipeline is
unchanged; refitting it, or any of its steps in place, builds a new one."""

import warnings

import numpy as np
import pytest

import treelens
from tests.models import PIPELINE_FACTORIES, probe_frame


def _predict(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.predict(X)


def _refit(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(*args)


def _assert_serves_the_model(model, X):
    forest = treelens.to_forest(model)
    probe = probe_frame(forest, X)
    np.testing.assert_array_equal(forest.predict(probe), _predict(model, probe))
    return forest


@pytest.fixture
def case():
    return PIPELINE_FACTORIES["sklearn.Pipeline"](seed=0)


def test_an_unchanged_pipeline_keeps_its_forest(case):
    first = treelens.to_forest(case.model)
    assert treelens.to_forest(case.model) is first
    # Predicting does not change what the cache looks at.
    _predict(case.model, case.X)
    assert treelens.to_forest(case.model) is first


def test_a_refit_pipeline_gets_a_new_forest(case):
    first = treelens.to_forest(case.model)
    _refit(case.model, case.X, 1 - case.y)
    assert treelens.to_forest(case.model) is not first
    _assert_serves_the_model(case.model, case.X)


def test_refitting_the_final_step_alone_gets_a_new_forest(case):
    first = treelens.to_forest(case.model)
    encoded = case.model[:-1].transform(case.X)
    _refit(case.model[-1].set_params(random_state=7, max_depth=2), encoded, case.y)
    assert treelens.to_forest(case.model) is not first
    _assert_serves_the_model(case.model, case.X)


def test_refitting_a_transformer_inside_the_column_transformer_in_place(case):
    first = treelens.to_forest(case.model)
    # The scaler of the income column, refit on shifted incomes: the
    # ColumnTransformer keeps the same list of fitted transformers.
    columns = case.model.named_steps["columns"]
    income = columns.named_transformers_["income"]
    _refit(income, case.X[["income"]] * 3.0 + 1000.0)
    assert treelens.to_forest(case.model) is not first
    _assert_serves_the_model(case.model, case.X)


def test_counterfactuals_after_a_refit_are_the_new_pipelines(case):
    rows = case.X.iloc[:6]
    treelens.feature_tweak(case.model, rows, target=1, cost="l1")
    _refit(case.model, case.X, 1 - case.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", treelens.CounterfactualCheckWarning)
        result = treelens.feature_tweak(case.model, rows, target=1, cost="l1")
    assert result.found_.any()
    found = result.X_cf_[result.found_]
    np.testing.assert_array_equal(_predict(case.model, found), 1)


def test_refitting_a_lightgbm_final_step_alone_gets_a_new_forest(case):
    import lightgbm

    model = case.model
    encoded = model[:-1].transform(case.X)
    model.steps[-1] = ("model", lightgbm.LGBMClassifier(n_estimators=3, verbose=-1))
    _refit(model[-1], encoded, case.y)
    first = treelens.to_forest(model)
    _refit(model[-1], encoded, 1 - case.y)
    assert treelens.to_forest(model) is not first
    _assert_serves_the_model(model, case.X)
