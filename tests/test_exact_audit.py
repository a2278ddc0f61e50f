"""Exact audit: proofs on the exact dyadic entries, checked against closed forms and an
independent high-precision oracle (mpmath at 60 digits, plain rounding, no intervals)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import mechdesign
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.metrics import Metric
from mechdesign.privacy import (
    LDP,
    ApproxLDP,
    DistP,
    DivergenceDP,
    GVulnerability,
    InformationPrivacy,
    MetricPrivacy,
    MinEntropy,
    MutualInformation,
    Notion,
    Side,
    Target,
    XDistP,
)
from mechdesign.privacy.audit import audit
from mechdesign.privacy.exact.arith import dyadic, exact_vecmat, float_down, float_up
from mechdesign.privacy.exact.divergence_notions import divergence_bounds
from tests.conftest import PROBLEMS

mpmath.mp.dps = 60
SHIPPED_PROBLEMS = sorted(PROBLEMS.glob("*.toml"))


def krr(k: int, eps: float) -> np.ndarray:
    e = math.exp(eps)
    m = np.full((k, k), 1.0 / (k - 1 + e))
    np.fill_diagonal(m, e / (k - 1 + e))
    return m


# ---------------------------------------------------------------------------------------------
# shipped problems: every returned mechanism is proven private

@pytest.mark.parametrize("path", SHIPPED_PROBLEMS, ids=lambda p: p.name)
def test_shipped_problem_mechanisms_pass_the_exact_audit(path):
    problem = mechdesign.load_problem(path)
    if not problem.privacy:
        pytest.skip("no privacy notion to audit")
    result = problem.solve()
    mechs = {k: m.matrix for k, m in result.mechanisms.items()}
    for notion in problem.privacy:
        keys = notion.keys(list(mechs))
        a = audit({k: mechs[k] for k in keys}, notion, exact=True)
        assert a.holds, (type(notion).__name__, a.detail)
        assert a.detail["exact"] is True and not a.detail["refuted"]
        # the exact upper bound of the level is not below the float audit's value by more than
        # the float audit's own round-off (for capacity: not below the certified lower bound)
        floated = notion.audit({k: mechs[k] for k in keys})
        for name, value in a.achieved.items():
            low = floated.detail.get("lower_bits", floated.achieved.get(name))
            if isinstance(value, float) and isinstance(low, float):
                assert value >= low - 1e-12 * (1 + abs(low))


# ---------------------------------------------------------------------------------------------
# ratio notions against closed forms

@pytest.mark.parametrize("k,eps", [(2, 0.5), (5, 1.3), (12, 2.0)])
def test_krr_is_proven_at_epsilon_and_refuted_just_below(k, eps):
    m = krr(k, eps)
    at = audit(m, LDP(eps), exact=True)
    below = audit(m, LDP(eps - 1e-6), exact=True)
    assert at.holds and not at.detail["refuted"]
    assert at.detail["pairs_checked"] == k * (k - 1)
    assert not below.holds and below.detail["refuted"]
    # the true level of the float matrix is within a few ulps of ε; the bound covers it
    assert eps - 1e-14 <= at.achieved["epsilon"] <= eps + 1e-12


def test_zero_next_to_a_positive_entry_fails_ldp_exactly():
    m = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.2, 0.3, 0.5]])
    a = audit(m, LDP(50.0), exact=True)
    assert not a.holds and a.detail["refuted"]
    assert a.achieved["epsilon"] == math.inf


def truncated_geometric(n: int, eps: float) -> np.ndarray:
    """Ghosh, Roughgarden, Sundararajan, "Universally utility-maximizing privacy mechanisms",
    STOC 2009: the geometric mechanism with outputs clamped to {0..n−1}; its level under
    d(x, x') = |x − x'| is exactly ε (alpha = e^-ε)."""
    a = math.exp(-eps)
    x = np.arange(n)
    m = (1 - a) / (1 + a) * a ** np.abs(x[:, None] - x[None, :])
    m[:, 0] = a ** x / (1 + a)
    m[:, -1] = a ** (n - 1 - x) / (1 + a)
    return m


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_truncated_geometric_is_proven_d_private_at_epsilon_only(eps):
    n = 8
    m = truncated_geometric(n, eps)
    assert np.allclose(m.sum(axis=1), 1)
    dom = Domain.from_size(n)
    at = audit(m, MetricPrivacy(eps, Metric("absolute"), dom), exact=True)
    below = audit(m, MetricPrivacy(eps - 1e-6, Metric("absolute"), dom), exact=True)
    assert at.holds and at.detail["pairs_checked"] == n * (n - 1)
    assert not below.holds and below.detail["refuted"]
    assert eps - 1e-12 <= at.achieved["epsilon"] <= eps + 1e-9


def test_pairs_at_distance_zero_need_identical_rows():
    d = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    dom = Domain.from_size(3)
    notion = MetricPrivacy(1.0, Metric("matrix", matrix=d), dom)
    m = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.4, 0.3, 0.3]])
    assert audit(m, notion, exact=True).holds
    m[1, 0] = np.nextafter(0.5, 1.0)
    m[1, 2] = 0.2 - (m[1, 0] - 0.5)
    a = audit(m, notion, exact=True)
    assert not a.holds and a.detail["refuted"]


def _one_ulp_pair(eps: float) -> tuple[float, float]:
    """Floats a < a' (adjacent) with a/(1−a) <= e^ε < a'/(1−a'), found with a 60-digit oracle."""
    e = mpmath.exp(mpmath.mpf(eps))
    a = float(e / (1 + e))
    while mpmath.mpf(a) / (1 - mpmath.mpf(a)) > e:
        a = np.nextafter(a, 0.0)
    while mpmath.mpf(np.nextafter(a, 1.0)) / (1 - mpmath.mpf(np.nextafter(a, 1.0))) <= e:
        a = np.nextafter(a, 1.0)
    return float(a), float(np.nextafter(a, 1.0))


@pytest.mark.parametrize("eps", [0.7, 1.0, 2.5])
def test_one_ulp_across_the_boundary_flips_the_exact_verdict_but_not_the_float_audit(eps):
    lo, hi = _one_ulp_pair(eps)
    inside = np.array([[lo, 1 - lo], [1 - lo, lo]])
    outside = np.array([[hi, 1 - hi], [1 - hi, hi]])
    # the float audit (tolerance 1e-9) accepts both
    assert audit(inside, LDP(eps)).holds and audit(outside, LDP(eps)).holds
    a_in, a_out = audit(inside, LDP(eps), exact=True), audit(outside, LDP(eps), exact=True)
    assert a_in.holds and a_out.holds  # within the tolerance both hold
    assert a_in.detail["holds_at_requested"] is True
    assert a_out.detail["holds_at_requested"] is False  # exact mode sees what floats hide
    assert a_out.achieved["epsilon"] > eps


def test_approximate_ldp_delta_of_krr_matches_the_closed_form():
    k, eps, lower = 6, 1.2, 0.8
    m = krr(k, eps)
    delta = (math.exp(eps) - math.exp(lower)) / (k - 1 + math.exp(eps))  # worst pair x != x'
    ok = audit(m, ApproxLDP(lower, delta * (1 + 1e-6)), exact=True)
    bad = audit(m, ApproxLDP(lower, delta * (1 - 1e-6)), exact=True)
    assert ok.holds and ok.detail["holds_at_requested"]
    assert not bad.holds and bad.detail["refuted"]
    assert delta * (1 - 1e-12) <= ok.achieved["delta"] <= delta * (1 + 1e-9)


def test_distp_outputs_are_exact_sums():
    lam, mu = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.3, 0.6])
    m = krr(3, 1.0)
    p, q = lam @ m, mu @ m
    level = float(np.max(np.abs(np.log(p) - np.log(q))))
    notion = DistP(level * (1 + 1e-6), [(Side("a", lam), Side("b", mu))])
    assert audit(m, notion, exact=True).holds
    notion = DistP(level * (1 - 1e-6), [(Side("a", lam), Side("b", mu))])
    assert not audit(m, notion, exact=True).holds


