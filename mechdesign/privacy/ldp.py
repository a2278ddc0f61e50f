"""Local differential privacy: ε-LDP and (ε, δ)-LDP, and the ratio chains that keep large e^ε
coefficients out of the LPs.

A ratio constraint a <= e^L b with L > 20 (HiGHS refuses coefficients >= 1e15 and returns wrong
"optimal" answers from about e^29 on) is written exactly as a chain through k − 1 auxiliary
variables, a <= c w_1, w_1 <= c w_2, ..., w_{k−1} <= c b with c = e^{L/k} <= e^10,
k = ⌈L / 10⌉ (:func:`links`): any a, b with a <= e^L b have the witness w_t = min(1, c^{k−t} b)
when a <= 1 (and conversely the chain multiplies out to a <= c^k b = e^L b).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.privacy.base import (
    MAX_LOG_COEFFICIENT,
    Notion,
    check_delta,
    check_epsilon,
    hockey_stick,
)

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations

#: the log of the largest coefficient of one chain link
LINK_LOG = 10.0
#: entries of one block of the all-pairs (ε, δ) audit (2^22 doubles, 32 MiB per temporary)
HOCKEY_BLOCK_ENTRIES = 1 << 22


def links(log_coefficient: float | np.ndarray) -> int | np.ndarray:
    """Chain links for a coefficient e^L: 1 while L <= 20, else k = ⌈L / 10⌉ links of e^{L/k}
    (an int for a number, an int array for an array of exponents).

    Links of e^10 rather than e^20 once chained: links of e^20 leave HiGHS's primal noise of
    about 1e-9 on optima that can be far smaller (a 4-input D∞ XDP at ε = 20 kept a gap of 1e-3
    with them; links of e^10 solve it to 4e-15)."""
    L = np.asarray(log_coefficient, dtype=float)
    k = np.where(L <= MAX_LOG_COEFFICIENT, 1, np.ceil(L / LINK_LOG - 1e-12)).astype(int)
    return int(k) if k.ndim == 0 else k


def link_coefficient(notion: Notion, coefficients: Coefficients, name: str, scale: float = 1.0) -> Any:
    """The per-link coefficient e^{ε·scale/k} of ``notion`` at its ε, from ``coefficients`` (a
    Parameter in a parametric compile; k is fixed by the ε, and sweeps recompile when it moves)."""
    k = links(notion.epsilon * scale)
    return coefficients.coefficient(notion, f"{name}_link{k}",
                                    lambda eps: np.exp(min(eps * scale / k, MAX_LOG_COEFFICIENT)))


def chain(top: Any, bottom: Any, k: int, c: Any, upper: float | None = 1.0) -> list:
    """Constraints top <= c^k · bottom (elementwise) through k − 1 auxiliary variables of the
    shape of ``bottom``: top <= c w_1, w_t <= c w_{t+1}, w_{k−1} <= c bottom.

    ``upper`` bounds the auxiliaries (w_t = min(upper, c^{k−t} bottom) is a witness whenever
    top <= upper), which keeps HiGHS away from huge primal values; None leaves them unbounded.
    """
    shape = bottom.shape
    bounds = None if upper is None else [0.0, upper]
    steps = [cp.Variable(shape, nonneg=bounds is None, bounds=bounds) for _ in range(k - 1)]
    seq = [top, *steps, bottom]
    return [seq[t] <= cp.multiply(c, seq[t + 1]) for t in range(k)]


class LDP(Notion):
    """ε-LDP: K[x, y] <= e^ε K[x', y] for all inputs x, x' and outputs y.

    Compiled in the exact O(|X||Y|) envelope form: one variable m_y per column with
    m_y <= K[x, y] <= e^ε m_y (the same polytope as the all-pairs form, far fewer rows).
    For ε > 20 the upper side goes through a column maximum M_y and a ratio chain,
    K[x, y] <= c M_y, M_y <= c^{k−1} m_y (module docstring), so no coefficient exceeds e^20.
    With per-context mechanisms it applies to each context's matrix.
    """

    name = "ldp"

    def __init__(self, epsilon: float):
        self.epsilon = check_epsilon(epsilon)

    def structure(self) -> int:
        return links(self.epsilon)

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        k = links(self.epsilon)
        c = link_coefficient(self, coefficients, "exp_epsilon")
        for var in K.values():
            n_out = var.shape[1]
            m = cp.Variable(n_out, nonneg=True)
            out.append(var >= _row(m))
            if k == 1:
                out.append(var <= c * _row(m))
                continue
            top = cp.Variable(n_out, bounds=[0.0, 1.0])  # M_y >= max_x K[x, y] / c
            out.append(var <= c * _row(top))
            out += chain(top, m, k - 1, c)
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

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
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
    """(ε, δ)-LDP: Σ_y max(0, K[x, y] − e^ε K[x', y]) <= δ for all x != x' (hockey stick).

    For ε > 20 the term e^ε K[x', y] is replaced by c W with W <= c^{k−1} K[x', y] through a
    ratio chain (module docstring): exact, since max(0, p − cW) is smallest at the largest W
    allowed, min(1, c^{k−1} K[x', y]), and p <= 1 <= c makes the cap harmless.
    """

    name = "ldp"

    def __init__(self, epsilon: float, delta: float):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)

    def __repr__(self) -> str:
        return f"ApproxLDP(epsilon={preview.number(self.epsilon)}, delta={preview.number(self.delta)})"

    def structure(self) -> int:
        return links(self.epsilon)

    def program_rows(self, n_inputs: int, n_outputs: int) -> int:
        """Per ordered pair of inputs: its hockey-stick sum, and per output two rows for the
        excess (the epigraph of its pos(): a row and the bound of its variable) and one for each
        link of the chain after the first (:meth:`constraints`)."""
        return n_inputs * (n_inputs - 1) * (1 + n_outputs * (1 + links(self.epsilon)))

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        k = links(self.epsilon)
        c = link_coefficient(self, coefficients, "exp_epsilon")
        for var in K.values():
            n = var.shape[0]
            i, j = np.nonzero(~np.eye(n, dtype=bool))
            other = var[j, :]
            if k > 1:
                other = cp.Variable((i.size, var.shape[1]), bounds=[0.0, 1.0])
                out += chain(other, var[j, :], k - 1, c)
            excess = cp.pos(var[i, :] - c * other)
            out.append(cp.sum(excess, axis=1) <= self.delta)
        return out

    def level(self, k: np.ndarray) -> float:
        """The smallest δ for which ``k`` is (ε, δ)-LDP at this ε."""
        n, m = k.shape
        step = max(1, HOCKEY_BLOCK_ENTRIES // max(n * m, 1))  # step x n x |Y| entries at a time
        worst = 0.0
        for start in range(0, n, step):
            block = hockey_stick(k[start:start + step, None, :], k[None, :, :], self.epsilon)
            worst = max(worst, float(block.max()))
        return worst

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Beyond e^20 the LP cannot resolve entries of order e^{−ε} (they sit below its
        feasibility tolerance), so a matrix that misses δ is given the pure ε-LDP floor
        K[x, y] >= e^{−ε} max_x' K[x', y] (:meth:`LDP.repair`), which moves the objective by
        O(e^{−ε}) and makes every hockey-stick sum 0; at smaller ε the certificate's mixing step
        is the gentler repair."""
        if self.epsilon <= MAX_LOG_COEFFICIENT:
            return mechs
        bad = {key: k for key, k in mechs.items() if self.level(k) > self.delta + AUDIT_TOL / 10}
        return {**mechs, **LDP(self.epsilon).repair(bad)}

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        achieved = max(self.level(k) for k in mechs.values())
        return Audit(self.name, {"epsilon": self.epsilon, "delta": self.delta},
                     {"epsilon": self.epsilon, "delta": achieved},
                     achieved <= self.delta + AUDIT_TOL)


def _row(v: Any) -> Any:
    """The vector variable ``v`` as a (1, n) row, broadcast against a matrix."""
    return cp.reshape(v, (1, v.shape[0]), order="C")


def ldp(epsilon: float, delta: float = 0.0) -> Notion:
    """ε-LDP, or (ε, δ)-LDP when δ > 0."""
    return ApproxLDP(epsilon, delta) if check_delta(delta) > 0 else LDP(epsilon)


def ldp_from_table(table: dict, declared: Declarations) -> Notion:
    """``notion = "ldp"``: ``epsilon`` and an optional ``delta``."""
    declared.allow(table, {"epsilon", "delta"})
    return ldp(declared.epsilon(table), declared.delta(table))
