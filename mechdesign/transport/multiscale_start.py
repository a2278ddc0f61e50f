r"""A multiscale starting basis for the transportation network simplex.

Points on both sides are grouped in pairs along a locality-preserving order (a Hilbert curve
in the plane, a k-d order otherwise); the problem between the groups' mass-weighted
centroids is solved first (recursively, down to :data:`MULTISCALE_BASE` points a side, where
the North-West staircase along the same orders starts the simplex), and its optimal spanning
tree is refined into a spanning tree of the fine problem:

1. every coarse supply group splits its members' masses over its coarse arcs by a North-West
   staircase (members in order, arcs by their demand group), and every demand group likewise;
2. every coarse arc then joins the pieces it received on both sides by a North-West
   staircase.

The result is a feasible fine plan on Σ_arcs (s + t − 1) = n + m − 1 arcs that is connected
(each staircase is, and the coarse tree links them), so it is a basis. Its flows are those of
the tree (they do not depend on the orders).

Strong feasibility — every zero-flow tree arc points towards the root (a supply node's arc
to its parent), which the simplex's ratio test (Cunningham 1976) needs so that degenerate
pivots cannot cycle — is then restored arc by arc. A zero-flow arc (i, j) whose child is the
demand node j cuts the tree into two sides of zero net mass; it is replaced by the arc
(i′, j′) between a supply child i′ of j carrying positive flow (one exists: j's demand is met
from below) and a demand neighbour j′ of i carrying positive flow (one exists: i's supply
leaves by another arc). The new arc crosses the same cut, so it carries zero flow, no other
flow changes, and its child is the supply node i′; only the positive arc (i′, j) changes
direction. A tree this cannot repair (never observed) falls back to the staircase start.

Measured on 2-D Euclidean problems with Dirichlet(1) masses (the scale suite's instances,
points renumbered along their Hilbert order as the certified solver does): the fine simplex
needs 8–9 pivots a point from this start against ≈ 49 from the Hilbert staircase; 3·10^4
points a side take 16 s instead of 99 s, 10^5 points 176 s (the staircase start did not
finish in 40 minutes).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mechdesign.transport.north_west_corner import north_west_corner
from mechdesign.transport.point_orders import hilbert_order, kd_order

__all__ = ["MULTISCALE_BASE", "multiscale_start", "point_orders", "refine_tree", "staircase_start"]

#: below this many points on the smaller side the staircase start is used as is
MULTISCALE_BASE = 2000
#: points per group when coarsening (measured, plane points with Dirichlet(1) masses: pairs
#: 16.1 s at 3·10^4 and 176 s at 10^5 points a side, fours 17.3 s and 184 s)
GROUP = 2


def _order(P: np.ndarray) -> np.ndarray:
    return hilbert_order(P) if P.shape[1] == 2 else kd_order(P)


def point_orders(cost):
    """Locality-preserving orders (ox, oy) of both sides' points; index order when the cost
    is not a metric on points."""
    if cost.can_coarsen() and min(cost.n, cost.m) >= 2:
        return _order(cost.embed("x")), _order(cost.embed("y"))
    return np.arange(cost.n), np.arange(cost.m)


def staircase_start(p, q, cost):
    """The North-West staircase along locality-preserving orders of the points (index order
    when the cost is not a metric on points): (rows, cols), rooted at the first row."""
    ox, oy = point_orders(cost)
    i, j, _ = north_west_corner(p[ox], q[oy])
    return ox[i], oy[j]


def multiscale_start(p, q, cost, solve, *, base: int | None = None, levels=None):
    """A strongly feasible starting tree (rows, cols; the root's row first) for the network
    simplex on masses p, q (all positive) and a ``GroundCost`` ``cost``.

    ``solve(P, Q, coarse_cost, rows, cols)`` solves a coarse problem from the given start and
    returns its basic arcs and flows (rows, cols, flow). ``levels``, a list, receives one
    record per refinement (sizes, and whether the refined tree was used). Below ``base``
    points on the smaller side (default :data:`MULTISCALE_BASE`) the staircase is the start.
    """
    n, m = p.size, q.size
    base = MULTISCALE_BASE if base is None else base
    if min(n, m) <= max(base, GROUP) or not cost.can_coarsen():
        return staircase_start(p, q, cost)
    ox, oy = point_orders(cost)
    gx = np.empty(n, np.int64)
    gx[ox] = np.arange(n) // GROUP
    gy = np.empty(m, np.int64)
    gy[oy] = np.arange(m) // GROUP
    P = np.bincount(gx, weights=p)
    Q = np.bincount(gy, weights=q)
    P /= P.sum()
    Q /= Q.sum()
    coarse = cost.coarsened(gx, p, gy, q)
    r0, c0 = multiscale_start(P, Q, coarse, solve, base=base, levels=levels)
    A, B, F = solve(P, Q, coarse, r0, c0)
    rows, cols = refine_tree(p, q, ox, gx, P.size, oy, gy, Q.size, A, B, F)
    start = _strongly_feasible(n, m, p, q, rows, cols)
    if levels is not None:
        levels.append({"n": int(n), "m": int(m), "coarse_n": int(P.size),
                       "coarse_m": int(Q.size), "refined": start is not None})
    return start if start is not None else staircase_start(p, q, cost)


def refine_tree(p, q, ox, gx, kx, oy, gy, ky, A, B, F):
    """The fine spanning tree (rows, cols) refined from a coarse one: coarse arcs (A, B) with
    flows F between kx supply groups gx (members in the order ox) and ky demand groups gy."""
    A = np.ascontiguousarray(A, np.int64)
    B = np.ascontiguousarray(B, np.int64)
    F = np.ascontiguousarray(F, float)
    out_arcs = np.lexsort((B, A))  # each supply group's arcs, by demand group
    in_arcs = np.lexsort((A, B))   # each demand group's arcs, by supply group
    memb_x = ox[np.argsort(gx[ox], kind="stable")]
    memb_y = oy[np.argsort(gy[oy], kind="stable")]
    return _refine(p, q, memb_x, np.bincount(gx, minlength=kx), memb_y,
                   np.bincount(gy, minlength=ky), A, B, F, out_arcs, in_arcs)


@njit(cache=True)
def _staircase(a, b, ia, ib, amount, k0):
    """North-West staircase of the amounts a, b (equal totals up to round-off): writes its
    len(a) + len(b) − 1 cells' positions into ia, ib and masses into amount from index k0;
    returns the next free index."""
    i = 0
    j = 0
    ra = a[0]
    rb = b[0]
    k = k0
    la = a.size
    lb = b.size
    while True:
        x = ra if ra < rb else rb
        ia[k] = i
        ib[k] = j
        amount[k] = x if x > 0.0 else 0.0
        k += 1
        if i == la - 1 and j == lb - 1:
            return k
        if (ra <= rb and i < la - 1) or j == lb - 1:
            i += 1
            rb -= x
            ra = a[i]
        else:
            j += 1
            ra -= x
            rb = b[j]


@njit(cache=True)
def _split(w, memb, size, flows, arcs_sorted, first, E):
    """Each group's members (masses w) split over its arcs (in arcs_sorted order, grouped
    by ``first``): returns (member, arc, amount) cells grouped by arc, in staircase order."""
    K = size.size
    total = memb.size + E - K
    cm = np.empty(total, np.int64)
    ce = np.empty(total, np.int64)
    cx = np.empty(total)
    ia = np.empty(total, np.int64)
    ib = np.empty(total, np.int64)
    k = 0
    s = 0
    t = 0
    for g in range(K):
        mem = memb[s:s + size[g]]
        t1 = t
        while t1 < E and first[arcs_sorted[t1]] == g:
            t1 += 1
        es = arcs_sorted[t:t1]
        k1 = _staircase(w[mem], flows[es], ia, ib, cx, k)
        for r in range(k, k1):
            cm[r] = mem[ia[r]]
            ce[r] = es[ib[r]]
        k = k1
        s += size[g]
        t = t1
    # group the cells by arc, keeping their order (a counting sort)
    cnt = np.zeros(E + 1, np.int64)
    for r in range(k):
        cnt[ce[r] + 1] += 1
    for e in range(E):
        cnt[e + 1] += cnt[e]
    pos = cnt[:E].copy()
    om = np.empty(k, np.int64)
    ox = np.empty(k)
    for r in range(k):
        e = ce[r]
        om[pos[e]] = cm[r]
        ox[pos[e]] = cx[r]
        pos[e] += 1
    return om, ox, cnt


@njit(cache=True)
def _refine(p, q, memb_x, size_x, memb_y, size_y, A, B, F, out_arcs, in_arcs):
    E = A.size
    sm, sx, sstart = _split(p, memb_x, size_x, F, out_arcs, A, E)
    dm, dx, dstart = _split(q, memb_y, size_y, F, in_arcs, B, E)
    total = memb_x.size + memb_y.size - 1
    rows = np.empty(total, np.int64)
    cols = np.empty(total, np.int64)
    ia = np.empty(total, np.int64)
    ib = np.empty(total, np.int64)
    amount = np.empty(total)
    k = 0
    for e in range(E):
        a0, a1 = sstart[e], sstart[e + 1]
        b0, b1 = dstart[e], dstart[e + 1]
        k1 = _staircase(sx[a0:a1], dx[b0:b1], ia, ib, amount, k)
        for r in range(k, k1):
            rows[r] = sm[a0 + ia[r]]
            cols[r] = dm[b0 + ib[r]]
        k = k1
    return rows, cols


def _strongly_feasible(n, m, p, q, rows, cols, passes: int = 20):
    """The tree (rows, cols) with every zero-flow arc turned to point at the root (see the
    module docstring), root row first; None when it is not a spanning tree or cannot be
    repaired in ``passes`` passes."""
    from mechdesign.transport.network_simplex_tree import build_tree, tree_flows

    N = n + m
    if rows.size != N - 1:
        return None
    root = int(rows[0])
    parent = np.empty(N, np.int64)
    pred = np.empty(N, np.int64)
    thread = np.empty(N, np.int64)
    rev_thread = np.empty(N, np.int64)
    succ_num = np.empty(N, np.int64)
    last_succ = np.empty(N, np.int64)
    flow = np.empty(N)
    for _ in range(passes):
        if not build_tree(n, m, rows, cols, root, parent, pred, thread, rev_thread, succ_num,
                          last_succ):
            return None
        tree_flows(n, m, p, q, root, parent, thread, flow)
        bad = _repoint_zero_arcs(n, m, root, parent, pred, flow)
        nodes = np.flatnonzero(pred >= 0)
        rows, cols = pred[nodes] // m, pred[nodes] % m
        first = int(np.flatnonzero(rows == root)[0])
        rows[[0, first]] = rows[[first, 0]]
        cols[[0, first]] = cols[[first, 0]]
        if bad == 0:
            return rows, cols
    return None


@njit(cache=True)
def _repoint_zero_arcs(n, m, root, parent, pred, flow):
    """One pass of the repair: every zero-flow arc with a demand child j (parent i) is
    replaced by (i′, j′), i′ a supply child of j and j′ a demand neighbour of i, both by
    positive arcs; arcs whose nodes another repair of this pass touched wait for the next
    pass. Returns the number of zero-flow arcs that pointed away from the root."""
    N = n + m
    # children lists of the tree as it is at the start of the pass
    cnt = np.zeros(N + 1, np.int64)
    for v in range(N):
        if v != root:
            cnt[parent[v] + 1] += 1
    for v in range(N):
        cnt[v + 1] += cnt[v]
    kids = np.empty(N, np.int64)
    fill = cnt[:N].copy()
    for v in range(N):
        if v != root:
            kids[fill[parent[v]]] = v
            fill[parent[v]] += 1
    touched = np.zeros(N, np.bool_)
    bad = 0
    for j in range(n, N):
        if j == root or flow[j] > 0.0:
            continue
        bad += 1
        i = parent[j]
        i2 = -1
        for t in range(cnt[j], cnt[j + 1]):
            if flow[kids[t]] > 0.0:
                i2 = kids[t]
                break
        j2 = -1
        if i != root and flow[i] > 0.0:
            j2 = parent[i]
        else:
            for t in range(cnt[i], cnt[i + 1]):
                c = kids[t]
                if c != j and flow[c] > 0.0:
                    j2 = c
                    break
        if i2 < 0 or j2 < 0 or touched[i] or touched[j] or touched[i2] or touched[j2]:
            continue
        touched[i] = touched[j] = touched[i2] = touched[j2] = True
        # (i, j) leaves; (i2, j) now joins j to its parent i2; (i2, j2) hangs i2 under j2
        parent[j] = i2
        pred[j] = i2 * m + (j - n)
        parent[i2] = j2
        pred[i2] = i2 * m + (j2 - n)
    return bad
