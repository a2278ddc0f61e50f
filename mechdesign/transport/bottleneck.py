r"""The ∞-Wasserstein (bottleneck) distance W∞ for general costs.

W∞(λ, μ) = min over couplings γ of max{c(x, y) : γ[x, y] > 0}: the smallest threshold t for
which a coupling exists on the pairs {c ≤ t}. By Hall's theorem such a coupling exists iff the
deficiency D(t) = max_S [λ(S) − μ(N_t(S))] is zero, N_t(S) being the columns within t of some
row of S. The search gallops up from the lower bound max(max_x min_y c, max_y min_x c), then
bisects over the sorted distinct costs; each feasibility test is a maximum flow.

SciPy's ``maximum_flow`` takes int32 capacities, so masses are scaled by σ ≈ 2^30 / (remaining
mass) and rounded *down*: an integer flow is then a genuine float flow and bounds D from above,
and the source side S of its minimum cut gives the exact lower bound λ(S) − μ(N_t(S))
(evaluated with ``math.fsum``). While the two bounds straddle the mass tolerance
τ = 10^-12 + 8·eps·(n + m), the residual problem is solved again at a finer scale. Rounding
never decides feasibility: only the two proven bounds do.

(On a line, W∞ has a closed form: see :func:`mechdesign.transport.coupling.wasserstein`.)
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from mechdesign.transport.ground_cost import GroundCost
from mechdesign.transport.marginals import mass_tolerance

__all__ = ["bottleneck_distance"]

_I32 = 2**31 - 1


def _deficiency(p, q, ei, ej, tau, max_rounds: int = 8) -> bool:
    """Is D = max_S [p(S) − q(N(S))] ≤ tau on the bipartite graph with arcs (ei, ej)?

    Decided only by proven bounds: an integer max flow at scale σ (capacities rounded down, so
    it is a real flow) bounds D from above; the source side of its cut bounds D from below.
    While the bounds straddle tau, the residual problem is solved again at a finer scale.
    """
    n, m = p.size, q.size
    src, sink = 0, n + m + 1
    ptot = math.fsum(p)

    def upper(g):
        # a feasible flow is left after trimming round-off excess at rows, then at columns
        out = np.bincount(ei, weights=g, minlength=n)
        inn = np.bincount(ej, weights=g, minlength=m)
        d_hi = ptot - math.fsum(np.minimum(out, p)) + math.fsum(np.maximum(inn - q, 0.0))
        return d_hi, np.maximum(p - out, 0.0), np.maximum(q - inn, 0.0)

    g = np.zeros(ei.size)  # current float flow on the arcs
    d_hi, r, s = upper(g)
    for _ in range(max_rounds):
        R = math.fsum(r)
        if R <= 0:
            break
        sigma = (_I32 // 4) / R
        cap_r = np.floor(r * sigma).astype(np.int64)
        cap_s = np.floor(s * sigma).astype(np.int64)
        big = int(cap_r.sum()) + 1
        cap_b = np.minimum(np.floor(g * sigma), big).astype(np.int64)
        rb = cap_b > 0
        heads = np.r_[np.zeros(n, np.int64), 1 + ei, 1 + n + ej[rb], 1 + n + np.arange(m)]
        tails = np.r_[1 + np.arange(n), 1 + n + ej, 1 + ei[rb], np.full(m, sink)]
        caps = np.r_[cap_r, np.full(ei.size, big), cap_b[rb], cap_s]
        nz = caps > 0
        A = sp.csr_array((caps[nz].astype(np.int32), (heads[nz], tails[nz])),
                         shape=(n + m + 2, n + m + 2))
        F = maximum_flow(A, src, sink).flow
        fe = np.asarray(F[1 + ei, 1 + n + ej]).ravel().astype(float)  # net flow row -> col
        g = np.maximum(g + fe / sigma, 0.0)
        d_hi, r, s = upper(g)
        if d_hi <= tau:
            return True
        # the source side of the integer problem's minimum cut: a Hall set S, and
        # D ≥ p(S) − q(N(S)) exactly (N(S) all columns adjacent to S)
        resid = sp.csr_array(A - F)
        resid.data = (resid.data > 0).astype(np.int8)
        resid.eliminate_zeros()
        reach = breadth_first_order(resid, src, directed=True, return_predecessors=False)
        inS = np.zeros(n, bool)
        inS[reach[(reach >= 1) & (reach <= n)] - 1] = True
        if inS.any():
            nb = np.zeros(m, bool)
            nb[ej[inS[ei]]] = True
            if math.fsum(p[inS]) - math.fsum(q[nb]) > tau:
                return False
    return d_hi <= 2 * tau  # bounds within round-off of tau after max_rounds: never observed


def bottleneck_distance(p, q, C: GroundCost) -> float:
    """W∞ between masses p and q (each of total 1) for the ground cost C: the smallest cost
    c such that a coupling exists on the pairs of cost ≤ c (see the module docstring)."""
    pos_r, pos_c = np.flatnonzero(p > 0), np.flatnonzero(q > 0)
    C = C.restricted(pos_r, pos_c)
    p, q = p[pos_r] / math.fsum(p[pos_r]), q[pos_c] / math.fsum(q[pos_c])
    n, m = p.size, q.size
    tau = mass_tolerance(n, m)
    # lower bound: every row and every column must reach some partner
    colmin = np.full(m, np.inf)
    lo = -np.inf
    cmax = -np.inf
    for s, e in C.chunks():
        B = C.block(slice(s, e))
        lo = max(lo, float(B.min(axis=1).max()))
        np.minimum(colmin, B.min(axis=0), out=colmin)
        cmax = max(cmax, float(B.max()))
    lo = max(lo, float(colmin.max()))

    def edges_upto(t):
        ii, jj, cc = [], [], []
        for s, e in C.chunks():
            B = C.block(slice(s, e))
            i, j = np.nonzero(B <= t)
            ii.append(i + s)
            jj.append(j)
            cc.append(B[i, j])
        ii, jj, cc = np.concatenate(ii), np.concatenate(jj), np.concatenate(cc)
        o = np.argsort(cc, kind="stable")
        return ii[o], jj[o], cc[o]

    # gallop upwards from lo until feasible
    width = max(cmax - lo, 0.0)
    step = width / 64 if width > 0 else 0.0
    prev = -np.inf
    t = lo
    while True:
        ei, ej, ec = edges_upto(t)
        if _deficiency(p, q, ei, ej, tau):
            break
        prev = t
        if t >= cmax:  # pragma: no cover - all pairs allowed is always feasible
            raise RuntimeError("W∞: no feasible threshold (inconsistent masses)")
        t = min(cmax, lo + step) if step > 0 else cmax
        step *= 2
    # binary search over distinct costs in (prev, t]
    vals = np.unique(ec[ec > prev])
    lo_i, hi_i = 0, vals.size - 1  # vals[hi_i] == t is feasible
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        k = int(np.searchsorted(ec, vals[mid], side="right"))
        if _deficiency(p, q, ei[:k], ej[:k], tau):
            hi_i = mid
        else:
            lo_i = mid + 1
    return float(vals[hi_i])
