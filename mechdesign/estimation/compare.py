"""The data behind ``mechdesign compare``: the optimal design next to classic baselines.

For a problem, each row is a mechanism — the certified optimum, then each requested baseline —
with its objective under the problem's objective, its audit under the problem's privacy
constraints, its own privacy claim audited, and (with ``users``) the error of estimating the
input distribution by Inv and IBU over repeated simulated collections (Palamidessi, “Privacy vs Utility, Differential Privacy and the Hybrid Model”, lecture slides).
The error is measured against what there was to find: the simulated users' own input
distribution (their empirical histogram) in each collection.

A mechanism whose rows are all equal reveals nothing about the input (its output law is the
same whatever the input): it is marked so (``Row.reveals_nothing``), and the only estimate an
analyst can make from it is the prior they assume — the problem's prior (the contexts'
distributions, else the objective's prior, else uniform) — so that is the estimate its error
is measured on, for Inv and IBU alike.

Baselines are put at the problem's privacy level. By default (``calibrate=True``) each
baseline's ε is the largest for which the baseline passes every privacy constraint of the
problem (found by bisection on the audited levels, which are exact and cheap), so every row is
a valid competitor and the design's objective can be compared fairly: e.g. on a problem with
ε-LDP over 10 ordered values, the truncated geometric gets ε/9; under ε·d-privacy with
d >= 1, k-ary RR gets ε·min d. With ``calibrate=False`` a baseline simply takes the problem's
ε in its own notion (Palamidessi’s slides compares kRR at ε-LDP with d-privacy at ε·d that way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.estimation.comparison_rows import Row, reveals_nothing
from mechdesign.estimation.estimation import MEASURES, errors, ibu, matrix_inversion
from mechdesign.estimation.robust_rows import is_robust, nominal_loss, robust_rows
from mechdesign.estimation.simulation import TrialSummary, simulate
from mechdesign.mechanisms.metric_mechanisms import exponential, geometric, line_spacing
from mechdesign.mechanisms.planar import grid_lattice, planar_geometric, planar_laplace
from mechdesign.mechanisms.profile_mechanisms import (
    one_bit_cluster,
    smooth_categorical,
    smooth_one_bit,
)
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.mechanisms.trivial_mechanisms import identity, uniform
from mechdesign.mechanisms.unary_encoding import UNARY_MATRIX_MAX_K, UnaryEncoding, oue, rappor
from mechdesign.privacy.base import DEFAULT
from mechdesign.privacy.certify import audit_all
from mechdesign.privacy.distp import ProfilePrivacy
from mechdesign.privacy.ldp import LDP
from mechdesign.privacy.metric import MetricPrivacy

#: Relative slack when calibrating: a level counts as met when achieved <= requested (1 + 1e-12)
STRICT_RTOL = 1e-12


# ---------------------------------------------------------------------------------------------
# problem facts

def problem_epsilon(problem) -> float | None:
    """The ε baselines are put at: the smallest ε among the problem's notions (None if none)."""
    eps = [float(n.epsilon) for n in problem.privacy if hasattr(n, "epsilon")]
    return min(eps) if eps else None


def problem_metric(problem) -> Metric | None:
    """The ground metric: the problem's own (a problem file's [metric]), else a metric-privacy
    notion's."""
    if problem.metric is not None:
        return problem.metric
    for n in problem.privacy:
        if isinstance(n, MetricPrivacy):
            return n.metric
    return None


def ground_cost(problem) -> np.ndarray:
    """Ground cost over the inputs for EMD: the metric's distances, else discrete (EMD = TV)."""
    metric = problem_metric(problem)
    if metric is not None:
        try:
            return metric.distances(problem.inputs)
        except ProblemError:
            pass
    n = len(problem.inputs)
    return 1.0 - np.eye(n)


def input_distributions(problem, prior: str | None = None) -> dict[str, np.ndarray]:
    """Per mechanism key, the distribution users' inputs are drawn from in simulations: the
    contexts' distributions; for one mechanism the named ``prior``, else the objective's prior,
    else uniform."""
    if problem.contexts:
        return {k: np.asarray(v, float) for k, v in problem.contexts.items()}
    n = len(problem.inputs)
    if prior is not None:
        model = problem.extras.get("model") if problem.extras else None
        if model is None:
            raise ProblemError("--prior needs a problem file with [distributions]", key="--prior")
        return {DEFAULT: model.distribution(prior, "--prior")}
    obj = problem.objective
    if isinstance(obj, ExpectedLoss) and DEFAULT in obj.row_weights:
        w = np.asarray(obj.row_weights[DEFAULT], float)
        if w.sum() > 0:
            return {DEFAULT: w / w.sum()}
    return {DEFAULT: np.full(n, 1.0 / n)}


