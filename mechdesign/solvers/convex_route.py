"""The general convex route: a compiled cvxpy program solved by HiGHS (linear programs) or
Clarabel and SCS (conic programs), with what a proven bound needs kept for the certificate.

A solver's "infeasible" is trusted only with a Farkas certificate checked on the data, and never
for a program that one data-independent design satisfies (then it is a numerical failure, and
the LP is solved once more with other settings); "unbounded" never holds for these objectives.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.limits import TIME_LIMIT, Limits, relative_gap
from mechdesign.privacy.coefficients import Coefficients
from mechdesign.solvers.conic_bound import conic_snapshot
from mechdesign.solvers.highs_model import IPM_ITERATION_LIMIT
from mechdesign.solvers.lp_bound import snapshot_from_cache
from mechdesign.solvers.outcome import SolverOutcome

SOLVERS = ("auto", "highs", "clarabel", "scs")
#: Tight HiGHS tolerances: with them round-off gaps shrink to ~1e-9. Every run's interior point
#: stops after IPM_ITERATION_LIMIT iterations (HiGHS's default is unlimited, and on badly scaled
#: pair rows a run was seen never to end); a run stopped there is solved again with other
#: settings (:data:`HIGHS_RETRIES`).
HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9,
                 "ipm_iteration_limit": IPM_ITERATION_LIMIT}
CONIC_ORDER = ("CLARABEL", "SCS")
#: Tight Clarabel tolerances: with the defaults (1e-8) a KL-DistP optimum overshoots ε by ~3e-8,
#: beyond the audit tolerance, and the certificate must then mix in a data-independent mechanism;
#: at 1e-10 the overshoot is ~1e-10 for ~25 % more solve time.
CONIC_OPTIONS = {"CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}}
#: what the second Clarabel run changes when the first one's duals prove too loose a bound:
#: no equilibration (its rescaling can leave duals whose residuals, times the variables' box,
#: keep the proven bound above the gap tolerance; seen on one CPU and not on another for the
#: same KL DistP program)
CONIC_RETRY = {"CLARABEL": {"equilibrate_enable": False}}


def check_solver(solver) -> str:
    """The solver name, or ProblemError naming the expected ones."""
    if solver not in SOLVERS:
        raise ProblemError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}", key="solve.solver")
    return solver


@dataclass
class Program:
    """The compiled convex program and the matrix variables, keyed like the mechanisms."""

    problem: cp.Problem
    variables: dict[str, cp.Variable]
    linear: bool
    build_seconds: float
    #: A cvxpy Solver instance used in place of cp.HIGHS for LPs (None: cp.HIGHS). Sweeps set a
    #: HiGHS interface that starts each simplex from the previous point's basis.
    highs: object = None
    #: the program minimises objective / scale (:meth:`Objective.magnitude`)
    scale: float = 1.0
    #: one data-independent design satisfies every notion (audited), so the program is feasible:
    #: a solver's "infeasible" is then a numerical failure, never the answer
    feasible_by_design: bool = True
    #: the solve's gap tolerance: a conic run whose own proof leaves a larger gap is run again
    gap_tolerance: float = 1e-6
    #: seconds the next solver run may take (None: no limit); set from the solve's Limits
    time_limit: float | None = None
    #: HiGHS options for this program on top of the defaults (a re-solve's other strategy)
    highs_variant: dict = field(default_factory=dict)
    #: the ε-dependent coefficients the program was compiled with: in a parametric compile,
    #: the Parameters :meth:`Coefficients.retarget` moves to another ε
    coefficients: Coefficients = field(default_factory=Coefficients)
    #: the program leaves constraints to the repair step (:attr:`Notion.relaxed`), so that its
    #: value is only a lower bound
    relaxed: bool = False


#: From this many matrix entries on, HiGHS's interior point method (with crossover to a basic
#: solution) replaces the simplex: measured on a 20-profile × 50-category profile LP, the dual
#: simplex took 445 s against 5.3 s for IPM + crossover, for the same optimum.
IPM_FROM_ENTRIES = 40_000


def highs_options(program: Program) -> dict:
    entries = sum(v.size for v in program.variables.values())
    if entries >= IPM_FROM_ENTRIES and program.highs is None:
        return {**HIGHS_OPTIONS, "highs_options": {"solver": "ipm"}}  # nested: "solver" clashes with cvxpy's
    return dict(HIGHS_OPTIONS)


#: HiGHS strategies for re-solving a linear program whose first optimum was certified but not
#: proven within the tolerance (each run in units of the best value so far): the default dual
#: simplex; the interior-point method with crossover (degenerate programs, where the simplex
#: stops at a vertex whose improving direction prices within its tolerance); the primal simplex
#: at tighter tolerances; no presolve. On badly scaled programs
#: (privacy pairs at ε·d ≈ 1e-7 next to chain links of e^20) HiGHS stops at bases whose
#: primal and dual round-off differ from strategy to strategy, so trying several and keeping
#: the best design and the best proven bound closes most gaps.
HIGHS_RESOLVES = (
    {},
    {"solver": "ipm"},
    {"simplex_strategy": 4, "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    {"presolve": "off"},
)

#: the attempts after HiGHS claims an always-feasible LP infeasible or unbounded, in turn until
#: one finds an optimum: no presolve with the primal simplex (the first run used presolve and
#: HiGHS's default strategy), the interior point, no presolve with the dual simplex (ApproxLDP
#: at ε = 19.3 on seven inputs with a prior of masses down to 1e-12: "unbounded" at first,
#: "infeasible" with the primal simplex, optimal with either of the last two)
HIGHS_RETRIES = ({"presolve": "off", "simplex_strategy": 4}, {"solver": "ipm"}, {"presolve": "off"})


def _highs(program: Program, verbose: bool, retry: dict | None = None):
    limit = {} if program.time_limit is None else {"time_limit": program.time_limit}
    if retry:
        program.problem.solve(solver=cp.HIGHS, verbose=verbose,
                              **{**HIGHS_OPTIONS, "highs_options": {**retry, **limit}})
    else:
        options = highs_options(program)
        variant = program.highs_variant
        options.update({k: v for k, v in variant.items() if k in HIGHS_OPTIONS})  # cvxpy's own keys
        extra = {**{k: v for k, v in variant.items() if k not in HIGHS_OPTIONS}, **limit}
        if extra:
            options["highs_options"] = {**options.get("highs_options", {}), **extra}
        program.problem.solve(solver=program.highs or cp.HIGHS, verbose=verbose, **options)


#: the conic solvers' names for a wall-clock limit in seconds
CONIC_TIME_LIMIT = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}


def _conic(name: str) -> Callable:
    def run(program: Program, verbose: bool, retry: bool = False):
        options = {**CONIC_OPTIONS.get(name, {}), **(CONIC_RETRY.get(name, {}) if retry else {})}
        if program.time_limit is not None:
            options[CONIC_TIME_LIMIT[name]] = program.time_limit
        program.problem.solve(solver=name, verbose=verbose, **options)
    return run


def solver_trouble() -> tuple:
    """The exceptions a solver run may raise that mean solver trouble, not bad input."""
    return (cp.SolverError, ValueError, ArithmeticError, RuntimeError, MemoryError)


def _run_once(program: Program, name: str, verbose: bool, retry, record: dict) -> str | None:
    """One solver run; records times and the solver's status in ``record``. Returns an error
    message when the solver raised, else None. ``retry``: HiGHS's options for another attempt
    (:data:`HIGHS_RETRIES`), or, for a conic solver, whether to use :data:`CONIC_RETRY`."""
    prob = program.problem
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (_highs if name == "HIGHS" else _conic(name))(program, verbose, retry)
    except ProblemError:
        raise
    except solver_trouble() as exc:
        return f"{name}: {type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - start
    stats = prob.solver_stats
    solve_s = stats.solve_time if stats and stats.solve_time is not None else None
    compile_s = getattr(prob, "compilation_time", None)
    record.update({
        "name": name,
        "compile_seconds": program.build_seconds + (compile_s or 0.0),
        "solve_seconds": solve_s if solve_s is not None else elapsed - (compile_s or 0.0),
        "solver_status": prob.status,
    })
    return None


def parameter_map(program: Program) -> object | None:
    """The parameter-to-data map cvxpy cached for ``program`` at its first solve (None before,
    and for a program without Parameters): while it stays the same object, re-targeted solves
    reuse it instead of canonicalising the program again. cvxpy keeps it in a private cache,
    which this module alone reads (as it reads the solver cache for the bounds)."""
    cache = getattr(program.problem, "_cache", None)
    return None if cache is None else getattr(cache, "param_prog", None)


def _lp_snapshot(program: Program, retry: bool):
    prob = program.problem
    key = "HIGHS" if retry or program.highs is None else program.highs.name()
    entry = (getattr(prob, "_solver_cache", None) or {}).get(key)
    value = prob.value if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) else None
    return None if entry is None else snapshot_from_cache(entry, value)


def _conic_dual_bound(program: Program, name: str) -> float | None:
    """The conic solver's dual objective (program units), if it reports one."""
    prob = program.problem
    try:
        if name == "CLARABEL":
            sol = prob._solver_cache["CLARABEL"].get_solution()
            primal, dual = sol.obj_val, sol.obj_val_dual
        else:
            found = prob.solver_stats.extra_stats["info"]
            primal, dual = found["pobj"], found["dobj"]
        bound = float(prob.value) - float(primal) + float(dual)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return bound if np.isfinite(bound) else None


