"""The demo's section on a mixed table: a scikit-learn Pipeline explained in the
user's own columns.

The table is synthetic, made here: loan applicants with an income (some
missing), an age, an employment status and a region (text), and whether they
own their home; approval depends on them through a made-up score.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["applicants", "applicants_pipeline", "mixed_table_section"]


def applicants(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """A synthetic table of ``n`` loan applicants and whether they were approved."""
    rng = np.random.default_rng(seed)
    employment = rng.choice(
        ["salaried", "self-employed", "unemployed", "retired"],
        n,
        p=[0.5, 0.2, 0.1, 0.2],
    )
    region = rng.choice(["north", "south", "east", "west"], n)
    income = rng.normal(48_000, 14_000, n).round(-2)
    age = rng.integers(21, 80, n)
    owner = rng.random(n) < 0.4
    score = (
        (income - 45_000) / 12_000
        - 2.0 * (employment == "unemployed")
        + 0.6 * (employment == "salaried")
        + 0.4 * owner
        - 0.3 * (region == "east")
        + 0.3 * rng.normal(size=n)
    )
    income[rng.random(n) < 0.06] = np.nan
    X = pd.DataFrame(
        {
            "income": income,
            "age": age,
            "employment": employment.astype(object),
            "region": region.astype(object),
            "owner": owner,
        }
    )
    return X, pd.Series((score > 0).astype(int), name="approved")


def applicants_pipeline(n_estimators: int, max_depth: int) -> Any:
    """An unfitted Pipeline for :func:`applicants`: income imputed and scaled,
    employment and region one-hot encoded, the rest passed through to a forest."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    columns = ColumnTransformer(
        [
            ("income", make_pipeline(SimpleImputer(), StandardScaler()), ["income"]),
            ("text", OneHotEncoder(handle_unknown="ignore"), ["employment", "region"]),
        ],
        remainder="passthrough",
    )
    forest = RandomForestClassifier(n_estimators, max_depth=max_depth, random_state=0)
    return make_pipeline(columns, forest)


def mixed_table_section(
    console: Any,
    out: Path,
    written: dict[str, Path],
    *,
    show: Callable[[Any, str, str, pd.DataFrame], None],
    save: Callable[[Any, Path], Path],
) -> None:
    """Fit a pipeline on the synthetic table and explain it in its own columns;
    ``show`` prints a table, ``save`` writes a figure (the demo's own)."""
    from .._adapters import to_forest
    from .._counterfactual._tweak import feature_tweak
    from .._importance._mdi import mdi_importance
    from .._importance._permutation import permutation_importance
    from .._plots._display_regions import DecisionRegionDisplay
    from .._report._pictures import new_figure
    from .._report._tables import counterfactual_result_tables, importance_frame

    X, y = applicants(1000, seed=0)
    X_test, y_test = applicants(300, seed=1)
    pipeline = applicants_pipeline(30, max_depth=6).fit(X, y)
    forest = to_forest(pipeline)
    same = bool((forest.predict(X_test) == pipeline.predict(X_test)).all())
    console.print(
        "[bold]5. A mixed table through a scikit-learn Pipeline[/] (synthetic loan "
        "applicants made by the demo: income with missing values, age, employment "
        "and region as text, home owner as a boolean; one-hot encoding, imputation "
        "and scaling before a 30-tree forest)."
    )
    console.print(
        f"The pipeline lifted to its input columns predicts like pipeline.predict "
        f"on the {len(X_test)} test rows: {same}."
    )
    mdi = mdi_importance(pipeline)
    permutation = permutation_importance(
        pipeline, X_test, y_test, n_repeats=2, random_state=0
    )
    show(
        console,
        "importance",
        "Importance per input column (one-hot columns merged exactly)",
        importance_frame(mdi, permutation=permutation),
    )
    declined = np.flatnonzero(pipeline.predict(X_test) == 0)[:4]
    result = feature_tweak(
        pipeline, X_test.iloc[declined], target=1, cost="mad", reference=X
    )
    tables = counterfactual_result_tables(
        result, [int(i) for i in declined], result.prediction_
    )
    show(
        console,
        "rows",
        "Declined applicants: the least change to approval (MAD-scaled numbers, "
        "1 per changed category)",
        tables["rows"][1],
    )
    show(
        console, "changes", "The changes, in categories and units", tables["changes"][1]
    )
    figure, ax = new_figure(6.4, 5)
    DecisionRegionDisplay.from_estimator(
        pipeline, X_test, features=("income", "employment"), y=y_test, ax=ax
    )
    ax.set_title("Pipeline: approval by income and employment (bands per category)")
    written["mixed_regions"] = save(figure, out / "mixed_regions.png")
    console.print(f"  mixed regions: {written['mixed_regions']}\n")
