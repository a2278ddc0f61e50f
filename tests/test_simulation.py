"""Simulated collections (multinomial method) and repeated trials."""

import numpy as np
import pytest
from scipy import stats

from mechdesign import ProblemError
from mechdesign.estimation.simulation import run_trials, simulate
from mechdesign.mechanisms.metric_mechanisms import geometric
from mechdesign.mechanisms.randomized_response import krr


def test_simulated_counts_follow_multinomial_of_lifted_distribution_chi_square():
    # n users through K: the counts are Multinomial(n, λK). One χ² goodness-of-fit test with a
    # fixed seed, then the p-values of 300 independent collections must look uniform (KS test),
    # which also checks the spread, not only the means.
    K = geometric(6, 0.8).matrix
    lam = np.array([0.05, 0.1, 0.4, 0.2, 0.15, 0.1])
    q = lam @ K
    n = 5000
    counts = simulate(K, lam, n, rng=12345)
    assert counts.sum() == n
    assert stats.chisquare(counts, n * q).pvalue > 1e-3
    rng = np.random.default_rng(7)
    pvalues = [stats.chisquare(simulate(K, lam, n, rng), n * q).pvalue for _ in range(300)]
    assert stats.kstest(pvalues, "uniform").pvalue > 1e-3


def test_chi_square_rejects_counts_that_skip_the_channel():
    # the same χ² test rejects counts drawn from λ itself instead of λK (the test can fail)
    K = krr(5, 0.5).matrix
    lam = np.array([0.6, 0.1, 0.1, 0.1, 0.1])
    wrong = np.random.default_rng(0).multinomial(20000, lam)
    assert stats.chisquare(wrong, 20000 * (lam @ K)).pvalue < 1e-6
    right = simulate(K, lam, 20000, rng=0)
    assert stats.chisquare(right, 20000 * (lam @ K)).pvalue > 1e-3


def test_a_billion_users_over_a_thousand_values():
    K = krr(1000, 1.0).matrix
    lam = np.random.default_rng(0).dirichlet(np.ones(1000))
    n = 10**9
    counts = simulate(K, lam, n, rng=1)
    assert counts.dtype == np.int64 and counts.sum() == n
    q = lam @ K
    z = (counts - n * q) / np.sqrt(n * q * (1 - q))
    assert np.abs(z).max() < 6


def test_simulation_is_reproducible_from_its_seed_and_handles_no_users():
    K = krr(4, 1.0).matrix
    lam = np.full(4, 0.25)
    np.testing.assert_array_equal(simulate(K, lam, 1000, 3), simulate(K, lam, 1000, 3))
    assert not np.array_equal(simulate(K, lam, 1000, 3), simulate(K, lam, 1000, 4))
    np.testing.assert_array_equal(simulate(K, lam, 0, 3), np.zeros(4, dtype=np.int64))


def test_trials_error_matches_the_multinomial_variance_for_the_identity_channel():
    # through the identity the Inv estimate is the empirical frequency: E||θ̂ − λ||² = (1 − Σλ²)/n
    lam = np.array([0.5, 0.3, 0.15, 0.05])
    n, T = 400, 2000
    summary = run_trials(np.eye(4), lam, n, trials=T, seed=11, estimators=["inv"], measures=["l2"])
    sq = summary.errors["inv"]["l2"] ** 2
    expected = (1 - np.sum(lam ** 2)) / n
    assert sq.mean() == pytest.approx(expected, rel=5 * sq.std() / np.sqrt(T) / expected)
    assert summary.std("inv", "l2") == pytest.approx(np.std(summary.errors["inv"]["l2"], ddof=1))


def test_trials_are_reproducible_and_report_both_estimators():
    K = geometric(8, 0.5).matrix
    lam = np.random.default_rng(1).dirichlet(np.ones(8))
    a = run_trials(K, lam, 10_000, trials=4, seed=5, measures=["tv", "l1"])
    b = run_trials(K, lam, 10_000, trials=4, seed=5, measures=["tv", "l1"])
    for est in ("inv", "ibu"):
        np.testing.assert_array_equal(a.errors[est]["tv"], b.errors[est]["tv"])
        np.testing.assert_allclose(a.errors[est]["l1"], 2 * a.errors[est]["tv"])
    assert len(a.ibu_iterations) == 4 and a.ibu_not_converged == 0
    d = a.to_dict()
    assert set(d["estimators"]) == {"inv", "ibu"} and d["trials"] == 4 and d["seed"] == 5


def test_more_users_give_smaller_errors():
    K = krr(10, 1.0).matrix
    lam = np.random.default_rng(2).dirichlet(np.ones(10))
    small = run_trials(K, lam, 1_000, trials=20, seed=0, measures=["tv"])
    large = run_trials(K, lam, 1_000_000, trials=20, seed=0, measures=["tv"])
    for est in ("inv", "ibu"):
        assert large.mean(est, "tv") < small.mean(est, "tv") / 10  # error ~ 1/sqrt(n)


@pytest.mark.parametrize("n", [-1, 2.5, True, 2**63])
def test_simulation_rejects_bad_user_counts(n):
    with pytest.raises(ProblemError, match="number of users"):
        simulate(np.eye(2), [0.5, 0.5], n)


def test_simulation_rejects_bad_channels_and_distributions():
    with pytest.raises(ProblemError, match="row-stochastic"):
        simulate([[0.5, 0.4], [0.5, 0.5]], [0.5, 0.5], 10)
    with pytest.raises(ProblemError, match="2 entries"):
        simulate(np.eye(2), [0.2, 0.3, 0.5], 10)
    with pytest.raises(ProblemError, match="trials"):
        run_trials(np.eye(2), [0.5, 0.5], 10, trials=0)


def test_trial_errors_equal_to_round_off_have_no_spread_and_distinct_ones_their_sample_std():
    import numpy as np

    from mechdesign.estimation.simulation import TrialSummary

    a = 0.13639534137386544
    tied = TrialSummary(100, 2, 0, {"inv": {"emd": np.array([a, a + 11 * np.spacing(a)])}})
    assert tied.std("inv", "emd") == 0.0
    apart = TrialSummary(100, 3, 0, {"inv": {"emd": np.array([0.1, 0.2, 0.4])}})
    assert apart.std("inv", "emd") == pytest.approx(np.sqrt(((np.array([0.1, 0.2, 0.4]) - 0.7 / 3) ** 2).sum() / 2), rel=1e-12)
