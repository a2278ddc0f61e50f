"""d-privacy on few points off the line: the whole LP built in HiGHS directly, one output per orbit
where the points' symmetries preserve the distances and the cost.

References are independent of the package: the design LP over every ordered pair and every
output written out with scipy.optimize.linprog (:mod:`tests.reference_lp`), and symmetric designs
built by averaging a random design over the group by hand."""

import itertools

import numpy as np
import pytest

from mechdesign.bench.envelope import build
from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.problem import Problem
from mechdesign.privacy import MetricPrivacy
from mechdesign.solvers import metric_small
from mechdesign.solvers.metric_orbits import OutputOrbits
from mechdesign.solvers.symmetry import find
from tests.reference_lp import all_pairs_lp

ROUTE = metric_small.NAME
EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def _steep(problem) -> bool:
    notion = problem.privacy[0]
    return notion.epsilon * float(notion.metric.distances(notion.domain).max()) > 20


def _instances():
    """Small instances of the envelope's families, across ε, priors and losses, where no pair
    has ε·d beyond 20 (there the LP written out, with no chains, is not a reliable reference;
    the steep ones go to the rays)."""
    families = (("grid", 3), ("grid", 4), ("points", 12), ("haversine", 10), ("graph", 12))
    rng = np.random.default_rng(7)
    for (family, size), epsilon in itertools.product(families, EPSILONS):
        prior, loss = rng.choice(["uniform", "dirichlet", "zipf"]), rng.choice(["metric", "squared", "random"])
        p = dict(family=family, size=size, epsilon=epsilon, prior=str(prior), loss=str(loss))
        if not _steep(build(p)):
            yield p


def _reference(problem) -> float:
    notion = problem.privacy[0]
    return all_pairs_lp(problem.objective.cost("default"), notion.metric.distances(notion.domain), notion.epsilon)


@pytest.mark.parametrize("p", list(_instances()), ids=lambda p: "-".join(str(v) for v in p.values()))
def test_the_whole_lp_agrees_with_the_lp_written_out(p):
    problem = build(p)
    result = problem.solve()
    assert result.solver["name"] == ROUTE
    assert result.status == "optimal" and result.holds
    reference = _reference(problem)
    assert result.objective == pytest.approx(reference, rel=1e-7, abs=1e-12)
    assert result.solver["bound"] <= reference * (1 + 1e-9) + 1e-15


def _grid_problem(rows: int, epsilon: float, prior=None):
    dom = Domain.from_grid(rows, rows)
    metric = Metric("euclidean")
    D = metric.distances(dom)
    n = len(dom)
    prior = np.full(n, 1.0 / n) if prior is None else prior
    return Problem(inputs=dom, privacy=[MetricPrivacy(epsilon, metric, dom)],
                   objective=ExpectedLoss(D, {"default": prior})), D


def test_a_symmetric_grid_keeps_one_output_per_orbit_and_reaches_the_whole_optimum(monkeypatch):
    problem, D = _grid_problem(4, 0.5)
    widths = []
    original = metric_small.PairRowsModel

    def recording(cost, *args, **kwargs):
        widths.append(cost.shape[1])
        return original(cost, *args, **kwargs)

    monkeypatch.setattr(metric_small, "PairRowsModel", recording)
    result = problem.solve()
    assert widths == [3]  # the 4 × 4 grid's outputs: corners, edges and the centre square
    reference = all_pairs_lp(problem.objective.cost("default"), D, 0.5)
    assert result.status == "optimal" and result.objective == pytest.approx(reference, rel=1e-9)
    assert result.solver["bound"] <= reference * (1 + 1e-12)
    # a prior without the grid's symmetry: every output kept
    prior = np.random.default_rng(3).dirichlet(np.ones(16))
    skewed, _ = _grid_problem(4, 0.5, prior)
    result = skewed.solve()
    assert widths[-1] == 16
    assert result.objective == pytest.approx(all_pairs_lp(skewed.objective.cost("default"), D, 0.5), rel=1e-9)