# ---------------------------------------------------------------------------------------------
# divergences and information notions: intervals contain the closed forms

def _binary(p: float) -> np.ndarray:
    return np.array([[p, 1 - p], [1 - p, p]])


@pytest.mark.parametrize("name", ["kl", "hellinger"])
def test_binary_rr_divergence_interval_contains_the_closed_form(name):
    p = 0.75
    mp = mpmath.mpf(p)
    closed = ((2 * mp - 1) * mpmath.log(mp / (1 - mp)) if name == "kl"
              else (mpmath.sqrt(mp) - mpmath.sqrt(1 - mp)) ** 2)
    rows = [[dyadic(v) for v in row] for row in _binary(p).tolist()]
    lo, hi = divergence_bounds(name, rows[0], rows[1])
    man, exp = closed.man_exp
    assert lo <= Fraction(int(man)) * Fraction(2) ** int(exp) <= hi
    assert float(hi - lo) < 1e-20
    value = float(closed)
    m = _binary(p)
    up = audit(m, DivergenceDP(value + 1e-9, name, [(0, 1)]), exact=True)
    assert up.holds and up.detail["holds_at_requested"] and up.detail["method"] == "interval"
    assert value <= up.achieved["epsilon"] <= value * (1 + 1e-15)
    just = audit(m, DivergenceDP(value - 1e-9, name, [(0, 1)]), exact=True)
    assert not just.detail["holds_at_requested"]
    down = audit(m, DivergenceDP(value - 3e-9, name, [(0, 1)]), exact=True)
    assert not down.holds and down.detail["refuted"]


