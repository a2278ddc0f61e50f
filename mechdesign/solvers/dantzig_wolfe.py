"""Dantzig–Wolfe decomposition for d-privacy over any metric: exact optima over cone rays.

The master LP over rays of the column cone Γ = {v >= 0 : v_x <= e^{ε d(x, x')} v_x'} and its
Lagrangian bound are in :mod:`ray_master`; points on a line have their own exact pricing
(:mod:`line_rays`). Here pricing for any other metric (grids, 2-D points, haversine, graphs) is
an LP over the box-normalised cone (:class:`~mechdesign.solvers.cone_pricing.ConePricing`)
whose pair rows are added as priced vectors violate them; rays are closed under the exact
envelope before they enter the master, so every master solution is exactly private.

The rays' pricing tails off at small ε, so :func:`solve_portfolio` runs them one round at a time
(:class:`RayRounds`) in turns with the block-structured interior point
(:mod:`~mechdesign.solvers.metric_interior`), sharing the best design and bound
(:mod:`~mechdesign.solvers.portfolio`); the lazy-pairs LP takes over when both decline.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from mechdesign.core.limits import relative_gap
from mechdesign.privacy.metric import exponential_weights
from mechdesign.solvers.cone_pricing import ConePricing
from mechdesign.solvers.contexts import ContextSolution, accepted_gap, aimed_gap, solve_contexts
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer, solve_lazily
from mechdesign.solvers.metric_interior import MetricInteriorPoint, iteration_seconds
from mechdesign.solvers.metric_orbits import exact_symmetry
from mechdesign.solvers.portfolio import Turn, Turns, interleave
from mechdesign.solvers.predicates import (
    GENERAL_MIN_INPUTS,
    LAZY_MAX_ENTRIES,
    metric_off_the_line,
    steep,
)
from mechdesign.solvers.ray_master import (
    RayMaster,
    capped_sum,
    peak_cap,
    radius,
)
from mechdesign.solvers.registry import SpecialSolver
from mechdesign.solvers.symmetry import Symmetry, find, trivial
from mechdesign.transport.point_orders import hilbert_order, kd_order

INITIAL_RADIUS = 3.0
#: approximate runs (gap above EXACT_GAP) never tighten the cone while rays still price out, so
#: they start from a wider one: on a lattice the pairs within 5 spacings span directions at most
#: 14° apart, so chains of them stretch distances by at most 1/cos 7° = 1.0075 (radius 3: 1.027)
APPROXIMATE_RADIUS = 5.0


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


#: a pass that cannot end before the deadline stops once its pricing has taken this many times
#: the master's last solve, so that the master is solved again with the rays found so far
PRICING_PER_MASTER = 10.0


def _cannot_finish(limits, begun: float, priced: int, left: int) -> bool:
    """Whether a pass that has priced ``priced`` outputs since ``begun`` would, at that pace,
    still have ``left`` outputs to price at the solve's deadline (a turn's end, which the turns
    give the method again, does not count: rounds cut by turns add up to a pass)."""
    solve_limits = getattr(limits, "outer", limits)  # (a turn's or a race's window: the solve's)
    if solve_limits is None or priced == 0:
        return False
    spent = time.perf_counter() - begun
    return spent / priced * left > solve_limits.remaining()


def _price_exactly(pricing: ConePricing, a: np.ndarray, columns: np.ndarray, weights: np.ndarray,
                   distances: np.ndarray, epsilon: float, threshold: float, cap: float, limits=None,
                   start: int = 0, known: np.ndarray | None = None, master_seconds: float | None = None):
    """Price the outputs ``columns`` under reduced costs ``a`` (each standing for ``weights``
    outputs, its orbit), beginning at position ``start`` and going round: the envelope rays of
    the priced vectors that price out, the capped Lagrangian term, the pairs the priced vectors
    violate (a mask for :meth:`activate`), how many outputs were priced before ``limits``
    expired, every output's proven price, and whether the pass stopped early (below). The
    outputs left unpriced enter the bound with their transfer bound
    (:meth:`ConePricing.transfer_bounds`, which also raises the priced ones' where higher), or
    with ``known[c]`` when that is higher: a price proven earlier and carried to these reduced
    costs (:meth:`_Pricer._carried`), so that rounds cut short add up to a whole pass. A pass
    that did not price every output then raises the lowest prices first to their flow bounds
    (:meth:`ConePricing.flow_bounds`, the box minimum over the full cone's nearest pairs, which
    the transfer bound and the LPs over the active pairs can lie far below), for at most as long
    as it priced, within ``limits``: at the first master's duals of 1,500 airports (Zipf prior,
    ε = 0.5 per 10 km) flow bounds without that cap took the whole ten minutes, and the rays made
    one round where they had made nine.

    With ``master_seconds`` (the master's last solve), a pass that at its own pace would not end
    before the deadline stops early, once it has found a ray and priced for
    :data:`PRICING_PER_MASTER` times that long: it could prove no bound at the deadline anyway,
    and its rays would wait there unused (1,500 airports: one pass takes about ten minutes, and
    the design returned at a ten-minute limit was the first master's).

    Under a solve with a time limit the pass stops pricing when the time the transfer bounds are
    expected to take is all that is left before the deadline
    (:meth:`ConePricing.transfer_reserve`): at 5,000 airports they take 42 s, all after the
    pass. Each pricing LP is given the time up to there, not up to the deadline: the first LP at
    5,000 airports ran for minutes, up to the deadline, and the transfer bounds came after it."""
    prices = np.zeros(columns.size)
    violated = np.zeros(pricing.i.size, dtype=bool)
    rays, priced, stop = [], 0, False
    # the solve's deadline (not a turn's end, which the turns give back) is kept for the
    # transfer bounds every output gets once the pass ends
    outer = getattr(limits, "outer", limits)
    timed = getattr(outer, "time_limit", None) is not None
    reserve = pricing.transfer_reserve(a, columns) if timed else 0.0
    begun = time.perf_counter()
    for c in np.roll(np.arange(columns.size), -start):
        y = columns[c]
        cut = (limits is not None and limits.expired()) or (timed and outer.remaining() <= reserve)
        if stop or cut:  # the box's own bound
            prices[c] = float(np.minimum(a[:, y], 0.0).sum())
            continue
        # (each LP may run until the reserve begins, not until the deadline)
        prices[c], v = pricing.price(a[:, y], Turn(limits, outer.remaining() - reserve) if timed else limits)
        priced += 1
        if v @ a[:, y] < threshold:  # the minimiser prices out (the bound may sit a little lower)
            violated |= pricing.violated(v)
            ray = envelope_ray(v, distances, epsilon)
            if ray @ a[:, y] < threshold:
                rays.append((int(y), ray))
        stop = (master_seconds is not None and bool(rays)
                and time.perf_counter() - begun >= PRICING_PER_MASTER * master_seconds
                and _cannot_finish(limits, begun, priced, columns.size - priced))
    pricing_seconds = time.perf_counter() - begun
    # every output's transfer bound, priced or not (the priced ones' LPs hold only the active
    # pairs, a larger cone); then the prices carried from the last point
    np.maximum(prices, pricing.transfer_bounds(a, columns), out=prices)
    if known is not None:  # (each of the bounds the same box minimum)
        np.maximum(prices, known, out=prices)
    if 0 < priced < columns.size:  # a pass cut short: flow bounds, the lowest prices first, as long as it priced
        lowest = np.argsort(prices, kind="stable")
        window = Turn(limits, pricing_seconds)
        prices[lowest] = np.maximum(prices[lowest], pricing.flow_bounds(a, columns[lowest], window))
    return rays, capped_sum(np.repeat(prices, weights), cap), violated, priced, prices, stop


class RaysStalled(SolverDeclined):
    """The rays (or, in :func:`solve_portfolio`, both methods) cannot close the gap (no
    improving ray while the bound lags, or the gap stopped shrinking): ``solution`` is the best
    design with the bound proven so far, or None."""

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
    #: where the next round's pricing begins: a round cut short by the deadline (a turn's end)
    #: leaves it where it stopped, so that short turns go round every output instead of
    #: pricing the same first ones again and again
    cursor: int = 0
    #: the point the last round priced at and the prices it proved per output: the next round
    #: counts them, less what the change of point can take (:meth:`_carried`), for the outputs
    #: it does not reach, so that short turns add up to a whole pass and a whole bound (4,900
    #: grid locations, one pass about 10 minutes: rounds cut at 3 to 250 s each proved nothing
    #: better than the box minima of the outputs they did not reach)
    priced_at: np.ndarray | None = None
    proven: np.ndarray | None = None
    #: whether the last round's pass stopped early to solve the master again
    #: (:data:`PRICING_PER_MASTER`): such rounds do not count towards the stall rule
    stopped_early: bool = False
    #: the rounds that priced every output in one pass: after one, passes are never stopped early,
    #: since passes cut at the deadline still add to its bound through the prices it carried (a
    #: 70 × 70 grid: 2.98 % after the first pass of 714 s, 2.75 % with the second cut at 900 s)
    whole_passes: int = 0

    def _carried(self, point: np.ndarray) -> np.ndarray | None:
        """The prices proven at the last point, made valid at ``point``: for 0 <= v <= 1,
        (C − point)·v >= (C − last)·v − Σ_x max(point − last, 0)_x, so each box minimum falls
        by at most that sum (rounded up). A master re-solved without new columns gives the same
        duals, or duals a round-off apart; after new columns the sum is large and the prices
        carried count for little."""
        if self.priced_at is None or self.proven is None:
            return None
        shift = math.fsum(np.maximum(point - self.priced_at, 0.0)) * (1 + 1e-12)
        return self.proven - shift - 1e-15 * np.abs(self.proven)

    def round(self, cost: np.ndarray, u: np.ndarray, threshold: float, limits=None,
              master_seconds: float | None = None):
        """One exact (box-normalised) pricing round at the master's duals ``u``: the improving
        rays and whether the cone was tightened; raises the best bound.

        Wentges smoothing: the master's duals swing wildly while it is degenerate, so price at a
        point between them and the duals of the best bound so far (any duals give a valid
        Lagrangian bound); keep a ray only if it prices out at the master's duals, and price at
        the master's own duals when the smoothed point yields none. Only when the peak cap binds
        (e^{εR} < |Y|: few columns carry weight, the degenerate case); elsewhere it slows
        convergence (10 × 10 grid, ε = 1: 25 s against 14.5 s).

        Until one round has priced every output, a pass that cannot end before the solve's
        deadline stops early (``master_seconds``: :func:`_price_exactly`)."""
        a = cost - u[:, None]
        new_y, new_v = [], []
        violated = np.zeros(self.pricing.i.size, dtype=bool)
        for alpha in ((SMOOTHING, 0.0) if self.centre is not None and self.smooth else (0.0,)):
            point = u if alpha == 0.0 else alpha * self.centre + (1.0 - alpha) * u
            known = self._carried(point)
            rays, lagrangian, broken, priced, prices, self.stopped_early = _price_exactly(
                self.pricing, cost - point[:, None], self.columns, self.weights, self.distances, self.epsilon,
                threshold, self.cap, limits, self.cursor, known, None if self.whole_passes else master_seconds)
            self.whole_passes += priced == self.columns.size
            self.cursor = (self.cursor + priced) % self.columns.size
            self.priced_at, self.proven = point.copy(), prices
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
    """The rays peaked at every point (one per input orbit), each on its cheapest output; the
    columns of the exponential mechanism (report z with probability ∝ e^{−ε d(x, z)/2}), each
    on its cheapest output, so that the first master holds that mechanism with the best remap
    of its reports; and one constant column.

    The peaked rays e^{−ε d(·, z)} are the steepest the cone has: where ε times the distance to
    the nearest points is large they are narrow, the rows sum to 1 only through the constant
    column, and the first master's design is poor (1,500 airports at ε = 1 per 10 km: 262.7 km
    of expected loss, against 32.8 km for the remapped exponential mechanism)."""
    n = cost.shape[0]
    master = RayMaster(cost, symmetry)
    seeds = symmetry.representatives  # the other columns are their images
    mechanism = exponential_weights(distances, epsilon)
    for rays in (np.exp(-epsilon * distances), mechanism / mechanism.max(axis=0, keepdims=True)):  # peak 1
        best = np.argmin(rays.T @ cost, axis=1)
        master.add([int(best[z]) for z in seeds], [rays[:, z].copy() for z in seeds])
    master.add([int(np.argmin(cost.sum(axis=0)))], [np.ones(n)])
    return master


def _pricer(cost, distances, pairs, epsilon, symmetry: Symmetry, gap: float, order=None) -> _Pricer:
    n, m = cost.shape
    if symmetry.order > 1:  # outputs = inputs: one output per orbit, standing for its orbit
        columns, weights = symmetry.representatives, symmetry.sizes
    else:
        columns, weights = (np.arange(m) if order is None else order), np.ones(m, dtype=int)
    nearest = np.sort(distances + np.diag(np.full(n, np.inf)), axis=1)[:, 0].max()
    exact = gap <= EXACT_GAP
    i, j = pairs
    pricing = ConePricing(n, (i, j, distances[i, j]), epsilon,
                          initial=(INITIAL_RADIUS if exact else APPROXIMATE_RADIUS) * nearest)
    cap = peak_cap(radius(distances), epsilon)
    return _Pricer(pricing, columns, weights, distances, epsilon, cap, cap < m, exact)


class RayRounds:
    """Rays one master round at a time (:meth:`advance`), so that a caller can interleave them
    with another method (see :func:`solve_metric` for the method): :attr:`value` and
    :meth:`design` are the last master's, :attr:`bound` the best bound proven so far (also
    :attr:`latest_bound`: the rays' bound only grows), :attr:`done` whether they are within the
    gap."""

    name = "cone rays"
    #: the turns read progress only below a relative gap of 1: the first masters' bounds lie
    #: orders of magnitude below the value and leap up, which predicts nothing
    gap_ceiling = 1.0

    def __init__(self, cost: np.ndarray, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                 epsilon: float, *, gap: float = 1e-9, max_rounds: int = 1000, symmetry: Symmetry | None = None,
                 stall: int | None = None, order: np.ndarray | None = None):
        n, m = cost.shape
        self.cost, self.gap, self.max_rounds, self.stall = cost, gap, max_rounds, stall
        self.symmetry = symmetry or trivial(n)
        self.master = _seeded_master(cost, distances, epsilon, self.symmetry)
        self.pricer = _pricer(cost, distances, pairs, epsilon, self.symmetry, gap, order)
        self.pool: list[np.ndarray] = []
        self.used: set[tuple[int, int]] = set()
        self.noise = 1e-9 * float(np.abs(cost).max())  # the master's dual round-off
        self.previous, self.gaps = None, []
        self.rounds, self.done = 0, False
        self.value, self._design = np.inf, None

    @property
    def bound(self) -> float:
        return self.pricer.bound

    @property
    def latest_bound(self) -> float:
        return self.pricer.bound

    @property
    def columns(self) -> int:
        return len(self.master.outputs)

    def design(self) -> np.ndarray:
        return self._design

    def result(self, stopped: bool = False) -> ContextSolution:
        return ContextSolution(self._design, self.value, min(self.bound, self.value), self.rounds, self.columns,
                               stopped)

    def _stalled(self, why: str) -> RaysStalled:
        gap_now = relative_gap(self.value, self.bound, scale=0.0)
        return RaysStalled(f"{why} (round {self.rounds}, gap {gap_now:.2g})", self.result())

    def advance(self, limits=None) -> bool:
        """One round: the master, then cheap pooled rays or exact pricing. Returns False when
        the master was cut short by ``limits`` (nothing changed); raises :class:`RaysStalled`
        when no ray improves while the gap is open, after ``max_rounds``, or (with ``stall``)
        when the gap has not halved over the last ``stall`` exact pricing rounds, and
        :class:`SolverDeclined` when a master ends without an optimum before the deadline."""
        if self.rounds >= self.max_rounds:
            raise self._stalled(f"no proof within {self.max_rounds} rounds")
        solving = time.perf_counter()
        solved = self.master.solve(limits)
        master_seconds = time.perf_counter() - solving
        if solved is None:
            if limits is not None and limits.expired():
                return False
            raise SolverDeclined(f"a ray master LP ended without an optimum (round {self.rounds + 1})")
        self.rounds += 1
        value, u = solved
        # the value of the design returned, from the full rays: the master's drops ray entries
        # below 1e-12 of their peak, which at large ε can be all of the loss (36 grid points at
        # ε = 28: a master value of 0 beside a design's 1.5e-12, "proven" by a bound of 0)
        self._design = self.master.matrix()
        self.value = max(value, float((self.cost * self._design).sum()))
        m = self.cost.shape[1]
        a = self.cost - u[:, None]
        threshold = -max(self.gap * abs(value) / max(m, 1), self.noise)
        # cheap rays first (every ray priced so far, tried on every output), as long as they
        # keep lowering the master value; otherwise exact pricing
        stalled = self.previous is not None and value > self.previous - self.noise
        self.previous = value
        pricer = self.pricer
        new_y, new_v = ([], []) if stalled else _pool_rays(self.pool, a, pricer.columns, threshold, self.used)
        tightened = 0
        if not new_y:  # exact (box-normalised) pricing: new rays and a rigorous bound
            new_y, new_v, tightened = pricer.round(self.cost, u, threshold, limits, master_seconds)
            self.used.update((y, len(self.pool) + t) for t, y in enumerate(new_y))
            self.pool.extend(new_v)
            if not pricer.stopped_early:
                self.gaps.append(relative_gap(self.value, pricer.bound, scale=0.0))
        # relative to |value| alone (scale 0: no floor): a floor at 1e-6 of the objective's scale
        # would stop designs of nearly zero loss before their value is proven to ``gap``
        if relative_gap(self.value, pricer.bound, scale=0.0) <= self.gap:
            self.done = True
            return True
        # the rays enter the master even when the deadline cut their pricing round short: a turn
        # that ends inside a pass must not lose what it priced (its outputs are marked as used,
        # so the pool would never offer those rays to them again)
        if new_y:
            self.master.add(new_y, new_v)
        if limits is not None and limits.expired():
            return True
        if not new_y and not tightened:  # exact pricing ran and found nothing, its cone is final
            raise self._stalled("no improving ray while the gap is open")
        gaps, stall = self.gaps, self.stall
        if stall and len(gaps) > stall and gaps[-1] > gaps[-1 - stall] / 2:
            raise self._stalled(f"the gap did not halve over {stall} pricing rounds")
        return True


def solve_metric(cost: np.ndarray, distances: np.ndarray, pairs: tuple[np.ndarray, np.ndarray],
                 epsilon: float, *, gap: float = 1e-9, max_rounds: int = 1000, symmetry: Symmetry | None = None,
                 limits=None, stall: int | None = None, order: np.ndarray | None = None) -> ContextSolution:
    """ε·d-private design for any metric by rays: peaked rays e^{−εd(·,z)} seed the master, box-
    normalised cone pricing (:class:`ConePricing`) adds rays until the Lagrangian bound is within
    ``gap`` (relative) of the master value. Rays are closed under the exact envelope before they
    enter the master, so every master solution is exactly private. With a ``symmetry`` group of
    the problem (:func:`symmetry.find`), the master keeps one row per input orbit and pricing
    visits one output per orbit (the duals are symmetric, so the others price the same).

    Without symmetry the outputs are priced in ``order`` (default: index order); each pricing
    LP starts from the basis of the output priced before it, so an order in which neighbours
    follow each other (:func:`pricing_order`) makes every LP shorter.

    Each round is reported to ``limits``; when they expire, the master's design is returned with
    the best bound, ``stopped=True``. Raises :class:`RaysStalled` (carrying that design and
    bound) when no ray improves while the gap is open, after ``max_rounds``, or, with ``stall``
    set, when the gap has not halved over the last ``stall`` exact pricing rounds."""
    run = RayRounds(cost, distances, pairs, epsilon, gap=gap, max_rounds=max_rounds, symmetry=symmetry,
                    stall=stall, order=order)
    while True:
        progressed = run.advance(limits)
        if progressed and limits is not None:
            limits.report(NAME, run.rounds, run.value, run.bound if np.isfinite(run.bound) else None)
        if run.done:
            return run.result()
        if limits is not None and limits.expired():
            if run.design() is None:
                raise SolverDeclined("the time limit came before the first ray master's optimum")
            return run.result(stopped=True)


NAME = "HiGHS Dantzig-Wolfe (cone rays)"
#: the progress reports' name for the rays and the interior point in turns
PORTFOLIO_NAME = "HiGHS Dantzig-Wolfe + interior point"


def pricing_order(outputs) -> np.ndarray | None:
    """An order of the outputs in which nearby points follow each other — a Hilbert curve in
    the plane, a k-d order in other dimensions — or None (index order) for outputs without
    points. Measured on 100 random points at ε = 2: 18 % less time per pricing LP than their
    (random) index order."""
    if outputs.points is None or len(outputs) < 2:
        return None
    pts = np.asarray(outputs.points, dtype=float)
    return hilbert_order(pts) if pts.shape[1] == 2 else kd_order(pts)


def solve_portfolio(cost, distances, notion, symmetry: Symmetry, gap: float, limits, path: list[str],
                    order: np.ndarray | None = None, enough: float | None = None) -> ContextSolution:
    """The rays and the interior point (:mod:`metric_interior`) in turns (:mod:`portfolio`)
    until the best design is within ``gap`` of the best bound, or a method declines with it
    within ``enough``, or ``limits`` expire; what happened is appended to ``path``. Raises
    :class:`RaysStalled` carrying the best design and bound (None when neither method had one)
    when both methods declined. The interior point keeps one output per orbit of ``symmetry``
    when the group preserves the distances and the cost exactly (:mod:`metric_orbits`)."""
    epsilon, pairs = notion.epsilon, (notion.i, notion.j, notion.d)
    orbits = symmetry if exact_symmetry(symmetry, distances, cost) else None
    outputs = None if orbits is None else orbits.representatives.size
    turns = Turns({RayRounds.name: lambda: RayRounds(cost, distances, (notion.i, notion.j), epsilon, gap=gap,
                                                     symmetry=symmetry, stall=STALL_ROUNDS, order=order),
                   MetricInteriorPoint.name: lambda: MetricInteriorPoint(cost, pairs, epsilon, tol=gap,
                                                                         repair=repairer(notion), symmetry=orbits)},
                  PORTFOLIO_NAME, floor=1e-300,
                  latency={MetricInteriorPoint.name: lambda: iteration_seconds(cost, pairs, outputs)})
    try:
        return interleave(turns, gap, limits, path, accept=enough)
    except SolverDeclined as declined:
        designed = any(m.design() is not None for m in turns.started.values())
        raise RaysStalled(declined.reason, turns.solution(False, path) if designed else None) from None


def _solve_general(cost, distances, notion, points, gap: float, enough: float, limits,
                   path: list[str], order: np.ndarray | None = None) -> ContextSolution:
    """One context: :func:`solve_portfolio`, aiming at ``gap``. When both its methods decline
    with the best proven gap within ``enough`` (the problem's tolerance less a margin for the
    certificate: :func:`~mechdesign.solvers.contexts.accepted_gap`), their best design;
    otherwise the lazy-pairs LP for a design of at most LAZY_MAX_ENTRIES entries, or else their
    best design with its proven bound. Each step is noted in ``path``."""
    symmetry = find(points, distances, cost)
    if symmetry.order > 1:
        path.append(f"cone rays: a symmetry group of order {symmetry.order}")
    found = _portfolio_then_fallbacks(cost, distances, notion, symmetry, gap, enough, limits, path, order)
    if symmetry.order == 1:
        return found
    matrix = symmetry.average(found.matrix)  # the interior point's design is symmetric only nearly
    return replace(found, matrix=matrix, objective=float((cost * matrix).sum()))


def _portfolio_then_fallbacks(cost, distances, notion, symmetry: Symmetry, gap: float, enough: float, limits,
                              path: list[str], order: np.ndarray | None) -> ContextSolution:
    """:func:`_solve_general`'s steps under a found ``symmetry``, before the group average."""
    try:
        found = solve_portfolio(cost, distances, notion, symmetry, gap, limits, path, order, enough)
    except RaysStalled as stalled:
        best = stalled.solution
        if best is None:  # no method got as far as a design: say why they declined
            path.append(f"no design: {stalled.reason}")
        if best is not None and relative_gap(best.objective, best.bound, 0.0) <= enough:
            path.append("their proven gap is within the tolerance")
            return best
        if cost.size <= LAZY_MAX_ENTRIES:
            path.append("lazy pairs: both methods declined and the LP with lazy pair rows is affordable")
            try:
                return solve_lazily(cost, (notion.i, notion.j, notion.d), notion.epsilon, limits=limits,
                                    incumbent=best, repair=repairer(notion), tol=enough)
            except SolverDeclined as declined:  # keep the certified design, not a dense LP
                if best is None:
                    raise
                path.append(f"lazy pairs: {declined.reason}; the best design with its proven bound")
                return best
        if best is None:
            raise
        path.append("the best design with its proven bound (too large for the lazy-pairs LP)")
        return best
    return found


def applies(problem) -> str | None:
    """One ε·d-privacy notion over a metric other than the line's with an expected-loss
    objective, from GENERAL_MIN_INPUTS values, or fewer when the notion is steep."""
    reason = metric_off_the_line(problem)
    if reason is not None:
        return reason
    notion = problem.privacy[0]
    if len(problem.inputs) < GENERAL_MIN_INPUTS and not steep(notion):
        return f"fewer than {GENERAL_MIN_INPUTS} inputs and no ratio beyond e^20: the whole pair LP takes it"
    return None


def metric_by_rays(problem, limits=None):
    """Rays, then lazy pairs when they stall. Stops when the rigorous Lagrangian bound is
    within the problem's gap tolerance; what was run and why is listed in the record's
    ``path``. A small problem whose gap the rays did not close is declined (the plain LP
    finishes it)."""
    notion, points = problem.privacy[0], problem.privacy[0].domain.points
    small = len(problem.inputs) < GENERAL_MIN_INPUTS
    start = time.perf_counter()
    distances = notion.metric.privacy_distances(notion.domain)
    tolerance = problem.gap_tolerance
    # the runs aim at 90 % of the tolerance, exact ones (a tolerance of 1e-4 or less) at 1e-6
    # at most (the certificate re-measures the value on the returned design; a tenth of the
    # tolerance, as once, cost the interior point some twenty steps of a second each on 300
    # locations, and half of it, as since, a step or two)
    gap = aimed_gap(tolerance) if tolerance > 10 * EXACT_GAP else min(aimed_gap(tolerance), 1e-6)
    path: list[str] = []
    order = pricing_order(problem.outputs)
    raw, outcome = solve_contexts(problem, lambda key, cost: _solve_general(cost, distances, notion, points, gap,
                                                                            accepted_gap(tolerance), limits, path,
                                                                            order),
                                  NAME, time.perf_counter() - start, limits=limits)
    outcome = outcome.recording(path=path)
    if any(p.startswith("lazy pairs") for p in path):
        outcome = outcome.recording(name=f"{NAME}, then lazy pair constraints")
    if small and problem.gap_of(problem.objective.value(raw), outcome.bound) > tolerance:
        raise SolverDeclined("a small problem whose gap the rays did not close (the plain LP finishes it)")
    return raw, outcome


SOLVER = SpecialSolver(NAME, applies, metric_by_rays)
