import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from repair_prototype import bounds

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.scale import build
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_orbits import exact_symmetry
from mechdesign.solvers.symmetry import find

rows = int(sys.argv[1]); eps = float(sys.argv[2]); steps = int(sys.argv[3])
problem = build("grid", {"rows": rows, "epsilon": eps})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
dist = np.asarray(objective.loss)
sym = find(np.asarray(problem.inputs.points), dist, cost)
orbits = sym if exact_symmetry(sym, dist, cost) else None
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=9e-7,
                                   repair=repairer(notion), symmetry=orbits)
start = time.time(); best_rep = -np.inf
while not run.done and run.rounds < steps:
    run.advance()
    it, lp, v = run.it, run.lp, run.value
    if it.excess is None:
        print(f"{run.rounds:4d} {time.time()-start:6.1f}s gap {run.gaps[-1]:.3e}", flush=True); continue
    t = time.time(); bd = bounds(lp, it); t = time.time() - t
    best_rep = max(best_rep, bd["repaired"], run.bound); s = abs(v)
    print(f"{run.rounds:4d} {time.time()-start:6.1f}s gap {run.gaps[-1]:.3e} withrep {(v-best_rep)/s:.3e} "
          f"settled {(v-bd['settled'])/s:.2e} repaired {(v-bd['repaired'])/s:.2e} unclipped {(v-bd['unclipped'])/s:.2e} "
          f"nclip {bd['nclip']} ({t:.2f}s)", flush=True)
