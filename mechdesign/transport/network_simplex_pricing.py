r"""Compiled cost evaluation and pricing kernels of the transportation network simplex.

Costs c(i, j) are read from a dense matrix or computed on the fly from coordinates
(Euclidean, Manhattan, haversine), selected by an integer ``kind`` (:data:`KIND_MATRIX`, ...);
every kernel takes the cost as ``(kind, C, XT, YT, scale)`` (see
:class:`mechdesign.transport.network_simplex.TransportCost`). The scans fill a buffer with
c(i, j) − π_{n+j} in loops the compiler vectorises and then take its minimum. Reduced costs
are r_ij = c_ij + π_i − π_{n+j} for node potentials π (supply nodes 0..n−1, demand nodes
n..n+m−1).

* :func:`price_all_arcs`, :func:`price_candidates` — block search (Grigoriadis 1986) over all
  n·m arcs or over a candidate list: the most negative reduced cost of the first block
  holding one below −tol enters the basis.
* :func:`candidate_arcs` — the initial candidate list: every row's and column's k cheapest
  partners. :func:`violating_arcs` — one pass over all pairs adding every row's and column's
  most negative arc. :func:`scan_min_reduced_cost` — the smallest reduced cost over all arcs.

Everything here trusts its inputs (validated in :mod:`mechdesign.transport.coupling`).
"""

# explicit compare-and-select instead of min(): numba's min() handles NaN with extra branches
# ruff: noqa: FURB136, PLR1730

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "KIND_EUCLIDEAN",
    "KIND_HAVERSINE",
    "KIND_MANHATTAN",
    "KIND_MATRIX",
    "arc_cost",
    "candidate_arcs",
    "dense_costs",
    "price_all_arcs",
    "price_candidates",
    "scan_min_reduced_cost",
    "violating_arcs",
]

KIND_MATRIX, KIND_EUCLIDEAN, KIND_MANHATTAN, KIND_HAVERSINE = 0, 1, 2, 3


@njit(cache=True, inline="always")
def arc_cost(kind, C, XT, YT, scale, i, j):
    """c(i, j): an entry of C, or a metric between the columns XT[:, i] and YT[:, j]
    (haversine: rows lat, lon, cos lat in radians, ``scale`` = 2·Earth radius), in the same
    operation order as :meth:`mechdesign.transport.ground_cost.GroundCost.block`."""
    if kind == 0:
        return C[i, j]
    if kind == 1:
        s = 0.0
        for k in range(XT.shape[0]):
            d = XT[k, i] - YT[k, j]
            s += d * d
        return math.sqrt(s)
    if kind == 2:
        s = 0.0
        for k in range(XT.shape[0]):
            s += abs(XT[k, i] - YT[k, j])
        return s
    h = math.sin((YT[0, j] - XT[0, i]) * 0.5)
    h *= h
    s = math.sin((YT[1, j] - XT[1, i]) * 0.5)
    s *= s
    s *= XT[2, i]
    s *= YT[2, j]
    h += s
    h = min(max(h, 0.0), 1.0)
    return math.asin(math.sqrt(h)) * scale


@njit(cache=True, inline="always")
def _fill(kind, C, XT, YT, scale, i, j0, k, pj, buf):
    """buf[t] = c(i, j0 + t) − pj[j0 + t] for t < k: straight loops the compiler vectorises
    (same operation order as :func:`arc_cost`)."""
    if kind == 0:
        for t in range(k):
            buf[t] = C[i, j0 + t] - pj[j0 + t]
    elif kind == 1:
        if XT.shape[0] == 2:
            x0 = XT[0, i]
            x1 = XT[1, i]
            y0 = YT[0]
            y1 = YT[1]
            for t in range(k):
                a = x0 - y0[j0 + t]
                b = x1 - y1[j0 + t]
                buf[t] = math.sqrt(a * a + b * b) - pj[j0 + t]
        else:
            for t in range(k):
                buf[t] = 0.0
            for d in range(XT.shape[0]):
                x = XT[d, i]
                y = YT[d]
                for t in range(k):
                    a = x - y[j0 + t]
                    buf[t] += a * a
            for t in range(k):
                buf[t] = math.sqrt(buf[t]) - pj[j0 + t]
    elif kind == 2:
        for t in range(k):
            buf[t] = 0.0
        for d in range(XT.shape[0]):
            x = XT[d, i]
            y = YT[d]
            for t in range(k):
                buf[t] += abs(x - y[j0 + t])
        for t in range(k):
            buf[t] -= pj[j0 + t]
    else:
        for t in range(k):
            buf[t] = arc_cost(kind, C, XT, YT, scale, i, j0 + t) - pj[j0 + t]


