"""SHAP values in chunks, with a progress bar, and per partition through Dask."""

import numpy as np
import pandas as pd

import treelens
import treelens.dask
from tests.models import MODEL_FACTORIES


def _case():
    case = MODEL_FACTORIES["sklearn.RandomForestClassifier"](0)
    columns = [f"f{i}" for i in range(case.X.shape[1])]
    return case.model, pd.DataFrame(np.nan_to_num(case.X), columns=columns)


def test_chunks_and_streams_equal_one_pass(capsys):
    model, X = _case()
    whole = treelens.shap_values(model, X.to_numpy())
    small = treelens.shap_values(model, X.to_numpy(), memory_budget=2000, progress=True)
    np.testing.assert_allclose(small.values_, whole.values_, atol=1e-15, rtol=0)
    assert "SHAP values" in capsys.readouterr().err
    stream = treelens.shap_values(model, [X.to_numpy()[:50], X.to_numpy()[50:]])
    np.testing.assert_allclose(stream.values_, whole.values_, atol=1e-15, rtol=0)


def test_dask_partitions_equal_single_machine():
    import dask.dataframe as dd

    model, X = _case()
    background = X.iloc[:20].to_numpy()
    for method, bg in (("path", None), ("interventional", background)):
        single = treelens.shap_values(model, X, method=method, background=bg)
        parts = treelens.dask.shap_values(
            model,
            dd.from_pandas(X, npartitions=3),
            method=method,
            background=bg,
            scheduler="sync",
        )
        np.testing.assert_allclose(parts.values_, single.values_, atol=1e-15, rtol=0)
        np.testing.assert_array_equal(parts.index, X.index)
        np.testing.assert_allclose(parts.expected_value_, single.expected_value_)