def _profile_notion(problem) -> ProfilePrivacy | None:
    for n in problem.privacy:
        if isinstance(n, ProfilePrivacy):
            return n
    return None


def _same_io(problem) -> str | None:
    if not problem.outputs.same_as(problem.inputs):
        return "needs the outputs to equal the inputs"
    return None


# ---------------------------------------------------------------------------------------------
# the baseline registry: name -> (applicable(problem) -> reason or None, build(problem, ε))

@dataclass(frozen=True)
class BaselineSpec:
    name: str
    description: str
    applicable: Callable
    build: Callable  # (problem, ε or None) -> Mechanism | dict[str, Mechanism] | UnaryEncoding
    parametric: bool = True


def _krr_ok(p):
    return _same_io(p) or (None if len(p.inputs) >= 2 else "needs at least two values")


def _geometric_ok(p):
    reason = _same_io(p)
    if reason:
        return reason
    try:
        line_spacing(p.inputs)
    except ProblemError as exc:
        return exc.detail
    return None


def _planar_ok(p):
    reason = _same_io(p)
    if reason:
        return reason
    try:
        grid_lattice(p.inputs, 1.0)
    except ProblemError as exc:
        return exc.detail
    return None


def _one_bit_ok(p):
    if len(p.inputs) != 2:
        return "needs one-bit inputs"
    if not p.contexts or _profile_notion(p) is None:
        return "needs profiles: [mechanism] contexts and a profile privacy constraint"
    return _same_io(p)


def _categorical_ok(p):
    if not p.contexts or _profile_notion(p) is None:
        return "needs profiles: [mechanism] contexts and a profile privacy constraint"
    return _same_io(p)


def _profile_args(p):
    notion = _profile_notion(p)
    edges = [(a.name, b.name) for a, b in notion.pairs]
    return {k: np.asarray(v, float) for k, v in p.contexts.items()}, edges


def _exponential(p, eps):
    return exponential(p.inputs, problem_metric(p) or Metric("discrete"), eps)


BASELINES: dict[str, BaselineSpec] = {s.name: s for s in [
    BaselineSpec("krr", "k-ary randomized response", _krr_ok, lambda p, e: krr(p.inputs, e)),
    BaselineSpec("geometric", "truncated geometric (ordered values)", _geometric_ok,
                 lambda p, e: geometric(p.inputs, e)),
    BaselineSpec("exponential", "exponential mechanism, score −d", _same_io, _exponential),
    BaselineSpec("planar-laplace", "planar Laplace on the grid", _planar_ok,
                 lambda p, e: planar_laplace(p.inputs, e)),
    BaselineSpec("planar-geometric", "planar geometric on the grid", _planar_ok,
                 lambda p, e: planar_geometric(p.inputs, e)),
    BaselineSpec("rappor", "basic RAPPOR (symmetric unary encoding)", lambda p: None,
                 lambda p, e: rappor(p.inputs, e)),
    BaselineSpec("oue", "optimized unary encoding", lambda p: None, lambda p, e: oue(p.inputs, e)),
    BaselineSpec("one-bit-cluster", "Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019 Algorithm 2", _one_bit_ok,
                 lambda p, e: one_bit_cluster(*_profile_args(p), e)),
    BaselineSpec("smooth-one-bit", "Geumlek and Chaudhuri 2019 Algorithm 3", _one_bit_ok,
                 lambda p, e: smooth_one_bit(*_profile_args(p), e)),
    BaselineSpec("smooth-categorical", "Geumlek and Chaudhuri 2019 Algorithm 4", _categorical_ok,
                 lambda p, e: smooth_categorical(*_profile_args(p), e, labels=p.inputs)),
    BaselineSpec("uniform", "non-informative (uniform output)", lambda p: None,
                 lambda p, e: uniform(p.inputs, p.outputs), parametric=False),
    BaselineSpec("identity", "report the true value", _same_io,
                 lambda p, e: identity(p.inputs), parametric=False),
]}


def parse_baselines(text: str | Sequence[str] | None) -> list[str]:
    """'krr,geometric' -> ['krr', 'geometric']; unknown names are a ProblemError (key --baselines)."""
    if text is None:
        return []
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [s.strip() for s in items if s.strip()]
    if not names:
        raise ProblemError(f"expected a comma-separated list of baselines from: {', '.join(BASELINES)}",
                           key="--baselines")
    for name in names:
        if name not in BASELINES:
            raise ProblemError(f"unknown baseline '{name}'; expected one of: {', '.join(BASELINES)}",
                               key="--baselines")
    return list(dict.fromkeys(names))


