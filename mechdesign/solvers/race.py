"""Two exact methods at once, one thread each, sharing what they prove.

The turns of :mod:`mechdesign.solvers.portfolio` run one method at a time. When neither method
gains much from more than one core (a HiGHS simplex beside an interior point whose
factorisation runs on one BLAS thread, the ε-LDP pair, or whose step is bound by memory, the
line's), the turns leave a core idle, and the solve takes the time of the faster method plus
the share the turns gave the slower one. With a core for each, they can run at once: each in
its own thread, with its share of the solver's threads for work it splits
(:func:`~mechdesign.core.threads.limited`), the solve ends when the best design either found
is within the tolerance of the best bound either proved, and it takes about the time of the
faster one alone. (Both release the interpreter's lock while they work: HiGHS in its run, the
interior points in BLAS, LAPACK and their compiled kernels.)

Each method looks whether the race is over between its steps (an interior point's step takes
under a second on 1,000 values), and a HiGHS run in progress is interrupted when the race ends
(it would otherwise run on to its master's optimum, seconds on 1,000 values; giving it slices
of time instead made every resumed run pay its start again, and a large master never
finished). The second method starts :data:`SECOND_START` seconds after the first, so a problem
the first closes at once never allocates the second's arrays. As in the turns, a method that
estimates its one step before it starts (the line's interior point times its factorisations)
waits until the race is that old, or until the others have stopped: the race would otherwise
wait for that step when the other closes the gap during it (a 2,000-point line's step takes
seconds); and a method whose one step would outlast the time limit, or whose estimate declines
(its arrays would not fit in memory), is not started. A method that declines leaves the other
running and keeps its design and bound in the shared best; a failure of any other kind stops
the race and is raised.
"""

from __future__ import annotations

import math
import threading
import time

from mechdesign.core.blas_threads import one_blas_thread
from mechdesign.core.limits import Limits
from mechdesign.core.threads import limited, solver_threads
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.portfolio import FIRST_TURN, Turns, interleave

#: seconds after the first method's start at which the second starts
SECOND_START = FIRST_TURN
#: seconds between a waiting method's looks at whether the others are still running
WAIT_LOOK = 0.02


class Slice:
    """The time a racing method may use: until the solve's deadline or the race's end. Looks
    like a :class:`~mechdesign.core.limits.Limits` to the methods: HiGHS is given
    :meth:`remaining`, and every HiGHS model a method runs is registered by :meth:`watch`, so
    that the race's end interrupts its run."""

    def __init__(self, limits: Limits | None, over: threading.Event, models: "_Models"):
        self.outer, self.over, self.models = limits, over, models
        self.time_limit = None if limits is None else limits.time_limit

    def remaining(self) -> float:
        return math.inf if self.outer is None else self.outer.remaining()

    def expired(self) -> bool:
        return self.over.is_set() or (self.outer is not None and self.outer.expired())

    def watch(self, h) -> None:
        self.models.watch(h)


class _Models:
    """The HiGHS models the racing methods run, interrupted when the race is over: a run in
    progress stops at its next look at the interrupt flag and returns "interrupted" (a method
    takes that as a stop, as it takes the time limit), and every later run stops at once (the
    flag stays set)."""

    def __init__(self, over: threading.Event):
        self.over, self.lock, self.models = over, threading.Lock(), []

    def watch(self, h) -> None:
        with self.lock:
            if not any(h is model for model in self.models):
                h.HandleUserInterrupt = True
                self.models.append(h)
        if self.over.is_set():  # the race ended while it was being registered
            h.cancelSolve()

    def interrupt(self) -> None:
        with self.lock:
            for h in self.models:
                h.cancelSolve()


class _Reporting:
    """The solve's limits with their progress reports taken one at a time (both methods report,
    and the progress display is not made for two threads)."""

    def __init__(self, limits: Limits, lock: threading.Lock):
        self._limits, self._lock = limits, lock

    def report(self, *args) -> None:
        with self._lock:
            self._limits.report(*args)

    def __getattr__(self, name):
        return getattr(self._limits, name)


class _Over(threading.Event):
    """Set when the race is over; setting it interrupts the methods' HiGHS runs."""

    models: _Models | None = None

    def set(self) -> None:
        super().set()
        if self.models is not None:
            self.models.interrupt()


