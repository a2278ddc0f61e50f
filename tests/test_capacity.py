"""Capacity solver and leakage measures (mechdesign.information.capacity and .leakage): closed
forms, a second algorithm (cvxpy exponential cone), certificates, and Wu, Xia and He’s (2017)
max-information theorem."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import ProblemError
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.channel import LN2
from mechdesign.information.leakage import (
    g_leakage,
    max_information_audit,
    max_information_capacity,
    max_mutual_information,
    min_entropy_capacity,
    min_entropy_leakage,
    mutual_information,
    posterior_g_vulnerability,
    prior_g_vulnerability,
)
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.privacy.ldp import LDP
from tests.strategies import stochastic_matrices


def H(p):
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def D_rows(K, q):
    """max_x D(K[x] ‖ q) in bits, independently of the module."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(K > 0, K * (np.log2(K) - np.log2(q)), 0.0)
    return float(t.sum(axis=1).max())


def brackets(r, value, tol=1e-9):
    assert r.converged
    assert r.upper - r.lower <= tol
    assert r.lower - 1e-12 <= value <= r.upper + 1e-12


@pytest.mark.parametrize("p", [0.0, 0.01, 0.1, 0.25, 0.4, 0.5])
def test_bsc_capacity_is_one_minus_binary_entropy(p):
    r = shannon_capacity([[1 - p, p], [p, 1 - p]])
    brackets(r, 1 - H([p, 1 - p]))


@pytest.mark.parametrize("k", [2, 3, 10, 100])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_krr_capacity_is_log_k_minus_row_entropy(k, eps):
    K = krr(k, eps).matrix
    brackets(shannon_capacity(K), np.log2(k) - H(K[0]))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_z_channel_matches_its_closed_form(p):
    # Z channel: 0 -> 0 always, 1 -> 0 with probability p; C = log2(1 + (1 - p) p^{p/(1-p)})
    K = np.array([[1.0, 0.0], [p, 1 - p]])
    brackets(shannon_capacity(K), np.log2(1 + (1 - p) * p ** (p / (1 - p))))


def test_identity_and_constant_channels():
    brackets(shannon_capacity(np.eye(7)), np.log2(7))
    brackets(shannon_capacity(np.tile([0.2, 0.3, 0.5], (4, 1))), 0.0)
    brackets(shannon_capacity([[0.3, 0.7]]), 0.0)


def test_certificate_is_the_mutual_information_of_the_prior_and_the_divergence_at_the_output():
    rng = np.random.default_rng(0)
    K = rng.dirichlet(np.ones(30), size=20)
    r = shannon_capacity(K)
    assert r.prior.sum() == pytest.approx(1.0) and np.all(r.prior >= 0)
    assert mutual_information(r.prior, K) == pytest.approx(r.lower, abs=1e-12)
    assert r.output.sum() == pytest.approx(1.0) and np.all(r.output >= 0)
    assert D_rows(K, r.output) == pytest.approx(r.upper, abs=1e-12)


def _cvxpy_capacity(K):
    """max_p Σ_x p_x Σ_y K log K + H(pK) by the exponential cone (Clarabel), in bits."""
    m, _ = K.shape
    negH = np.where(K > 0, K * np.log(np.where(K > 0, K, 1)), 0).sum(axis=1)
    p = cp.Variable(m, nonneg=True)
    prob = cp.Problem(cp.Maximize(negH @ p + cp.sum(cp.entr(K.T @ p))), [cp.sum(p) == 1])
    prob.solve(solver=cp.CLARABEL)
    return prob.value / LN2, np.clip(p.value, 0, None) / np.clip(p.value, 0, None).sum()


@pytest.mark.parametrize("shape,alpha,seed", [((8, 8), 1.0, 0), ((40, 25), 1.0, 1),
                                              ((25, 40), 0.1, 2), ((60, 60), 0.1, 3)])
def test_bounds_bracket_a_direct_exponential_cone_maximisation(shape, alpha, seed):
    rng = np.random.default_rng(seed)
    K = rng.dirichlet(np.full(shape[1], alpha), size=shape[0])
    r = shannon_capacity(K)
    value, p = _cvxpy_capacity(K)
    # the conic value is within solver tolerance of the bracket ...
    assert r.lower - 1e-6 <= value <= r.upper + 1e-6
    # ... and the conic prior's exact mutual information can never exceed the upper bound
    assert mutual_information(p, K) <= r.upper + 1e-12
    assert mutual_information(p, K) >= r.lower - 1e-5


