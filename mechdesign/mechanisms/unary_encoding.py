"""Unary encodings for frequency estimation under ε-LDP: basic one-time RAPPOR (symmetric) and
optimized unary encoding (OUE), after Wang, Blocki, Li and Jha, "Locally Differentially Private
Protocols for Frequency Estimation", USENIX Security 2017.

The output space is {0, 1}^k, so an encoding is a :class:`UnaryEncoding` audited analytically
(exactly ε = ln(p(1 − q) / ((1 − p) q))); its 2^k-column matrix is built only for small k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution
from mechdesign.core.simplex import project_simplex
from mechdesign.privacy.base import Notion, check_epsilon
from mechdesign.privacy.ldp import LDP

__all__ = ["UNARY_MATRIX_MAX_K", "UnaryEncoding", "oue", "rappor"]

#: Unary encodings build their 2^k-output matrix only up to this k.
UNARY_MATRIX_MAX_K = 12


@dataclass
class UnaryEncoding:
    """Unary encoding (Wang et al., USENIX Security 2017): input x becomes the one-hot vector e_x, each bit then
    reported independently: Pr[b_x = 1 | x] = p, Pr[b_i = 1 | x] = q for i != x.

    The output space is {0, 1}^k, so the mechanism is audited analytically, per bit: two inputs
    x, x' differ only in bits x and x', and the worst output has b_x = 1, b_x' = 0, giving
    ε = ln(p (1 − q) / ((1 − p) q)). :meth:`mechanism` builds the 2^k-column matrix for k <=
    UNARY_MATRIX_MAX_K so the generic auditor can confirm it.
    """

    domain: Domain
    p: float
    q: float
    name: str
    claims: tuple = field(default=())

    @property
    def k(self) -> int:
        return len(self.domain)

    def level(self) -> float:
        """The exact ε of the encoding (LDP), from the per-bit analysis."""
        if self.k < 2:
            return 0.0
        p, q = self.p, self.q
        if q <= 0 or p >= 1:
            return math.inf
        return max(0.0, math.log(p) + math.log1p(-q) - math.log1p(-p) - math.log(q))

    def audit(self, notion: Notion | None = None) -> Audit:
        """Analytic audit against ε-LDP (default: the claim)."""
        notion = notion if notion is not None else self.claims[0]
        if not isinstance(notion, LDP):
            raise ProblemError(f"a unary encoding is audited analytically against ε-LDP only, not "
                               f"'{notion.name}'; use .mechanism() (k <= {UNARY_MATRIX_MAX_K}) for others")
        achieved = self.level()
        return Audit("ldp", {"epsilon": notion.epsilon}, {"epsilon": achieved},
                     achieved <= notion.epsilon + AUDIT_TOL, {"analytic": "per-bit", "p": self.p, "q": self.q})

    def mechanism(self) -> Mechanism:
        """The full matrix over the 2^k bit vectors (labels '0101...', bit i = value i)."""
        k = self.k
        if k > UNARY_MATRIX_MAX_K:
            raise ProblemError(f"the unary encoding matrix has 2^{k} columns; it is built only for "
                               f"k <= {UNARY_MATRIX_MAX_K} (use the analytic audit)")
        bits = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)  # (2^k, k)
        eye = np.eye(k, dtype=bool)
        # Pr[b | x] = Π_i P(b_i | i == x)
        prob1 = np.where(eye, self.p, self.q)  # (k inputs, k bits): Pr[bit i = 1 | x]
        logp = np.where(bits[None, :, :], np.log(prob1)[:, None, :], np.log1p(-prob1)[:, None, :])
        matrix = np.exp(logp.sum(axis=2))
        labels = ["".join("1" if b else "0" for b in row) for row in bits]
        return Mechanism(matrix, self.domain, Domain(tuple(labels)), claims=self.claims,
                         name=self.name, validate=False)

    def simulate(self, lam, n: int, rng=None) -> np.ndarray:
        """Bit counts C_i = #users reporting b_i = 1, for n users with inputs ~ λ (no per-user
        loop: C_i = Binomial(n_i, p) + Binomial(n − n_i, q), independent)."""
        rng = np.random.default_rng(rng)
        lam = check_distribution(lam, self.k, "input distribution")
        counts = rng.multinomial(int(n), lam)
        return rng.binomial(counts, self.p) + rng.binomial(int(n) - counts, self.q)

    def estimate(self, bit_counts, n: int) -> np.ndarray:
        """Unbiased frequency estimate (C_i/n − q)/(p − q), projected onto the simplex."""
        c = np.asarray(bit_counts, dtype=float)
        return project_simplex((c / n - self.q) / (self.p - self.q))


def rappor(k: int | Domain, epsilon: float) -> UnaryEncoding:
    """Basic one-time RAPPOR (symmetric unary encoding; Erlingsson, Pihur and Korolova, "RAPPOR:
    Randomized Aggregatable Privacy-Preserving Ordinal Response", CCS 2014): each bit kept with
    p = e^{ε/2}/(1 + e^{ε/2}), flipped with q = 1 − p. Exactly ε-LDP."""
    domain = Domain.coerce(k)
    eps = check_epsilon(epsilon)
    p = 1.0 / (1.0 + math.exp(-eps / 2))
    return UnaryEncoding(domain, p, 1.0 - p, f"rappor(k={len(domain)}, ε={eps:g})", (LDP(eps),))


def oue(k: int | Domain, epsilon: float) -> UnaryEncoding:
    """Optimized unary encoding (Wang et al., USENIX Security 2017): p = 1/2, q = 1/(1 + e^ε). Exactly ε-LDP."""
    domain = Domain.coerce(k)
    eps = check_epsilon(epsilon)
    return UnaryEncoding(domain, 0.5, 1.0 / (1.0 + math.exp(eps)), f"oue(k={len(domain)}, ε={eps:g})",
                         (LDP(eps),))
