"""Baselines: every privacy claim is checked by the auditor, and the exact levels
are compared with closed forms derived independently of the auditor."""

import math

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign
from mechdesign import Domain, Metric, ProblemError
from mechdesign.mechanisms.metric_mechanisms import exponential, geometric
from mechdesign.mechanisms.planar import (
    laplace_rectangle_mass,
    mirror_quadrant,
    offset_intervals,
    planar_geometric,
    planar_laplace,
)
from mechdesign.mechanisms.profile_mechanisms import (
    one_bit_cluster,
    one_bit_flip,
    smooth_categorical,
    smooth_one_bit,
)
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.mechanisms.trivial_mechanisms import identity, uniform
from mechdesign.mechanisms.unary_encoding import oue, rappor
from mechdesign.privacy import LDP, MetricPrivacy, ProfilePrivacy
from tests.conftest import PROBLEMS
from tests.strategies import lattice_points


def level(mech, notion):
    audit = mechdesign.audit(mech, notion)
    return audit.achieved["epsilon"], audit


def claims_hold(mech):
    return all(mechdesign.audit(mech, c).holds for c in mech.claims)


# --- k-ary RR -------------------------------------------------------------------------------

@pytest.mark.parametrize("k,eps", [(2, math.log(3)), (5, 0.1), (10, 1.0), (50, 3.0)])
def test_krr_audits_to_exactly_its_epsilon(k, eps):
    mech = krr(k, eps)
    achieved, audit = level(mech, mech.claims[0])
    assert audit.holds and achieved == pytest.approx(eps, abs=1e-12)
    # the closed form: diagonal e^ε/(k−1+e^ε), off-diagonal 1/(k−1+e^ε)
    assert mech.matrix[0, 0] == pytest.approx(math.exp(eps) / (k - 1 + math.exp(eps)), rel=1e-14)


# --- truncated geometric --------------------------------------------------------------------

def geometric_closed_form(n, eps):
    a = math.exp(-eps)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    g = (1 - a) / (1 + a) * a ** np.abs(i - j)
    g[:, 0] = a ** np.arange(n) / (1 + a)
    g[:, -1] = a ** (n - 1 - np.arange(n)) / (1 + a)
    return g


@pytest.mark.parametrize("n,eps", [(2, 0.7), (7, 0.7), (20, 1.0), (40, 0.05)])
def test_truncated_geometric_audits_to_exactly_epsilon_d_and_matches_closed_form(n, eps):
    mech = geometric(n, eps)
    np.testing.assert_allclose(mech.matrix, geometric_closed_form(n, eps), rtol=1e-12)
    achieved, audit = level(mech, mech.claims[0])
    assert isinstance(mech.claims[0], MetricPrivacy) and audit.holds
    assert achieved == pytest.approx(eps, abs=1e-12)
    # as LDP it is exactly ε·(n − 1): the end columns compare α^0 with α^{n−1}
    assert level(mech, LDP(100))[0] == pytest.approx(eps * (n - 1), rel=1e-12)


def test_geometric_on_spaced_unsorted_values_is_private_per_unit_distance():
    dom = Domain.from_labels(["1.5", "0.0", "0.5", "1.0"])  # gap h = 0.5, not sorted
    mech = geometric(dom, 2.0)
    achieved, audit = level(mech, MetricPrivacy(2.0, Metric("absolute"), dom))
    assert audit.holds and achieved == pytest.approx(2.0, abs=1e-12)
    # rows follow the labels: the value 0.0 (index 1) keeps most mass on itself... in rank terms
    np.testing.assert_allclose(mech.matrix[np.ix_([1, 2, 3, 0], [1, 2, 3, 0])],
                               geometric_closed_form(4, 2.0 * 0.5), rtol=1e-12)


def test_geometric_rejects_unequal_spacing():
    with pytest.raises(ProblemError, match="equally spaced"):
        geometric(Domain.from_labels(["0", "1", "3"]), 1.0)


# --- exponential ----------------------------------------------------------------------------

@pytest.mark.parametrize("k,eps", [(3, 1.0), (6, 0.4), (12, 2.5)])
def test_exponential_with_discrete_metric_is_krr_at_half_epsilon(k, eps):
    mech = exponential(k, "discrete", eps)
    np.testing.assert_allclose(mech.matrix, krr(k, eps / 2).matrix, rtol=1e-13)
    achieved, audit = level(mech, mech.claims[0])
    assert audit.holds and achieved == pytest.approx(eps / 2, abs=1e-12)


