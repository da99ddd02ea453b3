"""Mixed-integer programs solved by HiGHS through its own Python bindings (highspy).

SciPy's :func:`scipy.optimize.milp` runs the HiGHS bundled with SciPy (1.12.0 in
SciPy 1.17), whose MIP presolve returns sub-optimal points reported as optimal
on some counterfactual programs (found by the brute-force tests; HiGHS fixed such
presolve defects in later releases).  A counterfactual claimed optimal must be
optimal, so treelens calls a current HiGHS directly.  Its results are reported
with :func:`scipy.optimize.milp`'s status codes.
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..._exceptions import SolverError

__all__ = ["HighsResult", "HighsStatus", "solve_milp"]


class HighsStatus(enum.IntEnum):
    """How a HiGHS run ended, numbered as :func:`scipy.optimize.milp` numbers them."""

    OPTIMAL = 0
    #: A time, iteration or solution limit was reached.
    LIMIT = 1
    #: No feasible point, or none beats ``objective_bound``.
    INFEASIBLE = 2
    UNBOUNDED = 3
    #: Anything else (a solve error).
    OTHER = 4


@dataclass(frozen=True)
class HighsResult:
    """What a HiGHS run found.

    Attributes
    ----------
    x : ndarray or None
        The best point found (None when none was).
    status : HighsStatus
        How the run ended.
    message : str
        HiGHS's model status.
    mip_dual_bound : float
        Proven lower bound on the objective.
    """

    x: NDArray[np.float64] | None
    status: HighsStatus
    message: str
    mip_dual_bound: float


_banner_shown = False


def _new_highs() -> Any:
    """A silent HiGHS instance.

    HiGHS prints its banner on standard output when a process makes its first
    instance, before any option can silence it: that one is made with file
    descriptor 1 pointed at the null device.
    """
    global _banner_shown
    import highspy

    if _banner_shown:
        highs = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            highs = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _banner_shown = True
    highs.setOptionValue("output_flag", False)
    return highs


def solve_milp(
    objective: NDArray[np.float64],
    integrality: NDArray[np.int8],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    matrix: sp.spmatrix,
    row_lower: NDArray[np.float64],
    row_upper: NDArray[np.float64],
    options: dict[str, Any],
) -> HighsResult:
    """Minimize ``objective @ x`` subject to ``row_lower <= matrix @ x <= row_upper``,
    ``lower <= x <= upper``, and ``x[j]`` whole where ``integrality[j]``.

    ``options`` are HiGHS option names and values (``presolve`` may be a bool).
    """
    import highspy

    highs = _new_highs()
    for name, value in options.items():
        if name == "presolve" and isinstance(value, bool):
            value = "on" if value else "off"
        if highs.setOptionValue(name, value) == highspy.HighsStatus.kError:
            raise SolverError(
                f"HiGHS refused the option {name}={value!r}: it has no such "
                "option, or the option does not take that value (see HiGHS's "
                "option list)."
            )
    columns = sp.csc_matrix(matrix)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = columns.shape[1], columns.shape[0]
    lp.col_cost_ = np.asarray(objective, dtype=np.float64)
    lp.col_lower_ = np.asarray(lower, dtype=np.float64)
    lp.col_upper_ = np.asarray(upper, dtype=np.float64)
    lp.row_lower_ = np.asarray(row_lower, dtype=np.float64)
    lp.row_upper_ = np.asarray(row_upper, dtype=np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = columns.indptr
    lp.a_matrix_.index_ = columns.indices
    lp.a_matrix_.value_ = columns.data
    whole, real = highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
    lp.integrality_ = [whole if flag else real for flag in np.asarray(integrality)]
    highs.passModel(lp)
    highs.run()
    model_status = highs.getModelStatus()
    info = highs.getInfo()
    found = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.array(highs.getSolution().col_value) if found else None
    kinds = highspy.HighsModelStatus
    if model_status == kinds.kOptimal:
        status = HighsStatus.OPTIMAL
    elif model_status in (
        kinds.kTimeLimit,
        kinds.kIterationLimit,
        kinds.kSolutionLimit,
    ):
        status = HighsStatus.LIMIT
    elif model_status in (kinds.kInfeasible, kinds.kObjectiveBound):
        status = HighsStatus.INFEASIBLE
    elif model_status == kinds.kUnbounded:
        status = HighsStatus.UNBOUNDED
    else:
        status = HighsStatus.OTHER
    return HighsResult(
        x=x,
        status=status,
        message=highs.modelStatusToString(model_status),
        mip_dual_bound=float(info.mip_dual_bound),
    )
