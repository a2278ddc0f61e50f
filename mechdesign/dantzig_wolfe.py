"""Dantzig–Wolfe decomposition for d-privacy: exact optima over rays of the column cone.

ε·d-privacy constrains every output column separately: K[:, y] lies in the cone
Γ = {v >= 0 : v_x <= e^{ε d(x, x')} v_x'}. Every column is a non-negative combination of rays of
Γ, so the design LP

    min Σ_{x,y} C[x, y] K[x, y]  s.t.  Σ_y K[x, y] = 1,  K[:, y] ∈ Γ

becomes a master LP with one row per input: variables θ_j >= 0 for (output y_j, ray v_j),
Σ_j θ_j v_j(x) = 1, cost Σ_j θ_j C[:, y_j]·v_j. Given the master's row duals u, a ray v for
output y improves the master iff Σ_x (C[x, y] − u_x) v_x < 0 (pricing); when no ray prices out,
(u) is dual feasible for the full LP, so the master value is the full LP's optimum and Σ u_x its
dual bound.

On a line (|x − x'| on 1-D points) pricing is exact and O(|X|) per column: with v fixed to 1 at
an anchor p, the cheapest continuation to the right obeys the recursion h_x = a_x +
min(e^{−εg_x} h_{x+1}, e^{εg_x} h_{x+1}) (g_x the gap to the next point), likewise to the left,
so min over anchors of a_p + ψ(h_{p+1}) + ψ(h'_{p−1}) is the exact minimum over Γ with one entry
fixed. The master starts from the rays peaked at every point, v_x = e^{−ε|x − z|} (the truncated
geometric mechanism's columns), each assigned to its cheapest output: by Ghosh, Roughgarden &
Sundararajan the remapped geometric mechanism is optimal for losses monotone in |x − y| on unit-
spaced lines, so there the first master is already optimal and pricing only proves it; for other
priors, losses and spacings, pricing adds what is missing.

The master's duals carry round-off: a reduced cost of −1e-11 on one input, multiplied by a ray
ratio e^{εd} of e^18, would look like a real improvement. Reduced costs within 1e-9·max|C| of
zero are therefore priced as zero, and the reported dual bound pays for that rigorously: for
K[x, y] <= 1, Σ C K >= Σ_x u_x + Σ_{x,y} min(0, a_xy − â_xy) when no ray prices out under â.

Ray entries below 1e-12 of the peak are dropped from the master LP (HiGHS ignores tiny matrix
entries anyway), but the returned matrix is assembled from the full rays, so it lies exactly in
the cone and the certificate's clean-up only renormalises rows that the dropped entries put
about 1e-12 above one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from .highs_model import INF, quiet_model, run_to_optimum
from .metrics import on_a_line
from .objectives import ExpectedLoss
from .privacy.base import MAX_LOG_COEFFICIENT
from .privacy.metric import MetricPrivacy
from .problem import ContextSolution, register_special_solver, relative_gap, solve_contexts
from .symmetry import Symmetry, find, trivial

TRUNCATE = 1e-12
#: a ray master is accepted when its bound is this close (relative, the default gap tolerance);
#: the master's value itself is measured 1e-10 to 1e-8 above the full LP (rays truncated at
#: 1e-12), while per-column round-off in the duals loosens the bound to about 1e-7
ACCEPT_GAP = 1e-6
COLUMN_GAP = 1e-8
INITIAL_RADIUS = 3.0
#: approximate runs (gap above EXACT_GAP) never tighten the cone while rays still price out, so
#: they start from a wider one: on a lattice the pairs within 5 spacings span directions at most
#: 14° apart, so chains of them stretch distances by at most 1/cos 7° = 1.0075 (radius 3: 1.027)
APPROXIMATE_RADIUS = 5.0


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
        costs, starts, index, values, p = [], [], [], [], 0
        order = self.symmetry.order
        for y, full in zip(outputs, rays):
            v = np.where(full < TRUNCATE, 0.0, full)  # peak 1; HiGHS drops tiny entries anyway
            nz = np.flatnonzero(v)
            costs.append(order * float(self.cost[nz, y] @ v[nz]))
            sums = self.symmetry.row_sums(v)
            rows = np.flatnonzero(sums)
            starts.append(p)
            index.append(rows)
            values.append(sums[rows])
            p += rows.size
        k = len(outputs)
        status = self.h.addCols(k, np.array(costs), np.zeros(k), np.full(k, INF), p,
                                np.array(starts, dtype=np.int32), np.concatenate(index).astype(np.int32),
                                np.concatenate(values))
        if status == highspy.HighsStatus.kError:
            raise RuntimeError("HiGHS rejected new master columns")
        self.outputs += outputs
        self.rays += rays

    def solve(self) -> tuple[float, np.ndarray] | None:
        if not run_to_optimum(self.h):
            return None
        duals = np.asarray(self.h.getSolution().row_dual)
        return self.h.getInfo().objective_function_value, self.symmetry.spread(duals)

    def matrix(self) -> np.ndarray:
        theta = np.asarray(self.h.getSolution().col_value)
        k = np.zeros((self.n, self.m))
        for t in np.flatnonzero(theta > 0):
            self.symmetry.symmetrize_column(k, self.outputs[t], self.rays[t], theta[t])
        return k


def _psi(h: np.ndarray, down: np.ndarray, up: np.ndarray) -> np.ndarray:
    """min over the next entry's allowed ratios [down, up] of ratio·h (beyond the float range,
    0 or −inf, never inf·0 = NaN: lower values only loosen the bound built on them)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(h >= 0, down * np.maximum(h, 0.0), up * np.minimum(h, 0.0))


