"""Honest statuses: "optimal" needs a finite proven gap within tolerance; "infeasible" needs a
Farkas certificate and never applies to the package's notions (a data-independent mechanism
satisfies them all); solver trouble never raises; tiny objectives are scaled; bad inputs are
ProblemErrors naming the argument."""


import cvxpy as cp
import numpy as np
import pytest

from mechdesign import Domain, Problem
from mechdesign.cli.output import Output
from mechdesign.cli.render import print_result
from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.core.objectives import (
    ExpectedLoss,
    MaxOffDiagonal,
    ProfileMarginalError,
    WorstCaseLoss,
)
from mechdesign.design import problem as problem_module
from mechdesign.design.spec import load_problem
from mechdesign.design.sweep import sweep
from mechdesign.privacy import LDP
from mechdesign.privacy.base import Notion
from mechdesign.solvers import convex_route
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.registry import SpecialSolver
from tests.conftest import PROBLEMS


def small_ldp(n=4, eps=1.0, seed=0):
    rng = np.random.default_rng(seed)
    loss = rng.random((n, n))
    return Problem(inputs=Domain.from_size(n), privacy=[LDP(eps)], objective=WorstCaseLoss(loss, ["default"]))


def test_nan_gap_is_never_optimal():
    problem = small_ldp()
    raw = {"default": np.full((4, 4), 0.25)}
    result = problem.finish(raw, SolverOutcome("optimal", {"name": "test"}, bound=float("nan"), bound_proven=True))
    assert result.status == "failed"
    assert "gap" in result.message


def test_unproven_bound_on_the_lp_route_is_not_optimal(monkeypatch):
    # duals that prove nothing (a snapshot whose bound is -inf): not optimal, and the only bound
    # is the one no design can beat, max_x min_y loss (the solver's claimed 0.3 is not used)
    class Unproven:
        required = True

        def bound(self, cutoff):
            return -np.inf

    problem = small_ldp()
    raw = {"default": np.full((4, 4), 0.25)}
    result = problem.finish(raw, SolverOutcome("optimal", {"name": "HIGHS"}, bound=0.3, proof=Unproven()))
    assert result.status == "failed"
    least = problem.objective.loss.min(axis=1).max()
    assert result.solver["bound"] == least and result.solver["bound_proven"] is True
    assert result.solver["gap"] == pytest.approx((result.objective - least) / result.objective)


def claim(status, times=None):
    """Replace the HiGHS call so that it reports ``status`` (the first ``times`` calls, or all)."""
    real = convex_route._highs
    calls = []

    def fake(program, verbose, retry=False):
        real(program, verbose, retry)
        calls.append(retry)
        if times is None or len(calls) <= times:
            program.problem._status = status
            program.problem._value = None
            for v in program.problem.variables():
                v.value = None
    return fake, calls


def raising(on=None):
    """Replace the HiGHS call so that it raises HiGHS's error on the calls numbered in ``on``
    (from 1), or on every call; the others run HiGHS."""
    real, calls = convex_route._highs, []

    def fake(program, verbose, retry=False):
        calls.append(retry)
        if on is None or len(calls) in on:
            raise cp.SolverError("Solver 'HIGHS' failed.")
        real(program, verbose, retry)
    return fake, calls


def test_spurious_infeasibility_is_retried(monkeypatch):
    fake, calls = claim(cp.INFEASIBLE, times=1)
    monkeypatch.setattr(convex_route, "_highs", fake)
    result = small_ldp().solve()
    assert calls == [False, convex_route.HIGHS_RETRIES[0]]
    assert result.status == "optimal"
    assert "retried" in result.solver


