"""Random small problems over the notions and objectives that ``bench_random_problems.py`` leaves
out, through ``Problem.solve()``, checked against the same convex program written out here from
the definitions in docs/notions.md and by an audit of the returned matrices written here.

Each seed draws one family: (ε, δ)-LDP; DistP or XDistP (W1, W∞ or TV; sometimes with δ)
between one to three pairs of input distributions under one shared mechanism; profile privacy,
or DistP between contexts, with two to four profiles and one mechanism each; divergence DP,
divergence XDP, divergence DistP or XDistP with the max (sometimes with δ), KL, reverse KL, TV,
χ² or squared Hellinger divergence; a Shannon capacity, mutual information, min-entropy capacity
or g-vulnerability bound (identity or random gains, a bound or bits); or two notions together
(LDP with d-privacy, (ε, δ)-LDP with DistP, profile privacy with LDP, ...). 3–12 inputs, points
on a line or in the plane (some coincident) when a notion needs a metric; the outputs are the
inputs, or 2–12 others for an expected or worst-case random loss; with some notions the inputs
sometimes come in two to four contexts with one mechanism each. ε is log-uniform in
``--epsilons`` (default 0.05–10; a tenth of it for TV and Hellinger, which are at most 1), δ
log-uniform in 1e-4–0.5, bits log-uniform from 0.01 to the largest meaningful value; priors,
profiles and DistP sides are Dirichlet of concentration 0.1, 1 or 10 (sometimes with a zero;
entries of sides below 1e-6 are set to 0). The objective is an expected loss (metric, squared,
random or 0-1), the error probability, the worst-case loss or the max off-diagonal entry; the
profile marginal error as often when contexts are compared with each other, and in one seed in
twenty otherwise (uniform λ, or contexts held apart, where a data-independent design reaches 0).

A row is ok when the solve ends ``optimal`` with every certificate line holding, when this
script's own audit of the returned matrices (every constraint's defining inequality, hockey-stick
sum, divergence or leakage recomputed with NumPy; the capacity from below by Blahut–Arimoto)
misses no level by more than 1e-7 and reproduces the reported objective within 1e-9, and when
the objective is at most the reference plus max(2e-6·|reference|, 1e-9) for linear programs,
max(1e-4·|reference|, 1e-7) for conic ones. The reference is the program built here in cvxpy
from the definitions: HiGHS for linear programs, Clarabel at tolerances of 1e-10 for conic ones
(then Clarabel at 1e-9, with and without equilibration; a value Clarabel calls inaccurate is kept,
marked, when no attempt does better). Ratio rows are divided by e^{level/2}; an instance with a
ratio level above 25 has no reference. W1 and W∞ between two distributions come
from transport LPs (W∞: the smallest cost threshold whose restricted transport is feasible).
A design below the reference is recorded (the reference solver is inexact); it is a finding only
when the audit fails.

    python benchmarks/bench_random_notions.py --seeds 0:300 [--epsilons 0.05:10] [--name NAME]

Writes ``benchmarks/results/NAME.json`` (default ``random-notions``): per seed the instance, the
route, the status, the objective, the proven bound, the reference and the audit, and a summary.
"""

from __future__ import annotations

import argparse
import time
import traceback
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
from common import write_results
from scipy.optimize import linprog
from scipy.special import rel_entr

from mechdesign import Domain, Problem
from mechdesign.core.objectives import (
    ErrorProbability,
    ExpectedLoss,
    MaxOffDiagonal,
    ProfileMarginalError,
    WorstCaseLoss,
)
from mechdesign.privacy import (
    LDP,
    ApproxLDP,
    DistP,
    DivergenceDistP,
    DivergenceDP,
    DivergenceXDistP,
    DivergenceXDP,
    GVulnerability,
    InformationPrivacy,
    MetricPrivacy,
    MinEntropy,
    MutualInformation,
    ProfilePrivacy,
    Side,
    XDistP,
)

FAMILIES = ("approx-ldp", "distp", "xdistp", "profile", "distp-contexts", "divergence-dp", "divergence-xdp",
            "divergence-distp", "divergence-xdistp", "information", "mutual-information", "min-entropy",
            "g-vulnerability", "combination")
