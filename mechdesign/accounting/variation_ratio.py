"""Amplification by shuffling from parameters read off the matrix: the variation-ratio reduction
of Shaowei Wang, Yun Peng, Jin Li, Zikai Wen, Zhipeng Li, Shiyu Yu, Di Wang and Wei Yang,
"Privacy Amplification via Shuffling: Unified, Simplified, and Tightened", PVLDB 17(8), 2024.

Three numbers describe how user 1's two output laws P = K[x] and P' = K[x'] differ and how well
the other users' outputs hide them:

* p — the ratio bound, max_y max(P_y/P'_y, P'_y/P_y) <= p (p = e^{ε0}, ε0 the matrix's LDP level);
* β — the total variation bound, ½ Σ_y |P_y − P'_y| <= β;
* q — the blanket ratio: every row K[z] of the matrix dominates a fraction 1/q of what user 1
  sends (below).

With α = β/(p − 1), user 1's laws split into three components,

    P  = αp D0 + α D1 + (1 − α − αp) Q,     P' = α D0 + αp D1 + (1 − α − αp) Q,

and every other user's law K[z] contains each of D0, D1 with weight r = αp/q and Q with weight
s = (1 − α − αp)/q. The shuffled view is then a post-processing of the counts of D0, D1 and Q
draws (:mod:`mechdesign.accounting.shuffled_counts` gives the argument and computes the resulting
δ(ε)); the likelihood ratio of counts (a, b, m) is (a + b/p + m) / (a/p + b + m). With
β = (p − 1)/(p + 1) there is no Q component and each other user is a clone with probability
2/(p + 1): the stronger clone reduction of Feldman, McMillan and Talwar ("Stronger Privacy
Amplification by Shuffling for Rényi and Approximate Differential Privacy", SODA 2023).

**The split, checked.** For one pair (P, P') with its own ratio p_xx' <= p and variation
β_xx' <= β <= (p − 1)/(p + 1) (every ε0-LDP pair has β_xx' <= (p − 1)/(p + 1)), take
D0 = (P − P')_+/β + t, D1 = (P' − P)_+/β + t with t = λ g, g = (p min(P, P') − max(P, P'))/(p − 1)
>= 0 and λ = (1 − β_xx'/β)/Σg. Then P − αp D0 − α D1 = g − α(1 + p) t >= 0 exactly when
β <= (p − 1)/(p + 1), which makes Q a distribution, and P − P' = β(D0 − D1) gives the second
identity. The other users need r(D0 + D1) + sQ <= K[z]; the left side is
(max(P, P') + βt)/q <= p(P + P')/((p + 1) q). So the matrix's

    p = e^{ε0},   β = max over pairs of ½||K[x] − K[x']||_1,
    q = max_y p (K_(1)y + K_(2)y) / ((p + 1) min_z K[z, y])

(K_(1)y, K_(2)y the two largest entries of column y) serve every pair at once: one evaluation,
not one per pair. For k-ary randomized response they are p = e^{ε0}, β = (p − 1)/(p + k − 1) and
q = p, the parameters Wang et al. give it. A column with zeros and non-zeros makes p, q infinite:
no other user can hide anything and the bound keeps user 1's own divergence.

A smaller q never gives a larger bound: r and s grow in proportion, and the extra draws are added
by post-processing (each user outside the components joins them with the extra probability; how
many users are outside is known from the counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mechdesign.accounting.epsilon_search import smallest_epsilon
from mechdesign.accounting.reading import MatrixLike, local_level
from mechdesign.accounting.shuffled_counts import CountModel

#: row blocks of the all-pairs total variation (block x k x |Y| doubles, at most 32 MiB)
PAIR_BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True)
class VariationRatio:
    """The parameters (p, β, q) of the module docstring."""

    p: float
    beta: float
    q: float

    @classmethod
    def from_matrix(cls, matrix: MatrixLike) -> VariationRatio:
        """(p, β, q) read off a row-stochastic matrix (module docstring)."""
        k = np.asarray(getattr(matrix, "matrix", matrix), dtype=float)
        k = k[:, k.max(axis=0) > 0]  # outputs never sent play no part
        k = np.unique(k, axis=0)
        if k.shape[0] < 2:
            return cls(1.0, 0.0, 1.0)
        low = k.min(axis=0)
        if np.any(low <= 0):
            return cls(math.inf, largest_total_variation(k), math.inf)
        p = math.exp(local_level(k))
        top_two = -np.partition(-k, 1, axis=0)[:2].sum(axis=0)
        q = float(np.max(p * top_two / ((p + 1.0) * low)))
        beta = min(largest_total_variation(k), (p - 1.0) / (p + 1.0))
        return cls(p, beta, max(q, 1.0 + beta))

    @property
    def local_epsilon(self) -> float:
        return math.log(self.p) if self.p > 0 else math.inf

    def model(self, users: int, tail: float = 1e-13) -> CountModel:
        """The count model of these parameters for ``users`` users."""
        if self.beta <= 0 or self.p <= 1:
            return CountModel(int(users), (0.0, 0.0, 1.0), 0.0, 0.0, tail=tail)
        if math.isinf(self.p):
            alpha_p, alpha = self.beta, 0.0
        else:
            alpha = self.beta / (self.p - 1.0)
            alpha_p = alpha * self.p
        rest = max(0.0, 1.0 - alpha - alpha_p)
        if math.isinf(self.q):
            return CountModel(int(users), (alpha_p, alpha, rest), 0.0, 0.0, tail=tail)
        return CountModel(int(users), (alpha_p, alpha, rest), alpha_p / self.q, rest / self.q, tail=tail)


def largest_total_variation(matrix: np.ndarray) -> float:
    """max over pairs of rows of ½ Σ_y |K[x, y] − K[x', y]| = 1 − Σ_y min(K[x, y], K[x', y])."""
    k = np.asarray(matrix, dtype=float)
    n, m = k.shape
    step = max(1, PAIR_BLOCK_ENTRIES // max(n * m, 1))
    smallest_overlap = 1.0
    for start in range(0, n - 1, step):
        block = k[start:start + step]
        overlap = np.minimum(block[:, None, :], k[None, start + 1:, :]).sum(axis=-1)
        rows = np.arange(block.shape[0])[:, None]
        cols = np.arange(start + 1, n)[None, :]
        overlap = np.where(cols > start + rows, overlap, np.inf)  # each pair once, no diagonal
        if overlap.size:
            smallest_overlap = min(smallest_overlap, float(overlap.min()))
    return float(min(1.0, max(0.0, 1.0 - smallest_overlap)))


def variation_ratio_epsilon(matrix: MatrixLike, users: int, delta: float) -> float:
    """The central ε after shuffling ``users`` reports of ``matrix``, at ``delta``, by the
    variation-ratio reduction with the matrix's (p, β, q) (an upper bound, within 1e-10)."""
    params = VariationRatio.from_matrix(matrix)
    return parameters_epsilon(params, users, delta)


def parameters_epsilon(params: VariationRatio, users: int, delta: float) -> float:
    """The central ε of the variation-ratio reduction with parameters ``params``."""
    model = params.model(users, tail=min(1e-13, 1e-4 * delta))
    if model.trivial:
        return 0.0
    if delta <= 0:  # pure central DP: shuffling amplifies only approximate DP
        return params.local_epsilon
    return smallest_epsilon(model.delta, delta, params.local_epsilon)
