import os
import sys

import numpy as np

import mechdesign.solvers.metric_interior as interior
import mechdesign.solvers.metric_joins as joins
from mechdesign.bench.envelope import build
from mechdesign.solvers.lazy_pairs import repairer

rec = {}
sl = interior.step_lengths
def step_lengths(step, frac):
    rec['raw'] = (step.a_p, step.a_d); r = sl(step, frac); rec['ad'] = r; return r
interior.step_lengths = step_lengths
fc = joins.first_crossed
def first_crossed(lp, it, pair, out, dK):
    rec['cand'] = pair.size; r = fc(lp, it, pair, out, dK); rec['join'] = r[0].size; return r
joins.first_crossed = first_crossed
family, size, eps, prior, loss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=float(os.environ.get("TOL", "9e-7")), repair=repairer(notion))
while not run.done:
    rec.clear(); run.advance(); it = run.it
    ex = 0 if it.excess is None else it.excess.sum()
    mean = it.complementarity()[0] / it.complementarity()[1]
    prod = it.S * it.lam / mean
    print(f"{run.rounds} gap {run.gaps[-1]:.3e} a {rec.get('ad')} raw {tuple(round(x,3) for x in rec.get('raw',()))} cand {rec.get('cand')} join {rec.get('join')} "
          f"rows {it.rows.size} reach {it.reach:.3g} minprod {prod.min():.1e} lowprods {(prod<1e-2).sum()} budget {joins.excess_budget(run.gaps, run.value-run.bound):.2e}", flush=True)
