"""Missing indicators, ordinal bins and target encodings lifted to the
pipeline's input columns: every prediction equals the pipeline's own, at and
around every threshold and bin edge, with unknown categories and missing
values; a split on an indicator is a split on "is missing"."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import KNNImputer, MissingIndicator, SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    QuantileTransformer,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from tests.models import make_mixed_data, probe_frame
from treelens import InputError, UnsupportedModelError
from treelens._adapters._pipeline import pipeline_parts


def _fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, y)


def _quiet(method, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown categories
        return method(X)


def _assert_parity(model, X, probe=None):
    forest = treelens.to_forest(model)
    if probe is None:
        probe = probe_frame(forest, X)
    np.testing.assert_array_equal(forest.predict(probe), _quiet(model.predict, probe))
    if forest.is_classifier:
        np.testing.assert_allclose(
            forest.predict_proba(probe),
            _quiet(model.predict_proba, probe),
            rtol=0,
            atol=1e-12,
        )
    return forest


def _missing_data(seed, n_samples=300, task="classification"):
    """The loan table, its target reading whether income and employment are
    missing (so the trees split on the indicators)."""
    X, y = make_mixed_data(seed, task=task, n_samples=n_samples)
    X = X.drop(columns=["id", "constant"])
    flag = X["income"].isna().to_numpy() | X["employment"].isna().to_numpy()
    y = np.where(flag, 1 - y, y) if task == "classification" else y + 3.0 * flag
    return X, y


def _indicator_splits(forest, column):
    """Lifted splits on ``column`` whose numbers all go one way."""
    j = forest.feature_names.index(column)
    out = []
    for tree in forest.trees:
        split = (tree.children_left >= 0) & (tree.feature == j)
        if forest.features[j].is_categorical:
            table = tree.categorical_left[split, : forest.features[j].n_categories + 1]
            same = table.all(axis=1) | ~table.any(axis=1)
            out.append(
                np.column_stack([table[:, 0], tree.missing_go_left[split]])[same]
            )
        else:
            thresholds = tree.threshold[split]
            flagged = np.isinf(thresholds)
            out.append(
                np.column_stack(
                    [thresholds[flagged] > 0, tree.missing_go_left[split][flagged]]
                )
            )
    return np.vstack(out)


# ------------------------------------------------------------ missing indicators
def test_a_split_on_a_missing_indicator_is_a_split_on_is_missing():
    rng = np.random.default_rng(0)
    income = rng.normal(50.0, 10.0, 200)
    income[::4] = np.nan
    employment = rng.choice(["a", "b", "c"], 200).astype(object)
    employment[1::5] = None
    X = pd.DataFrame({"income": income, "employment": employment})
    for column, steps in [
        ("income", [SimpleImputer(strategy="median", add_indicator=True)]),
        (
            "employment",
            [
                SimpleImputer(strategy="most_frequent", add_indicator=True),
                OneHotEncoder(handle_unknown="ignore"),
            ],
        ),
    ]:
        y = X[column].isna().to_numpy().astype(int)
        columns = ColumnTransformer([("c", make_pipeline(*steps), [column])])
        model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=1)), X, y)
        tree = treelens.to_forest(model).trees[0]
        # The root reads the column: every number (category) goes one way, a
        # missing value the other.
        assert tree.feature[0] == list(X.columns).index(column)
        if column == "income":  # indicator <= 0.5: numbers go left
            assert tree.threshold[0] == np.inf and not tree.is_categorical[0]
            assert not tree.missing_go_left[0]
        else:  # a, b, c and a category never seen
            assert tree.is_categorical[0]
            side = tree.categorical_left[0, :4].tolist()
            assert side in ([True] * 4, [False] * 4)
            assert tree.missing_go_left[0] != side[0]
        rows = X.iloc[:8].copy()
        rows.loc[rows.index[:4], column] = np.nan
        _assert_parity(model, X, probe=rows)
        path = treelens.decision_path(model, rows.iloc[:1])
        assert f"{column} is missing" in path.sentences_[0]


_NUMERIC = ["income", "age"]
_CATEGORICAL = ["employment", "region"]


def _indicator_preprocessing():
    return {
        "imputer": ColumnTransformer(
            [("n", SimpleImputer(add_indicator=True), _NUMERIC)]
        ),
        "imputer+scaler": ColumnTransformer(
            [
                (
                    "n",
                    make_pipeline(
                        SimpleImputer(strategy="median", add_indicator=True),
                        StandardScaler(),
                        MinMaxScaler(),
                    ),
                    _NUMERIC,
                )
            ]
        ),
        "imputer+one-hot": ColumnTransformer(
            [
                ("n", SimpleImputer(add_indicator=True), _NUMERIC),
                (
                    "c",
                    make_pipeline(
                        SimpleImputer(strategy="most_frequent", add_indicator=True),
                        OneHotEncoder(handle_unknown="ignore", drop="if_binary"),
                    ),
                    _CATEGORICAL,
                ),
            ]
        ),
        "imputer+ordinal": ColumnTransformer(
            [
                ("n", SimpleImputer(strategy="constant", fill_value=-1.0), _NUMERIC),
                (
                    "c",
                    make_pipeline(
                        SimpleImputer(
                            strategy="constant", fill_value="none", add_indicator=True
                        ),
                        OrdinalEncoder(
                            handle_unknown="use_encoded_value", unknown_value=-1
                        ),
                    ),
                    _CATEGORICAL,
                ),
            ]
        ),
        "missing-indicator": ColumnTransformer(
            [
                ("n", SimpleImputer(), _NUMERIC),
                ("m", MissingIndicator(features="all"), ["income", "employment"]),
                (
                    "c",
                    OneHotEncoder(handle_unknown="ignore"),
                    ["employment", "region"],
                ),
            ]
        ),
        "indicator-alone": ColumnTransformer(
            [
                ("m", MissingIndicator(error_on_new=False), _NUMERIC),
                ("a", "passthrough", ["age"]),
            ]
        ),
    }


def _boosting(library):
    module = pytest.importorskip(library)
    if library == "xgboost":
        return module.XGBClassifier(n_estimators=6, max_depth=3, random_state=0)
    return module.LGBMClassifier(n_estimators=6, num_leaves=8, verbose=-1)


@pytest.mark.parametrize("preprocessing", sorted(_indicator_preprocessing()))
@pytest.mark.parametrize(
    "final",
    [
        lambda: RandomForestClassifier(8, max_depth=6, random_state=0),
        lambda: HistGradientBoostingClassifier(max_iter=8, max_depth=4, random_state=0),
        lambda: _boosting("xgboost"),
        lambda: _boosting("lightgbm"),
    ],
    ids=["forest", "hist-boosting", "xgboost", "lightgbm"],
)
def test_missing_indicators_predict_as_the_pipeline(preprocessing, final):
    X, y = _missing_data(1)
    final = final()
    steps = _indicator_preprocessing()[preprocessing]
    model = _fit(make_pipeline(steps, final), X, y)
    forest = _assert_parity(model, X)
    names = list(model[:-1].get_feature_names_out())
    parts = pipeline_parts(model)
    inner = treelens.to_forest(model[-1])
    total = 0
    for column in ("income", "employment"):
        indicator = [i for i, n in enumerate(names) if f"indicator_{column}" in n]
        # An indicator's columns are its input column's: attributions sum there.
        j = list(X.columns).index(column)
        assert parts.source[indicator].tolist() == [j] * len(indicator)
        # Each split on an indicator sends every number (category) of the column
        # one way and its missing value the other way.
        read = sum(
            int(np.isin(t.feature[t.children_left >= 0], indicator).sum())
            for t in inner.trees
        )
        flagged = _indicator_splits(forest, column)
        # (A one-hot column of an encoder's own missing category is one more.)
        assert len(flagged) >= read
        assert (flagged[:, 0] != flagged[:, 1]).all()
        total += read
    assert total or not isinstance(final, RandomForestClassifier)


def test_a_column_only_its_indicator_reads_is_presence_only_of_any_dtype():
    X, y = _missing_data(2)
    columns = ColumnTransformer(
        [("m", MissingIndicator(error_on_new=False), ["income", "employment"])],
        remainder="drop",
    )
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=2)), X, y)
    forest = treelens.to_forest(model)
    for name in ("income", "employment"):
        spec = forest.features[list(X.columns).index(name)]
        assert spec.presence_only and spec.accepts_missing and not spec.dropped
    # Text is read as present, as the pipeline reads it: the labels themselves,
    # labels never seen, and numbers in their place all predict as it does.
    probe = pd.concat(
        [X, X.assign(employment=X["employment"].where(X["employment"].isna(), "new"))],
        ignore_index=True,
    )
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))
    numbers = X.assign(employment=np.where(X["employment"].isna(), np.nan, 1.0))
    np.testing.assert_array_equal(forest.predict(numbers), model.predict(numbers))
    assert "employment is missing" in " ".join(
        treelens.decision_path(model, X[X["employment"].isna()].iloc[:1]).sentences_
    )


def test_an_imputed_column_dropped_but_for_its_indicator_is_presence_only():
    # The imputed text column is dropped by a later selection; its indicator
    # alone reaches the model.
    X, y = _missing_data(5)
    text = make_pipeline(
        SimpleImputer(strategy="most_frequent", add_indicator=True),
        ColumnTransformer([("flag", "passthrough", [1])]),
    )
    columns = ColumnTransformer([("t", text, ["employment"])])
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=2)), X, y)
    assert model[:-1].transform(X).shape[1] == 1
    forest = treelens.to_forest(model)
    spec = forest.features[list(X.columns).index("employment")]
    assert spec.presence_only and spec.kind == "numeric"
    probe = X.assign(employment=X["employment"].where(X.index % 3 > 0, "unseen"))
    np.testing.assert_array_equal(forest.predict(probe), model.predict(probe))
    assert np.unique(model.predict(X)).size == 2  # the indicator is read


# scikit-learn's own imputer says, at each transform, that it drops the column.
@pytest.mark.filterwarnings("ignore:Skipping features without any observed values")
def test_an_imputer_dropping_an_empty_column_keeps_its_indicator():
    X, y = _missing_data(3)
    X["empty"] = np.nan
    model = _fit(
        make_pipeline(
            ColumnTransformer(
                [
                    (
                        "n",
                        SimpleImputer(add_indicator=True),
                        ["income", "empty", "age"],
                    )
                ]
            ),
            RandomForestRegressor(5, max_depth=5, random_state=0),
        ),
        X,
        y,
    )
    assert model[:-1].transform(X).shape[1] == 4  # income, age; 2 indicators
    forest = _assert_parity(model, X)
    assert forest.features[list(X.columns).index("empty")].kind == "numeric"


def test_a_missing_indicator_refusing_new_missing_values_is_named():
    X, y = _missing_data(4)
    columns = ColumnTransformer([("m", MissingIndicator(), ["income", "age"])])
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=2)), X, y)
    with pytest.raises(ValueError):  # the pipeline itself refuses a missing age
        model.predict(X.assign(age=np.nan))
    with pytest.raises(
        UnsupportedModelError,
        match=r"'columntransformer/m' \(MissingIndicator\) refuses missing values "
        r"in its input columns \[1\].*error_on_new=False",
    ):
        treelens.to_forest(model)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rate=st.floats(0.05, 0.6),
    strategy=st.sampled_from(["mean", "median", "most_frequent", "constant"]),
)
def test_random_missing_patterns_predict_as_the_pipeline(seed, rate, strategy):
    rng = np.random.default_rng(seed)
    n = 150
    X = pd.DataFrame(rng.normal(size=(n, 3)).round(1), columns=["a", "b", "c"])
    X["k"] = rng.choice(["x", "y", "z"], n).astype(object)
    holes = rng.random((n, 4)) < rate
    holes[:2] = False  # every column keeps a value
    X = X.mask(holes)
    y = (X["a"].fillna(0) + holes[:, 1] - holes[:, 3] > rng.normal(size=n)).astype(int)
    columns = ColumnTransformer(
        [
            (
                "n",
                make_pipeline(
                    SimpleImputer(strategy=strategy, add_indicator=True),
                    StandardScaler(),
                ),
                ["a", "b", "c"],
            ),
            (
                "k",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent", add_indicator=True),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                ["k"],
            ),
        ]
    )
    model = _fit(
        make_pipeline(columns, RandomForestClassifier(4, random_state=seed)), X, y
    )
    _assert_parity(model, X)


# ------------------------------------------------------------------ ordinal bins
def test_a_bin_threshold_is_the_last_value_below_the_edge():
    # scikit-learn bins with searchsorted(edges[1:-1], x, side="right"): a value
    # equal to an edge belongs to the bin above it.
    X = pd.DataFrame({"x": np.linspace(0.0, 4.0, 81)})
    y = (X["x"] >= 2.0).astype(int)
    bins = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="uniform")
    model = _fit(make_pipeline(bins, DecisionTreeClassifier(max_depth=1)), X, y)
    np.testing.assert_array_equal(model[0].bin_edges_[0], [0.0, 1.0, 2.0, 3.0, 4.0])
    tree = treelens.to_forest(model).trees[0]
    assert tree.threshold[0] == np.nextafter(2.0, -np.inf)
    rows = pd.DataFrame({"x": [np.nextafter(2.0, -np.inf), 2.0, -50.0, 50.0]})
    np.testing.assert_array_equal(model.predict(rows), [0, 1, 0, 1])
    _assert_parity(model, X, probe=rows)


def _edge_probe(X, edges_of, dtype):
    """Rows at, just below and just above every bin edge of every binned column
    (and of the edge cast to ``dtype``), the other columns from the data."""
    rows = []
    for name, edges in edges_of.items():
        edges = np.asarray(edges, dtype=np.float64)
        wide = edges.astype(dtype).astype(np.float64)
        values = np.concatenate(
            [v for e in (edges, wide) for v in (e, np.nextafter(e, -np.inf),
                                                np.nextafter(e, np.inf))]
        )  # fmt: skip
        block = X.iloc[np.arange(values.size) % len(X)].copy()
        block[name] = values
        rows.append(block)
    return pd.concat(rows, ignore_index=True)


def _binned_model(strategy, dtype, final, X, y):
    def bins():
        return KBinsDiscretizer(
            n_bins=7,
            encode="ordinal",
            strategy=strategy,
            dtype=dtype,
            quantile_method="averaged_inverted_cdf",
        )

    columns = ColumnTransformer(
        [
            ("age", bins(), ["age"]),
            # Bins of the imputed income and of its indicator (0 or 1).
            (
                "income",
                make_pipeline(SimpleImputer(add_indicator=True), bins()),
                ["income"],
            ),
        ]
    )
    model = _fit(make_pipeline(columns, final), X, y)
    named = model[0].named_transformers_
    edges_of = {
        "age": named["age"].bin_edges_[0],
        "income": named["income"][-1].bin_edges_[0],
    }
    return model, edges_of


@pytest.mark.parametrize(
    "strategy", ["uniform", "quantile", "kmeans"], ids=lambda s: f"strategy={s}"
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    "final",
    [
        DecisionTreeRegressor(max_depth=6, random_state=0),
        GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0),
    ],
    ids=lambda m: type(m).__name__,
)
def test_bins_predict_as_the_pipeline_at_and_around_every_edge(strategy, dtype, final):
    X, y = _missing_data(5, task="regression")
    X["income"] = X["income"] / 1000.0 + 1e-3  # edges that are no round numbers
    model, edges_of = _binned_model(strategy, dtype, final, X, y)
    forest = _assert_parity(model, X, probe=_edge_probe(X, edges_of, dtype))
    _assert_parity(model, X)
    # Every finite lifted threshold is the last value below an edge, after the
    # step's cast: cast(t) < edge <= cast(next(t)).
    for name, edges in edges_of.items():
        j = forest.feature_names.index(name)
        t = np.concatenate(
            [tree.threshold[(tree.children_left >= 0) & (tree.feature == j)]
             for tree in forest.trees]
        )  # fmt: skip
        t = t[np.isfinite(t)]
        assert t.size
        low = t.astype(dtype).astype(np.float64)[:, None]
        high = np.nextafter(t, np.inf).astype(dtype).astype(np.float64)[:, None]
        edges = np.asarray(edges, dtype=np.float64)[None, 1:-1]
        assert ((low < edges) & (edges <= high)).any(axis=1).all()


def test_a_missing_value_binned_without_an_imputer_is_refused_as_the_pipeline_does():
    X, y = _missing_data(6, task="regression")
    X["income"] = X["income"].fillna(50_000.0)
    bins = KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="uniform")
    model = _fit(
        make_pipeline(
            ColumnTransformer([("b", bins, ["income", "age"])]),
            DecisionTreeRegressor(max_depth=4, random_state=0),
        ),
        X,
        y,
    )
    forest = _assert_parity(model, X, probe=X)
    rows = X.iloc[:3].assign(income=np.nan)
    with pytest.raises(ValueError):
        model.predict(rows)
    with pytest.raises(InputError, match="NaN .*'income'"):
        forest.predict(rows)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_bins=st.integers(2, 12),
    strategy=st.sampled_from(["uniform", "quantile", "kmeans"]),
    scale=st.sampled_from([1e-3, 1.0, 1e6]),
)
def test_random_bins_predict_as_the_pipeline_at_every_edge(
    seed, n_bins, strategy, scale
):
    rng = np.random.default_rng(seed)
    n = 120
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n) * scale,
            "b": rng.exponential(size=n).round(2),
            "c": rng.integers(0, 5, n).astype(float),
        }
    )
    y = np.sin(X["a"] / scale) + X["b"] - X["c"] + 0.1 * rng.normal(size=n)
    bins = KBinsDiscretizer(
        n_bins=n_bins,
        encode="ordinal",
        strategy=strategy,
        quantile_method="averaged_inverted_cdf",
    )
    model = _fit(make_pipeline(bins, RandomForestRegressor(4, random_state=seed)), X, y)
    edges_of = dict(zip(X.columns, model[0].bin_edges_))
    probe = _edge_probe(X, edges_of, np.float64)
    noise = X.sample(40, replace=True, random_state=seed) * (
        1 + rng.normal(size=(40, 3)) * 1e-3
    )
    _assert_parity(model, X, probe=pd.concat([probe, noise], ignore_index=True))


@pytest.mark.parametrize("encode", ["onehot", "onehot-dense"])
def test_bins_encoded_one_hot_are_refused_naming_the_step(encode):
    X, y = _missing_data(7, task="regression")
    bins = KBinsDiscretizer(n_bins=4, encode=encode, strategy="uniform")
    model = _fit(
        make_pipeline(
            ColumnTransformer([("b", bins, ["age"])]), DecisionTreeRegressor()
        ),
        X,
        y,
    )
    with pytest.raises(
        UnsupportedModelError,
        match=rf"'columntransformer/b' \(KBinsDiscretizer\) encodes its bins with "
        rf"encode='{encode}'.*expected encode='ordinal'.*pipeline\[-1\]",
    ):
        treelens.to_forest(model)


# ------------------------------------------------------------- target encodings
def test_a_threshold_on_a_target_encoding_is_a_set_of_categories():
    rng = np.random.default_rng(8)
    n = 400
    region = rng.choice(["north", "south", "east", "west", None], n).astype(object)
    rate = {"north": 0.2, "south": 0.8, "east": 0.5, "west": 0.65, None: 0.9}
    y = (rng.random(n) < np.array([rate[r] for r in region])).astype(int)
    X = pd.DataFrame({"region": region})
    encoder = TargetEncoder(random_state=0)
    model = _fit(make_pipeline(encoder, DecisionTreeClassifier(max_depth=1)), X, y)
    threshold = model[-1].tree_.threshold[0]
    # scikit-learn's transform: encodings_ per category (NaN is one, as it was
    # seen), target_mean_ for a category never seen; the tree compares float32.
    labels = list(encoder.categories_[0])
    known = [c for c in labels if not pd.isna(c)]
    encoding = dict(zip(map(str, labels), encoder.encodings_[0]))
    goes_left = [np.float32(encoding[c]) <= threshold for c in known]
    goes_left.append(np.float32(encoder.target_mean_) <= threshold)
    forest = treelens.to_forest(model)
    tree = forest.trees[0]
    assert tree.is_categorical[0]
    assert forest.features[0].categories == tuple(known)
    assert tree.categorical_left[0].tolist() == goes_left
    assert tree.missing_go_left[0] == (np.float32(encoding["nan"]) <= threshold)
    probe = pd.DataFrame({"region": [*known, "never seen", None, np.nan]})
    _assert_parity(model, X, probe=probe)


@pytest.mark.parametrize("target", ["binary", "multiclass", "continuous"])
@pytest.mark.parametrize("labels", ["strings", "integers"])
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "with-missing"])
def test_target_encodings_predict_as_the_pipeline(target, labels, missing):
    X, y = _missing_data(9, task="regression")
    if target == "binary":
        y = (y > np.median(y)).astype(int)
    elif target == "multiclass":
        y = np.digitize(y, np.quantile(y, [0.3, 0.7]))
    if labels == "integers":  # labels, not codes 0 .. k - 1
        codes = {"north": 13, "south": 3, "east": 23, "west": 33, "centre": 43}
        X["region"] = X["region"].map(codes).astype(int)
    if not missing:
        X["employment"] = X["employment"].fillna("salaried")
    if target == "continuous":
        final = RandomForestRegressor(6, max_depth=6, random_state=0)
    else:
        final = RandomForestClassifier(6, max_depth=6, random_state=0)
    columns = ColumnTransformer(
        [
            ("target", TargetEncoder(random_state=0), ["employment", "region"]),
            ("n", SimpleImputer(), ["income", "age"]),
        ]
    )
    model = _fit(make_pipeline(columns, final), X, y)
    forest = _assert_parity(model, X)
    assert [s.kind for s in forest.features[2:4]] == ["categorical"] * 2
    parts = pipeline_parts(model)
    width = len(np.unique(y)) if target == "multiclass" else 1
    assert parts.source.tolist() == [2] * width + [3] * width + [0, 1]


def test_an_encoder_refusing_an_indicator_refuses_the_columns_missing_values():
    # "b" was complete when fitted: its indicator's encoder knows only False, so
    # the pipeline refuses a missing "b" (and nothing else).
    X, y = _missing_data(10)
    X = X[["income", "age"]]
    indicator = make_pipeline(MissingIndicator(features="all"), OneHotEncoder())
    columns = ColumnTransformer(
        [("m", indicator, ["income", "age"]), ("n", SimpleImputer(), ["age"])]
    )
    model = _fit(make_pipeline(columns, DecisionTreeClassifier(max_depth=4)), X, y)
    forest = _assert_parity(model, X)
    assert [s.accepts_missing for s in forest.features] == [True, False]
    rows = X.iloc[:3].assign(age=np.nan)
    with pytest.raises(ValueError):
        model.predict(rows)
    with pytest.raises(InputError, match="NaN .*'age'"):
        forest.predict(rows)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_categories=st.integers(2, 9),
    target=st.sampled_from(["binary", "multiclass", "continuous"]),
    rate=st.floats(0.0, 0.3),
    smooth=st.sampled_from(["auto", 0.0, 5.0]),
)
def test_random_target_encodings_predict_as_the_pipeline(
    seed, n_categories, target, rate, smooth
):
    rng = np.random.default_rng(seed)
    n = 200
    labels = np.array([f"c{i}" for i in range(n_categories)], dtype=object)
    X = pd.DataFrame(
        {
            "k": rng.choice(labels, n),
            "m": rng.choice(labels[:3], n),
            "x": rng.normal(size=n).round(2),
        }
    )
    X["k"] = X["k"].mask(rng.random(n) < rate)
    effect = rng.normal(size=n_categories)
    score = effect[X["k"].fillna("c0").str[1:].astype(int)] + X["x"]
    score = score + rng.normal(size=n) * 0.3
    if target == "binary":
        y, final = (score > 0).astype(int), RandomForestClassifier(5, random_state=seed)
    elif target == "multiclass":
        y = np.digitize(score, np.quantile(score, [0.3, 0.6]))
        final = RandomForestClassifier(5, random_state=seed)
    else:
        y, final = score, RandomForestRegressor(5, random_state=seed)
    encoder = TargetEncoder(smooth=smooth, random_state=seed)
    columns = ColumnTransformer(
        [("t", encoder, ["k", "m"]), ("x", "passthrough", ["x"])]
    )
    model = _fit(make_pipeline(columns, final), X, y)
    probe = pd.concat(
        [X, X.iloc[:4].assign(k=["never seen", None, np.nan, "c0"])],
        ignore_index=True,
    )
    _assert_parity(model, X, probe=probe)


# ---------------------------------------------------------------------- refusals
def _refused_cases():
    n = ["income", "age"]
    return {
        "knn-imputer": (KNNImputer(), n, r"'knnimputer' \(KNNImputer\) cannot be"),
        "spline": (
            make_pipeline(SimpleImputer(), SplineTransformer(n_knots=3)),
            n,
            r"'pipeline/splinetransformer' \(SplineTransformer\) cannot be",
        ),
        "quantile": (
            make_pipeline(SimpleImputer(), QuantileTransformer(n_quantiles=20)),
            n,
            r"'pipeline/quantiletransformer' \(QuantileTransformer\) cannot be",
        ),
        "indicator-of-codes": (
            make_pipeline(
                OrdinalEncoder(encoded_missing_value=np.nan), MissingIndicator()
            ),
            ["employment"],
            r"'pipeline/missingindicator' \(MissingIndicator\) marks missing",
        ),
        "binned-codes": (
            make_pipeline(OrdinalEncoder(), KBinsDiscretizer(3, encode="ordinal")),
            ["region"],
            r"'pipeline/kbinsdiscretizer' \(KBinsDiscretizer\) bins an encoded",
        ),
        "indicator-of-zeros": (
            SimpleImputer(missing_values=0.0, add_indicator=True),
            ["age"],
            (
                r"'simpleimputer' \(SimpleImputer, missing_values=0.0\) reads 0.0 "
                r"as missing in column 'age'"
            ),
        ),
    }


@pytest.mark.parametrize("case", sorted(_refused_cases()))
def test_steps_that_cannot_be_lifted_are_refused_naming_the_step(case):
    X, y = _missing_data(11)
    step, columns, message = _refused_cases()[case]
    model = _fit(
        make_pipeline(step, DecisionTreeClassifier(max_depth=3)), X[columns], y
    )
    with pytest.raises(UnsupportedModelError, match=rf"{message}.*pipeline\[-1\]"):
        treelens.to_forest(model)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    scaler=st.sampled_from(["standard", "min-max", "clipped"]),
    dtype=st.sampled_from([np.float64, np.float32]),
    strategy=st.sampled_from(["uniform", "quantile", "kmeans"]),
)
def test_bins_of_imputed_scaled_columns_predict_as_the_pipeline(
    seed, scaler, dtype, strategy
):
    # Imputer, scaler and bins composed: parity at, just below and just above
    # every lifted threshold, and at every bin edge mapped back through the
    # scaler's own inverse (then its float64 neighbours).
    X, y = _missing_data(seed % 50, n_samples=200, task="regression")
    X = X[["income", "age"]]
    scale = {
        "standard": StandardScaler(),
        "min-max": MinMaxScaler(),
        "clipped": MinMaxScaler(feature_range=(-1, 1), clip=True),
    }[scaler]
    bins = KBinsDiscretizer(
        n_bins=6,
        encode="ordinal",
        strategy=strategy,
        dtype=dtype,
        quantile_method="averaged_inverted_cdf",
    )
    steps = make_pipeline(SimpleImputer(add_indicator=True), scale, bins)
    model = _fit(
        make_pipeline(steps, RandomForestRegressor(4, random_state=seed)), X, y
    )
    _assert_parity(model, X)
    fitted_scaler, fitted_bins = model[0][1], model[0][2]
    inner = fitted_bins.bin_edges_[:2]
    width = max(len(e) for e in inner)
    edges = np.column_stack([np.resize(e, width) for e in inner])
    indicators = np.zeros((width, fitted_scaler.n_features_in_ - 2))
    raw = fitted_scaler.inverse_transform(np.column_stack([edges, indicators]))
    raw = raw[:, :2]
    near = [np.nextafter(raw, -np.inf), raw, np.nextafter(raw, np.inf)]
    probe = pd.DataFrame(np.vstack(near), columns=["income", "age"])
    _assert_parity(model, X, probe=probe)
