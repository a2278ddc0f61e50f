"""Problems whose optimum lies far below the costs' largest entry: the general route re-solves
an LP in units of the value found, and the special solvers' per-context runs are repeated in
units of their value; both then end optimal.

The d-privacy instances were met by random search over small metric problems (near-coincident
points, priors with zeros, ε up to 8), where the first solve returned a certified design several
times the optimum, or one whose proven gap stayed at 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign import LDP, ExpectedLoss, MetricPrivacy, Problem, problem_from_dict
from mechdesign.core.limits import Limits
from mechdesign.solvers import special_solvers


def _spec(kind, points, prior, epsilon, loss):
    return {"name": "resolve", "inputs": {"points": points}, "metric": {"kind": kind},
            "distributions": {"prior": prior}, "privacy": [{"notion": "metric", "epsilon": epsilon}],
            "objective": {"kind": "expected-loss", "prior": "prior", "loss": loss}}


POINT_MASS = [
    ("euclidean", [[1.0, 1.0], [3.0, 2.0], [3.0, 3.0], [2.0, 2.0]], 8.0, "hamming"),
    ("euclidean", [[2.0, 1.0], [2.0000001, 2.0000001], [1e-13, 3.0000000000001], [2.0, 2.0]], 2.0, "metric"),
    ("haversine", [[45.010000001, 7.000000001], [45.01, 7.01], [45.0, 7.015], [45.015, 7.010000000000001]],
     8.0, "metric"),
]


@pytest.mark.parametrize("kind, points, epsilon, loss", POINT_MASS)
def test_a_point_mass_prior_has_optimum_zero(kind, points, epsilon, loss):
    # all the prior on the last point: the constant mechanism that always reports it is private
    # (its rows are equal) and loses nothing, so the optimum is 0
    result = problem_from_dict(_spec(kind, points, [0.0, 0.0, 0.0, 1.0], epsilon, loss)).solve()
    assert result.status == "optimal", result.message
    assert abs(result.objective) <= 1e-12


SKEWED = [
    ("euclidean", [[10.0000000000001, 10.0000000000001], [1e-07, 30.0000001], [1e-07, 20.0000001],
                   [20.0000000000001, 10.0000000000001], [10.0000000000001, 20.0000000000001],
                   [30.0000000000001, 1e-13]],
     [0.0, 0.07345186781681769, 0.0, 0.22357809061881093, 0.013293056272853746, 0.6896769852915177], 1.0),
    ("euclidean", [[20.0, 30.0], [30.0, 30.0], [30.0, 30.0], [30.0000001, 30.0000001],
                   [30.0000000000001, 10.0000000000001], [10.0000000000001, 10.0000000000001]],
     [0.0, 0.0, 0.17529590996846445, 0.35481656121190996, 0.40980374279405696, 0.06008378602556866], 1.0),
    ("euclidean", [[1.5000000000001, 1.5000000000001], [1.0, 1.5], [1.0000001, 1.5000001], [1.0, 1.5],
                   [0.5, 1.5], [1.5000000000001, 0.5000000000001]],
     [0.13565133402266208, 0.5599042565989678, 0.0, 0.0, 0.0, 0.3044444093783702], 8.0),
]


def _lazy_pairs_value(problem) -> float:
    """The certified value of the lazy-pairs solver run directly (another formulation: only the
    pairs the design violates, in units of its incumbent)."""
    solver = next(s for s in special_solvers() if "lazy" in s.name)
    raw, outcome = solver.solve(problem, Limits(None, None))
    return problem.finish(raw, outcome, Limits(None, None)).objective


@pytest.mark.parametrize("kind, points, prior, epsilon", SKEWED)
def test_squared_loss_optimum_is_proven_and_no_worse_than_another_formulation(kind, points, prior, epsilon):
    spec = _spec(kind, points, prior, epsilon, "squared")
    result = problem_from_dict(spec).solve()
    assert result.status == "optimal", result.message
    assert all(a.holds for a in result.certificate)
    bound = result.solver["bound"]
    assert result.solver["bound_proven"] and bound <= result.objective
    other = _lazy_pairs_value(problem_from_dict(spec))  # certified, so never below the optimum
    assert bound <= other * (1 + 1e-9)
    assert result.objective <= other * (1 + 1e-5)  # the first solve was up to 4× above it


def test_the_resolves_are_recorded():
    kind, points, prior, epsilon = SKEWED[0]
    result = problem_from_dict(_spec(kind, points, prior, epsilon, "squared")).solve(solver="highs")
    assert result.status == "optimal", result.message
    runs = result.solver["resolves"]
    assert runs and all(np.isfinite(r["scale"]) and r["scale"] > 0 for r in runs)


def remapped_geometric_loss(prior: np.ndarray, loss: np.ndarray, eps: float) -> float:
    """The truncated geometric mechanism on {0..n−1} followed by the Bayes-optimal remap of
    each output: by Ghosh, Roughgarden and Sundararajan ("Universally Utility-Maximizing
    Privacy Mechanisms", STOC 2009) the optimum among ε·|x − x'|-private mechanisms for any
    prior and any loss non-decreasing in |x − y|."""
    n = prior.size
    a = np.exp(-eps)
    x = np.arange(n)
    g = a ** np.abs(x[:, None] - x[None, :]) * (1 - a) / (1 + a)
    g[:, 0] = a ** x / (1 + a)
    g[:, -1] = a ** (n - 1 - x) / (1 + a)
    joint = prior[:, None] * g  # Pr[x, z]
    return float((joint.T @ loss).min(axis=1).sum())  # each output z remapped to its best r


def test_a_line_context_far_below_its_largest_cost_is_proven_to_a_tight_tolerance():
    # 210 points (more entries than the plain LP takes over), a Zipf prior and the squared loss
    # at ε = 0.1: the largest cost is 200 times the optimum. With thresholds absolute in the
    # costs' units the rays' first run stopped at a proven gap of 6e-7 against a tolerance of
    # 1e-7, and a second run in units of the value closed it; with thresholds relative to the
    # value the first run closes it. Either way the solve ends optimal at the closed form.
    n, eps = 210, 0.1
    prior = 1.0 / np.arange(1, n + 1) ** 1.1
    prior /= prior.sum()
    x = np.arange(n, dtype=float)
    loss = (x[:, None] - x[None, :]) ** 2
    problem = Problem(inputs=x[:, None], metric="absolute", objective=ExpectedLoss("squared", prior=prior),
                      privacy=[MetricPrivacy(eps)], gap_tolerance=1e-7)
    result = problem.solve()
    assert result.status == "optimal", result.message
    runs = [step for step in result.solver["path"] if "design from" in step]  # one summary per run
    assert len(runs) in (1, 2)  # a second run, when there is one, is recorded
    optimum = remapped_geometric_loss(prior, loss, eps)
    assert result.objective == pytest.approx(optimum, rel=1e-9)
    assert result.solver["bound"] <= optimum * (1 + 1e-12)
    assert result.solver["gap"] <= 1e-7


def test_an_optimum_of_zero_is_proven_by_the_objectives_least_value():
    # ε = 0 makes every row equal; column 0 costs nothing for any input, so the constant design
    # reporting 0 loses nothing and the optimum is 0
    n = 8
    loss = np.zeros((n, n))
    loss[0, 7] = 0.1777
    result = Problem(inputs=n, objective=ExpectedLoss(loss, prior=np.full(n, 1 / n)),
                     privacy=[LDP(0.0)]).solve(solver="highs")
    assert result.status == "optimal" and result.objective == 0.0


def test_a_degenerate_lp_where_the_simplex_stalls_is_finished_by_the_interior_point_method():
    # every loss 1 but reporting 0 for input 2: the optimum reports 0 whenever the input is 2
    # (its neighbours within the privacy cone can still report anything at loss 1), so the
    # expected loss is 1 − 1/11; the dual simplex stops at K[2, 0] = 0.99998
    points = np.array([0, 1, 8, 3, 4, 5, 6, 2, 19, 33, 35], dtype=float)
    loss = np.ones((11, 11))
    loss[2, 0] = 0.0
    result = Problem(inputs=points[:, None], metric="absolute", objective=ExpectedLoss(loss, prior=np.full(11, 1 / 11)),
                     privacy=[MetricPrivacy(1.0)]).solve(solver="highs")
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(10 / 11, rel=1e-12)


#: four inputs under ε-LDP at ε = 28 (pair coefficients e^28): the first solve's gap stayed
#: open at a value of 2e-12, and HiGHS's interior point, one of the re-solve strategies, never
#: returned on the LP in units of that value
STEEP_LDP = {"name": "steep-ldp", "inputs": {"size": 4}, "metric": {"kind": "absolute"},
             "distributions": {"prior": [0.0, 0.3076923076923077, 0.23076923076923078, 0.46153846153846156]},
             "privacy": [{"notion": "ldp", "epsilon": 28.130613525479635}],
             "objective": {"kind": "expected-loss", "prior": "prior", "loss": "hamming"}}


def test_a_resolve_strategy_that_does_not_return_is_held_to_its_budget():
    result = problem_from_dict(STEEP_LDP).solve()
    assert result.status == "optimal", result.message
    assert all(a.holds for a in result.certificate)
    # The optimum is 2e^{−ε} to a relative 1e-11. Above: randomized response over the three
    # inputs of positive prior, 2/(e^ε + 2). Below: for every ε-LDP K and such an input x,
    # its error e_x >= max(1 − K[x,x], e^{−ε} Σ_{y≠x} K[y,y]) (y over those three); if every
    # K[y,y] >= 1 − δ each e_x >= 2e^{−ε}(1 − δ), else the one below costs its prior times δ
    # (at least 0.23δ); δ = 2e^{−ε}/0.23 makes both at least 2e^{−ε}(1 − 8.7e^{−ε}).
    eps = STEEP_LDP["privacy"][0]["epsilon"]
    assert result.objective == pytest.approx(2.0 / (np.exp(eps) + 2.0), rel=1e-9)
    assert result.solver["bound"] <= result.objective


def test_a_resolve_stopped_by_its_budget_gives_no_design_and_no_status(monkeypatch):
    from mechdesign.design import resolve

    monkeypatch.setattr(resolve, "BUDGET_FACTOR", 0.0)
    monkeypatch.setattr(resolve, "BUDGET_FLOOR", 1e-9)  # every re-solve stopped at once
    result = problem_from_dict(STEEP_LDP).solve()
    runs = result.solver["resolves"]
    assert runs and all(run["status"].startswith("stopped after its budget") for run in runs)
    assert result.status == "failed"  # the first run's certified design, not "time-limit"
    assert all(a.holds for a in result.certificate)


def test_a_context_solved_again_in_units_of_its_value_keeps_the_better_design_and_bound():
    # the mechanism behind a context whose first run leaves its gap open: costs C with largest
    # entry s = 2, a first run (units of s) at 0.5 with bound 0.4; the second run sees C / v,
    # v = 0.5·2 = 1, and returns 0.9 with bound 0.9 in those units, i.e. 0.45 in units of s
    from mechdesign.solvers.contexts import ContextSolution, _again_in_units_of_value

    C = np.array([[0.0, 2.0], [2.0, 0.0]])
    first = ContextSolution(np.eye(2), objective=0.5, bound=0.4, rounds=1, columns=2)
    seen = []

    def solve_one(key, cost):
        seen.append(cost)
        return ContextSolution(np.full((2, 2), 0.5), objective=0.9, bound=0.9, rounds=2, columns=2)

    found, bounds = _again_in_units_of_value("default", C, 2.0, first, [0.4, 0.0], solve_one, None)
    np.testing.assert_array_equal(seen[0], C / 1.0)
    assert found.objective == pytest.approx(0.45, rel=1e-15) and found.rounds == 3
    assert 0.45 * (1 - 1e-14) <= sum(bounds) <= 0.45


def _path_problem(n: int, epsilon: float, prior: np.ndarray) -> Problem:
    from mechdesign import Domain, Metric

    labels = [f"v{i}" for i in range(n)]
    metric = Metric("graph", edges=[[labels[i], labels[i + 1], 1.0] for i in range(n - 1)])
    dom = Domain(tuple(labels))
    return Problem(inputs=dom, privacy=[MetricPrivacy(epsilon, metric, dom)],
                   objective=ExpectedLoss(metric.distances(dom), {"default": prior}))


@pytest.fixture
def general_route(monkeypatch):
    """Small d-privacy problems through the general route: the whole pair LP built directly,
    which takes them first, is left out (the route they take when it declines)."""
    from mechdesign.solvers import metric_small
    from mechdesign.solvers.registry import SpecialSolver

    left_out = SpecialSolver(metric_small.NAME, lambda problem: "turned off (test)", metric_small.SOLVER.solve)
    monkeypatch.setattr(metric_small, "SOLVER", left_out)


# 15 points of a path (unit edges, a graph metric), ε = 13, a Dirichlet(0.1)
# prior with masses down to 1e-28: the optimum, 3.5e-6 against costs up to 14, is the remapped
# truncated geometric mechanism's (Ghosh, Roughgarden and Sundararajan, STOC 2009: optimal for
# every prior under a loss monotone in |x − y| on a unit-spaced line). HiGHS's design is optimal
# to 3e-10 but its duals prove a gap of 1.7e-6 at best, in every unit and strategy.
PATH_PRIOR = np.random.default_rng(3).dirichlet(np.full(15, 0.1))


@pytest.fixture
def unrefined(monkeypatch):
    """The LP's duals as HiGHS leaves them (no refinement rounds, :mod:`dual_refinement`): on the
    15-point path at ε = 13 they do not prove the optimum, which the re-solves then must."""
    from mechdesign.solvers import dual_refinement

    monkeypatch.setattr(dual_refinement, "ROUNDS", 0)


def test_the_interior_point_proves_what_the_lps_duals_cannot(general_route, unrefined):
    from mechdesign.bench.scale import _remapped_geometric_loss

    optimum = _remapped_geometric_loss(15, 13.0, PATH_PRIOR)
    result = _path_problem(15, 13.0, PATH_PRIOR).solve()
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert result.objective >= optimum * (1 - 1e-9)  # a private design: never below the optimum
    assert result.solver["bound"] <= optimum * (1 + 1e-12)  # proven: never above the optimum
    runs = result.solver["resolves"]
    assert runs[-1]["route"] == "d-privacy interior point" and runs[-1]["status"] == "optimal"
    assert all(run["status"] != "optimal" for run in runs[:-1])  # (the LP alone did not prove it)
    assert result.certificate[0].holds


def test_without_the_interior_point_the_gap_stays_open_and_is_said(monkeypatch, general_route, unrefined):
    from mechdesign.solvers import metric_interior_route
    from mechdesign.solvers.highs_model import SolverDeclined

    def declines(problem, limits=None):
        raise SolverDeclined("declined (test)")

    monkeypatch.setattr(metric_interior_route, "metric_by_interior_point", declines)
    result = _path_problem(15, 13.0, PATH_PRIOR).solve()
    assert result.status == "failed" and "optimality gap" in result.message
    assert result.certificate[0].holds  # the LP's certified design is kept
    assert result.solver["resolves"][-1] == {"route": "d-privacy interior point", "status": "declined: declined (test)"}


def test_a_solver_named_runs_alone(unrefined):
    # "highs" named: HiGHS and its strategies only (a second, independent algorithm), so the
    # gap its duals leave open stays open and is said
    result = _path_problem(15, 13.0, PATH_PRIOR).solve(solver="highs")
    assert result.status == "failed" and "optimality gap" in result.message
    assert all("route" not in run for run in result.solver["resolves"])


def test_the_lps_refined_duals_prove_what_its_own_duals_cannot():
    # the same path with HiGHS alone, its duals refined where they fall short of the tolerance:
    # optimal, the bound at most the closed-form optimum
    from mechdesign.bench.scale import _remapped_geometric_loss

    optimum = _remapped_geometric_loss(15, 13.0, PATH_PRIOR)
    result = _path_problem(15, 13.0, PATH_PRIOR).solve(solver="highs")
    assert result.status == "optimal", result.message
    assert optimum * (1 - 1e-6) <= result.solver["bound"] <= optimum * (1 + 1e-12)
    assert result.objective >= optimum * (1 - 1e-9) and result.certificate[0].holds


def test_the_interior_point_is_held_to_the_strategies_budget(monkeypatch, general_route, unrefined):
    # like every re-solve strategy: at most BUDGET_FACTOR times the first run's seconds (at least
    # BUDGET_FLOOR), within the solve's own limit; a run its budget stops gives only its bound
    from mechdesign.design import resolve
    from mechdesign.solvers import metric_interior_route

    given = []
    real = metric_interior_route.metric_by_interior_point

    def recorded(problem, limits=None):
        given.append(limits.time_limit)
        return real(problem, limits)

    monkeypatch.setattr(metric_interior_route, "metric_by_interior_point", recorded)
    monkeypatch.setattr(resolve, "BUDGET_FLOOR", 1e-9)
    monkeypatch.setattr(resolve, "BUDGET_FACTOR", 1e-9)  # a budget the run cannot keep
    result = _path_problem(15, 13.0, PATH_PRIOR).solve()
    assert len(given) == 1 and given[0] < 1e-3
    run = result.solver["resolves"][-1]
    assert run["route"] == "d-privacy interior point" and run["status"].startswith("stopped after its budget")
    assert result.status == "failed" and result.certificate[0].holds  # the LP's design, its gap said


def test_a_conic_program_is_solved_again_in_units_of_its_value():
    # information privacy of 2.02 bits over six inputs, the error probability under a prior
    # with masses down to 6e-11: the optimum is 1.55e-7, which Clarabel's absolute tolerances
    # met at a proven gap of 1.1e-4 (status failed); in units of the value the gap closes
    import warnings

    import cvxpy as cp

    from mechdesign.privacy.information import InformationPrivacy

    prior = np.array([9.9467815746058841e-01, 5.2772541107595460e-03, 6.2667523538613512e-11,
                      2.4241735218906263e-06, 4.1830780387699839e-05, 3.3341207498417729e-07])
    bits = 2.024917876132806
    loss = 1.0 - np.eye(6)
    result = Problem(inputs=6, objective=ExpectedLoss(loss, prior=prior), privacy=[InformationPrivacy(bits)]).solve()
    assert result.status == "optimal", result.message
    assert result.holds
    assert [run["scale"] for run in result.solver["resolves"]]  # the re-solve is recorded
    # the program written from the definition (the channel's capacity min_q max_x D(K[x] ‖ q)
    # at most `bits`), solved in units of 1e-7 by Clarabel
    K, q = cp.Variable((6, 6), nonneg=True), cp.Variable(6, nonneg=True)
    constraints = [cp.sum(K, axis=1) == 1, cp.sum(q) == 1,
                   cp.sum(cp.rel_entr(K, np.ones((6, 1)) @ cp.reshape(q, (1, 6), order="C")), axis=1)
                   <= bits * np.log(2)]
    reference = cp.Problem(cp.Minimize(cp.sum(cp.multiply(prior[:, None] * loss, K)) * 1e7), constraints)
    with warnings.catch_warnings():  # Clarabel calls its own run inexact (masses of 6e-11): 1e-4 is asked
        warnings.simplefilter("ignore")
        reference.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert result.objective == pytest.approx(reference.value * 1e-7, rel=1e-4)


STEEP_GRID_LOSS = np.array([
    [0, 0, 2, 0, 2, 0, 0, 1, 2, 0, 2, 2, 2, 1],
    [0, 1, 2, 2, 1, 2, 0, 2, 2, 2, 2, 0, 0, 1],
    [1, 2, 1, 1, 1, 2, 1, 2, 0, 1, 1, 0, 2, 0],
    [2, 0, 2, 2, 1, 0, 0, 1, 2, 1, 2, 0, 1, 1],
    [0, 1, 0, 1, 0, 1, 1, 2, 0, 0, 1, 1, 2, 2],
    [1, 1, 1, 0, 1, 1, 2, 2, 0, 1, 1, 0, 2, 0],
    [1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 2, 0, 2],
    [2, 1, 1, 1, 0, 1, 1, 2, 2, 2, 2, 0, 2, 2],
    [0, 0, 1, 1, 1, 0, 2, 2, 0, 0, 1, 0, 0, 2],
    [2, 2, 2, 1, 2, 1, 0, 1, 2, 2, 2, 1, 0, 2],
    [1, 0, 1, 0, 2, 1, 0, 0, 1, 1, 0, 1, 0, 2],
    [0, 1, 2, 0, 1, 1, 1, 1, 0, 1, 2, 2, 2, 1],
    [2, 0, 2, 0, 1, 0, 1, 1, 1, 2, 0, 1, 2, 1],
    [2, 0, 2, 2, 1, 0, 0, 1, 1, 2, 2, 2, 2, 2]], dtype=float)


def test_a_special_solvers_failed_gap_on_few_inputs_goes_on_to_the_general_route():
    # 14 points of a 7 × 2 grid at ε = 20 under a worst-case 0/1/2 loss: the LP with lazy pair
    # rows left its design 0.26 % above the optimum (pairs beyond e^60 left to the repair); the
    # general route's LP, re-solved in units of its value, proves the optimum, and says so
    from mechdesign import Domain
    from mechdesign.core.objectives import WorstCaseLoss
    from mechdesign.solvers.lazy_pairs import NAME as LAZY

    problem = Problem(inputs=Domain.from_grid(7, 2, 0.5), objective=WorstCaseLoss(STEEP_GRID_LOSS),
                      privacy=[MetricPrivacy(20.0)], metric="euclidean")
    result = problem.solve()
    assert result.status == "optimal", result.message
    assert result.solver["name"] == "HIGHS" and result.certificate[0].holds
    assert result.solver["resolves"][0]["route"] == "general convex route"
    assert any(s["solver"] == LAZY and s.get("outcome") == "solved" for s in result.solver["special_solvers"])
    assert result.solver["bound"] <= result.objective <= result.solver["bound"] * (1 + 1e-6)


@pytest.mark.parametrize(("inputs", "goes_on"), [(5, True), (30, False)])
def test_a_special_solvers_gap_goes_on_to_the_general_route_only_on_few_inputs(monkeypatch, inputs, goes_on):
    # a special solver whose certified design (the uniform one) misses the tolerance on its
    # proven gap: below 30 inputs the general route follows and proves the optimum; from 30 on
    # (where the special solvers take over because the general route's LP grows) it does not run
    from mechdesign import Domain
    from mechdesign.core.objectives import WorstCaseLoss
    from mechdesign.design import problem as problem_module
    from mechdesign.privacy import LDP
    from mechdesign.solvers.outcome import SolverOutcome
    from mechdesign.solvers.registry import SpecialSolver

    def uniform(problem, limits=None):
        n = len(problem.inputs)
        return {"default": np.full((n, n), 1.0 / n)}, SolverOutcome("optimal", {"name": "uniform"}, bound=0.0,
                                                                   bound_proven=True)

    monkeypatch.setattr(problem_module, "special_solvers",
                        lambda: (SpecialSolver("uniform", lambda problem: None, uniform),))
    loss = np.random.default_rng(inputs).random((inputs, inputs))
    result = Problem(inputs=Domain.from_size(inputs), privacy=[LDP(1.0)], objective=WorstCaseLoss(loss)).solve()
    if goes_on:
        assert result.status == "optimal" and result.solver["name"] == "HIGHS"
        assert result.solver["resolves"][0]["route"] == "general convex route"
        assert result.objective < loss.mean(axis=1).max()  # better than the uniform design
    else:
        assert result.status == "failed" and result.solver["name"] == "uniform"
        assert "resolves" not in result.solver
