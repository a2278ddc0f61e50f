"""The remapped exponential mechanism: private for its notion, its remap the best of all maps,
and offered when a solver's design is worse."""

from itertools import product

import numpy as np
import pytest

from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss, MaxOffDiagonal, off_diagonal_mask
from mechdesign.design.exponential_baseline import exponential_mechanism, remapped_exponential
from mechdesign.design.problem import Problem
from mechdesign.design.trivial_designs import better_trivial_design
from mechdesign.privacy import LDP, MetricPrivacy
from mechdesign.privacy.certify import audit_all


def _notion(points, epsilon, kind="euclidean"):
    dom = Domain.from_points(points)
    return dom, MetricPrivacy(epsilon, Metric(kind), dom)


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 8.0, 60.0])
@pytest.mark.parametrize("kind", ["euclidean", "manhattan"])
def test_the_exponential_mechanism_is_private_for_its_notion(epsilon, kind):
    rng = np.random.default_rng(3)
    points = rng.random((25, 2)) * 4
    points[7] = points[3]  # coincident points must share their row
    dom, notion = _notion(points, epsilon, kind)
    E = exponential_mechanism(notion)
    assert np.allclose(E.sum(axis=1), 1.0) and E.min() >= 0
    assert np.array_equal(E[7], E[3])
    assert all(a.holds for a in audit_all([notion], {"default": E}))
    # the ratio between neighbours reaches e^{εd} only in the limit: without the halving the
    # unnormalised weights alone would use the whole budget and the normalisers break it
    d = Metric(kind).distances(dom)
    loose = np.exp(-epsilon * d)
    loose /= loose.sum(axis=1, keepdims=True)
    if epsilon <= 8.0:
        assert not all(a.holds for a in audit_all([notion], {"default": loose}))


def test_the_remap_is_the_best_of_all_maps_of_the_reports():
    rng = np.random.default_rng(5)
    points = rng.random((4, 1)) * 3
    dom, notion = _notion(points, 0.7)
    loss = rng.random((4, 3))
    prior = rng.dirichlet(np.ones(4))
    objective = ExpectedLoss(loss, prior=prior)
    E = exponential_mechanism(notion)
    design = remapped_exponential([notion], ["default"], 4, 3, objective)["default"]
    assert np.allclose(design.sum(axis=1), 1.0)
    best = min(float((prior[:, None] * loss * (E @ np.eye(3)[list(r)])).sum()) for r in product(range(3), repeat=4))
    assert objective.value({"default": design}) == pytest.approx(best, rel=1e-12)
    assert all(a.holds for a in audit_all([notion], {"default": design}))


def test_no_design_without_a_single_metric_notion_or_a_cost_for_other_outputs():
    dom, notion = _notion(np.arange(5.0)[:, None], 1.0)
    objective = ExpectedLoss(np.ones((5, 5)), prior=np.full(5, 0.2))
    assert remapped_exponential([LDP(1.0)], ["default"], 5, 5, objective) is None
    assert remapped_exponential([notion, notion], ["default"], 5, 5, objective) is None
    no_cost = MaxOffDiagonal(off_diagonal_mask(dom, Domain.from_size(4)), ["default"])
    assert remapped_exponential([notion], ["default"], 5, 4, no_cost) is None
    square = MaxOffDiagonal(off_diagonal_mask(dom, dom), ["default"])
    assert np.array_equal(remapped_exponential([notion], ["default"], 5, 5, square)["default"],
                          exponential_mechanism(notion))


def test_it_is_offered_against_a_poor_design_and_never_beats_the_optimum():
    # 40 random locations: the remapped exponential mechanism beats every data-independent
    # design by far, and the solved optimum is no worse than it (it is a private design)
    rng = np.random.default_rng(9)
    points = rng.random((40, 2)) * 10
    dom = Domain.from_points(points)
    metric = Metric("euclidean")
    problem = Problem(inputs=dom, privacy=[MetricPrivacy(1.0, metric, dom)],
                      objective=ExpectedLoss(metric.distances(dom), {"default": np.full(40, 1 / 40)}))
    optimum = problem.solve()
    assert optimum.status == "optimal"
    constant = float(metric.distances(dom).mean(axis=0).min())  # the best data-independent design
    offered = better_trivial_design(problem.privacy, problem.keys, 40, 40, problem.objective, constant,
                                    lambda a, b: a < b)
    assert offered is not None and offered[0] == "remapped exponential mechanism"
    assert optimum.objective <= offered[2] < 0.9 * constant
    # the matrices returned are the ones audited: audited again here, they hold, rows summing to 1
    assert problem.privacy[0].audit(offered[1]).holds
    assert np.allclose(offered[1]["default"].sum(axis=1), 1.0, atol=1e-12)