@pytest.mark.parametrize("time_limit", [None, 600.0])
def test_a_run_stopped_at_highs_iteration_limit_is_solved_again_not_reported_as_a_time_limit(monkeypatch, time_limit):
    # the real HiGHS, its interior point forced and allowed one iteration: the run stops at the
    # iteration limit (cvxpy's "user_limit", as at a time limit); with time left it is solved
    # again with the first retry's settings (the primal simplex) to the same optimum
    expected = small_ldp(n=6).solve()
    monkeypatch.setattr(convex_route, "IPM_FROM_ENTRIES", 0)
    monkeypatch.setitem(convex_route.HIGHS_OPTIONS, "ipm_iteration_limit", 1)
    real, statuses = convex_route._run_once, []

    def watched(program, name, verbose, retry, record):
        error = real(program, name, verbose, retry, record)
        statuses.append(program.problem.status)
        return error
    monkeypatch.setattr(convex_route, "_run_once", watched)
    result = small_ldp(n=6).solve(time_limit=time_limit)
    assert statuses[:2] == [cp.USER_LIMIT, cp.OPTIMAL]
    assert result.status == "optimal" and result.holds
    assert "iteration limit" in result.solver["retried"]
    assert result.objective == pytest.approx(expected.objective, rel=1e-7)


def test_a_retry_that_raises_leaves_the_next_setting_to_try(monkeypatch):
    # the first run claims unboundedness, the first retry raises: the later settings still run
    real, calls = convex_route._highs, []

    def fake(program, verbose, retry=False):
        calls.append(retry)
        if len(calls) == 2:
            raise cp.SolverError("Solver 'HIGHS' failed.")
        real(program, verbose, retry)
        if len(calls) == 1:
            program.problem._status, program.problem._value = cp.UNBOUNDED, None
    monkeypatch.setattr(convex_route, "_highs", fake)
    result = small_ldp().solve()
    assert calls == [False, *convex_route.HIGHS_RETRIES[:2]]
    assert result.status == "optimal" and result.holds
    assert str(convex_route.HIGHS_RETRIES[1]) in result.solver["retried"]


def test_approximate_ldp_at_a_large_epsilon_that_presolve_calls_unbounded():
    # seven inputs, ε = 19.33, δ = 0.135, a prior of masses down to 1e-12: with presolve HiGHS
    # calls the LP unbounded, and the primal simplex without it infeasible (the LP is neither:
    # its variables are probabilities and the uniform design is private); the data-independent
    # design (error 6/7) was returned
    from mechdesign.core.objectives import ErrorProbability
    from mechdesign.privacy import ApproxLDP

    prior = [1.327093973258099e-10, 0.21707615486560783, 1.4851170726696262e-12, 9.095309972618586e-09,
             0.3119655020895695, 0.4709581192201474, 2.145951707196636e-07]
    result = Problem(inputs=7, objective=ErrorProbability(prior=prior), privacy=[ApproxLDP(19.33, 0.135)]).solve()
    assert result.status == "optimal" and result.holds
    assert result.objective < 1e-7 < 6 / 7


def test_persistent_infeasibility_of_a_package_notion_is_a_failure(monkeypatch):
    fake, calls = claim(cp.INFEASIBLE)
    monkeypatch.setattr(convex_route, "_highs", fake)
    problem = small_ldp()
    result = problem.solve()
    assert result.status == "failed"
    assert "solver failed" in result.message and "feasible by construction" in result.message
    # the certified data-independent design: uniform rows, ε-LDP with zero leakage
    assert result.holds
    assert np.allclose(result.mechanism.matrix, 0.25)
    assert result.objective == pytest.approx(problem.objective.value({"default": np.full((4, 4), 0.25)}))


def test_spurious_unboundedness_is_a_failure(monkeypatch):
    fake, _ = claim(cp.UNBOUNDED)
    monkeypatch.setattr(convex_route, "_highs", fake)
    result = small_ldp().solve()
    assert result.status == "failed" and result.holds


