"""The catalog of bad and awkward inputs: every case, on the command line and the API.

Each command-line case runs the real ``treelens`` command in a subprocess (the
cases run side by side, once per session) and checks the exit code, that an error
is one line on stderr naming what was wrong, and that no output file is written.
A case whose input is usable checks the answer and the note that says what was
left out.  The catalog only grows: add a case here for every input found to crash,
hang or mislead.
"""

from __future__ import annotations

import copy
import html
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

import treelens
from treelens import Constraints, InputError, MissingValuesWarning
from treelens._adapters._native import load_native_model
from treelens._io._files import check_target, load_data

SRC = str(Path(treelens.__file__).resolve().parent.parent)
FEATURES = ["age", "income", "debt", "years_employed", "employment", "mortgage"]


def loan_table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Loan applicants: money in thousands, 6% of incomes missing, label approved."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "income": rng.lognormal(10.5, 0.5, n).round(0),
            "debt": rng.lognormal(9, 1, n).round(0),
            "years_employed": rng.integers(0, 40, n).astype(float),
            "employment": rng.integers(0, 3, n).astype(float),
            "mortgage": rng.integers(0, 2, n).astype(float),
        }
    )
    score = frame["income"] - 0.5 * frame["debt"] + 500 * frame["years_employed"]
    approved = (score + rng.normal(0, 8000, n) > 35000).astype(int)
    frame.loc[rng.random(n) < 0.06, "income"] = np.nan
    return frame.assign(approved=approved)


