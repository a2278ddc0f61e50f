"""Compiled kernels of the d-privacy audit and repair over every ordered pair of inputs
(numba; imported on first use, so that loading the package does not load numba)."""

from __future__ import annotations

import numpy as np
from numba import njit

from mechdesign.privacy.metric import HUGE_RATIO


@njit(cache=True, fastmath=True)
def row_gap(logk: np.ndarray, x: int, z: int) -> float:
    """max_y (ln K[x,y] − ln K[z,y])."""
    r = logk[x, 0] - logk[z, 0]
    for y in range(1, logk.shape[1]):
        v = logk[x, y] - logk[z, y]
        r = v if v > r else r
    return r


@njit(cache=True)
def max_level(logk: np.ndarray, d: np.ndarray) -> float:
    """max over ordered pairs x != z of max_y (logk[x,y] − logk[z,y]) / d(x,z) (0 at least);
    +inf for a positive gap at d = 0 or a zero entry next to a positive one."""
    n = logk.shape[0]
    top, bottom = np.empty(n), np.empty(n)
    for x in range(n):
        top[x], bottom[x] = logk[x].max(), logk[x].min()
    worst = 0.0
    for x in range(n):
        for z in range(n):
            # the pair cannot beat the worst level so far when even max_y − min_y cannot
            if x == z or (d[x, z] > 0.0 and top[x] - bottom[z] <= worst * d[x, z]):
                continue
            r = row_gap(logk, x, z)
            if r <= 0.0:
                continue
            if r >= HUGE_RATIO or d[x, z] <= 0.0:
                return np.inf
            level = r / d[x, z]
            if level > worst:
                worst = level
    return worst


@njit(cache=True, fastmath=True)
def max_plus(pen: np.ndarray, logk: np.ndarray) -> np.ndarray:
    """out[x, y] = max_z (logk[z, y] − pen[x, z]), pen[x, x] = 0."""
    n, m = logk.shape
    out = logk.copy()
    for x in range(n):
        for z in range(n):
            p = pen[x, z]
            for y in range(m):
                out[x, y] = max(out[x, y], logk[z, y] - p)
    return out
