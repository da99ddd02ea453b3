"""The normalized representation of a fitted tree ensemble.

Every algorithm in treelens reads only :class:`Tree` and :class:`Forest`.  Adapters
(see :mod:`treelens._adapters`) build them from the models of each library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from .._exceptions import InputError
from ._cache import derived_property, without_derived
from ._compiled_routing import apply_compiled, compiled_trees
from ._exponential import (
    float32_exp,
    float64_exp,
    lightgbm_softmax,
    xgboost_sigmoid,
    xgboost_softmax,
)
from ._features import FeatureSpec, category_codes, numeric_features, numeric_labels

__all__ = ["Forest", "Tree"]

#: Marks "no child" in ``children_left`` / ``children_right`` (scikit-learn's TREE_LEAF).
TREE_LEAF = -1
#: Feature index stored at leaves (scikit-learn's TREE_UNDEFINED).
TREE_UNDEFINED = -2

Kind = Literal["tree", "forest", "boosting"]
Task = Literal["classification", "regression"]
Link = Literal[
    "identity", "logistic", "exponential", "softmax", "samme", "exp", "isolation"
]

# Rows times trees routed at once by `Forest.apply`; bounds the temporary arrays
# to a few tens of megabytes whatever the number of rows.
_APPLY_CELLS = 2_000_000
# From this many rows on, `Forest.apply` routes one tree at a time: through
# scikit-learn's compiled trees on a thread per core when the input is float32,
# else over blocks of rows that stay in cache (several times faster on large data
# than all trees at once); below it, one step per depth level over all (row, tree)
# pairs avoids a Python loop per tree.
_PER_TREE_MIN_ROWS = 4096
_BLOCK_ROWS = 16384
# From this many rows on (and below _PER_TREE_MIN_ROWS), float32 input is routed
# through the compiled trees on the calling thread: a thread pool does not pay
# for itself yet, but the compiled loop is already 5 to 20 times faster than the
# numpy steps (which stay faster on a few rows, where per-tree calls dominate).
_COMPILED_MIN_ROWS = 64


_NO_NODES: NDArray[np.bool_] = np.zeros(0, dtype=bool)


def _readonly(array: Any, dtype: Any) -> NDArray[Any]:
    out = np.array(array, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Tree:
    """One fitted binary tree as parallel arrays, one entry per node.

    Node ``0`` is the root.  A node ``i`` is a leaf when ``children_left[i] == -1``.
    A sample goes to the left child when ``x[feature[i]] <= threshold[i]``, where
    ``x`` is first cast to the forest's ``input_dtype`` (scikit-learn casts to
    float32), and when ``x[feature[i]]`` is missing (NaN) and
    ``missing_go_left[i]`` is true.

    Parameters
    ----------
    children_left : ndarray of shape (n_nodes,), dtype intp
        Index of the left child of each node, ``-1`` for leaves.
    children_right : ndarray of shape (n_nodes,), dtype intp
        Index of the right child of each node, ``-1`` for leaves.
    feature : ndarray of shape (n_nodes,), dtype intp
        Feature index tested at each split node, ``-2`` at leaves.
    threshold : ndarray of shape (n_nodes,), dtype float64
        Split threshold of each split node (``x <= threshold`` goes left);
        ``-2.0`` at leaves.
    missing_go_left : ndarray of shape (n_nodes,), dtype bool
        Whether a missing value at a split node goes to the left child.
    value : ndarray of shape (n_nodes, n_values), dtype float64
        For classification trees of averaging ensembles, the class fractions at each
        node (``n_values == n_classes``).  For regression trees and the stage
        trees of boosting, the prediction at each node (``n_values == 1``); for
        boosting this is the raw-score contribution before the learning rate.
    impurity : ndarray of shape (n_nodes,), dtype float64
        Impurity of each node under the tree's criterion; NaN where unknown.
    n_node_samples : ndarray of shape (n_nodes,), dtype intp
        Number of training samples reaching each node; ``-1`` where unknown.
    weighted_n_node_samples : ndarray of shape (n_nodes,), dtype float64
        Total sample weight reaching each node (sample and class weights); the
        hessian sum ("cover") for boosting libraries that store no weights.
    is_categorical : ndarray of shape (n_nodes,), dtype bool, optional
        Whether each split node tests category membership instead of
        ``x <= threshold`` (its ``threshold`` is NaN and unused).  Default: no
        categorical node.
    categorical_left : ndarray of shape (n_nodes, width), dtype bool, optional
        At a categorical node splitting a feature with ``k`` categories, a row of
        code ``c`` (``0 .. k - 1``, ``k`` for a category the model never saw) goes
        left iff ``categorical_left[node, c]``; a missing value follows
        ``missing_go_left``.  ``width`` is 1 + the largest ``k`` of the features
        split in the tree; shape ``(n_nodes, 0)`` when no node is categorical.

    Examples
    --------
    >>> from treelens import Tree
    >>> stump = Tree(children_left=[1, -1, -1], children_right=[2, -1, -1],
    ...              feature=[0, -2, -2], threshold=[0.5, -2.0, -2.0],
    ...              missing_go_left=[True, False, False],
    ...              value=[[1.5], [1.0], [2.0]], impurity=[0.25, 0.0, 0.0],
    ...              n_node_samples=[4, 2, 2], weighted_n_node_samples=[4.0, 2.0, 2.0])
    >>> stump.n_leaves, stump.max_depth, stump.parent.tolist()
    (2, 1, [-1, 0, 0])
    """

    children_left: NDArray[np.intp]
    children_right: NDArray[np.intp]
    feature: NDArray[np.intp]
    threshold: NDArray[np.float64]
    missing_go_left: NDArray[np.bool_]
    value: NDArray[np.float64]
    impurity: NDArray[np.float64]
    n_node_samples: NDArray[np.intp]
    weighted_n_node_samples: NDArray[np.float64]
    # Empty by default, meaning "no categorical split": filled in __post_init__.
    is_categorical: NDArray[np.bool_] = field(default_factory=lambda: _NO_NODES)
    categorical_left: NDArray[np.bool_] = field(default_factory=lambda: _NO_NODES)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without derived values (rebuilt on first use)."""
        return without_derived(self)

    def __post_init__(self) -> None:
        n_nodes = np.shape(self.children_left)[0]
        if self.is_categorical is None or np.size(self.is_categorical) == 0:
            object.__setattr__(self, "is_categorical", np.zeros(n_nodes, bool))
        if self.categorical_left is None or np.size(self.categorical_left) == 0:
            object.__setattr__(self, "categorical_left", np.zeros((n_nodes, 0), bool))
        casts = {
            "children_left": np.intp,
            "children_right": np.intp,
            "feature": np.intp,
            "threshold": np.float64,
            "missing_go_left": np.bool_,
            "value": np.float64,
            "impurity": np.float64,
            "n_node_samples": np.intp,
            "weighted_n_node_samples": np.float64,
            "is_categorical": np.bool_,
            "categorical_left": np.bool_,
        }
        for name, dtype in casts.items():
            object.__setattr__(self, name, _readonly(getattr(self, name), dtype))
        value = self.value
        if value.ndim == 1:
            value = value.reshape(-1, 1)
            value.setflags(write=False)
            object.__setattr__(self, "value", value)
        for name in casts:
            array = getattr(self, name)
            if array.shape[0] != n_nodes:
                raise InputError(
                    f"Every array of a Tree must have one entry per node; "
                    f"expected {n_nodes} entries in `{name}`, got {array.shape[0]}."
                )
        if self.categorical_left.ndim != 2:
            raise InputError(
                "`categorical_left` must be 2-D of shape (n_nodes, width); got "
                f"{self.categorical_left.ndim} dimensions."
            )
        if self.is_categorical.any() and self.categorical_left.shape[1] == 0:
            raise InputError(
                "A Tree with categorical nodes needs `categorical_left` of shape "
                "(n_nodes, 1 + largest number of categories); got width 0."
            )

    @property
    def has_categorical(self) -> bool:
        """Whether any split node tests category membership."""
        return bool(self.is_categorical.any())

    @property
    def n_nodes(self) -> int:
        """Number of nodes, leaves included."""
        return int(self.children_left.shape[0])

    @derived_property
    def is_leaf(self) -> NDArray[np.bool_]:
        """Boolean mask of shape (n_nodes,), true at leaves."""
        out = self.children_left == TREE_LEAF
        out.setflags(write=False)
        return out

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(self.is_leaf.sum())

    @derived_property
    def node_depth(self) -> NDArray[np.intp]:
        """Depth of every node, shape (n_nodes,); the root has depth 0."""
        depth = np.zeros(self.n_nodes, dtype=np.intp)
        frontier = np.array([0], dtype=np.intp)
        level = 0
        while frontier.size:
            depth[frontier] = level
            inner = frontier[~self.is_leaf[frontier]]
            frontier = np.concatenate(
                [self.children_left[inner], self.children_right[inner]]
            )
            level += 1
        depth.setflags(write=False)
        return depth

    @property
    def max_depth(self) -> int:
        """Depth of the deepest leaf (0 for a single-leaf tree)."""
        return int(self.node_depth.max()) if self.n_nodes else 0

    @derived_property
    def parent(self) -> NDArray[np.intp]:
        """Parent of every node, shape (n_nodes,); ``-1`` at the root."""
        parent = np.full(self.n_nodes, -1, dtype=np.intp)
        inner = np.flatnonzero(~self.is_leaf)
        parent[self.children_left[inner]] = inner
        parent[self.children_right[inner]] = inner
        parent.setflags(write=False)
        return parent