def _tree0(model: dict) -> dict:
    return model["learner"]["gradient_booster"]["model"]["trees"][0]


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """A forest, XGBoost and LightGBM model files, and every bad file of the catalog."""
    import lightgbm
    import xgboost

    root = tmp_path_factory.mktemp("catalog")
    table = loan_table()
    X, y = table[FEATURES], table["approved"]
    forest = RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0)
    skops.io.dump(forest.fit(X, y), root / "forest.skops")
    # A model that refuses missing values (the forest routes them).
    boosting = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0)
    skops.io.dump(boosting.fit(X.fillna(0), y), root / "boosting.skops")
    table.to_csv(root / "loans.csv", index=False)

    booster = xgboost.XGBClassifier(n_estimators=3, max_depth=3).fit(X, y)
    booster.get_booster().save_model(root / "xgb.json")
    good = json.loads((root / "xgb.json").read_text())
    broken = copy.deepcopy(good)
    _tree0(broken)["split_indices"][0] = 99
    (root / "xgb_index.json").write_text(json.dumps(broken))
    broken = copy.deepcopy(good)
    _tree0(broken)["left_children"][0] = 0  # the root is its own child
    (root / "xgb_cycle.json").write_text(json.dumps(broken))
    broken = copy.deepcopy(good)
    del broken["learner"]["objective"]
    (root / "xgb_no_objective.json").write_text(json.dumps(broken))
    text = (root / "xgb.json").read_text()
    (root / "xgb_syntax.json").write_text(text[:-40] + ",,}")

    light = lightgbm.LGBMClassifier(n_estimators=3, num_leaves=7, verbose=-1)
    light.fit(X, y).booster_.save_model(root / "lgb.txt")
    text = (root / "lgb.txt").read_text()
    (root / "lgb_half.txt").write_text(text[: len(text) // 2])
    cut = text.index("[bagging_seed")  # inside the parameters, after the trees
    (root / "lgb_cut_parameters.txt").write_text(text[:cut])

    bad = table.copy()
    bad.loc[17, "debt"] = np.inf
    bad.to_csv(root / "infinity.csv", index=False)
    table.to_csv(root / "semicolon.csv", sep=";", index=False)
    twice = table.copy()
    twice.insert(2, "age_again", twice["age"])
    twice.columns = [c if c != "age_again" else "age" for c in twice.columns]
    twice.to_csv(root / "duplicated.csv", index=False)
    text_column = table.astype({"debt": str})
    text_column.to_parquet(root / "text_column.parquet")
    labels = table.astype({"approved": object})
    labels["approved"] = labels["approved"].map({0: "no", 1: "yes"})
    labels.loc[3, "approved"] = "1"
    labels.to_csv(root / "string_labels.csv", index=False)
    words = table.astype({"debt": object})
    words.loc[17, "debt"] = "12k"
    words.to_csv(root / "word_in_number.csv", index=False)
    table.assign(income=np.nan).to_csv(root / "no_income.csv", index=False)
    # Enough rows that routing runs on a thread pool (and the solver its threads).
    loan_table(5000, seed=1).to_csv(root / "loans_5000.csv", index=False)
    for suffix in PICKLE_SUFFIXES:
        (root / f"evil{suffix}").write_bytes(pickle.dumps(_Opener(str(root / MARK))))
    return root


#: A pickle whose loading would create this file in the workspace.
MARK = "created-by-unpickling"
#: Pickle safety holds whatever the model file is called.
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".skops", ".json", ".txt", ".ubj")


class _Opener:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


@dataclass(frozen=True)
class Case:
    """One command line; ``code`` 2 expects one error line holding ``message``."""

    name: str
    args: tuple[str, ...]
    code: int = 2
    message: str = ""
    note: str = ""
    out: str | None = None
    extra: dict = field(default_factory=dict)
    #: Text the written page must hold (report cases), after tags are removed.
    page: tuple[str, ...] = ()
    #: Text the written page must not hold.
    not_page: tuple[str, ...] = ()


def _report(data: str, *more: str) -> tuple[str, ...]:
    return ("report", "forest.skops", data, "--target", "approved", *more)


CASES = [
    Case(
        "infinity in report",
        _report("infinity.csv", "--out", "out.html"),
        message="Column 'debt' of 'infinity.csv' must hold finite numbers",
        out="out.html",
        extra={"also": "at data row 17"},
    ),
    Case(
        "infinity in held-out importance is not silently dropped",
        (
            "importance",
            "forest.skops",
            "--data",
            "infinity.csv",
            "--target",
            "approved",
        ),
        message="got inf at data row 17",
    ),
    Case(
        "string labels in held-out importance are not silently dropped",
        (
            "importance",
            "forest.skops",
            "--data",
            "string_labels.csv",
            "--target",
            "approved",
        ),
        message="must hold the model's classes ['0', '1']; got 'yes' at data row 0",
    ),
    Case(
        "XGBoost JSON with an out-of-range split index",
        ("importance", "xgb_index.json"),
        message="tree 0, field 'split_indices': node 0 splits on feature 99",
    ),
    Case(
        "XGBoost JSON whose root is its own child (must not hang)",
        ("tweak", "xgb_cycle.json", "loans.csv", "--target-class", "1"),
        message="tree 0: the root is the child of a node (a cycle)",
        extra={"drop": "approved"},
    ),
    Case(
        "XGBoost JSON with a syntax error",
        ("importance", "xgb_syntax.json"),
        message="is not valid JSON",
    ),
    Case(
        "XGBoost JSON without an objective",
        ("importance", "xgb_no_objective.json"),
        message="without 'learner.objective'",
    ),
    Case(
        "LightGBM text model cut in half (crashed LightGBM)",
        ("importance", "lgb_half.txt"),
        message="not a complete LightGBM text model",
    ),
    Case(
        "LightGBM text model cut inside its parameters (crashed LightGBM)",
        ("importance", "lgb_cut_parameters.txt"),
        message="no end of parameters line",
    ),
    Case(
        "duplicated column names",
        (
            "importance",
            "forest.skops",
            "--data",
            "duplicated.csv",
            "--target",
            "approved",
        ),
        message="Column 'age' appears twice in 'duplicated.csv' (columns 1 and 3)",
    ),
    Case(
        "strings in a numeric Parquet column",
        (
            "importance",
            "forest.skops",
            "--data",
            "text_column.parquet",
            "--target",
            "approved",
        ),
        message="Column 'debt' of 'text_column.parquet' must hold numbers; it is "
        "stored as text",
    ),
    Case(
        "a word in a numeric CSV column",
        (
            "importance",
            "forest.skops",
            "--data",
            "word_in_number.csv",
            "--target",
            "approved",
        ),
        message="Column 'debt' of 'word_in_number.csv' must hold numbers; got '12k' "
        "at data row 17",
    ),
    Case(
        "contradictory constraints name both",
        (
            "tweak",
            "forest.skops",
            "loans.csv",
            "--target",
            "approved",
            "--target-class",
            "1",
            "--immutable",
            "income",
            "--increase-only",
            "income",
            "--out",
            "out.txt",
        ),
        message="'income': it is declared both immutable and increase-only",
        out="out.txt",
    ),
    Case(
        "a chosen row with a missing value is named by its data row",
        (
            "tweak",
            "boosting.skops",
            "loans.csv",
            "--target",
            "approved",
            "--target-class",
            "1",
            "--rows",
            "ROW_WITH_NAN",
        ),
        message="at row ROW_WITH_NAN, feature 'income'",
    ),
    Case(
        "integer constraint names the data row and prints a plain number",
        (
            "tweak",
            "forest.skops",
            "loans.csv",
            "--target",
            "approved",
            "--target-class",
            "1",
            "--rows",
            "5,9",
            "--integer",
            "debt",
            "--bounds",
            "debt=0.5:0.7",
        ),
        message="Contradictory constraints on feature 'debt'",
    ),
    Case(
        "a ';'-separated CSV is read",
        (
            "importance",
            "forest.skops",
            "--data",
            "semicolon.csv",
            "--target",
            "approved",
        ),
        code=0,
    ),
    Case(
        "missing values in a plotted feature: partition",
        (
            "plot",
            "partition",
            "forest.skops",
            "loans.csv",
            "--target",
            "approved",
            "--features",
            "income,debt",
            "--out",
            "p.png",
        ),
        code=0,
        note="have no value of 'income' and are not drawn",
        out="p.png",
    ),
    Case(
        "missing values in a plotted feature: region",
        (
            "plot",
            "region",
            "forest.skops",
            "loans.csv",
            "--target",
            "approved",
            "--features",
            "income,debt",
            "--out",
            "p.png",
        ),
        code=0,
        note="have no value of 'income' and are not drawn",
        out="p.png",
    ),
    Case(
        "missing values in a plotted feature: forest-grid",
        (
            "plot",
            "forest-grid",
            "forest.skops",
            "loans.csv",
            "--target",
            "approved",
            "--features",
            "income,debt",
            "--out",
            "p.png",
        ),
        code=0,
        note="have no value of 'income' and are not drawn",
        out="p.png",
    ),
    *[
        Case(
            f"an untrusted pickle named {suffix} is refused, never run",
            ("importance", f"evil{suffix}"),
            message="Refusing to load",
            extra={"also": "--trust-pickle"},
        )
        for suffix in PICKLE_SUFFIXES
    ],
    Case(
        "XGBoost JSON whose root is its own child, read by importance",
        ("importance", "xgb_cycle.json"),
        message="tree 0: the root is the child of a node (a cycle)",
    ),
    Case(
        "a usage error is one line",
        ("report",),
        message="Missing argument",
        extra={"also": "(see treelens report --help)"},
    ),
    Case(
        "contradictory constraints in report name both",
        _report(
            "loans.csv",
            "--immutable",
            "income",
            "--increase-only",
            "income",
            "--out",
            "out.html",
        ),
        message="'income': it is declared both immutable and increase-only",
        out="out.html",
    ),
    Case(
        "report on the training data with missing values among the declined rows",
        _report("loans.csv", "--out", "out.html"),
        code=0,
        out="out.html",
        page=(
            "Training data.",
            "MDI on the given data",
            "Per-node breakdown",
        ),
        # The forest routes missing values: declined rows with them are answered
        # (rows a model refuses are passed over: the tweak case above).
        not_page=(
            "held-out MDI</th>",
            "Axis limits",
            "np.float",
            "with missing values (the first is row",
        ),
    ),
    Case(
        "report aimed at rows with a fixed feature and money in its own scale",
        _report(
            "loans.csv",
            "--rows",
            "ROW_WITH_NAN,5,9",
            "--immutable",
            "age",
            "--cost",
            "l1",
            "--out",
            "out.html",
        ),
        code=0,
        out="out.html",
        page=(
            # The forest routes missing values: the row with one is answered.
            "For rows ROW_WITH_NAN, 5, 9:",
            "age fixed",
        ),
        extra={"no_change_of": "age"},
    ),
    Case(
        "report whose plotted feature has no value at all",
        _report("no_income.csv", "--max-counterfactuals", "0", "--out", "out.html"),
        code=0,
        out="out.html",
        not_page=("Axis limits", "Traceback", "Feature 1 "),
    ),
    Case(
        "report on 5,000 rows finishes and exits (routing and solver threads)",
        _report("loans_5000.csv", "--max-counterfactuals", "2", "--out", "out.html"),
        code=0,
        out="out.html",
        page=("The answer for the chosen rows",),
    ),
    Case(
        "declined rows with missing values are passed over, with a note",
        (
            "tweak",
            "boosting.skops",
            "loans.csv",
            "--target",
            "approved",
            "--target-class",
            "1",
            "--max-rows",
            "40",
        ),
        code=0,
        note="with missing values the model does not route (the first is row",
    ),
]


def _row_with_nan(root: Path) -> str:
    table = pd.read_csv(root / "loans.csv")
    return str(int(np.flatnonzero(table["income"].isna())[0]))


def _run(case: Case, root: Path) -> subprocess.CompletedProcess:
    work = root / ("run-" + "".join(c if c.isalnum() else "-" for c in case.name))
    work.mkdir(exist_ok=True)
    args = [a.replace("ROW_WITH_NAN", _row_with_nan(root)) for a in case.args]
    for name in os.listdir(root):
        if (root / name).is_file() and not (work / name).exists():
            os.symlink(root / name, work / name)
    if "drop" in case.extra:
        frame = pd.read_csv(root / "loans.csv").drop(columns=case.extra["drop"])
        frame.to_csv(work / "loans.csv.tmp", index=False)
        (work / "loans.csv").unlink()
        (work / "loans.csv.tmp").rename(work / "loans.csv")
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "treelens", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=work,
        timeout=900,  # the cycle case once hung forever; shared machines are slow
    )


