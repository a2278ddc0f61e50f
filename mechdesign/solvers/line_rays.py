"""ε·|x − x'|-private designs on a line: a ray master with exact pricing.

The master (:class:`~mechdesign.solvers.ray_master.RayMaster`) starts from the rays peaked at every
point, v_x = e^{−ε|x − z|} (the truncated geometric mechanism's columns), each assigned to its
cheapest output: by Ghosh, Roughgarden and Sundararajan ("Universally utility-maximizing privacy
mechanisms", STOC 2009) the remapped geometric mechanism is optimal for losses monotone in
|x − y| on unit-spaced lines, so there the first master is already optimal and pricing only
proves it; for other priors, losses and spacings, pricing adds what is missing.

Pricing is exact in two ways.

* Scale-free, by dynamic programming, O(|X|) per column: with v fixed to 1 at an anchor p, the
  cheapest continuation to the right obeys h_x = a_x + min(e^{−εg_x} h_{x+1}, e^{εg_x} h_{x+1})
  (g_x the gap to the next point), likewise to the left, so min over anchors of
  a_p + ψ(h_{p+1}) + ψ(h'_{p−1}) is the exact minimum over the cone with one entry fixed to 1.
  A column this calls non-negative cannot improve the master; the others go on to the box.
* Box-bounded, by a small LP (:func:`line_box`): min a·v over the cone with 0 <= v <= 1. The
  scale-free value of a ray normalised at its anchor can be astronomically negative at small ε
  (entries up to e^{εn} amplify 1e-11 of dual round-off: −4e53 at 300 points, ε = 0.5) while no
  normalised ray improves; the box minimum is the quantity the Lagrangian bound needs, and when
  it is genuinely negative its minimiser, closed under the cone's envelope, is an improving
  column. Pricing continues until the proven gap is within the tolerance. (The walks of the
  scale-free recursion, capped at 1, were tried as cheaper columns: on a Zipf prior with a
  random loss, 300 points, ε = 0.25, they left the bound at 1e23 after 25 s, the box minimisers
  closed the gap to 1.5e-8 in the same time.)

The master's duals carry round-off: a reduced cost of −1e-11 on one input, multiplied by a ray
ratio e^{εd} of e^18, would look like a real improvement. Reduced costs within 1e-9 of their
input's largest cost are therefore priced as zero; the Lagrangian bound then adds back, per
input, the most negative reduced cost so set to zero (:func:`zeroed_slack`), so it stays a lower
bound whatever the accuracy of the master's duals. At large ε the duals themselves can lie under
that level (steep rays, costs far from the diagonal a million times the near ones); when the
zeroing holds most of the gap open, the exact reduced costs are priced as well
(:meth:`LineRounds._price_unzeroed`), and a column enters the master only if it improves at its
exact reduced cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mechdesign.core.limits import relative_gap
from mechdesign.privacy.metric import MetricPrivacy
from mechdesign.solvers.cone_pricing import ConePricing
from mechdesign.solvers.contexts import ContextSolution, accepted_gap, solve_contexts
from mechdesign.solvers.highs_model import SolverDeclined, basic_columns
from mechdesign.solvers.lazy_pairs import repairer, solve_lazily
from mechdesign.solvers.predicates import expected_loss, metric_on_a_line, one_notion_of
from mechdesign.solvers.ray_master import (
    ACCEPT_GAP,
    DENSE_ENTRIES,
    RayMaster,
    capped_sum,
    peak_cap,
)
from mechdesign.solvers.registry import SpecialSolver

NAME = "HiGHS Dantzig-Wolfe (line rays)"
#: rays stuck with an open gap hand a design of at most this many entries of K to the LP with the
#: neighbour pair rows (measured: 300 points 14 s, 500 points 43 s, one LP each)
NEIGHBOUR_LP_MAX_ENTRIES = 250_000
#: the line solver prices on while columns improve and its gap exceeds this (relative)
EXACT_GAP = 1e-9


def _psi(h: np.ndarray, down: np.ndarray, up: np.ndarray) -> np.ndarray:
    """min over the next entry's allowed ratios [down, up] of ratio·h (beyond the float range,
    0 or −inf, never inf·0 = NaN: lower values only loosen the bound built on them). Called
    with overflow and invalid-operation warnings off (:meth:`LinePricing.price`)."""
    return np.where(h >= 0, down * np.maximum(h, 0.0), up * np.minimum(h, 0.0))


@dataclass
class LinePricing:
    """Exact scale-free pricing over the d-privacy cone of sorted points on a line."""

    gaps: np.ndarray
    epsilon: float

    def __post_init__(self):
        with np.errstate(over="ignore", under="ignore"):
            self.down = np.exp(-self.epsilon * self.gaps)[:, None]
            self.up = np.exp(self.epsilon * self.gaps)[:, None]

    def price(self, a: np.ndarray):
        """Per column of ``a``: (min over the cone with one entry 1 of a·v, its anchor, and the
        right and left tables of the recursion)."""
        n, m = a.shape
        right = np.zeros((n + 1, m))  # right[x]: best value of x..n-1 given v_x = 1
        left = np.zeros((n + 1, m))   # left[x + 1]: best value of 0..x given v_x = 1
        with np.errstate(over="ignore", invalid="ignore"):
            for x in range(n - 1, -1, -1):
                right[x] = a[x] + (_psi(right[x + 1], self.down[x], self.up[x]) if x < n - 1 else 0.0)
            for x in range(n):
                left[x + 1] = a[x] + (_psi(left[x], self.down[x - 1], self.up[x - 1]) if x > 0 else 0.0)
            value = a.copy()
            value[:-1] += _psi(right[1:n], self.down, self.up)
            value[1:] += _psi(left[1:n], self.down, self.up)
        anchor = value.argmin(axis=0)
        return value[anchor, np.arange(m)], anchor, right, left


def line_box(points: np.ndarray, epsilon: float) -> ConePricing:
    """Pricing over the line cone with 0 <= v <= 1 (:class:`ConePricing`): on sorted points the
    cone is cut out by its neighbour rows v_x <= e^{εg_x} v_{x+1} and v_{x+1} <= e^{εg_x} v_x
    (g_x the gap), as |x − z| is the sum of the gaps between them, so only these |X| − 1 pairs,
    both ways, enter, all from the start. Steep steps are chained as for any pair (leaving them
    out gave a larger cone whose minimisers no envelope-closed ray could match, and a master
    stuck 1.5e-7 above the optimum)."""
    gaps = np.diff(points)
    x = np.arange(gaps.size)
    i = np.column_stack([x, x + 1]).ravel()
    j = np.column_stack([x + 1, x]).ravel()
    return ConePricing(points.size, (i, j, np.repeat(gaps, 2)), epsilon)


def line_envelope(v: np.ndarray, gaps: np.ndarray, epsilon: float) -> np.ndarray:
    """The smallest vector >= v in the line cone, max_z v_z e^{−ε|x − z|}, scaled to peak 1: a
    forward and a backward pass in log space (each entry at least its neighbour's over e^{εg})."""
    with np.errstate(divide="ignore"):
        w = np.log(np.maximum(v, 0.0))
    step = epsilon * gaps
    for x in range(1, w.size):
        w[x] = max(w[x], w[x - 1] - step[x - 1])
    for x in range(w.size - 2, -1, -1):
        w[x] = max(w[x], w[x + 1] - step[x])
    return np.exp(w - w.max())


def _box_rays(box: ConePricing, a: np.ndarray, negative: np.ndarray, per_column: np.ndarray, gaps: np.ndarray,
              epsilon: float, threshold: float, limits, fresh: bool = False,
              done: dict | None = None) -> tuple[list[int], list[np.ndarray]]:
    """Exact pricing over the box-bounded cone for the ``negative`` columns: tightens
    ``per_column`` (in place) to the proven box minima and returns the minimisers, closed under
    the envelope, that price out (improving columns). ``done`` (column -> (proven minimum, its
    improving ray or None)) holds the columns already priced against the same reduced costs,
    which are taken from it, and receives the ones priced now: pricing cut short by a turn's end
    goes on where it stopped."""
    new_y, new_v = [], []
    for y in negative:
        y = int(y)
        if fresh and per_column[y] >= 0.0:
            continue
        if not fresh and done is not None and y in done:
            proven, ray = done[y]
        elif limits is not None and limits.expired():  # past the deadline: the box's own bound
            per_column[y] = max(per_column[y], float(np.minimum(a[:, y], 0.0).sum()))
            continue
        else:
            proven, v = box.price(a[:, y], limits, fresh, slack=-threshold)
            ray = None
            if v @ a[:, y] < threshold:
                ray = line_envelope(v, gaps, epsilon)
                if not ray @ a[:, y] < threshold:
                    ray = None
            if done is not None and not (limits is not None and limits.expired()):
                done[y] = (proven, ray)  # (a box solve cut short is priced again)
        per_column[y] = max(per_column[y], min(0.0, proven))
        if ray is not None:
            new_y.append(y)
            new_v.append(ray)
    return new_y, new_v


def zeroed_slack(exact: np.ndarray, priced: np.ndarray) -> float:
    """What pricing the reduced costs ``priced`` instead of ``exact`` (some entries near zero
    set to zero) can overstate the Lagrangian bound by, as a (non-positive) correction.

    For every row-stochastic K whose columns lie in the cone, with exact = C − u,

        Σ C K = Σ_x u_x + Σ_y priced_y·K_y + Σ_{x,y} (exact − priced)_{xy} K_{xy},

    and the bound prices the middle sum. The last sum is at least Σ_x min_y min(0, (exact −
    priced)_{xy}): K >= 0 and every row of K sums to 1, so each row's part is a convex
    combination of its entries, never below the most negative one. The differences are exact in
    floating point (each is exact − exact = 0 or exact − 0 = exact), so this adds no round-off."""
    return float(np.minimum(exact - priced, 0.0).min(axis=1).sum())


def _initial_master(cost: np.ndarray, points: np.ndarray, epsilon: float) -> RayMaster:
    """The rays peaked at every point, each on its cheapest output, and one constant column."""
    n = cost.shape[0]
    master = RayMaster(cost)
    peaked = np.exp(-epsilon * np.abs(points[:, None] - points[None, :]))
    best = np.argmin(peaked.T @ cost, axis=1)  # cheapest output for the ray peaked at z
    master.add([int(y) for y in best], [peaked[:, z].copy() for z in range(n)])
    master.add([int(np.argmin(cost.sum(axis=0)))], [np.ones(n)])  # always feasible
    return master


class LineRounds:
    """The line rays one master round at a time (:meth:`advance`), so that a caller can
    interleave them with another method: :attr:`value` and :meth:`design` are the last
    master's (the full rays' value, not the truncated master's), :attr:`bound` the best proven
    bound (also :attr:`latest_bound`: it only grows), :attr:`closed` whether the gap is within
    min(``gap``, EXACT_GAP) on the scale max|C|, :attr:`stuck` whether the last round found no
    improving column with the gap open, :attr:`stopped` whether a deadline cut a round short."""

    name = "line rays"
    #: the turns read progress only below a relative gap of 1 (the first bounds lie far below)
    gap_ceiling = 1.0
    #: a race's result need not wait for the master run in progress to take the end's interrupt:
    #: interrupted, it leaves the design and value as they were, and a pricing pass cut short
    #: only raises the proven bound (:mod:`~mechdesign.solvers.race`; a run that completes as the
    #: race ends sets them once, and the result's value is measured on the design returned)
    interruptible = True

    def __init__(self, cost: np.ndarray, points: np.ndarray, epsilon: float, *, tol: float = 1e-9,
                 gap: float = ACCEPT_GAP):
        self.cost, self.points, self.epsilon, self.tol, self.gap = cost, points, epsilon, tol, gap
        self.pricing = LinePricing(np.diff(points), epsilon)
        self.master = _initial_master(cost, points, epsilon)
        self.scale = float(np.abs(cost).max())
        # round-off in the master's duals, per input on the scale of its own costs: one threshold
        # on the scale of the largest cost zeroed whole rows of a prior's light tail (10,000
        # points, Zipf prior: costs of 1e-8 next to a largest cost of 1) and their allowances,
        # summed in zeroed_slack, held the bound 0.4 % below the optimum
        self.noise = 1e-9 * np.maximum(np.abs(cost).max(axis=1), 1e-6 * max(self.scale, 1e-300))[:, None]
        self.cap = peak_cap(float(np.min(np.maximum(points - points[0], points[-1] - points))), epsilon)
        self.box, self.bound, self.boxed, self.rounds = None, -np.inf, 0, 0
        self.stopped = self.stuck = self.closed = False
        self.value, self.master_value, self._matrix, self._pending = np.inf, np.inf, None, ([], [])
        # the box pricing's results for the master's duals ``_priced_for`` (they do not change
        # until columns are added): a round whose pricing a turn's end cut short goes on there
        self._priced: dict = {}
        self._priced_for: np.ndarray | None = None  # the duals they were priced for

    @property
    def latest_bound(self) -> float:
        return self.bound

    @property
    def columns(self) -> int:
        return len(self.master.outputs)

    def design(self) -> np.ndarray | None:
        return self._matrix

    def advance(self, limits=None) -> bool:
        """One round: add the last round's improving columns, solve the master, price. Returns
        False when a deadline (or a turn's end) cut the master's solve short (``stopped``)."""
        if self._pending[0]:
            self.master.add(*self._pending)
            self._pending = ([], [])
        solved = self.master.solve(limits)
        if solved is None:
            if limits is not None and limits.expired():  # the next call solves on from its basis
                self.stopped = True
                return False
            status = self.master.h.modelStatusToString(self.master.h.getModelStatus())
            raise SolverDeclined(f"a line master LP ended {status} (round {self.rounds + 1})")
        self.rounds += 1
        value, u = solved
        if self._priced_for is None or not np.array_equal(u, self._priced_for):
            self._priced, self._priced_for = {}, u.copy()  # other duals: other prices
        self.master_value = value
        self._matrix = self.master.matrix()
        self.value = float((self.cost * self._matrix).sum())  # the full rays' value
        exact = self.cost - u[:, None]
        a = np.where(np.abs(exact) <= self.noise, 0.0, exact)  # what is priced
        zeroed = zeroed_slack(exact, a)
        offset = float(u.sum()) + zeroed  # the bound is offset + capped_sum(...)
        priced = self.pricing.price(a)[0]
        threshold = -self.tol * max(abs(value), 1e-6 * self.scale)  # on relative_gap's scale
        negative = np.flatnonzero(priced < threshold)
        per_column = np.minimum(priced, 0.0)
        new_y, new_v = [], []
        if negative.size:
            self.box = self.box or line_box(self.points, self.epsilon)
            self.boxed += negative.size
            gaps = self.pricing.gaps
            new_y, new_v = _box_rays(self.box, a, negative, per_column, gaps, self.epsilon, threshold, limits,
                                     done=self._priced)
            lagrangian = offset + capped_sum(per_column, self.cap)
            if not new_y and value - max(self.bound, lagrangian) > self.gap * abs(value) + 1e-12:
                # no improving column and the bound lags: price the columns it blames afresh
                _box_rays(self.box, a, negative, per_column, gaps, self.epsilon, threshold, limits, fresh=True)
            # the master prices a column at its exact reduced cost: one that improves only with
            # small costs zeroed would come back every round, the master unchanged
            kept = [t for t, (y, v) in enumerate(zip(new_y, new_v)) if v @ exact[:, y] < threshold]
            new_y, new_v = [new_y[t] for t in kept], [new_v[t] for t in kept]
        self.bound = max(self.bound, offset + capped_sum(per_column, self.cap))
        if not new_y and relative_gap(value, self.bound, self.scale) > min(self.gap, EXACT_GAP) \
                and -zeroed > 0.5 * (value - self.bound) and not (limits is not None and limits.expired()):
            # the zeroing holds most of the gap open: price the exact reduced costs
            new_y, new_v = self._price_unzeroed(u, exact, threshold, limits)
        # keep adding improving columns until the gap is at round-off level; without any, a
        # gap within ``gap`` is accepted
        self.closed = relative_gap(value, self.bound, self.scale) <= min(self.gap, EXACT_GAP)
        self.stopped = not self.closed and limits is not None and limits.expired()
        # pricing cut short by the deadline (or by a turn's end) found nothing: not stuck
        self.stuck = not self.closed and not new_y and not self.stopped
        if self.stuck and self.value - self.bound > self.gap * abs(self.value):
            self.bound = max(self.bound, _untruncated_bound(self.master, self.cost, self.pricing, self.cap))
        self._pending = (new_y, new_v)
        return True

    def _price_unzeroed(self, u: np.ndarray, exact: np.ndarray, threshold: float, limits):
        """Pricing of the exact reduced costs C − u, none set to zero, for a round whose zeroed
        pricing found no improving column with the gap open: tightens :attr:`bound` to
        Σu + capped_sum of the proven minima and returns the improving columns it finds.

        Zeroing the reduced costs within the noise of an input's largest cost keeps dual
        round-off, amplified by steep rays, out of the bound at small ε; at large ε the same
        zeroing can swallow the duals themselves (a squared loss on 1,000 points at ε = 8: noise
        up to 1e-6 against duals of 7e-7, and a proven gap of 36 % on an optimal master), and
        the columns whose scale-free price overflows to −inf on round-off are settled by their
        box minima, which stay at round-off level."""
        priced = self.pricing.price(exact)[0]
        settled = priced >= threshold  # (not NaN)
        per_column = np.where(settled, np.minimum(priced, 0.0), -np.inf)  # the box settles the rest
        negative = np.flatnonzero(~settled)
        new_y, new_v = [], []
        if negative.size:
            self.box = self.box or line_box(self.points, self.epsilon)
            self.boxed += negative.size
            new_y, new_v = _box_rays(self.box, exact, negative, per_column, self.pricing.gaps, self.epsilon,
                                     threshold, limits, fresh=True)
        with np.errstate(invalid="ignore"):
            bound = float(u.sum()) + capped_sum(per_column, self.cap)
        if np.isfinite(bound):
            self.bound = max(self.bound, bound)
        return new_y, new_v

    def note(self) -> str:
        return (f"line rays: {self.rounds} rounds, {self.columns} columns, box pricing of {self.boxed} "
                f"columns, gap {max(self.value - self.bound, 0.0) / max(abs(self.value), 1e-300):.2g}")


def solve_line(cost: np.ndarray, points: np.ndarray, epsilon: float, *, tol: float = 1e-9,
               gap: float = ACCEPT_GAP, max_rounds: int = 500, limits=None,
               path: list[str] | None = None) -> ContextSolution:
    """Exact ε·|x − x'|-private design on sorted 1-D ``points`` (rows of ``cost`` in that order)
    by the line rays alone (:class:`LineRounds`).

    Each round solves the master, prices every column scale-free and, for the columns it calls
    negative, over the box-bounded cone (whose minimisers are the new columns); stops when the
    best proven bound Σu + capped_sum(min(0, p_y), e^{εR}) + :func:`zeroed_slack` is within
    min(``gap``, EXACT_GAP) of the master value (:func:`~mechdesign.core.limits.relative_gap`
    on the scale max|C|), when no column improves (a gap within ``gap`` is then accepted), or
    when ``limits`` expire (``stopped=True``: the master's design, the best bound so far).
    When no column improves and the gap exceeds ``gap``, raises :class:`SolverDeclined` for a
    design of at most DENSE_ENTRIES entries (the plain LP can finish it) and otherwise returns
    the design with its proven bound. ``path`` (a list) receives what was done."""
    rays = LineRounds(cost, points, epsilon, tol=tol, gap=gap)
    while True:
        if rays.rounds >= max_rounds:
            rays.stuck = True
            break
        if not rays.advance(limits):
            if rays.design() is None:
                raise SolverDeclined("the time limit came before the first line master was solved")
            break
        if limits is not None:
            limits.report(NAME, rays.rounds, rays.master_value, rays.bound if np.isfinite(rays.bound) else None)
        if rays.closed or rays.stopped or rays.stuck:
            break
    found = _finish(rays, gap, path)
    if rays.stuck and found.objective - found.bound > gap * abs(found.objective) \
            and cost.size <= NEIGHBOUR_LP_MAX_ENTRIES and not (limits is not None and limits.expired()):
        found = neighbour_lp(cost, points, epsilon, found, limits, path, gap)
    return found


def neighbour_lp(cost, points, epsilon, found: ContextSolution, limits, path, tol: float | None = None
                 ) -> ContextSolution:
    """The design LP itself, with the pair rows of neighbouring points only (on a line they
    imply every other pair: 2(n − 1) rows per output), started from the rays' design: for rays
    stuck with an open gap. Solved by the lazy-pairs machinery, in units of the rays' value and
    under the time left (its duals refined where they fall short of ``tol``); the better design
    and bound are kept."""
    n = points.size
    i = np.concatenate([np.arange(n - 1), np.arange(1, n)])
    j = np.concatenate([np.arange(1, n), np.arange(n - 1)])
    d = np.abs(points[i] - points[j])
    try:
        lp = solve_lazily(cost, (i, j, d), epsilon, limits=limits, incumbent=found, tol=tol)
    except SolverDeclined as declined:
        if path is not None:
            path.append(f"neighbour-pair LP: {declined.reason}; the rays' design with its proven bound")
        return found
    if path is not None:
        gap = max(lp.objective - lp.bound, 0.0) / max(abs(lp.objective), 1e-300)
        path.append(f"neighbour-pair LP from the rays' design ({n} points): gap {gap:.2g}"
                    + (", stopped at the time limit" if lp.stopped else ""))
    return lp


def _finish(rays: LineRounds, gap: float, path) -> ContextSolution:
    """The ContextSolution of a line run (see :func:`solve_line`), with its path noted."""
    if rays.value - rays.bound > gap * abs(rays.value):
        rays.bound = max(rays.bound, _untruncated_bound(rays.master, rays.cost, rays.pricing, rays.cap))
    closed = rays.value - rays.bound <= gap * abs(rays.value) + 1e-12
    note = rays.note()
    if rays.stuck and not closed:
        if rays.cost.size <= DENSE_ENTRIES:
            raise SolverDeclined(f"{note}: no improving ray and the gap is open (the plain LP finishes it)")
        note += ": no improving ray left, best design with its proven bound"
    elif rays.stopped:
        note += ": stopped at the time limit"
    if path is not None:
        path.append(note)
    return ContextSolution(rays.design(), rays.value, min(rays.bound, rays.value), rays.rounds, rays.columns,
                           rays.stopped)


def _untruncated_bound(master: RayMaster, cost: np.ndarray, pricing: LinePricing, cap: float):
    """Σu + capped_sum(min(0, price(C − u))), a bound for any u, priced exactly at the duals of
    the master's basis recomputed with the full rays (Bᵀu = c_B): the master's own duals say
    nothing when the optimum is below TRUNCATE (two points at ε = 50: 1/(1 + e^50))."""
    basis = basic_columns(master.h)
    basic = [] if basis is None else np.flatnonzero(basis[0]).tolist()
    if master.symmetry.order > 1 or len(basic) != master.n:
        return -np.inf
    rays = np.column_stack([master.rays[t] for t in basic])
    try:
        u = np.linalg.solve(rays.T, [cost[:, master.outputs[t]] @ master.rays[t] for t in basic])
    except np.linalg.LinAlgError:
        return -np.inf
    bound = float(u.sum()) + capped_sum(np.minimum(pricing.price(cost - u[:, None])[0], 0.0), cap)
    return bound if np.isfinite(bound) else -np.inf


def applies(problem) -> str | None:
    """One ε·d-privacy notion with |x − x'| on 1-D points (the ``absolute``, ``euclidean`` or
    ``manhattan`` metric) and an expected-loss objective."""
    reason = one_notion_of(problem, MetricPrivacy) or expected_loss(problem)
    if reason is None and not metric_on_a_line(problem.privacy[0]):
        reason = "needs points on a line with |x − x'| as the distance"
    return reason


def metric_line_by_rays(problem, limits=None):
    """The line rays and the interior point in turns, per context
    (:func:`~mechdesign.solvers.line_portfolio.solve_line_portfolio`)."""
    notion = problem.privacy[0]
    # coincident inputs (distance 0) must have equal rows: solve over the distinct positions,
    # each with the summed cost rows of its inputs (the same objective for every K with equal
    # rows), and give every input its position's row
    positions, position_of = np.unique(notion.domain.points[:, 0], return_inverse=True)
    tolerance = problem.gap_tolerance
    gap = accepted_gap(tolerance) if tolerance > 10 * ACCEPT_GAP else ACCEPT_GAP
    path: list[str] = []

    from mechdesign.solvers.line_portfolio import solve_line_portfolio

    first = np.unique(position_of, return_index=True)[1]  # one input per position
    certified = repairer(notion)

    def repair(k: np.ndarray) -> np.ndarray | None:
        fixed = certified(k[position_of])
        return None if fixed is None else fixed[first]

    def solve_one(key, cost):
        merged = np.zeros((positions.size, cost.shape[1]))
        np.add.at(merged, position_of, cost)
        found = solve_line_portfolio(merged, positions, notion.epsilon, gap, limits, path, repair, tolerance)
        found.matrix = found.matrix[position_of]
        return found

    raw, outcome = solve_contexts(problem, solve_one, NAME, limits=limits)
    return raw, outcome.recording(path=path)


SOLVER = SpecialSolver(NAME, applies, metric_line_by_rays)
