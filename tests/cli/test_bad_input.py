"""Bad input raises treelens exceptions that say what was wrong, expected and given."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import make_data
from treelens import InputError, NotFittedError, UnsupportedModelError


@pytest.fixture
def classifier():
    X, y = make_data(0, task="classification")
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    return DecisionTreeClassifier(max_depth=3, random_state=0).fit(frame, y), frame, y


def all_entry_points(model, X, y, **kwargs):
    """Call every public function taking data, so each must raise."""
    return [
        lambda: treelens.node_statistics(model, X, y, **kwargs),
        lambda: treelens.mdi_importance(model, X, y, **kwargs),
        lambda: treelens.permutation_importance(model, X, y, n_repeats=1, **kwargs),
    ]


@pytest.fixture(autouse=True)
def nothing_printed(capsys):
    yield
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_unfitted_model():
    X, y = make_data(0, task="classification")
    model = RandomForestClassifier()
    with pytest.raises(NotFittedError, match="not fitted"):
        treelens.mdi_importance(model)
    for call in all_entry_points(model, X, y):
        with pytest.raises(NotFittedError) as info:
            call()
        assert isinstance(info.value, ValueError)


def test_unsupported_estimator_lists_supported_models():
    X, y = make_data(0, task="classification")
    model = LogisticRegression().fit(X, y)
    with pytest.raises(UnsupportedModelError) as info:
        treelens.mdi_importance(model)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert "LogisticRegression" in message
    for name in treelens.supported_models():
        assert name in message


@pytest.mark.parametrize(
    "model",
    [
        DecisionTreeRegressor(max_depth=2),
        RandomForestRegressor(n_estimators=2, max_depth=2),
        RandomForestClassifier(n_estimators=2, max_depth=2),
    ],
)
def test_multi_output_models(model):
    X, y = make_data(0, task="classification")
    model.fit(X, np.column_stack([y, y % 2]))
    with pytest.raises(UnsupportedModelError, match="Multi-output .* 2 targets"):
        treelens.mdi_importance(model)
    with pytest.raises(UnsupportedModelError):
        treelens.node_statistics(model, X, y)


def test_wrong_number_of_columns(classifier):
    model, X, y = classifier
    for call in all_entry_points(model, X.to_numpy()[:, :3], y):
        with pytest.raises(
            InputError, match="X has 3 features, but the model expects 4"
        ):
            call()


def test_column_names_differ_from_feature_names_in(classifier):
    model, X, y = classifier
    renamed = X.rename(columns={"c": "z"})
    for call in all_entry_points(model, renamed, y):
        with pytest.raises(InputError, match=r"missing \['c'\], unexpected \['z'\]"):
            call()


def test_y_with_unseen_classes(classifier):
    model, X, y = classifier
    bad = y.copy()
    bad[:3] = 7
    for call in all_entry_points(model, X, bad):
        with pytest.raises(
            InputError, match=r"classes \[0, 1, 2\]; got unseen labels \[7\]"
        ):
            call()


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_y_with_nan(task):
    X, y = make_data(0, task=task)
    cls = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
    model = cls(max_depth=2).fit(X, y)
    bad = y.astype(float)
    bad[5] = np.nan
    for call in all_entry_points(model, X, bad):
        with pytest.raises(InputError, match="NaN at row 5"):
            call()


def test_y_of_wrong_length(classifier):
    model, X, y = classifier
    for call in all_entry_points(model, X, y[:-2]):
        with pytest.raises(InputError, match=r"expected 120 entries, got 118"):
            call()


def test_sample_weight_of_wrong_length(classifier):
    model, X, y = classifier
    for call in all_entry_points(model, X, y, sample_weight=np.ones(5)):
        with pytest.raises(InputError, match=r"expected shape \(120,\), got \(5,\)"):
            call()


def test_negative_sample_weight(classifier):
    model, X, y = classifier
    weights = np.ones(len(y))
    weights[4] = -1.0
    for call in all_entry_points(model, X, y, sample_weight=weights):
        with pytest.raises(InputError, match="non-negative .* got -1.0 at row 4"):
            call()


def test_held_out_mdi_needs_both_x_and_y(classifier):
    model, X, y = classifier
    with pytest.raises(InputError, match="both X and y"):
        treelens.mdi_importance(model, X)
    with pytest.raises(InputError, match="both X and y"):
        treelens.mdi_importance(model, y=y)
    with pytest.raises(InputError, match="sample_weight"):
        treelens.mdi_importance(model, sample_weight=np.ones(len(y)))


def test_negative_targets_for_poisson():
    X, y = make_data(0, task="regression")
    model = DecisionTreeRegressor(criterion="poisson", max_depth=2).fit(X, np.abs(y))
    with pytest.raises(InputError, match="non-negative"):
        treelens.node_statistics(model, X, -np.abs(y) - 1)


def test_permutation_importance_of_a_forest_checks_its_rows(classifier):
    """A Forest is scored through its own predictions (it was refused); its
    rows are checked against it as the model's are."""
    model, X, y = classifier
    forest = treelens.to_forest(model)
    with pytest.raises(InputError, match=r"missing \['d'\]"):
        treelens.permutation_importance(forest, X[["a", "b", "c"]], y)
    with pytest.raises(InputError):
        treelens.permutation_importance(forest, X, y[:5])
