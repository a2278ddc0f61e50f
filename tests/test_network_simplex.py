"""The transportation network simplex (mechdesign.transport.network_simplex) against independent answers:
scipy's linprog on the dense LP, duals re-checked on the dense matrix, and the spanning-tree
invariants re-derived from ``parent`` alone after every single pivot."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

import mechdesign.transport.network_simplex as ns
from mechdesign.transport import certified_simplex
from mechdesign.transport.coupling import coupling, coupling_certificate
from mechdesign.transport.ground_cost import GroundCost
from mechdesign.transport.network_simplex import TransportCost, transport_simplex
from mechdesign.transport.network_simplex_pricing import candidate_arcs
from mechdesign.transport.network_simplex_tree import (
    build_tree,
    pivot_loop,
    tree_flows,
    tree_potentials,
)
from mechdesign.transport.north_west_corner import north_west_corner
from mechdesign.transport.point_orders import kd_order

R_EARTH = 6371.0088


def transport_lp(a, b, C):
    """The dense transportation LP by scipy's linprog (HiGHS): the reference optimum."""
    n, m = C.shape
    A = sp.vstack([sp.kron(sp.eye(n), np.ones((1, m))), sp.kron(np.ones((1, n)), sp.eye(m))])
    res = linprog(C.ravel(), A_eq=A.tocsr(), b_eq=np.r_[a, b], bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def plan(r, n, m):
    G = np.zeros((n, m))
    np.add.at(G, (r.rows, r.cols), r.flow)
    return G


def check_solution(r, a, b, C, *, rel=1e-9):
    """Cost = linprog's, marginals to 1e-12, and the duals certify it on the dense matrix."""
    n, m = C.shape
    G = plan(r, n, m)
    assert r.optimal
    assert G.min() >= 0
    np.testing.assert_allclose(G.sum(1), a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G.sum(0), b, rtol=0, atol=1e-12)
    cost = (G * C).sum()
    ref = transport_lp(a, b, C)
    assert cost == pytest.approx(ref, rel=rel, abs=1e-12 * np.abs(C).max())
    R = C - r.u[:, None] - r.v[None, :]
    scale = np.abs(C).max()
    assert R.min() >= -1e-10 * scale  # dual feasible over all n·m pairs
    assert np.abs(R[G > 0]).max() <= 1e-10 * scale  # complementary slackness
    assert a @ r.u + b @ r.v == pytest.approx(cost, rel=1e-10, abs=1e-12 * scale)
    return cost


def rand_dist(rng, n, zeros=0):
    w = rng.random(n)
    if zeros:
        w[rng.choice(n, zeros, replace=False)] = 0.0
    return w / w.sum()


# ---------------------------------------------------------------- optimum vs linprog


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("neighbours", [0, 10])
def test_random_cost_matrices_reach_the_linprog_optimum_rectangular_and_with_zero_masses(
        seed, neighbours):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 40, size=2)
    a = rand_dist(rng, n, zeros=min(seed % 3, n - 1))
    b = rand_dist(rng, m, zeros=min((seed + 1) % 3, m - 1))
    C = rng.random((n, m)) * 3
    check_solution(transport_simplex(a, b, TransportCost.matrix(C), neighbours=neighbours),
                   a, b, C)


def test_integer_costs_with_many_ties_and_integer_like_masses():
    rng = np.random.default_rng(20)
    for n, m in [(12, 12), (20, 15), (7, 30)]:
        C = rng.integers(0, 4, size=(n, m)).astype(float)  # heavy ties among reduced costs
        a = rng.integers(1, 5, size=n).astype(float)
        b = np.zeros(m)
        # degenerate masses: equal totals built from small integers, so partial sums coincide
        b[:] = np.bincount(rng.integers(0, m, size=int(a.sum())), minlength=m)
        a, b = a / a.sum(), b / b.sum()
        check_solution(transport_simplex(a, b, TransportCost.matrix(C)), a, b, C)


def test_costs_spanning_eight_decades_reach_the_linprog_optimum():
    rng = np.random.default_rng(21)
    n, m = 25, 30
    C = 10.0 ** rng.uniform(-4, 4, size=(n, m))
    a, b = rand_dist(rng, n), rand_dist(rng, m)
    r = transport_simplex(a, b, TransportCost.matrix(C))
    cost = check_solution(r, a, b, C, rel=1e-7)  # linprog's own tolerances are ~1e-7
    # our own gap is far tighter: primal − dual over the dense matrix
    R = C - r.u[:, None] - r.v[None, :]
    assert cost - (a @ r.u + b @ r.v + min(0.0, R.min())) <= 1e-12 * C.max()


