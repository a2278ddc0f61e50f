"""Special solver: "targets + expected loss" by one optimal coupling per context.

A problem whose every privacy notion fixes the output distribution of each context to the same
target μ (:class:`~mechdesign.privacy.target.Target`, optionally with the
:class:`~mechdesign.privacy.target.ApproximateKnowledge` report) and whose objective is the
expected loss over the same contexts separates by context, and each part is the transportation
problem min_{γ ∈ cp(λ_s, μ)} ⟨γ, L⟩ with weight w_s: one optimal transport per context instead
of the LP, the same optimum, much faster (Kawamoto and Murakami, Local Distribution Obfuscation
via Probability Coupling, Allerton 2019, Def. 18 and Prop. 2). Its lower bound is proven from
the transport potentials (:func:`proven_context_bound`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.core.limits import TIME_LIMIT, relative_gap
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy.target import ApproximateKnowledge, Target
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.registry import SpecialSolver
from mechdesign.transport.coupling_kernel import dense, mechanism_from_coupling

NAME = "coupling"


def separation(problem) -> tuple[np.ndarray, dict[str, float]] | str:
    """(μ, per-context weights w_s) when ``problem`` is exactly "targets + expected loss" and so
    separates into one transport per context; otherwise the reason it does not."""
    if problem.contexts is None:
        return "needs per-context mechanisms with a fixed output target"
    targets = [n for n in problem.privacy if isinstance(n, Target)]
    if not targets:
        return "needs a fixed output target"
    if any(not isinstance(n, (Target, ApproximateKnowledge)) for n in problem.privacy):
        return "needs no privacy notion other than targets (and approximate knowledge)"
    if any(t.free for t in targets):
        return "needs a fixed target, not a free one"
    mu = targets[0].mu
    if mu.size != len(problem.outputs) or any(not np.array_equal(t.mu, mu) for t in targets):
        return "needs one target over the outputs (different targets: the LP reports infeasibility)"
    keys = set(problem.keys)
    for t in targets:
        if set(t.contexts) != keys or any(not np.array_equal(t.contexts[s], problem.contexts[s]) for s in keys):
            return "needs the target's contexts to be the problem's"
    obj = problem.objective
    if not isinstance(obj, ExpectedLoss):
        return f"needs an expected-loss objective, the objective is {obj.kind}"
    if set(obj.row_weights) != keys or obj.loss.shape != (len(problem.inputs), len(problem.outputs)):
        return "needs the objective over the same contexts and domains"
    weights = {}
    for s in problem.keys:
        lam, row = problem.contexts[s], obj.row_weights[s]
        w = float(row.sum())
        if w < 0 or not np.allclose(row, w * lam, rtol=1e-12, atol=1e-15):
            return f"needs each context's rows weighted by its distribution (context '{s}' is not)"
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
    w (Σ λ u + Σ μ v) (:class:`~mechdesign.transport.certificate.CouplingCertificate`), with u replaced by its
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
    summed by math.fsum less 2u Σ_s |bound_s| (proven, ``"bound_proven": True``); when it is
    not within half the problem's gap tolerance of Σ_s w_s ⟨γ_s, L⟩ the solver declines and the
    problem goes on to the general route. Returns (raw matrices, :class:`SolverOutcome`).

    The time ``limits`` are checked between contexts (one transport runs to its end): when they
    have expired, each context not yet solved gets the design whose every row is μ (it meets the
    target for any λ_s) and the bound of the potentials g = 0, and the status is time-limit.
    """
    from mechdesign.transport.coupling import coupling

    mu, weights = separation(problem)
    loss = problem.objective.loss
    start = time.perf_counter()
    raw, value, bounds, solved = {}, 0.0, [], 0
    for s in problem.keys:
        lam, row_weights = problem.contexts[s], problem.objective.row_weights[s]
        if limits is not None and limits.expired():
            design = np.tile(mu, (lam.size, 1))
            value += float((row_weights[:, None] * design * loss).sum())
            bounds.append(proven_context_bound(lam, mu, row_weights, loss, np.zeros(mu.size)))
            raw[s] = design
            continue
        plan, certificate = coupling(lam, mu, loss, return_duals=True)
        gamma = dense(plan)
        value += weights[s] * float((gamma * loss).sum())
        bounds.append(proven_context_bound(lam, mu, row_weights, loss, weights[s] * certificate.v))
        raw[s] = mechanism_from_coupling(gamma, lam, mu)
        solved += 1
    elapsed = time.perf_counter() - start
    bound = math.fsum(bounds) - 2 * _U * math.fsum(np.abs(bounds))  # the sum rounded down
    record = {"name": "coupling", "compile_seconds": 0.0, "solve_seconds": elapsed}
    if solved < len(problem.keys):
        record["path"] = [f"{solved} of {len(problem.keys)} contexts transported before the time limit; "
                          "the others report every row as the target"]
        return raw, SolverOutcome(TIME_LIMIT, record, message="the time limit passed between contexts",
                                  bound=bound, bound_proven=True)
    if relative_gap(value, bound, problem.objective_scale()) > problem.gap_tolerance / 2:
        raise SolverDeclined(f"the potentials prove only {bound!r} against {value!r}")
    return raw, SolverOutcome("optimal", record, bound=bound, bound_proven=True)


def applies(problem) -> str | None:
    """Exactly "targets + expected loss" over the same contexts (module docstring)."""
    found = separation(problem)
    return found if isinstance(found, str) else None


SOLVER = SpecialSolver(NAME, applies, solve_targets)
