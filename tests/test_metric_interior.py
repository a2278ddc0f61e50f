"""The d-privacy interior point against the LP written out in full (every ordered pair, every
output; scipy/HiGHS at tight tolerances) across ε, priors and losses; its bound, its coincident
inputs, its refusals, and its place in the general-metric portfolio."""

import re
import warnings

import numpy as np
import pytest

from mechdesign import Domain, Metric, MetricPrivacy, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.solvers import (
    dantzig_wolfe,
    metric_dense,
    metric_interior,
    metric_interior_memory,
    metric_joins,
    metric_rows,
)
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_interior import MetricInteriorPoint, coincident_groups
from tests.reference_lp import all_pairs_lp, pairs_lp

EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def _prior(kind: str, n: int, rng) -> np.ndarray:
    if kind == "uniform":
        return np.full(n, 1.0 / n)
    if kind == "dirichlet":
        return rng.dirichlet(np.ones(n))
    w = 1.0 / np.arange(1, n + 1) ** 1.1
    return rng.permutation(w / w.sum())


def _instance(kind: str, epsilon: float, prior: str, loss: str, seed: int = 0):
    rng = np.random.default_rng([seed, sum(map(ord, kind + prior + loss))])
    # coordinates within a unit square, so that e^{εd} stays within what the reference LP
    # solves reliably (e^12) at every ε
    grid = np.array([(a, b) for a in range(4) for b in range(4)], dtype=float) / 3.0
    points = {"grid": lambda: grid, "points": lambda: rng.random((14, 2)),
              "line": lambda: np.sort(rng.random(14))[:, None]}[kind]()  # a line: tridiagonal blocks
    dom = Domain.from_points(points)
    metric = Metric("euclidean")
    notion = MetricPrivacy(epsilon, metric, dom)
    d = metric.distances(dom)
    n = len(dom)
    L = {"metric": d, "squared": d ** 2, "random": rng.random((n, n))}[loss]
    cost = _prior(prior, n, rng)[:, None] * L
    return cost / np.abs(cost).max(), d, notion


def _run(cost, notion, tol=1e-8):
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=tol,
                              repair=repairer(notion))
    try:
        while not run.done:
            run.advance()
    except SolverDeclined:  # stalled on round-off: what it proved stands
        pass
    return run


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("prior", ["uniform", "dirichlet", "zipf"])
@pytest.mark.parametrize("loss", ["metric", "squared", "random"])
@pytest.mark.parametrize("kind", ["grid", "points", "line"])
def test_agrees_with_the_full_lp(kind, epsilon, prior, loss):
    cost, d, notion = _instance(kind, epsilon, prior, loss)
    optimum = all_pairs_lp(cost, d, epsilon)
    run = _run(cost, notion)
    design = run.design()  # repaired: the value is re-measured on it
    scale = max(abs(optimum), 1e-12)
    assert run.bound <= optimum + 1e-9 * scale  # a valid bound
    assert run.value >= optimum - 1e-9 * scale  # a feasible design cannot beat the optimum
    assert run.value - run.bound <= 1e-7 * scale  # and both are close to it
    assert np.allclose(design.sum(axis=1), 1.0, atol=1e-12) and design.min() >= 0.0
    assert notion.level(design) <= epsilon + 1e-9


def test_the_bound_holds_at_every_iterate():
    # the Lagrangian bound is valid for any Λ >= 0, so for the first, far-off iterates too
    cost, d, notion = _instance("points", 0.5, "dirichlet", "random", seed=3)
    optimum = all_pairs_lp(cost, d, 0.5)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.5, tol=1e-8)
    for _ in range(12):
        assert run.latest_bound <= optimum + 1e-12 and run.value >= optimum - 1e-12
        run.advance()


def test_coincident_inputs_share_their_row():
    rng = np.random.default_rng(5)
    pts = rng.random((12, 2)) * 2.0
    pts[3] = pts[0]
    pts[7] = pts[0]
    pts[9] = pts[5]
    dom = Domain.from_points(pts)
    metric = Metric("euclidean")
    d = metric.distances(dom)
    for epsilon in (0.1, 1.0, 8.0):
        notion = MetricPrivacy(epsilon, metric, dom)
        cost = rng.dirichlet(np.ones(12))[:, None] * rng.random((12, 12))
        groups = coincident_groups(12, notion.i, notion.j, notion.d)
        assert groups[0] == groups[3] == groups[7] and groups[5] == groups[9] and len(set(groups)) == 9
        optimum = all_pairs_lp(cost, d, epsilon)
        run = _run(cost, notion)
        design = run.design()
        assert np.array_equal(design[0], design[3]) and np.array_equal(design[5], design[9])
        assert run.bound <= optimum + 1e-12 and run.value - optimum <= 1e-6 * optimum
        assert notion.level(design) <= epsilon + 1e-9


def test_a_zero_distance_one_way_is_refused():
    # not a metric: merging the pair would tie rows the constraints leave free
    cost = np.random.default_rng(0).random((3, 3))
    i, j, d = np.array([0, 1, 0, 2, 1, 2]), np.array([1, 0, 2, 0, 2, 1]), np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    with pytest.raises(SolverDeclined, match="one order only"):
        MetricInteriorPoint(cost, (i, j, d), 1.0)


def test_it_declines_what_would_not_fit_in_memory(monkeypatch):
    cost, d, notion = _instance("grid", 1.0, "uniform", "metric")
    monkeypatch.setattr(metric_interior_memory, "MEMORY_SHARE", 1e-12)
    with pytest.raises(SolverDeclined, match="GB"):
        MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0)


def test_a_working_set_that_would_outgrow_the_memory_declines_at_a_join(monkeypatch):
    # the start is checked for the rows it starts with, each join for the rows it adds
    cost, d, notion = _instance("points", 1.0, "uniform", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-9)
    rows = run.it.rows.size
    monkeypatch.setattr(metric_interior_memory, "MEMORY_SHARE", 1e-12)
    with pytest.raises(SolverDeclined, match="working set's new rows"):
        while not run.done:
            run.advance()
    assert run.it.rows.size == rows and np.isfinite(run.bound) and run.bound <= run.value


