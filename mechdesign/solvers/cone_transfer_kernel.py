"""Compiled kernel of :mod:`~mechdesign.solvers.cone_transfer` (numba; imported on first use)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def transfer(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """λ per pair, in the pairs' order: each pair (x, x') with a negative remainder at x and a
    positive one at x' carries min(−r_x, r_x'/c), raising r_x by it and lowering r_x' by c
    times it."""
    r = a.copy()
    lam = np.zeros(i.size)
    for k in range(i.size):
        x, p = i[k], j[k]
        if r[x] < 0.0 and r[p] > 0.0:
            carried = min(-r[x], r[p] / coef[k])
            lam[k] = carried
            r[x] += carried
            r[p] -= coef[k] * carried
    return lam
