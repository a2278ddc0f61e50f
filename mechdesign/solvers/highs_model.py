"""HiGHS models built directly (highspy, no cvxpy) by the structured solvers: one way to make
one, one way to give it the time a deadline leaves, and one way to run it to an optimum."""

from __future__ import annotations

import os
import sys

import highspy
import numpy as np

INF = highspy.kHighsInf
#: the structured solvers' feasibility tolerances: their bounds and certificates are checked
#: to ~1e-9, so the LPs are solved an order tighter than HiGHS's defaults (1e-7)
TOLERANCE = 1e-10
#: the fewest seconds a HiGHS solve is given under a deadline (so that it can return a basis)
MIN_SECONDS = 0.05


def _swallow_banner() -> None:
    """HiGHS (from 1.16) prints a banner on standard output when the first model of a process is
    made, before any option can turn output off; that would corrupt ``--json`` output. Make that
    first model here with file descriptor 1 pointed at the null device."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable standard output: nothing to protect
        highspy.Highs()
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


_swallow_banner()


#: interior-point iterations of one HiGHS run at most (HiGHS's default is unlimited). Its
#: interior point converges in tens of iterations; on a 72-column LP with pair rows up to
#: e^98 (four points at ε = 27, one of them of prior 0) it never returned. A run that reaches
#: the limit ends "iteration limit", which every caller takes as a run without an optimum.
IPM_ITERATION_LIMIT = 1000


def quiet_model(*, tolerance: float | None = TOLERANCE, warm: bool = False, **options) -> highspy.Highs:
    """A silent HiGHS model with primal and dual feasibility ``tolerance`` (None: HiGHS's
    defaults) and at most :data:`IPM_ITERATION_LIMIT` interior-point iterations a run. ``warm``
    turns presolve off, so that re-solves after changing costs or adding rows or columns start
    from the previous basis. Other options are set as given."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("ipm_iteration_limit", IPM_ITERATION_LIMIT)
    if tolerance is not None:
        options = {"primal_feasibility_tolerance": tolerance, "dual_feasibility_tolerance": tolerance, **options}
    if warm:
        options = {"presolve": "off", **options}
    for name, value in options.items():
        h.setOptionValue(name, value)
    return h


def give_time(h: highspy.Highs, limits) -> None:
    """Give the HiGHS model ``h`` the time the ``limits`` (a
    :class:`~mechdesign.core.limits.Limits`, or None) have left (HiGHS option "time_limit"), so
    that one long solve cannot overrun the deadline by much. HiGHS measures that limit on its
    own run clock, which accumulates over every run of the model, so the limit set is the
    clock's reading plus the time left (at least MIN_SECONDS). Limits without a time limit lift
    any limit an earlier run was given (a method run alone first, then in a race)."""
    watch = getattr(limits, "watch", None)
    if watch is not None:  # the limits can also end the run early (methods racing: the race's end)
        watch(h)
    if limits is None or limits.time_limit is None:
        h.setOptionValue("time_limit", highspy.kHighsInf)
        return
    h.setOptionValue("time_limit", float(h.getRunTime()) + max(float(limits.remaining()), MIN_SECONDS))


class SolverDeclined(Exception):
    """A structured solver could not produce a proven optimum (HiGHS rejected a model update,
    stopped short of optimality, ...). ``reason`` says why; the caller passes the problem on to
    the general route and records the reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def checked(status, what: str) -> None:
    """Raise :class:`SolverDeclined` when a HiGHS call returned an error status."""
    if status == highspy.HighsStatus.kError:
        raise SolverDeclined(f"HiGHS rejected {what}")


#: the ends of a run that stopped early, not at an answer: the time limit, or an interrupt (a
#: race that is over, :mod:`mechdesign.solvers.race`)
STOPPED = (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt)


def resumable_run(h: highspy.Highs) -> highspy.HighsModelStatus:
    """Run; a run stopped early (:data:`STOPPED`) is left as it is (the next run resumes from its
    basis), any other non-optimal end starts once more without the warm basis. The model
    status."""
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal and status not in STOPPED:
        h.clearSolver()
        h.run()
        status = h.getModelStatus()
    return status


def run_to_optimum(h: highspy.Highs) -> bool:
    """Run (:func:`resumable_run`: after a non-optimal status other than the time limit, once
    more without the warm basis, which can lead the simplex astray: seen at k = 2000 in column
    generation and in cone pricing). Whether the model is optimal."""
    return resumable_run(h) == highspy.HighsModelStatus.kOptimal


def basic_columns(h: highspy.Highs) -> tuple[np.ndarray, np.ndarray] | None:
    """The solved model's basis as (mask of its basic columns, mask of its basic rows), read in
    one call (``getBasicVariables``: per basis position a column x >= 0 or a row r as −(r + 1));
    None without a valid basis."""
    status, order = h.getBasicVariables()
    order = np.asarray(order)
    if status != highspy.HighsStatus.kOk or order.size != h.getNumRow():
        return None
    columns = np.zeros(h.getNumCol(), dtype=bool)
    columns[order[order >= 0]] = True
    rows = np.zeros(order.size, dtype=bool)
    rows[-order[order < 0] - 1] = True
    return columns, rows
