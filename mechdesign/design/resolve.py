"""Re-solving a program whose certified optimum could not be proven within tolerance.

The general route divides the costs by their largest magnitude, so that HiGHS's absolute
tolerances (1e-9) meet the objective at its natural scale. When the optimum is many orders of
magnitude below that scale — near-coincident points under a squared loss, a prior concentrated
where the privacy constraints barely bind, ε large — those tolerances are coarse against the
optimum itself: the design HiGHS returns can be several times the optimum (certified private,
but not optimal), or its duals prove a bound 1e-5 short of it. Solving again with the costs in
units of the value just found puts the tolerances where the optimum is.

Each re-solve tries another HiGHS strategy (:data:`HIGHS_RESOLVES`) in units of the best value
so far; the best certified design and the best proven bound are kept — a bound proven on any
run bounds the optimum, so it serves every design — until the gap is within the tolerance, the
strategies are exhausted, or the time limit leaves no room. Each run is held to a budget of
:data:`BUDGET_FACTOR` times the first run's seconds (at least :data:`BUDGET_FLOOR`), within the
solve's own limit: a strategy should cost what the first did, but HiGHS's interior point never
returned on some badly scaled LPs (four inputs under ε-LDP at ε = 28, coefficients e^28, in units
of a value of 3e-12). A run stopped by its budget contributes only a bound it proves.

A conic program (Clarabel or SCS) is solved again in units of its value, for the same reason:
Clarabel's absolute tolerances (1e-10) meet an optimum of 1e-7 at three digits, and its duals
prove a bound 1e-4 (relative) short of it. Solved again in units of the best value so far
(twice, :data:`CONIC_RESOLVES`), about half of such programs close their gap (random
divergence and information notions with optima from 1e-10 to 1e-2); on the others a run's
design can be worse, and the best design and bound of all the runs are kept.

When every strategy has left the gap open on a problem with one ε·d-privacy notion and an
expected loss, solved with the default solver, the d-privacy interior point runs last, held to
the same budget (:mod:`~mechdesign.solvers.metric_interior_route`): its Lagrangian bound needs no
accurate duals
(15 points of a path at ε = 13 with a prior of masses down to 1e-28: HiGHS's design optimal to
3e-10 but its own duals' bound 1.7e-6 short in every strategy; the interior point proves 1e-10,
as do HiGHS's duals once refined, :mod:`~mechdesign.solvers.dual_refinement`).

A special solver's certified design whose gap alone failed, on a problem small enough for the
general route's LP to be as fast, is followed by the general route with the same budget
(:func:`after_special_solver`).
"""

from __future__ import annotations

import math

from mechdesign.core.limits import Limits, relative_gap
from mechdesign.design.program_size import ProgramTooLarge
from mechdesign.design.result import Result
from mechdesign.solvers import metric_interior_route
from mechdesign.solvers.convex_route import HIGHS_RESOLVES, run_solver
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.predicates import GENERAL_MIN_INPUTS

#: the runs of a conic program in units of the best value so far (a second run in the units
#: of a value the first improved closed one more of 43 gaps in the random-notions benchmark)
CONIC_RESOLVES = 2
#: a re-solve may take this many times the seconds the first run took (compiling and solving)
BUDGET_FACTOR = 10.0
#: and at least this many seconds
BUDGET_FLOOR = 5.0


#: the general route's solvers whose results are re-solved (HiGHS in each of its strategies,
#: a conic solver :data:`CONIC_RESOLVES` times)
RESOLVED = ("HIGHS", "CLARABEL", "SCS")


def needs_resolve(result: Result) -> bool:
    """Whether a general-route result is a certified design whose gap alone failed."""
    record = result.solver
    return (result.status == "failed" and bool(result.mechanisms) and record.get("name") in RESOLVED
            and all(a.holds for a in result.certificate) and "fallback" not in record
            and result.objective is not None and math.isfinite(result.objective) and result.objective > 0)


def after_special_solver(problem, result: Result, limits: Limits) -> Result:
    """A special solver's ``result``: as it is, or, when it is a certified design whose proven
    gap alone failed on a problem of fewer than
    :data:`~mechdesign.solvers.predicates.GENERAL_MIN_INPUTS` inputs (where the general route's
    LP is as fast as the special solvers), the better of it and the general route's design, held
    to the re-solves' budget, with the better of their bounds (each is proven for the same
    optimum). ``solver["resolves"]`` lists the run (14 grid points at ε = 20 under a worst-case
    loss: the LP with lazy pair rows left its design 0.26 % above the optimum, which the general
    route's LP proves)."""
    record = result.solver
    if (result.status != "failed" or not result.mechanisms or not all(a.holds for a in result.certificate)
            or "fallback" in record or record.get("name") in RESOLVED or len(problem.inputs) >= GENERAL_MIN_INPUTS
            or problem.objective.sense != "minimize" or limits.expired()):
        return result
    first = float(record.get("compile_seconds") or 0.0) + float(record.get("solve_seconds") or 0.0)
    budget = max(BUDGET_FACTOR * first, BUDGET_FLOOR)
    runs: list[dict] = []
    try:
        program = problem.compile(scaled=True)
    except ProgramTooLarge as exc:
        record["resolves"] = [{"route": "general convex route", "status": f"not compiled: {exc}"}]
        return result
    own = Limits(min(budget, limits.remaining()))
    raw, outcome = run_solver(program, "auto", False, own)
    attempt = problem.finish(raw, outcome, limits)
    if needs_resolve(attempt):  # (its own re-solves in units of its value, within the same budget)
        attempt = resolve_in_units_of_value(problem, attempt, "auto", False, own)
    attempt.solver["special_solvers"] = record.get("special_solvers")  # (what was tried before it)
    best, _ = _judge(problem, attempt, result, _proven_bound(result), budget, limits, runs,
                     {"route": "general convex route", "resolves": attempt.solver.get("resolves")})
    best.solver["resolves"] = runs
    return best


