"""Tree layout, export_dot and TreeDiagramDisplay."""

import re

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, export_graphviz

from treelens import (
    InputError,
    TreeDiagramDisplay,
    export_dot,
    mdi_importance,
    to_forest,
)
from treelens._plots._tree_layout import (
    format_threshold,
    impurity_decrease,
    tree_layout,
)

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
            split = label.split("\n")[0]
            name, shown = split.split(" <= ")
            assert name == f"x{t.feature[node]}"
            assert abs(float(shown) - t.threshold[node]) <= 1e-6 * abs(
                t.threshold[node]
            )
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
    assert disp.nodes.tolist() == np.flatnonzero(depth <= 3).tolist()
    assert len(disp.text_artists_) == disp.nodes.size
    assert [a.get_text() for a in disp.text_artists_] == disp.texts
    np.testing.assert_allclose(
        [a.get_position() for a in disp.text_artists_], disp.positions
    )
    assert len(disp.edge_collection_.get_segments()) == disp.nodes.size - 1
    path = tree.decision_path(X[70:71].astype(np.float32)).indices
    assert disp.path.tolist() == [n for n in path.tolist() if depth[n] <= 3]
    hot = [a.get_bbox_patch().get_linewidth() > 2 for a in disp.text_artists_]
    assert [n for n, h in zip(disp.nodes.tolist(), hot) if h] == disp.path.tolist()
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


def _labels(dot):
    """node id -> {key: text} of every "key = text" line of a DOT label."""
    out = {}
    for line in dot.splitlines():
        if m := NODE.match(line):
            parts = m.group(2).split("\\n")
            out[int(m.group(1))] = dict(p.split(" = ", 1) for p in parts if " = " in p)
    return out


@pytest.mark.parametrize("proportion", [False, True])
def test_values_as_counts_or_fractions_like_scikit_learn(proportion):
    X, y = load_breast_cancer(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    ours = _labels(export_dot(tree, proportion=proportion))
    theirs = _labels(export_graphviz(tree, proportion=proportion))
    assert ours.keys() == theirs.keys()
    for node, labels in theirs.items():
        expected = np.array(labels["value"].strip("[]").split(", "), dtype=float)
        got = np.array(ours[node]["value"].strip("[]").split(", "), dtype=float)
        np.testing.assert_allclose(got, expected, atol=0.006 if proportion else 0)
        samples = float(labels["samples"].rstrip("%"))
        assert float(ours[node]["samples"].rstrip("%")) == pytest.approx(
            samples, abs=0.06
        )
    # Counts are whole numbers printed without decimals: "value = [25, 259]".
    if not proportion:
        root = tree.tree_.value[0, 0] * tree.tree_.weighted_n_node_samples[0]
        assert ours[0]["value"] == "[" + ", ".join(str(int(v)) for v in root) + "]"


def test_threshold_precision():
    # Four significant digits would print 16.8 for 16.795; the default keeps it.
    assert format_threshold(16.795000076293945) == "16.795"
    assert format_threshold(0.05000000074505806) == "0.05"
    assert format_threshold(16.795000076293945, precision=2) == "16.80"
    X, y = load_breast_cancer(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    t = tree.tree_
    inner = np.flatnonzero(t.children_left >= 0)
    nodes, _ = parse_dot(export_dot(tree))
    shown = {n: nodes[n][0].split("\n")[0].split(" <= ")[1] for n in inner}
    # Distinct thresholds of one feature print as distinct texts.
    for f in np.unique(t.feature[inner]):
        same = inner[t.feature[inner] == f]
        assert len({shown[n] for n in same}) == np.unique(t.threshold[same]).size
    nodes, _ = parse_dot(export_dot(tree, precision=1, annotate=("impurity",)))
    for n in inner:
        assert nodes[n][0].split("\n")[0].endswith(f"<= {t.threshold[n]:.1f}")
        assert nodes[n][0].split("\n")[1] == f"gini = {t.impurity[n]:.1f}"


def _box_extents(disp):
    disp.figure_.canvas.draw()
    return np.array(
        [a.get_bbox_patch().get_window_extent().extents for a in disp.text_artists_]
    )


def _assert_no_overlap(disp):
    boxes = _box_extents(disp)  # x0, y0, x1, y1 in pixels
    x0, y0, x1, y1 = (boxes[:, k] for k in range(4))
    overlap = (np.minimum(x1[:, None], x1) > np.maximum(x0[:, None], x0)) & (
        np.minimum(y1[:, None], y1) > np.maximum(y0[:, None], y0)
    )
    np.fill_diagonal(overlap, False)
    assert not overlap.any(), np.argwhere(overlap)[:5]
    axes = disp.ax_.get_window_extent()
    assert (x0 >= axes.x0 - 1).all() and (x1 <= axes.x1 + 1).all()


@pytest.mark.parametrize("own_figure", [True, False])
def test_node_boxes_never_overlap(own_figure):
    import matplotlib.pyplot as plt

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    forest = RandomForestClassifier(n_estimators=2, max_depth=6, random_state=0)
    forest.fit(X, y)
    assert to_forest(forest).trees[0].max_depth == 6
    for model, index in ((tree, None), (forest, 0)):
        ax = None if own_figure else plt.subplots(figsize=(12, 6.5))[1]
        disp = TreeDiagramDisplay.from_estimator(
            model, tree_index=index, max_depth=None, ax=ax
        )
        _assert_no_overlap(disp)
        if own_figure and model is tree:
            assert disp.fontsize_ == 9  # the figure widened instead


def test_trees_of_one_class_and_round_say_so():
    """Multiclass boosting grows one tree per class and round; the diagram says
    which, matching scikit-learn's ``estimators_[round, class]``."""
    from sklearn.ensemble import AdaBoostClassifier, GradientBoostingClassifier

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0)
    model.fit(X, names)
    forest = to_forest(model)
    for t in range(forest.n_trees):
        stage, k = divmod(t, 3)
        own = model.estimators_[stage, k].tree_
        np.testing.assert_array_equal(forest.trees[t].threshold, own.threshold)
        caption = f"tree {t}: round {stage}, raw score of class {model.classes_[k]}"
        display = TreeDiagramDisplay.from_estimator(model, tree_index=t, max_depth=1)
        assert display.caption == caption
        assert display.ax_.get_title() == caption
        dot = export_dot(model, tree_index=t, max_depth=1)
        assert f'label="{caption}", labelloc="t"' in dot
        display.figure_.clf()
    ada = AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1), n_estimators=2, random_state=0
    ).fit(X, y)
    # Each of AdaBoost's trees votes once per class: tree 1 of the model, class 2.
    caption = export_dot(ada, tree_index=5, max_depth=0).splitlines()[3]
    assert "tree 5: the model's tree 1, its vote for class 2" in caption


def test_trees_that_score_alike_have_no_caption(iris_tree):
    X, y = load_iris(return_X_y=True)
    single = iris_tree[0]
    for model in (
        single,
        RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y),
        GradientBoostingRegressor(n_estimators=2).fit(X, y),
    ):
        tree_index = None if model is single else 1
        display = TreeDiagramDisplay.from_estimator(model, tree_index=tree_index)
        assert display.caption == "" and display.ax_.get_title() == ""
        assert "labelloc" not in export_dot(model, tree_index=tree_index)
        display.figure_.clf()
