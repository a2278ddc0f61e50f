"""Rigorous lower bounds for linear programs from any dual vector (safe Lagrangian bounds).

For the LP  min c·x  s.t.  L <= A x <= U,  l <= x <= u  and any row multipliers y (HiGHS's sign
convention: y_i <= 0 where only the upper side is finite, >= 0 where only the lower side is,
free on equalities), every feasible x in a box [l', u'] satisfies

    c·x = (c − Aᵀy)·x + y·(A x) >= Σ_i (y_i L_i if y_i > 0 else y_i U_i)
                                  + Σ_j min_{x_j ∈ [l'_j, u'_j]} (c − Aᵀy)_j x_j,

whatever y is: duals a solver returns at any accuracy give a valid bound once projected to
their signs. This is the safe bound of Neumaier and Shcherbina ("Safe bounds in linear and
mixed-integer linear programming", Mathematical Programming 99, 2004). Here the residual
c − Aᵀy is enclosed in an interval that covers its floating-point round-off, and the final sum
is lowered by a bound on its own round-off, so the number returned is a lower bound in exact
arithmetic on the data given.

The box needs to contain only some optimal solution, so it may use the cut-off row
c·x <= v for any feasible value v (every optimal x satisfies it). :func:`propagate_box`
derives finite bounds for every variable by interval bound propagation over the rows
(activity-based bound tightening, as in LP presolve); a residual that multiplies a direction
still unbounded makes the bound −∞.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

EPS = np.finfo(float).eps


def _box_minimum(r_lo: np.ndarray, r_hi: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per j: min of r·x over r ∈ [r_lo, r_hi], x ∈ [lower, upper] (0·∞ counts as 0); −inf where
    an end of r is not a number (a residual of overflowing multipliers, ∞ − ∞: nothing is
    known about it)."""
    with np.errstate(invalid="ignore", over="ignore"):
        candidates = np.stack([r_lo * lower, r_lo * upper, r_hi * lower, r_hi * upper])
    zero_r = np.stack([r_lo == 0, r_lo == 0, r_hi == 0, r_hi == 0])
    candidates = np.where(zero_r, 0.0, candidates)
    candidates = np.where(np.isnan(candidates), 0.0, candidates)  # ∞·0; a NaN end of r is −inf below
    return np.where(np.isnan(r_lo) | np.isnan(r_hi), -np.inf, candidates.min(axis=0))


def projected(y: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray) -> np.ndarray:
    """Row multipliers ``y`` projected onto their signs (a copy): 0 where a multiplier's sign
    asks for a side the row does not have, or where it is not a number."""
    y = np.asarray(y, dtype=float).copy()
    y[(y > 0) & ~np.isfinite(row_lower)] = 0.0
    y[(y < 0) & ~np.isfinite(row_upper)] = 0.0
    y[~np.isfinite(y)] = 0.0
    return y