def can_race(methods: int) -> bool:
    """Whether ``methods`` serial methods can each have a thread of their own."""
    return solver_threads() >= methods


def compete(turns: Turns, tol: float, limits: Limits | None, path: list[str],
            accept: float | None = None) -> ContextSolution:
    """:func:`race` when every method may have a thread of its own (:func:`can_race`), else
    :func:`~mechdesign.solvers.portfolio.interleave`. For methods that gain little from more
    threads than their share: a method that splits its work well over every core (the general
    metric's interior point) is faster in turns."""
    run = race if can_race(len(turns.starters)) else interleave
    return run(turns, tol, limits, path, accept)


def race(turns: Turns, tol: float, limits: Limits | None, path: list[str],
         accept: float | None = None) -> ContextSolution:
    """Run ``turns``' methods at once, one thread each, until the shared gap closes to ``tol``
    (relative to max(floor, |value|)) or ``limits`` expire (``stopped=True``: the best design
    so far with the best bound), or, with ``accept``, until a method declines while the shared
    gap is within ``accept``; what happened is appended to ``path``. Raises
    :class:`SolverDeclined` when every method declined (see the module docstring)."""
    over, done, lock = _Over(), threading.Event(), threading.Lock()
    models = _Models(over)
    over.models = models
    finished: list[str] = []  # the methods whose threads have ended (done once all have)
    reporting = None if limits is None else _Reporting(limits, lock)
    ends: dict[str, str] = {}
    failures: list[BaseException] = []

    share = max(solver_threads() // len(turns.starters), 1)  # the threads of each method's split work

    def others_running(name: str) -> bool:
        return any(other not in turns.retired and other not in finished for other in turns.starters if other != name)

    def lane(name: str, delay: float) -> None:
        try:
            if over.wait(delay):
                return
            with limited(share):
                if not turns.admit(name, limits):  # (its one-step estimate on its share)
                    return
                # a method whose one step is estimated to take long waits until the race is
                # that old (as in the turns): a problem the others close within it never waits
                # for that step, and otherwise the wait costs at most one step
                while others_running(name) and time.perf_counter() - begun < turns.step.get(name, 0.0):
                    if over.wait(WAIT_LOOK):
                        return
                while not over.is_set():
                    outcome = turns.play(name, Slice(limits, over, models), reporting, tol)
                    if outcome == "turn over":
                        continue
                    ends[name] = outcome
                    if outcome in ("closed", "expired") or (outcome == "declined" and accept is not None
                                                            and turns.closed(accept)):
                        over.set()
                    return
        except BaseException as failure:  # raised in the caller's thread once the race is over
            failures.append(failure)
            over.set()
        finally:
            with lock:
                if len(turns.retired) == len(turns.starters):
                    over.set()
                finished.append(name)
                if len(finished) == len(turns.starters):
                    done.set()

    turns.raced = True
    begun = time.perf_counter()
    names = list(turns.starters)
    lanes = [threading.Thread(target=lane, args=(name, SECOND_START if k else 0.0), name=f"mechdesign {name}", daemon=True)
             for k, name in enumerate(names)]
    with one_blas_thread():  # every method on one core: the limit is process-wide, set once here
        # waits on an event, not on the threads: an interrupted join leaves a thread that a
        # later join waits for forever (Python 3.11)
        try:
            for thread in lanes:
                thread.start()
            done.wait()
        except BaseException:  # an interrupt in the caller's thread: stop the methods with it
            over.set()
            for thread in lanes:
                if thread.ident is not None:  # started: it ends at its next look
                    thread.join()
            raise
        for thread in lanes:
            thread.join()
    if failures:
        raise failures[0]
    outcomes = set(ends.values())
    if "closed" in outcomes or "expired" in outcomes:
        if turns.best()[0].design() is None:
            raise SolverDeclined("the time limit came before either method had a design")
        return turns.solution("closed" not in outcomes, path)
    if accept is not None and turns.started and turns.closed(accept):
        path.append("a method declined with the shared gap within the tolerance")
        return turns.solution(False, path)
    raise SolverDeclined("; ".join(turns.declined))

