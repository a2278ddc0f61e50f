"""Solve one problem across a range of ε, compiling the convex program once.

Each point is solved on the problem at that ε (:func:`problem_at`: a copy whose notions are at
the point's ε, so that the caller's problem and notions are never written). The program is
compiled with ``Problem.compile(parametric=True)``: every ε-dependent coefficient (e^ε, e^{εd},
...) is a cvxpy Parameter kept in the program's
:class:`~mechdesign.privacy.coefficients.Coefficients`, so each point only re-targets those
(``Coefficients.retarget``) and cvxpy re-applies its cached parameter-to-data map instead of
recompiling. For linear programs each solve starts HiGHS's simplex from the previous point's
optimal basis (:class:`WarmStartHighs`; cvxpy's own ``warm_start`` only passes the previous
primal/dual values to ``setSolution``, which was measured to save nothing on these LPs, while
the basis cut simplex iterations ~10x). Every point is certified by ``Problem.finish`` like a
single solve.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import cvxpy.settings as s
import numpy as np
from cvxpy.reductions.solvers.conic_solvers.conic_solver import dims_to_solver_dict
from cvxpy.reductions.solvers.conic_solvers.highs_conif import HIGHS as _CvxpyHighs

from mechdesign.core.errors import ProblemError
from mechdesign.core.limits import Limits
from mechdesign.design.problem import Problem
from mechdesign.design.program_size import ProgramTooLarge
from mechdesign.design.result import Result
from mechdesign.privacy.base import Notion
from mechdesign.solvers.convex_route import Program, parameter_map, run_solver
from mechdesign.solvers.outcome import SolverOutcome

_COMPILES = 0


def compile_count() -> int:
    """How many programs sweeps have compiled in this process (tests assert one per sweep)."""
    return _COMPILES


class WarmStartHighs(_CvxpyHighs):
    """cvxpy's HiGHS LP interface, but each solve starts from the previous solve's optimal basis.

    Goes one level under cvxpy: the LP in HiGHS form (lower <= A x <= upper, bounds on x) is
    passed to ``highspy`` and, when the cache holds an optimal basis of a model of the same
    shape, ``Highs.setBasis`` hot-starts the simplex. If a warm-started run does not end
    optimal, the LP is solved again from scratch. ``warm_starts`` counts warm-started runs, and
    ``last_warm`` says whether the last run was one.
    """

    def __init__(self):
        super().__init__()
        self.warm_starts = 0
        self.cold_starts = 0
        self.last_warm = False

    def name(self):
        return "HIGHS_WARM"

    def solve_via_data(self, data, warm_start: bool, verbose: bool, solver_opts, solver_cache=None):
        import highspy as hp

        self.last_warm = False
        if data[s.BOOL_IDX] or data[s.INT_IDX]:
            return super().solve_via_data(data, warm_start, verbose, solver_opts, solver_cache)
        inf = hp.kHighsInf
        dims = dims_to_solver_dict(data[s.DIMS])
        A = data[s.A].tocsc()
        b = np.asarray(data[s.B], dtype=float)
        eq, leq = dims[s.EQ_DIM], dims[s.LEQ_DIM]
        lp = hp.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.col_cost_ = np.asarray(data[s.C], dtype=float)
        lp.row_lower_ = np.concatenate([b[:eq], np.full(leq, -inf)])
        lp.row_upper_ = b
        lb, ub = data[s.LOWER_BOUNDS], data[s.UPPER_BOUNDS]
        lp.col_lower_ = np.full(lp.num_col_, -inf) if lb is None else np.asarray(lb, float)
        lp.col_upper_ = np.full(lp.num_col_, inf) if ub is None else np.asarray(ub, float)
        lp.a_matrix_.format_ = hp.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr
        lp.a_matrix_.index_ = A.indices
        lp.a_matrix_.value_ = A.data
        highs = hp.Highs()
        highs.setOptionValue("log_to_console", bool(verbose))
        for key, value in dict(solver_opts).items():
            if highs.setOptionValue(key, value) == hp.HighsStatus.kError:
                raise ValueError(f"HiGHS rejected option {key}={value!r}")
        highs.passModel(lp)
        warm = False
        if warm_start and solver_cache is not None and self.name() in solver_cache:
            _, old_data, old = solver_cache[self.name()]
            if (old.get("model_status") == "kOptimal" and old_data[s.A].shape == A.shape
                    and old.get("basis") is not None and old["basis"].valid):
                warm = highs.setBasis(old["basis"]) == hp.HighsStatus.kOk
        highs.run()
        if warm and highs.getModelStatus() != hp.HighsModelStatus.kOptimal:
            highs.clearSolver()
            highs.run()
            warm = False
        self.warm_starts += warm
        self.cold_starts += not warm
        self.last_warm = warm
        results = {"solution": highs.getSolution(), "basis": highs.getBasis(), "info": highs.getInfo(),
                   "model_status": highs.getModelStatus().name, "run_time": highs.getRunTime(),
                   "warm": warm}
        if results["model_status"] == "kInfeasible":
            results["dual_ray"] = highs.getDualRay()
        if solver_cache is not None:
            solver_cache[self.name()] = (highs, data, results)
        return results


def parse_range(text: str) -> np.ndarray:
    """'START:STOP:COUNT' -> COUNT evenly spaced ε from START to STOP inclusive."""
    parts = str(text).split(":")
    if len(parts) != 3:
        raise ProblemError(f"expected START:STOP:COUNT (e.g. 0.1:2:20), got {text!r}", key="--epsilon")
    try:
        start, stop = float(parts[0]), float(parts[1])
        count = int(parts[2])
    except ValueError:
        raise ProblemError(f"expected START:STOP:COUNT with numbers and a whole COUNT, got {text!r}",
                           key="--epsilon")
    if not (math.isfinite(start) and math.isfinite(stop)) or start < 0 or stop < 0:
        raise ProblemError(f"ε must be finite and non-negative, got {text!r}", key="--epsilon")
    if count < 1 or (count == 1 and start != stop):
        raise ProblemError(f"COUNT must be at least 1 (and 1 only when START = STOP), got {text!r}",
                           key="--epsilon")
    return np.linspace(start, stop, count)


def sweepable(problem: Problem) -> list[Notion]:
    """The problem's notions that carry an ε (a sweep puts each of them at every swept value)."""
    found = [n for n in problem.privacy if _has_epsilon(n)]
    if not found:
        raise ProblemError("the problem has no privacy constraint with an ε to sweep", key="privacy")
    return found


