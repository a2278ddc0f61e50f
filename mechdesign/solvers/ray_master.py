"""The restricted master LP over rays of the d-privacy cone, and the bounds built on its duals.

ε·d-privacy constrains every output column separately: K[:, y] lies in the cone
Γ = {v >= 0 : v_x <= e^{ε d(x, x')} v_x'}. Every column is a non-negative combination of rays of
Γ, so the design LP

    min Σ_{x,y} C[x, y] K[x, y]  s.t.  Σ_y K[x, y] = 1,  K[:, y] ∈ Γ

becomes a master LP with one row per input: variables θ_j >= 0 for (output y_j, ray v_j),
Σ_j θ_j v_j(x) = 1, cost Σ_j θ_j C[:, y_j]·v_j (Dantzig and Wolfe, "Decomposition principle for
linear programs", Operations Research, 1960). Given the master's row duals u, a ray v for output
y improves the master iff Σ_x (C[x, y] − u_x) v_x < 0 (pricing).

Whatever the duals u, the Lagrangian bound holds: every row-stochastic K has entries <= 1, so

    Σ C K >= Σ_x u_x + Σ_y min {a_y·v : v ∈ Γ, 0 <= v <= 1},   a_y = C[:, y] − u,

and with p_y a lower bound on each box minimum the bound is Σu + :func:`capped_sum` (p, e^{εR}).
The solvers of :mod:`line_rays` and :mod:`dantzig_wolfe` stop when it is within their gap of the
master value; between rounds they hand a :class:`~mechdesign.core.limits.Limits` the value and the
best bound so far, and stop with both when its deadline has passed.

Ray entries below 1e-12 of the peak are dropped from the master LP (HiGHS ignores tiny matrix
entries anyway), but the returned matrix is assembled from the full rays, so it lies exactly in
the cone and the certificate's clean-up only renormalises rows that the dropped entries put
about 1e-12 above one.
"""

from __future__ import annotations

import warnings

import highspy
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mechdesign.solvers.highs_model import (
    INF,
    basic_columns,
    checked,
    give_time,
    quiet_model,
    run_to_optimum,
)
from mechdesign.solvers.symmetry import Symmetry, trivial

TRUNCATE = 1e-12
#: the machine epsilon of double precision (twice the unit round-off)
EPS = np.finfo(float).eps
#: a ray master is accepted when its bound is this close (relative, the default gap tolerance);
#: the master's value itself is measured 1e-10 to 1e-8 above the full LP (rays truncated at
#: 1e-12), while per-column round-off in the duals loosens the bound to about 1e-7
ACCEPT_GAP = 1e-6
#: a special solver that cannot close its gap on a design of at most this many entries of K
#: declines (the plain LP finishes it); above, it returns its best design with its proven bound
DENSE_ENTRIES = 40_000
#: pairs (or line steps) with εd above this are left out of pricing altogether (a larger cone,
#: so still a valid bound): entries e^{−60} below their partner's are far under the LPs'
#: tolerances, and chaining them would take ever more auxiliary entries (ε = 1e6: 80 000 each)
CHAIN_MAX_EXPONENT = 60.0
#: columns handed to HiGHS at once (bounds the dense copies :meth:`RayMaster.add` makes)
ADD_CHUNK = 256


