"""ε-LDP with an expected loss: column generation and the interior-point method, interleaved.

Neither method is fast everywhere. Column generation
(:mod:`mechdesign.solvers.column_generation`) wins when the optimum uses few outputs (small ε:
a handful of staircase columns), but when it uses nearly every output (large ε, random losses)
its master grows into the whole |X||Y|-variable LP. The interior-point method
(:mod:`mechdesign.solvers.ldp_interior`) costs the same per iteration whatever the optimum looks
like, but needs tens of dense iterations where column generation needs a few small masters.
Which one wins is not known in advance and no threshold on ε or the size predicts it, so both run
in turns of growing length (a quarter of a second each, then doubling after every round of
turns), and the turns follow what each method shows while it runs: from its own gap before and
(measured with its latest bound), the rate at which it has closed the gap over all its turns (a
factor per second, from the largest gap it showed) predicts when it would finish, and the method
predicted to finish first gets full turns while the other gets a third of that. A method whose progress comes late (column generation's bound often jumps in its
last rounds) still gets a quarter of the time, so the time spent is at most about four times that
of the faster method, and about 4/3 of it when the prediction is right.

The two share what they prove: the design of least objective found by either, and the largest
lower bound proven by either (each is a Lagrangian bound of row duals priced over every output,
valid for any duals). The solve ends as soon as the best design is within the tolerance of the
best bound, even when the design comes from one method and the bound from the other. A method
that declines (HiGHS ending a master without an optimum, the interior point's iteration limit)
leaves the other to finish; the result's ``path`` records each method's rounds and seconds,
which one supplied the design and which the bound, and any decline.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.core.limits import Limits
from mechdesign.privacy.ldp import LDP
from mechdesign.solvers.column_generation import ColumnRounds, LDPCone
from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import InteriorPoint
from mechdesign.solvers.predicates import expected_loss, one_notion_of
from mechdesign.solvers.registry import SpecialSolver

NAME = "HiGHS column generation + interior point"
#: the length of each method's first turn, in seconds; every round of turns doubles it
FIRST_TURN = 0.25
#: the length of the turn of the method predicted to finish later, relative to the other's
TRAILING_SHARE = 1.0 / 3.0


class _Turn:
    """The time one method may use before the other's turn: until the turn's end or the solve's
    deadline, whichever comes first. Looks like a :class:`Limits` to the methods (HiGHS is given
    :meth:`remaining`)."""

    def __init__(self, limits: Limits | None, seconds: float):
        self.outer, self.end = limits, time.perf_counter() + seconds
        self.time_limit = seconds

    def remaining(self) -> float:
        outer = math.inf if self.outer is None else self.outer.remaining()
        return max(min(self.end - time.perf_counter(), outer), 0.0)

    def expired(self) -> bool:
        return self.remaining() <= 0.0


class _Turns:
    """The methods' bookkeeping: each is started at its first turn (so that the interior point's
    dense |X|×|Y| arrays are never allocated when column generation finishes in its first turn),
    and the seconds each has used."""

    def __init__(self, starters: dict):
        self.starters = starters
        self.started: dict = {}
        self.seconds = dict.fromkeys(starters, 0.0)
        # per method: the largest own gap seen, and the rate log(that gap / the gap now) per
        # second of all its turns
        self.peak: dict = {}
        self.rate: dict = {}
        self.declined: list[str] = []  # why each method that declined did
        self.retired: set = set()  # the names of those methods: they get no more turns

    @staticmethod
    def _gap(method) -> float:
        """The method's own gap measured with its last bound, not its best one: an interior
        point's Lagrangian bound starts far below zero and climbs geometrically long before it
        passes the best bound so far, and that climb is the progress to measure."""
        value, bound = method.value, method.latest_bound
        if not (math.isfinite(value) and math.isfinite(bound)):
            return math.inf
        return max(value - bound, 0.0) / max(abs(value), 1e-300)

    def predicted(self, name: str, tol: float) -> float:
        """Seconds method ``name`` would need to close its own gap at its last turn's rate (inf
        before its first turn or when that turn closed nothing)."""
        rate = self.rate.get(name, 0.0)
        method = self.started.get(name)
        if method is None or rate <= 0.0 or not math.isfinite(self._gap(method)):
            return math.inf
        return math.log(max(self._gap(method), tol) / tol) / rate

    def lengths(self, names: list[str], seconds: float, tol: float) -> dict:
        """This round's turn lengths: ``seconds`` each, but the share :data:`TRAILING_SHARE` of it
        for the method predicted to finish later (a method with no progress yet, no prediction,
        counts as later)."""
        predicted = {name: self.predicted(name, tol) for name in names}
        lengths = dict.fromkeys(names, seconds)
        if len(names) == 2 and min(predicted.values()) < math.inf:
            trailing = max(names, key=lambda name: predicted[name])
            if predicted[trailing] > min(predicted.values()):
                lengths[trailing] = seconds * TRAILING_SHARE
        return lengths

    def best(self):
        """(the method with the design of least value, the method with the largest bound)."""
        running = list(self.started.values())
        return min(running, key=lambda m: m.value), max(running, key=lambda m: m.bound)

    def closed(self, tol: float) -> bool:
        design_from, bound_from = self.best()
        return design_from.value - bound_from.bound <= tol * max(1.0, abs(design_from.value))

    def play(self, name: str, window: _Turn, limits: Limits | None, tol: float) -> str:
        """Give method ``name`` the time of ``window``: "closed" when the shared gap closed,
        "expired" when the solve's limits did, "declined" when the method declined, else
        "turn over"."""
        started = time.perf_counter()
        method = self.started.get(name)
        try:
            if method is None:
                method = self.started[name] = self.starters[name]()
            self._measure(name)
            while True:
                progressed = method.advance(window)
                if self.closed(tol):
                    return "closed"
                if progressed and limits is not None:
                    design_from, bound_from = self.best()
                    limits.report(f"{NAME} ({name})", method.rounds, design_from.value, bound_from.bound)
                if limits is not None and limits.expired():
                    return "expired"
                if window.expired():
                    return "turn over"
        except SolverDeclined as reason:
            # a method that declines keeps what it found: its design is feasible and its bound
            # proven, so they stay in the shared best; it only gets no more turns
            rounds = self.started[name].rounds if name in self.started else 0
            self.declined.append(f"{name} declined after {rounds} rounds: {reason.reason}")
            self.retired.add(name)
            return "declined"
        finally:
            self.seconds[name] += time.perf_counter() - started
            if name in self.started:
                self._measure(name)

    def _measure(self, name: str) -> None:
        """Update the method's peak gap and its rate over all its turns so far. Measured from the
        peak, not the first gap: an interior point's first Lagrangian bounds fall far below zero
        before they climb, and the climb is its progress."""
        gap = self._gap(self.started[name])
        if not math.isfinite(gap):
            return
        peak = self.peak[name] = max(self.peak.get(name, gap), gap)
        if self.seconds[name] > 0:
            self.rate[name] = math.log(max(peak, 1e-300) / max(gap, 1e-300)) / self.seconds[name]

    def solution(self, stopped: bool, path: list[str]) -> ContextSolution:
        design_from, bound_from = self.best()
        value = design_from.value
        path.extend(self.declined)
        path.append(", ".join(f"{name}: {method.rounds} rounds in {self.seconds[name]:.3g} s"
                              for name, method in self.started.items())
                    + f"; design from {design_from.name}, bound from {bound_from.name}"
                    + (" (stopped at the time limit)" if stopped else ""))
        return ContextSolution(design_from.design(), value, min(bound_from.bound, value),
                               sum(m.rounds for m in self.started.values()), design_from.columns, stopped)


def solve_interleaved(cost: np.ndarray, epsilon: float, *, tol: float = 1e-9, initial: list[int] | None = None,
                      limits: Limits | None = None, path: list[str] | None = None,
                      used: list[int] | None = None) -> ContextSolution:
    """Minimise Σ cost·K over ε-LDP row-stochastic K by column generation and the interior-point
    method in turns (see the module docstring), until the best design is within
    ``tol``·max(1, |value|) of the best bound, or ``limits`` expire (``stopped=True``: the best
    design so far with the best bound). What happened is appended to ``path``; the outputs
    column generation's last master used are put in ``used`` (a warm start for a neighbouring
    ε). Raises :class:`SolverDeclined` when both methods declined.

    ``initial`` names output columns for column generation to begin with."""
    path = [] if path is None else path
    cone = LDPCone(cost.shape[0], epsilon)
    turns = _Turns({ColumnRounds.name: lambda: ColumnRounds(cost, cone, tol=tol, initial=initial),
                    InteriorPoint.name: lambda: InteriorPoint(cost, epsilon, tol=tol)})
    seconds = FIRST_TURN
    try:
        while len(turns.retired) < len(turns.starters):
            names = [name for name in turns.starters if name not in turns.retired]
            lengths = turns.lengths(names, seconds, tol)
            for name in names:
                outcome = turns.play(name, _Turn(limits, lengths[name]), limits, tol)
                if outcome in ("closed", "expired"):
                    return turns.solution(outcome == "expired", path)
            seconds *= 2
        raise SolverDeclined("; ".join(turns.declined))
    finally:
        columns = turns.started.get(ColumnRounds.name)
        if used is not None and columns is not None:
            used[:] = np.flatnonzero(columns.design().sum(axis=0) > 0).tolist()


def applies(problem) -> str | None:
    """ε-LDP (δ = 0) alone with an expected-loss objective."""
    return one_notion_of(problem, LDP) or expected_loss(problem)


def ldp_interleaved(problem, limits=None):
    """ε-LDP alone with an expected-loss objective, per context, by :func:`solve_interleaved`."""
    epsilon = problem.privacy[0].epsilon
    # warm start: the outputs the last solve of this problem used (sweeps re-solve one problem
    # at a sequence of ε; neighbouring optima share most of their columns)
    seeds = problem.extras.setdefault("column_generation_outputs", {})
    path: list[str] = []

    def solve_one(key, cost):
        notes: list[str] = []
        used: list[int] = []
        try:
            return solve_interleaved(cost, epsilon, initial=seeds.get(key), limits=limits, path=notes, used=used)
        finally:
            if used:
                seeds[key] = used
            path.extend(f"{key}: {note}" for note in notes)

    raw, outcome = solve_contexts(problem, solve_one, NAME, limits=limits)
    return raw, outcome.recording(path=path)


SOLVER = SpecialSolver(NAME, applies, ldp_interleaved)
