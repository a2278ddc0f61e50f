"""The exact transportation LP for general costs by column generation over HiGHS.

HiGHS (highspy, no modelling layer) solves the LP restricted to a set of candidate pairs;
then every pair's reduced cost c[x, y] − u[x] − v[y] is priced over *all* n·m pairs in
bounded-memory blocks, and each row's and column's most negative pair joins the candidates,
until no pair is below −tol. The coarse-to-fine variant clusters both sides in fours along a
k-d order, solves the problem between cluster centroids, and starts the fine LP from the
disaggregated coarse plan (a feasible support) and the c-transform of the coarse duals.

This is the fallback of the network simplex (:mod:`mechdesign.transport.certified_simplex`):
it serves callable costs too large to tabulate and finishes any simplex plan whose all-pairs
certificate fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from mechdesign.transport.ground_cost import GroundCost
from mechdesign.transport.north_west_corner import north_west_corner
from mechdesign.transport.point_orders import kd_order

__all__ = ["TransportSolution", "solve_by_column_generation", "solve_multiscale"]

_BASE = 250 * 250  # multiscale: solve directly below this many pairs
_TOP = 4  # candidate columns per row from the coarse level's potentials
_CLUSTER = 4  # points per cluster between levels
_INF = highspy.kHighsInf


class _RestrictedLP:
    """min Σ c_k γ_k over candidate pairs k = (r_k, c_k), row sums p, column sums q, γ ≥ 0."""

    def __init__(self, p, q, rows, cols, costs):
        self.n, self.m = p.size, q.size
        self.rows, self.cols, self.costs = rows, cols, costs
        self.keys = np.unique(rows * self.m + cols)
        h = highspy.Highs()
        h.silent()
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        lp = highspy.HighsLp()
        k = costs.size
        lp.num_col_ = k
        lp.num_row_ = self.n + self.m
        lp.col_cost_ = costs
        lp.col_lower_ = np.zeros(k)
        lp.col_upper_ = np.full(k, _INF)
        rhs = np.r_[p, q]
        lp.row_lower_ = rhs
        lp.row_upper_ = rhs
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.arange(0, 2 * k + 1, 2, dtype=np.int32)
        lp.a_matrix_.index_ = np.c_[rows, self.n + cols].ravel().astype(np.int32)
        lp.a_matrix_.value_ = np.ones(2 * k)
        h.passModel(lp)
        self.h = h
        self.iterations = 0
        self.solves = 0

    def solve(self):
        """Solve (warm-started after the first time); None if the candidates admit no plan."""
        self.h.run()
        status = self.h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS returned {self.h.modelStatusToString(status)} on a "
                               "transportation LP")
        info = self.h.getInfo()
        self.iterations += int(info.simplex_iteration_count)
        self.solves += 1
        self.h.setOptionValue("presolve", "off")  # later solves warm-start from the basis
        sol = self.h.getSolution()
        y = np.asarray(sol.row_dual)
        return y[:self.n].copy(), y[self.n:].copy()

    def add(self, r, c, cost_of) -> int:
        keys = np.unique(r * self.m + c)
        keys = keys[~np.isin(keys, self.keys, assume_unique=True)]
        if keys.size == 0:
            return 0
        self.keys = np.union1d(self.keys, keys)
        r, c = keys // self.m, keys % self.m
        cc = cost_of(r, c)
        k = keys.size
        self.h.addCols(k, cc, np.zeros(k), np.full(k, _INF), 2 * k,
                       np.arange(0, 2 * k, 2, dtype=np.int32),
                       np.c_[r, self.n + c].ravel().astype(np.int32), np.ones(2 * k))
        self.rows = np.r_[self.rows, r]
        self.cols = np.r_[self.cols, c]
        self.costs = np.r_[self.costs, cc]
        return k

    def flows(self):
        x = np.asarray(self.h.getSolution().col_value)
        return np.maximum(x, 0.0)


def _price(cost: GroundCost, u, v, tol):
    """One pass over all pairs: the most negative reduced cost of every row and column.

    Returns (rows, cols) of the pairs with reduced cost < −tol (the best of every row and of
    every column) and the minimum reduced cost over all pairs.
    """
    m = cost.m
    rr, cc = [], []
    cmin = np.full(m, np.inf)
    carg = np.zeros(m, dtype=np.int64)
    ar = np.arange(m)
    rmin = np.inf
    for s, e in cost.chunks():
        R = cost.block(slice(s, e))
        R -= u[s:e, None]
        R -= v[None, :]
        j = R.argmin(axis=1)
        val = R[np.arange(e - s), j]
        ok = val < -tol
        rr.append(np.arange(s, e)[ok])
        cc.append(j[ok])
        rmin = min(rmin, float(val.min()))
        cv = R.min(axis=0)
        better = np.flatnonzero((cv < cmin) & (cv < -tol))
        if better.size:
            cmin[better] = cv[better]
            carg[better] = R[:, better].argmin(axis=0) + s
    ok = cmin < -tol
    rr.append(carg[ok])
    cc.append(ar[ok])
    return np.concatenate(rr), np.concatenate(cc), rmin


def _ctransform_pass(cost: GroundCost, u, *, top=None):
    """Two passes that turn a guess u into candidate pairs.

    Pass 1: v = min_i (c − u) per column (the c-transform) and each column's best row.
    Pass 2: each row's `top` columns with the smallest c[i, :] − v (the ranking within a row
    does not depend on u[i]) and the refreshed u = min_j (c − v).
    Returns (u, v, rows, cols).
    """
    m = cost.m
    v = np.full(m, np.inf)
    cbest = np.zeros(m, dtype=np.int64)
    ar = np.arange(m)
    for s, e in cost.chunks():
        R = cost.block(slice(s, e))
        R -= u[s:e, None]
        i = R.argmin(axis=0)
        val = R[i, ar]
        better = val < v
        v[better] = val[better]
        cbest[better] = i[better] + s
    u2 = np.empty(cost.n)
    rows, cols = [], []
    k = min(_TOP if top is None else top, m)
    for s, e in cost.chunks():
        R = cost.block(slice(s, e))
        R -= v[None, :]
        J = np.argpartition(R, k - 1, axis=1)[:, :k] if k < m else np.tile(ar, (e - s, 1))
        val = np.take_along_axis(R, J, 1)
        u2[s:e] = val.min(axis=1)
        rows.append(np.repeat(np.arange(s, e), J.shape[1]))
        cols.append(J.ravel())
    rows.append(cbest)
    cols.append(ar)
    return u2, v, np.concatenate(rows), np.concatenate(cols)


def _cluster(P: np.ndarray, size: int | None = None):
    size = _CLUSTER if size is None else size
    order = kd_order(P)
    g = np.empty(P.shape[0], dtype=np.int64)
    g[order] = np.arange(P.shape[0]) // size
    return g, order


def _block_nw(gC_rows, gC_cols, gx, p, gy, q):
    """Disaggregate a coarse plan: inside every coarse cell (I, J) a North-West corner plan of
    the members of I and J with masses proportional to p and q. The union is a feasible fine
    plan, so its support makes the restricted LP feasible. Returns its (rows, cols)."""
    # member lists of every cluster, padded
    def members(g, w):
        k = int(g.max()) + 1
        order = np.argsort(g, kind="stable")
        gs = g[order]
        starts = np.searchsorted(gs, np.arange(k))
        cnt = np.bincount(g, minlength=k)
        width = int(cnt.max())
        M = np.full((k, width), -1, dtype=np.int64)
        slot = np.arange(g.size) - starts[gs]
        M[gs, slot] = order
        W = np.where(M >= 0, w[np.maximum(M, 0)], 0.0)
        tot = W.sum(axis=1, keepdims=True)
        W = np.where(tot > 0, W / np.where(tot > 0, tot, 1.0), 0.0)
        F = np.minimum(np.cumsum(W, axis=1), 1.0)
        F[np.arange(width)[None, :] >= (cnt - 1)[:, None]] = 1.0  # last real member closes at 1
        return M, F

    MX, FX = members(gx, p)
    MY, FY = members(gy, q)
    Fx, Fy = FX[gC_rows], FY[gC_cols]
    br = np.sort(np.c_[Fx, Fy], axis=1)  # breakpoints of each block's staircase
    wx, wy = Fx.shape[1], Fy.shape[1]
    ia = np.minimum((Fx[:, None, :] < br[:, :, None]).sum(axis=2), wx - 1)
    ib = np.minimum((Fy[:, None, :] < br[:, :, None]).sum(axis=2), wy - 1)
    fr = np.take_along_axis(MX[gC_rows], ia, 1)
    fc = np.take_along_axis(MY[gC_cols], ib, 1)
    ok = (fr >= 0) & (fc >= 0)
    return fr[ok], fc[ok]


@dataclass
class TransportSolution:
    """An optimal plan on positive masses (totals 1) with its dual potentials: the pairs
    (rows, cols) and their flows, u and v with c − u − v ≥ min_rc over all pairs, and the
    solver's statistics."""

    rows: np.ndarray
    cols: np.ndarray
    flow: np.ndarray
    u: np.ndarray
    v: np.ndarray
    min_rc: float
    stats: dict


