"""Wu, Xia and He’s (2017) privacy channels (mechdesign.mechanisms.channels): closed forms and calibrations."""

import itertools

import numpy as np
import pytest
from scipy.optimize import brentq

from mechdesign import ProblemError
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.leakage import min_entropy_capacity, mutual_information
from mechdesign.mechanisms.channels import (
    binary_entropy,
    binary_symmetric,
    calibrate_binary_symmetric,
    calibrate_exponential,
    calibrate_gaussian,
    calibrate_krr,
    circulant,
    data_independent,
    data_independent_bound,
    entropy_bits,
    exponential_channel,
    exponential_ranks,
    exponential_row_entropy,
    gaussian_capacity_bound,
    gaussian_channel,
    is_data_independent,
    is_weakly_symmetric,
    krr_at_min_entropy,
    krr_at_mutual_information,
    weakly_symmetric_capacity,
)
from mechdesign.mechanisms.randomized_response import krr


def certified_at(cal, bits, tol=1e-6):
    """The calibrated channel is certified private and leaks within tol of the target."""
    assert cal.capacity.upper <= bits + 1e-12
    assert cal.capacity.lower >= bits - tol


@pytest.mark.parametrize("p", [0.05, 0.2, 0.45])
def test_bsc_mechanism_capacity_is_one_minus_h(p):
    r = shannon_capacity(binary_symmetric(p))
    assert r.lower - 1e-12 <= 1 - binary_entropy(p) <= r.upper + 1e-12


@pytest.mark.parametrize("bits", [0.01, 0.3, 0.9])
def test_calibrated_bsc_hits_the_target_and_inverts_one_minus_h(bits):
    cal = calibrate_binary_symmetric(bits)
    certified_at(cal, bits)
    p_exact = brentq(lambda p: 1 - binary_entropy(p) - bits, 1e-12, 0.5)  # Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017 eq. (57)
    assert cal.parameter == pytest.approx(p_exact, abs=1e-5)


@pytest.mark.parametrize("k,bits", [(3, 0.2), (8, 1.0), (20, 2.5)])
def test_calibrated_krr_hits_the_target(k, bits):
    cal = calibrate_krr(k, bits)
    certified_at(cal, bits)
    row = krr(k, cal.parameter).matrix[0]
    assert np.log2(k) - entropy_bits(row) == pytest.approx(bits, abs=1e-6)


def test_weakly_symmetric_channels_match_the_closed_form():
    # Cover & Thomas's example: rows permutations of each other, equal column sums
    K = np.array([[1 / 3, 1 / 6, 1 / 2], [1 / 3, 1 / 2, 1 / 6]])
    assert is_weakly_symmetric(K)
    r = shannon_capacity(K)
    closed = np.log2(3) - entropy_bits([1 / 3, 1 / 6, 1 / 2])
    assert weakly_symmetric_capacity(K) == pytest.approx(closed)
    assert r.lower - 1e-12 <= closed <= r.upper + 1e-12
    rng = np.random.default_rng(0)
    for n in (4, 9, 30):
        C = circulant(rng.dirichlet(np.ones(n))).matrix
        assert is_weakly_symmetric(C)
        r = shannon_capacity(C)
        assert r.lower - 1e-12 <= weakly_symmetric_capacity(C) <= r.upper + 1e-12


def test_data_independent_channels_stay_below_the_bound():
    rng = np.random.default_rng(1)
    row = rng.dirichlet(np.ones(5))
    perms = [rng.permutation(5) for _ in range(3)]
    K = data_independent(row, perms).matrix
    assert is_data_independent(K)
    assert shannon_capacity(K).upper <= data_independent_bound(K) + 1e-12
    if not is_weakly_symmetric(K):
        with pytest.raises(ProblemError, match="weakly symmetric"):
            weakly_symmetric_capacity(K)


@pytest.mark.parametrize("n,alpha", [(2, 0.5), (6, 1.0), (11, 0.3), (40, 2.0)])
def test_exponential_channel_is_data_independent_with_closed_form_row_entropy(n, alpha):
    mech = exponential_channel(n, alpha)
    K = mech.matrix
    assert np.allclose(K.sum(axis=1), 1.0)
    assert is_data_independent(K)
    assert exponential_row_entropy(n, alpha) == pytest.approx(entropy_bits(K[0]), abs=1e-12)
    assert shannon_capacity(K).upper <= np.log2(n) - exponential_row_entropy(n, alpha) + 1e-9
    # the output ranked first for r is r itself, with the largest probability
    assert np.all(K.argmax(axis=1) == np.arange(n))


def test_exponential_ranks_follow_the_distortion_with_ties_broken_by_index():
    d = np.array([[0, 2, 1], [1, 0, 1], [5, 5, 0]], dtype=float)
    assert exponential_ranks(d).tolist() == [[0, 2, 1], [1, 0, 2], [1, 2, 0]]
    K = exponential_channel(3, 1.0, distortion=d).matrix
    assert is_data_independent(K)


@pytest.mark.parametrize("n,bits", [(5, 0.4), (12, 1.5)])
def test_calibrated_exponential_channel_hits_the_target(n, bits):
    cal = calibrate_exponential(n, bits)
    certified_at(cal, bits)


def test_gaussian_channel_stays_below_the_continuous_capacity_bound():
    values = [0.0, 1.0, 2.5, 4.0]
    for sigma in (0.3, 1.0, 3.0):
        mech = gaussian_channel(values, sigma, outputs=301)
        assert np.allclose(mech.matrix.sum(axis=1), 1.0)
        assert shannon_capacity(mech).upper <= gaussian_capacity_bound(4.0, sigma) + 1e-9
    # more noise, less capacity
    caps = [shannon_capacity(gaussian_channel(values, s)).value for s in (0.5, 1.0, 2.0, 4.0)]
    assert all(a > b for a, b in itertools.pairwise(caps))


@pytest.mark.parametrize("bits", [0.2, 1.0])
def test_calibrated_gaussian_channel_hits_the_target(bits):
    cal = calibrate_gaussian(np.arange(5.0), bits, outputs=151)
    certified_at(cal, bits)
    assert gaussian_capacity_bound(4.0, cal.parameter) >= bits - 1e-9


def test_krr_at_min_entropy_and_mutual_information():
    k, c = 6, 1.2
    assert min_entropy_capacity(krr_at_min_entropy(k, c)) == pytest.approx(c, abs=1e-12)
    prior = np.array([0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    mech = krr_at_mutual_information(k, prior, 0.5)
    assert mutual_information(prior, mech.matrix) == pytest.approx(0.5, abs=1e-8)
    assert mutual_information(prior, mech.matrix) <= 0.5 + 1e-12


def test_bad_channel_parameters_are_rejected():
    with pytest.raises(ProblemError, match="flip probability"):
        binary_symmetric(1.5)
    with pytest.raises(ProblemError, match="sigma"):
        gaussian_channel([0, 1], 0.0)
    with pytest.raises(ProblemError, match="exceeds"):
        calibrate_krr(4, 3.0)
    with pytest.raises(ProblemError, match="non-negative"):
        calibrate_binary_symmetric(-0.1)
    with pytest.raises(ProblemError, match="permutation"):
        data_independent([0.5, 0.5], [[0, 0]])