def _claims_no_optimum(program: Program, name: str, verbose: bool, record: dict, messages: list) -> str:
    """After an "infeasible" or "unbounded" verdict. For an always-feasible program (one
    data-independent design satisfies every notion) or an unbounded claim (the objectives are
    bounded on row-stochastic matrices) it is a numerical failure: an LP is solved once more
    with other settings (:data:`HIGHS_RETRIES`, in turn), and "solved" is returned once one found
    an optimum. For other programs,
    an LP's infeasibility is reported ("infeasible") only when the solver's dual ray is a
    Farkas certificate on the data (:meth:`LPSnapshot.proves_infeasible`). Otherwise
    "failed", with the reason in ``messages``."""
    prob = program.problem
    verdict = prob.status
    if name != "HIGHS":
        messages.append(f"{name}: claimed {verdict}, not checked")
        return "failed"
    for retry in (None, *HIGHS_RETRIES):
        if retry is not None:
            error = _run_once(program, name, verbose, retry, record)
            if error is None and prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                record["retried"] = f"{verdict} at first; solved again with {retry}"
                return "solved"
            if error is not None:  # (another setting may still succeed)
                messages.append(f"{error} (with {retry})")
                continue
        if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE) and not program.feasible_by_design:
            snapshot = _lp_snapshot(program, retry is not None)
            if snapshot is not None and snapshot.proves_infeasible():
                return "infeasible"
    why = ("the problem is feasible by construction (a data-independent design satisfies every notion)"
           if program.feasible_by_design else "no certificate confirms it")
    messages.append(f"{name}: claimed {verdict}, but {why}")
    return "failed"


