"""The HTML report on an IsolationForest: scores, the most anomalous rows made
inliers, mean |SHAP| importance and an exact map of the score."""

import html
import re

import numpy as np
import pandas as pd
import pytest
import shap
import skops.io
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import IsolationForest
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from typer.testing import CliRunner

from treelens import to_forest
from treelens._cli._app import app
from treelens._plots._display_regions import exact_regions
from treelens._plots._partition import cell_points
from treelens._report._anomaly import anomaly_targets, most_anomalous_rows
from treelens._report._page import render_report

from .test_report import assert_renders


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[::2, :10].reset_index(drop=True)
    malignant = (1 - data.target.iloc[::2]).reset_index(drop=True).rename("malignant")
    model = IsolationForest(n_estimators=20, max_samples=64, random_state=0).fit(X)
    return model, X, malignant


@pytest.fixture(scope="module")
def page(cancer):
    model, X, malignant = cancer
    return render_report(
        model, X, malignant, max_counterfactuals=2, time_limit=5, title="Anomalies"
    )


def _text(page: str) -> str:
    without_pictures = re.sub(r'src="data:[^"]+"', "", page)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", without_pictures)))


def test_card_counts_outliers_and_scores_the_known_anomalies(cancer, page):
    model, X, malignant = cancer
    text = _text(page)
    outliers = int((model.predict(X) == -1).sum())
    assert f"Outliers {outliers:,} of {len(X):,} rows" in text
    anomaly = -model.score_samples(X)
    assert f"ROC AUC {roc_auc_score(malignant, anomaly):.4f}" in text
    ap = average_precision_score(malignant, anomaly)
    assert f"Average precision {ap:.4f}" in text
    assert f"Known anomalies {int(malignant.sum()):,}" in text
    assert "isolation forest (anomaly scores)" in text
    # max_samples=64 grows every tree to depth ceil(log2(64)) = 6: one depth.
    assert "Depth 6 " in text and "6 to 6" not in text
    # Nothing of a classifier's or of impurity: no accuracy, MDI or node table.
    for absent in ("Accuracy", "How MDI is computed", 'id="nodes"', "impurity ="):
        assert absent not in page


def test_answer_takes_the_most_anomalous_outliers_and_makes_them_inliers(cancer, page):
    model, X, _ = cancer
    scores = model.score_samples(X)
    outliers = np.flatnonzero(model.predict(X) == -1)
    expected = outliers[np.argsort(scores[outliers], kind="stable")][:2]
    assert most_anomalous_rows(model, X, 2) == [int(r) for r in expected]
    text = _text(page)
    rows = ", ".join(str(r) for r in expected)
    assert f"the 2 most anomalous rows the model calls outliers (rows {rows})" in text
    assert "that makes the model call it an inlier" in text
    # The answer's table heads the model's output by its name.
    assert "<th>score_samples</th>" in page
    assert "Why this decision" in text and "anomaly score" in text
    # The first row's move is drawn over the anomaly score, its threshold a line.
    assert f'alt="Counterfactual of row {expected[0]}"' in page
    assert "anomaly score (-score_samples; the line is the target's bound)" in text


def test_importance_ranks_columns_as_shap_does(cancer, page):
    model, X, _ = cancer
    values = shap.TreeExplainer(model).shap_values(X)  # mean path length units
    order = X.columns[np.argsort(-np.abs(values).mean(axis=0), kind="stable")]
    table = page[page.index('id="importance"') :]
    cells = re.findall(r"<tr><td>([^<]+)</td>", table)
    assert cells[:3] == list(order[:3])
    assert "mean |SHAP|" in page and "95% low" in page
    assert "MDI, held-out and debiased MDI and permutation importance do not" in page


def test_pictures_are_drawn(page):
    titles = re.findall(r'alt="([^"]+)"', page)
    for title in (
        "Anomaly scores",
        "Tree diagram",
        "Anomaly score map",
        "Importance",
        "SHAP dependence",
    ):
        assert title in titles, titles
    assert "is not drawn" not in page


