"""Local differential privacy: ε-LDP and (ε, δ)-LDP."""

from __future__ import annotations

from collections.abc import Mapping

import cvxpy as cp
import numpy as np

from .base import AUDIT_TOL, Audit, Notion, check_delta, check_epsilon, hockey_stick


class LDP(Notion):
    """ε-LDP: K[x, y] <= e^ε K[x', y] for all inputs x, x' and outputs y.

    Compiled in the exact O(|X||Y|) envelope form: one variable m_y per column with
    m_y <= K[x, y] <= e^ε m_y (the same polytope as the all-pairs form, far fewer rows).
    With per-context mechanisms it applies to each context's matrix.
    """

    name = "ldp"
    pure = True

    def __init__(self, epsilon: float):
        self.epsilon = check_epsilon(epsilon)

    def constraints(self, K):
        out = []
        e = self.coefficient("exp_epsilon", np.exp)
        for var in K.values():
            m = cp.Variable(var.shape[1], nonneg=True)
            row = cp.reshape(m, (1, var.shape[1]), order="C")
            out += [var >= row, var <= e * row]
        return out

    def level(self, k: np.ndarray) -> float:
        """The smallest ε for which ``k`` is ε-LDP."""
        hi, lo = k.max(axis=0), k.min(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
        return float(max(r.max(), 0.0))

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        achieved = max(self.level(k) for k in mechs.values())
        return Audit(self.name, {"epsilon": self.epsilon}, {"epsilon": achieved},
                     achieved <= self.epsilon + AUDIT_TOL)

    def repair(self, mechs):
        floor = np.exp(-self.epsilon)
        out = {}
        for key, k in mechs.items():
            for _ in range(20):
                if self.level(k) <= self.epsilon + AUDIT_TOL / 10:
                    break
                k = np.maximum(k, k.max(axis=0, keepdims=True) * floor)
                k = k / k.sum(axis=1, keepdims=True)
            out[key] = k
        return out


class ApproxLDP(Notion):
    """(ε, δ)-LDP: Σ_y max(0, K[x, y] − e^ε K[x', y]) <= δ for all x != x' (hockey stick)."""

    name = "ldp"

    def __init__(self, epsilon: float, delta: float):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)

    def constraints(self, K):
        out = []
        e = self.coefficient("exp_epsilon", np.exp)
        for var in K.values():
            n = var.shape[0]
            i, j = np.nonzero(~np.eye(n, dtype=bool))
            excess = cp.pos(var[i, :] - e * var[j, :])
            out.append(cp.sum(excess, axis=1) <= self.delta)
        return out

    def level(self, k: np.ndarray) -> float:
        """The smallest δ for which ``k`` is (ε, δ)-LDP at this ε."""
        n = k.shape[0]
        worst = 0.0
        for start in range(0, n, 256):  # bounded memory: 256 x n x |Y| at a time
            block = hockey_stick(k[start:start + 256, None, :], k[None, :, :], self.epsilon)
            worst = max(worst, float(block.max()))
        return worst

    def audit(self, mechs):
        achieved = max(self.level(k) for k in mechs.values())
        return Audit(self.name, {"epsilon": self.epsilon, "delta": self.delta},
                     {"epsilon": self.epsilon, "delta": achieved},
                     achieved <= self.delta + AUDIT_TOL)


def ldp(epsilon: float, delta: float = 0.0) -> Notion:
    """ε-LDP, or (ε, δ)-LDP when δ > 0."""
    return ApproxLDP(epsilon, delta) if check_delta(delta) > 0 else LDP(epsilon)
