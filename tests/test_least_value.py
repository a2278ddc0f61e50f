"""The objectives' least values (a bound on every optimum that needs no solver) and the trivial
designs that replace a solver's design left short of a proof."""

import numpy as np
import pytest

from mechdesign import LDP, Problem
from mechdesign.core.objectives import (
    ErrorProbability,
    ExpectedLoss,
    MaxOffDiagonal,
    ProfileMarginalError,
    WorstCaseLoss,
)
from mechdesign.privacy.divergence import DivergenceDP
from mechdesign.solvers.outcome import SolverOutcome


def random_designs(rng, n, m, count=200):
    """Row-stochastic matrices, many of them nearly deterministic (where the least value is met)."""
    for _ in range(count):
        K = rng.dirichlet(np.full(m, rng.choice([0.05, 1.0])), size=n)
        yield K


def bound_objective(objective, n, m):
    problem = Problem(inputs=n, outputs=m, objective=objective, privacy=[LDP(1.0)])
    return problem.objective


@pytest.mark.parametrize("make", [
    lambda rng, n, m: ExpectedLoss(rng.random((n, m)) - 0.3, prior=rng.dirichlet(np.ones(n))),
    lambda rng, n, m: WorstCaseLoss(rng.random((n, m)) * 2 - 0.5),
])
def test_no_design_falls_below_the_least_value_and_a_deterministic_one_reaches_it(make):
    rng = np.random.default_rng(4)
    for _ in range(10):
        n, m = int(rng.integers(2, 7)), int(rng.integers(2, 7))
        objective = bound_objective(make(rng, n, m), n, m)
        least = objective.least_value()
        for K in random_designs(rng, n, m):
            assert objective.value({"default": K}) >= least - 1e-12
        # the design putting every row where its loss is least reaches it (the worst-case loss:
        # the row with the largest such least entry decides)
        loss = objective.loss
        best = np.zeros((n, m))
        best[np.arange(n), loss.argmin(axis=1)] = 1.0
        assert objective.value({"default": best}) == pytest.approx(least, abs=1e-12)


def test_the_least_values_of_the_error_probability_the_max_off_diagonal_and_the_marginal_error():
    prior = np.array([0.5, 0.3, 0.2])
    error = Problem(inputs=3, objective=ErrorProbability(prior=prior), privacy=[LDP(1.0)]).objective
    assert error.least_value() == pytest.approx(0.0, abs=1e-15)  # the identity reports every input exactly
    assert error.least_value() <= 0.0
    off = Problem(inputs=3, objective=MaxOffDiagonal(), privacy=[LDP(1.0)]).objective
    assert off.least_value() == 0.0
    marginal = Problem(inputs=3, objective=ProfileMarginalError(), privacy=[LDP(1.0)]).objective
    assert marginal.least_value() == 0.0


def test_an_optimum_of_zero_under_a_conic_notion_is_proven_exactly():
    # the reverse-KL divergence DP of 10 inputs and the marginal error of the uniform
    # distribution: the data-independent design keeps the marginal, so the optimum is 0. The
    # conic solver's design is at 1e-17 and its duals prove a bound 1e-11 *above* it (not a
    # bound); the status was "failed"
    problem = Problem(inputs=10, objective=ProfileMarginalError(),
                      privacy=[DivergenceDP(0.0790962, divergence="reverse-kl")])
    result = problem.solve()
    assert result.status == "optimal", result.message
    assert result.holds
    assert result.objective <= 1e-12
    assert result.solver["bound"] == 0.0 and result.solver["bound_proven"]


def test_a_design_worse_than_the_data_independent_one_is_replaced_and_proven_optimal():
    # a private design whose rows all report [0.4, 0.2, 0.2, 0.2] moves the uniform marginal;
    # the uniform data-independent design keeps it (objective 0, the least value)
    problem = Problem(inputs=4, objective=ProfileMarginalError(), privacy=[LDP(1.0)])
    skewed = np.tile([0.4, 0.2, 0.2, 0.2], (4, 1))
    result = problem.finish({"default": skewed}, SolverOutcome("optimal"))
    assert result.status == "optimal", result.message
    assert result.objective == 0.0
    np.testing.assert_allclose(result.matrices()["default"], np.full((4, 4), 0.25))
    assert "data-independent design" in result.solver["trivial_design"]
    assert result.solver["bound"] == 0.0 and result.solver["bound_proven"]


def test_the_identity_replaces_a_design_when_it_is_private_and_better():
    # a total-variation bound of 1 holds for any design (TV is at most 1), the identity's too
    problem = Problem(inputs=3, objective=ErrorProbability(), privacy=[DivergenceDP(1.0, divergence="tv")])
    uniform = np.full((3, 3), 1 / 3)
    result = problem.finish({"default": uniform}, SolverOutcome("optimal"))
    assert result.status == "optimal", result.message
    assert result.objective == 0.0
    np.testing.assert_array_equal(result.matrices()["default"], np.eye(3))
    assert "identity" in result.solver["trivial_design"]


