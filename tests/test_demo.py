import re

import pandas as pd

from treelens._demo import run_demo


def test_demo_prints_the_tables_and_writes_them(tmp_path, capsys):
    run_demo(tmp_path)
    out = capsys.readouterr().out
    assert "Decision tree: importances" in out
    assert "Random forest (100 trees)" in out
    gaps = [float(g) for g in re.findall(r"max difference ([0-9.e+-]+)", out)]
    assert len(gaps) == 2 and max(gaps) < 1e-12
    importances = pd.read_csv(tmp_path / "tree_importances.csv", index_col=0)
    assert abs(importances["MDI (train)"].sum() - 1.0) < 1e-12
    nodes = pd.read_csv(tmp_path / "tree_nodes.csv")
    assert len(nodes) == 10 and nodes.depth.max() == 3
    assert (tmp_path / "forest_importances.csv").exists()
