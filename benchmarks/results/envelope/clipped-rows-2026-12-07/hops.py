"""How many rounds the repair of the clipped rows needs: the interior point alone (its own path,
the code on ``PYTHONPATH``), and at every step with rows clipped at 0 the relative gap from the
bound repaired with 0 (the settled duals), 1, 2, 3, 4 and 8 rounds, and from the value at
Λ − excess (``unclipped``: not a bound there).

    python hops.py FAMILY SIZE EPSILON PRIOR LOSS STEPS
"""

import sys

import numpy as np

import mechdesign.solvers.metric_interior as interior
import mechdesign.solvers.metric_joins as joins
from mechdesign.bench.envelope import build
from mechdesign.solvers.lazy_pairs import repairer

family, size, eps, prior, loss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
steps = int(sys.argv[6])
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=9e-7, repair=repairer(notion))
while not run.done and run.rounds < steps:
    run.advance()
    lp, it, v = run.lp, run.it, run.value
    if it.excess is None or not (it.excess > it.lam).any():
        continue
    line = []
    for hops in (0, 1, 2, 3, 4, 8):
        joins.REPAIR_HOPS = hops
        line.append(f"h{hops} {(v - joins.settled_bound(lp, it)) / abs(v):.2e}")
    unclipped = lp.row_minima(lp.cost - it.rows.transpose(it.lam - it.excess)).sum()
    print(run.rounds, " ".join(line), f"unclipped {(v - unclipped) / abs(v):.2e} clipped {(it.excess > it.lam).sum()}",
          flush=True)
    joins.REPAIR_HOPS = 4
