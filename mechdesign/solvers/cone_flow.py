"""The box minimum over the d-privacy cone through its dual as a flow with gains: one small LP.

For reduced costs a and the cone's pairs v_x <= c v_x' (c = e^{ε d(x, x')}), any multipliers
λ >= 0 of the pairs prove min a·v over the cone in [0, 1]^X >= Σ_x min(0, (a + Bᵀλ)_x)
(:mod:`~mechdesign.solvers.cone_transfer`), and the best λ proves the box minimum itself. When
the pairs of a negative entry x with positive entries x' are all there, λ never needs to relay
through a third entry: relaying x → x' → x'' costs c(x, x') c(x', x'') >= c(x, x'') (the
triangle inequality), so the direct pair does at least as well. With N the negative entries
and P the positive ones, the box minimum is then

    Σ_{x ∈ N} a_x + max Σ λ_{xx'}  s.t.  Σ_{x'} λ_{xx'} <= −a_x (x ∈ N),
                                        Σ_x c_{xx'} λ_{xx'} <= a_x' (x' ∈ P),  λ >= 0,

a flow with gains from the deficits to the surpluses: an LP of one column per pair from N to P
and |N| + |P| rows, solved by HiGHS. The λ it returns is checked as any multipliers are
(:func:`~mechdesign.solvers.ray_master.box_lagrangian_bound`, round-off enclosed), so a bound
is proven whatever the solver's accuracy; leaving pairs out only lowers it.

Measured on 300 airports at the duals of the tenth ray master, over each input's 256 nearest
pairs: 20 outputs summed to −0.039892 against −0.039864 for the box LPs over all pairs, where
the greedy transfer gave −0.237; 32 ms an output, against 1.65 s for the box LP.
"""

from __future__ import annotations

import highspy
import numpy as np

from mechdesign.solvers.highs_model import INF, give_time, quiet_model
from mechdesign.solvers.ray_master import box_lagrangian_bound

#: a pair enters the flow LP only when it could carry at least this share of its deficit (its
#: surplus over its coefficient): pairs that carry less matter to no bound, and their coefficients
#: (e^26 and beyond) let HiGHS's values, feasible in its scaled model, overdraw surpluses (a pair
#: carrying 2e-13, zero to the simplex, took 0.04 from a surplus of 2e-5) — on a
#: 10 × 10 grid at ε = 2 reduced costs whose box minimum is −3e-14 were bounded at −0.009 with
#: them, at −1.7e-4 with the values scaled back into the capacities, at −9e-15 without them (the
#: greedy transfer that follows still uses them)
FLOW_LEAST_SHARE = 1e-9
#: pivots of the primal simplex per row and column of a flow LP before the dual simplex takes
#: over: it takes about one per line on these LPs (500 on 283 rows and 5,600 columns), and one
#: that stalled on degenerate pivots ran 83,000 on 4,300 columns
FLOW_PIVOTS_PER_LINE = 10
PRIMAL_SIMPLEX, DUAL_SIMPLEX = 4, 1  # (HiGHS's simplex_strategy values)


def flow_bound(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray, limits=None) -> float:
    """A proven lower bound on min a·v over the vectors of [0, 1]^X that satisfy the pairs
    v_i <= coef·v_j: the flow LP's multipliers over the pairs from a negative to a positive
    entry (equal to the box minimum when those pairs are all given). HiGHS stops at ``limits``'
    deadline; the bound of its last iterate is still proven."""
    if not (a < 0.0).any():
        return 0.0  # v = 0 is a minimiser
    return box_lagrangian_bound(a, i, j, coef, flow_multipliers(a, i, j, coef, limits))


