"""choose_region_view: the report's and demo's region picture shows more than one class."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from treelens import DecisionRegionDisplay, InputError, mdi_importance, to_forest
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


def test_missing_values_and_categories_still_give_a_view():
    """A pipeline's table with missing values: the medians leave them out and a
    categorical column is held at its most frequent category."""
    from tests.models import PIPELINE_FACTORIES

    case = PIPELINE_FACTORIES["sklearn.Pipeline"]()
    candidates = ["income", "employment", "age", "region"]
    view = choose_region_view(case.model, case.X, candidates)
    assert np.isfinite(view.reference).all()
    forest = to_forest(case.model)
    codes = forest.encode(case.X)
    j = forest.feature_names.index("region")
    present = codes[:, j][np.isfinite(codes[:, j])].astype(int)
    if view.reference_label == "the median of the data":
        assert view.reference[j] == np.bincount(present).argmax()
    else:  # a complete row of the data, or a class's typical row
        assert view.reference[j] in set(present)
