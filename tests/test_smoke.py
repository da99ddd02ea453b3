import numpy as np
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import treelens


def test_forest_predicts_like_the_model():
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    forest = treelens.to_forest(model)
    np.testing.assert_array_equal(forest.predict(X), model.predict(X))
