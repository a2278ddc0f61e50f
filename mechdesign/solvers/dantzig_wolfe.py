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
from dataclasses import dataclass

import numpy as np

from mechdesign.core.limits import relative_gap
from mechdesign.privacy.base import MAX_LOG_COEFFICIENT
from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.highs_model import (
    INF,
    SolverDeclined,
    give_time,
    quiet_model,
    run_to_optimum,
)
from mechdesign.solvers.lazy_pairs import repairer, solve_lazily
from mechdesign.solvers.predicates import (
    GENERAL_MIN_INPUTS,
    LAZY_MAX_ENTRIES,
    metric_off_the_line,
)
from mechdesign.solvers.ray_master import (
    CHAIN_MAX_EXPONENT,
    RayMaster,
    capped_sum,
    peak_cap,
    polished_box_minimum,
    radius,
)
from mechdesign.solvers.registry import SpecialSolver
from mechdesign.solvers.symmetry import Symmetry, find, trivial

INITIAL_RADIUS = 3.0
#: approximate runs (gap above EXACT_GAP) never tighten the cone while rays still price out, so
#: they start from a wider one: on a lattice the pairs within 5 spacings span directions at most
#: 14° apart, so chains of them stretch distances by at most 1/cos 7° = 1.0075 (radius 3: 1.027)
APPROXIMATE_RADIUS = 5.0


#: a pair row's coefficient e^{εd} never exceeds e^this (coefficients up to e^20 made the simplex
#: return non-optimal points and duals whose proven bound lagged its objective by 3e-6 on a
#: 20 × 20 grid); a farther pair enters as a chain of rows through auxiliary entries
PRICING_MAX_EXPONENT = 12.0
#: at most this many violated pairs per priced column enter the cone (the most violated first)
PAIRS_PER_COLUMN = 200