COMBINATIONS = (("ldp", "metric"), ("approx-ldp", "distp"), ("min-entropy", "ldp"),
                ("g-vulnerability", "metric"), ("divergence-dp", "ldp"), ("profile", "ldp"),
                ("mutual-information", "approx-ldp"), ("information", "metric"),
                ("xdistp", "divergence-xdp"), ("distp-contexts", "min-entropy"))
NEEDS_METRIC = {"metric", "xdistp", "divergence-xdp", "divergence-xdistp"}
NEEDS_CONTEXTS = {"profile", "distp-contexts"}
ALLOWS_CONTEXTS = {"ldp", "approx-ldp", "metric", "divergence-dp", "divergence-xdp", "information",
                   "mutual-information", "min-entropy", "g-vulnerability"}
DIVERGENCES = ("max", "kl", "reverse-kl", "tv", "chi2", "hellinger")
#: divergences at most 1, whose ε is drawn a tenth as large
BOUNDED_DIVERGENCES = ("tv", "hellinger")
#: a ratio level e^L with L above this leaves the instance without a reference
REFERENCE_EXPONENT = 25.0
#: how far above the reference a solve's objective may lie: (relative, absolute floor)
LINEAR_SLACK, CONIC_SLACK = (2e-6, 1e-9), (1e-4, 1e-7)
#: how far the audit here lets a returned matrix miss a level (probability, nats or bits)
AUDIT_TOLERANCE = 1e-7
#: how closely the objective recomputed here must agree with the reported one
OBJECTIVE_AGREEMENT = 1e-9


@dataclass
class Setup:
    """What the notions of one seed are drawn on."""
    rng: np.random.Generator
    eps_range: tuple[float, float]
    n: int
    m: int
    keys: list[str]
    contexts: dict[str, np.ndarray] | None
    distances: np.ndarray | None
    specs: list[dict] = field(default_factory=list)


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def distribution(rng: np.random.Generator, n: int, floor: float = 0.0) -> np.ndarray:
    """Dirichlet of concentration 0.1, 1 or 10, sometimes with a zero; entries below floor set to 0."""
    p = rng.dirichlet(np.full(n, float(rng.choice([0.1, 1.0, 10.0]))))
    p[p < floor] = 0.0
    if rng.random() < 0.15 and np.count_nonzero(p) > 1:
        p[rng.choice(np.flatnonzero(p))] = 0.0
    return p / p.sum()


