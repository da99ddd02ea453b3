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
    #: Category labels to give ``to_forest`` (CatBoost keeps none in its models).
    categories: dict[str, Any] | None = None


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


def _bagging_factory(cls_name: str, *, task: str) -> Callable[..., FittedCase]:
    """Bagged trees, each on three of the four columns and 60% of the rows."""

    def factory(seed: int = 0) -> FittedCase:
        import sklearn.ensemble
        import sklearn.tree

        tree = (
            "DecisionTreeClassifier"
            if task == "classification"
            else "ExtraTreeRegressor"
        )
        base = getattr(sklearn.tree, tree)(max_depth=3, random_state=seed)
        cls = getattr(sklearn.ensemble, cls_name)
        X, y = make_data(seed, task=task, missing=task == "classification")
        weights = np.random.default_rng(seed + 1).uniform(0.5, 2.0, X.shape[0])
        model = cls(
            base, n_estimators=5, max_features=3, max_samples=0.6, random_state=seed
        )
        return FittedCase(
            _fit(model, X, y, weights), X, y, weights, task == "classification"
        )

    return factory


def _adaboost_factory(seed: int = 0) -> FittedCase:
    """AdaBoost (SAMME) over trees of depth 2, on three classes."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_data(seed, task="classification")
    weights = np.random.default_rng(seed + 1).uniform(0.5, 2.0, X.shape[0])
    model = AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=2, random_state=seed),
        n_estimators=5,
        random_state=seed,
    )
    return FittedCase(_fit(model, X, y, weights), X, y, weights)


def _isolation_factory(seed: int = 0) -> FittedCase:
    """An IsolationForest of five trees on three of the four columns, fitted
    with missing values and weights; ``y`` holds its ``score_samples`` (what
    its Forest predicts: it has no target)."""
    from sklearn.ensemble import IsolationForest

    X, _ = make_data(seed, task="regression", missing=True)
    weights = np.random.default_rng(seed + 1).uniform(0.5, 2.0, X.shape[0])
    model = IsolationForest(
        n_estimators=5, max_samples=60, max_features=3, random_state=seed
    ).fit(X, sample_weight=weights)
    return FittedCase(model, X, model.score_samples(X), weights, True)


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
    "sklearn.BaggingClassifier": _bagging_factory(
        "BaggingClassifier", task="classification"
    ),
    "sklearn.BaggingRegressor": _bagging_factory("BaggingRegressor", task="regression"),
    "sklearn.AdaBoostClassifier": _adaboost_factory,
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


# ------------------------------------------------- boosting libraries
def _xgboost_factory(cls_name: str, *, task: str) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import xgboost

        X, y = make_data(seed, task=task, missing=True)
        if cls_name == "Booster":
            params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 3}
            params.update(nthread=1, seed=seed)
            model = xgboost.train(params, xgboost.DMatrix(X, y), num_boost_round=4)
        else:
            cls = getattr(xgboost, cls_name)
            model = cls(n_estimators=4, max_depth=3, n_jobs=1, random_state=seed)
            model.fit(X, y)
        return FittedCase(model, X, y, None, True)

    return factory


def _lightgbm_factory(cls_name: str, *, task: str) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import lightgbm

        X, y = make_data(seed, task=task, missing=True)
        params = {"num_leaves": 8, "min_child_samples": 5, "verbose": -1, "n_jobs": 1}
        if cls_name == "Booster":
            params.update(objective="regression", seed=seed)
            model = lightgbm.train(params, lightgbm.Dataset(X, y), num_boost_round=4)
        else:
            cls = getattr(lightgbm, cls_name)
            model = cls(n_estimators=4, random_state=seed, **params).fit(X, y)
        return FittedCase(model, X, y, None, True)

    return factory


def _catboost_factory(cls_name: str, *, task: str) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import catboost

        X, y = make_data(seed, task=task, missing=True)
        params = {"iterations": 4, "depth": 3, "verbose": 0, "thread_count": 1}
        params.update(random_seed=seed, allow_writing_files=False)
        if cls_name == "CatBoost":  # the generic class, as load_model gives it
            params.update(loss_function="MultiClass")
        cls = getattr(catboost, cls_name)
        model = cls(params) if cls_name == "CatBoost" else cls(**params)
        return FittedCase(model.fit(X, y), X, y, None, True)

    return factory


def _hist_factory(cls_name: str, *, task: str) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import sklearn.ensemble

        X, y = make_data(seed, task=task, missing=True)
        cls = getattr(sklearn.ensemble, cls_name)
        model = cls(max_iter=4, max_leaf_nodes=8, random_state=seed).fit(X, y)
        return FittedCase(model, X, y, None, True)

    return factory


def _log_link_factory(library: str, objective: str) -> Callable[..., FittedCase]:
    """A boosted regressor with a link: fitted on counts (``+ 1`` for gamma,
    whose targets must be positive), or on fractions in ``[0, 1]`` for the
    logistic link (``reg:logistic``, ``cross_entropy``)."""

    def factory(seed: int = 0) -> FittedCase:
        X, signal = make_data(seed, task="regression", missing=True)
        rng = np.random.default_rng(seed + 2)
        y = rng.poisson(np.exp(0.7 * signal)).astype(np.float64)
        if "gamma" in objective:
            y += 1.0
        if objective in ("reg:logistic", "cross_entropy"):
            y = 1.0 / (1.0 + np.exp(-signal))
        if library == "sklearn":
            import sklearn.ensemble

            model: Any = sklearn.ensemble.HistGradientBoostingRegressor(
                loss=objective, max_iter=4, max_leaf_nodes=8, random_state=seed
            )
        elif library == "xgboost":
            import xgboost

            model = xgboost.XGBRegressor(
                objective=objective,
                n_estimators=4,
                max_depth=3,
                n_jobs=1,
                random_state=seed,
            )
        else:
            import lightgbm

            model = lightgbm.LGBMRegressor(
                objective=objective,
                n_estimators=4,
                num_leaves=8,
                min_child_samples=5,
                verbose=-1,
                n_jobs=1,
                random_state=seed,
            )
        return FittedCase(model.fit(X, y), X, y, None, True)

    return factory


#: Boosted regressors with a link (predictions ``exp(raw)`` or the logistic
#: of ``raw``), beside the registry's one factory per supported model.
LOG_LINK_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "sklearn.HistGradientBoostingRegressor[poisson]": _log_link_factory(
        "sklearn", "poisson"
    ),
    "xgboost.XGBRegressor[reg:gamma]": _log_link_factory("xgboost", "reg:gamma"),
    "lightgbm.LGBMRegressor[tweedie]": _log_link_factory("lightgbm", "tweedie"),
    "xgboost.XGBRegressor[reg:logistic]": _log_link_factory("xgboost", "reg:logistic"),
}


#: Models predicted by another library than scikit-learn (compared with
#: ``library_predictions``).
NATIVE_BOOSTING_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "xgboost.Booster": _xgboost_factory("Booster", task="classification"),
    "xgboost.XGBClassifier": _xgboost_factory("XGBClassifier", task="classification"),
    "xgboost.XGBRegressor": _xgboost_factory("XGBRegressor", task="regression"),
    "xgboost.XGBRFClassifier": _xgboost_factory(
        "XGBRFClassifier", task="classification"
    ),
    "xgboost.XGBRFRegressor": _xgboost_factory("XGBRFRegressor", task="regression"),
    "lightgbm.Booster": _lightgbm_factory("Booster", task="regression"),
    "lightgbm.LGBMClassifier": _lightgbm_factory(
        "LGBMClassifier", task="classification"
    ),
    "lightgbm.LGBMRegressor": _lightgbm_factory("LGBMRegressor", task="regression"),
    "catboost.CatBoost": _catboost_factory("CatBoost", task="classification"),
    "catboost.CatBoostClassifier": _catboost_factory(
        "CatBoostClassifier", task="classification"
    ),
    "catboost.CatBoostRegressor": _catboost_factory(
        "CatBoostRegressor", task="regression"
    ),
    "xgboost.XGBRegressor[reg:gamma]": LOG_LINK_FACTORIES[
        "xgboost.XGBRegressor[reg:gamma]"
    ],
    "lightgbm.LGBMRegressor[tweedie]": LOG_LINK_FACTORIES[
        "lightgbm.LGBMRegressor[tweedie]"
    ],
    "xgboost.XGBRegressor[reg:logistic]": LOG_LINK_FACTORIES[
        "xgboost.XGBRegressor[reg:logistic]"
    ],
}
#: Boosting models whose trees store no impurity: MDI only held out, and
#: ``gain_importance``.
NO_IMPURITY_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    **NATIVE_BOOSTING_FACTORIES,
    "sklearn.HistGradientBoostingClassifier": _hist_factory(
        "HistGradientBoostingClassifier", task="classification"
    ),
    "sklearn.HistGradientBoostingRegressor": _hist_factory(
        "HistGradientBoostingRegressor", task="regression"
    ),
    "sklearn.HistGradientBoostingRegressor[poisson]": LOG_LINK_FACTORIES[
        "sklearn.HistGradientBoostingRegressor[poisson]"
    ],
}
MODEL_FACTORIES.update(NO_IMPURITY_FACTORIES)
#: Models without a target: no importance, their Forest predicting a score.
UNSUPERVISED_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "sklearn.IsolationForest": _isolation_factory,
}
MODEL_FACTORIES.update(UNSUPERVISED_FACTORIES)


def library_predictions(model: Any, X: NDArray[np.float64]) -> dict[str, Any]:
    """The source library's own ``predict``, ``predict_proba`` (None for
    regressors) and raw scores (None when not boosting) of ``model`` on ``X``."""
    name = type(model).__name__
    module = type(model).__module__.split(".")[0]
    if module == "sklearn" and name == "Pipeline":
        # The final model's own, on what the preprocessing gives it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return library_predictions(model[-1], model[:-1].transform(X))
    if module == "xgboost" and name == "Booster":
        import xgboost

        matrix = xgboost.DMatrix(X)
        proba = model.predict(matrix)
        raw = model.predict(matrix, output_margin=True)
        return {"predict": np.argmax(proba, axis=1), "proba": proba, "raw": raw}
    if module == "lightgbm" and name == "Booster":
        return {"predict": model.predict(X), "proba": None, "raw": model.predict(X)}
    if module == "catboost":
        from treelens._adapters._catboost import catboost_predict

        raw = model.predict(X, prediction_type="RawFormulaVal")
        classifier = np.ndim(raw) == 2 or type(model).__name__ != "CatBoostRegressor"
        proba = model.predict(X, prediction_type="Probability") if classifier else None
        return {"predict": catboost_predict(model, X), "proba": proba, "raw": raw}
    if name == "IsolationForest":
        # Its Forest predicts score_samples, -2 ** -raw.
        score = model.score_samples(X)
        return {"predict": score, "proba": None, "raw": -np.log2(-score)}
    proba = model.predict_proba(X) if hasattr(model, "predict_proba") else None
    if module == "xgboost":
        raw = model.predict(X, output_margin=True)
    elif module == "lightgbm":
        raw = model.predict(X, raw_score=True)
    elif name.startswith("GradientBoosting"):
        # scikit-learn's compiled stage loop reads float32, as its predict casts.
        raw = model._raw_predict(np.asarray(X, dtype=np.float32))
    elif name == "AdaBoostClassifier":
        raw = model.decision_function(X)
    elif hasattr(model, "_raw_predict"):
        raw = model._raw_predict(X)
    else:
        raw = None
    return {"predict": model.predict(X), "proba": proba, "raw": raw}


# ------------------------------------------------------ pipelines
EMPLOYMENT = ("salaried", "self-employed", "unemployed", "retired")
REGIONS = ("north", "south", "east", "west", "centre")


def make_mixed_data(
    seed: int, *, task: str, n_samples: int = N_SAMPLES
) -> tuple[Any, NDArray[Any]]:
    """A small synthetic table of loan applicants: numbers with missing values,
    strings with a missing value and a rare category, a boolean, a constant
    column and an identifier no model reads."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    income = rng.normal(50_000, 15_000, n_samples).round(2)
    age = rng.integers(18, 80, n_samples)
    employment = rng.choice(EMPLOYMENT, n_samples).astype(object)
    region = rng.choice(REGIONS, n_samples, p=[0.4, 0.3, 0.2, 0.07, 0.03])
    owner = rng.random(n_samples) < 0.5
    signal = (
        (income - 50_000) / 15_000
        + (employment == "unemployed") * -1.5
        + (employment == "self-employed") * 0.7
        + owner * 0.5
        + (age - 50) / 30
        + 0.3 * rng.normal(size=n_samples)
    )
    income[rng.random(n_samples) < 0.1] = np.nan
    employment[rng.random(n_samples) < 0.05] = None
    X = pd.DataFrame(
        {
            "income": income,
            "age": age,
            "employment": employment,
            "region": region.astype(object),
            "owner": owner,
            "constant": np.ones(n_samples),
            "id": [f"applicant-{i}" for i in range(n_samples)],
        }
    )
    if task == "classification":
        y: NDArray[Any] = (signal > np.median(signal)).astype(int)
    else:
        y = signal
    return X, y


