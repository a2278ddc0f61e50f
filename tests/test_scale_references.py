"""The scale suite's closed-form reference for the line (the remapped truncated geometric
mechanism, optimal for every prior by Ghosh, Roughgarden and Sundararajan) against scipy's LP
with every ordered pair's constraint, at priors and ε the suite uses."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.bench.scale import _prior, _remapped_geometric_loss


def line_lp(n, eps, prior):
    x = np.arange(n)
    L = np.abs(x[:, None] - x[None, :]).astype(float)
    c = (prior[:, None] * L).ravel()
    rows, cols, vals = [], [], []
    r = 0
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            for y in range(n):  # K[a, y] − e^{ε|a − b|} K[b, y] ≤ 0
                rows += [r, r]
                cols += [a * n + y, b * n + y]
                vals += [1.0, -np.exp(eps * abs(a - b))]
                r += 1
    A_ub = sp.csr_array((vals, (rows, cols)), shape=(r, n * n))
    A_eq = sp.kron(sp.eye(n), np.ones((1, n))).tocsr()
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(r), A_eq=A_eq, b_eq=np.ones(n), bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize(("n", "eps", "prior"), [(12, 0.5, "zipf"), (15, 1.0, "zipf"),
                                                 (14, 2.0, "uniform"), (10, 0.25, "zipf")])
def test_the_remapped_geometric_reference_is_the_lp_optimum(n, eps, prior):
    pi = _prior({"prior": prior}, n)
    assert _remapped_geometric_loss(n, eps, pi) == pytest.approx(line_lp(n, eps, pi), rel=1e-7)
