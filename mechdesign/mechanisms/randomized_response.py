"""Randomized response: k-ary randomized response and Warner's one-bit original.

K[x, x] = e^ε / (k − 1 + e^ε) and K[x, y] = 1 / (k − 1 + e^ε) otherwise, so the ratio of any two
entries of a column is at most e^ε: exactly ε-LDP (the audited level is ε).
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.privacy.base import check_epsilon
from mechdesign.privacy.ldp import LDP

__all__ = ["krr", "randomized_response"]


def krr(k: int | Domain, epsilon: float) -> Mechanism:
    """k-ary randomized response: K[x, x] = e^ε / (k − 1 + e^ε), else 1 / (k − 1 + e^ε).

    Exactly ε-LDP; optimal for the error probability under a uniform prior.

    >>> krr(2, np.log(3)).matrix
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    domain = Domain.coerce(k)
    n = len(domain)
    eps = check_epsilon(epsilon)
    if n < 2:
        raise ProblemError("k-ary randomized response needs k >= 2 values")
    e = np.exp(eps)
    matrix = np.full((n, n), 1.0 / (n - 1 + e))
    np.fill_diagonal(matrix, e / (n - 1 + e))
    return Mechanism(matrix, domain, domain, claims=[LDP(eps)], name=f"krr(k={n}, ε={eps:g})",
                     validate=False)


def randomized_response(epsilon: float) -> Mechanism:
    """Warner's randomized response on one bit: keep with probability e^ε / (1 + e^ε)
    (Warner, "Randomized Response: A Survey Technique for Eliminating Evasive Answer Bias",
    Journal of the American Statistical Association 1965)."""
    return krr(Domain(("0", "1")), epsilon)