def solve_by_column_generation(p, q, cost: GroundCost, *, rows0=None, cols0=None, u0=None,
                               stats=None):
    """Exact transportation LP over all pairs of `cost` with positive masses p, q (totals 1).

    Column generation: HiGHS on a restricted set of pairs, then full pricing in chunks, adding
    each row's and each column's most negative reduced cost, until none is < −tol.
    """
    n, m = p.size, q.size
    stats = {} if stats is None else stats
    tol = 1e-10 * cost.scale()
    if rows0 is None:
        rows0, cols0 = np.zeros(0, np.int64), np.zeros(0, np.int64)
    cand_r = [rows0]
    cand_c = [cols0]
    if u0 is not None:
        _, _, r, c = _ctransform_pass(cost, u0)
        cand_r.append(r)
        cand_c.append(c)
    elif n * m <= 4 * _BASE or rows0.size == 0:
        # cheapest few columns of every row and row of every column, and a feasible staircase
        k = min(8, m)
        kr = min(8, n)
        colbest_val = np.full((0, m), np.inf)
        colbest_row = np.zeros((0, m), dtype=np.int64)
        for s, e in cost.chunks():
            C = cost.block(slice(s, e))
            J = np.argpartition(C, k - 1, axis=1)[:, :k] if k < m else np.tile(np.arange(m), (e - s, 1))
            cand_r.append(np.repeat(np.arange(s, e), J.shape[1]))
            cand_c.append(J.ravel())
            kk = min(kr, e - s)
            I = np.argpartition(C, kk - 1, axis=0)[:kk] if kk < e - s else np.tile(np.arange(e - s)[:, None], (1, m))
            colbest_val = np.r_[colbest_val, np.take_along_axis(C, I, 0)]
            colbest_row = np.r_[colbest_row, I + s]
            if colbest_val.shape[0] > kr:
                o = np.argpartition(colbest_val, kr - 1, axis=0)[:kr]
                colbest_val = np.take_along_axis(colbest_val, o, 0)
                colbest_row = np.take_along_axis(colbest_row, o, 0)
        cand_r.append(colbest_row.ravel())
        cand_c.append(np.tile(np.arange(m), colbest_row.shape[0]))
        if rows0.size == 0:
            i, j, _ = north_west_corner(p, q)
            cand_r.append(i)
            cand_c.append(j)
    rows = np.concatenate(cand_r).astype(np.int64)
    cols = np.concatenate(cand_c).astype(np.int64)
    keys = np.unique(rows * m + cols)
    rows, cols = keys // m, keys % m
    lp = _RestrictedLP(p, q, rows, cols, cost.pairs(rows, cols))
    rounds = 0
    while True:
        duals = lp.solve()
        if duals is None:
            # the candidate set admits no coupling (round-off in a coarse plan): add a
            # North-West staircase, which always does
            if cost.can_coarsen():
                ox, oy = kd_order(cost.embed("x")), kd_order(cost.embed("y"))
                i, j, _ = north_west_corner(p[ox], q[oy])
                i, j = ox[i], oy[j]
            else:
                i, j, _ = north_west_corner(p, q)
            if lp.add(i, j, cost.pairs) == 0:
                raise RuntimeError("transportation LP infeasible with a feasible staircase")
            continue
        u, v = duals
        r, c, rmin = _price(cost, u, v, tol)
        rounds += 1
        if r.size == 0:
            break
        if lp.add(r, c, cost.pairs) == 0:
            break  # violations only on columns HiGHS already holds (its own tolerance)
        if rounds > 10_000:  # pragma: no cover - a safeguard, never observed
            raise RuntimeError("column generation did not converge")
    flow = lp.flows()
    stats.setdefault("levels", []).append(
        {"n": n, "m": m, "columns": int(lp.rows.size), "rounds": rounds,
         "simplex_iterations": lp.iterations})
    return TransportSolution(lp.rows, lp.cols, flow, u, v, rmin, stats)