class ConePricing:
    """Pricing over the d-privacy cone of any metric, box-normalised:

        min Σ_x a_x v_x  s.t.  v_x <= e^{ε d(x,x')} v_x' (pairs in S),  0 <= v <= 1.

    One HiGHS model serves every column (only the costs change, so each solve restarts from the
    previous basis). S starts with the pairs closest together and grows by the pairs that priced
    rays violate; since fewer pairs make a larger cone, every value is a lower bound on the
    exact box minimum. The value reported is not the solver's objective but the bound its row
    duals prove (:func:`~mechdesign.solvers.ray_master.proven_box_minimum`), so the Lagrangian
    bound Σu + Σ_y min(0, value_y) is rigorous throughout.

    A pair with εd above PRICING_MAX_EXPONENT = c enters as a chain v_x <= e^{εd/k} t_1,
    t_1 <= e^{εd/k} t_2, …, t_{k−1} <= e^{εd/k} v_x' with k = ⌈εd/c⌉ and auxiliary entries
    0 <= t <= 1 (cost 0): exactly the pair's constraint (t_s = e^{−sεd/k} v_x is feasible when it
    holds, and the chain implies it), with no coefficient above e^c. Pairs beyond
    e^CHAIN_MAX_EXPONENT are left out (a larger cone: still a valid bound). Leaving far pairs out
    instead leaves a larger cone whose minimisers live on entries below e^{−c}: at ε = 4 on a
    10 × 10 grid its bound stayed 1.8e-4 (relative) below a master no ray could improve."""

    def __init__(self, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], epsilon: float,
                 initial: float):
        i, j = pairs
        d = distances[i, j]
        usable = epsilon * d <= CHAIN_MAX_EXPONENT
        self.i, self.j, self.d = i[usable], j[usable], d[usable]
        with np.errstate(over="ignore"):
            self.coef = np.exp(epsilon * self.d)
        self.epsilon = epsilon
        self.active = np.zeros(self.i.size, dtype=bool)
        n = distances.shape[0]
        # the model's rows (variable indices and coefficients, in row order) and its width
        self.ri = self.rj = np.array([], dtype=np.int64)
        self.rcoef = np.array([])
        self.width = n
        h = quiet_model(warm=True)  # each solve restarts from the previous basis; tight duals
        h.addCols(n, np.zeros(n), np.zeros(n), np.ones(n), 0, np.zeros(n, dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([]))
        self.h = h
        self.n = n
        self.activate(self.d <= initial)

    def activate(self, mask: np.ndarray) -> int:
        """Put the pairs of ``mask`` that are not in the model yet into it; how many."""
        new = np.flatnonzero(mask & ~self.active)
        if not new.size:
            return 0
        links = np.maximum(np.ceil(self.epsilon * self.d[new] / PRICING_MAX_EXPONENT), 1).astype(np.int64)
        aux = int((links - 1).sum())
        if aux:
            self.h.addCols(aux, np.zeros(aux), np.zeros(aux), np.ones(aux), 0, np.zeros(aux, dtype=np.int32),
                           np.array([], dtype=np.int32), np.array([]))
        ri, rj, rc, t = [], [], [], self.width
        for p, k in zip(new, links):
            chain = [int(self.i[p])] + list(range(t, t + k - 1)) + [int(self.j[p])]
            t += k - 1
            ri += chain[:-1]
            rj += chain[1:]
            rc += [float(np.exp(self.epsilon * self.d[p] / k))] * k
        self.width = t
        ri, rj, rc = np.array(ri), np.array(rj), np.array(rc)
        k = ri.size
        self.h.addRows(k, np.full(k, -INF), np.zeros(k), 2 * k, np.arange(0, 2 * k, 2, dtype=np.int32),
                       np.column_stack([ri, rj]).ravel().astype(np.int32), np.column_stack([np.ones(k), -rc]).ravel())
        self.ri, self.rj, self.rcoef = np.concatenate([self.ri, ri]), np.concatenate([self.rj, rj]), np.concatenate([self.rcoef, rc])
        self.active[new] = True
        return int(new.size)

    def price(self, a: np.ndarray, limits=None) -> tuple[float, np.ndarray]:
        """(a rigorous lower bound on the box minimum, the solver's minimiser)."""
        self.h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), a)
        give_time(self.h, limits)
        run_to_optimum(self.h)
        v = np.clip(np.asarray(self.h.getSolution().col_value)[:self.n], 0.0, 1.0)
        full = np.concatenate([a, np.zeros(self.width - self.n)])
        return polished_box_minimum(self.h, full, self.ri, self.rj, self.rcoef, float(v @ a)), v

    def violated(self, v: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """Pairs (not yet active) whose ratio constraint v violates, at most PAIRS_PER_COLUMN
        of them (the largest ratio v_i / (e^{εd} v_j) first)."""
        with np.errstate(over="ignore", invalid="ignore"):
            bound = self.coef * v[self.j]
            mask = (v[self.i] > bound * (1 + tol) + 1e-15) & ~self.active
            found = np.flatnonzero(mask)
            if found.size > PAIRS_PER_COLUMN:
                excess = v[self.i[found]] - bound[found]
                mask[:] = False
                mask[found[np.argpartition(-excess, PAIRS_PER_COLUMN - 1)[:PAIRS_PER_COLUMN]]] = True
        return mask


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
                   distances: np.ndarray, epsilon: float, threshold: float, cap: float, limits=None):
    """Price the outputs ``columns`` under reduced costs ``a`` (each standing for ``weights``
    outputs, its orbit): the envelope rays of the priced vectors that price out, the capped
    Lagrangian term, and the pairs the priced vectors violate (a mask for :meth:`activate`)."""
    prices = np.zeros(columns.size)
    violated = np.zeros(pricing.i.size, dtype=bool)
    rays = []
    for c, y in enumerate(columns):
        if limits is not None and limits.expired():  # past the deadline: the box's own bound
            prices[c] = float(np.minimum(a[:, y], 0.0).sum())
            continue
        prices[c], v = pricing.price(a[:, y], limits)
        if v @ a[:, y] < threshold:  # the minimiser prices out (the bound may sit a little lower)
            violated |= pricing.violated(v)
            ray = envelope_ray(v, distances, epsilon)
            if ray @ a[:, y] < threshold:
                rays.append((int(y), ray))
    return rays, capped_sum(np.repeat(prices, weights), cap), violated


