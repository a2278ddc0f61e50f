"""Random small problems through ``Problem.solve()``, checked against the design LP written out
in full.

Each seed draws one problem: ε-LDP, d-privacy on a line (repeated points allowed), a grid,
random points of the plane (some coincident), haversine locations or a graph metric; ε
log-uniform in ``--epsilons`` (default 0.05–10); a Dirichlet prior of concentration 0.1, 1 or 10
(sometimes with a zero); the metric, its square, a random or the 0-1 loss. Whatever route the
solve takes (a special solver, the general LP and its re-solves), it must end ``optimal`` with
every certificate line holding. Where every pair's e^{εd} stays below e^60, the optimum is also
computed independently: every ordered pair of inputs and every output written out, each pair row
divided by e^{εd/2} (unscaled rows at εd of 30 left HiGHS 1e-5 above the optimum), solved by
SciPy's HiGHS dual simplex at tolerances of 1e-10. A solve may find a design below that
reference (the reference LP is itself inexact on badly scaled instances), never above it by more
than the tolerance.

    python benchmarks/bench_random_problems.py --seeds 0:500 [--epsilons 0.05:10] [--size medium] [--name NAME]

Writes ``benchmarks/results/NAME.json`` (default ``random-problems``): per seed the instance,
the route, the status, the objective, the proven bound and the reference, and a summary.
"""

from __future__ import annotations

import argparse
import time
import traceback

import numpy as np
import scipy.sparse as sp
from common import write_results
from scipy.optimize import linprog

from mechdesign import Domain, Metric, Problem
from mechdesign.bench.envelope import _domain_and_metric as envelope_domain
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP, MetricPrivacy

FAMILIES = ("ldp", "line", "grid", "points", "haversine", "graph")
#: pairs whose e^{εd} exceeds e^REFERENCE_EXPONENT leave the instance without a reference
REFERENCE_EXPONENT = 60.0
#: how far above the reference a solve's objective may lie (relative, with an absolute floor)
SLACK = 2e-6