@pytest.mark.parametrize("kind", ["grid", "line"])
def test_the_iteration_estimate_grows_with_the_outputs_and_declines_what_would_not_fit(kind, monkeypatch):
    cost, d, notion = _instance(kind, 1.0, "uniform", "metric")
    pairs = (notion.i, notion.j, notion.d)
    one, many = (metric_interior.iteration_seconds(np.tile(cost, (1, k)), pairs) for k in (1, 200))
    assert 0.0 < one < many  # two hundred times the blocks: more time, whatever the clock's noise
    monkeypatch.setattr(metric_interior_memory, "MEMORY_SHARE", 1e-12)
    with pytest.raises(SolverDeclined, match="GB"):
        metric_interior.iteration_seconds(cost, pairs)


def test_it_declines_when_its_gap_stops_halving(monkeypatch):
    cost, d, notion = _instance("points", 1.0, "zipf", "random")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=0.0)
    monkeypatch.setattr(metric_interior, "STALL_ITERATIONS", 3)
    run.gaps[:] = [1e-9, 1e-9, 1e-9, 1e-9]  # as if four iterations had closed nothing
    with pytest.raises(SolverDeclined, match="did not halve over 3"):
        run.advance()


@pytest.mark.parametrize("kind", ["points", "line"])
def test_newton_weights_beyond_the_largest_float_decline_without_a_warning(kind):
    # a slack that underflowed against its dual leaves Λ/S beyond every float: the step cannot
    # be taken (its system would be inf and nan), so the method declines, quietly
    cost, d, notion = _instance(kind, 1.0, "uniform", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=0.0)
    run.it.S[0] = 5e-324
    run.it.lam[0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(SolverDeclined, match="overflowed"):
            run.advance()


def test_a_problem_whose_optimum_underflows_is_solved_without_overflow():
    # drawn by the property audit: ε = 111 over distances near 10 (ε·d ≈ 1110: every pair's
    # factor beyond the largest float) and two coincident points; the optimum is 0 and the
    # interior point's slacks underflow at its start — it declines and the design is optimal
    from mechdesign import problem_from_dict

    spec = {"name": "underflow", "inputs": {"points": [[30.0000001, 20.0000001], [10.0000000000001, 20.0000000000001],
                                                       [20.0000001, 20.0000001], [0.0, 0.0],
                                                       [10.0000000000001, 20.0000000000001]]},
            "metric": {"kind": "euclidean"}, "distributions": {"prior": [0.21875, 0.28125, 0.21875, 0.0, 0.28125]},
            "privacy": [{"notion": "metric", "epsilon": 111.02027258686434}],
            "objective": {"kind": "expected-loss", "prior": "prior", "loss": "squared"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = problem_from_dict(spec).solve()
    assert result.status == "optimal" and all(a.holds for a in result.certificate)
    assert result.objective == pytest.approx(0.0, abs=1e-300)
    assert any("overflowed" in step for step in result.solver["path"])


def test_a_working_set_that_grew_in_the_window_is_no_stall(monkeypatch):
    # the new rows' duals are still settling: the window starts again after the growth
    cost, d, notion = _instance("points", 1.0, "zipf", "random")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=0.0)
    monkeypatch.setattr(metric_interior, "STALL_ITERATIONS", 3)
    run._single = False  # (a window with single-precision steps goes on in double instead)
    run.advance()
    run.gaps[:] = [1e-9] * 4
    run._grew = run.rounds - 2  # the set grew two iterations ago: no decline
    run.advance()
    run.gaps[:] = [1e-9] * 4
    run._grew = run.rounds - 3
    with pytest.raises(SolverDeclined, match="did not halve over 3"):
        run.advance()


def test_the_growth_that_restarts_the_stall_window_is_recorded(monkeypatch):
    cost, d, notion = _instance("points", 0.5, "zipf", "squared")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.5, tol=1e-9)
    sizes = [run.it.rows.size]
    grew = []
    while not run.done and run.rounds < 60:
        before = run._grew
        run.advance()
        sizes.append(run.it.rows.size)
        grew.append(run._grew != before)
    expected = [after >= (1 + metric_interior.STALL_RESTART_GROWTH) * before
                for before, after in zip(sizes, sizes[1:])]
    assert any(expected) and grew == expected


def _scattered_problem(epsilon: float, n: int = 40, seed: int = 2) -> Problem:
    rng = np.random.default_rng(seed)
    dom = Domain.from_points(rng.random((n, 2)) * 4.0)
    metric = Metric("euclidean")
    d = metric.distances(dom)
    return Problem(inputs=dom, privacy=[MetricPrivacy(epsilon, metric, dom)],
                   objective=ExpectedLoss(d ** 2, {"default": rng.dirichlet(np.ones(n))}))


@pytest.mark.parametrize("epsilon", [0.25, 2.0])
def test_the_interior_point_finishes_alone_when_the_rays_decline(epsilon, monkeypatch):
    def decline(self, limits=None):
        raise SolverDeclined("declined (test)")

    monkeypatch.setattr(dantzig_wolfe.RayRounds, "advance", decline)
    problem = _scattered_problem(epsilon)
    ours = problem.solve()
    plain = problem.solve(solver="highs")
    assert ours.status == plain.status == "optimal" and ours.holds
    assert ours.objective == pytest.approx(plain.objective, rel=1e-6)
    assert ours.solver["bound"] <= plain.objective * (1 + 1e-9)
    path = " | ".join(ours.solver["path"])
    assert "cone rays declined after 0 rounds: declined (test)" in path
    assert "design from interior point, bound from interior point" in path


def test_the_path_names_both_methods():
    problem = _scattered_problem(0.5)
    result = problem.solve()
    assert result.status == "optimal"
    path = " | ".join(result.solver["path"])
    assert "cone rays:" in path and "design from" in path
    # the interior point's rounds, and how many of them were in single precision
    rounds, single = map(int, re.search(r"interior point: (\d+) rounds \((\d+) in single precision\)", path).groups())
    assert 0 < single < rounds


def test_the_kernels_recover_the_duals_and_take_the_ratio_tests():
    from mechdesign.solvers.metric_interior_kernels import recover, stepped_products

    rng = np.random.default_rng(4)
    for _ in range(50):
        primal, dual = rng.random((6, 9)) + 1e-3, rng.random((6, 9)) + 1e-3
        dprimal, t = rng.normal(size=(6, 9)), rng.normal(size=(6, 9))
        out = np.empty((6, 9))
        a_p, a_d = recover(t, dual, dprimal, primal, out)
        ddual = (t - dual * dprimal) / primal  # the complementarity equation, in NumPy
        assert np.allclose(out, ddual, rtol=1e-14, atol=0)
        for x, dx, alpha in ((primal, dprimal, a_p), (dual, ddual, a_d)):
            falling = dx < 0
            expected = min(1.0, float((-x[falling] / dx[falling]).min())) if falling.any() else 1.0
            assert alpha == pytest.approx(expected, rel=1e-15)
        total = stepped_products(primal, dprimal, dual, ddual, 0.3, 0.7)
        assert total == pytest.approx(float(((primal + 0.3 * dprimal) * (dual + 0.7 * ddual)).sum()), rel=1e-12)


def _random_rows(rng, g: int, m: int, count: int):
    """Rows (a, b, c, out) with weights, in no particular order, and positive bound weights."""
    a = rng.integers(0, g, size=count)
    b = (a + rng.integers(1, g, size=count)) % g
    out = rng.integers(0, m, size=count)
    return rng.uniform(0.01, 5.0, size=count), a, b, rng.uniform(1.0, 3.0, size=count), out, \
        rng.uniform(0.1, 10.0, size=(g, m))


def _dense_blocks(weights, a, b, c, out, bound_weights):
    """Gᵀ diag(weights) G + diag(bound weights) for each output, from G written out row by row."""
    g, m = bound_weights.shape
    blocks = np.stack([np.diag(bound_weights[:, y]) for y in range(m)])
    for w, ak, bk, ck, y in zip(weights, a, b, c, out):
        row = np.zeros(g)
        row[ak], row[bk] = -1.0, ck
        blocks[y] += w * np.outer(row, row)
    return blocks


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("threads", [1, 2, 3, 7, 9])
def test_the_batched_solves_and_the_inverse_sum_match_lapack_on_any_split_of_the_outputs(threads, single):
    import scipy.linalg

    from mechdesign.core.threads import ranges
    from mechdesign.solvers.metric_dense import factors_and_inverse_sum
    from mechdesign.solvers.metric_interior_kernels import cholesky_solves

    rng = np.random.default_rng(5)
    rows = _random_rows(rng, 12, 7, 150)
    blocks = _dense_blocks(*rows)
    v = rng.normal(size=(12, 7))
    factors, scale, total = factors_and_inverse_sum(*rows, threads=threads, single=single)
    # single precision: the factors and inverses to about seven digits, the rest in double
    rtol = 1e-4 if single else 1e-10
    assert factors.dtype == (np.float32 if single else np.float64)
    assert np.allclose(scale, 1.0 / np.sqrt(np.diagonal(blocks, axis1=1, axis2=2)), rtol=1e-14)
    assert np.allclose(total, sum(np.linalg.inv(blocks[y]) for y in range(7)), rtol=rtol, atol=1e-12)
    out = v.copy()
    for lo, hi in ranges(7, threads):
        cholesky_solves(factors, out, lo, hi)
    for y in range(7):
        scaled = np.diag(scale[y]) @ blocks[y] @ np.diag(scale[y])
        assert np.allclose(np.tril(factors[y]), np.linalg.cholesky(scaled), rtol=rtol, atol=1e-12 / rtol * 1e-10)
        expected = scipy.linalg.cho_solve(scipy.linalg.cho_factor(scaled), v[:, y])
        assert np.allclose(out[:, y], expected, rtol=rtol, atol=1e-12 / rtol * 1e-10)


@pytest.mark.parametrize("single", [False, True])
def test_a_block_that_round_off_left_indefinite_is_factorised_with_a_shift(single):
    from mechdesign.solvers.metric_dense import factors_and_inverse_sum

    # output 1's block is w g gᵀ + 1e-17 I with g = (−1, 1): singular in floating point
    # (scaled to a unit diagonal, its off-diagonal entries are −1)
    weights, a, b, c, out = np.array([1.0]), np.array([0]), np.array([1]), np.array([1.0]), np.array([1])
    bound_weights = np.array([[1.0, 1e-17], [1.0, 1e-17]])
    block = np.array([[1.0, -1.0], [-1.0, 1.0]])
    for threads in (1, 2):
        factors, scale, total = factors_and_inverse_sum(weights, a, b, c, out, bound_weights, threads=threads,
                                                         single=single)
        lower = np.tril(factors[1]).astype(float)  # (above the diagonal is not defined)
        shifted = lower @ lower.T
        # the first shift is 1e-14 of the diagonal in double, 1e-6 in single (its seven digits)
        assert np.all(np.isfinite(total)) and np.allclose(shifted, block, atol=1e-5 if single else 1e-12)
        assert not np.allclose(shifted, block, rtol=0.0, atol=1e-7 if single else 1e-15)  # (it was shifted)
        # only the failing block is shifted: output 0's (the identity) keeps its exact factor
        assert np.array_equal(np.tril(factors[0]), np.eye(2))
        assert np.allclose((total - np.eye(2)) @ shifted, np.eye(2), atol=1e-6 * np.abs(total).max())


def test_the_iterates_do_not_depend_on_the_threads(monkeypatch):
    cost, d, notion = _instance("grid", 1.0, "dirichlet", "metric", seed=4)
    runs = []
    for threads in ("1", "3"):
        monkeypatch.setenv("MECHDESIGN_THREADS", threads)
        run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-8)
        for _ in range(12):
            run.advance()
        runs.append(run)
    # the blocks' inverses are summed by chunks of outputs that do not depend on the threads:
    # the same iterates to the last bit (in single precision, the first steps', a last-bit
    # difference in the sum would change how the next blocks round)
    assert runs[0].single_steps == runs[1].single_steps > 0
    assert np.array_equal(runs[0].it.K, runs[1].it.K)
    assert runs[0].gaps == runs[1].gaps