class RaysStalled(SolverDeclined):
    """The ray master cannot close its gap (no improving ray while the bound lags, or the gap
    stopped shrinking): ``solution`` is its best design with the bound proven so far."""

    def __init__(self, reason: str, solution: ContextSolution):
        super().__init__(reason)
        self.solution = solution


#: the ray master has stalled when its gap has not halved over this many exact pricing rounds
STALL_ROUNDS = 25


@dataclass
class _Pricer:
    """What exact pricing keeps between rounds: the cone, the smoothing centre and best bound."""

    pricing: ConePricing
    columns: np.ndarray
    weights: np.ndarray
    distances: np.ndarray
    epsilon: float
    cap: float
    smooth: bool
    exact: bool
    bound: float = -np.inf
    centre: np.ndarray | None = None

    def round(self, cost: np.ndarray, u: np.ndarray, threshold: float, limits=None):
        """One exact (box-normalised) pricing round at the master's duals ``u``: the improving
        rays and whether the cone was tightened; raises the best bound.

        Wentges smoothing: the master's duals swing wildly while it is degenerate, so price at a
        point between them and the duals of the best bound so far (any duals give a valid
        Lagrangian bound); keep a ray only if it prices out at the master's duals, and price at
        the master's own duals when the smoothed point yields none. Only when the peak cap binds
        (e^{εR} < |Y|: few columns carry weight, the degenerate case); elsewhere it slows
        convergence (10 × 10 grid, ε = 1: 25 s against 14.5 s)."""
        a = cost - u[:, None]
        new_y, new_v = [], []
        violated = np.zeros(self.pricing.i.size, dtype=bool)
        for alpha in ((SMOOTHING, 0.0) if self.centre is not None and self.smooth else (0.0,)):
            point = u if alpha == 0.0 else alpha * self.centre + (1.0 - alpha) * u
            rays, lagrangian, broken = _price_exactly(self.pricing, cost - point[:, None], self.columns,
                                                      self.weights, self.distances, self.epsilon, threshold,
                                                      self.cap, limits)
            lagrangian += float(point.sum())
            violated |= broken
            if lagrangian > self.bound:
                self.bound, self.centre = lagrangian, point.copy()
            elif self.centre is None:
                self.centre = point.copy()
            for y, ray in rays:
                if ray @ a[:, y] < threshold:
                    new_y.append(y)
                    new_v.append(ray)
            if new_y:
                break
        tightened = self.pricing.activate(violated) if self.exact or not new_y else 0
        return new_y, new_v, tightened


def _seeded_master(cost: np.ndarray, distances: np.ndarray, epsilon: float, symmetry: Symmetry) -> RayMaster:
    """The rays peaked at every point (one per input orbit), each on its cheapest output, and
    one constant column."""
    n = cost.shape[0]
    master = RayMaster(cost, symmetry)
    peaked = np.exp(-epsilon * distances)
    best = np.argmin(peaked.T @ cost, axis=1)
    seeds = symmetry.representatives  # the other peaks are their images
    master.add([int(best[z]) for z in seeds], [peaked[:, z].copy() for z in seeds])
    master.add([int(np.argmin(cost.sum(axis=0)))], [np.ones(n)])
    return master


def _pricer(cost, distances, pairs, epsilon, symmetry: Symmetry, gap: float) -> _Pricer:
    n, m = cost.shape
    if symmetry.order > 1:  # outputs = inputs: one output per orbit, standing for its orbit
        columns, weights = symmetry.representatives, symmetry.sizes
    else:
        columns, weights = np.arange(m), np.ones(m, dtype=int)
    nearest = np.sort(distances + np.diag(np.full(n, np.inf)), axis=1)[:, 0].max()
    exact = gap <= EXACT_GAP
    pricing = ConePricing(distances, pairs, epsilon,
                          initial=(INITIAL_RADIUS if exact else APPROXIMATE_RADIUS) * nearest)
    cap = peak_cap(radius(distances), epsilon)
    return _Pricer(pricing, columns, weights, distances, epsilon, cap, cap < m, exact)


