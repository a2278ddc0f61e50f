"""The entry-by-entry work of the d-privacy interior-point iteration that NumPy would do in
several passes with temporaries, compiled with numba (imported on first use, so that loading
the package does not load numba)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def recover(t: np.ndarray, dual: np.ndarray, dprimal: np.ndarray, primal: np.ndarray,
            out: np.ndarray) -> tuple[float, float]:
    """The duals' direction out = (t − dual·dprimal)/primal from a complementarity equation, and
    in the same pass the largest steps α <= 1 keeping primal + α dprimal and dual + α out
    non-negative: (α primal, α dual)."""
    a_p, a_d = 1.0, 1.0
    p, dp, z, tt, o = primal.ravel(), dprimal.ravel(), dual.ravel(), t.ravel(), out.ravel()
    for k in range(p.size):
        dz = (tt[k] - z[k] * dp[k]) / p[k]
        o[k] = dz
        if dp[k] < 0.0 and -p[k] / dp[k] < a_p:
            a_p = -p[k] / dp[k]
        if dz < 0.0 and -z[k] / dz < a_d:
            a_d = -z[k] / dz
    return a_p, a_d


@njit(cache=True)
def stepped_products(x: np.ndarray, dx: np.ndarray, z: np.ndarray, dz: np.ndarray, a_p: float,
                     a_d: float) -> float:
    """Σ (x + a_p dx)(z + a_d dz): the complementarity after a trial step, in one pass."""
    total = 0.0
    fx, fdx, fz, fdz = x.ravel(), dx.ravel(), z.ravel(), dz.ravel()
    for k in range(fx.size):
        total += (fx[k] + a_p * fdx[k]) * (fz[k] + a_d * fdz[k])
    return total


@njit(cache=True)
def cholesky_solves(factors: np.ndarray, v: np.ndarray) -> None:
    """v[:, y] <- (L_y L_yᵀ)⁻¹ v[:, y] for every output y, in place, from the lower triangles of
    the factors (m, g, g): a forward and a back substitution per output, with no copies of the
    columns."""
    m, g = factors.shape[0], factors.shape[1]
    w = np.empty(g)
    for y in range(m):
        f = factors[y]
        for i in range(g):
            s = v[i, y]
            for k in range(i):
                s -= f[i, k] * w[k]
            w[i] = s / f[i, i]
        for i in range(g - 1, -1, -1):
            s = w[i]
            for k in range(i + 1, g):
                s -= f[k, i] * w[k]
            w[i] = s / f[i, i]
        for i in range(g):
            v[i, y] = w[i]
