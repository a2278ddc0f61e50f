"""Coupling mechanisms: the special solver for "targets + expected loss" against the LP.

    python benchmarks/bench_coupling_mechanism.py

Both paths solve the same problem (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 18): one mechanism per context, every
context's output distribution equal to the target, minimum expected loss. The special solver runs
one optimal transport per context (`mechdesign.transport.coupling`); the LP is the generic cvxpy + HiGHS
program (solver = "highs"). Writes benchmarks/results/coupling_mechanism.json with both times,
both certified objectives and their relative difference.

Instances: the shipped airports problem (85 cells, 2 states, haversine km) and random ones on a
line (|x − y|, 3 contexts, uniform target) with n = 100, 200, 300 (LP and special) and
n = 1000, 2000 (special only: the LP has 3 n² variables).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
from common import write_results

import mechdesign
from mechdesign import Domain, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import Target

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parent.parent


def line_problem(n: int, contexts: int = 3, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    lams = {f"s{s}": rng.dirichlet(np.ones(n)) for s in range(contexts)}
    x = np.arange(n, dtype=float)
    loss = np.abs(x[:, None] - x[None, :])
    obj = ExpectedLoss(loss, {s: lam / contexts for s, lam in lams.items()})
    return Problem(Domain.from_size(n), obj, [Target(lams, np.full(n, 1.0 / n))], contexts=lams,
                   name=f"line n={n}, {contexts} contexts, uniform target")


def timed(problem: Problem, solver: str | None):
    start = time.perf_counter()
    result = problem.solve(solver=solver)
    return result, time.perf_counter() - start


def run(problem: Problem, with_lp: bool) -> dict:
    special, t_special = timed(problem, None)
    row = {"instance": problem.name, "inputs": len(problem.inputs), "contexts": len(problem.keys),
           "special": {"solver": special.solver.get("name"), "status": special.status,
                       "objective": special.objective, "seconds": t_special,
                       "certificate_holds": special.holds}}
    line = f"{problem.name}: coupling {special.objective:.10g} in {t_special:.3f} s"
    if with_lp:
        lp, t_lp = timed(problem, "highs")
        row["lp"] = {"solver": lp.solver.get("name"), "status": lp.status, "objective": lp.objective,
                     "seconds": t_lp, "certificate_holds": lp.holds}
        row["relative_difference"] = abs(special.objective - lp.objective) / max(abs(lp.objective), 1e-12)
        row["speedup"] = t_lp / t_special
        line += f"; LP {lp.objective:.10g} in {t_lp:.3f} s (x{row['speedup']:.0f})"
    print(line, flush=True)
    return row


def main() -> None:
    rows = [run(mechdesign.load_problem(ROOT / "problems/airports-coupling.toml"), True)]
    for n in (100, 200, 300):
        rows.append(run(line_problem(n), True))
    for n in (1000, 2000):
        rows.append(run(line_problem(n), False))
    print("wrote", write_results("coupling_mechanism", rows))


if __name__ == "__main__":
    main()
