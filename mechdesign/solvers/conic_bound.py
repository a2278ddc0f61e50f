"""Rigorous lower bounds for the exponential-cone programs (KL, mutual-information and
information notions) from the conic solver's dual vector.

cvxpy hands Clarabel and SCS the standard form  min c·x  s.t.  A x + s = b,  s ∈ K  with K a
product of the zero cone, the non-negative orthant and exponential cones
K_exp = cl{(r, p, q) : p > 0, p e^{r/p} <= q}. For any z in the dual cone K* (free on the zero
cone, z >= 0 on the orthant, K*_exp = cl{(u, v, w) : u < 0, −u e^{v/u} <= e·w}) and every
feasible x, zᵀs >= 0, hence

    c·x = (c + Aᵀz)·x − bᵀz + zᵀs >= −bᵀz + Σ_j min_{x_j ∈ [l_j, u_j]} (c + Aᵀz)_j x_j

on any box holding an optimal solution: the conic analogue of the safe LP bound of Neumaier and
Shcherbina ("Safe bounds in linear and mixed-integer linear programming", Mathematical
Programming 99, 2004). The solver's z is first moved into K* (the orthant part clipped at 0;
each exponential triple's w raised to −u e^{v/u}/e with a margin for the rounding of exp), so
the bound holds whatever the solver's accuracy.

The box comes from bound propagation (:func:`lp_bound.propagate_box`) over the linear rows, the
objective cut-off and three linear consequences of each exponential cone, which is what bounds
the epigraph variables of the divergences: p >= 0, q >= 0 and r <= q/e (the maximum of
p log(q/p) over p). A residual that meets a side still unbounded makes the bound −∞.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mechdesign.solvers.lp_bound import EPS, lagrangian_bound, objective_constant, propagate_box

#: 1/e rounded up: r <= q/e <= q·INV_E for q >= 0
INV_E = float(np.nextafter(np.exp(-1.0), 1.0))


def dual_cone_point(z: np.ndarray, zero: int, nonneg: int, n_exp: int) -> np.ndarray:
    """``z`` moved into K*: unchanged on the zero cone, clipped at 0 on the orthant, and each
    exponential triple (u, v, w) given w >= −u e^{v/u}/e (with the rounding margin of exp), or
    made (0, max(v, 0), max(w, 0)) when u >= 0 or that requirement overflows."""
    z = np.asarray(z, dtype=float).copy()
    z[zero:zero + nonneg] = np.maximum(z[zero:zero + nonneg], 0.0)
    start = zero + nonneg
    triples = z[start:start + 3 * n_exp].reshape(-1, 3)
    u, v, w = triples[:, 0], triples[:, 1], triples[:, 2]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        ratio = v / u
        need = -u * np.exp(ratio) * INV_E * (1.0 + 8 * EPS * (np.abs(ratio) + 4.0))
        need = np.nextafter(need, np.inf)  # strictly above a requirement exp underflowed to 0
    usable = (u < 0) & np.isfinite(need)
    triples[:, 2] = np.where(usable, np.maximum(w, need), np.maximum(w, 0.0))
    triples[:, 1] = np.where(usable, v, np.maximum(v, 0.0))
    triples[:, 0] = np.where(usable, u, 0.0)
    z[start:start + 3 * n_exp] = triples.ravel()
    return z


def implied_rows(A: sp.csr_matrix, b: np.ndarray, zero: int, nonneg: int, n_exp: int):
    """Linear rows L <= G x <= U that every feasible x satisfies: the equalities, the orthant
    rows and, per exponential cone on s = b − A x, s_p >= 0, s_q >= 0 and s_r <= s_q/e."""
    start = zero + nonneg
    r = start + 3 * np.arange(n_exp)
    parts = [A[:start], A[r + 1], A[r + 2], INV_E * A[r + 2] - A[r]]
    rhs = [b[:start], b[r + 1], b[r + 2], INV_E * b[r + 2] - b[r]]
    G = sp.vstack(parts, format="csr")
    upper = np.concatenate(rhs)
    lower = np.concatenate([b[:zero], np.full(upper.size - zero, -np.inf)])
    return G, lower, upper


@dataclass
class ConicSnapshot:
    """The standard-form exponential-cone program a conic solve used, with its dual vector."""

    c: np.ndarray
    A: sp.csr_matrix
    b: np.ndarray
    zero: int
    nonneg: int
    n_exp: int
    offset: float
    z: np.ndarray
    #: a conic result stays "optimal" on the solver's dual objective when no bound is proven
    required: bool = False

    def bound(self, cutoff: float | None) -> float:
        """Proven lower bound on the program's optimum (offset included); −inf if none."""
        G, lower, upper = implied_rows(self.A, self.b, self.zero, self.nonneg, self.n_exp)
        if cutoff is not None and np.isfinite(cutoff):
            G = sp.vstack([G, sp.csr_matrix(self.c[None, :])], format="csr")
            lower = np.append(lower, -np.inf)
            upper = np.append(upper, cutoff - self.offset)
        n = self.c.size
        box_lower, box_upper = propagate_box(G, lower, upper, np.full(n, -np.inf), np.full(n, np.inf))
        z = dual_cone_point(self.z, self.zero, self.nonneg, self.n_exp)
        # every zᵀs >= 0 is already in z: no further sign projection (both row sides are b)
        value = lagrangian_bound(self.c, self.A, self.b, self.b, -z, box_lower, box_upper)
        return value + self.offset - 4 * EPS * abs(self.offset)


def conic_snapshot(problem, name: str) -> ConicSnapshot | None:
    """A :class:`ConicSnapshot` of a solved cvxpy problem (Clarabel or SCS), or None when its
    cones are not only zero, orthant and exponential or the solver's data are unavailable."""
    import cvxpy as cp

    try:
        data, _, _ = problem.get_problem_data(getattr(cp, name))
        dims = data["dims"]
        if dims.soc or dims.psd or dims.p3d or getattr(dims, "pnd", None):
            return None
        if name == "CLARABEL":
            sol = problem._solver_cache["CLARABEL"].get_solution()
            z, primal = np.asarray(sol.z, dtype=float), float(sol.obj_val)
        else:
            stats = problem.solver_stats.extra_stats
            z, primal = np.asarray(stats["y"], dtype=float), float(stats["info"]["pobj"])
        A = sp.csr_matrix(data["A"])
        b = np.asarray(data["b"], dtype=float)
        c = np.asarray(data["c"], dtype=float)
    except (AttributeError, KeyError, TypeError, ValueError, cp.error.SolverError):
        return None
    if z.size != b.size or not np.all(np.isfinite(z)):
        return None
    offset = objective_constant(data)
    if offset is None:  # (less exact: the two values differ at the solver's tolerances too)
        offset = float(problem.value) - primal
    return ConicSnapshot(c, A, b, int(dims.zero), int(dims.nonneg), int(dims.exp), offset, z)
