"""The HiGHS wrapper: statuses as scipy numbers them, and a program HiGHS 1.12
(bundled in SciPy 1.17) solved wrongly."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.counterfactual.test_optimal_counterfactual import (
    _brute_force,
    _model,
    _target,
)
from treelens import SolverError, optimal_counterfactual
from treelens._counterfactual._milp._highs import HighsStatus, _new_highs, solve_milp
from treelens._counterfactual._milp._solve import (
    DOMINATED_COLUMNS,
    PRESOLVE_RULES_OFF,
    PROBING,
    _highs_options,
)


def _knapsack(**options):
    # max 5a + 4b + 3c  s.t.  2a + 3b + c <= 4, binaries: a = c = 1, value 8.
    return solve_milp(
        np.array([-5.0, -4.0, -3.0]),
        np.ones(3, dtype=np.int8),
        np.zeros(3),
        np.ones(3),
        sp.csr_matrix([[2.0, 3.0, 1.0]]),
        np.array([-np.inf]),
        np.array([4.0]),
        {"presolve": True, "time_limit": 10.0, **options},
    )


def test_optimal_point_status_and_bound():
    result = _knapsack()
    assert result.status == HighsStatus.OPTIMAL
    np.testing.assert_allclose(result.x, [1.0, 0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(result.mip_dual_bound, -8.0, atol=1e-9)


def test_nothing_beats_the_objective_bound_reads_infeasible():
    result = _knapsack(objective_bound=-9.0)
    assert result.status == HighsStatus.INFEASIBLE and result.x is None


def test_probing_off_is_an_option_highs_takes():
    result = _knapsack(presolve_rule_off=PRESOLVE_RULES_OFF)
    assert result.status == HighsStatus.OPTIMAL
    np.testing.assert_allclose(result.x, [1.0, 0.0, 1.0], atol=1e-9)


@pytest.mark.parametrize(
    "options", [{"no_such_option": 1}, {"mip_rel_gap": "wide"}, {"presolve_mode": 9}]
)
def test_an_option_highs_refuses_is_a_solver_error(options):
    with pytest.raises(SolverError, match="HiGHS refused the option"):
        _knapsack(**options)


def test_the_rules_switched_off_are_highss_probing_and_dominated_columns(tmp_path):
    # presolve_rule_off numbers HiGHS's rules, and releases may renumber them:
    # HiGHS lists each rule with its bit in its developer log.
    import highspy

    log = tmp_path / "highs.log"
    highs = _new_highs()
    for name, value in {
        "output_flag": True,
        "log_to_console": False,
        "log_file": str(log),
        "log_dev_level": 1,
        "presolve_rule_off": PRESOLVE_RULES_OFF,
    }.items():
        assert highs.setOptionValue(name, value) == highspy.HighsStatus.kOk
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 2, 1
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = [-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]
    lp.row_lower_, lp.row_upper_ = [-np.inf], [1.5]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = (
        [0, 1, 2],
        [0, 0],
        [1.0, 1.0],
    )
    lp.integrality_ = [highspy.HighsVarType.kInteger] * 2
    highs.passModel(lp)
    highs.run()
    text = log.read_text()
    for flag, name in ((PROBING, "Probing"), (DOMINATED_COLUMNS, "Dominated column")):
        bit = flag.bit_length() - 1
        rules = re.findall(rf"Rule\s+{bit} \(set bit\s+{bit} =\s+{flag}\): (.+)", text)
        assert rules and set(rules) == {name}


def test_every_program_is_presolved_without_probing_or_dominated_columns():
    for cutoff in (np.inf, 2.0):
        options = _highs_options(10.0, cutoff, 1e-9, heuristics=None)
        assert options["presolve"] is True
        assert options["presolve_rule_off"] == PRESOLVE_RULES_OFF
        assert "presolve_mode" not in options  # the full presolve


def test_infeasible_program():
    result = solve_milp(
        np.ones(1), np.ones(1, dtype=np.int8), np.zeros(1), np.ones(1),
        sp.csr_matrix([[1.0]]), np.array([0.2]), np.array([0.8]), {},
    )  # fmt: skip
    assert result.status == HighsStatus.INFEASIBLE and result.x is None


def test_program_scipy_bundled_highs_got_wrong():
    # HiGHS 1.12's presolve reported cost 3.0523 optimal here; the optimum,
    # found by enumerating every cell combination, is 2.9352 (points kept the
    # "auto" epsilon inside their cells, as the program was then built; the
    # float64 edges of the cells moved it by 1e-8 from the float32 ones).
    model, X = _model("gb_multiclass", 7840, n_features=3, n_trees=4)
    target = _target(model, "gb_multiclass", 7840)
    x = X[7840 % len(X)]
    result = optimal_counterfactual(
        model, x, target=target, cost="l1", epsilon="auto", warm_start=False
    )
    expected = _brute_force(model, x, target, cost="l1", epsilon="auto")
    assert result.status_[0] == "optimal"
    np.testing.assert_allclose(result.cost_[0], expected, rtol=1e-9)
    np.testing.assert_allclose(expected, 2.93519587, rtol=1e-8)


def test_nothing_reaches_standard_output():
    # HiGHS prints a banner when a process makes its first instance; JSON and CSV
    # output of the command line must not carry it.
    import subprocess
    import sys

    code = (
        "import numpy as np, scipy.sparse as sp\n"
        "from treelens._counterfactual._milp._highs import solve_milp\n"
        "r = solve_milp(np.array([-1.0]), np.ones(1, np.int8), np.zeros(1), np.ones(1),"
        " sp.csr_matrix([[1.0]]), np.array([0.0]), np.array([1.0]), {})\n"
        "print(r.status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "0\n"


def test_the_optimum_of_a_row_highss_full_presolve_got_wrong(monkeypatch):
    # On this row the full presolve declared a point optimal although a cheaper
    # one meets the target (cells one representable step past a threshold cost
    # about 1e-8): the optimum must not depend on HiGHS's presolve.
    import xgboost
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from treelens._counterfactual._milp import _solve

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = xgboost.XGBClassifier(n_estimators=100, max_depth=4, n_jobs=1).fit(X, y)
    row = X[np.flatnonzero(model.predict(X) == 0)[13]][None, :]
    kwargs = {"target": 1, "cost": "l1", "reference": X, "time_limit": 30}
    result = optimal_counterfactual(model, row, **kwargs)
    options = _solve._highs_options
    monkeypatch.setattr(
        _solve,
        "_highs_options",
        lambda *a, **k: {**options(*a, **k), "presolve": False},
    )
    unpresolved = optimal_counterfactual(model, row, **kwargs)
    assert result.status_[0] == unpresolved.status_[0] == "optimal"
    assert model.predict(unpresolved.X_cf_)[0] == model.predict(result.X_cf_)[0] == 1
    np.testing.assert_allclose(result.cost_[0], unpresolved.cost_[0], rtol=1e-6)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), boosted=st.booleans())
def test_the_optimum_does_not_depend_on_highss_presolve(seed, boosted):
    # Both solves are exact, so on models too large to enumerate the optimum
    # with HiGHS's presolve (as treelens runs it) must equal the one without.
    from unittest import mock

    from sklearn.datasets import make_classification
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    from treelens._counterfactual._milp import _solve

    X, y = make_classification(
        n_samples=200, n_features=6, n_informative=4, random_state=seed
    )
    if boosted:
        model = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)
    else:
        model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X[np.flatnonzero(model.predict(X) == 0)[:3]]
    kwargs = {"target": 1, "cost": "l1", "reference": X, "time_limit": 30}
    result = optimal_counterfactual(model, rows, **kwargs)
    options = _solve._highs_options
    with mock.patch.object(
        _solve,
        "_highs_options",
        lambda *a, **k: {**options(*a, **k), "presolve": False},
    ):
        unpresolved = optimal_counterfactual(model, rows, **kwargs)
    assert (result.status_ == "optimal").all()
    assert (unpresolved.status_ == "optimal").all()
    assert (model.predict(result.X_cf_) == 1).all()
    assert (model.predict(unpresolved.X_cf_) == 1).all()
    np.testing.assert_allclose(result.cost_, unpresolved.cost_, rtol=1e-6)
