"""Iterative refinement of a solved LP's row duals, for a tighter safe bound.

HiGHS meets its dual feasibility tolerance in its own scaled units. On rows with large
coefficients (a pair row K[a, y] <= e^12 K[b, y] at a large ε) it can leave duals of the wrong
sign near 1e-10; projected to zero for the safe bound (:mod:`lp_bound`) they move reduced costs
by up to 1e-5, and the proof of an optimum HiGHS reported fails by as much (20 graph nodes at
ε = 8 under the worst-case loss: a proven gap of 2e-6 to 3e-4 where the optimum is known to
1e-9).

The refinement is that of Gleixner, Steffy and Wolter ("Iterative refinement for linear
programming", INFORMS Journal on Computing 28(3), 2016), on the dual side only. With y the
current multipliers (projected onto their signs), r = c − Aᵀy their reduced costs and Δ the gap
still open, every feasible x has c·x = r·x + y·(A x), and y·(A x) = y·b − y·w for the slacks w of
the inequality rows. So the LP over the same rows with the costs r/Δ on the columns and −y_i/Δ on
an explicit slack w_i of each inequality row of non-zero y_i (the row held at its side) is the
original LP again, less a constant and scaled by 1/Δ (up to the caps on its costs,
:data:`ATTEMPTS`): solved by the dual simplex from the
model's basis, its duals z correct y to y + Δz, whose reduced costs c − Aᵀ(y + Δz) =
Δ(r/Δ − Aᵀz) are infeasible by at most Δ times HiGHS's tolerance instead of by the tolerance,
and whose signs hold (the slack's reduced cost −y_i/Δ − z_i >= 0 keeps y_i + Δz_i <= 0 on an
upper side; without the slacks a multiplier could only grow in magnitude, never come back).
Every round's multipliers are only candidates: the bound is the safe Lagrangian bound at them,
so no round can make a bound wrong; the best is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import highspy
import numpy as np

from mechdesign.solvers.highs_model import give_time, quiet_model
from mechdesign.solvers.lp_bound import model_arrays, projected

#: refinement rounds at most: each divides the dual infeasibility by about HiGHS's tolerance
#: relative to the costs, and the bound stops moving after one or two
ROUNDS = 3
#: each round's refinement LPs, as (its scale in multiples of the gap Δ, the cap on its costs),
#: tried in turn, each from the best multipliers so far, until the gap is within the aim.
#: HiGHS's tolerances are absolute: a reduced cost far above Δ only keeps its entry at its
#: bound, but capped at 1e6 it set HiGHS's cost norm, and a run on 80 points of a line (Δ 4e-10
#: of the costs) ended "unknown" after 2,619 pivots with nothing gained, where a cap of 1e3
#: proved the optimum; on a 15-point path at ε = 13 it was the other way round. A milder
#: magnification (1000 Δ) comes last
ATTEMPTS = ((1.0, 1e3), (1.0, 1e6), (1e3, 1e3))


class Refinement(NamedTuple):
    """What :func:`refined_bound` found: the best safe bound, and the columns' values of the
    refinement LP solved to optimality that last moved it (None when none was): a point of the
    model's LP (the refinement LP is that LP, shifted by a constant and scaled), optimal for it
    when no cost was capped, found at the gap's scale, where HiGHS's own point can lie above the
    optimum by more than the tolerance (callers compare its value and check its rows)."""

    bound: float
    primal: np.ndarray | None = None


def refined_bound(h, bound_at: Callable[[np.ndarray], float], value: float, limits=None,
                  start: np.ndarray | None = None, aim: float = 0.0) -> Refinement:
    """The best safe bound over the solved highspy model ``h``'s row duals (or the multipliers
    ``start``) and up to :data:`ROUNDS` refinements of them (module docstring), with the last
    refinement's optimal point; ``bound_at(y)`` is the safe bound at row multipliers y,
    ``value`` the objective of a feasible point of ``h``'s LP (the gap to close is value less
    the bound), which the refinements try to bring within ``aim``. ``h`` is left as it is: the
    refinement LPs are solved on a copy from its basis, each under the time ``limits`` leave.
    Without valid duals (and no ``start``) the bound at the model's duals, whatever they are."""
    solution = h.getSolution()
    if start is None and not solution.dual_valid:
        return Refinement(bound_at(solution.row_dual))
    cost, A, row_lower, row_upper, _, _ = model_arrays(h)
    y = projected(solution.row_dual if start is None else start, row_lower, row_upper)
    best = bound_at(y)
    lp, basis, primal = h.getLp(), h.getBasis(), None
    for _ in range(ROUNDS):
        moved = False
        for multiple, cap in ATTEMPTS:
            gap = value - best
            if not (np.isfinite(gap) and gap > aim) or (limits is not None and limits.expired()):
                return Refinement(best, primal)
            with np.errstate(over="ignore", invalid="ignore"):  # (a bound near −1e308: nothing to refine)
                scale = multiple * gap
                if not np.isfinite(scale):
                    return Refinement(best, primal)
                found, optimal = _solve_refinement(lp, basis, cost, A, y, row_lower, row_upper, scale, cap, limits)
                if found is None:  # (duals of any status are candidates: the bound is proven on them)
                    continue
                candidate = projected(y + scale * found.row_dual, row_lower, row_upper)  # (not a number: 0)
            bound = bound_at(candidate)
            if bound > best:
                y, best, moved = candidate, bound, True
                if optimal:
                    primal = found.col_value[:cost.size]
        if not moved:
            break
    return Refinement(best, primal)


