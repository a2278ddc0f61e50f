"""The d-privacy repair: rows brought back to 1 exactly without breaking a ratio, in one envelope
for a design whose columns are private and whose rows miss 1 by solver round-off, when the
certification has no time for more."""

import time

import numpy as np
import pytest

from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.privacy import metric as metric_module
from mechdesign.privacy.metric import MetricPrivacy
from mechdesign.privacy.repair_clock import repairing_until
from tests.test_metric_soundness import all_pairs_metric_level


def _off_by_round_off(notion: MetricPrivacy, seed: int) -> np.ndarray:
    """A design whose columns are private but whose rows sum to 1 + O(1e-7), as a
    column-generation master leaves them, divided by its row sums. It is a private design with
    tight ratios (a random matrix repaired) plus 1e-7 times the private column e^{−ε d(·, x')}
    on its first output, x' the smaller side of its tightest pair (x, x'): row x' then gains more
    than row x, and the division breaks that pair's ratio."""
    rng = np.random.default_rng(seed)
    n = len(notion.domain)
    private = notion.repair({"default": rng.dirichlet(np.ones(n), size=n)})["default"]
    d = notion.distances()
    log = np.log(private)
    with np.errstate(divide="ignore", invalid="ignore"):
        levels = (log[:, None, :] - log[None, :, :]).max(axis=2) / d
    np.fill_diagonal(levels, -np.inf)
    _, smaller = np.unravel_index(np.argmax(levels), levels.shape)
    design = private.copy()
    design[:, 0] += 1e-7 * np.exp(-notion.epsilon * d[:, smaller])
    return design / design.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 8.0])
def test_round_off_is_repaired_with_one_envelope_when_time_is_short(monkeypatch, epsilon):
    points = np.random.default_rng(3).uniform(0, 10, size=(40, 2))
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    notion = MetricPrivacy(epsilon, Metric("euclidean"), Domain.from_points(points))
    k = _off_by_round_off(notion, seed=4)
    assert all_pairs_metric_level(k, d) > epsilon + 5e-10  # the division broke it
    calls = []
    original = MetricPrivacy.envelope
    monkeypatch.setattr(MetricPrivacy, "envelope", lambda self, m: calls.append(1) or original(self, m))
    with repairing_until(time.perf_counter()):  # no time for a second round
        fixed = notion.repair({"default": k})["default"]
    assert len(calls) == 1  # renormalising the envelope's rows needed several rounds
    np.testing.assert_allclose(fixed.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert all_pairs_metric_level(fixed, d) <= epsilon + 1e-12  # exact, not within a tolerance
    # each row moved by about the round-off, not towards a constant design
    assert np.abs(fixed - k).max() < 1e-6
    # with time, the rounds go on until a matrix within the audit's tolerance
    calls.clear()
    fixed = notion.repair({"default": k})["default"]
    np.testing.assert_allclose(fixed.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert all_pairs_metric_level(fixed, d) <= epsilon + 1e-9 and np.abs(fixed - k).max() < 1e-6


def test_the_balancing_scale_is_the_smallest_that_makes_the_deficits_private():
    rng = np.random.default_rng(7)
    points = rng.uniform(0, 3, size=(25, 2))
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    epsilon = 0.7
    sums = 1.0 + rng.uniform(0, 1e-3, size=25)

    def deficits_private(scale):  # brute force over every ordered pair
        a = 1.0 - sums / scale
        off = ~np.eye(25, dtype=bool)
        return bool(np.all((a[:, None] <= np.exp(epsilon * d) * a[None, :] + 1e-15)[off]))

    scale = metric_module.balancing_scale_all_pairs(sums, epsilon * d)
    assert scale > sums.max()  # here the deficits force T above the largest row sum
    assert deficits_private(scale)
    assert not deficits_private(scale * (1 - 1e-9))
    # on a line the consecutive pairs give the same T as every pair
    line = np.sort(rng.uniform(0, 5, size=30))
    gaps = np.diff(line)
    line_sums = 1.0 + rng.uniform(0, 1e-3, size=30)
    left, right = np.arange(29), np.arange(1, 30)
    consecutive = metric_module.balancing_scale(line_sums, np.concatenate([left, right]), np.concatenate([right, left]),
                                                np.tile(epsilon * gaps, 2))
    every = metric_module.balancing_scale_all_pairs(line_sums, epsilon * np.abs(line[:, None] - line[None]))
    assert consecutive == pytest.approx(every, rel=1e-12)


def test_a_matrix_far_from_private_is_repaired_exactly_with_coincident_rows_tied():
    rng = np.random.default_rng(11)
    points = np.repeat(rng.uniform(0, 5, size=(10, 2)), 3, axis=0)  # each point three times
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    notion = MetricPrivacy(1.0, Metric("euclidean"), Domain.from_points(points))
    k = rng.dirichlet(np.ones(6), size=30)
    fixed = notion.repair({"default": k})["default"]
    np.testing.assert_allclose(fixed.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    for first in range(0, 30, 3):
        np.testing.assert_array_equal(fixed[first], fixed[first + 1])
        np.testing.assert_array_equal(fixed[first], fixed[first + 2])
    assert all_pairs_metric_level(fixed, d) <= 1.0 + 1e-9
