"""Mechanisms for (G, ε)-profile privacy on one bit or a category, after Geumlek and Chaudhuri,
"Profile-Based Privacy for Locally Private Computations", ISIT 2019: One Bit Cluster
(Algorithm 2), Smooth One Bit (Algorithm 3) and Smooth Categorical (Algorithm 4).

Each returns a mapping profile name -> Mechanism sharing one ProfilePrivacy claim; every
audited level is at most ε (Theorems 6–8).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.mechanism import Mechanism, check_distribution
from mechdesign.privacy.base import check_epsilon
from mechdesign.privacy.distp import ProfilePrivacy

__all__ = ["BIT", "one_bit_cluster", "one_bit_flip", "smooth_categorical", "smooth_one_bit"]

#: The domain of one bit.
BIT = Domain(("0", "1"))


def _bernoulli(profiles: Mapping[str, float | Sequence[float]]) -> dict[str, float]:
    """Profiles as Pr[bit = 1]: a number p or a distribution [Pr[0], Pr[1]]."""
    out = {}
    for name, value in profiles.items():
        v = np.atleast_1d(np.asarray(value, dtype=float))
        if v.size == 2:
            p = float(check_distribution(v, 2, f"profile '{name}'")[1])
        elif v.size == 1 and 0.0 <= v[0] <= 1.0:
            p = float(v[0])
        else:
            raise ProblemError(f"profile '{name}' must be a probability p or [1 − p, p], got {value!r}",
                               key="profiles")
        out[str(name)] = p
    if not out:
        raise ProblemError("needs at least one profile", key="profiles")
    return out


def _edges(edges, names) -> list[tuple[str, str]]:
    out = []
    for e in edges:
        a, b = (str(v) for v in e)
        for node in (a, b):
            if node not in names:
                raise ProblemError(f"edge names unknown profile '{node}'", key="edges")
        out.append((a, b))
    return out


def _flip(alpha: float) -> np.ndarray:
    return np.array([[1.0 - alpha, alpha], [alpha, 1.0 - alpha]])


def one_bit_flip(p_i: float, p_j: float, epsilon: float) -> float:
    """The optimal flip probability of Geumlek and Chaudhuri's optimization (4) for one edge, exactly.

    With flip probability α the output is 1 with probability q(α) = p + α(1 − 2p), linear in α;
    each of the four ratio constraints q_i <= e^ε q_j, ... is linear, c0 + c1 α <= 0, and holds
    at α = 1/2 (both outputs uniform). The feasible set in [0, 1/2] is therefore an interval
    [α*, 1/2] with α* = max(0, max over constraints with c1 < 0 of c0 / (−c1)), each quotient of
    a positive c0 rounded up by one unit in the last place: a quotient that rounds down (to 0
    when c0 is subnormal: profiles 0 and 5e-324) would leave an output that one profile can
    give and the other cannot.
    """
    e = math.exp(check_epsilon(epsilon))
    best = 0.0
    # outputs 1 and 0 for profile s: (u0, u1) with Pr = u0 + u1 α
    one = lambda p: (p, 1.0 - 2.0 * p)
    zero = lambda p: (1.0 - p, 2.0 * p - 1.0)
    for out in (one, zero):
        for (a, b) in ((p_i, p_j), (p_j, p_i)):
            (u0, u1), (v0, v1) = out(a), out(b)
            c0, c1 = u0 - e * v0, u1 - e * v1
            if c1 < 0 and c0 > 0:
                best = max(best, math.nextafter(c0 / -c1, math.inf))
    return min(best, 0.5)


def _profile_claim(epsilon, edges, p) -> ProfilePrivacy:
    return ProfilePrivacy(epsilon, edges, {n: np.array([1 - v, v]) for n, v in p.items()})


def one_bit_cluster(profiles: Mapping[str, float | Sequence[float]], edges, epsilon: float
                    ) -> dict[str, Mechanism]:
    """Geumlek and Chaudhuri, Algorithm 2 (One Bit Cluster): every profile flips its bit with the largest
    optimal single-edge flip probability (4) over the edges of its connected component of the
    profile graph. (G, ε)-profile private (Theorem 6).

    Parameters
    ----------
    profiles : mapping name -> p (Pr[bit = 1]) or [1 − p, p]
    edges : sequence of (name, name)
    epsilon : float

    Returns
    -------
    dict name -> Mechanism (2 x 2 bit flip) carrying the ProfilePrivacy claim.
    """
    eps = check_epsilon(epsilon)
    p = _bernoulli(profiles)
    edges = _edges(edges, p)
    parent = {n: n for n in p}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        parent[find(a)] = find(b)
    worst: dict[str, float] = {}
    for a, b in edges:
        root = find(a)
        worst[root] = max(worst.get(root, 0.0), one_bit_flip(p[a], p[b], eps))
    claim = _profile_claim(eps, edges, p)
    return {n: Mechanism(_flip(worst.get(find(n), 0.0)), BIT, BIT, claims=[claim],
                         name=f"one_bit_cluster[{n}]", validate=False) for n in p}


def smooth_one_bit(profiles: Mapping[str, float | Sequence[float]], edges, epsilon: float
                   ) -> dict[str, Mechanism]:
    """Geumlek and Chaudhuri, Algorithm 3 (Smooth One Bit): one flip probability α_s per profile, from the
    linear program (5)

        min max_s α_s   s.t.  0 <= α_s <= 1/2,  for each edge (i, j) and output t ∈ {0, 1}:
                              Pr_i[t] <= e^ε Pr_j[t] and Pr_j[t] <= e^ε Pr_i[t],
                              Pr_s[1] = p_s + α_s (1 − 2 p_s)

    solved with HiGHS; ties are broken by a second LP minimising Σ_s α_s at the optimal max.
    The returned matrices are certified like any design (clean, mix if needed, audit), so they
    are (G, ε)-profile private (Theorem 7). One Bit Cluster's flips are feasible for (5), so
    the largest flip here is never above One Bit Cluster's.
    """
    from mechdesign.privacy.certify import certify

    eps = check_epsilon(epsilon)
    p = _bernoulli(profiles)
    edges = _edges(edges, p)
    names = list(p)
    claim = _profile_claim(eps, edges, p)
    if not edges:
        return {n: Mechanism(_flip(0.0), BIT, BIT, claims=[claim], name=f"smooth_one_bit[{n}]",
                             validate=False) for n in names}
    idx = {n: t for t, n in enumerate(names)}
    pv = np.array([p[n] for n in names])
    alpha = cp.Variable(len(names))
    one = pv + cp.multiply(1 - 2 * pv, alpha)
    zero = 1 - one
    e = math.exp(eps)
    ia = np.array([idx[a] for a, _ in edges])
    ib = np.array([idx[b] for _, b in edges])
    cons = [alpha >= 0, alpha <= 0.5]
    for out in (one, zero):
        cons += [out[ia] <= e * out[ib], out[ib] <= e * out[ia]]
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    first = cp.Problem(cp.Minimize(cp.max(alpha)), cons)
    first.solve(solver=cp.HIGHS, **opts)
    if alpha.value is None:
        raise RuntimeError(f"smooth one bit LP failed: {first.status}")
    top = float(first.value)
    second = cp.Problem(cp.Minimize(cp.sum(alpha)), cons + [alpha <= top + 1e-12])
    second.solve(solver=cp.HIGHS, **opts)
    values = np.clip(alpha.value if alpha.value is not None else np.full(len(names), top), 0, 0.5)
    mechs, audits, _ = certify([claim], {n: _flip(values[idx[n]]) for n in names})
    if not all(a.holds for a in audits):  # pragma: no cover - certify mixes until it holds
        raise RuntimeError("smooth one bit: the certified matrices fail their audit")
    return {n: Mechanism(mechs[n], BIT, BIT, claims=[claim], name=f"smooth_one_bit[{n}]",
                         validate=False) for n in names}


def smooth_categorical(profiles: Mapping[str, Sequence[float]], edges, epsilon: float,
                       labels: Sequence[str] | Domain | None = None) -> dict[str, Mechanism]:
    """Geumlek and Chaudhuri, Algorithm 4 (Smooth Categorical): per-profile transition matrices A^s from
    optimization (6) — minimise the largest off-diagonal entry subject to P_i A^i <= e^ε P_j A^j
    and P_j A^j <= e^ε P_i A^i elementwise for each edge — solved and certified by the designer
    (a :class:`~mechdesign.design.problem.Problem` with ProfilePrivacy and the max-off-diagonal
    objective). (G, ε)-profile private (Theorem 8)."""
    from mechdesign.core.objectives import MaxOffDiagonal, off_diagonal_mask
    from mechdesign.design.problem import Problem

    eps = check_epsilon(epsilon)
    if not profiles:
        raise ProblemError("needs at least one profile", key="profiles")
    vecs = {str(n): np.asarray(v, dtype=float) for n, v in profiles.items()}
    k = len(next(iter(vecs.values())))
    domain = Domain.coerce(labels if labels is not None else [f"c{i + 1}" for i in range(k)])
    for n, v in vecs.items():
        check_distribution(v, len(domain), f"profile '{n}'")
    edges = _edges(edges, vecs)
    claim = ProfilePrivacy(eps, edges, vecs)
    problem = Problem(inputs=domain, contexts=vecs, privacy=[claim],
                      objective=MaxOffDiagonal(off_diagonal_mask(domain, domain), list(vecs)),
                      name="smooth-categorical")
    result = problem.solve()
    if result.status != "optimal":
        raise RuntimeError(f"smooth categorical: the designer returned '{result.status}': {result.message}")
    out = {}
    for n, mech in result.mechanisms.items():
        mech.name = f"smooth_categorical[{n}]"
        out[n] = mech
    return out