class FirstEntryAtLeast(Notion):
    """A user notion (not the package's): K[0, 0] >= level for every mechanism."""

    name = "first-entry"

    def __init__(self, level):
        self.level = level

    def constraints(self, K, coefficients):
        return [v[0, 0] >= self.level for v in K.values()]

    def audit(self, mechs):
        got = min(float(m[0, 0]) for m in mechs.values())
        return Audit(self.name, {"level": self.level}, {"level": got}, got >= self.level - 1e-9)


def test_user_notion_infeasibility_is_proven_by_farkas():
    problem = small_ldp()
    problem.privacy.append(FirstEntryAtLeast(2.0))  # impossible: rows sum to 1
    result = problem.solve()
    assert result.status == "infeasible"
    assert result.solver["infeasibility_proven"] is True


def test_infeasibility_claim_without_certificate_is_not_reported(monkeypatch):
    fake, _ = claim(cp.INFEASIBLE)
    monkeypatch.setattr(convex_route, "_highs", fake)
    problem = small_ldp()
    problem.privacy.append(FirstEntryAtLeast(0.5))  # feasible: no Farkas certificate exists
    result = problem.solve()
    assert result.status == "failed"
    assert "no certificate" in result.message


@pytest.mark.parametrize("exc", [RuntimeError("boom"), ValueError("bad"), ArithmeticError("nan"), MemoryError()])
def test_special_solver_exceptions_fall_through(monkeypatch, exc):
    def broken(problem, limits=None):
        raise exc

    original = problem_module.special_solvers
    monkeypatch.setattr(problem_module, "special_solvers",
                        lambda: (SpecialSolver("broken", lambda p: None, broken), *original()))
    result = load_problem(PROBLEMS / "ldp-skewed-prior.toml").solve()
    assert result.status == "optimal"
    record = result.solver["special_solvers"]
    assert record[0]["solver"] == "broken" and record[0]["outcome"].startswith(f"raised {type(exc).__name__}")
    assert any(r["outcome"] == "solved" for r in record)


def test_declining_special_solver_is_recorded(monkeypatch):
    def declines(problem, limits=None):
        raise SolverDeclined("too large")

    monkeypatch.setattr(problem_module, "special_solvers", lambda: (SpecialSolver("declines", lambda p: None, declines),))
    result = small_ldp().solve()
    assert result.status == "optimal"
    assert result.solver["special_solvers"] == [{"solver": "declines", "applies": True,
                                                  "outcome": "declined: too large"}]


def test_unknown_solver_argument_raises_like_the_constructor():
    problem = small_ldp()
    with pytest.raises(ProblemError) as err:
        problem.solve(solver="gurobi")
    assert err.value.key == "solve.solver"
    with pytest.raises(ProblemError):
        Problem(inputs=Domain.from_size(2), objective=WorstCaseLoss(np.ones((2, 2)), ["default"]), solver="gurobi")


def test_no_privacy_is_stated(capsys):
    problem = Problem(inputs=Domain.from_size(3), objective=WorstCaseLoss(1 - np.eye(3), ["default"]))
    result = problem.solve()
    assert result.status == "optimal" and result.objective == pytest.approx(0.0, abs=1e-12)
    assert result.solver["privacy"] == "none: no privacy constraint"
    assert result.to_dict()["solver"]["privacy"].startswith("none")
    print_result(result, Output(terminal=False))
    assert "no privacy constraint" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["ldp-skewed-prior", "dprivacy-line", "dinf-distp", "warner-rr", "geo-grid", "kl-distp"])
def test_tiny_losses_are_solved_to_the_same_relative_precision(name):
    reference = load_problem(PROBLEMS / f"{name}.toml").solve()
    tiny = load_problem(PROBLEMS / f"{name}.toml")
    tiny.objective.loss = tiny.objective.loss * 1e-9
    result = tiny.solve()
    assert reference.status == "optimal"
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(1e-9 * reference.objective, rel=1e-7)
    assert result.solver["gap"] <= 1e-7


