r"""A network simplex for the transportation problem, compiled with numba.

The problem (the Kantorovich LP of Kawamoto and Murakami, Local Distribution Obfuscation via
Probability Coupling, Allerton 2019, Def. 7, with float masses):

.. math::
    \min_{\gamma \ge 0} \sum_{i, j} \gamma_{ij}\, c_{ij}
    \quad\text{s.t.}\quad \sum_j \gamma_{ij} = p_i,\; \sum_i \gamma_{ij} = q_j,

is a minimum-cost flow on the complete bipartite graph with n supply nodes 0..n−1, m demand
nodes n..n+m−1 and one uncapacitated arc i → n+j of cost c_ij per pair (arc index i·m + j).
Its bases are the spanning trees of the n + m nodes (Dantzig, *Linear Programming and
Extensions*, 1963, ch. 17; Ahuja, Magnanti & Orlin, *Network Flows*, 1993, ch. 11).

The algorithm, written from those descriptions:

* **Basis** — the spanning tree stored by ``parent``, ``pred`` (the arc joining a node to its
  parent; the tree arcs are exactly the ``pred`` arcs, so whether an arc is basic is an O(1)
  test and no n·m state array is kept), ``thread`` (a cyclic depth-first preorder),
  ``rev_thread``, ``succ_num`` (subtree sizes) and ``last_succ`` (the last node of each subtree
  in preorder, so a subtree is one contiguous run of the thread). The direction of a tree arc
  follows from its child node's side (supply children point to their parent), so no direction
  array is kept either.
* **Potentials** π with reduced cost r_ij = c_ij + π_i − π_{n+j}; in the transportation dual's
  terms u_i = −π_i, v_j = π_{n+j}, r_ij = c_ij − u_i − v_j. Tree arcs have r = 0.
* **Pricing** — block search (Grigoriadis 1986, the rule of LEMON's network simplex as used by
  Bonneel, van de Panne, Paris & Heidrich, "Displacement interpolation using Lagrangian mass
  transport", SIGGRAPH Asia 2011): arcs are scanned cyclically in blocks; the most negative
  reduced cost of the first block holding any r < −tol enters. By default the scan runs over
  a *candidate list* (every row's and column's k = 10 cheapest partners, like the candidate
  lists of Kelly & O'Neill's transportation simplex codes), and when no candidate is
  negative one pass over all n·m pairs adds every row's and column's most negative arc, until
  such a pass finds none (column generation with the network simplex as the restricted
  solver). Measured on 2-D Euclidean problems this needs 20–50 % fewer pivots and a tenth of
  the reduced-cost evaluations per pivot of the plain block search over all arcs (blocks of
  ½√(n·m)), which remains available (``neighbours=0``). Costs are read from a dense matrix or
  computed on the fly from coordinates (Euclidean, Manhattan, haversine), so the largest
  problems need no n × m array; the scans fill a buffer in loops the compiler vectorises and
  then take its minimum.
* **Ratio test** — the entering arc closes a cycle with the tree path through the join (the
  nearest common ancestor, found with ``succ_num``); flow δ moves round it and the leaving arc
  is the blocking arc met *last* when the cycle is traversed from the join in the entering
  arc's direction. This is Cunningham's rule (1976): it keeps the tree *strongly feasible*
  (every zero-flow tree arc points towards the root), so degenerate pivots cannot cycle.
  The North-West staircase start rooted at its first row is strongly feasible (ties in the
  staircase put the row step first, and a row step makes a supply node the child); so is
  the multiscale start (:mod:`mechdesign.transport.multiscale_start`) after its repair.
* **Floating-point masses** — a decreasing arc keeps f − δ ≥ 0 exactly (f ≥ δ implies
  fl(f − δ) ≥ 0), so flows never go negative; the leaving arc is set to exactly 0. Potentials
  are updated incrementally (the moved subtree, or its complement when that is smaller);
  their round-off never lets a tree arc re-enter (it is excluded by the O(1) basis test).
  Before every pass over all pairs the potentials are recomputed from the tree alone (down
  the thread), so that pass, which decides optimality, sees no accumulated drift; pivoting
  resumes if any reduced cost is below −tol = 1e-13·max c. At the end the flows are recomputed
  from the masses by peeling leaves up the reverse thread, so every node but the root balances
  exactly up to one rounding per arc (the root keeps Σp − Σq, ~1e-16).

The compiled kernels live in :mod:`mechdesign.transport.network_simplex_tree` (the basis and
the pivot) and :mod:`mechdesign.transport.network_simplex_pricing` (costs and pricing); this
module holds the cost representation and the driver. Everything here trusts its inputs
(validated in :mod:`mechdesign.transport.coupling`).
"""


