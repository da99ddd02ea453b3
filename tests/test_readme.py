"""The README's Python examples run as written.

Each ```` ```python ```` block of ``README.md`` is executed in a namespace that
defines the names it uses (fitted models and tables made here from data that
ships with scikit-learn, or synthetic), and what its comments claim is checked
where it can be.  A block added, removed or moved in the README without its
namespace here fails :func:`test_every_block_has_a_namespace`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from treelens._cli._demo_mixed import applicants, applicants_pipeline

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks() -> list[str]:
    return _BLOCK.findall(README.read_text(encoding="utf-8"))


def _cancer() -> dict[str, Any]:
    """Breast cancer as a table, split as the README's figures were made (143
    held-out rows), and a 100-tree forest."""
    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = RandomForestClassifier(100, max_depth=6, random_state=0, n_jobs=1)
    model.fit(X_train, y_train)
    declined = X_test[model.predict(X_test) == 0]
    return {
        "treelens": treelens,
        "X": X,
        "y": y,
        "X_train": X_train,
        "X_test": X_test,
        "y_train": y_train,
        "y_test": y_test,
        "model": model,
        "X_declined": declined.iloc[:3],
    }


def _pipeline() -> dict[str, Any]:
    """The demo's synthetic applicants through a ColumnTransformer and a forest."""
    X_raw, y = applicants(600, seed=0)
    pipeline = applicants_pipeline(20, max_depth=5).fit(X_raw, y)
    declined = X_raw[pipeline.predict(X_raw) == 0]
    return {"treelens": treelens, "pipeline": pipeline, "X_raw": declined}


def _pictures() -> dict[str, Any]:
    """Iris with short column names for the pictures, and the models they draw."""
    iris = load_iris(as_frame=True)
    X = iris.data.set_axis(
        ["sepal length", "sepal width", "petal length", "petal width"], axis=1
    )
    y = iris.target
    model = RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y)
    reg_tree = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    result = treelens.counterfactual(model, X.iloc[[0]], target=2, reference=X)
    return {
        **{name: getattr(treelens, name) for name in treelens.__all__},
        "X": X,
        "y": y,
        "X_train": X,
        "y_train": y,
        "tree": DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y),
        "model": model,
        "m": model,
        "forest": treelens.to_forest(model),
        "svc": SVC().fit(X, y == 0),
        "reg_tree": reg_tree,
        "result": result,
    }


def _loans() -> dict[str, Any]:
    """A synthetic table with an age, an income and a count of children."""
    rng = np.random.default_rng(0)
    n = 800
    X = pd.DataFrame(
        {
            "age": rng.integers(21, 70, n).astype(float),
            "income": rng.normal(40_000, 12_000, n).round(-2),
            "children": rng.integers(0, 4, n).astype(float),
            "debt": rng.gamma(2.0, 5_000.0, n).round(-1),
        }
    )
    score = (X["income"] - 1.5 * X["debt"]) / 10_000 - 0.3 * X["children"]
    y = (score + rng.normal(0, 0.3, n) > 2.0).astype(int)
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    model = RandomForestClassifier(30, max_depth=5, random_state=0)
    model.fit(X_train, y_train)
    declined = X_test[model.predict(X_test) == 0].iloc[:3]
    return {
        "treelens": treelens,
        "model": model,
        "X_train": X_train,
        "X_declined": declined,
        "Margin": treelens.Margin,
    }