class RayMaster:
    """The restricted master LP over (output, ray) columns, in highspy.

    With a symmetry group (:mod:`symmetry`), a column is the orbit sum Σ_h (output h(y), ray
    v∘h⁻¹) and there is one row per input orbit; the duals are returned spread back over every
    input (u_o / |orbit|), which is what pricing and the Lagrangian bound use."""

    def __init__(self, cost: np.ndarray, symmetry: Symmetry | None = None):
        self.cost = cost
        self.n, self.m = cost.shape
        self.symmetry = symmetry or trivial(self.n)
        rows = self.symmetry.representatives.size
        # re-solves after adding columns start from the basis
        h = quiet_model(warm=True, small_matrix_value=TRUNCATE / 10)
        empty = np.array([], dtype=np.int32)
        h.addRows(rows, np.ones(rows), np.ones(rows), 0, empty, empty, np.array([]))
        self.h = h
        self.outputs: list[int] = []
        self.rays: list[np.ndarray] = []

    def add(self, outputs: list[int], rays: list[np.ndarray]) -> None:
        """Columns (output y, ray v with peak 1): cost Σ_x C[x, y] v_x, entries v per input orbit."""
        for first in range(0, len(outputs), ADD_CHUNK):
            self._add(outputs[first:first + ADD_CHUNK], rays[first:first + ADD_CHUNK])
        self.outputs += outputs
        self.rays += rays

    def _add(self, outputs: list[int], rays: list[np.ndarray]) -> None:
        """:meth:`add` for one chunk of columns, as arrays."""
        k = len(outputs)
        v = np.vstack(rays)
        v[v < TRUNCATE] = 0.0  # peak 1; HiGHS drops tiny entries anyway
        costs = self.symmetry.order * np.einsum("kx,xk->k", v, self.cost[:, outputs])
        sums = v[:, self.symmetry.inverse[:, self.symmetry.representatives]].sum(axis=1)
        column, row = np.nonzero(sums)  # column by column, each column's rows rising
        starts = np.searchsorted(column, np.arange(k)).astype(np.int32)
        status = self.h.addCols(k, costs, np.zeros(k), np.full(k, INF), row.size, starts,
                                row.astype(np.int32), sums[column, row])
        checked(status, "new master columns")

    def solve(self, limits=None) -> tuple[float, np.ndarray] | None:
        """(value, duals spread over every input), or None when HiGHS ends without an optimum."""
        give_time(self.h, limits)
        if not run_to_optimum(self.h):
            return None
        duals = np.asarray(self.h.getSolution().row_dual)
        return self.h.getInfo().objective_function_value, self.symmetry.spread(duals)

    def matrix(self) -> np.ndarray:
        """K = Σ_j θ_j (output y_j, ray v_j) of the last solve, from the full (untruncated) rays."""
        theta = np.asarray(self.h.getSolution().col_value)
        k = np.zeros((self.n, self.m))
        for t in np.flatnonzero(theta > 0):
            self.symmetry.symmetrize_column(k, self.outputs[t], self.rays[t], theta[t])
        return k