@pytest.mark.parametrize("scale", [0.3, 7.0])
def test_a_loss_and_its_multiple_follow_the_same_path(scale, monkeypatch):
    """The start scales with the cost, so every iterate of c·C is c times (duals) or equal to
    (design) the one of C, and the relative gaps agree. (In double precision: in single, the
    last-bit differences of c·C round the blocks differently and the paths part at 1e-7 a
    step.)"""
    monkeypatch.setattr(metric_interior, "SINGLE_PRECISION_GAP", np.inf)
    cost, d, notion = _instance("points", 1.0, "zipf", "random", seed=2)
    runs = [MetricInteriorPoint(c, (notion.i, notion.j, notion.d), 1.0, tol=1e-8) for c in (cost, scale * cost)]
    for run in runs:
        for _ in range(15):
            run.advance()
    assert np.allclose(runs[0].it.K, runs[1].it.K, rtol=1e-6, atol=1e-12)
    assert np.allclose(scale * runs[0].it.u, runs[1].it.u, rtol=1e-6, atol=1e-12 * scale)
    # abs 1e-7: the last gaps (below 1e-7) are the bound's round-off, whose terms Gᵀ Λ are large
    # against it, and differ in the last bits from one CPU's arithmetic to another's
    assert runs[1].gaps == pytest.approx(runs[0].gaps, rel=1e-5, abs=1e-7)
    assert runs[1].value == pytest.approx(scale * runs[0].value, rel=1e-9)


