"""The Newton and log-barrier phases of the Shannon capacity solver
(:func:`mechdesign.information.capacity.shannon_capacity`), in nats.

Maximise the concave I(π; K) over the simplex. With q = πK the gradient is
∂I/∂π_x = D(K[x] ‖ q) − 1 and the Hessian −A, A = K_S diag(1/q) K_S^T on a working set S of
rows. The active-set phase (:func:`newton_phase`) solves the equality-constrained Newton system
(A + μI) d + ν1 = D_S, Σ d = 0 by Cholesky, with a Levenberg–Marquardt ridge μ proportional to
gap^RIDGE_POWER (bounded steps on near-singular faces, quadratic convergence as the gap
closes); components leaving the simplex are clipped, and a step is kept when I does not
decrease by more than round-off (progress is judged by the bound gap). Rows with D(K[x] ‖ q)
above I but no mass yet enter by a Frank–Wolfe step with an exact line search (Newton alone
would grow them only geometrically: the curvature K[x, y]²/q_y is huge where q_y is tiny).
Where A is singular — more rows in S than outputs, or rows that are mixtures of others — I is
linear along A's null space and pivots there (as in the simplex method) reduce S to a basis.

When the active set stalls (smooth channels, such as the discretised Gaussian one, whose rows
are near mixtures of their neighbours and whose optimal input is a few mass points), the
log-barrier interior-point phase (:func:`barrier_phase`, maximise I + μ Σ ln π_x over all rows,
μ → tol/|X|) locates the support. Every iterate is recorded in a :class:`BoundTracker`, which
keeps the certified bracket I(π_t; K) <= C(K) <= max_x D(K[x] ‖ π_t K).
"""

from __future__ import annotations

import numpy as np

from mechdesign.information.channel import row_divergences

__all__ = ["BoundTracker", "barrier_phase", "newton_phase"]

#: Newton phase: a row with mass at most this fraction of the largest counts as empty...
SMALL_MASS_FRACTION = 1e-3
#: ... and enters by a Frank–Wolfe step when D(K[x] ‖ q) − I exceeds this fraction of the gap.
FRANK_WOLFE_EXCESS_FRACTION = 0.1
#: Rows entering the working set at a time: at least this many, or a quarter of it.
MIN_ENTERING_ROWS = 10
#: A Newton iteration makes progress when it shrinks the gap below this fraction of the best.
PROGRESS_FRACTION = 0.5
#: Newton iterations without progress before pivoting along the Hessian's null space...
PIVOT_AFTER_STALLS = 2
#: ... and before the Newton phase gives up.
STOP_AFTER_STALLS = 4
#: The Newton step is halved down to this length before the ratio test takes over.
MIN_NEWTON_STEP = 1e-4
#: Steps shorter than this are not taken (line search, barrier step).
MIN_STEP = 1e-12
#: Tolerated decrease of I on a step, in units of the machine epsilon times max(|I|, 1).
ROUNDOFF_ULPS = 8
#: The Levenberg–Marquardt ridge of the Newton system grows as gap ** RIDGE_POWER.
RIDGE_POWER = 1.5


class BoundTracker:
    """The best lower bound I(p; K) seen (with its prior p) and the best upper bound
    max_x D(K[x] ‖ q) seen (with its output q), in nats, over the iterates of the solver."""

    def __init__(self, m: int, n: int):
        self.lb, self.ub = -np.inf, np.inf
        self.p = np.full(m, 1.0 / m)
        self.q = np.full(n, 1.0 / n)

    def see(self, p, q, D) -> float:
        """Record the iterate p with output q = pK and divergences D; return its I(p; K)."""
        lb = float(p @ np.where(p > 0, D, 0.0))
        ub = float(D.max())
        if lb > self.lb:
            self.lb, self.p = lb, p
        if ub < self.ub:
            self.ub, self.q = ub, q
        return lb

    @property
    def gap(self) -> float:
        """Best upper bound minus best lower bound (nats)."""
        return self.ub - self.lb


