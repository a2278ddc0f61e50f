"""A design problem: domains, contexts, privacy notions and an objective; compiled to a convex
program, solved, and certified (DESIGN §1–4)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import cvxpy as cp
import numpy as np

from . import highs_model  # noqa: F401  (silences the HiGHS banner before any solve)
from .certify import certify
from .domain import Domain
from .errors import ProblemError
from .mechanism import Mechanism
from .objectives import Objective
from .privacy.base import DEFAULT, Notion
from .result import Result

SOLVERS = ("auto", "highs", "clarabel", "scs")
#: Tight HiGHS tolerances: round-off gaps shrink to ~1e-9 (MEASUREMENTS "Numerical hazard").
HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}
CONIC_ORDER = ("CLARABEL", "SCS")
#: Tight Clarabel tolerances: with the defaults (1e-8) a KL-DistP optimum overshoots ε by ~3e-8,
#: beyond the audit tolerance, and the certificate must then mix in a data-independent mechanism;
#: at 1e-10 the overshoot is ~1e-10 for ~25 % more solve time.
CONIC_OPTIONS = {"CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}}


#: Special-cased solvers (couplings, structured LPs at scale): each takes a Problem and returns
#: (raw matrices, info) when it solves that problem exactly, or None to pass. ``info`` holds
#: "status", "name", "compile_seconds", "solve_seconds" and, when known, "objective" (the
#: solver's optimal value or dual bound). Used when the problem's solver is "auto".
SPECIAL_SOLVERS: list[Callable[["Problem"], tuple[dict, dict] | None]] = []


def register_special_solver(fn):
    SPECIAL_SOLVERS.append(fn)
    return fn


@dataclass
class ContextSolution:
    """One mechanism from a special solver: the matrix, its objective, a rigorous lower bound on
    the optimum, and the solver's rounds and columns (or rows) for the record."""

    matrix: np.ndarray
    objective: float
    bound: float
    rounds: int
    columns: int


def solve_contexts(problem: Problem, solve_one: Callable[[str, np.ndarray], ContextSolution | None], name: str,
                   build_seconds: float = 0.0):
    """Run ``solve_one(key, cost)`` for every mechanism key of a problem whose objective is a sum
    of linear costs over contexts (``objective.cost(key)``) and whose notion constrains each
    context alone; assemble (raw, info) for :meth:`Problem.finish`, or None if any key fails."""
    start = time.perf_counter()
    raw, bound, rounds, columns = {}, 0.0, 0, 0
    for key in problem.keys:
        found = solve_one(key, problem.objective.cost(key))
        if found is None:
            return None
        raw[key] = found.matrix
        bound += found.bound
        rounds += found.rounds
        columns += found.columns
    return raw, {"status": "optimal", "name": name, "compile_seconds": build_seconds,
                 "solve_seconds": time.perf_counter() - start, "objective": bound,
                 "rounds": rounds, "columns": columns}


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


@dataclass
class Problem:
    """A mechanism-design problem.

    Parameters
    ----------
    inputs, outputs : Domain
        Input and output domains (outputs default to the inputs).
    objective : Objective
        What to minimise.
    privacy : sequence of Notion
        Constraints that must all hold.
    contexts : mapping name -> distribution, optional
        One mechanism per context (auxiliary inputs / profiles); default one shared mechanism
        keyed ``"default"``.
    """

    inputs: Domain
    objective: Objective
    privacy: Sequence[Notion] = ()
    outputs: Domain | None = None
    contexts: Mapping[str, np.ndarray] | None = None
    name: str = "problem"
    description: str = ""
    solver: str = "auto"
    gap_tolerance: float = 1e-6
    source: str | None = None
    extras: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.outputs is None:
            self.outputs = self.inputs
        if self.solver not in SOLVERS:
            raise ProblemError(f"unknown solver '{self.solver}'; expected one of {', '.join(SOLVERS)}",
                               key="solve.solver")
        self.privacy = list(self.privacy)

    @property
    def keys(self) -> list[str]:
        return list(self.contexts) if self.contexts else [DEFAULT]

    @property
    def linear(self) -> bool:
        return self.objective.linear and all(n.linear for n in self.privacy)

    # pipeline -------------------------------------------------------------------------------
    def compile(self, parametric: bool = False) -> Program:
        """Problem → convex program (cvxpy). With ``parametric``, ε-dependent coefficients are
        cvxpy Parameters, so :meth:`Notion.set_epsilon` re-targets the program without
        recompiling (sweeps)."""
        start = time.perf_counter()
        for notion in self.privacy:
            notion.parametric = parametric
        n, m = len(self.inputs), len(self.outputs)
        K = {k: cp.Variable((n, m), nonneg=True, name=f"K[{k}]") for k in self.keys}
        constraints = [cp.sum(v, axis=1) == 1 for v in K.values()]
        for notion in self.privacy:
            keys = notion.keys(self.keys)
            missing = [k for k in keys if k not in K]
            if missing:
                raise ProblemError(f"notion '{notion.name}' refers to unknown mechanism contexts {missing}",
                                   key="privacy")
            constraints += notion.constraints({k: K[k] for k in keys})
        program = cp.Problem(cp.Minimize(self.objective.expression(K)), constraints)
        return Program(program, K, self.linear, time.perf_counter() - start)

    def solve(self, solver: str | None = None, verbose: bool = False) -> Result:
        """Compile, solve, repair and certify. Never raises for solver trouble: the status says."""
        if (solver or self.solver) == "auto":
            for special in SPECIAL_SOLVERS:
                found = special(self)
                if found is not None:
                    return self.finish(*found)
        program = self.compile()
        raw, info = run_solver(program, solver or self.solver, verbose)
        return self.finish(raw, info)

    def objective_scale(self) -> float:
        """The objective of the uniform (data-independent) mechanism: its natural scale."""
        n, m = len(self.inputs), len(self.outputs)
        try:
            return float(self.objective.value({k: np.full((n, m), 1.0 / m) for k in self.keys}))
        except Exception:  # objectives that need more than matrices (none today)
            return 1.0

    def finish(self, raw: dict[str, np.ndarray] | None, info: dict) -> Result:
        """Raw solver matrices → certified, labelled result."""
        status = info.pop("status")
        if raw is None:
            return Result(self.name, status, self.objective.kind, None, {}, [], info,
                          message=info.pop("message", ""))
        mechs, audits, notes = certify(self.privacy, raw)
        value = self.objective.value(mechs)
        bound = info.get("objective")
        relaxed = any(n.relaxed for n in self.privacy)
        if bound is not None:
            info["bound"] = bound
            info["gap"] = relative_gap(value, bound, self.objective_scale())
        info["relaxed"] = relaxed
        info.update(notes)
        message = ""
        if not all(a.holds for a in audits):
            status = "failed"
            bad = ", ".join(a.notion for a in audits if not a.holds)
            message = f"the returned matrix fails its audit ({bad}); it is not a valid design"
        elif info.get("gap", 0.0) > self.gap_tolerance:
            status = "failed"
            message = (f"the mechanism is certified private but its optimality gap {info['gap']:.3g} "
                       f"exceeds the tolerance {self.gap_tolerance:g}")
        result = Result(
            self.name, status, self.objective.kind, value,
            {k: Mechanism(v, self.inputs, self.outputs, claims=self.privacy, validate=False, name=k)
             for k, v in mechs.items()},
            audits, info, message,
        )
        return result


