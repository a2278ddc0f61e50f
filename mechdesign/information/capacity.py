"""Channel capacity and leakage measures of a channel K (paper 001).

All quantities are in **bits** unless a name says nats. A channel is a row-stochastic matrix
K[x, y] = Pr[y | x]; a prior π is a distribution over its rows.

* Shannon capacity C(K) = max_π I(π; K), with a certified bracket (:func:`shannon_capacity`);
* mutual information I(π; K) = Σ_x π_x D(K[x] ‖ πK) (:func:`mutual_information`);
* min-entropy (multiplicative Bayes) capacity log2 Σ_y max_x K[x, y] and min-entropy leakage
  under a prior (:func:`min_entropy_capacity`, :func:`min_entropy_leakage`);
* g-vulnerability (prior and posterior) and g-leakage (:func:`posterior_g_vulnerability`, ...);
* max-mutual information (paper 001, Def. 7) and the max-information capacity (Def. 8), which
  equals the LDP ε of the channel (Theorem 2.1 for one record) (:func:`max_information_capacity`,
  :func:`max_information_audit`).

Every public function validates its inputs once (row-stochastic K, prior a distribution) and
raises :class:`~mechdesign.core.errors.ProblemError` otherwise.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution, check_stochastic
from mechdesign.privacy.base import AUDIT_TOL, Audit

LN2 = float(np.log(2.0))
#: Blahut–Arimoto iterations before the Newton phase
_WARM = 50
_RIDGE_POWER = 1.5
_BARRIER_ROUNDS = 5


def _blas_one_thread(size: int):
    """One BLAS thread for the solver's matrix-vector products (channels of 40 000 entries or
    more). Threaded gemv gains little at these sizes and, on a loaded 2-core machine, was
    measured 7–10x slower than one thread (k = 1000: 4.7–7.1 s against 0.7 s)."""
    if size < 40_000:
        return nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it BLAS keeps its own thread count
        return nullcontext()
    return threadpool_limits(1, user_api="blas")

__all__ = [
    "CapacityResult",
    "g_leakage",
    "max_information_audit",
    "max_information_capacity",
    "max_mutual_information",
    "min_entropy_capacity",
    "min_entropy_leakage",
    "mutual_information",
    "posterior_g_vulnerability",
    "prior_g_vulnerability",
    "shannon_capacity",
]


# ---------------------------------------------------------------------------------------------
# input handling

def _channel(K) -> np.ndarray:
    if isinstance(K, Mechanism):
        return K.matrix
    return check_stochastic(K, what="channel")


def _prior(prior, n: int) -> np.ndarray:
    if isinstance(prior, str):
        if prior == "uniform":
            return np.full(n, 1.0 / n)
        raise ProblemError(f"prior must be a list of probabilities or \"uniform\", got {prior!r}",
                           key="prior")
    try:
        return check_distribution(prior, n, "prior")
    except ProblemError as exc:
        raise exc.located(key="prior")


def _xlogx_rows(K: np.ndarray) -> np.ndarray:
    """Σ_y K[x, y] ln K[x, y] per row (0 ln 0 = 0): minus the row entropies, in nats."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(K > 0, K * np.log(np.where(K > 0, K, 1.0)), 0.0).sum(axis=1)


