"""The importance and report commands on models read from files that keep less
than the fitted model: CatBoost JSON files (no gains), models fitted without
feature names (shown under the data file's column names)."""

import json
import re

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.datasets import load_iris
from sklearn.inspection import permutation_importance
from sklearn.metrics import accuracy_score
from sklearn.tree import DecisionTreeClassifier
from typer.testing import CliRunner

from treelens._cli._app import app

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_bad_input(result, pattern):
    """Exit code 2 with a one-line message and no traceback."""
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("treelens: error: ")
    assert pattern in lines[0], lines[0]


def page_text(path):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text()))


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    root = tmp_path_factory.mktemp("model_files")
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    held = np.arange(len(X)) % 3 == 0
    rows = X[held].assign(species=y[held]).reset_index(drop=True)
    rows.to_csv(root / "held.csv", index=False)
    rows[FEATURES].to_csv(root / "held_x.csv", index=False)
    return {"root": root, "X": X[~held], "y": y[~held], "rows": rows}


@pytest.fixture(scope="module")
def catboost_files(iris):
    catboost = pytest.importorskip("catboost")
    model = catboost.CatBoostClassifier(
        iterations=20, depth=3, verbose=0, random_seed=0, allow_writing_files=False
    )
    model.fit(iris["X"], iris["y"])
    root = iris["root"]
    model.save_model(str(root / "model.json"), format="json")
    model.save_model(str(root / "model.cbm"))
    return {"model": model, "json": root / "model.json", "cbm": root / "model.cbm"}


def records(result):
    assert result.exit_code == 0, result.stderr
    return pd.DataFrame(json.loads(result.stdout)["importance"]).set_index("feature")


def test_catboost_json_importance_is_measured_on_data(iris, catboost_files):
    """No gain in a JSON file: held-out MDI and permutation importance are still
    given, equal to those of the .cbm file and of scikit-learn scoring the model."""
    held = iris["root"] / "held.csv"
    args = ["--data", held, "--target", "species", "--permutation", "--json"]
    from_json = records(run("importance", catboost_files["json"], *args))
    from_cbm = records(run("importance", catboost_files["cbm"], *args))
    assert "gain" not in from_json.columns and "gain" in from_cbm.columns
    assert sorted(from_json.index) == sorted(FEATURES)
    np.testing.assert_allclose(
        from_json["held_out_mdi"], from_cbm.loc[from_json.index, "held_out_mdi"]
    )
    model, rows = catboost_files["model"], iris["rows"]
    expected = permutation_importance(
        model,
        rows[FEATURES],
        rows["species"],
        scoring=lambda m, X, y: accuracy_score(y, np.ravel(m.predict(X))),
        n_repeats=5,
        random_state=0,
    ).importances_mean
    assert expected.max() > 0  # the check below can tell features apart
    np.testing.assert_allclose(
        from_json.loc[FEATURES, "permutation"], expected, atol=1e-12
    )


def test_catboost_json_importance_says_what_is_unavailable(iris, catboost_files):
    held = iris["root"] / "held.csv"
    result = run(
        "importance", catboost_files["json"], "--data", held, "--target", "species"
    )
    assert result.exit_code == 0, result.stderr
    text = re.sub(r"\s+", " ", result.stdout)
    assert "no MDI or gain" in text and ".cbm file" in text
    result = run("importance", catboost_files["json"])
    assert_bad_input(result, "expected --data FILE --target COL")