@pytest.mark.parametrize("name,closed,exactly", [("tv", 0.5, True), ("chi2", 4.0 / 3.0, False)])
def test_rational_divergences_are_decided_exactly(name, closed, exactly):
    # binary RR at 3/4: TV = 1/2 exactly; χ² = 4/3, whose float is below 4/3, so χ² holds at
    # the float bound only within the tolerance
    m = _binary(0.75)
    ok = audit(m, DivergenceDP(closed, name, [(0, 1)]), exact=True)
    assert ok.detail["method"] == "rational"
    assert ok.holds and ok.detail["holds_at_requested"] is exactly
    assert not audit(m, DivergenceDP(closed - 2e-9, name, [(0, 1)]), exact=True).holds


def test_mutual_information_and_capacity_of_the_binary_symmetric_channel():
    p = 0.9
    mp = mpmath.mpf(p)
    bits = float(1 + (mp * mpmath.log(mp) + (1 - mp) * mpmath.log(1 - mp)) / mpmath.log(2))
    m = _binary(p)
    for notion in (MutualInformation(bits + 1e-9, {"default": np.array([0.5, 0.5])}),
                   InformationPrivacy(bits + 1e-9)):
        a = audit(m, notion, exact=True)
        assert a.holds and bits - 1e-15 <= a.achieved["bits"] <= bits + 1e-9, type(notion).__name__
    assert not audit(m, MutualInformation(bits - 3e-9, {"default": np.array([0.5, 0.5])}),
                     exact=True).holds


def test_min_entropy_capacity_of_krr():
    k, eps = 4, 1.0
    m = krr(k, eps)
    bits = math.log2(m.max(axis=0).sum())
    assert audit(m, MinEntropy(bits * (1 + 1e-6)), exact=True).detail["holds_at_requested"]
    assert not audit(m, MinEntropy(bits * (1 - 1e-6)), exact=True).holds
    # the column maxima of the identity sum to exactly 4 = 2^2: decided exactly at c = 2
    assert audit(np.eye(4), MinEntropy(2.0), exact=True).detail["holds_at_requested"]


