"""Two exact methods in turns of growing length, sharing what they prove.

Neither of two methods for one LP need be fast everywhere, and which one wins is often not known
in advance: no threshold on ε or the size predicts it. So both run in turns (a quarter of a
second each, then doubling after every round of turns), and the turns follow what each method
shows while it runs: from its own gap (measured with its latest bound), the rate at which it has
closed the gap over all its turns (a factor per second, from the largest gap it showed) predicts
when it would finish, and the method predicted to finish first gets full turns while the other
gets a share of that: a third when the two predictions are close, falling in proportion to the
ratio of the predictions when they are far apart, to an eighth at least (a method that has shown
no progress at all gets the eighth). A method whose progress comes late still gets that eighth,
so the time spent is at most about nine times that of the faster method, and 1 + the share of
it when the prediction is right. A method that overruns its turn (one of its steps cannot be
interrupted) is charged for it: the other's next turn is lengthened to keep the shares. A steady
method (an interior point) whose turn ends while it is predicted to close its gap within the
other's next turn goes on for up to that turn's length, once, charged the same way: the other's
turn would otherwise come between the method and its end (a 40 × 40 grid's interior point ended
a turn at a gap of 9.1e-7, two steps of 12 s from its aim, and the rays' turn of 64 s came
first). A method that knows before it starts how long one of its steps will take (an interior
point times its factorisations on a few blocks) waits until the others have used that long: a
step that cannot be interrupted would otherwise take their time before anything is learned from
it, and when the other would finish alone within it, it does, so the wait costs at most the
time of that one step (about twice the faster method's time in the worst case, whatever the
sizes are). It is not started at all when that one step would outlast the solve's time limit.

The two share what they prove: the design of least objective found by either, and the largest
lower bound proven by either. The solve ends as soon as the best design is within the tolerance
of the best bound, even when the design comes from one method and the bound from the other. A
method that declines leaves the other to finish, and keeps its design and bound in the shared
best.

A method is a stepper: ``advance(window)`` runs one round within the window (a :class:`Turn`,
which looks like :class:`~mechdesign.core.limits.Limits` to it) and returns whether it
progressed; ``value``, ``bound``, ``latest_bound``, ``rounds``, ``columns``, ``name`` and
``design()`` describe what it has (and an optional ``gap_ceiling``, the relative gap beyond which
its bound shows no progress, and an optional ``steady``, true when its gap falls by a steady
factor a round, so that a prediction from its rate holds); its one-step estimate, when it has
one, is given to the turns as a function of no arguments (``latency``), called once; it raises
:class:`~mechdesign.solvers.highs_model.SolverDeclined` when it cannot go on. An optional
``interruptible``, true when a run of it cut short by a race's end leaves its design and value as
they were, lets a race give its result without waiting for that run (:mod:`race`).
"""

from __future__ import annotations

import math
import time

from mechdesign.core.limits import Limits
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import SolverDeclined

#: the length of each method's first turn, in seconds; every round of turns doubles it
FIRST_TURN = 0.25
#: the length of the turn of the method predicted to finish later, relative to the other's, when
#: the two predictions are close; it falls with their ratio down to TRAILING_FLOOR
TRAILING_SHARE, TRAILING_FLOOR = 1.0 / 3.0, 1.0 / 8.0


class Turn:
    """The time one method may use before the other's turn: until the turn's end or the solve's
    deadline, whichever comes first. Looks like a :class:`Limits` to the methods (HiGHS is given
    :meth:`remaining`); a race's interrupt (``watch``) in ``limits`` is passed on."""

    def __init__(self, limits: Limits | None, seconds: float):
        self.outer, self.end = limits, time.perf_counter() + seconds
        self.time_limit = seconds
        watch = getattr(limits, "watch", None)
        if watch is not None:
            self.watch = watch

    def remaining(self) -> float:
        outer = math.inf if self.outer is None else self.outer.remaining()
        return max(min(self.end - time.perf_counter(), outer), 0.0)

    def expired(self) -> bool:
        return self.remaining() <= 0.0


