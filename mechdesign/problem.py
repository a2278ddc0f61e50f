"""A design problem: domains, contexts, privacy notions and an objective; compiled to a convex
program, solved, and certified."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import cvxpy as cp
import numpy as np

from . import highs_model  # noqa: F401  (silences the HiGHS banner before any solve)
from .certify import audit_all, certify, neutral_row
from .domain import Domain
from .errors import ProblemError
from .conic_bound import conic_snapshot
from .lp_bound import snapshot_from_cache
from .mechanism import Mechanism
from .objectives import Objective
from .privacy.base import DEFAULT, Notion
from .result import Result

SOLVERS = ("auto", "highs", "clarabel", "scs")
#: Tight HiGHS tolerances: with them round-off gaps shrink to ~1e-9.
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
    context alone; assemble (raw, info) for :meth:`Problem.finish`, or None if any key fails.

    The costs are divided by the objective's magnitude (max |C|, :meth:`Objective.magnitude`)
    before ``solve_one`` sees them — the same minimisers, solved at the solvers' natural scale —
    and the summed bounds are scaled back. Every ``solve_one`` in this package returns a bound
    its duals prove, so the record says ``"bound_proven": True``."""
    start = time.perf_counter()
    scale = problem.objective.magnitude()
    raw, bound, rounds, columns = {}, 0.0, 0, 0
    for key in problem.keys:
        found = solve_one(key, problem.objective.cost(key) / scale)
        if found is None:
            return None
        raw[key] = found.matrix
        bound += found.bound
        rounds += found.rounds
        columns += found.columns
    return raw, {"status": "optimal", "name": name, "compile_seconds": build_seconds,
                 "solve_seconds": time.perf_counter() - start, "objective": bound * scale,
                 "bound_proven": True, "rounds": rounds, "columns": columns}


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
        self.solver = check_solver(self.solver)
        self.privacy = list(self.privacy)
        self._validate()

    def _validate(self) -> None:
        """Check the pieces fit together before anything is compiled; ProblemError otherwise."""
        for name, dom in (("inputs", self.inputs), ("outputs", self.outputs)):
            if not isinstance(dom, Domain) or len(dom) == 0:
                raise ProblemError(f"expected a non-empty Domain, got {type(dom).__name__}", key=name)
        if not isinstance(self.objective, Objective):
            raise ProblemError(f"expected an Objective, got {type(self.objective).__name__}", key="objective")
        bad = [type(n).__name__ for n in self.privacy if not isinstance(n, Notion)]
        if bad:
            raise ProblemError(f"expected privacy Notion objects, got {', '.join(bad)}", key="privacy")
        if not isinstance(self.name, str) or not self.name:
            raise ProblemError("expected a non-empty string", key="name")
        gap = self.gap_tolerance
        if isinstance(gap, bool) or not isinstance(gap, (int, float, np.integer, np.floating)) \
                or not np.isfinite(gap) or gap <= 0:
            raise ProblemError(f"expected a finite positive number, got {gap!r}", key="solve.gap_tolerance")
        n, m = len(self.inputs), len(self.outputs)
        if self.contexts is not None:
            if not isinstance(self.contexts, Mapping) or not self.contexts:
                raise ProblemError("expected a non-empty mapping from name to distribution", key="mechanism.contexts")
            self.contexts = {k: check_prior(v, n, f"mechanism.contexts[{k}]") for k, v in self.contexts.items()}
        self.objective.check(n, m, self.keys)
        prior = getattr(self.objective, "row_weights", {}).get(DEFAULT) if self.contexts is None else None
        if prior is not None:  # a single mechanism's row weights are the prior
            check_prior(prior, n, f"objective.row_weights[{DEFAULT}]")
        for i, notion in enumerate(self.privacy):
            missing = [k for k in notion.keys(self.keys) if k not in self.keys]
            if missing:
                raise ProblemError(f"notion '{notion.name}' refers to unknown mechanism contexts {missing}; "
                                   f"expected among {self.keys}", key=f"privacy[{i}]")

    @property
    def keys(self) -> list[str]:
        return list(self.contexts) if self.contexts else [DEFAULT]

    @property
    def linear(self) -> bool:
        return self.objective.linear and all(n.linear for n in self.privacy)

    # pipeline -------------------------------------------------------------------------------
    def compile(self, parametric: bool = False, scaled: bool = False) -> Program:
        """Problem → convex program (cvxpy). With ``parametric``, ε-dependent coefficients are
        cvxpy Parameters, so :meth:`Notion.set_epsilon` re-targets the program without
        recompiling (sweeps). With ``scaled``, the program minimises objective / s with
        s = :meth:`Objective.magnitude` (``Program.scale``; :func:`run_solver` reports values
        in the objective's units), so that tiny or huge losses meet the solvers' absolute
        tolerances at their natural scale; otherwise s = 1."""
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
        scale = self.objective.magnitude() if scaled else 1.0
        program = cp.Problem(cp.Minimize(self.objective.expression(K) / scale), constraints)
        return Program(program, K, self.linear, time.perf_counter() - start, scale=scale,
                       feasible_by_design=self.data_independent_design_holds())

    def solve(self, solver: str | None = None, verbose: bool = False) -> Result:
        """Compile, solve, repair and certify. Never raises for solver trouble: the status says.

        With the "auto" solver the special solvers are tried first, in order; what each did
        (declined, solved, or the exception it raised) is listed in the result's
        ``solver["special_solvers"]``, and an exception only moves on to the next route.
        An unknown ``solver`` name raises ProblemError (bad input, not solver trouble)."""
        chosen = check_solver(self.solver if solver is None else solver)
        attempts: list[dict] = []
        if chosen == "auto":
            for special in SPECIAL_SOLVERS:
                found = _try_special(special, self, attempts)
                if found is not None:
                    raw, info = found
                    info["special_solvers"] = attempts
                    return self.finish(raw, info)
        program = self.compile(scaled=True)
        raw, info = run_solver(program, chosen, verbose)
        if attempts:
            info["special_solvers"] = attempts
        return self.finish(raw, info)

    def data_independent_design(self) -> tuple[dict, list]:
        """The data-independent design (every row the notions' neutral output distribution),
        certified: (matrices, audits)."""
        n, m = len(self.inputs), len(self.outputs)
        row = neutral_row(self.privacy, m)
        mechs, audits, _ = certify(self.privacy, {k: np.tile(row, (n, 1)) for k in self.keys})
        return mechs, audits

    def data_independent_design_holds(self) -> bool:
        """Whether one data-independent design satisfies every notion at once — true for any
        single notion of the package, false e.g. for two targets with different μ — which makes
        the problem feasible, so that a solver's "infeasible" is a numerical failure."""
        n, m = len(self.inputs), len(self.outputs)
        row = neutral_row(self.privacy, m)
        return all(a.holds for a in audit_all(self.privacy, {k: np.tile(row, (n, 1)) for k in self.keys}))

    def objective_scale(self) -> float:
        """The objective of the uniform (data-independent) mechanism: its natural scale."""
        n, m = len(self.inputs), len(self.outputs)
        try:
            return float(self.objective.value({k: np.full((n, m), 1.0 / m) for k in self.keys}))
        except Exception:  # objectives that need more than matrices (none today)
            return 1.0

    def finish(self, raw: dict[str, np.ndarray] | None, info: dict) -> Result:
        """Raw solver matrices → certified, labelled result.

        The status is "optimal" only when every certificate line holds, the objective, a
        proven bound and the relative gap are finite and the gap is within
        ``gap_tolerance``. Without a matrix (a solver failure) the certified data-independent
        design is returned with status "failed"; "infeasible" only comes with a checked
        Farkas certificate (:func:`run_solver`)."""
        status = info.pop("status")
        lp = info.pop("_lp", None)
        note = privacy_note(self.privacy)
        if note:
            info["privacy"] = note
        message = info.pop("message", "")
        if raw is None:
            if status == "infeasible" and not info.get("infeasibility_proven"):
                status, message = "failed", f"the solver claimed infeasibility without a certificate {message}".strip()
            if status != "infeasible":
                return self._data_independent(info, message)
            return Result(self.name, status, self.objective.kind, None, {}, [], info, message=message)
        mechs, audits, notes = certify(self.privacy, raw)
        value = self.objective.value(mechs)
        info["relaxed"] = any(n.relaxed for n in self.privacy)
        info.update(notes)
        status, message = self._judge(status, value, info, self._bound(info, lp, value), audits)
        result = Result(
            self.name, status, self.objective.kind, value,
            {k: Mechanism(v, self.inputs, self.outputs, claims=self.privacy, validate=False, name=k)
             for k, v in mechs.items()},
            audits, info, message,
        )
        return result

    def _bound(self, info: dict, lp, value: float) -> bool:
        """Fill info["bound"], ["gap"], ["bound_proven"]; whether a proven bound is required
        for "optimal" (LP routes). The general route's bound is proven from the solver's duals
        on the standard-form data (:mod:`lp_bound`, :mod:`conic_bound`) with the certified
        value as cut-off. A conic program whose proven bound is not within the gap tolerance
        (its residuals times the box add up on large programs; cones other than the
        exponential; a direction the box leaves unbounded) reports the solver's dual objective
        instead, marked not proven (``bound_kind``), and the proven one as ``proven_bound``."""
        if lp is not None:
            snapshot, scale = lp
            cutoff = value / scale
            cutoff += 1e-7 * (1.0 + abs(cutoff))  # the audit tolerates ~1e-9 excess: stay above the optimum
            proven = snapshot.bound(cutoff) * scale if np.isfinite(value) else -np.inf
            gap = relative_gap(value, proven, self.objective_scale())
            if snapshot.required or gap <= self.gap_tolerance:
                info["bound_proven"] = bool(np.isfinite(proven))
                info["bound"] = float(proven) if info["bound_proven"] else None
                if info["bound_proven"]:
                    info["gap"] = gap
                else:
                    info.pop("objective", None)
                return snapshot.required
            info["proven_bound"] = float(proven) if np.isfinite(proven) else None
        bound = info.get("objective")
        claimed = bool(info.pop("bound_proven", False))
        if bound is not None:
            info["bound"] = bound
            info["gap"] = relative_gap(value, bound, self.objective_scale())
            info["bound_proven"] = claimed
            if not claimed:
                info.setdefault("bound_kind", "the solver's reported bound (not proven)")
        return False

    def _judge(self, status: str, value: float, info: dict, needs_proof: bool, audits) -> tuple[str, str]:
        """The honest status and message for a certified matrix: "optimal" needs every audit
        to hold, a finite objective and, where a bound is required, a finite gap within the
        tolerance (a NaN gap is never within it)."""
        if not all(a.holds for a in audits):
            bad = ", ".join(a.notion for a in audits if not a.holds)
            return "failed", f"the returned matrix fails its audit ({bad}); it is not a valid design"
        if not np.isfinite(value):
            return "failed", f"the objective of the certified matrix is not finite ({value})"
        if needs_proof and not info.get("bound_proven"):
            return "failed", ("the mechanism is certified private but no finite lower bound on the "
                              "optimum could be proven from the solver's duals")
        gap = info.get("gap")
        if gap is None:
            return "failed", "the mechanism is certified private but no lower bound on the optimum was reported"
        if not (np.isfinite(gap) and gap <= self.gap_tolerance):
            return "failed", (f"the mechanism is certified private but its optimality gap {gap:.3g} "
                              f"exceeds the tolerance {self.gap_tolerance:g}")
        return status, ""

    def _data_independent(self, info: dict, message: str) -> Result:
        """After a solver failure: the certified data-independent design (every notion of the
        package holds for it with zero leakage), status "failed", the solver's message kept."""
        mechs, audits = self.data_independent_design()
        text = f"the solver failed ({message or 'no solution'})"
        if not all(a.holds for a in audits):
            return Result(self.name, "failed", self.objective.kind, None, {}, [], info, message=text)
        info["fallback"] = "data-independent design"
        return Result(
            self.name, "failed", self.objective.kind, self.objective.value(mechs),
            {k: Mechanism(v, self.inputs, self.outputs, claims=self.privacy, validate=False, name=k)
             for k, v in mechs.items()},
            audits, info, text + "; returned the certified data-independent design, which is private but "
                                 "not optimised")


