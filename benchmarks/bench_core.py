"""Core designer benchmark: d-privacy on a line (n = 200) and ε-LDP (k = 100, random prior).

    python benchmarks/bench_core.py

Writes benchmarks/results/core.json with times, optimal values and certificates. The d-privacy
value is checked against the remapped truncated geometric mechanism (closed form).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from common import write_results

from mechdesign import Domain, Metric, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP, MetricPrivacy

warnings.filterwarnings("ignore")


def geometric_remap_loss(n: int, eps: float) -> float:
    a = np.exp(-eps)
    x = np.arange(n)
    g = a ** np.abs(x[:, None] - x[None, :]) * (1 - a) / (1 + a)
    g[:, 0] = a ** x / (1 + a)
    g[:, -1] = a ** (n - 1 - x) / (1 + a)
    return float(((g / n).T @ np.abs(x[:, None] - x[None, :])).min(axis=1).sum())


def run(name: str, problem: Problem, reference: float | None = None) -> dict:
    start = time.perf_counter()
    result = problem.solve()
    total = time.perf_counter() - start
    row = {"instance": name, "status": result.status, "objective": result.objective,
           "total_seconds": total, "compile_seconds": result.solver.get("compile_seconds"),
           "solve_seconds": result.solver.get("solve_seconds"), "gap": result.solver.get("gap"),
           "certificate": [a.to_dict() for a in result.certificate]}
    if reference is not None:
        row["reference"] = reference
        row["relative_error"] = abs(result.objective - reference) / reference
    print(f"{name}: {result.status} {result.objective:.10g} in {total:.2f} s")
    return row


def main() -> None:
    rows = []
    n = 200
    dom = Domain.from_size(n)
    metric = Metric("absolute")
    rows.append(run("d-privacy line n=200 eps=1 uniform |x-y|",
                    Problem(inputs=dom, privacy=[MetricPrivacy(1.0, metric, dom)],
                            objective=ExpectedLoss(metric.distances(dom), {"default": np.full(n, 1 / n)})),
                    geometric_remap_loss(n, 1.0)))
    k = 100
    dom = Domain.from_size(k)
    prior = np.random.default_rng(0).dirichlet(np.ones(k))
    rows.append(run("ldp k=100 eps=1 random prior (seed 0) |x-y|",
                    Problem(inputs=dom, privacy=[LDP(1.0)],
                            objective=ExpectedLoss(metric.distances(dom), {"default": prior}))))
    print("wrote", write_results("core", rows))


if __name__ == "__main__":
    main()
