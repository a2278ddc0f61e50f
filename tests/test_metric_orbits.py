"""The d-privacy interior point over one output per orbit of a symmetry group: its maps against
the design over every output built element by element, its optimum against the LP written out
in full, and its use by the general-metric route only for a group that is exact."""

import numpy as np
import pytest

from mechdesign import Domain, Metric, MetricPrivacy, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_interior import MetricInteriorPoint
from mechdesign.solvers.metric_orbits import OutputOrbits, exact_symmetry
from mechdesign.solvers.symmetry import find
from tests.reference_lp import all_pairs_lp


def _grid(side: int, loss: str = "metric", epsilon: float = 1.0):
    """A side × side grid of spacing 1/8 (e^{εd} within what the reference LP solves reliably;
    a power of two keeps the distances exactly symmetric), a uniform prior: (cost, distances,
    notion, symmetry)."""
    points = np.array([(a, b) for a in range(side) for b in range(side)], dtype=float) / 8.0
    dom = Domain.from_points(points)
    notion = MetricPrivacy(epsilon, Metric("euclidean"), dom)
    d = Metric("euclidean").distances(dom)
    cost = (d if loss == "metric" else d ** 2) / len(dom)
    return cost, d, notion, find(points, d, cost)


@pytest.mark.parametrize("side", [5, 6])  # a centre fixed by the whole group, and none
def test_the_orbit_maps_match_the_design_built_output_by_output(side):
    cost, d, _, symmetry = _grid(side)
    assert symmetry.order == 8 and exact_symmetry(symmetry, d, cost)
    orbits = OutputOrbits(symmetry)
    n, reps = cost.shape[0], symmetry.representatives
    rng = np.random.default_rng(side)
    K = rng.random((n, reps.size))
    # every element h of the group puts h(K_y) at output h(y), each output's images averaged
    full, count = np.zeros((n, n)), np.zeros(n)
    for h in symmetry.perms:
        for k, y in enumerate(reps):
            full[h, h[y]] += K[:, k]  # the entry at x goes to h(x)
            count[h[y]] += 1
    full /= count
    assert np.allclose(orbits.design(K), full, rtol=1e-13, atol=0)
    assert np.allclose(orbits.row_sums(K), full.sum(axis=1), rtol=1e-13, atol=0)
    # the least reduced cost per row over every output's images of the representatives' columns
    reduced = rng.standard_normal((n, reps.size))
    least = np.full(n, np.inf)
    for h in symmetry.perms:
        for k in range(reps.size):
            least[h] = np.minimum(least[h], reduced[:, k])
    assert np.array_equal(orbits.row_minima(reduced), least)
    # the coupling: Σ_h P_h T P_hᵀ with (P_h v)[h(x)] = v[x]
    T = rng.standard_normal((n, n))
    expected = np.zeros((n, n))
    for h in symmetry.perms:
        P = np.zeros((n, n))
        P[h, np.arange(n)] = 1.0
        expected += P @ T @ P.T
    assert np.allclose(orbits.coupling(T), expected, rtol=1e-13, atol=1e-13)


def test_a_group_that_moves_one_cost_entry_by_one_ulp_is_not_exact():
    cost, d, _, symmetry = _grid(5)
    nudged = cost.copy()
    nudged[1, 2] = np.nextafter(nudged[1, 2], np.inf)
    assert exact_symmetry(symmetry, d, cost)
    assert not exact_symmetry(symmetry, d, nudged)
    assert not exact_symmetry(find(None, d, cost), d, cost)  # the identity alone: nothing to use
    # a spacing of 0.2 rounds 1 − 0.2 and 0.8 apart: the mirror images' distances differ in the last bit
    points = np.array([(a, b) for a in range(6) for b in range(6)], dtype=float) * 0.2
    d = Metric("euclidean").distances(Domain.from_points(points))
    symmetry = find(points, d, d)
    assert symmetry.order == 8 and not exact_symmetry(symmetry, d, d)


def _private(K: np.ndarray, d: np.ndarray, epsilon: float) -> bool:
    ratio = K[:, None, :] / np.maximum(K[None, :, :], 1e-300)  # K[x, y] / K[x', y]
    return bool(np.all(ratio <= np.exp(epsilon * d)[:, :, None] * (1 + 1e-9)))


@pytest.mark.parametrize("side", [5, 6])
@pytest.mark.parametrize("loss", ["metric", "squared"])
@pytest.mark.parametrize("epsilon", [0.25, 1.0, 4.0, 8.0])
def test_one_output_per_orbit_reaches_the_full_lps_optimum(side, loss, epsilon):
    cost, d, notion, symmetry = _grid(side, loss, epsilon)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=1e-8, repair=repairer(notion),
                              symmetry=symmetry)
    assert run.columns == symmetry.representatives.size < cost.shape[1]
    try:
        while not run.done:
            run.advance()
    except SolverDeclined:  # stalled on round-off: what it proved stands
        pass
    reference = all_pairs_lp(cost, d, epsilon)
    K = run.design()
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-12) and _private(K, d, epsilon)
    assert run.bound <= reference * (1 + 1e-9) + 1e-12  # a valid bound
    assert run.value == pytest.approx(float((cost * K).sum()), rel=1e-12)
    assert run.value <= reference * (1 + 2e-7) + 1e-12  # optimal
    assert run.value - run.bound <= 1e-7 * run.value


def test_the_general_route_keeps_one_output_per_orbit_for_an_exact_group():
    side = 10
    points = np.array([(a, b) for a in range(side) for b in range(side)], dtype=float)
    dom = Domain.from_points(points)
    d = Metric("euclidean").distances(dom)
    problem = Problem(inputs=dom, privacy=[MetricPrivacy(0.25, Metric("euclidean"), dom)],
                      objective=ExpectedLoss(d, {"default": np.full(len(dom), 1.0 / len(dom))}))
    result = problem.solve()
    path = " ".join(result.solver["path"])
    assert result.status == "optimal" and result.holds
    assert "one output per orbit: 15 of 100" in path


def test_the_columns_per_orbit_are_in_c_order_as_the_passes_need():
    # a column selection comes out in Fortran order; from a 24 × 24 grid on (78 columns of 576
    # inputs) the dual residual computed from it took that order too, and the passes over the
    # entries (which slice flat views) refused it, so the interior point raised at its first
    # step (smaller grids' residuals came out in C order by NumPy's choice of layout)
    cost, d, notion, symmetry = _grid(24)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-8, symmetry=symmetry)
    assert run.lp.orbits is not None and run.lp.cost.flags.c_contiguous
    r_d = run.lp.cost - run.it.u[:, None] - run.it.mu - run.it.rows.transpose(run.it.lam)
    assert r_d.flags.c_contiguous
    assert run.advance() and run.rounds == 1 and run.bound <= run.value