def relative_gap(value: float, bound: float, scale: float) -> float:
    """(value − bound) relative to |value|, or to 1e-6 of the objective's natural scale when the
    value itself is (nearly) zero — a gap of 1e-13 on a loss of 1e-12 is no gap. NaN when
    value or bound is not finite (never within a tolerance)."""
    if not (np.isfinite(value) and np.isfinite(bound)):
        return float("nan")
    return float(max(value - bound, 0.0) / max(abs(value), 1e-6 * abs(scale), 1e-300))


def check_solver(solver) -> str:
    """The solver name, or ProblemError naming the expected ones."""
    if solver not in SOLVERS:
        raise ProblemError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}", key="solve.solver")
    return solver


def check_prior(value, n: int, key: str) -> np.ndarray:
    """A probability vector of length ``n`` (finite, non-negative, summing to 1 within 1e-9·n),
    or ProblemError naming ``key``."""
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("expected a vector of probabilities", key=key) from None
    if p.shape != (n,):
        raise ProblemError(f"expected {n} probabilities (one per input), got shape {p.shape}", key=key)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9 * max(n, 1):
        raise ProblemError(f"expected finite non-negative probabilities summing to 1 (sum {p.sum():.12g})", key=key)
    return p


def privacy_note(notions: Sequence[Notion]) -> str:
    """A note for the record when nothing is private: no notion, or every ε infinite."""
    if not notions:
        return "none: no privacy constraint"
    if all(np.isinf(getattr(n, "epsilon", 0.0) or 0.0) for n in notions):
        return "none: every privacy level is infinite (ε = ∞)"
    return ""