def applicable(problem, names: Sequence[str] | None = None) -> list[str]:
    """Names (default: all) whose baseline applies to the problem."""
    return [n for n in (names or BASELINES) if BASELINES[n].applicable(problem) is None]


# ---------------------------------------------------------------------------------------------
# building, auditing, calibrating one baseline

def _as_mechs(problem, built) -> dict[str, np.ndarray] | None:
    """Matrices keyed like the problem's mechanisms (None for a unary encoding beyond the matrix limit)."""
    if isinstance(built, UnaryEncoding):
        if built.k > UNARY_MATRIX_MAX_K:
            return None
        built = built.mechanism()
    if isinstance(built, Mechanism):
        return {k: built.matrix for k in problem.keys}
    return {k: built[k].matrix for k in problem.keys}


def _audits(problem, built) -> list[Audit] | None:
    """The problem's privacy constraints audited on a baseline (None: cannot be audited)."""
    if isinstance(built, UnaryEncoding) and built.k > UNARY_MATRIX_MAX_K:
        if all(isinstance(n, LDP) for n in problem.privacy):
            return [built.audit(n) for n in problem.privacy]
        return None
    return audit_all(problem.privacy, _as_mechs(problem, built))


def _claims(built) -> list[Audit]:
    """The baseline's own privacy claim, audited."""
    from mechdesign.privacy.audit import as_matrices

    if isinstance(built, UnaryEncoding):
        return [built.audit()]
    if isinstance(built, Mechanism):
        return [c.audit(as_matrices(built)) for c in built.claims]
    first = next(iter(built.values()))
    mats = {k: m.matrix for k, m in built.items()}
    return [c.audit({k: mats[k] for k in c.keys(list(mats))}) for c in first.claims]


def _strict(audits: list[Audit] | None) -> bool:
    """Every audit holds with round-off slack only (no 1e-9 tolerance creep when calibrating)."""
    if audits is None:
        return False
    for a in audits:
        if not a.holds:
            return False
        for key, req in a.requested.items():
            got = a.achieved.get(key)
            numeric = isinstance(req, (int, float)) and isinstance(got, (int, float))
            if numeric and not got <= req * (1 + STRICT_RTOL) + 1e-15:
                return False
    return True


def calibrate(problem, spec: BaselineSpec, epsilon: float) -> float | None:
    """Largest ε' for which the baseline passes all the problem's constraints (bisection on the
    audited levels, relative precision 1e-10); ``epsilon`` itself when it is already the largest
    to 1e-9; None when no ε' > 0 down to 1e-12 works (at ε = 0: 0 when it holds there, else None)."""
    if not problem.privacy:
        return epsilon

    def ok(e):
        try:
            return _strict(_audits(problem, spec.build(problem, e)))
        except (ProblemError, RuntimeError):
            return False

    if epsilon <= 0:  # nothing to search: ε = 0 holds or nothing does
        return epsilon if ok(epsilon) else None
    if ok(epsilon):
        if not ok(epsilon * (1 + 1e-9)):
            return epsilon
        lo, hi = epsilon, epsilon * 2
        while ok(hi):
            lo, hi = hi, hi * 2
            if hi > 1e4:
                return lo
    else:
        lo, hi = epsilon / 2, epsilon
        while not ok(lo):
            lo, hi = lo / 2, lo
            if lo < 1e-12:
                return None
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------------------------
# rows

def baseline_row(problem, name: str, epsilon: float | None = None, calibrated: bool = True) -> Row:
    """Build, calibrate and audit one baseline (no simulation)."""
    spec = BASELINES[name]
    reason = spec.applicable(problem)
    if reason:
        return Row(name, "baseline", status="n/a", note=reason)
    eps = problem_epsilon(problem) if epsilon is None else epsilon
    used = None
    if (name in ("rappor", "oue") and len(problem.inputs) > UNARY_MATRIX_MAX_K
            and not all(isinstance(n, LDP) for n in problem.privacy)):
        return Row(name, "baseline", status="n/a",
                   note=f"output space 2^{len(problem.inputs)}: only ε-LDP constraints can be audited "
                        f"(the matrix is built for k <= {UNARY_MATRIX_MAX_K})")
    if spec.parametric:
        if eps is None:
            return Row(name, "baseline", status="n/a", note="the problem has no ε to put it at")
        used = calibrate(problem, spec, eps) if calibrated else eps
        if used is None:
            return Row(name, "baseline", status="n/a",
                       note="no ε > 0 makes it satisfy the problem's privacy constraints")
    try:
        built = spec.build(problem, used)
    except ProblemError as exc:
        return Row(name, "baseline", used, status="n/a", note=exc.detail)
    mechs = _as_mechs(problem, built)
    objective = None
    note = ""
    if isinstance(built, UnaryEncoding):
        note = f"output space 2^{built.k}: no objective"
    elif mechs is not None:
        objective = problem.objective.value(mechs)
    audits = _audits(problem, built)
    return Row(name, "baseline", used, objective, audits, _claims(built), note=note,
               mechanisms={"built": built}, reveals_nothing=reveals_nothing(built))


