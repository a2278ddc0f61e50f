"""Couplings, W1, W∞ and TV (mechdesign.transport.coupling) against independently computed answers."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from mechdesign.core.errors import ProblemError
from mechdesign.transport import certified_simplex
from mechdesign.transport.coupling import (
    coupling,
    coupling_certificate,
    distance,
    total_variation,
    wasserstein,
)

R_EARTH = 6371.0088


# ---------------------------------------------------------------- independent references


def dense(g):
    return g.toarray() if sp.issparse(g) else np.asarray(g)


def transport_lp(a, b, C):
    """The dense transportation LP by scipy's linprog (HiGHS): the reference optimum."""
    n, m = C.shape
    rows = sp.kron(sp.eye(n), np.ones((1, m)))
    cols = sp.kron(np.ones((1, n)), sp.eye(m))
    A = sp.vstack([rows, cols]).tocsr()
    res = linprog(C.ravel(), A_eq=A, b_eq=np.r_[a, b], bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def feasible_on(a, b, allowed):
    """Is there a coupling of a and b supported on the boolean mask `allowed`? (dense LP)"""
    n, m = allowed.shape
    idx = np.flatnonzero(allowed.ravel())
    if idx.size == 0:
        return False
    A = sp.vstack([sp.kron(sp.eye(n), np.ones((1, m))), sp.kron(np.ones((1, n)), sp.eye(m))]).tocsc()
    res = linprog(np.zeros(idx.size), A_eq=A[:, idx], b_eq=np.r_[a, b], bounds=(0, None),
                  method="highs")
    return res.status == 0


def winf_by_thresholds(a, b, C):
    """W∞ by trying every distinct cost in increasing order with a dense feasibility LP."""
    for t in np.unique(C):
        if feasible_on(a, b, C <= t):
            return t
    raise AssertionError("unreachable")


def line_w1_closed_form(a, b, x, y):
    """∫ |F_λ − F_μ| written out independently: sort all points, accumulate both CDFs."""
    pts = sorted([(xi, ai, 0.0) for xi, ai in zip(x, a)] + [(yj, 0.0, bj) for yj, bj in zip(y, b)])
    total, Fa, Fb = 0.0, 0.0, 0.0
    for (z0, da, db), (z1, _, _) in itertools.pairwise(pts):
        Fa += da
        Fb += db
        total += abs(Fa - Fb) * (z1 - z0)
    return total


def euclid(X, Y):
    return np.sqrt(((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


def rand_dist(rng, n, zeros=0):
    w = rng.random(n)
    if zeros:
        w[rng.choice(n, zeros, replace=False)] = 0.0
    return w / w.sum()


# ---------------------------------------------------------------- North-West corner on a line


def test_nw_corner_plan_has_the_given_marginals_with_zeros_and_unsorted_duplicate_points():
    rng = np.random.default_rng(0)
    a, b = rand_dist(rng, 40, zeros=7), rand_dist(rng, 25, zeros=5)
    x = rng.integers(0, 10, 40).astype(float)  # duplicates and no order
    y = rng.normal(5, 3, 25)
    x[a == 0] = 11.0  # zero-mass rows sort last, where cumulative round-off would land
    b[np.argmax(y)] = 0.0
    b /= b.sum()
    g = dense(coupling(a, b, points_x=x, points_y=y))
    assert g.shape == (40, 25) and g.min() >= 0
    np.testing.assert_allclose(g.sum(1), a, atol=1e-15)
    np.testing.assert_allclose(g.sum(0), b, atol=1e-15)
    assert np.all(g[a == 0] == 0) and np.all(g[:, b == 0] == 0)


def test_line_coupling_cost_equals_the_cdf_closed_form():
    rng = np.random.default_rng(1)
    for n, m in [(1, 1), (1, 5), (7, 3), (50, 60)]:
        a, b = rand_dist(rng, n), rand_dist(rng, m)
        x, y = rng.normal(size=n), rng.normal(size=m)
        g = dense(coupling(a, b, points_x=x, points_y=y))
        cost = (g * np.abs(x[:, None] - y[None, :])).sum()
        ref = line_w1_closed_form(a, b, x, y)
        assert cost == pytest.approx(ref, rel=1e-12, abs=1e-15)
        assert wasserstein(a, b, points_x=x, points_y=y) == pytest.approx(ref, rel=1e-12, abs=1e-15)
        # and the same optimum as the general LP
        assert transport_lp(a, b, np.abs(x[:, None] - y[None, :])) == pytest.approx(ref, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12), st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_default_line_w1_equals_closed_form_for_any_distributions(wa, wb):
    a, b = np.array(wa), np.array(wb)
    if a.sum() <= 1e-6 or b.sum() <= 1e-6:
        return
    a, b = a / a.sum(), b / b.sum()
    ref = line_w1_closed_form(a, b, np.arange(a.size), np.arange(b.size))
    assert wasserstein(a, b) == pytest.approx(ref, abs=1e-12)
    g = dense(coupling(a, b))
    assert (g * np.abs(np.subtract.outer(np.arange(a.size), np.arange(b.size)))).sum() == pytest.approx(ref, abs=1e-12)
    np.testing.assert_allclose(g.sum(1), a, atol=1e-12)
    np.testing.assert_allclose(g.sum(0), b, atol=1e-12)


def test_line_coupling_never_crosses_so_it_is_the_monotone_coupling():
    rng = np.random.default_rng(2)
    a, b = rand_dist(rng, 30), rand_dist(rng, 30)
    x, y = rng.random(30), rng.random(30)
    g = dense(coupling(a, b, points_x=x, points_y=y))
    i, j = np.nonzero(g > 0)
    pairs = sorted(zip(x[i], y[j]))
    ys = [p[1] for p in pairs]
    assert ys == sorted(ys)


def test_million_points_per_side_returns_a_sparse_staircase_with_exact_marginals():
    rng = np.random.default_rng(3)
    n = 10**6
    a, b = rand_dist(rng, n), rand_dist(rng, n)
    x, y = rng.random(n), rng.random(n)
    g = coupling(a, b, points_x=x, points_y=y)
    assert sp.issparse(g) and g.nnz <= 2 * n - 1
    np.testing.assert_allclose(g.sum(axis=1), a, atol=1e-12)
    np.testing.assert_allclose(g.sum(axis=0), b, atol=1e-12)


def test_line_certificate_is_exact_duality():
    rng = np.random.default_rng(4)
    a, b = rand_dist(rng, 200, zeros=20), rand_dist(rng, 150)
    x, y = rng.random(200) * 10, rng.random(150) * 10
    g, cert = coupling(a, b, points_x=x, points_y=y, return_duals=True)
    C = np.abs(x[:, None] - y[None, :])
    assert cert.optimal
    assert (C - cert.u[:, None] - cert.v[None, :]).min() >= -1e-12  # checked here independently
    assert a @ cert.u + b @ cert.v == pytest.approx((dense(g) * C).sum(), abs=1e-12)


def test_certificate_of_a_line_plan_checks_reduced_costs_of_all_pairs():
    rng = np.random.default_rng(5)
    for n in (20, 1500):  # 1500 x 1500 > 10^6 pairs: the O(n log n) line check runs
        a, b = rand_dist(rng, n), rand_dist(rng, n)
        x, y = rng.random(n), rng.random(n)
        g, cert = coupling(a, b, "euclidean", points_x=x, points_y=y, return_duals=True)
        chk = coupling_certificate(g, a, b, "euclidean", points_x=x, points_y=y, u=cert.u, v=cert.v)
        rc_min = (np.abs(x[:, None] - y[None, :]) - cert.u[:, None] - cert.v[None, :]).min()
        assert chk.optimal and chk.min_reduced_cost == pytest.approx(rc_min, abs=1e-12)
        # potentials shifted by a constant along x stay feasible; a kinked u is caught
        bad_u = cert.u.copy()
        bad_u[np.argmax(a)] += 0.01
        assert not coupling_certificate(g, a, b, "euclidean", points_x=x, points_y=y, u=bad_u, v=cert.v).optimal


# ---------------------------------------------------------------- general costs


@pytest.mark.parametrize("seed", range(6))
def test_general_cost_optimum_equals_dense_linprog(seed):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(2, 31, size=2)
    a, b = rand_dist(rng, n, zeros=seed % 3), rand_dist(rng, m, zeros=(seed + 1) % 3)
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    C = euclid(X, Y)
    ref = transport_lp(a, b, C)
    g, cert = coupling(a, b, "euclidean", points_x=X, points_y=Y, return_duals=True)
    g = dense(g)
    assert (g * C).sum() == pytest.approx(ref, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(g.sum(1), a, atol=1e-10)
    np.testing.assert_allclose(g.sum(0), b, atol=1e-10)
    assert g.min() >= 0
    # the certificate, re-checked here on the dense matrix
    rc = C - cert.u[:, None] - cert.v[None, :]
    assert rc.min() >= -1e-9
    assert np.abs(rc[g > 1e-12]).max() <= 1e-9
    assert a @ cert.u + b @ cert.v == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert cert.optimal
    # an explicit random (non-metric) cost matrix reaches the same LP optimum
    M = rng.random((n, m)) * 5
    assert wasserstein(a, b, M) == pytest.approx(transport_lp(a, b, M), rel=1e-9, abs=1e-12)


def test_multiscale_solver_matches_linprog_on_a_few_hundred_points(monkeypatch):
    # the coarse-to-fine HiGHS path serves callables too large to tabulate for the network
    # simplex: lower that limit so a callable metric takes it here
    monkeypatch.setattr(certified_simplex, "SIMPLEX_TABULATION_LIMIT", 0)
    rng = np.random.default_rng(7)
    n, m = 300, 280  # above the direct-solve size: the coarse-to-fine path runs
    a, b = rand_dist(rng, n, zeros=30), rand_dist(rng, m)
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    C = euclid(X, Y)
    g, cert = coupling(a, b, euclid, points_x=X, points_y=Y, return_duals=True)
    assert "levels" in cert.method and cert.optimal
    assert (dense(g) * C).sum() == pytest.approx(transport_lp(a, b, C), rel=1e-9)
    assert (C - cert.u[:, None] - cert.v[None, :]).min() >= -1e-9


def test_manhattan_haversine_and_callable_metrics_match_linprog_on_their_matrices():
    rng = np.random.default_rng(8)
    n, m = 12, 9
    a, b = rand_dist(rng, n), rand_dist(rng, m)
    X, Y = rng.random((n, 2)), rng.random((m, 2))
    man = np.abs(X[:, None, :] - Y[None, :, :]).sum(-1)
    assert wasserstein(a, b, "manhattan", points_x=X, points_y=Y) == pytest.approx(transport_lp(a, b, man), rel=1e-9)
    LL, MM = np.c_[rng.uniform(-60, 60, n), rng.uniform(-180, 180, n)], np.c_[rng.uniform(-60, 60, m), rng.uniform(-180, 180, m)]
    la1, lo1, la2, lo2 = (np.radians(v) for v in (LL[:, 0, None], LL[:, 1, None], MM[None, :, 0], MM[None, :, 1]))
    hav = 2 * R_EARTH * np.arcsin(np.sqrt(np.sin((la2 - la1) / 2) ** 2 + np.cos(la1) * np.cos(la2) * np.sin((lo2 - lo1) / 2) ** 2))
    assert wasserstein(a, b, "haversine", points_x=LL, points_y=MM) == pytest.approx(transport_lp(a, b, hav), rel=1e-9)
    chebyshev = lambda P, Q: np.abs(P[:, None, :] - Q[None, :, :]).max(-1)
    ref = transport_lp(a, b, chebyshev(X, Y))
    assert wasserstein(a, b, chebyshev, points_x=X, points_y=Y) == pytest.approx(ref, rel=1e-9)


def test_haversine_one_degree_on_the_equator_is_the_arc_length():
    d = wasserstein([1.0], [1.0], "haversine", points_x=[[0.0, 10.0]], points_y=[[0.0, 11.0]])
    assert d == pytest.approx(2 * math.pi * R_EARTH / 360, rel=1e-12)


def test_monge_matrix_uses_the_staircase_and_is_certified():
    rng = np.random.default_rng(9)
    a, b = rand_dist(rng, 15, zeros=3), rand_dist(rng, 11)
    x, y = np.sort(rng.random(15)), np.sort(rng.random(11))
    C = (x[:, None] - y[None, :]) ** 2  # convex in x − y: Monge
    g, cert = coupling(a, b, C, return_duals=True)
    assert "north-west" in cert.method and cert.optimal
    assert (dense(g) * C).sum() == pytest.approx(transport_lp(a, b, C), rel=1e-9, abs=1e-14)


def test_certificate_flags_a_suboptimal_plan_and_accepts_the_optimal_one():
    rng = np.random.default_rng(10)
    a, b = rand_dist(rng, 20), rand_dist(rng, 20)
    X, Y = rng.random((20, 2)), rng.random((20, 2))
    C = euclid(X, Y)
    g, cert = coupling(a, b, "euclidean", points_x=X, points_y=Y, return_duals=True)
    good = coupling_certificate(g, a, b, C, u=cert.u, v=cert.v)
    assert good.optimal and good.gap <= 1e-9
    independent = np.outer(a, b)  # a coupling, far from optimal
    bad = coupling_certificate(independent, a, b, "euclidean", points_x=X, points_y=Y)
    assert not bad.optimal
    assert bad.gap == pytest.approx((independent * C).sum() - transport_lp(a, b, C), rel=1e-6)
    assert bad.marginal_error <= 1e-15


def test_zero_mass_rows_and_columns_are_accepted_and_get_feasible_duals():
    a = np.array([0.0, 0.5, 0.0, 0.5])
    b = np.array([0.25, 0.0, 0.75])
    X = np.array([[0, 0], [1, 0], [2, 2], [0, 1]], float)
    Y = np.array([[0, 0], [5, 5], [1, 1]], float)
    g, cert = coupling(a, b, "euclidean", points_x=X, points_y=Y, return_duals=True)
    g = dense(g)
    assert np.all(g[[0, 2]] == 0) and np.all(g[:, 1] == 0)
    C = euclid(X, Y)
    assert (C - cert.u[:, None] - cert.v[None, :]).min() >= -1e-12
    assert (g * C).sum() == pytest.approx(transport_lp(a, b, C), rel=1e-12)


def test_sparse_output_is_chosen_by_size_or_on_request():
    assert isinstance(coupling([0.5, 0.5], [0.5, 0.5]), np.ndarray)
    assert sp.issparse(coupling([0.5, 0.5], [0.5, 0.5], sparse=True))
    n = 1001
    assert sp.issparse(coupling(np.full(n, 1 / n), np.full(n, 1 / n)))


def test_equal_total_masses_need_not_be_probabilities():
    g = dense(coupling([3.0, 2.0], [1.0, 4.0]))
    np.testing.assert_allclose(g.sum(1), [3, 2])
    np.testing.assert_allclose(g.sum(0), [1, 4])
    assert wasserstein([3.0, 2.0], [1.0, 4.0]) == pytest.approx(0.4)  # normalised: 2/5 moves one step


# ---------------------------------------------------------------- W∞


@pytest.mark.parametrize("seed", range(5))
def test_winf_equals_the_bottleneck_assignment_by_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    n = 6
    X, Y = rng.random((n, 2)), rng.random((n, 2))
    C = euclid(X, Y)
    best = min(max(C[i, s[i]] for i in range(n)) for s in itertools.permutations(range(n)))
    u = np.full(n, 1 / n)  # uniform weights: couplings' extreme points are permutations
    assert wasserstein(u, u, "euclidean", p=np.inf, points_x=X, points_y=Y) == best
    assert distance(u, u, "winf", C) == best


def test_winf_with_uniform_weights_matches_perfect_matching_thresholds_at_larger_n():
    rng = np.random.default_rng(11)
    n = 60
    X, Y = rng.random((n, 2)), rng.random((n, 2))
    C = euclid(X, Y)
    ts = np.unique(C)
    lo, hi = 0, ts.size - 1
    while lo < hi:  # bisection with a perfect-matching test (an independent exact method)
        mid = (lo + hi) // 2
        i, j = np.nonzero(C <= ts[mid])
        G = nx.Graph()
        G.add_nodes_from(range(2 * n))
        G.add_edges_from(zip(i.tolist(), (j + n).tolist()))
        if len(nx.bipartite.hopcroft_karp_matching(G, top_nodes=range(n))) == 2 * n:
            hi = mid
        else:
            lo = mid + 1
    u = np.full(n, 1 / n)
    assert wasserstein(u, u, "euclidean", p="inf", points_x=X, points_y=Y) == ts[lo]


@pytest.mark.parametrize("seed", range(4))
def test_winf_with_general_weights_equals_the_smallest_feasible_threshold(seed):
    rng = np.random.default_rng(200 + seed)
    n, m = rng.integers(2, 9, size=2)
    a, b = rand_dist(rng, n, zeros=seed % 2), rand_dist(rng, m)
    C = np.round(rng.random((n, m)) * 10, 1)  # ties among costs on purpose
    assert wasserstein(a, b, C, p=np.inf) == winf_by_thresholds(a, b, C)


def test_winf_line_closed_form_agrees_with_the_general_threshold_search():
    rng = np.random.default_rng(12)
    a, b = rand_dist(rng, 40, zeros=4), rand_dist(rng, 35)
    x, y = rng.random(40), rng.random(35)
    closed = wasserstein(a, b, points_x=x, points_y=y, p=np.inf)
    perm = rng.permutation(35)  # a shuffled |x − y| matrix is not Monge: general path
    general = wasserstein(a, b[perm], np.abs(x[:, None] - y[None, perm]), p=np.inf)
    assert closed == general


def test_winf_is_exact_when_halls_condition_is_tight():
    # two points each side; mass 1/3, 2/3 vs 1/3, 2/3: the cheap diagonal is exactly feasible
    a = np.array([1, 2]) / 3
    C = np.array([[1.0, 5.0], [5.0, 2.0]])
    assert wasserstein(a, a, C, p="inf") == 2.0
    b = np.array([1 / 3 + 1e-9, 2 / 3 - 1e-9])  # now row 0 must send 1e-9 across
    assert wasserstein(a, b / b.sum(), C, p="inf") == 5.0


# ---------------------------------------------------------------- planted answers and TV


def test_identical_distributions_are_at_distance_zero():
    rng = np.random.default_rng(13)
    a = rand_dist(rng, 50, zeros=5)
    X = rng.random((50, 2))
    for kind in ("w1", "winf", "tv"):
        assert distance(a, a, kind) == 0.0
        assert distance(a, a, kind, "euclidean", points_x=X, points_y=X) == pytest.approx(0.0, abs=1e-12)


def test_shift_by_one_step_on_a_line_gives_w1_one_and_winf_one():
    rng = np.random.default_rng(14)
    w = rand_dist(rng, 10)
    a, b = np.r_[w, 0.0], np.r_[0.0, w]
    assert wasserstein(a, b) == pytest.approx(1.0, abs=1e-14)
    assert wasserstein(a, b, p=np.inf) == 1.0


def test_translating_points_in_the_plane_moves_w1_and_winf_by_the_translation_length():
    rng = np.random.default_rng(15)
    w = rand_dist(rng, 25)
    X = rng.random((25, 2)) * 0.1
    t = np.array([3.0, 4.0])  # length 5, longer than the cloud: the translation is optimal
    assert wasserstein(w, w, "euclidean", points_x=X, points_y=X + t) == pytest.approx(5.0, rel=1e-12)
    assert wasserstein(w, w, "euclidean", p="inf", points_x=X, points_y=X + t) == pytest.approx(5.0, rel=1e-12)


def test_total_variation_by_hand():
    assert total_variation([0.2, 0.3, 0.5], [0.5, 0.3, 0.2]) == pytest.approx(0.3)
    assert total_variation([1, 0], [0, 1]) == 1.0
    assert distance([0.25, 0.75], [0.5, 0.5], "tv") == pytest.approx(0.25)
    # TV is W1 under the discrete metric
    rng = np.random.default_rng(16)
    a, b = rand_dist(rng, 8), rand_dist(rng, 8)
    assert wasserstein(a, b, 1.0 - np.eye(8)) == pytest.approx(total_variation(a, b), abs=1e-12)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: coupling([0.5, -0.1, 0.6], [1.0]), "non-negative"),
        (lambda: coupling([0.5, 0.4], [1.0]), "sum"),
        (lambda: coupling([0.5, 0.5], [0.5, 0.5], np.ones((3, 2))), "shape (2, 2)"),
        (lambda: coupling([0.5, 0.5], [1.0], "cosine"), "unknown cost"),
        (lambda: coupling([1.0], [1.0], "haversine"), "haversine"),
        (lambda: coupling([0.5, 0.5], [1.0], "euclidean", points_x=[[0, 0]], points_y=[[1, 1]]), "2 points"),
        (lambda: coupling([0.5, 0.5], [1.0], "absolute", points_x=[[0, 0], [1, 1]], points_y=[[1, 1]]), "1-D"),
        (lambda: wasserstein([1.0], [1.0], p=2), "p must be 1 or inf"),
        (lambda: distance([1.0], [1.0], "kl"), "unknown distance"),
        (lambda: total_variation([1.0], [0.5, 0.5]), "same set"),
        (lambda: coupling([[0.5, 0.5]], [1.0]), "1-D vector"),
        (lambda: coupling([np.nan, 1.0], [1.0]), "finite"),
    ],
)
def test_bad_input_raises_problem_error_saying_what_was_expected(call, fragment):
    with pytest.raises(ProblemError, match=None) as err:
        call()
    assert fragment in str(err.value)