def test_tiny_losses_in_a_sweep():
    # the sweep's parametric program is scaled like the plain solve's (geo-grid: general LP route)
    reference = load_problem(PROBLEMS / "geo-grid.toml").solve()
    tiny = load_problem(PROBLEMS / "geo-grid.toml")
    tiny.objective.loss = tiny.objective.loss * 1e-9
    eps = tiny.privacy[0].epsilon
    point = sweep(tiny, [eps], use_special=False).points[0]
    assert point.result.status == "optimal", point.result.message
    assert point.result.objective == pytest.approx(1e-9 * reference.objective, rel=1e-7)


# --- boundary checks -------------------------------------------------------------------------

def test_loss_of_the_wrong_shape():
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), privacy=[LDP(1.0)],
                objective=ExpectedLoss(np.ones((4, 4)), {"default": np.full(4, 0.25)}))
    assert err.value.key == "objective.loss" and "(3, 3)" in str(err.value)


def test_prior_of_the_wrong_length():
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), privacy=[LDP(1.0)],
                objective=ExpectedLoss(np.ones((3, 3)), {"default": np.full(4, 0.25)}))
    assert err.value.key == "objective.row_weights[default]"


def test_weights_must_be_finite_and_non_negative():
    with pytest.raises(ProblemError) as err:
        ExpectedLoss(np.ones((2, 2)), {"default": np.array([1.5, -0.5])})
    assert err.value.key == "objective.row_weights[default]"
    with pytest.raises(ProblemError) as err:
        ExpectedLoss(np.array([[0.0, np.nan], [1.0, 0.0]]), {"default": np.full(2, 0.5)})
    assert err.value.key == "objective.loss"


def test_contexts_must_be_probability_vectors_of_the_right_length():
    objective = MaxOffDiagonal(1 - np.eye(3), ["a"])
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), objective=objective, contexts={"a": [0.5, 0.5]})
    assert err.value.key == "mechanism.contexts[a]" and "3 probabilities" in str(err.value)
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), objective=objective, contexts={"a": [0.5, 0.5, 0.5]})
    assert "summing to 1" in str(err.value)


def test_objective_contexts_must_exist():
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), objective=MaxOffDiagonal(1 - np.eye(3), ["a", "b"]),
                contexts={"a": np.full(3, 1 / 3)})
    assert err.value.key == "objective.keys" and "'b'" in str(err.value)
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(2), objective=ExpectedLoss(np.ones((2, 2)), {"x": np.full(2, 0.5)}))
    assert err.value.key == "objective.row_weights"


def test_profile_marginal_error_needs_matching_sizes():
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), objective=ProfileMarginalError({"default": np.full(2, 0.5)}))
    assert err.value.key == "objective.distributions[default]"
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(2), outputs=Domain.from_size(3),
                objective=ProfileMarginalError({"default": np.full(2, 0.5)}))
    assert err.value.key == "objective.kind"


def test_other_arguments_are_checked():
    objective = WorstCaseLoss(np.ones((2, 2)), ["default"])
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(2), objective=objective, gap_tolerance=-1.0)
    assert err.value.key == "solve.gap_tolerance"
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(2), objective=objective, privacy=["ldp"])
    assert err.value.key == "privacy"
    with pytest.raises(ProblemError) as err:
        Problem(inputs=2.5, objective=objective)  # a list of labels is a domain; a float is not
    assert err.value.key == "inputs"
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(2), objective="expected-loss")
    assert err.value.key == "objective"


def test_unproven_infeasibility_from_a_special_solver_is_a_failure(monkeypatch):
    def claims_infeasible(problem, limits=None):
        return None, SolverOutcome("infeasible", {"name": "claims"}, "(no reason)")

    monkeypatch.setattr(problem_module, "special_solvers",
                        lambda: (SpecialSolver("claims", lambda p: None, claims_infeasible),))
    result = small_ldp().solve()
    assert result.status == "failed"
    assert "without a certificate" in result.message
    assert result.holds and np.allclose(result.mechanism.matrix, 0.25)