from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.transport.network_simplex_pricing import (
    KIND_EUCLIDEAN,
    KIND_HAVERSINE,
    KIND_MANHATTAN,
    KIND_MATRIX,
    candidate_arcs,
    dense_costs,
    scan_min_reduced_cost,
    violating_arcs,
)
from mechdesign.transport.network_simplex_tree import (
    build_tree,
    pivot_loop,
    tree_flows,
    tree_potentials,
)
from mechdesign.transport.north_west_corner import north_west_corner

__all__ = ["NetworkSimplexResult", "TransportCost", "transport_simplex"]

_NONE = np.zeros((1, 1))
_NO_ARCS = np.zeros(0, np.int64)
_NO_COSTS = np.zeros(0)


class TransportCost:
    """A cost c(i, j) in the form the compiled kernels read.

    Build with :meth:`matrix` (an explicit n × m array) or :meth:`metric` ("euclidean",
    "manhattan" over (n, d) and (m, d) coordinates, or "haversine" over [lat, lon] in degrees,
    kilometres on a sphere of radius ``radius``). :meth:`dense` turns a metric into its
    matrix (measured no faster to price than computing the metric on the fly: 2-D Euclidean,
    n = 1000 to 10^4).
    """

    def __init__(self, kind: int, C: np.ndarray, XT: np.ndarray, YT: np.ndarray, scale: float,
                 n: int, m: int):
        self.kind, self.C, self.XT, self.YT, self.scale = kind, C, XT, YT, float(scale)
        self.n, self.m = n, m

    @classmethod
    def matrix(cls, C) -> TransportCost:
        C = np.ascontiguousarray(C, dtype=float)
        if not C.flags.writeable:  # one compiled signature for every matrix
            C = C.copy()
        return cls(KIND_MATRIX, C, _NONE, _NONE, 1.0, *C.shape)

    @classmethod
    def metric(cls, name: str, X, Y, radius: float = 6371.0088) -> TransportCost:
        X = np.asarray(X, dtype=float)
        Y = np.asarray(Y, dtype=float)
        if X.ndim == 1:
            X, Y = X[:, None], Y.reshape(-1, 1)
        if name == "haversine":
            def prep(P):
                lat, lon = np.radians(P[:, 0]), np.radians(P[:, 1])
                return np.ascontiguousarray(np.stack([lat, lon, np.cos(lat)]))
            return cls(KIND_HAVERSINE, _NONE, prep(X), prep(Y), 2 * radius, len(X), len(Y))
        kind = {"euclidean": KIND_EUCLIDEAN, "manhattan": KIND_MANHATTAN}[name]
        return cls(kind, _NONE, np.ascontiguousarray(X.T), np.ascontiguousarray(Y.T), 1.0,
                   len(X), len(Y))

    def dense(self) -> TransportCost:
        """The same cost as an explicit matrix (8·n·m bytes)."""
        if self.kind == KIND_MATRIX:
            return self
        return TransportCost.matrix(dense_costs(self.kind, self.C, self.XT, self.YT, self.scale,
                                           self.n, self.m))

    def max_estimate(self) -> float:
        """max |c| for a matrix; an upper estimate (the bounding box's diameter) for a metric."""
        if self.kind == KIND_MATRIX:
            return float(np.abs(self.C).max()) if self.C.size else 0.0
        if self.kind == KIND_HAVERSINE:
            return math.pi * self.scale / 2
        ext = np.maximum(self.XT.max(1), self.YT.max(1)) - np.minimum(self.XT.min(1),
                                                                      self.YT.min(1))
        if self.kind == KIND_EUCLIDEAN:
            return float(np.sqrt((ext ** 2).sum()))
        return float(ext.sum())

    def args(self):
        return self.kind, self.C, self.XT, self.YT, self.scale

    def min_reduced_cost(self, u, v) -> float:
        """min over all pairs of c_ij − u_i − v_j (compiled, no matrix is formed)."""
        pi = np.r_[-np.asarray(u, dtype=float), np.asarray(v, dtype=float)]
        return float(scan_min_reduced_cost(*self.args(), self.n, self.m, pi))


