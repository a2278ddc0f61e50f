"""Dantzig–Wolfe decomposition for d-privacy over any metric: exact optima over cone rays.

The master LP over rays of the column cone Γ = {v >= 0 : v_x <= e^{ε d(x, x')} v_x'} and its
Lagrangian bound are in :mod:`ray_master`; points on a line have their own exact pricing
(:mod:`line_rays`). Here pricing for any other metric (grids, 2-D points, haversine, graphs) is
an LP over the box-normalised cone (:class:`ConePricing`) whose pair rows are added as priced
vectors violate them; rays are closed under the exact envelope before they enter the master, so
every master solution is exactly private.
"""

from __future__ import annotations

import time

import numpy as np

from .highs_model import INF, quiet_model, run_to_optimum
from .line_rays import LinePricing, metric_line_by_rays, solve_line  # noqa: F401  (registered first)
from .metrics import on_a_line
from .objectives import ExpectedLoss
from .privacy.base import MAX_LOG_COEFFICIENT
from .privacy.metric import MetricPrivacy
from .problem import ContextSolution, register_special_solver, relative_gap, solve_contexts
from .ray_master import (ACCEPT_GAP, TRUNCATE, RayMaster, capped_sum, peak_cap,  # noqa: F401
                         proven_box_minimum, radius)
from .symmetry import Symmetry, find, trivial

INITIAL_RADIUS = 3.0
#: approximate runs (gap above EXACT_GAP) never tighten the cone while rays still price out, so
#: they start from a wider one: on a lattice the pairs within 5 spacings span directions at most
#: 14° apart, so chains of them stretch distances by at most 1/cos 7° = 1.0075 (radius 3: 1.027)
APPROXIMATE_RADIUS = 5.0


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