def proven_box_minimum(h, a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> float:
    """A lower bound on min a·v over {0 <= v <= 1, v_i − coef·v_j <= 0 (the model's rows, in its
    order)} from row multipliers, whatever the solver's accuracy: for any λ >= 0,
    a·v >= (a + Bᵀλ)·v >= Σ_x min(0, (a + Bᵀλ)_x) on the box (:func:`box_lagrangian_bound`,
    round-off enclosed). Two λ are tried, the larger bound kept: the model's row duals, and the
    duals of its final basis recomputed in double precision (:func:`basis_duals`; the solver's
    own carry dual infeasibilities up to its tolerance on every one of the |X| reduced costs,
    which this sum would add up). The objective a simplex reports optimal can sit above the true
    minimum when rows carry coefficients up to e^20; this cannot. With no valid duals (a
    non-optimal status), the box alone: λ = 0."""
    solution = h.getSolution()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal or not solution.dual_valid:
        return box_lagrangian_bound(a, i, j, coef, np.zeros(i.size))
    best = box_lagrangian_bound(a, i, j, coef, -np.asarray(solution.row_dual))  # HiGHS: <= 0 on active upper rows
    recomputed = basis_duals(h, a, i, j, coef)
    return best if recomputed is None else max(best, box_lagrangian_bound(a, i, j, coef, recomputed))


def box_lagrangian_bound(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray, lam: np.ndarray) -> float:
    """Σ_x min(0, r_x), r = a + Bᵀλ⁺ (row k of B: +1 at i_k, −coef_k at j_k), rounded down: the
    safe Lagrangian bound of :func:`~mechdesign.solvers.lp_bound.lagrangian_bound` for this box
    LP (rows with upper side 0, so they add no constant term), with its round-off enclosure
    and without building the sparse matrix. Each computed r_x sums its c_x + 1 terms (c_x the
    rows touching x, each product rounded once), so it is within (c_x + 2)·eps·(|a_x| +
    (|B|ᵀλ⁺)_x) of the exact value (eps the machine epsilon, twice the unit round-off; 1.01
    covers the rounding of that radius itself); the sum of the |X| minima is lowered by
    (|X| + 2)·eps times their magnitudes, as there."""
    n = a.size
    lam = np.maximum(lam, 0.0)
    scaled = lam * coef
    reduced = a + np.bincount(i, lam, n) - np.bincount(j, scaled, n)
    touching = np.bincount(i, minlength=n) + np.bincount(j, minlength=n)
    radius = (touching + 2) * EPS * (np.abs(a) + np.bincount(i, lam, n) + np.bincount(j, scaled, n)) * 1.01
    lowest = np.minimum(reduced - radius, 0.0)
    return float(lowest.sum() - 1.01 * (n + 2) * EPS * np.abs(lowest).sum())


#: a box LP whose proven bound lags its minimiser's value by more than this (times
#: max(1, max |a|)) is solved again from scratch (a degenerate warm basis whose duals prove little)
RESOLVE_SLACK = 1e-9


def polished_box_minimum(h, a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray,
                         value: float, slack: float | None = None) -> float:
    """:func:`proven_box_minimum` of a solved box model whose minimiser has value ``value``;
    when it lags that value by more than ``slack`` (default RESOLVE_SLACK·max(1, max|a|)), the
    larger of it and the bound of a solve from scratch."""
    proven = proven_box_minimum(h, a, i, j, coef)
    if slack is None:
        slack = RESOLVE_SLACK * max(1.0, float(np.abs(a).max()))
    if value - proven > slack:
        h.clearSolver()
        run_to_optimum(h)
        proven = max(proven, proven_box_minimum(h, a, i, j, coef))
    return proven


def basis_duals(h, a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> np.ndarray | None:
    """Multipliers λ >= 0 (sign as in :func:`proven_box_minimum`) of the model's final basis,
    solved in double precision: λ = 0 on basic rows, and the reduced cost a_x + (Bᵀλ)_x = 0 on
    every basic column x (a sparse square system). None when the basis is not square or the
    system is singular."""
    basis = basic_columns(h)
    if basis is None:
        return None
    cols, rows = basis[0], np.flatnonzero(~basis[1])
    if cols.size != a.size or cols.sum() != rows.size:
        return None
    lam = np.zeros(i.size)
    if rows.size == 0:
        return lam
    where = np.full(a.size, -1)
    where[np.flatnonzero(cols)] = np.arange(rows.size)
    # column x of the basis: Σ_k B[k, x] λ_k = −a_x, B[k, i_k] = 1, B[k, j_k] = −coef_k
    ri, rj = where[i[rows]], where[j[rows]]
    k = np.arange(rows.size)
    entries = [(ri >= 0, ri, np.ones(rows.size)), (rj >= 0, rj, -coef[rows])]
    r = np.concatenate([e[1][e[0]] for e in entries])
    c = np.concatenate([k[e[0]] for e in entries])
    v = np.concatenate([e[2][e[0]] for e in entries])
    system = sp.csc_matrix((v, (r, c)), shape=(rows.size, rows.size))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            solved = spla.spsolve(system, -a[np.flatnonzero(cols)])
        except RuntimeError:
            return None
    if not np.all(np.isfinite(solved)):
        return None
    lam[rows] = solved
    return lam


def capped_sum(per_column: np.ndarray, cap: float) -> float:
    """min Σ_y t_y p_y over 0 <= t_y <= 1, Σ_y t_y <= cap, for p_y <= 0 (the most negative first).

    In a d-private K every column's peak is at most e^{εR} times its entry at a centre x0 of the
    domain (R = max_x d(x, x0), the radius), and those entries sum to 1; so the column peaks
    t_y = max_x K[x, y] sum to at most e^{εR}. With p_y a lower bound on a·v over the cone's
    vectors of peak 1, Σ_y a_y·K_y >= capped_sum(p, e^{εR}): at small ε only a few columns can
    carry weight, and the bound is far tighter than Σ_y p_y."""
    p = np.sort(np.minimum(per_column, 0.0))
    if not np.isfinite(cap) or cap >= p.size:
        return float(p.sum())
    k = int(cap)
    return float(p[:k].sum() + (cap - k) * p[k])


def radius(distances: np.ndarray) -> float:
    """R = min over centres x0 of max_x d(x, x0)."""
    return float(distances.max(axis=0).min())


def peak_cap(radius: float, epsilon: float) -> float:
    """e^{εR}, the bound on the sum of column peaks (inf when it would overflow)."""
    x = epsilon * radius
    return float(np.exp(x)) if x < 700 else np.inf
