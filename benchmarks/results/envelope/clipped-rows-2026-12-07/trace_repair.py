import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from repair_prototype import bounds

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.solvers.lazy_pairs import repairer

family, size, eps, prior, loss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
tol = float(os.environ.get("TOL", "9e-7"))
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=tol, repair=repairer(notion))
start = time.time()
best_rep = -np.inf
while not run.done and run.rounds < 400:
    try:
        run.advance()
    except Exception as exc:
        print(exc); break
    it, lp, v = run.it, run.lp, run.value
    if it.excess is None:
        print(f"{run.rounds:4d} {time.time()-start:6.1f}s gap {run.gaps[-1]:.3e}"); continue
    t = time.time(); bd = bounds(lp, it); t = time.time() - t
    best_rep = max(best_rep, bd["repaired"], run.bound)
    s = max(abs(v), 1e-300)
    print(f"{run.rounds:4d} {time.time()-start:6.1f}s gap {run.gaps[-1]:.3e} withrep {(v-best_rep)/s:.3e} "
          f"settled {(v-bd['settled'])/s:.2e} repaired {(v-bd['repaired'])/s:.2e} unclipped {(v-bd['unclipped'])/s:.2e} "
          f"nclip {bd['nclip']} ({t:.2f}s)", flush=True)
