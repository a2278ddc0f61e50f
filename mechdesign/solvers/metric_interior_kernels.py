"""The entry-by-entry work of the d-privacy interior-point iteration that NumPy would do in
several passes with temporaries, compiled with numba (imported on first use, so that loading
the package does not load numba)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest α <= 1 with x + α dx >= 0 (x > 0), in one pass."""
    alpha = 1.0
    flat_x, flat_dx = x.ravel(), dx.ravel()
    for k in range(flat_x.size):
        d = flat_dx[k]
        if d < 0.0:
            ratio = -flat_x[k] / d
            if ratio < alpha:
                alpha = ratio
    return alpha
