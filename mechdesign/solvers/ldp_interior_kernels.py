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

#: the kernels' floating-point licence: sums may be reassociated and products fused (so that the
#: per-row sums and the loops' arithmetic vectorise), nothing else (no-NaN or no-infinity
#: assumptions would hide a breakdown from the step lengths' finiteness check)
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FAST)
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
        # one row at a time, through its slices, with the row's sums in scalars: the inner loop
        # then vectorises (indexing the 2-D arrays and accumulating into W[x] kept it scalar)
        Kx, lx, nx, Cx = K[x], lam[x], nu[x], C[x]
        i1x, i2x, ipx, Bx, rx = inv1[x], inv2[x], invP[x], B[x], rK[x]
        ux = u[x]
        w_sum = 0.0
        k_sum = 0.0
        row_products = 0.0
        for y in range(k):
            s1 = Kx[y] - m[y]
            s2 = top * m[y] - Kx[y]
            i1 = 1.0 / s1
            i2 = 1.0 / s2
            a = lx[y] * i1
            b = nx[y] * i2
            ip = 1.0 / (a + b)
            i1x[y] = i1
            i2x[y] = i2
            ipx[y] = ip
            Bx[y] = (a + top * b) * ip
            rx[y] = Cx[y] - ux - lx[y] + nx[y]
            T[y] += a * b * ip
            r_m[y] += lx[y] - top * nx[y]
            w_sum += ip
            k_sum += Kx[y]
            row_products += s1 * lx[y] + s2 * nx[y]
        W[x] = w_sum
        f[x] -= k_sum
        products += row_products
    T *= (top - 1.0) ** 2
    return T, W, f, r_m, products / (2.0 * n * k)


@njit(cache=True, nogil=True, fastmath=_FAST)
def right_hand_side(c1, c2, inv1, inv2, invP, B, rK, r_m, f, top):
    """For complementarity targets (c1, c2): with a = c1/s1, b = c2/s2 and g = a − b − r_K, the
    reduced system's right-hand sides h2 = h + Σ_x B g (with h = −r_m − Σ_x a + e^ε Σ_x b) and
    f2 = f − Σ_y g/P; returns (h2, f2)."""
    n, k = c1.shape
    h2 = -r_m.copy()
    f2 = f.copy()
    for x in range(n):
        a1, a2, i1, i2, ip, Bx, rx = c1[x], c2[x], inv1[x], inv2[x], invP[x], B[x], rK[x]
        row = 0.0
        for y in range(k):
            ax = a1[y] * i1[y]
            bx = a2[y] * i2[y]
            g = ax - bx - rx[y]
            h2[y] += -ax + top * bx + Bx[y] * g
            row += g * ip[y]
        f2[x] -= row
    return h2, f2


@njit(cache=True, nogil=True, fastmath=_FAST)
def recover(c1, c2, inv1, inv2, invP, B, rK, lam, nu, dm, du, top, ds1, dlam, dnu):
    """The full direction for targets (c1, c2) from the floors' and row duals' steps (dm, du):
    dK = g/P + B dm + du/P, ds1 = dK − dm, ds2 = (e^ε − 1) dm − ds1, dλ = a − D1 ds1,
    dν = b − D2 ds2 (ds1, dλ, dν filled in place); returns the largest primal and dual step
    lengths (at most 1) that keep s1, s2, λ, ν positive."""
    n, k = c1.shape
    low_p = 0.0
    low_d = 0.0
    for x in range(n):
        a1, a2, j1, j2, jp, Bx, rx = c1[x], c2[x], inv1[x], inv2[x], invP[x], B[x], rK[x]
        lx, nx, o1, ol, on = lam[x], nu[x], ds1[x], dlam[x], dnu[x]
        dux = du[x]
        for y in range(k):
            i1 = j1[y]
            i2 = j2[y]
            ax = a1[y] * i1
            bx = a2[y] * i2
            dk = (ax - bx - rx[y] + dux) * jp[y] + Bx[y] * dm[y]
            e1 = dk - dm[y]
            e2 = (top - 1.0) * dm[y] - e1
            dual1 = lx[y]
            dual2 = nx[y]
            dl = ax - dual1 * i1 * e1
            dn = bx - dual2 * i2 * e2
            o1[y] = e1
            ol[y] = dl
            on[y] = dn
            low_p = min(low_p, e1 * i1, e2 * i2)
            # the duals' ratio test divides only where the ratio is a new minimum (λ, ν > 0):
            # a division per entry took a fifth of the pass
            if dl < low_d * dual1:
                low_d = dl / dual1
            if dn < low_d * dual2:
                low_d = dn / dual2
    return (1.0 if low_p >= -1.0 else -1.0 / low_p), (1.0 if low_d >= -1.0 else -1.0 / low_d)