def test_a_line_gets_the_tridiagonal_system_and_it_equals_the_dense_one():
    from mechdesign.solvers.metric_chain import ChainNewton
    from mechdesign.solvers.metric_dense import DenseNewton

    cost, d, notion = _instance("line", 0.5, "dirichlet", "random", seed=2)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.5, tol=1e-8)
    assert run.lp.chain  # sorted points: every pair joins neighbours
    for _ in range(6):  # an iterate off the start, where the weights differ from pair to pair
        run.advance()
    chain, dense = ChainNewton(run.lp, run.it), DenseNewton(run.lp, run.it)
    v = np.random.default_rng(0).normal(size=run.it.K.shape)
    assert np.allclose(chain.apply(v), dense.apply(v), rtol=1e-9, atol=1e-12 * np.abs(dense.apply(v)).max())
    du = np.random.default_rng(2).normal(size=run.it.K.shape[0])  # one vector for every output, added
    added = v.copy()
    chain.add_row(du, added)  # the chain's one-column solve, added in place, against the dense solves
    expected = v + dense.apply(np.repeat(du[:, None], v.shape[1], axis=1))
    assert np.allclose(added, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())
    lower = [np.tril(newton.factor[0]) for newton in (chain, dense)]
    assert np.allclose(lower[0] @ lower[0].T, lower[1] @ lower[1].T, rtol=1e-9)
    shuffled = MetricInteriorPoint(cost[::-1], (13 - notion.i, 13 - notion.j, notion.d), 0.5)
    assert shuffled.lp.chain  # reversed order: still neighbours
    scattered = np.random.default_rng(1).permutation(14)
    assert not MetricInteriorPoint(cost[scattered], (np.argsort(scattered)[notion.i], np.argsort(scattered)[notion.j],
                                                     notion.d), 0.5).lp.chain


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_coincident_points_on_a_line_keep_the_tridiagonal_blocks(epsilon):
    # sorted points with two runs of coincident ones: the neighbour pairs at distance 0 merge
    # their inputs, and the merged inputs' pairs are again neighbours, so the blocks stay
    # tridiagonal; the design gives coincident points one row and meets the full LP's optimum
    rng = np.random.default_rng(8)
    points = np.sort(np.concatenate([rng.random(9), [0.4, 0.4, 0.4, 0.7, 0.7]]))
    n = points.size
    x = np.arange(n - 1)
    i, j = np.concatenate([x, x + 1]), np.concatenate([x + 1, x])
    d = np.abs(points[:, None] - points[None, :])
    cost = rng.dirichlet(np.ones(n))[:, None] * rng.random((n, n))
    run = MetricInteriorPoint(cost, (i, j, np.abs(points[i] - points[j])), epsilon, tol=1e-9)
    assert run.lp.chain and run.lp.cost.shape[0] == n - 3
    while not run.done:
        run.advance()
    design = run.design()
    for a, b in zip(*np.nonzero(np.triu(d == 0, 1))):
        assert np.array_equal(design[a], design[b])
    optimum = all_pairs_lp(cost, d, epsilon)
    assert run.bound <= optimum + 1e-9 * optimum and abs(run.value - optimum) <= 1e-7 * optimum

def test_nearest_pairs_are_each_inputs_smallest_exponents():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 9, 80), rng.integers(0, 9, 80)
    exponent = rng.random(80)
    chosen = metric_rows.nearest_pairs(a, b, exponent, 3)
    expected = np.zeros(80, bool)
    for side in (a, b):
        for x in range(9):
            mine = np.flatnonzero(side == x)
            expected[mine[np.argsort(exponent[mine], kind="stable")[:3]]] = True
    assert np.array_equal(chosen, expected)


def _settled_residual(lp, it):
    """C − u − μ − Gᵀ(Λ − excess): the dual equation's residual with the joined rows' excess left out."""
    lam = it.lam if it.excess is None else it.lam - it.excess
    return lp.cost - it.u[:, None] - it.mu - it.rows.transpose(lam)


def test_the_working_set_keeps_every_iterate_private_and_the_dual_equation(monkeypatch):
    # rows outside the working set still limit the primal step, and rows that join it take their
    # Λ from μ as far as μ allows, the rest their excess: on a 6 × 6 grid (every input has 35
    # pairs, 8 of them start the set) every iterate is private for all the pairs, no join changes
    # the dual equation but for the excess, and the steps shrink the excess as they shrink the
    # residual (a step that left it as it was, or shrank it twice, breaks the equation)
    changes, excess_terms, clean = [], [], []
    join = metric_joins.join

    def watched_join(lp, it, pair, out):
        before = _settled_residual(lp, it)
        join(lp, it, pair, out)
        changes.append(np.abs(_settled_residual(lp, it) - before).max())

    monkeypatch.setattr(metric_joins, "join", watched_join)
    monkeypatch.setattr(metric_interior, "SINGLE_PRECISION_GAP", np.inf)
    grid = np.array([(x, y) for x in range(6) for y in range(6)], dtype=float)
    dom = Domain.from_points(grid)
    notion = MetricPrivacy(1.0, Metric("euclidean"), dom)
    d = Metric("euclidean").distances(dom)
    rng = np.random.default_rng(4)
    cost = rng.dirichlet(np.ones(36))[:, None] * d
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-8)
    lp, it = run.lp, run.it
    start = it.rows.size
    assert start < it.rows.member.size
    while not run.done:
        run.advance()
        slack = lp.G @ it.K  # every pair row, in or out of the set
        assert slack.min() >= -1e-12 * np.abs(it.K).max() * lp.coef.max()
        assert np.array_equal(it.S, it.slack[it.rows.pair, it.rows.out])  # the set's slacks: G K's
        assert np.allclose(it.slack, slack, rtol=0, atol=1e-12 * lp.coef.max())
        assert it.rows.member.sum() == it.rows.size
        assert it.mu.min() > 0 and it.lam.min() >= 0
        if it.excess is not None:
            assert it.excess.shape == it.lam.shape and it.excess.min() >= 0
            excess_terms.append(np.abs(it.rows.transpose(it.excess)).max())
            clean.append(np.abs(_settled_residual(lp, it)).max())
    assert start < it.rows.size < it.rows.member.size  # rows joined; not all of them
    assert len(changes) > 5 and max(changes) <= 1e-12 * np.abs(cost).max()
    assert max(excess_terms) > 1e-2 * np.abs(cost).max()  # joins had an excess ...
    # ... and left the equation as the steps went (all in double precision: round-off only, which
    # grows near the optimum, where the blocks are ill-conditioned)
    assert max(clean) <= 1e-6 * np.abs(cost).max() and np.median(clean) <= 1e-10 * np.abs(cost).max()
    optimum = all_pairs_lp(cost, d, 1.0)
    assert abs(run.value - optimum) <= 1e-7 * optimum and run.bound <= optimum + 1e-12


