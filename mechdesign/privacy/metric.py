"""Metric privacy (d-privacy, geo-indistinguishability): K[x,y] <= e^{ε d(x,x')} K[x',y]."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..domain import Domain
from ..metrics import Metric
from .base import AUDIT_TOL, MAX_LOG_COEFFICIENT, Audit, Notion, check_epsilon

_CHUNK = 4_000_000  # matrix entries per vectorised block


class MetricPrivacy(Notion):
    """ε·d-privacy over a ground metric.

    Only the pairs of the metric's exact reduction are compiled (graph edges; neighbours on a
    line; pairs with no value strictly between): they imply all other pairs. A pair whose
    coefficient e^{εd} would exceed e^20 (HiGHS returns wrong "optimal" answers with such
    coefficients, DESIGN §4) is split exactly into a chain through k − 1 auxiliary columns,
    K[x] <= c w_1 <= c² w_2 <= ... <= c^k K[x'] with c = e^{εd/k} <= e^20, so the LP stays exact
    and well scaled.
    """

    name = "metric"
    pure = True

    def __init__(self, epsilon: float, metric: Metric, domain: Domain):
        self.epsilon = check_epsilon(epsilon)
        self.metric = metric
        self.domain = domain
        self.i, self.j, self.d = metric.privacy_pairs(domain)

    def segments(self) -> np.ndarray:
        """Per pair, the number k of chain links so that each coefficient is at most e^20."""
        return np.maximum(1, np.ceil(self.epsilon * self.d / MAX_LOG_COEFFICIENT - 1e-12)).astype(int)

    def structure(self):
        return self.segments().tobytes()

    def _scale(self, name: str, d: np.ndarray):
        if self.parametric:
            return self.coefficient(name, lambda eps: np.exp(eps * d)[:, None])
        return sp.diags(np.exp(self.epsilon * d))

    @staticmethod
    def _times(coef, expr):
        return cp.multiply(coef, expr) if isinstance(coef, cp.Parameter) else coef @ expr

    def constraints(self, K):
        out = []
        links = self.segments()
        for k in np.unique(links):
            sel = links == k
            i, j, d = self.i[sel], self.j[sel], self.d[sel] / k
            c = self._scale(f"exp_epsilon_d_{k}", d)
            for var in K.values():
                chain = [var[i, :]]
                # links w_t in [0, 1]: w_t = K[x] / c^t is always a witness, so the bound cuts
                # nothing and keeps HiGHS away from huge primal values
                chain += [cp.Variable((i.size, var.shape[1]), bounds=[0, 1]) for _ in range(k - 1)]
                chain.append(var[j, :])
                out += [chain[t] <= self._times(c, chain[t + 1]) for t in range(k)]
        return out

    def level(self, k: np.ndarray) -> float:
        """The smallest ε for which ``k`` is ε·d-private (max over the reduced pairs)."""
        worst = 0.0
        step = max(1, _CHUNK // max(k.shape[1], 1))
        logk = _safe_log(k)
        for s in range(0, self.i.size, step):
            i, j, d = self.i[s:s + step], self.j[s:s + step], self.d[s:s + step]
            a, b = logk[i], logk[j]
            with np.errstate(invalid="ignore"):
                r = a - b
            r = np.where(np.isneginf(a), -np.inf, r)  # 0 next to anything: fine this direction
            r = r.max(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                eps = np.where(r <= 0, 0.0, np.where(d > 0, r / np.where(d > 0, d, 1), np.inf))
            worst = max(worst, float(eps.max(initial=0.0)))
        return worst

    def audit(self, mechs):
        achieved = max(self.level(k) for k in mechs.values())
        return Audit(self.name, {"epsilon": self.epsilon}, {"epsilon": achieved},
                     achieved <= self.epsilon + AUDIT_TOL,
                     {"pairs_checked": int(self.i.size // 2), "metric": self.metric.kind})

    def envelope(self, k: np.ndarray) -> np.ndarray:
        """Smallest matrix >= k whose columns satisfy the ratio constraints:
        K'[x, y] = max_z K[z, y] e^{-ε d(x, z)}, found by relaxing the reduced pairs to a
        fixed point (in log space; exact because the pairs imply every other pair)."""
        logk = _safe_log(k)
        line = self._line_order()
        if line is not None:
            order, gaps = line
            cur = logk[order]
            for t in range(1, len(order)):  # forward then backward sweep
                cur[t] = np.maximum(cur[t], cur[t - 1] - self.epsilon * gaps[t - 1])
            for t in range(len(order) - 2, -1, -1):
                cur[t] = np.maximum(cur[t], cur[t + 1] - self.epsilon * gaps[t])
            out = np.empty_like(cur)
            out[order] = cur
            return np.exp(out)
        pen = self.epsilon * self.d[:, None]
        block = max(1, _CHUNK // max(self.i.size, 1))  # columns at a time: pairs × block in memory
        out = np.empty_like(logk)
        for c in range(0, logk.shape[1], block):
            part = logk[:, c:c + block]
            for _ in range(len(self.domain)):
                new = part.copy()
                np.maximum.at(new, self.i, part[self.j] - pen)
                if np.array_equal(new, part):
                    break
                part = new
            out[:, c:c + block] = part
        return np.exp(out)

    def repair(self, mechs):
        """Envelope repair of matrices whose level exceeds ε by more than half the audit's
        tolerance (an LP's row residuals of 1e-10 renormalised away leave about 4e-10, which
        the audit accepts; the envelope over all pairs of 1600 locations takes minutes)."""
        out = {}
        for key, k in mechs.items():
            for _ in range(20):
                if self.level(k) <= self.epsilon + AUDIT_TOL / 2:
                    break
                k = self.envelope(k)
                k = k / k.sum(axis=1, keepdims=True)
            out[key] = k
        return out

    def _line_order(self):
        pts = self.domain.points
        if self.metric.kind != "absolute" or pts is None or pts.shape[1] != 1:
            return None
        order = np.argsort(pts[:, 0], kind="stable")
        return order, np.diff(pts[order, 0])


def _safe_log(k: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(k, 0.0))
