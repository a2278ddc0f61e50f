"""Branch and bound for the pricing of mutual information over staircase patterns (numba;
imported on first use, so that loading the package does not load numba).

On the pattern of T (:mod:`mechdesign.core.information_utilities`) the mutual information is
G(π(T)) / ln 2 with G(t) = e^ε ε t − m ln m, m = 1 + (e^ε − 1) t, concave in t; the pricing
maximises

    F(T) = G(π(T)) − Σ_{x ∈ T} w_x        (w_x = the reduced cost of input x, in G's units),

a concave function of one sum minus a linear one: a knapsack-like problem (NP-hard in general),
so it is branched on. Each node fixes the first inputs of the order of increasing ratio
w_x / π_x and bounds the rest by the continuous relaxation over z ∈ [0, 1]: a concave maximum,
whose optimum takes the inputs in that order while G'(t) exceeds their ratio and one fraction of
the next (G' decreases, the ratios increase), so each bound costs one pass. Every node also
offers two sets of the greedy pass as incumbents (the whole inputs taken, and those plus the
fractional one). A node whose bound is at most the best set so far plus ``slack`` is pruned.

Inputs of equal prior weight are interchangeable in G, so among them some optimal set takes
those of the smallest w first (swapping a taken input for an untaken one of smaller w keeps
π(T) and lowers w(T)): once the branch leaves one of them out, it leaves out the rest of its
group with larger w too. Under a uniform prior this alone brings the search down to the k + 1
sizes of T.

When the node budget runs out, the largest bound of the nodes still open (and the best set
plus ``slack``) is a proven upper bound on max F: every set is in an open node or in a pruned
one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _curve(t: float, eps: float, growth: float) -> float:
    """G(t) = e^ε ε t − m ln m with m = 1 + (e^ε − 1) t."""
    return (growth + 1.0) * eps * t - (1.0 + growth * t) * math.log1p(growth * t)


@njit(cache=True)
def _slope(t: float, eps: float, growth: float) -> float:
    """G'(t) = e^ε ε − (e^ε − 1)(ln m + 1)."""
    return (growth + 1.0) * eps - growth * (math.log1p(growth * t) + 1.0)


@njit(cache=True)
def _where_slope(level: float, eps: float, growth: float) -> float:
    """The t at which G'(t) = ``level``."""
    return math.expm1(((growth + 1.0) * eps - level) / growth - 1.0) / growth


@njit(cache=True)
def _relax(p, w, group, closed, depth, t, used, eps, growth):
    """The continuous relaxation over the inputs from ``depth`` on (those of a closed group
    left out), given the sums (t, used) of the inputs taken before: (bound, j, t_whole,
    used_whole) with j the first input not taken whole (n when all are) and t_whole,
    used_whole the sums with the inputs before j."""
    n = p.size
    tt, ww = t, used
    for j in range(depth, n):
        if closed[group[j]]:
            continue
        ratio = w[j] / p[j]
        if _slope(tt + p[j], eps, growth) >= ratio:
            tt += p[j]
            ww += w[j]
            continue
        bound_t, bound_w = tt, ww
        if _slope(tt, eps, growth) > ratio:
            part = min(max(_where_slope(ratio, eps, growth), tt), tt + p[j])
            bound_w += ratio * (part - tt)
            bound_t = part
        return _curve(bound_t, eps, growth) - bound_w, j, tt, ww
    return _curve(tt, eps, growth) - ww, n, tt, ww


@njit(cache=True)
def _keep(values, sets, value, chosen):
    """Insert (value, chosen) among the best ``values`` (descending), skipping duplicates."""
    m = values.size
    if value <= values[m - 1]:
        return
    for i in range(m):
        if values[i] == value and np.array_equal(sets[i], chosen):
            return
    i = m - 1
    while i > 0 and values[i - 1] < value:
        values[i] = values[i - 1]
        sets[i] = sets[i - 1]
        i -= 1
    values[i] = value
    sets[i] = chosen


@njit(cache=True)
def _offer(p, w, group, closed, node, depth, j, t_whole, used_whole, eps, growth, values, sets):
    """The greedy pass's sets at a node: the inputs taken whole, and those plus input j."""
    chosen = node.copy()
    for x in range(depth, j):
        if not closed[group[x]]:
            chosen[x] = 1
    _keep(values, sets, _curve(t_whole, eps, growth) - used_whole, chosen)
    if j < p.size:
        chosen[j] = 1
        _keep(values, sets, _curve(t_whole + p[j], eps, growth) - used_whole - w[j], chosen)


