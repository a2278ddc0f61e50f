"""Every reported lower bound is proven: it never exceeds the optimum computed independently
(scipy.optimize.linprog over the all-pairs LP, or Clarabel at tight tolerances), even when the
LP solver is run at deliberately loose dual tolerances, and it is within 1e-7 of the optimum
at the package's own settings."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ExpectedLoss, WorstCaseLoss
from mechdesign.design import resolve as resolve_module
from mechdesign.design.spec import load_problem
from mechdesign.privacy import LDP, MetricPrivacy
from mechdesign.solvers import column_generation, lazy_pairs, line_rays, ray_master
from mechdesign.solvers import convex_route as problem_module
from mechdesign.solvers.highs_model import quiet_model
from mechdesign.solvers.lp_bound import lagrangian_bound, propagate_box, proven_lp_bound
from tests.conftest import PROBLEMS

TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def all_pairs_design(cost: np.ndarray, i, j, coef) -> float:
    """min Σ C K over row-stochastic K with K[i, y] <= coef K[j, y] for every listed pair and
    output, as one plain LP (every pair, no laziness), by scipy's HiGHS."""
    n, m = cost.shape
    p = i.size
    rows = np.repeat(np.arange(p * m), 2)
    cols = np.column_stack([(i[:, None] * m + np.arange(m)).ravel(), (j[:, None] * m + np.arange(m)).ravel()]).ravel()
    vals = np.column_stack([np.ones(p * m), -np.repeat(coef, m)]).ravel()
    pairs = sp.csr_matrix((vals, (rows, cols)), shape=(p * m, n * m))
    sums = sp.kron(sp.identity(n), np.ones((1, m)))
    res = linprog(cost.ravel(), A_ub=pairs, b_ub=np.zeros(p * m), A_eq=sums, b_eq=np.ones(n), bounds=(0, None),
                  method="highs", options=TIGHT)
    assert res.status == 0
    return float(res.fun)


def random_metric_instance(rng, n):
    pts = rng.random((n, 2))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    cost = rng.random((n, n)) * rng.dirichlet(np.ones(n))[:, None]
    return cost, (i, j, dist[i, j])