class NetworkSimplexResult:
    """Outcome of :func:`transport_simplex` on masses p, q (n and m entries).

    Attributes
    ----------
    rows, cols, flow : (n + m − 1,) arrays
        The basic arcs (i, j) and their flows (clipped at 0; all other arcs carry 0).
    u, v : (n,), (m,) arrays
        Dual potentials from the final tree: c_ij − u_i − v_j = 0 on basic arcs.
    min_reduced_cost : float
        min over all n·m arcs of c_ij − u_i − v_j (computed with these u, v).
    optimal : bool
        ``min_reduced_cost ≥ −tol`` (the simplex's own stopping test).
    tol : float
    pivots, degenerate : int
        Pivots done, of which degenerate (δ = 0).
    scanned : int
        Reduced costs evaluated by the block search.
    rounds : int
        Pricing passes over all arcs with freshly recomputed potentials (≥ 1).
    imbalance : float
        Σp − Σq as left at the tree's root by the flow recomputation.
    seconds : float
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return (f"NetworkSimplexResult(optimal={self.optimal}, pivots={self.pivots}, "
                f"min_reduced_cost={self.min_reduced_cost:.3g})")


def transport_simplex(p: np.ndarray, q: np.ndarray, cost: TransportCost, *,
                      start_rows: np.ndarray | None = None, start_cols: np.ndarray | None = None,
                      tol: float | None = None, block: float = 0.5, neighbours: int = 10,
                      list_block: float = 0.5,
                      max_pivots: int | None = None) -> NetworkSimplexResult:
    r"""Solve the transportation problem min Σ γ c, γ1 = p, γᵀ1 = q, γ ≥ 0 exactly.

    Parameters
    ----------
    p, q : (n,), (m,) float arrays
        Non-negative masses with equal totals (up to round-off).
    cost : TransportCost
    start_rows, start_cols : (n + m − 1,) int arrays, optional
        The arcs of a starting spanning tree, rooted at the first arc's row, that must be
        strongly feasible from that root (every zero-flow arc joins a supply node to its
        parent): for example a North-West staircase over any orders of the rows and the
        columns (the row step first on ties), or the tree of
        :func:`mechdesign.transport.multiscale_start.multiscale_start`. Default: the
        staircase in index order.
    tol : float, optional
        An arc enters only if its reduced cost is < −tol; the final all-pairs check uses the
        same threshold. Default 1e-13 · max |c|.
    block : float, default 0.5
        Pricing block of the sweep over all arcs: ⌈block·√(n·m)⌉ arcs (at least 16).
    neighbours : int, default 10
        k > 0: pivot over a candidate list, first every row's k cheapest columns and every
        column's k cheapest rows (one pass over all pairs), priced in blocks of
        ⌈list_block·√(#candidates)⌉; when no candidate has r < −tol, a pass over all pairs
        with freshly recomputed potentials adds every row's and every column's most negative
        arc, until that pass finds none. k = 0: block search over all n·m arcs, then the
        same all-pairs check. Either way optimality is decided over all pairs.
    list_block : float, default 0.5
    max_pivots : int, optional
        Safeguard; default 100·(n + m)·⌈log2(n + m)⌉ + 10^5. Reaching it leaves
        ``optimal`` False.

    Returns
    -------
    NetworkSimplexResult

    Examples
    --------
    >>> r = transport_simplex(np.array([0.5, 0.5]), np.array([0.5, 0.5]),
    ...                       TransportCost.matrix([[0.0, 1.0], [1.0, 0.0]]))
    >>> r.optimal, float((r.flow * np.array([[0.0, 1.0], [1.0, 0.0]])[r.rows, r.cols]).sum())
    (True, 0.0)
    """
    t0 = time.perf_counter()
    p = np.ascontiguousarray(p, dtype=float)
    q = np.ascontiguousarray(q, dtype=float)
    n, m = p.size, q.size
    N = n + m
    args = cost.args()
    if start_rows is None:
        start_rows, start_cols = north_west_corner(p, q)[:2]
    root, tree = _starting_tree(p, q, args, start_rows, start_cols)
    parent, pred, thread, _, _, _, pi, flow, stats = tree
    if tol is None:
        tol = 1e-13 * max(cost.max_estimate(), 1e-300)
    if max_pivots is None:
        max_pivots = 100 * N * max(1, math.ceil(math.log2(N))) + 100_000
    if neighbours > 0:
        pivots, rounds, rmin = _pivot_over_candidates(args, n, m, root, tree, tol, max_pivots,
                                                      int(neighbours), list_block)
    else:
        sweep = max(16, math.ceil(block * math.sqrt(n * m)))
        pivots, rounds, rmin = _pivot_over_all_arcs(args, n, m, root, tree, tol, max_pivots,
                                                    sweep)
    imbalance = tree_flows(n, m, p, q, root, parent, thread, flow)
    nodes = np.flatnonzero(pred >= 0)
    arcs = pred[nodes]
    return NetworkSimplexResult(
        rows=arcs // m, cols=arcs % m, flow=np.maximum(flow[nodes], 0.0),
        u=-pi[:n].copy(), v=pi[n:].copy(), min_reduced_cost=float(rmin),
        optimal=bool(rmin >= -tol), tol=float(tol), pivots=int(pivots),
        degenerate=int(stats[0]), scanned=int(stats[1]), rounds=rounds,
        imbalance=float(imbalance), seconds=time.perf_counter() - t0)


def _starting_tree(p, q, args, start_rows, start_cols):
    """The basis of the starting arcs: (root, tree) with tree = (parent, pred, thread,
    rev_thread, succ_num, last_succ, pi, flow, stats), potentials and flows computed from it."""
    n, m = p.size, q.size
    N = n + m
    er = np.ascontiguousarray(start_rows, dtype=np.int64)
    ec = np.ascontiguousarray(start_cols, dtype=np.int64)
    if er.size != N - 1:
        raise ValueError(f"a starting tree needs n + m - 1 = {N - 1} arcs, got {er.size}")
    root = int(er[0])
    idx = np.int32 if n * m < 2**31 else np.int64
    parent = np.empty(N, idx)
    pred = np.empty(N, idx)
    thread = np.empty(N, idx)
    rev_thread = np.empty(N, idx)
    succ_num = np.empty(N, idx)
    last_succ = np.empty(N, idx)
    if not build_tree(n, m, er, ec, root, parent, pred, thread, rev_thread, succ_num, last_succ):
        raise ValueError("the starting arcs do not form a spanning tree")
    pi = np.empty(N)
    flow = np.empty(N)
    tree_potentials(*args, n, m, root, parent, pred, thread, pi)
    tree_flows(n, m, p, q, root, parent, thread, flow)
    np.maximum(flow, 0.0, out=flow)  # a zero cell may come out as −1e-18
    stats = np.zeros(4, np.int64)
    return root, (parent, pred, thread, rev_thread, succ_num, last_succ, pi, flow, stats)


def _pivot_over_candidates(args, n, m, root, tree, tol, max_pivots, neighbours, list_block):
    """Pivot over a growing candidate list; a pass over all pairs (with fresh potentials) adds
    every row's and column's most negative arc until it finds none below −tol.
    Returns (pivots, rounds, min reduced cost)."""
    parent, pred, thread, pi = tree[0], tree[1], tree[2], tree[6]
    pivots = 0
    rounds = 0
    crow, ccol, ccost = candidate_arcs(*args, n, m, neighbours)
    while True:
        rounds += 1
        lblock = max(16, math.ceil(list_block * math.sqrt(crow.size)))
        pivots += pivot_loop(*args, n, m, lblock, tol, max_pivots - pivots, *tree, crow,
                             ccol, ccost)
        tree_potentials(*args, n, m, root, parent, pred, thread, pi)
        vr, vc, vcost, rmin = violating_arcs(*args, n, m, pi, tol)
        if vr.size == 0 or pivots >= max_pivots or rounds >= 1000:
            break
        crow = np.concatenate((crow, vr))
        ccol = np.concatenate((ccol, vc))
        ccost = np.concatenate((ccost, vcost))
    if vr.size == 0:
        rmin = scan_min_reduced_cost(*args, n, m, pi)  # the exact minimum for the record
    return pivots, rounds, rmin


def _pivot_over_all_arcs(args, n, m, root, tree, tol, max_pivots, sweep):
    """Block search over all n·m arcs, then fresh potentials (no drift from incremental
    updates) and every arc priced, until none is below −tol; the incremental flows are kept
    while pivoting (the tree stays strongly feasible). Returns (pivots, rounds, min reduced
    cost)."""
    parent, pred, thread, pi = tree[0], tree[1], tree[2], tree[6]
    pivots = 0
    rounds = 0
    while True:
        rounds += 1
        pivots += pivot_loop(*args, n, m, sweep, tol, max_pivots - pivots, *tree, _NO_ARCS,
                             _NO_ARCS, _NO_COSTS)
        tree_potentials(*args, n, m, root, parent, pred, thread, pi)
        rmin = scan_min_reduced_cost(*args, n, m, pi)
        if rmin >= -tol or pivots >= max_pivots or rounds >= 20:
            break
    return pivots, rounds, rmin