def test_score_map_is_the_models_score_on_every_cell(cancer):
    model, X, _ = cancer
    forest = to_forest(model)
    reference = np.median(X.to_numpy(), axis=0)
    window = np.array([[-1.0, 40.0], [5.0, 45.0]])
    x_edges, y_edges, score = exact_regions(forest, (0, 1), reference, window)
    px = cell_points(x_edges, forest.input_dtype)
    py = cell_points(y_edges, forest.input_dtype)
    gx, gy = np.meshgrid(px, py)
    rows = np.tile(reference, (gx.size, 1))
    rows[:, 0], rows[:, 1] = gx.ravel(), gy.ravel()
    expected = model.score_samples(pd.DataFrame(rows, columns=X.columns))
    np.testing.assert_array_equal(score.ravel(), expected)


def test_anomaly_targets_read_labels_of_anomalies():
    np.testing.assert_array_equal(anomaly_targets([0, 1, 1]), [False, True, True])
    np.testing.assert_array_equal(anomaly_targets([True, False]), [True, False])
    np.testing.assert_array_equal(anomaly_targets([-1, 1, 1]), [True, False, False])
    np.testing.assert_array_equal(anomaly_targets([0.0, 1.0]), [False, True])
    for other in (["a", "b"], [0, 1, 2], [1, 1], [0, 1, None], [2, 3], None):
        assert anomaly_targets(other) is None


def test_other_targets_score_nothing_and_say_so(cancer):
    model, X, _ = cancer
    sizes = pd.Series(np.arange(len(X)) % 3, name="size")
    text = _text(render_report(model, X, sizes, max_counterfactuals=0))
    assert "ROC AUC" not in text
    assert "The target column is not a label of anomalies" in text


def test_a_pipeline_ending_in_an_isolation_forest_gets_the_report(cancer):
    _, X, _ = cancer
    pipeline = make_pipeline(
        StandardScaler(), IsolationForest(n_estimators=10, random_state=1)
    ).fit(X)
    text = _text(render_report(pipeline, X, max_counterfactuals=1, time_limit=5))
    outliers = int((pipeline.predict(X) == -1).sum())
    assert f"Outliers {outliers:,} of {len(X):,} rows" in text
    assert "call it an inlier" in text


def test_command_line_writes_the_report(cancer, tmp_path):
    model, X, malignant = cancer
    skops.io.dump(model, tmp_path / "iso.skops")
    X.assign(malignant=malignant).to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "report.html"
    args = ["report", str(tmp_path / "iso.skops"), str(tmp_path / "rows.csv")]
    args += ["--target", "malignant", "--out", out]
    result = CliRunner().invoke(app, [*args, "--max-counterfactuals", "1"])
    assert result.exit_code == 0, result.output
    text = _text(out.read_text(encoding="utf-8"))
    assert "ROC AUC" in text and "call it an inlier" in text
    # Rows chosen by hand; --target-class outlier aims the other way.
    inlier = int(np.flatnonzero(model.predict(X) == 1)[0])
    result = CliRunner().invoke(
        app, [*args, "--rows", str(inlier), "--target-class", "outlier"]
    )
    assert result.exit_code == 0, result.output
    text = _text(out.read_text(encoding="utf-8"))
    assert f"For rows {inlier}:" in text and "call it an outlier" in text


def test_report_renders_in_headless_chromium(chromium, page, tmp_path):
    assert_renders(chromium, page, tmp_path)


def test_score_map_caption_says_how_it_was_computed(cancer):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    from treelens._report._anomaly import _score_map
    from treelens._report._page import _picture

    model, X, _ = cancer
    numeric = _score_map(to_forest(model), X, list(X.columns[:2]), _picture)
    assert numeric["png"] and "exact: one cell per rectangle" in numeric["caption"]
    rng = np.random.default_rng(0)
    frame = X.iloc[:, :3].assign(kind=rng.choice(["a", "b", "c"], len(X)))
    encode = ColumnTransformer(
        [("kind", OneHotEncoder(), ["kind"])], remainder="passthrough"
    )
    pipeline = make_pipeline(
        encode, IsolationForest(n_estimators=10, random_state=0)
    ).fit(frame)
    banded = _score_map(to_forest(pipeline), frame, ["kind", X.columns[0]], _picture)
    assert banded["png"] and "one band per category of kind" in banded["caption"]
    assert "exact" not in banded["caption"]