def design_row(problem, result=None) -> Row:
    result = result if result is not None else problem.solve()
    row = Row("optimal design", "design", problem_epsilon(problem), result.objective,
              list(result.certificate), status=result.status, note=result.message)
    row.claims = list(result.certificate)
    row.mechanisms = {"built": {k: m for k, m in result.mechanisms.items()}} if result.mechanisms else {}
    row.reveals_nothing = bool(result.mechanisms) and reveals_nothing(result.mechanisms)
    return row


# ---------------------------------------------------------------------------------------------
# estimation over simulated collections

def _merge(summaries: list[TrialSummary]) -> TrialSummary:
    first = summaries[0]
    errs = {est: {m: np.concatenate([s.errors[est][m] for s in summaries]) for m in first.errors[est]}
            for est in first.errors}
    return TrialSummary(first.users, first.trials, first.seed, errs,
                        [i for s in summaries for i in s.ibu_iterations],
                        sum(s.ibu_not_converged for s in summaries))


def _estimates(built, key: str, lam, prior, n: int, rng, ibu_options) -> tuple[dict, object]:
    """One simulated collection through a row's mechanism and its estimates of the input
    distribution by Inv and IBU, with IBU's run (None when it did not run). A mechanism that
    reveals nothing answers with the analyst's ``prior`` (None otherwise)."""
    if prior is not None:
        return {"inv": prior, "ibu": prior}, None
    if isinstance(built, UnaryEncoding):
        if built.k > UNARY_MATRIX_MAX_K:
            return {"inv": built.estimate(built.simulate(lam, n, rng), n)}, None
        k = built.mechanism().matrix
        bits = ((np.arange(2 ** built.k)[:, None] >> np.arange(built.k)[None, :]) & 1).astype(float)
        counts = simulate(k, lam, n, rng)
        inv = built.estimate(bits.T @ counts, n)  # the per-bit unbiased estimator, projected
    else:
        k = (built if isinstance(built, Mechanism) else built[key]).matrix
        counts = simulate(k, lam, n, rng)
        inv = matrix_inversion(k, counts)
    res = ibu(k, counts, **{"warn": False, **(ibu_options or {})})
    return {"inv": inv, "ibu": res.estimate}, res


