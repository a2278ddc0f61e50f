"""The two marginals of a transport problem: validated mass vectors, normalised to total 1.

Every public function of the transport room takes λ (over X) and μ (over Y) as plain arrays;
they are checked here once — finite, non-negative, non-empty, and either both probability
vectors or of equal total mass — and a violation is a :class:`mechdesign.core.errors.ProblemError`.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.errors import ProblemError

__all__ = ["SUM_TOL", "mass_tolerance", "normalised_masses"]

SUM_TOL = 1e-9  # probability vectors sum to 1 (or to each other) within this
_EPS = np.finfo(float).eps


def _vector(x, name: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ProblemError(f"{name} must be a vector of numbers, got {type(x).__name__}") from exc
    if a.ndim != 1 or a.size == 0:
        raise ProblemError(f"{name} must be a non-empty 1-D vector, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ProblemError(f"{name} must be finite, got {a[~np.isfinite(a)][0]} at index "
                           f"{int(np.flatnonzero(~np.isfinite(a))[0])}")
    if np.any(a < 0):
        i = int(np.argmin(a))
        raise ProblemError(f"{name} must be non-negative, got {name}[{i}] = {a[i]!r}")
    return a


def normalised_masses(lam, mu) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validate two mass vectors; return them normalised to total 1 and their totals.

    Returns (p, q, total of lam, total of mu)."""
    a, b = _vector(lam, "lam"), _vector(mu, "mu")
    ta, tb = float(np.sum(a)), float(np.sum(b))  # pairwise summation: error ~ eps·log2(n)
    if ta <= 0 or tb <= 0:
        raise ProblemError(f"lam and mu must have positive total mass, got {ta!r} and {tb!r}")
    both_prob = abs(ta - 1.0) <= SUM_TOL and abs(tb - 1.0) <= SUM_TOL
    if not both_prob and abs(ta - tb) > SUM_TOL * max(ta, tb):
        raise ProblemError(
            "lam and mu must be probability vectors (each summing to 1 within 1e-9) or have equal "
            f"total mass; got sums {ta!r} and {tb!r}")
    return a / ta, b / tb, ta, tb


def mass_tolerance(n: int, m: int) -> float:
    """Masses below this are indistinguishable from round-off in sums of n + m terms."""
    return 1e-12 + 8.0 * _EPS * (n + m)
