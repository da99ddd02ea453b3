"""Helpers several Displays draw with: the points drawn, and the tree diagram."""

import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from treelens import (
    DecisionRegionDisplay,
    MissingValuesWarning,
    PartitionDisplay,
    TreeDiagramDisplay,
    export_dot,
)
from treelens._exceptions import warn
from treelens._plots._dot import node_diagram
from treelens._plots._partition import points_to_draw


def test_points_to_draw_without_data():
    assert points_to_draw(None, (0, 1), ("a", "b"), show=True) == (None, None)


def test_points_to_draw_counts_missing_rows_without_warning_when_hidden():
    X = np.array([[0.0, 1.0, 2.0], [np.nan, 1.0, 2.0], [3.0, 4.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skipped, points = points_to_draw(X, (0, 2), ("a", "c"), show=False)
    assert skipped.tolist() == [1, 2]
    assert points is None


def test_points_to_draw_warns_at_the_first_line_outside_treelens():
    X = np.array([[0.0, 1.0], [np.nan, 1.0]])

    def plot():  # stands for a user's function that draws
        return points_to_draw(X, (1, 0), ("b", "a"), show=True)

    line = plot.__code__.co_firstlineno + 1
    with pytest.warns(
        MissingValuesWarning, match="1 of 2 rows have no value of 'a' and"
    ) as rec:
        skipped, points = plot()
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)
    assert skipped.tolist() == [1]
    np.testing.assert_array_equal(points, X[:, [1, 0]])


@pytest.mark.parametrize("display_class", [DecisionRegionDisplay, PartitionDisplay])
def test_a_display_warns_at_the_users_line_whichever_way_it_draws(display_class):
    # from_estimator draws through plot; either way the warning names the line
    # of the user's call, not one inside treelens.
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[[3, 7], 1] = np.nan
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    line = sys._getframe().f_lineno + 2
    with pytest.warns(MissingValuesWarning, match="2 of 150 rows") as rec:
        display = display_class.from_estimator(model, X, features=(0, 1))
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)
    line = sys._getframe().f_lineno + 2
    with pytest.warns(MissingValuesWarning, match="2 of 150 rows") as rec:
        display.plot()
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)


def test_warn_names_the_first_caller_outside_the_package():
    line = sys._getframe().f_lineno + 2
    with pytest.warns(UserWarning, match="here") as rec:
        warn("here", UserWarning)
    assert (rec[0].filename, rec[0].lineno) == (__file__, line)


def test_node_diagram_is_what_the_diagram_and_the_dot_text_show():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    options = {
        "max_depth": 2,
        "annotate": ("samples", "value"),
        "class_names": None,
        "proportion": True,
        "precision": 2,
        "importance": None,
    }
    diagram = node_diagram(tree, tree_index=None, **options)
    display = TreeDiagramDisplay.from_estimator(tree, **options)
    assert diagram.tree_index == 0
    assert diagram.texts == display.texts
    assert diagram.colors == display.colors
    np.testing.assert_array_equal(diagram.layout.nodes, display.nodes)
    cut = [k for k, text in enumerate(diagram.texts) if text.endswith("\n(...)")]
    assert cut == np.flatnonzero(diagram.layout.truncated).tolist() and cut
    dot = export_dot(tree, **options)
    for node, color in zip(diagram.layout.nodes.tolist(), diagram.colors):
        assert f'{node} [label="' in dot and f'fillcolor="{color}"' in dot


def test_old_attribute_names_read_the_new_ones_with_a_future_warning():
    X, y = load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    display = DecisionRegionDisplay.from_estimator(model, X, features=(2, 3))
    assert DecisionRegionDisplay._renamed
    for old, new in DecisionRegionDisplay._renamed.items():
        message = f"`DecisionRegionDisplay.{old}` is now `{new}`"
        line = sys._getframe().f_lineno + 2
        with pytest.warns(FutureWarning, match=message) as rec:
            value = getattr(display, old)
        assert value is getattr(display, new)
        assert (rec[0].filename, rec[0].lineno) == (__file__, line)
    with pytest.raises(AttributeError, match="object has no attribute 'nothing_'"):
        _ = display.nothing_
