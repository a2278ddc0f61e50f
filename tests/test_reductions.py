"""The exact reductions of d-privacy give the same optimum as the all-pairs program."""

import cvxpy as cp
import numpy as np
import pytest

from mechdesign import Domain, Metric, Problem
from mechdesign.objectives import ExpectedLoss
from mechdesign.privacy import LDP, MetricPrivacy


def all_pairs_optimum(d, eps, prior, loss):
    """Plain all-pairs LP, written independently of the library."""
    n = d.shape[0]
    K = cp.Variable((n, loss.shape[1]), nonneg=True)
    cons = [cp.sum(K, axis=1) == 1]
    for x in range(n):
        for z in range(n):
            if x != z:
                cons.append(K[x, :] <= np.exp(eps * d[x, z]) * K[z, :])
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(prior[:, None] * loss, K))), cons)
    prob.solve(solver=cp.HIGHS)
    return prob.value


def design(dom, metric, eps, prior):
    loss = metric.distances(dom)
    return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                   objective=ExpectedLoss(loss, {"default": prior})).solve()


@pytest.mark.parametrize("kind", ["euclidean", "manhattan"])
def test_grid_betweenness_reduction_matches_all_pairs(kind):
    dom = Domain.from_grid(3, 3)
    metric = Metric(kind)
    prior = np.random.default_rng(1).dirichlet(np.ones(9))
    result = design(dom, metric, 0.7, prior)
    d = metric.distances(dom)
    assert result.objective == pytest.approx(all_pairs_optimum(d, 0.7, prior, d), rel=1e-7)
    pairs = MetricPrivacy(0.7, metric, dom).i.size // 2
    assert pairs < 36  # some pairs really were implied and dropped


def test_graph_metric_uses_edges_only_and_matches_all_pairs():
    labels = ["a", "b", "c", "d", "e"]
    edges = [["a", "b", 1.0], ["b", "c", 2.0], ["c", "d", 1.0], ["a", "d", 5.0], ["d", "e", 0.5]]
    dom = Domain.from_labels(labels)
    metric = Metric("graph", edges=edges)
    d = metric.distances(dom)
    assert d[0, 3] == pytest.approx(4.0)  # a-b-c-d beats the direct edge of 5
    notion = MetricPrivacy(0.9, metric, dom)
    assert notion.i.size // 2 == 4  # the edge a-d is not a shortest path and is dropped
    prior = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    result = design(dom, metric, 0.9, prior)
    assert result.objective == pytest.approx(all_pairs_optimum(d, 0.9, prior, d), rel=1e-7)


def test_haversine_distances_match_known_city_pair():
    # Paris (48.8566, 2.3522) to London (51.5074, -0.1278): about 343.5 km
    dom = Domain.from_points([[48.8566, 2.3522], [51.5074, -0.1278]], labels=["paris", "london"])
    d = Metric("haversine").distances(dom)
    assert d[0, 1] == pytest.approx(343.5, abs=1.0)


def test_ldp_envelope_form_matches_all_pairs_ldp():
    k = 6
    dom = Domain.from_size(k)
    prior = np.random.default_rng(5).dirichlet(np.ones(k))
    loss = Metric("absolute").distances(dom)
    ours = Problem(inputs=dom, privacy=[LDP(1.2)], objective=ExpectedLoss(loss, {"default": prior})).solve()
    discrete = np.ones((k, k)) - np.eye(k)  # LDP is d-privacy with the discrete metric
    assert ours.objective == pytest.approx(all_pairs_optimum(discrete, 1.2, prior, loss), rel=1e-7)


def test_huge_coefficients_are_left_to_repair_and_gap_is_reported(monkeypatch):
    # Pairs whose e^{εd} exceeds the LP's coefficient limit are not put into the LP (large ones
    # make HiGHS return wrong answers); the envelope repair restores them and the gap says how
    # far the repaired design may be from optimal. The limit is lowered here so that the
    # all-pairs reference LP (coefficients up to e^{2.2·3.6}) is still trustworthy.
    import mechdesign.privacy.metric as metric_module

    monkeypatch.setattr(metric_module, "MAX_LOG_COEFFICIENT", 3.0)
    dom = Domain.from_grid(3, 3)
    metric = Metric("euclidean")
    notion = MetricPrivacy(2.2, metric, dom)
    assert notion.relaxed
    prior = np.random.default_rng(2).dirichlet(np.ones(9))
    d = metric.distances(dom)
    result = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(d, {"default": prior}),
                     gap_tolerance=0.5).solve()
    assert result.certificate[0].holds
    assert result.solver["relaxed"] is True
    exact = all_pairs_optimum(d, 2.2, prior, d)
    assert result.solver["bound"] <= exact + 1e-7
    assert exact <= result.objective + 1e-7
