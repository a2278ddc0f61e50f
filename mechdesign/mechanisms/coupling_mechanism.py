"""Coupling mechanisms (Kawamoto and Murakami, Local Distribution Obfuscation via Probability
Coupling, Allerton 2019, §VI-B and §VI-D).

A coupling γ_s ∈ cp(λ̂_s, μ) of a context's (approximate) input distribution λ̂_s and a target
μ defines the mechanism (Def. 16)

    K_s[x, y] = γ_s[x, y] / λ̂_s[x],

whose output distribution λ̂_s K_s is exactly μ whatever the context: with exact knowledge it
is (0, D)-DistP for every divergence D. Taking γ_s optimal for the cost L,
γ_s ∈ argmin_{γ ∈ cp(λ̂_s, μ)} Σ γ[x, y] L[x, y], gives the utility-optimal coupling mechanism
(Def. 18), whose expected loss is W_{1,L}(λ̂_s, μ) (Prop. 2).

Rows with λ̂_s[x] = 0 carry no mass in γ_s; this module sets them to μ itself (documented,
deterministic choice): an input the mechanism did not expect is answered with a draw from the
target, which reveals nothing about it, leaves λ̂_s K_s = μ unchanged, and keeps the actual
output distribution close to μ when knowledge is wrong (Theorem 3's regime).

The special solver :mod:`mechdesign.solvers.coupling_targets` recognises problems that are exactly
"targets + expected loss" — every privacy notion a fixed :class:`~mechdesign.privacy.target.Target`
(optionally with the :class:`~mechdesign.privacy.target.ApproximateKnowledge` report), objective
expected loss over the same contexts — and solves them with one optimal transport per context
instead of the LP: the problem separates by context, and each part is the transportation problem
min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ with weight w_s (the same optimum, much faster). Its lower bound is
proven from the transport potentials (:func:`proven_context_bound`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mechdesign.core.mechanism import check_distribution
from mechdesign.transport.coupling_kernel import dense, mechanism_from_coupling


def optimal_coupling(lam, mu, cost="absolute", **kwargs) -> np.ndarray:
    """An optimal coupling γ ∈ Γ_{1,cost}(λ, μ) as a dense (|X|, |Y|) array (via
    :func:`mechdesign.transport.coupling.coupling`, which takes a cost matrix or a metric)."""
    from mechdesign.transport.coupling import coupling

    return dense(coupling(lam, mu, cost=cost, **kwargs))


def coupling_mechanism(lam, mu, cost="absolute", **kwargs) -> np.ndarray:
    """The utility-optimal coupling mechanism w.r.t. the target μ (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 18).

    K = γ / λ row-wise with γ an optimal coupling of λ and μ for ``cost``; its expected loss
    Σ_x λ[x] Σ_y K[x, y] cost[x, y] equals W_{1,cost}(λ, μ) (Prop. 2) and λK = μ.

    >>> import numpy as np
    >>> lam, mu = np.array([0.2, 0.5, 0.3]), np.array([0.3, 0.2, 0.5])   # Fig. 2 (reconstructed)
    >>> K = coupling_mechanism(lam, mu, np.abs(np.subtract.outer([1, 2, 3], [1, 2, 3])).astype(float))
    >>> np.round(K[1], 6).tolist()                    # input 2: 20 % to 1, 40 % stays, 40 % to 3
    [0.2, 0.4, 0.4]
    """
    lam = check_distribution(lam, what="input distribution")
    mu = check_distribution(mu, what="target distribution")
    return mechanism_from_coupling(optimal_coupling(lam, mu, cost, **kwargs), lam, mu)


def coupling_mechanisms(contexts: Mapping[str, np.ndarray], mu, cost="absolute",
                        **kwargs) -> dict[str, np.ndarray]:
    """One utility-optimal coupling mechanism per context, all with the same target μ."""
    return {s: coupling_mechanism(lam, mu, cost, **kwargs) for s, lam in contexts.items()}