def flow_multipliers(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray, limits=None) -> np.ndarray:
    """The flow LP's multipliers λ >= 0, one per pair given (zero on the pairs that do not join
    a negative entry of ``a`` to a positive one that could take :data:`FLOW_LEAST_SHARE` of it,
    and where HiGHS returns no solution), then what is left moved by the greedy transfer."""
    from mechdesign.solvers.cone_transfer import transfer

    lam = np.zeros(i.size)
    carry = np.flatnonzero((a[i] < 0.0) & (a[j] > 0.0) & (a[j] / coef >= FLOW_LEAST_SHARE * -a[i]))
    if carry.size:
        lam[carry] = _within_capacities(a, i[carry], j[carry], coef[carry], _flow(a, i[carry], j[carry], coef[carry],
                                                                               limits))
        # what the capacities took back moves on greedily, over every pair in turn
        left = a + np.bincount(i, lam, a.size) - np.bincount(j, coef * lam, a.size)
        lam += transfer(left, i, j, coef)
    return lam


def _within_capacities(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``lam`` scaled down where it takes more than the flow's rows allow: each surplus x' gives
    at most a_x' (Σ c λ over its pairs), then each deficit x takes at most −a_x (Σ λ). (HiGHS's
    values are feasible to its tolerances only in its scaled model; see :data:`FLOW_LEAST_SHARE`.)"""
    given = np.bincount(j, coef * lam, a.size)[j]
    lam = lam * np.minimum(1.0, np.divide(a[j], given, out=np.ones_like(given), where=given > 0))
    taken = np.bincount(i, lam, a.size)[i]
    return lam * np.minimum(1.0, np.divide(-a[i], taken, out=np.ones_like(taken), where=taken > 0))


def _flow(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray, limits) -> np.ndarray:
    """The flow LP's λ (zeros where HiGHS returns none)."""
    takers, row_of_taker = np.unique(i, return_inverse=True)
    givers, row_of_giver = np.unique(j, return_inverse=True)
    k = i.size
    rows = takers.size + givers.size
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = k, rows
    lp.col_cost_ = np.full(k, -1.0)  # (HiGHS minimises)
    lp.col_lower_, lp.col_upper_ = np.zeros(k), np.full(k, INF)
    lp.row_lower_ = np.full(rows, -INF)
    lp.row_upper_ = np.concatenate([-a[takers], a[givers]])
    matrix = lp.a_matrix_
    matrix.format_ = highspy.MatrixFormat.kColwise
    matrix.num_col_, matrix.num_row_ = k, rows
    matrix.start_ = np.arange(0, 2 * k + 1, 2, dtype=np.int32)
    matrix.index_ = np.column_stack([row_of_taker, takers.size + row_of_giver]).ravel().astype(np.int32)
    matrix.value_ = np.column_stack([np.ones(k), coef]).ravel()
    # the primal simplex from the slack basis, without presolve: 2.8 times the pace of HiGHS's
    # defaults on these LPs (710 flows of 300 haversine points: 24 s against 67 s, the same
    # bounds); where it stalls (degenerate pivots) or ends "unknown", HiGHS's defaults again
    h = quiet_model(tolerance=None, presolve="off", simplex_strategy=PRIMAL_SIMPLEX,
                    simplex_iteration_limit=FLOW_PIVOTS_PER_LINE * (k + rows))
    h.passModel(lp)
    give_time(h, limits)
    h.run()
    if h.getModelStatus() in (highspy.HighsModelStatus.kIterationLimit, highspy.HighsModelStatus.kUnknown):
        # stalled, or ended "unknown" (1,000 random points at ε = 8: 5 of 10 reduced costs, their
        # bounds 26 % below the optimal flow's in all), so HiGHS's defaults solve it again from
        # the start (presolve, the dual simplex)
        for option, value in (("presolve", "choose"), ("simplex_strategy", DUAL_SIMPLEX),
                              ("simplex_iteration_limit", highspy.kHighsIInf)):
            h.setOptionValue(option, value)
        h.clearSolver()
        give_time(h, limits)
        h.run()
    if h.getInfo().primal_solution_status == 0:  # no solution at all
        return np.zeros(k)
    return np.maximum(np.asarray(h.getSolution().col_value, dtype=float), 0.0)
