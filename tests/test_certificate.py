"""The certificate: repair keeps pure notions exact, audits catch planted violations, and random
designs always come back with a holding certificate checked by an independent audit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign
from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP, DistP, MetricPrivacy, Side
from mechdesign.privacy.certify import certify
from tests.conftest import PROBLEMS
from tests.strategies import lattice_points, loss_matrices, probability_vectors


def brute_force_dprivacy_level(k, d):
    """max over all pairs x != x' and outputs y of ln(K[x,y]/K[x',y]) / d(x,x') (no reductions)."""
    worst = 0.0
    n = k.shape[0]
    for x in range(n):
        for z in range(n):
            if x == z:
                continue
            for y in range(k.shape[1]):
                a, b = k[x, y], k[z, y]
                if a == 0:
                    continue
                if b == 0:
                    return np.inf
                worst = max(worst, np.log(a / b) / d[x, z])
    return worst


@st.composite
def metric_design_cases(draw):
    """Distinct points (on a line, or on a small plane lattice where distances tie), a metric
    and a prior."""
    n = draw(st.integers(2, 6))
    kind = draw(st.sampled_from(["absolute", "euclidean", "manhattan", "discrete"]))
    if kind == "absolute":
        points = np.sort(draw(lattice_points(n, 1, side=50)).ravel())
    else:
        points = draw(lattice_points(n, 2, side=11, step=0.5))
    return Domain.from_points(points), Metric(kind), draw(probability_vectors(n))


@settings(max_examples=20, deadline=None)
@given(metric_design_cases(), st.floats(0.05, 3.0))
def test_random_metric_designs_pass_an_independent_audit(case, eps):
    dom, metric, prior = case
    d = metric.distances(dom)
    result = Problem(inputs=dom, privacy=[MetricPrivacy(eps, metric, dom)],
                     objective=ExpectedLoss(d, {"default": prior}), gap_tolerance=1e-3).solve()
    assert result.status == "optimal"
    assert brute_force_dprivacy_level(result.mechanism.matrix, d) <= eps + 1e-9
    assert np.allclose(result.mechanism.matrix.sum(axis=1), 1, atol=1e-12)


@st.composite
def ldp_design_cases(draw):
    """A prior and a loss matrix on k values."""
    k = draw(st.integers(2, 6))
    return draw(probability_vectors(k)), draw(loss_matrices(k, k))


@settings(max_examples=20, deadline=None)
@given(ldp_design_cases(), st.floats(0.0, 3.0))
def test_random_ldp_designs_pass_an_independent_audit(case, eps):
    prior, loss = case
    k = prior.size
    result = Problem(inputs=Domain.from_size(k), privacy=[LDP(eps)],
                     objective=ExpectedLoss(loss, {"default": prior})).solve()
    assert result.status == "optimal"
    d = np.ones((k, k)) - np.eye(k)
    assert brute_force_dprivacy_level(result.mechanism.matrix, d) <= eps + 1e-9


def test_planted_zero_next_to_nonzero_fails_pure_audits():
    k = np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2], [0.3, 0.3, 0.4]])
    assert not mechdesign.audit(k, LDP(5.0)).holds
    assert mechdesign.audit(k, LDP(5.0)).achieved["epsilon"] == np.inf
    dom = Domain.from_size(3)
    assert not mechdesign.audit(k, MetricPrivacy(5.0, Metric("absolute"), dom)).holds


def test_planted_ratio_violation_fails_and_exact_level_is_reported():
    k = np.array([[0.8, 0.2], [0.2, 0.8]])
    audit = mechdesign.audit(k, LDP(1.0))
    assert not audit.holds
    assert audit.achieved["epsilon"] == pytest.approx(np.log(4.0))
    assert mechdesign.audit(k, LDP(np.log(4.0))).holds


def test_repair_restores_tiny_entries_a_solver_rounded_to_zero():
    # exact optimum on a line has entries e^{-ε·distance}; a solver returns zeros instead
    n, eps = 8, 1.0
    dom = Domain.from_size(n)
    notion = MetricPrivacy(eps, Metric("absolute"), dom)
    raw = np.eye(n) * 0.6 + 0.4 / n
    raw[0, -1] = 0.0  # a zero next to non-zeros in its column
    raw[0, 0] += 0.4 / n
    raw[3, 4] = -1e-12  # round-off negative
    mechs, audits, _ = certify([notion], {"default": raw})
    assert audits[0].holds
    assert np.all(mechs["default"] > 0)
    assert brute_force_dprivacy_level(mechs["default"], np.abs(np.subtract.outer(range(n), range(n)))) <= eps + 1e-9


def test_distp_failure_is_repaired_by_mixing_and_never_reported_broken():
    lam, mu = np.array([0.9, 0.1]), np.array([0.1, 0.9])
    notion = DistP(0.5, [(Side("a", lam), Side("b", mu))])
    raw = np.array([[0.7, 0.3], [0.3, 0.7 + 1e-6]])  # over ε (level 0.66) and not stochastic
    mechs, audits, notes = certify([notion], {"default": raw})
    assert audits[0].holds
    assert "mixed_with_data_independent" in notes
    assert audits[0].achieved["epsilon"] == pytest.approx(0.5, abs=1e-8)  # smallest mix that holds


def test_distp_optimum_is_no_worse_than_ldp_at_same_epsilon():
    # ε-LDP implies ε-DistP for every pair (Theorem 1 with D∞), so DistP is a relaxation
    problem = mechdesign.load_problem(PROBLEMS / "distp-two-sources.toml")
    distp = problem.solve()
    problem.privacy = [LDP(problem.privacy[0].epsilon)]
    ldp = problem.solve()
    assert distp.objective <= ldp.objective + 1e-9
    assert distp.objective < ldp.objective  # and strictly better on this instance
