"""The d-privacy interior point alone on envelope instances, with the drops of dead outputs off
and on: one JSON line per instance.

    python iterations.py FAMILY SIZE EPSILONS PRIORS LOSSES

EPSILONS, PRIORS and LOSSES are comma-separated; ``MODES`` (default ``off,on``) and ``THREADS``
(default 1) in the environment. Each mode records [steps, seconds, value, bound, outputs live
at the end, the changes of the outputs carried as (step, before, after), whether the drops
were undone, the error if the method declined].
"""

import json
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
import mechdesign.solvers.metric_live_columns as live
from mechdesign.bench.envelope import build
from mechdesign.core.heap import freed_memory_kept
from mechdesign.core.threads import limited
from mechdesign.solvers.lazy_pairs import repairer


def run_once(cost, notion, epsilon):
    with freed_memory_kept(), limited(int(os.environ.get("THREADS", "1"))):
        run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=5e-7,
                                           repair=repairer(notion))
        start, changes, error = time.perf_counter(), [], ""
        try:
            while not run.done and run.rounds < 600:
                before = run.columns
                run.advance()
                if run.columns != before:
                    changes.append((run.rounds, before, run.columns))
        except Exception as exc:  # (a declined method: recorded)
            error = str(exc)[:80]
        seconds = time.perf_counter() - start
    undone = run.lp.drops.undone if hasattr(run.lp, "drops") else None
    return [run.rounds, round(seconds, 2), run.value, run.bound, run.columns, changes, undone, error]


def main():
    family, size = sys.argv[1], int(sys.argv[2])
    epsilons = [float(e) for e in sys.argv[3].split(",")]
    priors, losses = sys.argv[4].split(","), sys.argv[5].split(",")
    modes = os.environ.get("MODES", "off,on").split(",")
    for epsilon in epsilons:
        for prior in priors:
            for loss in losses:
                problem = build({"family": family, "size": size, "epsilon": epsilon, "prior": prior, "loss": loss})
                notion, objective = problem.privacy[0], problem.objective
                cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
                out = {}
                for mode in modes:
                    live.DROP_GAP = -1.0 if mode == "off" else 0.1
                    out[mode] = run_once(cost, notion, epsilon)
                print(json.dumps({"f": family, "n": size, "eps": epsilon, "prior": prior, "loss": loss, **out}),
                      flush=True)


if __name__ == "__main__":
    main()
