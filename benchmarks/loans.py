"""A synthetic table of loan applicants in raw units, for counterfactual benchmarks.

Income in currency, age and years employed in years, debt in currency, 0/1 flags
and a one-hot employment type: the kind of table on which unscaled costs and
fractional flags give nonsense counterfactuals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

EMPLOYMENT = ("salaried", "self_employed", "unemployed")


def loan_table(n: int = 5000, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Applicants and whether they were approved (1) or declined (0)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(21, 70, n)
    years_employed = np.minimum(rng.gamma(2.0, 4.0, n).round(1), age - 18)
    income = np.round(rng.lognormal(10.5, 0.5, n), -2)
    debt = np.round(rng.gamma(2.0, 6000.0, n), -1)
    has_mortgage = rng.random(n) < 0.35
    defaulted_before = rng.random(n) < 0.1
    kind = rng.choice(len(EMPLOYMENT), n, p=[0.7, 0.2, 0.1])
    score = (
        (income - 1.2 * debt) / 10_000
        + 0.15 * years_employed
        + 0.8 * has_mortgage
        - 2.5 * defaulted_before
        - 1.5 * (kind == 2)
        - 0.3 * (kind == 1)
        + rng.normal(0, 0.7, n)
    )
    frame = pd.DataFrame(
        {
            "income": income,
            "age": age.astype(float),
            "years_employed": years_employed,
            "debt": debt,
            "has_mortgage": has_mortgage.astype(float),
            "defaulted_before": defaulted_before.astype(float),
        }
    )
    for k, name in enumerate(EMPLOYMENT):
        frame[f"employment_{name}"] = (kind == k).astype(float)
    approved = (score > np.quantile(score, 0.4)).astype(int)
    return frame, approved