@pytest.mark.parametrize("k,alpha", [(200, 1.0), (200, 0.1), (200, 0.01)])
def test_random_square_channels_reach_a_certified_1e9_gap(k, alpha):
    rng = np.random.default_rng(k)
    K = rng.dirichlet(np.full(k, alpha), size=k)
    r = shannon_capacity(K, tol=1e-9)
    assert r.converged and r.gap <= 1e-9
    assert D_rows(K, r.output) == pytest.approx(r.upper, abs=1e-12)


def test_near_duplicate_rows_from_solver_round_off_still_converge():
    rng = np.random.default_rng(5)
    B = rng.dirichlet(np.full(40, 0.5), size=12)
    K = B[rng.integers(0, 12, 36)] * (1 + 1e-9 * rng.random((36, 40)))
    K /= K.sum(axis=1, keepdims=True)
    r = shannon_capacity(K)
    assert r.converged and r.gap <= 1e-9
    # rows moved by 1e-9 (relative) move the capacity by about as much
    assert r.value == pytest.approx(shannon_capacity(B).value, abs=1e-8)


@pytest.mark.parametrize("values,sigma,outputs", [(100, 3.0, 200), (30, 1.0, 1000)])
def test_smooth_gaussian_channels_with_near_dependent_rows_converge(values, sigma, outputs):
    # rows are shifted Gaussians: many are near mixtures of their neighbours and the optimal
    # input is discrete (a few mass points), the hard case for Blahut–Arimoto and for Newton
    from mechdesign.mechanisms.channels import gaussian_capacity_bound, gaussian_channel

    K = gaussian_channel(np.arange(float(values)), sigma, outputs=outputs).matrix
    r = shannon_capacity(K)
    assert r.converged and r.gap <= 1e-9
    # a discrete optimal input, not every grid point: fewer points than the grid carry all but
    # 1e-4 of the mass (the rest is the iteration's residue, 1e-11 per point or exact zeros,
    # depending on the CPU's round-off)
    heaviest = np.cumsum(np.sort(r.prior)[::-1])
    assert int(np.searchsorted(heaviest, 1 - 1e-4)) + 1 < values
    assert r.upper <= gaussian_capacity_bound(values - 1.0, sigma) + 1e-9
    assert D_rows(K, r.output) == pytest.approx(r.upper, abs=1e-12)


def test_zero_columns_duplicate_rows_and_rectangular_channels():
    rng = np.random.default_rng(7)
    B = rng.dirichlet(np.ones(6), size=5)
    padded = np.hstack([B, np.zeros((5, 3))])
    base = shannon_capacity(B)
    assert shannon_capacity(padded).value == pytest.approx(base.value, abs=2e-9)
    assert shannon_capacity(np.vstack([B, B])).value == pytest.approx(base.value, abs=2e-9)
    tall = rng.dirichlet(np.ones(4), size=300)
    r = shannon_capacity(tall)
    assert r.converged and r.upper <= 2 + 1e-12  # at most log2 |Y|


def test_capacity_of_independent_product_channel_is_the_sum():
    # Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017 §7: two independent channels used on two independent inputs
    rng = np.random.default_rng(11)
    A = rng.dirichlet(np.ones(4), size=3)
    B = rng.dirichlet(np.full(5, 0.3), size=6)
    ca, cb, cab = shannon_capacity(A), shannon_capacity(B), shannon_capacity(np.kron(A, B))
    assert cab.lower <= ca.upper + cb.upper + 1e-12
    assert cab.upper >= ca.lower + cb.lower - 1e-12
    assert cab.value == pytest.approx(ca.value + cb.value, abs=3e-9)


def test_same_input_composition_is_at_most_the_sum_and_at_least_the_max():
    # Wu, Xia and He 2017 Theorem 7.1 (basic composition): Y = (Y1, Y2) of the same X through independent
    # channels, K[x, (y1, y2)] = K1[x, y1] K2[x, y2]
    rng = np.random.default_rng(12)
    K1 = rng.dirichlet(np.ones(5), size=4)
    K2 = rng.dirichlet(np.ones(3), size=4)
    both = np.einsum("xa,xb->xab", K1, K2).reshape(4, -1)
    c1, c2, c = shannon_capacity(K1), shannon_capacity(K2), shannon_capacity(both)
    assert c.lower <= c1.upper + c2.upper + 1e-12
    assert c.upper >= max(c1.lower, c2.lower) - 1e-12


