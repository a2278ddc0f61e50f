"""Joins with products floored at FLOOR·mean; the excess Λ over what μ pays is tracked per row
(decaying by 1 − α_d a step) and taken off for the bound and the residual rules."""
import os

import numpy as np

import mechdesign.solvers.metric_interior as interior
from mechdesign.solvers.metric_interior_memory import check_growth

FLOOR = float(os.environ.get("FLOOR", "0.1"))
_orig_init = interior._Iterate.__init__
def init(self, lp):
    _orig_init(self, lp)
    self.excess = np.zeros_like(self.lam)
interior._Iterate.__init__ = init

def _join(lp, it, pair, out):
    check_growth(pair.size)
    it.moved()
    g, m = it.K.shape
    total, count = it.complementarity()
    mean = total / count
    a, b, c = lp.a[pair], lp.b[pair], lp.coef[pair]
    slack = it.slack[pair, out]
    wanted = mean / slack
    taken = np.zeros((g, m))
    np.add.at(taken, (b, out), c * wanted)
    lam_take = wanted * np.minimum(1.0, interior.JOIN_SHARE * it.mu[b, out] / taken[b, out])
    lam = np.maximum(lam_take, FLOOR * wanted)
    np.add.at(it.mu, (b, out), -c * lam_take)
    np.add.at(it.mu, (a, out), lam_take)
    it.rows.add(pair, out)
    it.S = np.concatenate([it.S, slack])
    it.lam = np.concatenate([it.lam, lam])
    it.excess = np.concatenate([it.excess, lam - lam_take])
    it._drop_slack_when_complete()
interior._join = _join

_orig_sl = interior.step_lengths
def sl(step, frac):
    a_p, a_d = _orig_sl(step, frac)
    it = interior._CURRENT
    it.excess *= 1.0 - a_d
    return a_p, a_d
interior.step_lengths = sl
_orig_step = interior._step
def _step(lp, it, *a, **k):
    interior._CURRENT = it
    return _orig_step(lp, it, *a, **k)
interior._step = _step

def settled(it):
    return np.maximum(it.lam - it.excess, 0.0)

def _residual_cost(it, r_d):
    if not it.excess.any():
        return float(np.abs(r_d).max(axis=1).sum()) - it.carried
    r = r_d + it.pairs_term() - it.rows.transpose(settled(it))
    return float(np.abs(r).max(axis=1).sum()) - it.carried
interior._residual_cost = _residual_cost

_orig_eval = interior.MetricInteriorPoint._evaluate
def _evaluate(self):
    _orig_eval(self)
    it, lp = self.it, self.lp
    if it.excess.any():
        reduced = lp.cost - it.rows.transpose(settled(it))
        lb = float(lp.row_minima(reduced).sum())
        self.latest_bound = max(self.latest_bound, lb)
        self.bound = max(self.bound, lb)
        self.done = self.value - self.bound <= self.tol * max(abs(self.value), 1e-300)
interior.MetricInteriorPoint._evaluate = _evaluate