def test_joining_rows_take_at_most_their_share_of_mu_and_start_near_the_centre():
    cost, d, notion = _instance("grid", 1.0, "uniform", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0)
    lp, it = run.lp, run.it
    joining = ~it.rows.member
    mu_before, rows_before = it.mu.copy(), it.rows.size
    mean = it.complementarity()[0] / it.complementarity()[1]
    residual_before = _settled_residual(lp, it)
    metric_joins.join(lp, it, *np.nonzero(joining))
    assert it.rows.member.all() and it.rows.size == joining.size and np.all(it.lam > 0)
    assert np.all(it.mu >= (1 - metric_joins.JOIN_SHARE) * mu_before - 1e-15)
    products = (it.S * it.lam)[rows_before:]
    assert products.min() >= (1 - 1e-12) * metric_joins.JOIN_FLOOR * mean and products.max() <= (1 + 1e-12) * mean
    paid = it.lam - it.excess
    assert np.all(it.excess[:rows_before] == 0) and np.all(paid >= 0) and it.excess.max() > 0
    assert np.allclose(_settled_residual(lp, it), residual_before, atol=1e-12)


@pytest.mark.parametrize("growth", [0.05, 0.3])
def test_at_most_the_growth_share_joins_at_a_step_and_those_crossed_first(growth, monkeypatch):
    # of the rows a step's reach would join, at most the growth share of the set's rows join:
    # those whose slacks the direction crosses at the shortest step (a selection by the slacks
    # alone, or by the direction alone, keeps other rows)
    monkeypatch.setattr(metric_joins, "JOIN_GROWTH", growth)
    cost, d, notion = _instance("grid", 1.0, "uniform", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0)
    lp, it = run.lp, run.it
    dK = np.random.default_rng(3).normal(size=it.K.shape)
    old = lp.G @ it.K
    direction = lp.G @ dK
    candidates = ~it.rows.member & (direction < 0)
    pair, out = np.nonzero(candidates)
    alpha = 0.2
    it.slack = old + alpha * direction  # (the slacks stepped, as the step leaves them)
    keep = int(growth * it.rows.size)
    assert 0 < keep < pair.size
    joined = metric_joins.first_crossed(lp, it, pair, out, dK)
    assert joined[0].size == keep
    crossed_at = old[pair, out] / -direction[pair, out]
    m = it.K.shape[1]
    chosen = np.isin(pair * m + out, joined[0] * m + joined[1])
    assert crossed_at[chosen].max() <= crossed_at[~chosen].min() * (1 + 1e-12)
    assert np.all(np.diff(np.flatnonzero(chosen)) > 0) and np.array_equal(joined[0], pair[chosen])
    monkeypatch.setattr(metric_joins, "JOIN_GROWTH", 1e-9)  # no room: still the first one
    one = metric_joins.first_crossed(lp, it, pair, out, dK)
    assert one[0].size == 1 and crossed_at[np.isin(pair * m + out, one[0] * m + one[1])] == crossed_at.min()
    monkeypatch.setattr(metric_joins, "JOIN_GROWTH", (pair.size + 0.5) / it.rows.size)  # room for all
    same = metric_joins.first_crossed(lp, it, pair, out, dK)
    assert same[0] is pair and same[1] is out


def test_a_copied_iterate_keeps_its_own_excess():
    # the steps shrink the excess in place: a copy kept to go back to must not shrink with them
    from mechdesign.solvers.metric_live_columns import _copied

    cost, d, notion = _instance("grid", 1.0, "uniform", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0)
    lp, it = run.lp, run.it
    metric_joins.join(lp, it, *np.nonzero(~it.rows.member))
    kept = _copied(it)
    before = kept.excess.copy()
    it.excess *= 0.5
    assert before.max() > 0 and np.array_equal(kept.excess, before)


