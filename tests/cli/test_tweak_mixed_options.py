"""``treelens tweak`` on a pipeline and a mixed table: missing values a
counterfactual may fill (``--fill-missing``), and an isolation pipeline
(``--isolation-forest``)."""

import json

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.base import clone
from sklearn.ensemble import IsolationForest
from sklearn.pipeline import make_pipeline

from tests.cli.test_cli import assert_bad_input, run
from tests.models import PIPELINE_FACTORIES


@pytest.fixture(scope="module")
def loans(tmp_path_factory):
    root = tmp_path_factory.mktemp("fill")
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    skops.io.dump(case.model, root / "pipeline.skops")
    iso = make_pipeline(
        clone(case.model[:-1]),
        IsolationForest(n_estimators=5, max_samples=32, random_state=0),
    ).fit(case.X)
    skops.io.dump(iso, root / "isolation.skops")
    case.X.assign(approved=case.y).to_csv(root / "loans.csv", index=False)
    # Rows missing their income (and not their employment: a row missing a
    # category is not what these tests are about).
    missing = case.X["income"].isna() & case.X["employment"].notna()
    missing = np.flatnonzero(missing.to_numpy())[:6]
    return root, ",".join(str(i) for i in missing), case, iso


def _tweak(root, rows, *options):
    return run(
        "tweak", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--target-class", "other", "--rows", rows, "--cost", "mad", "--json", *options,
    )  # fmt: skip


def test_fill_missing_reports_the_filled_values(loans):
    root, rows, _, _ = loans
    kept = _tweak(root, rows)
    filled = _tweak(root, rows, "--fill-missing", "income", "--fill-cost", "0")
    assert kept.exit_code == 0, kept.output
    assert filled.exit_code == 0, filled.output
    before = json.loads(kept.stdout)
    after = json.loads(filled.stdout)
    assert "filled" not in json.dumps(before["changes"])
    changes = after["changes"]
    assert any(c.get("filled") for c in changes), changes
    assert all(c["feature"] == "income" for c in changes if c.get("filled"))
    words = " ".join(r["changes"] for r in after["rows"])
    assert "income: missing ->" in words and "(filled)" in words
    # At no price, filling never costs more than keeping the value missing.
    for a, b in zip(after["rows"], before["rows"]):
        if b["found"]:
            assert a["found"] and a["cost"] <= b["cost"] * (1 + 1e-6) + 1e-12


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--fill-missing", "wealth"), "'wealth'"),
        (("--fill-missing", "income", "--fill-cost", "-2"), "-2.0"),
        (("--fill-missing", "income", "--fill-cost", "inf"), "inf"),
        (("--fill-missing", "income", "--fill-missing-all"), "exclude each other"),
        (("--fill-cost", "2"), "fill_missing"),
    ],
)
def test_bad_fill_options_exit_2_with_one_line(loans, options, message):
    root, rows, _, _ = loans
    assert_bad_input(_tweak(root, rows, *options), message)


def test_an_isolation_pipeline_bounds_the_anomaly_score(loans):
    root, rows, case, iso = loans
    bound = float(np.quantile(-iso.score_samples(case.X), 0.4))
    rows = ",".join(rows.split(",")[:2])
    result = _tweak(
        root, rows, "--method", "optimal", "--isolation-forest",
        root / "isolation.skops", "--max-anomaly-score", str(bound),
        "--immutable", "region",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    found = [r for r in answer["rows"] if r["found"]]
    assert found
    # Rebuild each counterfactual from its changes and score it with scikit-learn.
    chosen = [int(i) for i in rows.split(",")]
    points = case.X.iloc[[r["row"] for r in found]].copy()
    for change in answer["changes"]:
        if change["row"] in set(points.index):
            points.loc[change["row"], change["feature"]] = change["after"]
    assert set(points.index) <= set(chosen)
    scores = -iso.score_samples(pd.DataFrame(points))
    assert (scores <= bound + 1e-12).all(), scores
