"""One line per interior-point step (the method alone, to a gap of 5e-7 or STEPS steps): the
seconds so far, the working set's rows, the proven gap, the mean complementarity, the primal step
allowed by the set's rows (inside) and by every row (outside), the step lengths before the 0.95
fraction (raw), the entries' and the rows' own limits (aK, aS: primal, dual), and the share of the
complementarity products below 0.01 and 0.1 of the mean and above 10.

    python trace_steps.py FAMILY SIZE EPSILON PRIOR LOSS STEPS

(`steps-base-grid20.txt`: the base code, 150 steps, the same command; `steps-prototype-grid20.txt`
came from the prototype, `prototype_joins.py` imported first, with its residual and carried
columns added to each line.)
"""
import sys
import time

import numpy as np

import mechdesign.solvers.metric_interior as interior
import mechdesign.solvers.metric_interior_kernels as kern
from mechdesign.bench.envelope import build
from mechdesign.core.heap import freed_memory_kept
from mechdesign.solvers.lazy_pairs import repairer

family, size, prior, loss = sys.argv[1], int(sys.argv[2]), sys.argv[4], sys.argv[5]
eps, steps = float(sys.argv[3]), int(sys.argv[6])
problem = build({"family": family, "size": size, "epsilon": eps, "prior": prior, "loss": loss})
notion, objective = problem.privacy[0], problem.objective
cost = np.asarray(list(objective.row_weights.values())[0])[:, None] * np.asarray(objective.loss)
log = {}
orig_sl = interior.step_lengths
def sl(step, frac):
    log["raw"] = (step.a_p, step.a_d)
    r = orig_sl(step, frac)
    log["taken"] = r
    return r
interior.step_lengths = sl
from mechdesign.solvers.metric_passes import recover as _rec


def rec(t_K, mu, dK, K, dmu):
    r = _rec(t_K, mu, dK, K, dmu); log['aK'] = r; return r
interior.recover = rec
import mechdesign.solvers.metric_rows as mr

_sr = mr.Rows.slack_recovered
def sr(self, *a):
    r = _sr(self, *a); log['aS'] = r[2:]; return r
mr.Rows.slack_recovered = sr
def spread(it):
    c, n = it.complementarity(); m = c / n
    pk = (it.K * it.mu)[it.mu > 0] / m; ps = it.S * it.lam / m
    p = np.concatenate([pk.ravel(), ps])
    return (f"lo={np.mean(p<0.01):.3f},{np.mean(p<0.1):.3f} hi={np.mean(p>10):.4f} min={p.min():.1e} "
            f"sK={np.mean(pk<0.01):.3f} sS={np.mean(ps<0.01):.3f}")

orig_ol = kern.outside_limit
def ol(*a):
    r = orig_ol(*a)
    log.setdefault("inside", a[6])
    log["outside"] = min(log.get("outside", 9), r[0])
    return r
kern.outside_limit = ol
with freed_memory_kept():
    run = interior.MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), eps, tol=5e-7, repair=repairer(notion))
    t0 = time.perf_counter()
    while not run.done and run.rounds < steps:
        log.clear()
        run.advance()
        c, n = run.it.complementarity()
        print(run.rounds, f"t={time.perf_counter()-t0:.1f} rows={run.it.rows.size} gap={run.gaps[-1]:.3e} mu={c/n:.2e} "
              f"inside={log.get('inside',float('nan')):.3f} outside={log.get('outside',float('nan')):.3f} "
              f"raw={log['raw'][0]:.3f},{log['raw'][1]:.3f} aK={log['aK'][0]:.3f},{log['aK'][1]:.3f} "
              f"aS={log['aS'][0]:.3f},{log['aS'][1]:.3f} {spread(run.it)}", flush=True)
