"""One line per interior-point step of the method alone (to a gap of 5e-7), to see what the
joined rows' excess does to the two bounds: the proven gap; the rows in the working set; what
the excess of the rows joining at the step took from the bound at Λ (``taken``); the gaps from
the bound at Λ (``raw``), at the settled duals max(Λ − excess, 0) (``settled``) and at Λ − excess
unclipped (``unclipped``: not a bound where a row is negative, shown for comparison); how many
rows have Λ below their excess (``nclip``) and above half of it (``e>Λ/2``).

    python trace_excess.py FAMILY SIZE EPSILON PRIOR LOSS [LIMIT]

LIMIT ``none`` runs without a limit on the excess (the share set to infinity);
``trace-grid20-eps1-no-limit.txt`` is ``grid 20 1 dirichlet squared none``. ``TOL`` in the
environment sets the tolerance (default 5e-7).
"""
import os
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
import mechdesign.solvers.metric_joins as joins
from mechdesign.bench.envelope import build
from mechdesign.solvers.lazy_pairs import repairer

taken = []
join = joins.join


def watched_join(lp, it, pair, out, budget=np.inf):
    join(lp, it, pair, out, budget)
    if it.excess is not None:  # what the new rows' excess takes from the bound at Λ
        new = np.zeros_like(it.excess)
        new[-pair.size:] = it.excess[-pair.size:]
        reduced = lp.cost - it.rows.transpose(it.lam)
        taken.append(float(lp.row_minima(reduced + it.rows.transpose(new)).sum() - lp.row_minima(reduced).sum()))


joins.join = watched_join
family, size, eps, prior, loss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
if len(sys.argv) > 6 and sys.argv[6] == "none":
    joins.JOIN_EXCESS_SHARE = np.inf
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
tol = float(os.environ.get("TOL", "5e-7"))
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=tol, repair=repairer(notion))
start = time.time()
while not run.done and run.rounds < 600:
    taken.clear()
    try:
        run.advance()
    except Exception as exc:  # (a declined method: its message ends the trace)
        print(exc)
        break
    it, lp, v = run.it, run.lp, run.value
    raw = float(lp.row_minima(lp.cost - it.pairs_term()).sum())
    if it.excess is not None:
        settled = float(lp.row_minima(lp.cost - it.rows.transpose(joins.settled(it))).sum())
        unclipped = float(lp.row_minima(lp.cost - it.rows.transpose(it.lam - it.excess)).sum())
        nclip, big = int((it.excess > it.lam).sum()), int((it.excess > 0.5 * it.lam).sum())
    else:
        settled = unclipped = raw
        nclip = big = 0
    print(f"{run.rounds:4d} {time.time() - start:6.1f}s gap {v - run.bound:.3e} rows {it.rows.size:7d} "
          f"taken {taken[0] if taken else 0:.2e} raw {v - raw:.2e} settled {v - settled:.2e} "
          f"unclipped {v - unclipped:.2e} nclip {nclip} e>Λ/2 {big}", flush=True)