def _try_special(special: Callable, problem: Problem, attempts: list[dict]):
    """Run one special solver; record what it did. Exceptions other than ProblemError (bad
    input) only decline: a special solver's trouble must not stop the solve."""
    name = getattr(special, "__name__", repr(special))
    try:
        found = special(problem)
    except ProblemError:
        raise
    except Exception as exc:  # noqa: BLE001 — any failure of a special route falls through
        kind = "declined" if type(exc).__name__.endswith("Declined") else f"raised {type(exc).__name__}"
        attempts.append({"solver": name, "outcome": f"{kind}: {exc}"})
        return None
    attempts.append({"solver": name, "outcome": "declined" if found is None else "solved"})
    return found


#: From this many matrix entries on, HiGHS's interior point method (with crossover to a basic
#: solution) replaces the simplex: measured on a 20-profile × 50-category profile LP, the dual
#: simplex took 445 s against 5.3 s for IPM + crossover, for the same optimum.
IPM_FROM_ENTRIES = 40_000


def highs_options(program: Program) -> dict:
    entries = sum(v.size for v in program.variables.values())
    if entries >= IPM_FROM_ENTRIES and program.highs is None:
        return {**HIGHS_OPTIONS, "highs_options": {"solver": "ipm"}}  # nested: "solver" clashes with cvxpy's
    return dict(HIGHS_OPTIONS)


