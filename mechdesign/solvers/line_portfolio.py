"""ε·|x − x'|-private designs on a line by two exact methods: the line rays
(:mod:`line_rays`) and the interior point (:mod:`metric_interior`), whose blocks are tridiagonal
on a line (:mod:`metric_chain`: each point's privacy pairs are its two neighbours).

The rays are fast where the remapped geometric mechanism's columns are nearly optimal (losses
monotone in |x − y|, ε of 1 and above); at small ε with a random loss their pricing adds columns
for minutes. The interior point's iteration is O(|Y| |X|²) there and its iteration count hardly
depends on ε. Which one wins is not known in advance, so both run, sharing the best
design and the best bound: at once, one thread each, when the solver may use two threads
(:mod:`race`; the interior point's step is bound by memory, and on one thread it takes about as
long as on two), else in turns (:mod:`portfolio`). When both decline, the LP with the neighbour
pair rows finishes a design small enough for it."""

from __future__ import annotations

import numpy as np

from mechdesign.solvers.contexts import ContextSolution, aimed_gap
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.line_rays import (
    NEIGHBOUR_LP_MAX_ENTRIES,
    LineRounds,
    neighbour_lp,
)
from mechdesign.solvers.metric_interior import MetricInteriorPoint, iteration_seconds
from mechdesign.solvers.portfolio import Turns
from mechdesign.solvers.race import compete

PORTFOLIO_NAME = "line rays + interior point"


#: rounds of the line rays at most (as alone), after which they decline
MAX_ROUNDS = 500


class _DecliningRays(LineRounds):
    """The line rays as a method of the turns: declines once a round finds no improving column
    with the gap open (alone, the rays stop there), or after :data:`MAX_ROUNDS` rounds."""

    def advance(self, limits=None) -> bool:
        if self.rounds >= MAX_ROUNDS:
            raise SolverDeclined(self.note() + f": no proof within {MAX_ROUNDS} rounds")
        if self.stuck:
            raise SolverDeclined(self.note() + ": no improving ray while the gap is open")
        if self.closed:  # (the turns close on the same scale first; a guard against looping)
            raise SolverDeclined(self.note() + ": closed on the scale of the largest cost")
        return super().advance(limits)


def neighbour_pairs(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (x, x + 1) and (x + 1, x) of sorted points with their distances: on a line they
    imply every other pair."""
    x = np.arange(points.size - 1)
    i, j = np.concatenate([x, x + 1]), np.concatenate([x + 1, x])
    return i, j, np.abs(points[i] - points[j])


def solve_line_portfolio(cost: np.ndarray, points: np.ndarray, epsilon: float, gap: float, limits,
                         path: list[str], repair=None, tolerance: float | None = None) -> ContextSolution:
    """The exact design on sorted, distinct ``points`` (rows of ``cost`` in that order). The
    solve ends when the shared gap is within :func:`~mechdesign.solvers.contexts.aimed_gap` of
    the smaller of ``gap`` and the problem's ``tolerance`` (default ``gap``): the rays on their
    own price on to 1e-9, which costs them little, but an interior point's steps from 1e-6 to
    1e-9 took seconds on 1,000 points. When both methods decline, a gap within ``gap`` is
    accepted; at ``limits``' expiry, the best design with the best bound. ``repair`` (K ->
    private K or None) is applied to the interior point's design; what happened is appended to
    ``path``."""
    aim = aimed_gap(min(gap, gap if tolerance is None else tolerance))
    pairs = neighbour_pairs(points)
    turns = Turns({LineRounds.name: lambda: _DecliningRays(cost, points, epsilon, gap=gap),
                   MetricInteriorPoint.name: lambda: MetricInteriorPoint(cost, pairs, epsilon, tol=aim, repair=repair)},
                  # the gap relative to |value|, or to 1e-6 max|C| for a value near zero, as
                  # the rays measure it (two points at ε = 50: an optimum of 2e-22)
                  PORTFOLIO_NAME, floor=1e-6 * float(np.abs(cost).max()),
                  latency={MetricInteriorPoint.name: lambda: iteration_seconds(cost, pairs)})
    try:
        return compete(turns, aim, limits, path, accept=gap)
    except SolverDeclined as declined:
        designed = [m for m in turns.started.values() if m.design() is not None]
        if not designed:
            path.append(f"no design: {declined.reason}")
            raise
        best = turns.solution(False, path)
    if turns.closed(gap):  # (the value re-measured on the repaired design)
        return best
    if cost.size <= NEIGHBOUR_LP_MAX_ENTRIES and not (limits is not None and limits.expired()):
        return neighbour_lp(cost, points, epsilon, best, limits, path, gap)
    path.append("the best design with its proven bound (too large for the neighbour-pair LP)")
    return best
