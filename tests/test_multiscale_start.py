"""The multiscale start of the network simplex: the refined tree is a spanning tree carrying
a feasible plan, its zero-flow arcs all point at the root after the repair, and solves that
start from it reach the optimum of scipy's dense LP (with coarse levels forced at small sizes)."""

from __future__ import annotations

import numpy as np
import pytest

import mechdesign.transport.multiscale_start as ms
from mechdesign.transport.certified_simplex import solve_by_network_simplex
from mechdesign.transport.ground_cost import GroundCost
from mechdesign.transport.network_simplex import TransportCost, transport_simplex
from mechdesign.transport.network_simplex_tree import build_tree, tree_flows
from tests.test_network_simplex import transport_lp


def _tree(n, m, rows, cols, p, q):
    """(ok, parent, flow) of the tree rooted at rows[0], flows from the masses alone."""
    N = n + m
    arrs = [np.empty(N, np.int64) for _ in range(6)]
    ok = build_tree(n, m, np.asarray(rows, np.int64), np.asarray(cols, np.int64),
                    int(rows[0]), *arrs)
    flow = np.empty(N)
    if ok:
        tree_flows(n, m, p, q, int(rows[0]), arrs[0], arrs[2], flow)
    return ok, arrs[0], flow


def _coarse_tree(p, q, X, Y):
    """Groups of four along the Hilbert orders, and the optimal tree between their centroids."""
    ox, oy = ms.point_orders(GroundCost("euclidean", len(X), len(Y), X, Y))
    gx = np.empty(p.size, np.int64)
    gx[ox] = np.arange(p.size) // 4
    gy = np.empty(q.size, np.int64)
    gy[oy] = np.arange(q.size) // 4
    P, Q = np.bincount(gx, weights=p), np.bincount(gy, weights=q)
    cx = np.stack([np.bincount(gx, weights=p * X[:, d]) for d in range(2)], 1) / P[:, None]
    cy = np.stack([np.bincount(gy, weights=q * Y[:, d]) for d in range(2)], 1) / Q[:, None]
    r = transport_simplex(P, Q, TransportCost.metric("euclidean", cx, cy))
    return ox, gx, P.size, oy, gy, Q.size, r


@pytest.mark.parametrize("seed", range(4))
def test_the_refined_tree_spans_both_sides_and_carries_a_plan_with_the_exact_marginals(seed):
    rng = np.random.default_rng(seed)
    n, m = 97 + 13 * seed, 120 - 9 * seed
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    p, q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(m))
    ox, gx, kx, oy, gy, ky, r = _coarse_tree(p, q, X, Y)
    rows, cols = ms.refine_tree(p, q, ox, gx, kx, oy, gy, ky, r.rows, r.cols, r.flow)
    assert rows.size == n + m - 1
    ok, _, flow = _tree(n, m, rows, cols, p, q)
    assert ok  # n + m − 1 arcs that connect all nodes: a spanning tree
    assert flow.min() >= -1e-15  # the tree's (unique) flows are a feasible plan
    assert len(set(zip(rows.tolist(), cols.tolist(), strict=True))) == n + m - 1  # no arc twice
    # each node's flow is that of the arc to its parent: rebuild the plan, check both marginals
    ok, parent, flow = _tree(n, m, rows, cols, p, q)
    G = np.zeros((n, m))
    for v in np.flatnonzero(np.arange(n + m) != rows[0]):
        i, j = (v, parent[v] - n) if v < n else (parent[v], v - n)
        G[i, j] = max(flow[v], 0.0)
    np.testing.assert_allclose(G.sum(1), p, atol=1e-15)
    np.testing.assert_allclose(G.sum(0), q, atol=1e-15)


def test_zero_flow_arcs_pointing_away_from_the_root_are_replaced_until_none_is_left():
    # uniform masses in groups of four: the staircases tie everywhere, so the refined tree
    # has many zero-flow arcs, some with a demand child
    rng = np.random.default_rng(5)
    n = 256
    X, Y = rng.random((n, 2)), rng.random((n, 2))
    p = q = np.full(n, 1.0 / n)
    ox, gx, kx, oy, gy, ky, r = _coarse_tree(p, q, X, Y)
    rows, cols = ms.refine_tree(p, q, ox, gx, kx, oy, gy, ky, r.rows, r.cols, r.flow)
    ok, parent, flow = _tree(n, n, rows, cols, p, q)
    assert ok
    demand = np.arange(n, 2 * n)
    assert (flow[demand] <= 0).sum() > 0  # the repair has work to do
    rows2, cols2 = ms._strongly_feasible(n, n, p, q, rows.copy(), cols.copy())
    ok, parent, flow = _tree(n, n, rows2, cols2, p, q)
    assert ok and rows2[0] == rows[0]  # same root
    assert (flow[demand] > 0).all()  # strongly feasible: zero arcs have supply children
    assert flow.min() >= -1e-15


@pytest.mark.parametrize("case", ["plane-dirichlet", "plane-uniform", "rectangular",
                                  "manhattan-3d", "haversine", "coincident"])
def test_solves_from_the_multiscale_start_reach_the_dense_lp_optimum(monkeypatch, case):
    monkeypatch.setattr(ms, "MULTISCALE_BASE", 30)  # two or three coarse levels at n ≈ 200
    rng = np.random.default_rng(len(case))
    n, m = (180, 240) if case == "rectangular" else (200, 200)
    if case == "haversine":
        X = np.c_[rng.uniform(40, 60, n), rng.uniform(-10, 20, n)]
        Y = np.c_[rng.uniform(40, 60, m), rng.uniform(-10, 20, m)]
    elif case == "coincident":  # 200 points on 30 sites, the same sites on both sides
        sites = rng.random((30, 2))
        X, Y = sites[rng.integers(0, 30, n)], sites[rng.integers(0, 30, m)]
    else:
        d = 3 if case == "manhattan-3d" else 2
        X, Y = rng.random((n, d)), rng.random((m, d))
    kind = {"manhattan-3d": "manhattan", "haversine": "haversine"}.get(case, "euclidean")
    p, q = ((np.full(n, 1 / n), np.full(m, 1 / m)) if case == "plane-uniform"
            else (rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(m))))
    cost = GroundCost(kind, n, m, X, Y)
    stats: dict = {}
    sol = solve_by_network_simplex(p, q, cost, stats)
    refinements = stats["network_simplex"]["refinements"]
    assert len(refinements) >= 2 and all(r["refined"] for r in refinements)
    C = cost.block(slice(0, n))
    value = float((sol.flow * C[sol.rows, sol.cols]).sum())
    assert value == pytest.approx(transport_lp(p, q, C), rel=1e-9)
    # the duals were mapped back from the points' order: they certify the plan on C itself
    R = C - sol.u[:, None] - sol.v[None, :]
    assert R.min() >= -1e-10 * C.max()
    assert np.abs(R[sol.rows[sol.flow > 0], sol.cols[sol.flow > 0]]).max() <= 1e-10 * C.max()
