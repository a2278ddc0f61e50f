"""Repeated reports (mechdesign.accounting.composition): randomized response and k-ary RR
composed T times against their closed forms, pessimism of the discretisation, ε(T) increasing and
at most T·ε0, grouping of pairs, and Google's dp_accounting where it is installed."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from mechdesign.accounting import compose, compose_pairs, pair_losses
from mechdesign.accounting.composition import convolve, self_compose
from mechdesign.accounting.privacy_loss import LossDistribution, merge_dominating
from mechdesign.core.errors import ProblemError


def krr(k: int, epsilon: float) -> np.ndarray:
    e = math.exp(epsilon)
    matrix = np.full((k, k), 1.0 / (k - 1 + e))
    np.fill_diagonal(matrix, e / (k - 1 + e))
    return matrix


# Closed forms. For k-ary RR at ε0 and an ordered pair (x, x'), one report's privacy loss
# ln K[x, y]/K[x', y] is +ε0 when y = x (probability a = e^ε0/(e^ε0 + k − 1)), −ε0 when y = x'
# (probability b = 1/(e^ε0 + k − 1)) and 0 otherwise. After T independent reports with i outputs
# equal to x and j equal to x' (a trinomial (i, j, T − i − j) with probabilities (a, b, 1 − a − b))
# the loss is (i − j)ε0, and the hockey-stick divergence is
#     δ_T(ε) = E[(1 − e^{ε − L})_+] = Σ_{i,j: (i−j)ε0 > ε} Pr[i, j] (1 − e^{ε − (i − j)ε0}).
# For k = 2 there is no third outcome: j = T − i, L = (2i − T)ε0 with i ~ Bin(T, e^ε0/(e^ε0 + 1)).
# Every pair of k-ary RR has this same law, so it is the worst pair's.

def rr_delta(eps0: float, times: int, eps: float) -> float:
    i = np.arange(times + 1)
    loss = (2 * i - times) * eps0
    weight = stats.binom.pmf(i, times, math.exp(eps0) / (1 + math.exp(eps0)))
    return float(np.sum(weight * np.maximum(0.0, 1.0 - np.exp(eps - loss))))


def krr_delta(k: int, eps0: float, times: int, eps: float) -> float:
    e = math.exp(eps0)
    a, b = e / (e + k - 1), 1 / (e + k - 1)
    total = 0.0
    for i in range(times + 1):
        for j in range(times + 1 - i):
            loss = (i - j) * eps0
            if loss > eps:
                total += stats.multinomial.pmf([i, j, times - i - j], times, [a, b, 1 - a - b]) * (1 - math.exp(eps - loss))
    return total


def exact_epsilon(delta_of, delta: float, upper: float) -> float:
    """The smallest ε with delta_of(ε) <= δ, by bisection on the closed form."""
    lo, hi = 0.0, upper
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if delta_of(mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("times", [1, 3, 10, 40])
def test_randomized_response_composed_t_times_against_the_binomial_closed_form(times):
    eps0, step = 0.7, 1e-4  # ε0 off the grid: the rounding up is exercised
    composed = compose_pairs(krr(2, eps0), times, step=step)
    for eps in (0.0, 0.3, 1.1, 2.5):
        exact = rr_delta(eps0, times, eps)
        assert exact - 1e-12 <= composed.delta(eps) <= rr_delta(eps0, times, eps - times * step) + 1e-12
    for delta in (1e-2, 1e-6):
        exact = exact_epsilon(lambda e: rr_delta(eps0, times, e), delta, times * eps0)
        assert exact - 1e-9 <= composed.epsilon(delta) <= exact + times * step + 1e-9


@pytest.mark.parametrize("k,times", [(3, 5), (5, 20)])
def test_k_ary_randomized_response_composed_t_times_against_the_trinomial_closed_form(k, times):
    eps0, step = 1.3, 1e-4
    composed = compose_pairs(krr(k, eps0), times, step=step)
    assert len(composed.laws) == 1  # every pair of k-ary RR has the same loss law
    for eps in (0.0, 1.0, 4.0):
        exact = krr_delta(k, eps0, times, eps)
        assert exact - 1e-12 <= composed.delta(eps) <= krr_delta(k, eps0, times, eps - times * step) + 1e-12
    exact = exact_epsilon(lambda e: krr_delta(k, eps0, times, e), 1e-5, times * eps0)
    assert exact - 1e-9 <= composed.epsilon(1e-5) <= exact + times * step + 1e-9


def test_the_discretisation_is_pessimistic_on_every_grid():
    """Reported ε >= the exact ε whatever the grid, and a coarser grid (every loss rounded up
    further) never reports less than the exact value."""
    eps0, times, delta = 0.9, 25, 1e-6
    exact = exact_epsilon(lambda e: rr_delta(eps0, times, e), delta, times * eps0)
    for step in (1e-4, 1e-3, 1e-2, 0.05):
        reported = compose(krr(2, eps0), times, delta, step=step)
        assert exact - 1e-9 <= reported <= exact + times * step + 1e-9


def test_epsilon_grows_with_the_number_of_reports_and_stays_below_basic_composition():
    for matrix, eps0 in ((krr(2, 1.0), 1.0), (krr(10, 2.0), 2.0)):
        values = [compose(matrix, t, 1e-6) for t in (1, 2, 5, 10, 50, 200)]
        assert all(b > a for a, b in itertools.pairwise(values))
        assert all(v <= t * eps0 + 1e-12 for v, t in zip(values, (1, 2, 5, 10, 50, 200)))
        assert values[-1] < 200 * eps0  # far below basic composition for many reports


def test_the_epsilon_delta_curve_decreases_in_delta():
    curve = compose_pairs(krr(4, 1.0), 30).curve([1e-2, 1e-4, 1e-6, 1e-9])
    assert all(b > a for a, b in itertools.pairwise(curve))


def test_outputs_that_rule_an_input_out_put_mass_at_infinity():
    revealing = np.array([[0.5, 0.5], [0.0, 1.0]])
    composed = compose_pairs(revealing, 3)
    assert composed.delta(50.0) == pytest.approx(1 - 0.5 ** 3)  # three chances to send output 0
    assert composed.epsilon(0.1) == math.inf
    assert composed.epsilon(0.9) < math.inf


def test_merging_pairs_bounds_every_member():
    rng = np.random.default_rng(3)
    k = rng.uniform(0.1, 1.0, (5, 4))
    k /= k.sum(axis=1, keepdims=True)
    laws = pair_losses(k, 1e-3, max_groups=1000)
    merged = merge_dominating(laws, 2)
    assert len(merged) == 2 and sum(n for _, n in merged) == 20
    eps = np.linspace(0.0, 2.0, 21)
    for times in (1, 7):
        worst = np.max([self_compose(law, times).delta(eps) for law, _ in laws], axis=0)
        bound = np.max([self_compose(law, times).delta(eps) for law, _ in merged], axis=0)
        assert np.all(bound >= worst - 1e-12)


def test_fingerprint_grouping_finds_the_laws_exact_grouping_finds(monkeypatch):
    """Large matrices group pairs by fingerprints of their discretised laws instead of sorting
    their atoms; both give the same laws (with zeros: infinite losses, outputs never sent)."""
    from mechdesign.accounting import privacy_loss

    with_zeros = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.2, 0.3, 0.5], [0.5, 0.0, 0.5]])
    eps = np.linspace(0.0, 3.0, 13)
    for matrix in (krr(6, 1.0), with_zeros):
        exact = pair_losses(matrix, 1e-3, 1000)
        monkeypatch.setattr(privacy_loss, "EXACT_GROUPING_ENTRIES", 0)
        found = pair_losses(matrix, 1e-3, 1000)
        monkeypatch.undo()
        assert sum(n for _, n in found) == sum(n for _, n in exact) == matrix.shape[0] * (matrix.shape[0] - 1)
        curves = [law.delta(eps) for law, _ in exact]
        for law, _ in found:
            assert any(np.allclose(law.delta(eps), c, atol=1e-14) for c in curves)
        assert len(found) == len(exact)


def test_one_convolution_is_the_law_of_the_sum():
    a = LossDistribution(0.5, -1, np.array([0.25, 0.25, 0.5]))
    b = LossDistribution(0.5, 0, np.array([0.5, 0.5]), infinity=0.0)
    c = convolve(a, b, tail=0.0)
    assert c.offset == -1 and np.allclose(c.pmf, [0.125, 0.25, 0.375, 0.25])


def test_bad_input_is_a_problem_error():
    with pytest.raises(ProblemError):
        compose(np.array([[0.5, 0.4], [0.5, 0.5]]), 3, 1e-6)
    with pytest.raises(ProblemError):
        compose(krr(2, 1.0), 0, 1e-6)


def test_agrees_with_google_dp_accounting_for_randomized_response():
    """Google's dp_accounting (optional peer): its pessimistic privacy loss distribution of
    randomized response over k buckets with noise p (true value with probability 1 − p, else
    uniform) is k-ary RR at ε0 = ln(1 + k(1 − p)/p); composed T times, both upper bounds agree."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for k, eps0, times in ((2, 1.0, 50), (10, 0.5, 200)):
        noise = k / (math.exp(eps0) + k - 1)
        theirs = pld.from_randomized_response(noise, k, value_discretization_interval=1e-4).self_compose(times)
        composed = compose_pairs(krr(k, eps0), times)
        step = max(law.step for law, _ in composed.laws)  # both are within T·step above the exact ε
        assert composed.epsilon(1e-6) == pytest.approx(theirs.get_epsilon_for_delta(1e-6), abs=times * step)