@dataclass
class LinePricing:
    """Exact pricing over the d-privacy cone of sorted points on a line (module docstring)."""

    gaps: np.ndarray
    epsilon: float

    def __post_init__(self):
        with np.errstate(over="ignore", under="ignore"):
            self.down = np.exp(-self.epsilon * self.gaps)[:, None]
            self.up = np.exp(self.epsilon * self.gaps)[:, None]

    def price(self, a: np.ndarray):
        n, m = a.shape
        right = np.zeros((n + 1, m))  # right[x]: best value of x..n-1 given v_x = 1
        left = np.zeros((n + 1, m))   # left[x + 1]: best value of 0..x given v_x = 1
        for x in range(n - 1, -1, -1):
            right[x] = a[x] + (_psi(right[x + 1], self.down[x], self.up[x]) if x < n - 1 else 0.0)
        for x in range(n):
            left[x + 1] = a[x] + (_psi(left[x], self.down[x - 1], self.up[x - 1]) if x > 0 else 0.0)
        value = a.copy()
        value[:-1] += _psi(right[1:n], self.down, self.up)
        value[1:] += _psi(left[1:n], self.down, self.up)
        anchor = value.argmin(axis=0)
        return value[anchor, np.arange(m)], anchor, right, left

    def clipped_rays(self, anchors, column: int, right: np.ndarray, left: np.ndarray) -> list[np.ndarray]:
        """Rays that follow the optimal walk from each anchor (v_anchor = 1) but are capped at 1,
        v = min(1, e^g): capping keeps a vector in the cone (min of log-Lipschitz functions), and
        unlike the uncapped walk it cannot hide its improvement behind one huge entry."""
        n = self.gaps.size + 1
        step = self.epsilon * self.gaps
        s_right = np.where(right[1:n, column] >= 0, -1.0, 1.0)   # step x-1 -> x, x = 1..n-1
        s_left = np.where(left[1:n, column] >= 0, -1.0, 1.0)     # step x+1 -> x, x = 0..n-2
        cr = np.concatenate([[0.0], np.cumsum(s_right * step)])
        cl = np.concatenate([[0.0], np.cumsum(s_left * step)])
        x = np.arange(n)
        out = []
        for p in anchors:
            g = np.where(x > p, cr - cr[p], np.where(x < p, cl[p] - cl, 0.0))
            v = np.exp(np.minimum(g, 0.0))
            out.append(v)
        return out

    def ray(self, anchor: int, column: int, right: np.ndarray, left: np.ndarray) -> np.ndarray:
        """The minimising ray for one column (log-space walk from the anchor), peak 1."""
        n = self.gaps.size + 1
        g = np.zeros(n)
        step = self.epsilon * self.gaps
        for x in range(anchor + 1, n):
            g[x] = g[x - 1] + (-step[x - 1] if right[x, column] >= 0 else step[x - 1])
        for x in range(anchor - 1, -1, -1):
            g[x] = g[x + 1] + (-step[x] if left[x + 1, column] >= 0 else step[x])
        return np.exp(g - g.max())