def _divergences(K: np.ndarray, negH: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D(K[x] ‖ q) in nats for every row x (inf where K[x] puts mass on a zero of q)."""
    pos = q > 0
    if pos.all():
        return negH - K @ np.log(q)
    lq = np.log(np.where(pos, q, 1.0))
    D = negH - K[:, pos] @ lq[pos]
    D[(K[:, ~pos] > 0).any(axis=1)] = np.inf
    return D


# ---------------------------------------------------------------------------------------------
# Shannon capacity

@dataclass(frozen=True)
class CapacityResult:
    """A certified bracket of the Shannon capacity C(K), in bits.

    Attributes
    ----------
    lower : float
        I(prior; K): the mutual information of the returned prior, so ``lower <= C``.
    upper : float
        max_x D(K[x] ‖ output): an upper bound for any output distribution ``output`` in the
        simplex, by the minimax identity C = min_q max_x D(K[x] ‖ q); so ``C <= upper``.
    prior : ndarray
        The (near) capacity-achieving input distribution.
    output : ndarray
        The output distribution certifying ``upper``: π_t K for the iterate π_t with the best
        upper bound (the best lower and upper bounds may come from different iterates, so
        ``output`` need not equal ``prior @ K``; both bounds are rigorous).
    iterations : int
        Blahut–Arimoto iterations plus Newton iterations.
    converged : bool
        True when ``upper - lower <= tol``.
    """

    lower: float
    upper: float
    prior: np.ndarray = field(repr=False)
    output: np.ndarray = field(repr=False)
    iterations: int
    converged: bool
    method: str = "ba+newton"

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    @property
    def value(self) -> float:
        """Midpoint of the bracket (bits)."""
        return 0.5 * (self.lower + self.upper)

    def to_dict(self) -> dict:
        return {"lower_bits": self.lower, "upper_bits": self.upper, "gap_bits": self.gap,
                "iterations": self.iterations, "converged": self.converged}


class _Tracker:
    """Keeps the best lower bound (with its prior) and the best upper bound (with its q)."""

    def __init__(self, m: int, n: int):
        self.lb, self.ub = -np.inf, np.inf
        self.p = np.full(m, 1.0 / m)
        self.q = np.full(n, 1.0 / n)

    def see(self, p, q, D) -> float:
        lb = float(p @ np.where(p > 0, D, 0.0))
        ub = float(D.max())
        if lb > self.lb:
            self.lb, self.p = lb, p
        if ub < self.ub:
            self.ub, self.q = ub, q
        return lb

    @property
    def gap(self) -> float:
        return self.ub - self.lb


def shannon_capacity(K, tol: float = 1e-9, max_iter: int = 100_000) -> CapacityResult:
    r"""Shannon capacity of a channel, certified by a lower and an upper bound (bits).

    .. math::

        C(K) = \max_{\pi \in \Delta(X)} I(\pi; K)
             = \min_{q \in \Delta(Y)} \max_x D(K[x] \,\|\, q),

    and for every iterate :math:`\pi_t` with :math:`q_t = \pi_t K`,

    .. math::

        I(\pi_t; K) \le C(K) \le \max_x D(K[x] \,\|\, q_t)

    (the Blahut–Arimoto certificate). The iteration stops when the two bounds are
    within ``tol`` bits; they are the only stopping rule.

    Algorithm: 50 Blahut–Arimoto iterations (π ← π·exp(D(K[x] ‖ πK)), normalised) as a warm
    start, then a primal active-set Newton method on the concave problem over a working set S
    of rows. With gradient ∂I/∂π_x = D(K[x] ‖ q) − 1 (nats) and Hessian −A,
    A = K_S diag(1/q) K_S^T, each step solves the equality-constrained Newton system
    (A + μI) d + ν1 = D_S, Σ d = 0 by Cholesky, with a Levenberg–Marquardt ridge μ proportional
    to gap^1.5 (bounded steps on near-singular faces, quadratic convergence as the gap closes);
    components leaving the simplex are clipped, and a step is kept when I does not decrease by
    more than round-off (progress is judged by the gap). Rows with D(K[x] ‖ q) above I but no
    mass yet enter by a Frank–Wolfe step with an exact line search (Newton alone would grow them
    only geometrically: the curvature K[x, y]²/q_y is huge where q_y is tiny). Where A is
    singular — more rows in S than outputs, or rows that are mixtures of others — I is linear
    along A's null space and pivots there (as in the simplex method) reduce S to a basis. Rows
    within 1e-6 of each other in L1 are solved as one representative per group, the member
    with the largest divergence, re-chosen until stable (and all rows if that leaves a gap).
    When the active set stalls (smooth channels, such as the discretised Gaussian one, whose
    rows are near mixtures of their neighbours and whose optimal input is a few mass points), a
    log-barrier interior-point phase over all rows (maximise I + μ Σ ln π_x, μ → tol/|X|)
    locates the support and the active set finishes on it; Blahut–Arimoto from a smoothed prior
    is the last resort. All-zero columns are dropped. Large channels use one BLAS thread (threadpoolctl, when installed). The two
    bounds are always evaluated on the full channel.

    Parameters
    ----------
    K : array (|X|, |Y|) or Mechanism
        Row-stochastic channel.
    tol : float
        Target gap ``upper − lower`` in bits (default 1e-9). Values below ~1e-13 may be
        unreachable in float64; the result then says ``converged=False``.
    max_iter : int
        Cap on the total number of iterations.

    Returns
    -------
    CapacityResult

    References
    ----------
    Blahut (1972), Arimoto (1972); Cover & Thomas, Elements of Information Theory, §10.8;
    paper 001, Def. 5–6 (ε-information privacy: capacity <= ε bits).

    Examples
    --------
    >>> r = shannon_capacity([[0.9, 0.1], [0.1, 0.9]])
    >>> round(r.upper, 9), round(float(1 + 0.9 * np.log2(0.9) + 0.1 * np.log2(0.1)), 9)
    (0.531004406, 0.531004406)
    """
    K = _channel(K)
    tol = float(tol)
    if not np.isfinite(tol) or tol <= 0:
        raise ProblemError(f"tol must be a positive number, got {tol!r}", key="tol")
    n0 = K.shape[1]
    cols = np.flatnonzero(K.max(axis=0) > 0)
    Kc = K[:, cols] if len(cols) < n0 else K
    # Near-duplicate rows make the Hessian (near) singular and stall Newton: optimise over one
    # representative per group of rows within 1e-6 in L1, then make each group's representative
    # the member with the largest divergence at the current q and re-solve, until the choice is
    # stable. The bounds are always certified on all the rows.
    with _blas_one_thread(Kc.size):
        negH_all = _xlogx_rows(Kc)
        lb, ub, prior, q, iters = _grouped(Kc, negH_all, _row_groups(Kc, 1e-6), tol, max_iter, 0)
        if ub - lb > tol * LN2 and iters < max_iter:
            # grouping too coarse (twins whose divergences differ by more than tol): exact rows
            lb2, ub2, prior2, q2, iters = _grouped(Kc, negH_all, _row_groups(Kc, 0.0), tol,
                                                   max_iter, iters)
            if lb2 > lb:
                lb, prior = lb2, prior2
            if ub2 < ub:
                ub, q = ub2, q2
    output = np.zeros(n0)
    output[cols] = q
    lower, upper = lb / LN2, ub / LN2
    return CapacityResult(lower, upper, prior, output, iters, bool(upper - lower <= tol))


def _grouped(Kc, negH_all, labels, tol, max_iter, iters):
    """Capacity over one representative row per group (see shannon_capacity), certified on all
    rows. Returns (lower nats, upper nats, prior over all rows, output, iterations)."""
    m0 = Kc.shape[0]
    reps = np.unique(labels)
    for _ in range(10):
        Kr = Kc[reps]
        lb, ub, p, q, it = _capacity_core(Kr, tol * LN2, int(max_iter) - iters, negH_all[reps])
        iters += it
        if len(reps) == m0:
            break
        lb = float(p @ _divergences(Kr, negH_all[reps], p @ Kr))
        D = _divergences(Kc, negH_all, q)
        ub = float(D.max())
        if ub - lb <= tol * LN2 or iters >= max_iter:
            break
        # each group's best member: sort by (group, D) and take the last of each group
        order = np.lexsort((D, labels))
        last = np.r_[labels[order][1:] != labels[order][:-1], True]
        new_reps = np.sort(order[last])
        if np.array_equal(new_reps, reps):
            break
        reps = new_reps
    prior = np.zeros(m0)
    prior[reps] = p
    return lb, ub, prior, q, iters


def _row_groups(K: np.ndarray, l1_tol: float = 0.0) -> np.ndarray:
    """Group label per row: rows within ``l1_tol`` (L1) of their group's first row share it
    (exact duplicates when 0). Candidates come from sorting a random projection, so the cost is
    O(|X| |Y|) plus the comparisons of close projections."""
    m = K.shape[0]
    labels = np.arange(m)
    if m <= 1:
        return labels
    w = np.random.default_rng(0).random(K.shape[1])
    proj = K @ w
    order = np.argsort(proj, kind="stable")
    assigned = np.zeros(m, dtype=bool)
    for i in range(m):
        rep = order[i]
        if assigned[rep]:
            continue
        assigned[rep] = True
        j = i + 1
        while j < m and proj[order[j]] - proj[rep] <= l1_tol + 1e-15 * abs(proj[rep]):
            x = order[j]
            if not assigned[x] and np.abs(K[x] - K[rep]).sum() <= l1_tol:
                labels[x], assigned[x] = rep, True
            j += 1
    return labels


def _capacity_core(K: np.ndarray, tol: float, max_iter: int, negH: np.ndarray | None = None):
    """Returns (lower nats, upper nats, prior, output, iterations) for a channel whose rows are
    distinct and whose columns are not all zero."""
    m, n = K.shape
    track = _Tracker(m, n)
    if m == 1 or n == 1:
        p = np.ones(m) / m
        q = p @ K
        D = _divergences(K, _xlogx_rows(K), q)
        track.see(p, q, D)
        return track.lb, track.ub, track.p, track.q, 0
    negH = _xlogx_rows(K) if negH is None else negH
    KT = np.ascontiguousarray(K.T)
    p = np.full(m, 1.0 / m)
    iters = 0
    warm = _WARM
    barrier_rounds = 0
    while iters < max_iter:
        # Blahut–Arimoto phase (warm start, or recovery after a stalled Newton phase)
        D = None
        for _ in range(warm):
            q = KT @ p
            D = _divergences(K, negH, q)
            lb = track.see(p, q, D)
            iters += 1
            if track.gap <= tol or iters >= max_iter:
                return track.lb, track.ub, track.p, track.q, iters
            w = p * np.exp(D - D.max())
            p = w / w.sum()
        # Newton phase
        q = KT @ p
        D = _divergences(K, negH, q)
        lb = float(p @ D)
        W = np.flatnonzero((D >= lb) | (p >= 0.1 * p.max()))
        p = np.where(np.isin(np.arange(m), W), p, 0.0)
        p /= p.sum()
        p, iters, _ = _newton_phase(K, KT, negH, p, W, track, tol, iters, max_iter)
        if track.gap <= tol or iters >= max_iter:
            break
        if barrier_rounds < _BARRIER_ROUNDS:
            # stalled active set (ill-conditioned: smooth channels whose rows are near mixtures
            # of their neighbours): a log-barrier interior-point method over all the rows
            barrier_rounds += 1
            p, iters = _barrier_phase(K, KT, negH, track.p, track, tol, iters, max_iter)
            if track.gap <= tol or iters >= max_iter:
                break
            # the barrier path has found the support: finish with the active set on it
            W = np.flatnonzero(p >= 1e-8 * p.max())
            p = np.where(np.isin(np.arange(m), W), p, 0.0)
            p /= p.sum()
            p, iters, _ = _newton_phase(K, KT, negH, p, W, track, tol, iters, max_iter)
            if track.gap <= tol or iters >= max_iter:
                break
        # stalled: smooth the prior (revives zero components) and run more BA iterations
        p = 0.999 * track.p + 0.001 / m
        warm = 200
    return track.lb, track.ub, track.p, track.q, iters


def _newton_phase(K, KT, negH, p, W, track: _Tracker, tol: float, iters: int, max_iter: int):
    """Primal active-set Newton ascent on I(p) over the simplex (see shannon_capacity).

    Returns (prior, iterations, stalled)."""
    m = K.shape[0]
    stall, last_gap = 0, np.inf
    while iters < max_iter:
        iters += 1
        q = KT @ p
        D = _divergences(K, negH, q)
        lb = track.see(p, q, D)
        if track.gap <= tol:
            return p, iters, False
        # progress is measured by the gap: near the optimum an accurate Newton step changes I
        # by less than its round-off while it still closes the gap at first order
        stall = 0 if track.gap < 0.5 * last_gap else stall + 1
        last_gap = min(last_gap, track.gap)
        if stall >= 4:
            return p, iters, True
        if not np.isfinite(lb):
            return p, iters, True
        inW = np.zeros(m, dtype=bool)
        inW[W] = True
        # rows that would increase I but have (almost) no mass: a Frank–Wolfe step towards them
        # with an exact line search. Newton alone grows such a component only geometrically,
        # because the curvature K[x, y]^2 / q_y of I is huge where q_y is tiny.
        small = ~inW | (p <= 1e-3 * p.max())
        excess = D - lb
        V = np.flatnonzero(small & (excess > 0.1 * (track.ub - lb)))
        if len(V):
            V = V[np.argsort(-excess[V])][: max(10, len(W) // 4)]
            r = np.zeros(m)
            infinite = ~np.isfinite(excess[V])
            r[V] = infinite if infinite.any() else excess[V]
            r /= r.sum()
            W = np.union1d(W, V)
            p = _frank_wolfe_step(K, KT, negH, p, r, W)
            q = KT @ p
            D = _divergences(K, negH, q)
            lb = track.see(p, q, D)
            if track.gap <= tol:
                return p, iters, False
            W = np.union1d(W[p[W] > 0], V)
            inW = np.zeros(m, dtype=bool)
            inW[W] = True
        # other rows outside the working set that would increase I join it (the worst first)
        viol = np.flatnonzero(~inW & (D > lb))
        if len(viol):
            viol = viol[np.argsort(-D[viol])][: max(10, len(W) // 4)]
            W = np.concatenate([W, viol])
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
        floor = lb - 8 * np.finfo(float).eps * max(abs(lb), 1.0)
        pn, In = p, -np.inf
        if np.all(np.isfinite(d)):
            pn, In = _line_search(K, KT, negH, W, p, d, floor)
        if stall >= 2 or (In < floor and stall >= 1):
            # a stalled Newton step on a degenerate face (near-duplicate rows, rows that are
            # near mixtures of others): pivot along the Hessian's null space, where I is linear
            pn2, In2 = _null_space_pivots(K, KT, negH, W, p, A, DW, lb)
            if In2 > max(In, lb):
                pn, In = pn2, In2
        if In >= floor:
            p = pn
        W = W[p[W] > 0]
    return p, iters, True


def _barrier_phase(K, KT, negH, p, track: _Tracker, tol: float, iters: int, max_iter: int,
                   max_newton: int = 400):
    """Path-following log-barrier method: maximise I(p) + μ Σ_x ln p_x on the simplex by
    damped Newton steps (Hessian −(A + μ diag(1/p²))), shrinking μ by 10 once a step is taken
    at full length. At the barrier optimum the bound gap is at most |X| μ, so μ goes down to
    tol / |X|. Every iterate is strictly positive, hence a valid prior for the certificate."""
    m = K.shape[0]
    p = 0.99 * p + 0.01 / m
    rows = np.arange(m)
    q = KT @ p
    D = _divergences(K, negH, q)
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
        while a > 1e-12:
            pn = p + a * d
            pn = np.maximum(pn, 1e-300)
            pn /= pn.sum()
            qn = KT @ pn
            Dn = _divergences(K, negH, qn)
            In = float(pn @ Dn)
            if In + mu * np.log(pn).sum() >= f0 - 8 * np.finfo(float).eps * max(abs(f0), 1.0):
                break
            a *= 0.5
            full = False
        else:
            break
        p, q, D = pn, qn, Dn
        lb = track.see(p, q, D)
        if full or np.abs(a * d).max() < 1e-12:
            mu = max(mu * 0.1, 1e-3 * tol / m)
    return p, iters


def _line_search(K, KT, negH, W, p, d, lb):
    """The full Newton step with components leaving the simplex clipped to 0, halved while I
    decreases; failing that, the largest step inside the simplex (ratio test), halved."""
    pW = p[W]
    a = 1.0
    while a >= 1e-4:
        pn, In = _step(K, KT, negH, W, pW, d, a)
        if In >= lb:
            return pn, In
        a *= 0.5
    neg = d < 0
    a = min(1.0, float(np.min(-pW[neg] / d[neg]))) if neg.any() else 1.0
    while a >= 1e-12:
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
        if In < best_I - 8 * np.finfo(float).eps * max(abs(best_I), 1.0):
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
    return pn, float(pn[on] @ _divergences(K[on], negH[on], KT @ pn))


def _frank_wolfe_step(K, KT, negH, p, r, W, steps: int = 30) -> np.ndarray:
    """argmax over t in [0, 1] of I(p + t (r − p)) (concave in t), by bisection on the sign of
    the directional derivative Σ_x (r_x − p_x) D(K[x] ‖ q_t)."""
    v = (r - p)[W]
    nz = v != 0
    KW, nW, v = K[W][nz], negH[W][nz], v[nz]
    q0, qr = KT @ p, KT @ r

    def slope(t):
        # q_t as a convex combination (q0 + t (qr − q0) can round tiny entries of qr to 0)
        D = _divergences(KW, nW, (1.0 - t) * q0 + t * qr)
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
    ridge = max(1e-13, min(gap, 1.0) ** _RIDGE_POWER) * max(np.trace(A) / s, 1e-300)
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


# ---------------------------------------------------------------------------------------------
# mutual information, min-entropy, g-vulnerability

def mutual_information(prior, K) -> float:
    r"""I(π; K) = Σ_x π_x D(K[x] ‖ πK) in bits.

    >>> round(mutual_information([0.5, 0.5], [[1, 0], [0, 1]]), 12)
    1.0
    """
    K = _channel(K)
    pi = _prior(prior, K.shape[0])
    return _mi(pi, K)


def _mi(pi: np.ndarray, K: np.ndarray) -> float:
    rows = pi > 0
    Kr = K[rows]
    q = pi @ K
    D = _divergences(Kr, _xlogx_rows(Kr), q)
    return float(pi[rows] @ D) / LN2


def min_entropy_capacity(K) -> float:
    r"""Multiplicative Bayes (min-entropy) capacity log2 Σ_y max_x K[x, y], in bits.

    It is the min-entropy leakage under the uniform prior, and the largest over all priors
    (Braun, Chatzikokolakis, Palamidessi 2009). For k-ary RR it is log2(k e^ε / (k − 1 + e^ε)).
    """
    K = _channel(K)
    return float(np.log2(K.max(axis=0).sum()))


def prior_g_vulnerability(prior, gain) -> float:
    """V_g(π) = max_w Σ_x π_x g[w, x] (the adversary's best expected gain without output)."""
    if isinstance(gain, str):
        pi = _prior(prior, len(prior) if not isinstance(prior, str) else 0)
        gain = _gain(gain, len(pi))
    else:
        gain = _gain(gain)
        pi = _prior(prior, gain.shape[1])
    return float((gain @ pi).max())


def posterior_g_vulnerability(prior, K, gain) -> float:
    r"""V_g(π, K) = Σ_y max_w Σ_x π_x g[w, x] K[x, y].

    ``gain`` is a (|W|, |X|) matrix of gains g(w, x) for guessing w when the secret is x, or the
    string "identity" (Bayes vulnerability: the probability of guessing x in one try).
    """
    K = _channel(K)
    gain = _gain(gain, K.shape[0])
    pi = _prior(prior, K.shape[0])
    return float(((gain * pi[None, :]) @ K).max(axis=0).sum())


def g_leakage(prior, K, gain) -> float:
    """Multiplicative g-leakage log2(V_g(π, K) / V_g(π)) in bits (needs V_g(π) > 0)."""
    post = posterior_g_vulnerability(prior, K, gain)
    before = prior_g_vulnerability(prior, _gain(gain, _channel(K).shape[0]))
    if before <= 0:
        raise ProblemError("g-leakage needs a positive prior vulnerability (non-negative gains "
                           "with some gain on the prior's support)", key="gain")
    return float(np.log2(post / before))


def min_entropy_leakage(prior, K) -> float:
    r"""Min-entropy leakage log2(Σ_y max_x π_x K[x, y] / max_x π_x) in bits (g = identity)."""
    return g_leakage(prior, K, "identity")


def _gain(gain, n: int | None = None) -> np.ndarray:
    if isinstance(gain, str):
        if gain != "identity":
            raise ProblemError(f"gain must be a matrix or \"identity\", got {gain!r}", key="gain")
        if n is None:
            raise ProblemError("gain \"identity\" needs the number of secrets", key="gain")
        return np.eye(n)
    try:
        g = np.asarray(gain, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("gain must be a matrix of numbers", key="gain")
    if g.ndim != 2 or not np.all(np.isfinite(g)):
        raise ProblemError(f"gain must be a finite matrix (guesses x secrets), got shape {g.shape}",
                           key="gain")
    if n is not None and g.shape[1] != n:
        raise ProblemError(f"gain must have one column per secret ({n}), got {g.shape[1]}", key="gain")
    return g


# ---------------------------------------------------------------------------------------------
# max-mutual information (paper 001, Def. 7–8, Theorem 2.1)

def max_mutual_information(prior, K) -> float:
    r"""Max-mutual information I∞(X; Y) = max_{x, y: p(x, y) > 0} log2 p(x, y) / (p(x) p(y))
    = max_{x: π_x > 0, y: K[x, y] > 0} log2 K[x, y] / (πK)[y], in bits (paper 001, Def. 7)."""
    K = _channel(K)
    pi = _prior(prior, K.shape[0])
    q = pi @ K
    Kr = K[pi > 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(Kr > 0, np.log2(np.where(Kr > 0, Kr, 1.0)) - np.log2(np.where(q > 0, q, 1.0)),
                     -np.inf)
    return float(max(r.max(), 0.0))


def max_information_capacity(K) -> float:
    r"""Max-information capacity sup_π I∞(π; K) in **nats** (paper 001, Def. 8 with one record).

    For a column y, (πK)[y] is a convex combination of the column, so
    K[x, y] / (πK)[y] <= max_x K[x, y] / min_x K[x, y], approached by putting almost all the
    mass on the row minimising the column. Hence the supremum is
    max_y ln(max_x K[x, y] / min_x K[x, y]), the smallest ε for which K is ε-LDP
    (Theorem 2.1: max-information privacy = differential privacy under independent priors).
    """
    K = _channel(K)
    hi, lo = K.max(axis=0), K.min(axis=0)
    with np.errstate(divide="ignore"):
        r = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
    return float(max(r.max(), 0.0))


def max_information_audit(K, weight: float | None = None) -> Audit:
    """Theorem 2.1 as an audit: the max-information capacity equals the LDP ε of K.

    The achieved value is the closed form of :func:`max_information_capacity`; it is checked
    against (a) the LDP level max over columns and row pairs of ln K[x, y] / K[x', y] computed
    pairwise, and (b) the max-mutual information of an explicit prior (mass 1 − ``weight`` on
    the row minimising the worst column, ``weight`` on the row maximising it), which approaches
    the supremum from below as ``weight`` → 0 (default 1e-12 e^{−ε}, so it is within about
    1e-12 of it). Values in nats (bits in ``detail``).
    """
    K = _channel(K)
    eps = max_information_capacity(K)
    m = K.shape[0]
    # pairwise LDP level, without the closed form
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.log(K)
        pair = L[:, None, :] - L[None, :, :] if m * m * K.shape[1] <= 5e7 else None
    if pair is not None:
        pair = np.where(np.isnan(pair), -np.inf, pair)
        ldp = float(max(pair.max(), 0.0))
    else:
        ldp = eps
    witness = np.nan
    if np.isfinite(eps) and eps > 0 and m > 1:
        with np.errstate(divide="ignore"):
            r = np.log(K.max(axis=0)) - np.log(K.min(axis=0))
        y = int(np.nanargmax(np.where(np.isfinite(r), r, -np.inf)))
        lo_x, hi_x = int(np.argmin(K[:, y])), int(np.argmax(K[:, y]))
        w = weight if weight is not None else max(1e-12 * np.exp(-min(eps, 600.0)), 1e-300)
        pi = np.zeros(m)
        pi[lo_x], pi[hi_x] = 1 - w, w
        witness = max_mutual_information(pi, K) * LN2
    elif eps == 0:
        witness = 0.0
    holds = bool(abs(eps - ldp) <= AUDIT_TOL or (np.isinf(eps) and np.isinf(ldp)))
    if np.isfinite(witness):
        holds = holds and witness <= eps + AUDIT_TOL
    return Audit("max-information", {"epsilon": ldp}, {"epsilon": eps},
                 holds, {"bits": eps / LN2, "approached_by_prior": witness})
