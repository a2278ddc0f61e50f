"""Information utilities under ε-LDP: the staircase solver against known answers.

Kairouz, Oh and Viswanath, “Extremal Mechanisms for Local Differential Privacy” (NeurIPS 2014;
JMLR 2016): for a sublinear utility the optimum is the LP over the 2^k staircase patterns, so
the LP over every pattern, solved here by scipy's HiGHS with the utilities computed from the
definitions, is the reference. Their two regimes: the binary mechanism (two outputs, a set T
of inputs at e^ε) maximises the mutual information for ε below a prior-dependent threshold,
and k-ary randomized response for ε above one; neither threshold is given in closed form, so
the tests stay well inside each regime (ε <= 0.05 and ε >= 6). The binary claim needs a
balanced split π(T) = 1/2 — under a uniform prior on five values a mixture of binary splits
beats every binary mechanism even at ε = 0.01 (checked below) — so the binary tests use priors
that have one. For two inputs the optimum is randomized response (Warner's) for any prior.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign import (
    LDP,
    HypothesisTesting,
    MetricPrivacy,
    MutualInformationUtility,
    Problem,
    load_problem,
)
from mechdesign.core.errors import ProblemError
from mechdesign.design.spec import problem_from_dict
from mechdesign.information.leakage import mutual_information
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.staircase_pricing import (
    BranchPricing,
    EnumerationPricing,
    ZonotopePricing,
    pattern_masks,
)
from tests.conftest import PROBLEMS

#: the generators written out here, apart from the package's registry
GENERATORS = {
    "kl": lambda t: t * np.log(t) - t + 1,
    "tv": lambda t: 0.5 * np.abs(t - 1),
    "hellinger": lambda t: 0.5 * (np.sqrt(t) - 1) ** 2,
    "chi2": lambda t: (t - 1) ** 2,
}


def patterns(k: int, eps: float) -> np.ndarray:
    """Every staircase pattern, as columns (k, 2^k)."""
    return np.where(pattern_masks(np.arange(1 << k), k), math.exp(eps), 1.0).T


def column_mi(prior: np.ndarray, S: np.ndarray) -> np.ndarray:
    """μ(q) = Σ_x π_x q_x log2(q_x / π·q) per column of S."""
    return (prior[:, None] * S * np.log2(S / (prior @ S)[None, :])).sum(axis=0)


def column_divergence(name: str, p0: np.ndarray, p1: np.ndarray, S: np.ndarray) -> np.ndarray:
    """μ(q) = (P1·q) f(P0·q / P1·q) per column of S."""
    a, b = p0 @ S, p1 @ S
    return b * GENERATORS[name](a / b)


def brute_force(utilities: np.ndarray, S: np.ndarray) -> float:
    """max μ·θ over θ >= 0 with S θ = 1: the LP over every pattern."""
    found = linprog(-utilities, A_eq=S, b_eq=np.ones(S.shape[0]), bounds=(0, None), method="highs")
    assert found.status == 0
    return -found.fun


def ldp_level(K: np.ndarray) -> float:
    """max over used columns of ln(max / min)."""
    used = K.max(axis=0) > 0
    return float(np.max(np.log(K[:, used].max(axis=0) / K[:, used].min(axis=0))))


def solve_mi(prior, eps, **kwargs):
    prior = np.asarray(prior, float)
    return Problem(inputs=prior.size, objective=MutualInformationUtility(prior), privacy=[LDP(eps)], **kwargs).solve()


def solve_ht(name, p0, p1, eps, **kwargs):
    return Problem(inputs=len(p0), objective=HypothesisTesting(name, (p0, p1)), privacy=[LDP(eps)], **kwargs).solve()


def best_binary_mi(prior: np.ndarray, eps: float) -> float:
    """The best binary mechanism over every split T (T and its complement are the same split)."""
    k, a = prior.size, math.exp(eps) / (1 + math.exp(eps))
    best = 0.0
    for bits in range(1, 1 << (k - 1)):
        T = (bits >> np.arange(k)) & 1 == 1
        K = np.where(T[:, None], [a, 1 - a], [1 - a, a])
        best = max(best, mutual_information(prior, K))
    return best


RNG = np.random.default_rng(20140704)
PRIORS = [RNG.dirichlet(np.ones(k)) for k in (3, 5, 7, 10)]


# ---------------------------------------------------------------------------------------------
# known answers

@pytest.mark.parametrize("prior", [[0.5, 0.5], [0.3, 0.7], [0.05, 0.95]])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_two_inputs_the_optimum_is_randomized_response(prior, eps):
    result = solve_mi(prior, eps)
    assert result.status == "optimal" and result.holds
    e = math.exp(eps)
    rr = np.array([[e, 1], [1, e]]) / (1 + e)
    assert np.allclose(result.mechanism.matrix, rr, atol=1e-9)
    assert result.objective == pytest.approx(mutual_information(prior, rr), rel=1e-9)


@pytest.mark.parametrize("divergence", sorted(GENERATORS))
def test_two_inputs_hypothesis_testing_is_randomized_response_too(divergence):
    eps = 0.7
    result = solve_ht(divergence, [0.8, 0.2], [0.3, 0.7], eps)
    e = math.exp(eps)
    rr = np.array([[e, 1], [1, e]]) / (1 + e)
    assert result.status == "optimal"
    assert np.allclose(np.sort(result.mechanism.matrix[:, :2], axis=1), np.sort(rr, axis=1), atol=1e-9)


@pytest.mark.parametrize("prior", [[0.5, 0.2, 0.15, 0.1, 0.05], [0.25] * 4,
                                   [0.3, 0.2, 0.15, 0.1, 0.1, 0.07, 0.05, 0.03]],
                         ids=["skewed-5", "uniform-4", "skewed-8"])
@pytest.mark.parametrize("eps", [0.01, 0.05])
def test_high_privacy_the_binary_mechanism_maximises_mutual_information(prior, eps):
    prior = np.asarray(prior)
    result = solve_mi(prior, eps)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(best_binary_mi(prior, eps), rel=1e-7)


def test_without_a_balanced_split_a_mixture_beats_every_binary_mechanism():
    prior = np.full(5, 0.2)
    result = solve_mi(prior, 0.01)
    assert result.objective > best_binary_mi(prior, 0.01) * (1 + 1e-3)
    assert result.solver["patterns_used"] > 2


@pytest.mark.parametrize("prior", [[0.5, 0.2, 0.15, 0.1, 0.05], [0.2] * 5, PRIORS[2]], ids=["skewed", "uniform", "random"])
@pytest.mark.parametrize("eps", [6.0, 10.0])
def test_low_privacy_randomized_response_maximises_mutual_information(prior, eps):
    prior = np.asarray(prior)
    k, e = prior.size, math.exp(eps)
    rr = np.full((k, k), 1 / (e + k - 1))
    np.fill_diagonal(rr, e / (e + k - 1))
    result = solve_mi(prior, eps)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(mutual_information(prior, rr), rel=1e-8)


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_total_variation_contracts_by_tanh_half_epsilon(eps):
    """The binary mechanism on {P0 > P1} attains TV(P0, P1)·(e^ε − 1)/(e^ε + 1), the most ε-LDP
    allows."""
    p0, p1 = RNG.dirichlet(np.ones(6)), RNG.dirichlet(np.ones(6))
    result = solve_ht("tv", p0, p1, eps)
    assert result.objective == pytest.approx(0.5 * np.abs(p0 - p1).sum() * math.tanh(eps / 2), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# brute force over every pattern, and the utility recomputed

@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: f"k{p.size}")
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_mutual_information_equals_the_lp_over_every_pattern(prior, eps):
    S = patterns(prior.size, eps)
    result = solve_mi(prior, eps)
    assert result.status == "optimal" and result.holds
    reference = brute_force(column_mi(prior, S), S)
    assert result.objective == pytest.approx(reference, rel=1e-8)
    assert result.solver["bound"] >= reference * (1 - 1e-9)
    K = result.mechanism.matrix
    assert mutual_information(prior, K) == pytest.approx(result.objective, rel=1e-10)
    assert ldp_level(K) <= eps + 1e-9
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("divergence", sorted(GENERATORS))
@pytest.mark.parametrize("k", [4, 10])
def test_divergences_equal_the_lp_over_every_pattern(divergence, k):
    p0, p1 = RNG.dirichlet(np.ones(k)), RNG.dirichlet(np.ones(k))
    eps = 1.5
    S = patterns(k, eps)
    result = solve_ht(divergence, p0, p1, eps)
    assert result.status == "optimal" and result.holds
    assert result.objective == pytest.approx(brute_force(column_divergence(divergence, p0, p1, S), S), rel=1e-8)
    K = result.mechanism.matrix
    a, b = p0 @ K, p1 @ K
    used = b > 0
    assert (b[used] * GENERATORS[divergence](a[used] / b[used])).sum() == pytest.approx(result.objective, rel=1e-10)
    assert ldp_level(K) <= eps + 1e-9


# ---------------------------------------------------------------------------------------------
# the pricings agree with enumeration; larger k

def _pricing_case(k: int, rng, ties: bool = False):
    prior = rng.dirichlet(np.ones(k))
    u = rng.normal(size=k) * 0.05
    if ties:
        prior = np.repeat(rng.dirichlet(np.ones(k // 2)) / 2, 2)
        u = np.repeat(u[: k // 2], 2)
    return prior, u


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_branch_and_bound_pricing_finds_the_enumerated_maximum(ties, eps):
    rng = np.random.default_rng(7)
    for _ in range(5):
        prior, u = _pricing_case(12, rng, ties)
        objective = MutualInformationUtility(prior)
        exact = EnumerationPricing(objective, eps, 1.0).price(u, 5, 0.0)
        branched = BranchPricing(objective, eps, 1.0).price(u, 5, 0.0)
        assert branched.exact
        assert branched.values[0] == pytest.approx(exact.values[0], abs=1e-12)
        assert branched.bound >= exact.values[0] - 1e-12


@pytest.mark.parametrize("divergence", ["kl", "tv", "chi2"])
@pytest.mark.parametrize("ties", [False, True])
def test_zonotope_pricing_finds_the_enumerated_maximum(divergence, ties):
    rng = np.random.default_rng(11)
    for _ in range(5):
        p0, u = _pricing_case(12, rng, ties)
        p1 = rng.dirichlet(np.ones(12)) if not ties else np.repeat(rng.dirichlet(np.ones(6)) / 2, 2)
        objective = HypothesisTesting(divergence, (p0, p1))
        exact = EnumerationPricing(objective, 1.0, 1.0).price(u, 5, 0.0)
        vertices = ZonotopePricing(objective, 1.0, 1.0).price(u, 5, 0.0)
        assert vertices.values[0] == pytest.approx(exact.values[0], abs=1e-12)


def test_thirty_inputs_by_branch_and_bound_are_optimal_with_a_proven_gap():
    prior = 1 / np.arange(1, 31)
    prior /= prior.sum()
    result = solve_mi(prior, 1.0)
    assert result.status == "optimal" and result.holds
    assert result.solver["pricing"] == "branch and bound" and result.solver["bound_proven"]
    assert 0 <= result.solver["gap"] <= 1e-6
    assert mutual_information(prior, result.mechanism.matrix) == pytest.approx(result.objective, rel=1e-10)
    e = math.e
    rr = np.full((30, 30), 1 / (e + 29))
    np.fill_diagonal(rr, e / (e + 29))
    assert result.objective > mutual_information(prior, rr)


def test_twenty_five_inputs_by_zonotope_vertices():
    p0, p1 = RNG.dirichlet(np.ones(25)), RNG.dirichlet(np.ones(25))
    result = solve_ht("kl", p0, p1, 2.0)
    assert result.status == "optimal" and result.solver["pricing"] == "zonotope vertices"
    assert ldp_level(result.mechanism.matrix) <= 2.0 + 1e-9


# ---------------------------------------------------------------------------------------------
# statuses: a maximum is judged against an upper bound, and the general route refuses

def test_a_maximum_is_optimal_only_within_the_tolerance_of_its_upper_bound():
    problem = Problem(inputs=3, objective=MutualInformationUtility([0.5, 0.3, 0.2]), privacy=[LDP(1.0)])
    K = problem.solve().mechanism.matrix
    value = problem.objective.value({"default": K})
    close = problem.finish({"default": K}, SolverOutcome("optimal", bound=value * (1 + 1e-9), bound_proven=True))
    assert close.status == "optimal" and close.solver["gap"] == pytest.approx(1e-9, rel=1e-3)
    far = problem.finish({"default": K}, SolverOutcome("optimal", bound=value * 1.01, bound_proven=True))
    assert far.status == "failed" and far.solver["gap"] == pytest.approx(0.01, rel=1e-6)
    below = problem.finish({"default": K}, SolverOutcome("optimal", bound=value * 0.9, bound_proven=False))
    assert below.status == "failed" and "not a bound" in below.solver["bound_kind"]


@pytest.mark.parametrize("build,key", [
    (dict(privacy=[MetricPrivacy(1.0)], metric="absolute"), "objective.kind"),
    (dict(privacy=[LDP(1.0)], solver="highs"), "solve.solver"),
    (dict(privacy=[LDP(30.0)]), "objective.kind"),
    (dict(privacy=[]), "objective.kind"),
    (dict(privacy=[LDP(1.0)], outputs=2), "objective.kind"),
])
def test_the_general_route_refuses_a_maximised_objective(build, key):
    problem = Problem(inputs=4, objective=MutualInformationUtility(), **build)
    with pytest.raises(ProblemError) as err:
        problem.solve()
    assert err.value.key == key and "not a convex program" in str(err.value)
    with pytest.raises(ProblemError):
        problem.compile()


def test_a_time_limit_returns_a_certified_design_with_its_proven_gap():
    prior = 1 / np.arange(1, 41) ** 0.5
    result = solve_mi(prior / prior.sum(), 1.0, time_limit=1e-3)
    assert result.status in ("time-limit", "optimal") and result.holds
    assert result.solver["bound"] >= result.objective


def test_epsilon_zero_reveals_nothing():
    result = solve_mi([0.2, 0.3, 0.5], 0.0)
    assert result.status == "optimal" and result.objective == 0.0


# ---------------------------------------------------------------------------------------------
# problem files

@pytest.mark.parametrize("name", ["mutual-information-ldp", "hypothesis-testing-ldp"])
def test_the_example_problems_solve_by_staircases(name):
    result = load_problem(PROBLEMS / f"{name}.toml").solve()
    assert result.status == "optimal" and result.holds
    assert result.solver["name"] == "staircase column generation"


BASE = {"name": "t", "inputs": {"size": 4}, "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        "distributions": {"a": [0.4, 0.3, 0.2, 0.1], "b": [0.1, 0.2, 0.3, 0.4]}}


@pytest.mark.parametrize("objective,key", [
    ({"kind": "hypothesis-testing", "between": ["a", "b"]}, "objective.divergence"),
    ({"kind": "hypothesis-testing", "divergence": "max", "between": ["a", "b"]}, "objective.divergence"),
    ({"kind": "hypothesis-testing", "divergence": "kl", "between": ["a"]}, "objective.between"),
    ({"kind": "hypothesis-testing", "divergence": "kl", "between": ["a", "a"]}, "objective.between"),
    ({"kind": "hypothesis-testing", "divergence": "kl", "between": ["a", "c"]}, "objective.between"),
    ({"kind": "mutual-information", "prior": "c"}, "objective.prior"),
    ({"kind": "mutual-information", "loss": "hamming"}, "objective.loss"),
])
def test_file_errors_name_the_key(objective, key):
    with pytest.raises(ProblemError) as err:
        problem_from_dict({**BASE, "objective": objective}, file="t.toml")
    assert err.value.key == key and err.value.file == "t.toml"


def test_a_file_with_contexts_is_refused():
    data = {**BASE, "mechanism": {"contexts": ["a", "b"]}, "objective": {"kind": "mutual-information"}}
    with pytest.raises(ProblemError) as err:
        problem_from_dict(data, file="t.toml")
    assert "one shared mechanism" in str(err.value)


def test_brute_force_patterns_are_numbered_like_the_pricing():
    S = patterns(3, math.log(2))
    assert {tuple(c) for c in S.T} == set(itertools.product([1.0, 2.0], repeat=3))
