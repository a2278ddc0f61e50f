"""What the special solvers that work context by context share: one mechanism per context, with
its objective and proven bound (:class:`ContextSolution`), assembled into the (raw, outcome) a
solve returns (:func:`solve_contexts`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mechdesign.core.limits import TIME_LIMIT, Limits
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.max_of_costs import UNIT_ROUNDOFF, costs_of, least_value, scaling_error
from mechdesign.solvers.outcome import SolverOutcome

#: the smallest relative gap an exact context solve aims at
EXACT_AIM = 1e-9
#: the share of the problem's tolerance that :func:`aimed_gap` aims at and :func:`accepted_gap` allows
DECLINE_SHARE = 0.9


def aimed_gap(tolerance: float) -> float:
    """The relative gap a context's solve aims at for a problem's gap ``tolerance``:
    :data:`DECLINE_SHARE` of it (the rest is margin for the certificate, which re-measures the
    value on the returned design and rounds the summed bounds down: round-off, far below a tenth
    of any tolerance), never below :data:`EXACT_AIM`. Working on past the tolerance asked for
    costs an interior point its slowest steps: on 1,000 values its last steps from 1e-6 to 1e-9
    took seconds; aiming at half the tolerance, as before, cost a 2,000-point line three steps
    (from 9.6e-7 to 4.9e-7) and a 40 × 40 grid two steps of 12 s."""
    return max(DECLINE_SHARE * tolerance, EXACT_AIM)


def accepted_gap(tolerance: float) -> float:
    """The relative gap at which a context's solve ends when one of its methods can go no
    further: :data:`DECLINE_SHARE` of the problem's ``tolerance``, as :func:`aimed_gap` (the
    rest is margin for the certificate's re-measurement, which changes the gap by round-off),
    without its floor. Half of it, as before, kept a 40 × 40 grid running 540 s past an interior
    point that had proven 7.6e-7 and declined on memory."""
    return DECLINE_SHARE * tolerance


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


def run_to_proof(run, name: str, limits: Limits | None) -> ContextSolution:
    """Step ``run`` (an interior point: ``advance``, ``done``, ``result``) until it is done or
    ``limits``' deadline passes (``stopped=True``), reporting its progress under ``name``."""
    while not run.done:
        if limits is not None:
            limits.report(name, run.rounds, run.value, run.bound)
            if limits.expired():
                return run.result(stopped=True)
        run.advance()
    return run.result()


def solve_contexts(problem, solve_one: Callable[[str, np.ndarray], ContextSolution], name: str,
                   build_seconds: float = 0.0, limits: Limits | None = None):
    """Run ``solve_one(key, cost)`` for every mechanism key of a problem whose objective is a sum
    of linear costs over contexts (``objective.cost(key)``), or the largest of a few linear costs
    of one mechanism (a :class:`~mechdesign.solvers.max_of_costs.MaxOfCosts`), and whose notion
    constrains each context alone; assemble (raw, :class:`SolverOutcome`) for
    :meth:`Problem.finish`. A ``solve_one`` that cannot prove an optimum raises
    :class:`~mechdesign.solvers.highs_model.SolverDeclined`.

    The costs are divided by the power of two nearest the objective's magnitude (max |C|,
    :meth:`Objective.magnitude`), exactly, before ``solve_one`` sees them — the same
    minimisers, solved at the solvers' natural scale — and the summed bounds are scaled back,
    rounded down (:func:`proven_total`); never below the
    optimum without privacy (Σ_x min_y C[x, y] for a sum, so 0 for non-negative losses). Every
    ``solve_one`` in this package returns a bound its duals prove, so the outcome's bound is
    proven. When any context stopped at the time limit
    (``ContextSolution.stopped``), the status is "time-limit"."""
    start = time.perf_counter()
    scale = power_of_two(problem.objective.magnitude())
    if limits is not None:
        limits.scale = scale
    raw, bounds, floors, rounds, columns, stopped = {}, [], [], 0, 0, False
    for key in problem.keys:
        original = costs_of(problem.objective, key)
        floors.append(least_value(original))
        cost = original / scale
        found = solve_one(key, cost)
        bounds_here = [found.bound, -scaling_error(cost, original, scale)]
        if _gap_open(problem, found) and not (limits is not None and limits.expired()):
            found, bounds_here = _again_in_units_of_value(key, original, scale, found, bounds_here, solve_one, limits)
        raw[key] = found.matrix
        bounds += bounds_here
        rounds += found.rounds
        columns += found.columns
        stopped = stopped or found.stopped
    record = {"name": name, "compile_seconds": build_seconds, "solve_seconds": time.perf_counter() - start,
              "rounds": rounds, "columns": columns}
    if limits is not None and limits.history:
        record["progress"] = list(limits.history)
    bound = max(proven_total(bounds, scale), proven_total(floors, 1.0))
    return raw, SolverOutcome(TIME_LIMIT if stopped else "optimal", record, bound=bound, bound_proven=True)


