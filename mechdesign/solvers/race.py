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
the first closes at once never allocates the second's arrays; the first spends those seconds in
the caller's thread (unless it has a one-step estimate, below), so such a problem starts no
thread at all. As in the turns, a method that
estimates its one step before it starts (the line's interior point times its factorisations)
waits until the race is that old, or until the others have stopped: the race would otherwise
wait for that step when the other closes the gap during it (a 2,000-point line's step takes
seconds); and a method whose one step would outlast the time limit, or whose estimate declines
(its arrays would not fit in memory), is not started. A method that declines leaves the other
running and keeps its design and bound in the shared best; a failure of any other kind stops
the race and is raised.

The result is given as soon as the method that ended the race has stopped, when the other is
``interruptible``: a method inside a HiGHS run that takes the end's interrupt only at its next
check (a 2,000-point line's dense master: 0.4 to 4.3 s after the interior point had closed the
gap), and which, interrupted, changes neither its design nor its value (it may still raise its
proven bound). It ends in the background; :func:`finish_lingering` waits for such methods (and
runs at exit, so that no HiGHS run is left when the interpreter shuts down). The race waits for
any other method (an interior point's step in progress ends with a new design).
"""

from __future__ import annotations

import atexit
import math
import threading
import time

from mechdesign.core.blas_threads import one_blas_thread
from mechdesign.core.limits import Limits
from mechdesign.core.threads import limited, solver_threads
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.portfolio import FIRST_TURN, Turn, Turns, interleave

#: seconds after the first method's start at which the second starts
SECOND_START = FIRST_TURN
#: seconds between a waiting method's looks at whether the others are still running
WAIT_LOOK = 0.02
#: the racing methods' threads still taking a race's end after its result was given
_LINGERING: list[threading.Thread] = []


def finish_lingering(timeout: float | None = None) -> bool:
    """Wait (up to ``timeout`` seconds in all) for the threads of methods that were still taking
    a race's end when its result was given; whether none is left."""
    end = None if timeout is None else time.perf_counter() + timeout
    while _LINGERING:
        thread = _LINGERING[0]
        thread.join(None if end is None else max(end - time.perf_counter(), 0.0))
        if thread.is_alive():
            return False
        _LINGERING.remove(thread)
    return True


atexit.register(finish_lingering)


class _End(threading.Event):
    """The race's end, set once: setting it interrupts the HiGHS runs the methods registered
    (:meth:`watch`). A run in progress stops at its next look at the interrupt flag and returns
    "interrupted" (a method takes that as a stop, as it takes the time limit), and every later
    run of that model stops at once (the flag stays set)."""

    def __init__(self):
        super().__init__()
        self._lock, self._models = threading.Lock(), []

    def watch(self, h) -> None:
        with self._lock:
            if not any(h is model for model in self._models):
                h.HandleUserInterrupt = True
                self._models.append(h)
        if self.is_set():  # the race ended while it was being registered
            h.cancelSolve()

    def set(self) -> None:
        super().set()
        with self._lock:
            for h in self._models:
                h.cancelSolve()


class Window:
    """The time a racing method may use: until the solve's deadline or the race's end. Looks
    like a :class:`~mechdesign.core.limits.Limits` to the methods: HiGHS is given
    :meth:`remaining`, and every HiGHS model a method runs is registered by :meth:`watch`, so
    that the race's end interrupts its run."""

    def __init__(self, limits: Limits | None, end: _End):
        self.outer, self.end = limits, end
        self.time_limit = None if limits is None else limits.time_limit

    def remaining(self) -> float:
        return math.inf if self.outer is None else self.outer.remaining()

    def expired(self) -> bool:
        return self.end.is_set() or (self.outer is not None and self.outer.expired())

    def watch(self, h) -> None:
        self.end.watch(h)


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


def can_race(methods: int) -> bool:
    """Whether ``methods`` methods can each have a thread of their own."""
    return solver_threads() >= methods


def compete(turns: Turns, tol: float, limits: Limits | None, path: list[str],
            accept: float | None = None) -> ContextSolution:
    """:func:`race` when every method may have a thread of its own (:func:`can_race`), else
    :func:`~mechdesign.solvers.portfolio.interleave`. For methods that gain little from more
    threads than their share: a method that splits its work well over every core (the general
    metric's interior point) is faster in turns."""
    run = race if can_race(len(turns.starters)) else interleave
    return run(turns, tol, limits, path, accept)


def _alone_first(turns: Turns, tol: float, limits: Limits | None, share: int) -> tuple[str, str] | None:
    """The race's first :data:`SECOND_START` seconds, in the caller's thread: the first method
    runs alone then anyway, and a problem it closes within them would otherwise pay for starting
    and waiting on threads (a 10-point line: 2.4 ms a call with the threads, 1.5 ms without).
    (The method's name, its turn's outcome), or None when there is no such turn: no
    delay before the second, or the first method waits for its one-step estimate in the race."""
    first = next(iter(turns.starters))
    if SECOND_START <= 0.0 or first in turns.latency:
        return None
    with limited(share):
        return first, turns.play(first, Turn(limits, SECOND_START), limits, tol)


def race(turns: Turns, tol: float, limits: Limits | None, path: list[str],
         accept: float | None = None) -> ContextSolution:
    """Run ``turns``' methods at once, one thread each, until the shared gap closes to ``tol``
    (relative to max(floor, |value|)) or ``limits`` expire (``stopped=True``: the best design
    so far with the best bound), or, with ``accept``, until a method declines while the shared
    gap is within ``accept``; what happened is appended to ``path``. Raises
    :class:`SolverDeclined` when every method declined (see the module docstring)."""
    over, lock = _End(), threading.Lock()
    decided = threading.Event()  # set once every method has stopped, or the one that ended the race
    finished: list[str] = []  # the methods whose threads have ended
    endings: dict[str, str] = {}  # the outcomes that ended the solve, by method
    reporting = None if limits is None else _Reporting(limits, lock)
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
                # one play to the end: its window expires only when the race is over
                outcome = turns.play(name, Window(limits, over), reporting, tol)
                if turns.ends(outcome, accept):
                    with lock:
                        endings[name] = outcome
                    over.set()
        except BaseException as failure:  # raised in the caller's thread once the race is over
            failures.append(failure)
            over.set()
        finally:
            with lock:
                if len(turns.retired) == len(turns.starters):
                    over.set()
                finished.append(name)
                if len(finished) == expected or (name in endings and not failures):
                    decided.set()

    begun = time.perf_counter()
    with one_blas_thread():  # every method on one core: the limit is process-wide, set once here
        solo = _alone_first(turns, tol, limits, share)
        if solo is not None and turns.ends(solo[1], accept):
            return turns.conclude(*solo, path)
        turns.raced = True
        second = max(SECOND_START - (time.perf_counter() - begun), 0.0)
        names = [name for name in turns.starters if name not in turns.retired]
        if not names:
            raise SolverDeclined("; ".join(turns.declined))
        expected = len(names)
        lanes = [threading.Thread(target=lane, args=(name, second if k else 0.0), name=f"mechdesign {name}",
                                  daemon=True) for k, name in enumerate(names)]
        # waits on an event, not on the threads: an interrupted join leaves a thread that a
        # later join waits for forever (Python 3.11)
        try:
            for thread in lanes:
                thread.start()
            decided.wait()
        except BaseException:  # an interrupt in the caller's thread: stop the methods with it
            over.set()
            for thread in lanes:
                if thread.ident is not None:  # started: it ends at its next look
                    thread.join()
            raise
        with lock:
            waits = [thread for thread, name in zip(lanes, names)
                     if name in finished or not getattr(turns.started.get(name), "interruptible", False)]
            _LINGERING[:] = [thread for thread in _LINGERING if thread.is_alive()]
            _LINGERING.extend(thread for thread in lanes if thread not in waits)
        for thread in waits:  # (a method that is not interruptible may still change its design)
            thread.join()
        with lock:  # (after the joins: a method waited for may have closed the gap meanwhile)
            ended = dict(endings)
    if failures:
        raise failures[0]
    if ended:  # a closed gap first: another method may have expired or declined meanwhile
        name = min(ended, key=lambda name: ("closed", "expired", "declined").index(ended[name]))
        return turns.conclude(name, ended[name], path)
    raise SolverDeclined("; ".join(turns.declined))
