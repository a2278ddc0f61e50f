"""Limits of one solve: a wall-clock deadline, and the progress the iterative solvers report.

An anytime solver checks :meth:`Limits.expired` between rounds; when the deadline has passed it
stops and hands back its best design so far (a feasible point: every column of a ray master,
every accepted cut of a lazy LP, lies in the privacy polytope) together with the lower bound its
duals prove at that moment. The solve then ends with status ``time-limit``: a certified private
design, its proven bound and gap, never a hang and never an uncertified matrix.

Each round an iterative solver may call :meth:`Limits.report` with its value, proven bound and
gap; the entries are kept (the result's solver record carries them as ``progress``) and passed
to the ``progress`` callback, which the command line uses to show the gap closing. The gap is
:func:`relative_gap`, the measure the tolerances are checked on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mechdesign.core.errors import ProblemError

#: status of a solve stopped by its time limit (exit code 1 on the command line)
TIME_LIMIT = "time-limit"


@dataclass
class Limits:
    """A deadline ``time_limit`` seconds after creation (None: no limit) and a progress log.

    Parameters
    ----------
    time_limit : float or None
        Seconds the whole solve may take, from the moment the Limits is made.
    reserve : float
        Seconds of it kept for the certificate after the solvers stop (at most half).
    progress : callable, optional
        Called with each progress entry (a dict: solver, round, value, bound, gap, seconds).
    """

    time_limit: float | None = None
    progress: Callable[[dict], None] | None = None
    #: seconds of the limit held back for certifying the design once the solvers stop (at
    #: most half the limit): the solvers' deadline is time_limit − reserve
    reserve: float = 0.0
    start: float = field(default_factory=time.perf_counter)
    history: list[dict] = field(default_factory=list)
    #: the unit of the values solvers report: a solver working on costs divided by s reports
    #: value / s, and the log shows value (set by whoever scales the costs)
    scale: float = 1.0

    def __post_init__(self):
        self.time_limit = check_time_limit(self.time_limit)
        limit = self.time_limit
        self.reserve = 0.0 if limit is None else min(max(float(self.reserve), 0.0), limit / 2)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def remaining(self) -> float:
        """Seconds left (inf without a limit; never negative)."""
        if self.time_limit is None:
            return math.inf
        return max(self.time_limit - self.reserve - self.elapsed(), 0.0)

    def end(self) -> float | None:
        """The ``time.perf_counter()`` moment the whole solve should be done by (None: no limit)."""
        return None if self.time_limit is None else self.start + self.time_limit

    def expired(self) -> bool:
        return self.time_limit is not None and self.elapsed() >= self.time_limit - self.reserve

    def report(self, solver: str, iteration: int, value: float, bound: float | None) -> None:
        """Record one round of an iterative solver (value and proven bound, in its own units)."""
        gap = None
        if bound is not None and math.isfinite(value) and math.isfinite(bound):
            # relative to |value| alone (scale 0): the solvers report in their own units and stop
            # on this plain relative gap, so the log shows the quantity that decides their stop
            gap = relative_gap(value, bound, scale=0.0)
        entry = {"solver": solver, "round": int(iteration), "value": float(value) * self.scale,
                 "bound": None if bound is None else float(bound) * self.scale, "gap": gap,
                 "seconds": round_seconds(self.elapsed())}
        self.history.append(entry)
        if self.progress is not None:
            self.progress(entry)


def relative_gap(value: float, bound: float, scale: float) -> float:
    """(value − bound) relative to |value|, or to 1e-6 of the objective's natural ``scale`` when
    the value itself is (nearly) zero — a gap of 1e-13 on a loss of 1e-12 is no gap; scale 0
    gives the plain relative gap. Never negative (a bound above the value closes the gap); NaN
    when value or bound is not finite (never within a tolerance)."""
    if not (math.isfinite(value) and math.isfinite(bound)):
        return math.nan
    return float(max(value - bound, 0.0) / max(abs(value), 1e-6 * abs(scale), 1e-300))


def round_seconds(t: float) -> float:
    return float(f"{t:.4g}")


def check_time_limit(value, key: str = "solve.time_limit") -> float | None:
    """A time limit is None or a positive finite number of seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProblemError(f"expected a number of seconds, got {value!r}", key=key)
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ProblemError(f"expected a positive number of seconds, got {value!r}", key=key)
    return value