class InputMap(Protocol):
    """The map from the rows a lifted Forest routes to another Forest's input
    (see ``Forest.input_map``)."""

    @property
    def forest(self) -> Forest:
        """The Forest the mapped rows are routed through."""

    @property
    def trees(self) -> tuple[Tree, ...]:
        """The trees of the lifted Forest the map was made for."""

    def transform(self, X: NDArray[Any]) -> NDArray[Any]:
        """Rows of the lifted Forest, shape (n, n_features), as the input of
        ``forest``, shape (n, forest.n_features), in its ``input_dtype``."""


@dataclass(frozen=True, eq=False)
class Forest:
    """A fitted tree ensemble: its trees and how their outputs combine.

    Parameters
    ----------
    trees : tuple of Tree
        The trees, in the order the source model applies them.  For boosting with
        several raw outputs (multiclass), stage-major: stage 0 class 0, stage 0
        class 1, ...; ``tree_output`` says which raw output each tree adds to.
    kind : {"tree", "forest", "boosting"}
        ``"tree"``: a single decision tree.  ``"forest"``: the average of the
        trees' outputs (class probabilities or regression values).
        ``"boosting"``: ``raw = init_raw + learning_rate * sum of tree values``,
        then ``link`` turns raw scores into probabilities.
    task : {"classification", "regression"}
    n_features : int
    feature_names : tuple of str
        One name per feature; ``x0, x1, ...`` when the model was fitted without
        names.
    has_feature_names : bool
        Whether ``feature_names`` came from the model or the user (so DataFrame
        columns are matched by name).
    classes_ : ndarray of shape (n_classes,) or None
        Class labels for classifiers, as the model's ``classes_``.
    criterion : str
        Impurity criterion of the trees (``"gini"``, ``"squared_error"``, ...),
        or the boosting library's name for its gain (``"xgboost_gain"``).
    init_raw : ndarray of shape (n_outputs,)
        Boosting only: the initial raw score added before the trees.
    learning_rate : float
        Boosting only: factor applied to every tree value (1.0 when the library
        already folded it into the leaf values).
    link : {"identity", "logistic", "exponential", "softmax", "samme", "exp", \
            "isolation"}
        How raw scores become predictions: identity for regression and averaging
        ensembles; ``exp(raw)`` for boosted regressors with a log link (Poisson,
        gamma and Tweedie losses) and ``expit(raw)`` for boosted regressors of
        fractions (cross-entropy losses); ``expit(raw)`` (logistic),
        ``expit(2 * raw)`` (exponential loss) for binary boosting; softmax for
        multiclass boosting;
        ``"samme"`` as scikit-learn's AdaBoost: ``softmax(raw / (n_classes -
        1))``, for two classes ``softmax([-raw / 2, raw / 2])``;
        ``"isolation"`` as scikit-learn's IsolationForest: ``-2 ** -raw`` (its
        ``score_samples``), the raw score being the sum of the trees' path
        lengths divided by ``raw_divisor``, ``n_trees * c(max_samples)``.
    tree_output : ndarray of shape (n_trees,)
        Boosting only: the raw output each tree adds to; zeros otherwise.
    input_dtype : numpy dtype
        The dtype inputs are cast to before comparing with thresholds
        (float32 for scikit-learn and XGBoost, float64 for LightGBM).
    allow_missing : bool
        Whether the source model accepts NaN at prediction time.
    source : str
        Dotted class path of the source model.
    class_weight : dict, {"balanced", "balanced_subsample"} or None
        Classifiers only: the model's ``class_weight`` (a dict maps class labels
        to weights; classes absent from it weigh 1).  Used to weigh data replayed
        through the trees (:func:`treelens.node_statistics`).
    loss : str
        Boosting only: the loss whose negative gradient the stage trees were
        fitted on (scikit-learn names: ``"squared_error"``, ``"absolute_error"``,
        ``"huber"``, ``"quantile"``, ``"log_loss"``, ``"exponential"``; the log
        links' ``"poisson"``, ``"gamma"`` and ``"tweedie"``, and
        ``"cross_entropy"`` for regressors of fractions, which are not replayed
        on data); empty when unknown.
    loss_alpha : float or None
        The ``alpha`` of the ``"huber"`` and ``"quantile"`` losses.
    loss_power : float or None
        The variance power ``p`` of the ``"tweedie"`` loss (XGBoost's, LightGBM's
        and CatBoost's ``variance_power``, in ``[1, 2)``; its mean deviance is
        ``sklearn.metrics.mean_tweedie_deviance(y, prediction, power=p)``); None
        for another loss, or when the model does not record it.
    positive_at_zero : bool
        Binary boosting only: whether a raw score of exactly 0 predicts the
        positive class (scikit-learn's GradientBoostingClassifier) or the
        negative one (XGBoost, LightGBM, HistGradientBoosting: ``p > 0.5``).
    score_dtype : numpy dtype
        Boosting only: the dtype raw scores are summed in, tree after tree
        (float64; float32 for XGBoost, whose predictions are float32 sums: summing
        in float64 would move scores that sit on a decision boundary).
    c_exponential : bool
        Boosting only: whether the links exponentiate float64 raw scores with
        the C library's ``exp`` (LightGBM's arithmetic, its softmax summed
        class after class) rather than numpy's (scikit-learn's); the two
        differ in the last bit on about one value in twenty.
    features : tuple of FeatureSpec, optional
        What each input column is (numeric, categorical with its labels,
        boolean), one per feature with the names of ``feature_names``.  Default:
        every feature numeric.  Categorical columns reach the trees as codes
        (see :meth:`encode`).
    init_after_trees : bool
        Boosting only: whether ``init_raw`` is added after the sum of the trees
        (CatBoost's order) rather than before it (every other library's).  The
        scores differ only by rounding; this makes them the same doubles.
    raw_divisor : float
        Boosting only: raw scores are ``(init_raw + sum of tree values) /
        raw_divisor``, divided once after the sum, as AdaBoost divides its
        weighted votes by the total of the weights and an IsolationForest its
        summed path lengths by ``n_trees * c(max_samples)`` (1.0: no
        division).  When it is not 1, ``learning_rate`` is ``1 /
        raw_divisor``, so that each tree's share of the raw score is still
        ``learning_rate * value``.
    tree_weight : ndarray of shape (n_trees,), optional
        Weights of the trees in the model's feature importances, where the
        model weighs them (AdaBoost: ``estimator_weights_``): MDI is then the
        weighted mean of the trees' normalized importances, as
        ``AdaBoostClassifier.feature_importances_``.  Empty by default: the
        trees weigh alike.
    isolation_offset : float or None
        An IsolationForest's ``offset_`` (link ``"isolation"`` only): its
        ``predict`` calls a row an inlier where ``score_samples >= offset``, so
        a counterfactual's ``target="inlier"`` is the interval ``[offset,
        inf)`` of the Forest's predictions and ``"outlier"`` the scores below it.
    arrays_hold_labels : bool
        Whether the source model reads a numeric array's values in a
        categorical column as the column's labels (HistGradientBoosting, a
        Pipeline's encoders) rather than as codes (LightGBM and XGBoost read
        codes).  Where the labels are numbers other than the codes ``0 .. k -
        1``, such an array is then encoded by label (see :meth:`encode`).
    input_map : InputMap or None
        A Forest lifted from a pipeline (see :func:`~treelens.to_forest`): the
        final model's Forest, with the same nodes, and the map from the rows
        this Forest routes to that model's input.  Many rows are routed through
        it (the same leaves, through the final model's compiled trees) while
        ``trees`` are the ones it was made for.
    fitted_model : object or None
        The fitted model this Forest stands for when the Forest renames its
        features (a model fitted without feature names, given names by
        ``to_forest(model, feature_names=...)`` or shown under a data file's
        column names: see :func:`~treelens._io._files.named_by_columns`).
        The model reads its columns by position; counterfactuals found on the
        Forest are confirmed with the model's own ``predict``.  None for a
        Forest that is the adapter's own, was read from a model file, or no
        longer predicts as the model does (its trees changed).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from treelens import to_forest
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    >>> forest = to_forest(model.fit(X, y))
    >>> forest.kind, forest.n_trees, forest.apply(X[:2]).tolist()
    ('forest', 3, [[1, 1, 2], [1, 1, 2]])
    >>> bool((forest.predict_proba(X) == model.predict_proba(X)).all())
    True
    """

    trees: tuple[Tree, ...]
    kind: Kind
    task: Task
    n_features: int
    feature_names: tuple[str, ...]
    has_feature_names: bool = False
    classes_: NDArray[Any] | None = None
    criterion: str = ""
    init_raw: NDArray[np.float64] = field(default_factory=lambda: np.zeros(1))
    learning_rate: float = 1.0
    link: Link = "identity"
    # Empty by default, meaning "every tree adds to output 0".
    tree_output: NDArray[np.intp] = field(
        default_factory=lambda: np.zeros(0, dtype=np.intp)
    )
    input_dtype: Any = np.float32
    allow_missing: bool = False
    source: str = ""
    class_weight: dict[Any, float] | str | None = None
    loss: str = ""
    loss_alpha: float | None = None
    loss_power: float | None = None
    positive_at_zero: bool = True
    score_dtype: Any = np.float64
    c_exponential: bool = False
    features: tuple[FeatureSpec, ...] = ()
    init_after_trees: bool = False
    raw_divisor: float = 1.0
    # Empty by default, meaning "the trees weigh alike".
    tree_weight: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    isolation_offset: float | None = None
    arrays_hold_labels: bool = False
    input_map: InputMap | None = None
    fitted_model: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without derived values (rebuilt on first use)."""
        return without_derived(self)

    def __post_init__(self) -> None:
        object.__setattr__(self, "trees", tuple(self.trees))
        object.__setattr__(self, "score_dtype", np.dtype(self.score_dtype))
        object.__setattr__(self, "feature_names", tuple(map(str, self.feature_names)))
        object.__setattr__(self, "input_dtype", np.dtype(self.input_dtype))
        object.__setattr__(
            self, "init_raw", _readonly(np.ravel(self.init_raw), np.float64)
        )
        tree_output = (
            np.zeros(len(self.trees), dtype=np.intp)
            if self.tree_output is None or np.size(self.tree_output) == 0
            else self.tree_output
        )
        object.__setattr__(self, "tree_output", _readonly(tree_output, np.intp))
        self._check_weights()
        if self.classes_ is not None:
            classes = np.array(self.classes_, copy=True)
            classes.setflags(write=False)
            object.__setattr__(self, "classes_", classes)
        if len(self.feature_names) != self.n_features:
            raise InputError(
                f"`feature_names` must have one name per feature; expected "
                f"{self.n_features} names, got {len(self.feature_names)}."
            )
        if len(self.tree_output) != len(self.trees):
            raise InputError(
                f"`tree_output` must have one entry per tree; expected "
                f"{len(self.trees)}, got {len(self.tree_output)}."
            )
        if self.link in ("exp", "isolation") and (
            self.kind != "boosting" or self.task != "regression"
        ):
            what = "a log link" if self.link == "exp" else "an isolation forest"
            raise InputError(
                f"The link {self.link!r} is for boosted regressors ({what}); got "
                f"kind {self.kind!r} and task {self.task!r}."
            )
        self._check_features()

    def _check_weights(self) -> None:
        weights = np.ravel(
            np.zeros(0) if self.tree_weight is None else self.tree_weight
        )
        object.__setattr__(self, "tree_weight", _readonly(weights, np.float64))
        if weights.size and (
            weights.size != len(self.trees)
            or not np.isfinite(weights).all()
            or (weights < 0).any()
            or weights.sum() <= 0
        ):
            raise InputError(
                "`tree_weight` must hold one finite, non-negative weight per tree "
                f"with a positive sum; expected {len(self.trees)} such weights, got "
                f"{weights.size} summing to {weights.sum():g}."
            )
        divisor = float(self.raw_divisor)
        object.__setattr__(self, "raw_divisor", divisor)
        if not (np.isfinite(divisor) and divisor > 0):
            raise InputError(
                f"`raw_divisor` must be a positive finite number; got {divisor!r}."
            )
        if divisor != 1.0 and not np.isclose(
            self.learning_rate * divisor, 1.0, rtol=1e-12, atol=0.0
        ):
            raise InputError(
                "With a `raw_divisor`, `learning_rate` must be 1 / raw_divisor; "
                f"expected {1.0 / divisor!r}, got {self.learning_rate!r}."
            )

    def _check_features(self) -> None:
        features = tuple(self.features) or numeric_features(self.feature_names)
        object.__setattr__(self, "features", features)
        names = tuple(spec.name for spec in features)
        if names != self.feature_names:
            raise InputError(
                "`features` must describe the features in order, with the names of "
                f"`feature_names`; expected {list(self.feature_names)[:10]}, got "
                f"{list(names)[:10]}."
            )
        k = self.n_categories
        for t, tree in enumerate(self.trees):
            if not tree.has_categorical:
                continue
            split = tree.feature[tree.is_categorical]
            wrong = [int(f) for f in split if not features[f].is_categorical]
            if wrong:
                f = wrong[0]
                raise InputError(
                    f"Tree {t} has a categorical split on feature "
                    f"{self.feature_names[f]!r}, which is {features[f].kind}; "
                    "expected a categorical feature."
                )
            if tree.categorical_left.shape[1] < int(k[split].max()) + 1:
                raise InputError(
                    f"Tree {t}: `categorical_left` must have at least "
                    f"{int(k[split].max()) + 1} columns (1 + the number of "
                    f"categories); got {tree.categorical_left.shape[1]}."
                )

    # ------------------------------------------------------------------ facts
    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return len(self.trees)

    @property
    def n_classes(self) -> int:
        """Number of classes (0 for regression)."""
        return 0 if self.classes_ is None else len(self.classes_)

    @property
    def is_classifier(self) -> bool:
        """Whether the forest is a classifier."""
        return self.task == "classification"

    @property
    def tree_copies(self) -> int:
        """How many consecutive trees of ``trees`` hold one tree of the source
        model: the number of classes for multiclass AdaBoost (each of its trees
        votes once per class, :attr:`link` ``"samme"``), else 1."""
        return self.n_outputs if self.link == "samme" else 1

    @property
    def n_outputs(self) -> int:
        """Number of raw outputs: classes for multiclass boosting, else 1.

        For averaging ensembles of classifiers this is the number of classes.
        """
        if self.kind == "boosting":
            return int(self.init_raw.shape[0])
        return self.n_classes if self.is_classifier else 1

    @derived_property
    def n_categories(self) -> NDArray[np.intp]:
        """Number of categories of each feature, shape (n_features,); 0 if not
        categorical."""
        out = np.array([spec.n_categories for spec in self.features], dtype=np.intp)
        out.setflags(write=False)
        return out

    @property
    def has_categorical(self) -> bool:
        """Whether any tree has a categorical split."""
        return any(tree.has_categorical for tree in self.trees)

    @property
    def has_labels(self) -> bool:
        """Whether some input column is categorical or boolean, or has
        ``None`` as its only missing value (so raw tables need :meth:`encode`)."""
        return any(
            spec.kind != "numeric"
            or spec.dropped
            or spec.presence_only
            or spec.none_as == "only"
            for spec in self.features
        )

    @derived_property
    def label_columns(self) -> NDArray[np.intp]:
        """Categorical columns that a numeric array gives by label, not by code:
        where ``arrays_hold_labels`` and the labels are numbers other than the
        codes ``0 .. k - 1`` (the model reads those numbers), or the model
        reads each number by its whole part (``FeatureSpec.truncates``)."""
        out = np.array(
            [
                j
                for j, spec in enumerate(self.features)
                if self.arrays_hold_labels and (numeric_labels(spec) or spec.truncates)
            ],
            dtype=np.intp,
        )
        out.setflags(write=False)
        return out

    def encode(self, X: Any) -> NDArray[np.float64]:
        """The float64 matrix the trees route, from ``X`` in the model's columns.

        Category labels become codes ``0 .. k - 1``, a label the model never saw
        the unknown code ``k``, missing values NaN, booleans 0/1.  See
        :func:`treelens._core._features.encode`.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features), dtype float64

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from treelens import FeatureSpec, Forest, Tree
        >>> leaf = dict(children_left=[-1], children_right=[-1], feature=[-2],
        ...             threshold=[-2.0], missing_go_left=[False], value=[[0.0]],
        ...             impurity=[0.0], n_node_samples=[1],
        ...             weighted_n_node_samples=[1.0])
        >>> forest = Forest((Tree(**leaf),), "tree", "regression", 1, ("color",),
        ...                 has_feature_names=True,
        ...                 features=(FeatureSpec("color", "categorical", ("red", "blue")),))
        >>> forest.encode(pd.DataFrame({"color": ["blue", "green", None]})).ravel()
        array([ 1.,  2., nan])
        """
        from ._features import encode

        return encode(self, X)

    @derived_property
    def _flat(self) -> dict[str, NDArray[Any]]:
        """All trees concatenated into one node array with global child ids."""
        sizes = np.array([t.n_nodes for t in self.trees], dtype=np.intp)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)

        def shifted(children: NDArray[np.intp], offset: int) -> NDArray[np.intp]:
            return np.where(children == TREE_LEAF, TREE_LEAF, children + offset)

        flat = {
            "offsets": offsets,
            "left": np.concatenate(
                [shifted(t.children_left, o) for t, o in zip(self.trees, offsets)]
            ),
            "right": np.concatenate(
                [shifted(t.children_right, o) for t, o in zip(self.trees, offsets)]
            ),
            "feature": np.concatenate([t.feature for t in self.trees]),
            "threshold": np.concatenate([t.threshold for t in self.trees]),
            "missing_go_left": np.concatenate([t.missing_go_left for t in self.trees]),
            "max_depth": np.array(max((t.max_depth for t in self.trees), default=0)),
        }
        if self.has_categorical:
            width = max(t.categorical_left.shape[1] for t in self.trees)
            table = np.zeros((flat["left"].size, width), dtype=bool)
            for t, o in zip(self.trees, offsets):
                table[o : o + t.n_nodes, : t.categorical_left.shape[1]] = (
                    t.categorical_left
                )
            flat["is_categorical"] = np.concatenate(
                [t.is_categorical for t in self.trees]
            )
            flat["categorical_left"] = table
        flat["is_leaf"] = flat["left"] == TREE_LEAF
        # Leaves carry feature 0 so that gathering x[feature] never goes out of range.
        flat["safe_feature"] = np.where(flat["is_leaf"], 0, flat["feature"])
        if self.has_categorical:
            flat["k"] = np.where(
                flat["is_categorical"], self.n_categories[flat["safe_feature"]], 0
            )
            flat.update(_categorical_routing(flat, self.n_categories))
        return flat

    # ----------------------------------------------------------- validation
    def validate_X(self, X: Any) -> NDArray[Any]:
        """Check ``X`` against the forest and return it as a 2-D array.

        See :func:`treelens._core._validation.check_X`.
        """
        from ._validation import check_X

        return check_X(self, X)

    # ------------------------------------------------------------ routing
    def apply(self, X: Any) -> NDArray[np.intp]:
        """Leaf reached by every sample in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_trees), dtype intp
            Node id (within its own tree) of the leaf each sample reaches.
        """
        X = self.validate_X(X)
        return self._apply(X)

    def _leaves_of_codes(self, codes: NDArray[Any]) -> NDArray[np.intp]:
        """:meth:`apply` of rows already checked and encoded (what
        :meth:`validate_X` returns, in float64 or ``input_dtype``): internal
        routing matrices are codes, never read by label again."""
        rows = np.atleast_2d(np.asarray(codes, dtype=np.float64))
        return self._apply(rows.astype(self.input_dtype, copy=False))

    def _apply(self, X: NDArray[Any]) -> NDArray[np.intp]:
        mapped = self.input_map
        if (
            mapped is not None
            and X.shape[0] >= _COMPILED_MIN_ROWS
            and mapped.trees is self.trees
        ):
            # The final model's trees have the same nodes: its routing of the
            # mapped rows (compiled when it can be) reaches the same leaves.
            return mapped.forest._apply(mapped.transform(X))
        flat = self._flat
        n_samples, n_trees = X.shape[0], self.n_trees
        out = np.empty((n_samples, n_trees), dtype=np.intp)
        if n_trees == 0 or n_samples == 0:
            return out
        if n_samples >= _PER_TREE_MIN_ROWS:
            # Tree-major memory: each tree's column is written and read contiguously.
            out = np.empty((n_trees, n_samples), np.intp).T
            if self._compiled_trees is not None:
                return apply_compiled(self._compiled_trees, X, out)
            return self._apply_per_tree(X, out)
        if n_samples >= _COMPILED_MIN_ROWS and self._compiled_trees is not None:
            out = np.empty((n_trees, n_samples), np.intp).T
            return apply_compiled(self._compiled_trees, X, out, threads=1)
        rows_per_chunk = max(1, _APPLY_CELLS // n_trees)
        for start in range(0, n_samples, rows_per_chunk):
            chunk = X[start : start + rows_per_chunk]
            out[start : start + rows_per_chunk] = self._apply_chunk(chunk, flat)
        out -= flat["offsets"][np.newaxis, :]
        return out

    @staticmethod
    def _apply_chunk(
        X: NDArray[Any], flat: dict[str, NDArray[Any]]
    ) -> NDArray[np.intp]:
        # One vectorized step per depth level over all (sample, tree) pairs still
        # at a split node.
        n_samples = X.shape[0]
        nodes = np.broadcast_to(flat["offsets"], (n_samples, flat["offsets"].size))
        nodes = nodes.reshape(-1).copy()
        rows = np.repeat(np.arange(n_samples, dtype=np.intp), flat["offsets"].size)
        active = np.flatnonzero(~flat["is_leaf"][nodes])
        categorical = "routing_codes" in flat
        if categorical:
            # The code of every value once, so that each level is two lookups.
            codes = category_codes(X, flat["routing_codes"])
        threshold = flat["routing_threshold" if categorical else "threshold"]
        while active.size:
            current = nodes[active]
            at = (rows[active], flat["safe_feature"][current])
            x = X[at]
            go_left = x <= threshold[current]
            if categorical:
                go_left |= flat["routing_left"][
                    flat["routing_row"][current] + codes[at]
                ]
            missing = np.isnan(x)
            if missing.any():
                go_left = np.where(missing, flat["missing_go_left"][current], go_left)
            nodes[active] = np.where(
                go_left, flat["left"][current], flat["right"][current]
            )
            active = active[~flat["is_leaf"][nodes[active]]]
        return nodes.reshape(n_samples, -1)

    @derived_property
    def _compiled_trees(self) -> list[Any] | None:
        """scikit-learn trees routing like these (float32 input, no categorical
        split), or None."""
        if self.has_categorical:
            return None
        return compiled_trees(self)

    @derived_property
    def _routing(self) -> list[tuple[NDArray[Any], ...]]:
        """Per tree, tables indexed by ``2 * node`` (the routing state): children
        at ``2 * node + go_right`` (as ``2 * child``; leaves point to
        themselves), and at ``2 * node``: feature (0 at leaves), threshold,
        missing_go_left, is_leaf."""
        tables = []
        for tree in self.trees:
            leaf = tree.is_leaf
            # 32-bit indices: smaller tables and faster gathers.
            ids = np.arange(tree.n_nodes, dtype=np.int32)
            children = np.empty(2 * tree.n_nodes, dtype=np.int32)
            children[0::2] = 2 * np.where(leaf, ids, tree.children_left)
            children[1::2] = 2 * np.where(leaf, ids, tree.children_right)
            doubled = [
                np.repeat(a, 2)
                for a in (
                    np.where(leaf, 0, tree.feature).astype(np.int32),
                    tree.threshold,
                    tree.missing_go_left,
                    leaf,
                )
            ]
            categorical: tuple[NDArray[Any], ...] = ()
            if tree.has_categorical:
                k = np.where(tree.is_categorical, self.n_categories[doubled[0][::2]], 0)
                categorical = (
                    np.repeat(tree.is_categorical, 2),
                    np.repeat(k, 2),
                    tree.categorical_left,
                )
            tables.append((children, *doubled, *categorical))
        return tables

    def _apply_per_tree(
        self, X: NDArray[Any], out: NDArray[np.intp]
    ) -> NDArray[np.intp]:
        block = max(256, min(_BLOCK_ROWS, _APPLY_CELLS // max(1, self.n_features)))
        for start in range(0, X.shape[0], block):
            # Feature-major copy of the block: one gather per level reads x[row,
            # feature[node]] at feature * m + row.
            columns = np.ascontiguousarray(X[start : start + block].T).reshape(-1)
            m = min(block, X.shape[0] - start)
            has_missing = bool(np.isnan(columns).any())
            for j, (tree, table) in enumerate(zip(self.trees, self._routing)):
                out[start : start + m, j] = _route_block(
                    columns, m, tree.max_depth, table, has_missing
                )
        return out

    def tree_values(self, X: Any) -> NDArray[np.float64]:
        """Leaf value of every tree for every sample.

        Returns
        -------
        values : ndarray of shape (n_samples, n_trees, n_values)
            For classification trees of averaging ensembles, the class
            probabilities each tree predicts (its leaf's class fractions, as
            scikit-learn's ``predict_proba``); otherwise the raw leaf values.
        """
        X = self.validate_X(X)
        return self._tree_values(self._apply(X))

    def _tree_values(self, leaves: NDArray[np.intp]) -> NDArray[np.float64]:
        if not self.trees:
            return np.empty((leaves.shape[0], 0, 1))
        return np.take(self._flat_values, leaves + self._flat["offsets"], axis=0)

    @derived_property
    def _flat_values(self) -> NDArray[np.float64]:
        """Every node's ``value``, the trees concatenated as in ``_flat``."""
        return np.concatenate([tree.value for tree in self.trees])

    def _summed_in_order(
        self,
        leaves: NDArray[np.intp],
        trees: NDArray[np.intp],
        dtype: Any,
        first: float = 0.0,
    ) -> NDArray[Any]:
        """``first + sum_j value[leaves[:, j]]`` over ``trees``, in ``dtype``,
        added term after term in the trees' order, as the libraries add them, so
        that the sums agree to the last bit (numpy's pairwise ``sum`` rounds
        otherwise).

        Shape (n_samples, n_values); rows in chunks of at most
        :data:`_APPLY_CELLS` gathered values.  Boosting's scores are scaled by
        its learning rate in ``dtype`` first.
        """
        offsets = self._flat["offsets"][trees]
        n_values = self._flat_values.shape[1]
        out = np.full((leaves.shape[0], n_values), first, dtype=dtype)
        if trees.size == 0:
            return out
        # A raw divisor divides the sum once, afterwards (`_raw_from_leaves`).
        scaled = self.kind == "boosting" and self.raw_divisor == 1.0
        rate = dtype.type(self.learning_rate) if scaled else 1
        step = max(1, _APPLY_CELLS // ((trees.size + 1) * n_values))
        for start in range(0, leaves.shape[0], step):
            # Tree-major, (trees, rows, values): each addition is one
            # contiguous block of rows.
            rows = leaves[start : start + step]
            if trees.size != leaves.shape[1]:  # a subset (else every tree, in order)
                rows = np.take(rows, trees, axis=1)
            nodes = np.add(rows.T, offsets[:, None], order="C")
            terms = np.empty((trees.size + 1, nodes.shape[1], n_values), dtype=dtype)
            terms[0] = out[start : start + step]
            terms[1:] = np.take(self._flat_values, nodes, axis=0)
            if rate != 1:
                terms[1:] *= rate
            # first + v_1 + ... + v_T, left to right (accumulate never pairs).
            np.add.accumulate(terms, axis=0, out=terms)
            out[start : start + step] = terms[-1]
        return out

    # ---------------------------------------------------------- prediction
    def raw_predict(self, X: Any) -> NDArray[np.float64]:
        """Raw scores of a boosting model, before the link function.

        Returns
        -------
        raw : ndarray of shape (n_samples, n_outputs)
        """
        if self.kind != "boosting":
            raise InputError(
                f"`raw_predict` is defined for boosting models only; this forest "
                f"is of kind {self.kind!r}."
            )
        X = self.validate_X(X)
        return self._raw_from_leaves(self._apply(X))

    def _raw_from_leaves(self, leaves: NDArray[np.intp]) -> NDArray[np.float64]:
        dtype = self.score_dtype
        init = self.init_raw.astype(dtype)
        raw = np.empty((leaves.shape[0], init.size), dtype=dtype)
        for k in range(init.size):
            trees = np.flatnonzero(self.tree_output == k)
            if self.init_after_trees:
                raw[:, k] = self._summed_in_order(leaves, trees, dtype)[:, 0] + init[k]
            else:
                raw[:, k] = self._summed_in_order(leaves, trees, dtype, init[k])[:, 0]
        if self.raw_divisor != 1.0:
            raw /= dtype.type(self.raw_divisor)
        return raw.astype(np.float64, copy=False)

    def _exp_from_leaves(self, leaves: NDArray[np.intp]) -> NDArray[np.float64]:
        """``exp(raw)`` of a log-link regressor, in the dtype the scores are
        summed in (XGBoost exponentiates its float32 margins with the C
        library's ``expf``, LightGBM its float64 scores with ``exp``)."""
        raw = self._raw_from_leaves(leaves)[:, 0]
        if self.score_dtype == np.float32:
            return float32_exp(raw).astype(np.float64)
        return float64_exp(raw) if self.c_exponential else np.exp(raw)

    def raw_interval(self, low: float, high: float) -> tuple[float, float]:
        """The raw scores whose prediction lies in ``[low, high]`` (regressors).

        The identity for every link but three: ``"exp"``, whose raw interval is
        ``[log(low), log(high)]`` (``-inf`` for a bound at or below zero, which
        no prediction reaches); ``"logistic"`` (regressors of fractions),
        whose raw interval is ``[logit(low), logit(high)]`` (``-inf`` at or
        below 0, ``inf`` at or above 1); ``"isolation"`` (an IsolationForest's
        ``score_samples``), whose raw interval is ``[-log2(-low),
        -log2(-high)]`` (``inf`` at or above 0, which no score reaches).  The
        programs that search for a prediction in ``[low, high]`` bound the raw
        score, which the trees add up.
        """
        ends = np.array([low, high], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.link == "isolation":
                # -2 ** -raw rises with raw; no score reaches 0.
                ends = np.where(ends < 0, -np.log2(-np.minimum(ends, 0.0)), np.inf)
            elif self.link == "exp":
                ends = np.log(np.maximum(ends, 0.0))
            elif self.link == "logistic" and not self.is_classifier:
                ends = np.clip(ends, 0.0, 1.0)
                ends = np.log(ends) - np.log1p(-ends)
        return float(ends[0]), float(ends[1])

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Class probabilities, as the source model's ``predict_proba``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        if not self.is_classifier:
            raise InputError(
                "`predict_proba` is defined for classifiers only; this forest is a "
                "regressor."
            )
        X = self.validate_X(X)
        return self._proba_from_leaves(self._apply(X))

    def _proba_from_leaves(self, leaves: NDArray[np.intp]) -> NDArray[np.float64]:
        if self.kind == "boosting":
            raw = self._raw_from_leaves(leaves)
            if self.score_dtype == np.float32 and self.link in ("logistic", "softmax"):
                return _xgboost_link(raw, self.link)
            if self.c_exponential and self.link == "softmax":
                return lightgbm_softmax(raw)
            return _apply_link(raw, self.link)
        if self.kind == "tree":
            return self._tree_values(leaves)[:, 0, :]
        # Summed tree by tree, in order, as scikit-learn sums.
        every = np.arange(self.n_trees)
        return self._summed_in_order(leaves, every, np.dtype(np.float64)) / self.n_trees

    def predict(self, X: Any) -> NDArray[Any]:
        """Predictions, as the source model's ``predict``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Class labels for classifiers, values for regressors.
        """
        X = self.validate_X(X)
        return self._predict_from_leaves(self._apply(X))

    def _predict_from_leaves(self, leaves: NDArray[np.intp]) -> NDArray[Any]:
        if self.is_classifier:
            assert self.classes_ is not None
            if self.kind == "boosting":
                raw = self._raw_from_leaves(leaves)
                if raw.shape[1] == 1 and self.score_dtype == np.float32:
                    # XGBoost labels by its float32 probability: a raw score
                    # too small to move it from 0.5 predicts the first class.
                    positive = xgboost_sigmoid(raw[:, 0]) > 0.5
                    encoded = positive.astype(np.intp)
                elif raw.shape[1] == 1:
                    positive = (
                        raw[:, 0] >= 0 if self.positive_at_zero else raw[:, 0] > 0
                    )
                    encoded = positive.astype(np.intp)
                else:
                    encoded = np.argmax(raw, axis=1)
            else:
                encoded = np.argmax(self._proba_from_leaves(leaves), axis=1)
            return self.classes_.take(encoded, axis=0)
        if self.kind == "boosting":
            if self.link == "exp":
                return self._exp_from_leaves(leaves)
            if self.link == "isolation":
                # IsolationForest.score_samples: -2 ** (-sum / divisor).
                return -(2 ** -self._raw_from_leaves(leaves)[:, 0])
            if self.link == "logistic":  # a regressor of fractions
                raw = self._raw_from_leaves(leaves)[:, 0]
                if self.score_dtype == np.float32:
                    return xgboost_sigmoid(raw).astype(np.float64)
                from scipy.special import expit

                # LightGBM's 1 / (1 + exp(-raw)) with the C library's exp,
                # which is how SciPy's expit computes it.
                return expit(raw)
            return self._raw_from_leaves(leaves)[:, 0]
        if self.kind == "tree":
            return self._tree_values(leaves)[:, 0, 0]
        every = np.arange(self.n_trees)
        summed = self._summed_in_order(leaves, every, np.dtype(np.float64))
        return summed[:, 0] / self.n_trees

    def __repr__(self) -> str:
        return (
            f"Forest(kind={self.kind!r}, task={self.task!r}, n_trees={self.n_trees}, "
            f"n_features={self.n_features}, source={self.source!r})"
        )


def _route_block(
    columns: NDArray[Any],
    m: int,
    depth: int,
    table: tuple[NDArray[Any], ...],
    has_missing: bool,
) -> NDArray[np.intp]:
    """Leaf reached in one tree by the ``m`` rows of a feature-major block."""
    children, feature, threshold, missing_go_left, is_leaf = table[:5]
    categorical = table[5:]
    offset = feature * m  # x[row, feature[node]] is columns[offset[2 * node] + row]
    leaves = np.zeros(m, dtype=np.int32)
    state = leaves.copy()  # 2 * node: saves a multiplication per level
    rows = np.arange(m, dtype=np.int32)
    for level in range(1, depth + 1):
        x = columns.take(offset.take(state) + rows)
        go_right = x > threshold.take(state)
        if categorical:
            _route_categorical(x, state, go_right, categorical)
        if has_missing:
            missing = np.isnan(x)
            if missing.any():
                go_right[missing] = ~missing_go_left.take(state[missing])
        state = children.take(state + go_right)
        # Leaves point to themselves, so finished rows may stay; every few levels
        # drop them once they are many, and stop when all are done.
        if level % 4 == 0 and level < depth:
            done = is_leaf.take(state)
            n_done = np.count_nonzero(done)
            if n_done == state.size:
                break
            if 4 * n_done >= state.size:
                leaves[rows[done]] = state[done]
                keep = ~done
                rows, state = rows[keep], state[keep]
    leaves[rows] = state
    return (leaves // 2).astype(np.intp)


def _route_categorical(
    x: NDArray[Any],
    state: NDArray[Any],
    go_right: NDArray[np.bool_],
    categorical: tuple[NDArray[Any], ...],
) -> None:
    """Overwrite ``go_right`` of the rows at categorical nodes (``state = 2 * node``)."""
    is_categorical, k, categorical_left = categorical
    rows = np.flatnonzero(is_categorical.take(state))
    if rows.size:
        doubled = state[rows]
        code = category_codes(x[rows], k.take(doubled))
        go_right[rows] = ~categorical_left[doubled // 2, code]


def _xgboost_link(raw: NDArray[np.float64], link: str) -> NDArray[np.float64]:
    """Probabilities from float32 raw scores, as XGBoost computes them."""
    if link == "softmax":
        return xgboost_softmax(raw).astype(np.float64)
    p1 = xgboost_sigmoid(raw[:, 0])
    return np.column_stack([np.float32(1.0) - p1, p1]).astype(np.float64)


def _apply_link(raw: NDArray[np.float64], link: str) -> NDArray[np.float64]:
    from scipy.special import expit, softmax

    if link == "softmax":
        return softmax(raw, axis=1)
    if link == "samme":
        # scikit-learn's AdaBoostClassifier._compute_proba_from_decision.
        if raw.shape[1] == 1:
            return softmax(np.column_stack([-raw[:, 0], raw[:, 0]]) / 2, axis=1)
        return softmax(raw / (raw.shape[1] - 1), axis=1)
    if link in ("logistic", "exponential"):
        p1 = expit(2.0 * raw[:, 0] if link == "exponential" else raw[:, 0])
        return np.column_stack([1.0 - p1, p1])
    raise InputError(
        f"Unknown link {link!r}; expected 'logistic', 'exponential', 'softmax' "
        "or 'samme'."
    )


def _categorical_routing(
    flat: dict[str, NDArray[Any]], n_categories: NDArray[np.intp]
) -> dict[str, NDArray[Any]]:
    """Tables that route categorical and numeric nodes alike: a row goes left
    iff ``x <= routing_threshold[node]`` (NaN, never true, at categorical
    nodes) or ``routing_left[routing_row[node] * routing_width + code]``, with
    ``code`` the :func:`category_codes` of ``x`` for ``routing_codes[feature]``
    categories; ``routing_row`` is a categorical node's row of the category
    table, or the last row (all false) at any other node."""
    is_categorical = flat["is_categorical"]
    nodes = np.flatnonzero(is_categorical)
    table = flat["categorical_left"]
    width = max(table.shape[1], int(n_categories.max(initial=0)) + 1)
    left = np.zeros((nodes.size + 1, width), dtype=bool)
    left[: nodes.size, : table.shape[1]] = table[nodes]
    row = np.full(is_categorical.size, nodes.size, dtype=np.intp)
    row[nodes] = np.arange(nodes.size)
    return {
        "routing_threshold": np.where(is_categorical, np.nan, flat["threshold"]),
        "routing_left": left.ravel(),
        "routing_row": row * width,
        "routing_width": np.array(width),
        "routing_codes": np.asarray(n_categories, dtype=np.intp),
    }
