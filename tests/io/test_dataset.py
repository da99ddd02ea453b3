"""Parquet dataset runs: one output part per input part, atomic, resumable."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import treelens
from treelens import InputError
from treelens._io._dataset import importance_dataset, tweak_dataset

FEATURES = [f"f{i}" for i in range(4)]
PARTS = 3
ROWS = 40


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    X, y = make_classification(
        PARTS * ROWS + 100, 4, n_informative=3, n_redundant=1, random_state=3
    )
    X = pd.DataFrame(X, columns=FEATURES)
    model = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0)
    model.fit(X.iloc[:100], y[:100])
    data = (
        X.iloc[100:]
        .reset_index(drop=True)
        .assign(label=y[100:], id=np.arange(PARTS * ROWS))
    )
    root = tmp_path_factory.mktemp("dataset")
    directory = root / "in"
    directory.mkdir()
    for i in range(PARTS):
        part = data.iloc[i * ROWS : (i + 1) * ROWS]
        part.to_parquet(directory / f"part-{i}.parquet", index=False)
    return model, X.iloc[:100], data, directory


def _read(path):
    return pd.read_parquet(path)


def test_tweak_dataset_writes_one_part_per_input_part_equal_to_one_call(case, tmp_path):
    model, reference, data, directory = case
    run = tweak_dataset(
        model,
        directory,
        tmp_path / "out",
        target=1,
        cost="l1",
        reference=reference,
        batch_rows=15,
    )
    assert [p.name for p in run.outputs] == [f"part-{i}.parquet" for i in range(PARTS)]
    assert run.rows == PARTS * ROWS and run.kept == []
    got = pd.concat([_read(p) for p in run.outputs], ignore_index=True)
    expected = treelens.feature_tweak(
        model, data[FEATURES], target=1, cost="l1", reference=reference
    )
    np.testing.assert_array_equal(got["found"], expected.found_)
    np.testing.assert_array_equal(got["cost"], expected.cost_)
    np.testing.assert_array_equal(got[[f"cf_{f}" for f in FEATURES]], expected.X_cf_)
    assert got["row"].tolist() == list(range(ROWS)) * PARTS
    reasons = [r if isinstance(r, str) else None for r in got["reason"]]
    assert reasons == expected.reason_.tolist()


def test_resume_redoes_only_the_missing_part(case, tmp_path):
    model, reference, _, directory = case
    out = tmp_path / "out"
    first = tweak_dataset(model, directory, out, target=1, reference=reference)
    before = {
        p.name: (p.stat().st_mtime_ns, p.stat().st_ino, p.read_bytes())
        for p in first.outputs
    }
    missing = first.outputs[1]
    missing.unlink()
    second = tweak_dataset(
        model, directory, out, target=1, reference=reference, resume=True
    )
    assert second.computed == [missing]
    assert second.kept == [first.outputs[0], first.outputs[2]]
    assert second.rows == ROWS
    for p in second.outputs:
        stat = p.stat()
        if p != missing:
            assert (stat.st_mtime_ns, stat.st_ino) == before[p.name][:2]
        else:
            pd.testing.assert_frame_equal(
                _read(p), pd.read_parquet(__import__("io").BytesIO(before[p.name][2]))
            )


def test_an_interrupted_part_is_never_half_written(case, tmp_path, monkeypatch):
    model, reference, _, directory = case
    out = tmp_path / "out"
    real = treelens.feature_tweak
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:  # the second batch of the second part
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr("treelens._counterfactual._tweak.feature_tweak", failing)
    with pytest.raises(KeyboardInterrupt):
        tweak_dataset(
            model, directory, out, target=1, reference=reference, batch_rows=15
        )
    # Part 0 is complete and readable; part 1 does not exist; no temporary is left.
    assert sorted(os.listdir(out)) == ["part-0.parquet"]
    assert len(_read(out / "part-0.parquet")) == ROWS
    monkeypatch.setattr("treelens._counterfactual._tweak.feature_tweak", real)
    run = tweak_dataset(
        model, directory, out, target=1, reference=reference, resume=True
    )
    assert [p.name for p in run.computed] == ["part-1.parquet", "part-2.parquet"]


def test_importance_dataset_equals_held_out_mdi_of_all_rows(case, tmp_path):
    model, _, data, directory = case
    run = importance_dataset(
        model, directory, tmp_path / "sums", target="label", batch_rows=25
    )
    expected = treelens.mdi_importance(model, data[FEATURES], data["label"])
    np.testing.assert_allclose(
        run.result.importances_, expected.importances_, atol=1e-12
    )
    assert len(run.outputs) == PARTS and all(p.exists() for p in run.outputs)


def test_bad_datasets_are_refused(case, tmp_path):
    model, _, data, directory = case
    with pytest.raises(InputError, match="does not exist"):
        tweak_dataset(model, tmp_path / "nowhere", tmp_path / "out", target=1)
    with pytest.raises(InputError, match="input dataset's directory"):
        tweak_dataset(model, directory, directory, target=1)
    bad = tmp_path / "bad"
    bad.mkdir()
    data.drop(columns=["f2"]).to_parquet(bad / "p.parquet")
    with pytest.raises(InputError, match=r"lacks the model's features \['f2'\]"):
        tweak_dataset(model, bad, tmp_path / "out", target=1)
    with pytest.raises(InputError, match="no column 'nope'"):
        importance_dataset(model, directory, tmp_path / "sums", target="nope")


def test_parts_that_are_not_parquet_are_refused_before_any_output(case, tmp_path):
    model, _, data, _ = case
    text = tmp_path / "rows.csv"
    data.to_csv(text, index=False)
    with pytest.raises(InputError, match="'.*rows.csv' is not a readable Parquet"):
        tweak_dataset(model, text, tmp_path / "out", target=1)
    broken = tmp_path / "broken"
    broken.mkdir()
    data.to_parquet(broken / "a.parquet", index=False)
    (broken / "b.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(InputError, match="b.parquet' is not a readable Parquet"):
        importance_dataset(model, broken, tmp_path / "sums", target="label")
    assert not (tmp_path / "out").exists() and not (tmp_path / "sums").exists()


# ------------------------------------------------------------- command line
@pytest.fixture(scope="module")
def model_file(case, tmp_path_factory):
    import skops.io

    path = tmp_path_factory.mktemp("model") / "forest.skops"
    skops.io.dump(case[0], path)
    return path


def _cli(*args):
    from typer.testing import CliRunner

    from treelens._cli._app import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_cli_tweak_writes_parts_on_a_cluster_and_resumes(
    case, model_file, tmp_path, dask_cluster
):
    model, _, data, directory = case
    out = tmp_path / "cf"
    result = _cli(
        "tweak",
        model_file,
        directory,
        "--target-class",
        "1",
        "--cost",
        "l1",
        "--method",
        "tweak",
        "--out-dir",
        out,
        "--scheduler",
        dask_cluster.scheduler_address,
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["parts"]
    assert [r["state"] for r in summary] == ["computed"] * PARTS
    got = pd.concat([_read(out / f"part-{i}.parquet") for i in range(PARTS)])
    expected = treelens.feature_tweak(model, data[FEATURES], target=1, cost="l1")
    np.testing.assert_array_equal(got["found"], expected.found_)
    np.testing.assert_array_equal(got[[f"cf_{f}" for f in FEATURES]], expected.X_cf_)
    (out / "part-2.parquet").unlink()
    again = _cli(
        "tweak",
        model_file,
        directory,
        "--target-class",
        "1",
        "--cost",
        "l1",
        "--method",
        "tweak",
        "--out-dir",
        out,
        "--resume",
        "--json",
    )
    assert again.exit_code == 0, again.output
    states = [r["state"] for r in json.loads(again.stdout)["parts"]]
    assert states == ["kept", "kept", "computed"]


def test_cli_importance_over_a_dataset(case, model_file, tmp_path):
    model, _, data, directory = case
    result = _cli(
        "importance",
        model_file,
        "--data",
        directory,
        "--target",
        "label",
        "--out-dir",
        tmp_path / "sums",
        "--json",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["importance"]
    expected = treelens.mdi_importance(
        model, data[FEATURES], data["label"]
    ).importances_
    got = {r["feature"]: r["held_out_mdi"] for r in rows}
    for name in FEATURES:
        assert got[name] == pytest.approx(expected[name], abs=1e-12)


def test_cli_unreachable_scheduler_is_a_clear_error_not_a_hang(
    case, model_file, tmp_path
):
    directory = case[3]
    start = time.monotonic()
    result = _cli(
        "tweak",
        model_file,
        directory,
        "--target-class",
        "1",
        "--out-dir",
        tmp_path / "cf",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--timeout",
        "1",
    )
    assert result.exit_code == 2
    assert "Could not reach a Dask scheduler at 'tcp://127.0.0.1:9'" in result.stderr
    assert time.monotonic() - start < 15


def test_cli_dataset_options_need_an_output_directory(case, model_file):
    directory = case[3]
    result = _cli("tweak", model_file, directory, "--target-class", "1")
    assert result.exit_code == 2 and "needs --out-dir" in result.stderr
    result = _cli(
        "tweak",
        model_file,
        directory / "part-0.parquet",
        "--target-class",
        "1",
        "--resume",
    )
    assert (
        result.exit_code == 2
        and "--resume apply to Parquet dataset mode" in result.stderr
    )


def test_cli_workers_starts_and_stops_a_local_cluster(
    case, model_file, tmp_path, monkeypatch
):
    import treelens.dask as tdask

    started = []
    real = tdask.local_cluster

    def threaded(n_workers, *, processes=True):
        # Worker processes are covered by the tests on the shared cluster; threads
        # keep this one fast.
        client = real(n_workers, processes=False)
        started.append(client)
        return client

    monkeypatch.setattr("treelens._io._cluster.local_cluster", threaded)
    result = _cli(
        "importance",
        model_file,
        "--data",
        case[3],
        "--target",
        "label",
        "--out-dir",
        tmp_path / "sums",
        "--workers",
        "2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert len(started) == 1
    assert started[0].status == "closed"
    assert started[0].cluster.status.name == "closed"


def test_cli_scheduler_and_workers_exclude_each_other(case, model_file, tmp_path):
    result = _cli(
        "tweak",
        model_file,
        case[3],
        "--target-class",
        "1",
        "--out-dir",
        tmp_path / "cf",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--workers",
        "2",
    )
    assert result.exit_code == 2 and "got both" in result.stderr


def test_cli_dataset_names_an_unnamed_model_after_its_columns(case, tmp_path):
    """A model fitted on an array is shown under the dataset's column names,
    as under a data file's, with the same note; it reads them by position."""
    import skops.io

    _, X, data, _ = case
    model = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0)
    model.fit(X.to_numpy(), case[0].predict(X))
    path = tmp_path / "unnamed.skops"
    skops.io.dump(model, path)
    directory = tmp_path / "in"
    directory.mkdir()
    for i in range(2):
        part = data.iloc[i * ROWS : (i + 1) * ROWS][[*FEATURES, "label"]]
        part.to_parquet(directory / f"part-{i}.parquet", index=False)
    rows = data.iloc[: 2 * ROWS]
    result = _cli("importance", path, "--data", directory, "--target", "label",
                  "--out-dir", tmp_path / "sums", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    got = {r["feature"]: r["mdi"] for r in payload["importance"]}
    assert got == pytest.approx(dict(zip(FEATURES, model.feature_importances_)))
    (note,) = payload["notes"]
    assert "fitted without feature names" in note and str(directory) in note
    assert f"treelens: note: {note}" in result.stderr
    out = tmp_path / "cf"
    result = _cli("tweak", path, directory, "--target", "label", "--target-class",
                  1, "--cost", "l1", "--out-dir", out, "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["notes"] == [note]
    got = pd.concat([_read(out / f"part-{i}.parquet") for i in range(2)])
    X_cf = got[[f"cf_{f}" for f in FEATURES]].to_numpy()
    assert got["found"].all()
    np.testing.assert_array_equal(model.predict(X_cf), 1)
    changed = (X_cf != rows[FEATURES].to_numpy()).any(axis=1)
    np.testing.assert_array_equal(
        changed, model.predict(rows[FEATURES].to_numpy()) != 1
    )
