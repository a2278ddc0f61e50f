"""Box-normalised pricing over the d-privacy cone: one HiGHS LP per cone, re-costed per column.

The column cone of ε·d-privacy is Γ = {v >= 0 : v_x <= e^{ε d(x, x')} v_x'}; a ray master
(:mod:`~mechdesign.solvers.ray_master`) needs, for each output's reduced costs a, the minimum of
a·v over Γ ∩ [0, 1]^X, both as a rigorous lower bound (for the Lagrangian bound) and as a
minimiser (a new column once closed under the cone's envelope). :class:`ConePricing` is that LP
over any list of pairs (x, x') with their distances: all pairs of a metric, grown as priced
vectors violate them, or the neighbour pairs of points on a line, which alone generate the
line's cone.
"""

from __future__ import annotations

import time

import numpy as np

from mechdesign.solvers.cone_transfer import TransferBound
from mechdesign.solvers.highs_model import INF, give_time, quiet_model, run_to_optimum
from mechdesign.solvers.ray_master import CHAIN_MAX_EXPONENT, RESOLVE_SLACK, polished_box_minimum

#: a pair row's coefficient e^{εd} never exceeds e^this (coefficients up to e^20 made the simplex
#: return non-optimal points and duals whose proven bound lagged its objective by 3e-6 on a
#: 20 × 20 grid); a farther pair enters as a chain of rows through auxiliary entries
PRICING_MAX_EXPONENT = 12.0
#: at most this many violated pairs per priced column enter the cone (the most violated first)
PAIRS_PER_COLUMN = 200
#: a priced column's costs, in units of its most negative one, are lowered to at most this
COST_CLIP = 1e9
#: outputs timed for the first estimate of the transfer bounds' time (:meth:`ConePricing.transfer_reserve`)
TIMED_OUTPUTS = 16