def _has_epsilon(notion: Notion) -> bool:
    return hasattr(notion, "epsilon")


def problem_at(problem: Problem, epsilon: float) -> Problem:
    """``problem`` with every notion that carries an ε at ``epsilon``, as a single solve at that
    ε would have it: a copy holding new notions (:meth:`Notion.with_epsilon`) and sharing the
    rest (domains, objective, ``extras``); ``problem`` and its notions are left as they are."""
    at = copy.copy(problem)
    at.privacy = [n.with_epsilon(epsilon) if _has_epsilon(n) else n for n in problem.privacy]
    return at


@dataclass
class SweepPoint:
    epsilon: float
    result: Result
    seconds: float
    warm: bool = False
    baselines: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        r = self.result
        out = {"epsilon": self.epsilon, "status": r.status, "objective": r.objective,
               "holds": r.holds, "certificate": [a.to_dict() for a in r.certificate],
               "seconds": self.seconds, "warm_start": self.warm,
               "solver": {k: v for k, v in r.solver.items() if k in ("name", "solve_seconds", "gap", "bound")}}
        if r.message:
            out["message"] = r.message
        return out


@dataclass
class SweepResult:
    problem: str
    objective_kind: str
    points: list[SweepPoint]
    compiles: int
    canonicalizations: int
    seconds: float
    baselines: dict[str, list[dict]] = field(default_factory=dict)

    @property
    def epsilons(self) -> np.ndarray:
        return np.array([p.epsilon for p in self.points])

    @property
    def objectives(self) -> np.ndarray:
        return np.array([np.nan if p.result.objective is None else p.result.objective for p in self.points])

    def to_dict(self) -> dict:
        return {"problem": self.problem, "objective_kind": self.objective_kind,
                "epsilons": self.epsilons.tolist(),
                "points": [p.to_dict() for p in self.points],
                "baselines": self.baselines, "compiles": self.compiles,
                "canonicalizations": self.canonicalizations, "seconds": self.seconds}


def _structure(problem: Problem) -> tuple:
    """What fixes the program's shape for ``problem`` (at one ε): each swept notion's
    ``Notion.structure`` (e.g. how many chain links a d-privacy pair needs to keep every
    coefficient below e^20). Points with the same structure share one compiled program."""
    return tuple(n.structure() for n in problem.privacy if _has_epsilon(n))