@njit(cache=True)
def branch_and_bound(p, w, group, base_used, eps, growth, slack, node_limit, keep):
    """max_T G(p(T)) − base_used − w(T) over subsets of inputs sorted by increasing w / p
    (every p > 0; inputs of one ``group`` have equal p, and among them a set takes a prefix):
    (best values (descending, −inf where fewer were found), their sets as 0/1 rows, proven
    upper bound on the maximum, nodes explored)."""
    n = p.size
    groups = group.max() + 1 if n else 1
    values = np.full(keep, -np.inf)
    sets = np.zeros((keep, n), dtype=np.int8)
    cap = 2 * n + 4
    st_depth = np.zeros(cap, dtype=np.int64)
    st_t = np.zeros(cap)
    st_used = np.zeros(cap)
    st_bound = np.zeros(cap)
    st_set = np.zeros((cap, n), dtype=np.int8)
    st_closed = np.zeros((cap, groups), dtype=np.int8)
    st_used[0] = base_used
    st_bound[0] = _relax(p, w, group, st_closed[0], 0, 0.0, base_used, eps, growth)[0]
    top, nodes = 1, 0
    while top > 0:
        top -= 1
        if st_bound[top] <= values[0] + slack:
            continue
        if nodes >= node_limit:
            top += 1
            break
        nodes += 1
        depth, t, used = st_depth[top], st_t[top], st_used[top]
        node, closed = st_set[top].copy(), st_closed[top].copy()
        bound, j, tw, uw = _relax(p, w, group, closed, depth, t, used, eps, growth)
        _offer(p, w, group, closed, node, depth, j, tw, uw, eps, growth, values, sets)
        if depth == n:
            continue
        forced_out = closed[group[depth]] == 1
        for take in range(2):  # push "leave out" first, so that "take" is explored first
            if take == 1 and forced_out:
                continue
            ct = t + p[depth] * take
            cu = used + w[depth] * take
            st_closed[top] = closed
            if take == 0:
                st_closed[top, group[depth]] = 1  # the rest of its group stays out too
            cb = _relax(p, w, group, st_closed[top], depth + 1, ct, cu, eps, growth)[0]
            if cb <= values[0] + slack:
                continue
            st_depth[top], st_t[top], st_used[top], st_bound[top] = depth + 1, ct, cu, cb
            st_set[top] = node
            st_set[top, depth] = take
            top += 1
    upper = values[0] + slack
    for i in range(top):
        if st_bound[i] > upper:
            upper = st_bound[i]
    return values, sets, upper, nodes


def best_mutual_information_sets(prior: np.ndarray, weights: np.ndarray, epsilon: float, *, slack: float,
                                 node_limit: int, keep: int) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """The pricing of mutual information: max_T G(π(T)) − Σ_{x ∈ T} w_x (module docstring).

    Inputs of zero prior weight change only the linear part, so they are taken exactly when
    w_x < 0; the others are branched on in the order of increasing w_x / π_x.

    Returns (values, masks, upper, complete): the best sets found (values descending, boolean
    masks over the inputs), a proven upper bound on the maximum and whether the search ended
    within ``node_limit`` nodes.
    """
    prior = np.asarray(prior, dtype=float)
    weights = np.asarray(weights, dtype=float)
    growth = math.expm1(epsilon)
    free = np.flatnonzero(prior > 0)
    fixed = np.flatnonzero((prior <= 0) & (weights < 0))
    order = free[np.argsort(weights[free] / prior[free], kind="stable")]
    base_used = float(weights[fixed].sum())
    group = np.unique(prior[order], return_inverse=True)[1].astype(np.int64)
    values, rows, upper, nodes = branch_and_bound(prior[order], weights[order], group, base_used, float(epsilon),
                                                  growth, float(slack), int(node_limit), int(keep))
    found = np.isfinite(values)
    masks = np.zeros((int(found.sum()), prior.size), dtype=bool)
    masks[:, order] = rows[found].astype(bool)
    masks[:, fixed] = True
    return values[found], masks, float(upper), bool(nodes < node_limit)
