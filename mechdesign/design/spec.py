"""Problem files (TOML): loading and validation at the boundary.

Every error names the file, the key and what was expected (:class:`ProblemError`). The builders
of notions and objectives are registries keyed by the file's names, so a new notion is one entry.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mechdesign.core.divergences import DIVERGENCES
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import check_distribution
from mechdesign.core.metrics import METRIC_KINDS, Metric
from mechdesign.core.objectives import (
    ErrorProbability,
    ExpectedLoss,
    MaxOffDiagonal,
    ProfileMarginalError,
    WorstCaseLoss,
    hamming_loss,
    off_diagonal_mask,
)
from mechdesign.privacy.base import DEFAULT, check_delta, check_epsilon
from mechdesign.privacy.distp import DistP, ProfilePrivacy, Side, XDistP
from mechdesign.privacy.divergence import DivergenceDistP, DivergenceDP, DivergenceXDistP, DivergenceXDP
from mechdesign.privacy.information import (
    GVulnerability,
    InformationPrivacy,
    MinEntropy,
    MutualInformation,
)
from mechdesign.privacy.ldp import ldp
from mechdesign.privacy.metric import MetricPrivacy
from mechdesign.privacy.target import FREE, ApproximateKnowledge, Target
from mechdesign.design.problem import SOLVERS, Problem
from mechdesign.core.sizes import check_design_size

TOP_KEYS = {"name", "description", "inputs", "outputs", "metric", "distributions", "mechanism",
            "privacy", "objective", "solve"}
DOMAIN_KEYS = {"labels", "size", "points", "grid"}


@dataclass
class Model:
    """What the problem file declares before notions are built: domains, metric, distributions,
    contexts. Builders read it to resolve names."""

    file: str
    data: dict
    inputs: Domain
    outputs: Domain
    metric: Metric | None
    distributions: dict[str, np.ndarray]
    contexts: dict[str, np.ndarray] | None
    weights: dict[str, float] | None
    extras: dict = field(default_factory=dict)

    def error(self, message: str, key: str) -> ProblemError:
        return ProblemError(message, file=self.file, key=key)

    @property
    def keys(self) -> list[str]:
        return list(self.contexts) if self.contexts else [DEFAULT]

    def distribution(self, name: Any, key: str) -> np.ndarray:
        if name == "uniform":
            return np.full(len(self.inputs), 1.0 / len(self.inputs))
        if not isinstance(name, str) or name not in self.distributions:
            known = ", ".join(self.distributions) or "none declared"
            raise self.error(f"unknown distribution {name!r}; expected one of: {known}", key)
        return self.distributions[name]

    def need_metric(self, key: str) -> Metric:
        if self.metric is None:
            raise self.error("this needs a ground metric: add a [metric] table", key)
        return self.metric

    def input_distances(self, key: str) -> np.ndarray:
        metric = self.need_metric(key)
        try:
            return metric.distances(self.inputs)
        except ProblemError as exc:
            raise exc.located(self.file, key)


# ---------------------------------------------------------------------------------------------
# small validators

def _table(data: dict, key: str, file: str, required: bool = False) -> dict | None:
    value = data.get(key.split(".")[-1])
    if value is None:
        if required:
            raise ProblemError(f"missing required table [{key}]", file=file, key=key)
        return None
    if not isinstance(value, dict):
        raise ProblemError(f"expected a table [{key}], got {type(value).__name__}", file=file, key=key)
    return value


def _no_unknown(table: dict, allowed: set, file: str, prefix: str) -> None:
    for k in table:
        if k not in allowed:
            raise ProblemError(f"unknown key; expected one of: {', '.join(sorted(allowed))}",
                               file=file, key=f"{prefix}{k}")


def _number(value, file, key, *, positive=False, integer=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProblemError(f"expected a number, got {value!r}", file=file, key=key)
    if not math.isfinite(value):
        raise ProblemError(f"expected a finite number, got {value!r}", file=file, key=key)
    if integer and int(value) != value:
        raise ProblemError(f"expected a whole number, got {value!r}", file=file, key=key)
    if positive and value <= 0:
        raise ProblemError(f"expected a positive number, got {value!r}", file=file, key=key)
    return value


def _epsilon(entry: dict, file: str, key: str, name: str = "epsilon") -> float:
    if name not in entry:
        raise ProblemError(f"missing '{name}' (a non-negative number)", file=file, key=f"{key}.{name}")
    try:
        return check_epsilon(entry[name])
    except ProblemError as exc:
        raise ProblemError(exc.detail, file=file, key=f"{key}.{name}")


def _delta(entry: dict, file: str, key: str) -> float:
    try:
        return check_delta(entry.get("delta", 0.0))
    except ProblemError as exc:
        raise ProblemError(exc.detail, file=file, key=f"{key}.delta")


def _name_pairs(value, file, key, what="pairs") -> list[tuple[str, str]]:
    if not isinstance(value, list) or not value:
        raise ProblemError(f"expected a non-empty list of [a, b] {what}", file=file, key=key)
    out = []
    for i, pair in enumerate(value):
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(p, str) for p in pair)):
            raise ProblemError(f"entry {i} must be a pair of names [a, b], got {pair!r}", file=file, key=key)
        if pair[0] == pair[1]:
            raise ProblemError(f"entry {i} pairs {pair[0]!r} with itself; a pair must name two different "
                               "values", file=file, key=key)
        out.append((pair[0], pair[1]))
    return out


def _matrix(value, file, key) -> np.ndarray:
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("expected a matrix (list of equal-length lists of numbers)", file=file, key=key)
    if m.ndim != 2:
        raise ProblemError(f"expected a matrix (list of lists), got shape {m.shape}", file=file, key=key)
    if not np.all(np.isfinite(m)):
        raise ProblemError("matrix entries must be finite numbers", file=file, key=key)
    return m


# ---------------------------------------------------------------------------------------------
# domains, metric, distributions

def parse_domain(table: dict, file: str, key: str) -> Domain:
    _no_unknown(table, DOMAIN_KEYS, file, f"{key}.")
    given = [k for k in ("size", "points", "grid") if k in table]
    if "labels" in table and "points" not in table:
        given.append("labels")
    if len(given) != 1:
        raise ProblemError("expected exactly one of labels / size / points / grid", file=file, key=key)
    kind = given[0]
    try:
        if kind == "labels":
            labels = table["labels"]
            if not isinstance(labels, list) or not labels:
                raise ProblemError("expected a non-empty list of labels", key=f"{key}.labels")
            if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in labels):
                raise ProblemError("labels must be strings or numbers", key=f"{key}.labels")
            return Domain.from_labels(labels)
        if kind == "size":
            n = _number(table["size"], file, f"{key}.size", positive=True, integer=True)
            return Domain.from_size(int(n))
        if kind == "points":
            pts = table["points"]
            if not isinstance(pts, list) or not pts:
                raise ProblemError("expected a non-empty list of coordinates", key=f"{key}.points")
            arr = np.asarray([p if isinstance(p, list) else [p] for p in pts], dtype=object)
            try:
                arr = np.asarray(arr.tolist(), dtype=float)
            except (TypeError, ValueError):
                raise ProblemError("points must be numbers or equal-length lists of numbers",
                                   key=f"{key}.points")
            labels = table.get("labels")
            if labels is not None and (not isinstance(labels, list) or len(labels) != len(arr)):
                raise ProblemError(f"expected {len(arr)} labels, one per point", key=f"{key}.labels")
            return Domain.from_points(arr, labels)
        grid = table["grid"]
        if not isinstance(grid, dict):
            raise ProblemError("expected { rows = R, cols = C, cell = size }", key=f"{key}.grid")
        _no_unknown(grid, {"rows", "cols", "cell"}, file, f"{key}.grid.")
        rows = _number(grid.get("rows"), file, f"{key}.grid.rows", positive=True, integer=True)
        cols = _number(grid.get("cols"), file, f"{key}.grid.cols", positive=True, integer=True)
        cell = _number(grid.get("cell", 1.0), file, f"{key}.grid.cell", positive=True)
        return Domain.from_grid(int(rows), int(cols), float(cell))
    except ProblemError as exc:
        raise exc.located(file, key)


def parse_metric(table: dict | None, inputs: Domain, file: str) -> Metric | None:
    if table is None:
        return None
    _no_unknown(table, {"kind", "edges", "matrix"}, file, "metric.")
    kind = table.get("kind")
    if not isinstance(kind, str) or kind not in METRIC_KINDS:
        raise ProblemError(f"expected one of {', '.join(METRIC_KINDS)}, got {kind!r}", file=file,
                           key="metric.kind")
    try:
        matrix = _matrix(table["matrix"], file, "metric.matrix") if "matrix" in table else None
        metric = Metric(kind, edges=table.get("edges"), matrix=matrix)
        metric.distances(inputs)  # validate now: points, labels, sizes
        if kind == "graph":
            metric.privacy_pairs(inputs)
        return metric
    except ProblemError as exc:
        raise exc.located(file, "metric")


def parse_distributions(table: dict | None, inputs: Domain, file: str) -> dict[str, np.ndarray]:
    out = {}
    for name, value in (table or {}).items():
        key = f"distributions.{name}"
        if value == "uniform":
            out[name] = np.full(len(inputs), 1.0 / len(inputs))
            continue
        if isinstance(value, str):
            raise ProblemError(f"expected a list of probabilities or \"uniform\", got {value!r}",
                               file=file, key=key)
        if not isinstance(value, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise ProblemError("expected a list of numbers (one probability per input)", file=file, key=key)
        try:
            out[name] = check_distribution(value, len(inputs), "distribution")
        except ProblemError as exc:
            raise ProblemError(exc.detail, file=file, key=key)
    return out


# ---------------------------------------------------------------------------------------------
# notions: name -> builder(model, entry, key) -> Notion; allowed keys per notion

NotionBuilder = Callable[[Model, dict, str], Any]
NOTIONS: dict[str, tuple[set[str], NotionBuilder]] = {}


def register_notion(name: str, keys: set[str]):
    """Register a problem-file notion: ``keys`` are the keys it accepts besides ``notion``."""
    def wrap(builder: NotionBuilder) -> NotionBuilder:
        NOTIONS[name] = (keys, builder)
        return builder
    return wrap


def _sides(model: Model, pairs, key: str) -> list[tuple[Side, Side]]:
    out = []
    for a, b in pairs:
        sides = []
        for name in (a, b):
            if model.contexts is not None:
                if name not in model.contexts:
                    raise model.error(
                        f"'{name}' is not a mechanism context; expected one of: {', '.join(model.contexts)}",
                        key)
                sides.append(Side(name, model.contexts[name], name))
            else:
                sides.append(Side(name, model.distribution(name, key), DEFAULT))
        out.append(tuple(sides))
    return out


@register_notion("ldp", {"epsilon", "delta"})
def _build_ldp(model, entry, key):
    return ldp(_epsilon(entry, model.file, key), _delta(entry, model.file, key))


@register_notion("metric", {"epsilon"})
def _build_metric(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    metric = model.need_metric(f"{key}.notion")
    try:
        return MetricPrivacy(eps, metric, model.inputs)
    except ProblemError as exc:
        raise exc.located(model.file, "metric")


def _divergence(model: Model, entry: dict, key: str, delta: float) -> str:
    """The entry's divergence name (default "max"), checked against the registry."""
    name = entry.get("divergence", "max")
    if not isinstance(name, str) or name not in DIVERGENCES:
        raise model.error(f"unknown divergence {name!r}; expected one of: {', '.join(DIVERGENCES)}",
                          f"{key}.divergence")
    if delta and not DIVERGENCES[name].supports_delta:
        raise model.error(f"delta applies only to divergence = \"max\" (D∞^δ), not to {name!r}",
                          f"{key}.delta")
    return name


