"""Huge ε (e^ε beyond what an LP solver can hold) and tiny ε (1 + ε indistinguishable from 1 at the
solver's tolerance) solve with a holding certificate and the right optimum.

References are independent of the package: closed forms (k-ary randomized response is optimal for
the error probability under ε-LDP with a uniform prior, Kairouz, Oh and Viswanath, "Extremal
mechanisms for local differential privacy", NeurIPS 2014; the identity mechanism is feasible once ε
reaches the largest log ratio of the distributions) and plain LPs written here with
scipy.optimize.linprog.
"""

import math
import tomllib
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

import mechdesign
from mechdesign import Domain, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.sweep import sweep
from mechdesign.privacy.distp import DistP, ProfilePrivacy, Side
from mechdesign.privacy.ldp import LDP
from tests.conftest import PROBLEMS

HUGE = [35.0, 40.0, 50.0, 700.0]
SWEEP = [1e-9, 1e-6, 0.1, 1.0, 8.0, 20.0, 35.0, 50.0, 700.0]


def _file(name: str, **privacy) -> Problem:
    with open(PROBLEMS / f"{name}.toml", "rb") as fh:
        data = tomllib.load(fh)
    data["privacy"][0].update(privacy)
    return mechdesign.problem_from_dict(data, name)


def _solve(problem: Problem, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = problem.solve(**kw)
    assert result.status == "optimal", result.message
    assert all(a.holds for a in result.certificate)
    return result


def _krr(k: int, eps: float) -> float:
    """Error probability of k-ary randomized response, (k − 1)/(k − 1 + e^ε), without overflow."""
    return (k - 1) * math.exp(-eps) / (1 + (k - 1) * math.exp(-eps))


def _equal_output_lp(lam_a, lam_b, loss, prior) -> float:
    """min Σ prior[x] loss[x, y] K[x, y] over row-stochastic K with λ_a K = λ_b K (ε = 0)."""
    n, m = loss.shape
    rows = np.kron(np.eye(n), np.ones((1, m)))
    outputs = np.kron((np.asarray(lam_a) - np.asarray(lam_b))[None, :], np.eye(m))
    res = linprog((prior[:, None] * loss).ravel(), A_eq=np.vstack([rows, outputs]),
                  b_eq=np.concatenate([np.ones(n), np.zeros(m)]), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


def _ratio_lp(sides, edges, eps, n, c, extra=0, a_ub=None):
    """A plain LP over the stacked mechanisms (one n×n block per side key) plus ``extra`` more
    variables: min c·z s.t. every block row-stochastic and, for each edge (a, b) or (a, b, s)
    of sides (λ, block), λ_a K_a <= e^{εs} λ_b K_b both ways (s = 1 by default); ``a_ub`` adds
    rows <= 0. Well scaled for εs <= 20; tolerances 1e-10."""
    keys = sorted({key for _, key in sides.values()})
    size = len(keys) * n * n + extra
    eq = np.zeros((len(keys) * n, size))
    for b in range(len(keys)):
        for x in range(n):
            eq[b * n + x, b * n * n + x * n:b * n * n + (x + 1) * n] = 1.0
    rows = []
    for a, b, *scale in edges:
        for p, q in ((a, b), (b, a)):
            for y in range(n):
                row = np.zeros(size)
                (lp, kp), (lq, kq) = sides[p], sides[q]
                row[keys.index(kp) * n * n + np.arange(n) * n + y] += lp
                row[keys.index(kq) * n * n + np.arange(n) * n + y] -= math.exp(eps * (scale or [1.0])[0]) * lq
                rows.append(row)
    if a_ub is not None:
        rows += list(a_ub)
    res = linprog(c, A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=eq, b_eq=np.ones(eq.shape[0]),
                  bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


# ---------------------------------------------------------------------------------------------
# ε-LDP and (ε, δ)-LDP at huge ε

@pytest.mark.parametrize("eps", HUGE)
def test_warner_rr_at_huge_epsilon_is_binary_randomized_response(eps):
    # column generation raised "HiGHS rejected a master-problem update" from e^ε >= 1e15 on
    result = _solve(_file("warner-rr", epsilon=eps))
    assert result.objective == pytest.approx(1.0 / (1.0 + math.exp(eps)), rel=1e-9)


@pytest.mark.parametrize("kind", ["error-probability", "max-off-diagonal", "worst-case-loss"])
@pytest.mark.parametrize("eps", [35.0, 700.0])
def test_k_ary_ldp_at_huge_epsilon_matches_randomized_response(kind, eps):
    """Uniform prior, k = 4: the optimum of the error probability and of the worst-case 0-1
    loss is (k − 1)/(k − 1 + e^ε); of the largest off-diagonal entry 1/(k − 1 + e^ε) (every
    row sums to K[x, x] + Σ off-diagonal <= e^ε t + (k − 1) t, and k-RR attains it)."""
    k = 4
    objective = {"kind": kind}
    if kind == "error-probability":
        objective["prior"] = "uniform"
    if kind == "worst-case-loss":
        objective["loss"] = "hamming"
    data = {"name": "krr", "inputs": {"size": k}, "privacy": [{"notion": "ldp", "epsilon": eps}],
            "objective": objective}
    result = _solve(mechdesign.problem_from_dict(data, "krr"))
    expected = _krr(k, eps) / (k - 1) if kind == "max-off-diagonal" else _krr(k, eps)
    assert result.objective == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("route", ["auto", "highs"])
@pytest.mark.parametrize("eps", [35.0, 50.0, 700.0])
def test_skewed_prior_ldp_at_huge_epsilon_matches_the_first_order_closed_form(eps, route):
    """Expected |x − y| under a prior π: every K[x, y] >= e^{−ε} K[y, y] and K[y, y] >= 1 − V/π_y
    (row y's off-diagonal mass costs at least π_y per unit), so V >= e^{−ε} S (1 − V/min π) with
    S = Σ_x π_x Σ_y |x − y|; the identity with the floor e^{−ε}/(1 + (n − 1)e^{−ε}) gives
    V <= e^{−ε} S. Both sides agree to 1e-12 relative at ε >= 35."""
    problem = _file("ldp-skewed-prior", epsilon=eps)
    result = _solve(problem, solver=route)
    prior = np.array(problem.objective.row_weights["default"], dtype=float)
    x = np.arange(prior.size)
    s = float(prior @ np.abs(x[:, None] - x[None, :]).sum(axis=1))
    assert result.objective == pytest.approx(math.exp(-eps) * s, rel=1e-9)


@pytest.mark.parametrize("eps", [40.0, 700.0])
def test_approximate_ldp_at_huge_epsilon_is_certified_and_within_the_pure_optimum(eps):
    """(ε, δ)-LDP relaxes ε-LDP: its optimum is at most the ε-LDP one, 1/(1 + e^ε) for two
    inputs, and at least the (ε, δ) randomized response's (1 − δ)/(1 + e^ε) lower bound is
    below it; the certified value lies between the two."""
    problem = _file("warner-rr", epsilon=eps, delta=0.1)
    result = _solve(problem)
    assert result.objective <= 1.0 / (1.0 + math.exp(eps)) * (1 + 1e-9)
    assert result.objective >= 0.9 / (1.0 + math.exp(eps)) * (1 - 1e-9)
    # the optimum is (1 − δ)/(1 + e^ε) (both rows at α = β = (1 − δ)/(1 + e^ε)); at this ε it is
    # below the gap's absolute floor (1e-6 of the objective's scale), which is all "optimal"
    # promises there
    floor = problem.gap_tolerance * 1e-6 * problem.objective_scale()
    assert abs(result.objective - 0.9 / (1.0 + math.exp(eps))) <= floor


@pytest.mark.parametrize("eps", [1.0, 20.0])
def test_approximate_ldp_reaches_its_closed_form_optimum(eps):
    """Two inputs, uniform prior, error probability: α + e^ε β >= 1 − δ both ways gives the
    optimum (1 − δ)/(1 + e^ε), attained by α = β."""
    result = _solve(_file("warner-rr", epsilon=eps, delta=0.1))
    assert result.status == "optimal"
    assert result.objective == pytest.approx(0.9 / (1.0 + math.exp(eps)), rel=1e-9)


@pytest.mark.parametrize("eps", [40.0, 60.0])
def test_metric_chains_resolve_tiny_optima_like_the_ldp_chains(eps):
    """On the discrete metric ε·d-privacy is ε-LDP: the two formulations (the pair chains of
    d-privacy, the column envelope of LDP) must agree even where the optimum is ~e^{-ε}, which
    needs chain links short enough for the LP's primal tolerance."""
    from mechdesign import Metric
    from mechdesign.privacy.metric import MetricPrivacy

    dom = Domain.from_size(4)
    loss = np.random.default_rng(1).random((4, 4))
    np.fill_diagonal(loss, 0.0)
    results = [Problem(inputs=dom, privacy=[notion], solver="highs",
                       objective=ExpectedLoss(loss, {"default": np.full(4, 0.25)})).solve()
               for notion in (LDP(eps), MetricPrivacy(eps, Metric("discrete"), dom))]
    assert [r.status for r in results] == ["optimal", "optimal"]
    assert 0 < results[1].objective == pytest.approx(results[0].objective, rel=1e-6)


# ---------------------------------------------------------------------------------------------
# profile privacy (Charnes–Cooper) and DistP at huge ε

def _largest_log_ratio(p, q) -> float:
    p, q = np.asarray(p, float), np.asarray(q, float)
    return float(max(np.max(np.log(p / q)), np.max(np.log(q / p))))


@pytest.mark.parametrize("eps", [1.1, 25.0, 30.0, 35.0, 50.0, 700.0])
def test_categorical_chain_is_zero_once_the_identity_is_feasible(eps):
    """P_i K_i with K_i = I is P_i; the profile constraints then hold once ε reaches the largest
    log ratio of neighbouring profiles (ln 3 here), so the max off-diagonal optimum is 0. At
    ε = 30 it used to report 0.49999999999994 with a zero gap."""
    problem = _file("categorical-chain", epsilon=eps)
    dists = problem.privacy[0].pairs
    need = max(_largest_log_ratio(a.distribution, b.distribution) for a, b in dists)
    assert need == pytest.approx(math.log(3))
    result = _solve(problem)
    assert result.objective <= 1e-12
    assert "Charnes" in result.solver["name"]


@pytest.mark.parametrize("name", ["distp-two-sources", "dinf-distp"])
@pytest.mark.parametrize("eps", HUGE)
def test_distp_at_huge_epsilon_reaches_the_non_private_optimum(name, eps):
    # HiGHS failed ("Cannot unpack invalid solution") from ε = 40 on; the identity is feasible
    # from ε = the largest log ratio of the two distributions (ln 7 and ln 6.25)
    problem = _file(name, epsilon=eps)
    (a, b), = problem.privacy[0].pairs
    assert _largest_log_ratio(a.distribution, b.distribution) < eps
    assert _solve(problem).objective <= 1e-12


def test_distp_with_disjoint_support_at_huge_epsilon_pays_only_order_e_minus_epsilon():
    """λ_a puts no mass on input 2 and λ_b does: the identity has an infinite ratio at every ε.
    Mapping input 2 (λ_b mass 0.5) onto output 2 needs λ_a K[:, 2] >= e^{−ε} λ_b K[:, 2], so the
    optimum is positive and O(e^{−ε}); the certified value must stay within that order."""
    lam_a, lam_b = np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.3, 0.5])
    loss = 1.0 - np.eye(3)
    prior = 0.5 * (lam_a + lam_b)
    for eps in (35.0, 50.0, 700.0):
        notion = DistP(eps, [(Side("a", lam_a), Side("b", lam_b))])
        result = _solve(Problem(Domain.from_size(3), ExpectedLoss(loss, {"default": prior}), [notion]))
        assert 0.0 < result.objective <= 10 * math.exp(-eps)


# ---------------------------------------------------------------------------------------------
# tiny ε and ε = 0

@pytest.mark.parametrize("name", ["distp-two-sources", "dinf-distp"])
def test_distp_at_tiny_epsilon_is_feasible_and_continuous_at_zero(name):
    # ε = 1e-9 was "infeasible" (and 1e-8 failed for dinf-distp): coefficients 1 + 1e-9
    problem = _file(name, epsilon=0.0)
    (a, b), = problem.privacy[0].pairs
    loss = problem.objective.loss
    prior = np.asarray(problem.objective.row_weights["default"], float)
    v0 = _equal_output_lp(a.distribution, b.distribution, loss, prior)
    assert _solve(problem).objective == pytest.approx(v0, abs=1e-9)
    for eps in (1e-12, 1e-9, 1e-8, 1e-6):
        value = _solve(_file(name, epsilon=eps)).objective
        assert value <= v0 + 1e-9
        assert value >= v0 - 10 * eps * max(1.0, v0)


def test_kl_distp_at_zero_is_the_equal_output_lp():
    # ε = 0 under KL went to Clarabel on a degenerate cone and ended "failed" with gap 0.36
    problem = _file("kl-distp", epsilon=0.0)
    (a, b), = problem.privacy[0].pairs
    prior = np.asarray(problem.objective.row_weights["default"], float)
    v0 = _equal_output_lp(a.distribution, b.distribution, problem.objective.loss, prior)
    result = _solve(problem)
    assert result.objective == pytest.approx(v0, abs=1e-9)


def test_zero_bits_of_mutual_information_is_a_data_independent_mechanism():
    """I(π; K) = 0 makes every row equal; the best data-independent guess of the secret under
    the prior is its mode, error 1 − max π = 0.5 (it failed with a gap of 0.68)."""
    result = _solve(_file("mutual-information-skewed", bits=0.0))
    assert result.objective == pytest.approx(0.5, abs=1e-9)
    k = result.mechanism.matrix
    assert np.max(np.abs(k - k[0])) <= 1e-9


def test_zero_bits_of_capacity_is_a_data_independent_mechanism():
    data = {"name": "cap0", "inputs": {"size": 3}, "distributions": {"p": [0.6, 0.3, 0.1]},
            "privacy": [{"notion": "information", "bits": 0.0}],
            "objective": {"kind": "error-probability", "prior": "p"}}
    result = _solve(mechdesign.problem_from_dict(data, "cap0"))
    assert result.objective == pytest.approx(0.4, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# the structured solvers decline instead of raising

def test_column_generation_and_charnes_cooper_decline_with_a_reason(monkeypatch):
    import highspy

    from mechdesign.solvers import charnes_cooper, column_generation, ldp_interior, ldp_portfolio
    from mechdesign.solvers.highs_model import SolverDeclined

    monkeypatch.setattr(column_generation, "resumable_run", lambda h: highspy.HighsModelStatus.kInfeasible)
    monkeypatch.setattr(ldp_interior, "MAX_ITERATIONS", 0)
    monkeypatch.setattr(charnes_cooper, "resumable_run", lambda h: highspy.HighsModelStatus.kInfeasible)
    ldp = _file("ldp-skewed-prior", epsilon=1.0)
    with pytest.raises(SolverDeclined, match="master LP.*interior-point iterations"):
        ldp_portfolio.ldp_interleaved(ldp)
    profile = _file("categorical-chain", epsilon=0.5)
    with pytest.raises(SolverDeclined, match="scaled LP"):
        charnes_cooper.max_entry_by_scaling(profile)
    # the general route still answers, with the optimum of the all-pairs LP
    n = len(ldp.inputs)
    sides = {x: (np.eye(n)[x], "default") for x in range(n)}
    edges = [(a, b) for a in range(n) for b in range(a + 1, n)]
    optimum = _ratio_lp(sides, edges, 1.0, n, ldp.objective.cost("default").ravel())
    assert _solve(ldp).objective == pytest.approx(optimum, rel=1e-7)


# ---------------------------------------------------------------------------------------------
# sweeps across fourteen orders of magnitude

def _monotone_and_certified(result, scale: float) -> list[float]:
    values = []
    for point in result.points:
        assert point.result.status == "optimal", (point.epsilon, point.result.message)
        assert all(a.holds for a in point.result.certificate)
        values.append(point.result.objective)
    assert all(b <= a + 1e-9 * scale for a, b in zip(values, values[1:])), values
    return values


@pytest.mark.parametrize("use_special", [True, False])
def test_ldp_sweep(use_special):
    k = 4
    problem = Problem(Domain.from_size(k), ExpectedLoss(1.0 - np.eye(k), {"default": np.full(k, 1 / k)}),
                      [LDP(1.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = _monotone_and_certified(sweep(problem, SWEEP, use_special=use_special), 1.0)
    assert values == pytest.approx([_krr(k, e) for e in SWEEP], rel=1e-6, abs=1e-9)
    assert values[-3:] == pytest.approx([_krr(k, e) for e in SWEEP[-3:]], rel=1e-9)


def test_distp_sweep():
    lam_a, lam_b = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.1, 0.2, 0.3, 0.4])
    x = np.arange(4)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    prior = 0.5 * (lam_a + lam_b)
    problem = Problem(Domain.from_size(4), ExpectedLoss(loss, {"default": prior}),
                      [DistP(1.0, [(Side("a", lam_a), Side("b", lam_b))])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = _monotone_and_certified(sweep(problem, SWEEP), 1.0)
    assert values[0] == pytest.approx(_equal_output_lp(lam_a, lam_b, loss, prior), abs=1e-8)
    sides = {"a": (lam_a, "default"), "b": (lam_b, "default")}
    for eps, value in zip(SWEEP, values):
        if 0.1 <= eps <= 20:
            ref = _ratio_lp(sides, [("a", "b")], eps, 4, (prior[:, None] * loss).ravel())
            assert value == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert 0.0 < values[-1] <= 10 * math.exp(-700)


def test_profile_sweep():
    profiles = {"P1": np.array([0.2, 0.3, 0.5, 0.0]), "P2": np.array([0.25, 0.25, 0.25, 0.25]),
                "P3": np.array([0.4, 0.4, 0.1, 0.1])}
    edges = [("P1", "P2"), ("P2", "P3")]
    data = {"name": "profiles", "inputs": {"size": 4},
            "distributions": {k: v.tolist() for k, v in profiles.items()},
            "mechanism": {"contexts": list(profiles)},
            "privacy": [{"notion": "profile", "epsilon": 1.0, "edges": [list(e) for e in edges]}],
            "objective": {"kind": "max-off-diagonal"}}
    problem = mechdesign.problem_from_dict(data, "profiles")
    assert isinstance(problem.privacy[0], ProfilePrivacy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = _monotone_and_certified(sweep(problem, SWEEP), 1.0)
    # the same design as a plain LP: min t with every off-diagonal entry of every K_s <= t
    n, blocks = 4, len(profiles)
    size = blocks * n * n + 1
    caps = []
    for b in range(blocks):
        for x in range(n):
            for y in range(n):
                if x != y:
                    row = np.zeros(size)
                    row[b * n * n + x * n + y], row[-1] = 1.0, -1.0
                    caps.append(row)
    cost = np.zeros(size)
    cost[-1] = 1.0
    sides = {k: (v, k) for k, v in profiles.items()}
    for eps, value in zip(SWEEP, values):
        if 0.1 <= eps <= 20:
            ref = _ratio_lp(sides, edges, eps, n, cost, extra=1, a_ub=caps)
            assert value == pytest.approx(ref, rel=1e-7, abs=1e-9)
    # P1 has a zero where P2 has mass: the identity is never feasible, the optimum stays > 0
    assert values[-1] > 0.0
    assert values[-1] <= 10 * math.exp(-700)


@pytest.mark.parametrize("divergence", ["max", "kl", "tv", "hellinger"])
def test_divergence_dp_at_zero_makes_adjacent_rows_equal(divergence):
    """A bound of 0 on any divergence forces equal rows along the adjacency; a connected line
    then forces one data-independent row: error probability 1 − 1/k under a uniform prior."""
    from mechdesign.privacy.divergence import DivergenceDP

    k = 4
    problem = Problem(Domain.from_size(k), ExpectedLoss(1.0 - np.eye(k), {"default": np.full(k, 1 / k)}),
                      [DivergenceDP(0.0, divergence, [(0, 1), (1, 2), (2, 3)])])
    assert _solve(problem).objective == pytest.approx(1 - 1 / k, abs=1e-9)


@pytest.mark.parametrize("eps", [35.0, 50.0, 700.0])
def test_max_divergence_dp_at_huge_epsilon_is_certified_near_zero(eps):
    """D∞ over a line adjacency: the identity with K[x, y] = e^{−ε|x − y|}-ish entries is
    feasible and costs O(e^{−ε}); the chained LP (no pair left out any more) must certify
    within the solver's resolution of that (absolute 1e-12 on a unit-scale objective)."""
    from mechdesign.privacy.divergence import DivergenceDP

    k = 4
    problem = Problem(Domain.from_size(k), ExpectedLoss(1.0 - np.eye(k), {"default": np.full(k, 1 / k)}),
                      [DivergenceDP(eps, "max", [(0, 1), (1, 2), (2, 3)])])
    result = _solve(problem)
    assert 0.0 <= result.objective <= 1e-12
    assert result.solver["relaxed"] is False


def test_max_divergence_xdp_sweep_is_exact_at_every_epsilon():
    """D∞ XDP over |x − y| on four inputs: K[x] <= e^{ε|x − x'|} K[x'] for every pair. Pairs
    beyond e^20 used to be left out of the LP (a relaxation); chained now, the sweep matches a
    plain all-pairs LP up to ε = 8 and stays certified, optimal and monotone to ε = 700."""
    from mechdesign.privacy.divergence import DivergenceXDP

    n = 4
    x = np.arange(n)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    prior = np.array([0.3, 0.25, 0.25, 0.2])
    problem = Problem(Domain.from_size(n), ExpectedLoss(loss, {"default": prior}),
                      [DivergenceXDP(1.0, "max", loss)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = sweep(problem, SWEEP)
    values = _monotone_and_certified(result, 1.0)
    assert not any(p.result.solver.get("relaxed") for p in result.points)
    sides = {i: (np.eye(n)[i], "default") for i in range(n)}
    edges = [(i, j, float(loss[i, j])) for i in range(n) for j in range(i + 1, n)]
    for eps, value in zip(SWEEP, values):
        if eps <= 8:
            ref = _ratio_lp(sides, edges, eps, n, (prior[:, None] * loss).ravel())
            assert value == pytest.approx(ref, rel=1e-7, abs=1e-9)
    assert values[-1] <= 1e-290


def test_approximate_distp_sweep_is_certified_and_monotone():
    lam_a, lam_b = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.1, 0.2, 0.3, 0.4])
    x = np.arange(4)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    problem = Problem(Domain.from_size(4), ExpectedLoss(loss, {"default": 0.5 * (lam_a + lam_b)}),
                      [DistP(1.0, [(Side("a", lam_a), Side("b", lam_b))], delta=0.05)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = _monotone_and_certified(sweep(problem, SWEEP), 1.0)
    assert values[-1] <= 1e-290


@pytest.mark.parametrize("eps", [35.0, 700.0])
def test_kl_distp_beyond_the_inputs_divergence_is_the_non_private_optimum(eps):
    """Data processing: KL(λ_a K ‖ λ_b K) <= KL(λ_a ‖ λ_b) for every shared K, so the identity
    (expected |x − y| = 0) is feasible once ε reaches the inputs' KL both ways (< 1 here). The
    conic solve ended "failed" at ε = 35 with a 1e-5 gap on an optimum of ~1e-11."""
    problem = _file("kl-distp", epsilon=eps)
    (a, b), = problem.privacy[0].pairs
    p, q = a.distribution, b.distribution
    assert max(float(np.sum(p * np.log(p / q))), float(np.sum(q * np.log(q / p)))) < 1.0
    result = _solve(problem)
    assert result.objective == 0.0


@pytest.mark.parametrize("bits", [1.3, 35.0, 2000.0])
def test_information_bounds_beyond_their_range_are_the_non_private_optimum(bits):
    """I(π; K) <= H(π) = 1.2955 bits for π = (0.6, 0.3, 0.1): from there the identity (error 0)
    is feasible; Shannon capacity (<= log2 3 for every channel on three inputs), min-entropy and
    g-leakage allow it from log2 3 = 1.585 bits, and bounds of 2000 bits must not overflow
    2^bits. Capacity and mutual information ended "failed" with 1e-5 gaps from Clarabel."""
    notions = [{"notion": "mutual-information", "prior": "p"}]
    if bits >= math.log2(3):
        notions += [{"notion": "information"}, {"notion": "min-entropy"},
                    {"notion": "g-vulnerability", "gain": "identity", "prior": "p"}]
    for notion in notions:
        data = {"name": "x", "inputs": {"size": 3}, "distributions": {"p": [0.6, 0.3, 0.1]},
                "privacy": [{**notion, "bits": bits}],
                "objective": {"kind": "error-probability", "prior": "p"}}
        assert _solve(mechdesign.problem_from_dict(data, "x")).objective == pytest.approx(0.0, abs=1e-12)


def test_zero_bits_of_mutual_information_keeps_the_best_data_independent_guess():
    # the LP's rows were equal to round-off, and the repair mixed all the way to uniform (0.667)
    data = {"name": "x", "inputs": {"size": 3}, "distributions": {"p": [0.6, 0.3, 0.1]},
            "privacy": [{"notion": "mutual-information", "prior": "p", "bits": 0.0}],
            "objective": {"kind": "error-probability", "prior": "p"}}
    assert _solve(mechdesign.problem_from_dict(data, "x")).objective == pytest.approx(0.4, abs=1e-12)