def newton_phase(K, KT, negH, p, W, track: BoundTracker, tol: float, iters: int, max_iter: int):
    """Primal active-set Newton ascent on I(p) over the simplex, from the prior ``p`` on the
    working set ``W`` (see the module docstring); ``KT`` is K transposed (contiguous) and
    ``negH`` the rows' :func:`~mechdesign.information.channel.neg_row_entropies`. Every iterate
    is recorded in ``track``; the phase ends when its gap is at most ``tol`` (nats), after
    ``max_iter`` iterations in all, or when it stalls.

    Returns (prior, iterations, stalled)."""
    m = K.shape[0]
    stall, last_gap = 0, np.inf
    while iters < max_iter:
        iters += 1
        q = KT @ p
        D = row_divergences(K, negH, q)
        lb = track.see(p, q, D)
        if track.gap <= tol:
            return p, iters, False
        # progress is measured by the gap: near the optimum an accurate Newton step changes I
        # by less than its round-off while it still closes the gap at first order
        stall = 0 if track.gap < PROGRESS_FRACTION * last_gap else stall + 1
        last_gap = min(last_gap, track.gap)
        if stall >= STOP_AFTER_STALLS:
            return p, iters, True
        if not np.isfinite(lb):
            return p, iters, True
        p, W, q, D, lb = _enter_empty_rows(K, KT, negH, p, W, q, D, lb, track)
        if track.gap <= tol:
            return p, iters, False
        inW = np.zeros(m, dtype=bool)
        inW[W] = True
        # other rows outside the working set that would increase I join it (the worst first)
        viol = np.flatnonzero(~inW & (D > lb))
        if len(viol):
            viol = viol[np.argsort(-D[viol])][: max(MIN_ENTERING_ROWS, len(W) // 4)]
            W = np.concatenate([W, viol])
        p, W = _newton_step(K, KT, negH, p, W, q, D, lb, track, stall)
    return p, iters, True


def _enter_empty_rows(K, KT, negH, p, W, q, D, lb, track: BoundTracker):
    """Rows that would increase I but have (almost) no mass (outside the working set W, or
    below SMALL_MASS_FRACTION of the largest): a Frank–Wolfe step towards them, weighted by
    their excess divergence, with an exact line search. Newton alone grows such a component
    only geometrically, because the curvature K[x, y]^2 / q_y of I is huge where q_y is tiny.

    Returns (prior, working set, output q, divergences D, I), unchanged when no row qualifies."""
    m = K.shape[0]
    inW = np.zeros(m, dtype=bool)
    inW[W] = True
    small = ~inW | (p <= SMALL_MASS_FRACTION * p.max())
    excess = D - lb
    V = np.flatnonzero(small & (excess > FRANK_WOLFE_EXCESS_FRACTION * (track.ub - lb)))
    if not len(V):
        return p, W, q, D, lb
    V = V[np.argsort(-excess[V])][: max(MIN_ENTERING_ROWS, len(W) // 4)]
    r = np.zeros(m)
    infinite = ~np.isfinite(excess[V])
    r[V] = infinite if infinite.any() else excess[V]
    r /= r.sum()
    W = np.union1d(W, V)
    p = _frank_wolfe_step(K, KT, negH, p, r, W)
    q = KT @ p
    D = row_divergences(K, negH, q)
    lb = track.see(p, q, D)
    W = np.union1d(W[p[W] > 0], V)
    return p, W, q, D, lb


def _newton_step(K, KT, negH, p, W, q, D, lb, track: BoundTracker, stall: int):
    """One Newton step of I on the working set W (rows with no mass whose direction would leave
    the simplex are dropped first), preceded by null-space pivots where the Hessian is (near)
    singular and followed by them when the step stalls. Returns (prior, working set)."""
    pos = q > 0
    KW = K[np.ix_(W, np.flatnonzero(pos))] if not pos.all() else K[W]
    A = (KW / q[pos]) @ KW.T
    DW = D[W]
    if len(W) > KW.shape[1] or _nearly_singular(A):
        # more rows than outputs, or rows that are (near) mixtures of others (smooth
        # channels such as the Gaussian one): the Hessian is (near) singular and some
        # optimal prior uses fewer rows (Carathéodory); pivot along its null space first
        pn, In = _null_space_pivots(K, KT, negH, W, p, A, DW, lb)
        if (pn[W] > 0).sum() < (p[W] > 0).sum() or In > lb:
            p = pn
            keep = p[W] > 0
            W, A, DW = W[keep], A[np.ix_(keep, keep)], DW[keep]
    while True:
        d = _newton_direction(A, DW, track.gap)
        drop = (p[W] <= 0) & (d < 0)
        if not drop.any():
            break
        keep = ~drop
        W, A, DW = W[keep], A[np.ix_(keep, keep)], DW[keep]
    floor = lb - ROUNDOFF_ULPS * np.finfo(float).eps * max(abs(lb), 1.0)
    pn, In = p, -np.inf
    if np.all(np.isfinite(d)):
        pn, In = _line_search(K, KT, negH, W, p, d, floor)
    if stall >= PIVOT_AFTER_STALLS or (In < floor and stall >= 1):
        # a stalled Newton step on a degenerate face (near-duplicate rows, rows that are
        # near mixtures of others): pivot along the Hessian's null space, where I is linear
        pn2, In2 = _null_space_pivots(K, KT, negH, W, p, A, DW, lb)
        if In2 > max(In, lb):
            pn, In = pn2, In2
    if In >= floor:
        p = pn
    return p, W[p[W] > 0]


def barrier_phase(K, KT, negH, p, track: BoundTracker, tol: float, iters: int, max_iter: int,
                   max_newton: int = 400):
    """Path-following log-barrier method: maximise I(p) + μ Σ_x ln p_x on the simplex by
    damped Newton steps (Hessian −(A + μ diag(1/p²))), shrinking μ by 10 once a step is taken
    at full length. At the barrier optimum the bound gap is at most |X| μ, so μ goes down to
    tol / |X|. Every iterate is strictly positive, hence a valid prior for the certificate;
    each is recorded in ``track``. Returns (prior, iterations)."""
    m = K.shape[0]
    p = 0.99 * p + 0.01 / m
    rows = np.arange(m)
    q = KT @ p
    D = row_divergences(K, negH, q)
    lb = track.see(p, q, D)
    mu = max(track.gap, tol) / m
    best_gap, since = track.gap, 0
    for _ in range(max_newton):
        if track.gap <= tol or iters >= max_iter:
            break
        # stop when the gap has not shrunk by 10 % in 20 steps (ill-conditioned end game:
        # the active set takes over)
        if track.gap < 0.9 * best_gap:
            best_gap, since = track.gap, 0
        else:
            since += 1
            if since >= 20:
                break
        iters += 1
        A = (K / q) @ K.T if np.all(q > 0) else (K[:, q > 0] / q[q > 0]) @ K[:, q > 0].T
        A[rows, rows] += mu / p ** 2
        d = _newton_direction(A, D + mu / p, 0.0)
        if not np.all(np.isfinite(d)):
            break
        neg = d < 0
        a = min(1.0, 0.99 * float(np.min(-p[neg] / d[neg]))) if neg.any() else 1.0
        f0 = lb + mu * np.log(p).sum()
        full = a == 1.0
        while a > MIN_STEP:
            pn = p + a * d
            pn = np.maximum(pn, 1e-300)
            pn /= pn.sum()
            qn = KT @ pn
            Dn = row_divergences(K, negH, qn)
            In = float(pn @ Dn)
            if In + mu * np.log(pn).sum() >= f0 - ROUNDOFF_ULPS * np.finfo(float).eps * max(abs(f0), 1.0):
                break
            a *= 0.5
            full = False
        else:
            break
        p, q, D = pn, qn, Dn
        lb = track.see(p, q, D)
        if full or np.abs(a * d).max() < MIN_STEP:
            mu = max(mu * 0.1, 1e-3 * tol / m)
    return p, iters


def _line_search(K, KT, negH, W, p, d, lb):
    """The full Newton step with components leaving the simplex clipped to 0, halved while I
    decreases; failing that, the largest step inside the simplex (ratio test), halved."""
    pW = p[W]
    a = 1.0
    while a >= MIN_NEWTON_STEP:
        pn, In = _step(K, KT, negH, W, pW, d, a)
        if In >= lb:
            return pn, In
        a *= 0.5
    neg = d < 0
    a = min(1.0, float(np.min(-pW[neg] / d[neg]))) if neg.any() else 1.0
    while a >= MIN_STEP:
        pn, In = _step(K, KT, negH, W, pW, d, a)
        if In >= lb:
            return pn, In
        a *= 0.5
    return p, -np.inf


def _tangent_null_space(A, rel):
    """Orthonormal basis Q of {Σ d = 0} and the eigenvectors of Q^T A Q with eigenvalue below
    rel × the largest."""
    s = A.shape[0]
    Q = np.linalg.qr(np.column_stack([np.ones(s), np.eye(s)[:, : s - 1]]))[0][:, 1:]
    lam, U = np.linalg.eigh(Q.T @ A @ Q)
    return Q, U[:, lam <= rel * max(lam[-1], 1e-300)]


def _null_space_pivots(K, KT, negH, W, p, A, DW, lb, rel: float = 1e-9):
    """Moves along directions d with Σ d = 0 and d^T A d ≈ 0, i.e. d^T K ≈ 0: mass moved
    between rows whose mixtures give the same output distribution. There I is linear,
    Σ_x d_x D_x, so each step goes to the boundary of the simplex (a pivot, as in the simplex
    method), removes at least one row and does not decrease I: along the projection of D on the
    null space when it is significant, else along any null direction (I is flat there and a
    smaller working set makes the Hessian well conditioned)."""
    best, best_I = p, lb
    for _ in range(len(W)):
        if len(W) < 2:
            break
        Q, null = _tangent_null_space(A, rel)
        if null.shape[1] == 0:
            break
        g = null.T @ (Q.T @ DW)
        if np.abs(g).max() > 1e-12 * max(np.abs(DW).max(), 1.0):
            d = Q @ (null @ g)
        else:
            d = Q @ null[:, 0]
            d = d if DW @ d >= 0 else -d
        pW = best[W]
        neg = d < -1e-15 * np.abs(d).max()
        if not neg.any():
            break
        a = float(np.min(-pW[neg] / d[neg]))
        pn, In = _step(K, KT, negH, W, pW, d, a)
        if In < best_I - ROUNDOFF_ULPS * np.finfo(float).eps * max(abs(best_I), 1.0):
            break
        best, best_I = pn, max(In, best_I)
        keep = best[W] > 0
        if keep.all():
            break
        W, A, DW = W[keep], A[np.ix_(keep, keep)], DW[keep]
    return best, best_I


def _nearly_singular(A: np.ndarray, rel: float = 1e-10) -> bool:
    """λ_min(A) <= rel λ_max(A): exactly for up to 400 rows, else by the smallest pivot of a
    Cholesky factorisation (or its failure)."""
    if A.shape[0] < 2:
        return False
    if A.shape[0] <= 400:
        lam = np.linalg.eigvalsh(A)
        return bool(lam[0] <= rel * lam[-1])
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return True
    return bool(np.min(np.diag(L)) ** 2 <= rel * np.max(np.diag(A)))


def _step(K, KT, negH, W, pW, d, a):
    m = K.shape[0]
    pn = np.zeros(m)
    pn[W] = np.maximum(pW + a * d, 0.0)
    pn /= pn.sum()
    on = W[pn[W] > 0]
    return pn, float(pn[on] @ row_divergences(K[on], negH[on], KT @ pn))


def _frank_wolfe_step(K, KT, negH, p, r, W, steps: int = 30) -> np.ndarray:
    """argmax over t in [0, 1] of I(p + t (r − p)) (concave in t), by bisection on the sign of
    the directional derivative Σ_x (r_x − p_x) D(K[x] ‖ q_t)."""
    v = (r - p)[W]
    nz = v != 0
    KW, nW, v = K[W][nz], negH[W][nz], v[nz]
    q0, qr = KT @ p, KT @ r

    def slope(t):
        # q_t as a convex combination (q0 + t (qr − q0) can round tiny entries of qr to 0)
        D = row_divergences(KW, nW, (1.0 - t) * q0 + t * qr)
        with np.errstate(invalid="ignore"):
            s = float((v * D).sum())  # D = +inf: the sign of v decides
        return 0.0 if np.isnan(s) else s

    if slope(1.0) >= 0:
        t = 1.0
    else:
        # bracket the maximiser geometrically first: it can be far below 1e-12 when the target
        # rows own outputs that q barely covers
        hi = 1.0
        while hi > 1e-30 and slope(0.5 * hi) <= 0:
            hi *= 0.5
        lo = 0.5 * hi if hi > 1e-30 else 0.0
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            if slope(mid) > 0:
                lo = mid
            else:
                hi = mid
        t = lo
    out = p + t * (r - p)
    return out / out.sum()


def _newton_direction(A: np.ndarray, g: np.ndarray, gap: float = 0.0) -> np.ndarray:
    """Solve A d + ν 1 = g, Σ d = 0 (A positive semidefinite; a tiny ridge keeps it definite)."""
    s = len(g)
    ones = np.ones(s)
    # Levenberg–Marquardt ridge proportional to the bound gap: bounded steps along the
    # near-null directions of near-duplicate rows, quadratic convergence as the gap closes
    ridge = max(1e-13, min(gap, 1.0) ** RIDGE_POWER) * max(np.trace(A) / s, 1e-300)
    try:
        import scipy.linalg as sla  # on first use: importing it costs 0.4 s at start-up

        c = sla.cho_factor(A + ridge * np.eye(s), check_finite=False)
        u = sla.cho_solve(c, g, check_finite=False)
        v = sla.cho_solve(c, ones, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        u = np.linalg.lstsq(A, g, rcond=None)[0]
        v = np.linalg.lstsq(A, ones, rcond=None)[0]
    vs = v.sum()
    if vs == 0 or not np.isfinite(vs):
        return np.full(s, np.nan)
    return u - (u.sum() / vs) * v