@register_notion("distp", {"epsilon", "delta", "pairs", "divergence"})
def _build_distp(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    delta = _delta(entry, model.file, key)
    divergence = _divergence(model, entry, key, delta)
    pairs = _sides(model, _name_pairs(entry.get("pairs"), model.file, f"{key}.pairs"), f"{key}.pairs")
    if divergence == "max":
        return DistP(eps, pairs, delta)
    return DivergenceDistP(eps, pairs, divergence, delta)


@register_notion("xdistp", {"epsilon", "delta", "pairs", "distance", "divergence"})
def _build_xdistp(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    delta = _delta(entry, model.file, key)
    divergence = _divergence(model, entry, key, delta)
    pairs = _sides(model, _name_pairs(entry.get("pairs"), model.file, f"{key}.pairs"), f"{key}.pairs")
    cost = model.input_distances(f"{key}.notion")
    distance = entry.get("distance", "w1")
    if not isinstance(distance, str):
        raise model.error(f"expected a distance name, got {distance!r}", f"{key}.distance")
    try:
        if divergence == "max":
            return XDistP(eps, pairs, distance, cost, delta)
        return DivergenceXDistP(eps, pairs, distance, cost, divergence, delta)
    except ProblemError as exc:
        raise ProblemError(exc.detail, file=model.file, key=f"{key}.{exc.key or 'distance'}")


def _adjacency(model: Model, entry: dict, key: str):
    """``adjacency = "all"`` (default: every pair of distinct inputs) or [[a, b], ...] labels."""
    value = entry.get("adjacency", "all")
    n = len(model.inputs)
    if value == "all":
        if n < 2:
            raise model.error("needs at least two inputs", f"{key}.adjacency")
        return np.triu_indices(n, 1)
    if isinstance(value, str):
        raise model.error(f"expected \"all\" or a list of [a, b] input label pairs, got {value!r}",
                          f"{key}.adjacency")
    pairs = _name_pairs(value, model.file, f"{key}.adjacency")
    out = []
    for a, b in pairs:
        for label in (a, b):
            if label not in model.inputs:
                raise model.error(f"unknown input label '{label}'", f"{key}.adjacency")
        if a == b:
            raise model.error(f"pair [{a!r}, {b!r}] must name two different inputs", f"{key}.adjacency")
        out.append((model.inputs.index(a), model.inputs.index(b)))
    return out


@register_notion("divergence-dp", {"epsilon", "delta", "divergence", "adjacency"})
def _build_divergence_dp(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    delta = _delta(entry, model.file, key)
    divergence = _divergence(model, entry, key, delta)
    return DivergenceDP(eps, divergence, _adjacency(model, entry, key), delta, model.inputs.labels)


@register_notion("divergence-xdp", {"epsilon", "delta", "divergence", "adjacency"})
def _build_divergence_xdp(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    delta = _delta(entry, model.file, key)
    divergence = _divergence(model, entry, key, delta)
    distances = model.input_distances(f"{key}.notion")
    return DivergenceXDP(eps, divergence, distances, _adjacency(model, entry, key), delta,
                         model.inputs.labels)


@register_notion("target", {"distribution"})
def _build_target(model, entry, key):
    if model.contexts is None:
        raise model.error("a target constrains each context's output distribution: set [mechanism] "
                          "contexts", f"{key}.notion")
    value = entry.get("distribution")
    k = f"{key}.distribution"
    m = len(model.outputs)
    if value is None:
        raise model.error("missing 'distribution': a distribution name, \"uniform\", \"free\" or a "
                          f"list of {m} probabilities over the outputs", k)
    if value == FREE:
        return Target(model.contexts, None, weights=model.weights)
    if value == "uniform":
        return Target(model.contexts, np.full(m, 1.0 / m), "uniform", model.weights)
    if isinstance(value, list):
        try:
            mu = check_distribution(value, m, "target distribution over the outputs")
        except ProblemError as exc:
            raise model.error(exc.detail, k)
        return Target(model.contexts, mu, "inline", model.weights)
    mu = model.distribution(value, k)
    if mu.size != m:
        raise model.error(f"'{value}' has {mu.size} entries but the target is over the {m} outputs; "
                          "give a list of probabilities over the outputs", k)
    return Target(model.contexts, mu, value, model.weights)


@register_notion("profile", {"epsilon", "edges"})
def _build_profile(model, entry, key):
    eps = _epsilon(entry, model.file, key)
    if model.contexts is None:
        raise model.error("profile privacy needs one mechanism per profile: set [mechanism] contexts",
                          f"{key}.notion")
    edges = _name_pairs(entry.get("edges"), model.file, f"{key}.edges", "edges")
    for a, b in edges:
        for name in (a, b):
            if name not in model.contexts:
                raise model.error(f"'{name}' is not a mechanism context; expected one of: "
                                  f"{', '.join(model.contexts)}", f"{key}.edges")
    return ProfilePrivacy(eps, edges, model.contexts)


# information notions: bounds in bits; with per-context mechanisms each context's
# matrix is bounded, under that context's own distribution unless a prior is named

def _info_priors(model, entry, key) -> tuple[dict[str, np.ndarray], str]:
    value = entry.get("prior")
    k = f"{key}.prior"
    if value is None:
        if model.contexts is not None:
            return dict(model.contexts), "contexts"
        value = "uniform"
    if isinstance(value, list):
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise model.error("expected a distribution name or a list of probabilities", k)
        try:
            pi = check_distribution(value, len(model.inputs), "prior")
        except ProblemError as exc:
            raise model.error(exc.detail, k)
        return {c: pi for c in model.keys}, "inline"
    return {c: model.distribution(value, k) for c in model.keys}, str(value)


@register_notion("information", {"bits"})
def _build_information(model, entry, key):
    return InformationPrivacy(_epsilon(entry, model.file, key, "bits"))


@register_notion("mutual-information", {"bits", "prior"})
def _build_mutual_information(model, entry, key):
    bits = _epsilon(entry, model.file, key, "bits")
    priors, name = _info_priors(model, entry, key)
    return MutualInformation(bits, priors, name)


@register_notion("min-entropy", {"bits"})
def _build_min_entropy(model, entry, key):
    return MinEntropy(_epsilon(entry, model.file, key, "bits"))


@register_notion("g-vulnerability", {"gain", "prior", "bound", "bits"})
def _build_g_vulnerability(model, entry, key):
    if ("bound" in entry) == ("bits" in entry):
        raise model.error("give exactly one of 'bound' (largest posterior vulnerability) and 'bits' "
                          "(largest multiplicative g-leakage)", f"{key}.bound")
    gain = entry.get("gain", "identity")
    n = len(model.inputs)
    if isinstance(gain, list):
        gain = _matrix(gain, model.file, f"{key}.gain")
        if gain.shape[1] != n:
            raise model.error(f"gain must have one column per input ({n}), got {gain.shape[1]}",
                              f"{key}.gain")
    elif gain != "identity":
        raise model.error(f"expected \"identity\" or a matrix (guesses x inputs), got {gain!r}",
                          f"{key}.gain")
    priors, name = _info_priors(model, entry, key)
    bound = bits = None
    if "bits" in entry:
        bits = _epsilon(entry, model.file, key, "bits")
    else:
        bound = _number(entry["bound"], model.file, f"{key}.bound")
    try:
        return GVulnerability(gain, priors, bound=bound, bits=bits, prior_name=name)
    except ProblemError as exc:
        raise model.error(exc.detail, f"{key}.{exc.key or 'bound'}")


# ---------------------------------------------------------------------------------------------
# objectives

OBJECTIVES: dict[str, tuple[set[str], Callable]] = {}


def register_objective(kind: str, keys: set[str]):
    def wrap(builder):
        OBJECTIVES[kind] = (keys, builder)
        return builder
    return wrap


def _loss(model: Model, table: dict) -> np.ndarray:
    loss = table.get("loss", "metric" if model.metric is not None else "hamming")
    key = "objective.loss"
    if isinstance(loss, list):
        m = _matrix(loss, model.file, key)
        shape = (len(model.inputs), len(model.outputs))
        if m.shape != shape:
            raise model.error(f"loss matrix must be {shape[0]} x {shape[1]}, got {m.shape[0]} x {m.shape[1]}",
                              key)
        return m
    if loss == "hamming":
        return hamming_loss(model.inputs, model.outputs)
    if loss in ("metric", "squared"):
        metric = model.need_metric(key)
        try:
            d = metric.distances(model.inputs, model.outputs)
        except ProblemError as exc:
            raise exc.located(model.file, key)
        return d ** 2 if loss == "squared" else d
    raise model.error(f"expected metric, squared, hamming or a matrix, got {loss!r}", key)


def _row_weights(model: Model, table: dict) -> dict[str, np.ndarray]:
    if model.contexts is not None:
        if "prior" in table:
            raise model.error("with [mechanism] contexts the contexts' distributions and weights are "
                              "the prior; remove 'prior'", "objective.prior")
        return {k: model.weights[k] * lam for k, lam in model.contexts.items()}
    prior = model.distribution(table.get("prior", "uniform"), "objective.prior")
    return {DEFAULT: prior}


@register_objective("expected-loss", {"prior", "loss"})
def _obj_expected(model, table):
    return ExpectedLoss(_loss(model, table), _row_weights(model, table))


@register_objective("error-probability", {"prior"})
def _obj_error(model, table):
    missing = [x for x in model.inputs.labels if x not in model.outputs]
    if missing:
        raise model.error(f"error-probability needs every input among the outputs; missing {missing[:5]}",
                          "objective.kind")
    return ErrorProbability(hamming_loss(model.inputs, model.outputs), _row_weights(model, table))


@register_objective("worst-case-loss", {"loss"})
def _obj_worst(model, table):
    return WorstCaseLoss(_loss(model, table), model.keys)


@register_objective("max-off-diagonal", set())
def _obj_offdiag(model, table):
    try:
        return MaxOffDiagonal(off_diagonal_mask(model.inputs, model.outputs), model.keys)
    except ProblemError as exc:
        raise exc.located(model.file)


@register_objective("profile-marginal-error", set())
def _obj_marginal(model, table):
    if not model.outputs.same_as(model.inputs):
        raise model.error("profile-marginal-error needs the outputs to equal the inputs", "objective.kind")
    dists = model.contexts if model.contexts is not None else {
        DEFAULT: model.distribution(table.get("prior", "uniform"), "objective.prior")}
    return ProfileMarginalError(dists)


# ---------------------------------------------------------------------------------------------
# whole files

def load_problem(path: str | Path) -> Problem:
    """Read and validate a problem file."""
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemError("no such file", file=file)
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"cannot read the file: {exc}", file=file)
    if text.startswith("\ufeff"):  # a UTF-8 byte-order mark, as some editors write
        text = text[1:]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(f"not valid TOML: {exc}", file=file)
    except RecursionError:
        raise ProblemError("not readable TOML: arrays or tables nested too deeply", file=file)
    return problem_from_dict(data, file=file)


def problem_from_dict(data: dict, file: str = "<problem>") -> Problem:
    """Build a :class:`Problem` from the parsed TOML structure."""
    model = parse_model(data, file)
    notions = []
    privacy = data.get("privacy", [])
    if not isinstance(privacy, list) or not all(isinstance(p, dict) for p in privacy):
        raise ProblemError("expected [[privacy]] tables", file=file, key="privacy")
    for i, entry in enumerate(privacy):
        key = f"privacy[{i}]"
        name = entry.get("notion")
        if not isinstance(name, str) or name not in NOTIONS:
            raise ProblemError(f"unknown notion {name!r}; expected one of: {', '.join(NOTIONS)}",
                               file=file, key=f"{key}.notion")
        allowed, builder = NOTIONS[name]
        _no_unknown(entry, allowed | {"notion"}, file, f"{key}.")
        notions.append(builder(model, entry, key))
    if model.extras.get("actual"):
        if not any(isinstance(n, Target) for n in notions):
            raise ProblemError("[mechanism] actual reports Theorem 3 of paper 003, which concerns coupling "
                               "mechanisms: add a [[privacy]] notion = \"target\"", file=file,
                               key="mechanism.actual")
        notions.append(ApproximateKnowledge(model.contexts, model.extras["actual"]))

    table = _table(data, "objective", file, required=True)
    kind = table.get("kind")
    if not isinstance(kind, str) or kind not in OBJECTIVES:
        raise ProblemError(f"unknown objective {kind!r}; expected one of: {', '.join(OBJECTIVES)}",
                           file=file, key="objective.kind")
    allowed, builder = OBJECTIVES[kind]
    _no_unknown(table, allowed | {"kind"}, file, "objective.")
    objective = builder(model, table)

    solve = _table(data, "solve", file) or {}
    _no_unknown(solve, {"solver", "gap_tolerance", "time_limit"}, file, "solve.")
    solver = solve.get("solver", "auto")
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ProblemError(f"expected one of {', '.join(SOLVERS)}, got {solver!r}", file=file, key="solve.solver")
    gap = _number(solve.get("gap_tolerance", 1e-6), file, "solve.gap_tolerance", positive=True)
    limit = solve.get("time_limit")
    if limit is not None:
        limit = _number(limit, file, "solve.time_limit", positive=True)
    return Problem(
        inputs=model.inputs, outputs=model.outputs, objective=objective, privacy=notions,
        contexts=model.contexts, name=data["name"], description=data.get("description", ""),
        solver=solver, gap_tolerance=gap, time_limit=limit, source=file, extras={"model": model},
    )


def parse_model(data: dict, file: str) -> Model:
    if not isinstance(data, dict):
        raise ProblemError("expected a TOML document", file=file)
    _no_unknown(data, TOP_KEYS, file, "")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ProblemError("missing required 'name' (a string)", file=file, key="name")
    if "description" in data and not isinstance(data["description"], str):
        raise ProblemError("expected a string", file=file, key="description")
    in_table = _table(data, "inputs", file, required=True)
    out_table = _table(data, "outputs", file)
    check_design_size(data, file)  # before any domain, metric or matrix is allocated
    inputs = parse_domain(in_table, file, "inputs")
    outputs = parse_domain(out_table, file, "outputs") if out_table is not None else inputs
    metric = parse_metric(_table(data, "metric", file), inputs, file)
    distributions = parse_distributions(_table(data, "distributions", file), inputs, file)
    contexts, weights = None, None
    extras: dict = {}
    mech = _table(data, "mechanism", file)
    if mech is not None:
        _no_unknown(mech, {"contexts", "weights", "actual"}, file, "mechanism.")
        names = mech.get("contexts")
        if names is not None:
            if not isinstance(names, list) or not names or not all(isinstance(c, str) for c in names):
                raise ProblemError("expected a non-empty list of distribution names", file=file,
                                   key="mechanism.contexts")
            if len(set(names)) != len(names):
                raise ProblemError("context names must be distinct", file=file, key="mechanism.contexts")
            model_probe = Model(file, data, inputs, outputs, metric, distributions, None, None)
            contexts = {c: model_probe.distribution(c, "mechanism.contexts") for c in names}
            w = mech.get("weights")
            if w is None:
                weights = {c: 1.0 / len(names) for c in names}
            else:
                if not isinstance(w, list) or len(w) != len(names):
                    raise ProblemError(f"expected {len(names)} weights, one per context", file=file,
                                       key="mechanism.weights")
                try:
                    wv = check_distribution(w, len(names), "weights")
                except ProblemError as exc:
                    raise ProblemError(exc.detail, file=file, key="mechanism.weights")
                weights = dict(zip(names, wv.tolist()))
        elif "weights" in mech:
            raise ProblemError("weights need contexts", file=file, key="mechanism.weights")
        if "actual" in mech:
            extras["actual"] = _actual(mech["actual"], contexts, inputs, outputs, metric, distributions,
                                       data, file)
    return Model(file, data, inputs, outputs, metric, distributions, contexts, weights, extras)


def _actual(value, contexts, inputs, outputs, metric, distributions, data, file) -> dict[str, np.ndarray]:
    """``[mechanism] actual``: per context, the distribution inputs really follow (the contexts'
    own distributions are what the mechanisms are built from; paper 003, Theorem 3)."""
    key = "mechanism.actual"
    if contexts is None:
        raise ProblemError("actual distributions need contexts", file=file, key=key)
    if (not isinstance(value, list) or len(value) != len(contexts)
            or not all(isinstance(v, str) for v in value)):
        raise ProblemError(f"expected {len(contexts)} distribution names, one per context (the "
                           "distribution its inputs actually follow)", file=file, key=key)
    probe = Model(file, data, inputs, outputs, metric, distributions, None, None)
    return {c: probe.distribution(v, key) for c, v in zip(contexts, value)}
