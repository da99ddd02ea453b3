"""Permutation importance of a Pipeline on its input columns: a column's
one-hot columns are shuffled together, without being listed."""

import warnings

import numpy as np
import pytest

import treelens
from tests.models import PIPELINE_FACTORIES


@pytest.mark.parametrize("name", sorted(PIPELINE_FACTORIES))
def test_pipeline_columns_are_grouped_by_construction(name):
    case = PIPELINE_FACTORIES[name](0)
    model, X, y = case.model, case.X, case.y
    parts = treelens._adapters._pipeline.pipeline_parts(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = treelens.grouped_permutation_importance(
            model, X, y, n_repeats=3, random_state=0
        )
        Xt = np.asarray(model[:-1].transform(X), dtype=np.float64)
    # Every input column is its own group: labelled columns are never merged.
    assert list(result.groups_) == list(X.columns)
    names = list(X.columns)
    groups = {
        names[source]: list(np.flatnonzero(parts.source == source))
        for source in np.unique(parts.source)
    }
    final = treelens.grouped_permutation_importance(
        model[-1], Xt, y, groups=groups, one_hot=False, n_repeats=3, random_state=0
    )
    for column, value in final.importances_.items():
        assert result.importances_[column] == pytest.approx(value, abs=1e-12)
    # Columns the pipeline drops change nothing.
    for j, spec in enumerate(treelens.to_forest(model).features):
        if spec.dropped:
            assert result.importances_[names[j]] == 0.0