def run_solver(program: Program, solver: str, verbose: bool = False,
               limits: Limits | None = None) -> tuple[dict | None, SolverOutcome]:
    """Run the solver(s): (raw matrices or None, :class:`SolverOutcome`).

    Values and bounds are in the objective's units (the program minimises objective /
    ``program.scale``). After an optimum the outcome's ``bound`` is the solver's own value (a
    conic solver's dual objective) and its ``proof`` the standard-form data and duals from
    which :meth:`Problem.finish` proves a bound (:mod:`lp_bound`, :mod:`conic_bound`).

    With ``limits``, each solver run gets the time that is left; a run stopped by it returns
    its last point (certified by the caller) with status "time-limit"."""
    order = _solver_order(program, check_solver(solver))
    record: dict = {"compile_seconds": program.build_seconds}
    messages: list[str] = []
    for name in order:
        if limits is not None and limits.time_limit is not None:
            if limits.expired():
                record["name"] = name
                return None, _outcome(program, TIME_LIMIT, record, "no time left for the solver")
            program.time_limit = limits.remaining()
        error = _run_once(program, name, verbose, False, record)
        if error is not None:
            messages.append(error)
            if name != "HIGHS" or not _solved_again(program, name, verbose, record, messages, "raised an error",
                                                    limits):
                continue
        prob = program.problem
        if prob.status == cp.USER_LIMIT and _timed_out(program, limits):
            return _values(program), _outcome(program, TIME_LIMIT, record, f"{name} stopped at the time limit")
        if prob.status == cp.USER_LIMIT and not _solved_again(program, name, verbose, record, messages,
                                                              "stopped at HiGHS's iteration limit", limits):
            continue
        if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
            verdict = _claims_no_optimum(program, name, verbose, record, messages)
            if verdict == "infeasible":
                return None, _outcome(program, "infeasible", record, infeasibility_proven=True)
            if verdict != "solved":
                continue
        values = _values(program)
        if values is None:
            messages.append(f"{name}: status {prob.status}, no solution")
            continue
        if name in CONIC_RETRY:
            return _better_conic_run(program, name, verbose, record, values, limits)
        return values, _optimum(program, name, record)
    record.setdefault("name", order[-1])
    return None, _outcome(program, "failed", record, "; ".join(messages) or "no solver produced a solution")


