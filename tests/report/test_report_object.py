"""treelens.report: the command line's HTML page from Python, inline in Jupyter."""

import html
import re

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score
from sklearn.tree import DecisionTreeClassifier

import treelens
from treelens import Constraints, InputError
from treelens._report._report import _constraint_lists

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


@pytest.fixture(scope="module")
def iris_report():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    model = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
    model.fit(X, y)
    page = treelens.report(
        model,
        X.iloc[::3],
        y.iloc[::3],
        target=2,
        max_counterfactuals=2,
        constraints=Constraints(immutable=["sepal_width"]),
        title="Iris from Python",
    )
    return page


def _text(page):
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_page_is_the_command_lines(iris_report):
    page = iris_report
    assert isinstance(page, treelens.Report)
    assert page.html.startswith("<!DOCTYPE html>")
    text = _text(page.html)
    assert "Iris from Python" in text
    assert "that makes the model predict 2; found for 2 of 2" in text
    assert "sepal_width fixed" in text
    answer = text[text.index("The answer for the chosen rows") :]
    assert not re.search(
        r"\bsepal_width:", answer[: answer.index("Feature importance")]
    )


def test_save_writes_the_document_atomically(iris_report, tmp_path):
    page = iris_report
    path = page.save(tmp_path / "report.html")
    assert path == tmp_path / "report.html"
    assert path.read_text(encoding="utf-8") == page.html
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary left
    with pytest.raises(InputError):
        page.save(tmp_path)  # a directory is not a file


def test_jupyter_shows_it_in_a_sandboxed_frame(iris_report):
    page = iris_report
    frame = page._repr_html_()
    assert frame.startswith('<iframe sandbox=""')
    source = re.fullmatch(r'<iframe [^>]*srcdoc="([^"]*)"></iframe>', frame)
    assert source is not None and html.unescape(source.group(1)) == page.html
    assert repr(page).startswith("<treelens Report: ")


def test_constraints_as_an_object_or_a_mapping():
    built = Constraints(
        immutable=["age"], bounds={"income": (0, None)}, allowed={"job": ["a", "b"]}
    )
    lists = _constraint_lists(built)
    assert lists["immutable"] == ["age"] and lists["bounds"] == {"income": (0, None)}
    assert lists["allowed"] == {"job": ["a", "b"]} and lists["one_hot"] == []
    assert _constraint_lists({"immutable": ["age"]}) == {"immutable": ["age"]}
    assert _constraint_lists(None) is None
    with pytest.raises(InputError, match=r"keys must be among .*; got \['fixed'\]"):
        _constraint_lists({"fixed": ["age"]})
    with pytest.raises(InputError, match="got list"):
        _constraint_lists(["age"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"rows": [150]},
            "`rows` must be positions of rows of X, from 0 to 149; got 150",
        ),
        ({"rows": [-1]}, "from 0 to 149; got -1"),
        ({"rows": ["a"]}, "(whole numbers); got 'a'"),
        ({"max_counterfactuals": -1}, "`max_counterfactuals` must be at least 0"),
        ({"sample_rows": 0}, "`sample_rows` must be at least 1; got 0"),
        ({"sample_rows": 2.5}, "`sample_rows` must be a whole number; got 2.5"),
        ({"y": "short"}, "`y` must hold one target per row of X (150 rows); got 10"),
        ({"constraints": {"fixed": ["x0"]}}, "keys must be among"),
    ],
)
def test_bad_input_is_refused_before_any_work(arguments, message):
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0)
    model.fit(X, y)
    if arguments.get("y") == "short":
        arguments = {**arguments, "y": y[:10]}
    with pytest.raises(InputError, match=re.escape(message)):
        treelens.report(model, X, arguments.pop("y", y), **arguments)


class _Disagreeing(DecisionTreeClassifier):
    """A tree whose ``predict`` keeps what it was given and, once told to,
    says class 0 for every row (unlike its trees)."""

    def predict(self, X, check_input=True):
        self.given_ = [*getattr(self, "given_", []), X]
        if getattr(self, "disagree_", False):
            return np.zeros(len(X), dtype=int)
        return super().predict(X, check_input=check_input)


def test_a_renamed_forest_is_reported_by_its_fitted_model():
    """A Forest that renamed a model fitted on an array is reported by that
    model: its own predict scores the rows, measures permutation importance
    and confirms the counterfactuals, given the columns by position; an
    explicit ``fitted`` takes its place."""
    from treelens._report._page import render_report

    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    X, y = X.iloc[::3], y.iloc[::3]
    model = _Disagreeing(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    forest = treelens.to_forest(model, feature_names=FEATURES)
    arguments = {"target": 2, "max_counterfactuals": 2, "sample_rows": None}
    text = _text(treelens.report(forest, X, y, **arguments).html)
    assert model.given_ and "found for 2 of 2" in text
    assert all(isinstance(Z, np.ndarray) and Z.shape[1] == 4 for Z in model.given_)
    assert f"Accuracy {accuracy_score(y, model.predict(X.to_numpy())):.4f}" in text
    model.disagree_ = True
    zeros = np.zeros(len(y), dtype=int)
    text = _text(treelens.report(forest, X, y, **arguments).html)
    assert f"Accuracy {accuracy_score(y, zeros):.4f}" in text
    assert "found for 0 of 2" in text  # the model rejects the Forest's answers
    permutation = treelens.permutation_importance(forest, X, y, n_repeats=2)
    assert (permutation.importances_ == 0).all()  # a constant predict
    # An explicit fitted model goes before the Forest's own.
    agreeing = _Disagreeing(max_depth=3, random_state=0).fit(X.to_numpy(), y)
    text = _text(render_report(forest, X, y, fitted=agreeing, **arguments))
    assert f"Accuracy {accuracy_score(y, agreeing.predict(X.to_numpy())):.4f}" in text
    assert "found for 2 of 2" in text
