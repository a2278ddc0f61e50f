"""Profile-based privacy (Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019): Observation 10, Theorem 9 and the shipped experiments."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign
from mechdesign import Domain, Problem
from mechdesign.core.objectives import MaxOffDiagonal, off_diagonal_mask
from mechdesign.mechanisms.randomized_response import krr, randomized_response
from mechdesign.privacy import ProfilePrivacy
from tests.conftest import PROBLEMS
from tests.strategies import profile_lists


def observation_10_bound(pi, pj, eps):
    """Geumlek and Chaudhuri 2019, eq. (7): an upper bound on the optimal single flip probability of (4)."""
    e = np.exp(eps)
    return max(0.0, (pj - e * pi) / (2 * (pj - e * pi) - (1 - e)),
               (pi - e * pj + e - 1) / (2 * (pi - e * pj) + e - 1))


def couplet(pi, pj, eps):
    dom = Domain.from_labels(["0", "1"])
    profiles = {"a": np.array([1 - pi, pi]), "b": np.array([1 - pj, pj])}
    return Problem(inputs=dom, contexts=profiles,
                   privacy=[ProfilePrivacy(eps, [("a", "b")], profiles)],
                   objective=MaxOffDiagonal(off_diagonal_mask(dom, dom), ["a", "b"]))


@pytest.mark.parametrize("pi,pj,eps", [(0.3, 0.6, 0.5), (0.1, 0.9, 1.0), (0.45, 0.55, 0.1),
                                       (0.2, 0.5, 0.3), (0.05, 0.95, 2.0)])
def test_per_profile_flip_probability_within_observation_10_and_below_rr(pi, pj, eps):
    result = couplet(pi, pj, eps).solve()
    assert result.status == "optimal"
    # (5) has one α per profile, so its optimum is at most that of (4), bounded by (7)
    assert result.objective <= observation_10_bound(pi, pj, eps) + 1e-9
    assert result.objective <= 1 / (1 + np.exp(eps)) + 1e-12  # never worse than RR (Theorem 9)


def test_identical_profiles_need_no_noise():
    result = couplet(0.4, 0.4, 0.01).solve()
    assert result.objective == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(profile_lists(counts=(2, 4), sizes=(2, 5)), st.floats(0.05, 3.0))
def test_theorem_9_ldp_mechanisms_are_profile_private(profile_list, eps):
    k, n_profiles = profile_list[0].size, len(profile_list)
    profiles = {f"P{i}": p for i, p in enumerate(profile_list)}
    edges = [(f"P{i}", f"P{i + 1}") for i in range(n_profiles - 1)]
    mech = krr(k, eps).matrix
    audit = mechdesign.audit({name: mech for name in profiles}, ProfilePrivacy(eps, edges, profiles))
    assert audit.holds


def test_categorical_chain_file_beats_krr_on_every_cost():
    problem = mechdesign.load_problem(PROBLEMS / "categorical-chain.toml")
    result = problem.solve()
    assert result.status == "optimal"
    eps = problem.privacy[0].epsilon
    offdiag_krr = krr(4, eps).matrix[0, 1]
    assert result.objective <= offdiag_krr + 1e-12
    assert all(a.holds for a in result.certificate)


def test_bernoulli_chain_rr_is_feasible_so_design_is_no_worse():
    problem = mechdesign.load_problem(PROBLEMS / "bernoulli-chain-6.toml")
    result = problem.solve()
    rr = randomized_response(problem.privacy[0].epsilon).matrix
    assert mechdesign.audit({k: rr for k in problem.keys}, problem.privacy[0]).holds
    assert result.objective <= rr[0, 1] + 1e-12
