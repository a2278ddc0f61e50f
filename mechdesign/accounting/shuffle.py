"""The central guarantee of a matrix behind a shuffler: both bounds, and the smaller as the result.

n users each apply K once and a shuffler passes on their outputs in random order. The central
(ε, δ) of that release is bounded two ways here:

* the clone bound of Feldman, McMillan and Talwar (FOCS 2021;
  :mod:`mechdesign.accounting.clones`), which needs only the local level ε0 of K;
* the variation-ratio reduction of Wang et al. (PVLDB 2024;
  :mod:`mechdesign.accounting.variation_ratio`), with (p, β, q) read off K — much smaller for
  matrices with many outputs, such as k-ary randomized response.

Both are upper bounds on the exact central ε, so the smaller one is too; it is the result.

>>> import numpy as np
>>> K = np.array([[0.75, 0.25], [0.25, 0.75]])          # randomized response, ε0 = ln 3
>>> round(amplify(K, users=10_000, delta=1e-6), 4)
0.0489
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mechdesign.accounting.clones import clone_epsilon
from mechdesign.accounting.reading import (
    MatrixLike,
    as_matrix,
    check_delta,
    check_users,
    local_level,
)
from mechdesign.accounting.variation_ratio import VariationRatio, parameters_epsilon


@dataclass(frozen=True)
class Amplification:
    """Both bounds on the central ε of ``users`` shuffled reports through one matrix at ``delta``.

    ``clones`` is None when the matrix has no finite local level (the clone bound needs one);
    ``epsilon`` is the smaller bound and ``bound`` names it.
    """

    users: int
    delta: float
    local_epsilon: float
    clones: float | None
    variation_ratio: float
    parameters: VariationRatio

    @property
    def epsilon(self) -> float:
        return min(self.variation_ratio, math.inf if self.clones is None else self.clones)

    @property
    def bound(self) -> str:
        if self.clones is not None and self.clones < self.variation_ratio:
            return "clones"
        return "variation-ratio"

    def to_dict(self) -> dict:
        p = self.parameters
        return {"users": self.users, "delta": self.delta, "local_epsilon": self.local_epsilon,
                "epsilon": self.epsilon, "bound": self.bound,
                "bounds": {"clones": self.clones, "variation_ratio": self.variation_ratio},
                "variation_ratio_parameters": {"p": p.p, "beta": p.beta, "q": p.q}}


def amplification(mechanism: MatrixLike, users: int, delta: float) -> Amplification:
    """Both shuffle bounds for ``users`` reports through ``mechanism`` (a row-stochastic matrix or
    a Mechanism) at ``delta`` (module docstring)."""
    k = as_matrix(mechanism)
    n = check_users(users)
    d = check_delta(delta)
    local = local_level(k)
    params = VariationRatio.from_matrix(k)
    clones = clone_epsilon(local, n, d) if math.isfinite(local) else None
    return Amplification(n, d, local, clones, parameters_epsilon(params, n, d), params)


def amplify(mechanism: MatrixLike, users: int, delta: float) -> float:
    """The central ε of ``users`` shuffled reports through ``mechanism`` at ``delta``: the
    smaller of the clone and variation-ratio bounds (an upper bound on the exact ε, within 1e-10
    of the bound's own value)."""
    return amplification(mechanism, users, delta).epsilon
