"""The Charnes–Cooper scaled max-entry LP against the plain LP (cvxpy, one row per capped entry)."""

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mechdesign import Domain, Problem
from mechdesign.core.objectives import MaxOffDiagonal, off_diagonal_mask
from mechdesign.privacy import ProfilePrivacy
from mechdesign.privacy.distp import DistP, Side, XDistP
from mechdesign.solvers.charnes_cooper import max_entry_by_scaling
from tests.strategies import profile_lists

SCALED = "Charnes–Cooper"


def random_profiles(n_profiles, k, seed):
    rng = np.random.default_rng(seed)
    return [rng.dirichlet(np.ones(k)) for _ in range(n_profiles)]


def profile_chain(profiles, eps, shared=False):
    """Profiles P0 — P1 — ... on one chain, each a distribution on the same k values."""
    vecs = {f"P{i}": p for i, p in enumerate(profiles)}
    dom = Domain.from_size(len(profiles[0]))
    keys = ["default"] if shared else list(vecs)
    return Problem(inputs=dom, contexts=None if shared else vecs,
                   privacy=[ProfilePrivacy(eps, list(pairwise(vecs)), vecs, shared=shared)],
                   objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), keys))


def both(problem):
    scaled = problem.solve()
    plain = problem.solve(solver="highs")
    assert scaled.status == plain.status == "optimal" and scaled.holds and plain.holds
    return scaled, plain


@settings(max_examples=20, deadline=None)
@given(profile_lists(counts=(2, 6), sizes=(2, 6)), st.floats(0.05, 3.0), st.booleans())
def test_profile_chains_equal_the_plain_lp(profiles, eps, shared):
    scaled, plain = both(profile_chain(profiles, eps, shared))
    assert SCALED in scaled.solver["name"]
    assert scaled.objective == pytest.approx(plain.objective, rel=1e-7, abs=1e-10)
    # the reported dual bound is the scaled LP's 1/s*, and the certified value meets it
    assert scaled.solver["gap"] <= 1e-7


def test_the_raw_scaled_solution_is_feasible_before_any_certificate_repair():
    """K = W/s straight from the scaled LP (no clean-up, no repair): rows sum to 1, entries are
    non-negative, no capped entry exceeds t* = 1/s, and every chain edge's output distributions
    are within e^ε of each other, each computed here by hand."""
    eps = 0.7
    problem = profile_chain(random_profiles(8, 5, seed=3), eps)
    raw, outcome = max_entry_by_scaling(problem)
    t = outcome.bound
    mask = ~np.eye(5, dtype=bool)
    for K in raw.values():
        np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-9)
        assert K.min() >= -1e-12 and K[mask].max() <= t * (1 + 1e-9)
    vecs = problem.contexts
    for a, b in pairwise(vecs):
        pa, pb = vecs[a] @ raw[a], vecs[b] @ raw[b]
        assert np.all(pa <= np.exp(eps) * pb * (1 + 1e-8)) and np.all(pb <= np.exp(eps) * pa * (1 + 1e-8))


def test_xdistp_with_two_notions_and_a_rectangular_mask():
    """Two sources through one shared mechanism, XDistP (ε·W1) plus a DistP pair with a third
    source, and three outputs for four inputs: capped entries are those with different labels."""
    inputs = Domain.from_labels(["a", "b", "c", "d"])
    outputs = Domain.from_labels(["a", "b", "z"])
    rng = np.random.default_rng(11)
    p, q, r = (Side(name, rng.dirichlet(np.ones(4))) for name in "pqr")
    cost = np.abs(np.arange(4)[:, None] - np.arange(4)[None, :]).astype(float)
    problem = Problem(inputs=inputs, outputs=outputs,
                      privacy=[XDistP(0.8, [(p, q)], "w1", cost), DistP(0.3, [(q, r)])],
                      objective=MaxOffDiagonal(off_diagonal_mask(inputs, outputs), ["default"]))
    scaled, plain = both(problem)
    assert SCALED in scaled.solver["name"]
    assert scaled.objective == pytest.approx(plain.objective, rel=1e-7)


def test_identical_profiles_give_the_exact_zero_design():
    vec = np.array([0.2, 0.3, 0.5])
    dom = Domain.from_size(3)
    problem = Problem(inputs=dom, contexts={"a": vec, "b": vec.copy()},
                      privacy=[ProfilePrivacy(0.1, [("a", "b")], {"a": vec, "b": vec.copy()})],
                      objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), ["a", "b"]))
    result = problem.solve()
    assert SCALED in result.solver["name"] and result.status == "optimal"
    # the zero design has the trivial proven bound 0 (masked entries are >= 0)
    assert result.objective == 0.0 and result.solver["bound"] == 0.0 and result.solver["bound_proven"] is True


def test_approximate_distp_takes_the_general_route():
    dom = Domain.from_size(3)
    rng = np.random.default_rng(0)
    a, b = Side("a", rng.dirichlet(np.ones(3))), Side("b", rng.dirichlet(np.ones(3)))
    problem = Problem(inputs=dom, privacy=[DistP(0.2, [(a, b)], delta=0.01)],
                      objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), ["default"]))
    result = problem.solve()
    assert result.status == "optimal" and SCALED not in result.solver["name"]


def test_forty_profiles_stay_below_the_closed_form_ceiling():
    """Theorem 9: k-ary RR at ε is profile private, so the optimum is at most 1/(k − 1 + e^ε)."""
    result = profile_chain(random_profiles(40, 12, seed=0), 1.0).solve()
    assert result.status == "optimal" and result.holds
    assert 0 < result.objective <= 1 / (11 + np.e) + 1e-12


def test_the_scaled_lp_gets_the_time_left_and_a_stopped_lp_returns_the_certified_data_independent_design(
        monkeypatch):
    import highspy

    from mechdesign.solvers import charnes_cooper

    problem = profile_chain(random_profiles(6, 5, seed=4), 0.3)
    optimum = problem.solve().objective
    given = []

    def stopped(h):  # HiGHS as if it had used all the time it was given
        given.append(h.getOptionValue("time_limit")[1])
        return highspy.HighsModelStatus.kTimeLimit

    monkeypatch.setattr(charnes_cooper, "resumable_run", stopped)
    result = problem.solve(time_limit=5.0)
    assert given and 0.0 < float(given[0]) <= 5.0  # the limit reached HiGHS
    assert result.status == "time-limit" and result.holds
    assert result.solver["fallback"] == "data-independent design"
    assert result.objective >= optimum - 1e-12
