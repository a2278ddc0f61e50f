"""Leakage measures of a channel K (row-stochastic, K[x, y] = Pr[y | x]) under a prior π, in
**bits**, except the max-information capacity and its audit, which are in **nats**, like the LDP ε
they equal.

* mutual information I(π; K) = Σ_x π_x D(K[x] ‖ πK) (:func:`mutual_information`);
* min-entropy (multiplicative Bayes) capacity log2 Σ_y max_x K[x, y] and min-entropy leakage
  under a prior (:func:`min_entropy_capacity`, :func:`min_entropy_leakage`);
* g-vulnerability (prior and posterior) and multiplicative g-leakage
  (:func:`prior_g_vulnerability`, :func:`posterior_g_vulnerability`, :func:`g_leakage`) for a
  gain matrix g[w, x] (:func:`gain_matrix`);
* max-mutual information and the max-information capacity, which equals the LDP ε of the
  channel (:func:`max_mutual_information`, :func:`max_information_capacity`,
  :func:`max_information_audit`), after Wu, Xia and He, "Achieving Dalenius' Goal of Data
  Privacy with Practical Assumptions", arXiv 2017 (Def. 7–8, Theorem 2.1).

The Shannon capacity max_π I(π; K) is in :mod:`mechdesign.information.capacity`. Every public
function taking a channel or a prior validates it and raises
:class:`~mechdesign.core.errors.ProblemError` otherwise.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.errors import ProblemError
from mechdesign.information.channel import (
    LN2,
    as_channel,
    as_prior,
    neg_row_entropies,
    row_divergences,
)

__all__ = [
    "g_leakage",
    "gain_matrix",
    "max_information_audit",
    "max_information_capacity",
    "max_mutual_information",
    "min_entropy_capacity",
    "min_entropy_leakage",
    "mutual_information",
    "mutual_information_of",
    "posterior_g_vulnerability",
    "prior_g_vulnerability",
]


# ---------------------------------------------------------------------------------------------
# mutual information, min-entropy, g-vulnerability

def mutual_information(prior, K) -> float:
    r"""I(π; K) = Σ_x π_x D(K[x] ‖ πK) in bits.

    >>> round(mutual_information([0.5, 0.5], [[1, 0], [0, 1]]), 12)
    1.0
    """
    K = as_channel(K)
    pi = as_prior(prior, K.shape[0])
    return mutual_information_of(pi, K)


def mutual_information_of(pi: np.ndarray, K: np.ndarray) -> float:
    """I(π; K) in bits for a prior and a channel already validated (arrays; no checks): the
    rows outside the prior's support are skipped."""
    rows = pi > 0
    Kr = K[rows]
    q = pi @ K
    D = row_divergences(Kr, neg_row_entropies(Kr), q)
    return float(pi[rows] @ D) / LN2


def min_entropy_capacity(K) -> float:
    r"""Multiplicative Bayes (min-entropy) capacity log2 Σ_y max_x K[x, y], in bits.

    It is the min-entropy leakage under the uniform prior, and the largest over all priors
    (Braun, Chatzikokolakis and Palamidessi, "Quantitative Notions of Leakage
    for One-try Attacks", MFPS 2009). For k-ary RR it is log2(k e^ε / (k − 1 + e^ε)).
    """
    K = as_channel(K)
    return float(np.log2(K.max(axis=0).sum()))


def prior_g_vulnerability(prior, gain) -> float:
    """V_g(π) = max_w Σ_x π_x g[w, x] (the adversary's best expected gain without output)."""
    if isinstance(gain, str):
        pi = as_prior(prior, len(prior) if not isinstance(prior, str) else 0)
        gain = gain_matrix(gain, len(pi))
    else:
        gain = gain_matrix(gain)
        pi = as_prior(prior, gain.shape[1])
    return float((gain @ pi).max())


def posterior_g_vulnerability(prior, K, gain) -> float:
    r"""V_g(π, K) = Σ_y max_w Σ_x π_x g[w, x] K[x, y].

    ``gain`` is a (|W|, |X|) matrix of gains g(w, x) for guessing w when the secret is x, or the
    string "identity" (Bayes vulnerability: the probability of guessing x in one try).
    """
    K = as_channel(K)
    gain = gain_matrix(gain, K.shape[0])
    pi = as_prior(prior, K.shape[0])
    return float(((gain * pi[None, :]) @ K).max(axis=0).sum())


def g_leakage(prior, K, gain) -> float:
    """Multiplicative g-leakage log2(V_g(π, K) / V_g(π)) in bits (needs V_g(π) > 0)."""
    post = posterior_g_vulnerability(prior, K, gain)
    before = prior_g_vulnerability(prior, gain_matrix(gain, as_channel(K).shape[0]))
    if before <= 0:
        raise ProblemError("g-leakage needs a positive prior vulnerability (non-negative gains "
                           "with some gain on the prior's support)", key="gain")
    return float(np.log2(post / before))


def min_entropy_leakage(prior, K) -> float:
    r"""Min-entropy leakage log2(Σ_y max_x π_x K[x, y] / max_x π_x) in bits (g = identity)."""
    return g_leakage(prior, K, "identity")


