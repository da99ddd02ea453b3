"""Constraints read off reference data: whole numbers, 0/1 flags, one-hot groups."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from treelens import Constraints, InputError, counterfactual, feature_tweak

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from loans import loan_table

GROUP = ["employment_salaried", "employment_self_employed", "employment_unemployed"]


@pytest.fixture(scope="module")
def loans():
    X, y = loan_table(n=600, seed=1)
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X[model.predict(X) == 0].iloc[:4]
    return model, X, rows


def test_inferred_constraints_hold_and_are_reported(loans):
    model, X, rows = loans
    result = counterfactual(model, rows, target=1, reference=X, cost="l2")
    assert result.inferred_["integer"] == ["income", "age", "debt"]
    assert result.inferred_["flags"] == ["has_mortgage", "defaulted_before"]
    assert result.inferred_["one_hot"] == [GROUP]
    assert isinstance(result.X_cf_, pd.DataFrame)
    assert list(result.X_cf_.columns) == list(X.columns)
    frame = result.X_cf_[result.found_]
    assert len(frame)
    cf = frame.to_numpy(dtype=np.float64)
    names = list(X.columns)
    for name in ["income", "age", "debt", "has_mortgage", "defaulted_before", *GROUP]:
        column = cf[:, names.index(name)]
        assert (column == np.round(column)).all(), name
    for name in ["has_mortgage", "defaulted_before", *GROUP]:
        assert np.isin(cf[:, names.index(name)], (0.0, 1.0)).all(), name
    assert (cf[:, [names.index(g) for g in GROUP]].sum(axis=1) == 1).all()
    assert (model.predict(frame) == 1).all()


def test_inference_can_be_switched_off_or_narrowed(loans):
    model, X, rows = loans
    off = counterfactual(model, rows, target=1, reference=X, infer=False)
    assert off.inferred_ == {}
    only = feature_tweak(model, rows, target=1, reference=X, infer=("integer",))
    assert set(only.inferred_) == {"integer"}
    # Flag columns are whole numbers too: counted as integers when flags are off.
    assert "has_mortgage" in only.inferred_["integer"]
    none = counterfactual(model, rows, target=1)
    assert none.inferred_ == {}


def test_user_constraints_are_kept(loans):
    model, X, rows = loans
    constraints = Constraints(
        immutable=["employment_unemployed"], bounds={"has_mortgage": (0, 0)}
    )
    result = counterfactual(model, rows, target=1, reference=X, constraints=constraints)
    # A run that meets an immutable column is not grouped; a bounded flag keeps
    # the user's bounds.
    assert result.inferred_["one_hot"] == []
    assert "has_mortgage" not in result.inferred_["flags"]
    found = result.X_cf_[result.found_]
    assert (found["has_mortgage"] == 0).all()


@pytest.mark.parametrize("infer", ["yes", ("integer", "ordinal"), 3])
def test_bad_infer_is_refused(loans, infer):
    model, X, rows = loans
    with pytest.raises(InputError, match="infer"):
        counterfactual(model, rows, target=1, reference=X, infer=infer)
