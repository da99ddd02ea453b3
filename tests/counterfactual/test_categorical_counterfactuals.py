"""Counterfactuals over categorical columns, pipelines and missing values."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import treelens
from tests.categorical_forests import FEATURES, random_codes, random_forest
from tests.models import PIPELINE_FACTORIES
from treelens import Constraints, InputError, feature_tweak, optimal_counterfactual
from treelens._counterfactual._categorical import fixed_forest
from treelens._counterfactual._milp._program import forest_program
from treelens._counterfactual._milp._solve import price_cells
from treelens._counterfactual._problem import (
    CounterfactualCheckWarning,
    prepare_problem,
)


def _targets(forest, model, X):
    if forest.is_classifier:
        return ["other", forest.classes_[-1]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [(float(np.quantile(model.predict(X), 0.75)), None)]


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_pipeline_counterfactuals_are_valid_frames(name):
    case = PIPELINE_FACTORIES[name]()
    forest = treelens.to_forest(case.model)
    rows = case.X.iloc[:5]
    for target in _targets(forest, case.model, case.X):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            # finish() confirms every answer with the pipeline's own predict.
            warnings.simplefilter("error", CounterfactualCheckWarning)
            tweak = feature_tweak(
                case.model, rows, target=target, cost="l1", reference=case.X
            )
            exact = optimal_counterfactual(
                case.model, rows, target=target, cost="l1", reference=case.X
            )
        for result in (tweak, exact):
            assert isinstance(result.X_cf_, pd.DataFrame)
            assert list(result.X_cf_.columns) == list(case.X.columns)
            found = result.found_
            same = result.X_cf_[found].dtypes == rows[found].dtypes
            assert same[["age", "owner"]].all()
            # Categories stay categories of the model; missing values stay missing.
            for column in ("employment", "region"):
                cf = result.X_cf_.loc[found, column]
                spec = forest.features[forest.feature_names.index(column)]
                assert set(cf.dropna()) <= set(spec.categories) | set(rows[column])
            assert (result.missing_ == rows.isna().to_numpy()).all()
            kept = result.missing_[found] & result.X_cf_[found].isna().to_numpy()
            assert (kept == result.missing_[found]).all()
        assert (exact.found_ >= tweak.found_).all()
        assert (
            exact.cost_[tweak.found_] <= tweak.cost_[tweak.found_] * (1 + 1e-6) + 1e-12
        ).all()


def test_changes_and_frame_speak_in_labels():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    rows = case.X.iloc[:6]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = feature_tweak(case.model, rows, target="other", cost="l1")
    frame = result.to_frame()
    categorical = frame[frame.feature.isin(["employment", "region"])]
    assert len(categorical)
    assert categorical["after"].map(type).eq(str).all()
    assert categorical["delta"].isna().all()
    i = int(frame.row.iloc[0])
    assert all(isinstance(name, str) for name, _, _ in result.changes(i))


def test_category_cost_and_allowed_constraint():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    rows = case.X.iloc[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cheap = feature_tweak(case.model, rows, target="other", cost="l1")
        dear = feature_tweak(
            case.model, rows, target="other", cost="l1", category_cost=100.0
        )
        allowed = optimal_counterfactual(
            case.model, rows, target="other", cost="l1",
            constraints=Constraints(allowed={"employment": ["salaried", "retired"]}),
        )  # fmt: skip
        frozen = optimal_counterfactual(
            case.model, rows, target="other", cost="l1",
            constraints=Constraints(immutable=["employment", "region"]),
        )  # fmt: skip
    changed = cheap.X_cf_["employment"] != rows["employment"]
    assert changed[cheap.found_].any()
    assert (dear.cost_[dear.found_] >= cheap.cost_[dear.found_] - 1e-9).all()
    found = allowed.found_
    assert set(allowed.X_cf_.loc[found, "employment"]) <= {"salaried", "retired"}
    same = frozen.X_cf_.loc[frozen.found_, ["employment", "region"]]
    pd.testing.assert_frame_equal(
        same, rows.loc[frozen.found_, ["employment", "region"]], check_dtype=False
    )
    with pytest.raises(InputError, match="'employment' include 'astronaut'"):
        feature_tweak(
            case.model, rows, target="other",
            constraints=Constraints(allowed={"employment": ["astronaut"]}),
        )  # fmt: skip
    with pytest.raises(InputError, match="`allowed` applies to categorical.*'age'"):
        feature_tweak(
            case.model, rows, target="other",
            constraints=Constraints(allowed={"age": [30]}),
        )  # fmt: skip


def test_status_gap_and_reason_agree_with_the_numeric_search():
    # Over categories a row already at the target had status "optimal" with
    # gap inf, and a proven infeasible row gap inf where the numeric search
    # states NaN.
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    rows = case.X.iloc[:8]
    predicted = case.model.predict(rows)
    target = predicted[0]
    at = predicted == target
    assert at.any() and not at.all()
    frozen = Constraints(immutable=list(case.X.columns))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        free = optimal_counterfactual(case.model, rows, target=target, cost="l1")
        none = optimal_counterfactual(
            case.model, rows, target=target, cost="l1", constraints=frozen
        )
    assert (free.status_ == "optimal").all() and (free.gap_ == 0).all()
    assert (none.status_[at] == "optimal").all() and (none.gap_[at] == 0).all()
    assert (none.status_[~at] == "infeasible").all()
    assert np.isnan(none.gap_[~at]).all()
    assert set(none.reason_[~at]) == {
        "infeasible: no change reaches the target under the constraints"
    }


def test_an_empty_allowed_set_is_refused():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    empty = Constraints(allowed={"employment": []})
    for search in (feature_tweak, optimal_counterfactual):
        with pytest.raises(InputError, match="allowed categories of 'employment' are"):
            search(case.model, case.X.iloc[:2], target="other", constraints=empty)


@pytest.mark.parametrize(
    "keywords",
    [
        {"bounds": {"employment": (0, 1)}},
        {"integer": ["employment"]},
        {"increase_only": ["region"]},
    ],
)
def test_numeric_constraints_on_a_categorical_column_are_refused(keywords):
    # Bounds on a categorical column were dropped without a word.
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    name = next(iter(keywords.values()))
    name = next(iter(name))
    for search in (feature_tweak, optimal_counterfactual):
        with pytest.raises(InputError, match=f"{name!r} is categorical"):
            search(
                case.model, case.X.iloc[:2], target="other",
                constraints=Constraints(**keywords),
            )  # fmt: skip


def test_per_pair_category_costs():
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    rows = case.X.iloc[:8]
    table = {("unemployed", "salaried"): 0.25, ("salaried", "unemployed"): 0.25}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = optimal_counterfactual(
            case.model, rows, target="other", cost="l1",
            category_cost={"employment": table, "region": 50.0},
        )  # fmt: skip
    for i in np.flatnonzero(result.found_):
        before, after = rows["employment"].iloc[i], result.X_cf_["employment"].iloc[i]
        if before != after and (before, after) in table:
            assert result.cost_[i] >= 0.25
    with pytest.raises(InputError, match="category_cost.*'age'"):
        feature_tweak(case.model, rows, target="other", category_cost={"age": 2})


def test_missing_values_stay_missing_for_models_routing_them():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
    rows = X[np.isnan(X).any(axis=1)][:6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        result = optimal_counterfactual(model, rows, target="other", cost="l1")
        tweak = feature_tweak(model, rows, target="other", cost="l1")
    assert result.found_.all()
    missing = np.isnan(rows)
    assert (np.isnan(result.X_cf_)[missing]).all()
    assert (result.missing_ == missing).all()
    assert (
        result.cost_[tweak.found_] <= tweak.cost_[tweak.found_] * (1 + 1e-6) + 1e-12
    ).all()


# ------------------------------------------------------- brute force
def _classifier(rng, depth):
    forest = random_forest(rng, n_trees=3, max_depth=depth)
    return forest


def _brute_force(forest, x, target):
    """Least l1 + category changes over every numeric cell and every category."""
    cats = [j for j, s in enumerate(FEATURES) if s.is_categorical]
    numeric = [j for j, s in enumerate(FEATURES) if not s.is_categorical]
    sub = fixed_forest(forest, tuple((j, 0.0) for j in cats))
    problem = prepare_problem(
        sub, x[None, :], target=target, cost="l1", epsilon=0.0,
        constraints=Constraints(immutable=cats), reference=None,
    )  # fmt: skip
    program = forest_program(sub)
    lo, hi = problem.constraints.feasible_intervals(problem.X)
    points, _ = price_cells(
        program, problem.X[0], lo[0], hi[0], problem.constraints.integer,
        problem.epsilon, problem.cost.terms,
    )  # fmt: skip
    numeric_cells = [
        points[program.cell_offsets[j] : program.cell_offsets[j + 1]] for j in numeric
    ]
    codes = [range(FEATURES[j].n_categories) for j in cats]
    best = np.inf
    current = forest.predict(x[None, :])
    for combo in itertools.product(*numeric_cells, *codes):
        candidate = x.copy()
        candidate[numeric] = combo[: len(numeric)]
        candidate[cats] = combo[len(numeric) :]
        if not np.isfinite(candidate).all():
            continue
        predicted = forest.predict(candidate[None, :])
        if not problem.target.meets(predicted, current)[0]:
            continue
        cost = np.abs(candidate[numeric] - x[numeric]).sum()
        cost += (candidate[cats] != x[cats]).sum()
        best = min(best, float(cost))
    return best


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 3))
def test_optimum_equals_brute_force_over_cells_and_categories(seed, depth):
    rng = np.random.default_rng(seed)
    forest = _classifier(rng, depth)
    X = random_codes(rng, 3)
    X = np.nan_to_num(X)
    for j, spec in enumerate(FEATURES):
        if spec.is_categorical:
            X[:, j] = np.clip(np.floor(np.abs(X[:, j])), 0, spec.n_categories - 1)
    # A bound between two values the forest predicts: no exact ties, which the
    # program does not meet through its tolerances.
    values = np.unique(forest.predict(random_codes(rng, 50)))
    middle = max(0, int(0.7 * values.size) - 1)
    upper = values[min(middle + 1, values.size - 1)]
    target = (float(0.5 * (values[middle] + upper)) if upper > values[middle]
              else float(values[middle]) + 1e-9, None)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        # Without the warm start: feature tweaking's points may lie off the grid
        # of cells, closer than epsilon to a threshold.
        result = optimal_counterfactual(
            forest, X, target=target, cost="l1", warm_start=False
        )
        warm = optimal_counterfactual(forest, X, target=target, cost="l1")
        tweak = feature_tweak(forest, X, target=target, cost="l1")
    for i, x in enumerate(X):
        expected = _brute_force(forest, x, target)
        if np.isinf(expected):
            assert not result.found_[i]
        else:
            assert result.found_[i]
            assert abs(result.cost_[i] - expected) < 1e-9
    assert (
        warm.cost_[tweak.found_] <= tweak.cost_[tweak.found_] * (1 + 1e-6) + 1e-12
    ).all()
    assert (warm.cost_[result.found_] <= result.cost_[result.found_] + 1e-9).all()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_tweak_moves_each_category_to_the_cheapest_its_leaf_admits(seed):
    rng = np.random.default_rng(seed)
    forest = _classifier(rng, 3)
    X = np.nan_to_num(random_codes(rng, 6))
    for j, spec in enumerate(FEATURES):
        if spec.is_categorical:
            X[:, j] = np.clip(np.floor(np.abs(X[:, j])), 0, spec.n_categories - 1)
    values = np.unique(forest.predict(random_codes(rng, 50)))
    target = (float(values[len(values) // 2]) + 1e-9, None)
    # A random table of change costs per categorical column.
    tables = {}
    for spec in FEATURES:
        if spec.is_categorical:
            labels = spec.categories
            tables[spec.name] = {
                (a, b): float(rng.uniform(0.1, 3.0))
                for a in labels
                for b in labels
                if a != b
            }
    with warnings.catch_warnings():
        warnings.simplefilter("error", CounterfactualCheckWarning)
        tweak = feature_tweak(forest, X, target=target, cost="l1", category_cost=tables)
        exact = optimal_counterfactual(
            forest, X, target=target, cost="l1", category_cost=tables
        )
    boxes = treelens.leaf_boxes(forest)
    at = np.flatnonzero(forest.predict(X) >= target[0])
    for i in np.flatnonzero(tweak.found_):
        assert forest.predict(tweak.X_cf_[i : i + 1])[0] >= target[0]
        assert exact.found_[i]
        assert exact.cost_[i] <= tweak.cost_[i] * (1 + 1e-6) + 1e-12
        if i in at:
            continue
        # The cost is the numeric l1 change plus each category change's price.
        x, x_cf = X[i], tweak.X_cf_[i]
        price = 0.0
        leaf = np.flatnonzero(
            (boxes.tree == tweak.tree_[i]) & (boxes.node == tweak.leaf_[i])
        )[0]
        for j, spec in enumerate(FEATURES):
            if not spec.is_categorical:
                continue
            own, new = int(x[j]), int(x_cf[j])
            admitted = boxes.allowed[j][leaf]
            assert admitted[new]
            if own == new:
                continue
            labels = spec.categories
            price += tables[spec.name][(labels[own], labels[new])]
            # The winning leaf did not admit the row's own category, and no
            # admitted category is cheaper than the one taken.
            assert not admitted[own]
            for c in np.flatnonzero(admitted[: spec.n_categories]):
                if c != own:
                    cheaper = tables[spec.name][(labels[own], labels[c])]
                    assert cheaper >= tables[spec.name][(labels[own], labels[new])]
        numeric = [j for j, s in enumerate(FEATURES) if not s.is_categorical]
        l1 = np.abs(x_cf[numeric] - x[numeric]).sum()
        assert tweak.cost_[i] == pytest.approx(l1 + price, rel=1e-9, abs=1e-12)


def test_a_category_the_model_never_saw_is_kept_as_given():
    # An unseen label kept (immutable) came back as missing in X_cf_, though
    # the encoder sends unseen and missing values different ways here.
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame(
        {
            "income": rng.normal(50, 15, n).round(1),
            "job": rng.choice(["clerk", "nurse", "pilot"], n).astype(object),
        }
    )
    missing = rng.random(n) < 0.3
    X.loc[missing, "job"] = np.nan
    y = np.where(missing | (X["income"] > 60), "yes", "no")
    encoder = OrdinalEncoder(
        handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-3
    )
    model = make_pipeline(
        make_column_transformer((encoder, ["job"]), remainder="passthrough"),
        RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
    ).fit(X, y)
    rows = X.iloc[:8].assign(job="astronaut")
    gone = rows.assign(job=pd.Series(np.nan, index=rows.index, dtype=object))
    assert (model.predict(rows) != model.predict(gone)).any()
    frozen = Constraints(immutable=["job"])
    for search, options in (
        (feature_tweak, {}),
        (optimal_counterfactual, {}),
        (optimal_counterfactual, {"n_counterfactuals": 2}),
    ):
        result = search(model, rows, target="yes", constraints=frozen, **options)
        found = result.found_
        assert found.any()
        assert (result.X_cf_.loc[found, "job"] == "astronaut").all()
        assert (model.predict(result.X_cf_[found]) == "yes").all()


def test_columns_the_pipeline_drops_keep_each_rows_own_value():
    # A column the model never reads came back holding the first row's value
    # in every counterfactual (age 70 for a row of age 34).
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 15, n).round(1),
            "job": rng.choice(["clerk", "nurse", "pilot"], n).astype(object),
            "city": rng.choice(["x", "y"], n).astype(object),
        }
    )
    y = np.where((X["income"] > 55) | (X["job"] == "pilot"), "yes", "no")
    model = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(), ["job"]), ("passthrough", ["income"]), remainder="drop"
        ),
        RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
    ).fit(X, y)
    rows = X.iloc[:10]
    for search, options in (
        (feature_tweak, {}),
        (optimal_counterfactual, {}),
        (optimal_counterfactual, {"n_counterfactuals": 2}),
    ):
        result = search(model, rows, target="yes", **options)
        found = result.found_
        given = rows.iloc[result.row_]
        assert found.any()
        for column in ("age", "city"):
            kept = result.X_cf_[column].to_numpy()[found]
            np.testing.assert_array_equal(kept, given[column].to_numpy()[found])


@pytest.mark.parametrize("keywords", [{"increase_only": [9]}, {"bounds": {-1: (0, 1)}}])
def test_a_feature_index_out_of_range_is_refused_over_categories(keywords):
    # Over categories, an index out of range raised a bare IndexError, and -1
    # was read as the last column.
    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    for search in (feature_tweak, optimal_counterfactual):
        with pytest.raises(InputError, match="Feature index must be in"):
            search(
                case.model, case.X.iloc[:2], target="other",
                constraints=Constraints(**keywords),
            )  # fmt: skip


@pytest.mark.parametrize("library", ["sklearn", "lightgbm"])
def test_a_model_fitted_on_an_array_of_category_codes_is_confirmed_on_one(library):
    # The answers were confirmed on a DataFrame of object columns: LightGBM
    # refused it ("pandas dtypes must be int, float or bool"), and
    # HistGradientBoosting warned that it was fitted without feature names.
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.integers(0, 5, 400), rng.normal(size=400), rng.integers(0, 3, 400)]
    ).astype(float)
    y = ((X[:, 0] % 2 == 0) ^ (X[:, 1] > 0.5)).astype(int)
    if library == "sklearn":
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(
            max_iter=10, max_depth=3, categorical_features=[True, False, True]
        ).fit(X, y)
    else:
        lightgbm = pytest.importorskip("lightgbm")
        model = lightgbm.LGBMClassifier(n_estimators=10, num_leaves=6, verbose=-1)
        model.fit(X, y, categorical_feature=[0, 2])
    assert treelens.to_forest(model).has_categorical
    rows = X[model.predict(X) == 0][:4]
    for search in (feature_tweak, optimal_counterfactual):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = search(model, rows, target=1)
        assert isinstance(result.X_cf_, np.ndarray) and result.found_.all()
        assert (model.predict(result.X_cf_) == 1).all()


def test_codes_given_as_an_array_to_lightgbm_fitted_on_category_columns():
    # A numeric array is read as codes; the answers were confirmed on labels
    # in object columns, which LightGBM refused: "train and valid dataset
    # categorical_feature do not match".
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "job": pd.Categorical(rng.choice(["clerk", "nurse", "pilot"], 300)),
            "income": rng.normal(50, 15, 300),
        }
    )
    y = ((X["job"] == "pilot") | (X["income"] > 60)).astype(int)
    model = lightgbm.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1)
    model.fit(X, y)
    codes = treelens.to_forest(model).encode(X)
    rows = codes[model.predict(X) == 0][:4]
    for search in (feature_tweak, optimal_counterfactual):
        with warnings.catch_warnings():
            warnings.simplefilter("error", CounterfactualCheckWarning)
            result = search(model, rows, target=1)
        assert result.found_.all()
        assert (result.cf_prediction_ == 1).all()
