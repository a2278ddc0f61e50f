"""The line interior point alone over the line's envelope instances, one JSON line per instance:
steps, seconds, value, bound, gap, status, the fewest and the last outputs carried, and whether
outputs came back. Run from a checkout (its code on PYTHONPATH); DEAD and DROPGAP override the
drop's thresholds of mechdesign.solvers.metric_live_columns when set.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python iterations.py OUT.jsonl [SIZE]
"""

import json
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.core.heap import freed_memory_kept
from mechdesign.core.threads import limited
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer

try:
    import mechdesign.solvers.metric_live_columns as live

    if os.environ.get("DEAD"):
        live.DEAD_ENTRY = float(os.environ["DEAD"])
    if os.environ.get("DROPGAP"):
        live.DROP_GAP = float(os.environ["DROPGAP"])
except ImportError:  # (a checkout from before the drops)
    pass

size = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
with open(sys.argv[1], "w") as out:
    for epsilon in (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0):
        for prior in ("uniform", "dirichlet", "zipf"):
            for loss in ("metric", "squared", "random"):
                problem = build({"family": "line", "size": size, "epsilon": epsilon, "prior": prior, "loss": loss})
                notion, objective = problem.privacy[0], problem.objective
                cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
                carried, status = [], "done"
                with freed_memory_kept(), limited(1):
                    run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=5e-7,
                                                       repair=repairer(notion))
                    start = time.perf_counter()
                    try:
                        while not run.done and run.rounds < 300:
                            run.advance()
                            carried.append(run.columns)
                    except SolverDeclined as declined:
                        status = str(declined)
                    seconds = time.perf_counter() - start
                row = dict(epsilon=epsilon, prior=prior, loss=loss, steps=run.rounds, seconds=round(seconds, 2),
                           value=run.value, bound=run.bound, gap=run.gaps[-1], status=status, min_cols=min(carried),
                           final_cols=carried[-1], revived=any(b > a for a, b in zip(carried, carried[1:])))
                out.write(json.dumps(row) + "\n")
                out.flush()
