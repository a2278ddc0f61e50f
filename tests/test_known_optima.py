"""Optima of the designer against answers derived independently (closed forms, theorems)."""

import numpy as np
import pytest

import mechdesign
from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ErrorProbability, ExpectedLoss, hamming_loss
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.privacy import LDP, ApproxLDP, MetricPrivacy


def error_problem(k, notion, prior=None):
    dom = Domain.from_size(k)
    prior = np.full(k, 1 / k) if prior is None else prior
    return Problem(inputs=dom, objective=ErrorProbability(hamming_loss(dom, dom), {"default": prior}),
                   privacy=[notion])


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_warner_rr_error_probability_is_one_over_one_plus_e_eps(eps):
    result = error_problem(2, LDP(eps)).solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(1 / (1 + np.exp(eps)), abs=1e-9)


@pytest.mark.parametrize("k,eps", [(3, 0.5), (5, 1.0), (8, 2.0), (12, 0.3)])
def test_krr_is_optimal_for_error_probability_under_uniform_prior(k, eps):
    result = error_problem(k, LDP(eps)).solve()
    closed_form = (k - 1) / (k - 1 + np.exp(eps))
    assert result.objective == pytest.approx(closed_form, abs=1e-9)
    mech = krr(k, eps)
    assert result.mechanism.matrix.shape == mech.matrix.shape
    # the kRR matrix reaches the same value and is ε-LDP
    assert 1 - np.mean(np.diag(mech.matrix)) == pytest.approx(closed_form, abs=1e-12)


@pytest.mark.parametrize("eps,delta", [(0.5, 0.1), (1.0, 0.05), (0.0, 0.3)])
def test_binary_approximate_ldp_error_is_one_minus_delta_over_one_plus_e_eps(eps, delta):
    # privacy region of (ε, δ)-indistinguishability on one bit: p + e^ε p >= 1 − δ (Kairouz et al.)
    result = error_problem(2, ApproxLDP(eps, delta)).solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx((1 - delta) / (1 + np.exp(eps)), abs=1e-8)


def remapped_truncated_geometric_loss(n, eps):
    """Expected |x − y| of the truncated geometric mechanism on {0..n−1} followed by the
    Bayes-optimal remap (weighted median of each output's posterior), uniform prior.
    Ghosh, Roughgarden & Sundararajan: this is the optimum among ε·|x−x'|-private mechanisms."""
    a = np.exp(-eps)
    x = np.arange(n)
    g = a ** np.abs(x[:, None] - x[None, :]) * (1 - a) / (1 + a)
    g[:, 0] = a ** x / (1 + a)
    g[:, -1] = a ** (n - 1 - x) / (1 + a)
    assert np.allclose(g.sum(axis=1), 1)
    joint = g / n  # Pr[x, y]
    loss = np.abs(x[:, None] - x[None, :])  # loss[x, r]
    # for each output y, best remap r: min_r Σ_x joint[x, y] |x − r|
    per_output = joint.T @ loss  # [y, r]
    return per_output.min(axis=1).sum()


def test_closed_form_helper_reproduces_published_optima():
    assert remapped_truncated_geometric_loss(10, 1.0) == pytest.approx(0.7163109738, abs=1e-9)
    assert remapped_truncated_geometric_loss(20, 0.5) == pytest.approx(1.6414864271, abs=1e-9)


def line_problem(n, eps):
    dom = Domain.from_size(n)
    metric = Metric("absolute")
    return Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                   objective=ExpectedLoss(metric.distances(dom), {"default": np.full(n, 1 / n)}))


@pytest.mark.parametrize("n,eps", [(10, 1.0), (20, 1.0), (10, 0.5), (20, 0.5), (35, 0.8)])
def test_d_privacy_on_a_line_equals_remapped_truncated_geometric(n, eps):
    result = line_problem(n, eps).solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(remapped_truncated_geometric_loss(n, eps), rel=1e-7)


def test_d_privacy_on_a_long_line_keeps_every_far_entry_positive():
    # far entries are about e^{-ε n}: LP solvers round them to zero; the repair must restore them
    result = line_problem(60, 1.0).solve()
    k = result.mechanism.matrix
    assert result.status == "optimal"
    assert np.all(k > 0)
    logk = np.log(k)
    assert np.max(np.abs(np.diff(logk, axis=0))) <= 1.0 + 1e-9
    assert result.objective == pytest.approx(remapped_truncated_geometric_loss(60, 1.0), rel=1e-7)


def test_ldp_design_never_worse_than_krr_and_audits_at_its_epsilon():
    rng = np.random.default_rng(3)
    k, eps = 7, 0.8
    prior = rng.dirichlet(np.ones(k))
    dom = Domain.from_size(k)
    loss = Metric("absolute").distances(dom)
    problem = Problem(inputs=dom, privacy=[LDP(eps)], objective=ExpectedLoss(loss, {"default": prior}))
    result = problem.solve()
    baseline = problem.objective.value({"default": krr(k, eps).matrix})
    assert result.objective <= baseline + 1e-12
    audit = mechdesign.audit(result.mechanism, LDP(eps))
    assert audit.holds
    # a non-trivial optimum spends the whole budget
    assert audit.achieved["epsilon"] == pytest.approx(eps, abs=1e-9)
