import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.bench.envelope import build
from mechdesign.solvers.lazy_pairs import repairer

family, size, eps, prior, loss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=float(os.environ.get("TOL", "9e-7")), repair=repairer(notion))
t = time.time(); lines = []
while not run.done:
    single = run._single and (not run.gaps or run.gaps[-1] > interior.SINGLE_PRECISION_GAP)
    run.advance()
    it = run.it
    lines.append(f"{run.rounds} {time.time()-t:.1f} {'S' if single else 'D'} gap {run.gaps[-1]:.3e} latest {(run.value-run.latest_bound)/abs(run.value):.3e} comp {it.complementarity()[0]/abs(run.value):.2e} rows {it.rows.size} nclip {0 if it.excess is None else int((it.excess>it.lam).sum())}")
print("\n".join(lines))
