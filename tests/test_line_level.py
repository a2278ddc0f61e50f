"""The line audit (mechdesign.privacy.line_level) equals the all-pairs level on every matrix,
including zeros, coincident inputs, unsorted and unevenly spaced points."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.privacy import MetricPrivacy
from mechdesign.privacy.metric import _kernel_log, _max_level_numpy


def all_pairs_level(points, K):
    d = np.abs(points[:, None] - points[None, :])
    return _max_level_numpy(_kernel_log(K), d)


def notion(points, eps=1.0):
    dom = Domain.from_points(points.reshape(-1, 1))
    return MetricPrivacy(eps, Metric("absolute"), dom)


@pytest.mark.parametrize("seed", range(12))
def test_the_line_level_equals_the_level_over_every_ordered_pair(seed):
    rng = np.random.default_rng(seed)
    n, m = rng.integers(2, 30), rng.integers(1, 12)
    points = rng.permutation(np.cumsum(rng.exponential(size=n)))  # unsorted, uneven gaps
    K = rng.dirichlet(np.ones(m), size=n) ** rng.uniform(0.2, 3)
    level = notion(points).level(K)
    assert level == pytest.approx(all_pairs_level(points, K), rel=1e-12)
    assert level >= all_pairs_level(points, K)  # the gaps are rounded down: never below


def test_zeros_next_to_positive_entries_and_coincident_inputs_give_infinity():
    points = np.array([0.0, 2.0, 1.0, 3.0])
    K = np.full((4, 2), 0.5)
    K[3] = [1.0, 0.0]  # a zero beside positive entries of the same column
    assert notion(points).level(K) == np.inf == all_pairs_level(points, K)
    K = np.full((4, 2), 0.5)
    K[:, 1] = 0.0  # a column of zeros: no constraint
    K[:, 0] = 1.0
    assert notion(points).level(K) == 0.0
    dup = np.array([0.0, 1.0, 1.0, 2.0])  # coincident inputs must have identical rows
    K = np.array([[0.5, 0.5], [0.4, 0.6], [0.4, 0.6], [0.3, 0.7]])
    level = notion(dup).level(K)
    assert level == pytest.approx(all_pairs_level(dup, K), rel=1e-12)
    assert level < np.inf
    K[2] = [0.41, 0.59]
    assert notion(dup).level(K) == np.inf


def test_the_audit_says_which_pairs_it_read():
    points = np.arange(6.0)
    K = np.exp(-np.abs(points[:, None] - points[None, :]))
    K /= K.sum(1, keepdims=True)
    a = notion(points, eps=2.0).audit({"default": K})
    assert a.holds and a.detail["pairs_checked"] == 10
    assert "consecutive" in a.detail["pairs"]
    assert a.achieved["epsilon"] == pytest.approx(all_pairs_level(points, K), rel=1e-12)
    # below the level the same audit refuses the matrix
    assert not notion(points, eps=0.99 * a.achieved["epsilon"]).audit({"default": K}).holds