def test_the_bound_at_the_settled_duals_is_a_lagrangian_bound_above_the_raw_one():
    # while joined rows carry an excess, the bound is taken at the settled duals as well as at Λ:
    # both are Lagrangian bounds (any Λ >= 0), so neither may pass the optimum
    grid = np.array([(x, y) for x in range(6) for y in range(6)], dtype=float) / 2.5
    dom = Domain.from_points(grid)
    notion = MetricPrivacy(2.0, Metric("euclidean"), dom)
    d = Metric("euclidean").distances(dom)
    rng = np.random.default_rng(7)
    cost = rng.dirichlet(np.ones(36))[:, None] * rng.random((36, 36))
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 2.0, tol=1e-7)
    optimum = all_pairs_lp(cost, d, 2.0)
    above = 0
    while not run.done:
        run.advance()
        lp, it = run.lp, run.it
        raw = float(lp.row_minima(lp.cost - it.rows.transpose(it.lam)).sum())
        assert run.latest_bound >= raw - 1e-15 and run.latest_bound <= optimum + 1e-12
        above += run.latest_bound > raw + 1e-9 * abs(optimum)
    assert above > 0 and abs(run.value - optimum) <= 1e-6 * optimum


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_the_outside_rows_step_limit_and_crossings_match_the_matrix_form(threads):
    from mechdesign.core.threads import ranges
    from mechdesign.solvers.metric_interior_kernels import move_slacks, outside_limit

    rng = np.random.default_rng(9)
    g, m, p = 7, 5, 30
    a, b = rng.integers(0, g, p), rng.integers(0, g, p)
    coef = np.exp(rng.uniform(0, 2, p))
    G = np.zeros((p, g))
    np.add.at(G, (np.arange(p), a), -1.0)
    np.add.at(G, (np.arange(p), b), coef)
    slack, dK = rng.uniform(0.01, 1, (p, m)), rng.normal(size=(g, m))
    member = rng.random((p, m)) < 0.3
    d = G @ dK
    outside = (d < 0) & ~member
    pieces = ranges(p, threads)
    found = [outside_limit(slack, member, a, b, coef, dK, 0.9, lo, hi) for lo, hi in pieces]
    limit, crossing = min(f[0] for f in found), sum(f[1] for f in found)
    assert limit == pytest.approx(min(0.9, float(np.min(slack[outside] / -d[outside]))), rel=1e-12)
    crossed = outside & (slack < -d)
    assert crossing == crossed.sum() > 0
    K = rng.uniform(0.01, 1, (g, m))
    # the step at which each row's K[a, y] reaches zero (inf where it does not decrease)
    da = dK[a]
    zero_at = np.where(da < 0, K[a] / np.where(da < 0, -da, 1.0), np.inf)
    covered = slack / np.where(d < 0, -d, 1.0) >= zero_at
    for reach in (1.0, 0.5):  # the rows a step of the reach would cross, among those a full step would
        moved, rows = slack.copy(), []
        for (lo, hi), (_, count) in zip(pieces, found):
            pair, out = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
            joined = move_slacks(moved, member, a, b, coef, dK, 0.4, reach, pair, out, lo, hi, K)
            rows += list(zip(pair[:joined], out[:joined]))
        assert np.allclose(moved, slack + 0.4 * d, rtol=0, atol=1e-14)
        reached = outside & (slack < -reach * d)
        # those whose K[a, y] would reach zero first are left out: the bound stops the step
        assert np.any(reached & covered) and np.any(reached & ~covered)
        joining = reached & ~covered
        assert len(rows) == joining.sum() and (reach == 1.0 or len(rows) < crossing)
        assert rows == list(zip(*np.nonzero(joining)))  # in the order of (pair, output)


@pytest.mark.parametrize("single", [False, True])  # the products of the tiles below in single precision
@pytest.mark.parametrize("tile", [16, 48, 128, 1024])  # many tiles below the diagonal … one tile
@pytest.mark.parametrize("threads", [1, 2, 3, 64])  # 64: more threads than tiles
@pytest.mark.parametrize("coupling", [0.5 - 1e-9, 0.3, 1e-3])
def test_the_chain_inverse_sum_is_the_inverse_of_the_factors(coupling, threads, tile, single):
    # nearly singular blocks (products that barely decay down a column), moderate, and weakly
    # coupled ones (products that vanish, so that a tile column stops early), with scales
    # spanning orders of magnitude: the sum is the sum of the inverses of the factorised blocks
    # L Lᵀ (what the solves use), whether a tile is summed by running products or, below the
    # diagonal, as a matrix product
    from mechdesign.solvers.metric_chain_kernels import (
        chain_cholesky,
        chain_inverse_sum,
        chain_solve_coefficients,
    )

    rng = np.random.default_rng(11)
    m, g = 6, 150
    off = -coupling * (1.0 - 1e-3 * rng.random((g - 1, m)))  # (inputs, outputs): outputs innermost
    off[60, 0] = 0.0  # one output's chain cut in two: a ratio of 0 (a quotient would be infinite)
    scale = np.exp(rng.normal(size=(g, m)) * 2.0)
    diag, low = np.empty((g, m)), np.empty((g - 1, m))
    assert chain_cholesky(off, diag, low)
    total = np.full((g, g), 7.0)  # added to; the upper triangle left as it was
    chain_inverse_sum(*chain_solve_coefficients(diag, low, scale)[:2], total, threads, tile=tile, single=single)
    expected = np.zeros((g, g))
    for y in range(m):
        factor = np.diag(diag[:, y]) + np.diag(low[:, y], -1)
        inverse = np.linalg.inv(factor)
        expected += scale[:, y][:, None] * (inverse.T @ inverse) * scale[:, y][None, :]
    lower = np.tril_indices(g)
    # in single precision each entry below the diagonal tiles carries the factors' rounding,
    # a few units of 6e-8 in every term (and terms below 1.2e-38 flushed to zero)
    rtol, atol = (1e-6, 1e-7) if single else (1e-10, 1e-13)
    assert np.allclose(total[lower] - 7.0, expected[lower], rtol=rtol, atol=atol * np.abs(expected).max())
    assert np.all(total[np.triu_indices(g, 1)] == 7.0)
    inside = np.zeros((g, g), bool)  # the diagonal tiles
    for t in range(0, g, tile):
        inside[t:t + tile, t:t + tile] = True
    if single and tile < g:  # the tiles below differ from double precision; the diagonal tiles do not
        double = np.full((g, g), 7.0)
        chain_inverse_sum(*chain_solve_coefficients(diag, low, scale)[:2], double, threads, tile=tile)
        assert np.array_equal(total[inside], double[inside]) and not np.array_equal(total, double)


def test_the_chain_factors_each_block_and_shifts_only_a_block_that_needs_it():
    # unit-diagonal tridiagonal blocks T_y with off-diagonal −c: positive definite for c = 0.3
    # and 0.5 (its smallest eigenvalue 1 − 2c cos(π/(g + 1)) is 2.2e-4 at g = 150), indefinite
    # for c = 0.5 + 2e-4 (−1.8e-4: only the shift of 1e-2 makes it definite) and for c = 0.8
    # (−0.6: no shift does). Factorised side by side, each block is L Lᵀ = T (+ its shift).
    from mechdesign.solvers.metric_chain_kernels import chain_cholesky

    g = 150
    couplings = np.array([0.3, 0.5, 0.5 + 2e-4, 0.3])
    off = np.repeat(-couplings[None, :], g - 1, axis=0)
    diag, low = np.empty((g, 4)), np.empty((g - 1, 4))
    assert chain_cholesky(off, diag, low)
    for y, shift in enumerate([0.0, 0.0, 1e-2, 0.0]):
        factor = np.diag(diag[:, y]) + np.diag(low[:, y], -1)
        block = (1.0 + shift) * np.eye(g) + np.diag(off[:, y], -1) + np.diag(off[:, y], 1)
        assert np.allclose(factor @ factor.T, block, rtol=0, atol=1e-12)
    off[:, 3] = -0.8
    assert not chain_cholesky(off, diag, low)


