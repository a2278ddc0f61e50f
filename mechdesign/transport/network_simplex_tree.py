r"""Compiled spanning-tree kernels of the transportation network simplex: the basis.

The basis is the spanning tree of the n supply and m demand nodes stored by ``parent``,
``pred`` (the arc i·m + j joining a node to its parent), ``thread`` (a cyclic depth-first
preorder), ``rev_thread``, ``succ_num`` (subtree sizes) and ``last_succ`` (the last node of
each subtree in preorder); see :mod:`mechdesign.transport.network_simplex` for the algorithm.
:func:`build_tree` builds these arrays from a starting set of arcs, :func:`tree_potentials`
and :func:`tree_flows` recompute potentials and flows from the tree alone, :func:`pivot`
exchanges one arc (ratio test with Cunningham's strongly feasible rule, then re-rooting of
the subtree cut off) and :func:`pivot_loop` prices and pivots until no arc enters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mechdesign.transport.network_simplex_pricing import (
    arc_cost,
    price_all_arcs,
    price_candidates,
)

__all__ = ["build_tree", "pivot", "pivot_loop", "tree_flows", "tree_potentials"]


@njit(cache=True)
def build_tree(n, m, er, ec, root, parent, pred, thread, rev_thread, succ_num, last_succ):
    """Tree arrays of the spanning tree with edges (er[k], n + ec[k]) rooted at ``root``."""
    N = n + m
    deg = np.zeros(N + 1, np.int64)
    for k in range(er.size):
        deg[er[k] + 1] += 1
        deg[n + ec[k] + 1] += 1
    for v in range(N):
        deg[v + 1] += deg[v]
    adj = np.empty(2 * er.size, np.int64)
    fill = deg[:N].copy()
    for k in range(er.size):
        a, b = er[k], n + ec[k]
        adj[fill[a]] = k
        fill[a] += 1
        adj[fill[b]] = k
        fill[b] += 1
    order = np.empty(N, np.int64)
    stack = np.empty(N, np.int64)
    seen = np.zeros(N, np.bool_)
    top = 0
    stack[0] = root
    seen[root] = True
    parent[root] = -1
    pred[root] = -1
    cnt = 0
    while top >= 0:
        v = stack[top]
        top -= 1
        order[cnt] = v
        cnt += 1
        for t in range(deg[v], deg[v + 1]):
            k = adj[t]
            w = er[k] if v >= n else n + ec[k]
            if not seen[w]:
                seen[w] = True
                parent[w] = v
                pred[w] = er[k] * m + ec[k]
                top += 1
                stack[top] = w
    if cnt != N:
        return False
    for t in range(N):
        thread[order[t]] = order[(t + 1) % N]
        rev_thread[order[(t + 1) % N]] = order[t]
    for v in range(N):
        succ_num[v] = 1
    for t in range(N - 1, 0, -1):
        v = order[t]
        succ_num[parent[v]] += succ_num[v]
    pos = np.empty(N, np.int64)
    for t in range(N):
        pos[order[t]] = t
    for v in range(N):
        last_succ[v] = order[pos[v] + succ_num[v] - 1]
    return True


@njit(cache=True)
def tree_potentials(kind, C, XT, YT, scale, n, m, root, parent, pred, thread, pi):
    """Potentials from the tree alone: π_root = 0, then down the thread so that every tree
    arc has reduced cost exactly c + π_i − π_{n+j} = 0 up to one rounding."""
    pi[root] = 0.0
    v = thread[root]
    for _ in range(n + m - 1):
        e = pred[v]
        i = e // m
        c = arc_cost(kind, C, XT, YT, scale, i, e - i * m)
        if v < n:
            pi[v] = pi[parent[v]] - c
        else:
            pi[v] = pi[parent[v]] + c
        v = thread[v]


@njit(cache=True)
def tree_flows(n, m, p, q, root, parent, thread, flow):
    """The flows of the basic solution from the masses alone: leaves first (up the reverse
    thread), each node sends its net excess through the arc to its parent, so every node
    but the root balances up to one rounding per arc. Returns the root's residual Σp − Σq."""
    N = n + m
    excess = np.empty(N)
    for i in range(n):
        excess[i] = p[i]
    for j in range(m):
        excess[n + j] = -q[j]
    order = np.empty(N, np.int64)
    v = root
    for t in range(N):
        order[t] = v
        v = thread[v]
    for t in range(N - 1, 0, -1):
        v = order[t]
        flow[v] = excess[v] if v < n else -excess[v]
        excess[parent[v]] += excess[v]
    flow[root] = 0.0
    return excess[root]