def _addresses() -> dict[str, Any]:
    """A synthetic table with an address (street and city codes), a one-hot
    region and two numbers, one a near copy of the other."""
    rng = np.random.default_rng(0)
    n = 600
    street = rng.integers(0, 40, n)
    region = rng.integers(0, 3, n)
    income = rng.normal(40_000, 12_000, n).round(-2)
    X = pd.DataFrame(
        {
            "street": street.astype(float),
            "city": (street // 8).astype(float),
            "income": income,
            "income_net": 0.7 * income + rng.normal(0, 500, n),
            **{f"region_{r}": (region == i).astype(float) for i, r in enumerate("abc")},
        }
    )
    score = income / 10_000 + (street // 8) - (region == 2)
    y = (score + rng.normal(0, 0.5, n) > 5.5).astype(int)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = RandomForestClassifier(30, max_depth=5, random_state=0)
    model.fit(X_train, y_train)
    return {"treelens": treelens, "model": model, "X_test": X_test, "y_test": y_test}


def _with_result(namespace: Callable[[], dict[str, Any]]) -> Callable[[], dict]:
    """A namespace that also holds the Saabas values of the held-out rows."""

    def build() -> dict[str, Any]:
        names = namespace()
        names["result"] = treelens.saabas_values(names["model"], names["X_test"])
        return names

    return build


# In README order: (first words of the block, its namespace).
_NAMESPACES: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("import treelens", _cancer),
    ("forest = treelens.to_forest(pipeline)", _pipeline),
    ("from treelens import (PartitionDisplay", _pictures),
    ("result = treelens.mdi_importance(model)", _cancer),
    ("deb = treelens.debiased_mdi_importance", _cancer),
    ("result = treelens.grouped_permutation_importance", _addresses),
    ("result = treelens.shap_values(model, X_test)", _cancer),
    ("from treelens import Constraints, Margin, counterfactual", _loans),
    ("from treelens import optimal_counterfactual", _loans),
    ("from treelens import feature_tweak", _loans),
    ("path = treelens.decision_path", _cancer),
    ("from treelens import ContributionSummaryDisplay", _with_result(_cancer)),
    ("import pyarrow.parquet as pq", _cancer),
    ("import dask.dataframe as dd", _cancer),
    ("from sklearn.ensemble import IsolationForest", _cancer),
]


def test_every_block_has_a_namespace() -> None:
    blocks = _blocks()
    assert len(blocks) == len(_NAMESPACES)
    for block, (start, _) in zip(blocks, _NAMESPACES, strict=True):
        assert block.startswith(start), (block.split("\n")[0], start)


def _run(index: int, **extra: Any) -> dict[str, Any]:
    start, namespace = _NAMESPACES[index]
    block = _blocks()[index]
    assert block.startswith(start)
    names = {**namespace(), **extra}
    # The project's own README, not outside input.
    exec(compile(block, f"README.md block {index + 1}", "exec"), names)  # noqa: S102
    return names


def test_forest_block_predicts_as_the_model() -> None:
    names = _run(0)
    np.testing.assert_array_equal(
        names["forest"].predict(names["X"]), names["model"].predict(names["X"])
    )


def test_pipeline_block_speaks_in_the_input_columns() -> None:
    names = _run(1)
    forest, pipeline, X_raw = names["forest"], names["pipeline"], names["X_raw"]
    np.testing.assert_array_equal(forest.predict(X_raw), pipeline.predict(X_raw))
    importances = treelens.mdi_importance(pipeline).importances_
    assert "employment" in importances.index


def test_pictures_block_draws() -> None:
    names = _run(2)
    assert names["dot_text"].startswith("digraph")


@pytest.mark.parametrize("index", [3, 4, 5])
def test_importance_blocks_run(index: int) -> None:
    names = _run(index)
    result = names["result"] if index != 4 else names["deb"]
    assert len(result.importances_) > 0
    if index == 3:
        model = names["model"]
        np.testing.assert_allclose(
            names["result"].importances_.to_numpy(), model.feature_importances_
        )


def test_shap_block_adds_up() -> None:
    names = _run(6)
    result = names["result"]
    model, X_test = names["model"], names["X_test"]
    total = result.expected_value_ + result.values_.sum(axis=1)
    np.testing.assert_allclose(total, model.predict_proba(X_test), atol=1e-9)


@pytest.mark.parametrize("index", [7, 8, 9])
def test_counterfactual_blocks_flip_the_model(index: int) -> None:
    names = _run(index)
    result, model = names["result"], names["model"]
    assert result.found_.any()
    found = np.asarray(result.found_, dtype=bool)
    # Rows given as a DataFrame come back as one, which the model takes as is.
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert (model.predict(result.X_cf_[found]) == 1).all()


def test_path_block_shapes() -> None:
    names = _run(10)
    assert names["result"].values_.shape == (143, 30, 2)
    # The sentence the README quotes, joined from its comment lines.
    quoted = re.search(r"# '(Predicted.*?)'\n", _blocks()[10], re.DOTALL)
    assert quoted is not None
    sentence = re.sub(r"\n#\s+", " ", quoted.group(1))
    assert names["path"].sentences_[0] == sentence
    result = names["result"]
    np.testing.assert_allclose(
        result.bias_ + result.values_.sum(axis=1), result.prediction_, atol=1e-12
    )


def test_contribution_pictures_block_draws() -> None:
    _run(11)


def test_chunks_block_reads_parquet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _cancer()
    names["X_declined"].to_parquet(tmp_path / "declined.parquet")
    monkeypatch.chdir(tmp_path)
    names = _run(12)
    assert len(names["result"].found_) == 3


def test_dask_block_runs_on_a_scheduler(tmp_path: Path) -> None:
    from distributed import LocalCluster

    block = _blocks()[13]
    names = _cancer()
    X_test, y_test = names["X_test"], names["y_test"]
    frame = X_test.assign(label=y_test.to_numpy())
    frame.to_parquet(tmp_path / "applicants", partition_cols=None)
    features = list(X_test.columns)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        code = block.replace("tcp://scheduler:8786", cluster.scheduler_address)
        code = code.replace('"applicants/"', repr(str(tmp_path / "applicants")))
        code = code.replace('"cf/"', repr(str(tmp_path / "cf")))
        names.update(features=features)
        exec(compile(code, "README.md block 14", "exec"), names)  # noqa: S102
        names["client"].close()
    assert len(names["cf"].found_) == len(X_test)
    written = pd.read_parquet(tmp_path / "cf")
    assert len(written) > 0


def test_anomaly_block_explains_and_makes_inliers() -> None:
    names = _run(14)
    iso, X = names["iso"], names["X"]
    quoted = re.search(r"# '(Scored.*?)'\n", _blocks()[14], re.DOTALL)
    assert quoted is not None
    assert names["sentence"] == re.sub(r"\n#\s+", " ", quoted.group(1))
    values = names["values"]
    total = values.expected_value_ + values.values_.sum(axis=1)
    np.testing.assert_allclose(total, -np.log2(-iso.score_samples(X)), atol=1e-12)
    result = names["result"]
    assert result.found_.all()
    assert (iso.predict(result.X_cf_) == 1).all()