def test_the_chain_solves_are_the_scaled_blocks_inverses():
    # out = D (L Lᵀ)⁻¹ D v per output, for a full right-hand side and for one column shared by
    # every output, written or added, against dense inverses
    from mechdesign.solvers.metric_chain_kernels import (
        chain_cholesky,
        chain_solve_coefficients,
        chain_solves,
    )

    rng = np.random.default_rng(4)
    g, m = 40, 5
    off = -0.45 * rng.random((g - 1, m))
    scale = np.exp(rng.normal(size=(g, m)) * 2.0)
    diag, low = np.empty((g, m)), np.empty((g - 1, m))
    assert chain_cholesky(off, diag, low)
    v, column, start = rng.normal(size=(g, m)), rng.normal(size=(g, 1)), rng.normal(size=(g, m))
    out, added = np.empty((g, m)), start.copy()
    coefficients = chain_solve_coefficients(diag, low, scale)
    chain_solves(*coefficients, v, out)
    chain_solves(*coefficients, column, added, True)
    for y in range(m):
        block = np.eye(g) + np.diag(off[:, y], -1) + np.diag(off[:, y], 1)
        inverse = scale[:, y][:, None] * np.linalg.inv(block) * scale[:, y][None, :]
        assert np.allclose(out[:, y], inverse @ v[:, y], rtol=1e-10, atol=1e-12 * np.abs(inverse @ v[:, y]).max())
        expected = start[:, y] + inverse @ column[:, 0]
        assert np.allclose(added[:, y], expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())


def test_it_declines_on_a_frozen_gap_only_once_the_iterate_has_converged():
    # a gap that has not moved over five iterations means round-off only when the iterate's
    # own complementarity is already below the tolerance (at the start it is not) and no rows
    # have joined in them (the new rows' duals are still on their way)
    cost, d, notion = _instance("points", 1.0, "dirichlet", "metric")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-8)
    run.gaps[:] = [0.5] * 6  # as if five iterations had not moved the gap
    run.advance()  # far from converged: no decline
    while not run.done:
        run.advance()
    assert run.it.complementarity()[0] <= run.tol * abs(run.value)
    run.gaps[:] = [run.gaps[-1]] * 6
    run._joined = run.rounds - 1  # rows joined in the last iterations: no decline
    run.advance()
    run.gaps[:] = [run.gaps[-1]] * 6
    run._joined = run.rounds - 5
    with pytest.raises(SolverDeclined, match="has not moved over 5"):
        run.advance()


@pytest.mark.parametrize("kind", ["line", "grid"])
def test_a_refined_solve_leaves_a_smaller_residual_in_the_blocks_equations(kind):
    # near the optimum the blocks are ill-conditioned; one step of iterative refinement must
    # shrink the residual of H_y dK_y = rhs_y + du (H applied as a product) and keep Σ_y dK = r_p
    from mechdesign.solvers.metric_chain import ChainNewton
    from mechdesign.solvers.metric_dense import DenseNewton
    from mechdesign.solvers.metric_interior import _blocks_rhs, _refine, _solve

    cost, d, notion = _instance(kind, 0.1, "zipf", "squared")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.1, tol=1e-6)
    while not run.done:  # to the optimum's neighbourhood
        run.advance()
    lp, it = run.lp, run.it  # (on a line, over the outputs still live)
    # the affine direction there
    r_d = lp.cost - it.u[:, None] - it.mu - it.rows.transpose(it.lam)
    r_p = 1.0 - it.K.sum(axis=1)
    t_K, t_S = -it.K * it.mu, -it.S * it.lam
    rhs = t_K / it.K + it.rows.transpose(t_S / it.S) - r_d
    # the same sums in another order: equal to round-off in the terms summed (the rows' terms
    # reach 200 here against entries below 1)
    terms = np.abs(t_K / it.K).max() + 2 * lp.coef.max() * np.abs(t_S / it.S).max() + np.abs(r_d).max()
    assert np.allclose(_blocks_rhs(it, r_d, t_K, t_S), rhs, rtol=0, atol=1e-14 * terms)
    newton = (ChainNewton if lp.chain else DenseNewton)(lp, it)
    residuals = []
    for refine in (False, True):
        dK, du = _solve(lp, it, newton, r_p, r_d, t_K, t_S)
        if refine:
            _refine(lp, it, newton, rhs, dK, du)
        product = it.rows.transpose(it.lam / it.S * it.rows.slack(dK)) + it.mu / it.K * dK
        residuals.append(np.abs(product - rhs - du[:, None]).max() / np.abs(rhs).max())
        assert np.abs(dK.sum(axis=1) - r_p).max() <= 1e-12
    assert residuals[1] < 0.5 * residuals[0]  # (in double precision: by a factor of 2.5 to 5 here)


def test_a_line_keeps_every_row_in_the_set_and_every_iterate_private():
    # a line's neighbour pairs all start in the set (at most two per input and side), so the
    # full slack array is dropped and the set's own step lengths keep every iterate private
    cost, d, notion = _instance("line", 0.25, "zipf", "random")
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.25, tol=1e-9)
    assert run.it.slack is None and run.it.rows.size == run.it.rows.member.size
    while not run.done:
        run.advance()
        lp, it = run.lp, run.it  # (rebuilt when outputs leave)
        assert it.slack is None and it.rows.size == it.rows.member.size
        assert (lp.G @ it.K).min() >= -1e-13 * lp.coef.max()
        assert np.allclose(it.S, it.rows.slack(it.K), rtol=0, atol=1e-13 * lp.coef.max())
    assert run.value - run.bound <= 1e-9 * run.value
    assert abs(run.value - all_pairs_lp(cost, d, 0.25)) <= 1e-8 * run.value


def test_rows_join_within_the_reach_and_the_optimum_is_the_same(monkeypatch):
    # rows join when a step of the reach (twice the step taken at first, doubling whenever a
    # row outside the set cut the step short) would cross them: on 100 haversine locations at
    # ε = 1 a full reach from the start ends with over three tenths of the (pair, output) rows in
    # the set, the reach with under a tenth, at the same optimum (the cap on the rows joining at
    # one step lifted: it would hold the full reach back too)
    from mechdesign.bench.envelope import build
    from mechdesign.solvers import metric_interior

    monkeypatch.setattr(metric_joins, "JOIN_GROWTH", np.inf)
    problem = build({"family": "haversine", "size": 100, "epsilon": 1.0, "prior": "uniform", "loss": "metric"})
    notion, cost = problem.privacy[0], problem.objective.cost("default")
    runs, first_reach = {}, metric_interior.FIRST_REACH
    for first in (first_reach, np.inf):
        monkeypatch.setattr(metric_interior, "FIRST_REACH", first)
        run = metric_interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-7)
        while not run.done:
            run.advance()
        runs[first] = run
    reached, full = runs.values()
    total = notion.i.size * cost.shape[1]
    assert reached.it.rows.size < total / 10 < 3 * total / 10 < full.it.rows.size
    assert reached.it.reach > first_reach  # a row outside the set cut some step short
    assert reached.value == pytest.approx(full.value, rel=2e-7)
    assert max(reached.bound, full.bound) <= min(reached.value, full.value) * (1 + 1e-12)


