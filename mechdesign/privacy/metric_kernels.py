"""Compiled kernels of the d-privacy audit and repair over every ordered pair of inputs
(numba, rows shared among the CPUs; imported on first use, so that loading the package does
not load numba)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from mechdesign.privacy.metric import HUGE_RATIO


@njit(cache=True, fastmath=True)
def row_gap(logk: np.ndarray, x: int, z: int) -> float:
    """max_y (ln K[x,y] − ln K[z,y])."""
    r = logk[x, 0] - logk[z, 0]
    for y in range(1, logk.shape[1]):
        v = logk[x, y] - logk[z, y]
        r = v if v > r else r
    return r


#: rows compared with each row z in one sweep of the level kernel
ROWS = 16


@njit(cache=True, parallel=True)
def max_level(logk: np.ndarray, d: np.ndarray) -> float:
    """max over ordered pairs x != z of max_y (logk[x,y] − logk[z,y]) / d(x,z) (0 at least);
    +inf for a positive gap at d = 0 or a zero entry next to a positive one.

    The rows x are shared among the CPUs. A pair is skipped when even max_y − min_y of the
    two rows cannot beat the level already found for its row, which starts from the level of
    the row's nearest other input (a pair's level is a lower bound of the maximum, so the
    skips never change it)."""
    n = logk.shape[0]
    top, bottom = np.empty(n), np.empty(n)
    for x in prange(n):
        top[x], bottom[x] = logk[x].max(), logk[x].min()
    worst = np.zeros(n)
    infinite = np.zeros(n, np.bool_)
    for x in prange(n):
        near = -1
        for z in range(n):
            if z != x and d[x, z] > 0.0 and (near < 0 or d[x, z] < d[x, near]):
                near = z
        if near >= 0:
            r = row_gap(logk, x, near)
            if r >= HUGE_RATIO:
                infinite[x] = True
            elif r > 0.0:
                worst[x] = r / d[x, near]
    seed = worst.max()
    # rows x in blocks of ROWS: each row z is read once per block, not once per x (the matrix
    # outgrows the caches from a few thousand inputs on, and the pairs' scan is memory-bound)
    for b in prange((n + ROWS - 1) // ROWS):
        x0 = b * ROWS
        x1 = min(x0 + ROWS, n)
        for x in range(x0, x1):
            worst[x] = seed
        for z in range(n):
            for x in range(x0, x1):
                w = worst[x]
                if x == z or infinite[x] or (d[x, z] > 0.0 and top[x] - bottom[z] <= w * d[x, z]):
                    continue
                r = row_gap(logk, x, z)
                if r <= 0.0:
                    continue
                if r >= HUGE_RATIO or d[x, z] <= 0.0:
                    infinite[x] = True
                    continue
                level = r / d[x, z]
                if level > w:
                    worst[x] = level
    if infinite.any():
        return np.inf
    return max(worst.max(), 0.0)


@njit(cache=True, fastmath=True, parallel=True)
def max_plus(pen: np.ndarray, logk: np.ndarray) -> np.ndarray:
    """out[x, y] = max_z (logk[z, y] − pen[x, z]), pen[x, x] = 0 (blocks of ROWS rows x shared
    among the CPUs, each row z read once per block)."""
    n, m = logk.shape
    out = logk.copy()
    for b in prange((n + ROWS - 1) // ROWS):
        x0 = b * ROWS
        x1 = min(x0 + ROWS, n)
        for z in range(n):
            for x in range(x0, x1):
                p = pen[x, z]
                for y in range(m):
                    out[x, y] = max(out[x, y], logk[z, y] - p)
    return out
