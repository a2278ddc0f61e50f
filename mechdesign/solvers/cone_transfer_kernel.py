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


@njit(cache=True)
def transferred_deficits(reduced: np.ndarray, minima: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray,
                         out: np.ndarray) -> None:
    """Per column y of ``reduced`` (g, k), the remainders r = reduced[:, y] − ``minima`` after
    :func:`transfer`'s loop over the pairs (r = a + Bᵀλ for the multipliers it finds), written as
    out[:, y] = min(0, r): the deficits of a Lagrangian bound in which the column stands below
    the minima only where out < 0. A column with no negative entry is not walked (out = 0)."""
    g, k = reduced.shape
    r = np.empty(g)
    for y in range(k):
        negative = False
        for x in range(g):
            r[x] = reduced[x, y] - minima[x]
            negative = negative or r[x] < 0.0
        if negative:
            for p in range(i.size):
                x, q = i[p], j[p]
                if r[x] < 0.0 and r[q] > 0.0:
                    carried = min(-r[x], r[q] / coef[p])
                    r[x] += carried
                    r[q] -= coef[p] * carried
        for x in range(g):
            out[x, y] = min(r[x], 0.0)