@pytest.mark.parametrize("name", ["euclidean", "manhattan", "haversine"])
def test_metrics_computed_on_the_fly_reach_the_optimum_of_their_dense_matrix(name):
    rng = np.random.default_rng(22)
    n, m = 40, 35
    if name == "haversine":
        X = np.c_[rng.uniform(-70, 70, n), rng.uniform(-180, 180, n)]
        Y = np.c_[rng.uniform(-70, 70, m), rng.uniform(-180, 180, m)]
    else:
        X, Y = rng.random((n, 3)), rng.random((m, 3))
    a, b = rand_dist(rng, n), rand_dist(rng, m)
    C = GroundCost(name, n, m, X, Y).block(slice(0, n))
    r = transport_simplex(a, b, TransportCost.metric(name, X, Y, radius=R_EARTH))
    check_solution(r, a, b, C)


@pytest.mark.parametrize("name, d", [("euclidean", 2), ("euclidean", 3), ("manhattan", 2),
                                     ("haversine", 2)])
def test_compiled_cost_kernels_equal_the_numpy_cost_blocks(name, d):
    rng = np.random.default_rng(23)
    n, m = 17, 300
    X, Y = rng.random((n, d)) * 50, rng.random((m, d)) * 50
    ref = GroundCost(name, n, m, X, Y).block(slice(0, n))
    tc = TransportCost.metric(name, X, Y, radius=R_EARTH)
    np.testing.assert_allclose(tc.dense().C, ref, rtol=1e-15, atol=0)
    u, v = rng.normal(size=n), rng.normal(size=m)
    assert tc.min_reduced_cost(u, v) == pytest.approx((ref - u[:, None] - v[None, :]).min(),
                                                      rel=1e-14)


def test_single_row_or_column_is_the_only_coupling():
    rng = np.random.default_rng(24)
    b = rand_dist(rng, 9)
    C = rng.random((1, 9))
    r = transport_simplex(np.ones(1), b, TransportCost.matrix(C))
    np.testing.assert_allclose(plan(r, 1, 9)[0], b, atol=1e-15)
    r = transport_simplex(b, np.ones(1), TransportCost.matrix(C.T))
    np.testing.assert_allclose(plan(r, 9, 1)[:, 0], b, atol=1e-15)


# ---------------------------------------------------------------- the tree, pivot by pivot


def check_tree(n, m, parent, pred, thread, rev_thread, succ_num, last_succ, flow, pi, C, a, b):
    """Re-derive every index from ``parent`` alone and compare; then flows and potentials."""
    N = n + m
    root = int(np.flatnonzero(parent < 0)[0])
    assert (parent < 0).sum() == 1
    order = [root]
    v = thread[root]
    while v != root:
        order.append(int(v))
        v = thread[v]
        assert len(order) <= N
    assert sorted(order) == list(range(N))  # the thread is one cycle through every node
    assert all(rev_thread[thread[v]] == v for v in range(N))
    pos = np.empty(N, int)
    pos[order] = np.arange(N)
    size = np.ones(N, int)
    for v in reversed(order[1:]):
        assert pos[parent[v]] < pos[v]  # preorder: parents first
        size[parent[v]] += size[v]
    for v in order[1:]:  # subtrees are contiguous runs of the thread
        w = parent[v]
        assert pos[v] <= pos[w] + size[w] - 1
    np.testing.assert_array_equal(succ_num, size)
    np.testing.assert_array_equal(last_succ, np.array(order)[pos + size - 1])
    nodes = np.array(order[1:])
    i, j = pred[nodes] // m, pred[nodes] % m
    assert np.all(((i == nodes) & (n + j == parent[nodes])) |
                  ((n + j == nodes) & (i == parent[nodes])))
    f = flow[nodes]
    assert f.min() >= 0
    # strongly feasible: every zero-flow arc points towards the root (a supply child)
    assert np.all(nodes[f == 0] < n)
    G = np.zeros((n, m))
    G[i, j] = f
    np.testing.assert_allclose(G.sum(1), a, atol=1e-12)
    np.testing.assert_allclose(G.sum(0), b, atol=1e-12)
    np.testing.assert_allclose(C[i, j] + pi[i] - pi[n + j], 0.0, atol=1e-12)
    return (G * C).sum()


