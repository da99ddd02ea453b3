"""The treelens command, end to end, on models the tests save themselves."""

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
from typer.testing import CliRunner

import treelens
from treelens._cli._app import app, main

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
SRC = str(Path(treelens.__file__).resolve().parent.parent)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A decision tree and a small forest on iris saved with skops, and data files."""
    root = tmp_path_factory.mktemp("cli")
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y
    )
    skops.io.dump(tree, root / "tree.skops")
    skops.io.dump(forest, root / "forest.skops")
    rows = X.iloc[::10].assign(species=y.iloc[::10])
    rows.to_csv(root / "data.csv", index=False)
    rows.to_parquet(root / "data.parquet")
    return {"root": root, "tree": tree, "forest": forest, "X": X, "y": y, "rows": rows}


def run(*args, input=None):
    """The command in-process through typer's CliRunner."""
    result = CliRunner().invoke(app, [str(a) for a in args], input=input)
    return result


def run_main(capsys, *args):
    """The console entry point in-process: exit code and captured stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    return exit_info.value.code, capsys.readouterr()


def run_subprocess(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "treelens", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=cwd,
        timeout=900,  # the machine running the tests may be heavily shared
    )


def assert_bad_input(result, pattern):
    """Exit code 2 with a one-line message and no traceback."""
    stderr = result.stderr if hasattr(result, "stderr") else result.err
    code = result.exit_code if hasattr(result, "exit_code") else result.returncode
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("treelens: error: ")
    assert "Traceback" not in stderr
    assert pattern in lines[0], lines[0]


# ------------------------------------------------------------------- bad input


def test_missing_model_file(files):
    result = run(
        "tweak",
        files["root"] / "absent.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
    )
    assert_bad_input(result, "does not exist")


def test_missing_data_file(files):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "absent.csv",
        "--target-class",
        "2",
    )
    assert_bad_input(result, "Data file")


@pytest.mark.parametrize("content", [b"PK\x03\x04broken", b"not a model at all"])
def test_corrupt_model_file(tmp_path, files, content):
    path = tmp_path / "broken.skops"
    path.write_bytes(content)
    result = run(
        "tweak",
        path,
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
    )
    assert_bad_input(result, "Could not read model file")


def test_file_that_is_not_a_tree_model(tmp_path, files):
    path = tmp_path / "dict.skops"
    skops.io.dump({"a": 1}, path)
    result = run("tweak", path, files["root"] / "data.csv", "--target-class", "2")
    assert_bad_input(result, "Unsupported model")


def test_untrusted_pickle_is_refused_and_never_run(tmp_path, files):
    marker = tmp_path / "created-by-unpickling"
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(_Opener(str(marker))))
    result = run_subprocess(
        "tweak",
        path,
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
    )
    assert_bad_input(result, "unpickling runs arbitrary code")
    assert "--trust-pickle" in result.stderr
    assert not marker.exists()
    # With the flag the file is unpickled (it creates the marker) and is then
    # refused as not a model: the refusal above did protect something real.
    result = run(
        "tweak",
        path,
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
        "--trust-pickle",
    )
    assert marker.exists()
    assert_bad_input(result, "Unsupported model")


class _Opener:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_trusted_pickle_loads(tmp_path, files):
    path = tmp_path / "model.joblib"
    path.write_bytes(pickle.dumps(files["tree"]))
    result = run(
        "tweak",
        path,
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
        "--rows",
        "0",
        "--trust-pickle",
        "--json",
    )
    assert result.exit_code == 0, result.output


def test_data_missing_model_columns(tmp_path, files):
    files["rows"].drop(columns=["petal_width"]).to_csv(tmp_path / "d.csv", index=False)
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        tmp_path / "d.csv",
        "--target-class",
        "2",
        "--target",
        "species",
    )
    assert_bad_input(result, "missing ['petal_width']")


def test_data_extra_columns_hint_at_target(files):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
    )
    assert_bad_input(
        result, "unexpected ['species'] (name the target column with --target)"
    )


def test_data_with_unparseable_values(tmp_path, files):
    bad = files["rows"].astype(object)
    bad.iloc[2, 0] = "n/a?"
    bad.to_csv(tmp_path / "d.csv", index=False)
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        tmp_path / "d.csv",
        "--target-class",
        "2",
        "--target",
        "species",
    )
    assert_bad_input(result, "'sepal_length'")


def test_unknown_target_class(files):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "7",
        "--target",
        "species",
    )
    assert_bad_input(result, "--target-class must be one of the model's classes")


@pytest.mark.parametrize("rows", ["15", "-1", "3-99", "a"])
def test_rows_out_of_range(files, rows):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
        "--rows",
        rows,
    )
    assert_bad_input(result, "--rows must be")


def test_output_path_is_a_directory(files, tmp_path):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
        "--json",
        "--out",
        tmp_path,
    )
    assert_bad_input(result, "is a directory")


def test_output_path_not_writable(files, unwritable_dir):
    out = unwritable_dir / "out.json"
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
        "--target",
        "species",
        "--json",
        "--out",
        out,
    )
    assert_bad_input(result, "Cannot write")


def test_output_path_over_an_input(files):
    data = files["root"] / "data.csv"
    before = data.read_bytes()
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        data,
        "--target-class",
        "2",
        "--target",
        "species",
        "--csv",
        "--out",
        data,
    )
    assert_bad_input(result, "is an input file")
    assert data.read_bytes() == before


def test_usage_errors_are_one_line(capsys):
    code, captured = run_main(capsys, "importance")
    assert code == 2
    assert captured.err.strip().count("\n") == 0
    assert "Missing argument 'MODEL'" in captured.err
    code, captured = run_main(capsys, "no-such-command")
    assert code == 2 and "No such command" in captured.err


def test_internal_error_exit_code_and_debug(files, monkeypatch, capsys):
    import treelens._io._files

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(treelens._io._files, "load_model", broken)
    args = (
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target-class",
        "2",
    )
    code, captured = run_main(capsys, *args)
    assert code == 1
    assert "internal error: RuntimeError: boom" in captured.err
    assert "Traceback" not in captured.err
    code, captured = run_main(capsys, *args, "--debug")
    assert code == 1
    assert "Traceback" in captured.err


def test_version():
    result = run("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"treelens {treelens.__version__}"


# ------------------------------------------------------------------ end to end


def test_importance_json_in_a_subprocess(files):
    result = run_subprocess(
        "importance",
        files["root"] / "forest.skops",
        "--data",
        files["root"] / "data.parquet",
        "--target",
        "species",
        "--permutation",
        "--nodes",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    forest = files["forest"]
    got = {r["feature"]: r["mdi"] for r in payload["importance"]}
    np.testing.assert_allclose(
        [got[f] for f in FEATURES], forest.feature_importances_, rtol=0, atol=1e-12
    )
    held = treelens.mdi_importance(
        forest, X=files["rows"][FEATURES], y=files["rows"]["species"]
    )
    got = {r["feature"]: r["held_out_mdi"] for r in payload["importance"]}
    np.testing.assert_allclose(
        [got[f] for f in FEATURES], held.importances_, atol=1e-12
    )
    assert {r["tree"] for r in payload["nodes"]} == {0}
    assert all("permutation" in r for r in payload["importance"])


def test_importance_shap_beside_mdi_and_without_a_target(files):
    import shap  # installed by make test (the test extra); never skipped

    args = ("importance", files["root"] / "forest.skops", "--data")
    result = run(*args, files["root"] / "data.csv", "--target", "species", "--shap")
    assert result.exit_code == 0, result.output
    assert "Feature importance" in result.stdout
    assert "Mean absolute SHAP value" in result.stdout
    rows = files["rows"][FEATURES]
    X = files["rows"].drop(columns="species")
    X.to_csv(files["root"] / "features.csv", index=False)
    result = run(*args, files["root"] / "features.csv", "--shap", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)  # MDI needs no data, SHAP no target
    assert set(payload) == {"importance", "shap", "notes"}
    assert payload["notes"] == []
    values = np.abs(np.asarray(shap.TreeExplainer(files["forest"]).shap_values(rows)))
    expected = dict(zip(FEATURES, values.mean(axis=2).mean(axis=0)))
    for record in payload["shap"]:
        assert record["mean_abs_shap"] == pytest.approx(
            expected[record["feature"]], abs=1e-9
        )
    result = run("importance", files["root"] / "forest.skops", "--shap")
    assert result.exit_code == 2 and "--shap explains the rows of --data" in (
        result.output
    )


def test_importance_text_and_csv(files, tmp_path):
    result = run("importance", files["root"] / "tree.skops", "--nodes")
    assert result.exit_code == 0, result.output
    assert "Per-node MDI breakdown of tree 0" in result.stdout
    assert "petal_width" in result.stdout
    out = tmp_path / "nodes.csv"
    result = run(
        "importance", files["root"] / "tree.skops", "--nodes", "--csv", "--out", out
    )
    assert result.exit_code == 0, result.output
    nodes = pd.read_csv(out)
    mdi = treelens.mdi_importance(files["tree"])
    np.testing.assert_allclose(nodes["share"], mdi.nodes_["share"], atol=1e-12)
    np.testing.assert_allclose(
        nodes.groupby("feature_name")["share"].sum().reindex(FEATURES, fill_value=0),
        mdi.importances_,
        atol=1e-12,
    )


def test_out_has_the_short_form_o(files, tmp_path):
    tree, data = files["root"] / "tree.skops", files["root"] / "data.csv"
    for command, name in (
        (("importance", tree, "--csv"), "importance.csv"),
        (("plot", "importance", tree), "importance.png"),
        (("report", tree, data, "--target", "species", "--max-counterfactuals", 0),
         "report.html"),
    ):  # fmt: skip
        out = tmp_path / name
        result = run(*command, "-o", out)
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 0
    assert pd.read_csv(tmp_path / "importance.csv")["feature"].tolist()[0] in FEATURES


@pytest.mark.parametrize(
    "kind",
    [
        "partition",
        "region",
        "forest-grid",
        "importance",
        "tree",
        "dependence",
        "waterfall",
        "summary",
    ],
)
def test_plot_writes_a_picture(files, tmp_path, kind):
    out = tmp_path / f"{kind}.png"
    result = run(
        "plot",
        kind,
        files["root"] / "forest.skops",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert os.listdir(tmp_path) == [out.name]


def test_plot_svg_and_bad_kind(files, tmp_path):
    out = tmp_path / "p.svg"
    result = run(
        "plot",
        "partition",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--features",
        "petal_length,sepal_width",
        "--max-depth",
        "2",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    assert b"<svg" in out.read_bytes()[:500]
    result = run("plot", "pie", files["root"] / "tree.skops", "--out", out)
    assert_bad_input(result, "KIND must be one of")
    result = run(
        "plot",
        "partition",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--features",
        "petal_length,colour",
        "--out",
        out,
    )
    assert_bad_input(result, "colour")


def test_plot_dependence_takes_one_or_two_features(files, tmp_path):
    out = tmp_path / "dependence.png"
    common = (files["root"] / "forest.skops", files["root"] / "data.csv",
              "--target", "species", "--out", out)  # fmt: skip
    for features in ("petal_length", "petal_length,sepal_width"):
        out.unlink(missing_ok=True)
        result = run("plot", "dependence", *common, "--features", features)
        assert result.exit_code == 0, result.output
        assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    result = run("plot", "dependence", *common, "--features", "colour")
    assert_bad_input(result, "got 'colour'")
    result = run("plot", "dependence", *common, "--features", "petal_length,colour")
    assert_bad_input(result, "`interaction` must be one of the features")
    result = run("plot", "dependence", *common, "--features", "a,b,c")
    assert_bad_input(result, "must name one feature, or two")
    # A picture in two features still needs two.
    result = run("plot", "partition", *common, "--features", "petal_length")
    assert_bad_input(result, "--features must name two features")


def test_report_in_a_subprocess(files, tmp_path):
    out = tmp_path / "report.html"
    result = run_subprocess(
        "report",
        files["root"] / "forest.skops",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--out",
        out,
    )
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "forest.skops" in page
    assert os.listdir(tmp_path) == ["report.html"]


def test_report_unknown_class_in_target_column(files, tmp_path):
    rows = files["rows"].copy()
    rows.loc[rows.index[0], "species"] = 9
    rows.to_csv(tmp_path / "d.csv", index=False)
    result = run(
        "report",
        files["root"] / "forest.skops",
        tmp_path / "d.csv",
        "--target",
        "species",
        "--out",
        tmp_path / "r.html",
    )
    assert_bad_input(
        result, "must hold the model's classes ['0', '1', '2']; got '9' at data row 0"
    )
    assert not (tmp_path / "r.html").exists()


def test_native_xgboost_model_file(files, tmp_path):
    import xgboost  # in the test extra

    model = xgboost.XGBClassifier(n_estimators=4, max_depth=2).fit(
        files["X"], files["y"]
    )
    path = tmp_path / "model.json"
    model.save_model(path)
    result = run("importance", path, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["importance"]
    gains = model.get_booster().get_score(importance_type="total_gain")
    total = sum(gains.values())
    for row in rows:
        assert row["gain"] == pytest.approx(gains.get(row["feature"], 0.0) / total)
    result = run(
        "tweak",
        path,
        files["root"] / "data.csv",
        "--target",
        "species",
        "--target-class",
        "2",
        "--max-rows",
        "2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert all(r["found"] for r in json.loads(result.stdout)["rows"])


def test_tweak_json_honours_constraints(files):
    result = run(
        "tweak", files["root"] / "forest.skops", files["root"] / "data.csv",
        "--target", "species", "--target-class", "2", "--rows", "0-9",
        "--immutable", "petal_width", "--bounds", "petal_length=0:6", "--cost", "l1",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = {r["row"]: r for r in payload["rows"]}
    assert sorted(rows) == list(range(10))
    data = files["rows"][FEATURES].reset_index(drop=True)
    counterfactuals = data.copy()
    for change in payload["changes"]:
        assert change["feature"] != "petal_width"
        if change["feature"] == "petal_length":
            assert 0 <= change["after"] <= 6
        assert change["before"] == pytest.approx(
            data.loc[change["row"], change["feature"]]
        )
        counterfactuals.loc[change["row"], change["feature"]] = change["after"]
    found = [r for r, v in rows.items() if v["found"]]
    assert found
    predicted = files["forest"].predict(counterfactuals.loc[found])
    assert (predicted == 2).all()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--bounds", "petal_length", "--bounds must look like FEATURE=LOW:HIGH"),
        ("--immutable", "colour", "colour"),
        ("--target-range", "1:2", "--target-range needs a regressor"),
    ],
)
def test_bad_tweak_options(files, option, value, message):
    result = run(
        "tweak",
        files["root"] / "tree.skops",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--target-class",
        "2",
        option,
        value,
    )
    if option == "--target-range":
        assert_bad_input(result, "exclude each other")
        result = run(
            "tweak",
            files["root"] / "tree.skops",
            files["root"] / "data.csv",
            "--target",
            "species",
            option,
            value,
        )
    assert_bad_input(result, message)


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [
        (
            "report",
            ["--all-rows", "--sample-rows", "10"],
            "--all-rows and --sample-rows",
        ),
        ("report", ["--rows", "1", "--max-counterfactuals", "2"], "--rows and --max-c"),
        ("tweak", ["--rows", "1", "--max-rows", "2"], "--rows and --max-rows"),
        ("tweak", ["--optimal", "--method", "tweak"], "--optimal and --method tweak"),
        ("tweak", ["--json", "--csv"], "--json and --csv exclude each other"),
        (
            "tweak",
            ["--out-dir", "parts", "--workers", "1", "--scheduler", "tcp://x:1"],
            "--scheduler and --workers exclude each other",
        ),
    ],
)
def test_options_that_exclude_each_other(files, tmp_path, command, options, message):
    """Refused before any work (no output file), on one line."""
    out = tmp_path / "out.html"
    args = [command, files["root"] / "tree.skops", files["root"] / "data.csv"]
    args += ["--target", "species", "--target-class", "1", *options]
    result = run(*args, *(["--out", out] if command == "report" else []))
    assert_bad_input(result, message)
    assert "exclude each other; expected at most one" in result.stderr
    assert not out.exists()


def test_oob_needs_data(files):
    result = run("importance", files["root"] / "forest.skops", "--oob")
    assert_bad_input(result, "--oob needs the training data as --data FILE")


def test_interrupt_leaves_no_output(files, tmp_path, monkeypatch, capsys):
    import treelens._report._page

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(treelens._report._page, "render_report", interrupted)
    out = tmp_path / "report.html"
    code, captured = run_main(
        capsys, "report", files["root"] / "tree.skops", files["root"] / "data.csv",
        "--target", "species", "--out", out,
    )  # fmt: skip
    assert code == 130
    assert "interrupted; no output file was written" in captured.err
    assert os.listdir(tmp_path) == []


def test_tweak_optimal_never_costs_more_than_tweaking(files):
    args = ("tweak", files["root"] / "forest.skops", files["root"] / "data.csv",
            "--target", "species", "--target-class", "2", "--rows", "0-5",
            "--cost", "l1", "--json")  # fmt: skip
    tweaked = run(*args)
    proven = run(*args, "--optimal", "--time-limit", "20")
    assert tweaked.exit_code == 0 and proven.exit_code == 0, proven.output
    tweak_rows = json.loads(tweaked.stdout)["rows"]
    optimal_rows = json.loads(proven.stdout)["rows"]
    assert all(r["status"] == "optimal" for r in optimal_rows)
    for fast, best in zip(tweak_rows, optimal_rows, strict=True):
        assert best["found"]
        if fast["found"]:
            assert best["cost"] <= fast["cost"] + 1e-9


def test_tweak_regressor_towards_a_range(tmp_path):
    from sklearn.datasets import load_diabetes
    from sklearn.tree import DecisionTreeRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    skops.io.dump(model, tmp_path / "tree.skops")
    X.iloc[:40].to_csv(tmp_path / "rows.csv", index=False)
    result = run("tweak", tmp_path / "tree.skops", tmp_path / "rows.csv",
                 "--target-range", "200:", "--max-rows", "3", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert len(payload["rows"]) == 3
    counterfactuals = X.iloc[:40].copy()
    for change in payload["changes"]:
        counterfactuals.loc[change["row"], change["feature"]] = change["after"]
    found = [r["row"] for r in payload["rows"] if r["found"]]
    assert found and (model.predict(counterfactuals.loc[found]) >= 200).all()
    assert all(r["prediction"] < 200 for r in payload["rows"])


def test_plot_counterfactual_and_regression_refusal(files, tmp_path):
    out = tmp_path / "cf.png"
    result = run("plot", "counterfactual", files["root"] / "forest.skops",
                 files["root"] / "data.csv", "--target", "species", "--row", "0",
                 "--target-class", "2", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG")
    result = run("plot", "counterfactual", files["root"] / "forest.skops",
                 files["root"] / "data.csv", "--target", "species", "--out", out)  # fmt: skip
    assert_bad_input(result, "needs --row I and --target-class C")
    result = run("plot", "tree", files["root"] / "forest.skops",
                 files["root"] / "data.csv", "--target", "species", "--row", "99",
                 "--out", out)  # fmt: skip
    assert_bad_input(result, "--row must be in [0, 14]")


def test_plot_counterfactual_slices_through_the_counterfactual(
    files, tmp_path, monkeypatch
):
    from treelens import CounterfactualDisplay

    drawn = []
    original = CounterfactualDisplay.from_result.__func__

    def spy(cls, model, result, *args, **kwargs):
        display = original(cls, model, result, *args, **kwargs)
        drawn.append(display)
        return display

    monkeypatch.setattr(CounterfactualDisplay, "from_result", classmethod(spy))
    out = tmp_path / "cf.png"
    common = ("plot", "counterfactual", files["root"] / "forest.skops",
              files["root"] / "data.csv", "--target", "species", "--row", "0",
              "--target-class", "2", "--out", out)  # fmt: skip
    result = run(*common, "--slice-at", "counterfactual")
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG")
    (display,) = drawn
    assert display.slice_at == "counterfactual"
    np.testing.assert_array_equal(display.background.reference, display.x_cf)
    x_cf = pd.DataFrame([display.x_cf], columns=FEATURES)
    assert files["forest"].predict(x_cf).tolist() == [2]
    result = run(*common, "--slice-at", "row")
    assert_bad_input(result, "--slice-at must be 'instance' or 'counterfactual'")


def test_plot_refuses_options_of_other_pictures(files, tmp_path):
    """--slice-at draws only the counterfactual picture and --oob only the
    forest grid: given with another KIND, they are refused, not ignored."""
    out = tmp_path / "picture.png"
    model, data = files["root"] / "forest.skops", files["root"] / "data.csv"
    common = ("--target", "species", "--out", out)
    for kind in ("partition", "forest-grid"):
        result = run("plot", kind, model, data, *common, "--slice-at", "instance")
        assert_bad_input(
            result,
            f"--slice-at applies to the counterfactual picture only; got it with "
            f"KIND '{kind}'.",
        )
    for kind in ("partition", "counterfactual"):
        result = run("plot", kind, model, data, *common, "--oob", "--row", "0")
        assert_bad_input(
            result,
            f"--oob applies to the forest-grid picture only; got it with KIND "
            f"'{kind}'.",
        )
    for kind in ("partition", "summary"):
        result = run("plot", kind, model, data, *common, "--row", "3")
        assert_bad_input(
            result,
            "--row applies to the counterfactual, tree or waterfall picture only; "
            f"got it with KIND '{kind}'.",
        )
    assert not out.exists()
    result = run("plot", "forest-grid", model, data, *common, "--oob")
    assert "applies to" not in result.stderr  # refused for its rows only
    result = run("plot", "partition", model, data, *common)
    assert result.exit_code == 0, result.output


def test_importance_shows_debiased_mdi(files):
    result = run(
        "importance",
        files["root"] / "forest.skops",
        "--data",
        files["root"] / "data.csv",
        "--target",
        "species",
        "--json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    rows = files["rows"]
    debiased = treelens.debiased_mdi_importance(
        files["forest"], rows[FEATURES], rows["species"]
    )
    got = {r["feature"]: r for r in payload["importance"]}
    for name in FEATURES:
        assert got[name]["debiased_mdi"] == pytest.approx(
            debiased.importances_[name], abs=1e-12
        )
        assert got[name]["debiased_low"] <= got[name]["debiased_high"]
    # From the out-of-bag rows of the training data.
    train = files["X"].assign(species=files["y"])
    path = files["root"] / "train.csv"
    train.to_csv(path, index=False)
    result = run(
        "importance", files["root"] / "forest.skops", "--data", path,
        "--target", "species", "--oob", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    oob = treelens.debiased_mdi_importance(
        files["forest"], files["X"], files["y"], oob=True
    )
    got = {
        r["feature"]: r["debiased_mdi"] for r in json.loads(result.stdout)["importance"]
    }
    np.testing.assert_allclose([got[f] for f in FEATURES], oob.importances_, atol=1e-12)


def test_oob_on_other_rows_than_the_training_data_is_refused(files, tmp_path):
    """--oob promises out-of-bag rows of the training data: other rows are bad
    input, not a table or picture without them."""
    result = run(
        "importance", files["root"] / "forest.skops", "--data",
        files["root"] / "data.csv", "--target", "species", "--oob",
    )  # fmt: skip
    assert_bad_input(result, "expected 150 rows, got 15")
    out = tmp_path / "grid.png"
    result = run(
        "plot", "forest-grid", files["root"] / "forest.skops",
        files["root"] / "data.csv", "--target", "species", "--oob", "--out", out,
    )  # fmt: skip
    assert_bad_input(result, "--oob needs the training data")
    assert "expected 150 rows, got 15" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--options", "0"), ("--min-leaf-samples", "0")],
)
def test_counterfactual_option_ranges_name_the_option(files, capsys, option, value):
    code, captured = run_main(
        capsys, "tweak", files["root"] / "forest.skops", files["root"] / "data.csv",
        "--target", "species", "--target-class", "2", option, value,
    )  # fmt: skip
    assert code == 2 and captured.err.strip().count("\n") == 0, captured.err
    assert f"Invalid value for '{option}'" in captured.err


def test_plot_options_name_themselves(files, tmp_path, capsys):
    out = tmp_path / "tree.png"
    model = files["root"] / "forest.skops"
    result = run("plot", "tree", model, "--row", "3", "--out", out)
    assert_bad_input(result, "--row 3 needs a data file (DATA); got none.")
    result = run("plot", "tree", model, "--tree", "9", "--out", out)
    assert_bad_input(result, "--tree must be in [0, 4] for this model; got 9.")
    code, captured = run_main(capsys, "plot", "tree", model, "--max-depth", "-1")
    assert code == 2 and "Invalid value for '--max-depth'" in captured.err
    assert not out.exists()


def test_report_of_a_catboost_model_file_scores_its_labels(files, tmp_path):
    """A .cbm file loads as CatBoost's generic model, whose predict gives raw
    scores: the model card scores the labels it predicts."""
    catboost = pytest.importorskip("catboost")
    X, y = files["X"], files["y"]
    model = catboost.CatBoostClassifier(
        iterations=5, depth=2, verbose=0, allow_writing_files=False
    )
    model.fit(X, y)
    model.save_model(str(tmp_path / "model.cbm"))
    out = tmp_path / "report.html"
    result = run(
        "report", tmp_path / "model.cbm", files["root"] / "data.csv", "--target",
        "species", "--max-counterfactuals", 0, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = files["rows"]
    accuracy = (model.predict(rows[FEATURES]).ravel() == rows["species"]).mean()
    page = re.sub(r"<[^>]+>", " ", out.read_text())
    assert re.search(rf"Accuracy\s+{accuracy:.4f}", page)
