"""Small fitted models, one factory per supported model, shared by the tests.

``MODEL_FACTORIES`` maps every adapter name of :func:`treelens.supported_models`
to a function ``factory(seed=0) -> FittedCase``; a test fails when a supported
model has no factory.  Contracts that every model must honour (prediction
parity, MDI exactness) are parametrized over this registry.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

N_SAMPLES = 120
N_FEATURES = 4


@dataclass
class FittedCase:
    """A fitted model and the data it was fitted on."""

    model: Any
    X: NDArray[np.float64]
    y: NDArray[Any]
    sample_weight: NDArray[np.float64] | None = None
    #: Whether the training data held NaN (so predictions must route NaN).
    missing: bool = False


def make_data(
    seed: int,
    *,
    task: str,
    n_classes: int = 3,
    missing: bool = False,
    n_samples: int = N_SAMPLES,
    n_features: int = N_FEATURES,
) -> tuple[NDArray[np.float64], NDArray[Any]]:
    """Features with ties and a target depending on them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    # A few discrete columns so that thresholds fall between tied values.
    X[:, -1] = rng.integers(0, 4, n_samples)
    signal = X[:, 0] + 0.5 * X[:, 1] * X[:, -1] + 0.3 * rng.normal(size=n_samples)
    if task == "classification":
        edges = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
        y: NDArray[Any] = np.searchsorted(edges, signal)
    else:
        y = signal
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _fit(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return model.fit(X, y, sample_weight=sample_weight)


def _sklearn_factory(
    cls_path: str, *, task: str, missing: bool, **params: Any
) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import sklearn.ensemble
        import sklearn.tree

        module = sklearn.tree if cls_path.startswith("tree.") else sklearn.ensemble
        cls = getattr(module, cls_path.split(".")[1])
        X, y = make_data(seed, task=task, missing=missing)
        weights = np.random.default_rng(seed + 1).uniform(0.5, 2.0, X.shape[0])
        model = _fit(cls(random_state=seed, **params), X, y, weights)
        return FittedCase(model, X, y, weights, missing)

    return factory


_TREE = {"max_depth": 4}
_ENSEMBLE = {"n_estimators": 5, "max_depth": 3}

MODEL_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "sklearn.DecisionTreeClassifier": _sklearn_factory(
        "tree.DecisionTreeClassifier", task="classification", missing=True, **_TREE
    ),
    "sklearn.DecisionTreeRegressor": _sklearn_factory(
        "tree.DecisionTreeRegressor", task="regression", missing=True, **_TREE
    ),
    "sklearn.ExtraTreeClassifier": _sklearn_factory(
        "tree.ExtraTreeClassifier", task="classification", missing=True, **_TREE
    ),
    "sklearn.ExtraTreeRegressor": _sklearn_factory(
        "tree.ExtraTreeRegressor", task="regression", missing=False, **_TREE
    ),
    "sklearn.RandomForestClassifier": _sklearn_factory(
        "ensemble.RandomForestClassifier",
        task="classification",
        missing=True,
        class_weight="balanced",
        **_ENSEMBLE,
    ),
    "sklearn.RandomForestRegressor": _sklearn_factory(
        "ensemble.RandomForestRegressor", task="regression", missing=True, **_ENSEMBLE
    ),
    "sklearn.ExtraTreesClassifier": _sklearn_factory(
        "ensemble.ExtraTreesClassifier",
        task="classification",
        missing=False,
        **_ENSEMBLE,
    ),
    "sklearn.ExtraTreesRegressor": _sklearn_factory(
        "ensemble.ExtraTreesRegressor",
        task="regression",
        missing=True,
        bootstrap=True,
        **_ENSEMBLE,
    ),
    "sklearn.GradientBoostingClassifier": _sklearn_factory(
        "ensemble.GradientBoostingClassifier",
        task="classification",
        missing=False,
        **_ENSEMBLE,
    ),
    "sklearn.GradientBoostingRegressor": _sklearn_factory(
        "ensemble.GradientBoostingRegressor",
        task="regression",
        missing=False,
        loss="huber",
        **_ENSEMBLE,
    ),
}


def probe_inputs(
    forest: Any, X: NDArray[np.float64], seed: int = 0, *, missing: bool = False
) -> NDArray[np.float64]:
    """Rows that test routing: training rows, random rows, and rows whose
    values sit exactly at split thresholds and one float32 step either side;
    with ``missing``, some NaN."""
    rng = np.random.default_rng(seed)
    n_features = X.shape[1]
    thresholds = [
        (tree.feature[~tree.is_leaf], tree.threshold[~tree.is_leaf])
        for tree in forest.trees
    ]
    features = np.concatenate([f for f, _ in thresholds])
    values = np.concatenate([t for _, t in thresholds])
    # Splits that only separate missing values have an infinite threshold.
    finite = np.isfinite(values)
    features, values = features[finite], values[finite]
    rows = [X, rng.normal(size=(50, n_features))]
    if features.size:
        pick = rng.integers(0, features.size, 60)
        base = rng.normal(size=(3 * pick.size, n_features))
        at = values[pick]
        below = np.nextafter(at.astype(np.float32), np.float32(-np.inf)).astype(float)
        above = np.nextafter(at.astype(np.float32), np.float32(np.inf)).astype(float)
        for block, column in zip((at, below, above), range(3)):
            part = base[column * pick.size : (column + 1) * pick.size]
            part[np.arange(pick.size), features[pick]] = block
        rows.append(base)
    out = np.vstack(rows)
    if missing:
        out[rng.random(out.shape) < 0.15] = np.nan
    else:
        out = np.nan_to_num(out)
    return out
