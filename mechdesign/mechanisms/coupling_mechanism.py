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
:func:`mechdesign.design.problem.register_special_solver`) recognises problems that are exactly
"targets + expected loss" — every privacy notion a fixed :class:`~mechdesign.privacy.target.Target`
(optionally with the :class:`~mechdesign.privacy.target.ApproximateKnowledge` report), objective
expected loss over the same contexts — and solves them with one optimal transport per context
instead of the LP: the problem separates by context, and each part is the transportation problem
min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ with weight w_s (the same optimum, much faster). Its lower bound is
proven from the transport potentials (:func:`proven_context_bound`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.solvers.highs_model import record_declined
from mechdesign.core.mechanism import check_distribution
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy.target import ApproximateKnowledge, Target
from mechdesign.design.problem import register_special_solver, relative_gap


def _dense(gamma) -> np.ndarray:
    if hasattr(gamma, "toarray"):
        return np.asarray(gamma.toarray(), dtype=float)
    return np.asarray(gamma, dtype=float)


def optimal_coupling(lam, mu, cost="absolute", **kwargs) -> np.ndarray:
    """An optimal coupling γ ∈ Γ_{1,cost}(λ, μ) as a dense (|X|, |Y|) array (via
    :func:`mechdesign.transport.coupling.coupling`, which takes a cost matrix or a metric)."""
    from mechdesign.transport.coupling import coupling

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


#: the unit round-off of IEEE-754 double precision, rounding to nearest
_U = np.finfo(float).eps / 2
#: entries of one block of the n × m bound computation
_BLOCK = 1 << 18


def proven_context_bound(lam: np.ndarray, mu: np.ndarray, row_weights: np.ndarray,
                         loss: np.ndarray, g: np.ndarray) -> float:
    r"""A proven lower bound on one context's part of the design LP, from output potentials g.

    The part is  min Σ_x r_x Σ_y K[x, y] L[x, y]  over K >= 0 with Σ_y K[x, y] = 1 (dual a_x)
    and Σ_x λ_x K[x, y] = μ_y (dual g_y), r the objective's row weights (w_s λ_s). For any g
    and a_x = min_y (r_x L[x, y] − λ_x g_y) every reduced cost r_x L − a_x − λ_x g_y is >= 0,
    so weak duality gives

    .. math:: \text{optimum} \ge \sum_x a_x + \sum_y \mu_y g_y .

    With r = w λ and g = w v for transport potentials (u, v) of the cost L, a_x >= w λ_x u_x
    wherever u_x + v_y <= L[x, y]: this is the transport certificate's bound
    w (Σ λ u + Σ μ v) (:class:`~mechdesign.transport.coupling.CouplingCertificate`), with u replaced by its
    c-transform, which lowers u_x by its worst violation of u_x + v_y <= L[x, y] over all y.
    A column with μ_y = 0 takes g_y → −∞ (it then never attains a_x of a row with λ_x > 0, and
    μ_y g_y = 0): the limit of valid bounds, attained for finite g_y.

    Round-off (IEEE-754 double, round to nearest): each r_x L − λ_x g_y is within
    2.01u (|r_x L| + |λ_x g_y|) of its computed value; 4u times that sum is subtracted before
    the minimum; the products μ_y g_y, the two correctly rounded sums (math.fsum), their sum and
    the final subtraction add at most 5u (Σ |a_x| + Σ |μ_y g_y|), and 6u of it is subtracted;
    1e-300 covers underflow.
    """
    n, m = loss.shape
    used = mu > 0
    g = np.where(used, g, 0.0)
    a = np.empty(n)
    step = max(1, _BLOCK // max(m, 1))
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        weighted = row_weights[rows, None] * loss[rows]
        moved = lam[rows, None] * g[None, :]
        lower = (weighted - moved) - 4 * _U * (np.abs(weighted) + np.abs(moved))
        lower[(lam[rows] > 0)[:, None] & ~used[None, :]] = np.inf
        a[rows] = lower.min(axis=1)
    paid = mu * g
    value = math.fsum(a) + math.fsum(paid)
    return value - 6 * _U * (math.fsum(np.abs(a)) + math.fsum(np.abs(paid))) - 1e-300


def solve_targets(problem, limits=None):
    """Special solver: "targets + expected loss" by one optimal coupling per context.

    min Σ_s w_s Σ_x λ_s[x] Σ_y K_s[x, y] L[x, y]  s.t.  λ_s K_s = μ  separates by context; with
    γ_s = diag(λ_s) K_s it is Σ_s w_s min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ = Σ_s w_s W_{1,L}(λ_s, μ)
    (Prop. 2), and K_s is the coupling mechanism of γ_s (Def. 16 and 18). The reported bound is
    Σ_s of :func:`proven_context_bound` with g = w_s v_s, v_s the transport potentials over Y,
    summed by math.fsum less 2u Σ_s |bound_s| (proven, ``"bound_proven": True``); when it is not within half the problem's gap tolerance
    of Σ_s w_s ⟨γ_s, L⟩ the problem is passed on to the general route.

    Returns (raw matrices, info) as :data:`mechdesign.design.problem.SPECIAL_SOLVERS` expects, or None
    when the problem is anything else.
    """
    from mechdesign.transport.coupling import coupling

    found = _targets_problem(problem)
    if found is None:
        return None
    mu, weights = found
    loss = problem.objective.loss
    start = time.perf_counter()
    raw, value, bounds = {}, 0.0, []
    for s in problem.keys:
        lam = problem.contexts[s]
        plan, certificate = coupling(lam, mu, loss, return_duals=True)
        gamma = _dense(plan)
        value += weights[s] * float((gamma * loss).sum())
        bounds.append(proven_context_bound(lam, mu, problem.objective.row_weights[s], loss,
                                           weights[s] * certificate.v))
        raw[s] = mechanism_from_coupling(gamma, lam, mu)
    elapsed = time.perf_counter() - start
    bound = math.fsum(bounds) - 2 * _U * math.fsum(np.abs(bounds))  # the sum rounded down
    if relative_gap(value, bound, problem.objective_scale()) > problem.gap_tolerance / 2:
        record_declined(problem, "coupling", f"the potentials prove only {bound!r} against {value!r}")
        return None
    info = {"status": "optimal", "name": "coupling", "compile_seconds": 0.0, "solve_seconds": elapsed,
            "objective": bound, "bound_proven": True}
    return raw, info


register_special_solver(solve_targets)
