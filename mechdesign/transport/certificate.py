"""Optimality certificates of transport plans, checked over all pairs.

Weak duality: for potentials u over X and v over Y and r_min the smallest reduced cost
c[x, y] − u[x] − v[y] over *all* n·m pairs, every coupling γ' has Σ γ'·c ≥ Σ λ u + Σ μ v +
min(0, r_min). A plan whose cost meets that bound within a tolerance, with reduced costs
vanishing on its support (complementary slackness) and the right marginals, is certified
optimal — whichever solver produced it. The reduced costs are evaluated here with NumPy over
the ground cost's blocks, independently of the compiled network simplex kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mechdesign.transport.ground_cost import CHUNK_ENTRIES, GroundCost

__all__ = ["CouplingCertificate", "assemble_certificate", "complete_duals", "min_reduced_cost"]


@dataclass(frozen=True)
class CouplingCertificate:
    """Optimality certificate of a transport plan γ for min Σ γ·c over couplings of (λ, μ).

    With potentials u (over X) and v (over Y), weak duality gives, for every coupling γ',
    Σ γ'·c ≥ Σ λ u + Σ μ v + min(0, r_min)·mass, where r_min = min over *all* pairs of the
    reduced cost c[x, y] − u[x] − v[y]. So ``lower_bound`` is a proven lower bound on the optimum
    and ``gap = primal − lower_bound`` bounds how far γ is from optimal.

    Attributes
    ----------
    u, v : (n,), (m,) arrays
        Dual potentials (for the masses as given, i.e. λ and μ scaled to λ's total).
    primal : float
        Σ γ[x, y] c(x, y).
    dual : float
        Σ λ u + Σ μ v.
    lower_bound : float
        dual + min(0, min_reduced_cost) · mass: a lower bound on the optimal cost.
    gap : float
        primal − lower_bound (≥ 0 up to round-off; ≤ ``tol`` means certified optimal).
    min_reduced_cost : float
        min over all pairs of c − u − v (checked in chunks, or by a Lipschitz argument on a line).
    max_support_reduced_cost : float
        max of |c − u − v| over pairs with γ > 0 (complementary slackness).
    marginal_error : float
        max(|row sums − λ|, |column sums − μ·mass(λ)/mass(μ)|).
    tol : float
        Absolute tolerance used for ``optimal`` (scaled to the costs and the mass).
    optimal : bool
        γ is a coupling (marginals within 1e-9 relative), r_min ≥ −tol, complementary slackness
        holds within tol and gap ≤ tol.
    method : str
        How the plan and the duals were obtained.
    """

    u: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    primal: float
    dual: float
    lower_bound: float
    gap: float
    min_reduced_cost: float
    max_support_reduced_cost: float
    marginal_error: float
    tol: float
    optimal: bool
    method: str


def assemble_certificate(C: GroundCost, rows, cols, flow, p, q, u, v, rmin, ta,
                         method) -> CouplingCertificate:
    """The certificate of a plan on normalised masses p, q: its pairs (rows, cols) and flows,
    potentials (u, v) and r_min (the smallest reduced cost over all pairs, computed by the
    caller), reported at the total mass ``ta`` of λ and labelled with ``method``."""
    c = C.pairs(rows, cols)
    primal = math.fsum(flow * c)
    dual = math.fsum(p * u) + math.fsum(q * v)
    rc = c - u[rows] - v[cols]
    cs = float(np.abs(rc).max()) if rc.size else 0.0
    rs = np.bincount(rows, weights=flow, minlength=p.size)
    cs_ = np.bincount(cols, weights=flow, minlength=q.size)
    merr = float(max(np.abs(rs - p).max(), np.abs(cs_ - q).max()))
    lower = dual + min(0.0, rmin)
    scale = max(float(np.abs(c).max()) if c.size else 0.0, 1e-300)
    tol = 1e-8 * max(scale, abs(primal))
    optimal = bool(merr <= 1e-9 and rmin >= -tol and cs <= tol and primal - lower <= tol)
    return CouplingCertificate(
        u=u, v=v, primal=primal * ta, dual=dual * ta, lower_bound=lower * ta,
        gap=(primal - lower) * ta, min_reduced_cost=float(rmin), max_support_reduced_cost=cs,
        marginal_error=merr * ta, tol=tol * ta, optimal=optimal, method=method)


def complete_duals(cost: GroundCost, rows_pos, cols_pos, u_pos, v_pos):
    """Extend potentials from positive-mass rows/cols to all: c-transforms keep every pair's
    reduced cost ≥ 0 for the zero-mass ones. Returns (u, v)."""
    n, m = cost.n, cost.m
    u = np.full(n, np.nan)
    v = np.full(m, np.nan)
    u[rows_pos] = u_pos
    v[cols_pos] = v_pos
    zr = np.isnan(u)
    zc = np.isnan(v)
    if zc.any():
        vz = np.full(m, np.inf)
        for s, e in cost.chunks():
            ok = ~zr[s:e]
            if not ok.any():
                continue
            R = cost.block(slice(s, e))[ok] - u[s:e][ok, None]
            np.minimum(vz, R.min(axis=0), out=vz)
        v[zc] = vz[zc]
    if zr.any():
        idx = np.flatnonzero(zr)
        for k in range(0, idx.size, max(1, CHUNK_ENTRIES // m)):
            rr = idx[k:k + max(1, CHUNK_ENTRIES // m)]
            u[rr] = (cost.block(rr) - v[None, :]).min(axis=1)
    return u, v


def min_reduced_cost(cost: GroundCost, u, v) -> float:
    """min over all pairs of c[x, y] − u[x] − v[y], in blocks of the ground cost."""
    rmin = np.inf
    for s, e in cost.chunks():
        R = cost.block(slice(s, e))
        R -= u[s:e, None]
        R -= v[None, :]
        rmin = min(rmin, float(R.min()))
    return rmin
