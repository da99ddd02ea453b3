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
