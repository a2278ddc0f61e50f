"""Per-step trace of the interior point alone on a grid (symmetry orbits as in the race)."""
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.scale import build
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_orbits import exact_symmetry
from mechdesign.solvers.symmetry import find

rows = int(sys.argv[1]); eps = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 200
problem = build("grid", {"rows": rows, "epsilon": eps})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
dist = np.asarray(objective.loss)
pts = np.asarray(problem.inputs.points) if getattr(problem.inputs, "points", None) is not None else None
sym = find(pts, dist, cost)
orbits = sym if exact_symmetry(sym, dist, cost) else None
tol = float(os.environ.get("TOL", "9e-7"))
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=tol,
                                   repair=repairer(notion), symmetry=orbits)
start = time.time()
while not run.done and run.rounds < steps:
    single = run._single and (not run.gaps or run.gaps[-1] > interior.SINGLE_PRECISION_GAP)
    try:
        run.advance()
    except Exception as exc:
        print(exc); break
    it = run.it
    comp = it.complementarity()[0]
    print(f"{run.rounds:4d} {time.time()-start:7.1f}s {'S' if single else 'D'} gap {run.gaps[-1]:.3e} "
          f"value {run.value:.9f} latest {run.latest_bound:.9f} best {run.bound:.9f} "
          f"rescost {run.residual:.3e} comp {comp:.3e} rows {it.rows.size}", flush=True)