#: the second attempt after HiGHS claims an always-feasible LP infeasible or unbounded:
#: no presolve, the primal simplex (the first run used presolve and HiGHS's default strategy)
HIGHS_RETRY = {"presolve": "off", "simplex_strategy": 4}


def _highs(program: Program, verbose: bool, retry: bool = False):
    if retry:
        program.problem.solve(solver=cp.HIGHS, verbose=verbose,
                              **{**HIGHS_OPTIONS, "highs_options": dict(HIGHS_RETRY)})
    else:
        program.problem.solve(solver=program.highs or cp.HIGHS, verbose=verbose, **highs_options(program))


def _conic(name: str) -> Callable:
    def run(program: Program, verbose: bool, retry: bool = False):
        program.problem.solve(solver=name, verbose=verbose, **CONIC_OPTIONS.get(name, {}))
    return run


SOLVER_TROUBLE = (cp.SolverError, ValueError, ArithmeticError, RuntimeError, MemoryError)


def _run_once(program: Program, name: str, verbose: bool, retry: bool, info: dict) -> str | None:
    """One solver run; records times and the solver's status in ``info``. Returns an error
    message when the solver raised, else None."""
    prob = program.problem
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (_highs if name == "HIGHS" else _conic(name))(program, verbose, retry)
    except ProblemError:
        raise
    except SOLVER_TROUBLE as exc:
        return f"{name}: {type(exc).__name__}: {exc}"
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
    return None


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