def relative_gap(value: float, bound: float, scale: float) -> float:
    """(value − bound) relative to |value|, or to 1e-6 of the objective's natural scale when the
    value itself is (nearly) zero — a gap of 1e-13 on a loss of 1e-12 is no gap."""
    return max(value - bound, 0.0) / max(abs(value), 1e-6 * abs(scale), 1e-300)


#: From this many matrix entries on, HiGHS's interior point method (with crossover to a basic
#: solution) replaces the simplex: measured on a 20-profile × 50-category profile LP, the dual
#: simplex took 445 s against 5.3 s for IPM + crossover, for the same optimum.
IPM_FROM_ENTRIES = 40_000


def highs_options(program: Program) -> dict:
    entries = sum(v.size for v in program.variables.values())
    if entries >= IPM_FROM_ENTRIES and program.highs is None:
        return {**HIGHS_OPTIONS, "highs_options": {"solver": "ipm"}}  # nested: "solver" clashes with cvxpy's
    return dict(HIGHS_OPTIONS)


def _highs(program: Program, verbose: bool):
    program.problem.solve(solver=program.highs or cp.HIGHS, verbose=verbose, **highs_options(program))


def _conic(name: str) -> Callable:
    def run(program: Program, verbose: bool):
        program.problem.solve(solver=name, verbose=verbose, **CONIC_OPTIONS.get(name, {}))
    return run


def run_solver(program: Program, solver: str, verbose: bool = False):
    """Run the solver(s); returns (raw matrices or None, info dict with status and times)."""
    if solver == "auto":
        order = ["HIGHS"] if program.linear else list(CONIC_ORDER)
    else:
        order = [solver.upper()]
        if solver == "highs" and not program.linear:
            raise ProblemError("the 'highs' solver handles linear programs only; this problem is conic",
                               key="solve.solver")
    info: dict = {"compile_seconds": program.build_seconds}
    messages = []
    for name in order:
        prob = program.problem
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name == "HIGHS":
                    _highs(program, verbose)
                else:
                    _conic(name)(program, verbose)
        except (cp.SolverError, ValueError, ArithmeticError) as exc:
            messages.append(f"{name}: {exc}")
            continue
        elapsed = time.perf_counter() - start
        stats = prob.solver_stats
        solve_s = stats.solve_time if stats and stats.solve_time is not None else None
        compile_s = getattr(prob, "compilation_time", None)
        info.update({
            "name": name,
            "compile_seconds": program.build_seconds + (compile_s or 0.0),
            "solve_seconds": solve_s if solve_s is not None else elapsed - (compile_s or 0.0),
            "solver_status": prob.status,
        })
        if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
            info["status"] = "infeasible"
            return None, info
        if prob.status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
            info["status"] = "unbounded"
            return None, info
        values = {k: v.value for k, v in program.variables.items()}
        if any(v is None for v in values.values()):
            messages.append(f"{name}: status {prob.status}, no solution")
            continue
        info["objective"] = float(prob.value)
        info["status"] = "optimal"
        return values, info
    info.update({"status": "failed", "message": "; ".join(messages) or "no solver produced a solution"})
    info.setdefault("name", order[-1])
    return None, info