class ConePricing:
    """Pricing over the d-privacy cone, box-normalised:

        min Σ_x a_x v_x  s.t.  v_x <= e^{ε d(x,x')} v_x' (pairs in S),  0 <= v <= 1,

    for pairs (i, j) with distances d (``pairs`` = (i, j, d), n entries). One HiGHS model
    serves every column (only the costs change, so each solve restarts from the previous
    basis). S starts with the pairs at distance at most ``initial`` (all of them by default) and
    grows by :meth:`activate`; since fewer pairs make a larger cone, every value is a lower
    bound on the box minimum over the full cone. The value reported is not the solver's
    objective but the bound its row duals prove
    (:func:`~mechdesign.solvers.ray_master.proven_box_minimum`), so the Lagrangian bound
    Σu + Σ_y min(0, value_y) is rigorous throughout.

    A pair with εd above PRICING_MAX_EXPONENT = c enters as a chain v_x <= e^{εd/k} t_1,
    t_1 <= e^{εd/k} t_2, …, t_{k−1} <= e^{εd/k} v_x' with k = ⌈εd/c⌉ and auxiliary entries
    0 <= t <= 1 (cost 0): exactly the pair's constraint (t_s = e^{−sεd/k} v_x is feasible when it
    holds, and the chain implies it), with no coefficient above e^c. Pairs beyond
    e^CHAIN_MAX_EXPONENT are left out (a larger cone: still a valid bound). Leaving the far
    pairs out instead leaves a larger cone whose minimisers live on entries below e^{−c}, which
    no envelope-closed ray can match: at ε = 4 on a 10 × 10 grid its bound stayed 1.8e-4
    (relative) below a master no ray could improve."""

    def __init__(self, n: int, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], epsilon: float,
                 initial: float = np.inf):
        i, j, d = pairs
        usable = epsilon * d <= CHAIN_MAX_EXPONENT
        self.i, self.j, self.d = i[usable], j[usable], d[usable]
        with np.errstate(over="ignore"):
            self.coef = np.exp(epsilon * self.d)
        self.epsilon = epsilon
        self.active = np.zeros(self.i.size, dtype=bool)
        # the model's rows (variable indices and coefficients, in row order) and its width
        self.ri = self.rj = np.array([], dtype=np.int64)
        self.rcoef = np.array([])
        self.width = n
        h = quiet_model(warm=True)  # each solve restarts from the previous basis; tight duals
        h.addCols(n, np.zeros(n), np.zeros(n), np.ones(n), 0, np.zeros(n, dtype=np.int32),
                  np.array([], dtype=np.int32), np.array([]))
        self.h = h
        self.n = n
        self.transfer: TransferBound | None = None  # built on first use
        self.transfer_seconds: float | None = None  # per output, at the last transfer_bounds
        self.activate(self.d <= initial)

    def _chains(self, new: np.ndarray, links: np.ndarray):
        """The rows of the pairs ``new``, pair p as a chain of ``links[p]`` rows x <= e^{εd/k} y
        through fresh auxiliary entries numbered from the model's width: (x, y, e^{εd/k}) per
        row, in order, and the new width."""
        ri, rj, rc, t = [], [], [], self.width
        for p, k in zip(new, links):
            chain = [int(self.i[p])] + list(range(t, t + k - 1)) + [int(self.j[p])]
            t += k - 1
            ri += chain[:-1]
            rj += chain[1:]
            rc += [float(np.exp(self.epsilon * self.d[p] / k))] * k
        return np.array(ri), np.array(rj), np.array(rc), t

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
        ri, rj, rc, self.width = self._chains(new, links)
        k = ri.size
        self.h.addRows(k, np.full(k, -INF), np.zeros(k), 2 * k, np.arange(0, 2 * k, 2, dtype=np.int32),
                       np.column_stack([ri, rj]).ravel().astype(np.int32), np.column_stack([np.ones(k), -rc]).ravel())
        self.ri, self.rj, self.rcoef = np.concatenate([self.ri, ri]), np.concatenate([self.rj, rj]), np.concatenate([self.rcoef, rc])
        self.active[new] = True
        return int(new.size)

    def price(self, a: np.ndarray, limits=None, fresh: bool = False,
              slack: float | None = None) -> tuple[float, np.ndarray]:
        """(a rigorous lower bound on the box minimum, the solver's minimiser clipped to [0, 1]).
        ``fresh``: solve from scratch rather than from the previous column's basis, whose exact
        duals can be dual infeasible by 1e-11 per entry (1e-8 per column at 1000 points);
        ``slack``: how far the bound may lag the minimiser's value before the model is solved
        again from scratch (:func:`~mechdesign.solvers.ray_master.polished_box_minimum`).

        The model is solved for a / s, s the power of two nearest below the largest negative
        entry's magnitude (exact in floating point both ways), with entries above
        :data:`COST_CLIP` (in those units) lowered to it (a lower cost: its bound still bounds
        the column's). The solver's tolerances are absolute: unscaled, reduced costs of 1e-8
        next to entries of 1 were certified only to −7e-10 per column (v = 0 optimal; 410
        columns left a 2e-4 relative gap on a 1,000-point line at ε = 2), scaled to −3e-16."""
        lowest = float(a.min())
        if not np.isfinite(lowest):  # a cost of −inf, or not a number: no claim
            return -np.inf, np.zeros(self.n)
        if lowest >= 0.0:  # v = 0 is a minimiser: nothing negative to price
            return 0.0, np.zeros(self.n)
        s = 2.0 ** np.floor(np.log2(-lowest))
        scaled = np.minimum(a / s, COST_CLIP)
        if slack is None:
            slack = RESOLVE_SLACK * max(1.0, float(np.abs(a).max()))
        self.h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), scaled)
        if fresh:
            self.h.clearSolver()
        give_time(self.h, limits)
        run_to_optimum(self.h)
        v = np.clip(np.asarray(self.h.getSolution().col_value)[:self.n], 0.0, 1.0)
        full = np.concatenate([scaled, np.zeros(self.width - self.n)])
        proven = polished_box_minimum(self.h, full, self.ri, self.rj, self.rcoef, float(v @ scaled), slack / s)
        return proven * s, v

    def transfer_bounds(self, a: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Per output in ``columns``, the transfer bound on its box minimum under reduced costs
        ``a[:, y]`` (:mod:`~mechdesign.solvers.cone_transfer`, over every usable pair, not only
        the active ones): no LP, so every output has one, priced or not."""
        transfer = self._transfer()
        start = time.perf_counter()
        bounds = np.array([transfer.bound(a[:, y]) for y in columns])
        if columns.size:
            self.transfer_seconds = (time.perf_counter() - start) / columns.size
        return bounds

    def flow_bounds(self, a: np.ndarray, columns: np.ndarray, limits=None) -> np.ndarray:
        """Per output in ``columns``, in order, the flow bound on its box minimum
        (:mod:`~mechdesign.solvers.cone_flow`: the box minimum over the transfer bound's pairs),
        until ``limits`` expire; −inf for the outputs not reached."""
        transfer = self._transfer()
        bounds = np.full(columns.size, -np.inf)
        for k, y in enumerate(columns):
            if limits is not None and limits.expired():
                break
            bounds[k] = transfer.flow(a[:, y], limits)
        return bounds

    def _transfer(self) -> TransferBound:
        """The transfer and flow bounds' pairs, built on first use (over every usable pair)."""
        if self.transfer is None:
            self.transfer = TransferBound(self.n, self.i, self.j, self.coef)
        return self.transfer

    def transfer_reserve(self, a: np.ndarray, columns: np.ndarray) -> float:
        """Seconds the transfer bounds of ``columns`` are expected to take (:meth:`transfer_bounds`
        at the pace per output of its last call, or of :data:`TIMED_OUTPUTS` outputs spread over
        ``columns`` timed now): a pass that must end by a deadline stops pricing that much
        earlier (5,000 airports: 8.4 ms an output, 42 s in all; 1,500: 2.5 ms, 3.8 s)."""
        if self.transfer_seconds is None:  # (one output first, untimed: the kernel's compile or load)
            self.transfer_bounds(a, columns[:1])
            self.transfer_bounds(a, columns[::max(columns.size // TIMED_OUTPUTS, 1)][:TIMED_OUTPUTS])
        return (self.transfer_seconds or 0.0) * columns.size

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
