"""The demo, run through the command as `make demo` runs it."""

import re

import pandas as pd
from typer.testing import CliRunner

from treelens._cli._app import app


def test_demo_prints_the_tables_and_writes_the_report(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for title in (
        "Decision tree",
        "Importance of the features the tree uses",
        "Per-node breakdown",
        "Top 10 features by the forest's MDI",
        "Breast cancer test rows: towards class 1 (benign)",
        "Optimal (mixed-integer program, HiGHS) against feature tweaking",
        "Iris (forest of 50 trees): towards class 2 (virginica)",
        "A mixed table through a scikit-learn Pipeline",
        "Importance per input column (one-hot columns merged exactly)",
        "The changes, in categories and units",
    ):
        assert title in out, title
    # The default search answers every declined row (tweaking missed two).
    section = out[out.index("Breast cancer test rows") : out.index("Optimal (mixed")]
    answered = re.findall(r"^│\s+\d+ │\s+0 │ (\w+)", section, flags=re.MULTILINE)
    assert answered == ["True"] * 5
    gaps = [float(g) for g in re.findall(r"max difference ([0-9.e+-]+)", out)]
    assert len(gaps) == 2 and max(gaps) < 1e-12
    assert f"Report written to {(tmp_path / 'report.html').resolve()}" in out.replace(
        "\n", ""
    )

    importances = pd.read_csv(tmp_path / "tree_importances.csv")
    assert abs(importances["mdi"].sum() - 1.0) < 1e-12
    nodes = pd.read_csv(tmp_path / "tree_nodes.csv")
    assert 1 <= len(nodes) <= 15 and nodes.depth.max() <= 3  # a depth-4 tree
    assert (tmp_path / "forest_importances.csv").exists()
    for picture in (
        "partition",
        "regions",
        "forest_grid",
        "regression_steps",
        "mixed_regions",
    ):
        assert (tmp_path / f"{picture}.png").read_bytes().startswith(b"\x89PNG")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'id="counterfactuals"' in page and page.rstrip().endswith("</html>")