def test_post_processing_never_increases_capacity():
    rng = np.random.default_rng(13)
    K = rng.dirichlet(np.ones(6), size=6)
    P = rng.dirichlet(np.ones(4), size=6)
    assert shannon_capacity(K @ P).lower <= shannon_capacity(K).upper + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.integers(2, 25), st.integers(2, 25)).flatmap(
    lambda shape: stochastic_matrices(*shape)))
def test_random_channels_certify_and_stay_below_min_entropy_capacity(K):
    m, n = K.shape
    r = shannon_capacity(K)
    assert r.converged and -1e-12 <= r.gap <= 1e-9
    assert r.lower >= -1e-12 and r.upper <= min(np.log2(m), np.log2(n)) + 1e-9
    # Shannon capacity never exceeds the min-entropy capacity
    assert r.lower <= min_entropy_capacity(K) + 1e-9


@pytest.mark.parametrize("k", [2, 5, 20])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_min_entropy_capacity_of_krr(k, eps):
    e = np.exp(eps)
    assert min_entropy_capacity(krr(k, eps).matrix) == pytest.approx(np.log2(k * e / (k - 1 + e)), abs=1e-12)


def test_min_entropy_leakage_is_largest_under_the_uniform_prior():
    rng = np.random.default_rng(3)
    K = rng.dirichlet(np.ones(6), size=5)
    cap = min_entropy_capacity(K)
    assert min_entropy_leakage("uniform", K) == pytest.approx(cap, abs=1e-12)
    for _ in range(20):
        pi = rng.dirichlet(np.ones(5))
        assert min_entropy_leakage(pi, K) <= cap + 1e-12


def test_g_vulnerability_with_identity_gain_is_bayes_vulnerability():
    rng = np.random.default_rng(4)
    K = rng.dirichlet(np.ones(4), size=4)
    pi = rng.dirichlet(np.ones(4))
    assert posterior_g_vulnerability(pi, K, "identity") == pytest.approx((pi[:, None] * K).max(axis=0).sum())
    assert prior_g_vulnerability(pi, "identity") == pytest.approx(pi.max())
    # a gain that pays 1 for guessing within distance 1 on a line
    g = (np.abs(np.subtract.outer(np.arange(4), np.arange(4))) <= 1).astype(float)
    brute = sum(max(sum(pi[x] * g[w, x] * K[x, y] for x in range(4)) for w in range(4)) for y in range(4))
    assert posterior_g_vulnerability(pi, K, g) == pytest.approx(brute)
    assert g_leakage(pi, K, g) == pytest.approx(np.log2(brute / (g @ pi).max()))


@pytest.mark.parametrize("seed", range(5))
def test_max_information_capacity_equals_the_ldp_epsilon(seed):
    # Wu, Xia and He 2017, Theorem 2.1 with one record: sup_π I∞(π; K) = the LDP ε
    rng = np.random.default_rng(seed)
    K = rng.dirichlet(np.ones(5), size=4)
    eps = LDP(1.0).level(K)
    assert max_information_capacity(K) == pytest.approx(eps, abs=1e-12)
    audit = max_information_audit(K)
    assert audit.holds and audit.requested["epsilon"] == pytest.approx(eps, abs=1e-12)
    assert eps - 1e-9 <= audit.detail["approached_by_prior"] <= eps + 1e-12
    for _ in range(20):  # no prior exceeds it
        assert max_mutual_information(rng.dirichlet(np.ones(4)), K) * LN2 <= eps + 1e-12


def test_max_information_of_krr_is_epsilon():
    assert max_information_capacity(krr(6, 1.3).matrix) == pytest.approx(1.3, abs=1e-12)


@pytest.mark.parametrize("bad", [[[0.5, 0.6], [0.5, 0.5]], [[-0.1, 1.1]], [[np.nan, 1.0]]])
def test_non_stochastic_channels_are_rejected(bad):
    with pytest.raises(ProblemError, match="channel"):
        shannon_capacity(bad)


def test_priors_that_are_not_distributions_are_rejected():
    K = np.eye(2)
    with pytest.raises(ProblemError, match="sum to 1"):
        mutual_information([0.5, 0.6], K)
    with pytest.raises(ProblemError, match="2 entries"):
        mutual_information([1.0], K)
    with pytest.raises(ProblemError, match="tol"):
        shannon_capacity(K, tol=0)