@njit(cache=True)
def pivot_loop(kind, C, XT, YT, scale, n, m, block, tol, max_pivots, parent, pred, thread,
                rev_thread, succ_num, last_succ, pi, flow, stats, crow, ccol, ccost):
    """Pivots until no arc priced has r < −tol or ``max_pivots`` is reached: over the
    candidate list (crow, ccol, ccost) when it is not empty, else over all n·m arcs.

    Returns the number of pivots. ``stats`` = [degenerate pivots, arcs priced, next arc of
    the full sweep, next candidate] (the positions carry over between calls).
    """
    N = n + m
    work = np.empty((6, N), parent.dtype)
    o_flow = np.empty(N)
    use_list = crow.size > 0
    buf = np.empty(max(m, block))
    ci = stats[2] // m
    cj = stats[2] - ci * m
    pos = stats[3]
    pivots = 0
    while pivots < max_pivots:
        if use_list:
            best, bi, bj, pos, scanned = price_candidates(n, m, block, tol, pos, crow, ccol, ccost,
                                                     pi, pred, buf)
        else:
            best, bi, bj, ci, cj, scanned = price_all_arcs(kind, C, XT, YT, scale, n, m, block, tol,
                                                       ci, cj, pi, pred, buf)
        stats[1] += scanned
        if bi < 0:
            break
        best = arc_cost(kind, C, XT, YT, scale, bi, bj) + pi[bi] - pi[n + bj]  # exact
        pivots += 1
        if pivot(n, m, bi, bj, best, parent, pred, thread, rev_thread, succ_num, last_succ, pi,
                  flow, work, o_flow):
            stats[0] += 1
    stats[2] = ci * m + cj
    stats[3] = pos
    return pivots


