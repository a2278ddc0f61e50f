"""The entry-by-entry work of the ε-LDP interior-point iteration, compiled with numba: each
kernel makes one pass over the |X|×|Y| arrays where NumPy would make one pass per operation and
allocate a temporary for each (imported on first use, so that loading the package does not load
numba).

The notation is that of :mod:`mechdesign.solvers.ldp_interior`: the slacks s1 = K − m (per
column's floor m_y) and s2 = e^ε m − K, their duals λ and ν, D1 = λ/s1, D2 = ν/s2, P = D1 + D2,
B = (D1 + e^ε D2)/P, the stationarity residual r_K = C − u − λ + ν.

The passes are bound partly by memory and partly by their divisions: the quantities that take
a division (1/s1, 1/s2, 1/P, B) and r_K are stored once per iteration, the rest (D1 = λ/s1, the
right-hand side's a = c1/s1, ...) is recomputed where it is needed, and a direction is stored as
(ds1, dλ, dν) with its floors' dm (dK = ds1 + dm and ds2 = (e^ε − 1) dm − ds1 follow): a
Gondzio corrector reads and writes 29 arrays of |X|×|Y| entries, where storing everything took
37. (Recomputing the divisions as well was slower.)
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def prepare(K, m, lam, nu, u, C, top, inv1, inv2, invP, B, rK):
    """Fill the per-iteration arrays (1/s1, 1/s2, 1/P, B and r_K) and return (T, W, f, r_m, μ):
    T_y = (e^ε − 1)² Σ_x D1 D2/P, W_x = Σ_y 1/P, the row-sum residual f = 1 − Σ_y K, the
    floors' residual r_m = Σ_x λ − e^ε Σ_x ν, and the mean complementarity product μ."""
    n, k = K.shape
    T = np.zeros(k)
    W = np.zeros(n)
    f = np.ones(n)
    r_m = np.zeros(k)
    products = 0.0
    for x in range(n):
        for y in range(k):
            s1 = K[x, y] - m[y]
            s2 = top * m[y] - K[x, y]
            i1 = 1.0 / s1
            i2 = 1.0 / s2
            a = lam[x, y] * i1
            b = nu[x, y] * i2
            ip = 1.0 / (a + b)
            inv1[x, y] = i1
            inv2[x, y] = i2
            invP[x, y] = ip
            B[x, y] = (a + top * b) * ip
            rK[x, y] = C[x, y] - u[x] - lam[x, y] + nu[x, y]
            T[y] += a * b * ip
            W[x] += ip
            f[x] -= K[x, y]
            r_m[y] += lam[x, y] - top * nu[x, y]
            products += s1 * lam[x, y] + s2 * nu[x, y]
    T *= (top - 1.0) ** 2
    return T, W, f, r_m, products / (2.0 * n * k)


@njit(cache=True, nogil=True)
def right_hand_side(c1, c2, inv1, inv2, invP, B, rK, r_m, f, top):
    """For complementarity targets (c1, c2): with a = c1/s1, b = c2/s2 and g = a − b − r_K, the
    reduced system's right-hand sides h2 = h + Σ_x B g (with h = −r_m − Σ_x a + e^ε Σ_x b) and
    f2 = f − Σ_y g/P; returns (h2, f2)."""
    n, k = c1.shape
    h2 = -r_m.copy()
    f2 = f.copy()
    for x in range(n):
        for y in range(k):
            ax = c1[x, y] * inv1[x, y]
            bx = c2[x, y] * inv2[x, y]
            g = ax - bx - rK[x, y]
            h2[y] += -ax + top * bx + B[x, y] * g
            f2[x] -= g * invP[x, y]
    return h2, f2


@njit(cache=True, nogil=True)
def recover(c1, c2, inv1, inv2, invP, B, rK, lam, nu, dm, du, top, ds1, dlam, dnu):
    """The full direction for targets (c1, c2) from the floors' and row duals' steps (dm, du):
    dK = g/P + B dm + du/P, ds1 = dK − dm, ds2 = (e^ε − 1) dm − ds1, dλ = a − D1 ds1,
    dν = b − D2 ds2 (ds1, dλ, dν filled in place); returns the largest primal and dual step
    lengths (at most 1) that keep s1, s2, λ, ν positive."""
    n, k = c1.shape
    low_p = 0.0
    low_d = 0.0
    for x in range(n):
        for y in range(k):
            i1 = inv1[x, y]
            i2 = inv2[x, y]
            ip = invP[x, y]
            ax = c1[x, y] * i1
            bx = c2[x, y] * i2
            dk = (ax - bx - rK[x, y]) * ip + B[x, y] * dm[y] + du[x] * ip
            e1 = dk - dm[y]
            e2 = (top - 1.0) * dm[y] - e1
            dual1 = lam[x, y]
            dual2 = nu[x, y]
            dl = ax - dual1 * i1 * e1
            dn = bx - dual2 * i2 * e2
            ds1[x, y] = e1
            dlam[x, y] = dl
            dnu[x, y] = dn
            low_p = min(low_p, e1 * i1, e2 * i2)
            # the duals' ratio test divides only where the ratio is a new minimum (λ, ν > 0):
            # a division per entry took a fifth of the pass
            if dl < low_d * dual1:
                low_d = dl / dual1
            if dn < low_d * dual2:
                low_d = dn / dual2
    return (1.0 if low_p >= -1.0 else -1.0 / low_p), (1.0 if low_d >= -1.0 else -1.0 / low_d)


