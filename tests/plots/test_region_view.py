"""choose_region_view: the report's and demo's region picture shows more than one class."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from treelens import DecisionRegionDisplay, InputError, mdi_importance
from treelens._plots._region_view import choose_region_view


@pytest.fixture(scope="module")
def cancer_forest():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    return forest, X, y


def test_view_shows_more_than_one_class(cancer_forest):
    forest, X, y = cancer_forest
    top = list(mdi_importance(forest).importances_.sort_values().index[::-1][:4])
    # The top two features at the median: one class over the whole window.
    flat = DecisionRegionDisplay.from_estimator(
        forest, X, features=top[:2], grid_resolution=24
    )
    assert np.unique(flat.predictions).size == 1
    view = choose_region_view(forest, X, top, class_names=["malignant", "benign"])
    assert set(view.features) <= set(top) and view.share > 0
    disp = DecisionRegionDisplay.from_estimator(
        forest, X, y, features=view.features, reference=view.reference
    )
    values, counts = np.unique(disp.predictions, return_counts=True)
    assert values.size == 2
    assert counts.min() / counts.sum() == pytest.approx(view.share, abs=0.1)
    assert view.features[0] in view.caption and view.reference_label in view.caption
    # The reference is one of the rows tried: a data row or a median.
    Xa = X.to_numpy()
    medians = [np.median(Xa, axis=0)] + [
        np.median(Xa[forest.predict(X) == c], axis=0) for c in (0, 1)
    ]
    assert any(np.allclose(view.reference, r) for r in [*Xa, *medians])


def test_needs_two_candidates(cancer_forest):
    forest, X, _y = cancer_forest
    with pytest.raises(InputError, match="at least two features"):
        choose_region_view(forest, X, ["mean radius"])