def _timed_out(program: Program, limits: Limits | None) -> bool:
    """Whether a run that stopped at a limit (cvxpy's "user_limit") stopped at the time limit,
    not at HiGHS's iteration limit."""
    return program.time_limit is not None and limits is not None and limits.expired()


def _solved_again(program: Program, name: str, verbose: bool, record: dict, messages: list, why: str,
                  limits: Limits | None = None) -> bool:
    """After HiGHS stopped at its iteration limit or raised (``why``): the LP solved again with
    other settings (:data:`HIGHS_RETRIES`, in turn, each within the time left of ``limits``),
    True once one found an optimum. A conic solver is not retried. (30 haversine locations at
    ε = 0.005 per km with a worst-case loss, links of e^10 up to ε·d = 100: HiGHS's default run
    raised, and so did the primal simplex without presolve; the interior point solved it, where
    the run had ended with the data-independent design, 4.3 times the optimum.)"""
    if name != "HIGHS":
        messages.append(f"{name}: stopped at its iteration limit")
        return False
    for retry in HIGHS_RETRIES:
        if limits is not None and limits.time_limit is not None:
            if limits.expired():
                return False
            program.time_limit = limits.remaining()
        error = _run_once(program, name, verbose, retry, record)
        if error is None and program.problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            record["retried"] = f"{why} at first; solved again with {retry}"
            return True
        messages.append(error or f"{name}: status {program.problem.status} (with {retry})")
    return False


def _proof_gap(program: Program, outcome: SolverOutcome) -> float:
    """The relative gap between the run's own value and the bound its duals prove (inf without
    a proof)."""
    value = float(program.problem.value) * program.scale
    gap = relative_gap(value, outcome.proven_bound(value), 0.0)
    return gap if np.isfinite(gap) else np.inf


def _better_conic_run(program: Program, name: str, verbose: bool, record: dict, values: dict,
                      limits: Limits | None) -> tuple[dict, SolverOutcome]:
    """The first conic optimum, or, when the bound its duals prove is not within the
    program's gap tolerance, the better proven of it and one more run with :data:`CONIC_RETRY`'s
    options (time permitting)."""
    first = _optimum(program, name, record)
    first_gap = _proof_gap(program, first)
    if first_gap <= program.gap_tolerance or (limits is not None and limits.expired()):
        return values, first
    again: dict = {}
    if _run_once(program, name, verbose, True, again) is None and program.problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        second_values = _values(program)
        if second_values is not None:
            again["retried"] = f"solved again with {CONIC_RETRY[name]} (the first run's proof left a gap of {first_gap:.2g})"
            second = _optimum(program, name, {**record, **again})
            if _proof_gap(program, second) < first_gap:
                return second_values, second
    return values, first


def _values(program: Program) -> dict[str, np.ndarray] | None:
    """The matrix variables' values, or None when the solver left any (or the value) unset."""
    values = {k: v.value for k, v in program.variables.items()}
    if program.problem.value is None or any(v is None for v in values.values()):
        return None
    return values


def _outcome(program: Program, status: str, record: dict, message: str = "", **fields) -> SolverOutcome:
    """The outcome of the general route, its record saying whether the program was relaxed."""
    return SolverOutcome(status, {**record, "relaxed": program.relaxed}, message, **fields)


def _optimum(program: Program, name: str, record: dict) -> SolverOutcome:
    """The outcome of a run that ended optimal: the solver's value as its bound (a conic
    solver's dual objective when it reports one) and the data to prove a bound from."""
    prob = program.problem
    bound = float(prob.value) * program.scale
    if name == "HIGHS":
        proof = _lp_snapshot(program, "retried" in record)
        if proof is not None:  # duals that do not prove the optimum to the tolerance are refined
            proof.refine_above, proof.refine_seconds = program.gap_tolerance, program.time_limit
    else:
        dual = _conic_dual_bound(program, name)
        bound = dual * program.scale if dual is not None else bound
        proof = conic_snapshot(prob, name)
    return _outcome(program, "optimal", record, bound=bound, proof=proof, scale=program.scale)


def _solver_order(program: Program, solver: str) -> list[str]:
    if solver == "auto":
        return ["HIGHS"] if program.linear else list(CONIC_ORDER)
    if solver == "highs" and not program.linear:
        raise ProblemError("the 'highs' solver handles linear programs only; this problem is conic",
                           key="solve.solver")
    return [solver.upper()]
