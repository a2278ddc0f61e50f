"""The compiled kernels of the ε-LDP interior point: the direction they assemble solves the
Newton equations of the LP written out in full, and the step lengths are the ratio tests."""

import math

import numpy as np
import pytest

from mechdesign.solvers import ldp_interior_kernels as kernels
from mechdesign.solvers.ldp_interior import _Direction, _Newton, _Workspace


def _interior_point(n: int, k: int, epsilon: float, seed: int):
    """A random strictly interior primal-dual point: m_y < K[x, y] < e^ε m_y, λ, ν > 0."""
    rng = np.random.default_rng(seed)
    top = math.exp(epsilon)
    m = rng.uniform(0.5, 1.5, k) / k
    K = m * (1.0 + (top - 1.0) * rng.uniform(0.05, 0.95, (n, k)))
    lam, nu = rng.uniform(0.1, 2.0, (n, k)), rng.uniform(0.1, 2.0, (n, k))
    return rng.random((n, k)), K, m, rng.normal(size=n), lam, nu, top


@pytest.mark.parametrize("n,k", [(6, 9), (9, 6), (7, 7)])  # both sides of the reduced system
@pytest.mark.parametrize("epsilon", [0.3, 4.0])
def test_the_direction_solves_the_newton_equations(n, k, epsilon):
    C, K, m, u, lam, nu, top = _interior_point(n, k, epsilon, seed=n * k)
    w = _Workspace(n, k)
    T, W, f, r_m, mu = kernels.prepare(K, m, lam, nu, u, C, top, w.inv1, w.inv2, w.invP, w.B, w.rK)
    s1, s2 = K - m, top * m - K
    # the quantities prepare returns, from their definitions
    D1, D2 = lam / s1, nu / s2
    np.testing.assert_allclose(w.B, (D1 + top * D2) / (D1 + D2), rtol=1e-12)
    np.testing.assert_allclose(T, (top - 1.0) ** 2 * (D1 * D2 / (D1 + D2)).sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(W, (1.0 / (D1 + D2)).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(f, 1.0 - K.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(r_m, lam.sum(axis=0) - top * nu.sum(axis=0), rtol=1e-12)
    assert mu == pytest.approx(((s1 * lam).sum() + (s2 * nu).sum()) / (2 * n * k), rel=1e-12)
    rng = np.random.default_rng(1)
    c1, c2 = rng.normal(size=(n, k)) * 1e-2, rng.normal(size=(n, k)) * 1e-2
    h2, f2 = kernels.right_hand_side(c1, c2, w.inv1, w.inv2, w.invP, w.B, w.rK, r_m, f, top)
    d = _Direction(n, k)
    d.dm, d.du = _Newton(w.B, T, W).solve(h2, f2)
    a_p, a_d = kernels.recover(c1, c2, w.inv1, w.inv2, w.invP, w.B, w.rK, lam, nu, d.dm, d.du, top, d.ds1, d.dlam,
                               d.dnu)
    dK, ds2 = d.ds1 + d.dm, (top - 1.0) * d.dm - d.ds1  # the direction's other parts
    r_K = C - u[:, None] - lam + nu
    # row sums: Σ_y dK = f; stationarity in K and in m; the complementarity rows
    np.testing.assert_allclose(dK.sum(axis=1), f, atol=1e-12)
    np.testing.assert_allclose(-d.du[:, None] - d.dlam + d.dnu, -r_K, atol=1e-10)
    np.testing.assert_allclose(d.dlam.sum(axis=0) - top * d.dnu.sum(axis=0), -r_m, atol=1e-9 * top)
    np.testing.assert_allclose(lam * d.ds1 + s1 * d.dlam, c1, atol=1e-12)
    np.testing.assert_allclose(nu * ds2 + s2 * d.dnu, c2, atol=1e-12)
    # step lengths: the largest α <= 1 keeping each of s1, s2 (primal) and λ, ν (dual) positive
    for (x_p, dx_p), alpha in (([(s1, d.ds1), (s2, ds2)], a_p), ([(lam, d.dlam), (nu, d.dnu)], a_d)):
        ratios = [(-x / dx)[dx < 0] for x, dx in (x_p, dx_p)]
        expected = min([1.0] + [float(r.min()) for r in ratios if r.size])
        assert alpha == pytest.approx(expected, rel=1e-12)


def test_the_centred_targets_move_products_into_the_band():
    n, k, epsilon = 5, 4, 1.0
    _, K, m, _, lam, nu, top = _interior_point(n, k, epsilon, seed=3)
    spread = np.random.default_rng(4).uniform(-3.0, 3.0, (2, n, k))
    lam, nu = lam * 10.0 ** spread[0], nu * 10.0 ** spread[1]  # products over six decades
    zeros = np.zeros((n, k))
    c1, c2 = np.zeros((n, k)), np.zeros((n, k))
    out1, out2 = np.empty((n, k)), np.empty((n, k))
    products = np.concatenate([((K - m) * lam).ravel(), ((top * m - K) * nu).ravel()])
    target = float(np.median(products))
    # with a zero direction, the trial products are the current ones
    kernels.centred_targets(K, m, lam, nu, top, target, 1.0, 1.0, zeros, np.zeros(k), zeros, zeros, c1, c2, out1,
                            out2)
    t = np.concatenate([out1.ravel(), out2.ravel()])
    low, high = 0.1 * target, 10.0 * target
    expected = np.where(products < low, low - products,
                        np.where(products > high, np.maximum(high - products, -high), 0.0))
    assert (products < low).any() and (products > high).any()  # both sides of the band are tried
    np.testing.assert_allclose(t, expected, rtol=1e-12, atol=1e-15)


def test_the_predictor_and_corrector_targets():
    n, k, epsilon = 4, 6, 2.0
    _, K, m, _, lam, nu, top = _interior_point(n, k, epsilon, seed=5)
    s1, s2 = K - m, top * m - K
    c1, c2 = np.empty((n, k)), np.empty((n, k))
    kernels.affine_targets(K, m, lam, nu, top, c1, c2)
    np.testing.assert_allclose(c1, -s1 * lam, rtol=1e-15)
    np.testing.assert_allclose(c2, -s2 * nu, rtol=1e-15)
    rng = np.random.default_rng(6)
    ds1, dlam, dnu = rng.normal(size=(3, n, k))
    dm = rng.normal(size=k)
    ds2 = (top - 1.0) * dm - ds1  # as the direction defines it
    kernels.mehrotra_targets(K, m, lam, nu, top, 0.3, ds1, dm, dlam, dnu, c1, c2)
    np.testing.assert_allclose(c1, 0.3 - s1 * lam - ds1 * dlam, rtol=1e-13)
    np.testing.assert_allclose(c2, 0.3 - s2 * nu - ds2 * dnu, rtol=1e-13)
    # the mean product after a step, and the step itself (dK = ds1 + dm)
    after = ((s1 + 0.4 * ds1) * (lam + 0.7 * dlam)).sum() + ((s2 + 0.4 * ds2) * (nu + 0.7 * dnu)).sum()
    mean = kernels.affine_products(K, m, lam, nu, top, ds1, dm, dlam, dnu, 0.4, 0.7)
    assert mean == pytest.approx(after / (2 * n * k), rel=1e-12)
    K2, lam2, nu2 = K.copy(), lam.copy(), nu.copy()
    kernels.move(K2, lam2, nu2, ds1, dm, dlam, dnu, 0.4, 0.7)
    np.testing.assert_allclose(K2, K + 0.4 * (ds1 + dm), rtol=1e-14)
    np.testing.assert_allclose(lam2, lam + 0.7 * dlam, rtol=1e-14)
    np.testing.assert_allclose(nu2, nu + 0.7 * dnu, rtol=1e-14)