def test_catboost_json_report(iris, catboost_files, tmp_path):
    """The report of a JSON file has its measured importances; without a target
    column it says there is none, and why, instead of refusing the page."""
    out = tmp_path / "with_target.html"
    result = run(
        "report", catboost_files["json"], iris["root"] / "held.csv", "--target",
        "species", "--max-counterfactuals", 1, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = page_text(out)
    assert "permutation" in page and "Every column is measured on all 50 rows" in page
    out = tmp_path / "without_target.html"
    result = run(
        "report", catboost_files["json"], iris["root"] / "held_x.csv",
        "--max-counterfactuals", 0, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = page_text(out)
    assert "No importance" in page and "no MDI or gain" in page


@pytest.fixture(scope="module")
def unnamed(iris):
    """A tree fitted on an array: the model knows no feature names."""
    model = DecisionTreeClassifier(max_depth=3, random_state=0)
    model.fit(iris["X"].to_numpy(), iris["y"].to_numpy())
    path = iris["root"] / "unnamed.skops"
    skops.io.dump(model, path)
    return {"model": model, "path": path}


def test_unnamed_model_is_shown_under_the_file_columns(iris, unnamed):
    result = run(
        "importance", unnamed["path"], "--data", iris["root"] / "held.csv",
        "--target", "species", "--json",
    )  # fmt: skip
    frame = records(result)
    # Position i of the model is column i of the file.
    expected = dict(zip(FEATURES, unnamed["model"].feature_importances_))
    assert sorted(frame.index) == sorted(FEATURES)
    for name, value in expected.items():
        assert frame.loc[name, "mdi"] == pytest.approx(value)
    notes = result.stderr.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith("treelens: note: ")
    assert "fitted without feature names" in notes[0]


def test_json_output_lists_the_notes(iris, unnamed, catboost_files):
    """--json keeps the notes the text output prints: importance (in its
    table's title), tweak and explain (on stderr); an empty list when none."""
    held = iris["root"] / "held.csv"
    result = run("importance", catboost_files["json"], "--data", held, "--target",
                 "species", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    notes = json.loads(result.stdout)["notes"]
    assert notes[0].startswith("no MDI or gain: this catboost.")
    result = run("importance", catboost_files["cbm"], "--json")
    assert result.exit_code == 0, result.stderr
    (note,) = json.loads(result.stdout)["notes"]
    assert note.startswith("gain: the library's total split gain")
    text = " ".join(run("importance", catboost_files["cbm"]).stdout.split())
    assert f"Feature importance ({note})" in text  # the same note as text
    for args in (
        ["tweak", unnamed["path"], held, "--target-class", 2, "--max-rows", 1],
        ["explain", unnamed["path"], held, "--row", 0],
    ):
        result = run(*args, "--target", "species", "--json")
        assert result.exit_code == 0, result.stderr
        printed = [
            line.removeprefix("treelens: note: ") for line in result.stderr.splitlines()
        ]
        assert printed and "fitted without feature names" in printed[0]
        assert json.loads(result.stdout)["notes"] == printed
    result = run("tweak", catboost_files["cbm"], held, "--target", "species",
                 "--target-class", 2, "--max-rows", 1, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (note,) = json.loads(result.stdout)["notes"]  # only how the cost is measured
    assert note.startswith("Cost: L1 in median absolute deviations of the data")


def test_unnamed_model_with_other_column_count_keeps_its_names(iris, unnamed):
    rows = iris["rows"].drop(columns="petal_width")
    path = iris["root"] / "three.csv"
    rows.to_csv(path, index=False)
    result = run("importance", unnamed["path"], "--data", path, "--target", "species")
    assert_bad_input(result, "has 3 feature columns, but the model")


def test_named_model_keeps_its_names(iris):
    """The file's columns in another order: matched by name, never renamed."""
    model = DecisionTreeClassifier(max_depth=3, random_state=0)
    model.fit(iris["X"], iris["y"])
    path = iris["root"] / "named.skops"
    skops.io.dump(model, path)
    shuffled = iris["rows"][[*FEATURES[::-1], "species"]]
    data = iris["root"] / "shuffled.csv"
    shuffled.to_csv(data, index=False)
    result = run("importance", path, "--data", data, "--target", "species", "--json")
    frame = records(result)
    assert "note" not in result.stderr
    for name, value in zip(FEATURES, model.feature_importances_):
        assert frame.loc[name, "mdi"] == pytest.approx(value)


def test_unnamed_model_explanations_speak_the_file_columns(iris, unnamed, tmp_path):
    """tweak, explain and report name the file's columns, and constraints are
    given in them: an immutable column is never changed."""
    data = iris["root"] / "held.csv"
    args = ["tweak", unnamed["path"], data, "--target", "species"]
    args += ["--target-class", 2, "--max-rows", 3, "--json"]
    changed = {}
    for options in ([], ["--immutable", "sepal_length"]):
        result = run(*args, *options)
        assert result.exit_code == 0, result.stderr
        changes = pd.DataFrame(json.loads(result.stdout)["changes"])
        assert len(changes) and set(changes["feature"]) <= set(FEATURES)
        changed[bool(options)] = set(changes["feature"])
    # The column named in --immutable is the model's column it names.
    assert "sepal_length" in changed[False] and "sepal_length" not in changed[True]
    result = run("explain", unnamed["path"], data, "--target", "species", "--row", 0)
    assert result.exit_code == 0, result.stderr
    assert "because petal_width 0.2 <= 0.8" in result.stdout
    assert not re.search(r"\bx[0-3]\b", result.stdout)
    out = tmp_path / "report.html"
    result = run(
        "report", unnamed["path"], data, "--target", "species",
        "--max-counterfactuals", 1, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = page_text(out)
    assert "petal_length" in page and not re.search(r"\bx[0-3]\b", page)
    assert "sklearn.DecisionTreeClassifier" in page  # the model, not its Forest


def test_unnamed_model_confirms_the_counterfactuals_of_tweak(
    iris, unnamed, monkeypatch
):
    """The model behind the renamed Forest checks every counterfactual with
    its own predict, on the file's columns by position (an array)."""
    predict, given = DecisionTreeClassifier.predict, []

    def spy(self, X, *args, **kwargs):
        given.append(X)
        return predict(self, X, *args, **kwargs)

    monkeypatch.setattr(DecisionTreeClassifier, "predict", spy)
    result = run(
        "tweak", unnamed["path"], iris["root"] / "held.csv", "--target", "species",
        "--target-class", 2, "--rows", "0,1,2", "--cost", "l1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    found = pd.DataFrame(json.loads(result.stdout)["rows"])["found"]
    assert found.all() and given
    assert all(isinstance(X, np.ndarray) and X.shape[1] == 4 for X in given)


def _isolation_forests(iris):
    """IsolationForests on the model's columns: fitted on an array, on the
    file's named columns, and a Pipeline fitted on an array."""
    from sklearn.ensemble import IsolationForest
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def iso():
        return IsolationForest(n_estimators=3, max_samples=32, random_state=0)

    X = iris["X"]
    return {
        "array": iso().fit(X.to_numpy()),
        "named": iso().fit(X),
        "pipeline": make_pipeline(StandardScaler(), iso()).fit(X.to_numpy()),
    }


@pytest.mark.parametrize("kind", ["array", "named", "pipeline"])
def test_unnamed_model_tweaks_with_an_isolation_forest(
    iris, unnamed, kind, monkeypatch
):
    """--isolation-forest beside a model fitted without feature names: the
    IsolationForest reads the model's columns (by position when it has no
    names either), and the model's own predict confirms every answer."""
    iso = _isolation_forests(iris)[kind]
    path = iris["root"] / f"iso_{kind}.skops"
    skops.io.dump(iso, path)
    predict, given = DecisionTreeClassifier.predict, []

    def spy(self, X, *args, **kwargs):
        given.append(X)
        return predict(self, X, *args, **kwargs)

    monkeypatch.setattr(DecisionTreeClassifier, "predict", spy)
    rows = iris["rows"]
    args = [
        "tweak", unnamed["path"], iris["root"] / "held.csv", "--target", "species",
        "--target-class", 2, "--rows", "0,1,2", "--cost", "l1",
        "--isolation-forest", path, "--json",
    ]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert pd.DataFrame(payload["rows"])["found"].all() and given
    assert all(isinstance(X, np.ndarray) and X.shape[1] == 4 for X in given)
    points = rows.loc[[0, 1, 2], FEATURES].copy()
    for change in payload["changes"]:
        points.loc[change["row"], change["feature"]] = change["after"]
    np.testing.assert_array_equal(predict(unnamed["model"], points.to_numpy()), 2)
    inputs = points if kind == "named" else points.to_numpy()
    np.testing.assert_array_equal(iso.predict(inputs), 1)  # inliers
    # A model that disagrees with its Forest rejects the Forest's answers.
    monkeypatch.setattr(
        DecisionTreeClassifier, "predict", lambda self, X: np.zeros(len(X), dtype=int)
    )
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert not pd.DataFrame(json.loads(result.stdout)["rows"])["found"].any()


def test_unnamed_isolation_forest_report(iris, tmp_path):
    """An IsolationForest fitted on an array: its report scores the rows as
    the model does, under the file's column names."""
    from sklearn.ensemble import IsolationForest

    model = IsolationForest(n_estimators=10, random_state=0)
    model.fit(iris["X"].to_numpy())
    path = iris["root"] / "iso.skops"
    skops.io.dump(model, path)
    out = tmp_path / "iso.html"
    result = run(
        "report", path, iris["root"] / "held_x.csv", "--max-counterfactuals", 1,
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = page_text(out)
    n_outliers = int((model.predict(iris["rows"][FEATURES].to_numpy()) == -1).sum())
    assert f"Outliers {n_outliers} of 50 rows" in page
    assert "sklearn.IsolationForest" in page
    assert not re.search(r"\bx[0-3]\b", page)


def test_plot_oob_keeps_the_model_names(iris, tmp_path):
    """Out-of-bag rows are the fitted model's: --oob draws it as fitted,
    without renaming (and so without the note on names)."""
    from sklearn.ensemble import RandomForestClassifier

    model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    X = iris["X"].to_numpy()
    model.fit(X, iris["y"].to_numpy())
    path = iris["root"] / "forest_unnamed.skops"
    skops.io.dump(model, path)
    data = iris["root"] / "train.csv"
    iris["X"].assign(species=iris["y"]).to_csv(data, index=False)
    out = tmp_path / "grid.png"
    args = ["plot", "forest-grid", path, data, "--target", "species", "--out", out]
    result = run(*args, "--oob")
    assert result.exit_code == 0, result.stderr
    assert "feature names" not in result.stderr
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert "fitted without feature names" in result.stderr


def test_catboost_json_pictures(iris, catboost_files, tmp_path):
    """Pictures of a JSON file choose their features by mean |SHAP| over the
    data; the importance picture needs a target, and says so."""
    out = tmp_path / "picture.png"
    model, held = catboost_files["json"], iris["root"] / "held.csv"
    result = run("plot", "importance", model, "--out", out)
    assert_bad_input(result, "expected DATA with --target COL for held-out MDI")
    assert not out.exists()
    result = run("plot", "partition", model, held, "--target", "species", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert out.read_bytes().startswith(b"\x89PNG")