def _gap_open(problem, found: ContextSolution) -> bool:
    value = found.objective
    return (not found.stopped and math.isfinite(value) and value > 0
            and value - found.bound > problem.gap_tolerance * value)


def _again_in_units_of_value(key, original, scale, found, bounds_here, solve_one, limits):
    """A context whose proven gap stayed open, solved once more on the costs divided by the
    value found (v) instead of by their largest entry (s): the solvers' absolute tolerances
    (HiGHS's 1e-9 on reduced costs) then meet the optimum at its own size, where at large ε or
    with a concentrated prior the largest cost can be 1e4 times the optimum. Returns the better
    design (as a ContextSolution in units of s) and the better of the two runs' bound terms
    (each a proof on its own; the second run's are converted to units of s rounded down)."""
    value = power_of_two(found.objective * scale)
    finer = original / value
    if limits is not None:
        limits.scale = value
    try:
        again = solve_one(key, finer)
    except SolverDeclined:
        return found, bounds_here
    finally:
        if limits is not None:
            limits.scale = scale
    ratio = value / scale
    terms = [_down(again.bound * ratio), -_up(scaling_error(finer, original, value) * ratio)]
    if math.fsum(terms) > math.fsum(bounds_here):
        bounds_here = terms
    objective = again.objective * ratio
    if objective < found.objective:
        found = ContextSolution(again.matrix, objective, min(found.objective, objective), found.rounds + again.rounds,
                                max(found.columns, again.columns), again.stopped)
    else:
        found.rounds += again.rounds
        # the second run ended at the time limit: so did the solve, whichever design is kept
        found.stopped = found.stopped or again.stopped
    return found, bounds_here


def _down(x: float) -> float:
    """x lowered past the round-off of the two products that made it (4u of its magnitude)."""
    return x - 4 * UNIT_ROUNDOFF * abs(x)


def _up(x: float) -> float:
    return x + 4 * UNIT_ROUNDOFF * abs(x)


def power_of_two(x: float) -> float:
    """The power of two nearest to ``x`` > 0 on a log scale (1 for 0, a negative or a non-finite
    ``x``): costs divided by it are exact in floating point unless they leave its range."""
    if not (math.isfinite(x) and x > 0):
        return 1.0
    mantissa, exponent = math.frexp(x)  # x = mantissa·2^exponent, 0.5 <= mantissa < 1
    return math.ldexp(1.0, exponent if mantissa >= math.sqrt(0.5) else exponent - 1)


def proven_total(terms: list[float], scale: float) -> float:
    """scale·Σ terms rounded down: a lower bound, in exact arithmetic, on the sum of the
    per-context lower bounds ``terms`` times ``scale``. math.fsum rounds the sum correctly
    (error at most u|Σ|, u the unit round-off), so subtracting 2u·Σ|terms| (the sum of
    magnitudes is itself rounded correctly) covers it and the subtraction's own rounding; the
    product with ``scale`` rounds once more, by at most u of its magnitude, and 2u of it is
    subtracted likewise."""
    total = math.fsum(terms) - 2 * UNIT_ROUNDOFF * math.fsum(abs(t) for t in terms)
    scaled = total * scale
    return scaled - 2 * UNIT_ROUNDOFF * abs(scaled)