def transport_feasible(lam: np.ndarray, mu: np.ndarray, allowed: np.ndarray, cost: np.ndarray | None = None):
    """The optimal value of the transport LP from lam to mu over the allowed pairs (None if infeasible)."""
    n = lam.size
    a_eq = np.vstack([np.kron(np.eye(n), np.ones(n)), np.kron(np.ones(n), np.eye(n))])
    bounds = [(0, None) if ok else (0, 0) for ok in allowed.ravel()]
    c = np.zeros(n * n) if cost is None else cost.ravel()
    lp = linprog(c, A_eq=a_eq, b_eq=np.concatenate([lam, mu]), bounds=bounds, method="highs-ds",
                 options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    return float(lp.fun) if lp.status == 0 else None


def distance_between(lam: np.ndarray, mu: np.ndarray, cost: np.ndarray, kind: str) -> float:
    """TV, W1 or W∞ between two distributions over the inputs, for the ground cost given."""
    if kind == "tv":
        return 0.5 * float(np.abs(lam - mu).sum())
    if kind == "w1":
        return transport_feasible(lam, mu, np.ones_like(cost, dtype=bool), cost)
    levels = np.unique(cost)
    low, high = 0, levels.size - 1
    while low < high:
        middle = (low + high) // 2
        if transport_feasible(lam, mu, cost <= levels[middle]) is None:
            low = middle + 1
        else:
            high = middle
    return float(levels[low])


def compare(notion, divergence, key_a, weights_a, key_b, weights_b, levels, delta=0.0) -> dict:
    """D(weights_a K_a ‖ weights_b K_b) <= level, row by row of the weights (one direction)."""
    return {"kind": "compare", "notion": notion, "divergence": divergence, "key_a": key_a,
            "weights_a": np.atleast_2d(weights_a), "key_b": key_b, "weights_b": np.atleast_2d(weights_b),
            "levels": np.atleast_1d(np.asarray(levels, float)), "delta": delta}


def rows_both_ways(setup, notion, divergence, pairs, levels, delta=0.0) -> None:
    """D(K[x] ‖ K[z]) <= level and D(K[z] ‖ K[x]) <= level for every pair, in every mechanism."""
    x, z = np.asarray(pairs).T
    eye, levels = np.eye(setup.n), np.broadcast_to(levels, x.shape)
    for key in setup.keys:
        setup.specs.append(compare(notion, divergence, key, eye[np.r_[x, z]], key, eye[np.r_[z, x]],
                                   np.r_[levels, levels], delta))


def sides_both_ways(setup, notion, divergence, key_a, lam_a, key_b, lam_b, level, delta=0.0) -> None:
    setup.specs.append(compare(notion, divergence, key_a, lam_a, key_b, lam_b, level, delta))
    setup.specs.append(compare(notion, divergence, key_b, lam_b, key_a, lam_a, level, delta))


def all_pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def adjacency(rng: np.random.Generator, n: int):
    """(the notion's adjacency argument, the pairs): every pair, a chain or a random connected subset."""
    kind = str(rng.choice(["all", "chain", "random"]))
    if kind == "all":
        return kind, None, all_pairs(n)
    pairs = [(i, i + 1) for i in range(n - 1)]
    if kind == "random":
        order = rng.permutation(n)
        pairs = [(int(order[i]), int(order[i + 1])) for i in range(n - 1)]
        pairs += [p for p in all_pairs(n) if rng.random() < 0.2 and p not in pairs and p[::-1] not in pairs]
    return kind, pairs, pairs


def epsilon_for(setup: Setup, divergence: str = "max") -> float:
    epsilon = log_uniform(setup.rng, *setup.eps_range)
    return epsilon / 10 if divergence in BOUNDED_DIVERGENCES else epsilon


def maybe_delta(rng: np.random.Generator, probability: float = 0.4) -> float:
    return log_uniform(rng, 1e-4, 0.5) if rng.random() < probability else 0.0


def context_edges(setup: Setup) -> list[tuple[str, str]]:
    """A random spanning tree of the contexts and a few more edges."""
    names = list(setup.contexts)
    order = setup.rng.permutation(len(names))
    edges = [(names[order[i]], names[order[i + 1]]) for i in range(len(names) - 1)]
    extra = [(names[i], names[j]) for i, j in all_pairs(len(names)) if setup.rng.random() < 0.3]
    return edges + [e for e in extra if e not in edges and e[::-1] not in edges]


def build_notion(name: str, setup: Setup):
    """(the mechdesign notion, its description); its constraints are appended to setup.specs."""
    rng, n = setup.rng, setup.n
    if name in ("ldp", "approx-ldp"):
        epsilon = epsilon_for(setup)
        delta = log_uniform(rng, 1e-4, 0.5) if name == "approx-ldp" else 0.0
        rows_both_ways(setup, name, "max", all_pairs(n), epsilon, delta)
        notion = ApproxLDP(epsilon, delta) if name == "approx-ldp" else LDP(epsilon)
        return notion, {"notion": name, "epsilon": epsilon, "delta": delta}
    if name == "metric":
        epsilon = epsilon_for(setup)
        pairs = all_pairs(n)
        rows_both_ways(setup, name, "max", pairs, [epsilon * setup.distances[p] for p in pairs])
        return MetricPrivacy(epsilon), {"notion": name, "epsilon": epsilon}
    if name in ("distp", "xdistp", "divergence-distp", "divergence-xdistp"):
        divergence = "max" if name in ("distp", "xdistp") else str(rng.choice(DIVERGENCES))
        epsilon = epsilon_for(setup, divergence)
        delta = maybe_delta(rng) if divergence == "max" else 0.0
        kind = str(rng.choice(["w1", "winf", "tv"])) if "xdistp" in name else None
        pairs = [tuple(distribution(rng, n, 1e-6) for _ in range(2)) for _ in range(int(rng.integers(1, 4)))]
        described = {"notion": name, "epsilon": epsilon, "delta": delta, "divergence": divergence,
                     "pairs": len(pairs), "distance": kind, "levels": []}
        for a, b in pairs:
            level = epsilon * (distance_between(a, b, setup.distances, kind) if kind else 1.0)
            described["levels"].append(level)
            sides_both_ways(setup, name, divergence, "default", a, "default", b, level, delta)
        sides = [(Side(f"a{t}", a), Side(f"b{t}", b)) for t, (a, b) in enumerate(pairs)]
        notion = {"distp": lambda: DistP(epsilon, sides, delta=delta),
                  "xdistp": lambda: XDistP(epsilon, sides, distance=kind, delta=delta),
                  "divergence-distp": lambda: DivergenceDistP(epsilon, sides, divergence, delta=delta),
                  "divergence-xdistp": lambda: DivergenceXDistP(epsilon, sides, distance=kind,
                                                                divergence=divergence, delta=delta)}[name]()
        return notion, described
    if name in ("profile", "distp-contexts"):
        epsilon = epsilon_for(setup)
        delta = maybe_delta(rng) if name == "distp-contexts" else 0.0
        edges = context_edges(setup)
        for a, b in edges:
            sides_both_ways(setup, name, "max", a, setup.contexts[a], b, setup.contexts[b], epsilon, delta)
        notion = ProfilePrivacy(epsilon, edges) if name == "profile" else DistP(epsilon, edges, delta=delta)
        return notion, {"notion": name, "epsilon": epsilon, "delta": delta, "edges": len(edges)}
    if name in ("divergence-dp", "divergence-xdp"):
        divergence = str(rng.choice(DIVERGENCES))
        epsilon = epsilon_for(setup, divergence)
        delta = maybe_delta(rng) if divergence == "max" else 0.0
        kind, argument, pairs = adjacency(rng, n)
        if name == "divergence-dp":
            rows_both_ways(setup, name, divergence, pairs, epsilon, delta)
            notion = DivergenceDP(epsilon, divergence, adjacency=argument, delta=delta)
        else:
            levels = [epsilon * setup.distances[p] for p in pairs]
            rows_both_ways(setup, name, divergence, pairs, levels, delta)
            notion = DivergenceXDP(epsilon, divergence, adjacency=argument, delta=delta)
        return notion, {"notion": name, "epsilon": epsilon, "delta": delta, "divergence": divergence,
                        "adjacency": kind, "pairs": len(pairs)}
    if name in ("information", "min-entropy"):
        bits = log_uniform(rng, 0.01, np.log2(min(n, setup.m)))
        setup.specs += [{"kind": name, "notion": name, "key": key, "bits": bits} for key in setup.keys]
        notion = InformationPrivacy(bits) if name == "information" else MinEntropy(bits)
        return notion, {"notion": name, "bits": bits}
    if name == "mutual-information":
        prior = None if setup.contexts else distribution(rng, n)
        priors = setup.contexts or {"default": prior}
        entropy = -float(sum(p * np.log2(p) for p in prior if p > 0)) if prior is not None else np.log2(n)
        bits = log_uniform(rng, 0.01, max(entropy, 0.02))
        setup.specs += [{"kind": name, "notion": name, "key": key, "prior": priors[key], "bits": bits}
                        for key in setup.keys]
        return MutualInformation(bits, prior), {"notion": name, "bits": bits}
    if name == "g-vulnerability":
        prior = distribution(rng, n)
        identity = rng.random() < 0.5
        gain = np.eye(n) if identity else rng.random((int(rng.integers(2, n + 1)), n))
        before = float((gain * prior).sum(axis=1).max())
        if rng.random() < 0.5:
            bits = log_uniform(rng, 0.01, np.log2(n))
            bound, arguments = before * 2 ** bits, {"bits": bits}
        else:
            bound = before + rng.random() * float((prior * gain.max(axis=0)).sum() - before)
            arguments = {"bound": bound}
        setup.specs += [{"kind": name, "notion": name, "key": key, "gain_prior": gain * prior,
                         "bound": bound} for key in setup.keys]
        notion = GVulnerability("identity" if identity else gain, prior, **arguments)
        return notion, {"notion": name, "gain": "identity" if identity else f"random {gain.shape[0]}x{n}",
                        "vulnerability_bound": bound, **arguments}
    raise ValueError(name)


def draw(seed: int, eps_range: tuple[float, float]):
    """(problem, description, setup, objective) of one seed; objective is (kind, {key: data})."""
    rng = np.random.default_rng(seed)
    family = str(rng.choice(FAMILIES))
    names = list(COMBINATIONS[rng.integers(len(COMBINATIONS))]) if family == "combination" else [family]
    n = int(rng.integers(3, 13))
    row = {"seed": seed, "family": family, "inputs": n}
    metric, distances, inputs = None, None, Domain.from_size(n)
    if NEEDS_METRIC & set(names):
        dimension = int(rng.integers(1, 3))
        points = rng.random((n, dimension)) * float(rng.choice([0.5, 1.0, 2.0]))
        coincident = bool(rng.random() < 0.3)
        if coincident:
            points[rng.integers(1, n)] = points[0]
        metric = "absolute" if dimension == 1 else "euclidean"
        distances = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
        inputs = Domain.from_points(points)
        row.update(metric=metric, coincident=coincident)
    contexts = None
    if NEEDS_CONTEXTS & set(names) or (set(names) <= ALLOWS_CONTEXTS and rng.random() < 0.2):
        contexts = {f"P{s}": distribution(rng, n) for s in range(int(rng.integers(2, 5)))}
        row["contexts"] = len(contexts)
    keys = list(contexts) if contexts else ["default"]
    kinds = ["expected", "expected", "error", "worst", "max-off-diagonal"]
    if NEEDS_CONTEXTS & set(names):  # the contexts' reports are compared: their marginals are at stake
        kinds += ["marginal", "marginal"]
    elif rng.random() < 0.05:  # uniform or per-context marginals, kept at once by a data-independent design
        kinds = ["marginal"]
    objective_kind = str(rng.choice(kinds))
    steps = np.arange(float(n))
    ground = np.abs(np.subtract.outer(steps, steps)) if distances is None else distances
    m = n
    loss_kind = str(rng.choice(["metric", "squared", "random", "zero-one"]))
    if objective_kind in ("expected", "worst") and loss_kind == "random" and rng.random() < 0.3:
        m = int(rng.integers(2, 13))
    loss = {"metric": ground, "squared": ground ** 2, "random": rng.random((n, m)),
            "zero-one": 1.0 - np.eye(n)}[loss_kind]
    prior = distribution(rng, n)
    weights = {key: contexts[key] / len(contexts) for key in keys} if contexts else {"default": prior}
    off_diagonal = 1.0 - np.eye(n)
    objective, ours = {
        "expected": lambda: (ExpectedLoss(loss) if contexts else ExpectedLoss(loss, prior=prior),
                             ("linear", {k: w[:, None] * loss for k, w in weights.items()})),
        "error": lambda: (ErrorProbability() if contexts else ErrorProbability(prior=prior),
                          ("linear", {k: w[:, None] * off_diagonal for k, w in weights.items()})),
        "worst": lambda: (WorstCaseLoss(loss), ("worst", {k: loss for k in keys})),
        "max-off-diagonal": lambda: (MaxOffDiagonal(), ("max-entry", {k: off_diagonal for k in keys})),
        "marginal": lambda: (ProfileMarginalError(), ("marginal", {k: contexts[k] if contexts
                                                                   else np.full(n, 1 / n) for k in keys})),
    }[objective_kind]()
    setup = Setup(rng, eps_range, n, m, keys, contexts, distances)
    notions, row["notions"] = [], []
    for name in names:
        notion, described = build_notion(name, setup)
        notions.append(notion)
        row["notions"].append(described)
    row.update(outputs=m, objective_kind=objective_kind,
               loss=loss_kind if objective_kind in ("expected", "worst") else None)
    problem = Problem(inputs=inputs, outputs=None if m == n else m, metric=metric, contexts=contexts,
                      objective=objective, privacy=notions, name=f"random-notions-{seed}")
    return problem, row, setup, ours


def is_conic(specs: list[dict]) -> bool:
    return any(s["kind"] in ("information", "mutual-information") or
               (s["kind"] == "compare" and s["divergence"] not in ("max", "tv")) for s in specs)


def rotated_cone(u, v, w) -> cp.Constraint:
    """w² <= u·v elementwise, u, v >= 0."""
    flat = [cp.vec(e, order="F") for e in (u, v, w)]
    return cp.SOC(flat[0] + flat[1], cp.vstack([2 * flat[2], flat[0] - flat[1]]), axis=0)


def reference_constraints(spec: dict, K: dict, n: int, m: int) -> list:
    """The constraint written from its definition in docs/notions.md, on the variables K."""
    kind = spec["kind"]
    if kind == "compare":
        wa, wb, levels, delta = spec["weights_a"], spec["weights_b"], spec["levels"], spec["delta"]
        ka, kb = K[spec["key_a"]], K[spec["key_b"]]
        divergence = spec["divergence"]
        if divergence == "max" and delta == 0:
            root = np.exp(levels / 2)[:, None]
            return [(wa / root) @ ka <= (wb * root) @ kb]
        if divergence == "max":
            return [cp.sum(cp.pos(wa @ ka - (wb * np.exp(levels)[:, None]) @ kb), axis=1) <= delta]
        a, b = wa @ ka, wb @ kb
        if divergence in ("kl", "reverse-kl"):
            return [cp.sum(cp.rel_entr(a, b) if divergence == "kl" else cp.rel_entr(b, a), axis=1) <= levels]
        if divergence == "tv":
            return [0.5 * cp.sum(cp.abs(a - b), axis=1) <= levels]
        extra = cp.Variable(a.shape, nonneg=True)
        if divergence == "chi2":  # Σ (a − b)² / b
            return [rotated_cone(extra, b, a - b), cp.sum(extra, axis=1) <= levels]
        # squared Hellinger: ½ Σ (√a − √b)² = 1 − Σ √(a b) for two distributions
        return [rotated_cone(a, b, extra), 1 - cp.sum(extra, axis=1) <= levels]
    k, ones = K[spec["key"]], np.ones((n, 1))
    if kind == "information":  # C(K) = min over q of max_x D(K[x] ‖ q)
        q = cp.Variable(m, nonneg=True)
        return [cp.sum(q) == 1, cp.sum(cp.rel_entr(k, ones @ cp.reshape(q, (1, m), order="C")), axis=1)
                <= spec["bits"] * np.log(2)]
    if kind == "mutual-information":
        prior = spec["prior"]
        output = cp.reshape(prior @ k, (1, m), order="C")
        terms = cp.multiply(np.repeat(prior[:, None], m, axis=1), cp.rel_entr(k, ones @ output))
        return [cp.sum(terms) <= spec["bits"] * np.log(2)]
    top = cp.Variable(m)
    if kind == "min-entropy":
        return [k <= ones @ cp.reshape(top, (1, m), order="C"), cp.sum(top) <= 2 ** spec["bits"]]
    gain_prior = spec["gain_prior"]
    return [gain_prior @ k <= np.ones((gain_prior.shape[0], 1)) @ cp.reshape(top, (1, m), order="C"),
            cp.sum(top) <= spec["bound"]]


def reference_optimum(setup: Setup, objective: tuple) -> tuple[float, bool]:
    """(the optimum of the program written out here, whether the solver called it inaccurate)."""
    n, m = setup.n, setup.m
    K = {key: cp.Variable((n, m), nonneg=True) for key in setup.keys}
    constraints = [cp.sum(k, axis=1) == 1 for k in K.values()]
    for spec in setup.specs:
        constraints += reference_constraints(spec, K, n, m)
    kind, data = objective
    if kind == "linear":
        goal = sum(cp.sum(cp.multiply(data[key], K[key])) for key in K)
    else:
        goal = cp.Variable()
        for key, value in data.items():
            if kind == "worst":
                constraints.append(cp.sum(cp.multiply(value, K[key]), axis=1) <= goal)
            elif kind == "max-entry":
                constraints.append(cp.multiply(value, K[key]) <= goal)
            else:
                constraints += [value - value @ K[key] <= goal, value @ K[key] - value <= goal]
    program = cp.Problem(cp.Minimize(goal), constraints)
    tight = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 1000}
    looser = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "max_iter": 1000}
    attempts = [("CLARABEL", tight), ("CLARABEL", looser),
                ("CLARABEL", {**looser, "equilibrate_enable": False})]
    if not is_conic(setup.specs):
        highs = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
        attempts.insert(0, ("HIGHS", highs))
    outcomes, inexact = [], None
    for solver, options in attempts:
        try:
            program.solve(solver=solver, **options)
        except cp.error.SolverError as error:
            outcomes.append(f"{solver}: {error}")
            continue
        if program.status == cp.OPTIMAL:
            return float(program.value), False
        if program.status == cp.OPTIMAL_INACCURATE and inexact is None:
            inexact = float(program.value)
        outcomes.append(f"{solver}: {program.status}")
    if inexact is not None:
        return inexact, True
    raise RuntimeError("the reference program ended: " + "; ".join(outcomes))


