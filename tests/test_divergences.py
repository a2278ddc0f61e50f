"""Divergences (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 5, Def. 6, Table I): values against hand computations and the
definitions, convex forms against the values, cones, bad names."""

from itertools import combinations
from math import log, sqrt

import cvxpy as cp
import numpy as np
import pytest

from mechdesign.core.divergences import (
    DIVERGENCES,
    F_DIVERGENCES,
    approximate_max_divergence,
    divergence,
    f_divergence_value,
)
from mechdesign.core.errors import ProblemError
from mechdesign.privacy.base import hockey_stick

P = np.array([0.5, 0.5])
Q = np.array([0.25, 0.75])

# by hand, p = (1/2, 1/2), q = (1/4, 3/4)
HAND = {
    "kl": (0.5 * log(0.5 / 0.25) + 0.5 * log(0.5 / 0.75), 0.25 * log(0.25 / 0.5) + 0.75 * log(0.75 / 0.5)),
    "reverse-kl": (0.25 * log(0.25 / 0.5) + 0.75 * log(0.75 / 0.5), 0.5 * log(0.5 / 0.25) + 0.5 * log(0.5 / 0.75)),
    "tv": (0.25, 0.25),
    "chi2": (0.25 ** 2 / 0.25 + 0.25 ** 2 / 0.75, 0.25 ** 2 / 0.5 + 0.25 ** 2 / 0.5),
    "hellinger": (1 - sqrt(0.125) - sqrt(0.375), 1 - sqrt(0.125) - sqrt(0.375)),
    "max": (log(2.0), log(1.5)),
}


@pytest.mark.parametrize("name", list(HAND))
def test_values_match_hand_computations_both_ways(name):
    forward, backward = HAND[name]
    assert divergence(name).value(P, Q) == pytest.approx(forward, abs=1e-14)
    assert divergence(name).value(Q, P) == pytest.approx(backward, abs=1e-14)


def test_approximate_max_divergence_by_hand():
    # Σ max(0, p − t q) = 0.5 − 0.25 t = 0.1 at t = 1.6 (the second term is 0 there)
    assert divergence("max").value(P, Q, delta=0.1) == pytest.approx(log(1.6), abs=1e-14)
    # δ at least the total variation: the distributions are already (0, δ)-close
    assert divergence("max").value(P, Q, delta=0.25) == 0.0


@pytest.mark.parametrize("seed", range(30))
def test_approximate_max_divergence_matches_definition_5_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 5
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    if seed % 3 == 0:
        q[rng.integers(n)] = 0.0
        q /= q.sum()
    if seed % 4 == 0:
        p[rng.integers(n)] = 0.0
        p /= p.sum()
    delta = float(rng.uniform(0, 0.4))
    best = -np.inf  # Def. 5: max over R ⊆ supp(p), p[R] >= δ of ln((p[R] − δ) / q[R])
    support = np.flatnonzero(p > 0)
    for r in range(1, support.size + 1):
        for R in combinations(support, r):
            pr, qr = p[list(R)].sum(), q[list(R)].sum()
            if pr < delta:
                continue
            best = max(best, np.inf if qr == 0 and pr > delta else np.log((pr - delta) / qr) if pr > delta else -np.inf)
    expected = max(best, 0.0)
    got = approximate_max_divergence(p, q, delta)
    if np.isinf(expected):
        assert np.isinf(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)
        if got > 0:  # the hockey stick is exactly δ at the returned ε
            assert hockey_stick(p, q, got) == pytest.approx(delta, abs=1e-12)


def test_zero_mass_conventions():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.5, 0.0, 0.5])
    # q = 0 < p: infinite for KL, χ², D∞; finite slope ½ for TV and Hellinger
    assert np.isinf(divergence("kl").value(p, q))
    assert np.isinf(divergence("chi2").value(p, q))
    assert np.isinf(divergence("max").value(p, q))
    assert divergence("tv").value(p, q) == pytest.approx(0.5)
    assert divergence("hellinger").value(p, q) == pytest.approx(0.5)
    # reverse KL(p ‖ q) = KL(q ‖ p): infinite too here (p = 0 < q at the third value)
    assert np.isinf(divergence("reverse-kl").value(p, q))
    p2 = np.array([0.5, 0.5, 0.0])
    q2 = np.array([0.25, 0.25, 0.5])
    assert divergence("kl").value(p2, q2) == pytest.approx(log(2.0))
    assert np.isinf(divergence("reverse-kl").value(p2, q2))
    assert divergence("max").value(p2, q2) == pytest.approx(log(2.0))