def _claims_no_optimum(program: Program, name: str, verbose: bool, info: dict, messages: list) -> bool:
    """After an "infeasible" or "unbounded" verdict. For an always-feasible program (one
    data-independent design satisfies every notion) or an unbounded claim (the objectives are
    bounded on row-stochastic matrices) it is a numerical failure: an LP is solved once more
    with other settings, and True is returned if that found an optimum. For other programs, an LP's infeasibility is
    reported ("infeasible" in ``info``) only when the solver's dual ray is a Farkas
    certificate on the data (:meth:`LPSnapshot.proves_infeasible`)."""
    prob = program.problem
    verdict = prob.status
    if name != "HIGHS":
        messages.append(f"{name}: claimed {verdict}, not checked")
        return False
    for retry in (False, True):
        if retry:
            error = _run_once(program, name, verbose, True, info)
            if error is None and prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                info["retried"] = f"{verdict} at first; solved again with {HIGHS_RETRY}"
                return True
            if error is not None:
                break
        if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE) and not program.feasible_by_design:
            snapshot = _lp_snapshot(program, retry)
            if snapshot is not None and snapshot.proves_infeasible():
                info.update({"status": "infeasible", "infeasibility_proven": True})
                return False
    why = ("the problem is feasible by construction (a data-independent design satisfies every notion)"
           if program.feasible_by_design else "no certificate confirms it")
    messages.append(f"{name}: claimed {verdict}, but {why}")
    return False


def run_solver(program: Program, solver: str, verbose: bool = False):
    """Run the solver(s); returns (raw matrices or None, info dict with status and times).

    Values and bounds are in the objective's units (the program minimises objective /
    ``program.scale``). After an optimum, info["_lp"] holds the standard-form data and duals
    for :meth:`Problem.finish` to prove a bound (:mod:`lp_bound`, :mod:`conic_bound`), and
    info["objective"] the solver's own value (a conic solver's dual objective)."""
    order = _solver_order(program, check_solver(solver))
    info: dict = {"compile_seconds": program.build_seconds}
    messages: list[str] = []
    for name in order:
        error = _run_once(program, name, verbose, False, info)
        if error is not None:
            messages.append(error)
            continue
        prob = program.problem
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
                if not _claims_no_optimum(program, name, verbose, info, messages):
                    if info.get("status") == "infeasible":
                        return None, info
                    continue
        values = {k: v.value for k, v in program.variables.items()}
        if prob.value is None or any(v is None for v in values.values()):
            messages.append(f"{name}: status {prob.status}, no solution")
            continue
        info["objective"] = float(prob.value) * program.scale
        if name == "HIGHS":
            snapshot = _lp_snapshot(program, "retried" in info)
            if snapshot is not None:
                info["_lp"] = (snapshot, program.scale)
        else:
            dual = _conic_dual_bound(program, name)
            info["objective"] = dual * program.scale if dual is not None else info["objective"]
            snapshot = conic_snapshot(prob, name)
            if snapshot is not None:
                info["_lp"] = (snapshot, program.scale)
        info["status"] = "optimal"
        return values, info
    info.update({"status": "failed", "message": "; ".join(messages) or "no solver produced a solution"})
    info.setdefault("name", order[-1])
    return None, info


def _solver_order(program: Program, solver: str) -> list[str]:
    if solver == "auto":
        return ["HIGHS"] if program.linear else list(CONIC_ORDER)
    if solver == "highs" and not program.linear:
        raise ProblemError("the 'highs' solver handles linear programs only; this problem is conic",
                           key="solve.solver")
    return [solver.upper()]
