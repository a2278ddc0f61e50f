"""Coupling mechanisms (paper 003, §VI-B and §VI-D) and their special-cased solver.

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

The special solver :func:`solve_targets` (registered with
:func:`mechdesign.problem.register_special_solver`) recognises problems that are exactly
"targets + expected loss" — every privacy notion a fixed :class:`~mechdesign.privacy.target.Target`
(optionally with the :class:`~mechdesign.privacy.target.ApproximateKnowledge` report), objective
expected loss over the same contexts — and solves them with one optimal transport per context
instead of the LP: the problem separates by context, and each part is the transportation problem
min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ with weight w_s (the same optimum, much faster).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from .errors import ProblemError
from .mechanism import check_distribution
from .objectives import ExpectedLoss
from .privacy.target import ApproximateKnowledge, Target
from .problem import register_special_solver


def _dense(gamma) -> np.ndarray:
    if hasattr(gamma, "toarray"):
        return np.asarray(gamma.toarray(), dtype=float)
    return np.asarray(gamma, dtype=float)


def optimal_coupling(lam, mu, cost="absolute", **kwargs) -> np.ndarray:
    """An optimal coupling γ ∈ Γ_{1,cost}(λ, μ) as a dense (|X|, |Y|) array (via
    :func:`mechdesign.coupling.coupling`, which takes a cost matrix or a metric)."""
    from .coupling import coupling

    return _dense(coupling(lam, mu, cost=cost, **kwargs))


def mechanism_from_coupling(gamma, lam, mu) -> np.ndarray:
    """The coupling mechanism K[x, y] = γ[x, y] / λ[x] (paper 003, Def. 16).

    Parameters
    ----------
    gamma : (|X|, |Y|) array or sparse matrix
        A coupling of ``lam`` and ``mu`` (row sums λ, column sums μ).
    lam : (|X|,) distribution the mechanism is built from (λ̂_s)
    mu : (|Y|,) target distribution

    Rows with λ[x] = 0 are set to μ (see the module docstring); so are rows to which a
    numerically inexact coupling gives no mass.
    """
    lam = np.asarray(lam, dtype=float)
    mu = np.asarray(mu, dtype=float)
    if tuple(gamma.shape) != (lam.size, mu.size):
        raise ProblemError(f"coupling must be {lam.size} x {mu.size}, got {gamma.shape[0]} x {gamma.shape[1]}")
    k = np.array(_dense(gamma), dtype=float)  # a private copy, worked on in place
    np.maximum(k, 0.0, out=k)
    mass = k.sum(axis=1)
    # rows are normalised by their own mass (= λ[x] up to round-off), so each sums to 1 exactly
    rows = (lam > 0) & (mass > 0)
    k /= np.where(rows, mass, 1.0)[:, None]
    k[~rows] = mu[None, :]
    return k


def coupling_mechanism(lam, mu, cost="absolute", **kwargs) -> np.ndarray:
    """The utility-optimal coupling mechanism w.r.t. the target μ (paper 003, Def. 18).

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


# ---------------------------------------------------------------------------------------------
# special-cased solver

def _targets_problem(problem):
    """(μ, per-context weights) when ``problem`` is exactly "targets + expected loss", else None."""
    if problem.contexts is None:
        return None
    targets = [n for n in problem.privacy if isinstance(n, Target)]
    others = [n for n in problem.privacy if not isinstance(n, (Target, ApproximateKnowledge))]
    if not targets or others or any(t.free for t in targets):
        return None
    mu = targets[0].mu
    if mu.size != len(problem.outputs) or any(not np.array_equal(t.mu, mu) for t in targets):
        return None  # different targets: let the LP report infeasibility
    keys = set(problem.keys)
    for t in targets:
        if set(t.contexts) != keys or any(not np.array_equal(t.contexts[s], problem.contexts[s]) for s in keys):
            return None
    obj = problem.objective
    if not isinstance(obj, ExpectedLoss):
        return None
    if set(obj.row_weights) != keys or obj.loss.shape != (len(problem.inputs), len(problem.outputs)):
        return None
    weights = {}
    for s in problem.keys:
        lam, row = problem.contexts[s], obj.row_weights[s]
        w = float(row.sum())
        if w < 0 or not np.allclose(row, w * lam, rtol=1e-12, atol=1e-15):
            return None  # rows weighted differently from the context's distribution: not separable
        weights[s] = w
    return mu, weights


def solve_targets(problem):
    """Special solver: "targets + expected loss" by one optimal coupling per context.

    min Σ_s w_s Σ_x λ_s[x] Σ_y K_s[x, y] L[x, y]  s.t.  λ_s K_s = μ  separates by context; with
    γ_s = diag(λ_s) K_s it is Σ_s w_s min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ = Σ_s w_s W_{1,L}(λ_s, μ)
    (Prop. 2), and K_s is the coupling mechanism of γ_s (Def. 16 and 18).

    Returns (raw matrices, info) as :data:`mechdesign.problem.SPECIAL_SOLVERS` expects, or None
    when the problem is anything else.
    """
    found = _targets_problem(problem)
    if found is None:
        return None
    mu, weights = found
    loss = problem.objective.loss
    start = time.perf_counter()
    raw, value = {}, 0.0
    for s in problem.keys:
        lam = problem.contexts[s]
        gamma = optimal_coupling(lam, mu, loss)
        value += weights[s] * float((gamma * loss).sum())
        raw[s] = mechanism_from_coupling(gamma, lam, mu)
    elapsed = time.perf_counter() - start
    info = {"status": "optimal", "name": "coupling", "compile_seconds": 0.0, "solve_seconds": elapsed,
            "objective": value}
    return raw, info


register_special_solver(solve_targets)