def test_target_deviation_of_one_ulp_is_seen_exactly():
    lam = np.array([0.5, 0.5])
    m = np.array([[0.5, 0.5], [0.5, 0.5]])
    notion = Target({"default": lam}, np.array([0.5, 0.5]))
    assert audit(m, notion, exact=True).detail["holds_at_requested"]
    m[0] = [np.nextafter(0.5, 1.0), 1 - np.nextafter(0.5, 1.0)]
    a = audit(m, notion, exact=True)
    assert a.holds and not a.detail["holds_at_requested"]  # within the tolerance, not exact
    assert a.achieved["deviation"] == pytest.approx(2.0 ** -54, rel=1e-12)


@pytest.mark.parametrize("form", ["bound", "bits"])
def test_bayes_vulnerability_of_krr(form):
    # identity gain, uniform prior: V = (1/k) Σ_y max_x K[x, y] = e^ε / (k − 1 + e^ε), and the
    # multiplicative leakage is log2(k e^ε / (k − 1 + e^ε))
    k, eps = 4, 1.0
    m, prior = krr(k, eps), {"default": np.full(k, 1 / k)}
    v = math.exp(eps) / (k - 1 + math.exp(eps))
    value = v if form == "bound" else math.log2(k * v)
    ok = GVulnerability("identity", prior, **{form: value * (1 + 1e-6)})
    bad = GVulnerability("identity", prior, **{form: value * (1 - 1e-6)})
    a = audit(m, ok, exact=True)
    assert a.holds and a.detail["holds_at_requested"]
    assert v <= a.achieved["vulnerability"] <= v * (1 + 1e-15)
    assert not audit(m, bad, exact=True).holds


def test_xdistp_scales_each_pair_by_its_distance():
    lam, mu = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    cost = np.abs(np.subtract.outer(np.arange(3.0), np.arange(3.0)))
    m = krr(3, 0.8)
    notion = XDistP(1.0, [(Side("a", lam), Side("b", mu))], "tv", cost)
    width = float(notion.widths[0])
    assert width == pytest.approx(0.4)  # TV(λ, μ) = ½ Σ |λ − μ|
    level = float(np.max(np.abs(np.log(lam @ m) - np.log(mu @ m)))) / width
    for factor, expected in ((1 + 1e-6, True), (1 - 1e-6, False)):
        notion = XDistP(level * factor, [(Side("a", lam), Side("b", mu))], "tv", cost)
        assert audit(m, notion, exact=True).holds is expected


def test_free_target_with_equal_outputs_deviates_by_exactly_zero():
    weights = {"a": 0.1, "b": 0.2, "c": 0.7}
    contexts = {s: np.array([0.25, 0.75]) for s in weights}
    notion = Target(contexts, None, weights=weights)
    assert sum(Fraction(w) for w in notion.weights.values()) != 1  # float weights: not exact
    row = np.array([0.3, 0.2, 0.5])
    mechs = {s: np.array([row, row]) for s in weights}
    a = audit(mechs, notion, exact=True)
    assert a.holds and a.detail["holds_at_requested"] and a.achieved["deviation"] == 0.0


# ---------------------------------------------------------------------------------------------
# agreement with the float audit away from the boundary, arithmetic, and refusals

def test_exact_and_float_audits_agree_away_from_the_boundary():
    rng = np.random.default_rng(7)
    for _ in range(10):
        m = rng.dirichlet(np.ones(5), size=4)
        level = LDP(1.0).level(m)
        for factor in (1 - 1e-4, 1 + 1e-4):
            notion = LDP(level * factor)
            assert audit(m, notion, exact=True).holds == audit(m, notion).holds == (factor > 1)


def _boundary_matrix(rng, m: int, eps_d: np.ndarray, up: bool) -> np.ndarray:
    """Columns whose entries sit 3 ulps below K[x, y] = e^{ε d(x, 0)} K[0, y]; with ``up``, one
    random entry sits 3 ulps above instead."""
    base = rng.uniform(0.05, 0.3, size=m)
    k = base[None, :] * np.exp(eps_d)[:, None]
    x, y = rng.integers(1, k.shape[0]), rng.integers(0, m)
    for _ in range(3):
        k = np.nextafter(k, 0.0)
    if up:
        for _ in range(6):
            k[x, y] = np.nextafter(k[x, y], 1.0)
    k[0] = base
    return k