@njit(cache=True, nogil=True, fastmath=_FAST)
def affine_products(K, m, lam, nu, top, ds1, dm, dlam, dnu, a_p, a_d):
    """The mean complementarity product after steps (a_p, a_d) along a direction."""
    n, k = K.shape
    total = 0.0
    for x in range(n):
        Kx, lx, nx, d1, dl, dn = K[x], lam[x], nu[x], ds1[x], dlam[x], dnu[x]
        row = 0.0
        for y in range(k):
            s1 = Kx[y] - m[y]
            s2 = top * m[y] - Kx[y]
            e2 = (top - 1.0) * dm[y] - d1[y]
            row += (s1 + a_p * d1[y]) * (lx[y] + a_d * dl[y])
            row += (s2 + a_p * e2) * (nx[y] + a_d * dn[y])
        total += row
    return total / (2.0 * n * k)


@njit(cache=True, nogil=True, fastmath=_FAST)
def affine_targets(K, m, lam, nu, top, c1, c2):
    """The predictor's complementarity targets c = −s·λ (filled in place)."""
    n, k = K.shape
    for x in range(n):
        Kx, lx, nx, o1, o2 = K[x], lam[x], nu[x], c1[x], c2[x]
        for y in range(k):
            o1[y] = -(Kx[y] - m[y]) * lx[y]
            o2[y] = -(top * m[y] - Kx[y]) * nx[y]


@njit(cache=True, nogil=True, fastmath=_FAST)
def mehrotra_targets(K, m, lam, nu, top, sigma_mu, ds1, dm, dlam, dnu, c1, c2):
    """The corrector's complementarity targets c = σμ − s·λ − ds·dλ (filled in place)."""
    n, k = K.shape
    for x in range(n):
        Kx, lx, nx, d1, dl, dn, o1, o2 = K[x], lam[x], nu[x], ds1[x], dlam[x], dnu[x], c1[x], c2[x]
        for y in range(k):
            s1 = Kx[y] - m[y]
            s2 = top * m[y] - Kx[y]
            e2 = (top - 1.0) * dm[y] - d1[y]
            o1[y] = sigma_mu - s1 * lx[y] - d1[y] * dl[y]
            o2[y] = sigma_mu - s2 * nx[y] - e2 * dn[y]


@njit(cache=True, nogil=True, fastmath=_FAST)
def centred_targets(K, m, lam, nu, top, target, goal_p, goal_d, ds1, dm, dlam, dnu, c1, c2, out1, out2):
    """Gondzio's corrected targets: c + t, where t moves the trial point's complementarity
    products v = (s + goal_p ds)(λ + goal_d dλ) that fall outside [0.1, 10]·target back to its
    edge, the large ones' correction capped at −10·target (filled into out1, out2)."""
    n, k = K.shape
    low = 0.1 * target
    high = 10.0 * target
    for x in range(n):
        Kx, lx, nx, d1, dl, dn = K[x], lam[x], nu[x], ds1[x], dlam[x], dnu[x]
        a1, a2, o1, o2 = c1[x], c2[x], out1[x], out2[x]
        for y in range(k):
            s1 = Kx[y] - m[y]
            s2 = top * m[y] - Kx[y]
            e2 = (top - 1.0) * dm[y] - d1[y]
            v1 = (s1 + goal_p * d1[y]) * (lx[y] + goal_d * dl[y])
            v2 = (s2 + goal_p * e2) * (nx[y] + goal_d * dn[y])
            t1 = low - v1 if v1 < low else (high - v1 if v1 > high else 0.0)
            t2 = low - v2 if v2 < low else (high - v2 if v2 > high else 0.0)
            o1[y] = a1[y] + max(t1, -high)
            o2[y] = a2[y] + max(t2, -high)


@njit(cache=True, nogil=True, fastmath=_FAST)
def move(K, lam, nu, ds1, dm, dlam, dnu, a_p, a_d):
    """The step: K += a_p dK (dK = ds1 + dm), λ += a_d dλ, ν += a_d dν, in place (the floors m
    and row duals u are vectors, moved by the caller)."""
    n, k = K.shape
    for x in range(n):
        Kx, lx, nx, d1, dl, dn = K[x], lam[x], nu[x], ds1[x], dlam[x], dnu[x]
        for y in range(k):
            Kx[y] += a_p * (d1[y] + dm[y])
            lx[y] += a_d * dl[y]
            nx[y] += a_d * dn[y]
