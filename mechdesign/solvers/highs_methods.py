"""Which HiGHS method solves an LP that is solved again and again as rows are added: the
interior-point method with crossover from scratch, or the dual simplex from the last basis
(:class:`Method`, :func:`run_method`), and the two at once for a first solve
(:func:`race_methods`).

Neither method is faster everywhere. The first LP of a grid at small ε with lazy pair rows took
3.6 s by the interior point against 29 s by the dual simplex; the worst-case loss over 200
points of a line (a maximum of costs, through its epigraph) took 30 s by the dual simplex, while
the interior point ended imprecise after 114 s and its clean-up failed. Where no measured rule tells them apart, both run at once, one thread each.
"""

from __future__ import annotations

import queue
import threading
import time

import highspy

from mechdesign.solvers.highs_model import give_time, quiet_model, run_to_optimum


class Method:
    """Which HiGHS method solves the next lazy LP: the interior-point method with crossover
    from scratch, or the dual simplex warm-started from the last basis. The first LP is solved
    by the former (unless ``interior`` is False); afterwards the next one uses whichever took
    less time the last time each was run (the dual simplex while it has not been timed yet)."""

    def __init__(self, interior: bool = True):
        self.interior, self.seconds = interior, {"ipm": None, "simplex": None}

    def apply(self, h) -> None:
        h.setOptionValue("solver", "ipm" if self.interior else "simplex")
        h.setOptionValue("presolve", "on" if self.interior else "off")

    def observe(self, h, seconds: float) -> None:
        """Record how long the solve just run took; choose (and set) the next one's method."""
        self.seconds["ipm" if self.interior else "simplex"] = seconds
        ipm, simplex = self.seconds["ipm"], self.seconds["simplex"]
        self.interior = simplex is not None and ipm is not None and simplex > ipm
        self.apply(h)


def run_method(h, method: Method) -> bool:
    """Run the model to an optimum; when the chosen method ends without one, the other method
    once, from scratch and with presolve (an imprecise interior point whose clean-up fails, or
    a simplex lost on a badly scaled basis: seen with pairs near e^20 at ε = 40 on the unit
    square). Whether the model is optimal; the chosen method's options are restored."""
    if run_to_optimum(h):
        return True
    h.setOptionValue("solver", "simplex" if method.interior else "ipm")
    h.setOptionValue("presolve", "on")
    h.clearSolver()
    h.run()
    method.apply(h)
    return h.getModelStatus() == highspy.HighsModelStatus.kOptimal


def race_methods(h, method: Method, limits=None) -> tuple[highspy.Highs, bool]:
    """Solve the model ``h`` from scratch by both methods at once, when two threads are free
    (:func:`~mechdesign.solvers.race.can_race`): the interior point with crossover on ``h``,
    the dual simplex on a copy, each with presolve and under the time ``limits`` leave. The
    first to end optimal interrupts the other, which is dropped. Returns the model that holds
    the optimum (``h`` or the copy: the caller goes on with it, from its basis) and whether it
    is optimal; ``method`` records the winner's time and is set for the next solve, the warm
    dual simplex (as after an interior point's first LP: it is timed against it); ``h`` and
    False when neither ends optimal. Without two threads, as :func:`run_method` on ``h``."""
    from mechdesign.solvers.race import can_race

    if not can_race(2):
        give_time(h, limits)
        return h, run_method(h, method)
    copy = quiet_model(warm=True)
    copy.passModel(h.getLp())
    models = {"ipm": h, "simplex": copy}
    for name, model in models.items():
        model.setOptionValue("solver", name)
        model.setOptionValue("presolve", "on")
        model.HandleUserInterrupt = True  # the loser is interrupted, and dropped
        give_time(model, limits)
    ended: queue.Queue = queue.Queue()

    def run(name: str) -> None:
        try:
            models[name].run()
        finally:
            ended.put(name)

    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(name,), daemon=True) for name in models]
    for thread in threads:
        thread.start()
    winner = None
    for _ in models:
        name = ended.get()
        if models[name].getModelStatus() == highspy.HighsModelStatus.kOptimal:
            winner = name
            break
    for name, model in models.items():
        if winner is not None and name != winner:
            model.cancelSolve()  # (the flag stays set: a model interrupted is never run again)
    for thread in threads:
        thread.join()  # the loser ends at its next look at the interrupt
    seconds = time.perf_counter() - started
    if winner is None:
        method.apply(h)
        return h, False
    method.seconds = {"ipm": None, "simplex": None, winner: seconds}
    method.interior = False  # the warm dual simplex next, timed against the winner's first LP
    model = models[winner]
    method.apply(model)
    return model, True