@pytest.mark.parametrize("seed", range(5))
def test_lazy_pairs_bound_is_proven_and_tight(seed):
    rng = np.random.default_rng(seed)
    cost, (i, j, d) = random_metric_instance(rng, 8)
    eps = rng.uniform(0.3, 2.0)
    optimum = all_pairs_design(cost, i, j, np.exp(eps * d))
    found = lazy_pairs.solve_lazily(cost, (i, j, d), eps)
    assert found.bound <= optimum + 1e-12
    assert found.bound == pytest.approx(optimum, rel=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_lazy_pairs_split_far_pairs_into_links_exactly(seed):
    # ε = 16 on the unit square: εd reaches ~20, so the pairs farther apart than 0.75 enter the lazy
    # LP as two links through an auxiliary entry; the optimum and its proven bound must still
    # be those of the all-pairs LP with every pair in one row
    rng = np.random.default_rng(200 + seed)
    cost, (i, j, d) = random_metric_instance(rng, 10)
    eps = 16.0
    linked = eps * d > lazy_pairs.LINK_MAX_EXPONENT
    assert linked.any()
    optimum = all_pairs_design(cost, i, j, np.exp(eps * d))
    found = lazy_pairs.solve_lazily(cost, (i, j, d), eps)
    assert found.bound <= optimum + 1e-12
    assert found.bound == pytest.approx(optimum, rel=1e-7)
    assert found.objective == pytest.approx(optimum, rel=1e-7)


@pytest.mark.parametrize("eps", [24.0, 40.0])
@pytest.mark.parametrize("seed", range(3))
def test_lazy_pairs_long_chains_agree_with_the_cone_rays(seed, eps):
    # ε = 24 (40) on the unit square: εd reaches ~34 (~56), far pairs enter as chains of up to
    # three (five) links; no plain LP takes such coefficients, so the second algorithm is the
    # ray decomposition, whose rays are closed under the exact envelope (no pair rows at all)
    from mechdesign.solvers import dantzig_wolfe

    rng = np.random.default_rng(300 + seed)
    cost, (i, j, d) = random_metric_instance(rng, 12)
    assert (eps * d > 2 * lazy_pairs.LINK_MAX_EXPONENT).any()
    found = lazy_pairs.solve_lazily(cost, (i, j, d), eps)
    dist = np.zeros((12, 12))
    dist[i, j] = d
    try:
        rays = dantzig_wolfe.solve_metric(cost, dist, (i, j), eps, gap=1e-9)
    except dantzig_wolfe.RaysStalled as stalled:  # a design with the gap it proved
        rays = stalled.solution
    assert rays.objective - rays.bound <= 1e-6 * rays.objective
    assert found.objective == pytest.approx(rays.objective, rel=1e-6)
    assert found.bound <= rays.objective * (1 + 1e-12) and rays.bound <= found.objective * (1 + 1e-12)
    assert found.objective - found.bound <= 1e-7 * found.objective


@pytest.mark.parametrize("seed", range(4))
def test_lazy_pairs_bound_holds_when_the_simplex_stops_early(monkeypatch, seed):
    # a dual feasibility tolerance of 0.02 lets HiGHS stop at a suboptimal vertex: its objective
    # then exceeds the optimum (by up to 4e-3 on these instances); the dual bound may not
    rng = np.random.default_rng(100 + seed)
    cost, (i, j, d) = random_metric_instance(rng, 8)
    monkeypatch.setattr(lazy_pairs, "quiet_model",
                        lambda **kw: quiet_model(**{**kw, "dual_feasibility_tolerance": 0.02}))
    found = lazy_pairs.solve_lazily(cost, (i, j, d), 1.0)
    optimum = all_pairs_design(cost, i, j, np.exp(d))
    assert found.bound <= optimum + 1e-12


def nearly_constant_line_costs(seed: int, n: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Unit-spaced points whose rows of costs are constant up to a spread of 1e-9, and one entry
    of cost 1 that sets max|C|: the optimum is about 1e-4, and the master's reduced costs fall
    within the 1e-9·max|C| that line pricing treats as zero (yet the LP profits from them)."""
    rng = np.random.default_rng(seed)
    cost = rng.uniform(0.5, 1.5, n)[:, None] * 1e-5 - rng.uniform(0.0, 1e-9, (n, n))
    cost[0, -1] = 1.0
    return np.arange(n, dtype=float), cost


@pytest.mark.parametrize("seed", range(3))
def test_line_rays_bound_holds_when_reduced_costs_are_priced_as_zero(monkeypatch, seed):
    # the reduced costs set to zero for pricing are negative by up to 1e-9 each: a bound built
    # on the zeroed costs exceeded the optimum by 3e-11 to 2e-10 on these instances
    points, cost = nearly_constant_line_costs(seed)
    monkeypatch.setattr(ray_master, "quiet_model", lambda **kw: quiet_model(**{**kw, "tolerance": 1e-7}))
    monkeypatch.setattr(line_rays, "DENSE_ENTRIES", 0)  # return the design and its bound, never decline
    found = line_rays.solve_line(cost, points, 1.0)
    i, j = np.nonzero(~np.eye(points.size, dtype=bool))
    optimum = all_pairs_design(cost, i, j, np.exp(np.abs(points[i] - points[j])))
    assert found.bound <= optimum + 1e-15


@pytest.mark.parametrize("seed", [1, 2, 5, 7])
def test_column_generation_bound_holds_when_the_simplex_stops_early(monkeypatch, seed):
    # at a dual feasibility tolerance of 0.02 the master stops at a suboptimal vertex (by up to
    # 6e-3 on these instances), its own columns pricing out negative: Σu alone exceeds the optimum
    rng = np.random.default_rng(seed)
    n, eps = 8, 1.0
    cost = rng.random((n, n)) * rng.dirichlet(np.ones(n))[:, None]
    cost /= cost.max()
    monkeypatch.setattr(column_generation, "quiet_model",
                        lambda **kw: quiet_model(**{**kw, "dual_feasibility_tolerance": 0.02}))
    found = column_generation.solve_by_columns(cost, column_generation.LDPCone(n, eps))
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    optimum = all_pairs_design(cost, i, j, np.full(i.size, np.exp(eps)))
    assert found.bound <= optimum + 1e-12


def test_lazy_pairs_route_end_to_end(monkeypatch):
    # 30 random locations, small ε, rays that stall at once: Problem.solve goes on to the
    # lazy-pairs LP; its reported bound (through the objective scaling of solve_contexts) is
    # proven and tight
    from mechdesign.solvers import dantzig_wolfe

    def stall(*args, **kwargs):
        raise dantzig_wolfe.RaysStalled("stalled (test)", None)

    monkeypatch.setattr(dantzig_wolfe, "solve_portfolio", stall)
    rng = np.random.default_rng(0)
    n, eps = 30, 0.5
    pts = Domain.from_points(rng.random((n, 2)))
    metric = Metric("euclidean")
    cost, prior = rng.random((n, n)), rng.dirichlet(np.ones(n))
    result = Problem(inputs=pts, privacy=[MetricPrivacy(eps, metric, pts)],
                     objective=ExpectedLoss(cost, {"default": prior})).solve()
    assert result.solver["name"].endswith("lazy pair constraints") and result.status == "optimal"
    assert result.solver["bound_proven"] is True
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    optimum = all_pairs_design(prior[:, None] * cost, i, j, np.exp(eps * metric.distances(pts)[i, j]))
    assert result.solver["bound"] <= optimum + 1e-12
    assert result.solver["bound"] == pytest.approx(optimum, rel=1e-7)


GENERAL_ROUTE = ["coupling-barycenter", "dinf-distp", "distp-two-sources"]


def clarabel_optimum(problem: Problem) -> float:
    program = problem.compile()
    program.problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return float(program.problem.value) * program.scale


@pytest.mark.parametrize("name", GENERAL_ROUTE)
def test_general_route_bound_on_shipped_problems(name):
    problem = load_problem(PROBLEMS / f"{name}.toml")
    result = problem.solve()
    assert result.solver["name"] == "HIGHS"  # the general LP route
    assert result.status == "optimal"
    assert result.solver["bound_proven"] is True
    optimum = clarabel_optimum(problem)
    bound = result.solver["bound"]
    assert bound <= optimum + 1e-9 * abs(optimum)
    assert result.objective - bound <= 1e-7 * abs(result.objective)


LINEAR_SHIPPED = sorted(path.stem for path in PROBLEMS.glob("*.toml")
                        if load_problem(path).linear)


@pytest.mark.parametrize("name", LINEAR_SHIPPED)
def test_general_route_bound_on_every_linear_shipped_problem(name):
    # every shipped LP forced through the general route (solver "highs"), against Clarabel
    problem = load_problem(PROBLEMS / f"{name}.toml")
    result = problem.solve(solver="highs")
    assert result.status == "optimal" and result.solver["bound_proven"] is True
    optimum = clarabel_optimum(problem)
    bound = result.solver["bound"]
    assert bound <= optimum + 1e-9 * abs(optimum)
    assert result.objective - bound <= 1e-7 * abs(result.objective)


def worst_case_ldp_optimum(loss: np.ndarray, eps: float) -> float:
    """min t s.t. Σ_y L[x, y] K[x, y] <= t for all x, K[x, y] <= e^ε K[x', y], K row-stochastic."""
    n, m = loss.shape
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    p = i.size
    rows = np.repeat(np.arange(p * m), 2)
    cols = np.column_stack([(i[:, None] * m + np.arange(m)).ravel(), (j[:, None] * m + np.arange(m)).ravel()]).ravel()
    vals = np.column_stack([np.ones(p * m), np.full(p * m, -np.exp(eps))]).ravel()
    pairs = sp.hstack([sp.csr_matrix((vals, (rows, cols)), shape=(p * m, n * m)), sp.csr_matrix((p * m, 1))])
    losses = sp.hstack([sp.block_diag([loss[x][None, :] for x in range(n)]), -np.ones((n, 1))])
    sums = sp.hstack([sp.kron(sp.identity(n), np.ones((1, m))), sp.csr_matrix((n, 1))])
    c = np.zeros(n * m + 1)
    c[-1] = 1.0
    res = linprog(c, A_ub=sp.vstack([pairs, losses]), b_ub=np.zeros(p * m + n), A_eq=sums, b_eq=np.ones(n),
                  bounds=(0, None), method="highs", options=TIGHT)
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", range(4))
def test_general_route_bound_on_random_small_lps(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    dom = Domain.from_size(n)
    # worst-case loss under ε-LDP: an epigraph variable the box must bound through the cut-off
    loss = rng.random((n, n))
    eps = float(rng.uniform(0.2, 2.0))
    result = Problem(inputs=dom, privacy=[LDP(eps)], objective=WorstCaseLoss(loss, ["default"])).solve()
    optimum = worst_case_ldp_optimum(loss, eps)
    assert result.solver["name"] == "HIGHS" and result.status == "optimal"
    assert result.solver["bound"] <= optimum + 1e-12
    assert result.solver["bound"] == pytest.approx(optimum, rel=1e-7)
    # expected loss under d-privacy on a few points: the general route when named, and the whole
    # pair LP built directly that takes these sizes otherwise
    pts = Domain.from_points(rng.random((n, 2)))
    metric = Metric("euclidean")
    cost = rng.random((n, n))
    prior = rng.dirichlet(np.ones(n))
    problem = Problem(inputs=pts, privacy=[MetricPrivacy(eps, metric, pts)],
                      objective=ExpectedLoss(cost, {"default": prior}))
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    optimum = all_pairs_design(prior[:, None] * cost, i, j, np.exp(eps * metric.distances(pts)[i, j]))
    for solver, route in (("highs", "HIGHS"), ("auto", "HiGHS (every pair row)")):
        result = problem.solve(solver=solver)
        assert result.solver["name"] == route and result.status == "optimal"
        assert result.solver["bound"] <= optimum + 1e-12
        assert result.solver["bound"] == pytest.approx(optimum, rel=1e-7)


def test_general_route_bound_holds_at_loose_solver_tolerances(monkeypatch):
    # with a loose dual tolerance HiGHS stops at a suboptimal vertex and reports its objective
    # as "optimal"; the bound proven from its duals stays below the optimum, so the gap shows
    # (the re-solves at other settings are switched off: they would find the optimum)
    monkeypatch.setattr(problem_module, "HIGHS_OPTIONS", {"dual_feasibility_tolerance": 0.05})
    monkeypatch.setattr(resolve_module, "HIGHS_RESOLVES", ())
    rng = np.random.default_rng(7)
    worse = 0
    for _ in range(6):
        n = 6
        loss = rng.random((n, n))
        result = Problem(inputs=Domain.from_size(n), privacy=[LDP(0.7)],
                         objective=WorstCaseLoss(loss, ["default"])).solve()
        optimum = worst_case_ldp_optimum(loss, 0.7)
        assert result.solver["bound"] <= optimum + 1e-12
        worse += result.solver["objective"] > optimum + 1e-9  # the solver's own claim was wrong
        if result.objective > optimum * (1 + 1e-6):
            assert result.status == "failed"
    assert worse > 0


def test_a_suboptimal_vertex_is_re_solved_to_the_optimum(monkeypatch):
    # the same loose tolerance for the first solve; the re-solves in units of its value, with
    # the primal simplex at tight tolerances among them, reach the closed-form optimum
    monkeypatch.setattr(problem_module, "HIGHS_OPTIONS", {"dual_feasibility_tolerance": 0.05})
    rng = np.random.default_rng(7)
    for _ in range(6):
        n = 6
        loss = rng.random((n, n))
        result = Problem(inputs=Domain.from_size(n), privacy=[LDP(0.7)],
                         objective=WorstCaseLoss(loss, ["default"])).solve()
        optimum = worst_case_ldp_optimum(loss, 0.7)
        assert result.status == "optimal", result.message
        assert result.objective == pytest.approx(optimum, rel=1e-6)
        assert result.solver["bound"] <= optimum + 1e-12


def test_lagrangian_bound_holds_for_any_multipliers():
    # min c·x over a random feasible polytope: any y (noise included) gives a bound <= optimum
    rng = np.random.default_rng(3)
    n, m = 12, 8
    A = rng.normal(size=(m, n))
    x0 = rng.random(n)
    b = A @ x0 + rng.random(m)
    c = rng.normal(size=n)
    res = linprog(c, A_ub=A, b_ub=b, bounds=(0, 1), method="highs", options=TIGHT)
    for _ in range(20):
        y = -np.abs(rng.normal(size=m))
        bound = lagrangian_bound(c, sp.csr_matrix(A), np.full(m, -np.inf), b, y, np.zeros(n), np.ones(n))
        assert bound <= res.fun + 1e-12
    dual = res.ineqlin.marginals  # scipy's marginals: <= 0 on active upper rows, like HiGHS's
    bound = lagrangian_bound(c, sp.csr_matrix(A), np.full(m, -np.inf), b, dual, np.zeros(n), np.ones(n))
    assert bound == pytest.approx(res.fun, abs=1e-9)


def test_box_propagation_bounds_an_epigraph_variable_through_the_cutoff():
    # min t s.t. x_k <= t, Σ x = 1, x >= 0: t has no bound of its own; the cut-off t <= 1
    # and the rows give 1/3 <= t <= 1 and 0 <= x <= 1
    A = sp.csr_matrix(np.array([[1, 0, 0, -1], [0, 1, 0, -1], [0, 0, 1, -1], [1, 1, 1, 0]], float))
    lo, hi = propagate_box(sp.vstack([A, sp.csr_matrix([[0, 0, 0, 1.0]])]),
                           np.array([-np.inf] * 3 + [1.0, -np.inf]), np.array([0, 0, 0, 1.0, 1.0]),
                           np.array([0, 0, 0, -np.inf]), np.full(4, np.inf))
    assert hi == pytest.approx([1, 1, 1, 1])
    assert lo[:3] == pytest.approx([0, 0, 0])
    assert np.isfinite(lo[3])
    c = np.array([0, 0, 0, 1.0])
    y = np.array([-1 / 3] * 3 + [1 / 3])
    bound = proven_lp_bound(c, A, np.array([-np.inf] * 3 + [1.0]), np.array([0, 0, 0, 1.0]), y,
                            np.array([0, 0, 0, -np.inf]), np.full(4, np.inf), cutoff=1.0)
    assert bound == pytest.approx(1 / 3, abs=1e-14) and bound <= 1 / 3
    # without the cut-off, t is unbounded above and the residual of t is 0; x's residuals 1/3 - 1/3
    assert proven_lp_bound(c, A, np.array([-np.inf] * 3 + [1.0]), np.array([0, 0, 0, 1.0]), y,
                           np.array([0, 0, 0, -np.inf]), np.full(4, np.inf), cutoff=None) <= 1 / 3


CONIC_SHIPPED = ["kl-distp", "mutual-information-skewed", "information-capacity", "airports-distp"]


def tight_conic_optimum(name: str) -> float:
    program = load_problem(PROBLEMS / f"{name}.toml").compile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # at 1e-12 Clarabel may call its (accurate) answer inaccurate
        program.problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return float(program.problem.value)


@pytest.mark.parametrize("name", CONIC_SHIPPED)
def test_conic_bound_on_shipped_problems(name):
    # exponential-cone programs: the bound from Clarabel's dual moved into the dual cone
    problem = load_problem(PROBLEMS / f"{name}.toml")
    result = problem.solve()
    assert result.solver["name"] == "CLARABEL" and result.status == "optimal"
    assert result.solver["bound_proven"] is True
    optimum = tight_conic_optimum(name)
    assert result.solver["bound"] <= optimum + 1e-9 * abs(optimum)
    assert result.solver["gap"] <= problem.gap_tolerance


def test_conic_bound_holds_at_loose_solver_tolerances(monkeypatch):
    # stopped early, Clarabel's dual objective overshoots the optimum; the proven bound does not
    monkeypatch.setattr(problem_module, "CONIC_OPTIONS",
                        {"CLARABEL": {"tol_gap_abs": 1e-3, "tol_gap_rel": 1e-3, "tol_feas": 1e-3, "max_iter": 8}})
    overshoots = 0
    for name in CONIC_SHIPPED[:3]:
        result = load_problem(PROBLEMS / f"{name}.toml").solve()
        optimum = tight_conic_optimum(name)
        proven = result.solver.get("proven_bound", result.solver.get("bound"))
        assert proven is not None and proven <= optimum + 1e-12
        overshoots += result.solver["objective"] > optimum + 1e-9  # the solver's dual objective
    assert overshoots > 0


def test_dual_cone_point_is_in_the_dual_exponential_cone():
    from mechdesign.solvers.conic_bound import dual_cone_point

    rng = np.random.default_rng(5)
    z = rng.normal(size=2 + 3 + 3 * 200) * rng.choice([1e-3, 1.0, 30.0], size=2 + 3 + 3 * 200)
    fixed = dual_cone_point(z, 2, 3, 200)
    assert np.array_equal(fixed[:2], z[:2]) and np.all(fixed[2:5] >= 0)
    u, v, w = (np.asarray(fixed[5:].reshape(-1, 3)[:, k], dtype=np.longdouble) for k in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = np.where(u < 0, -u * np.exp(v / u) <= np.e * w, (u == 0) & (v >= 0) & (w >= 0))
    assert inside.all()


@pytest.mark.parametrize("seed", range(4))
def test_row_simplex_bound_is_tight_at_an_optimum_and_never_above_it(seed):
    """min c·K over row-stochastic K (n × m) with random rows K[a, y] <= e^{ε} K[b, y]: the bound
    that keeps the rows' simplices equals the optimum of an independent LP at exact duals, and
    stays below it with duals from a solve at loose tolerances."""
    from mechdesign.solvers.highs_model import INF
    from mechdesign.solvers.lp_bound import row_simplex_bound

    rng = np.random.default_rng(seed)
    n, m, eps = 6, 5, 0.7
    c = rng.random(n * m)
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and rng.random() < 0.5]
    rows = [(a * m + y, b * m + y) for a, b in pairs for y in range(m)]
    a_ub = np.zeros((len(rows), n * m))
    for r, (p, q) in enumerate(rows):
        a_ub[r, p], a_ub[r, q] = 1.0, -np.exp(eps)
    eq = np.kron(np.eye(n), np.ones(m))
    optimum = linprog(c, A_ub=a_ub, b_ub=np.zeros(len(rows)), A_eq=eq, b_eq=np.ones(n), method="highs",
                      options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}).fun
    for tol in (1e-10, 1e-5):
        h = quiet_model(tolerance=tol)
        h.addCols(n * m, c, np.zeros(n * m), np.full(n * m, INF), 0, np.zeros(n * m, dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([]))
        h.addRows(n, np.ones(n), np.ones(n), n * m, np.arange(0, n * m, m, dtype=np.int32),
                  np.arange(n * m, dtype=np.int32), np.ones(n * m))
        index = np.array(rows, dtype=np.int32).ravel()
        values = np.tile([1.0, -np.exp(eps)], len(rows))
        h.addRows(len(rows), np.full(len(rows), -INF), np.zeros(len(rows)), 2 * len(rows),
                  np.arange(0, 2 * len(rows), 2, dtype=np.int32), index, values)
        h.run()
        bound = row_simplex_bound(h, n, m)
        assert bound <= optimum + 1e-15
        if tol == 1e-10:
            assert bound == pytest.approx(optimum, rel=1e-8)


def test_a_second_run_stopped_by_the_time_limit_makes_the_context_stopped_even_if_its_design_is_worse():
    # a line of 10,000 points with a Zipf prior kept its first design, and the second run's stop
    # at the limit was lost: the solve ended "failed" instead of "time-limit"
    from mechdesign.solvers.contexts import ContextSolution, _again_in_units_of_value

    C = np.array([[0.0, 2.0], [2.0, 0.0]])
    first = ContextSolution(np.eye(2), objective=0.5, bound=0.4, rounds=1, columns=2)

    def solve_one(key, cost):  # worse design (in units of the value), stopped at the limit
        return ContextSolution(np.full((2, 2), 0.5), objective=2.0, bound=0.9, rounds=3, columns=4,
                               stopped=True)

    found, _ = _again_in_units_of_value("default", C, 2.0, first, [0.4, 0.0], solve_one, None)
    assert found.objective == 0.5 and found.rounds == 4
    assert found.stopped


def test_a_light_tailed_prior_on_a_line_is_proven_optimal_and_no_private_design_beats_it():
    # a permuted Zipf(1.1) prior with the squared loss on 300 points: the tail's costs are 1e-8
    # of the largest, and one round-off threshold on the scale of the largest cost zeroed them,
    # leaving the proven gap at 3e-5 after 20 s; per input the threshold is on its own costs
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from mechdesign.core.domain import Domain
    from mechdesign.core.metrics import Metric
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.design.problem import Problem
    from mechdesign.privacy import MetricPrivacy
    from mechdesign.privacy.certify import certify

    n, eps = 300, 1.0
    w = 1.0 / np.arange(1, n + 1) ** 1.1
    prior = np.random.default_rng(0).permutation(w / w.sum())
    dom, metric = Domain.from_size(n), Metric("absolute")
    loss = metric.distances(dom) ** 2
    notion = MetricPrivacy(eps, metric, dom)
    result = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(loss, {"default": prior}),
                     gap_tolerance=1e-6).solve(time_limit=60)
    assert result.status == "optimal" and result.solver["gap"] <= 1e-6
    # scipy's LP over the consecutive pairs (its own code): its optimum breaks the constraints
    # by up to 1e-7, so its value is only a loose floor; repaired and audited by the
    # certificate it is a private design, which cannot beat the optimum
    C = prior[:, None] * loss
    idx = np.arange(n * n).reshape(n, n)
    a, b = idx[:-1].ravel(), idx[1:].ravel()
    r = np.arange(a.size)
    ones, ratio = np.ones(a.size), -np.exp(eps) * np.ones(a.size)
    A_ub = sp.vstack([sp.csr_array((np.r_[ones, ratio], (np.r_[r, r], np.r_[a, b])), shape=(a.size, n * n)),
                      sp.csr_array((np.r_[ones, ratio], (np.r_[r, r], np.r_[b, a])), shape=(a.size, n * n))])
    lp = linprog(C.ravel(), A_ub=A_ub.tocsr(), b_ub=np.zeros(2 * a.size),
                 A_eq=sp.kron(sp.eye(n), np.ones((1, n))).tocsr(), b_eq=np.ones(n), bounds=(0, None),
                 method="highs")
    assert lp.status == 0
    mechs, audits, _ = certify([notion], {"default": lp.x.reshape(n, n)})
    assert audits[0].holds
    assert result.objective <= float((C * mechs["default"]).sum()) * (1 + 1e-9)
    assert result.objective >= lp.fun * (1 - 1e-4)


def test_a_conic_run_whose_duals_prove_too_little_is_run_again_and_the_better_proof_kept(monkeypatch):
    # the first run stops after 8 iterations (its duals prove a loose bound); the second run's
    # options restore the tight tolerances and iterations, and its proof is the one kept
    from mechdesign.solvers import convex_route

    monkeypatch.setattr(convex_route, "CONIC_OPTIONS",
                        {"CLARABEL": {"tol_gap_abs": 1e-3, "tol_gap_rel": 1e-3, "tol_feas": 1e-3, "max_iter": 8}})
    monkeypatch.setattr(convex_route, "CONIC_RETRY",
                        {"CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 200}})
    name = CONIC_SHIPPED[0]
    result = load_problem(PROBLEMS / f"{name}.toml").solve()
    assert result.solver["retried"].startswith("solved again with {'tol_gap_abs': 1e-10")
    assert result.status == "optimal" and result.solver["bound_proven"] is True
    assert result.solver["bound"] <= tight_conic_optimum(name) + 1e-12
    assert result.solver["gap"] <= 1e-6


def test_the_conic_retry_follows_the_solves_gap_tolerance(monkeypatch):
    # an 8-iteration run proves its value to within a few tenths: a solve that tolerates half
    # its value keeps it, one that asks for 1e-2 runs again
    from mechdesign.solvers import convex_route

    monkeypatch.setattr(convex_route, "CONIC_OPTIONS",
                        {"CLARABEL": {"tol_gap_abs": 1e-3, "tol_gap_rel": 1e-3, "tol_feas": 1e-3, "max_iter": 8}})
    retried = {}
    for tolerance in (0.5, 1e-2):
        problem = load_problem(PROBLEMS / f"{CONIC_SHIPPED[0]}.toml")
        problem.gap_tolerance = tolerance
        result = problem.solve()
        retried[tolerance] = "retried" in result.solver
        proven = result.solver.get("proven_bound", result.solver.get("bound"))
        assert proven <= tight_conic_optimum(CONIC_SHIPPED[0]) + 1e-12
    assert retried == {0.5: False, 1e-2: True}


def test_multipliers_whose_residual_overflows_prove_nothing():
    # min −x1 s.t. 1e160·x1 − 1e160·x2 >= 0 and <= 0 (so x1 = x2), x in [0, 1]: optimum −1 at
    # x = (1, 1). With multipliers ±1e160 both columns' residuals are ∞ − ∞ (not a number): a
    # bound must not count them as 0 (that gave 0, above the optimum)
    from mechdesign.solvers.lp_bound import lagrangian_bound

    A = sp.csr_matrix(np.array([[1e160, -1e160], [1e160, -1e160]]))
    c = np.array([-1.0, 0.0])
    optimum = linprog(c, A_eq=[[1.0, -1.0]], b_eq=[0.0], bounds=[(0, 1), (0, 1)]).fun
    assert optimum == pytest.approx(-1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        bound = lagrangian_bound(c, A, np.array([0.0, -np.inf]), np.array([np.inf, 0.0]), np.array([1e160, -1e160]),
                                 np.zeros(2), np.ones(2))
    assert bound <= optimum


@pytest.mark.parametrize("x, expected", [(3.0, 4.0), (2.5, 2.0), (0.75, 1.0), (0.7, 0.5), (1.0, 1.0), (1e-300, 2.0 ** -997),
                                         (0.0, 1.0), (-2.0, 1.0), (float("inf"), 1.0), (float("nan"), 1.0)])
def test_the_contexts_scale_is_the_nearest_power_of_two(x, expected):
    from mechdesign.solvers.contexts import power_of_two

    assert power_of_two(x) == expected


def test_costs_divided_exactly_carry_no_scaling_allowance():
    # dividing by a power of two is exact, so the optimum over the scaled costs is the scaled
    # optimum: nothing to subtract from the bound. Divided by another number, or pushed into
    # the subnormal range (bits lost), the allowance 2u Σ_x max_y |C/s| stays.
    from mechdesign.solvers.contexts import UNIT_ROUNDOFF, scaling_error

    cost = np.random.default_rng(0).random((5, 4))
    assert scaling_error(cost / 8.0, cost, 8.0) == 0.0
    allowance = 2 * UNIT_ROUNDOFF * np.abs(cost / 3.0).max(axis=1).sum()
    assert scaling_error(cost / 3.0, cost, 3.0) == pytest.approx(allowance, rel=1e-12)  # (+ 5 subnormals)
    tiny = cost * 1e-300
    scale = 2.0 ** 40
    assert not np.array_equal(tiny / scale * scale, tiny)  # (the premise: bits were lost)
    assert scaling_error(tiny / scale, tiny, scale) > 0.0


#: four contexts' distributions over nine inputs (one mechanism each) under a min-entropy
#: leakage of 0.0995 bits; the marginal error's optimum is 0 (each context's data-independent
#: design with rows λ_s keeps λ_s and leaks nothing), and HiGHS reports 1.9e-11
MIN_ENTROPY_CONTEXTS = {
    "P0": [0.02383401761549814, 0.2675984066008961, 0.02788796683465967, 0.03970215097071408,
           0.1432672900307456, 0.04663033361029812, 0.00633833617093283, 0.07242205491046251,
           0.37231944325579297],
    "P1": [0.0, 0.09690940430626648, 0.11100222621126327, 0.01508202231507315, 0.06424096441914162,
           0.09577790531033258, 0.2182489265486643, 0.01364228172198229, 0.3850962691672763],
    "P2": [1.5491341893114546e-10, 1.0020203599256208e-04, 8.7905009154139809e-04, 0.0,
           2.3673354489680518e-01, 7.5205774932266400e-01, 7.3457072636342225e-04,
           8.7429165377690288e-06, 9.4861398551822525e-03],
    "P3": [0.00220800390266018, 0.05042139322618643, 0.01131539319625811, 0.4452476085741841,
           0.04673569307325891, 0.06044096520969628, 0.31328816305650664, 0.00086011162577289,
           0.06948266813547661],
}


def test_the_lp_bound_takes_the_objective_constant_from_the_program_not_from_the_solvers_value():
    # the constant of c·x + d was taken as the program's value less HiGHS's objective: the two
    # differ by 8e-11 at HiGHS's tolerances here, which lifted the "proven" bound to 5.7e-11,
    # above a design of objective 1e-16
    from mechdesign.core.limits import Limits
    from mechdesign.core.objectives import ProfileMarginalError
    from mechdesign.privacy.certify import audit_all
    from mechdesign.privacy.information import MinEntropy
    from mechdesign.solvers.convex_route import run_solver

    contexts = {k: np.array(v) for k, v in MIN_ENTROPY_CONTEXTS.items()}
    problem = Problem(inputs=9, contexts=contexts, objective=ProfileMarginalError(),
                      privacy=[MinEntropy(0.09952991473528085)])
    _, outcome = run_solver(problem.compile(scaled=True), "auto", False, Limits(None))
    constant = {k: np.tile(lam, (9, 1)) for k, lam in contexts.items()}
    value = problem.objective.value(constant)
    assert value <= 1e-15
    assert all(a.holds for a in audit_all(problem.privacy, constant))  # a private design of value 1e-16
    assert outcome.proven_bound(value) <= value
    result = problem.solve()
    assert result.status == "optimal", result.message
    assert result.objective <= 1e-15 and result.solver["bound"] <= result.objective


#: three contexts' distributions over eleven inputs under a mutual information of 1.02 bits
MUTUAL_INFORMATION_CONTEXTS = {
    "P0": [0.09481100313187564, 0.06318599403482152, 0.11600879552271326, 0.04950088522075925,
           0.0719494389645955, 0.2924941124710405, 0.00674087012363654, 0.06808951234500578,
           0.17894408254290559, 0.04518062281821908, 0.01309468282442724],
    "P1": [0.09041710346148674, 0.09294857446903193, 0.1240988497428544, 0.07325828245043438,
           0.08388416626841548, 0.16197959612924845, 0.0, 0.08318490651427046, 0.09493313694989786,
           0.09221570134584073, 0.10307968266851945],
    "P2": [0.00190796554273262, 0.03444557036944145, 0.04656987976999611, 0.17567830631500167,
           0.1443823833913319, 0.17342962641370563, 0.0530667520219251, 0.0695047701566562,
           0.16760582170844376, 0.08135506607385823, 0.0520538582369074],
}


def test_the_conic_bound_takes_the_objective_constant_from_the_program():
    # the marginal error is a maximum of absolute values: its standard form has no constant
    # term. The constant was the program's value less Clarabel's objective, 4.4e-11 here
    from mechdesign.core.limits import Limits
    from mechdesign.core.objectives import ProfileMarginalError
    from mechdesign.privacy.information import MutualInformation
    from mechdesign.solvers.conic_bound import ConicSnapshot
    from mechdesign.solvers.convex_route import run_solver

    contexts = {k: np.array(v) for k, v in MUTUAL_INFORMATION_CONTEXTS.items()}
    problem = Problem(inputs=11, contexts=contexts, objective=ProfileMarginalError(),
                      privacy=[MutualInformation(1.0211165440944778, contexts, prior_name="contexts")])
    _, outcome = run_solver(problem.compile(scaled=True), "auto", False, Limits(None))
    assert isinstance(outcome.proof, ConicSnapshot)
    assert outcome.proof.offset == 0.0


def _worst_case_on_a_line(points: np.ndarray, loss: np.ndarray, epsilon: float, weights=None) -> float:
    """The minimax LP under the ε·|x − x'| constraints of neighbours in sorted order (which imply
    every other pair on a line)."""
    from tests.reference_lp import minimax_pairs_lp

    order = np.argsort(points, kind="stable")
    a, b = np.concatenate([order[:-1], order[1:]]), np.concatenate([order[1:], order[:-1]])
    return minimax_pairs_lp(loss, a, b, np.exp(epsilon * np.abs(points[a] - points[b])), weights)


@pytest.mark.parametrize("seed", [4, 5])
def test_a_worst_case_loss_of_order_1e_6_is_solved_at_the_scale_of_order_one(seed):
    # the program divides the objective by the loss's magnitude; the rows bounding the maximum
    # must be divided too, or their coefficients of 1e-10 to 1e-6 sit below HiGHS's feasibility
    # tolerance and it stops 5e-5 to 1.4e-4 above the optimum (80 points, several coincident)
    rng = np.random.default_rng(seed)
    points = np.sort(rng.integers(0, 41, 80)).astype(float)
    loss = rng.uniform(0, 1, (80, 80)) * 1e-6
    result = Problem(points[:, None], WorstCaseLoss(loss), privacy=MetricPrivacy(0.25), metric="absolute").solve()
    assert result.status == "optimal", result.message
    reference = _worst_case_on_a_line(points, loss * 1e6, 0.25) * 1e-6  # (solved at order one)
    assert result.objective == pytest.approx(reference, rel=1e-7)
    assert result.solver["bound"] <= reference * (1 + 1e-9)


def test_a_robust_loss_of_order_1e_6_over_finitely_many_priors_is_solved_at_the_scale_of_order_one():
    # the maximum over the priors is an epigraph as the worst case's is: with the scale outside
    # it, three priors over 80 points of a line ended 'failed' with a proven gap of 3.4e-2
    from mechdesign.core.prior_sets import FinitePriors
    from mechdesign.core.robust_loss import RobustExpectedLoss

    rng = np.random.default_rng(4)
    points = np.sort(rng.integers(0, 41, 80)).astype(float)
    loss, priors = rng.uniform(0, 1, (80, 80)) * 1e-6, rng.dirichlet(np.ones(80), size=3)
    result = Problem(points[:, None], RobustExpectedLoss(loss, FinitePriors(priors)), privacy=MetricPrivacy(0.25),
                     metric="absolute").solve()
    assert result.status == "optimal", result.message
    reference = _worst_case_on_a_line(points, loss * 1e6, 0.25, priors) * 1e-6
    assert result.objective == pytest.approx(reference, rel=1e-7)
    assert result.solver["bound"] <= reference * (1 + 1e-9)
