"""The d-privacy interior point alone on one envelope instance, with a given number of
centrality correctors, to a gap of 5e-7: its steps, seconds, the seconds of its
factorisations, its directions and its working set's rows at the end.

    FAM=haversine SIZE=300 THREADS=2 OPENBLAS_NUM_THREADS=1 python ipm_alone.py uniform squared 0.1 400 2
"""

import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_dense as dense
import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.core.heap import freed_memory_kept
from mechdesign.core.threads import limited
from mechdesign.solvers.lazy_pairs import repairer

family, size = os.environ.get("FAM", "haversine"), int(os.environ.get("SIZE", "300"))
prior, loss, epsilon = sys.argv[1], sys.argv[2], float(sys.argv[3])
steps, correctors = int(sys.argv[4]), int(sys.argv[5])
threads = int(os.environ.get("THREADS", "1"))
interior.MAX_CORRECTORS = correctors
problem = build({"family": family, "size": size, "epsilon": epsilon, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
spent = {"factorising": 0.0, "directions": 0}
newton_init, direction_init = dense.DenseNewton.__init__, interior._Direction.__init__


def timed_newton(self, *args, **kwargs):
    start = time.perf_counter()
    newton_init(self, *args, **kwargs)
    spent["factorising"] += time.perf_counter() - start


def counted_direction(self, *args, **kwargs):
    spent["directions"] += 1
    direction_init(self, *args, **kwargs)


dense.DenseNewton.__init__, interior._Direction.__init__ = timed_newton, counted_direction
with freed_memory_kept(), limited(threads):
    run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=5e-7,
                                       repair=repairer(notion))
    start = time.perf_counter()
    while run.rounds < steps and not run.done:
        run.advance()
    seconds = time.perf_counter() - start
print(f"{family}{size} {prior} {loss} eps={epsilon} corr={correctors} threads={threads}: {run.rounds} steps "
      f"{seconds:.1f} s newton {spent['factorising']:.1f} s dirs {spent['directions']} gap {run.gaps[-1]:.2e} "
      f"rows {run.it.rows.size}")
