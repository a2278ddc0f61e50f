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