@pytest.fixture(scope="session")
def cli_results(workspace):
    """Every command-line case, run side by side in subprocesses."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda c: _run(c, workspace), CASES))
    return {case.name: run for case, run in zip(CASES, runs, strict=True)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_command_line_case(case, cli_results, workspace):
    result = cli_results[case.name]
    message = case.message.replace("ROW_WITH_NAN", _row_with_nan(workspace))
    assert result.returncode == case.code, result.stderr
    assert "Traceback" not in result.stderr
    assert "np.float" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    work = workspace / ("run-" + "".join(c if c.isalnum() else "-" for c in case.name))
    if case.code == 2:
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("treelens: error: "), lines[0]
        assert message in lines[0], lines[0]
        assert case.extra.get("also", "") in lines[0]
        assert result.stdout == ""
        if case.out is not None:
            assert not (work / case.out).exists()
        made = {"loans.csv"} if "drop" in case.extra else set()
        written = [p for p in os.listdir(work) if not os.path.islink(work / p)]
        assert set(written) == made, written
    else:
        assert result.stdout or case.out
        if case.note:
            notes = [line for line in lines if line.startswith("treelens: note: ")]
            assert any(case.note in line for line in notes), result.stderr
        if case.out is not None:
            assert (work / case.out).stat().st_size > 0
        if case.page or case.not_page or case.extra.get("no_change_of"):
            _check_page(case, (work / case.out).read_text(), workspace)
    assert not (workspace / MARK).exists()  # no pickle ever ran


def _page_text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _check_page(case: Case, page: str, workspace: Path) -> None:
    text = _page_text(page)
    nan_row = _row_with_nan(workspace)
    for expected in case.page:
        assert expected.replace("ROW_WITH_NAN", nan_row) in text, expected
    for unexpected in case.not_page:
        assert unexpected not in page and unexpected not in text, unexpected
    # Ordinary magnitudes never print with an exponent (money in thousands).
    assert not re.search(r"\d\.\d+e\+\d\d", text), re.findall(r"\S+e\+\d\d", text)
    fixed = case.extra.get("no_change_of")
    if fixed:
        answer = text[text.index("The answer for the chosen rows") :]
        answer = answer[: answer.index("Feature importance")]
        assert not re.search(rf"\b{fixed}:", answer)  # never changed


def _popen(args, cwd):
    env = {**os.environ, "PYTHONPATH": SRC, "TREELENS_PROGRESS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "treelens", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_interrupted_report_writes_nothing_and_keeps_the_old_file(workspace, tmp_path):
    old = "<html>an earlier report</html>"
    (tmp_path / "out.html").write_text(old)
    args = [str(workspace / "forest.skops"), str(workspace / "loans.csv")]
    process = _popen(
        ["report", *args, "--target", "approved", "--out", "out.html"], tmp_path
    )
    assert process.stderr is not None
    for line in process.stderr:  # interrupt once the report is computing
        if "model card" in line or "answer" in line:
            break
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        "treelens: error: interrupted; no output file was written."
    )
    assert (tmp_path / "out.html").read_text() == old
    assert os.listdir(tmp_path) == ["out.html"]


def test_a_finished_report_leaves_no_thread_behind(workspace, tmp_path):
    """A report once hung at exit with threads waiting on locks: every thread
    it starts (routing pools, the solver) is gone when the command returns."""
    import concurrent.futures.thread as pool_threads
    import threading

    from treelens._cli._app import main

    # Threads other tests left (a Dask client's pool) are not this report's.
    before = set(threading.enumerate())
    pooled = {t for t in pool_threads._threads_queues if t.is_alive()}
    args = [str(workspace / "forest.skops"), str(workspace / "loans_5000.csv")]
    with pytest.raises(SystemExit) as done:
        main(
            ["report", *args, "--target", "approved", "--max-counterfactuals", "1"]
            + ["--out", str(tmp_path / "out.html")]
        )
    assert done.value.code == 0
    assert set(threading.enumerate()) <= before
    assert {t for t in pool_threads._threads_queues if t.is_alive()} <= pooled


def test_two_writers_to_one_out_leave_one_whole_file(workspace, tmp_path):
    args = [str(workspace / "forest.skops"), str(workspace / "loans.csv")]
    command = ["report", *args, "--target", "approved", "--out", "out.html"]
    first = _popen([*command, "--title", "first"], tmp_path)
    second = _popen([*command, "--title", "second"], tmp_path)
    for process in (first, second):
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr
    assert os.listdir(tmp_path) == ["out.html"]
    page = (tmp_path / "out.html").read_text()
    assert page.rstrip().endswith("</html>") and page.count("<!DOCTYPE html>") == 1
    assert re.search(r"<title>(first|second)</title>", page)


# ------------------------------------------------------------------------- API


def test_api_decision_regions_skip_and_report_missing_values(workspace):
    table = loan_table()
    X, y = table[FEATURES], table["approved"]
    model = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    missing = np.flatnonzero(X["income"].isna())
    for display_class, extra in (
        (treelens.DecisionRegionDisplay, {}),
        (treelens.PartitionDisplay, {"tree_index": 0}),
    ):
        with pytest.warns(MissingValuesWarning, match=f"{missing.size} of {len(X)}"):
            display = display_class.from_estimator(
                model, X, features=("income", "debt"), **extra
            )
        np.testing.assert_array_equal(display.skipped_rows_, missing)
        window = display.window
        assert np.isfinite(window).all()
        present = X["income"].dropna()
        assert window[0, 0] < present.min() and window[0, 1] > present.max()
        np.testing.assert_allclose(
            display.reference, np.nanmedian(X.to_numpy(), axis=0)
        )


@pytest.mark.parametrize(
    "name, message",
    [
        ("xgb_index.json", "splits on feature 99"),
        ("xgb_cycle.json", "a cycle"),
        ("xgb_syntax.json", "is not valid JSON"),
        ("xgb_no_objective.json", "learner.objective"),
        ("lgb_half.txt", "not a complete LightGBM text model"),
        ("lgb_cut_parameters.txt", "end of parameters"),
    ],
)
def test_api_damaged_model_files(workspace, name, message):
    with pytest.raises(InputError, match=message):
        load_native_model(workspace / name)


@pytest.mark.parametrize(
    "name, message",
    [
        ("infinity.csv", "got inf at data row 17"),
        ("duplicated.csv", "appears twice"),
        ("text_column.parquet", "stored as text"),
        ("word_in_number.csv", "got '12k' at data row 17"),
    ],
)
def test_api_bad_data_files(workspace, name, message):
    with pytest.raises(InputError, match=message):
        load_data(workspace / name, feature_names=FEATURES, target="approved")


def test_api_semicolon_csv_reads_as_the_comma_one(workspace):
    comma = load_data(
        workspace / "loans.csv", feature_names=FEATURES, target="approved"
    )
    semicolon = load_data(
        workspace / "semicolon.csv", feature_names=FEATURES, target="approved"
    )
    pd.testing.assert_frame_equal(comma[0], semicolon[0])
    pd.testing.assert_series_equal(comma[1], semicolon[1])


def test_api_target_labels_are_checked():
    with pytest.raises(InputError, match="got 'no' at data row 1"):
        check_target(pd.Series([1, "no", 0], name="approved"), classes=np.array([0, 1]))
    got = check_target(pd.Series([1.0, 0.0], name="approved"), classes=np.array([0, 1]))
    assert got.dtype == np.array([0, 1]).dtype and got.tolist() == [1, 0]


@pytest.mark.parametrize(
    "first, second",
    [
        ("immutable", "increase_only"),
        ("immutable", "decrease_only"),
        ("increase_only", "decrease_only"),
    ],
)
def test_api_contradictory_constraints_name_both(first, second):
    table = loan_table(100)
    model = RandomForestClassifier(n_estimators=2, random_state=0)
    model.fit(table[FEATURES].fillna(0), table["approved"])
    constraints = Constraints(**{first: ["income"], second: ["income"]})
    words = [first.replace("_", "-"), second.replace("_", "-")]
    with pytest.raises(InputError, match=f"both {words[0]} and {words[1]}"):
        treelens.feature_tweak(
            model, table[FEATURES].fillna(0).iloc[:2], target=1, constraints=constraints
        )


def test_api_row_named_by_its_index_label():
    table = loan_table(100)
    X = table[FEATURES].fillna(0)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(
        X, table["approved"]
    )
    chosen = X.iloc[[40, 41]].copy()
    chosen.iloc[1, 2] = np.nan
    # The forest routes missing values: the row gets a counterfactual that keeps
    # it missing; a model that refuses them names the row.
    kept = treelens.feature_tweak(model, chosen, target=1)
    assert kept.found_.all() and kept.missing_[1, 2]
    assert np.isnan(np.asarray(kept.X_cf_, dtype=float)[1, 2])
    boosting = GradientBoostingClassifier(n_estimators=2, random_state=0).fit(
        X, table["approved"]
    )
    with pytest.raises(InputError, match="at row 41, feature 'debt'"):
        treelens.feature_tweak(boosting, chosen, target=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        integer = Constraints(integer=["debt"])
        chosen = X.iloc[[40, 41]].copy()
        chosen.iloc[1, 2] = 3.5
        with pytest.raises(InputError, match="row 41 holds 3.5; expected a whole"):
            treelens.feature_tweak(model, chosen, target=1, constraints=integer)
