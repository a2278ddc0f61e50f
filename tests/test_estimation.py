"""Estimation (Palamidessi, “Privacy vs Utility, Differential Privacy and the Hybrid Model”, lecture slides): Inv, IBU and the accuracy measures, against independent references."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import ProblemError
from mechdesign.core.simplex import project_simplex
from mechdesign.estimation.estimation import (
    ConvergenceWarning,
    emd,
    errors,
    ibu,
    l1,
    l2,
    matrix_inversion,
    tv,
)
from mechdesign.mechanisms.metric_mechanisms import geometric
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.mechanisms.unary_encoding import oue
from tests.strategies import lattice_points, probability_vectors


def random_channel(rng, n, m):
    k = rng.random((n, m)) + 0.05
    return k / k.sum(axis=1, keepdims=True)


def mle(K, counts):
    """Maximum-likelihood estimate by direct optimisation (exponential cone, Clarabel)."""
    theta = cp.Variable(K.shape[0], nonneg=True)
    keep = counts > 0
    obj = cp.Maximize(counts[keep] @ cp.log(theta @ K[:, keep]))
    prob = cp.Problem(obj, [cp.sum(theta) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return theta.value, prob.value


# --- simplex projection and Inv -------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=12))
def test_simplex_projection_is_the_euclidean_projection(values):
    v = np.array(values)
    p = project_simplex(v)
    x = cp.Variable(v.size)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == 1]).solve(solver=cp.CLARABEL)
    assert p.sum() == pytest.approx(1.0, abs=1e-12) and np.all(p >= 0)
    # no feasible point is closer to v than p (the conic solver's answer included)
    assert np.sum((p - v) ** 2) <= np.sum((x.value - v) ** 2) + 1e-7
    # KKT conditions of the projection: p = max(v − τ, 0) for one τ (a conic solver's answer
    # is only accurate to its tolerance on degenerate inputs such as [0, 1, 2, 3])
    tau = np.mean((v - p)[p > 0])
    np.testing.assert_allclose((v - p)[p > 0], tau, atol=1e-12)
    assert np.all(v[p == 0] <= tau + 1e-12)
    np.testing.assert_allclose(project_simplex(p), p, atol=1e-15)  # idempotent


@pytest.mark.parametrize("make", [lambda: krr(8, 0.7).matrix, lambda: geometric(12, 0.4).matrix,
                                  lambda: random_channel(np.random.default_rng(3), 6, 6)])
def test_inv_recovers_lambda_exactly_from_exact_output_frequencies(make):
    K = make()
    lam = np.random.default_rng(0).dirichlet(np.ones(K.shape[0]))
    np.testing.assert_allclose(matrix_inversion(K, lam @ K), lam, atol=1e-12)


def test_inv_least_squares_for_a_non_square_channel():
    K = oue(4, 1.0).mechanism().matrix  # 4 x 16, full row rank
    lam = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(matrix_inversion(K, 1000 * (lam @ K)), lam, atol=1e-12)


def test_inv_projects_a_negative_solution_onto_the_simplex():
    K = krr(3, 0.5).matrix
    q = np.array([0.6, 0.4, 0.0])  # not reachable: the raw inverse has a negative entry
    raw = matrix_inversion(K, q, project=False)
    assert raw.min() < 0
    np.testing.assert_allclose(matrix_inversion(K, q), project_simplex(raw), atol=1e-15)


# --- IBU -------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed,interior", [(0, True), (1, True), (2, False)])
def test_ibu_fixed_point_is_the_maximum_likelihood_estimate(seed, interior):
    rng = np.random.default_rng(seed)
    K = random_channel(rng, 4, 5)
    lam = rng.dirichlet(np.ones(4)) if interior else np.array([0.0, 0.05, 0.45, 0.5])
    counts = rng.multinomial(2000, lam @ K).astype(float)
    ref, best = mle(K, counts)
    res = ibu(K, counts, tol=1e-12, max_iter=2_000_000)
    assert res.converged
    ll = res.log_likelihood * counts.sum()
    assert ll >= best - 1e-6  # at least as likely as the conic optimum (up to its tolerance)
    assert res.gap >= -1e-12 and (best - ll) / counts.sum() <= res.gap + 1e-9  # the gap certifies
    np.testing.assert_allclose(res.estimate, ref, atol=2e-4 if not interior else 1e-6)


def test_ibu_plain_and_accelerated_reach_the_same_estimate():
    rng = np.random.default_rng(5)
    K = geometric(15, 0.5).matrix
    counts = rng.multinomial(10**5, rng.dirichlet(np.ones(15)) @ K)
    fast = ibu(K, counts, tol=1e-11, accelerate=True)
    slow = ibu(K, counts, tol=1e-11, accelerate=False, max_iter=10**6)
    assert fast.converged and slow.converged
    assert fast.iterations < slow.iterations
    np.testing.assert_allclose(fast.estimate, slow.estimate, atol=1e-7)


def test_ibu_says_when_it_stops_at_the_iteration_cap():
    K = krr(50, 0.5).matrix
    counts = np.random.default_rng(0).multinomial(10**4, np.full(50, 0.02) @ K)
    with pytest.warns(ConvergenceWarning, match="iteration cap"):
        res = ibu(K, counts, tol=1e-12, max_iter=7, accelerate=False)
    assert not res.converged and res.iterations == 7 and res.change > 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ibu(K, counts, tol=1e-12, max_iter=7, warn=False)  # silenced on request only


def test_ibu_on_exact_frequencies_of_an_invertible_channel_returns_lambda():
    K = geometric(10, 1.0).matrix
    lam = np.random.default_rng(2).dirichlet(np.ones(10))
    res = ibu(K, lam @ K, tol=1e-13, max_iter=10**6)
    np.testing.assert_allclose(res.estimate, lam, atol=1e-8)


def test_ibu_handles_outputs_nobody_reported_and_a_column_of_zeros():
    K = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    res = ibu(K, [30, 70, 0], tol=1e-12)
    assert res.converged and res.estimate.sum() == pytest.approx(1.0)
    # 0.5 a + 0.2 (1 − a) = 0.3  ->  a = 1/3
    assert res.estimate[0] == pytest.approx(1 / 3, abs=1e-8)


def test_estimators_reject_bad_counts():
    K = krr(3, 1.0).matrix
    with pytest.raises(ProblemError, match="3 output counts"):
        ibu(K, [1, 2])
    with pytest.raises(ProblemError, match="all zero"):
        matrix_inversion(K, [0, 0, 0])
    with pytest.raises(ProblemError, match="non-negative"):
        ibu(K, [1, -1, 2])


# --- accuracy measures ----------------------------------------------------------------------

def test_tv_l1_l2_values():
    a, b = np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.3, 0.5])
    assert l1(a, b) == pytest.approx(1.0)
    assert tv(a, b) == pytest.approx(0.5)
    assert l2(a, b) == pytest.approx(np.sqrt(0.09 + 0.04 + 0.25))


@st.composite
def line_distribution_pairs(draw):
    """Two distributions on n sorted points of a line lattice in [0, 10] (points may coincide)."""
    n = draw(st.integers(2, 20))
    x = np.sort(draw(lattice_points(n, 1, side=41, step=0.25, distinct=False)).ravel())
    return draw(probability_vectors(n)), draw(probability_vectors(n)), x


@settings(max_examples=25, deadline=None)
@given(line_distribution_pairs())
def test_emd_on_a_line_equals_the_cdf_formula(case):
    a, b, x = case
    cost = np.abs(x[:, None] - x[None, :])
    closed = float(np.sum(np.abs(np.cumsum(a - b))[:-1] * np.diff(x)))  # W1 = ∫ |F_a − F_b|
    assert emd(a, b, cost) == pytest.approx(closed, abs=1e-9)


def test_errors_with_no_ground_metric_make_emd_equal_tv():
    a, b = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.3, 0.6])
    out = errors(a, b)
    assert out["emd"] == pytest.approx(out["tv"], abs=1e-12)
    with pytest.raises(ProblemError, match="unknown accuracy measure"):
        errors(a, b, measures=["kl"])


def test_emd_with_tiny_masses_equals_the_transportation_lp():
    # estimates carry masses like 1e-26 and 1e-11 (IBU); the EMD must still be the exact W1
    from mechdesign.estimation.estimation import _transport_lp

    pts = np.array([(r, c) for r in range(5) for c in range(5)], dtype=float)
    cost = np.linalg.norm(pts[:, None] - pts[None, :], axis=2)
    rng = np.random.default_rng(4)
    a = np.full(25, 0.04)
    b = rng.dirichlet(np.ones(25))
    b[[0, 3, 7, 11, 19]] = [7.5e-26, 3.5e-11, 4.8e-11, 5.5e-11, 2.9e-9]
    b /= b.sum()
    value = emd(a, b, cost)
    assert value == pytest.approx(_transport_lp(a, b, cost), abs=1e-9)
    x = np.sort(rng.uniform(0, 5, 25))  # and the LP itself against the line's closed form
    line = np.abs(x[:, None] - x[None, :])
    assert _transport_lp(a, b, line) == pytest.approx(float(np.sum(np.abs(np.cumsum(a - b))[:-1] * np.diff(x))),
                                                      abs=1e-9)