def _one_hot_forest_pipeline(seed: int = 0) -> FittedCase:
    """One-hot (drop, infrequent, unknown ignored) + scaler + imputer + forest."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_selection import VarianceThreshold
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OneHotEncoder, RobustScaler, StandardScaler

    X, y = make_mixed_data(seed, task="classification")
    columns = ColumnTransformer(
        [
            ("income", make_pipeline(SimpleImputer(), StandardScaler()), ["income"]),
            (
                "categories",
                OneHotEncoder(
                    handle_unknown="infrequent_if_exist", min_frequency=6, drop="first"
                ),
                ["employment", "region"],
            ),
            ("age", RobustScaler(), ["age"]),
            ("id", "drop", ["id"]),
        ],
        remainder="passthrough",
    )
    model = Pipeline(
        [
            ("columns", columns),
            ("select", VarianceThreshold()),
            ("forest", RandomForestClassifier(5, max_depth=4, random_state=seed)),
        ]
    )
    return FittedCase(_fit_pipeline(model, X, y), X, y, None, True)


def _ordinal_boosting_pipeline(seed: int = 0) -> FittedCase:
    """Ordinal encoding (unknown and missing codes) + scalers + gradient boosting."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, OrdinalEncoder

    X, y = make_mixed_data(seed, task="regression")
    columns = ColumnTransformer(
        [
            (
                "ordinal",
                OrdinalEncoder(
                    handle_unknown="use_encoded_value",
                    unknown_value=-1,
                    encoded_missing_value=-2,
                ),
                make_column_selector(pattern="^(employment|region)$"),
            ),
            (
                "income",
                make_pipeline(SimpleImputer(strategy="median"), MinMaxScaler()),
                ["income"],
            ),
            ("age", MaxAbsScaler(), ["age"]),
        ],
        remainder="drop",
    )
    model = Pipeline(
        [
            ("columns", columns),
            (
                "boosting",
                GradientBoostingRegressor(
                    n_estimators=5, max_depth=3, random_state=seed
                ),
            ),
        ]
    )
    return FittedCase(_fit_pipeline(model, X, y), X, y, None, True)