def test_a_design_no_trivial_design_beats_is_kept_with_its_failure():
    problem = Problem(inputs=4, objective=ErrorProbability(), privacy=[LDP(1.0)])
    e = np.e
    rr = np.full((4, 4), 1.0) + np.eye(4) * (e - 1)
    rr /= rr.sum(axis=1, keepdims=True)
    result = problem.finish({"default": rr}, SolverOutcome("optimal"))
    assert result.status == "failed"  # no bound reported, and neither trivial design is better
    assert "trivial_design" not in result.solver
    np.testing.assert_allclose(result.matrices()["default"], rr)


@pytest.mark.parametrize("make", [
    lambda rng, n, m: ExpectedLoss(rng.random((n, m)), prior=rng.dirichlet(np.ones(n))),
    lambda rng, n, m: WorstCaseLoss(rng.random((n, m))),
])
def test_the_best_constant_design_beats_every_data_independent_design(make):
    # a data-independent design's objective is linear (expected loss) or convex (worst case)
    # in its one row, so the best is a vertex: checked against every one-hot row and against
    # random rows
    rng = np.random.default_rng(7)
    for _ in range(10):
        n, m = int(rng.integers(2, 7)), int(rng.integers(2, 7))
        objective = bound_objective(make(rng, n, m), n, m)
        best = objective.best_constant_rows(["default"], m)["default"]
        value = objective.value({"default": np.tile(best, (n, 1))})
        rows = list(np.eye(m)) + list(rng.dirichlet(np.ones(m), size=50))
        assert all(value <= objective.value({"default": np.tile(r, (n, 1))}) + 1e-12 for r in rows)


def test_the_marginal_errors_best_constant_design_keeps_each_contexts_distribution():
    contexts = {"a": np.array([0.2, 0.3, 0.5]), "b": np.array([0.6, 0.4, 0.0])}
    problem = Problem(inputs=3, contexts=contexts, objective=ProfileMarginalError(), privacy=[LDP(1.0)])
    rows = problem.objective.best_constant_rows(problem.keys, 3)
    assert problem.objective.value({k: np.tile(rows[k], (3, 1)) for k in problem.keys}) <= 1e-16
    # a "distribution" that is not one offers nothing
    assert ProfileMarginalError({"default": np.array([0.5, 0.6])}).best_constant_rows(["default"], 2) is None


def test_a_design_stopped_at_the_time_limit_and_replaced_is_never_certified(monkeypatch):
    """A solve stopped short whose design a trivial design beats: the trivial design is offered
    before the solver's design is certified, which is then not certified at all (at 5,000
    locations each all-pairs audit takes about 100 s after the limit). The one returned is
    private (re-audited here), and the bound reported with it is the solver's."""
    import mechdesign.design.problem as problem_module
    from mechdesign import audit

    problem = Problem(inputs=4, objective=ProfileMarginalError(), privacy=[LDP(1.0)])
    skewed = np.tile([0.4, 0.2, 0.2, 0.2], (4, 1))  # private, moves the uniform marginal

    def refuse(*args, **kwargs):
        raise AssertionError("the replaced design was certified")

    monkeypatch.setattr(problem_module, "certify", refuse)
    outcome = SolverOutcome("time-limit", bound=0.0, bound_proven=True)
    result = problem.finish({"default": skewed}, outcome)
    assert "data-independent design" in result.solver["trivial_design"]
    assert "before certification" in result.solver["trivial_design"]
    k = result.matrices()["default"]
    np.testing.assert_allclose(k, np.full((4, 4), 0.25))
    assert audit(k, LDP(1.0)).holds and result.holds
    # the offered design reaches the proven bound 0: the gap is closed, the status optimal
    assert result.status == "optimal", result.message
    assert result.objective == 0.0 and result.solver["gap"] == 0.0


def test_a_design_stopped_at_the_time_limit_that_no_trivial_design_beats_is_certified(monkeypatch):
    from mechdesign.design import trivial_designs as module

    built = []
    original = module.trivial_designs
    monkeypatch.setattr(module, "trivial_designs", lambda *a, **k: built.append(1) or original(*a, **k))
    problem = Problem(inputs=4, objective=ErrorProbability(), privacy=[LDP(1.0)])
    rr = np.full((4, 4), 1.0) + np.eye(4) * (np.e - 1)
    rr /= rr.sum(axis=1, keepdims=True)
    # a little off its privacy level (as a solver's round-off leaves it): certification repairs it
    raw = rr + np.eye(4) * 1e-7
    result = problem.finish({"default": raw}, SolverOutcome("time-limit", bound=0.5, bound_proven=True))
    # offered before certification and not again after it: their values showed none can win
    assert len(built) == 1
    assert "trivial_design" not in result.solver
    assert result.status == "time-limit"
    k = result.matrices()["default"]
    assert result.holds and LDP(1.0).level(k) <= 1.0 + 1e-9
    np.testing.assert_allclose(k, rr, atol=1e-6)
