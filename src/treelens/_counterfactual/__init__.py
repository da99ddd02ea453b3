"""Counterfactuals: the shared problem, targets, costs, epsilon, constraints,
feature tweaking and the optimal search (in ``_milp``)."""