def _indicator_bins_pipeline(seed: int = 0) -> FittedCase:
    """Missing indicators (numeric and categorical), ordinal bins and a target
    encoder + a forest, on a target that reads whether income is missing."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import (
        KBinsDiscretizer,
        OneHotEncoder,
        StandardScaler,
        TargetEncoder,
    )

    X, y = make_mixed_data(seed, task="classification")
    y = np.where(X["income"].isna() | X["employment"].isna(), 1 - y, y)
    columns = ColumnTransformer(
        [
            (
                "income",
                make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()),
                ["income"],
            ),
            (
                "employment",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent", add_indicator=True),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                ["employment"],
            ),
            ("region", TargetEncoder(random_state=seed), ["region"]),
            (
                "age",
                KBinsDiscretizer(
                    n_bins=5, encode="ordinal", quantile_method="averaged_inverted_cdf"
                ),
                ["age"],
            ),
        ],
        remainder="drop",
    )
    model = Pipeline(
        [
            ("columns", columns),
            ("forest", RandomForestClassifier(5, max_depth=5, random_state=seed)),
        ]
    )
    return FittedCase(_fit_pipeline(model, X, y), X, y, None, True)


def _fit_pipeline(model: Any, X: Any, y: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


#: Pipelines lifted to their input columns; ``X`` is a DataFrame of labels.
PIPELINE_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "sklearn.Pipeline": _one_hot_forest_pipeline,
    "sklearn.Pipeline[ordinal+boosting]": _ordinal_boosting_pipeline,
    "sklearn.Pipeline[indicators+bins+target]": _indicator_bins_pipeline,
}
MODEL_FACTORIES.update(PIPELINE_FACTORIES)


def predictions_or_refusals(predict: Callable[[Any], Any], X: Any) -> NDArray[Any]:
    """``predict`` of the rows of the frame ``X``, NaN where it refuses a row
    (a ``ValueError`` or ``TypeError``: scikit-learn's, or a treelens
    ``InputError``), each refused row found by halving the rows refused
    together: the reference for rows some of which a pipeline refuses."""
    out = np.full(len(X), np.nan)
    pending = [np.arange(len(X))]
    while pending:
        rows = pending.pop()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown categories
            try:
                out[rows] = np.asarray(predict(X.iloc[rows]), dtype=np.float64)
            except (ValueError, TypeError):
                if rows.size > 1:
                    pending += np.array_split(rows, 2)
    return out


def probe_frame(
    forest: Any, X: Any, seed: int = 0, *, missing: bool = True, unknown: bool = True
) -> Any:
    """Probe rows (as :func:`probe_inputs`) in the user's columns: numbers at,
    just below and just above every threshold, every category, a category the
    model never saw, and (with ``missing``) missing values."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = 3 * X.shape[0]
    codes = np.vstack([forest.encode(X)] * 3)
    out = {}
    for j, spec in enumerate(forest.features):
        column = X.iloc[:, j]
        if spec.dropped:
            out[spec.name] = np.resize(column.to_numpy(), n)
            continue
        if spec.is_categorical:
            k = spec.n_categories
            labels = list(spec.categories)
            unseen: Any = "never seen" if isinstance(labels[0], str) else 10**6
            pool = np.array([*labels, unseen], dtype=object)
            values = pool[rng.integers(0, k + 1 if unknown else k, n)]
            out[spec.name] = values
            continue
        values = codes[:, j].copy()
        thresholds = np.concatenate(
            [t.threshold[~t.is_leaf & (t.feature == j)] for t in forest.trees]
        )
        thresholds = thresholds[np.isfinite(thresholds)]
        if thresholds.size:
            pick = rng.choice(thresholds, n)
            step = rng.integers(-1, 2, n)
            moved = np.where(
                step < 0,
                np.nextafter(pick, -np.inf),
                np.where(step > 0, np.nextafter(pick, np.inf), pick),
            )
            use = rng.random(n) < 0.6
            values = np.where(use, moved, values)
        out[spec.name] = values
    frame = pd.DataFrame(out)
    for name in frame.columns:
        if X[name].dtype.kind == "b":
            frame[name] = frame[name].astype(float) > 0.5
        elif (
            X[name].dtype.kind in "iu" and not np.isnan(frame[name].astype(float)).any()
        ):
            frame[name] = frame[name].astype(float)
    if missing:
        for spec in forest.features:
            if (
                spec.dropped
                or X[spec.name].dtype.kind == "b"
                or spec.accepts_missing is False
            ):
                continue
            holes = rng.random(n) < 0.1
            column = frame[spec.name].to_numpy(dtype=object)
            column[holes] = np.nan
            frame[spec.name] = column
            if X[spec.name].dtype.kind in "fiu":
                frame[spec.name] = frame[spec.name].astype(float)
    return frame