class _Found(NamedTuple):
    row_dual: np.ndarray
    col_value: np.ndarray


def _solve_refinement(lp, basis, cost: np.ndarray, A, y: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray,
                      scale: float, cap: float, limits) -> tuple[_Found | None, bool]:
    """The refinement LP at multipliers ``y`` with its costs divided by ``scale`` (within ±``cap``), solved on a
    fresh copy of ``lp`` from ``basis`` (a copy whose slack columns of a round before were
    deleted has a basis short of basic columns: HiGHS ends in error): (its duals and columns'
    values, or None without valid duals; whether it ended optimal)."""
    copy = quiet_model(presolve="off", solver="simplex", simplex_strategy=1)  # the dual simplex
    copy.passModel(lp)
    copy.setBasis(basis)
    _price_rows(copy, y, row_lower, row_upper, scale, cap)
    copy.changeColsCost(cost.size, np.arange(cost.size, dtype=np.int32), _scaled(cost - A.T @ y, scale, cap))
    give_time(copy, limits)
    copy.run()
    found = copy.getSolution()
    if not found.dual_valid:
        return None, False
    return (_Found(np.asarray(found.row_dual, float), np.asarray(found.col_value, float)),
            copy.getModelStatus() == highspy.HighsModelStatus.kOptimal)


def _price_rows(copy, y: np.ndarray, row_lower: np.ndarray, row_upper: np.ndarray, gap: float, cap: float) -> None:
    """Give the refinement LP ``copy`` the rows' side of the Lagrangian: each inequality row i
    whose multiplier y_i is not zero gets a slack column w_i (coefficient 1, cost −y_i/gap within ±cap, on
    [0, ∞) at the upper side, (−∞, 0] at the lower) and is held at that side, so that its
    correction z_i may take y_i back towards zero but not past it (y_i + gap·z_i keeps y_i's
    sign)."""
    upper_side = (y < 0) & np.isfinite(row_upper) & (row_lower < row_upper)
    lower_side = (y > 0) & np.isfinite(row_lower) & (row_lower < row_upper)
    rows = np.flatnonzero(upper_side | lower_side)
    if rows.size:
        at_upper = upper_side[rows]
        side = np.where(at_upper, row_upper[rows], row_lower[rows])
        copy.addCols(rows.size, _scaled(-y[rows], gap, cap), np.where(at_upper, 0.0, -np.inf),
                     np.where(at_upper, np.inf, 0.0), rows.size, np.arange(rows.size, dtype=np.int32),
                     rows.astype(np.int32), np.ones(rows.size))
        copy.changeRowsBounds(rows.size, rows.astype(np.int32), side, side)


def _scaled(costs: np.ndarray, scale: float, cap: float) -> np.ndarray:
    """``costs``/``scale`` within ±``cap`` (an overflow there too; a cost that is not a number,
    of multipliers that overflowed, 0)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.nan_to_num(np.clip(costs / scale, -cap, cap), nan=0.0)
