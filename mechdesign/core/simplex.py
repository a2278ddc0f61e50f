"""Euclidean projection onto the probability simplex."""

from __future__ import annotations

import numpy as np

__all__ = ["project_simplex"]


def project_simplex(v) -> np.ndarray:
    """Euclidean projection of v onto the probability simplex {θ >= 0, Σ θ = 1}.

    argmin_θ ||θ − v||_2 over the simplex is θ = max(v − τ, 0) with τ chosen so the result sums
    to 1; τ is found by sorting (Held, Wolfe and Crowder, "Validation of subgradient
    optimization", Mathematical Programming 1974; Duchi, Shalev-Shwartz, Singer and Chandra,
    "Efficient projections onto the l1-ball for learning in high dimensions", ICML 2008),
    O(k log k).

    >>> project_simplex([0.5, 0.7, -0.2])
    array([0.4, 0.6, 0. ])
    """
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    ks = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / ks > 0)[0][-1]
    tau = css[rho] / (rho + 1)
    return np.maximum(v - tau, 0.0)