class Turns:
    """The methods' bookkeeping: each is started at its first turn (so that the interior point's
    dense |X|×|Y| arrays are never allocated when column generation finishes in its first turn),
    and the seconds each has used."""

    def __init__(self, starters: dict, name: str = "portfolio", floor: float = 1.0, latency: dict | None = None):
        self.starters, self.name, self.floor = starters, name, floor
        self.latency = dict(latency or {})  # name -> (function of nothing -> seconds of one step)
        self.step: dict = {}  # name -> the seconds of one step, once estimated
        self.waited: set = set()  # the methods that sat out a turn for it
        self.longest = dict.fromkeys(starters, 0.0)  # per method: its longest single step
        self.started: dict = {}
        self.seconds = dict.fromkeys(starters, 0.0)
        # per method: the largest own gap seen, and the rate log(that gap / the gap now) per
        # second of all its turns
        self.peak: dict = {}
        self.rate: dict = {}
        self.declined: list[str] = []  # why each method that declined did
        self.retired: set = set()  # the names of those methods: they get no more turns
        self.raced = False  # whether the methods ran at once (:mod:`mechdesign.solvers.race`)
        self.extended: set = set()  # the methods whose turn went on once (:meth:`finishing`)
        self.playing: dict = {}  # name -> when its play in progress began (a race may end before it does)

    @staticmethod
    def _gap(method) -> float:
        """The method's own gap measured with its last bound, not its best one: an interior
        point's Lagrangian bound starts far below zero and climbs geometrically long before it
        passes the best bound so far, and that climb is the progress to measure. Capped at the
        method's ``gap_ceiling`` when it has one: a column generation's bound that leaps from
        10^4 times the value to 10 times it has not shown the rate at which it will close."""
        value, bound = method.value, method.latest_bound
        if not (math.isfinite(value) and math.isfinite(bound)):
            return math.inf
        return min(max(value - bound, 0.0) / max(abs(value), 1e-300), getattr(method, "gap_ceiling", math.inf))

    def predicted(self, name: str, tol: float) -> float:
        """Seconds method ``name`` would need to close its own gap at its last turn's rate (inf
        before its first turn or when that turn closed nothing)."""
        rate = self.rate.get(name, 0.0)
        method = self.started.get(name)
        if method is None or rate <= 0.0 or not math.isfinite(self._gap(method)):
            return math.inf
        return math.log(max(self._gap(method), tol) / tol) / rate

    def lengths(self, names: list[str], seconds: float, tol: float) -> dict:
        """This round's turn lengths: ``seconds`` each, but a share of it for the method predicted
        to finish later (a method with no progress yet, no prediction, counts as later):
        :data:`TRAILING_SHARE` times the ratio of the two predictions, at least
        :data:`TRAILING_FLOOR`, and at least the leader's longest single step (up to
        ``seconds``)."""
        predicted = {name: self.predicted(name, tol) for name in names}
        lengths = dict.fromkeys(names, seconds)
        leader = min(names, key=lambda name: predicted[name])
        leading = predicted[leader]
        if len(names) == 2 and leading < math.inf:
            trailing = max(names, key=lambda name: predicted[name])
            if predicted[trailing] > leading:
                share = TRAILING_SHARE * leading / predicted[trailing]  # 0 when it has shown nothing
                # never less than one of the leader's steps: a step that cannot be interrupted
                # (an interior-point iteration of seconds) would otherwise take the round
                lengths[trailing] = min(seconds, max(seconds * max(share, TRAILING_FLOOR), self.longest[leader]))
        return lengths

    def finishing(self, name: str, names: list[str], seconds: float, tol: float) -> float:
        """The seconds by which method ``name``'s turn, just over, goes on: the shortest turn the
        other running methods would get next (``seconds`` being the next round's length), when
        ``name`` is predicted to close its gap within it; else 0. Only for a ``steady`` method
        (an interior point, whose gap falls by a steady factor a step, so that the prediction
        holds), and once: a column generation's bound closes in jumps, and
        when any method's turn could go on, the rays on 20 × 20 grids at ε = 8 with a random
        loss were predicted to close again and again and took 45 s and 36 s instead of 14 s and
        9 s (19 s and 34 s when only once)."""
        others = [other for other in names if other != name]
        if not others or name in self.extended or not getattr(self.started.get(name), "steady", False):
            return 0.0
        upcoming = self.lengths(names, seconds, tol)
        wait = min(upcoming[other] for other in others)
        return wait if self.predicted(name, tol) < wait else 0.0

    def admit(self, name: str, limits: Limits | None) -> bool:
        """Whether method ``name`` may start as far as its one-step estimate goes (made once,
        when it has one): False, and the method retired with the reason (like a decline), when
        the estimate declines or one step would outlast the ``limits``."""
        if name in self.started or name not in self.latency:
            return True
        if name not in self.step:
            try:
                self.step[name] = self.latency[name]()
            except SolverDeclined as reason:
                self.declined.append(f"{name} declined at the start: {reason.reason}")
                self.retired.add(name)
                return False
        if limits is not None and self.step[name] > limits.remaining():
            self.declined.append(f"{name} not started: one step would take about {self.step[name]:.3g} s, "
                                 f"more than the {limits.remaining():.3g} s left")
            self.retired.add(name)
            return False
        return True

    def waiting(self, name: str, limits: Limits | None) -> bool:
        """Whether method ``name`` sits out this turn: it has not started, its one step is
        estimated (once) to take longer than the time the other running methods have used so
        far, and another method is still running. It is retired instead (like a decline, with
        the reason) when it is not admitted (:meth:`admit`)."""
        if name in self.started or name not in self.latency:
            return False
        if not self.admit(name, limits):
            return True
        others = [other for other in self.starters if other != name and other not in self.retired]
        if others and sum(self.seconds[other] for other in self.starters if other != name) < self.step[name]:
            self.waited.add(name)
            return True
        return False

    def best(self):
        """(the method with the design of least value, the method with the largest bound)."""
        running = list(self.started.values())
        return min(running, key=lambda m: m.value), max(running, key=lambda m: m.bound)

    def closed(self, tol: float) -> bool:
        design_from, bound_from = self.best()
        value, bound = design_from.value, bound_from.bound
        if not (math.isfinite(value) and math.isfinite(bound)):  # nothing yet (inf <= inf)
            return False
        return value - bound <= tol * max(self.floor, abs(value))

    def play(self, name: str, window: Turn, limits: Limits | None, tol: float) -> str:
        """Give method ``name`` the time of ``window``: "closed" when the shared gap closed,
        "expired" when the solve's limits did, "declined" when the method declined, else
        "turn over"."""
        started = self.playing[name] = time.perf_counter()
        method = self.started.get(name)
        try:
            if method is None:
                method = self.started[name] = self.starters[name]()
            self._measure(name)
            while True:
                stepped = time.perf_counter()
                progressed = method.advance(window)
                self.longest[name] = max(self.longest[name], time.perf_counter() - stepped)
                if self.closed(tol):
                    return "closed"
                if progressed and limits is not None:
                    design_from, bound_from = self.best()
                    limits.report(f"{self.name} ({name})", method.rounds, design_from.value, bound_from.bound)
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
            self.playing.pop(name, None)
            if name in self.started:
                self._measure(name)

    def used(self, name: str) -> float:
        """The seconds method ``name`` has used, its play in progress included (a race's result
        can be given while the losing method is still taking the race's end)."""
        began = self.playing.get(name)
        return self.seconds[name] + (0.0 if began is None else time.perf_counter() - began)

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

    def ends(self, outcome: str, accept: float | None) -> bool:
        """Whether a method's turn ``outcome`` (:meth:`play`) ends the solve: the shared gap
        closed, the limits expired, or, with ``accept``, the method declined while the shared
        gap is within ``accept`` (one method can go no further, and the gap asked for is
        reached)."""
        return outcome in ("closed", "expired") or (outcome == "declined" and accept is not None
                                                    and self.closed(accept))

    def conclude(self, name: str, outcome: str, path: list[str]) -> ContextSolution:
        """The solve's result after method ``name``'s ``outcome`` ended it (:meth:`ends`);
        raises :class:`SolverDeclined` when the limits expired before any method had a
        design."""
        if outcome == "declined":
            path.append(f"{name} declined with the shared gap within the tolerance")
            return self.solution(False, path)
        if self.best()[0].design() is None:
            raise SolverDeclined("the time limit came before either method had a design")
        return self.solution(outcome == "expired", path)

    def solution(self, stopped: bool, path: list[str]) -> ContextSolution:
        design_from, bound_from = self.best()
        design = design_from.design()  # first: a method may re-measure its value on it
        value = design_from.value
        path.extend(self.declined)
        path.extend(f"{name} waited for the others' first {self.step[name]:.3g} s (the estimate of one of its steps)"
                    for name in self.started if name in self.waited)
        path.append(", ".join(f"{name}: {method.rounds} rounds{getattr(method, 'rounds_note', '')} "
                              f"in {self.used(name):.3g} s"
                              for name, method in self.started.items())
                    + (" (at once, one thread each)" if self.raced else "")
                    + f"; design from {design_from.name}, bound from {bound_from.name}"
                    + (" (stopped at the time limit)" if stopped else ""))
        return ContextSolution(design, value, min(bound_from.bound, value),
                               sum(m.rounds for m in self.started.values()), design_from.columns, stopped)