@pytest.mark.parametrize("name", F_DIVERGENCES)
def test_generators_are_in_class_F_and_give_the_closed_forms(name):
    div = divergence(name)
    f = div.generator
    t = np.linspace(1e-3, 20, 4001)
    assert f(1.0) == pytest.approx(0.0, abs=1e-15)
    assert np.all(f(t) >= -1e-15)                       # non-negative (Def. 6's F)
    assert np.all(np.diff(f(t), 2) >= -1e-12)           # convex
    rng = np.random.default_rng(1)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        assert div.value(p, q) == pytest.approx(f_divergence_value(f, p, q, np.inf), rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_known_inequalities_between_divergences(seed):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(7) * 0.7), rng.dirichlet(np.ones(7) * 0.7)
    v = {name: divergence(name).value(p, q) for name in DIVERGENCES}
    assert v["kl"] <= v["max"] + 1e-12                  # Prop. 10's premise: D_KL <= D∞
    assert v["tv"] <= sqrt(v["kl"] / 2) + 1e-12         # Pinsker
    assert v["hellinger"] <= v["tv"] + 1e-12
    assert v["kl"] <= np.log1p(v["chi2"]) + 1e-12       # KL <= ln(1 + χ²)


def _minimal_bound(name, p, q, delta=0.0):
    """Smallest ε with the convex form D(p ‖ q) <= ε feasible (constants p, q)."""
    div = divergence(name)
    if name == "max":
        c = cp.Variable(nonneg=True)
        prob = cp.Problem(cp.Minimize(c), div.constraints(p, q, c, delta))
        prob.solve(solver="CLARABEL")
        return np.log(c.value)
    t = cp.Variable()
    prob = cp.Problem(cp.Minimize(t), div.constraints(p, q, t))
    prob.solve(solver="CLARABEL")
    return t.value


@pytest.mark.parametrize("name", list(DIVERGENCES))
def test_convex_form_is_tight_at_the_value(name):
    rng = np.random.default_rng(7)
    p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    assert _minimal_bound(name, p, q) == pytest.approx(divergence(name).value(p, q), abs=1e-6)


def test_convex_form_of_approximate_max_divergence_is_tight():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    assert _minimal_bound("max", p, q, 0.05) == pytest.approx(approximate_max_divergence(p, q, 0.05), abs=1e-6)


@pytest.mark.parametrize("name", [n for n in DIVERGENCES if n != "max"])
def test_convex_form_constrains_each_row_with_its_own_bound(name):
    """Rows of P, Q are pairs; a vector bound: the minimal bounds are the row values."""
    rng = np.random.default_rng(11)
    Pm, Qm = rng.dirichlet(np.ones(4), size=3), rng.dirichlet(np.ones(4), size=3)
    t = cp.Variable(3)
    prob = cp.Problem(cp.Minimize(cp.sum(t)), divergence(name).constraints(Pm, Qm, t))
    prob.solve(solver="CLARABEL")
    assert np.allclose(t.value, divergence(name).value(Pm, Qm), atol=1e-6)


def test_cones_and_linearity():
    assert {n: d.cone for n, d in DIVERGENCES.items()} == {
        "max": "linear", "kl": "exponential", "reverse-kl": "exponential", "tv": "linear",
        "chi2": "second-order", "hellinger": "second-order"}
    assert [n for n, d in DIVERGENCES.items() if d.linear] == ["max", "tv"]
    assert divergence("max").supports_delta and not divergence("kl").supports_delta


def test_theorem3_bounds_follow_the_paper():
    eps = 0.3
    e = np.exp(eps)
    assert divergence("max").theorem3_bound(eps) == pytest.approx(2 * eps)
    assert divergence("kl").theorem3_bound(eps) == pytest.approx(2 * eps * e)
    assert divergence("tv").theorem3_bound(eps) == pytest.approx(e * 0.5 * (e ** 2 - 1))
    assert divergence("chi2").theorem3_bound(eps) == pytest.approx(e * (e ** 2 - 1) ** 2)
    assert divergence("hellinger").theorem3_bound(eps) == pytest.approx(e * 0.5 * (e - 1) ** 2)
    # reverse KL through its generator in F, t − 1 − ln t (the printed −t log t is not in F)
    assert divergence("reverse-kl").theorem3_bound(eps) == pytest.approx(e * (e ** 2 - 1 - 2 * eps))
    assert all(divergence(n).theorem3_bound(0.0) == 0.0 for n in DIVERGENCES)


def test_unknown_divergence_is_a_problem_error_naming_the_choices():
    with pytest.raises(ProblemError, match=r"unknown divergence 'renyi'; expected one of: max, kl, "):
        divergence("renyi")
    with pytest.raises(ProblemError, match="takes no delta"):
        divergence("kl").value(P, Q, delta=0.1)