def _line_box_minimum(a: np.ndarray, points: np.ndarray, epsilon: float) -> float:
    """min Σ a_x v_x over the line cone with 0 <= v <= 1 (an LP with |X| variables).

    Neighbour constraints whose coefficient e^{εg} exceeds e^20 are left out (HiGHS returns wrong
    optima with such coefficients): a larger cone, so the value stays a valid lower bound."""
    n = a.size
    step = epsilon * np.diff(points)
    keep = np.flatnonzero(step <= 20.0)
    h = quiet_model(tolerance=None)
    h.addCols(n, a, np.zeros(n), np.ones(n), 0, np.zeros(n, dtype=np.int32), np.array([], dtype=np.int32),
              np.array([]))
    # rows v_i − e^{εg} v_j <= 0 for neighbours (i, j), both ways
    i, j = np.concatenate([keep, keep + 1]), np.concatenate([keep + 1, keep])
    coef = np.exp(np.concatenate([step[keep], step[keep]]))
    k = i.size
    if k:
        h.addRows(k, np.full(k, -INF), np.zeros(k), 2 * k, np.arange(0, 2 * k, 2, dtype=np.int32),
                  np.column_stack([i, j]).ravel().astype(np.int32), np.column_stack([np.ones(k), -coef]).ravel())
    run_to_optimum(h)
    return proven_box_minimum(h, a, i, j, coef)