def interleave(turns: Turns, tol: float, limits: Limits | None, path: list[str],
               accept: float | None = None) -> ContextSolution:
    """Play ``turns`` until the shared gap closes to ``tol`` (relative to max(floor, |value|))
    or ``limits`` expire (``stopped=True``: the best design so far with the best bound), or,
    with ``accept``, until a method declines while the shared gap is within ``accept`` (one
    method can go no further, and the gap the problem asks for is reached); what happened is
    appended to ``path``. Raises :class:`SolverDeclined` when every method declined (the turns
    keep what they found: :meth:`Turns.solution`)."""
    seconds = FIRST_TURN
    # a method that overran its turn (one of its steps cannot be interrupted: an interior-point
    # iteration of a second on 1,000 points against a first turn of a quarter) is charged for
    # it: the others' next turns are lengthened in the ratio of this round's turns
    owed = dict.fromkeys(turns.starters, 0.0)
    while len(turns.retired) < len(turns.starters):
        names = [name for name in turns.starters if name not in turns.retired]
        # alone, a method has no one to share the time with: one turn to the end (a pricing pass
        # of the cone rays, about ten minutes on 4,900 grid locations, cut into turns after the
        # interior point declined, proved a gap of 90 % where one uncut pass proved 75 %)
        lengths = {names[0]: math.inf} if len(names) == 1 else turns.lengths(names, seconds, tol)
        for name in names:
            if turns.waiting(name, limits):
                continue
            length, owed[name] = lengths[name] + owed[name], 0.0
            used = turns.seconds[name]
            outcome = turns.play(name, Turn(limits, length), limits, tol)
            if outcome == "turn over":  # predicted to close within the others' next turn: go on
                extension = turns.finishing(name, names, 2 * seconds, tol)
                if extension > 0:
                    turns.extended.add(name)
                    outcome = turns.play(name, Turn(limits, extension), limits, tol)
            overrun = turns.seconds[name] - used - length
            if overrun > 0:
                for other in names:
                    if other != name:
                        owed[other] += overrun * (lengths[other] / lengths[name] if lengths[name] > 0 else 1.0)
            if turns.ends(outcome, accept):
                return turns.conclude(name, outcome, path)
        seconds *= 2
    raise SolverDeclined("; ".join(turns.declined))