@pytest.mark.parametrize("n,eps", [(2, 1.0), (6, 1.0), (15, 0.3), (30, 2.0)])
def test_exponential_on_a_line_has_the_derived_exact_level(n, eps):
    # K[x,y] ∝ r^{|x−y|}, r = e^{−ε/2}; Z(x) = (1 + r − r^{x+1} − r^{n−x})/(1 − r); the worst
    # pair is an end pair: ε/2 + ln(Z(1)/Z(0)) = ε/2 + ln((1 + r − r² − r^{n−1})/(1 − r^n)) <= ε
    r = math.exp(-eps / 2)
    exact = eps / 2 + math.log((1 + r - r * r - r ** (n - 1)) / (1 - r ** n))
    mech = exponential(n, "absolute", eps)
    achieved, audit = level(mech, mech.claims[0])
    assert audit.holds
    assert achieved == pytest.approx(exact, abs=1e-12)
    assert exact <= eps


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: lattice_points(n, 2, side=7, step=0.5, distinct=False)),
       st.floats(0.01, 5.0))
def test_exponential_is_epsilon_d_private_for_any_metric(pts, eps):
    # a small lattice: coincident points (distance 0, rows must be equal) and ties occur
    dom = Domain.from_points(pts)
    for kind in ("euclidean", "manhattan"):
        mech = exponential(dom, Metric(kind), eps)
        assert claims_hold(mech)


# --- planar mechanisms ----------------------------------------------------------------------

def test_planar_laplace_matches_libqif_level_and_holds():
    # libqif's test (3 x 3 grid, step 1.1, ε = 0.9) expects smallest ε 0.8844 within 1e-3
    mech = planar_laplace((3, 3), 0.9, cell=1.1)
    achieved, audit = level(mech, mech.claims[0])
    assert audit.holds
    assert achieved == pytest.approx(0.8844, abs=1e-3)
    assert achieved < 0.9


@pytest.mark.parametrize("rows,cols,e", [(3, 3, 0.99), (1, 4, 0.3), (5, 1, 2.0), (10, 10, 0.5), (4, 7, 0.05)])
def test_planar_laplace_cell_masses_integrate_to_one(rows, cols, e):
    xs, ys = offset_intervals(rows), offset_intervals(cols)
    q = np.array([[fa * fb * laplace_rectangle_mass(e, x0, x1, y0, y1) for (y0, y1, fb) in ys]
                  for (x0, x1, fa) in xs])
    assert mirror_quadrant(q).sum() == pytest.approx(1.0, abs=1e-12)


def test_planar_laplace_matches_monte_carlo_sampling_with_remap():
    # independent check: sample the continuous planar Laplace (r ~ Gamma(2, 1/ε), θ uniform),
    # round to the nearest grid point and clamp to the grid (the remap), count
    rows, cols, cell, eps = 4, 5, 1.0, 0.8
    mech = planar_laplace((rows, cols), eps, cell)
    rng = np.random.default_rng(1)
    n = 400_000
    for x in (0, 7, 19):
        r0, c0 = divmod(x, cols)
        radius = rng.gamma(2.0, 1.0 / eps, n)
        theta = rng.uniform(0, 2 * np.pi, n)
        r = np.clip(np.rint(r0 + radius * np.cos(theta) / cell), 0, rows - 1).astype(int)
        c = np.clip(np.rint(c0 + radius * np.sin(theta) / cell), 0, cols - 1).astype(int)
        counts = np.bincount(r * cols + c, minlength=rows * cols)
        expected = n * mech.matrix[x]
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < 60  # 19 degrees of freedom: P(χ² > 60) ≈ 3e-6


def test_planar_laplace_on_a_square_grid_is_symmetric_under_transposition():
    mech = planar_laplace((4, 4), 0.7)
    perm = np.array([c * 4 + r for r in range(4) for c in range(4)])
    np.testing.assert_allclose(mech.matrix[np.ix_(perm, perm)], mech.matrix, rtol=1e-11)


def test_planar_geometric_audits_to_exactly_epsilon_and_interior_entries_are_closed_form():
    rows, cols, eps, cell = 3, 5, 0.9, 1.1
    mech = planar_geometric((rows, cols), eps, cell)
    achieved, audit = level(mech, mech.claims[0])
    assert audit.holds and achieved == pytest.approx(eps, abs=1e-12)
    # an interior output y only receives the single offset y − x: K[x,y] = e^{−ε d(x,y)} / Z with
    # Z = Σ over the infinite lattice; Z summed directly here
    a = np.arange(-400, 401)
    z = np.exp(-eps * cell * np.hypot(a[:, None], a[None, :])).sum()
    x, y = 0 * cols + 4, 1 * cols + 2  # (0,4) -> (1,2): y interior
    d = cell * math.hypot(1, 2)
    assert mech.matrix[x, y] == pytest.approx(math.exp(-eps * d) / z, rel=1e-12)


