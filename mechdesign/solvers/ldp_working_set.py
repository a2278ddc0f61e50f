"""The ε-LDP interior point over a working set of outputs that grows by pricing, and the pair
that steps it beside the interior point over every output (:class:`InteriorPair`, the method the
ε-LDP portfolio runs).

Most ε-LDP optima use a fraction of the outputs: on 300 values, 2–27 of 300 at ε = 1 and
15–144 at ε = 8 over uniform, Dirichlet and Zipf priors and the metric, squared and random
losses. The interior point over every output (:mod:`mechdesign.solvers.ldp_interior`) pays for
the unused ones twice: every step's arrays and its reduced system carry them, and their
columns, shrinking towards zero, are what cut its steps short (on 1,000 values at ε = 8 with a
Dirichlet prior and a random loss: 137 steps over 1,000 outputs, 71 over the 295 the optimum
uses, 22 s against 3 s).

So the iterations start on :data:`FIRST_OUTPUTS` outputs, chosen greedily for the loss
without privacy (:func:`spread_outputs`), and every output takes part in the bound: the
iterate's row duals u are priced over all of them
(:func:`~mechdesign.solvers.column_generation.dual_bound`, valid for any u), as column
generation prices them. Outputs whose price is negative join the working set, the most negative
first and at most as many as it holds (it at most doubles), once the iterations have taken
:data:`SETTLE_STEPS` steps since the last join and have nearly solved the restricted problem:
its own gap within :data:`JOIN_SHARE` of the gap to the bound over every output, and below the
value. They join the iterate in progress (:meth:`InteriorPoint.add_outputs`: strictly inside
their cones, centred and dual feasible), so the method does not start again. When the working
set holds every output this is the interior point over every output; nothing in the proof
depends on the set, and the design (zero on the outputs outside it) is certified like any
other.

On 1,000 values, the interior point alone against its working-set form: ε = 8, Dirichlet prior,
random loss 22 s against 6–7 s; ε = 1, the three priors with a random loss, 10–13 s against
1–2 s. Where the first outputs are far from the optimum's the joins set the iterate back: with
the 64 outputs that cost least when every input is sent to them (for a metric loss, those
around the median), a Zipf prior with the metric loss at ε = 8 found no proof in 400 steps; with
the greedy choice it takes 52 steps and under a second. Where the optimum uses most outputs
(a uniform prior with the metric loss at ε = 8: the set grows to 916 of 1,000 in ten joins,
17 s, against 7 s over every output) the working set loses, which is why the pair keeps the
interior point over every output beside it.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from mechdesign.core.limits import Limits
from mechdesign.solvers import ldp_interior
from mechdesign.solvers.column_generation import LDPCone, dual_bound
from mechdesign.solvers.contexts import ContextSolution, run_to_proof
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.portfolio import TRAILING_FLOOR

NAME = "ε-LDP interior point on a working set"
#: outputs in the first working set (all of them when there are no more)
FIRST_OUTPUTS = 64
#: steps after a join before outputs may join again (the joined columns settle in)
SETTLE_STEPS = 3
#: outputs join when the restricted problem's own gap is at most this share of the gap to the
#: bound over every output
JOIN_SHARE = 0.1
#: the share of the leading method's seconds that the trailing one of :class:`InteriorPair` gets
#: (the turns' least share)
TRAILING_SHARE = TRAILING_FLOOR


def spread_outputs(cost: np.ndarray, count: int) -> np.ndarray:
    """Up to ``count`` outputs chosen greedily for the loss without privacy: first the output
    that costs least when every input is sent to it, then, one at a time, the output that
    lowers Σ_x min over the chosen outputs of C[x, y] the most, until ``count`` are chosen or
    none lowers it. (The greedy facility-location heuristic, evaluated lazily: an output's
    gain can only fall as outputs are chosen, so a stale gain is a bound, and only the best
    candidate's is recomputed; the same picks as recomputing every gain, in O(|X||Y|) work
    and a few columns a pick.) At large ε an optimum sends most of each input's mass to few
    outputs spread over the inputs, which these resemble; the least-cost outputs alone (a
    metric loss: those around the median) are far from them."""
    n, k = cost.shape
    if count <= 0 or k == 0:
        return np.zeros(0, dtype=int)
    columns = np.ascontiguousarray(cost.T)  # one output's costs contiguous
    first = int(np.argmin(columns.sum(axis=1)))
    chosen, best = [first], columns[first].copy()
    gains = np.maximum(best[None, :] - columns, 0.0).sum(axis=1)
    heap = [(-gain, y) for y, gain in enumerate(gains.tolist()) if y != first and gain > 0.0]
    heapq.heapify(heap)
    while heap and len(chosen) < count:
        _, y = heapq.heappop(heap)
        gain = float(np.maximum(best - columns[y], 0.0).sum())
        if gain <= 0.0:
            continue
        if heap and gain < -heap[0][0]:  # no longer the best: back with its fresh gain
            heapq.heappush(heap, (-gain, y))
            continue
        chosen.append(y)
        np.minimum(best, columns[y], out=best)
    return np.asarray(chosen, dtype=int)


class WorkingSetInteriorPoint:
    """The interior point of :class:`~mechdesign.solvers.ldp_interior.InteriorPoint` on a working
    set of outputs, one step at a time (:meth:`advance`), with the same attributes: the best
    design so far (:attr:`value`, :meth:`design`, over every output), the best bound over every
    output (:attr:`bound`, :attr:`latest_bound`) and :attr:`done`. ``initial`` names outputs to
    begin with besides the first :data:`FIRST_OUTPUTS` (a neighbouring ε's, in a sweep)."""

    name = "interior point"

    def __init__(self, cost: np.ndarray, epsilon: float, *, tol: float = 1e-9, initial: list[int] | None = None):
        self.cost, self.tol = cost, tol
        self.cone = LDPCone(cost.shape[0], epsilon)
        first = spread_outputs(cost, FIRST_OUTPUTS)
        extra = [y for y in dict.fromkeys(initial or []) if 0 <= y < cost.shape[1]]
        self.outputs = np.unique(np.concatenate([first, np.asarray(extra, dtype=int)])).astype(int)
        # twice the interior point's cap: each join sets the iterate back by some steps (on 1,000
        # values the working set took up to 270 steps in all where every output takes up to 143)
        iterations = 2 * ldp_interior.MAX_ITERATIONS
        self.inner = ldp_interior.InteriorPoint(cost[:, self.outputs], epsilon, tol=tol, max_iterations=iterations)
        self.value, self.bound, self._design = math.inf, -math.inf, None
        self.rounds, self.joins, self.since_join, self.done = 0, 0, 0, False
        self._evaluate()

    @property
    def columns(self) -> int:
        """The outputs in the working set."""
        return int(self.outputs.size)

    @property
    def rounds_note(self) -> str:
        """For the solver's path: the working set's size and how often outputs joined it."""
        return f" on {self.columns} of {self.cost.shape[1]} outputs ({self.joins} joins)"

    def design(self) -> np.ndarray:
        return self._design

    def result(self, stopped: bool = False) -> ContextSolution:
        return ContextSolution(self._design, self.value, min(self.bound, self.value), self.rounds,
                               self.columns, stopped)

    def _evaluate(self) -> np.ndarray:
        """Take the restricted iterate's best design, price every output at its row duals and
        return the prices."""
        inner = self.inner
        if inner.value < self.value:
            self.value = inner.value
            self._design = np.zeros(self.cost.shape)
            self._design[:, self.outputs] = inner.design()
        prices = self.cone.price(self.cost - inner.it.u[:, None])
        self.latest_bound = dual_bound(inner.it.u, prices)
        self.bound = max(self.bound, self.latest_bound)
        self.done = self.value - self.bound <= self.tol * max(1.0, abs(self.value))
        return prices

    def advance(self, limits=None) -> bool:
        """One interior-point step on the working set, the bound over every output, and the
        outputs that price out joining the set when the restricted problem is nearly solved
        (see the module docstring). Raises
        :class:`~mechdesign.solvers.highs_model.SolverDeclined` as the interior point does."""
        inner = self.inner
        inner.advance()
        self.rounds += 1
        self.since_join += 1
        prices = self._evaluate()
        if self.done or self.outputs.size == self.cost.shape[1]:
            return True
        own_gap = inner.value - inner.latest_bound
        settled = self.since_join >= SETTLE_STEPS and own_gap <= abs(inner.value)
        if inner.done or settled and own_gap <= JOIN_SHARE * (inner.value - self.latest_bound):
            self._join(prices)
        return True

    def _join(self, prices: np.ndarray) -> None:
        """The outputs outside the set whose price is negative join it, the most negative first,
        at most as many as it holds."""
        outside = np.ones(self.cost.shape[1], dtype=bool)
        outside[self.outputs] = False
        improving = np.flatnonzero(outside & (prices < 0.0))
        if improving.size:
            joining = improving[np.argsort(prices[improving], kind="stable")[:self.outputs.size]]
            self.inner.add_outputs(self.cost[:, joining])
            self.outputs = np.concatenate([self.outputs, joining])
            self.joins += 1
            self.since_join = 0


def solve_by_working_set(cost: np.ndarray, epsilon: float, *, tol: float = 1e-9,
                         limits: Limits | None = None) -> ContextSolution:
    """Minimise Σ cost·K over ε-LDP row-stochastic K by :class:`WorkingSetInteriorPoint` steps
    until value − bound <= tol·max(1, |value|), or ``limits``' deadline (``stopped=True``).
    Raises :class:`~mechdesign.solvers.highs_model.SolverDeclined` as the interior point does."""
    return run_to_proof(WorkingSetInteriorPoint(cost, epsilon, tol=tol), NAME, limits)


class InteriorPair:
    """The interior point on a working set (:class:`WorkingSetInteriorPoint`) beside the one on
    every output (:class:`~mechdesign.solvers.ldp_interior.InteriorPoint`), one step of either
    at a time, as one method with the better design and the better bound of the two.

    The working set wins by a wide margin where its restricted duals price the outputs well
    (on 1,000 values, random losses at every ε: 1–7 s against 10–24 s), and can lose where the
    optimum uses most outputs and the set grows to them in many joins (a uniform prior with the
    metric loss at ε = 8: 17 s, where every output takes 7 s; or, with a first set far from the
    optimum's outputs, where every join sets the iterate back). The working set stops once it
    holds more than half of the outputs (:meth:`_retire_a_large_set`). Otherwise which case a
    problem is shows only while the methods run, so the steps follow what each shows: each
    method's pace (how far its own gap, with the best bound it proved, has come from 1 towards
    the tolerance, in orders of magnitude, per second of its steps) predicts when it would
    finish. (A rate from the largest gap with the latest bound, as the turns of
    :mod:`mechdesign.solvers.portfolio` measure it, counted the working set's recovery after a
    join that set it back as progress, and took the steps from the interior point on every
    output where that one was the faster.) The one predicted to finish first takes the steps,
    the other one step whenever its seconds fall below :data:`TRAILING_SHARE` of the leader's.
    Before either has a gap below 1, the one that has used less time steps. A method that
    declines leaves the other; the pair declines when both have."""

    name = "interior point"

    def __init__(self, cost: np.ndarray, epsilon: float, *, tol: float = 1e-9, initial: list[int] | None = None):
        self.tol = tol
        self.starters = {"working set": lambda: WorkingSetInteriorPoint(cost, epsilon, tol=tol, initial=initial),
                         "every output": lambda: ldp_interior.InteriorPoint(cost, epsilon, tol=tol)}
        self.methods: dict = {}
        self.seconds = dict.fromkeys(self.starters, 0.0)
        self.declined: dict = {}
        self.retired = ""  # why the working set stopped, if it did (it goes on if the other declines)
        self.value, self.bound, self.latest_bound, self.done = math.inf, -math.inf, -math.inf, False
        self._design = None
        first = min(FIRST_OUTPUTS, cost.shape[1])
        if 2 * first > cost.shape[1]:  # more than half from the start: not started unless needed
            self.retired = f"working set not started: its first {first} of {cost.shape[1]} outputs are more than half"
            self._start("every output")
        else:
            self._start("working set")
            self._retire_a_large_set()

    def _retire_a_large_set(self) -> None:
        """Stop the working set once it holds more than half of the outputs (while the interior
        point over every output can go on): its steps then cost more than half of the other's
        while every join can still set it back (a uniform prior with the metric loss at ε = 8
        on 1,000 values: 534 outputs after 1.5 s, 916 at the end, 17 s against 7 s over every
        output). With 2 · :data:`FIRST_OUTPUTS` outputs or fewer it is not started at all
        (:meth:`__init__`). It goes on (or starts) if the interior point over every output
        declines."""
        method = self.methods.get("working set")
        if (method is not None and not self.retired and "working set" not in self.declined
                and 2 * method.columns > method.cost.shape[1]):
            self.retired = f"working set stopped holding {method.columns} of {method.cost.shape[1]} outputs"
            if "every output" not in self.methods:
                self._start("every output")

    def _start(self, name: str) -> None:
        started = time.perf_counter()
        try:
            self.methods[name] = self.starters[name]()
        except SolverDeclined as reason:
            self._decline(name, reason)
        finally:
            self.seconds[name] += time.perf_counter() - started
        if name in self.methods:
            self._take(self.methods[name])

    def _decline(self, name: str, reason: SolverDeclined) -> None:
        """Record that method ``name`` declined; raise when both have, or when the other
        cannot start either."""
        self.declined[name] = reason.reason
        if len(self.declined) == len(self.starters):
            raise SolverDeclined("; ".join(f"{key}: {self.declined[key]}" for key in self.starters)) from None
        other = next(key for key in self.starters if key not in self.declined)
        if other not in self.methods:
            self._start(other)

    def _take(self, method) -> None:
        if method.value < self.value:
            self.value, self._design = method.value, method.design()
        self.bound = max(self.bound, method.bound)
        self.latest_bound = max(m.latest_bound for m in self.methods.values())
        self.done = self.value - self.bound <= self.tol * max(1.0, abs(self.value))

    @property
    def rounds(self) -> int:
        return sum(method.rounds for method in self.methods.values())

    @property
    def columns(self) -> int:
        return max((method.columns for method in self.methods.values()), default=0)

    @property
    def rounds_note(self) -> str:
        """For the solver's path: the steps of each of the two."""
        notes = [f"{method.rounds} on the working set{method.rounds_note}" if name == "working set"
                 else f"{method.rounds} on every output" for name, method in self.methods.items()]
        notes += [self.retired] if self.retired else []
        notes += [f"{name} declined: {reason}" for name, reason in self.declined.items()]
        return " (" + "; ".join(notes) + ")"

    def design(self) -> np.ndarray:
        return self._design

    def result(self, stopped: bool = False) -> ContextSolution:
        return ContextSolution(self._design, self.value, min(self.bound, self.value), self.rounds, self.columns,
                               stopped)

    def _predicted(self, name: str) -> float:
        """Seconds method ``name`` would still need at the pace it has kept so far: the share of
        the way from a relative gap of 1 to the tolerance (in orders of magnitude) that its own
        gap has come, per second of its steps."""
        method = self.methods.get(name)
        if method is None or self.seconds[name] <= 0.0:
            return math.inf
        value, bound = method.value, method.bound
        if not (math.isfinite(value) and math.isfinite(bound)):
            return math.inf
        gap = (value - bound) / max(abs(value), 1e-300)
        done = math.log(1.0 / max(gap, self.tol)) / math.log(1.0 / self.tol)
        return self.seconds[name] * (1.0 - done) / done if done > 0.0 else math.inf

    def _next(self) -> str:
        names = [name for name in self.starters if name not in self.declined]
        if self.retired and "every output" in names:
            return "every output"
        if len(names) == 1:
            return names[0]
        predicted = {name: self._predicted(name) for name in names}
        if all(math.isinf(p) for p in predicted.values()):
            return min(names, key=lambda name: self.seconds[name])
        leader = min(names, key=lambda name: predicted[name])
        trailing = next(name for name in names if name != leader)
        return trailing if self.seconds[trailing] < TRAILING_SHARE * self.seconds[leader] else leader

    def advance(self, limits=None) -> bool:
        """One step of the method whose turn it is (see the class docstring). Raises
        :class:`~mechdesign.solvers.highs_model.SolverDeclined` when both have declined."""
        name = self._next()
        if name not in self.methods:
            self._start(name)
            return True
        started = time.perf_counter()
        try:
            self.methods[name].advance()
        except SolverDeclined as reason:
            self._decline(name, reason)
        finally:
            self.seconds[name] += time.perf_counter() - started
        self._take(self.methods[name])
        self._retire_a_large_set()
        return True
