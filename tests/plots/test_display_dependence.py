"""SHAP dependence pictures: the numbers they draw, checked against shap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import shap  # installed by make test (the test extra); never skipped
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

import treelens
from treelens import DependenceDisplay, InputError, TreelensError

from ..categorical_forests import random_codes, random_forest
from ..models import PIPELINE_FACTORIES

NAMES = ["a", "b", "c", "d"]


def _data(seed=0, n=150):
    """Four features; the target holds a strong interaction of b with d."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=NAMES)
    signal = X["a"] + 2.0 * X["b"] * X["d"] + 0.1 * rng.normal(size=n)
    return X, signal


def _shap_values(model, X, output=None):
    """shap's values of one output: (n_rows, n_features)."""
    values = np.asarray(shap.TreeExplainer(model).shap_values(X))
    if values.ndim == 3 and values.shape[0] != len(X):  # older shap: per class
        values = np.moveaxis(values, 0, -1)
    return values if output is None else values[..., output]


def _shap_strengths(model, X, feature, output=None):
    """Mean |shap interaction value| of ``feature`` with each other feature."""
    pairs = np.asarray(shap.TreeExplainer(model).shap_interaction_values(X))
    if pairs.ndim == 4 and pairs.shape[0] != len(X):
        pairs = np.moveaxis(pairs, 0, -1)
    if output is not None:
        pairs = pairs[..., output]
    strengths = np.abs(pairs[:, feature, :]).mean(axis=0)
    strengths[feature] = -np.inf  # the diagonal is the main effect
    return strengths


def _assert_clear_argmax(strengths):
    """The strongest interaction is ahead of the next by a margin (so that the
    comparison cannot pass by rounding)."""
    ordered = np.sort(strengths[np.isfinite(strengths)])
    assert ordered[-1] - ordered[-2] > 1e-6


def test_a_random_forest_regressor_against_shap():
    X, y = _data()
    model = RandomForestRegressor(20, max_depth=5, random_state=0).fit(X, y)
    display = DependenceDisplay.from_estimator(model, X, "b")
    np.testing.assert_allclose(
        display.y_, _shap_values(model, X)[:, 1], atol=1e-9, rtol=0
    )
    np.testing.assert_array_equal(display.x_, X["b"].to_numpy())
    theirs = _shap_strengths(model, X, 1)
    _assert_clear_argmax(theirs)
    assert display.interaction_feature == NAMES[int(np.argmax(theirs))] == "d"
    np.testing.assert_allclose(
        display.interaction_strengths[[0, 2, 3]], theirs[[0, 2, 3]], atol=1e-9
    )
    assert np.isnan(display.interaction_strengths[1])
    np.testing.assert_array_equal(display.colors_, X["d"].to_numpy())
    assert display.colorbar_.ax.get_ylabel() == "d"
    assert display.ax_.get_xlabel() == "b"
    assert display.zero_line_.get_ydata()[0] == 0
    assert display.output_name is None
    assert len(display.collection_.get_offsets()) == len(X)


def test_a_binary_gradient_boosting_classifier_against_shap():
    X, signal = _data(seed=1)
    y = (signal > 0).astype(int)
    model = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    model.fit(X, y)
    # Both explain binary boosting in one raw margin (of class 1).
    display = DependenceDisplay.from_estimator(model, X, 3)
    np.testing.assert_allclose(
        display.y_, _shap_values(model, X)[:, 3], atol=1e-9, rtol=0
    )
    theirs = _shap_strengths(model, X, 3)
    _assert_clear_argmax(theirs)
    assert display.interaction_feature == NAMES[int(np.argmax(theirs))]
    with pytest.raises(InputError, match="one output.*got 1"):
        DependenceDisplay.from_estimator(model, X, 3, output=1)