def collection_trials(built, lam, n: int, trials: int, seed, cost, measures=MEASURES,
                      prior=None, key: str = DEFAULT, ibu_options: dict | None = None) -> TrialSummary:
    """``trials`` simulated collections of ``n`` users with inputs ~ ``lam`` through ``built``;
    per trial, each estimator's error against the users' own input distribution (their
    empirical histogram, n_x / n).

    Trial t draws from ``default_rng(SeedSequence(seed).spawn(trials)[t])``; every collection
    first draws the users' inputs n_x ~ Multinomial(n, λ) from it (as :func:`simulate` and
    :meth:`UnaryEncoding.simulate` do), so every row of a comparison sees the same users.
    ``prior``: for a mechanism that reveals nothing, the estimate both estimators give.
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    out: dict[str, dict[str, np.ndarray]] = {}
    iterations, stuck = [], 0
    for t, child in enumerate(root.spawn(int(trials))):
        truth = np.random.default_rng(child).multinomial(n, lam) / n  # the users' inputs
        estimates, run = _estimates(built, key, lam, prior, n, np.random.default_rng(child), ibu_options)
        if run is not None:
            iterations.append(run.iterations)
            stuck += not run.converged
        for est, theta in estimates.items():
            for m, v in errors(truth, theta, cost, measures).items():
                out.setdefault(est, {}).setdefault(m, np.empty(int(trials)))[t] = v
    label = seed.entropy if isinstance(seed, np.random.SeedSequence) else seed
    return TrialSummary(n, int(trials), label, out, iterations, stuck)


def estimate_row(problem, row: Row, users: int, trials: int, seed: int | None, cost: np.ndarray,
                 lams: Mapping[str, np.ndarray], measures=MEASURES, ibu_options: dict | None = None,
                 priors: Mapping[str, np.ndarray] | None = None) -> None:
    """Fill ``row.estimation`` (errors pooled over trials and contexts). Every row uses the same
    seeds (common random numbers: the same users for every mechanism). A row that reveals
    nothing answers with ``priors`` (default: :func:`input_distributions` of the problem, the
    prior the analyst assumes)."""
    built = row.mechanisms.get("built")
    if built is None or row.status == "n/a":
        return
    if row.reveals_nothing and priors is None:
        priors = input_distributions(problem)
    keys = list(lams)
    seeds = np.random.SeedSequence(seed).spawn(len(keys))
    summaries = [collection_trials(built, lams[key], users, trials, ss, cost, measures,
                                   priors[key] if row.reveals_nothing else None, key, ibu_options)
                 for key, ss in zip(keys, seeds)]
    merged = _merge(summaries)
    merged.seed = seed
    row.estimation = merged


# ---------------------------------------------------------------------------------------------
# the comparison

@dataclass
class Comparison:
    problem: str
    objective_kind: str
    epsilon: float | None
    calibrated: bool
    rows: list[Row]
    users: int | None = None
    trials: int | None = None
    seed: int | None = None
    lams: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        return {"problem": self.problem, "objective_kind": self.objective_kind, "epsilon": self.epsilon,
                "calibration": "problem" if self.calibrated else "native",
                "users": self.users, "trials": self.trials, "seed": self.seed,
                "rows": [r.to_dict() for r in self.rows]}


def compare(problem, baselines: Sequence[str] | None = None, *, users: int | None = None,
            trials: int = 10, seed: int | None = 0, calibrate: bool = True, prior: str | None = None,
            result=None, measures=MEASURES, ibu_options: dict | None = None,
            progress: Callable[[str], None] | None = None) -> Comparison:
    """Compare the certified optimum of ``problem`` with baselines (default: all applicable).

    Returns a :class:`Comparison` whose rows hold objective, audits and (with ``users``) the
    estimation errors by Inv and IBU, mean and standard deviation over ``trials`` simulated
    collections of ``users`` users (pooled over contexts).
    """
    names = list(baselines) if baselines else applicable(problem)
    for n in names:
        if n not in BASELINES:
            raise ProblemError(f"unknown baseline '{n}'; expected one of: {', '.join(BASELINES)}",
                               key="--baselines")
    note = progress or (lambda msg: None)
    note("solving the design")
    rows = [design_row(problem, result)]
    if is_robust(problem):
        note("solving the design for the nominal prior alone")
        rows += robust_rows(problem, rows[0], problem_epsilon(problem))
    for n in names:
        note(f"baseline {n}")
        rows.append(baseline_row(problem, n, calibrated=calibrate))
        mechs = _as_mechs(problem, rows[-1].mechanisms["built"]) if rows[-1].mechanisms else None
        if is_robust(problem) and mechs is not None:
            rows[-1].nominal_loss = nominal_loss(problem, mechs)
    lams = input_distributions(problem, prior)
    if users is not None:
        cost = ground_cost(problem)
        for r in rows:
            note(f"simulating {users} users x {trials} trials through {r.name}")
            if r.kind == "design" and r.status != "optimal":
                continue
            estimate_row(problem, r, users, trials, seed, cost, lams, measures, ibu_options,
                         input_distributions(problem))
    return Comparison(problem.name, problem.objective.kind, problem_epsilon(problem), calibrate, rows,
                      users, trials if users is not None else None, seed if users is not None else None, lams)


def baseline_curves(names: Sequence[str], calibrate: bool = True):
    """For :func:`mechdesign.design.sweep.sweep`'s ``at_each_point``: a function (problem, ε) ->
    {baseline name: its record at ε} for the baselines ``names`` (checked by
    :func:`parse_baselines`), each calibrated to the problem's constraints at that ε unless
    ``calibrate`` is False."""
    names = parse_baselines(list(names))

    def at(problem, epsilon: float) -> dict[str, dict]:
        out = {}
        for name in names:
            row = baseline_row(problem, name, epsilon, calibrated=calibrate)
            out[name] = {"epsilon": epsilon, "epsilon_used": row.epsilon, "objective": row.objective,
                         "holds": row.holds, "status": row.status, "note": row.note}
        return out

    return at
