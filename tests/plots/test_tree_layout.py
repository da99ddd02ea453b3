"""Tree layout, export_dot and TreeDiagramDisplay."""

import re

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from treelens import (
    InputError,
    TreeDiagramDisplay,
    export_dot,
    mdi_importance,
    to_forest,
)
from treelens._plots._tree_layout import impurity_decrease, tree_layout

NODE = re.compile(r"^(\d+) \[label=\"((?:[^\"\\]|\\.)*)\"(.*)\] ;$")
EDGE = re.compile(r"^(\d+) -> (\d+)(?: \[(.*)\])? ;$")


def parse_dot(text):
    """Nodes {id: (label, attrs)} and edges [(parent, child, attrs)] of our DOT output."""
    lines = text.strip().splitlines()
    assert lines[0] == "digraph Tree {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith(("node ", "edge ")):
            continue
        if m := NODE.match(line):
            nodes[int(m.group(1))] = (m.group(2).replace("\\n", "\n"), m.group(3))
        elif m := EDGE.match(line):
            edges.append((int(m.group(1)), int(m.group(2)), m.group(3) or ""))
        else:
            raise AssertionError(f"unparsed DOT line: {line}")
    return nodes, edges


@pytest.fixture(scope="module")
def iris_tree():
    X, y = load_iris(return_X_y=True)
    return DecisionTreeClassifier(random_state=0).fit(X, y), X


def test_dot_structure_matches_the_tree(iris_tree):
    tree, _X = iris_tree
    nodes, edges = parse_dot(export_dot(tree))
    t = tree.tree_
    assert len(nodes) == t.node_count and len(edges) == t.node_count - 1
    expected = {
        (p, int(c))
        for p in range(t.node_count)
        for c in (t.children_left[p], t.children_right[p])
        if c >= 0
    }
    assert {(p, c) for p, c, _ in edges} == expected
    for node, (label, _) in nodes.items():
        assert f"samples = {t.n_node_samples[node]}" in label
        if t.children_left[node] >= 0:
            assert label.startswith(f"x{t.feature[node]} <= {t.threshold[node]:.4g}\n")
    assert 'headlabel="True"' in next(a for p, c, a in edges if c == t.children_left[0])


def test_dot_depth_cut_path_and_annotations(iris_tree):
    tree, X = iris_tree
    dot = export_dot(
        tree,
        max_depth=2,
        path_of=X[120],
        class_names=["setosa", "versicolor", "virginica"],
        annotate=("samples", "value", "weighted_impurity", "mdi"),
    )
    nodes, edges = parse_dot(dot)
    depth = to_forest(tree).trees[0].node_depth
    assert set(nodes) == set(np.flatnonzero(depth <= 2).tolist())
    assert len(edges) == len(nodes) - 1
    path = set(tree.decision_path(X[120:121].astype(np.float32)).indices.tolist())
    highlighted = {n for n, (_, attrs) in nodes.items() if "penwidth=3" in attrs}
    assert highlighted == path & set(nodes)
    assert {(p, c) for p, c, a in edges if "penwidth=3" in a} == {
        (p, c) for p, c, _ in edges if p in path and c in path
    }
    cut = [n for n in nodes if depth[n] == 2 and tree.tree_.children_left[n] >= 0]
    assert cut and all(nodes[n][0].endswith("(...)") for n in cut)
    decrease = mdi_importance(tree).nodes_.set_index("node")["decrease"]
    t = tree.tree_
    for node, (label, _) in nodes.items():
        assert (
            f"w*I = {t.weighted_n_node_samples[node] * t.impurity[node]:.4g}" in label
        )
        if node in decrease.index:
            assert f"MDI decrease = {decrease[node]:.4g}" in label
    assert "class = setosa" in nodes[1][0]


def test_dot_any_tree_of_an_ensemble_and_file(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    gb = GradientBoostingRegressor(n_estimators=3, max_depth=3, random_state=0).fit(
        X[:200], y[:200]
    )
    out = tmp_path / "tree.dot"
    dot = export_dot(gb, tree_index=2, out_file=out, filled=False)
    assert out.read_text() == dot
    nodes, _edges = parse_dot(dot)
    assert len(nodes) == gb.estimators_[2, 0].tree_.node_count
    with pytest.raises(InputError, match=r"`tree_index` must be in \[0, 2\]"):
        export_dot(gb, tree_index=3)
    with pytest.raises(InputError, match="Unknown annotation 'gain'"):
        export_dot(gb, tree_index=0, annotate=("gain",))


def test_layout_geometry():
    X, y = load_iris(return_X_y=True)
    forest = to_forest(RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y))
    tree = forest.trees[1]
    layout = tree_layout(tree)
    assert layout.nodes.size == tree.n_nodes and layout.n_columns == tree.n_leaves
    x = dict(zip(layout.nodes.tolist(), layout.x))
    y_ = dict(zip(layout.nodes.tolist(), layout.y))
    leaves = np.flatnonzero(tree.is_leaf)
    assert sorted(x[n] for n in leaves) == list(range(tree.n_leaves))
    for parent in np.flatnonzero(~tree.is_leaf):
        left, right = tree.children_left[parent], tree.children_right[parent]
        assert x[left] < x[parent] < x[right]
        assert y_[left] == y_[right] == y_[parent] - 1
    # No two nodes at one depth share a position.
    pairs = set(zip(layout.x.tolist(), layout.y.tolist()))
    assert len(pairs) == layout.nodes.size
    cut = tree_layout(tree, max_depth=2)
    assert cut.truncated.sum() == ((tree.node_depth == 2) & ~tree.is_leaf).sum()
    assert cut.n_columns <= 4


def test_tree_diagram_artists(iris_tree):
    tree, X = iris_tree
    result = mdi_importance(tree)
    disp = TreeDiagramDisplay.from_estimator(
        tree, max_depth=3, path_of=X[70], annotate=("samples", "mdi"), importance=result
    )
    depth = to_forest(tree).trees[0].node_depth
    assert disp.nodes_.tolist() == np.flatnonzero(depth <= 3).tolist()
    assert len(disp.text_artists_) == disp.nodes_.size
    assert [a.get_text() for a in disp.text_artists_] == disp.texts_
    np.testing.assert_allclose(
        [a.get_position() for a in disp.text_artists_], disp.positions_
    )
    assert len(disp.edge_collection_.get_segments()) == disp.nodes_.size - 1
    path = tree.decision_path(X[70:71].astype(np.float32)).indices
    assert disp.path_.tolist() == [n for n in path.tolist() if depth[n] <= 3]
    hot = [a.get_bbox_patch().get_linewidth() > 2 for a in disp.text_artists_]
    assert [n for n, h in zip(disp.nodes_.tolist(), hot) if h] == disp.path_.tolist()
    decrease = result.nodes_.set_index("node")["decrease"]
    np.testing.assert_allclose(
        decrease.to_numpy(), impurity_decrease(to_forest(tree).trees[0])[decrease.index]
    )
    assert not disp.ax_.axison


def test_tree_diagram_bad_input(iris_tree):
    tree, _X = iris_tree
    with pytest.raises(InputError, match=r"\[0, 0\]"):
        TreeDiagramDisplay.from_estimator(tree, tree_index=1)
    with pytest.raises(InputError, match="nodes_"):
        TreeDiagramDisplay.from_estimator(tree, importance=object(), annotate=("mdi",))
