"""The d-privacy interior point alone on every small dense envelope instance (10 × 10 grids, 100
random points, 100 haversine locations, 100-node graphs; ε from 0.1 to 8, three priors, three
losses) to a gap of 5e-7: status, steps, single-precision steps. RULE=off sets
SINGLE_PRECISION_RESIDUAL to infinity (single precision then ends as before the rule).

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python ipm_alone_small.py graph,points,haversine,grid OUT.jsonl
"""
import itertools
import json
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer

if os.environ.get("RULE") == "off":
    interior.SINGLE_PRECISION_RESIDUAL = np.inf
fams = sys.argv[1].split(",")
sizes = {"grid": 10, "points": 100, "haversine": 100, "graph": 100}
out = open(sys.argv[2], "w")
for fam, eps, prior, loss in itertools.product(fams, [0.1, 0.25, 0.5, 1, 2, 4, 8], ["uniform", "dirichlet", "zipf"],
                                               ["metric", "squared", "random"]):
    p = build({"family": fam, "size": sizes[fam], "epsilon": eps, "prior": prior, "loss": loss})
    notion, obj = p.privacy[0], p.objective
    cost = np.asarray(list(obj.row_weights.values())[0])[:, None] * np.asarray(obj.loss)
    t = time.perf_counter()
    run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=5e-7, repair=repairer(notion))
    status = "done"
    try:
        while not run.done:
            run.advance()
    except SolverDeclined as e:
        status = "declined: " + str(e)
    rec = dict(family=fam, eps=eps, prior=prior, loss=loss, status=status, rounds=run.rounds,
               single=run.single_steps, gap=run.gaps[-1] if run.gaps else None, seconds=time.perf_counter() - t)
    out.write(json.dumps(rec) + "\n"); out.flush()