def run_stepwise(a, b, C, start=None, block=7, neighbours=0):
    """Pivot one at a time through the compiled kernels, checking the tree after each (with
    ``neighbours`` > 0, over that candidate list first, then over all arcs)."""
    n, m = C.shape
    N = n + m
    tc = TransportCost.matrix(C)
    er, ec = (north_west_corner(a, b)[:2] if start is None else start)
    arr = {k: np.empty(N, np.int32) for k in
           ("parent", "pred", "thread", "rev_thread", "succ_num", "last_succ")}
    assert build_tree(n, m, np.asarray(er, np.int64), np.asarray(ec, np.int64), int(er[0]),
                          arr["parent"], arr["pred"], arr["thread"], arr["rev_thread"],
                          arr["succ_num"], arr["last_succ"])
    pi, flow = np.empty(N), np.empty(N)
    tree_potentials(*tc.args(), n, m, int(er[0]), arr["parent"], arr["pred"], arr["thread"], pi)
    tree_flows(n, m, a, b, int(er[0]), arr["parent"], arr["thread"], flow)
    np.maximum(flow, 0.0, out=flow)
    stats = np.zeros(4, np.int64)
    costs = [check_tree(n, m, *arr.values(), flow, pi, C, a, b)]
    lists = [candidate_arcs(*tc.args(), n, m, neighbours)] if neighbours else []
    lists.append((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)))
    for arcs in lists:
        for _ in range(20 * N * N):
            done = pivot_loop(*tc.args(), n, m, block, 1e-13, 1, *arr.values(), pi, flow,
                                  stats, *arcs)
            if done == 0:
                break
            costs.append(check_tree(n, m, *arr.values(), flow, pi, C, a, b))
        else:
            raise AssertionError("no optimum after 20·N² pivots")
    return np.array(costs), int(stats[0])


@pytest.mark.parametrize("seed", range(6))
def test_every_pivot_keeps_a_valid_strongly_feasible_tree_and_never_raises_the_cost(seed):
    rng = np.random.default_rng(30 + seed)
    n, m = rng.integers(2, 25, size=2)
    a, b = rand_dist(rng, n), rand_dist(rng, m)
    C = rng.random((n, m))
    costs, _ = run_stepwise(a, b, C, neighbours=3 * (seed % 2))
    assert np.all(np.diff(costs) <= 1e-15)
    assert costs[-1] == pytest.approx(transport_lp(a, b, C), rel=1e-9)


def test_uniform_masses_with_tied_costs_are_heavily_degenerate_but_do_not_cycle():
    # n = m with uniform masses: the staircase has n − 1 zero cells and almost every pivot is
    # degenerate; integer costs add ties among reduced costs. Cunningham's leaving rule keeps
    # the tree strongly feasible after every pivot, which rules out cycling.
    rng = np.random.default_rng(40)
    n = 30
    a = b = np.full(n, 1.0 / n)
    C = rng.integers(0, 3, size=(n, n)).astype(float)
    for k in (0, 4):  # sweeping all arcs, or a candidate list first
        costs, degenerate = run_stepwise(a, b, C, neighbours=k)
        assert degenerate > len(costs) // 2  # the case is indeed mostly degenerate pivots
        assert costs[-1] == pytest.approx(transport_lp(a, b, C), rel=1e-9, abs=1e-12)
    # the same through the public driver, with its default block and a k-d start
    rng = np.random.default_rng(41)
    X, Y = rng.random((200, 2)), rng.random((200, 2))
    u = np.full(200, 1 / 200)
    ox, oy = kd_order(X), kd_order(Y)
    i, j, _ = north_west_corner(u, u)
    r = transport_simplex(u, u, TransportCost.metric("euclidean", X, Y),
                          start_rows=ox[i], start_cols=oy[j])
    assert r.optimal and r.degenerate > r.pivots // 2
    assert r.pivots < 100 * 400  # far below the safeguard


