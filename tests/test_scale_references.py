"""The scale suite's closed-form reference for the line (the remapped truncated geometric
mechanism, optimal for every prior by Ghosh, Roughgarden and Sundararajan) against scipy's LP
with every ordered pair's constraint, at priors and ε the suite uses."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.bench.scale import _prior, _remapped_geometric_loss
from tests.test_metric_soundness import all_pairs_lp


@pytest.mark.parametrize(("n", "eps", "prior"), [(12, 0.5, "zipf"), (15, 1.0, "zipf"),
                                                 (14, 2.0, "uniform"), (10, 0.25, "zipf")])
def test_the_remapped_geometric_reference_is_the_lp_optimum(n, eps, prior):
    pi = _prior({"prior": prior}, n)
    x = np.arange(n, dtype=float)
    D = np.abs(x[:, None] - x[None, :])
    assert _remapped_geometric_loss(n, eps, pi) == pytest.approx(all_pairs_lp(pi[:, None] * D, D, eps),
                                                                 rel=1e-7)


def test_the_remapped_geometric_reference_keeps_its_digits_at_a_large_epsilon():
    # at ε = 13 the optimum (3.5e-6) is far below the prefix sums the best remap is found by;
    # the value is summed again term by term (non-negative terms: relative round-off ~n·u).
    # The reference here: every output's cost of every remap summed directly, O(n³)
    import math

    n, eps = 15, 13.0
    pi = np.random.default_rng(3).dirichlet(np.full(n, 0.1))
    a, x = math.exp(-eps), np.arange(n, dtype=float)
    total = 0.0
    for z in range(n):
        shape = a ** np.abs(x - z) * ((1 - a) if 0 < z < n - 1 else 1.0) / (1 + a)
        w = pi * shape
        total += min(math.fsum(w * np.abs(x - y)) for y in range(n))
    assert _remapped_geometric_loss(n, eps, pi) == pytest.approx(total, rel=1e-13, abs=0.0)
