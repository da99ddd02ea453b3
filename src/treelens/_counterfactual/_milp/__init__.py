"""The mixed-integer program of optimal counterfactuals: its model part, its
per-row solve, the local search that starts it, and HiGHS."""
