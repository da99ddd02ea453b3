"""The command line on a pipeline saved with skops and a mixed CSV table."""

import html
import json
import re
import warnings

import numpy as np
import pytest
import skops.io
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from tests.cli.test_cli import assert_bad_input, run
from tests.models import PIPELINE_FACTORIES
from treelens import MissingValuesWarning
from treelens._report._pictures import picture_figure


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    skops.io.dump(case.model, root / "pipeline.skops")
    case.X.assign(approved=case.y).to_csv(root / "loans.csv", index=False)
    numbers = case.X[["income", "age"]].fillna(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = make_pipeline(PCA(2), DecisionTreeClassifier(max_depth=2))
        linear = make_pipeline(StandardScaler(), LogisticRegression())
        pca.fit(numbers, case.y)
        linear.fit(numbers, case.y)
    skops.io.dump(pca, root / "pca.skops")
    skops.io.dump(linear, root / "linear.skops")
    numbers.assign(approved=case.y).to_csv(root / "numbers.csv", index=False)
    return root, case


def test_importance_and_tweak_speak_in_the_input_columns(mixed):
    root, _case = mixed
    result = run(
        "importance", root / "pipeline.skops", "--data", root / "loans.csv",
        "--target", "approved", "--permutation",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "employment" in result.stdout and "onehot" not in result.stdout
    result = run(
        "tweak", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--target-class", "1", "--rows", "0,1,2,3", "--cost", "l1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"employment"' in result.stdout or "employment" in result.stdout


def test_tweak_gives_several_options_in_categories(mixed):
    root, _ = mixed
    result = run(
        "tweak", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--target-class", "1", "--rows", "0,3", "--options", "3", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [(r["row"], r["option"]) for r in rows] == [
        (row, option) for row in (0, 3) for option in (1, 2, 3)
    ]
    for row in (0, 3):
        options = [r for r in rows if r["row"] == row and r["found"]]
        assert len(options) >= 2
        costs = [r["cost"] for r in options]
        assert costs == sorted(costs)
        assert len({r["changes"] for r in options}) == len(options)
    assert any("employment" in r["changes"] for r in rows)


def test_plot_and_report(mixed):
    root, _ = mixed
    out = root / "regions.png"
    result = run(
        "plot", "region", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--features", "income,employment", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x89PNG")
    result = run(
        "plot", "tree", root / "pipeline.skops", root / "loans.csv", "--tree", "0",
        "--row", "1", "--target", "approved", "--out", root / "tree.png",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = root / "report.html"
    result = run(
        "report", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--out", page,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "employment" in page.read_text(encoding="utf-8")


def test_bad_input_is_one_line_naming_what(mixed, tmp_path):
    root, case = mixed
    data = case.X.assign(approved=case.y)
    data.drop(columns=["region"]).to_csv(tmp_path / "short.csv", index=False)
    assert_bad_input(
        run(
            "importance",
            root / "pipeline.skops",
            "--data",
            tmp_path / "short.csv",
            "--target",
            "approved",
        ),
        "region",
    )
    data.assign(income="lots").to_csv(tmp_path / "text.csv", index=False)
    assert_bad_input(
        run(
            "importance",
            root / "pipeline.skops",
            "--data",
            tmp_path / "text.csv",
            "--target",
            "approved",
        ),
        "'income'",
    )
    assert_bad_input(
        run(
            "importance",
            root / "pca.skops",
            "--data",
            root / "numbers.csv",
            "--target",
            "approved",
        ),
        "'pca' (PCA)",
    )
    assert_bad_input(
        run(
            "importance",
            root / "linear.skops",
            "--data",
            root / "numbers.csv",
            "--target",
            "approved",
        ),
        "last step",
    )


def test_unknown_category_in_the_file_is_routed_as_the_model_does(mixed, tmp_path):
    root, case = mixed
    rows = case.X.iloc[:20].copy()
    rows["employment"] = "astronaut"
    rows.to_csv(tmp_path / "unknown.csv", index=False)
    result = run(
        "tweak", root / "pipeline.skops", tmp_path / "unknown.csv", "--target-class",
        "1", "--rows", "0,1", "--cost", "l1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "astronaut" in result.stdout or "True" in result.stdout


def test_explain_speaks_in_the_input_columns(mixed):
    import json

    import treelens

    root, case = mixed
    result = run(
        "explain", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--row", 2, "--top", 4, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "onehot" not in result.stdout and "categories__" not in result.stdout
    answer = json.loads(result.stdout)
    text = json.dumps(answer)
    assert "employment" in text or "region" in text or "income" in text
    # The sentence is the pipeline's own decision path on the raw row.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = treelens.decision_path(case.model, case.X.iloc[[2]])
    assert path.sentences_[0][:40] in text


def test_native_categorical_model_on_a_csv(tmp_path):
    from tests.models import NATIVE_CATEGORICAL_FACTORIES

    case = NATIVE_CATEGORICAL_FACTORIES[
        "sklearn.HistGradientBoostingClassifier[categorical]"
    ](0)
    skops.io.dump(case.model, tmp_path / "hgb.skops")
    case.X.assign(label=case.y).to_csv(tmp_path / "table.csv", index=False)
    result = run(
        "importance", tmp_path / "hgb.skops", "--data", tmp_path / "table.csv",
        "--target", "label", "--permutation",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "colour" in result.stdout
    result = run(
        "tweak", tmp_path / "hgb.skops", tmp_path / "table.csv", "--target", "label",
        "--target-class", case.model.classes_[-1], "--rows", "0,1,2", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    result = run(
        "explain", tmp_path / "hgb.skops", tmp_path / "table.csv", "--target",
        "label", "--row", 1,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    labels = {str(label) for label in case.X["colour"].dropna().unique()}
    assert any(label in result.stdout for label in labels)


def test_explain_writes_a_missing_value_as_missing(mixed):
    root, case = mixed
    row = int(np.flatnonzero(case.X["income"].isna().to_numpy())[0])
    result = run(
        "explain", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--row", row, "--top", 7, "--cost", "l1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if "│ income " in line]
    assert lines and all("missing" in line for line in lines), result.stdout
    # JSON keeps a missing value as null.
    result = run(
        "explain", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--row", row, "--top", 7, "--cost", "l1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"missing"' not in result.stdout


@pytest.mark.parametrize("kind", ["partition", "forest-grid"])
def test_partition_pictures_default_to_numeric_features(mixed, tmp_path, kind):
    """The two columns of highest MDI are income and employment: a partition
    draws numeric axes, so by default it takes income and the next numeric
    column rather than refusing the user's default call."""
    root, _ = mixed
    out = tmp_path / f"{kind}.png"
    result = run(
        "plot", kind, root / "pipeline.skops", root / "loans.csv",
        "--target", "approved", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 0
    assert "no value of 'income' and are not drawn" in result.stderr  # age has all
    _, case = mixed
    with pytest.warns(MissingValuesWarning, match="no value of 'income'"):
        figure = picture_figure(kind, case.model, case.X, case.y)
    drawn = {(ax.get_xlabel(), ax.get_ylabel()) for ax in figure.axes}
    assert drawn == {("income", "age")}


def test_report_and_explain_fill_missing_values_as_their_advice_says(mixed, tmp_path):
    """A row whose target needs its missing income is answered with
    --fill-missing, which the reason of a search without it names."""
    root, case = mixed
    declined = case.X["income"].isna() & (case.model.predict(case.X) == 0)
    rows = ",".join(str(r) for r in np.flatnonzero(declined)[:2])
    fixed = ("--immutable", "age,employment,region,owner")
    out = tmp_path / "report.html"
    result = run(
        "report", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--rows", rows, "--target-class", "1", *fixed,
        "--fill-missing", "income", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = html.unescape(re.sub(r"<[^>]+>", " ", out.read_text()))
    assert "income: missing -> " in page and "(filled)" in page
    assert "`reference` must be" not in page
    row = rows.split(",")[0]
    result = run(
        "explain", root / "pipeline.skops", root / "loans.csv", "--target",
        "approved", "--row", row, "--target-class", "1", *fixed,
        "--fill-missing-all",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Counterfactual (cost" in result.stdout
    lines = [line for line in result.stdout.splitlines() if "│ income " in line]
    assert all("missing" in line for line in lines), result.stdout


@pytest.mark.parametrize(
    "name",
    ["lightgbm.LGBMClassifier[categorical]", "xgboost.XGBClassifier[categorical]"],
)
def test_library_categories_read_from_a_csv_file(tmp_path, name):
    """LightGBM and XGBoost take categories as pandas categories only, and a
    CSV file holds text: the answers from the CSV file are those from the
    Parquet file that keeps the categories."""
    from tests.models import NATIVE_CATEGORICAL_FACTORIES

    pytest.importorskip(name.split(".")[0])
    case = NATIVE_CATEGORICAL_FACTORIES[name](0)
    skops.io.dump(case.model, tmp_path / "model.skops")
    table = case.X.assign(label=case.y)
    table.to_csv(tmp_path / "table.csv", index=False)
    table.to_parquet(tmp_path / "table.parquet", index=False)
    target = str(case.model.classes_[-1])
    answers = []
    for data in ("table.csv", "table.parquet"):
        result = run(
            "tweak", tmp_path / "model.skops", tmp_path / data, "--target", "label",
            "--target-class", target, "--max-rows", 3, "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        answers.append(json.loads(result.stdout))
        result = run(
            "importance", tmp_path / "model.skops", "--data", tmp_path / data,
            "--target", "label", "--permutation", "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        answers.append(json.loads(result.stdout))
    assert answers[0] == answers[2] and answers[1] == answers[3]


def test_xgboost_booster_of_categories_answers(tmp_path):
    """A categorical XGBoost model saved as JSON loads as a Booster, which
    predicts from the categories' codes, not from a frame of labels."""
    from tests.models import NATIVE_CATEGORICAL_FACTORIES

    pytest.importorskip("xgboost")
    case = NATIVE_CATEGORICAL_FACTORIES["xgboost.XGBClassifier[categorical]"](0)
    case.model.save_model(tmp_path / "model.json")
    case.X.assign(label=case.y).to_parquet(tmp_path / "table.parquet", index=False)
    out = tmp_path / "report.html"
    result = run(
        "report", tmp_path / "model.json", tmp_path / "table.parquet", "--target",
        "label", "--max-counterfactuals", 2, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "found for 2 of 2" in html.unescape(re.sub(r"<[^>]+>", " ", out.read_text()))


@pytest.mark.parametrize(
    ("cost", "words"),
    [
        ("auto", "Cost: L1 in median absolute deviations of the data"),
        ("l2", "Cost: L2, the Euclidean length of the change"),
        ("l0", "Cost: L0, the number of columns changed"),
    ],
)
def test_tweak_says_how_its_cost_is_measured(mixed, cost, words):
    root, _ = mixed
    result = run(
        "tweak", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--target-class", "1", "--rows", "0", "--cost", cost, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (note,) = [n for n in json.loads(result.stdout)["notes"] if n.startswith("Cost:")]
    assert note.startswith(words)
    assert note.endswith("; a change of category adds 1.")  # employment is one
    assert f"treelens: note: {note}" in result.stderr