def resolve_in_units_of_value(problem, result: Result, solver: str, verbose: bool, limits: Limits) -> Result:
    """The best of ``result`` and re-solves of ``problem`` in units of the best value (see the
    module docstring); the returned result's ``solver["resolves"]`` lists each run."""
    best, bound = result, _proven_bound(result)
    first = float(result.solver.get("compile_seconds") or 0.0) + float(result.solver.get("solve_seconds") or 0.0)
    budget = max(BUDGET_FACTOR * first, BUDGET_FLOOR)
    runs = []
    linear = result.solver.get("name") == "HIGHS"
    for variant in HIGHS_RESOLVES if linear else ({},) * CONIC_RESOLVES:
        if limits.expired() or best.status == "optimal" or not best.objective > 0:
            break  # (a value of 0 has no units to solve in)
        program = problem.compile(scale=best.objective)
        program.highs_variant = dict(variant)
        raw, outcome = run_solver(program, solver, verbose, Limits(min(budget, limits.remaining())))
        best, bound = _judge(problem, problem.finish(raw, outcome, limits), best, bound, budget, limits,
                             runs, {"scale": best.objective, **({"options": dict(variant)} if linear else {})})
    if (linear and solver == "auto" and best.status != "optimal" and not limits.expired()
            and metric_interior_route.applies(problem) is None):  # (a solver named is used alone)
        name = metric_interior_route.NAME
        try:
            own = Limits(min(budget, limits.remaining()))
            raw, outcome = metric_interior_route.metric_by_interior_point(problem, own)
        except SolverDeclined as declined:
            runs.append({"route": name, "status": f"declined: {declined.reason}"})
        else:
            best, bound = _judge(problem, problem.finish(raw, outcome, limits), best, bound, budget, limits, runs,
                                 {"route": name})
    best.solver["resolves"] = runs
    return best


def _judge(problem, attempt: Result, best: Result, bound: float, budget: float, limits: Limits, runs: list,
           entry: dict) -> tuple[Result, float]:
    """(the better of ``best`` and ``attempt``, the better bound), both judged against the best
    proven bound, the run recorded in ``runs`` under ``entry``. A run stopped by its ``budget``
    (not by ``limits``) contributes only the bound it proves."""
    cut = attempt.status == "time-limit" and not limits.expired()
    runs.append({**entry, "status": f"stopped after its budget of {budget:.3g} s" if cut else attempt.status,
                 "objective": attempt.objective, "bound": attempt.solver.get("bound")})
    bound = max(bound, _proven_bound(attempt))
    best = _with_bound(problem, best, bound)  # (the design kept may be the better one, proven now)
    if not cut and _better(attempt, best):
        attempt.solver.setdefault("special_solvers", best.solver.get("special_solvers"))
        best = attempt
    return _with_bound(problem, best, bound), bound


def _proven_bound(result: Result) -> float:
    bound = result.solver.get("bound")
    if bound is None or not result.solver.get("bound_proven") or not math.isfinite(bound):
        return -math.inf
    return float(bound)


def _better(attempt: Result, best: Result) -> bool:
    """A certified design with a lower objective (or the same and a proven optimum)."""
    if not attempt.mechanisms or not all(a.holds for a in attempt.certificate):
        return False
    if attempt.objective is None or not math.isfinite(attempt.objective):
        return False
    return attempt.objective < best.objective or (attempt.status == "optimal" and best.status != "optimal")


def _with_bound(problem, result: Result, bound: float) -> Result:
    """``result`` judged against ``bound`` when it is better than its own: a certified design
    (every audit holds) within the tolerance of a proven bound is optimal."""
    if not math.isfinite(bound) or bound <= _proven_bound(result):
        return result
    gap = relative_gap(result.objective, bound, problem.objective_scale())
    result.solver.update({"bound": bound, "bound_proven": True, "gap": gap})
    if result.status == "failed" and gap <= problem.gap_tolerance:
        result.status, result.message = "optimal", ""
    elif result.status == "failed":
        result.message = (f"the mechanism is certified private but its optimality gap {gap:.3g} exceeds "
                          f"the tolerance {problem.gap_tolerance:g}")
    return result