def _oracle_ratio(k: np.ndarray, dist: np.ndarray, eps: Fraction) -> bool:
    """All ordered pairs at 60 digits: K[x, y] <= e^{ε d} K[x', y] (plain rounding is decisive:
    the margins here are >= 1e-17, the oracle's error about 1e-60)."""
    e = mpmath.mpf(eps.numerator) / eps.denominator
    n = k.shape[0]
    return all(mpmath.mpf(k[x, y]) <= mpmath.exp(e * mpmath.mpf(dist[x, z])) * mpmath.mpf(k[z, y])
               for x in range(n) for z in range(n) if x != z for y in range(k.shape[1]))


@pytest.mark.parametrize("seed", range(6))
def test_verdicts_at_the_boundary_agree_with_a_high_precision_oracle(seed):
    from mechdesign.core.audit_record import AUDIT_TOL
    from mechdesign.privacy.exact import exact_audit

    rng = np.random.default_rng(seed)
    pts = rng.uniform(0, 1, size=(4, 2))
    dom = Domain.from_points(pts)
    notion = MetricPrivacy(0.9, Metric("euclidean"), dom)
    dist = notion.metric.distances(dom)
    k = _boundary_matrix(rng, 6, notion.epsilon * dist[:, 0], up=seed % 2 == 1)
    a = exact_audit(notion, {"default": k})
    eps = Fraction(notion.epsilon)
    assert a.detail["holds_at_requested"] == _oracle_ratio(k, dist, eps)
    assert a.holds == _oracle_ratio(k, dist, eps + Fraction(AUDIT_TOL))
    assert a.detail["undecided"] == 0
    assert a.detail["holds_at_requested"] is (seed % 2 == 0)  # the construction's intent
    assert notion.audit({"default": k}).holds  # the float audit cannot tell the two apart


@pytest.mark.parametrize("seed", range(4))
def test_hockey_stick_verdict_agrees_with_a_high_precision_oracle(seed):
    from mechdesign.privacy.exact import exact_audit

    rng = np.random.default_rng(10 + seed)
    k = rng.dirichlet(np.ones(5), size=4)
    eps = 0.4
    e = mpmath.exp(mpmath.mpf(eps))
    h = max(sum(max(mpmath.mpf(0), mpmath.mpf(k[x, y]) - e * mpmath.mpf(k[z, y]))
                for y in range(5)) for x in range(4) for z in range(4) if x != z)
    delta = float(h)
    a = exact_audit(ApproxLDP(eps, delta), {"default": k})
    assert a.holds  # δ + 1e-9 is far above H
    assert a.detail["holds_at_requested"] == (h <= mpmath.mpf(delta))
    assert h <= a.achieved["delta"] <= float(h) * (1 + 1e-9)
    tight = exact_audit(ApproxLDP(eps, float(np.nextafter(delta, 0.0))), {"default": k})
    assert tight.detail["holds_at_requested"] is False


def test_hockey_stick_bounds_checked_together_match_one_at_a_time():
    from mechdesign.privacy.exact.ratio import check_hockey
    from mechdesign.privacy.exact.ratio_notions import all_ordered_pairs

    rng = np.random.default_rng(4)
    k = rng.dirichlet(np.ones(5), size=4)
    k[1, 2] = 0.0  # a zero of q under an unbounded row
    i, j = all_ordered_pairs(4)
    P, Q = k[i], k[j]
    c = [None] + [Fraction(0.4)] * (i.size - 1)
    h = float(np.maximum(P - math.exp(0.4) * Q, 0.0)[1:].sum(axis=1).max())
    bounds = [dyadic(h + 1e-9), dyadic(h), dyadic(float(np.nextafter(h, 0.0))), dyadic(h / 2)]
    together = check_hockey(P, Q, c, bounds, labels=str)
    assert together == [check_hockey(P, Q, c, [b], labels=str)[0] for b in bounds]
    assert all(v.close for v, _ in together[:3]) and together[3][0].refuted