def divergence_of(divergence: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """D(a ‖ b) row by row, from its definition."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if divergence == "kl":
            return rel_entr(a, b).sum(axis=1)
        if divergence == "reverse-kl":
            return rel_entr(b, a).sum(axis=1)
        if divergence == "tv":
            return 0.5 * np.abs(a - b).sum(axis=1)
        if divergence == "chi2":
            return np.where(a - b == 0, 0.0, (a - b) ** 2 / b).sum(axis=1)
        return 0.5 * ((np.sqrt(a) - np.sqrt(b)) ** 2).sum(axis=1)


def capacity_from_below(k: np.ndarray, iterations: int = 5000) -> tuple[float, float]:
    """(I(p; K), max_x D(K[x] ‖ pK)) in bits for the Blahut–Arimoto prior p: below and above C(K)."""
    p = np.full(k.shape[0], 1 / k.shape[0])
    for _ in range(iterations):
        d = rel_entr(k, (p @ k)[None]).sum(axis=1)
        lower, upper = float(p @ d), float(d.max())
        if upper - lower < 1e-12:
            break
        p = p * np.exp(d - d.max())
        p /= p.sum()
    return lower / np.log(2), upper / np.log(2)


def audit_excess(spec: dict, K: dict) -> float:
    """How far the returned matrices miss the constraint (<= 0 when it holds), by its definition."""
    kind = spec["kind"]
    if kind == "compare":
        a, b = spec["weights_a"] @ K[spec["key_a"]], spec["weights_b"] @ K[spec["key_b"]]
        levels, delta = spec["levels"], spec["delta"]
        if spec["divergence"] == "max":
            gaps = a - np.exp(levels)[:, None] * b
            return float(gaps.max()) if delta == 0 else float(np.maximum(gaps, 0).sum(axis=1).max() - delta)
        return float((divergence_of(spec["divergence"], a, b) - levels).max())
    k = K[spec["key"]]
    if kind == "information":
        return capacity_from_below(k)[0] - spec["bits"]
    if kind == "mutual-information":
        prior, rows = spec["prior"], spec["prior"] > 0
        information = (prior[rows, None] * rel_entr(k[rows], (prior @ k)[None])).sum()
        return float(information / np.log(2)) - spec["bits"]
    if kind == "min-entropy":
        return float(np.log2(k.max(axis=0).sum())) - spec["bits"]
    return float((spec["gain_prior"] @ k).max(axis=0).sum()) - spec["bound"]


def objective_of(objective: tuple, K: dict) -> float:
    kind, data = objective
    if kind == "linear":
        return float(sum((data[key] * K[key]).sum() for key in data))
    if kind == "worst":
        return float(max((data[key] * K[key]).sum(axis=1).max() for key in data))
    if kind == "max-entry":
        return float(max((data[key] * K[key]).max() for key in data))
    return float(max(np.abs(data[key] - data[key] @ K[key]).max() for key in data))


def check(seed: int, eps_range: tuple[float, float], row: dict) -> None:
    """Solve one seed's problem, audit its matrices and compare with the reference, into row."""
    problem, described, setup, objective = draw(seed, eps_range)
    row.update(described)
    start = time.perf_counter()
    result = problem.solve()
    row.update(seconds=time.perf_counter() - start, status=result.status, route=result.solver.get("name"),
               path=result.solver.get("path"), objective=result.objective, bound=result.solver.get("bound"),
               holds=bool(result.holds), mixed=result.solver.get("mixed_with_data_independent"),
               conic=is_conic(setup.specs), message=result.message[:300])
    row["ok"] = result.status == "optimal" and bool(result.holds)
    matrices = result.matrices() if result.objective is not None else {}
    if matrices:
        excesses = [audit_excess(spec, matrices) for spec in setup.specs]
        worst = int(np.argmax(excesses))
        row.update(audit_excess=excesses[worst], audit_worst=setup.specs[worst]["notion"],
                   recomputed_objective=objective_of(objective, matrices))
        row["audit_ok"] = bool(excesses[worst] <= AUDIT_TOLERANCE)
        disagreement = abs(row["recomputed_objective"] - result.objective)
        row["objective_agrees"] = bool(disagreement <= OBJECTIVE_AGREEMENT * max(1.0, abs(result.objective)))
        row["ok"] = row["ok"] and row["audit_ok"] and row["objective_agrees"]
    levels = [s["levels"].max() for s in setup.specs if s["kind"] == "compare" and s["divergence"] == "max"]
    if max(levels, default=0.0) > REFERENCE_EXPONENT:
        return
    start = time.perf_counter()
    try:
        reference, inexact = reference_optimum(setup, objective)
    except (RuntimeError, ValueError, cp.error.DCPError) as error:
        row["reference_error"] = str(error)[:300]
        return
    slack, floor = CONIC_SLACK if row["conic"] else LINEAR_SLACK
    allowance = max(slack * abs(reference), floor)
    row.update(reference=reference, reference_inexact=inexact, reference_seconds=time.perf_counter() - start)
    if result.objective is not None:
        row["below_the_reference"] = bool(result.objective < reference - allowance)
        row["ok"] = row["ok"] and bool(result.objective <= reference + allowance)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:300", help="first:last seed (last excluded)")
    parser.add_argument("--epsilons", default="0.05:10", help="low:high ε, drawn log-uniformly")
    parser.add_argument("--name", default="random-notions", help="the results file's name")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="cvxpy")
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
    first, last = (int(part) for part in args.seeds.split(":"))
    eps_range = tuple(float(part) for part in args.epsilons.split(":"))
    rows = []
    for seed in range(first, last):
        rows.append({"seed": seed})
        try:
            check(seed, eps_range, rows[-1])
        except Exception:  # noqa: BLE001 - a crash is a finding, recorded with its traceback
            rows[-1].update(ok=False, error=traceback.format_exc()[-1500:])
        if not rows[-1]["ok"]:
            print(f"seed {seed}: {rows[-1]}", flush=True)
    families = sorted({row.get("family", "?") for row in rows})
    summary = {"problems": len(rows), "ok": sum(row["ok"] for row in rows),
               "optimal": sum(row.get("status") == "optimal" for row in rows),
               "checked_against_the_reference": sum("reference" in row for row in rows),
               "below_the_reference": sum(bool(row.get("below_the_reference")) for row in rows),
               "reference_errors": sum("reference_error" in row for row in rows),
               "inexact_references": sum(bool(row.get("reference_inexact")) for row in rows),
               "audit_failures": sum(row.get("audit_ok") is False for row in rows),
               "objective_disagreements": sum(row.get("objective_agrees") is False for row in rows),
               "crashes": sum("error" in row for row in rows),
               "per_family_ok": {f: [sum(r["ok"] for r in rows if r.get("family", "?") == f),
                                     sum(r.get("family", "?") == f for r in rows)] for f in families},
               "slowest_seconds": max((row.get("seconds", 0.0) for row in rows), default=0.0)}
    print(summary)
    print("wrote", write_results(args.name, rows, summary=summary))


if __name__ == "__main__":
    main()
