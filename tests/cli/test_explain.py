"""``treelens explain``: one row's path, contributions and counterfactual."""

from __future__ import annotations

import json

import numpy as np
import pytest
import skops.io
from sklearn.datasets import load_iris
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
from typer.testing import CliRunner

from treelens import decision_path, saabas_values
from treelens._cli._app import app
from treelens._core._numbers import format_number

from .test_cli import FEATURES, assert_bad_input, run_subprocess


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain")
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    forest = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0)
    forest.fit(X, y)
    regressor = GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0)
    regressor.fit(X.iloc[:, 1:], X.iloc[:, 0])
    skops.io.dump(forest, root / "forest.skops")
    skops.io.dump(regressor, root / "regressor.skops")
    rows = X.iloc[::10].assign(species=y.iloc[::10]).reset_index(drop=True)
    rows.to_csv(root / "data.csv", index=False)
    return {"root": root, "forest": forest, "regressor": regressor, "rows": rows}


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_text_shows_the_sentence_contributions_and_counterfactual(files):
    root = files["root"]
    result = run(
        "explain",
        root / "forest.skops",
        root / "data.csv",
        "--target",
        "species",
        "--row",
        7,
        "--top",
        3,
    )
    assert result.exit_code == 0, result.output
    X = files["rows"][FEATURES].iloc[[7]]
    sentence = decision_path(files["forest"], X).sentences_[0]
    assert f"Row 7: {sentence[:40]}" in result.stdout
    assert "Decision path" in result.stdout
    assert "Contributions to the probability of class" in result.stdout
    assert "Counterfactual" in result.stdout or "no counterfactual" in result.stdout


def test_json_holds_the_numbers(files):
    root = files["root"]
    result = run(
        "explain",
        root / "forest.skops",
        root / "data.csv",
        "--target",
        "species",
        "--row",
        3,
        "--top",
        2,
        "--json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["row"] == 3
    X = files["rows"][FEATURES].iloc[[3]]
    assert payload["sentence"] == decision_path(files["forest"], X).sentences_[0]
    values = saabas_values(files["forest"], X)
    contributions = payload["contributions"]
    k = int(np.argmax(values.prediction_[0]))
    assert contributions["output"] == values.output_names_[k]
    assert contributions["prediction"] == pytest.approx(values.prediction_[0, k])
    total = contributions["bias"] + sum(t["contribution"] for t in contributions["top"])
    assert total == pytest.approx(contributions["prediction"], abs=1e-12)
    assert len(contributions["top"]) <= 3
    counterfactual = payload["counterfactual"]
    assert counterfactual is not None and counterfactual["row"] == 3
    if counterfactual["found"]:
        assert counterfactual["changes"]


def test_regressor_without_a_range_explains_without_counterfactual(files):
    root = files["root"]
    data = files["rows"][FEATURES[1:]]
    data.to_csv(root / "regression.csv", index=False)
    result = run(
        "explain",
        root / "regressor.skops",
        root / "regression.csv",
        "--row",
        0,
        "--json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["counterfactual"] is None
    # The note says where the model's predictions of the data lie.
    predicted = files["regressor"].predict(data)
    low, median, high = (
        format_number(v) for v in np.percentile(predicted, [0, 50, 100])
    )
    assert payload["note"].startswith(
        "no counterfactual: give --target-range LOW:HIGH for a regressor. The "
        f"predictions of the data run from {low} to {high} (median {median})"
    )
    assert payload["contributions"]["output_space"] == "value"


def test_row_out_of_range_names_the_files_rows(files):
    root = files["root"]
    result = run_subprocess(
        "explain",
        root / "forest.skops",
        root / "data.csv",
        "--target",
        "species",
        "--row",
        15,
    )
    assert_bad_input(result, "--row must be a row of the data file, in [0, 14]")


def test_missing_columns_are_bad_input(files):
    root = files["root"]
    files["rows"].drop(columns=["petal_width"]).to_csv(root / "short.csv", index=False)
    result = run("explain", root / "forest.skops", root / "short.csv", "--row", 0)
    assert result.exit_code == 2
    assert "petal_width" in result.output
    assert "Traceback" not in result.output


def test_log_link_regressor_reads_its_raw_score_as_the_log(files, tmp_path):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rows = files["rows"][FEATURES]
    counts = np.round(np.exp(rows["petal_length"] / 2)).to_numpy()
    model = HistGradientBoostingRegressor(
        loss="poisson", max_iter=5, min_samples_leaf=3
    )
    model.fit(rows, counts)
    skops.io.dump(model, tmp_path / "poisson.skops")
    rows.to_csv(tmp_path / "rows.csv", index=False)
    low = float(np.quantile(model.predict(rows), 0.8))
    args = ["explain", tmp_path / "poisson.skops", tmp_path / "rows.csv", "--row", 0]
    text = run(*args, "--target-range", f"{low}:")
    assert text.exit_code == 0, text.output
    # The title wraps beside the counterfactual's table.
    assert "Contributions to the raw score (the log" in text.stdout
    assert "of the prediction)" in text.stdout
    payload = json.loads(run(*args, "--target-range", f"{low}:", "--json").stdout)
    contributions = payload["contributions"]
    assert contributions["output_space"] == "raw" and contributions["link"] == "exp"
    predicted = float(model.predict(rows.iloc[[0]])[0])
    assert np.exp(contributions["prediction"]) == pytest.approx(predicted, rel=1e-12)
    assert payload["counterfactual"]["found"]
    changed = rows.iloc[[0]].copy()
    for change in payload["counterfactual"]["changes"]:
        changed[change["feature"]] = change["after"]
    # The table rounds the values it shows; the model is asked of the rounded
    # point only when it lies clear of the bound.
    assert model.predict(changed)[0] >= low * (1 - 1e-3)