@njit(cache=True, inline="always")
def _bmin(buf, k):
    """min(buf[:k])."""
    a = np.inf
    for j in range(k):
        v = buf[j]
        a = v if v < a else a
    return a


@njit(cache=True)
def dense_costs(kind, C, XT, YT, scale, n, m):
    """The full cost matrix (for problems small enough that reading it beats recomputing)."""
    out = np.empty((n, m))
    zero = np.zeros(m)
    for i in range(n):
        _fill(kind, C, XT, YT, scale, i, 0, m, zero, out[i])
    return out


@njit(cache=True)
def scan_min_reduced_cost(kind, C, XT, YT, scale, n, m, pi):
    """The smallest reduced cost c_ij + π_i − π_{n+j} over all n·m arcs."""
    buf = np.empty(m)
    pj = pi[n:]
    best = np.inf
    for i in range(n):
        _fill(kind, C, XT, YT, scale, i, 0, m, pj, buf)
        r = _bmin(buf, m) + pi[i]
        if r < best:
            best = r
    return best


@njit(cache=True)
def price_all_arcs(kind, C, XT, YT, scale, n, m, block, tol, ci, cj, pi, pred, buf):
    """Block search over all n·m arcs from (ci, cj), row by row: the most negative reduced
    cost of the first block holding one below −tol. Returns (r, i, j, ci, cj, scanned);
    i = −1 when a whole sweep found none."""
    NM = n * m
    pj = pi[n:]
    best = -tol
    bi = -1
    bj = -1
    scanned = 0
    in_block = 0
    while scanned < NM:
        lim = cj + (block - in_block)
        if lim > m:
            lim = m
        pii = pi[ci]
        k = lim - cj
        _fill(kind, C, XT, YT, scale, ci, cj, k, pj, buf)
        mn = _bmin(buf, k)
        if mn + pii < best:  # the best non-basic arc (a basic one can look negative by round-off)
            for t in range(k):
                r = buf[t] + pii
                e = ci * m + cj + t
                if r < best and pred[ci] != e and pred[n + cj + t] != e:
                    best = r
                    bi = ci
                    bj = cj + t
        scanned += k
        in_block += k
        cj = lim
        if cj == m:
            cj = 0
            ci += 1
            if ci == n:
                ci = 0
        if in_block >= block:
            if bi >= 0:
                break
            in_block = 0
    return best, bi, bj, ci, cj, scanned


@njit(cache=True)
def price_candidates(n, m, block, tol, pos, crow, ccol, ccost, pi, pred, buf):
    """Block search over the candidate arcs (crow, ccol) with costs ccost, from ``pos``.
    Returns (r, i, j, pos, scanned); i = −1 when no candidate has r < −tol."""
    E = crow.size
    best = -tol
    bi = -1
    bj = -1
    scanned = 0
    in_block = 0
    while scanned < E:
        lim = pos + (block - in_block)
        if lim > E:
            lim = E
        k = lim - pos
        for t in range(k):
            buf[t] = ccost[pos + t] + pi[crow[pos + t]] - pi[n + ccol[pos + t]]
        mn = _bmin(buf, k)
        if mn < best:
            for t in range(k):
                r = buf[t]
                if r < best:
                    i = crow[pos + t]
                    j = ccol[pos + t]
                    e = i * m + j
                    if pred[i] != e and pred[n + j] != e:
                        best = r
                        bi = i
                        bj = j
        scanned += k
        in_block += k
        pos = lim
        if pos == E:
            pos = 0
        if in_block >= block:
            if bi >= 0:
                break
            in_block = 0
    return best, bi, bj, pos, scanned


@njit(cache=True)
def _insert(vals, idx, c, j):
    """Insert (c, j) into the ascending arrays (vals, idx), dropping their last entry."""
    t = vals.size - 1
    while t > 0 and vals[t - 1] > c:
        vals[t] = vals[t - 1]
        idx[t] = idx[t - 1]
        t -= 1
    vals[t] = c
    idx[t] = j


