"""The exact reductions of d-privacy give the same optimum as the all-pairs program."""

import cvxpy as cp
import numpy as np
import pytest

from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ExpectedLoss
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


def test_huge_coefficients_are_split_into_exact_chains():
    # e^{εd} up to e^{2.5·3·√13} ≈ e^27 on this grid: HiGHS returns wrong "optimal" answers with
    # such coefficients, so the pair is split into links of at most e^10 through auxiliary
    # variables (⌈27 / 10⌉ = 3 of them). The LP stays exact.
    dom = Domain.from_grid(4, 4, cell=3.0)
    metric = Metric("euclidean")
    notion = MetricPrivacy(2.5, metric, dom)
    assert notion.segments().max() == 3
    prior = np.random.default_rng(2).dirichlet(np.ones(16))
    d = metric.distances(dom)
    result = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(d, {"default": prior})).solve()
    assert result.status == "optimal" and result.certificate[0].holds
    assert result.solver["gap"] <= 1e-6


def test_chain_split_gives_the_same_optimum_as_direct_constraints(monkeypatch):
    import importlib

    link_rule = importlib.import_module("mechdesign.privacy.ldp")

    dom = Domain.from_grid(3, 3)
    metric = Metric("euclidean")
    prior = np.random.default_rng(4).dirichlet(np.ones(9))
    d = metric.distances(dom)
    direct = design(dom, metric, 2.2, prior).objective
    monkeypatch.setattr(link_rule, "MAX_LOG_COEFFICIENT", 1.0)  # force chains of up to 7 links
    monkeypatch.setattr(link_rule, "LINK_LOG", 1.0)
    notion = MetricPrivacy(2.2, metric, dom)
    assert notion.segments().max() >= 5
    chained = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(d, {"default": prior})).solve()
    assert chained.objective == pytest.approx(direct, rel=1e-7)
    assert chained.objective == pytest.approx(all_pairs_optimum(d, 2.2, prior, d), rel=1e-7)