def lagrangian_bound(c: np.ndarray, A: sp.spmatrix, row_lower: np.ndarray, row_upper: np.ndarray,
                     y: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """The safe Lagrangian lower bound on min c·x over {L <= Ax <= U, x ∈ [lower, upper]}.

    Parameters
    ----------
    c, A, row_lower, row_upper
        The LP's cost, constraint matrix and row bounds (±inf where a side is absent).
    y
        Row multipliers (HiGHS convention, see the module docstring); projected to their signs.
    lower, upper
        A box containing some optimal solution (±inf allowed).

    Returns
    -------
    float
        Σ_i y_i·(L_i or U_i) + Σ_j min over the box of (c − Aᵀy)_j x_j, lowered by a bound on
        the floating-point error; −inf when a non-zero residual meets an unbounded side.
    """
    A = sp.csc_matrix(A)
    row_lower = np.asarray(row_lower, dtype=float)
    row_upper = np.asarray(row_upper, dtype=float)
    y = projected(y, row_lower, row_upper)
    side = np.where(y > 0, row_lower, row_upper)
    row_terms = np.where(y == 0, 0.0, y * np.where(np.isfinite(side), side, 0.0))
    c = np.asarray(c, dtype=float)
    residual = c - A.T @ y
    per_column = np.diff(A.indptr)
    radius = (per_column + 2) * EPS * (np.abs(c) + abs(A).T @ np.abs(y)) * 1.01
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: NaN, a bound of −inf below
        box = _box_minimum(residual - radius, residual + radius, np.asarray(lower, float), np.asarray(upper, float))
    if not np.all(np.isfinite(box)):
        return -np.inf
    total = float(row_terms.sum() + box.sum())
    error = (row_terms.size + box.size + 2) * EPS * (np.abs(row_terms).sum() + np.abs(box).sum())
    return total - 1.01 * error


def _tighten_upper(A: sp.csr_matrix, rhs: np.ndarray, lower: np.ndarray, upper: np.ndarray):
    """One pass of bound propagation over the rows A x <= rhs (finite rhs): for each entry
    a_ij, a_ij x_j <= rhs_i − min over the box of Σ_{k≠j} a_ik x_k. Returns candidate
    (lower, upper) arrays (±inf where a row proves nothing), widened by their round-off."""
    n = A.shape[1]
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    cols, a = A.indices, A.data
    with np.errstate(invalid="ignore", over="ignore"):
        contrib = np.where(a > 0, a * lower[cols], a * upper[cols])  # minimum of a_ij x_j
    contrib = np.where(a == 0, 0.0, contrib)
    infinite = ~np.isfinite(contrib)
    finite = np.where(infinite, 0.0, contrib)
    m = A.shape[0]
    finite_sum = np.bincount(rows, finite, m)
    magnitude = np.bincount(rows, np.abs(finite), m)
    n_inf = np.bincount(rows, infinite.astype(float), m)
    nnz = np.diff(A.indptr)
    rest = np.where(infinite, np.where(n_inf[rows] == 1, finite_sum[rows], np.nan),
                    np.where(n_inf[rows] == 0, finite_sum[rows] - finite, np.nan))
    usable = np.isfinite(rest) & (a != 0) & np.isfinite(rhs[rows])
    slack = (nnz[rows] + 3) * EPS * (magnitude[rows] + np.abs(rhs[rows])) * 1.01
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        value = (rhs[rows] - rest) / a
        widen = slack / np.abs(a) + 4 * EPS * np.abs(value)
    new_upper = np.full(n, np.inf)
    new_lower = np.full(n, -np.inf)
    up = usable & (a > 0)
    down = usable & (a < 0)
    np.minimum.at(new_upper, cols[up], (value + widen)[up])
    np.maximum.at(new_lower, cols[down], (value - widen)[down])
    return new_lower, new_upper


def propagate_box(A: sp.spmatrix, row_lower: np.ndarray, row_upper: np.ndarray, lower: np.ndarray,
                  upper: np.ndarray, passes: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Interval bound propagation: the box [lower, upper] shrunk by every row L <= A x <= U,
    repeated until no bound moves by more than 1e-9 relative (or ``passes`` rounds).

    Each derived bound holds for every x in the box that satisfies the rows (rounding is
    covered by widening), so the box keeps every feasible point it contained."""
    A = sp.csr_matrix(A)
    lower = np.asarray(lower, dtype=float).copy()
    upper = np.asarray(upper, dtype=float).copy()
    ru = np.asarray(row_upper, dtype=float)
    rl = np.asarray(row_lower, dtype=float)
    keep_u, keep_l = np.isfinite(ru), np.isfinite(rl)
    sides = [(A[keep_u], ru[keep_u]), (-A[keep_l], -rl[keep_l])]
    for _ in range(passes):
        moved = False
        for matrix, rhs in sides:
            if matrix.shape[0] == 0:
                continue
            new_lower, new_upper = _tighten_upper(matrix, rhs, lower, upper)
            tol = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(upper), upper, 0.0)))
            better_u = new_upper < upper - np.where(np.isfinite(upper), tol, 0.0)
            tol = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(lower), lower, 0.0)))
            better_l = new_lower > lower + np.where(np.isfinite(lower), tol, 0.0)
            if better_u.any() or better_l.any():
                moved = True
                upper = np.where(better_u, new_upper, upper)
                lower = np.where(better_l, new_lower, lower)
        if not moved:
            break
    return lower, upper


def cutoff_box(c: np.ndarray, A: sp.spmatrix, row_lower: np.ndarray, row_upper: np.ndarray, lower: np.ndarray,
               upper: np.ndarray, cutoff: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The box [lower, upper] propagated from the rows, the column bounds and, when ``cutoff``
    (a value some feasible point attains, or more) is given, the row c·x <= cutoff: it keeps
    every optimal solution."""
    A = sp.csr_matrix(A)
    rows, rl, ru = A, np.asarray(row_lower, float), np.asarray(row_upper, float)
    if cutoff is not None and np.isfinite(cutoff):
        rows = sp.vstack([A, sp.csr_matrix(np.asarray(c, float)[None, :])], format="csr")
        rl = np.append(rl, -np.inf)
        ru = np.append(ru, float(cutoff))
    return propagate_box(rows, rl, ru, lower, upper)


def proven_lp_bound(c: np.ndarray, A: sp.spmatrix, row_lower: np.ndarray, row_upper: np.ndarray,
                    y: np.ndarray, lower: np.ndarray, upper: np.ndarray, cutoff: float | None) -> float:
    """A rigorous lower bound on min c·x over {L <= Ax <= U, lower <= x <= upper}: the
    Lagrangian bound at ``y`` on the box :func:`cutoff_box` propagates. Returns −inf when no
    finite bound is proven."""
    box_lower, box_upper = cutoff_box(c, A, row_lower, row_upper, lower, upper, cutoff)
    return lagrangian_bound(c, A, row_lower, row_upper, y, box_lower, box_upper)


def farkas_proves_infeasible(A: sp.spmatrix, row_lower: np.ndarray, row_upper: np.ndarray, ray: np.ndarray,
                             lower: np.ndarray, upper: np.ndarray) -> bool:
    """Whether the row multipliers ``ray`` prove {L <= Ax <= U, lower <= x <= upper} empty
    (Farkas' lemma): with zero cost, the safe Lagrangian bound of a feasible system is at most
    0, so a bound > 0 proves that no x satisfies the rows. The box is first propagated from the
    rows (which keeps every feasible point); a propagated box that is empty is a proof too."""
    A = sp.csr_matrix(A)
    box_lower, box_upper = propagate_box(A, row_lower, row_upper, lower, upper)
    if np.any(box_lower > box_upper):
        return True
    zero = np.zeros(A.shape[1])
    return lagrangian_bound(zero, A, row_lower, row_upper, ray, box_lower, box_upper) > 0.0


@dataclass
class LPSnapshot:
    """The standard-form LP a cvxpy HiGHS solve passed to the solver (c·x + offset is the
    program's objective), with the solver's row duals or, after an infeasible verdict, its dual
    ray."""

    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    offset: float
    duals: np.ndarray | None
    ray: np.ndarray | None
    #: an LP result is "optimal" only with a proven bound
    required: bool = True
    #: the solved highspy model the duals came from (its basis starts a refinement)
    model: object = None
    #: when the bound at the duals leaves a relative gap to the cut-off above this, the duals are
    #: refined on ``model`` (:mod:`~mechdesign.solvers.dual_refinement`), once, within
    #: ``refine_seconds``
    refine_above: float | None = None
    refine_seconds: float | None = None

    def bound(self, cutoff: float | None) -> float:
        """Proven lower bound on the program's optimum (offset included); −inf if none."""
        if self.duals is None:
            return -np.inf
        cut = None if cutoff is None else cutoff - self.offset
        box = cutoff_box(self.c, self.A, self.row_lower, self.row_upper, self.lower, self.upper, cut)
        value = lagrangian_bound(self.c, self.A, self.row_lower, self.row_upper, self.duals, *box)
        if (self.model is not None and self.refine_above is not None and cut is not None and np.isfinite(cut)
                and cut - value > self.refine_above * abs(cutoff)):
            value = max(value, self._refined(cut, box))
        return value + self.offset - 4 * EPS * abs(self.offset)

    def _refined(self, cut: float, box: tuple[np.ndarray, np.ndarray]) -> float:
        """The bound at the refined duals on ``box`` (propagated with the cut-off ``cut``), which
        then replace the solver's for later bounds; refined once per snapshot."""
        from mechdesign.core.limits import Limits
        from mechdesign.solvers.dual_refinement import refined_bound

        aim, self.refine_above = self.refine_above / 2 * abs(cut), None
        best = {"bound": -np.inf}

        def bound_at(y: np.ndarray) -> float:
            found = lagrangian_bound(self.c, self.A, self.row_lower, self.row_upper, y, *box)
            if found > best["bound"]:
                best.update(bound=found, duals=np.asarray(y, float))
            return found

        refined = refined_bound(self.model, bound_at, cut, Limits(self.refine_seconds), start=self.duals, aim=aim).bound
        if "duals" in best:
            self.duals = best["duals"]
        return refined

    def proves_infeasible(self) -> bool:
        """Whether the solver's dual ray (either sign) is a Farkas certificate on the data."""
        if self.ray is None or not np.all(np.isfinite(self.ray)):
            return False
        return any(farkas_proves_infeasible(self.A, self.row_lower, self.row_upper, s * self.ray,
                                            self.lower, self.upper) for s in (1.0, -1.0))


def objective_constant(data: dict) -> float | None:
    """The constant d of the program's objective c·x + d in cvxpy's standard form (its
    parameter program's), None when the data do not carry it. Not the program's value less
    HiGHS's objective: the two are evaluated at a primal point that meets the rows only to
    HiGHS's tolerances, and their difference (8e-11 on a marginal error of optimum 0) lifted the
    'proven' bound above the optimum."""
    program = data.get("param_prob")
    if program is None:
        return None
    try:
        constant = program.apply_parameters()[1]
    except Exception:  # noqa: BLE001 — a parameter program of another shape: the fallback applies
        return None
    constant = np.asarray(constant, dtype=float)
    return float(constant.reshape(-1)[0]) if constant.size == 1 and np.isfinite(constant).all() else None


def snapshot_from_cache(cache_entry, value: float | None) -> LPSnapshot | None:
    """An :class:`LPSnapshot` from a cvxpy HiGHS solver-cache entry (solver, data, results);
    ``value`` is the program's reported optimum, which fixes the objective's constant only
    when the data do not carry it (:func:`objective_constant`)."""
    try:
        _, data, results = cache_entry
        dims = data["dims"]
        c = np.asarray(data["c"], dtype=float)
        A = sp.csr_matrix(data["A"])
        b = np.asarray(data["b"], dtype=float)
    except (TypeError, KeyError, ValueError):
        return None
    n = c.size
    eq = int(dims.zero)
    row_lower = np.concatenate([b[:eq], np.full(b.size - eq, -np.inf)])
    lower = data.get("lower_bounds")
    upper = data.get("upper_bounds")
    lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
    upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
    duals, ray, offset = None, None, 0.0
    status = results.get("model_status")
    solution = results.get("solution")
    if status == "kOptimal" and solution is not None and solution.dual_valid:
        duals = np.asarray(solution.row_dual, dtype=float)
        offset = objective_constant(data)
        if offset is None and value is not None and np.isfinite(value):
            # no parameter program to read it from: the program's value less HiGHS's objective,
            # which carries their difference at HiGHS's tolerances besides the constant
            offset = float(value) - float(results["info"].objective_function_value)
    elif status == "kInfeasible" and results.get("dual_ray") is not None:
        found = results["dual_ray"]
        if len(found) == 3 and found[1]:  # (HighsStatus, has ray, values)
            ray = np.asarray(found[2], dtype=float)
    model = cache_entry[0] if duals is not None and hasattr(cache_entry[0], "getBasis") else None
    return LPSnapshot(c, A, row_lower, b, lower, upper, offset, duals, ray, model=model)


def model_arrays(h) -> tuple[np.ndarray, sp.csc_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A highspy model's (cost, constraint matrix by columns, row lower, row upper, column lower,
    column upper)."""
    lp = h.getLp()
    matrix = lp.a_matrix_
    parts = (np.asarray(matrix.value_, float), np.asarray(matrix.index_), np.asarray(matrix.start_))
    shape = (lp.num_row_, lp.num_col_)
    A = sp.csc_matrix(parts, shape=shape) if matrix.format_.name == "kColwise" else sp.csr_matrix(parts, shape=shape)
    return (np.asarray(lp.col_cost_, float), sp.csc_matrix(A), np.asarray(lp.row_lower_, float),
            np.asarray(lp.row_upper_, float), np.asarray(lp.col_lower_, float), np.asarray(lp.col_upper_, float))


def _duals(h, duals: np.ndarray | None) -> np.ndarray | None:
    """``duals`` when given, else the solved model ``h``'s row duals (None when not valid)."""
    if duals is not None:
        return duals
    solution = h.getSolution()
    return solution.row_dual if solution.dual_valid else None


def highs_model_bound(h, upper: float | np.ndarray = np.inf, duals: np.ndarray | None = None) -> float:
    """The safe Lagrangian bound of a solved highspy model from its row duals (or from ``duals``,
    any row multipliers), on the box of its column bounds capped at ``upper`` (a number or one
    per column: a bound some optimal solution satisfies, e.g. 1 for the entries of a
    row-stochastic matrix). −inf without valid duals."""
    duals = _duals(h, duals)
    if duals is None:
        return -np.inf
    c, A, row_lower, row_upper, lower, col_upper = model_arrays(h)
    return lagrangian_bound(c, A, row_lower, row_upper, np.asarray(duals, float), lower, np.minimum(col_upper, upper))


def row_simplex_bound(h, blocks: int, width: int, upper: float | np.ndarray = np.inf,
                      duals: np.ndarray | None = None) -> float:
    """The safe Lagrangian bound of a solved highspy model whose first ``blocks`` rows make each
    of ``blocks`` consecutive runs of ``width`` non-negative columns sum to 1 (the rows of a
    row-stochastic matrix) and whose other rows are dualised with their row duals.

    Keeping the simplices instead of dualising their rows too, the bound is
    Σ_x min_y r[x, y] with r = c − Aᵀy over the other rows: each run contributes the least of its
    reduced costs instead of the sum of all negative ones over the box [0, 1], so HiGHS's
    reduced-cost tolerance enters once per run rather than once per column. Round-off is
    enclosed as in :func:`lagrangian_bound`. Columns after the blocks × width (auxiliary
    entries, an epigraph's variable: in no simplex row) count on their column bounds capped at
    ``upper`` (a number or one per column: bounds some optimal solution satisfies); a residual
    on an unbounded direction makes the bound −inf, as does a model without valid duals. With
    ``duals`` (any row multipliers) the bound is taken at those instead of the model's."""
    size = blocks * width
    duals = _duals(h, duals)
    if duals is None:
        return -np.inf
    c, A, row_lower, row_upper, col_lower, col_upper = model_arrays(h)
    if c.size < size:
        return -np.inf
    y = projected(duals, row_lower, row_upper)
    y[:blocks] = 0.0  # the simplex rows are kept, not dualised
    side = np.where(y > 0, row_lower, row_upper)
    row_terms = np.where(y == 0, 0.0, y * np.where(np.isfinite(side), side, 0.0))
    residual = c - A.T @ y
    radius = (np.diff(A.indptr) + 2) * EPS * (np.abs(c) + abs(A).T @ np.abs(y)) * 1.01
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf: NaN, a bound of −inf below
        low, high = residual - radius, residual + radius
    least = low[:size].reshape(blocks, width).min(axis=1)
    if c.size > size:  # the other columns on their boxes: each adds min r·x there
        caps = np.minimum(col_upper, upper)[size:]
        least = np.append(least, _box_minimum(low[size:], high[size:], col_lower[size:], caps))
    if not np.all(np.isfinite(least)):
        return -np.inf
    total = float(row_terms.sum() + least.sum())
    error = (row_terms.size + least.size + 2) * EPS * (np.abs(row_terms).sum() + np.abs(least).sum())
    return total - 1.01 * error