def proven_box_minimum(h, a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> float:
    """A lower bound on min a·v over {0 <= v <= 1, v_i − coef·v_j <= 0 (the model's rows, in its
    order)} from the model's row duals, whatever the solver's accuracy: for any λ >= 0,
    a·v >= (a + Bᵀλ)·v >= Σ_x min(0, (a + Bᵀλ)_x) on the box. The objective a simplex reports
    optimal can sit above the true minimum when rows carry coefficients up to e^20; this
    cannot. With no valid duals (a non-optimal status), the box alone: Σ min(0, a)."""
    solution = h.getSolution()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal or not solution.dual_valid:
        return float(np.minimum(a, 0.0).sum())
    lam = np.maximum(-np.asarray(solution.row_dual), 0.0)  # HiGHS: <= 0 on active upper rows
    n = a.size
    reduced = a + np.bincount(i, lam, n) - np.bincount(j, lam * coef, n)
    return float(np.minimum(reduced, 0.0).sum())


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


def solve_line(cost: np.ndarray, points: np.ndarray, epsilon: float, *, tol: float = 1e-9,
               max_rounds: int = 500) -> ContextSolution | None:
    """Exact ε·|x − x'|-private design on sorted 1-D ``points`` (rows of ``cost`` in that order)."""
    n = cost.shape[0]
    pricing = LinePricing(np.diff(points), epsilon)
    master = RayMaster(cost)
    peaked = np.exp(-epsilon * np.abs(points[:, None] - points[None, :]))
    best = np.argmin(peaked.T @ cost, axis=1)  # cheapest output for the ray peaked at z
    master.add([int(y) for y in best], [peaked[:, z].copy() for z in range(n)])
    master.add([int(np.argmin(cost.sum(axis=0)))], [np.ones(n)])  # always feasible
    noise = 1e-9 * max(float(np.abs(cost).max()), 1e-300)  # round-off in the master's duals
    cap = peak_cap(float(np.min(np.maximum(points - points[0], points[-1] - points))), epsilon)
    for rounds in range(1, max_rounds + 1):
        solved = master.solve()
        if solved is None:
            return None
        value, u = solved
        exact = cost - u[:, None]
        a = np.where(np.abs(exact) <= noise, 0.0, exact)
        priced, anchor, right, left = pricing.price(a)
        threshold = -tol * max(1.0, abs(value))
        new_y, new_v = [], []
        negative = np.flatnonzero(priced < threshold)
        for y in negative:
            y = int(y)
            candidates = [pricing.ray(int(anchor[y]), y, right, left)]
            candidates += pricing.clipped_rays(
                np.unique(np.concatenate([[anchor[y]], np.argsort(a[:, y])[:8]])), y, right, left)
            costs = [float(v @ a[:, y]) for v in candidates]
            best = int(np.argmin(costs))
            if costs[best] < threshold:  # still improving once normalised and truncated
                new_y.append(y)
                new_v.append(candidates[best])
        if not new_y:
            # bound (K <= 1): Σu + Σ_y min over {v in the cone, 0 <= v <= 1} of a·v. Per column
            # two lower bounds on that box minimum: min(0, scale-free price) (a column with peak
            # K_p <= 1 is K_p·v with v_p = 1) and, for the few columns the scale-free pricing
            # calls negative, the box minimum itself from a small LP.
            per_column = np.minimum(priced, 0.0)
            for y in negative:
                per_column[y] = max(per_column[y], min(0.0, _line_box_minimum(a[:, y], points, epsilon)))
            bound = float(u.sum()) + capped_sum(per_column, cap)
            # dual round-off spreads thinly over all columns; a real improvement the rays miss
            # concentrates on a few: refuse a master when any one column could gain 1e-8
            if (value - bound > ACCEPT_GAP * abs(value) + 1e-12
                    or per_column.min() < -COLUMN_GAP * abs(value) - 1e-12):
                return None  # an improving direction no ray here captures: use the full LP
            # (reduced costs within 1e-9·max|C| of zero were priced as zero: the bound holds up to
            # the master LP's own dual feasibility tolerance, as any LP solver's optimum does)
            matrix = master.matrix()
            true = float((cost * matrix).sum())  # the full rays' value, not the truncated master's
            if true - bound > ACCEPT_GAP * abs(true):
                bound = max(bound, _untruncated_bound(master, cost, pricing, cap))
            return ContextSolution(matrix, true, min(bound, true), rounds, len(master.outputs))
        master.add(new_y, new_v)
    return None


def _untruncated_bound(master: RayMaster, cost: np.ndarray, pricing: LinePricing, cap: float):
    """Σu + capped_sum(min(0, price(C − u))), a bound for any u, priced exactly at the duals of
    the master's basis recomputed with the full rays (Bᵀu = c_B): the master's own duals say
    nothing when the optimum is below TRUNCATE (two points at ε = 50: 1/(1 + e^50))."""
    status = master.h.getBasis().col_status
    basic = [t for t, s in enumerate(status) if s == highspy.HighsBasisStatus.kBasic]
    if master.symmetry.order > 1 or len(basic) != master.n:
        return -np.inf
    rays = np.column_stack([master.rays[t] for t in basic])
    try:
        u = np.linalg.solve(rays.T, [cost[:, master.outputs[t]] @ master.rays[t] for t in basic])
    except np.linalg.LinAlgError:
        return -np.inf
    bound = float(u.sum()) + capped_sum(np.minimum(pricing.price(cost - u[:, None])[0], 0.0), cap)
    return bound if np.isfinite(bound) else -np.inf


@register_special_solver
def metric_line_by_rays(problem, limits=None):
    """Special solver: one ε·d-privacy notion with |x − x'| on 1-D points (the ``absolute``,
    ``euclidean`` or ``manhattan`` metric) and an expected-loss objective (per context)."""
    if len(problem.privacy) != 1 or type(problem.privacy[0]) is not MetricPrivacy:
        return None
    notion = problem.privacy[0]
    points = notion.domain.points
    if not on_a_line(notion.metric.kind, points):
        return None
    objective = problem.objective
    if not isinstance(objective, ExpectedLoss):
        return None
    order = np.argsort(points[:, 0], kind="stable")
    sorted_points = points[order, 0]

    def solve_one(key, cost):
        found = solve_line(cost[order], sorted_points, notion.epsilon)
        if found is not None:
            found.matrix[order] = found.matrix.copy()
        return found

    return solve_contexts(problem, solve_one, "HiGHS Dantzig-Wolfe (line rays)")


#: pricing leaves out the pairs with ε·d above this: a larger cone, so still a valid bound, and
#: pairs that far apart are nearly implied by chains of nearer ones; coefficients up to e^20
#: made the simplex return non-optimal points and duals whose proven bound lagged its objective
#: by 3e-6 (20 × 20 grid)
PRICING_MAX_EXPONENT = 12.0


class ConePricing:
    """Pricing over the d-privacy cone of any metric, box-normalised:

        min Σ_x a_x v_x  s.t.  v_x <= e^{ε d(x,x')} v_x' (pairs in S),  0 <= v <= 1.

    One HiGHS model serves every column (only the costs change, so each solve restarts from the
    previous basis). S starts with the pairs closest together and grows by the pairs that priced
    rays violate; since fewer pairs make a larger cone, every value is a lower bound on the
    exact box minimum. The value reported is not the solver's objective but the bound its row
    duals prove (:func:`proven_box_minimum`), so the Lagrangian bound Σu + Σ_y min(0, value_y)
    is rigorous throughout. Pairs whose coefficient would exceed e^PRICING_MAX_EXPONENT are never
    put into the model."""

    def __init__(self, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], epsilon: float,
                 initial: float):
        i, j = pairs
        d = distances[i, j]
        usable = epsilon * d <= PRICING_MAX_EXPONENT
        self.i, self.j, self.d = i[usable], j[usable], d[usable]
        self.coef = np.exp(epsilon * self.d)
        self.active = np.zeros(self.i.size, dtype=bool)
        self.rows = np.array([], dtype=np.int64)  # the active pairs, in the model's row order
        n = distances.shape[0]
        h = quiet_model(warm=True)  # each solve restarts from the previous basis; tight duals
        h.addCols(n, np.zeros(n), np.zeros(n), np.ones(n), 0, np.zeros(n, dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([]))
        self.h = h
        self.n = n
        self.activate(self.d <= initial)

    def activate(self, mask: np.ndarray) -> int:
        new = np.flatnonzero(mask & ~self.active)
        if new.size:
            k = new.size
            starts = np.arange(0, 2 * k, 2, dtype=np.int32)
            index = np.column_stack([self.i[new], self.j[new]]).ravel().astype(np.int32)
            values = np.column_stack([np.ones(k), -self.coef[new]]).ravel()
            self.h.addRows(k, np.full(k, -INF), np.zeros(k), 2 * k, starts, index, values)
            self.active[new] = True
            self.rows = np.concatenate([self.rows, new])
        return int(new.size)

    def price(self, a: np.ndarray) -> tuple[float, np.ndarray]:
        """(a rigorous lower bound on the box minimum, the solver's minimiser)."""
        self.h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), a)
        run_to_optimum(self.h)
        v = np.clip(np.asarray(self.h.getSolution().col_value), 0.0, 1.0)
        p = self.rows
        return proven_box_minimum(self.h, a, self.i[p], self.j[p], self.coef[p]), v

    def violated(self, v: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """Pairs (not yet active) whose ratio constraint v violates."""
        return (v[self.i] > self.coef * v[self.j] * (1 + tol) + 1e-15) & ~self.active


def envelope_ray(v: np.ndarray, distances: np.ndarray, epsilon: float) -> np.ndarray:
    """Smallest vector >= v in the exact cone: max_z v_z e^{−ε d(x, z)}, peak 1."""
    with np.errstate(divide="ignore"):
        logv = np.log(np.maximum(v, 0.0))
    out = np.exp((logv[None, :] - epsilon * distances).max(axis=1))
    out /= out.max()
    return out


def _pool_rays(pool: list[np.ndarray], a: np.ndarray, columns: np.ndarray, threshold: float, used: set):
    """For each output of ``columns``, the pooled ray with the most negative reduced cost, if it
    prices out and that output does not have it yet (``used`` holds (output, ray index) pairs)."""
    if not pool:
        return [], []
    rays = np.vstack(pool)
    reduced = rays @ a[:, columns]  # (rays, columns)
    where = {int(y): c for c, y in enumerate(columns)}
    for y, r in used:
        if y in where:
            reduced[r, where[y]] = np.inf
    best = reduced.argmin(axis=0)
    new_y, new_v = [], []
    for c in np.flatnonzero(reduced[best, np.arange(columns.size)] < threshold):
        y = int(columns[c])
        new_y.append(y)
        new_v.append(rays[best[c]].copy())
        used.add((y, int(best[c])))
    return new_y, new_v


#: weight of the best-bound duals in the smoothed pricing point (Wentges)
SMOOTHING = 0.7
#: gaps above this are "approximate" runs: the pricing cone is tightened only when no ray
#: prices out (tightening adds rows to every later pricing LP: 720 000 pair rows after the
#: first round on a 40 × 40 grid), and the stop is the requested gap itself
EXACT_GAP = 1e-5


def _price_exactly(pricing: ConePricing, a: np.ndarray, columns: np.ndarray, weights: np.ndarray,
                   distances: np.ndarray, epsilon: float, threshold: float, cap: float):
    """Price the outputs ``columns`` under reduced costs ``a`` (each standing for ``weights``
    outputs, its orbit): the envelope rays of the priced vectors that price out, the capped
    Lagrangian term, and the pairs the priced vectors violate (a mask for :meth:`activate`)."""
    prices = np.zeros(columns.size)
    violated = np.zeros(pricing.i.size, dtype=bool)
    rays = []
    for c, y in enumerate(columns):
        prices[c], v = pricing.price(a[:, y])
        if v @ a[:, y] < threshold:  # the minimiser prices out (the bound may sit a little lower)
            violated |= pricing.violated(v)
            ray = envelope_ray(v, distances, epsilon)
            if ray @ a[:, y] < threshold:
                rays.append((int(y), ray))
    return rays, capped_sum(np.repeat(prices, weights), cap), violated


def solve_metric(cost: np.ndarray, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                 epsilon: float, *, gap: float = 1e-9, max_rounds: int = 200, symmetry: Symmetry | None = None,
                 progress=None) -> ContextSolution | None:
    """ε·d-private design for any metric by rays: peaked rays e^{−εd(·,z)} seed the master, box-
    normalised cone pricing (:class:`ConePricing`) adds rays until the Lagrangian bound is within
    ``gap`` (relative) of the master value. Rays are closed under the exact envelope before they
    enter the master, so every master solution is exactly private. With a ``symmetry`` group of
    the problem (:func:`symmetry.find`), the master keeps one row per input orbit and pricing
    visits one output per orbit (the duals are symmetric, so the others price the same)."""
    n, m = cost.shape
    symmetry = symmetry or trivial(n)
    master = RayMaster(cost, symmetry)
    if symmetry.order > 1:  # outputs = inputs: one output per orbit, standing for its orbit
        columns, weights = symmetry.representatives, symmetry.sizes
    else:
        columns, weights = np.arange(m), np.ones(m, dtype=int)
    peaked = np.exp(-epsilon * distances)
    best = np.argmin(peaked.T @ cost, axis=1)
    seeds = symmetry.representatives  # the other peaks are their images
    master.add([int(best[z]) for z in seeds], [peaked[:, z].copy() for z in seeds])
    master.add([int(np.argmin(cost.sum(axis=0)))], [np.ones(n)])
    nearest = np.sort(distances + np.diag(np.full(n, np.inf)), axis=1)[:, 0].max()
    exact = gap <= EXACT_GAP
    pricing = ConePricing(distances, pairs, epsilon,
                          initial=(INITIAL_RADIUS if exact else APPROXIMATE_RADIUS) * nearest)
    bound = -np.inf
    cap = peak_cap(radius(distances), epsilon)
    smooth = cap < m
    pool: list[np.ndarray] = []
    used: set[tuple[int, int]] = set()
    centre = None
    noise = 1e-9 * float(np.abs(cost).max())  # the master's dual round-off
    previous = None
    for rounds in range(1, max_rounds + 1):
        solved = master.solve()
        if solved is None:
            return None
        value, u = solved
        a = cost - u[:, None]
        threshold = -max(gap * abs(value) / max(m, 1), noise)
        # cheap rays first (every ray priced so far, tried on every output), as long as they
        # keep lowering the master value; otherwise exact pricing
        stalled = previous is not None and value > previous - noise
        previous = value
        new_y, new_v = ([], []) if stalled else _pool_rays(pool, a, columns, threshold, used)
        if not new_y:  # exact (box-normalised) pricing: new rays and a rigorous bound
            # Wentges smoothing: the master's duals swing wildly while it is degenerate, so price
            # at a point between them and the duals of the best bound so far (any duals give a
            # valid Lagrangian bound); keep a ray only if it prices out at the master's duals,
            # and price at the master's own duals when the smoothed point yields none. Only when
            # the peak cap binds (e^{εR} < |Y|: few columns carry weight, the degenerate case);
            # elsewhere it slows convergence (10 × 10 grid, ε = 1: 25 s against 14.5 s)
            violated = np.zeros(pricing.i.size, dtype=bool)
            for alpha in ((SMOOTHING, 0.0) if centre is not None and smooth else (0.0,)):
                point = u if alpha == 0.0 else alpha * centre + (1.0 - alpha) * u
                rays, lagrangian, broken = _price_exactly(pricing, cost - point[:, None], columns, weights,
                                                          distances, epsilon, threshold, cap)
                lagrangian += float(point.sum())
                violated |= broken
                if lagrangian > bound:
                    bound, centre = lagrangian, point.copy()
                elif centre is None:
                    centre = point.copy()
                for y, ray in rays:
                    if ray @ a[:, y] < threshold:
                        new_y.append(y)
                        new_v.append(ray)
                if new_y:
                    break
            tightened = pricing.activate(violated) if exact or not new_y else 0
            used.update((y, len(pool) + t) for t, y in enumerate(new_y))
            pool.extend(new_v)
        if progress is not None:
            progress(rounds, value, bound)
        if (value - bound) <= gap * max(abs(value), 1e-300):
            break
        if not new_y:  # exact pricing ran and found nothing
            if tightened:
                continue  # but its cone shrank (pairs the priced rays violated): price again
            break
        master.add(new_y, new_v)
    if not np.isfinite(bound):
        return None
    return ContextSolution(master.matrix(), value, min(bound, value), rounds, len(master.outputs))


#: below this many inputs the plain LP is as fast and the decomposition buys nothing
GENERAL_MIN_INPUTS = 30
#: general metrics: the LP with lazy pair rows (:mod:`lazy_pairs`) takes the designs with fewer
#: entries of K than this and ε·radius below LAZY_BELOW_EPSILON_RADIUS, where few columns carry
#: weight and the ray master tails off (measured on 85 airports: ε·R = 2.2, rays 110 s without
#: closing the gap, lazy rows 53 s exact; ε·R = 6.1, rays 37 s, lazy rows 93 s)
RAYS_FROM_ENTRIES = 40_000
LAZY_BELOW_EPSILON_RADIUS = 5.0


def prefers_lazy_pairs(n: int, m: int, epsilon: float, distances: np.ndarray) -> bool:
    """Whether a general-metric design goes to the lazy-pairs LP rather than to rays."""
    return n * m < RAYS_FROM_ENTRIES and epsilon * radius(distances) < LAZY_BELOW_EPSILON_RADIUS


@register_special_solver
def metric_by_rays(problem, limits=None):
    """Special solver: one ε·d-privacy notion over any other metric with an expected-loss
    objective, from GENERAL_MIN_INPUTS values, or fewer when some e^{εd} exceeds e^20 (the LP's
    chains resolve entries only to 1e-15; rays are exact) and the rays close the gap. Stops when
    the rigorous Lagrangian bound is within the problem's gap tolerance."""
    if len(problem.privacy) != 1 or type(problem.privacy[0]) is not MetricPrivacy:
        return None
    notion, points = problem.privacy[0], problem.privacy[0].domain.points
    small = len(problem.inputs) < GENERAL_MIN_INPUTS
    steep = float(np.max(notion.epsilon * notion.d, initial=0.0)) > MAX_LOG_COEFFICIENT
    if on_a_line(notion.metric.kind, points) or not isinstance(problem.objective, ExpectedLoss) or (
            small and not steep):
        return None  # the line has its own exact pricing; small problems take the plain LP
    start = time.perf_counter()
    distances = notion.metric.distances(notion.domain)
    if not small and prefers_lazy_pairs(len(problem.inputs), len(problem.outputs), notion.epsilon,
                                        distances):
        return None  # mechdesign.lazy_pairs
    pairs, tolerance = (notion.i, notion.j), problem.gap_tolerance
    # exact runs aim below the tolerance (the certificate re-measures the value); approximate
    # ones (a tolerance of 1e-4 and up) stop as soon as the bound is within 90 % of it
    gap = 0.9 * tolerance if tolerance > 10 * EXACT_GAP else max(min(tolerance / 10, 1e-6), 1e-9)

    def solve_one(key, cost):
        symmetry = find(points, distances, cost)
        return solve_metric(cost, distances, pairs, notion.epsilon, gap=gap, symmetry=symmetry)

    found = solve_contexts(problem, solve_one, "HiGHS Dantzig-Wolfe (cone rays)",
                           time.perf_counter() - start)
    if found is not None and small and relative_gap(
            problem.objective.value(found[0]), found[1]["objective"], problem.objective_scale()) > tolerance:
        return None  # a small problem: the plain LP (whose result is certified the same way)
    return found
