"""Thirty random 20-node graphs at ε = 8 (ε·d up to about 40) with a worst-case 0/1/2 loss, each
solved once with the default route (the LP with lazy pair rows); prints one JSON line per graph
(seed, status, objective, bound, gap, seconds, solver).

    OPENBLAS_NUM_THREADS=1 python steep_graphs.py > OUT.jsonl
    MECHDESIGN_THREADS=1 OPENBLAS_NUM_THREADS=1 python steep_graphs.py > OUT-one-thread.jsonl
"""

import json
import time

import numpy as np

from mechdesign import Domain, Metric, MetricPrivacy, Problem
from mechdesign.core.objectives import WorstCaseLoss

N, EPSILON = 20, 8.0
for seed in range(30):
    rng = np.random.default_rng(seed)
    labels = [f"g{i}" for i in range(N)]
    edges = [[labels[i], labels[int(rng.integers(i))], float(rng.choice([1.0, rng.uniform(0.1, 3)]))]
             for i in range(1, N)]
    edges += [[labels[a], labels[b], float(rng.uniform(0.2, 3))] for a, b in rng.integers(0, N, (N, 2)) if a != b]
    loss = rng.integers(0, 3, (N, N)).astype(float)
    problem = Problem(Domain.from_labels(labels), WorstCaseLoss(loss), privacy=MetricPrivacy(EPSILON),
                      metric=Metric("graph", edges=edges))
    start = time.perf_counter()
    result = problem.solve()
    print(json.dumps({"seed": seed, "status": result.status, "objective": result.objective,
                      "bound": result.solver.get("bound"), "gap": result.solver.get("gap"),
                      "seconds": time.perf_counter() - start, "solver": result.solver.get("name")}), flush=True)