@njit(cache=True, nogil=True)
def affine_products(K, m, lam, nu, top, ds1, dm, dlam, dnu, a_p, a_d):
    """The mean complementarity product after steps (a_p, a_d) along a direction."""
    n, k = K.shape
    total = 0.0
    for x in range(n):
        for y in range(k):
            s1 = K[x, y] - m[y]
            s2 = top * m[y] - K[x, y]
            e2 = (top - 1.0) * dm[y] - ds1[x, y]
            total += (s1 + a_p * ds1[x, y]) * (lam[x, y] + a_d * dlam[x, y])
            total += (s2 + a_p * e2) * (nu[x, y] + a_d * dnu[x, y])
    return total / (2.0 * n * k)


@njit(cache=True, nogil=True)
def affine_targets(K, m, lam, nu, top, c1, c2):
    """The predictor's complementarity targets c = −s·λ (filled in place)."""
    n, k = K.shape
    for x in range(n):
        for y in range(k):
            c1[x, y] = -(K[x, y] - m[y]) * lam[x, y]
            c2[x, y] = -(top * m[y] - K[x, y]) * nu[x, y]


@njit(cache=True, nogil=True)
def mehrotra_targets(K, m, lam, nu, top, sigma_mu, ds1, dm, dlam, dnu, c1, c2):
    """The corrector's complementarity targets c = σμ − s·λ − ds·dλ (filled in place)."""
    n, k = K.shape
    for x in range(n):
        for y in range(k):
            s1 = K[x, y] - m[y]
            s2 = top * m[y] - K[x, y]
            e2 = (top - 1.0) * dm[y] - ds1[x, y]
            c1[x, y] = sigma_mu - s1 * lam[x, y] - ds1[x, y] * dlam[x, y]
            c2[x, y] = sigma_mu - s2 * nu[x, y] - e2 * dnu[x, y]


@njit(cache=True, nogil=True)
def centred_targets(K, m, lam, nu, top, target, goal_p, goal_d, ds1, dm, dlam, dnu, c1, c2, out1, out2):
    """Gondzio's corrected targets: c + t, where t moves the trial point's complementarity
    products v = (s + goal_p ds)(λ + goal_d dλ) that fall outside [0.1, 10]·target back to its
    edge, the large ones' correction capped at −10·target (filled into out1, out2)."""
    n, k = K.shape
    low = 0.1 * target
    high = 10.0 * target
    for x in range(n):
        for y in range(k):
            s1 = K[x, y] - m[y]
            s2 = top * m[y] - K[x, y]
            e2 = (top - 1.0) * dm[y] - ds1[x, y]
            v1 = (s1 + goal_p * ds1[x, y]) * (lam[x, y] + goal_d * dlam[x, y])
            v2 = (s2 + goal_p * e2) * (nu[x, y] + goal_d * dnu[x, y])
            t1 = low - v1 if v1 < low else (high - v1 if v1 > high else 0.0)
            t2 = low - v2 if v2 < low else (high - v2 if v2 > high else 0.0)
            out1[x, y] = c1[x, y] + max(t1, -high)
            out2[x, y] = c2[x, y] + max(t2, -high)


@njit(cache=True, nogil=True)
def move(K, lam, nu, ds1, dm, dlam, dnu, a_p, a_d):
    """The step: K += a_p dK (dK = ds1 + dm), λ += a_d dλ, ν += a_d dν, in place (the floors m
    and row duals u are vectors, moved by the caller)."""
    n, k = K.shape
    for x in range(n):
        for y in range(k):
            K[x, y] += a_p * (ds1[x, y] + dm[y])
            lam[x, y] += a_d * dlam[x, y]
            nu[x, y] += a_d * dnu[x, y]
