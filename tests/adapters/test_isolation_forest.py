"""scikit-learn's IsolationForest, read as an additive model of path lengths.

Its Forest predicts ``score_samples`` bit for bit; contributions and SHAP values
add up to the raw score ``-log2(-score_samples)``; counterfactuals reach a range
of scores (``(offset_, None)``: an inlier) at the least cost an independent brute
force finds; importances, which need impurities or a target, are refused.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import skops.io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import IsolationForest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

import treelens
from tests.counterfactual import brute
from tests.models import make_data, probe_inputs
from treelens import Forest, InputError, UnsupportedModelError
from treelens._adapters._isolation import average_path_length
from treelens._cli._app import app


def _fit(seed: int, *, n_samples: int = 200, n_features: int = 4, **params):
    X, _ = make_data(
        seed,
        task="regression",
        missing=True,
        n_samples=n_samples,
        n_features=n_features,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_samples above n_samples
        model = IsolationForest(random_state=seed, **params).fit(X)
    return model, X


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_estimators=st.integers(1, 20),
    max_samples=st.sampled_from(["auto", 2, 3, 17, 0.5]),
    max_features=st.sampled_from([1.0, 0.5, 3]),
    bootstrap=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_predictions_are_score_samples_bit_for_bit(
    n_estimators, max_samples, max_features, bootstrap, seed
):
    model, X = _fit(
        seed,
        n_estimators=n_estimators,
        max_samples=max_samples,
        max_features=max_features,
        bootstrap=bootstrap,
    )
    forest = treelens.to_forest(model)
    assert forest.link == "isolation" and forest.task == "regression"
    probe = probe_inputs(forest, X, seed, missing=True)
    score = model.score_samples(probe)
    np.testing.assert_array_equal(forest.predict(probe), score)
    np.testing.assert_allclose(
        forest.raw_predict(probe)[:, 0], -np.log2(-score), rtol=1e-14, atol=0
    )
    # The model calls a row an inlier where its score reaches offset_.
    inlier = forest.predict(probe) >= model.offset_
    np.testing.assert_array_equal(np.where(inlier, 1, -1), model.predict(probe))


def test_leaves_hold_scikit_learns_path_lengths_and_splits_their_mean():
    model, _ = _fit(0, n_estimators=3, max_samples=40)
    forest = treelens.to_forest(model)
    c = average_path_length(np.array([40]))[0]
    assert forest.raw_divisor == 3 * c and forest.learning_rate == 1 / (3 * c)
    for t, tree in enumerate(forest.trees):
        leaves = tree.is_leaf
        expected = (
            model._decision_path_lengths[t] + model._average_path_length_per_tree[t]
        ) - 1.0
        np.testing.assert_array_equal(tree.value[leaves, 0], expected[leaves])
        assert np.isnan(tree.impurity).all()
        # The root holds the mean path length of the training rows it split.
        w = tree.weighted_n_node_samples
        np.testing.assert_allclose(
            tree.value[0, 0], (w[leaves] * expected[leaves]).sum() / w[0], rtol=1e-12
        )


def test_path_length_of_two_leaves_by_hand():
    """Two rows, one split: each leaf holds one row at depth 1, path 1 + c(1)."""
    X = np.array([[0.0], [1.0]])
    model = IsolationForest(n_estimators=1, max_samples=2, random_state=0).fit(X)
    forest = treelens.to_forest(model)
    tree = forest.trees[0]
    assert tree.value[:, 0].tolist() == [1.0, 1.0, 1.0]  # c(2) = 1 at the root
    # score = -2 ** -(1 / c(2)) for either row.
    assert forest.predict(X).tolist() == [-0.5, -0.5]
    assert model.score_samples(X).tolist() == [-0.5, -0.5]


def test_a_pipeline_ending_in_an_isolation_forest_is_lifted():
    X, _ = make_data(3, task="regression", missing=False, n_samples=150)
    frame = pd.DataFrame(X * [1.0, 10.0, 100.0, 1.0], columns=list("abcd"))
    pipeline = make_pipeline(
        StandardScaler(), IsolationForest(n_estimators=10, random_state=3)
    ).fit(frame)
    forest = treelens.to_forest(pipeline)
    assert forest.link == "isolation" and forest.feature_names == tuple("abcd")
    np.testing.assert_array_equal(forest.predict(frame), pipeline.score_samples(frame))


def test_explanations_add_up_to_the_raw_score():
    model, X = _fit(4, n_estimators=10)
    rows = X[:25]
    raw = -np.log2(-model.score_samples(rows))
    shap = treelens.shap_values(model, rows)
    assert shap.output == "raw"
    np.testing.assert_allclose(
        shap.expected_value_ + shap.values_.sum(axis=1), raw, rtol=0, atol=1e-12
    )
    saabas = treelens.saabas_values(model, rows)
    assert saabas.output_space_ == "raw"
    np.testing.assert_allclose(
        saabas.bias_ + saabas.values_.sum(axis=1), raw, rtol=0, atol=1e-12
    )
    sentence = treelens.decision_path(model, rows[:1]).sentences_[0]
    score = model.score_samples(rows[:1])[0]
    assert sentence.startswith(f"Scored {score:.4g} (anomaly score {-score:.4g})")


def test_raw_interval_is_minus_log2_of_minus_the_score():
    forest = treelens.to_forest(_fit(0, n_estimators=2)[0])
    assert forest.raw_interval(-0.5, -0.25) == (1.0, 2.0)
    assert forest.raw_interval(-2.0, 0.0) == (-1.0, np.inf)
    assert forest.raw_interval(0.0, 1.0) == (np.inf, np.inf)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_least_change_into_an_inlier_equals_brute_force(seed):
    X, _ = make_data(seed, task="regression", n_samples=60, n_features=3)
    model = IsolationForest(n_estimators=3, max_samples=12, random_state=seed).fit(X)
    outliers = np.flatnonzero(model.predict(X) == -1)[:3]
    assert outliers.size
    target = (float(model.offset_), None)
    for row in outliers:
        result = brute.assert_optimum_is_least(model, X[row], target)
        if result is not None:
            assert (model.predict(result.X_cf_) == 1).all()
            assert (model.score_samples(result.X_cf_) >= model.offset_).all()


def test_counterfactual_entry_point_makes_outliers_inliers_and_back():
    model, X = _fit(5, n_estimators=20)
    X = np.nan_to_num(X)
    outliers = np.flatnonzero(model.predict(X) == -1)[:4]
    result = treelens.counterfactual(model, X[outliers], target="inlier", reference=X)
    assert result.found_.all()
    assert (model.predict(result.X_cf_) == 1).all()
    same = treelens.counterfactual(
        model, X[outliers], target=(model.offset_, None), reference=X
    )
    np.testing.assert_array_equal(same.cost_, result.cost_)
    tweaked = treelens.feature_tweak(model, X[outliers], target="inlier")
    assert (model.predict(tweaked.X_cf_[tweaked.found_]) == 1).all()
    inliers = np.flatnonzero(model.predict(X) == 1)[:3]
    back = treelens.optimal_counterfactual(model, X[inliers], target="outlier")
    assert back.found_.all() and (model.predict(back.X_cf_) == -1).all()


def test_inlier_targets_belong_to_isolation_forests():
    X, y = make_data(0, task="regression", n_samples=60)
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(InputError, match="'inlier'.* is for an IsolationForest"):
        treelens.counterfactual(model, X[:1], target="inlier")
    iso = IsolationForest(n_estimators=2, random_state=0).fit(X)
    with pytest.raises(InputError, match="or 'inlier' or 'outlier'"):
        treelens.counterfactual(iso, X[:1], target="normal")


@pytest.mark.parametrize(
    "function",
    [
        lambda m, X: treelens.mdi_importance(m),
        lambda m, X: treelens.mdi_importance(m, X, np.zeros(len(X))),
        lambda m, X: treelens.permutation_importance(m, X, np.zeros(len(X))),
        lambda m, X: treelens.node_statistics(m, X, np.zeros(len(X))),
        lambda m, X: treelens.debiased_mdi_importance(m, X, np.zeros(len(X))),
        lambda m, X: treelens.gain_importance(m),
    ],
)
def test_importances_are_refused_with_the_reason(function):
    model, X = _fit(0, n_estimators=3)
    with pytest.raises(UnsupportedModelError, match="split at random on rows without"):
        function(model, X)


def test_a_single_row_sample_and_a_misused_link_are_refused():
    X = np.arange(10.0)[:, None]
    model = IsolationForest(n_estimators=2, max_samples=1, random_state=0).fit(X)
    with pytest.raises(UnsupportedModelError, match="max_samples_ of at least 2"):
        treelens.to_forest(model)
    forest = treelens.to_forest(_fit(0, n_estimators=2)[0])
    with pytest.raises(InputError, match="'isolation' is for boosted regressors"):
        Forest(
            trees=forest.trees,
            kind="forest",
            task="regression",
            n_features=forest.n_features,
            feature_names=forest.feature_names,
            link="isolation",
        )


def _saved(tmp_path, seed: int, n_estimators: int):
    """An IsolationForest fitted on a frame of named columns, saved with skops
    beside the frame as CSV: the model, the frame and both paths."""
    _, X = _fit(seed, n_estimators=n_estimators)
    frame = pd.DataFrame(np.nan_to_num(X), columns=[f"f{j}" for j in range(4)])
    model = IsolationForest(n_estimators=n_estimators, random_state=seed).fit(frame)
    skops.io.dump(model, tmp_path / "iso.skops")
    frame.to_csv(tmp_path / "rows.csv", index=False)
    return model, frame, str(tmp_path / "iso.skops"), str(tmp_path / "rows.csv")


def test_command_line_explains_an_outlier_and_makes_it_an_inlier(tmp_path):
    model, frame, model_path, rows_path = _saved(tmp_path, 6, 20)
    row = int(np.flatnonzero(model.predict(frame) == -1)[0])
    args = [
        "explain",
        model_path,
        rows_path,
        "--row",
        str(row),
        "--optimal",
        "--json",
    ]  # aims for an inlier by default
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    contributions = payload["contributions"]
    assert contributions["link"] == "isolation"
    score = model.score_samples(frame.iloc[[row]])[0]
    assert -(2 ** -contributions["prediction"]) == pytest.approx(score, rel=1e-12)
    assert payload["counterfactual"]["found"]
    tweak = CliRunner().invoke(
        app,
        [
            "tweak",
            model_path,
            rows_path,
            "--target-class",
            "inlier",
            "--max-rows",
            "3",
            "--json",
        ],
    )
    assert tweak.exit_code == 0, tweak.output
    rows = json.loads(tweak.stdout)["rows"]
    chosen = [r["row"] for r in rows]
    # The rows chosen are outliers: the model's score below its offset.
    assert (model.predict(frame.iloc[chosen]) == -1).all()
    assert all(r["found"] for r in rows)


def test_command_line_ranks_its_columns_by_shap_alone(tmp_path):
    model, frame, model_path, rows_path = _saved(tmp_path, 8, 5)
    args = ["importance", model_path]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "--shap" in result.output
    result = CliRunner().invoke(app, [*args, "--data", rows_path, "--shap", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {"shap", "notes"}
    expected = treelens.shap_importance(model, frame).importances_
    got = {r["feature"]: r["mean_abs_shap"] for r in payload["shap"]}
    assert got == pytest.approx(expected.to_dict(), abs=1e-12)