def solve_multiscale(p, q, cost: GroundCost, stats):
    """Coarse-to-fine: cluster both sides in 4s (k-d order), solve the coarse problem between
    centroids, start the fine LP from its disaggregated plan and c-transformed duals."""
    n, m = p.size, q.size
    if n * m <= _BASE or not cost.can_coarsen() or min(n, m) < 16:
        if cost.can_coarsen() and min(n, m) >= 2:
            # a locality-preserving feasible start: North-West corner along k-d orders
            ox, oy = kd_order(cost.embed("x")), kd_order(cost.embed("y"))
            i, j, _ = north_west_corner(p[ox], q[oy])
            return solve_by_column_generation(p, q, cost, rows0=ox[i], cols0=oy[j],
                                              stats=stats)
        return solve_by_column_generation(p, q, cost, stats=stats)
    gx, _ = _cluster(cost.embed("x"))
    gy, _ = _cluster(cost.embed("y"))
    P = np.bincount(gx, weights=p)
    Q = np.bincount(gy, weights=q)
    coarse = cost.coarsened(gx, p, gy, q)
    # drop clusters without mass from the coarse problem
    kp, kq = np.flatnonzero(P > 0), np.flatnonzero(Q > 0)
    sub = coarse.restricted(kp, kq)
    sol = solve_multiscale(P[kp] / P[kp].sum(), Q[kq] / Q[kq].sum(), sub, stats)
    keep = sol.flow > 0
    cr, cc = kp[sol.rows[keep]], kq[sol.cols[keep]]
    fr, fc = _block_nw(cr, cc, gx, p, gy, q)
    uC = np.zeros(P.size)
    uC[kp] = sol.u
    # clusters without mass get the c-transform anyway: only a starting guess
    return solve_by_column_generation(p, q, cost, rows0=fr, cols0=fc, u0=uC[gx],
                                      stats=stats)
