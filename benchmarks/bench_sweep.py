"""Sweep benchmark: a 20-point ε sweep of a 100-value LDP problem against one solve.

    python benchmarks/bench_sweep.py [--k 100] [--points 20]

Writes benchmarks/results/sweep.json. The problem is an LDP design: ε-LDP over k
ordered values, random (Dirichlet) prior, loss |x − y|. Target: the whole sweep (compile once,
each solve warm-started from the previous basis) costs less than 5x one cold solve at ε = 1.

Two paths are measured: (a) the LP (HiGHS): one cold LP solve against the parametric sweep
(compiled once, warm-started; and without warm starts); (b) the default path, where both a
single solve and each sweep point use a special-cased solver when one applies (ε-LDP with an
expected loss has a column-generation solver). Three points are re-solved independently.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from common import write_results

from mechdesign import Domain, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.sweep import sweep
from mechdesign.privacy import LDP

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

    # (a) the LP path: one cold LP solve (HiGHS) against the compiled, warm-started sweep
    start = time.perf_counter()
    single = make(k).solve(solver="highs")
    single_s = time.perf_counter() - start
    print(f"single LP solve k={k} ε=1: {single_s:.2f} s, {single.status}, objective {single.objective:.10g}")

    start = time.perf_counter()
    warm = sweep(make(k), eps, use_special=False)
    warm_s = time.perf_counter() - start
    print(f"{len(eps)}-point LP sweep, compiled once, warm-started: {warm_s:.2f} s = {warm_s / single_s:.2f} x "
          f"single; compiles {warm.compiles}, warm starts {sum(p.warm for p in warm.points)}")

    start = time.perf_counter()
    cold = sweep(make(k), eps, warm_start=False, use_special=False)
    cold_s = time.perf_counter() - start
    print(f"{len(eps)}-point LP sweep, compiled once, no warm start: {cold_s:.2f} s = {cold_s / single_s:.2f} x single")

    # (b) the default path: Problem.solve and sweep both use a special solver when one applies
    start = time.perf_counter()
    auto_single = make(k).solve()
    assert auto_single.status == "optimal"
    auto_single_s = time.perf_counter() - start
    start = time.perf_counter()
    auto = sweep(make(k), eps)
    auto_s = time.perf_counter() - start
    auto_name = auto.points[0].result.solver.get("name")
    print(f"default path ({auto_name}): single {auto_single_s:.3f} s, {len(eps)}-point sweep {auto_s:.2f} s = "
          f"{auto_s / auto_single_s:.1f} x single (compiles {auto.compiles})")

    checks = []
    for i in (0, len(eps) // 2, len(eps) - 1):
        r = make(k, float(eps[i])).solve(solver="highs")
        checks.append({"epsilon": float(eps[i]), "sweep": warm.points[i].result.objective,
                       "default_path": auto.points[i].result.objective, "independent": r.objective,
                       "rel_diff": abs(warm.points[i].result.objective - r.objective) / abs(r.objective),
                       "rel_diff_default_path": abs(auto.points[i].result.objective - r.objective) / abs(r.objective)})
    print("agreement with independent LP solves:", [f"{c['rel_diff']:.1e}/{c['rel_diff_default_path']:.1e}"
                                                   for c in checks])

    rows = [{
        "case": "ldp sweep, LP path", "k": k, "points": len(eps), "epsilons": eps.tolist(),
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
    }, {
        "case": "ldp sweep, default path (special solver per point)", "k": k, "points": len(eps),
        "solver": auto_name, "single_solve_seconds": auto_single_s, "sweep_seconds": auto_s,
        "sweep_ratio": auto_s / auto_single_s, "target_ratio": 5.0, "meets_target": auto_s / auto_single_s < 5.0,
        "compiles": auto.compiles, "all_optimal": all(p.result.status == "optimal" for p in auto.points),
        "per_point_seconds": [p.seconds for p in auto.points],
        "note": "a special solver (no program to compile) runs from scratch at each point",
    }]
    path = write_results("sweep", rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