def test_the_first_steps_run_in_single_precision_and_the_last_in_double():
    # single precision carries the early steps; the gap is closed in double, to the full LP's
    # optimum (a run left in single precision stalls near a gap of 1e-5)
    cost, d, notion = _instance("grid", 1.0, "zipf", "metric", seed=1)
    optimum = all_pairs_lp(cost, d, 1.0)
    run = _run(cost, notion)
    assert 1 < run.single_steps < run.rounds
    # a step is taken in single precision while the gap before it is above the switch
    last = run.single_steps - 1
    assert run.gaps[last - 1] > metric_interior.SINGLE_PRECISION_GAP >= run.gaps[last]
    assert run.value - run.bound <= 1e-7 * abs(optimum)
    assert run.bound <= optimum + 1e-9 * abs(optimum) <= run.value + 2e-9 * abs(optimum)


def test_a_failed_single_precision_factorisation_is_done_again_in_double(monkeypatch):
    from mechdesign.solvers.metric_dense import factors_and_inverse_sum

    def no_single(*args, single=False, **kwargs):
        if single:
            raise SolverDeclined("the interior-point system lost definiteness")
        return factors_and_inverse_sum(*args, **kwargs)

    cost, d, notion = _instance("points", 0.5, "dirichlet", "random", seed=2)
    reference = _run(cost, notion)
    monkeypatch.setattr(metric_dense, "factors_and_inverse_sum", no_single)
    run = _run(cost, notion)
    # the first step fails in single precision, is taken in double, and the run stays there
    assert run.single_steps == 0 and reference.single_steps > 0
    assert run.value - run.bound <= 1e-7 * abs(reference.value)
    assert run.value == pytest.approx(reference.value, rel=1e-7)


def _stalled_in_single_precision(monkeypatch, cost, notion):
    """A run whose single-precision steps stop moving the iterate once its gap is below
    SINGLE_PRECISION_SLOW (as round-off can stall them), and the record of which steps were
    single and stuck."""
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=1e-8)
    step, stuck = metric_interior._step, []

    def stalling(lp, it, refine_above=float("inf"), single=False, r_d=None):
        stuck.append(single and bool(run.gaps) and run.gaps[-1] < metric_interior.SINGLE_PRECISION_SLOW)
        if not stuck[-1]:
            step(lp, it, refine_above, single, r_d)

    monkeypatch.setattr(metric_interior, "_step", stalling)
    try:
        while not run.done:
            run.advance()
    except SolverDeclined:
        pass
    return run, stuck


def test_single_precision_ends_when_its_gap_stops_halving(monkeypatch):
    cost, d, notion = _instance("grid", 0.5, "uniform", "squared", seed=3)
    run, stuck = _stalled_in_single_precision(monkeypatch, cost, notion)
    first = stuck.index(True)
    # stuck from its first step below the slow gap; after the progress window, double precision
    # for the rest of the run, which closes the gap
    assert 0 < sum(stuck) <= metric_interior.SINGLE_PRECISION_PROGRESS
    assert all(stuck[first:first + sum(stuck)]) and run.single_steps == first + sum(stuck)
    assert run.done and run.value - run.bound <= 1e-8 * abs(run.value)


def test_a_stall_with_single_precision_in_its_window_goes_on_in_double(monkeypatch):
    # without the progress window, the method's stall rule finds the single-precision steps
    # and gives double precision a window of its own instead of declining
    monkeypatch.setattr(metric_interior, "SINGLE_PRECISION_PROGRESS", 10**6)
    cost, d, notion = _instance("grid", 0.5, "uniform", "squared", seed=3)
    run, stuck = _stalled_in_single_precision(monkeypatch, cost, notion)
    assert sum(stuck) >= metric_interior.STALL_ITERATIONS
    assert run.done and run.value - run.bound <= 1e-8 * abs(run.value)


def test_single_precision_ends_when_its_residual_could_take_a_tenth_of_the_gap(monkeypatch):
    # a 100-node graph at ε = 0.5, Zipf prior, random loss: the single-precision directions leave
    # a dual residual near 1e-4 (below 1e-10 in double precision); with single precision to a gap
    # of 1e-3 the residual grows past the gap itself (the primal converges before the dual steps
    # wash it out: on one CPU the gap froze at 1.5e-3 and the method declined)
    from mechdesign.bench.envelope import build

    problem = build({"family": "graph", "size": 100, "epsilon": 0.5, "prior": "zipf", "loss": "random"})
    notion, objective = problem.privacy[0], problem.objective
    cost = np.asarray(objective.row_weights["default"])[:, None] * np.asarray(objective.loss)

    def run_to_the_end():
        run, shares = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.5, tol=5e-7), []
        try:
            while not run.done:
                run.advance()
                shares.append(run.residual / (run.value - run.bound))  # (what the residual could take)
        except SolverDeclined as exc:
            return run, str(exc), shares
        return run, None, shares

    run, declined, shares = run_to_the_end()
    assert declined is None and 0 < run.single_steps < run.rounds
    assert run.value - run.bound <= 5e-7 * run.value
    assert run.residual <= 5e-7 * run.value  # (against 9e-4 where it froze)
    reference = pairs_lp(cost, notion.i, notion.j, np.exp(0.5 * notion.d))  # the pairs the method was given
    assert run.bound <= reference * (1 + 1e-9) and run.value == pytest.approx(reference, rel=5e-7)
    # the rule ends single precision one step after its residual could take a tenth of the gap:
    # the residual never comes near the gap (but at the last step, whose gap can fall far below the
    # tolerance); without the rule it passes the gap itself
    assert max(shares[:-1]) < 0.5
    monkeypatch.setattr(metric_interior, "SINGLE_PRECISION_RESIDUAL", np.inf)
    frozen, declined, shares = run_to_the_end()
    assert frozen.single_steps > run.single_steps and max(shares) > 1.0