def solve_metric(cost: np.ndarray, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                 epsilon: float, *, gap: float = 1e-9, max_rounds: int = 1000, symmetry: Symmetry | None = None,
                 limits=None, stall: int | None = None) -> ContextSolution:
    """ε·d-private design for any metric by rays: peaked rays e^{−εd(·,z)} seed the master, box-
    normalised cone pricing (:class:`ConePricing`) adds rays until the Lagrangian bound is within
    ``gap`` (relative) of the master value. Rays are closed under the exact envelope before they
    enter the master, so every master solution is exactly private. With a ``symmetry`` group of
    the problem (:func:`symmetry.find`), the master keeps one row per input orbit and pricing
    visits one output per orbit (the duals are symmetric, so the others price the same).

    Each round is reported to ``limits``; when they expire, the master's design is returned with
    the best bound, ``stopped=True``. Raises :class:`RaysStalled` (carrying that design and
    bound) when no ray improves while the gap is open, after ``max_rounds``, or, with ``stall``
    set, when the gap has not halved over the last ``stall`` exact pricing rounds."""
    n, m = cost.shape
    symmetry = symmetry or trivial(n)
    master = _seeded_master(cost, distances, epsilon, symmetry)
    pricer = _pricer(cost, distances, pairs, epsilon, symmetry, gap)
    pool: list[np.ndarray] = []
    used: set[tuple[int, int]] = set()
    noise = 1e-9 * float(np.abs(cost).max())  # the master's dual round-off
    previous, gaps, why, last = None, [], f"no proof within {max_rounds} rounds", None
    for rounds in range(1, max_rounds + 1):
        solved = master.solve(limits)
        if solved is None:
            if last is not None and limits.expired():  # cut short by the deadline
                return ContextSolution(last[0], last[1], min(pricer.bound, last[1]), rounds - 1,
                                       len(master.outputs), True)
            raise SolverDeclined(f"a ray master LP ended without an optimum (round {rounds})")
        value, u = solved
        if limits is not None and limits.time_limit is not None:
            last = (master.matrix(), value)
        a = cost - u[:, None]
        threshold = -max(gap * abs(value) / max(m, 1), noise)
        # cheap rays first (every ray priced so far, tried on every output), as long as they
        # keep lowering the master value; otherwise exact pricing
        stalled = previous is not None and value > previous - noise
        previous = value
        new_y, new_v = ([], []) if stalled else _pool_rays(pool, a, pricer.columns, threshold, used)
        tightened = 0
        if not new_y:  # exact (box-normalised) pricing: new rays and a rigorous bound
            new_y, new_v, tightened = pricer.round(cost, u, threshold, limits)
            used.update((y, len(pool) + t) for t, y in enumerate(new_y))
            pool.extend(new_v)
            gaps.append(relative_gap(value, pricer.bound, scale=0.0))
        bound = pricer.bound
        if limits is not None:
            limits.report(NAME, rounds, value, bound if np.isfinite(bound) else None)
        # relative to |value| alone (scale 0: no floor): a floor at 1e-6 of the objective's scale
        # would stop designs of nearly zero loss before their value is proven to ``gap``
        if relative_gap(value, bound, scale=0.0) <= gap:
            return ContextSolution(master.matrix(), value, min(bound, value), rounds, len(master.outputs))
        if limits is not None and limits.expired():
            return ContextSolution(master.matrix(), value, min(bound, value), rounds, len(master.outputs), True)
        if not new_y and not tightened:  # exact pricing ran and found nothing, its cone is final
            why = "no improving ray while the gap is open"
            break
        if stall and len(gaps) > stall and gaps[-1] > gaps[-1 - stall] / 2:
            why = f"the gap did not halve over {stall} pricing rounds"
            break
        if new_y:
            master.add(new_y, new_v)
    gap_now = relative_gap(value, pricer.bound, scale=0.0)
    raise RaysStalled(f"{why} (round {rounds}, gap {gap_now:.2g})",
                      ContextSolution(master.matrix(), value, min(pricer.bound, value), rounds, len(master.outputs)))