@pytest.mark.parametrize("rows", [2, 3, 4, 5])
def test_orbit_rows_sum_to_one_exactly_for_the_designs_the_columns_stand_for(rows):
    """A symmetric design made by hand (a random row-stochastic design averaged over the group):
    its representatives' columns satisfy the orbit rows, and stand for the design itself."""
    dom = Domain.from_grid(rows, rows)
    D = Metric("euclidean").distances(dom)
    symmetry = find(dom.points, D, D)
    assert symmetry.order == 8
    n = D.shape[0]
    rng = np.random.default_rng(rows)
    K = rng.random((n, n))
    K /= K.sum(axis=1, keepdims=True)
    symmetric = sum(K[np.ix_(np.argsort(h), np.argsort(h))] for h in symmetry.perms) / symmetry.order
    np.testing.assert_allclose(symmetric.sum(axis=1), 1.0, rtol=1e-12)
    orbits = OutputOrbits(symmetry)
    columns = symmetric[:, orbits.columns]
    sums = metric_small.orbit_sums(symmetry)
    np.testing.assert_allclose(sums @ columns.ravel(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(orbits.design(columns), symmetric, rtol=1e-12, atol=1e-15)
    # and the objective the reduced LP uses is the whole design's
    weights = symmetry.sizes[symmetry.orbit[orbits.columns]]
    assert float((D[:, orbits.columns] * weights * columns).sum()) == pytest.approx(float((D * symmetric).sum()),
                                                                                   rel=1e-12)


def test_coincident_points_get_equal_rows_and_the_whole_optimum():
    pts = np.random.default_rng(5).uniform(0, 3, size=(9, 2))
    pts[4] = pts[2]
    dom = Domain.from_points(pts)
    metric = Metric("euclidean")
    D = metric.distances(dom)
    prior = np.random.default_rng(6).dirichlet(np.ones(9))
    problem = Problem(inputs=dom, privacy=[MetricPrivacy(1.5, metric, dom)],
                      objective=ExpectedLoss(D, {"default": prior}))
    result = problem.solve()
    assert result.solver["name"] == ROUTE and result.status == "optimal"
    assert result.objective == pytest.approx(all_pairs_lp(prior[:, None] * D, D, 1.5), rel=1e-9)
    np.testing.assert_array_equal(result.mechanism.matrix[2], result.mechanism.matrix[4])


def test_steep_and_large_problems_go_elsewhere():
    steep, _ = _grid_problem(3, 12.0)  # ε·d up to 12·2√2 ≈ 34 > 20
    assert "e^20" in metric_small.applies(steep)
    assert steep.solve().solver["name"] != ROUTE
    large, _ = _grid_problem(6, 1.0)
    assert "30 inputs or more" in metric_small.applies(large)


def test_a_path_at_epsilon_13_with_a_skewed_prior_is_proven_against_the_closed_form():
    """15 points of a path (unit edges, a graph metric), ε = 13, a Dirichlet(0.1) prior with masses
    down to 1e-28: the optimum, 3.5e-6 against losses up to 14, is the remapped truncated
    geometric mechanism's (Ghosh, Roughgarden and Sundararajan, STOC 2009). The general route's
    duals prove 1.7e-6 at best there; this LP's prove the tolerance."""
    from mechdesign.bench.scale import _remapped_geometric_loss

    labels = [f"v{i}" for i in range(15)]
    metric = Metric("graph", edges=[[labels[i], labels[i + 1], 1.0] for i in range(14)])
    dom = Domain(tuple(labels))
    prior = np.random.default_rng(3).dirichlet(np.full(15, 0.1))
    result = Problem(inputs=dom, privacy=[MetricPrivacy(13.0, metric, dom)],
                     objective=ExpectedLoss(metric.distances(dom), {"default": prior})).solve()
    optimum = _remapped_geometric_loss(15, 13.0, prior)
    assert result.solver["name"] == ROUTE and result.status == "optimal" and result.holds
    assert result.objective == pytest.approx(optimum, rel=1e-6) and result.objective >= optimum * (1 - 1e-9)
    assert result.solver["bound"] <= optimum * (1 + 1e-12) and result.solver["gap"] <= 1e-6


def test_a_decline_falls_through_to_the_general_route_and_is_said(monkeypatch):
    monkeypatch.setattr(metric_small, "run_method", lambda h, method: False)  # HiGHS ends without an optimum
    problem, D = _grid_problem(3, 1.0)
    result = problem.solve()
    record = result.solver["special_solvers"][-1]
    assert record["solver"] == ROUTE and record["applies"] is True and record["outcome"].startswith("declined")
    assert result.solver["name"] == "HIGHS" and result.status == "optimal"
    assert result.objective == pytest.approx(all_pairs_lp(problem.objective.cost("default"), D, 1.0), rel=1e-7)


def test_a_bound_short_of_the_tolerance_falls_through_to_the_general_route(monkeypatch):
    # the LP's duals proved 1.02e-6 on 12 points in the plane at ε = 4 (tolerance 1e-6), where
    # the general route's strategies prove 9.9e-7: a result that would fail is declined instead
    real = metric_small.solve_all_pairs

    def short(*args, **kwargs):
        found = real(*args, **kwargs)
        found.bound = found.objective * (1 - 3e-6)
        return found
    monkeypatch.setattr(metric_small, "solve_all_pairs", short)
    problem, D = _grid_problem(3, 1.0)
    result = problem.solve()
    record = result.solver["special_solvers"][-1]
    assert record["solver"] == ROUTE and record["outcome"].startswith("declined") and "gap" in record["outcome"]
    assert result.solver["name"] == "HIGHS" and result.status == "optimal"
    assert result.objective == pytest.approx(all_pairs_lp(problem.objective.cost("default"), D, 1.0), rel=1e-7)
