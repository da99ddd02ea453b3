import treelens

PUBLIC = [
    "BackgroundError",
    "Constraints",
    "CounterfactualDisplay",
    "CounterfactualResult",
    "DataDisplay",
    "DebiasedMDIImportance",
    "DecisionRegionDisplay",
    "FeatureSpec",
    "Forest",
    "ForestGridDisplay",
    "GroupedPermutationImportance",
    "ImportanceDisplay",
    "ImportanceResult",
    "InputError",
    "LeafBoxes",
    "MDIImportance",
    "NodeStatistics",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "PartitionDisplay",
    "RegressionStepsDisplay",
    "ShapResult",
    "Tree",
    "TreeDiagramDisplay",
    "TreelensError",
    "UnsupportedModelError",
    "debiased_mdi_importance",
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