def test_a_result_without_any_bound_is_not_optimal():
    result = small_ldp().finish({"default": np.full((4, 4), 0.25)}, SolverOutcome("optimal", {"name": "test"}))
    assert result.status == "failed" and "no lower bound" in result.message


def test_two_different_targets_are_proven_infeasible():
    # each target alone is met by rows = μ; together (λK = μ1 and λK = μ2) they cannot be
    from mechdesign.privacy import Target

    lam = {"a": np.array([0.5, 0.3, 0.2])}
    problem = Problem(inputs=Domain.from_size(3), contexts=lam,
                      objective=ExpectedLoss(1 - np.eye(3), {"a": lam["a"]}),
                      privacy=[Target(lam, np.array([0.2, 0.3, 0.5])), Target(lam, np.array([0.6, 0.2, 0.2]))])
    assert not problem.data_independent_design_holds()
    result = problem.solve()
    assert result.status == "infeasible" and result.solver["infeasibility_proven"] is True
    single = Problem(inputs=Domain.from_size(3), contexts=lam, objective=ExpectedLoss(1 - np.eye(3), lam),
                     privacy=[Target(lam, np.array([0.2, 0.3, 0.5]))])
    assert single.data_independent_design_holds()


def test_a_single_mechanisms_prior_is_a_probability_vector():
    with pytest.raises(ProblemError) as err:
        Problem(inputs=Domain.from_size(3), privacy=[LDP(1.0)],
                objective=ExpectedLoss(np.ones((3, 3)), {"default": np.array([0.5, 0.5, 0.5])}))
    assert err.value.key == "objective.row_weights[default]" and "summing to 1" in str(err.value)


@pytest.mark.parametrize("notion", ["ldp", "approx-ldp", "distp", "ldp-5"])
def test_an_optimum_of_zero_is_proven_without_dividing_by_it(notion):
    # the marginal error of a uniform profile is 0 for the uniform design (on 5 inputs 2.8e-17,
    # round-off): the natural scale of the objective is not that design's value but the
    # first-output design's, 1 − 1/n (a gap of 1e-14 above 0 was 7e285 relative, or 500 on
    # 5 inputs, and a re-solve in units of a value of 0 divided by it)
    from mechdesign.privacy import ApproxLDP, DistP

    n = 5 if notion == "ldp-5" else 3
    privacy = {"ldp": LDP(1.0), "approx-ldp": ApproxLDP(1.0, 0.01), "ldp-5": LDP(1.0),
               "distp": DistP(0.5, [([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])])}[notion]
    problem = Problem(inputs=n, objective=ProfileMarginalError(), privacy=[privacy])
    assert problem.objective_scale() == pytest.approx(1 - 1 / n)
    result = problem.solve()
    assert result.status == "optimal" and result.holds
    assert abs(result.objective) <= 1e-12


def test_a_first_run_that_raises_is_solved_again_with_other_settings(monkeypatch):
    # HiGHS raised on a badly scaled LP (links of e^10 up to ε·d = 100) where other settings
    # solve it: the run ended with the data-independent design before
    expected = small_ldp(n=5).solve()
    fake, calls = raising(on={1})
    monkeypatch.setattr(convex_route, "_highs", fake)
    result = small_ldp(n=5).solve()
    assert calls == [False, convex_route.HIGHS_RETRIES[0]]
    assert result.status == "optimal" and result.holds
    assert "raised an error" in result.solver["retried"]
    assert result.objective == pytest.approx(expected.objective, rel=1e-9)


def test_a_run_that_keeps_raising_ends_with_the_data_independent_design_after_every_setting(monkeypatch):
    fake, calls = raising()
    monkeypatch.setattr(convex_route, "_highs", fake)
    result = small_ldp(n=5).solve()
    assert calls == [False, *convex_route.HIGHS_RETRIES]
    assert result.status == "failed" and result.holds
    assert "data-independent" in result.message