@njit(cache=True)
def candidate_arcs(kind, C, XT, YT, scale, n, m, k):
    """Candidate arcs: every row's k cheapest columns and every column's k cheapest rows
    (one pass over all pairs), sorted by row and then column, each arc once. Returns
    (rows, cols, costs)."""
    kr = min(k, m)
    kc = min(k, n)
    buf = np.empty(m)
    zero = np.zeros(m)
    rv = np.empty(kr)
    rtop = np.empty((n, kr), np.int64)
    cval = np.full((m, kc), np.inf)
    ctop = np.full((m, kc), -1, np.int64)
    ckth = np.full(m, np.inf)  # each column's current k-th smallest cost
    for i in range(n):
        _fill(kind, C, XT, YT, scale, i, 0, m, zero, buf)
        rv[:] = np.inf
        ri = rtop[i]
        for j in range(m):
            c = buf[j]
            if c < rv[kr - 1]:
                _insert(rv, ri, c, j)
            if c < ckth[j]:
                _insert(cval[j], ctop[j], c, i)
                ckth[j] = cval[j, kc - 1]
    cnt = np.full(n, kr, np.int64)
    for j in range(m):
        for t in range(kc):
            if ctop[j, t] >= 0:
                cnt[ctop[j, t]] += 1
    start = np.zeros(n + 1, np.int64)
    for i in range(n):
        start[i + 1] = start[i] + cnt[i]
    cols = np.empty(start[n], np.int64)
    fill = start[:n].copy()
    for i in range(n):
        for t in range(kr):
            cols[fill[i]] = rtop[i, t]
            fill[i] += 1
    for j in range(m):
        for t in range(kc):
            i = ctop[j, t]
            if i >= 0:
                cols[fill[i]] = j
                fill[i] += 1
    out_r = np.empty(start[n], np.int64)
    out_c = np.empty(start[n], np.int64)
    e = 0
    for i in range(n):
        seg = np.sort(cols[start[i]:start[i + 1]])
        for t in range(seg.size):
            if t == 0 or seg[t] != seg[t - 1]:
                out_r[e] = i
                out_c[e] = seg[t]
                e += 1
    out_r = out_r[:e].copy()
    out_c = out_c[:e].copy()
    costs = np.empty(e)
    for t in range(e):
        costs[t] = arc_cost(kind, C, XT, YT, scale, out_r[t], out_c[t])
    return out_r, out_c, costs


@njit(cache=True, inline="always")
def _any_below(x0, x1, y0, y1, pj, thr, m):
    """Is √((x0 − y0_j)² + (x1 − y1_j)²) − pj_j < thr for some j? Compared as
    d² < (thr + pj_j)² where thr + pj_j > 0, in a loop without square roots that the compiler
    vectorises; a margin of 1e-12 relative keeps every borderline pair for the exact test."""
    cnt = 0
    for j in range(m):
        a = x0 - y0[j]
        b = x1 - y1[j]
        t = thr + pj[j]
        t = t + 1e-12 * abs(t)
        cnt += (t > 0.0) & (a * a + b * b < t * t)
    return cnt > 0


@njit(cache=True)
def violating_arcs(kind, C, XT, YT, scale, n, m, pi, tol):
    """One pass over all pairs: every row's and every column's most negative reduced cost
    when it is below −tol (the arcs to add to a candidate list). Returns (rows, cols, costs,
    r_min) with r_min the minimum over the rows that have a violation (+inf if none: all
    reduced costs are then ≥ −tol)."""
    buf = np.empty(m)
    pj = pi[n:]
    cmin = np.full(m, -tol)
    carg = np.full(m, -1, np.int64)
    rr = np.empty(n + m, np.int64)
    rc = np.empty(n + m, np.int64)
    cnt = 0
    best = np.inf
    plane = kind == 1 and XT.shape[0] == 2
    for i in range(n):
        pii = pi[i]
        if plane and not _any_below(XT[0, i], XT[1, i], YT[0], YT[1], pj, -tol - pii, m):
            continue  # no square root needed to see this row has no violation
        _fill(kind, C, XT, YT, scale, i, 0, m, pj, buf)
        mn = _bmin(buf, m)
        if mn + pii < best:
            best = mn + pii
        if mn + pii < -tol:
            t = 0
            while buf[t] != mn:
                t += 1
            rr[cnt] = i
            rc[cnt] = t
            cnt += 1
            for j in range(m):
                r = buf[j] + pii
                if r < cmin[j]:
                    cmin[j] = r
                    carg[j] = i
    for j in range(m):
        if carg[j] >= 0:
            rr[cnt] = carg[j]
            rc[cnt] = j
            cnt += 1
    costs = np.empty(cnt)
    for t in range(cnt):
        costs[t] = arc_cost(kind, C, XT, YT, scale, rr[t], rc[t])
    return rr[:cnt].copy(), rc[:cnt].copy(), costs, best
