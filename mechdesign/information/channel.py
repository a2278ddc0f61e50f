"""A channel and a prior as the information measures take them, and the row divergences they
are all built from.

A channel is a row-stochastic matrix K[x, y] = Pr[y | x]; a prior π is a distribution over its
rows. The measures work in nats internally and report bits, hence :data:`LN2`.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution, check_stochastic

#: ln 2: nats per bit.
LN2 = float(np.log(2.0))

__all__ = ["LN2", "as_channel", "as_prior", "neg_row_entropies", "row_divergences"]


def as_channel(K) -> np.ndarray:
    """The matrix of a :class:`~mechdesign.core.mechanism.Mechanism`, or ``K`` checked to be
    row-stochastic (a :class:`~mechdesign.core.errors.ProblemError` otherwise)."""
    if isinstance(K, Mechanism):
        return K.matrix
    return check_stochastic(K, what="channel")


def as_prior(prior, n: int) -> np.ndarray:
    """A prior over ``n`` rows: a distribution, or the string "uniform". Errors are located at
    the key ``prior``."""
    if isinstance(prior, str):
        if prior == "uniform":
            return np.full(n, 1.0 / n)
        raise ProblemError(f"prior must be a list of probabilities or \"uniform\", got {prior!r}",
                           key="prior")
    try:
        return check_distribution(prior, n, "prior")
    except ProblemError as exc:
        raise exc.located(key="prior")


def neg_row_entropies(K: np.ndarray) -> np.ndarray:
    """Σ_y K[x, y] ln K[x, y] per row (0 ln 0 = 0): minus the row entropies, in nats."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(K > 0, K * np.log(np.where(K > 0, K, 1.0)), 0.0).sum(axis=1)


def row_divergences(K: np.ndarray, negH: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D(K[x] ‖ q) in nats for every row x (inf where K[x] puts mass on a zero of q), given
    ``negH = neg_row_entropies(K)``."""
    pos = q > 0
    if pos.all():
        return negH - K @ np.log(q)
    lq = np.log(np.where(pos, q, 1.0))
    D = negH - K[:, pos] @ lq[pos]
    D[(K[:, ~pos] > 0).any(axis=1)] = np.inf
    return D
