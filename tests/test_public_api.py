import pytest

import treelens

PUBLIC = [
    "BackgroundError",
    "Constraints",
    "ContributionSummaryDisplay",
    "CounterfactualCheckWarning",
    "CounterfactualDisplay",
    "CounterfactualResult",
    "DataDisplay",
    "DebiasedMDIImportance",
    "DecisionPath",
    "DecisionRegionDisplay",
    "DependenceDisplay",
    "FeatureSpec",
    "Forest",
    "ForestGridDisplay",
    "GroupedPermutationImportance",
    "ImportanceDisplay",
    "ImportanceResult",
    "InputError",
    "LeafBoxes",
    "MDIImportance",
    "Margin",
    "MemoryBudgetError",
    "MissingValuesWarning",
    "NodeStatistics",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "PartitionDisplay",
    "PredictionSurfaceDisplay",
    "RegressionStepsDisplay",
    "Report",
    "SaabasValues",
    "SchedulerUnreachableError",
    "ShapResult",
    "SolverError",
    "Tree",
    "TreeDiagramDisplay",
    "TreelensError",
    "UnsafeModelError",
    "UnsupportedModelError",
    "WaterfallDisplay",
    "counterfactual",
    "debiased_mdi_importance",
    "decision_path",
    "export_dot",
    "feature_tweak",
    "gain_importance",
    "grouped_permutation_importance",
    "leaf_boxes",
    "mdi_importance",
    "node_statistics",
    "optimal_counterfactual",
    "permutation_importance",
    "register_adapter",
    "report",
    "saabas_values",
    "shap_importance",
    "shap_interaction_values",
    "shap_values",
    "supported_models",
    "to_forest",
]


def test_all_is_sorted_and_is_the_public_set():
    assert treelens.__all__ == sorted(treelens.__all__)
    assert treelens.__all__ == PUBLIC


def test_every_public_name_exists():
    for name in treelens.__all__:
        assert hasattr(treelens, name), name


def test_public_functions_name_what_they_accept():
    """Public parameters and returns are typed with what they accept (the aliases of
    treelens._types), not with a bare ``Any``."""
    import inspect

    bare = []
    for name in treelens.__all__:
        function = getattr(treelens, name)
        if not inspect.isfunction(function):
            continue
        signature = inspect.signature(function)
        for parameter in signature.parameters.values():
            if parameter.kind is parameter.VAR_KEYWORD:
                continue
            if str(parameter.annotation) in ("Any", "typing.Any"):
                bare.append(f"{name}({parameter.name})")
        if str(signature.return_annotation) in ("Any", "typing.Any"):
            bare.append(f"{name} -> Any")
    assert bare == []


def test_every_result_has_a_short_repr_naming_its_class():
    """A result printed in a notebook says what it is in one short line, not
    an object address nor the arrays it holds."""
    from sklearn.datasets import load_iris
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    results = [
        treelens.to_forest(model),
        treelens.leaf_boxes(treelens.to_forest(model)),
        treelens.mdi_importance(model),
        treelens.debiased_mdi_importance(model, X, y, random_state=0),
        treelens.gain_importance(HistGradientBoostingClassifier(max_iter=3).fit(X, y)),
        treelens.permutation_importance(model, X, y, n_repeats=2, random_state=0),
        treelens.grouped_permutation_importance(
            model, X, y, groups={"sepal": [0, 1], "petal": [2, 3]}, n_repeats=2
        ),
        treelens.node_statistics(model, X, y),
        treelens.shap_values(model, X[:3]),
        treelens.saabas_values(model, X[:3]),
        treelens.decision_path(model, X[:3]),
        treelens.counterfactual(model, X[:2], target="other", reference=X),
        treelens.feature_tweak(model, X[:2], target="other"),
    ]
    for result in results:
        text = repr(result)
        name = type(result).__name__
        assert text.startswith(name), text
        assert " object at 0x" not in text and "array(" not in text, text
        assert "\n" not in text and len(text) < 300, text


def test_leaf_boxes_of_a_model_points_to_to_forest():
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(treelens.UnsupportedModelError, match="to_forest"):
        treelens.leaf_boxes(tree)