def test_a_random_forest_classifier_draws_the_class_asked_for():
    X, signal = _data(seed=2)
    y = np.where(signal > 0, "yes", "no")
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
    # treelens and shap both explain both class probabilities; the picture
    # draws the last class unless told.
    last = DependenceDisplay.from_estimator(model, X, "a", interaction=None)
    np.testing.assert_allclose(last.y_, _shap_values(model, X, 1)[:, 0], atol=1e-9)
    assert last.output_name == "yes"
    first = DependenceDisplay.from_estimator(model, X, "b", output="no")
    np.testing.assert_allclose(first.y_, _shap_values(model, X, 0)[:, 1], atol=1e-9)
    theirs = _shap_strengths(model, X, 1, output=0)
    _assert_clear_argmax(theirs)
    assert first.interaction_feature == NAMES[int(np.argmax(theirs))]
    assert first.ax_.get_ylabel() == "SHAP value of b (output no)"
    with pytest.raises(InputError, match=r"`output` must be one of .*got 7"):
        DependenceDisplay.from_estimator(model, X, "a", output=7)


def test_from_result_of_interaction_values():
    X, y = _data(seed=3, n=80)
    model = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y)
    result = treelens.shap_interaction_values(model, X)
    display = DependenceDisplay.from_result(
        result, feature="b", X=X, interaction="auto"
    )
    np.testing.assert_allclose(display.y_, _shap_values(model, X)[:, 1], atol=1e-9)
    theirs = _shap_strengths(model, X, 1)
    _assert_clear_argmax(theirs)
    assert display.interaction_feature == NAMES[int(np.argmax(theirs))]
    values = treelens.shap_values(model, X)
    plain = DependenceDisplay.from_result(values, feature="b", X=X, interaction="c")
    assert plain.interaction_feature == "c"
    np.testing.assert_array_equal(plain.colors_, X["c"].to_numpy())
    with pytest.raises(InputError, match="needs interaction values"):
        DependenceDisplay.from_result(values, feature="b", X=X, interaction="auto")
    with pytest.raises(InputError, match="X must be given"):
        DependenceDisplay.from_result(values, feature="b")


def test_the_interaction_values_are_computed_on_a_sample(monkeypatch):
    import treelens._explain._shap as shap_module

    X, y = _data(seed=4)
    model = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y)
    seen = []
    original = shap_module.shap_interaction_values

    def spy(model, rows, **kwargs):
        seen.append(rows)
        return original(model, rows, **kwargs)

    monkeypatch.setattr(shap_module, "shap_interaction_values", spy)
    one = DependenceDisplay.from_estimator(model, X, "b", interaction_sample=40)
    other = DependenceDisplay.from_estimator(model, X, "b", interaction_sample=40)
    DependenceDisplay.from_estimator(model, X, "b", interaction_sample=None)
    assert [len(rows) for rows in seen] == [40, 40, len(X)]
    assert seen[0].index.is_unique and set(seen[0].index) <= set(X.index)
    assert seen[0].index.equals(seen[1].index)  # seeded
    np.testing.assert_array_equal(
        one.interaction_strengths, other.interaction_strengths
    )
    assert len(one.y_) == len(X)  # the SHAP values of every row are drawn


def test_a_categorical_feature_of_a_pipeline_is_drawn_by_label():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"](0)
    model, X = case.model, case.X
    display = DependenceDisplay.from_estimator(model, X, "employment")
    labels = ("retired", "salaried", "self-employed", "unemployed")
    assert display.x_labels_ == labels
    ticks = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert ticks == list(labels)
    missing = X["employment"].isna().to_numpy()
    np.testing.assert_array_equal(display.missing_, missing)
    assert "7 rows missing employment" in display.ax_.get_title()
    drawn = np.round(display.x_[~missing]).astype(int)
    assert np.all(np.abs(display.x_[~missing] - drawn) <= 0.3 + 1e-12)
    np.testing.assert_array_equal(
        np.asarray(labels, dtype=object)[drawn], X["employment"].to_numpy()[~missing]
    )
    assert len(display.collection_.get_offsets()) == (~missing).sum()
    # shap's values of the final model, summed over the one-hot columns.
    columns = model[:-1].get_feature_names_out()
    theirs = _shap_values(model[-1], model[:-1].transform(X), 1)
    one_hot = [i for i, c in enumerate(columns) if c.startswith("categories__employ")]
    assert len(one_hot) == 4
    np.testing.assert_allclose(display.y_, theirs[:, one_hot].sum(axis=1), atol=1e-9)
    coloured = DependenceDisplay.from_estimator(
        model, X, "income", interaction="region"
    )
    regions = ("centre", "east", "north", "south", "west")
    assert coloured.color_labels_ == regions
    np.testing.assert_array_equal(
        np.asarray(regions, dtype=object)[coloured.colors_.astype(int)],
        X["region"].to_numpy(),
    )
    colorbar_ticks = [t.get_text() for t in coloured.colorbar_.ax.get_yticklabels()]
    assert colorbar_ticks == list(regions)