# ------------------------------------------- native categorical splits
COLOURS = ("red", "green", "blue", "violet", "amber")
SIZES = (1, 3, 5, 8)


def make_categorical_frame(
    seed: int,
    *,
    task: str,
    n_samples: int = 200,
    colours: tuple[Any, ...] = COLOURS,
    sizes: tuple[Any, ...] = SIZES,
) -> tuple[Any, NDArray[Any]]:
    """A DataFrame with a number (missing values included), a string category
    and an integer category (pandas categorical dtypes, a missing colour too),
    and a target that depends on category sets."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n_samples)
    colour = rng.choice(np.array(colours, dtype=object), n_samples)
    size = rng.choice(np.array(sizes, dtype=object), n_samples)
    favoured = set(colours[::2])
    signal = (
        x
        + 1.5 * np.isin(colour, list(favoured))
        - 0.8 * (size == sizes[1])
        + 0.3 * rng.normal(size=n_samples)
    )
    x[rng.random(n_samples) < 0.1] = np.nan
    colour[rng.random(n_samples) < 0.05] = None
    frame = pd.DataFrame(
        {
            "x": x,
            "colour": pd.Categorical(colour, categories=list(colours)),
            "size": pd.Categorical(size, categories=list(sizes)),
        }
    )
    y: NDArray[Any] = (
        (signal > np.median(signal)).astype(int) if task == "classification" else signal
    )
    return frame, y


def probe_categorical_frame(
    X: Any,
    seed: int = 0,
    *,
    unknown: bool = True,
    missing: bool = True,
    n_samples: int = 300,
) -> Any:
    """Rows in ``X``'s columns: every category, a category never seen in training
    (with ``unknown``), missing values, numbers from ``X`` and random ones."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    out = {}
    for name in X.columns:
        column = X[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            labels = list(column.cat.categories)
            unseen: Any = "never seen" if isinstance(labels[0], str) else 10**6
            extra = [*([unseen] if unknown else []), *([None] if missing else [])]
            pool = np.array([*labels, *extra], dtype=object)
            values = pool[rng.integers(0, pool.size, n_samples)]
            categories = [*labels, *([unseen] if unknown else [])]
            out[name] = pd.Categorical(values, categories=categories)
        else:
            values = np.where(
                rng.random(n_samples) < 0.5,
                rng.choice(column.to_numpy(), n_samples),
                rng.normal(size=n_samples),
            )
            if missing:
                values[rng.random(n_samples) < 0.1] = np.nan
            out[name] = values
    return pd.DataFrame(out)


def _categorical_factory(
    library: str, cls_name: str, *, task: str, **params: Any
) -> Callable[..., FittedCase]:
    def factory(seed: int = 0) -> FittedCase:
        import importlib

        X, y = make_categorical_frame(seed, task=task)
        module = importlib.import_module(library)
        cls = getattr(module, cls_name)
        model = _fit(cls(**params), X, y)
        return FittedCase(model, X, y, None, True)

    return factory


def _catboost_categorical(seed: int = 0) -> FittedCase:
    """CatBoost with one-hot categorical features (CatBoost refuses missing
    categories: they are a category of their own here)."""
    import catboost

    X, y = make_categorical_frame(seed, task="classification")
    X["colour"] = X["colour"].cat.add_categories("none").fillna("none")
    model = catboost.CatBoostClassifier(
        iterations=6, depth=3, one_hot_max_size=16, cat_features=["colour", "size"],
        verbose=0, thread_count=1, random_seed=seed, allow_writing_files=False,
    )  # fmt: skip
    categories = {c: list(X[c].cat.categories) for c in ("colour", "size")}
    return FittedCase(model.fit(X, y), X, y, None, True, categories)


_LGB_CATEGORICAL = {"n_estimators": 6, "num_leaves": 6, "min_child_samples": 3}
_LGB_CATEGORICAL.update(min_data_per_group=3, cat_smooth=1.0, verbose=-1, n_jobs=1)
_XGB_CATEGORICAL = {"n_estimators": 6, "max_depth": 3, "enable_categorical": True}
_XGB_CATEGORICAL.update(tree_method="hist", n_jobs=1)

#: Models with the libraries' own categorical splits; ``X`` is a DataFrame with
#: pandas categorical columns.
NATIVE_CATEGORICAL_FACTORIES: dict[str, Callable[..., FittedCase]] = {
    "catboost.CatBoostClassifier[one-hot]": _catboost_categorical,
    "sklearn.HistGradientBoostingClassifier[categorical]": _categorical_factory(
        "sklearn.ensemble",
        "HistGradientBoostingClassifier",
        task="classification",
        max_iter=6,
        max_leaf_nodes=8,
        categorical_features="from_dtype",
    ),
    "sklearn.HistGradientBoostingRegressor[categorical]": _categorical_factory(
        "sklearn.ensemble",
        "HistGradientBoostingRegressor",
        task="regression",
        max_iter=6,
        max_leaf_nodes=8,
        categorical_features="from_dtype",
    ),
    "lightgbm.LGBMClassifier[categorical]": _categorical_factory(
        "lightgbm", "LGBMClassifier", task="classification", **_LGB_CATEGORICAL
    ),
    "lightgbm.LGBMRegressor[categorical]": _categorical_factory(
        "lightgbm", "LGBMRegressor", task="regression", **_LGB_CATEGORICAL
    ),
    "xgboost.XGBClassifier[categorical]": _categorical_factory(
        "xgboost",
        "XGBClassifier",
        task="classification",
        max_cat_to_onehot=1,
        **_XGB_CATEGORICAL,
    ),
    "xgboost.XGBRegressor[categorical, one-hot]": _categorical_factory(
        "xgboost",
        "XGBRegressor",
        task="regression",
        max_cat_to_onehot=16,
        **_XGB_CATEGORICAL,
    ),
}