def test_planar_mechanisms_follow_the_domain_order_of_a_grid_problem():
    dom = Domain.from_points([[1, 0], [0, 0], [1, 1], [0, 1]])  # a 2 x 2 grid, shuffled
    mech = planar_geometric(dom, 1.0)
    ref = planar_geometric((2, 2), 1.0)  # lattice order (0,0), (0,1), (1,0), (1,1)
    order = [2, 3, 0, 1]  # dom index -> lattice index
    np.testing.assert_allclose(mech.matrix, ref.matrix[np.ix_(order, order)], rtol=1e-14)
    assert claims_hold(mech)


def test_planar_mechanisms_reject_non_grids_and_zero_epsilon():
    with pytest.raises(ProblemError, match="full"):
        planar_laplace(Domain.from_points([[0, 0], [0, 1], [1, 0]]), 1.0)
    with pytest.raises(ProblemError, match="ε > 0"):
        planar_geometric((3, 3), 0.0)
    with pytest.raises(ProblemError, match="spreads over"):
        planar_geometric((3, 3), 1e-4)


# --- unary encodings ------------------------------------------------------------------------

@pytest.mark.parametrize("make", [rappor, oue])
@pytest.mark.parametrize("k,eps", [(2, 0.5), (4, 1.0), (7, 2.0)])
def test_unary_encodings_analytic_audit_equals_matrix_audit_and_epsilon(make, k, eps):
    enc = make(k, eps)
    analytic = enc.audit()
    assert analytic.holds and analytic.achieved["epsilon"] == pytest.approx(eps, abs=1e-12)
    mech = enc.mechanism()
    assert mech.shape == (k, 2 ** k)
    np.testing.assert_allclose(mech.matrix.sum(axis=1), 1.0, rtol=1e-12)
    achieved, audit = level(mech, LDP(eps))
    assert audit.holds and achieved == pytest.approx(eps, abs=1e-12)


def test_unary_encoding_matrix_only_for_small_k_but_analytic_audit_for_any_k():
    enc = oue(1000, 1.0)
    assert enc.audit().achieved["epsilon"] == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ProblemError, match="2\\^1000"):
        enc.mechanism()


def test_unary_estimate_is_unbiased_and_projected():
    enc = rappor(6, 1.0)
    lam = np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    n = 10**7
    est = np.mean([enc.estimate(enc.simulate(lam, n, s), n) for s in range(5)], axis=0)
    assert est.sum() == pytest.approx(1.0) and np.all(est >= 0)
    # standard deviation of one estimate ≈ sqrt(q(1−q)/n)/(p − q) ≈ 1.5e-3; averaged over 5
    np.testing.assert_allclose(est, lam, atol=5e-3)


# --- Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019 ------------------------------------------------------------------------------

def flip_lp(pi, pj, eps):
    """Optimization (4) solved by cvxpy, as an independent reference."""
    a = cp.Variable()
    e = math.exp(eps)
    one_i, one_j = pi + a * (1 - 2 * pi), pj + a * (1 - 2 * pj)
    cons = [a >= 0, a <= 0.5, one_i <= e * one_j, one_j <= e * one_i,
            1 - one_i <= e * (1 - one_j), 1 - one_j <= e * (1 - one_i)]
    cp.Problem(cp.Minimize(a), cons).solve(solver=cp.HIGHS)
    return float(a.value)


def observation_10_bound(pi, pj, eps):
    e = math.exp(eps)
    return max(0.0, (pj - e * pi) / (2 * (pj - e * pi) - (1 - e)),
               (pi - e * pj + e - 1) / (2 * (pi - e * pj) + e - 1))


@pytest.mark.parametrize("pi,pj,eps", [(0.3, 0.6, 0.5), (0.1, 0.9, 1.0), (0.45, 0.55, 0.1), (0.2, 0.5, 0.3),
                                       (0.0, 1.0, 0.7), (0.4, 0.4, 0.2)])
def test_single_edge_flip_is_the_lp_optimum_and_within_observation_10(pi, pj, eps):
    alpha = one_bit_flip(pi, pj, eps)
    assert alpha == pytest.approx(flip_lp(pi, pj, eps), abs=1e-9)
    if pi <= pj:
        assert alpha <= observation_10_bound(pi, pj, eps) + 1e-12
    if (pi, pj) == (0.0, 1.0):  # randomized response
        assert alpha == pytest.approx(1 / (1 + math.exp(eps)), abs=1e-15)


@st.composite
def profile_graphs(draw):
    n = draw(st.integers(2, 7))
    ps = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    names = [f"P{i}" for i in range(n)]
    edges = [(names[i], names[draw(st.integers(0, i - 1))]) for i in range(1, n)]  # a tree
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3))
    edges += [(names[a], names[b]) for a, b in extra if a != b]
    return dict(zip(names, ps)), edges, draw(st.floats(0.05, 3.0))


