"""Sweep benchmark (issue 5): a 20-point ε sweep of a 100-value LDP problem against one solve.

    python benchmarks/bench_sweep.py [--k 100] [--points 20]

Writes benchmarks/results/sweep.json. The problem is MEASUREMENTS' LDP design: ε-LDP over k
ordered values, random (Dirichlet) prior, loss |x − y|. Target: the whole sweep (compile once,
each solve warm-started from the previous basis) costs less than 5x one cold solve at ε = 1.
Also recorded: the same sweep without warm starts (compiled once, every solve from scratch),
and three sweep points re-solved independently (values must agree).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_results  # noqa: E402

from mechdesign import Domain, Problem  # noqa: E402
from mechdesign.objectives import ExpectedLoss  # noqa: E402
from mechdesign.privacy import LDP  # noqa: E402
from mechdesign.sweep import sweep  # noqa: E402

warnings.filterwarnings("ignore")


def make(k: int, eps: float = 1.0) -> Problem:
    prior = np.random.default_rng(0).dirichlet(np.ones(k))
    x = np.arange(k)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    return Problem(Domain.from_size(k), ExpectedLoss(loss, {"default": prior}), [LDP(eps)], name=f"ldp-k{k}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--start", type=float, default=0.5)
    parser.add_argument("--stop", type=float, default=2.0)
    args = parser.parse_args()
    k = args.k
    eps = np.linspace(args.start, args.stop, args.points)

    start = time.perf_counter()
    single = make(k).solve()
    single_s = time.perf_counter() - start
    print(f"single solve k={k} ε=1: {single_s:.2f} s, {single.status}, objective {single.objective:.10g}")

    start = time.perf_counter()
    warm = sweep(make(k), eps)
    warm_s = time.perf_counter() - start
    print(f"{len(eps)}-point sweep, warm-started: {warm_s:.2f} s = {warm_s / single_s:.2f} x single; "
          f"compiles {warm.compiles}, warm starts {sum(p.warm for p in warm.points)}")

    start = time.perf_counter()
    cold = sweep(make(k), eps, warm_start=False)
    cold_s = time.perf_counter() - start
    print(f"{len(eps)}-point sweep, no warm start: {cold_s:.2f} s = {cold_s / single_s:.2f} x single")

    checks = []
    for i in (0, len(eps) // 2, len(eps) - 1):
        r = make(k, float(eps[i])).solve()
        checks.append({"epsilon": float(eps[i]), "sweep": warm.points[i].result.objective,
                       "independent": r.objective,
                       "rel_diff": abs(warm.points[i].result.objective - r.objective) / abs(r.objective)})
    print("agreement with independent solves:", [f"{c['rel_diff']:.1e}" for c in checks])

    rows = [{
        "case": "ldp sweep", "k": k, "points": len(eps), "epsilons": eps.tolist(),
        "single_solve_seconds": single_s, "single_objective": single.objective,
        "sweep_warm_seconds": warm_s, "sweep_warm_ratio": warm_s / single_s,
        "sweep_cold_seconds": cold_s, "sweep_cold_ratio": cold_s / single_s,
        "target_ratio": 5.0, "meets_target": warm_s / single_s < 5.0,
        "compiles": warm.compiles, "canonicalizations": warm.canonicalizations,
        "warm_starts": int(sum(p.warm for p in warm.points)),
        "all_optimal": all(p.result.status == "optimal" for p in warm.points),
        "per_point_seconds_warm": [p.seconds for p in warm.points],
        "per_point_seconds_cold": [p.seconds for p in cold.points],
        "objectives": warm.objectives.tolist(), "independent_checks": checks,
    }]
    path = write_results("sweep", rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