@njit(cache=True)
def pivot(n, m, bi, bj, best, parent, pred, thread, rev_thread, succ_num, last_succ, pi, flow,
           work, o_flow):
    """Bring the arc bi → n+bj (reduced cost ``best`` < 0) into the basis: ratio test with
    Cunningham's rule, flow change round the cycle, re-rooting of the subtree cut off by the
    leaving arc under the entering one, and its potentials. Returns True when degenerate.

    Over 80 lines because the kernel needs it: re-rooting the cut-off subtree rewrites six
    tree arrays in one walk along the path from the entering arc to the leaving one, with a
    dozen locals (the path, the old thread ends, the subtree's size and last node) shared by
    every step; split further, each piece would take and return all of them."""
    N = n + m
    path = work[0]
    o_pred = work[1]
    o_ls = work[2]
    o_sn = work[3]
    o_rev = work[4]
    o_after = work[5]
    a = bi
    b = n + bj
    e_in = bi * m + bj
    join, delta, leave, side = _ratio_test(n, a, b, parent, succ_num, flow)
    degenerate = not delta > 0.0
    if not degenerate:
        _augment(n, a, b, join, delta, parent, flow)
    flow[leave] = 0.0
    if side == 0:
        u_in = a
        v_in = b
        sigma = -best
    else:
        u_in = b
        v_in = a
        sigma = best
    # ---- the subtree S below the leaving arc is re-rooted at u_in and hung under v_in
    s_size = succ_num[leave]
    s_last = last_succ[leave]
    k = 0
    v = u_in
    while True:
        path[k] = v
        o_pred[k] = pred[v]
        o_flow[k] = flow[v]
        o_ls[k] = last_succ[v]
        o_sn[k] = succ_num[v]
        o_rev[k] = rev_thread[v]
        o_after[k] = thread[last_succ[v]]
        if v == leave:
            break
        v = parent[v]
        k += 1
    p0 = parent[leave]
    # remove S's run from the thread
    before = rev_thread[leave]
    after = thread[s_last]
    thread[before] = after
    rev_thread[after] = before
    x = p0
    while x != -1 and last_succ[x] == s_last:
        last_succ[x] = before
        x = parent[x]
    x = p0
    while x != join:
        succ_num[x] -= s_size
        x = parent[x]
    # S's new preorder: for t = 0..k, w_t followed by its old subtree without w_{t-1}'s
    prev_end = o_ls[0]
    for t in range(1, k + 1):
        w = path[t]
        thread[prev_end] = w
        rev_thread[w] = prev_end
        a_end = o_rev[t - 1]
        if o_ls[t] != o_ls[t - 1]:
            b_start = o_after[t - 1]
            thread[a_end] = b_start
            rev_thread[b_start] = a_end
            prev_end = o_ls[t]
        else:
            prev_end = a_end
    s_end = prev_end
    # insert S right after v_in
    nxt = thread[v_in]
    thread[v_in] = u_in
    rev_thread[u_in] = v_in
    thread[s_end] = nxt
    rev_thread[nxt] = s_end
    x = v_in
    while x != -1 and last_succ[x] == v_in:
        last_succ[x] = s_end
        x = parent[x]
    x = v_in
    while x != join:
        succ_num[x] += s_size
        x = parent[x]
    # re-root the path
    for t in range(k):
        w = path[t + 1]
        parent[w] = path[t]
        pred[w] = o_pred[t]
        flow[w] = o_flow[t]
        succ_num[w] = s_size - o_sn[t]
        last_succ[w] = s_end
    parent[u_in] = v_in
    pred[u_in] = e_in
    flow[u_in] = delta
    succ_num[u_in] = s_size
    last_succ[u_in] = s_end
    _shift_potentials(N, s_size, u_in, nxt, sigma, thread, pi)
    return degenerate


@njit(cache=True)
def _ratio_test(n, a, b, parent, succ_num, flow):
    """The cycle closed by the entering arc a → b: its join (the nearest common ancestor; an
    ancestor has a larger subtree) and Cunningham's ratio test, which takes the *last*
    blocking arc when the cycle join → a → b → join is traversed (strict on a's side walked
    upwards, ≤ on b's side). Returns (join, delta, leaving node, side: 0 = a's, 1 = b's)."""
    x = a
    y = b
    while x != y:
        if succ_num[x] < succ_num[y]:
            x = parent[x]
        else:
            y = parent[y]
    join = x
    delta = np.inf
    leave = -1
    side = 0
    v = a
    while v != join:
        if v < n and flow[v] < delta:
            delta = flow[v]
            leave = v
            side = 0
        v = parent[v]
    v = b
    while v != join:
        if v >= n and flow[v] <= delta:
            delta = flow[v]
            leave = v
            side = 1
        v = parent[v]
    return join, delta, leave, side


@njit(cache=True)
def _augment(n, a, b, join, delta, parent, flow):
    """Move δ round the cycle: down the arcs from join to a, up those from b to join
    (f − δ ≥ 0 exactly on a decreasing arc since f ≥ δ)."""
    v = a
    while v != join:
        if v < n:
            flow[v] -= delta
        else:
            flow[v] += delta
        v = parent[v]
    v = b
    while v != join:
        if v < n:
            flow[v] += delta
        else:
            flow[v] -= delta
        v = parent[v]


@njit(cache=True)
def _shift_potentials(N, s_size, u_in, nxt, sigma, thread, pi):
    """Shift the moved subtree S (s_size nodes from u_in along the thread) by sigma, or its
    complement (from nxt) by −sigma when that is smaller: same reduced costs either way."""
    if 2 * s_size <= N:
        v = u_in
        for _ in range(s_size):
            pi[v] += sigma
            v = thread[v]
    else:
        v = nxt
        for _ in range(N - s_size):
            pi[v] -= sigma
            v = thread[v]
