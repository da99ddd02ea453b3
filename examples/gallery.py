"""Write every treelens picture to PNG, on datasets bundled with scikit-learn.

Usage::

    python examples/gallery.py [OUTPUT_DIR]     # default: gallery/

Pictures: exact partitions of a tree (iris), decision regions of several
classifiers (make_moons), SVM margins, two models' boundaries on one axes over a
plain scatter, forest anatomy (wine) and its raster fallback, regression steps (a
noisy sine), a forest regressor's prediction surface with a level line
(diabetes), a row's SHAP waterfall, the SHAP summary and a SHAP dependence plot
coloured by its strongest interaction (diabetes), importance bars with their three kinds of whiskers (breast cancer),
tree diagrams with counts and with fractions and their DOT text (iris, breast
cancer), and counterfactual moves over a classifier's regions (iris) and a
regressor's predicted value (diabetes).  Each option appears once: window,
class_names, markers, boundary_kwargs, show_regions, margins, error_bars,
proportion, precision, max_cells, DataDisplay.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_iris,
    load_wine,
    make_moons,
)
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import treelens
from treelens import (
    ContributionSummaryDisplay,
    CounterfactualDisplay,
    DataDisplay,
    DecisionRegionDisplay,
    DependenceDisplay,
    ForestGridDisplay,
    ImportanceDisplay,
    PartitionDisplay,
    PredictionSurfaceDisplay,
    RegressionStepsDisplay,
    TreeDiagramDisplay,
    WaterfallDisplay,
    export_dot,
)


def save(fig, out: Path, name: str) -> None:
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path}")


def partitions(out: Path) -> None:
    iris = load_iris(as_frame=True)
    X, y = iris.data, iris.target
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")
    features = ("petal length (cm)", "petal width (cm)")
    for ax, depth in zip(axes, (1, 2, None)):
        # One fixed window across the series; class names in the legend.
        PartitionDisplay.from_estimator(
            tree,
            X,
            y,
            features=features,
            max_depth=depth,
            window=((0.5, 7.5), (0.0, 2.8)),
            class_names=list(iris.target_names),
            ax=ax,
        )
        ax.set_title(f"depth cut {depth}" if depth is not None else "full tree")
    save(fig, out, "partition_iris")


def decision_regions(out: Path) -> None:
    X, y = make_moons(300, noise=0.3, random_state=0)
    models = {
        "decision tree": DecisionTreeClassifier(max_depth=6, random_state=0),
        "random forest (exact)": RandomForestClassifier(
            n_estimators=100, random_state=0
        ),
        "gradient boosting": GradientBoostingClassifier(random_state=0),
        "k-nearest neighbours": KNeighborsClassifier(15),
        "SVC": SVC(C=1.0),
    }
    fig, axes = plt.subplots(
        1, len(models), figsize=(4.2 * len(models), 4), layout="constrained"
    )
    for ax, (name, model) in zip(axes, models.items()):
        model.fit(X, y)
        DecisionRegionDisplay.from_estimator(
            model, X, y=y, ax=ax, exact="exact" in name, legend=name == "SVC"
        )
        ax.set_title(name)
    save(fig, out, "decision_regions_moons")
    # SVM margins: the decision function at -1, 0 and +1 over its own colour scale;
    # the legend's class colours are the ends of that scale.
    svc = SVC(kernel="rbf", C=1.0).fit(X, y)
    disp = DecisionRegionDisplay.from_estimator(
        svc,
        X,
        y,
        response_method="decision_function",
        margins=True,
        class_names=["lower moon", "upper moon"],
    )
    disp.ax_.set_title("SVC: decision function, margins at -1 and +1")
    save(disp.figure_, out, "svm_margins_moons")
    # Two models on one axes: only their boundaries, told apart by colour and
    # line style, over a plain scatter with one marker per class.
    fig, ax = plt.subplots(figsize=(6, 4.6), layout="constrained")
    DataDisplay.from_data(
        X, y, class_names=["lower moon", "upper moon"], markers=["o", "^"], ax=ax
    )
    for model, name, style in (
        (models["decision tree"], "decision tree", {"colors": "C3"}),
        (svc, "SVC", {"colors": "C2", "linestyles": "--", "linewidths": 1.6}),
    ):
        DecisionRegionDisplay.from_estimator(
            model,
            X,
            show_regions=False,
            show_points=False,
            legend=False,
            boundary_kwargs={**style, "label": name},
            grid_resolution=200,
            ax=ax,
        )
    ax.legend(fontsize="small", loc="lower left")
    ax.set_title("two boundaries on one axes")
    save(fig, out, "boundaries_overlay_moons")
    # An n-feature model: two features, the others held at their median.
    wine = load_wine(as_frame=True)
    forest = RandomForestClassifier(n_estimators=50, random_state=0).fit(
        wine.data, wine.target
    )
    disp = DecisionRegionDisplay.from_estimator(
        forest,
        wine.data,
        features=("proline", "flavanoids"),
        y=wine.target,
        response_method="predict_proba",
    )
    disp.ax_.set_title("wine: random forest probabilities (others at median)")
    save(disp.figure_, out, "decision_regions_wine_proba")


def forest_grid(out: Path) -> None:
    wine = load_wine(as_frame=True)
    forest = RandomForestClassifier(
        n_estimators=100, max_depth=4, oob_score=True, random_state=0
    )
    forest.fit(wine.data, wine.target)
    grid = ForestGridDisplay.from_estimator(
        forest,
        wine.data,
        wine.target,
        features=("proline", "flavanoids"),
        n_trees=3,
        class_names=list(wine.target_names),
    )
    save(grid.figure_, out, "forest_grid_wine")
    # Above max_cells exact cells the forest panel is a raster, and says so.
    grid = ForestGridDisplay.from_estimator(
        forest,
        wine.data,
        features=("proline", "flavanoids"),
        n_trees=1,
        max_cells=500,
    )
    save(grid.figure_, out, "forest_grid_wine_raster")


def regression_steps(out: Path) -> None:
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 2 * np.pi, 200)).reshape(-1, 1)
    y = np.sin(X).ravel() + rng.normal(0, 0.25, 200)
    tree = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y)
    disp = RegressionStepsDisplay.from_estimator(
        tree, X, y, depths=[1, 2, 4, None], refit=True, window=(-0.5, 2 * np.pi + 0.5)
    )
    disp.ax_.set_title("noisy sine: one tree cut at several depths (dashed: refit)")
    save(disp.figure_, out, "regression_steps_sine")


def prediction_surface(out: Path) -> None:
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target.rename("disease progression")
    model = RandomForestRegressor(50, max_depth=6, random_state=0).fit(X, y)
    disp = PredictionSurfaceDisplay.from_estimator(
        model, X, y, features=("bmi", "s5"), levels=[150.0]
    )
    how = "exact cells" if disp.exact else "grid"
    disp.ax_.set_title(f"diabetes: the forest's prediction ({how}), level 150")
    save(disp.figure_, out, "prediction_surface_diabetes")


def contributions(out: Path) -> None:
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target
    model = RandomForestRegressor(50, max_depth=6, random_state=0).fit(X, y)
    disp = WaterfallDisplay.from_estimator(model, X, row=0, method="shap")
    disp.ax_.set_title("diabetes, row 0: exact SHAP values from the bias")
    save(disp.figure_, out, "waterfall_diabetes")
    disp = ContributionSummaryDisplay.from_estimator(model, X, method="shap")
    disp.ax_.set_title("diabetes: every row's SHAP values, coloured by value")
    save(disp.figure_, out, "summary_diabetes")
    disp = DependenceDisplay.from_estimator(model, X, "bmi")
    disp.ax_.set_title(
        f"diabetes: SHAP of bmi, coloured by its strongest interaction "
        f"({disp.interaction_feature})"
    )
    save(disp.figure_, out, "dependence_diabetes")


def importances(out: Path) -> None:
    data = load_breast_cancer(as_frame=True)
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, random_state=0
    )
    forest = RandomForestClassifier(n_estimators=100, random_state=0).fit(
        X_train, y_train
    )
    results = [
        treelens.mdi_importance(forest),
        treelens.mdi_importance(forest, X_test, y_test),
        treelens.permutation_importance(
            forest, X_test, y_test, n_repeats=5, random_state=0
        ),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(18, 7), layout="constrained")
    # Default whiskers: one standard error of the mean over the trees.
    ImportanceDisplay.from_result(results, top_k=12, ax=axes[0])
    axes[0].set_title("breast cancer: importances, top 12")
    ImportanceDisplay.from_result(results[0], top_k=12, error_bars="iqr", ax=axes[1])
    axes[1].set_title("MDI: middle half of the per-tree values")
    ImportanceDisplay.from_result(results[0], top_k=12, error_bars="std", ax=axes[2])
    axes[2].set_title("MDI: per-tree standard deviation (on request)")
    save(fig, out, "importance_breast_cancer")


def tree_diagram(out: Path) -> None:
    iris = load_iris(as_frame=True)
    tree = DecisionTreeClassifier(random_state=0).fit(iris.data, iris.target)
    row = iris.data.iloc[[70]]
    disp = TreeDiagramDisplay.from_estimator(
        tree,
        max_depth=3,
        path_of=row,
        class_names=list(iris.target_names),
        annotate=("samples", "value", "impurity", "weighted_impurity", "mdi"),
        importance=treelens.mdi_importance(tree),
    )
    save(disp.figure_, out, "tree_diagram_iris")
    dot = export_dot(
        tree, max_depth=3, path_of=row, class_names=list(iris.target_names)
    )
    (out / "tree_iris.dot").write_text(dot)
    print(f"wrote {out / 'tree_iris.dot'}")
    # The whole depth-4 tree: the figure widens so no two boxes overlap; class
    # fractions and thresholds at three decimals.
    cancer = load_breast_cancer(as_frame=True)
    deep = DecisionTreeClassifier(max_depth=4, random_state=0).fit(
        cancer.data, cancer.target
    )
    disp = TreeDiagramDisplay.from_estimator(
        deep,
        max_depth=None,
        class_names=list(cancer.target_names),
        proportion=True,
        precision=3,
    )
    save(disp.figure_, out, "tree_diagram_breast_cancer")


def counterfactual(out: Path) -> None:
    iris = load_iris()
    X, y = iris.data, iris.target
    forest = RandomForestClassifier(n_estimators=30, max_depth=4, random_state=0).fit(
        X, y
    )
    result = treelens.feature_tweak(forest, X[[70, 120]], target="other")
    disp = CounterfactualDisplay.from_result(
        forest,
        result,
        index=1,
        X_background=X,
        y_background=y,
        class_names=list(iris.target_names),
    )
    save(disp.figure_, out, "counterfactual_iris")
    # A regressor's counterfactual: the least change that lifts the prediction to
    # 250, drawn over the exact predicted value, the level line at 250.
    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target
    model = RandomForestRegressor(50, max_depth=5, random_state=0).fit(X, y)
    result = treelens.counterfactual(model, X.iloc[[0]], target=(250, None))
    disp = CounterfactualDisplay.from_result(
        model, result, X_background=X, y_background=y
    )
    save(disp.figure_, out, "counterfactual_diabetes")


def main(argv: list[str]) -> None:
    out = Path(argv[1] if len(argv) > 1 else "gallery")
    out.mkdir(parents=True, exist_ok=True)
    for picture in (
        partitions,
        decision_regions,
        forest_grid,
        regression_steps,
        prediction_surface,
        contributions,
        importances,
        tree_diagram,
        counterfactual,
    ):
        picture(out)


if __name__ == "__main__":
    main(sys.argv)
