"""``treelens tweak --fill-missing``: missing values a counterfactual may fill."""

import json

import numpy as np
import pytest
import skops.io

from tests.cli.test_cli import assert_bad_input, run
from tests.models import PIPELINE_FACTORIES


@pytest.fixture(scope="module")
def loans(tmp_path_factory):
    root = tmp_path_factory.mktemp("fill")
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    skops.io.dump(case.model, root / "pipeline.skops")
    case.X.assign(approved=case.y).to_csv(root / "loans.csv", index=False)
    missing = np.flatnonzero(case.X["income"].isna().to_numpy())[:6]
    return root, ",".join(str(i) for i in missing)


def _tweak(root, rows, *options):
    return run(
        "tweak", root / "pipeline.skops", root / "loans.csv", "--target", "approved",
        "--target-class", "other", "--rows", rows, "--cost", "mad", "--json", *options,
    )  # fmt: skip


def test_fill_missing_reports_the_filled_values(loans):
    root, rows = loans
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
    root, rows = loans
    assert_bad_input(_tweak(root, rows, *options), message)
