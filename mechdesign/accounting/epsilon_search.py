"""The smallest ε whose δ(ε) meets a target, for a δ that does not increase with ε.

A hockey-stick divergence δ(ε) = Σ (P − e^ε Q)_+ never increases with ε, so the ε of a target δ
is the left end of {ε : δ(ε) <= δ}. The search brackets it, runs Brent's method on
log δ(ε) − log δ (smooth where δ spans orders of magnitude), and returns a point that has been
checked to satisfy δ(ε) <= δ — so the answer is an upper bound on the exact ε of the bound it
searched, within ``tolerance`` of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize

#: absolute tolerance on ε of every search in this room
EPSILON_TOLERANCE = 1e-10


def smallest_epsilon(delta_of: Callable[[float], float], delta: float, upper: float,
                     tolerance: float = EPSILON_TOLERANCE) -> float:
    """The smallest ε in [0, ``upper``] with ``delta_of(ε) <= delta`` (to ``tolerance``, from
    above); ``math.inf`` when even ``upper`` misses the target. ``delta_of`` must not increase."""
    if delta_of(0.0) <= delta:
        return 0.0
    if not math.isfinite(upper) or delta_of(upper) > delta:
        return math.inf
    floor = 1e-300

    def gap(eps: float) -> float:
        return math.log(max(delta_of(eps), floor)) - math.log(max(delta, floor))

    root = optimize.brentq(gap, 0.0, upper, xtol=tolerance / 4, maxiter=200)
    step = tolerance / 2
    eps = min(upper, root + step)
    while delta_of(eps) > delta:  # Brent's answer may sit just below the crossing
        step *= 2
        eps = min(upper, root + step)
    return eps


def largest_argument(value_of: Callable[[float], float], target: float, lower: float,
                     upper: float, tolerance: float = 1e-9) -> float:
    """The largest x in [``lower``, ``upper``] with ``value_of(x) <= target``, for a ``value_of``
    that does not decrease, checked from below (``lower`` itself must satisfy it; ``upper`` is
    returned when it does)."""
    if value_of(upper) <= target:
        return upper

    def gap(x: float) -> float:
        return value_of(x) - target

    root = optimize.brentq(gap, lower, upper, xtol=tolerance / 4, maxiter=200)
    step = tolerance / 2
    x = max(lower, root - step)
    while x > lower and value_of(x) > target:
        step *= 2
        x = max(lower, root - step)
    return x
