"""Problem files (TOML): loading and validation at the boundary.

Every error names the file, the key and what was expected (:class:`ProblemError`). Each
``[[privacy]]`` table is read by its notion's own parser, looked up by the table's ``notion``
name in :data:`~mechdesign.privacy.table_parsers.NOTION_PARSERS`; the objectives are a registry
keyed by the file's ``kind`` names here. A new notion or objective is one entry.

What the file left out and the loader filled in is recorded in ``problem.extras["defaults"]``
(:func:`filled_defaults`), so that the command line can say it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
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
from mechdesign.core.sizes import check_design_size
from mechdesign.core.tables import (
    is_number_list,
    no_unknown,
    read_distribution,
    read_matrix,
    read_number,
    read_table,
)
from mechdesign.design.objective_tables import (
    hypothesis_testing_from_table,
    mutual_information_from_table,
    robust_expected_loss_from_table,
)
from mechdesign.design.problem import SOLVERS, Problem
from mechdesign.privacy.base import DEFAULT, Notion
from mechdesign.privacy.declarations import Declarations
from mechdesign.privacy.table_parsers import NOTION_PARSERS
from mechdesign.privacy.target import ApproximateKnowledge, Target

TOP_KEYS = {"name", "description", "inputs", "outputs", "metric", "distributions", "mechanism",
            "privacy", "objective", "solve"}
DOMAIN_KEYS = {"labels", "size", "points", "grid"}


# ---------------------------------------------------------------------------------------------
# domains, metric, distributions

def parse_domain(table: dict, file: str, key: str) -> Domain:
    no_unknown(table, DOMAIN_KEYS, file, f"{key}.")
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
            n = read_number(table["size"], file, f"{key}.size", positive=True, integer=True)
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
        no_unknown(grid, {"rows", "cols", "cell"}, file, f"{key}.grid.")
        rows = read_number(grid.get("rows"), file, f"{key}.grid.rows", positive=True, integer=True)
        cols = read_number(grid.get("cols"), file, f"{key}.grid.cols", positive=True, integer=True)
        cell = read_number(grid.get("cell", 1.0), file, f"{key}.grid.cell", positive=True)
        return Domain.from_grid(int(rows), int(cols), float(cell))
    except ProblemError as exc:
        raise exc.located(file, key)


def parse_metric(table: dict | None, inputs: Domain, file: str) -> Metric | None:
    if table is None:
        return None
    no_unknown(table, {"kind", "edges", "matrix"}, file, "metric.")
    kind = table.get("kind")
    if not isinstance(kind, str) or kind not in METRIC_KINDS:
        raise ProblemError(f"expected one of {', '.join(METRIC_KINDS)}, got {kind!r}", file=file,
                           key="metric.kind")
    try:
        matrix = read_matrix(table["matrix"], file, "metric.matrix") if "matrix" in table else None
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
        if not is_number_list(value):
            raise ProblemError("expected a list of numbers (one probability per input)", file=file,
                               key=key)
        out[name] = read_distribution(value, len(inputs), "distribution", file, key)
    return out


# ---------------------------------------------------------------------------------------------
# objectives

OBJECTIVES: dict[str, tuple[set[str], Callable]] = {}


def register_objective(kind: str, keys: set[str]):
    def wrap(builder):
        OBJECTIVES[kind] = (keys, builder)
        return builder
    return wrap


def _loss(declared: Declarations, table: dict) -> np.ndarray:
    loss = table.get("loss", "metric" if declared.metric is not None else "hamming")
    key = "objective.loss"
    if isinstance(loss, list):
        m = read_matrix(loss, declared.file, key)
        shape = (len(declared.inputs), len(declared.outputs))
        if m.shape != shape:
            raise declared.error(f"loss matrix must be {shape[0]} x {shape[1]}, "
                                 f"got {m.shape[0]} x {m.shape[1]}", key)
        return m
    if loss == "hamming":
        return hamming_loss(declared.inputs, declared.outputs)
    if loss in ("metric", "squared"):
        metric = declared.need_metric(key)
        try:
            d = metric.distances(declared.inputs, declared.outputs)
        except ProblemError as exc:
            raise exc.located(declared.file, key)
        return d ** 2 if loss == "squared" else d
    raise declared.error(f"expected metric, squared, hamming or a matrix, got {loss!r}", key)


def _row_weights(declared: Declarations, table: dict) -> dict[str, np.ndarray]:
    if declared.contexts is not None:
        if "prior" in table:
            raise declared.error("with [mechanism] contexts the contexts' distributions and "
                                 "weights are the prior; remove 'prior'", "objective.prior")
        return {k: declared.weights[k] * lam for k, lam in declared.contexts.items()}
    prior = declared.distribution(table.get("prior", "uniform"), "objective.prior")
    return {DEFAULT: prior}


@register_objective("expected-loss", {"prior", "loss", "robust"})
def _obj_expected(declared, table):
    if "robust" in table:  # the largest expected loss over a set of priors (objective_tables)
        return robust_expected_loss_from_table(declared, table, _loss(declared, table))
    return ExpectedLoss(_loss(declared, table), _row_weights(declared, table))


register_objective("mutual-information", {"prior"})(mutual_information_from_table)
register_objective("hypothesis-testing", {"divergence", "between"})(hypothesis_testing_from_table)


@register_objective("error-probability", {"prior"})
def _obj_error(declared, table):
    missing = [x for x in declared.inputs.labels if x not in declared.outputs]
    if missing:
        raise declared.error("error-probability needs every input among the outputs; "
                             f"missing {missing[:5]}", "objective.kind")
    return ErrorProbability(hamming_loss(declared.inputs, declared.outputs),
                            _row_weights(declared, table))


@register_objective("worst-case-loss", {"loss"})
def _obj_worst(declared, table):
    return WorstCaseLoss(_loss(declared, table), declared.keys)


@register_objective("max-off-diagonal", set())
def _obj_offdiag(declared, table):
    try:
        return MaxOffDiagonal(off_diagonal_mask(declared.inputs, declared.outputs), declared.keys)
    except ProblemError as exc:
        raise exc.located(declared.file)


@register_objective("profile-marginal-error", set())
def _obj_marginal(declared, table):
    if not declared.outputs.same_as(declared.inputs):
        raise declared.error("profile-marginal-error needs the outputs to equal the inputs",
                             "objective.kind")
    dists = declared.contexts if declared.contexts is not None else {
        DEFAULT: declared.distribution(table.get("prior", "uniform"), "objective.prior")}
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
    declared = parse_declarations(data, file)
    actual = parse_actual(data, declared)
    notions = parse_notions(data, declared)
    if actual is not None:
        if not any(isinstance(n, Target) for n in notions):
            raise ProblemError("[mechanism] actual reports Theorem 3 of Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, which concerns "
                               "coupling mechanisms: add a [[privacy]] notion = \"target\"",
                               file=file, key="mechanism.actual")
        notions.append(ApproximateKnowledge(declared.contexts, actual))
    objective = parse_objective(data, declared)
    solve = read_table(data, "solve", file) or {}
    no_unknown(solve, {"solver", "gap_tolerance", "time_limit"}, file, "solve.")
    solver = solve.get("solver", "auto")
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ProblemError(f"expected one of {', '.join(SOLVERS)}, got {solver!r}", file=file,
                           key="solve.solver")
    gap = read_number(solve.get("gap_tolerance", 1e-6), file, "solve.gap_tolerance", positive=True)
    limit = solve.get("time_limit")
    if limit is not None:
        limit = read_number(limit, file, "solve.time_limit", positive=True)
    return Problem(
        inputs=declared.inputs, outputs=declared.outputs, objective=objective, privacy=notions,
        contexts=declared.contexts, name=data["name"], description=data.get("description", ""),
        solver=solver, gap_tolerance=gap, time_limit=limit, source=file, metric=declared.metric,
        extras={"model": declared, "defaults": filled_defaults(data, declared)},
    )


def filled_defaults(data: dict, declared: Declarations) -> dict[str, str]:
    """What the loader filled in because the file did not say, as ``{what: value}``:

    * ``outputs``: ``"the inputs"`` — no ``[outputs]`` table;
    * ``prior``: ``"uniform"`` — an objective that averages over inputs, with neither
      ``prior`` nor ``[mechanism]`` contexts;
    * ``loss``: ``"metric"`` or ``"hamming"`` — an objective with a loss and no ``loss`` key;
    * ``weights``: ``"equal"`` — contexts without ``weights``;
    * ``solver``: ``"auto"`` — no ``[solve] solver``;
    * ``privacy``: ``"none"`` — no ``[[privacy]]`` table (the design is the non-private optimum).
    """
    out = {}
    if "outputs" not in data:
        out["outputs"] = "the inputs"
    objective = data["objective"]
    keys = OBJECTIVES[objective["kind"]][0]
    averages = "prior" in keys or objective["kind"] == "profile-marginal-error"
    if averages and declared.contexts is None and "prior" not in objective:
        out["prior"] = "uniform"
    if "loss" in keys and "loss" not in objective:
        out["loss"] = "metric" if declared.metric is not None else "hamming"
    if declared.contexts is not None and "weights" not in data["mechanism"]:
        out["weights"] = "equal"
    if "solver" not in (data.get("solve") or {}):
        out["solver"] = "auto"
    if not data.get("privacy"):
        out["privacy"] = "none"
    return out


def parse_notions(data: dict, declared: Declarations) -> list[Notion]:
    """The ``[[privacy]]`` tables, each read by the parser its ``notion`` names."""
    file = declared.file
    privacy = data.get("privacy", [])
    if not isinstance(privacy, list) or not all(isinstance(p, dict) for p in privacy):
        raise ProblemError("expected [[privacy]] tables", file=file, key="privacy")
    notions = []
    for i, table in enumerate(privacy):
        key = f"privacy[{i}]"
        name = table.get("notion")
        if not isinstance(name, str) or name not in NOTION_PARSERS:
            raise ProblemError(f"unknown notion {name!r}; expected one of: "
                               f"{', '.join(NOTION_PARSERS)}", file=file, key=f"{key}.notion")
        notions.append(NOTION_PARSERS[name](table, declared.at(key)))
    return notions


def parse_objective(data: dict, declared: Declarations):
    """The ``[objective]`` table, read by the builder its ``kind`` names."""
    file = declared.file
    table = read_table(data, "objective", file, required=True)
    kind = table.get("kind")
    if not isinstance(kind, str) or kind not in OBJECTIVES:
        raise ProblemError(f"unknown objective {kind!r}; expected one of: {', '.join(OBJECTIVES)}",
                           file=file, key="objective.kind")
    allowed, builder = OBJECTIVES[kind]
    no_unknown(table, allowed | {"kind"}, file, "objective.")
    return builder(declared, table)


def parse_declarations(data: dict, file: str) -> Declarations:
    """Everything notions and objectives are built against: name and description checked,
    domains, metric, distributions, and the mechanism contexts with their weights."""
    if not isinstance(data, dict):
        raise ProblemError("expected a TOML document", file=file)
    no_unknown(data, TOP_KEYS, file, "")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ProblemError("missing required 'name' (a string)", file=file, key="name")
    if "description" in data and not isinstance(data["description"], str):
        raise ProblemError("expected a string", file=file, key="description")
    in_table = read_table(data, "inputs", file, required=True)
    out_table = read_table(data, "outputs", file)
    check_design_size(data, file)  # before any domain, metric or matrix is allocated
    inputs = parse_domain(in_table, file, "inputs")
    outputs = parse_domain(out_table, file, "outputs") if out_table is not None else inputs
    metric = parse_metric(read_table(data, "metric", file), inputs, file)
    distributions = parse_distributions(read_table(data, "distributions", file), inputs, file)
    declared = Declarations(file, inputs, outputs, metric, distributions, None, None)
    mech = read_table(data, "mechanism", file)
    if mech is None:
        return declared
    no_unknown(mech, {"contexts", "weights", "actual"}, file, "mechanism.")
    return parse_contexts(mech, declared)


def parse_contexts(mech: dict, declared: Declarations) -> Declarations:
    """``[mechanism] contexts`` (distribution names, one mechanism each) and their ``weights``
    (default: equal)."""
    file = declared.file
    names = mech.get("contexts")
    if names is None:
        if "weights" in mech:
            raise ProblemError("weights need contexts", file=file, key="mechanism.weights")
        return declared
    if not isinstance(names, list) or not names or not all(isinstance(c, str) for c in names):
        raise ProblemError("expected a non-empty list of distribution names", file=file,
                           key="mechanism.contexts")
    if len(set(names)) != len(names):
        raise ProblemError("context names must be distinct", file=file, key="mechanism.contexts")
    contexts = {c: declared.distribution(c, "mechanism.contexts") for c in names}
    w = mech.get("weights")
    if w is None:
        weights = {c: 1.0 / len(names) for c in names}
    else:
        if not isinstance(w, list) or len(w) != len(names):
            raise ProblemError(f"expected {len(names)} weights, one per context", file=file,
                               key="mechanism.weights")
        wv = read_distribution(w, len(names), "weights", file, "mechanism.weights")
        weights = dict(zip(names, wv.tolist()))
    return Declarations(file, declared.inputs, declared.outputs, declared.metric,
                        declared.distributions, contexts, weights)


def parse_actual(data: dict, declared: Declarations) -> dict[str, np.ndarray] | None:
    """``[mechanism] actual``: per context, the distribution inputs really follow (the contexts'
    own distributions are what the mechanisms are built from); None when absent."""
    mech = data.get("mechanism")
    if not isinstance(mech, dict) or "actual" not in mech:
        return None
    value, contexts, key = mech["actual"], declared.contexts, "mechanism.actual"
    if contexts is None:
        raise ProblemError("actual distributions need contexts", file=declared.file, key=key)
    if (not isinstance(value, list) or len(value) != len(contexts)
            or not all(isinstance(v, str) for v in value)):
        raise ProblemError(f"expected {len(contexts)} distribution names, one per context (the "
                           "distribution its inputs actually follow)", file=declared.file, key=key)
    return {c: declared.distribution(v, key) for c, v in zip(contexts, value)}
