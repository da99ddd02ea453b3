"""The tweak command's counterfactual options: auto by default, several options."""

from __future__ import annotations

import json

import numpy as np
import pytest
import skops.io
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from typer.testing import CliRunner

from tests.cli.test_cli import assert_bad_input
from treelens._cli._app import app


@pytest.fixture(scope="module")
def cancer(tmp_path_factory):
    root = tmp_path_factory.mktemp("cf-cli")
    data = load_breast_cancer(as_frame=True)
    X = data.data
    X.columns = [c.replace(" ", "_") for c in X.columns]
    model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, data.target)
    skops.io.dump(model, root / "forest.skops")
    X.to_csv(root / "rows.csv", index=False)
    return root, model, X


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_default_finds_a_change_for_every_row_tweaking_misses(cancer):
    root, _, _ = cancer
    args = ("tweak", root / "forest.skops", root / "rows.csv", "--target-class", "1")
    auto = _run(*args, "--max-rows", "8", "--json")
    tweak = _run(*args, "--max-rows", "8", "--method", "tweak", "--json")
    assert auto.exit_code == 0, auto.output
    rows = json.loads(auto.stdout)["rows"]
    missed = [r for r in json.loads(tweak.stdout)["rows"] if not r["found"]]
    assert missed  # tweaking finds nothing for some rows
    assert all(r["found"] and r["status"] == "optimal" for r in rows)


def test_options_are_one_table_with_an_option_number(cancer):
    root, _, _ = cancer
    result = _run(
        "tweak",
        root / "forest.skops",
        root / "rows.csv",
        "--target-class",
        "1",
        "--max-rows",
        "2",
        "--options",
        "2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["option"] for r in rows] == [1, 2, 1, 2]
    assert rows[0]["cost"] <= rows[1]["cost"]
    assert rows[0]["changes"] != rows[1]["changes"]
    changes = json.loads(result.stdout)["changes"]
    assert {c["option"] for c in changes} == {1, 2}
    assert np.isfinite([r["cost"] for r in rows]).all()


@pytest.mark.parametrize(
    ("extra", "pattern"),
    [
        (("--method", "fast"), "--method"),
        (("--method", "tweak", "--options", "2"), "n_counterfactuals"),
    ],
)
def test_bad_counterfactual_options_exit_2(cancer, extra, pattern):
    root, _, _ = cancer
    result = _run(
        "tweak", root / "forest.skops", root / "rows.csv", "--target-class", "1", *extra
    )
    assert_bad_input(result, pattern)


@pytest.mark.parametrize("order", ["model", "reversed"])
def test_isolation_forest_keeps_counterfactuals_inliers(cancer, order):
    """An IsolationForest on the model's columns, in its order or another,
    reads them by name: the answer is an inlier by its own predict."""
    from sklearn.ensemble import IsolationForest

    root, model, X = cancer
    columns = list(X.columns) if order == "model" else list(X.columns)[::-1]
    iso = IsolationForest(n_estimators=4, max_samples=32, random_state=0)
    skops.io.dump(iso.fit(X[columns]), root / f"iso_{order}.skops")
    args = ("tweak", root / "forest.skops", root / "rows.csv", "--target-class", "1")
    iso_path = root / f"iso_{order}.skops"
    result = _run(*args, "--max-rows", "1", "--isolation-forest", iso_path, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    (row,) = answer["rows"]
    assert row["found"]
    point = X.iloc[[row["row"]]].copy()
    for change in answer["changes"]:
        point[change["feature"]] = change["after"]
    assert model.predict(point)[0] == 1
    assert iso.predict(point[columns])[0] == 1


def test_isolation_forest_bad_input_exits_2(cancer):
    from sklearn.ensemble import IsolationForest

    root, _, X = cancer
    iso = IsolationForest(n_estimators=4, max_samples=32, random_state=0).fit(X)
    skops.io.dump(iso, root / "iso.skops")
    args = ("tweak", root / "forest.skops", root / "rows.csv", "--target-class", "1")
    other = X.iloc[:, :5].rename(columns={X.columns[0]: "radius"})
    other = IsolationForest(n_estimators=5, random_state=0).fit(other)
    skops.io.dump(other, root / "other.skops")
    assert_bad_input(
        _run(*args, "--isolation-forest", root / "other.skops"),
        "reads column 'radius', which the model does not take; expected some",
    )
    assert_bad_input(
        _run(
            *args, "--isolation-forest", root / "iso.skops", "--max-anomaly-score", "2"
        ),
        "max_anomaly_score",
    )
    assert_bad_input(_run(*args, "--max-anomaly-score", "0.5"), "isolation_forest")


def test_a_boolean_column_of_a_csv_file_is_spoken_of_as_booleans(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"income": rng.normal(50, 10, 300), "flag": rng.random(300) < 0.5})
    y = ((X.income > 50) & X.flag).astype(int)
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    skops.io.dump(model.fit(X, y), tmp_path / "model.skops")
    X.to_csv(tmp_path / "rows.csv", index=False)
    # A row the model declines whose flag is False, so the answer sets it.
    row = int(np.flatnonzero((model.predict(X) == 0) & ~X.flag & (X.income > 55))[0])
    args = ["tweak", str(tmp_path / "model.skops"), str(tmp_path / "rows.csv")]
    result = CliRunner().invoke(
        app, [*args, "--target-class", "1", "--rows", str(row), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    changes = [c for c in payload["changes"] if c["feature"] == "flag"]
    assert changes and changes[0]["before"] is False and changes[0]["after"] is True
    assert "flag: False -> True" in payload["rows"][0]["changes"]
    assert model.predict(X.iloc[[row]].assign(flag=True))[0] == 1


def test_output_over_the_isolation_forest_file_is_refused(cancer):
    from sklearn.ensemble import IsolationForest

    root, _, X = cancer
    iso_path = root / "plausible.skops"
    skops.io.dump(IsolationForest(n_estimators=2, random_state=0).fit(X), iso_path)
    before = iso_path.read_bytes()
    result = _run(
        "tweak", root / "forest.skops", root / "rows.csv", "--target-class", "1",
        "--max-rows", "1", "--isolation-forest", iso_path, "--out", iso_path,
    )  # fmt: skip
    assert_bad_input(result, "is an input file")
    assert iso_path.read_bytes() == before


def test_cost_note_of_numeric_columns_names_no_category(cancer):
    root, _, _ = cancer
    result = _run("tweak", root / "forest.skops", root / "rows.csv",
                  "--target-class", "1", "--max-rows", "1", "--cost", "l1", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["notes"] == [
        "Cost: L1, the sum of the changes in the columns' own units."
    ]


def test_tweak_without_a_target_says_which_option_this_model_needs(cancer, tmp_path):
    root, _, _ = cancer
    result = _run("tweak", root / "forest.skops", root / "rows.csv")
    assert_bad_input(result, "--target-class C, one of 0, 1 or 'other'")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0)
    skops.io.dump(model.fit(X, y), tmp_path / "regressor.skops")
    X.to_csv(tmp_path / "rows.csv", index=False)
    result = _run("tweak", tmp_path / "regressor.skops", tmp_path / "rows.csv")
    assert_bad_input(result, "--target-range LOW:HIGH (this model is a regressor)")
    low, high = np.min(model.predict(X)), np.max(model.predict(X))
    assert f"run from {low:.4g} to {high:.4g}" in result.stderr
