"""What the special solvers that work context by context share: one mechanism per context, with
its objective and proven bound (:class:`ContextSolution`), assembled into the (raw, info) a
solve returns (:func:`solve_contexts`), and the relative gap the tolerances are checked on."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mechdesign.core.limits import TIME_LIMIT, Limits


@dataclass
class ContextSolution:
    """One mechanism from a special solver: the matrix, its objective, a rigorous lower bound on
    the optimum, and the solver's rounds and columns (or rows) for the record."""

    matrix: np.ndarray
    objective: float
    bound: float
    rounds: int
    columns: int
    #: True when the solver stopped at its time limit: the matrix is its best feasible design so
    #: far and ``bound`` the bound its duals proved then
    stopped: bool = False


def solve_contexts(problem, solve_one: Callable[[str, np.ndarray], ContextSolution], name: str,
                   build_seconds: float = 0.0, limits: Limits | None = None):
    """Run ``solve_one(key, cost)`` for every mechanism key of a problem whose objective is a sum
    of linear costs over contexts (``objective.cost(key)``) and whose notion constrains each
    context alone; assemble (raw, info) for :meth:`Problem.finish`. A ``solve_one`` that cannot
    prove an optimum raises :class:`~mechdesign.solvers.highs_model.SolverDeclined`.

    The costs are divided by the objective's magnitude (max |C|, :meth:`Objective.magnitude`)
    before ``solve_one`` sees them — the same minimisers, solved at the solvers' natural scale —
    and the summed bounds are scaled back. Every ``solve_one`` in this package returns a bound
    its duals prove, so the record says ``"bound_proven": True``. When any context stopped at
    the time limit (``ContextSolution.stopped``), the status is "time-limit"."""
    start = time.perf_counter()
    scale = problem.objective.magnitude()
    if limits is not None:
        limits.scale = scale
    raw, bound, rounds, columns, stopped = {}, 0.0, 0, 0, False
    for key in problem.keys:
        found = solve_one(key, problem.objective.cost(key) / scale)
        raw[key] = found.matrix
        bound += found.bound
        rounds += found.rounds
        columns += found.columns
        stopped = stopped or found.stopped
    info = {"status": TIME_LIMIT if stopped else "optimal", "name": name, "compile_seconds": build_seconds,
            "solve_seconds": time.perf_counter() - start, "objective": bound * scale,
            "bound_proven": True, "rounds": rounds, "columns": columns}
    if limits is not None and limits.history:
        info["progress"] = list(limits.history)
    return raw, info


def relative_gap(value: float, bound: float, scale: float) -> float:
    """(value − bound) relative to |value|, or to 1e-6 of the objective's natural scale when the
    value itself is (nearly) zero — a gap of 1e-13 on a loss of 1e-12 is no gap. NaN when
    value or bound is not finite (never within a tolerance)."""
    if not (np.isfinite(value) and np.isfinite(bound)):
        return float("nan")
    return float(max(value - bound, 0.0) / max(abs(value), 1e-6 * abs(scale), 1e-300))
