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


@njit(cache=True)
def chain_cholesky(off: np.ndarray, diag: np.ndarray, low: np.ndarray) -> bool:
    """The Cholesky factors of the tridiagonal blocks with unit diagonal and off-diagonal
    ``off`` (m, g − 1): diag (m, g) and low (m, g − 1) such that T_y = L_y L_yᵀ. A block whose
    pivot round-off has made non-positive is factorised again with a diagonal shift of 1e-14,
    growing a hundredfold per attempt (eight at most); False when one still fails."""
    m, g = diag.shape
    for y in range(m):
        shift, done = 0.0, False
        for _ in range(8):
            pivot = 1.0 + shift
            ok = pivot > 0.0
            if ok:
                diag[y, 0] = np.sqrt(pivot)
            for i in range(g - 1):
                if not ok:
                    break
                low[y, i] = off[y, i] / diag[y, i]
                pivot = 1.0 + shift - low[y, i] * low[y, i]
                ok = pivot > 0.0
                if ok:
                    diag[y, i + 1] = np.sqrt(pivot)
            if ok:
                done = True
                break
            shift = 1e-14 if shift == 0.0 else 100.0 * shift
        if not done:
            return False
    return True


@njit(cache=True)
def chain_solves(diag: np.ndarray, low: np.ndarray, v: np.ndarray) -> None:
    """v[:, y] <- (L_y L_yᵀ)⁻¹ v[:, y] for every output y, in place, from the bidiagonal factors
    of :func:`chain_cholesky` given transposed, diag (g, m) and low (g − 1, m): the substitutions
    run down and up the rows with the outputs innermost, so that every access is contiguous."""
    g, m = diag.shape
    for y in range(m):
        v[0, y] /= diag[0, y]
    for i in range(1, g):
        for y in range(m):
            v[i, y] = (v[i, y] - low[i - 1, y] * v[i - 1, y]) / diag[i, y]
    for y in range(m):
        v[g - 1, y] /= diag[g - 1, y]
    for i in range(g - 2, -1, -1):
        for y in range(m):
            v[i, y] = (v[i, y] - low[i, y] * v[i + 1, y]) / diag[i, y]


@njit(cache=True)
def chain_inverse_sum(diag: np.ndarray, low: np.ndarray, scale: np.ndarray, total: np.ndarray) -> None:
    """total <- Σ_y D_y (L_y L_yᵀ)⁻¹ D_y with D_y = diag(scale[y]), in its lower triangle (the
    upper one is left as it was). The lower triangle of each inverse is found row by row: L⁻¹'s
    row i is row i − 1 times −l_i/d_i (the factor is bidiagonal), and the back substitution
    through Lᵀ runs from the last row up, each row a multiple of the one below it plus L⁻¹'s;
    rows are contiguous, so every step is a vector operation. g² operations per output."""
    m, g = diag.shape
    z = np.zeros((g, g))
    for y in range(m):
        d, lo, s = diag[y], low[y], scale[y]
        z[0, 0] = 1.0 / d[0]
        for i in range(1, g):  # L⁻¹, lower triangle
            r = -lo[i - 1] / d[i]
            for j in range(i):
                z[i, j] = r * z[i - 1, j]
            z[i, i] = 1.0 / d[i]
        for i in range(g - 1, -1, -1):  # L⁻ᵀ L⁻¹, lower triangle, in place, and its sum
            inv, si = 1.0 / d[i], s[i]
            c = lo[i] if i < g - 1 else 0.0
            below = z[i + 1] if i < g - 1 else z[i]  # (times c = 0 on the last row)
            row, out = z[i], total[i]
            for j in range(i + 1):
                value = (row[j] - c * below[j]) * inv
                row[j] = value
                out[j] += si * value * s[j]