def gain_matrix(gain, n: int | None = None) -> np.ndarray:
    """The gain matrix g[w, x] (guesses x secrets) of ``gain``: a finite matrix with ``n``
    columns when ``n`` is given, or the string "identity" (Bayes vulnerability: g = I_n).
    Raises :class:`~mechdesign.core.errors.ProblemError` (key ``gain``) otherwise."""
    if isinstance(gain, str):
        if gain != "identity":
            raise ProblemError(f"gain must be a matrix or \"identity\", got {gain!r}", key="gain")
        if n is None:
            raise ProblemError("gain \"identity\" needs the number of secrets", key="gain")
        return np.eye(n)
    try:
        g = np.asarray(gain, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("gain must be a matrix of numbers", key="gain")
    if g.ndim != 2 or not np.all(np.isfinite(g)):
        raise ProblemError(f"gain must be a finite matrix (guesses x secrets), got shape {g.shape}",
                           key="gain")
    if n is not None and g.shape[1] != n:
        raise ProblemError(f"gain must have one column per secret ({n}), got {g.shape[1]}", key="gain")
    return g


# ---------------------------------------------------------------------------------------------
# max-mutual information (Wu, Xia and He, Def. 7–8, Theorem 2.1)

def max_mutual_information(prior, K) -> float:
    r"""Max-mutual information I∞(X; Y) = max_{x, y: p(x, y) > 0} log2 p(x, y) / (p(x) p(y))
    = max_{x: π_x > 0, y: K[x, y] > 0} log2 K[x, y] / (πK)[y], in bits (Wu, Xia and He, Def. 7)."""
    K = as_channel(K)
    pi = as_prior(prior, K.shape[0])
    q = pi @ K
    Kr = K[pi > 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(Kr > 0, np.log2(np.where(Kr > 0, Kr, 1.0)) - np.log2(np.where(q > 0, q, 1.0)),
                     -np.inf)
    return float(max(r.max(), 0.0))


def max_information_capacity(K) -> float:
    r"""Max-information capacity sup_π I∞(π; K) in **nats** (Wu, Xia and He, Def. 8 with one record).

    For a column y, (πK)[y] is a convex combination of the column, so
    K[x, y] / (πK)[y] <= max_x K[x, y] / min_x K[x, y], approached by putting almost all the
    mass on the row minimising the column. Hence the supremum is
    max_y ln(max_x K[x, y] / min_x K[x, y]), the smallest ε for which K is ε-LDP
    (Theorem 2.1: max-information privacy = differential privacy under independent priors).
    """
    K = as_channel(K)
    hi, lo = K.max(axis=0), K.min(axis=0)
    with np.errstate(divide="ignore"):
        r = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
    return float(max(r.max(), 0.0))


def max_information_audit(K, weight: float | None = None) -> Audit:
    """Theorem 2.1 as an audit: the max-information capacity equals the LDP ε of K.

    The achieved value is the closed form of :func:`max_information_capacity`; it is checked
    against (a) the LDP level max over columns and row pairs of ln K[x, y] / K[x', y] computed
    pairwise, and (b) the max-mutual information of an explicit prior (mass 1 − ``weight`` on
    the row minimising the worst column, ``weight`` on the row maximising it), which approaches
    the supremum from below as ``weight`` → 0 (default 1e-12 e^{−ε}, so it is within about
    1e-12 of it). Values in nats (bits in ``detail``).
    """
    K = as_channel(K)
    eps = max_information_capacity(K)
    m = K.shape[0]
    # pairwise LDP level, without the closed form
    with np.errstate(divide="ignore", invalid="ignore"):
        L = np.log(K)
        pair = L[:, None, :] - L[None, :, :] if m * m * K.shape[1] <= 5e7 else None
    if pair is not None:
        pair = np.where(np.isnan(pair), -np.inf, pair)
        ldp = float(max(pair.max(), 0.0))
    else:
        ldp = eps
    witness = np.nan
    if np.isfinite(eps) and eps > 0 and m > 1:
        with np.errstate(divide="ignore"):
            r = np.log(K.max(axis=0)) - np.log(K.min(axis=0))
        y = int(np.nanargmax(np.where(np.isfinite(r), r, -np.inf)))
        lo_x, hi_x = int(np.argmin(K[:, y])), int(np.argmax(K[:, y]))
        w = weight if weight is not None else max(1e-12 * np.exp(-min(eps, 600.0)), 1e-300)
        pi = np.zeros(m)
        pi[lo_x], pi[hi_x] = 1 - w, w
        witness = max_mutual_information(pi, K) * LN2
    elif eps == 0:
        witness = 0.0
    holds = bool(abs(eps - ldp) <= AUDIT_TOL or (np.isinf(eps) and np.isinf(ldp)))
    if np.isfinite(witness):
        holds = holds and witness <= eps + AUDIT_TOL
    return Audit("max-information", {"epsilon": ldp}, {"epsilon": eps},
                 holds, {"bits": eps / LN2, "approached_by_prior": witness})