@settings(max_examples=40, deadline=None)
@given(profile_graphs())
def test_one_bit_cluster_and_smooth_one_bit_are_profile_private_and_smooth_is_never_worse(case):
    profiles, edges, eps = case
    cluster = one_bit_cluster(profiles, edges, eps)
    smooth = smooth_one_bit(profiles, edges, eps)
    claim = ProfilePrivacy(eps, edges, {n: np.array([1 - p, p]) for n, p in profiles.items()})
    for mechs in (cluster, smooth):
        assert mechdesign.audit(mechs, claim).holds
        assert mechdesign.audit(mechs, mechs["P0"].claims[0]).holds
        for m in mechs.values():  # bit flips: symmetric 2 x 2
            assert m.matrix[0, 1] == pytest.approx(m.matrix[1, 0], abs=1e-15)
    worst_cluster = max(m.matrix[0, 1] for m in cluster.values())
    worst_smooth = max(m.matrix[0, 1] for m in smooth.values())
    assert worst_smooth <= worst_cluster + 1e-9
    assert worst_cluster <= 1 / (1 + math.exp(eps)) + 1e-12  # never worse than RR (Theorem 9)


def test_one_bit_cluster_uses_the_worst_edge_of_each_component():
    profiles = {"a": 0.3, "b": 0.6, "c": 0.5, "d": 0.52}
    mechs = one_bit_cluster(profiles, [("a", "b"), ("c", "d")], 0.2)
    assert mechs["a"].matrix[0, 1] == pytest.approx(one_bit_flip(0.3, 0.6, 0.2))
    assert mechs["c"].matrix[0, 1] == pytest.approx(one_bit_flip(0.5, 0.52, 0.2))


def test_smooth_one_bit_beats_one_bit_cluster_on_a_chain_with_one_costly_edge():
    # Bernoulli-Chain with p = 0, 0.2, ..., 1 (Geumlek and Chaudhuri 2019 §6): distant profiles flip less
    profiles = {f"p{i}": i / 5 for i in range(6)}
    edges = [(f"p{i}", f"p{i + 1}") for i in range(5)]
    cluster = one_bit_cluster(profiles, edges, 0.2)
    smooth = smooth_one_bit(profiles, edges, 0.2)
    assert max(m.matrix[0, 1] for m in smooth.values()) < max(m.matrix[0, 1] for m in cluster.values()) - 1e-3


def test_smooth_categorical_is_the_designers_categorical_chain_optimum():
    problem = mechdesign.load_problem(PROBLEMS / "categorical-chain.toml")
    eps = problem.privacy[0].epsilon
    mechs = smooth_categorical(problem.contexts, [("P1", "P2"), ("P2", "P3")], eps, labels=problem.inputs)
    assert mechdesign.audit(mechs, mechs["P1"].claims[0]).holds
    value = problem.objective.value({k: m.matrix for k, m in mechs.items()})
    assert value == pytest.approx(problem.solve().objective, abs=1e-9)
    assert value < krr(4, eps).matrix[0, 1]  # better than k-ary RR at the same ε


# --- trivial mechanisms ---------------------------------------------------------------------

def test_uniform_is_zero_ldp_and_identity_claims_nothing_and_leaks_everything():
    u = uniform(5, 3)
    assert u.shape == (5, 3) and claims_hold(u)
    assert level(u, LDP(0.0))[0] == 0.0
    ident = identity(4)
    assert ident.claims == ()
    assert level(ident, LDP(1.0))[0] == math.inf


@pytest.mark.parametrize("side,step,eps", [(3, 1.1, 0.9), (5, 1.0, 0.8)])
def test_planar_mechanisms_agree_with_qif_on_square_grids(side, step, eps):
    qif = pytest.importorskip("qif")  # optional peer; mechdesign never imports it
    geo = qif.mechanism.geo_ind
    # qif integrates by Monte Carlo (~1e-5) and truncates the geometric sums at 1 − 1e-6
    np.testing.assert_allclose(planar_laplace((side, side), eps, step).matrix,
                               np.asarray(geo.planar_laplace_grid(side, side, step, eps)), atol=1e-4)
    np.testing.assert_allclose(planar_geometric((side, side), eps, step).matrix,
                               np.asarray(geo.planar_geometric_grid(side, side, step, eps)), atol=1e-6)


def test_one_bit_cluster_is_private_for_a_profile_of_subnormal_mass():
    """Profiles 0 and 5e-324 (a falsifying example once found): the critical flip probability
    5e-324/(e^ε − 1) rounds to 0 in floating point, which left the identity (an output one
    profile gives and the other never does); rounded up it is the smallest positive double."""
    profiles, edges = {"P0": 0.0, "P1": 5e-324}, [("P1", "P0")]
    claim = ProfilePrivacy(2.0, edges, {n: np.array([1 - p, p]) for n, p in profiles.items()})
    mechs = one_bit_cluster(profiles, edges, 2.0)
    assert mechdesign.audit(mechs, claim).holds and mechs["P0"].matrix[0, 1] > 0