def test_a_strict_proof_reports_the_tolerant_checks_close_calls():
    # a proof at ε·d implies the one at (ε + τ)·d, whose close calls then come from its screen;
    # the 2 x 2 matrix has a ratio 1e-6 − τ/2 below e^ε: a close call at ε, screened at ε + τ
    from mechdesign.core.audit_record import AUDIT_TOL
    from mechdesign.privacy.exact.ratio_notions import (
        all_ordered_pairs,
        matrix_blocks,
        ratio_audit,
        run_ratio,
    )

    n, eps = 8, 0.3
    i, j = all_ordered_pairs(n)
    dist = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    geometric = matrix_blocks(truncated_geometric(n, eps), i, j, dist[i, j], "default")
    p = 0.3 * math.exp(0.5) * (1 - 1e-6) * (1 + AUDIT_TOL / 2)
    i2, j2 = all_ordered_pairs(2)
    screened = matrix_blocks(np.array([[p, 1 - p], [0.3, 0.7]]), i2, j2, np.ones(2), "default")
    for blocks, level in ((geometric, eps * (1 + 1e-12)), (geometric, eps * (1 + 3e-7)),
                          (screened, 0.5)):
        a = ratio_audit("metric", {"epsilon": level}, level, blocks, 2)
        tolerant = run_ratio(blocks, Fraction(level) + Fraction(AUDIT_TOL))
        assert a.detail["holds_at_requested"] and a.holds and tolerant.proved
        assert a.detail["close_calls"] == tolerant.close
        assert a.detail["undecided"] == tolerant.undecided == 0
    assert run_ratio(screened, Fraction(0.5)).close == 1 and tolerant.close == 0


def test_exact_products_and_directed_rounding():
    rng = np.random.default_rng(3)
    lam, k = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(5), size=6)
    got = exact_vecmat(lam, k)
    for y in range(5):
        want = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(lam, k[:, y]))
        assert Fraction(got[y][0]) * Fraction(2) ** got[y][1] == want
        f = Fraction(got[y][0]) * Fraction(2) ** got[y][1]
        lo, hi = float_down(got[y]), float_up(got[y])
        assert Fraction(lo) <= f <= Fraction(hi) and np.nextafter(lo, 2.0) >= hi


def test_uncovered_notion_is_refused_by_name():
    class Custom(Notion):
        name = "custom"

    with pytest.raises(ProblemError, match="Custom"):
        audit(np.eye(2), Custom(), exact=True)


def test_the_certificates_mixing_leaves_a_kl_level_inside_the_tolerance_for_the_exact_audit():
    # a shared mechanism 5e-9 above a KL DistP bound: the certificate mixes it with a
    # data-independent row; the bisected weight alone would leave the level at ε + AUDIT_TOL,
    # where another CPU's last digits or the interval audit refute it
    from mechdesign.core.audit_record import AUDIT_TOL
    from mechdesign.privacy import DivergenceDistP
    from mechdesign.privacy.certify import certify

    lam, mu = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    k = np.array([[0.7, 0.2, 0.1], [0.25, 0.5, 0.25], [0.1, 0.2, 0.7]])
    level = float(DivergenceDistP(1.0, [(Side("a", lam), Side("b", mu))], "kl").levels({"default": k}).max())
    notion = DivergenceDistP(level - 5e-9, [(Side("a", lam), Side("b", mu))], "kl")
    mechs, audits, notes = certify([notion], {"default": k})
    assert notes["mixed_with_data_independent"] > 0 and audits[0].holds
    achieved = audits[0].achieved["epsilon"]
    assert achieved <= notion.epsilon + 0.9 * AUDIT_TOL
    assert audit(mechs, notion, exact=True).holds
