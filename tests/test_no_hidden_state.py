"""No hidden state: compiling a problem writes nothing to its notions, a sweep leaves the
caller's problem and notions as they were, and ``Problem.finish`` leaves the solver outcome it
is given unchanged. So one notion object serves several problems, solved in any order."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from mechdesign import Domain, Metric, Problem, load_problem
from mechdesign.core.limits import Limits
from mechdesign.core.objectives import ErrorProbability, ExpectedLoss, WorstCaseLoss
from mechdesign.design.sweep import problem_at, sweep
from mechdesign.privacy import (
    LDP,
    ApproxLDP,
    DistP,
    DivergenceDistP,
    DivergenceDP,
    DivergenceXDP,
    GVulnerability,
    InformationPrivacy,
    MetricPrivacy,
    MinEntropy,
    MutualInformation,
    Shuffle,
    Side,
    XDistP,
)
from mechdesign.solvers.convex_route import run_solver
from mechdesign.solvers.outcome import SolverOutcome
from tests.conftest import PROBLEMS

#: the shipped problems the general route can compile (a maximised objective cannot be)
SHIPPED = sorted(p.stem for p in PROBLEMS.glob("*.toml")
                 if p.stem not in ("hypothesis-testing-ldp", "mutual-information-ldp"))


def snapshot(value, depth: int = 0):
    """A comparable deep image of ``value``: arrays by shape, type and bytes, objects by their
    type and attributes (recursively), containers element by element, NaN as "nan"."""
    if depth > 12:
        return repr(value)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), snapshot(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(snapshot(v, depth + 1) for v in value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted(repr(v) for v in value)))
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return "nan"  # equal to itself, unlike NaN
    if isinstance(value, (str, bytes, int, float, bool, complex, np.generic)) or value is None:
        return value
    if hasattr(value, "__dict__"):
        return (type(value).__name__, snapshot(vars(value), depth + 1))
    return repr(value)


def notion_states(problem: Problem) -> list:
    """Each notion of ``problem``: its identity and a deep snapshot of its attributes."""
    return [(id(n), snapshot(vars(n))) for n in problem.privacy]


def _line(n: int):
    dom = Domain.from_size(n)
    x = np.arange(n, dtype=float)
    return dom, np.abs(x[:, None] - x[None, :])


def built_problems() -> dict[str, Problem]:
    """Problems for the notions the shipped files do not cover, and more of those they do."""
    rng = np.random.default_rng(0)
    dom, d = _line(5)
    prior = rng.dirichlet(np.ones(5))
    loss = ExpectedLoss(d, {"default": prior})
    lam0, lam1 = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    pair = [(Side("a", lam0), Side("b", lam1))]
    return {
        "approx-ldp": Problem(dom, loss, [ApproxLDP(0.5, 0.01)]),
        "ldp-steep": Problem(dom, loss, [LDP(30.0)]),
        "metric": Problem(dom, loss, [MetricPrivacy(0.4)], metric="absolute"),
        "metric-beyond-floats": Problem(Domain.from_points([[0.0], [1.0], [800.0]]),
                                        ExpectedLoss("metric"), [MetricPrivacy(1.0)], metric="absolute"),
        "distp": Problem(dom, loss, [DistP(0.3, pair, 0.01)]),
        "xdistp": Problem(dom, loss, [XDistP(0.3, pair)], metric="absolute"),
        "divergence-dp": Problem(dom, loss, [DivergenceDP(0.5, "kl")]),
        "divergence-xdp": Problem(dom, loss, [DivergenceXDP(0.2, "max")], metric="absolute"),
        "divergence-distp": Problem(dom, loss, [DivergenceDistP(0.2, pair, "tv")]),
        "information": Problem(dom, loss, [InformationPrivacy(0.5)]),
        "information-vacuous": Problem(dom, loss, [InformationPrivacy(3.0)]),
        "mutual-information": Problem(dom, loss, [MutualInformation(0.3)]),
        "min-entropy": Problem(dom, loss, [MinEntropy(0.5)]),
        "g-vulnerability-bits": Problem(dom, loss, [GVulnerability("identity", prior, bits=0.5)]),
        "g-vulnerability-bound": Problem(dom, loss, [GVulnerability("identity", prior, bound=0.6)]),
        "shuffle": Problem(dom, loss, [Shuffle(1000, 0.5, 1e-6)]),
        "two-notions": Problem(dom, loss, [LDP(2.0), MetricPrivacy(0.4)], metric="absolute"),
    }


BUILT = sorted(built_problems())


def _problem(name: str) -> Problem:
    return load_problem(PROBLEMS / f"{name}.toml") if name in SHIPPED else built_problems()[name]


@pytest.mark.parametrize("parametric", [False, True])
@pytest.mark.parametrize("name", SHIPPED + BUILT)
def test_compiling_writes_nothing_to_the_notions(name, parametric):
    problem = _problem(name)
    before = notion_states(problem)
    program = problem.compile(parametric=parametric, scaled=True)
    assert notion_states(problem) == before
    if parametric:  # the Parameters live in each compile's own coefficients, not on the notions
        again = problem.compile(parametric=True)
        assert notion_states(problem) == before
        assert not _shared_parameters(program, again)


def _shared_parameters(a, b) -> bool:
    """Whether two programs share a cvxpy Parameter (they must not: each compile has its own)."""
    ids = {id(p) for p in a.problem.parameters()}
    return any(id(p) in ids for p in b.problem.parameters())


@pytest.mark.parametrize("name", ["ldp-skewed-prior", "dprivacy-line", "categorical-chain", "dinf-distp",
                                  "shuffle-krr", "mutual-information-skewed"])
@pytest.mark.parametrize("use_special", [False, True])
def test_a_sweep_leaves_the_problem_and_its_notions_as_they_were(name, use_special):
    problem = _problem(name)
    notions, before = list(problem.privacy), notion_states(problem)
    epsilon = problem.privacy[0].epsilon
    result = sweep(problem, [0.5 * epsilon, 2.0 * epsilon, epsilon], use_special=use_special)
    assert problem.privacy == notions and notion_states(problem) == before
    assert all(p.result.holds for p in result.points)
    # each point's mechanisms claim the notions at that point's ε
    for point in result.points:
        assert point.result.mechanism.claims[0].epsilon == point.epsilon


@pytest.mark.parametrize("name", ["g-vulnerability-bits", "information", "shuffle", "two-notions"])
def test_a_sweep_of_built_problems_leaves_them_as_they_were(name):
    problem = built_problems()[name]
    before = notion_states(problem)
    sweep(problem, [0.3, 0.6], use_special=False)
    assert notion_states(problem) == before


def test_problem_at_leaves_the_problem_as_it_was_and_puts_its_notions_at_the_epsilon():
    problem = built_problems()["g-vulnerability-bits"]
    before = notion_states(problem)
    at = problem_at(problem, 1.5)
    assert notion_states(problem) == before and problem.privacy[0].epsilon == 0.5
    moved = at.privacy[0]
    assert moved.epsilon == moved.leakage_bits == 1.5
    assert moved.bounds["default"] == pytest.approx(moved.prior_vulnerability["default"] * 2 ** 1.5)


def test_a_shuffle_sweep_compiles_once_and_equals_single_solves():
    """The ε0-LDP coefficients follow the central ε through the shuffle notion: one program."""
    problem = built_problems()["shuffle"]
    eps = [0.4, 0.5, 0.6]
    result = sweep(problem, eps, use_special=False)
    assert result.compiles == 1
    singles = [problem_at(problem, e).solve(solver="highs").objective for e in eps]
    np.testing.assert_allclose(result.objectives, singles, rtol=1e-7)


def test_a_g_vulnerability_sweep_in_bits_equals_single_solves():
    problem = built_problems()["g-vulnerability-bits"]
    eps = [0.2, 0.5, 1.0]
    result = sweep(problem, eps, use_special=False)
    assert result.compiles == 1
    rng = np.random.default_rng(0)
    dom, d = _line(5)
    prior = rng.dirichlet(np.ones(5))
    for e, point in zip(eps, result.points):
        single = Problem(dom, ExpectedLoss(d, {"default": prior}),
                         [GVulnerability("identity", prior, bits=e)]).solve()
        assert point.result.objective == pytest.approx(single.objective, rel=1e-7)


# ---------------------------------------------------------------------------------------------
# finish reads the outcome and never changes it

def _unchanged_by_finish(problem: Problem, raw, outcome: SolverOutcome, limits=None):
    kept = copy.deepcopy(outcome.record)
    fields = (outcome.status, outcome.message, outcome.bound, outcome.bound_proven, outcome.proof,
              outcome.scale, outcome.infeasibility_proven)
    first = problem.finish(raw, outcome, limits)
    assert snapshot(outcome.record) == snapshot(kept)
    assert (outcome.status, outcome.message, outcome.bound, outcome.bound_proven, outcome.proof,
            outcome.scale, outcome.infeasibility_proven) == fields
    second = problem.finish(raw, outcome, limits)  # the same outcome judged twice: the same result
    assert first.status == second.status and first.message == second.message
    assert snapshot(first.solver) == snapshot(second.solver)
    assert first.solver is not outcome.record
    return first


def _small_ldp():
    loss = np.random.default_rng(0).random((4, 4))
    return Problem(inputs=Domain.from_size(4), privacy=[LDP(1.0)], objective=WorstCaseLoss(loss, ["default"]))


def test_finish_leaves_a_general_route_outcome_unchanged():
    problem = _small_ldp()
    raw, outcome = run_solver(problem.compile(scaled=True), "auto", limits=Limits(60.0, None))
    assert outcome.proof is not None and outcome.bound is not None
    result = _unchanged_by_finish(problem, raw, outcome, Limits(60.0, None))
    assert result.status == "optimal" and result.solver["bound_proven"] is True
    assert "objective" in result.solver and "time_limit" in result.solver
    assert "status" not in result.solver and "message" not in result.solver


def test_finish_leaves_a_special_solver_outcome_unchanged():
    problem = load_problem(PROBLEMS / "ldp-skewed-prior.toml")
    found, attempts = problem.solve_specially(Limits(None, None))
    raw, outcome = found
    assert outcome.record["special_solvers"] == attempts and outcome.bound_proven
    result = _unchanged_by_finish(problem, raw, outcome)
    assert result.status == "optimal" and result.solver["special_solvers"] == attempts


@pytest.mark.parametrize("outcome", [
    SolverOutcome("failed", {"name": "HIGHS", "special_solvers": [{"solver": "x", "applies": False}]}, "boom"),
    SolverOutcome("time-limit", {"name": "HIGHS"}, "stopped"),
    SolverOutcome("infeasible", {"name": "claims"}, "(no reason)"),
    SolverOutcome("infeasible", {"name": "HIGHS"}, infeasibility_proven=True),
])
def test_finish_leaves_an_outcome_without_a_design_unchanged(outcome):
    result = _unchanged_by_finish(_small_ldp(), None, outcome, Limits(5.0, None))
    if outcome.infeasibility_proven:
        assert result.status == "infeasible" and result.solver["infeasibility_proven"] is True
    else:
        assert result.solver["fallback"] == "data-independent design" and "fallback" not in outcome.record


def test_finish_leaves_an_unproven_outcome_unchanged():
    problem = _small_ldp()
    raw = {"default": np.full((4, 4), 0.25)}
    value = problem.objective.value(raw)
    result = _unchanged_by_finish(problem, raw, SolverOutcome("optimal", {"name": "test"}, bound=value * 1.01))
    assert result.status == "failed" and "not a bound" in result.solver["bound_kind"]


# ---------------------------------------------------------------------------------------------
# one set of notion objects, two problems, any order

def _shared_notions():
    dom, d = _line(6)
    return dom, d, [LDP(1.0), MetricPrivacy(0.5, Metric("absolute"), dom)]


def _two_problems(notions, dom, d):
    prior = np.random.default_rng(3).dirichlet(np.ones(6))
    swept = Problem(dom, ExpectedLoss(d, {"default": prior}), notions, name="swept")
    plain = Problem(dom, ErrorProbability(prior=np.full(6, 1 / 6)), notions, name="plain")
    assert all(a is b for a, b in zip(swept.privacy, plain.privacy))  # the very same objects
    return swept, plain


def test_one_set_of_notions_in_two_problems_solved_interleaved_or_apart_gives_the_same_results():
    eps = [0.3, 0.8, 1.6]
    dom, d, notions = _shared_notions()
    swept, plain = _two_problems(notions, dom, d)
    alone_sweep = sweep(swept, eps, use_special=False)
    alone_plain = plain.solve(solver="highs")
    alone_parametric = run_solver(plain.compile(parametric=True, scaled=True), "highs")[1].bound

    dom, d, notions = _shared_notions()
    swept, plain = _two_problems(notions, dom, d)
    before = notion_states(plain)
    during, parametric = [], []

    def between(i, n, point):  # runs between the sweep's points, while its program is live
        during.append(plain.solve(solver="highs"))
        parametric.append(run_solver(plain.compile(parametric=True, scaled=True), "highs")[1].bound)

    interleaved = sweep(swept, eps, use_special=False, progress=between)
    assert interleaved.compiles == alone_sweep.compiles == 1
    np.testing.assert_allclose(interleaved.objectives, alone_sweep.objectives, rtol=1e-9, atol=1e-12)
    for result in during:
        assert result.status == alone_plain.status == "optimal"
        assert result.objective == pytest.approx(alone_plain.objective, rel=1e-9, abs=1e-12)
        assert [a.requested for a in result.certificate] == [a.requested for a in alone_plain.certificate]
    assert parametric == pytest.approx([alone_parametric] * len(eps), rel=1e-9)
    assert notion_states(plain) == before


@pytest.mark.parametrize("name", ["coupling-barycenter", "coupling-fig2", "airports-coupling"])
def test_solving_and_certifying_leave_the_notions_as_they_were(name):
    # the certificate's repair of a target (free or fixed) must not remember what it matched
    problem = load_problem(PROBLEMS / f"{name}.toml")
    before = notion_states(problem)
    result = problem.solve()
    assert result.holds
    assert notion_states(problem) == before