@dataclass
class _Compiled:
    """One parametric program of a sweep, and the notions with an ε it was compiled with (the
    keys by which its coefficients are re-targeted)."""

    program: Program
    notions: list[Notion]

    def follows_epsilon(self) -> bool:
        """Whether every swept notion's coefficients are Parameters: otherwise some ε is baked
        into the program, which then holds at the compile's ε only."""
        return all(self.program.coefficients.follows(n) for n in self.notions)

    def solve_at(self, epsilon: float, solver: str, limits: Limits) -> tuple[dict | None, SolverOutcome, bool]:
        """The program re-targeted to ``epsilon`` and solved: (raw, outcome, whether the simplex
        started from the previous basis)."""
        self.program.coefficients.retarget([(n, epsilon) for n in self.notions])
        raw, outcome = run_solver(self.program, solver, limits=limits)
        highs = self.program.highs
        return raw, outcome, bool(highs is not None and highs.last_warm)


def _compile(problem: Problem, warm_start: bool) -> _Compiled:
    """``problem`` (at one ε) compiled parametrically and scaled, with a warm-starting HiGHS for
    a linear program when ``warm_start``."""
    global _COMPILES
    program = problem.compile(parametric=True, scaled=True)
    _COMPILES += 1
    if program.linear and warm_start and problem.solver in ("auto", "highs"):
        program.highs = WarmStartHighs()
    return _Compiled(program, sweepable(problem))


def sweep(problem: Problem, epsilons: Sequence[float], *, warm_start: bool = True,
          at_each_point: Callable[[Problem, float], dict[str, dict]] | None = None, use_special: bool = True,
          progress: Callable[[int, int, SweepPoint], None] | None = None,
          time_limit: float | None = None, rounds: Callable[[dict], None] | None = None) -> SweepResult:
    """Solve ``problem`` at each ε of ``epsilons`` (every notion with an ε gets the value).

    The program is compiled once, parametrically, and re-targeted at each ε. Points where a
    notion's program shape changes (a d-privacy pair whose coefficient e^{εd} crosses e^20 and
    is left to repair, exactly as a single solve at that ε does) get one more compile per
    distinct shape, and a notion that makes no ε Parameter is recompiled per ε, so every point
    equals an independent solve; ``compiles`` reports how many programs were built (1 in the
    common case). Each point is solved on :func:`problem_at` that ε, so ``problem`` and its
    notions are left as they are. Points go in the given order, each solve starting from the
    previous basis of its program when ``warm_start``.

    Special-cased solvers (couplings, LDP column generation, ...) are used per point when they
    apply, exactly as ``Problem.solve`` does; no program is compiled then. ``use_special=False``
    forces the compiled program instead. ``at_each_point(problem, ε)``, when given, is called
    at each point with the problem at that ε and returns named records (for instance the
    baselines at that ε, :func:`mechdesign.estimation.compare.baseline_curves`); each name's
    records form one curve of the result's ``baselines``. ``time_limit`` (seconds; default
    the problem's own) bounds each point's solve as in :meth:`Problem.solve`; ``rounds`` is
    called with each round the iterative solvers report, as ``progress`` is in :meth:`Problem.solve`.
    """
    sweepable(problem)
    eps = np.asarray(list(epsilons), dtype=float)
    if eps.size == 0:
        raise ProblemError("no ε to sweep", key="--epsilon")
    start = time.perf_counter()
    programs: dict[tuple, _Compiled] = {}  # (structure, ε when baked in, else None) -> program
    maps: set[int] = set()
    compiles = 0
    points: list[SweepPoint] = []
    base_curves: dict[str, list[dict]] = {}
    for i, e in enumerate(eps):
        t0 = time.perf_counter()
        e = float(e)
        at = problem_at(problem, e)
        limits = Limits(problem.time_limit if time_limit is None else time_limit, rounds,
                        reserve=at.certification_seconds())
        found = at.solve_specially(limits)[0] if use_special and problem.solver == "auto" else None
        warm = False
        if found is not None:
            raw, outcome = found
        else:
            structure = _structure(at)
            compiled = programs.get((structure, None)) or programs.get((structure, e))
            try:
                if compiled is None:
                    compiled = _compile(at, warm_start)
                    compiles += 1
                    programs[(structure, None if compiled.follows_epsilon() else e)] = compiled
            except ProgramTooLarge as exc:  # the point fails with the reason; the sweep goes on
                raw, outcome = None, SolverOutcome("failed", {}, str(exc))
            else:
                raw, outcome, warm = compiled.solve_at(e, problem.solver, limits)
                mapping = parameter_map(compiled.program)
                if mapping is not None:
                    maps.add(id(mapping))
        point = SweepPoint(e, at.finish(raw, outcome, limits), time.perf_counter() - t0, warm)
        for name, record in (at_each_point(at, e) if at_each_point is not None else {}).items():
            base_curves.setdefault(name, []).append(record)
        points.append(point)
        if progress is not None:
            progress(i + 1, len(eps), point)
    return SweepResult(problem.name, problem.objective.kind, points, compiles, len(maps),
                       time.perf_counter() - start, base_curves)