def reference_optimum(cost: np.ndarray, d: np.ndarray, epsilon: float) -> float:
    """min Σ C K over row-stochastic K with K[x, y] <= e^{ε d(x, x')} K[x', y] for every ordered
    pair x != x' and output y, each row divided by e^{ε d / 2}."""
    n, m = cost.shape
    x, z = np.nonzero(~np.eye(n, dtype=bool))
    pairs, outputs = np.repeat(np.arange(x.size), m), np.tile(np.arange(m), x.size)
    rows = np.concatenate([pairs * m + outputs] * 2)
    cols = np.concatenate([np.repeat(x, m) * m + outputs, np.repeat(z, m) * m + outputs])
    half = np.exp(0.5 * epsilon * d[x, z])
    values = np.concatenate([np.repeat(1 / half, m), -np.repeat(half, m)])
    a_ub = sp.csr_matrix((values, (rows, cols)), shape=(x.size * m, n * m))
    a_eq = sp.kron(sp.eye(n), np.ones((1, m))).tocsr()
    lp = linprog(cost.ravel(), A_ub=a_ub, b_ub=np.zeros(x.size * m), A_eq=a_eq, b_eq=np.ones(n), bounds=(0, None),
                 method="highs-ds", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if lp.status != 0:
        raise RuntimeError(f"the reference LP ended: {lp.message}")
    return float(lp.fun)


#: the inputs drawn for each size class: (least, most) for most families, and the grid's sides;
#: "medium" is where the special solvers take over from the plain LP
SIZES = {"small": {"inputs": (3, 40), "points": (3, 36), "side": (2, 7)},
         "medium": {"inputs": (30, 81), "points": (30, 81), "side": (5, 10)}}


def _domain(family: str, rng: np.random.Generator, size: str = "small"):
    """(domain, metric or None for ε-LDP) of one random instance."""
    inputs, spots, side = (SIZES[size][key] for key in ("inputs", "points", "side"))
    if family == "ldp":
        return Domain.from_size(int(rng.integers(*inputs))), None
    if family == "line":
        n = int(rng.integers(*inputs))
        points = np.sort(rng.choice(3 * n, size=n, replace=True) * rng.choice([1.0, 0.1, 0.37]))
        return Domain.from_points(points[:, None]), Metric("absolute")
    if family == "grid":
        return Domain.from_grid(int(rng.integers(*side)), int(rng.integers(*side))), Metric("euclidean")
    if family == "points":
        n = int(rng.integers(*spots))
        points = rng.random((n, 2)) * rng.choice([1.0, 5.0])
        if rng.random() < 0.3:
            points[rng.integers(n)] = points[0]  # a coincident pair
        return Domain.from_points(points), Metric("euclidean")
    if family == "haversine":
        n = int(rng.integers(*spots))
        return Domain.from_points(np.column_stack([45 + 0.3 * rng.random(n), 7 + 0.4 * rng.random(n)])), \
            Metric("haversine")
    return envelope_domain("graph", int(rng.integers(max(inputs[0], 4), inputs[1])), rng)  # a ring with as many chords


def draw(seed: int, eps_range: tuple[float, float], size: str = "small"):
    """(problem, description, distances, cost) of one seed."""
    rng = np.random.default_rng(seed)
    family = str(rng.choice(FAMILIES))
    epsilon = float(np.exp(rng.uniform(*np.log(eps_range))))
    dom, metric = _domain(family, rng, size)
    n = len(dom)
    d = np.ones((n, n)) - np.eye(n) if metric is None else metric.distances(dom)
    if family == "haversine":  # ε per median distance, so that the range means the same here
        epsilon /= max(float(np.median(d[d > 0])), 1e-9)
    concentration = float(rng.choice([0.1, 1.0, 10.0]))
    prior = rng.dirichlet(np.full(n, concentration))
    if rng.random() < 0.15:
        prior[rng.integers(n)] = 0.0
        prior /= prior.sum()
    distance = d if metric is not None else np.abs(np.arange(n)[:, None] - np.arange(n)[None]).astype(float)
    loss_kind = str(rng.choice(["metric", "squared", "random", "zero-one"]))
    loss = {"metric": distance, "squared": distance ** 2, "random": rng.random((n, n)),
            "zero-one": 1.0 - np.eye(n)}[loss_kind]
    notion = LDP(epsilon) if metric is None else MetricPrivacy(epsilon, metric, dom)
    problem = Problem(inputs=dom, privacy=[notion], objective=ExpectedLoss(loss, {"default": prior}),
                      name=f"random-{seed}")
    described = {"seed": seed, "family": family, "epsilon": epsilon, "inputs": n,
                 "concentration": concentration, "loss": loss_kind}
    return problem, described, d, prior[:, None] * loss


def check(seed: int, eps_range: tuple[float, float], size: str = "small") -> dict:
    problem, row, d, cost = draw(seed, eps_range, size)
    start = time.perf_counter()
    result = problem.solve()
    row.update(seconds=time.perf_counter() - start, status=result.status, route=result.solver.get("name"),
               objective=result.objective, bound=result.solver.get("bound"), holds=result.holds)
    row["ok"] = result.status == "optimal" and result.holds
    if row["epsilon"] * float(d.max()) < REFERENCE_EXPONENT:
        try:
            reference = reference_optimum(cost, d, row["epsilon"])
        except (RuntimeError, AssertionError) as error:
            row["reference_error"] = str(error)[:200]
        else:
            row["reference"] = reference
            row["ok"] = row["ok"] and result.objective <= reference + SLACK * max(abs(reference), 1e-9) + 1e-12
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:200", help="first:last seed (last excluded)")
    parser.add_argument("--epsilons", default="0.05:10", help="low:high ε, drawn log-uniformly")
    parser.add_argument("--size", default="small", choices=sorted(SIZES),
                        help="small: 3-39 inputs (mostly the plain LP); medium: 30-80 (the special solvers)")
    parser.add_argument("--name", default="random-problems", help="the results file's name")
    args = parser.parse_args()
    first, last = (int(part) for part in args.seeds.split(":"))
    eps_range = tuple(float(part) for part in args.epsilons.split(":"))
    rows = []
    for seed in range(first, last):
        try:
            rows.append(check(seed, eps_range, args.size))
        except Exception:  # noqa: BLE001 - a crash is a finding, recorded with its traceback
            rows.append({"seed": seed, "ok": False, "error": traceback.format_exc()[-1000:]})
        if not rows[-1]["ok"]:
            print(f"seed {seed}: {rows[-1]}", flush=True)
    checked = [row for row in rows if "reference" in row]
    summary = {"problems": len(rows), "ok": sum(row["ok"] for row in rows),
               "optimal": sum(row.get("status") == "optimal" for row in rows),
               "checked_against_the_reference": len(checked),
               "below_the_reference": sum(row["objective"] < row["reference"] * (1 - SLACK) for row in checked),
               "reference_errors": sum("reference_error" in row for row in rows),
               "slowest_seconds": max((row.get("seconds", 0.0) for row in rows), default=0.0)}
    print(summary)
    print("wrote", write_results(args.name, rows, summary=summary))


if __name__ == "__main__":
    main()
