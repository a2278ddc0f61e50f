"""A design problem: domains, contexts, privacy notions and an objective; compiled to a convex
program, solved, and certified."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from mechdesign.core import preview
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.heap import freed_memory_kept
from mechdesign.core.information_utilities import NOT_CONVEX
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.limits import TIME_LIMIT, Limits, check_time_limit, relative_gap
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import Objective
from mechdesign.core.setting import Setting, probabilities
from mechdesign.design.program_size import ProgramTooLarge, built_rows, check_rows, declared_rows
from mechdesign.design.resolve import after_special_solver, needs_resolve, resolve_in_units_of_value
from mechdesign.design.result import Result
from mechdesign.design.trivial_designs import better_trivial_design
from mechdesign.privacy.base import DEFAULT, Notion
from mechdesign.privacy.certify import audit_all, certify, clean, neutral_row
from mechdesign.privacy.coefficients import Coefficients
from mechdesign.solvers import (
    highs_model,  # noqa: F401  (silences the HiGHS banner before any solve)
    special_solvers,
)
from mechdesign.solvers.convex_route import SOLVERS, Program, check_solver, run_solver  # noqa: F401  (SOLVERS: the file loader)
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.registry import run_special_solvers
from mechdesign.solvers.staircase import NAME as STAIRCASE
from mechdesign.solvers.staircase import refusal


@dataclass(repr=False)
class Problem:
    """A mechanism-design problem.

    Parameters
    ----------
    inputs, outputs : Domain, int, list of labels or (n, d) array of points
        Input and output domains (outputs default to the inputs): a size n gives the values
        0..n-1 on a line, numeric labels become points on a line, an (n, d) array gives points
        labelled "0".."n-1" (see :meth:`Domain.coerce`).
    objective : Objective
        What to minimise, or to maximise when its ``sense`` is ``"maximize"`` (the information
        utilities, which only the staircase solver takes: :mod:`mechdesign.solvers.staircase`).
    privacy : sequence of Notion, or one Notion
        Constraints that must all hold.
    contexts : mapping name -> distribution, optional
        One mechanism per context (auxiliary inputs / profiles); default one shared mechanism
        keyed ``"default"``.
    metric : Metric, metric kind or square matrix of distances, optional
        The ground metric over the inputs, which notions and objectives built without one use
        (``MetricPrivacy(ε)``, ``ExpectedLoss("metric")``, ``XDistP(ε, pairs)``, ...).

    Notes
    -----
    The objective and the notions may leave out what the problem knows; it fills it in when it
    is built (their ``bind``): a loss name's matrix and a uniform prior, the problem's metric
    and inputs for metric privacy, its contexts for profile privacy and targets, its metric's
    distances for XDistP and divergence XDP. Every array is checked against the domains here,
    and a misfit is a :class:`~mechdesign.core.errors.ProblemError` naming the argument and the
    expected shape.

    Examples
    --------
    ε-LDP on three categories with a uniform prior: the optimum is k-ary randomized response,
    whose error probability is (k − 1)/(e^ε + k − 1).

    >>> import numpy as np
    >>> from mechdesign import LDP, ErrorProbability, Problem
    >>> problem = Problem(inputs=["a", "b", "c"], objective=ErrorProbability(prior=[1/3, 1/3, 1/3]),
    ...                   privacy=[LDP(1.0)])
    >>> problem
    Problem(name='problem', inputs=Domain(3 values: a, b, c), objective=ErrorProbability(prior=[0.333333, 0.333333, 0.333333]), privacy=[LDP(epsilon=1)])
    >>> result = problem.solve()
    >>> print(result.status, f"{result.objective:.9f}", f"{2 / (np.e + 2):.9f}")
    optimal 0.423883115 0.423883115

    d-privacy (ε·d) on points with a metric: two points 2 apart with ε = 0.5 report the other
    point with probability 1/(1 + e^{εd}), an expected loss of d/(1 + e^{εd}).

    >>> from mechdesign import ExpectedLoss, MetricPrivacy
    >>> problem = Problem(inputs=[[0.0], [2.0]], metric="euclidean",
    ...                   objective=ExpectedLoss("metric", prior=[0.5, 0.5]), privacy=[MetricPrivacy(0.5)])
    >>> print(f"{problem.solve().objective:.9f}", f"{2 / (1 + np.exp(0.5 * 2)):.9f}")
    0.537882843 0.537882843

    Distribution privacy between two sources λ = (p, 1 − p) and λ' = (1 − p, p) through one
    shared mechanism, uniform prior: by symmetry the optimum flips each value with probability
    (p − e^ε(1 − p)) / ((2p − 1)(1 + e^ε)), its error probability.

    >>> from mechdesign import DistP
    >>> p, eps = 0.8, 0.5
    >>> problem = Problem(inputs=["0", "1"], objective=ErrorProbability(prior=[0.5, 0.5]),
    ...                   privacy=[DistP(eps, [([p, 1 - p], [1 - p, p])])])
    >>> e = np.exp(eps)
    >>> print(f"{problem.solve().objective:.9f}", f"{(p - e * (1 - p)) / ((2 * p - 1) * (1 + e)):.9f}")
    0.295901115 0.295901115

    Profile privacy (Geumlek and Chaudhuri, ISIT 2019) between two Bernoulli profiles with
    one mechanism each, minimising the largest flip probability: profile a's mechanism flips
    0 to 1 and profile b's 1 to 0, each with probability t = (q − e^ε p) / (q + e^ε(1 − p))
    for P(1) = p under a and q under b (p < q, while t > 0).

    >>> from mechdesign import MaxOffDiagonal, ProfilePrivacy
    >>> p, q, eps = 0.3, 0.6, 0.5
    >>> problem = Problem(inputs=["0", "1"], contexts={"a": [1 - p, p], "b": [1 - q, q]},
    ...                   objective=MaxOffDiagonal(), privacy=[ProfilePrivacy(eps, [("a", "b")])])
    >>> e = np.exp(eps)
    >>> print(f"{problem.solve().objective:.9f}", f"{(q - e * p) / (q + e * (1 - p)):.9f}")
    0.060078288 0.060078288

    An information bound: Shannon capacity at most 0.5 bits on a binary secret with a uniform
    prior. The optimum is the binary symmetric channel whose capacity 1 − h(α) is 0.5 bits.

    >>> from scipy.optimize import brentq
    >>> from mechdesign import InformationPrivacy
    >>> problem = Problem(inputs=["0", "1"], objective=ErrorProbability(prior=[0.5, 0.5]),
    ...                   privacy=[InformationPrivacy(0.5)])
    >>> def h(a): return -a * np.log2(a) - (1 - a) * np.log2(1 - a)
    >>> print(f"{problem.solve().objective:.6f}", f"{brentq(lambda a: 1 - h(a) - 0.5, 1e-9, 0.5):.6f}")
    0.110028 0.110028
    """

    inputs: Domain | int | Sequence | np.ndarray
    objective: Objective
    privacy: Sequence[Notion] | Notion = ()
    outputs: Domain | int | Sequence | np.ndarray | None = None
    contexts: Mapping[str, np.ndarray] | None = None
    name: str = "problem"
    description: str = ""
    solver: str = "auto"
    gap_tolerance: float = 1e-6
    #: seconds a solve may take (None: no limit); see :meth:`solve`
    time_limit: float | None = None
    source: str | None = None
    extras: dict = field(default_factory=dict)
    #: the ground metric over the inputs (None: none); see the class docstring
    metric: Metric | str | np.ndarray | None = None

    def __post_init__(self) -> None:
        self.inputs = _domain(self.inputs, "inputs")
        self.outputs = self.inputs if self.outputs is None else _domain(self.outputs, "outputs")
        self.solver = check_solver(self.solver)
        self.time_limit = check_time_limit(self.time_limit, key="time_limit")
        self.privacy = [self.privacy] if isinstance(self.privacy, Notion) else list(self.privacy)
        self._validate()

    def _validate(self) -> None:
        """Check the pieces fit together before anything is compiled, filling in what the
        objective and the notions left to the problem; ProblemError otherwise."""
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
        self.metric = _metric(self.metric, self.inputs)
        if self.contexts is not None:
            if not isinstance(self.contexts, Mapping) or not self.contexts:
                raise ProblemError("expected a non-empty mapping from name to distribution", key="mechanism.contexts")
            self.contexts = {k: probabilities(v, n, f"mechanism.contexts[{k}]") for k, v in self.contexts.items()}
        setting = self.setting()
        self.objective = self.objective.bind(setting)
        self.objective.check(n, m, self.keys)
        self.privacy = [_bind(notion, i, setting) for i, notion in enumerate(self.privacy)]
        for i, notion in enumerate(self.privacy):
            self._notion_keys(notion, i)

    def setting(self) -> Setting:
        """What the objective and the notions may take from the problem: domains, metric, contexts."""
        return Setting(self.inputs, self.outputs, self.metric, self.contexts)

    def _notion_keys(self, notion: Notion, index: int) -> list[str]:
        """The mechanism keys ``notion`` constrains; ProblemError when it names one the problem
        does not have, or when it still needs what the problem knows (checked at construction
        and again at compile: ``privacy`` is a list a caller may extend, and a notion added
        after construction is not completed)."""
        if _bind(notion, index, self.setting()) is not notion:
            raise ProblemError(f"{notion!r} was added after the problem was built and needs what the "
                               "problem knows (its metric, inputs or contexts): build the problem with "
                               "it", key=f"privacy[{index}]")
        keys = notion.keys(self.keys)
        missing = [k for k in keys if k not in self.keys]
        if missing:
            raise ProblemError(f"notion '{notion.name}' refers to unknown mechanism contexts {missing}; "
                               f"expected among {self.keys}", key=f"privacy[{index}]")
        return keys

    def __repr__(self) -> str:
        same = self.outputs is self.inputs or self.outputs.same_as(self.inputs)
        return preview.call("Problem", [
            ("name", repr(self.name)), ("inputs", repr(self.inputs)),
            ("outputs", None if same else repr(self.outputs)),
            ("metric", None if self.metric is None else repr(self.metric)),
            ("contexts", None if not self.contexts else preview.mapping(self.contexts)),
            ("objective", repr(self.objective)),
            ("privacy", "[" + ", ".join(repr(n) for n in self.privacy) + "]")])

    @property
    def keys(self) -> list[str]:
        return list(self.contexts) if self.contexts else [DEFAULT]

    @property
    def linear(self) -> bool:
        return self.objective.linear and all(n.linear for n in self.privacy)

    # pipeline -------------------------------------------------------------------------------
    def compile(self, parametric: bool = False, scaled: bool = False, scale: float | None = None) -> Program:
        """Problem → convex program (cvxpy). With ``parametric``, ε-dependent coefficients are
        cvxpy Parameters in the program's ``coefficients``, whose ``retarget`` moves the program
        to another ε without recompiling (sweeps); the notions are not written to. With
        ``scaled``, the program minimises objective / s with s = :meth:`Objective.magnitude`
        (``Program.scale``; :func:`run_solver` reports values in the objective's units), so that
        tiny or huge losses meet the solvers' absolute tolerances at their natural scale;
        otherwise s = 1. A given ``scale`` is s itself (a re-solve in units of a value found).
        Raises ProgramTooLarge when the program cannot fit in memory (:mod:`.program_size`)."""
        if self.objective.sense == "maximize":
            raise ProblemError(f"the {self.objective.kind} objective {NOT_CONVEX}", key="objective.kind")
        start = time.perf_counter()
        coefficients = Coefficients(parametric)
        n, m = len(self.inputs), len(self.outputs)
        check_rows(declared_rows(self))  # before the compile: the pair notions' alone may not fit
        K = {k: cp.Variable((n, m), nonneg=True, name=f"K[{k}]") for k in self.keys}
        constraints = [cp.sum(v, axis=1) == 1 for v in K.values()]
        for i, notion in enumerate(self.privacy):
            constraints += notion.constraints({k: K[k] for k in self._notion_keys(notion, i)}, coefficients)
        scale = (self.objective.magnitude() if scaled else 1.0) if scale is None else scale
        objective = self.objective.expression(K, scale)
        check_rows(built_rows(constraints, objective), conic=not self.linear)
        program = cp.Problem(cp.Minimize(objective), constraints)
        return Program(program, K, self.linear, time.perf_counter() - start, scale=scale,
                       feasible_by_design=self.data_independent_design_holds(), coefficients=coefficients,
                       relaxed=any(n.relaxed for n in self.privacy), gap_tolerance=self.gap_tolerance)

    def solve(self, solver: str | None = None, verbose: bool = False, *, time_limit: float | None = None,
              progress: Callable[[dict], None] | None = None) -> Result:
        """Compile, solve, repair and certify. Never raises for solver trouble: the status says.

        With the "auto" solver the special solvers (:func:`mechdesign.solvers.special_solvers`)
        are tried first, in order; whether each applied and what it did (solved, declined and
        why, or the exception it raised) is listed in the result's ``solver["special_solvers"]``
        (``mechdesign solve --explain`` prints it), and an exception only moves on to the next
        route.
        An unknown ``solver`` name raises ProblemError (bad input, not solver trouble).

        ``time_limit`` (seconds; default the problem's own ``time_limit``) bounds the solve:
        when it is reached the result is the best design found so far, certified private, with
        its proven bound and gap, and status "time-limit". The solvers stop early by the time
        the certificate is expected to take (each notion's ``certification_seconds``; at most
        half the limit), so that the certified result arrives within the limit. ``progress`` is called with each
        round an iterative solver reports (value, proven bound, gap); the rounds are kept in
        ``solver["progress"]``. Memory freed during the solve is kept for reuse until it ends
        (:mod:`~mechdesign.core.heap`)."""
        with freed_memory_kept():
            return self._solve(solver, verbose, time_limit, progress)

    def _solve(self, solver, verbose, time_limit, progress) -> Result:
        chosen = check_solver(self.solver if solver is None else solver)
        limits = Limits(self.time_limit if time_limit is None else time_limit, progress,
                        reserve=self.certification_seconds())
        attempts: list[dict] = []
        if chosen == "auto":
            found, attempts = self.solve_specially(limits)
            if found is not None:
                return after_special_solver(self, self.finish(*found, limits), limits)
        if self.objective.sense == "maximize":
            return self.refuse_maximised(chosen, attempts)
        try:
            program = self.compile(scaled=True)
        except ProgramTooLarge as exc:  # never started: the special solvers' records say why
            return self._data_independent({"special_solvers": attempts} if attempts else {}, str(exc))
        raw, outcome = run_solver(program, chosen, verbose, limits)
        if attempts:
            outcome = outcome.recording(special_solvers=attempts)
        result = self.finish(raw, outcome, limits)
        if needs_resolve(result):
            result = resolve_in_units_of_value(self, result, chosen, verbose, limits)
        return result

    def certification_seconds(self) -> float:
        """Seconds the certificate is expected to take (the notions' estimates, summed)."""
        return sum(n.certification_seconds(len(self.outputs)) for n in self.privacy)

    def refuse_maximised(self, chosen: str, attempts: list[dict]) -> Result:
        """A maximised objective no special solver solved, which the general route cannot take:
        ProblemError saying why the staircase solver did not (:func:`refusal`); when it applied
        but could not prove an optimum, the certified data-independent design with status
        "failed" and its outcome."""
        message, applied = refusal(self.objective, chosen, attempts)
        if not applied:
            raise ProblemError(message, key="solve.solver" if chosen != "auto" else "objective.kind")
        return self._data_independent({"special_solvers": attempts, "name": STAIRCASE}, message)

    def solve_specially(self, limits: Limits) -> tuple[tuple[dict, SolverOutcome] | None, list[dict]]:
        """Try the special solvers in order: ((raw, outcome) of the one that solved, or None; the
        record of every solver, which is also put in that outcome's record as
        ``"special_solvers"``)."""
        for i, notion in enumerate(self.privacy):
            self._notion_keys(notion, i)
        found, attempts = run_special_solvers(self, limits, special_solvers())
        if found is None:
            return None, attempts
        raw, outcome = found
        return (raw, outcome.recording(special_solvers=attempts)), attempts

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
        """The objective of the uniform (data-independent) mechanism: its natural scale. Where
        that is 0 up to round-off (below 1e-12 of the objective's coefficients: a marginal error
        whose profiles the uniform design leaves exactly or nearly unchanged), the first of the
        |objective| of the design that sends every input to the first output and of the identity
        (square designs) above that, else 1: a gap of 1e-15 on an optimum of 0 is no gap."""
        n, m = len(self.inputs), len(self.outputs)

        def designs():  # built one at a time: the uniform one settles nearly every problem
            yield np.full((n, m), 1.0 / m)
            yield np.tile(np.eye(1, m), (n, 1))
            if n == m:
                yield np.eye(n)

        for design in designs():
            try:
                scale = abs(float(self.objective.value({k: design for k in self.keys})))
                floor = 1e-12 * self.objective.magnitude()
            except Exception:  # objectives that need more than matrices (none today)
                return 1.0
            if scale > floor and math.isfinite(scale):
                return scale
        return 1.0

    def finish(self, raw: dict[str, np.ndarray] | None, outcome: SolverOutcome,
               limits: Limits | None = None) -> Result:
        """Raw solver matrices and how the solve ended → certified, labelled result.

        The status is "optimal" only when every certificate line holds, the objective, a
        proven bound and the relative gap are finite and the gap is within
        ``gap_tolerance``. Without a matrix (a solver failure) the certified data-independent
        design is returned with status "failed"; "infeasible" only comes with a checked
        Farkas certificate (:func:`run_solver`). The result's ``solver`` record is a copy of
        ``outcome.record`` with what was judged added; ``outcome`` is left as it is."""
        record = dict(outcome.record)
        status, message = outcome.status, outcome.message
        note = privacy_note(self.privacy)
        if note:
            record["privacy"] = note
        if limits is not None and limits.time_limit is not None:
            record["time_limit"] = limits.time_limit
            if limits.history and "progress" not in record:
                record["progress"] = list(limits.history)
        if outcome.infeasibility_proven:
            record["infeasibility_proven"] = True
        if raw is None:
            if status == "infeasible" and not outcome.infeasibility_proven:
                status, message = "failed", f"the solver claimed infeasibility without a certificate {message}".strip()
            if status != "infeasible":
                return self._data_independent(record, message, status if status == TIME_LIMIT else "failed")
            return Result(self.name, status, self.objective.kind, None, {}, [], record, message=message)
        record.setdefault("relaxed", False)  # the general route says when its program was one
        unjudged = dict(record)
        offered, trivial_values = None, {}
        if outcome.status != "optimal":  # a design left short, which a trivial design may beat:
            offered = self._offered(self._value_before_certification(raw), unjudged, outcome,
                                    " before certification", trivial_values)  # then not certified
        if offered is None:
            deadline = None if limits is None else limits.end()
            mechs, audits, value, status, message = self._certified(raw, record, outcome, status, deadline)
            if status != "optimal" and all(a.holds for a in audits):
                offered = self._offered(value, unjudged, outcome, "", trivial_values)
        if offered is not None:
            mechs, audits, value, status, message, record = offered
        result = Result(
            self.name, status, self.objective.kind, value,
            {k: Mechanism(v, self.inputs, self.outputs, claims=self.privacy, validate=False, name=k)
             for k, v in mechs.items()},
            audits, record, message,
        )
        result.extra.update(self.objective.report(mechs))
        return result

    def _offered(self, value: float, unjudged: dict, outcome: SolverOutcome, when: str,
                 values: dict[str, float] | None = None) -> tuple | None:
        """The trivial design that beats objective ``value`` (:func:`better_trivial_design`,
        audited on the matrices returned), as (matrices, audits, objective, status, message,
        record); None when none does. Tried before a short solve's design is certified, so that a
        replaced design costs no audit (about 100 s at 5,000 locations). ``values`` keeps the
        trivial designs' objectives between the offers before and after certification."""
        if not np.isfinite(value):
            return None
        better = better_trivial_design(self.privacy, self.keys, len(self.inputs), len(self.outputs),
                                       self.objective, value, self._strictly_better, values)
        if better is None:
            return None
        name, mechs, objective, audits = better
        record = {**unjudged, "trivial_design": f"the {name} (objective {objective:.10g}) replaced "
                                              f"the solver's design (objective {value:.10g}{when})"}
        status, message = self._judge(outcome.status, objective, record, self._bound(record, outcome, objective),
                                      audits)
        return mechs, audits, objective, status, message, record

    def _value_before_certification(self, raw: dict) -> float:
        """The objective of the solver's matrices with their rows cleaned (NaN when the objective
        needs more than matrices)."""
        try:
            return float(self.objective.value({k: clean(v) for k, v in raw.items()}))
        except Exception:  # noqa: BLE001 — no value: nothing is offered before certification
            return math.nan

    def _certified(self, raw: dict, record: dict, outcome: SolverOutcome, status: str,
                   deadline: float | None = None) -> tuple:
        """(certified matrices, audits, objective, status, message) of the matrices ``raw``,
        repaired by ``deadline`` where a repair can stop early (:func:`certify`); the
        certificate's notes, the bound and the gap go into ``record``."""
        mechs, audits, notes = certify(self.privacy, raw, deadline=deadline)
        value = self.objective.value(mechs)
        record.update(notes)
        status, message = self._judge(status, value, record, self._bound(record, outcome, value), audits)
        return mechs, audits, value, status, message

    def _strictly_better(self, candidate: float, value: float) -> bool:
        """Whether objective ``candidate`` beats ``value`` by more than their round-off."""
        margin = 4 * np.finfo(float).eps * max(abs(value), abs(candidate), self.objective.magnitude())
        return candidate < value - margin if self.objective.sense == "minimize" else candidate > value + margin

    def least_value(self) -> float:
        """A lower bound on the optimum that needs no solver (:meth:`Objective.least_value
        <mechdesign.core.objectives.Objective.least_value>`; −inf for a maximised objective): with
        it an optimum of 0 (a point-mass prior, a loss that vanishes on a whole column, a
        marginal error that a data-independent design keeps at 0) is proven exactly instead of
        to the duals' round-off."""
        return self.objective.least_value() if self.objective.sense == "minimize" else -math.inf

    def _bound(self, record: dict, outcome: SolverOutcome, value: float) -> bool:
        """Put the bound on the optimum into ``record`` (``bound``, ``gap``, ``bound_proven``, and
        the solver's own ``objective``); whether a proven bound is required for "optimal" (LP
        routes). A special solver's bound is ``outcome.bound`` (a lower bound, or an upper
        bound for a maximised objective; :meth:`_gap`). The general route's bound is proven
        from the solver's duals on the standard-form data (``outcome.proof``; :mod:`lp_bound`,
        :mod:`conic_bound`) with the certified value as cut-off. A conic program whose proven
        bound is not within the gap tolerance (its residuals times the box add up on large
        programs; cones other than the exponential; a direction the box leaves unbounded)
        reports the solver's dual objective instead, marked not proven (``bound_kind``), and the
        proven one as ``proven_bound``. Every bound is at least the objective's least value
        (:meth:`least_value`), which alone proves the gap when the value is within the
        tolerance of it."""
        claimed, least = outcome.bound, self.least_value()
        if outcome.proof is not None:
            proven = float(np.fmax(outcome.proven_bound(value), least))  # (fmax: a NaN proof gives least)
            gap = self.gap_of(value, proven)
            if outcome.proof.required or gap <= self.gap_tolerance:
                finite = bool(np.isfinite(proven))
                if finite and claimed is not None:
                    record["objective"] = claimed  # the solver's own value, beside the proven bound
                record["bound_proven"] = finite
                record["bound"] = float(proven) if finite else None
                if finite:
                    record["gap"] = gap
                return outcome.proof.required
            record["proven_bound"] = float(proven) if np.isfinite(proven) else None
        if claimed is not None:
            record["objective"] = claimed
        if outcome.bound_proven and claimed is not None or self.gap_of(value, least) <= self.gap_tolerance:
            # a proven bound, or the least value alone closes the gap (a solver's unproven
            # bound is then not needed)
            bound = max(claimed, least) if outcome.bound_proven and claimed is not None else least
            record.update(bound=float(bound), gap=self.gap_of(value, bound), bound_proven=True)
        elif claimed is not None:
            record["bound"] = claimed
            record["gap"] = self.gap_of(value, claimed)
            record["bound_proven"] = outcome.bound_proven
            if not outcome.bound_proven:
                record.setdefault("bound_kind", "the solver's reported bound (not proven)")
                if self.gap_of(claimed, value) > self.gap_tolerance:
                    # above the certified value by more than the tolerance: the solver's number
                    # is not a lower bound at all, and a gap of 0 measured on it proves nothing
                    record["gap"] = float("nan")
                    record["bound_kind"] = "the solver's reported bound, above the certified value (not a bound)"
        return False

    def gap_of(self, value: float, bound: float) -> float:
        """:func:`relative_gap` of a value from a bound on the optimum: value − bound for a
        minimised objective (the bound is a lower bound), bound − value for a maximised one
        (an upper bound), relative to |value|."""
        if self.objective.sense == "maximize":
            return relative_gap(-value, -bound, self.objective_scale())
        return relative_gap(value, bound, self.objective_scale())

    def _judge(self, status: str, value: float, record: dict, needs_proof: bool, audits) -> tuple[str, str]:
        """The honest status and message for a certified matrix: "optimal" needs every audit
        to hold, a finite objective and, where a bound is required, a finite gap within the
        tolerance (a NaN gap is never within it)."""
        if not all(a.holds for a in audits):
            bad = ", ".join(a.notion for a in audits if not a.holds)
            return "failed", f"the returned matrix fails its audit ({bad}); it is not a valid design"
        if not np.isfinite(value):
            return "failed", f"the objective of the certified matrix is not finite ({value})"
        gap = record.get("gap")
        if status == TIME_LIMIT:
            within = gap is not None and np.isfinite(gap) and gap <= self.gap_tolerance and record.get("bound_proven")
            if within:  # the bound closed the gap in the last round before the limit
                return "optimal", ""
            shown = "no proven bound" if gap is None or not np.isfinite(gap) else f"proven gap {gap:.3g}"
            return TIME_LIMIT, (f"the time limit of {record.get('time_limit', 0):g} s was reached: the best "
                                f"design so far is certified private ({shown})")
        if needs_proof and not record.get("bound_proven"):
            return "failed", ("the mechanism is certified private but no finite lower bound on the "
                              "optimum could be proven from the solver's duals")
        if gap is None:
            side = "upper" if self.objective.sense == "maximize" else "lower"
            return "failed", f"the mechanism is certified private but no {side} bound on the optimum was reported"
        if not (np.isfinite(gap) and gap <= self.gap_tolerance):
            shown = f"its optimality gap {gap:.3g} exceeds" if np.isfinite(gap) else "no gap is within"
            return "failed", f"the mechanism is certified private but {shown} the tolerance {self.gap_tolerance:g}"
        if not record.get("bound_proven"):
            proven = record.get("proven_bound")
            return status, ("the gap is measured on the solver's reported bound, which could not be proven"
                            + (f" (the proven bound is {proven:.10g})" if proven is not None else ""))
        return status, ""

    def _data_independent(self, record: dict, message: str, status: str = "failed") -> Result:
        """After a solver failure (or a time limit reached before any design): the certified
        data-independent design (every notion of the package holds for it with zero leakage),
        status "failed" (or "time-limit"), the solver's message kept."""
        mechs, audits = self.data_independent_design()
        text = (f"the time limit was reached before a design was found ({message or 'no solution'})"
                if status == TIME_LIMIT else f"the solver failed ({message or 'no solution'})")
        if not all(a.holds for a in audits):
            return Result(self.name, "failed", self.objective.kind, None, {}, [], dict(record), message=text)
        record = {**record, "fallback": "data-independent design"}
        return Result(
            self.name, status, self.objective.kind, self.objective.value(mechs),
            {k: Mechanism(v, self.inputs, self.outputs, claims=self.privacy, validate=False, name=k)
             for k, v in mechs.items()},
            audits, record, text + "; returned the certified data-independent design, which is private but "
                                 "not optimised")


def _domain(value: Any, key: str) -> Domain:
    """``inputs`` / ``outputs`` as a Domain (:meth:`Domain.coerce`), errors naming ``key``."""
    try:
        return Domain.coerce(value)
    except ProblemError as exc:
        raise ProblemError(exc.detail, key=key) from None


def _metric(value: Any, inputs: Domain) -> Metric | None:
    """``metric`` as a Metric (:meth:`Metric.coerce`) checked on the inputs, or None."""
    if value is None:
        return None
    try:
        metric = Metric.coerce(value)
        metric.distances(inputs)
    except ProblemError as exc:
        raise ProblemError(exc.detail, key="metric" if not exc.key or exc.key == "metric"
                           else exc.key) from None
    return metric


def _bind(notion: Notion, index: int, setting: Setting) -> Notion:
    """``notion`` bound to the problem (:meth:`Notion.bind`), errors located at ``privacy[index]``."""
    try:
        return notion.bind(setting)
    except ProblemError as exc:
        key = f"privacy[{index}]" + (f".{exc.key}" if exc.key else "")
        raise ProblemError(exc.detail, key=key) from None


def privacy_note(notions: Sequence[Notion]) -> str:
    """A note for the record when nothing is private (no notion; every ε is finite)."""
    return "" if notions else "none: no privacy constraint"