def test_the_kd_ordered_staircase_start_is_strongly_feasible_and_valid():
    rng = np.random.default_rng(42)
    n, m = 18, 18
    a = b = np.full(n, 1.0 / n)
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    C = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
    ox, oy = kd_order(X), kd_order(Y)
    i, j, _ = north_west_corner(a[ox], b[oy])
    costs, _ = run_stepwise(a, b, C, start=(ox[i], oy[j]))
    assert costs[-1] == pytest.approx(transport_lp(a, b, C), rel=1e-9)


def test_the_pivot_safeguard_leaves_the_result_unoptimal_instead_of_looping():
    rng = np.random.default_rng(43)
    a, b = rand_dist(rng, 30), rand_dist(rng, 30)
    C = rng.random((30, 30))
    r = transport_simplex(a, b, TransportCost.matrix(C), max_pivots=3)
    assert r.pivots == 3 and not r.optimal and r.min_reduced_cost < -r.tol
    G = plan(r, 30, 30)  # still a coupling: every basis is primal feasible
    np.testing.assert_allclose(G.sum(1), a, atol=1e-12)
    np.testing.assert_allclose(G.sum(0), b, atol=1e-12)


# ---------------------------------------------------------------- through coupling()


def test_coupling_uses_the_network_simplex_and_its_certificate_checks_all_pairs():
    rng = np.random.default_rng(50)
    n, m = 120, 90
    a, b = rand_dist(rng, n, zeros=10), rand_dist(rng, m, zeros=4)
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    C = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
    g, cert = coupling(a, b, "euclidean", points_x=X, points_y=Y, return_duals=True)
    assert cert.method.startswith("network simplex (numba)") and cert.optimal
    assert (g * C).sum() == pytest.approx(transport_lp(a, b, C), rel=1e-9)
    np.testing.assert_allclose(g.sum(1), a, atol=1e-12)
    np.testing.assert_allclose(g.sum(0), b, atol=1e-12)
    R = C - cert.u[:, None] - cert.v[None, :]
    assert cert.min_reduced_cost == pytest.approx(R.min(), abs=1e-15)
    assert R.min() >= -1e-10 * C.max()  # zero-mass rows and columns included
    # an explicit matrix and a callable metric take the same route to the same optimum
    _, c2 = coupling(a, b, C, return_duals=True)
    _, c3 = coupling(a, b, lambda P, Q: np.sqrt(((P[:, None] - Q[None]) ** 2).sum(-1)),
                      points_x=X, points_y=Y, return_duals=True)
    assert "network simplex" in c2.method and "network simplex" in c3.method
    assert c2.primal == pytest.approx(cert.primal, rel=1e-12)
    assert c3.primal == pytest.approx(cert.primal, rel=1e-12)
    chk = coupling_certificate(g, a, b, C, u=cert.u, v=cert.v)
    assert chk.optimal


def test_an_uncertified_simplex_result_is_finished_by_highs_from_its_plan(monkeypatch):
    real = ns.transport_simplex
    monkeypatch.setattr(ns, "transport_simplex", lambda *a, **k: real(*a, **k, max_pivots=10))
    rng = np.random.default_rng(51)
    n = 60
    a, b = rand_dist(rng, n), rand_dist(rng, n)
    X, Y = rng.random((n, 2)), rng.random((n, 2))
    C = np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1))
    g, cert = coupling(a, b, "euclidean", points_x=X, points_y=Y, return_duals=True)
    assert "then column generation over HiGHS" in cert.method and cert.optimal
    assert (g * C).sum() == pytest.approx(transport_lp(a, b, C), rel=1e-9)


def test_callables_too_large_to_tabulate_keep_the_multiscale_highs_path(monkeypatch):
    monkeypatch.setattr(certified_simplex, "SIMPLEX_TABULATION_LIMIT", 100)
    rng = np.random.default_rng(52)
    a, b = rand_dist(rng, 20), rand_dist(rng, 20)
    X, Y = rng.random((20, 2)), rng.random((20, 2))
    metric = lambda P, Q: np.abs(P[:, None] - Q[None]).max(-1)  # Chebyshev
    g, cert = coupling(a, b, metric, points_x=X, points_y=Y, return_duals=True)
    assert "HiGHS" in cert.method and cert.optimal
    assert (g * metric(X, Y)).sum() == pytest.approx(transport_lp(a, b, metric(X, Y)), rel=1e-9)