NAME = "HiGHS Dantzig-Wolfe (cone rays)"


def _solve_general(cost, distances, notion, points, gap: float, limits, path: list[str]) -> ContextSolution:
    """One context: rays first; when they stall, the lazy-pairs LP for a design of at most
    LAZY_MAX_ENTRIES entries, otherwise the rays' best design with its proven bound. Each step
    is noted in ``path``."""
    symmetry = find(points, distances, cost)
    try:
        found = solve_metric(cost, distances, (notion.i, notion.j), notion.epsilon, gap=gap,
                             symmetry=symmetry, limits=limits, stall=STALL_ROUNDS)
    except RaysStalled as stalled:
        path.append(f"cone rays: {stalled.reason}")
        if cost.size <= LAZY_MAX_ENTRIES:
            path.append("lazy pairs: the rays stalled and the LP with lazy pair rows is affordable")
            return solve_lazily(cost, (notion.i, notion.j, notion.d), notion.epsilon, limits=limits,
                                incumbent=stalled.solution, repair=repairer(notion))
        path.append("cone rays: best design with its proven bound (too large for the LP)")
        return stalled.solution
    note = "stopped at the time limit" if found.stopped else "gap closed"
    path.append(f"cone rays: {note} after {found.rounds} rounds, {found.columns} columns"
                + (f", symmetry of order {symmetry.order}" if symmetry.order > 1 else ""))
    return found


def _steep(notion) -> bool:
    """Whether some pair's e^{εd} exceeds e^20 (the LP's chains resolve entries only to 1e-15
    there; rays are exact)."""
    return float(np.max(notion.epsilon * notion.d, initial=0.0)) > MAX_LOG_COEFFICIENT


def applies(problem) -> str | None:
    """One ε·d-privacy notion over a metric other than the line's with an expected-loss
    objective, from GENERAL_MIN_INPUTS values, or fewer when the notion is steep."""
    reason = metric_off_the_line(problem)
    if reason is not None:
        return reason
    notion = problem.privacy[0]
    if len(problem.inputs) < GENERAL_MIN_INPUTS and not _steep(notion):
        return f"fewer than {GENERAL_MIN_INPUTS} inputs and no ratio beyond e^20: the plain LP is as fast"
    return None


def metric_by_rays(problem, limits=None):
    """Rays, then lazy pairs when they stall. Stops when the rigorous Lagrangian bound is
    within the problem's gap tolerance; what was run and why is listed in the record's
    ``path``. A small problem whose gap the rays did not close is declined (the plain LP
    finishes it)."""
    notion, points = problem.privacy[0], problem.privacy[0].domain.points
    small = len(problem.inputs) < GENERAL_MIN_INPUTS
    start = time.perf_counter()
    distances = notion.metric.distances(notion.domain)
    tolerance = problem.gap_tolerance
    # exact runs aim below the tolerance (the certificate re-measures the value); approximate
    # ones (a tolerance of 1e-4 and up) stop as soon as the bound is within 90 % of it
    gap = 0.9 * tolerance if tolerance > 10 * EXACT_GAP else max(min(tolerance / 10, 1e-6), 1e-9)
    path: list[str] = []
    found = solve_contexts(problem, lambda key, cost: _solve_general(cost, distances, notion, points, gap,
                                                                     limits, path),
                           NAME, time.perf_counter() - start, limits=limits)
    found[1]["path"] = path
    if any(p.startswith("lazy pairs") for p in path):
        found[1]["name"] = f"{NAME}, then lazy pair constraints"
    if small and relative_gap(
            problem.objective.value(found[0]), found[1]["objective"], problem.objective_scale()) > tolerance:
        raise SolverDeclined("a small problem whose gap the rays did not close (the plain LP finishes it)")
    return found


SOLVER = SpecialSolver(NAME, applies, metric_by_rays)
