"""The Shannon capacity of a channel, certified by a lower and an upper bound (in bits).

A channel is a row-stochastic matrix K[x, y] = Pr[y | x]. Its capacity

    C(K) = max_π I(π; K) = min_q max_x D(K[x] ‖ q)

is computed by :func:`shannon_capacity`: Blahut–Arimoto as a warm start, then a primal
active-set Newton method (with Frank–Wolfe entries, null-space pivots and a log-barrier
fallback); every iterate π_t gives the bracket I(π_t; K) <= C(K) <= max_x D(K[x] ‖ π_t K).
The leakage measures (mutual information, min-entropy, g-leakage, max-information) are in
:mod:`mechdesign.information.leakage`.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.blas_threads import one_blas_thread
from mechdesign.core.errors import ProblemError
from mechdesign.information.capacity_newton import BoundTracker, barrier_phase, newton_phase
from mechdesign.information.channel import LN2, as_channel, neg_row_entropies, row_divergences

__all__ = ["CapacityResult", "shannon_capacity"]

#: Blahut–Arimoto iterations before the first Newton phase.
BA_WARM_START_ITERATIONS = 50
#: Blahut–Arimoto iterations after a stalled Newton phase, from a smoothed prior.
BA_RECOVERY_ITERATIONS = 200
#: Weight of the uniform prior mixed into the best prior before the recovery iterations
#: (revives rows whose mass went to zero).
RECOVERY_SMOOTHING = 0.001
#: Rounds of the log-barrier phase before Blahut–Arimoto is the only fallback.
BARRIER_ROUNDS = 5
#: After a barrier round, rows with mass at least this fraction of the largest form the support.
BARRIER_SUPPORT_FRACTION = 1e-8
#: Rows within this L1 distance of each other are solved as one representative row.
NEAR_DUPLICATE_L1 = 1e-6
#: Re-choices of the group representatives before the grouped solve stops.
REGROUP_ROUNDS = 10
#: Initial working set of the Newton phase: rows whose divergence reaches I, or whose mass is at
#: least this fraction of the largest.
WORKING_SET_MASS_FRACTION = 0.1
#: Channels with this many entries or more use one BLAS thread.
ONE_THREAD_MIN_ENTRIES = 40_000


def _blas_one_thread(size: int):
    """One BLAS thread for the solver's matrix-vector products (channels of
    ONE_THREAD_MIN_ENTRIES entries or more). Threaded gemv gains little at these sizes and, on
    a loaded 2-core machine, was measured 7–10x slower than one thread (k = 1000: 4.7–7.1 s
    against 0.7 s)."""
    return nullcontext() if size < ONE_THREAD_MIN_ENTRIES else one_blas_thread()


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

    Algorithm: BA_WARM_START_ITERATIONS Blahut–Arimoto iterations
    (π ← π·exp(D(K[x] ‖ πK)), normalised) as a warm start, then the primal active-set Newton
    method of :mod:`mechdesign.information.capacity_newton` on a working set of rows, with its
    log-barrier phase when the active set stalls and Blahut–Arimoto from a smoothed prior as
    the last resort. Rows within NEAR_DUPLICATE_L1 of each other in L1 are solved as one
    representative per group, the member with the largest divergence, re-chosen until stable
    (and all rows if that leaves a gap). All-zero columns are dropped. Large channels use one
    BLAS thread (threadpoolctl, when installed). The two bounds are always evaluated on the
    full channel.

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
    Wu, Xia and He, "Achieving Dalenius' Goal of Data Privacy with Practical Assumptions",
    arXiv 2017, Def. 5–6 (ε-information privacy: capacity <= ε bits).

    Examples
    --------
    >>> r = shannon_capacity([[0.9, 0.1], [0.1, 0.9]])
    >>> round(r.upper, 9), round(float(1 + 0.9 * np.log2(0.9) + 0.1 * np.log2(0.1)), 9)
    (0.531004406, 0.531004406)
    """
    K = as_channel(K)
    tol = float(tol)
    if not np.isfinite(tol) or tol <= 0:
        raise ProblemError(f"tol must be a positive number, got {tol!r}", key="tol")
    n0 = K.shape[1]
    cols = np.flatnonzero(K.max(axis=0) > 0)
    Kc = K[:, cols] if len(cols) < n0 else K
    # Near-duplicate rows make the Hessian (near) singular and stall Newton: optimise over one
    # representative per group of rows within NEAR_DUPLICATE_L1 in L1, then make each group's
    # representative the member with the largest divergence at the current q and re-solve,
    # until the choice is stable. The bounds are always certified on all the rows.
    with _blas_one_thread(Kc.size):
        negH_all = neg_row_entropies(Kc)
        groups = _row_groups(Kc, NEAR_DUPLICATE_L1)
        lb, ub, prior, q, iters = _grouped(Kc, negH_all, groups, tol, max_iter, 0)
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
    for _ in range(REGROUP_ROUNDS):
        Kr = Kc[reps]
        lb, ub, p, q, it = _capacity_core(Kr, tol * LN2, int(max_iter) - iters, negH_all[reps])
        iters += it
        if len(reps) == m0:
            break
        lb = float(p @ row_divergences(Kr, negH_all[reps], p @ Kr))
        D = row_divergences(Kc, negH_all, q)
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
    track = BoundTracker(m, n)
    if m == 1 or n == 1:
        p = np.ones(m) / m
        q = p @ K
        D = row_divergences(K, neg_row_entropies(K), q)
        track.see(p, q, D)
        return track.lb, track.ub, track.p, track.q, 0
    negH = neg_row_entropies(K) if negH is None else negH
    KT = np.ascontiguousarray(K.T)
    p = np.full(m, 1.0 / m)
    iters = 0
    warm = BA_WARM_START_ITERATIONS
    barrier_rounds = 0
    while iters < max_iter:
        # Blahut–Arimoto phase (warm start, or recovery after a stalled Newton phase)
        D = None
        for _ in range(warm):
            q = KT @ p
            D = row_divergences(K, negH, q)
            lb = track.see(p, q, D)
            iters += 1
            if track.gap <= tol or iters >= max_iter:
                return track.lb, track.ub, track.p, track.q, iters
            w = p * np.exp(D - D.max())
            p = w / w.sum()
        # Newton phase
        q = KT @ p
        D = row_divergences(K, negH, q)
        lb = float(p @ D)
        W = np.flatnonzero((D >= lb) | (p >= WORKING_SET_MASS_FRACTION * p.max()))
        p = np.where(np.isin(np.arange(m), W), p, 0.0)
        p /= p.sum()
        p, iters, _ = newton_phase(K, KT, negH, p, W, track, tol, iters, max_iter)
        if track.gap <= tol or iters >= max_iter:
            break
        if barrier_rounds < BARRIER_ROUNDS:
            # stalled active set (ill-conditioned: smooth channels whose rows are near mixtures
            # of their neighbours): a log-barrier interior-point method over all the rows
            barrier_rounds += 1
            p, iters = barrier_phase(K, KT, negH, track.p, track, tol, iters, max_iter)
            if track.gap <= tol or iters >= max_iter:
                break
            # the barrier path has found the support: finish with the active set on it
            W = np.flatnonzero(p >= BARRIER_SUPPORT_FRACTION * p.max())
            p = np.where(np.isin(np.arange(m), W), p, 0.0)
            p /= p.sum()
            p, iters, _ = newton_phase(K, KT, negH, p, W, track, tol, iters, max_iter)
            if track.gap <= tol or iters >= max_iter:
                break
        # stalled: smooth the prior (revives zero components) and run more BA iterations
        p = (1 - RECOVERY_SMOOTHING) * track.p + RECOVERY_SMOOTHING / m
        warm = BA_RECOVERY_ITERATIONS
    return track.lb, track.ub, track.p, track.q, iters
