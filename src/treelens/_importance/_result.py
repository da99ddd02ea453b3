"""The result object shared by every feature-importance method."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["ImportanceResult"]


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class ImportanceResult:
    """Feature importances computed by one method.

    Attributes
    ----------
    importances_ : pandas.Series of shape (n_features,)
        Importance of each feature, indexed by feature name, in the model's
        feature order.
    std_ : pandas.Series of shape (n_features,) or None
        Spread of the importance (standard deviation across trees for MDI,
        across repeats for permutation importance); None when the method has
        no notion of spread.
    per_tree_ : pandas.DataFrame of shape (n_trees, n_features) or None
        Importance of each feature in each tree, on the scale where the mean of
        the rows that enter the average equals ``importances_``; None for
        methods that do not decompose over trees.
    method : str
        Short label of the method, e.g. ``"MDI (train)"``, ``"MDI (held-out)"``,
        ``"permutation"``.
    interval_ : pandas.DataFrame of shape (n_features, 2) or None
        Columns ``low`` and ``high``: a percentile bootstrap interval of each
        importance (see ``interval_method``); None when not computed.
    interval_method : str
        How ``interval_`` was drawn, e.g. ``"95% percentile bootstrap over 100
        trees (200 replicates)"``.
    can_be_negative : bool
        Whether the quantity itself can be negative (debiased MDI and
        permutation importance can; MDI cannot), so that pictures do not draw
        whiskers below zero for quantities that cannot be.

    See Also
    --------
    treelens.mdi_importance, treelens.permutation_importance
    """

    importances_: pd.Series
    std_: pd.Series | None = None
    per_tree_: pd.DataFrame | None = None
    method: str = ""
    interval_: pd.DataFrame | None = None
    interval_method: str = ""
    can_be_negative: bool = False

    @property
    def feature_names(self) -> list[str]:
        """Feature names, in the model's order."""
        return [str(name) for name in self.importances_.index]

    def to_frame(self) -> pd.DataFrame:
        """The importances as a DataFrame indexed by feature.

        Returns
        -------
        frame : pandas.DataFrame of shape (n_features, 1 to 4)
            Column ``importance``, ``std`` when the method gives a spread, and
            ``low`` and ``high`` when it gives an interval.
        """
        columns = {"importance": self.importances_}
        if self.std_ is not None:
            columns["std"] = self.std_
        if self.interval_ is not None:
            columns["low"] = self.interval_["low"]
            columns["high"] = self.interval_["high"]
        frame = pd.DataFrame(columns)
        frame.index.name = "feature"
        return frame

    def __repr__(self) -> str:
        top = self.importances_.sort_values(ascending=False).head(3)
        shown = ", ".join(f"{name}={value:.3g}" for name, value in top.items())
        return (
            f"{type(self).__name__}(method={self.method!r}, "
            f"n_features={self.importances_.size}, top: {shown})"
        )
