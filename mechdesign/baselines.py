"""Classic mechanisms to compare designs against (DESIGN §6). Each returns a
:class:`~mechdesign.mechanism.Mechanism` carrying its privacy claim."""

from __future__ import annotations

import numpy as np

from .domain import Domain
from .errors import ProblemError
from .mechanism import Mechanism
from .privacy.base import check_epsilon
from .privacy.ldp import LDP


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
    """Warner's randomized response on one bit: keep with probability e^ε / (1 + e^ε)."""
    return krr(Domain(("0", "1")), epsilon)