def test_codes_of_an_encoded_array_are_drawn_by_label():
    rng = np.random.default_rng(0)
    forest = random_forest(rng)
    codes = random_codes(rng, 60)
    display = DependenceDisplay.from_estimator(forest, codes, "color", interaction=None)
    assert display.x_labels_ == ("red", "green", "blue")
    valid = np.isin(codes[:, 0], [0, 1, 2])
    np.testing.assert_array_equal(display.missing_, ~valid)
    np.testing.assert_array_equal(np.round(display.x_[valid]), codes[valid, 0])
    np.testing.assert_array_equal(
        display.y_, treelens.shap_values(forest, codes).values_[:, 0]
    )


def test_a_display_drawn_by_hand():
    display = DependenceDisplay(
        shap_values=np.array([0.5, -1.0, 2.0, 0.0]),
        feature_values=pd.Series([True, False, True, None], dtype=object),
        feature_name="owner",
        interaction_feature="size",
        color_values=np.array([3.0, np.nan, 1.0, 2.0]),
    ).plot(s=30)
    assert display.x_labels_ == ("False", "True")
    np.testing.assert_array_equal(display.missing_, [False, False, False, True])
    np.testing.assert_array_equal(np.round(display.x_[:3]), [1, 0, 1])
    np.testing.assert_array_equal(display.colors_, [3.0, np.nan, 1.0, 2.0])
    face = display.collection_.get_facecolors()
    assert tuple(face[1][:3]) == pytest.approx((0.6, 0.6, 0.6))  # missing: grey
    assert display.collection_.get_sizes()[0] == 30
    assert display.colorbar_.ax.get_ylabel() == "size"
    plain = DependenceDisplay(
        shap_values=np.zeros(3), feature_values=[1, 2, 3], feature_name="x"
    ).plot()
    assert plain.colorbar_ is None and plain.colors_ is None
    assert plain.ax_.get_title() == ""


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"feature": "colour"}, r"`feature` must be one of the features .*'colour'"),
        ({"feature": 4}, r"`feature` must be one of .*below 4\); got 4"),
        ({"feature": "b", "interaction": "b"}, r"another feature than .*'b'"),
        ({"feature": 1, "interaction": 1}, r"another feature than .*'b'"),
        ({"feature": "b", "interaction": "size"}, r"`interaction` must be .*'size'"),
        ({"feature": "b", "output": "yes"}, r"one output.*got 'yes'"),
        ({"feature": "b", "interaction_sample": 0}, "`interaction_sample` must be"),
    ],
)
def test_bad_arguments_are_refused(arguments, match):
    X, y = _data(n=40)
    model = RandomForestRegressor(3, max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(TreelensError, match=match) as caught:
        DependenceDisplay.from_estimator(model, X, **arguments)
    assert isinstance(caught.value, ValueError)


def test_no_colour_when_the_feature_interacts_with_none():
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = _data(seed=5, n=60)
    # Stumps add one-feature functions: every interaction value is zero.
    model = GradientBoostingRegressor(n_estimators=10, max_depth=1, random_state=0)
    display = DependenceDisplay.from_estimator(model.fit(X, y), X, "a")
    np.testing.assert_array_equal(display.interaction_strengths[[1, 2, 3]], 0.0)
    assert display.interaction_feature is None
    assert display.colorbar_ is None and display.colors_ is None
