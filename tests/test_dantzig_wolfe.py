"""Dantzig–Wolfe over rays for d-privacy on a line equals the plain LP, with a dual bound."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import AUDIT_TOL, MetricPrivacy
from mechdesign.solvers import cone_pricing, dantzig_wolfe, symmetry
from mechdesign.solvers.line_portfolio import neighbour_pairs
from mechdesign.solvers.line_rays import LinePricing
from mechdesign.solvers.ray_master import capped_sum
from tests.strategies import lattice_points, loss_matrices, probability_vectors, vectors


@st.composite
def line_cases(draw):
    """Distinct points on a line in any order, a positive prior, and (when not monotone) a
    matrix of distinct positive losses; monotone cases are evenly spaced with loss |x − y|.
    Zero prior masses and tied losses, which a continuous draw never gives, are left out:
    on such degenerate LPs (a face of optima) the plain LP's design is only within its gap
    tolerance (1e-6) of the optimum, looser than the comparison below."""
    n = draw(st.integers(2, 14))
    monotone = draw(st.booleans())
    if monotone:  # the Ghosh–Roughgarden–Sundararajan setting: evenly spaced, loss |x − y|
        points = np.arange(n, dtype=float) * draw(st.sampled_from([0.1, 1.0, 3.0]))
    else:
        scale = draw(st.sampled_from([0.1, 1.0]))
        points = np.sort(draw(lattice_points(n, 1, side=40)).ravel()) * scale
    points = points[draw(st.permutations(range(n)))]  # inputs in any order
    loss = None if monotone else draw(loss_matrices(n, n, distinct=True))
    return points, loss, draw(probability_vectors(n, positive=True))


@settings(max_examples=30, deadline=None)
@given(line_cases(), st.floats(0.05, 3.0))
def test_line_rays_equal_the_plain_lp_for_any_prior_spacing_and_loss(case, eps):
    points, loss, prior = case
    dom = Domain.from_points(points)
    metric = Metric("absolute")
    loss = metric.distances(dom) if loss is None else loss
    problem = Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                      objective=ExpectedLoss(loss, {"default": prior}))
    ours = problem.solve()
    # (the rays may hand a problem to the full LP when they cannot certify it: still equal)
    plain = problem.solve(solver="highs")
    assert ours.status == plain.status == "optimal"
    # optimal: within the gap tolerance (1e-6) above the LP's optimum, never below it
    assert plain.objective - 1e-9 <= ours.objective
    assert ours.objective == pytest.approx(plain.objective, rel=1e-6, abs=1e-9)
    assert ours.solver["bound"] <= ours.objective + 1e-9
    assert ours.certificate[0].holds


def test_pricing_matches_brute_force_over_all_sign_walks():
    # extreme rays of the line cone are walks with log-steps ±ε·gap; enumerate them all
    rng = np.random.default_rng(0)
    n, eps = 7, 0.6
    gaps = rng.random(n - 1) + 0.2
    a = rng.normal(size=(n, 4))
    priced, anchor, right, left = LinePricing(gaps, eps).price(a)
    for col in range(4):
        best = np.inf
        for signs in range(2 ** (n - 1)):
            steps = np.array([1 if signs >> t & 1 else -1 for t in range(n - 1)]) * eps * gaps
            g = np.concatenate([[0.0], np.cumsum(steps)])
            for p in range(n):  # normalise v_p = 1 at every possible anchor
                best = min(best, float(a[:, col] @ np.exp(g - g[p])))
        assert priced[col] == pytest.approx(min(best, 0.0) if priced[col] <= 0 else best, rel=1e-9)


def test_long_line_matches_closed_form_and_keeps_far_entries_positive():
    from tests.test_known_optima import remapped_truncated_geometric_loss

    n = 300
    dom = Domain.from_size(n)
    metric = Metric("absolute")
    result = Problem(inputs=dom, privacy=[MetricPrivacy(1.0, metric, dom)],
                     objective=ExpectedLoss(metric.distances(dom), {"default": np.full(n, 1 / n)})).solve()
    assert result.status == "optimal"
    assert result.solver["name"].startswith("HiGHS Dantzig-Wolfe")  # certified by the rays alone
    assert result.objective == pytest.approx(remapped_truncated_geometric_loss(n, 1.0), rel=1e-7)
    assert np.all(result.mechanism.matrix > 0)


GENERAL = [("euclidean", 0), ("manhattan", 1), ("euclidean-random", 2), ("haversine", 3)]


def general_instance(kind: str, seed: int, eps: float | None = None) -> Problem:
    rng = np.random.default_rng(seed)
    if kind == "euclidean-random":
        dom, metric = Domain.from_points(rng.random((32, 2)) * 4), Metric("euclidean")
    elif kind == "haversine":
        dom = Domain.from_points(np.column_stack([40 + rng.random(30), -100 + rng.random(30)]))
        metric = Metric("haversine")
    else:
        dom, metric = Domain.from_grid(6, 6), Metric(kind)
    d = metric.distances(dom)
    if eps is None:
        eps = 0.02 if kind == "haversine" else 0.8
    return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                   objective=ExpectedLoss(d, {"default": rng.dirichlet(np.ones(len(dom)))}))


@pytest.mark.slow
@pytest.mark.parametrize("route", ["HiGHS Dantzig-Wolfe (cone rays)",
                                   "HiGHS Dantzig-Wolfe (cone rays), then lazy pair constraints"])
@pytest.mark.parametrize("kind,seed", GENERAL)
def test_general_metric_solvers_equal_the_plain_lp_on_grids_and_scattered_points(kind, seed, route, monkeypatch):
    if "lazy" in route:  # rays that stall at once hand the design to the lazy-pairs LP
        def stall(cost, *args, **kwargs):
            raise dantzig_wolfe.RaysStalled("stalled (test)", None)
        monkeypatch.setattr(dantzig_wolfe, "solve_portfolio", stall)
    problem = general_instance(kind, seed)
    ours = problem.solve()
    assert ours.solver["name"] == route
    plain = problem.solve(solver="highs")
    assert ours.status == plain.status == "optimal"
    # optimal: within the gap tolerance (1e-6) of the bound, which lies below the LP's optimum
    # two solvers' round-off: ours may sit below the LP's answer by what the audit tolerates
    # (ratios within AUDIT_TOL), seen at 1.3e-12 relative with the outputs split over threads
    assert plain.objective * (1 - AUDIT_TOL) <= ours.objective <= plain.objective * (1 + 1e-6)
    assert ours.solver["bound"] <= plain.objective * (1 + 1e-9)
    assert ours.certificate[0].holds


@pytest.mark.slow
@pytest.mark.parametrize("kind,seed", GENERAL)
def test_rays_close_the_gap_at_small_epsilon(kind, seed, monkeypatch):
    """Small ε·radius: few columns carry weight, the master is degenerate and its duals swing;
    the capped Lagrangian bound and smoothed pricing must still certify the optimum."""
    problem = general_instance(kind, seed, eps=0.003 if kind == "haversine" else 0.15)
    ours = problem.solve()
    assert ours.solver["name"] == "HiGHS Dantzig-Wolfe (cone rays)"
    plain = problem.solve(solver="highs")
    assert ours.status == plain.status == "optimal"
    # optimal means within the problem's gap tolerance of a proven bound, which the plain LP's
    # optimum must not undercut
    assert ours.solver["bound"] <= plain.objective * (1 + 1e-9)
    assert plain.objective * (1 - 1e-9) <= ours.objective <= plain.objective * (1 + problem.gap_tolerance)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-5.0, 0.0), min_size=1, max_size=12), st.floats(0.0, 15.0))
def test_capped_sum_is_the_fractional_knapsack_minimum(p, cap):
    from scipy.optimize import linprog

    p = np.array(p)
    k = p.size
    # the reference LP at tight tolerances: at HiGHS's default dual tolerance (1e-7) a cost of
    # −5e-8 counts as zero and the reference itself is off by that much
    lp = linprog(p, A_ub=np.ones((1, k)), b_ub=[cap], bounds=[(0, 1)] * k, method="highs",
                 options={"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10})
    assert capped_sum(p, cap) == pytest.approx(lp.fun, abs=1e-9)


def test_lattice_shortcut_finds_the_same_pairs_as_the_general_betweenness_test():
    from mechdesign.core.metrics import _pairs_without_intermediate

    dom = Domain.from_grid(5, 7, cell=1.5)
    metric = Metric("euclidean")
    i, j, _ = metric.privacy_pairs(dom)
    gi, gj = _pairs_without_intermediate(metric.distances(dom))
    assert set(zip(i.tolist(), j.tolist())) == set(zip(gi.tolist(), gj.tolist())) | set(zip(gj.tolist(), gi.tolist()))


# --- symmetry and the rigorous pricing bound --------------------------------------------------

def grid_instance(rows: int, cols: int, prior: np.ndarray | None = None, eps: float = 1.0) -> Problem:
    dom, metric = Domain.from_grid(rows, cols), Metric("euclidean")
    n = len(dom)
    prior = np.full(n, 1.0 / n) if prior is None else prior
    return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                   objective=ExpectedLoss(metric.distances(dom), {"default": prior}))


def found_symmetry(problem: Problem):
    notion = problem.privacy[0]
    return symmetry.find(notion.domain.points, notion.metric.distances(notion.domain),
                         problem.objective.cost("default"))


@pytest.mark.parametrize("rows,cols,order,orbits", [
    (6, 6, 8, 6),    # the square's 8 symmetries; orbits of a 6×6 grid: 3·4/2 = 6 (3×3 quadrant mod transpose)
    (7, 7, 8, 10),   # odd side: 4·5/2 = 10
    (4, 6, 4, 6),    # a rectangle keeps the 4 reflections; orbits 2·3 = 6
])
def test_grid_symmetry_group_and_orbits(rows, cols, order, orbits):
    group = found_symmetry(grid_instance(rows, cols))
    assert group.order == order and group.representatives.size == orbits
    assert group.sizes.sum() == rows * cols
    # a group: closed under composition
    perms = {tuple(p) for p in group.perms}
    assert all(tuple(p[q]) in perms for p in group.perms for q in group.perms)


def test_an_asymmetric_prior_leaves_only_the_identity():
    rng = np.random.default_rng(0)
    assert found_symmetry(grid_instance(6, 6, rng.dirichlet(np.ones(36)))).order == 1


@pytest.mark.slow
@pytest.mark.parametrize("design_from", ["whichever finishes", "interior point"])
@pytest.mark.parametrize("rows,eps", [(6, 0.8), (7, 1.3)])
def test_symmetric_rays_equal_the_plain_lp(rows, eps, design_from, monkeypatch):
    """Prior symmetric about the centre (not uniform): the master keeps one row per orbit and
    prices one output per orbit, and must still reach the plain LP's optimum. The design is
    symmetric whichever method gave it (the interior point's iterates only nearly are: its
    working set of pair rows is chosen in index order)."""
    if design_from == "interior point":
        def decline(self, limits=None):
            raise dantzig_wolfe.SolverDeclined("declined (test)")

        monkeypatch.setattr(dantzig_wolfe.RayRounds, "advance", decline)
    pts = Domain.from_grid(rows, rows).points
    weight = np.exp(-np.linalg.norm(pts - pts.mean(axis=0), axis=1))
    problem = grid_instance(rows, rows, weight / weight.sum(), eps)
    assert found_symmetry(problem).order == 8
    ours = problem.solve()
    assert ours.solver["name"] == "HiGHS Dantzig-Wolfe (cone rays)" and ours.status == "optimal"
    if design_from == "interior point":  # (the rays declined at once)
        assert "design from interior point" in " | ".join(ours.solver["path"])
    plain = problem.solve(solver="highs")
    # optimal: within the gap tolerance (1e-6) of the bound, which lies below the LP's optimum
    assert plain.objective * (1 - AUDIT_TOL) <= ours.objective <= plain.objective * (1 + 1e-6)
    assert ours.solver["bound"] <= plain.objective * (1 + 1e-9)
    K = ours.mechanism.matrix  # the returned design is itself symmetric
    for p in found_symmetry(problem).perms:
        np.testing.assert_allclose(K[np.ix_(p, p)], K, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(vectors(25, -4.0, 4.0), st.floats(0.3, 3.0))
def test_pricing_value_is_a_proven_lower_bound_on_the_cone_minimum(a, eps):
    """ConePricing reports the bound its duals prove, never above the true box minimum over
    its (relaxed) cone, and equal to it when the simplex is exact (scipy's LP as reference)."""
    from scipy.optimize import linprog

    problem = grid_instance(5, 5)
    notion = problem.privacy[0]
    d = notion.metric.distances(notion.domain)
    pricing = cone_pricing.ConePricing(25, (notion.i, notion.j, d[notion.i, notion.j]), eps, initial=2.0)
    value, _ = pricing.price(a)
    assert pricing.width == 25  # no chained far pair at these distances
    rows = np.arange(pricing.ri.size)
    A = np.zeros((rows.size, 25))
    A[rows, pricing.ri] = 1.0
    A[rows, pricing.rj] = -pricing.rcoef
    exact = linprog(a, A_ub=A, b_ub=np.zeros(rows.size), bounds=[(0, 1)] * 25, method="highs").fun
    assert value <= exact + 1e-9 and value == pytest.approx(exact, abs=1e-8)


@pytest.mark.parametrize("tiny", [1e-6, 1e-9, 1e-12])
def test_pricing_proves_a_zero_minimum_to_the_scale_of_the_negative_costs(tiny):
    """A column on a line of 60 points at ε = 8 whose only negative costs are ``tiny`` (at the
    odd points), next to costs of 1 at the even ones: any v in the cone with peak 1 at an odd
    point carries at least e^{−8} at its even neighbours, so a·v >= v_peak(−tiny·(1 + 2e^{−8}·…)
    + 2e^{−8}) > 0 and the box minimum is 0 (v = 0). The proven bound must sit within round-off
    of the negative costs' own scale, not at the LP solver's absolute tolerances (before the
    costs were scaled: −3e-11 here at 1e-12, −7e-10 per column on a 1,000-point line)."""
    x = np.arange(60, dtype=float)
    a = np.where(np.arange(60) % 2 == 1, -tiny, 1.0)
    pricing = cone_pricing.ConePricing(60, neighbour_pairs(x), 8.0)
    proven, v = pricing.price(a)
    assert proven <= 0.0
    assert proven >= -1e-6 * tiny
    assert v @ a >= -1e-6 * tiny


def test_an_approximate_run_stops_within_its_tolerance_and_brackets_the_optimum(monkeypatch):
    exact = grid_instance(9, 9).solve()
    loose = grid_instance(9, 9)
    loose.gap_tolerance = 0.05
    approx = loose.solve()
    assert exact.status == approx.status == "optimal" and approx.holds
    assert approx.solver["gap"] <= 0.05
    assert approx.solver["bound"] <= exact.objective * (1 + 1e-9) <= approx.objective * (1 + 1e-9)


def test_a_lazy_lp_that_fails_leaves_the_rays_design_not_the_dense_lp(monkeypatch):
    """Rays that stall hand over to the lazy-pairs LP; when that LP ends without an optimum the
    rays' certified design is kept with its proven bound (and the trouble is in the path),
    instead of the whole problem falling through to the dense LP; a better design without a
    solver (the remapped exponential mechanism) may replace it."""
    from mechdesign.solvers.contexts import ContextSolution
    from mechdesign.solvers.highs_model import SolverDeclined

    problem = general_instance("euclidean", 0)
    optimum = problem.solve(solver="highs").objective
    cost = problem.objective.cost("default") / problem.objective.magnitude()
    k = np.zeros(cost.shape)
    k[:, int(np.argmin(cost.sum(axis=0)))] = 1.0  # a constant design: private at every level
    value = float((cost * k).sum())
    stalled_with = ContextSolution(k, value, float(cost.min(axis=1).sum()), 3, 1)

    def stall(cost, *args, **kwargs):
        raise dantzig_wolfe.RaysStalled("stalled (test)", stalled_with)

    def fail(*args, **kwargs):
        raise SolverDeclined("a lazy-pairs LP ended Unknown (test)")

    monkeypatch.setattr(dantzig_wolfe, "solve_portfolio", stall)
    monkeypatch.setattr(dantzig_wolfe, "solve_lazily", fail)
    monkeypatch.setattr(dantzig_wolfe, "GENERAL_MIN_INPUTS", 2)  # not "small": no plain-LP rescue
    result = problem.solve()
    assert result.solver["name"].startswith("HiGHS Dantzig-Wolfe (cone rays)")
    assert any("ended Unknown (test)" in step for step in result.solver["path"])
    assert result.holds and result.status != "optimal"
    # the rays' constant design is kept, unless a design every metric problem has is better:
    # here the remapped exponential mechanism, which then replaces it (and says so)
    assert "remapped exponential mechanism" in result.solver["trivial_design"]
    assert optimum <= result.objective < value * problem.objective.magnitude()
    assert result.solver["bound"] <= optimum


def test_pricing_order_is_a_permutation_that_does_not_change_the_optimum():
    rng = np.random.default_rng(7)
    dom = Domain.from_points(rng.random((30, 2)) * 3)
    order = dantzig_wolfe.pricing_order(dom)
    assert sorted(order.tolist()) == list(range(30))
    assert dantzig_wolfe.pricing_order(Domain(tuple("abc"))) is None
    d = Metric("euclidean").distances(dom)
    cost = d * rng.dirichlet(np.ones(30))[:, None]
    i, j = np.nonzero(~np.eye(30, dtype=bool))
    found = [dantzig_wolfe.solve_metric(cost, d, (i, j), 2.0, gap=1e-9, order=o) for o in (None, order, order[::-1])]
    values = [f.objective for f in found]
    assert max(values) - min(values) <= 1e-8 * values[0]
    assert all(f.bound <= min(values) + 1e-12 for f in found)


@pytest.mark.parametrize("eps", [0.25, 1.0, 4.0])
def test_line_rays_stuck_with_an_open_gap_finish_with_the_neighbour_pair_lp(eps, monkeypatch):
    """Rays stopped after one round (as when their pricing finds nothing while the gap is open)
    hand their design to the LP with the neighbour pair rows, which reaches the optimum of the
    plain LP over every pair of points (scipy's HiGHS)."""
    from mechdesign.solvers import line_rays
    from tests.test_proven_bounds import all_pairs_design

    n = 30
    rng = np.random.default_rng(int(eps * 100))
    monkeypatch.setattr(line_rays, "DENSE_ENTRIES", 0)  # no plain-LP rescue for this size
    points = np.sort(rng.choice(80, n, replace=False)).astype(float) / 20  # ε·d <= 16: scipy takes it
    cost = rng.random((n, n)) * rng.dirichlet(np.ones(n))[:, None]
    path = []
    found = line_rays.solve_line(cost, points, eps, max_rounds=1, path=path)
    assert any(step.startswith("neighbour-pair LP") for step in path)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    optimum = all_pairs_design(cost, i, j, np.exp(eps * np.abs(points[i] - points[j])))
    assert found.objective == pytest.approx(optimum, rel=1e-7)
    assert found.bound <= optimum * (1 + 1e-12)


@pytest.mark.parametrize("enough", [1e-5, None])
def test_the_portfolio_accepts_a_decline_within_enough(enough, monkeypatch):
    # the interior point declines (as on round-off) once its gap is below 1e-5, far from the
    # aim of 1e-12: with enough = 1e-5 the turns return its design at once; without, the rays
    # go on alone towards 1e-12
    from mechdesign.solvers import metric_interior
    from mechdesign.solvers.highs_model import SolverDeclined

    advance = metric_interior.MetricInteriorPoint.advance

    def declining(self, limits=None):
        advance(self, limits)
        if self.gaps[-1] < 1e-5:
            raise SolverDeclined("stalled (test)")
        return True

    monkeypatch.setattr(metric_interior.MetricInteriorPoint, "advance", declining)
    problem = general_instance("euclidean-random", 2)
    notion, cost = problem.privacy[0], problem.objective.cost("default")
    distances = notion.metric.distances(notion.domain)
    path: list[str] = []
    plain = problem.solve(solver="highs").objective
    try:
        found = dantzig_wolfe.solve_portfolio(cost, distances, notion, found_symmetry(problem), 1e-12, None, path,
                                              enough=enough)
    except dantzig_wolfe.RaysStalled:
        found = None
    accepted = "interior point declined with the shared gap within the tolerance" in path
    assert accepted == (enough is not None)
    if enough is not None:
        assert found.objective - found.bound <= 1e-5 * found.objective
        assert found.bound <= plain * (1 + 1e-9) and found.objective >= plain * (1 - 1e-9)


def test_a_decline_within_nine_tenths_of_the_tolerance_ends_with_a_certified_optimum(monkeypatch):
    # the interior point declines once its gap is below 9e-7 (on this instance above the 5e-7
    # that exact runs aim at for a tolerance of 1e-6): the run ends there with its
    # design, and the certificate's own re-measurement still finds the gap within the tolerance
    from mechdesign.solvers import metric_interior
    from mechdesign.solvers.highs_model import SolverDeclined

    advance = metric_interior.MetricInteriorPoint.advance
    seen = []

    def declining(self, limits=None):
        advance(self, limits)
        if self.gaps[-1] < 9e-7:
            seen.append(self.gaps[-1])
            raise SolverDeclined("stalled (test)")
        return True

    monkeypatch.setattr(metric_interior.MetricInteriorPoint, "advance", declining)
    # the first instance whose gap passes through (5e-7, 9e-7) (which one does depends on how the
    # interior point's steps go; most gaps step over the window)
    for seed in range(1, 13):
        seen.clear()
        problem = general_instance("euclidean-random", seed)
        ours = problem.solve()
        if seen and seen[0] > 5e-7:
            break
    assert seen and seen[0] > 5e-7
    assert any("declined with the shared gap within the tolerance" in step for step in ours.solver["path"])
    plain = problem.solve(solver="highs")
    assert ours.status == "optimal" and ours.certificate[0].holds
    assert ours.solver["bound"] <= plain.objective * (1 + 1e-9)
    assert plain.objective * (1 - AUDIT_TOL) <= ours.objective <= plain.objective * (1 + 1e-6)
    assert ours.objective - ours.solver["bound"] <= 1e-6 * ours.objective


def test_line_box_pricing_cut_by_a_turn_goes_on_where_it_stopped(monkeypatch):
    # a round whose box pricing a turn's end cuts short prices only the remaining columns next
    # time (the master's duals have not changed) and ends where an uncut round ends; it used to
    # start the pricing over, and a line whose pricing outlasted the rays' share of the turns
    # repeated it round after round (1,000 points: 6 rounds and 23 s instead of 1 round and 4 s)
    from mechdesign.bench.envelope import build
    from mechdesign.solvers import line_rays

    problem = build({"family": "line", "size": 100, "epsilon": 0.25, "prior": "dirichlet", "loss": "metric"})
    points = np.asarray(problem.privacy[0].domain.points, dtype=float).ravel()
    order = np.argsort(points)
    cost, points = problem.objective.cost("default")[order], points[order]
    priced = []
    price = line_rays.ConePricing.price

    def counted(self, a, limits, fresh=False, slack=None):
        priced.append(fresh)
        return price(self, a, limits, fresh, slack)

    monkeypatch.setattr(line_rays.ConePricing, "price", counted)

    class Window:  # a turn that ends after ``solves`` box solves in all
        time_limit = 100.0

        def __init__(self, solves):
            self.solves = solves

        def remaining(self):
            return 0.0 if len(priced) >= self.solves else 100.0

        def expired(self):
            return self.remaining() <= 0.0

    whole = line_rays.LineRounds(cost, points, 0.25, gap=1e-6)
    whole.advance(Window(10**9))
    solves = len(priced)
    assert whole.stuck and not whole._pending[0] and solves > 10  # priced out, nothing added
    priced.clear()
    cut = line_rays.LineRounds(cost, points, 0.25, gap=1e-6)
    cut.advance(Window(5))
    assert cut.stopped and len(priced) == 5
    cut.advance(Window(10**9))
    # the first four not again; the fifth, during which the turn ended, again (a box solve the
    # deadline may have cut is never kept)
    assert len(priced) == solves + 1
    assert cut.bound == pytest.approx(whole.bound, rel=1e-14) and (cut.stuck, cut.closed) == (whole.stuck, whole.closed)


class _CutPricing:
    """23 random points of the plane at ε = 0.5, the seeded master's duals ``u``, and pricing
    LPs recorded as they run (``seen``: the output each priced), with :meth:`window`, a turn
    that ends after five of them."""

    def __init__(self, monkeypatch):
        from mechdesign.bench.envelope import build
        from mechdesign.solvers.cone_pricing import ConePricing

        self.problem = build({"family": "points", "size": 23, "epsilon": 0.5, "prior": "dirichlet",
                              "loss": "metric"})
        notion = self.problem.privacy[0]
        self.cost = cost = self.problem.objective.cost("default")
        n = cost.shape[0]
        self.distances = np.zeros((n, n))
        self.distances[notion.i, notion.j] = notion.d
        self.pairs = (notion.i, notion.j)
        _, self.u = dantzig_wolfe._seeded_master(cost, self.distances, 0.5, symmetry.trivial(n)).solve()
        self.seen: list[int] = []
        price, a = ConePricing.price, cost - self.u[:, None]

        def recorded(pricing, vector, limits=None, fresh=False):
            self.seen.append(int(np.flatnonzero(np.all(a == vector[:, None], axis=0))[0]))
            return price(pricing, vector, limits, fresh)

        monkeypatch.setattr(ConePricing, "price", recorded)
        # the deadlines here are fakes a nanosecond away: no time is kept for the transfer bounds
        # (tested on its own below)
        monkeypatch.setattr(ConePricing, "transfer_reserve", lambda pricing, a, columns: 0.0)

    def pricer(self):
        made = dantzig_wolfe._pricer(self.cost, self.distances, self.pairs, 0.5, symmetry.trivial(self.cost.shape[0]),
                                     1e-9)
        made.smooth = False  # one pricing point, the master's duals
        return made

    def window(self):
        seen = self.seen

        class Window:  # a turn that ends after five pricing LPs
            time_limit = 100.0
            first = len(seen)

            def remaining(self):
                return 0.0 if len(seen) - self.first >= 5 else 100.0

            def expired(self):
                return self.remaining() <= 0.0

        return Window()


def test_cone_pricing_cut_by_a_turn_goes_round_every_output(monkeypatch):
    # a pricing round cut short by a turn's end leaves its cursor where it stopped: successive
    # short rounds price every output in turn, instead of the same first ones each time (300
    # locations behind the interior point's turns: 5 to 70 of 300 outputs priced per round)
    case = _CutPricing(monkeypatch)
    pricer = case.pricer()
    rounds = []
    for _ in range(5):
        seen_before = len(case.seen)
        pricer.round(case.cost, case.u, -1e-12, case.window())
        rounds.append(case.seen[seen_before:])
    assert [len(r) for r in rounds] == [5] * 5
    order, columns = [y for r in rounds for y in r], [int(y) for y in pricer.columns]
    assert order == columns + columns[:2] and pricer.cursor == 2  # the fifth comes round to the start


def test_cone_pricing_cut_by_turns_adds_up_to_the_whole_rounds_bound(monkeypatch):
    # rounds cut short at the same duals count the prices proven by the earlier ones: once they
    # have gone round every output, the bound is (at least) that of one uncut round, and never
    # above the optimum. (Each cut round alone proves only the box minima of the outputs it did
    # not reach: 4,900 grid locations, whose one pass takes about ten minutes, stayed without a
    # useful bound through ten turns.)
    case = _CutPricing(monkeypatch)
    whole = case.pricer()
    whole.round(case.cost, case.u, -1e-12)
    cut = case.pricer()
    bounds = []
    for _ in range(5):  # 25 pricing LPs: every one of the 23 outputs once, two again
        cut.round(case.cost, case.u, -1e-12, case.window())
        bounds.append(cut.bound)
    optimum = case.problem.solve(solver="highs").objective
    assert bounds[0] < whole.bound - 1e-3  # five of 23 outputs priced: far below
    assert bounds == sorted(bounds)
    assert whole.bound - 1e-12 * abs(whole.bound) <= bounds[-1] <= optimum * (1 + 1e-9)


def test_rays_priced_in_a_round_cut_by_a_turn_enter_the_master(monkeypatch):
    # a turn that ends inside a pricing pass keeps the rays it priced: they enter the master, so
    # the next master is lower (they were once dropped while their outputs were marked as used,
    # so that turns shorter than a pass never improved the design: 300 airports in 10-s turns
    # stayed at the first master's 73.3 km for 150 s, against 15.2 km with them kept)
    case = _CutPricing(monkeypatch)
    rays = dantzig_wolfe.RayRounds(case.cost, case.distances, case.pairs, 0.5, gap=1e-9)
    seeded = rays.columns
    rays.advance(case.window())  # the first master, then five pricing LPs
    first = rays.value
    assert len(case.seen) == 5 and len(rays.pool) > 0
    assert rays.columns == seeded + len(rays.pool)  # every ray priced is in the master
    rays.advance(case.window())  # the next master has the five outputs' rays
    assert rays.value < first * (1 - 1e-6)


class _NearDeadline:
    """A solve's limits whose deadline is about to come (so no pass can end before it) but has
    not: pricing goes on, and only the early stop ends a pass."""

    time_limit = 1.0

    def remaining(self):
        return 1e-9

    def expired(self):
        return False


@pytest.mark.parametrize("deadline, master_seconds, early", [
    (_NearDeadline(), 0.0, True),  # cannot finish: stops after its first ray
    (_NearDeadline(), None, False),  # no master time given: the whole pass, as before
    (None, 0.0, False),  # no deadline: the whole pass
])
def test_a_pass_that_cannot_end_before_the_deadline_stops_early_with_a_valid_bound(monkeypatch, deadline,
                                                                                 master_seconds, early):
    case = _CutPricing(monkeypatch)
    pricer = case.pricer()
    a = case.cost - case.u[:, None]
    rays, lagrangian, _, priced, prices, stopped = dantzig_wolfe._price_exactly(
        pricer.pricing, a, pricer.columns, pricer.weights, case.distances, 0.5, -1e-12, pricer.cap,
        deadline, 0, None, master_seconds)
    assert stopped is early and (priced < pricer.columns.size) is early
    assert len(rays) >= 1 and (not early or len(rays) == 1)
    # the outputs left unpriced count with their transfer and flow bounds (at least their box
    # minima); every price is a bound on the box minimum over the whole cone, computed apart
    box = np.minimum(a, 0.0).sum(axis=0)
    unpriced = pricer.columns[priced:]
    transfer = pricer.pricing.transfer_bounds(a, unpriced)
    assert np.all(prices[priced:] >= np.maximum(box[unpriced], transfer))
    exact = cone_pricing.ConePricing(a.shape[0], (case.pairs[0], case.pairs[1], case.distances[case.pairs]), 0.5)
    whole = np.array([exact.price(a[:, y])[0] for y in pricer.columns])
    assert np.all(prices <= whole + 1e-12)
    # the flow bounds, where the pass had time for them, are those box minima (every pair is
    # among each input's nearest); else the transfer bounds stand
    raised = ~np.isclose(prices[priced:], np.maximum(box[unpriced], transfer), rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(prices[priced:][raised], whole[priced:][raised], rtol=1e-7, atol=1e-12)
    assert early or not raised.any()


class _Deadline:
    """A solve's limits with a fixed number of seconds left, never expired."""

    time_limit = 1000.0

    def __init__(self, left: float):
        self.left = left

    def remaining(self):
        return self.left

    def expired(self):
        return False


@pytest.mark.parametrize("left, cut", [(10.0, True), (1000.0, False)])
def test_a_pass_keeps_the_transfer_bounds_time_before_the_deadline(monkeypatch, left, cut):
    # the transfer bounds are timed at 1 s an output, so 23 outputs need 23 s: with 10 s left
    # nothing is priced (the outputs get their transfer bounds), with 1,000 s every output is;
    # within a turn of the same solve the turn's end does not count, the solve's deadline does
    from mechdesign.solvers.portfolio import Turn

    case = _CutPricing(monkeypatch)
    monkeypatch.undo()  # the real pricing and reserve
    pricer = case.pricer()
    pricer.pricing.transfer_seconds = 1.0
    assert pricer.pricing.transfer_reserve(None, pricer.columns) == pricer.columns.size
    a = case.cost - case.u[:, None]
    for limits in (_Deadline(left), Turn(_Deadline(left), 1000.0)):
        *_, priced, prices, _ = dantzig_wolfe._price_exactly(
            pricer.pricing, a, pricer.columns, pricer.weights, case.distances, 0.5, -1e-12, pricer.cap, limits)
        assert (priced == 0) is cut and (priced == pricer.columns.size) is not cut
        transfer = pricer.pricing.transfer_bounds(a, pricer.columns)
        assert np.all(prices >= transfer) and (not cut or np.array_equal(prices, transfer))
        pricer.pricing.transfer_seconds = 1.0
    # without a deadline nothing is kept, and nothing is timed
    pricer.pricing.transfer_seconds = None
    *_, priced, _, _ = dantzig_wolfe._price_exactly(
        pricer.pricing, a, pricer.columns, pricer.weights, case.distances, 0.5, -1e-12, pricer.cap, None)
    assert priced == pricer.columns.size


def test_each_pricing_lp_ends_where_the_transfer_bounds_time_begins(monkeypatch):
    # 1,000 s left and 23 s kept for the transfer bounds: each pricing LP is handed the 977 s up
    # to there, not the 1,000 s up to the deadline (where the transfer bounds would begin late)
    from mechdesign.solvers.portfolio import Turn

    case = _CutPricing(monkeypatch)
    monkeypatch.undo()
    pricer = case.pricer()
    handed = []
    price = cone_pricing.ConePricing.price

    def recorded(self, vector, limits=None, **options):
        handed.append(limits.remaining())
        return price(self, vector, limits, **options)

    monkeypatch.setattr(cone_pricing.ConePricing, "price", recorded)
    a = case.cost - case.u[:, None]
    kept = float(pricer.columns.size)
    for limits, most in ((_Deadline(1000.0), 1000.0 - kept), (Turn(_Deadline(1000.0), 5.0), 5.0)):
        handed.clear()
        pricer.pricing.transfer_seconds = 1.0
        dantzig_wolfe._price_exactly(pricer.pricing, a, pricer.columns, pricer.weights, case.distances, 0.5,
                                     -1e-12, pricer.cap, limits)
        assert len(handed) == pricer.columns.size and max(handed) <= most and min(handed) > most - 1.0


def test_the_flow_bounds_of_a_pass_take_no_longer_than_its_pricing(monkeypatch):
    # a pass stopped after its first ray (the solve's deadline is near) within a turn that has
    # 1,000 s left: its flow bounds get at most the seconds it priced, not the turn's 1,000 s (at
    # the first master's duals of 1,500 airports they had taken the whole ten minutes)
    class LongTurn:
        outer, time_limit = _NearDeadline(), 1000.0

        def remaining(self):
            return 1000.0

        def expired(self):
            return False

    case = _CutPricing(monkeypatch)
    pricer = case.pricer()
    handed = []
    flows = cone_pricing.ConePricing.flow_bounds

    def recorded(self, a, columns, limits=None):
        handed.append(limits.remaining())
        return flows(self, a, columns, limits)

    monkeypatch.setattr(cone_pricing.ConePricing, "flow_bounds", recorded)
    a = case.cost - case.u[:, None]
    start = time.perf_counter()
    *_, priced, _, stopped = dantzig_wolfe._price_exactly(
        pricer.pricing, a, pricer.columns, pricer.weights, case.distances, 0.5, -1e-12, pricer.cap,
        LongTurn(), 0, None, 0.0)
    assert stopped and priced < pricer.columns.size
    assert len(handed) == 1 and 0.0 < handed[0] <= time.perf_counter() - start


def test_the_first_reserve_is_timed_on_a_few_outputs(monkeypatch):
    case = _CutPricing(monkeypatch)
    monkeypatch.undo()
    pricing = case.pricer().pricing
    a = case.cost - case.u[:, None]
    timed = []
    bounds = cone_pricing.ConePricing.transfer_bounds

    def counted(self, a, columns):
        timed.append(columns.size)
        return bounds(self, a, columns)

    monkeypatch.setattr(cone_pricing.ConePricing, "transfer_bounds", counted)
    columns = np.arange(a.shape[1])
    reserve = pricing.transfer_reserve(a, columns)
    # one output first, untimed (the compiled kernel's first call may compile it), then a few
    assert timed == [1, min(cone_pricing.TIMED_OUTPUTS, columns.size)] and reserve > 0.0
    assert reserve == pytest.approx(pricing.transfer_seconds * columns.size)
    pricing.transfer_reserve(a, columns)
    assert len(timed) == 2  # timed once


def test_after_a_whole_pass_a_pass_is_never_stopped_early(monkeypatch):
    # passes cut at the deadline add to the bound of a whole pass through the prices carried
    case = _CutPricing(monkeypatch)
    pricer = case.pricer()
    pricer.round(case.cost, case.u, -1e-12, _NearDeadline(), master_seconds=0.0)
    assert pricer.stopped_early and pricer.whole_passes == 0 and len(case.seen) < pricer.columns.size
    whole = case.pricer()
    whole.round(case.cost, case.u, -1e-12)
    assert whole.whole_passes == 1
    seen = len(case.seen)
    whole.round(case.cost, case.u, -1e-12, _NearDeadline(), master_seconds=0.0)
    assert not whole.stopped_early and whole.whole_passes == 2
    assert len(case.seen) - seen == whole.columns.size


def test_rays_stopped_early_before_the_deadline_improve_the_master_and_do_not_count_as_a_stall(monkeypatch):
    price = cone_pricing.ConePricing.price
    case = _CutPricing(monkeypatch)
    calls = []

    def counted(pricing, vector, limits=None, fresh=False):
        calls.append(1)
        return price(pricing, vector, limits, fresh)
    monkeypatch.setattr(cone_pricing.ConePricing, "price", counted)
    rays = dantzig_wolfe.RayRounds(case.cost, case.distances, case.pairs, 0.5, gap=1e-9, stall=1)

    class Turn:  # a turn with time left, inside a solve whose deadline is about to come
        outer, time_limit = _NearDeadline(), 100.0

        def remaining(self):
            return 100.0

        def expired(self):
            return False

    values = []
    for _ in range(4):  # (with stall=1, two full rounds without halving the gap would decline)
        rays.advance(Turn())
        values.append(rays.value)
        assert rays.pricer.stopped_early and rays.columns > 0
    assert rays.gaps == [] and len(calls) < 4 * case.cost.shape[1]
    assert values[-1] < values[0]


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_prices_carried_to_other_duals_never_exceed_the_new_box_minima(seed):
    # over the box alone (no cone rows) the minimum of (C − p)·v is Σ_x min(C − p, 0)_x, in
    # closed form at both points: the prices carried from p0 to p1 must not exceed it at p1
    # (carried unchanged, they would wherever a dual rose), and are exact when p1 <= p0
    rng = np.random.default_rng(seed)
    cost = rng.random((6, 4))
    p0, p1 = rng.normal(size=6), rng.normal(size=6)
    box = [np.minimum(cost - p[:, None], 0.0).sum(axis=0) for p in (p0, p1)]
    pricer = dantzig_wolfe._Pricer(None, np.arange(4), np.ones(4, dtype=int), np.zeros((6, 6)), 1.0, np.inf, False,
                                   True, priced_at=p0, proven=box[0])
    carried = pricer._carried(p1)
    assert np.all(carried <= box[1])
    if np.all(p1 <= p0):
        assert np.allclose(carried, box[0])


def _steep_grid() -> Problem:
    # 36 grid points at ε = 28.45 with the 0-1 loss: the optimal design is nearly the identity,
    # its off-diagonal entries e^{−28.45} = 4e-13 of the diagonal, under the 1e-12 of a ray's
    # peak that the master keeps, and they are the whole loss (about 1.5e-12)
    dom, metric = Domain.from_grid(6, 6), Metric("euclidean")
    prior = np.random.default_rng(7).dirichlet(np.ones(36))
    return Problem(inputs=dom, privacy=[MetricPrivacy(28.45, metric, dom)],
                   objective=ExpectedLoss(1.0 - np.eye(36), {"default": prior}))


def test_the_rays_value_is_their_designs_not_the_truncated_masters():
    problem = _steep_grid()
    notion = problem.privacy[0]
    cost = problem.objective.cost("default")
    distances = notion.metric.distances(problem.inputs)
    rays = dantzig_wolfe.RayRounds(cost, distances, (notion.i, notion.j), notion.epsilon, gap=5e-7)
    try:
        rays.advance()
    except dantzig_wolfe.RaysStalled:
        pass  # (no ray prices out below the truncation: the gap stays open, as it should)
    design_value = float((cost * rays.design()).sum())
    assert design_value > 0.0
    assert rays.value >= design_value
    assert not rays.done or rays.bound >= design_value * (1 - 1e-6)  # never "proven" by a bound of 0


def test_a_loss_below_the_rays_truncation_is_still_proven_optimal():
    problem = _steep_grid()
    ours = problem.solve()
    plain = problem.solve(solver="highs")  # the LP with chained coefficients, a second algorithm
    assert ours.status == plain.status == "optimal", ours.message
    assert ours.certificate[0].holds
    assert 0.0 < ours.solver["bound"] <= ours.objective
    # at least as good as the LP's design, never below the bound the LP's own duals prove
    assert plain.solver["bound"] * (1 - 1e-9) <= ours.objective <= plain.objective * (1 + 1e-9)


def test_a_lazy_lp_whose_highs_interior_point_never_returned_now_ends_at_the_plain_lps_optimum():
    # four points at ε = 27 (pair rows up to e^98), one of prior 0, the Hamming loss: the LP
    # with lazy pair rows (72 columns) ran HiGHS's interior point without end; each run now
    # stops at the iteration limit, takes it as a run without an optimum and goes on
    from mechdesign.design.spec import problem_from_dict
    from mechdesign.solvers.highs_model import IPM_ITERATION_LIMIT, quiet_model

    assert quiet_model().getOptionValue("ipm_iteration_limit")[1] == IPM_ITERATION_LIMIT
    spec = {"name": "ipm-without-end", "metric": {"kind": "euclidean"},
            "inputs": {"points": [[2.0000001, 3.0], [2.0, 1.0], [0.0, 1e-07], [3.0000000000001, 1e-07]]},
            "distributions": {"prior": [0.0, 0.391304347826087, 0.391304347826087, 0.21739130434782608]},
            "privacy": [{"notion": "metric", "epsilon": 27.192478294496112}],
            "objective": {"kind": "expected-loss", "prior": "prior", "loss": "hamming"}}
    result = problem_from_dict(spec).solve()
    plain = problem_from_dict(spec).solve(solver="highs")
    assert result.holds and result.status == "optimal" and plain.status == "optimal"
    assert result.objective == pytest.approx(plain.objective, abs=1e-12)


def test_the_first_master_holds_the_exponential_mechanism_with_its_best_remap():
    """The seeded master contains the exponential mechanism's columns (report z with probability
    ∝ e^{−ε d(x, z)/2}), each on its cheapest output, so its first value is at most that
    mechanism's after the best remap of its reports, computed here directly. On 300 airports at
    ε = 1 per 10 km the peaked rays alone left the rows to the constant column: 73.3 km of
    expected loss, where the optimum is 15.1 km."""
    from mechdesign.bench.scale import build
    from mechdesign.solvers.symmetry import trivial

    problem = build("airports", {"n": 300, "prior": "uniform", "gap_tolerance": 1e-6, "epsilon": 1.0})
    notion = problem.privacy[0]
    d = notion.metric.distances(notion.domain)
    cost = problem.objective.cost("default")
    epsilon = notion.epsilon
    expo = np.exp(-0.5 * epsilon * d)
    expo /= expo.sum(axis=1, keepdims=True)
    remap = np.argmin(expo.T @ cost, axis=1)  # each report's cheapest output
    remapped = np.zeros_like(expo)
    np.add.at(remapped.T, remap, expo.T)
    assert np.allclose(remapped.sum(axis=1), 1.0)
    value_exp = float((cost * remapped).sum())
    master = dantzig_wolfe._seeded_master(cost, d, epsilon, trivial(300))
    value, _ = master.solve()
    assert value <= value_exp * (1 + 1e-9)
    assert value < 20.0  # (73.3 before: within a third of the optimum's 15.1 now)
    # the master's design is private: every column a combination of rays of the cone
    k = master.matrix()
    assert np.allclose(k.sum(axis=1), 1.0, atol=1e-9)
    level = MetricPrivacy(epsilon, notion.metric, notion.domain).level(k)
    assert level <= epsilon * (1 + 1e-6)
