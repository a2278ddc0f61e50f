"""An interior-point method for the ε·d-privacy design LP over any metric, built on its block
structure: each output's column has its own pair constraints, coupled to the others only by the
rows' sums.

The LP, over the pairs (a, b) whose constraints imply every other (the metric's privacy pairs)
with coefficients c_ab = e^{ε d(a, b)},

    min Σ_{x,y} C[x, y] K[x, y]   s.t.  Σ_y K[x, y] = 1,   K >= 0,
                                         S[(a,b), y] = c_ab K[b, y] − K[a, y] >= 0,

is solved by Mehrotra's predictor–corrector (Mehrotra, “On the implementation of a primal-dual
interior point method”, SIAM J. Optim. 1992) with Gondzio's centrality correctors. Writing G for
the pair map (S = G K column by column), μ for the bounds' duals and Λ for the pairs', the
Newton system's K block is, for each output y, the |X| × |X| matrix

    H_y = Gᵀ diag(Λ_y / S_y) G + diag(μ_y / K_y),

which is positive definite at every interior iterate. The row sums couple the columns through one
|X| × |X| system (Σ_y H_y⁻¹) Δu = …, so an iteration costs |Y| factorisations of size |X| and one
more: O(|Y| |X|³) arithmetic and O(|Y| · pairs) memory, whatever ε, the prior and the loss are.
Near the optimum the diagonal of H_y spans twenty orders of magnitude (the weights Λ/S of tight
and of slack pairs), so each block is scaled to a unit diagonal before it is factorised and its
solves use the factor, not the inverse: without that the dual iterates drift once the gap
reaches about 1e-6 (and products with the inverses let the rows' sums drift), with it the gap
closes to 1e-10. The blocks are assembled, factorised and inverted by compiled passes over
ranges of outputs, one per thread, and solved the same way; while the proven gap is above
:data:`SINGLE_PRECISION_GAP` the factorisations and inverses are in single precision (on a
chain, the coupling's matrix products).
The iterate keeps K and S strictly positive and its rows summing to 1 (the start does, and every
step keeps Σ_y ΔK = 0), so each iterate is a private design up to round-off.

Most of the pair rows never bind (on a 10 × 10 grid at ε = 1, under 1 % of the (pair, output)
rows are tight at the optimum), yet every nearly tight one blocks the steps in turn: with all of
them the iterations need about a hundred short steps. So the iterations start from a working
set, each input's :data:`NEAR_PAIRS` pairs of smallest ε·d (at either end) for every output; a
row outside it has Λ = 0 and no weight in the blocks. Its slack is still kept (S = G K for every
row) and still limits the primal step, so every iterate stays private for all the pairs; a row
outside the set that a step of the *reach* would cross joins it after the step (unless its entry
K[a, y] would reach zero first: that bound stops the step), its Λ taken from the μ of the entry
it pushes down as far as that μ allows, the rest a residual the steps shrink
(:mod:`~mechdesign.solvers.metric_joins`).
The iteration count falls by about a third (the 10 × 10 grid at ε = 1: 66 steps instead of 103,
with 9 % of the rows in the set at the end). The set's slacks, duals and directions have one
entry per row (:class:`~mechdesign.solvers.metric_rows.Rows`). The reach starts at
:data:`FIRST_REACH` times the step taken and doubles whenever a row outside the set cut a step
short, up to a full step: a full reach from the start joins rows that the early, long directions
would cross but the short steps taken never come near (300 locations at ε = 1: 62 % of all rows
by the fifth step, 5 s a step instead of 1 s); and at most half the set's rows join at one step,
those the direction crosses first (:data:`~mechdesign.solvers.metric_joins.JOIN_GROWTH`).

On a chain the bounds K >= 0 that the pair rows imply are left out
(:func:`~mechdesign.solvers.metric_reduced.chain_bounds`): their entries have no μ, and a line of
1,000 points at ε = 0.1 with a random loss takes about a quarter fewer steps (65 instead of 90
with a Zipf prior); and the outputs whose columns have died leave the iterations, priced exactly
for the bound (:mod:`~mechdesign.solvers.metric_live_columns`).

Nothing here is trusted for the bound: for any Λ >= 0 the Lagrangian relaxation of the pair
constraints over row-stochastic K is

    L(Λ) = Σ_x min_y (C − GᵀΛ)[x, y] <= the optimum,

evaluated at every iterate, and the run stops when the design's value is within ``tol`` of the
best such bound. Coincident inputs (pairs at distance 0 both ways) must share their row; they are
merged into one row before the iterations start, and the design gives each of them that row.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from mechdesign.core.blas_threads import one_blas_thread
from mechdesign.core.threads import over, ranges, solver_threads
from mechdesign.solvers import metric_joins
from mechdesign.solvers import metric_passes as passes
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import step_lengths
from mechdesign.solvers.metric_chain import BlockSystem, ChainNewton, is_chain, tiled
from mechdesign.solvers.metric_dense import DenseNewton, factors_and_inverse_sum
from mechdesign.solvers.metric_interior_memory import check_memory
from mechdesign.solvers.metric_live_columns import LiveColumns, carried_columns
from mechdesign.solvers.metric_orbits import OutputOrbits
from mechdesign.solvers.metric_passes import centred_targets, recover
from mechdesign.solvers.metric_reduced import ReducedLP, coincident_groups  # noqa: F401 (re-exported)
from mechdesign.solvers.metric_rows import Rows, nearest_pairs

#: iterations before the method gives up proving an optimum: a backstop (the stall rules end a run
#: that stops making progress, the time limit any run), well above the 180–200 steps of 20 × 20
#: grids at ε = 1 with a Zipf prior (at 200 one stopped at a gap of 6.7e-6, still closing)
MAX_ITERATIONS = 400
#: how close to the boundary a step may go (the fraction of the largest feasible step)
STEP_FRACTION = 0.95
#: centrality correctors per iteration at most (each one more solve with the same factors). On a
#: chain the tridiagonal blocks cost about as much to factorise and sum as three directions (each a
#: pass over the entries and two over the 2·|X|·|Y| pair rows): a line of 1,000 points took 5 to
#: 14 % less time to a gap of 5e-7 with two correctors than with four, over seven instances from
#: ε = 0.1 to 8 (three priors, three losses; 5 to 15 % more steps). On dense blocks a direction
#: costs about a third of the factorisation too, and the correctors also change which rows join the
#: working set: with four, 300 haversine locations (uniform prior, squared loss) took 122 s at
#: ε = 0.1 and 391 s at ε = 0.25 alone, with two 60 s and 81 s (at ε = 0.25, 2.7 million rows in
#: the set instead of 14.2). Instance by instance it goes either way (a 20 × 20 grid, Zipf prior,
#: random loss, ε = 0.25: 103 s instead of 63 s in the envelope), but over the envelopes' 63
#: instances 300 haversine locations took at most 97 s (two had missed 2 minutes with four) and
#: 2,144 s in all instead of 2,474 s, and the 20 × 20 grid at most 237 s instead of 246 s
MAX_CORRECTORS = 2
#: the method declines when its proven gap has not halved over this many iterations (when
#: round-off, not the path, sets the pace near the optimum)
STALL_ITERATIONS = 30
#: the stall window starts again after an iteration at which the working set grew by this share
#: of its rows or more: the new rows' duals start far from their values at the optimum and the
#: gap closes slowly while they settle (300 haversine locations at ε = 0.25, uniform prior,
#: metric loss: the set grew by 12, 21 and 8 % at steps 130 to 132 and the gap then fell only
#: 1.9-fold in 30 steps, from 1.0e-5 to 5.3e-6, and the method declined, still closing it)
STALL_RESTART_GROWTH = 0.01
#: the method declines when its proven gap has fallen by less than 1 % over this many
#: iterations, no row has joined the working set in them, and the iterate's own
#: complementarity is below the tolerance: the iterate has converged as far as round-off lets
#: it (on a 10 × 10 grid, twenty iterations at one gap). (While rows still join, the new
#: rows' duals are still on their way: the gap can sit for a few iterations and then close.)
FROZEN_ITERATIONS = 5
#: each input's pairs (of smallest ε·d, as the first and as the second of the pair) that start
#: the working set of pair rows, for every output
NEAR_PAIRS = 4
#: the first reach of the rows' joining: rows outside the working set join when a step this many
#: times the one taken would cross them; the reach doubles whenever a row outside the set cut
#: the step short (the set was too small), up to a full step
FIRST_REACH = 2.0
#: near the optimum the blocks' solves leave residuals in the dual equation that the steps
#: carry into the duals, and the Lagrangian bound stalls below the optimum (a 300-point line at
#: ε = 0.1: 2.6e-6 above the tolerance). Once the dual equation's residual could cost the bound
#: this share of the tolerance (Σ_x max_y |residual|, the most it can take from the bound),
#: the direction each step takes gets one step of iterative refinement (the predictor and the
#: trial correctors, which only choose it, are not refined): the line's gap then closes to
#: 2.5e-7
REFINE_SHARE = 0.1
#: while the proven gap (relative) is above this, the dense blocks are factorised and inverted
#: in single precision (LAPACK's s-routines, subnormals flushed to zero; 300 haversine locations
#: at ε = 1, Zipf prior: the method alone 82.8 s all in double, 51.9 s with single precision
#: down to this gap, and 207 s when subnormals were not flushed), their sum and every solve's
#: arithmetic staying in double: the directions are then accurate to about seven digits,
#: which the early steps do not need (an inexact direction only leaves a residual that the
#: next steps' right-hand sides carry). Over
#: 10 × 10 grids at ε = 0.5, 1, 2 (three priors, the metric and a random loss) the steps to a
#: gap of 5e-7 were 1,106 against 1,094 all in double with the switch at 1e-3; with it at 1e-4
#: three of the 18 runs stalled, at 1e-5 seventeen. On a chain the factorisations cost little;
#: there the matrix products of the coupling's tiles are taken in single precision
#: (:class:`~mechdesign.solvers.metric_chain.ChainNewton`): alone on a 2,000-point line at
#: ε = 0.1 with a Zipf prior and a random loss, 57.3 s (91 steps, 72 in single precision)
#: against 61.3 s (94 steps) all in double; with the sum's Cholesky factor in single precision
#: too, 58.9 s (93 steps)
SINGLE_PRECISION_GAP = 1e-3
#: single precision also ends for the run when a factorisation fails in it, and when its gap,
#: below :data:`SINGLE_PRECISION_SLOW`, has not halved over this many steps: round-off can stall
#: it (100 haversine locations at ε = 0.25 sat at a gap of 1.05e-3 in single precision; left
#: there longer, 10 × 10 grids stalled at 1.9e-3 and 3.9e-3, and between 1e-5 and 1e-4). Above
#: 1e-2 slow stretches are the path's, not round-off's: with the rule from 0.1 down, single
#: precision ended early on 300 haversine locations and 20 × 20 grids at ε = 1 (one run each:
#: 7 % more time in all, 14 % more a step). Should the method's own stall rule
#: (:data:`STALL_ITERATIONS`) find single-precision steps in its window, the run goes on in
#: double precision for a window of its own instead of declining
SINGLE_PRECISION_PROGRESS = 10
SINGLE_PRECISION_SLOW = 1e-2
#: single precision also ends for the run when the dual equation's residual its steps left
#: (Σ_x max_y |r_d|, the most it can take from the bound) reaches this share of the absolute gap:
#: the bound then pays for the round-off. Where μ/K spans many orders its directions leave
#: residuals near 1e-4 (a 100-node graph at ε = 0.5, Zipf prior, random loss: below 1e-10 in
#: double precision; in single 1e-7, then 1.7e-4 from a gap of 1.3e-3 on), and once the primal
#: has converged the dual steps are too short to wash them out (that run's gap froze at 1.5e-3;
#: ended at the share, it closes as in double precision)
SINGLE_PRECISION_RESIDUAL = 0.1
#: the start's complementarity product per row, relative to max|C|/|Y|: the start scales
#: with the cost, so a loss and its multiple follow the same path. The constant hardly
#: matters: 0.5, 1, 2, 4 and 8 took 3,233, 3,215, 3,273, 3,253 and 3,302 steps in all to a gap
#: of 5e-7 over 10 × 10 grids and 100 random points at ε = 0.25, 1 and 4, three priors and
#: three losses (54 instances; no run failed)
START_PRODUCT = 2.0
def _check_start(n: int, pairs: int, m: int, chain: bool) -> None:
    """:func:`~mechdesign.solvers.metric_interior_memory.check_memory` for the iterations'
    start: the working set's first rows are at most each input's :data:`NEAR_PAIRS` pairs at
    either end, on every output."""
    check_memory(n, pairs, m, min(pairs, 2 * NEAR_PAIRS * n) * m, blocks=not chain)


def iteration_seconds(cost: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
                      outputs: int | None = None) -> float:
    """The seconds one iteration's factorisations would take on ``cost``'s inputs and outputs
    (or on ``outputs`` of them: one per orbit),
    timed on one and on three outputs' blocks on one thread (their difference over two: the
    per-output time without the fixed costs, after a warm-up on tiny blocks), multiplied by
    the outputs and divided by the threads that share them (:func:`solver_threads`): an
    iteration cannot be interrupted, so the turns let the other method run this long before
    its first one. Raises :class:`SolverDeclined` when its arrays would not fit in memory
    (:func:`_check_start`), without allocating them. (Coincident inputs merged first can only
    make the iteration shorter.)"""
    import time

    g, m = cost.shape[0], cost.shape[1] if outputs is None else outputs
    i, j = np.asarray(pairs[0]), np.asarray(pairs[1])
    chain = is_chain(i, j)
    _check_start(g, i.size, m, chain)
    if chain:
        from mechdesign.solvers.metric_chain_kernels import chain_inverse_sum

        def run(k: int, size: int) -> None:
            chain_inverse_sum(np.ones((size, k)), np.full((size, k), -0.5), np.zeros((size, size)))
    else:
        def run(k: int, size: int) -> None:
            none = np.zeros(0, dtype=np.intp)
            factors_and_inverse_sum(np.zeros(0), none, none, np.zeros(0), none, np.full((size, k), 2.0), threads=1)
    with one_blas_thread():
        run(1, 2)  # compiled code loaded, LAPACK warmed
        seconds = []
        for k in (1, 3):
            start = time.perf_counter()
            run(k, max(g, 2))
            seconds.append(time.perf_counter() - start)
    per_output = max((seconds[1] - seconds[0]) / 2, seconds[1] / 3 / 4)  # (round-off of the clock)
    return m * per_output / (1 if chain else min(solver_threads(), m))  # the outputs' ranges run at once


class _Iterate:
    """The primal (K, S) and dual (u, μ, Λ) iterate over the working set ``rows``
    (:class:`~mechdesign.solvers.metric_rows.Rows`): S and Λ hold one entry per row of the set,
    ``slack`` every pair row's slack G K (P, |Y|), which the primal step keeps positive (None
    once every row is in the set). It
    starts with K uniform over the outputs (rows sum to 1, every pair's slack (c − 1)/|Y| > 0),
    every working row's complementarity product τ = START_PRODUCT·max|C|/|Y| (a loss and its
    multiple start alike), and u, μ >= τ|Y| chosen so that the dual equation holds exactly. An
    entry whose bound the LP drops (not ``lp.bounded``) has no μ: it is held at 0 (its target is
    0, so its dμ is too), and the dual equation starts off by the μ it would have had, a residual
    the steps shrink by 1 − α each (``carried``: its Σ_x max_y, times the product so far)."""

    def __init__(self, lp: ReducedLP):
        g, m = lp.cost.shape
        self.reach = FIRST_REACH
        self.K = np.full((g, m), 1.0 / lp.outputs)
        self.slack = lp.G @ self.K
        scale = float(np.abs(lp.cost).max(initial=0.0))
        tau = START_PRODUCT * (scale if scale > 0 else 1.0) / lp.outputs
        near = nearest_pairs(lp.a, lp.b, np.log(lp.coef), NEAR_PAIRS)
        self.rows = Rows(lp, np.repeat(near[:, None], m, axis=1))
        self.S = self.rows.gather(self.slack)
        self._drop_slack_when_complete()
        self.lam = tau / self.S
        reduced = lp.cost - self.rows.transpose(self.lam)
        self.u = lp.row_minima(reduced) - tau * lp.outputs
        self.mu = reduced - self.u[:, None]
        self.carried = float(self.mu[~lp.bounded].max(axis=1, initial=0.0).sum())
        self.mu[~lp.bounded] = 0.0
        self.bounds = int(lp.bounded.sum()) * m  # (the products K μ that count)
        self._pairs_term: np.ndarray | None = None  # (Gᵀ Λ at this iterate, once formed)
        self.excess: np.ndarray | None = None  # (the rows' duals beyond what μ paid: metric_joins)
        self._excess_term: np.ndarray | None = None

    def _drop_slack_when_complete(self) -> None:
        """Once every pair row is in the set (a line's neighbour pairs from the start) S holds
        every slack: the full array and its pass over all pairs each step are dropped."""
        if self.rows.size == self.rows.member.size:
            self.slack = None

    def pairs_term(self) -> np.ndarray:
        """Gᵀ Λ at this iterate, as an (inputs, outputs) array: formed once between steps, for
        the bound and for the next step's dual residual (a pass over the working set's rows)."""
        if self._pairs_term is None:
            self._pairs_term = self.rows.transpose(self.lam)
        return self._pairs_term

    def excess_term(self) -> np.ndarray:
        """Gᵀ e for the joined rows' excess e (:mod:`~mechdesign.solvers.metric_joins`), formed once
        between steps."""
        if self._excess_term is None:
            self._excess_term = self.rows.transpose(self.excess)
        return self._excess_term

    def moved(self) -> None:  # (forget what was formed at the iterate before a step moved it)
        self._pairs_term = self._excess_term = None

    def complementarity(self) -> tuple[float, int]:
        """(Σ K μ + Σ S Λ over the set, the number of products): the iterate's own duality gap
        when its equations hold."""
        return float((self.K * self.mu).sum() + self.S @ self.lam), self.bounds + self.S.size


def _solve(lp: ReducedLP, it: _Iterate, newton: BlockSystem, r_p: np.ndarray, r_d: np.ndarray, t_K: np.ndarray,
           t_S: np.ndarray) -> list[np.ndarray]:
    """(dK, du) solving the Newton equations
        Σ_y dK = r_p,   du + dμ + Gᵀdλ = r_d,   μ dK + K dμ = t_K,   Λ dS + S dλ = t_S,   dS = G dK
    by the block elimination of the module docstring (dS, dμ and dλ follow from the last three); the
    direction a step takes may then get a step of iterative refinement (:func:`_refine`)."""
    rhs = _blocks_rhs(it, r_d, t_K, t_S)
    v = newton.apply(rhs)
    du = lp.invariant(scipy.linalg.cho_solve(newton.factor, r_p - lp.row_sums(v), check_finite=False))
    newton.add_row(du, v)  # (v becomes dK)
    return [v, du]


def _blocks_rhs(it: _Iterate, r_d: np.ndarray, t_K: np.ndarray, t_S: np.ndarray) -> np.ndarray:
    """The blocks' right-hand side t_K/K + Gᵀ(t_S/S) − r_d (see :func:`_solve`), in one pass
    over the entries and one over the rows."""
    rhs = passes.quotient_less(t_K, it.K, r_d)
    it.rows.add_transpose_ratio(t_S, it.S, rhs)
    return rhs


def _refine(lp: ReducedLP, it: _Iterate, newton: BlockSystem, rhs: np.ndarray, dK: np.ndarray, du: np.ndarray
            ) -> None:
    """One step of iterative refinement of a solution (dK, du) of :func:`_solve`, in place: the
    blocks' equations H_y dK_y = rhs_y + du again, with H applied as a product, their residual
    corrected by the same elimination (keeping Σ_y dK = r_p)."""
    residual = rhs + du[:, None] - newton.multiply(it.rows, dK)
    v = newton.apply(residual)
    correction = lp.invariant(scipy.linalg.cho_solve(newton.factor, -lp.row_sums(v), check_finite=False))
    newton.add_row(correction, v)
    dK += v
    du += correction


class _Direction:
    """One search direction and its largest interior step lengths."""

    def __init__(self, lp: ReducedLP, it: _Iterate, newton: BlockSystem, r_d: np.ndarray, r_p: np.ndarray,
                 t_K: np.ndarray, t_S: np.ndarray):
        self.dK, self.du = _solve(lp, it, newton, r_p, r_d, t_K, t_S)
        self.dmu = np.empty_like(self.dK)
        self._recover(it, t_K, t_S)

    def _recover(self, it: _Iterate, t_K: np.ndarray, t_S: np.ndarray) -> None:
        """dS = G dK, dμ = (t_K − μ dK)/K and dλ = (t_S − Λ dS)/S, with the step lengths: one
        pass over the entries, one over the rows."""
        a_K, a_mu = recover(t_K, it.mu, self.dK, it.K, self.dmu)
        self.dS, self.dlam, a_S, a_lam = it.rows.slack_recovered(self.dK, t_S, it.lam, it.S)
        self.a_p, self.a_d = min(a_K, a_S), min(a_mu, a_lam)

    def refine(self, lp: ReducedLP, it: _Iterate, newton: BlockSystem, r_d: np.ndarray, t_K: np.ndarray,
               t_S: np.ndarray) -> None:
        """One step of iterative refinement of this direction for the targets it was solved for
        (t_K, t_S), then dS, dμ, dλ and the step lengths again."""
        _refine(lp, it, newton, _blocks_rhs(it, r_d, t_K, t_S), self.dK, self.du)
        self._recover(it, t_K, t_S)


class MetricInteriorPoint:
    """The method one iteration at a time (:meth:`advance`), so that a caller can interleave it
    with another method: :attr:`value` and :meth:`design` are the best design so far (the
    iterate of least objective, rows rescaled to sum to 1 exactly), :attr:`bound` the best bound
    proven so far, :attr:`latest_bound` the last iterate's, and :attr:`done` whether value and
    bound are within ``tol``·max(|value|, 1e-300). With ``symmetry``, a group of permutations of
    the points (outputs = inputs) that preserves the distances and the cost exactly
    (:func:`~mechdesign.solvers.metric_orbits.exact_symmetry`), the iterations keep one output
    per orbit (:mod:`~mechdesign.solvers.metric_orbits`; dense blocks only)."""

    name = "interior point"
    steady = True  # its gap falls by a steady factor a step (:meth:`portfolio.Turns.finishing`)

    def __init__(self, cost: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], epsilon: float, *,
                 tol: float = 1e-9, repair=None, symmetry=None):
        i, j, d = (np.asarray(p) for p in pairs)
        orbits = None if symmetry is None or symmetry.order == 1 or is_chain(i, j) else OutputOrbits(symmetry)
        m = cost.shape[1] if orbits is None else orbits.columns.size
        _check_start(cost.shape[0], i.size, m, is_chain(i, j))
        self.lp = ReducedLP(np.asarray(cost, dtype=float), i.astype(int), j.astype(int), d.astype(float), epsilon,
                           orbits)
        if self.lp.cost.shape[1] > m or (is_chain(i, j) and not self.lp.chain):  # merged inputs: more to hold
            lp = self.lp
            _check_start(lp.cost.shape[0], lp.a.size, lp.cost.shape[1], False)
        self.cost, self.tol, self.repair, self._repaired = np.asarray(cost, dtype=float), tol, repair, None
        self.it = _Iterate(self.lp)
        self.lp = LiveColumns(self.lp) if self.lp.chain else self.lp  # (outputs leave once dead)
        self.value, self.bound, self.latest_bound, self._design = math.inf, -math.inf, -math.inf, None
        self.rounds, self.done, self._joined = 0, False, 0  # (the last iteration at which rows joined)
        self._grew = -STALL_ITERATIONS  # (the last one at which the set grew by STALL_RESTART_GROWTH)
        self._single = not self.lp.chain or tiled(self.lp.cost.shape[0])  # (while above SINGLE_PRECISION_GAP)
        self.single_steps, self._last_single = 0, 0  # (steps in single precision; the last one)
        self.gaps: list[float] = []
        self._evaluate()

    @property
    def rounds_note(self) -> str:
        """What the path adds to the rounds: the steps in single precision, the outputs kept (one per
        orbit, or those still live at the end)."""
        notes = [f"{self.single_steps} in single precision"] if self.single_steps else []
        if self.columns < self.lp.outputs:
            kind = "one output per orbit" if self.lp.orbits is not None else "outputs live at the end"
            notes.append(f"{kind}: {self.columns} of {self.lp.outputs}")
        return f" ({'; '.join(notes)})" if notes else ""

    @property
    def columns(self) -> int:  # (the outputs the method works with: all, the live ones, or one per orbit)
        return self.lp.cost.shape[1]

    def _evaluate(self) -> None:
        it, lp = self.it, self.lp
        design = lp.design(it.K)
        design = design / design.sum(axis=1, keepdims=True)  # (not in place: without orbits it is K)
        value = float((lp.full_cost * design).sum())
        if value < self.value:
            self.value, self._design, self._repaired = value, design, None
        self.latest_bound = float(lp.row_minima(lp.cost - it.pairs_term()).sum())
        if it.excess is not None:  # (the bound at the settled duals too: either is one)
            self.latest_bound = max(self.latest_bound, metric_joins.settled_bound(lp, it))
        self.bound = max(self.bound, self.latest_bound)
        self.done = self.value - self.bound <= self.tol * max(abs(self.value), 1e-300)

    @property
    def residual(self) -> float:
        """What the dual equation's residual at the iterate can take from the bound (:func:`_residual_cost`)."""
        return _residual_cost(self.it, _dual_residual(self.lp, self.it))

    def design(self) -> np.ndarray:
        """The best design over the original inputs (coincident ones share their row), through
        ``repair`` when one was given (a function K -> private K, or None when it cannot): the
        iterate is private up to round-off, which can leave entries near 1e-17 out of ratio
        with their neighbours. :attr:`value` is then the repaired design's."""
        if self._repaired is None:
            k = self._design[self.lp.groups]
            fixed = self.repair(k) if self.repair is not None else None
            if fixed is not None:
                k = fixed
                self.value = float((self.cost * k).sum())
            self._repaired = k
        return self._repaired

    def result(self, stopped: bool = False) -> ContextSolution:
        design = self.design()
        return ContextSolution(design, self.value, min(self.bound, self.value), self.rounds,
                               self.columns, stopped)

    def advance(self, limits=None) -> bool:
        """One predictor–corrector step, then the new iterate's design and bound. Raises
        :class:`SolverDeclined` after :data:`MAX_ITERATIONS` steps or when the system breaks
        down. (``limits`` is not needed: one step is one set of factorisations.)"""
        if self.rounds >= MAX_ITERATIONS:
            raise SolverDeclined(f"no proof of optimality within {MAX_ITERATIONS} interior-point iterations "
                                 f"(gap {self.value - self.bound:.3g})")
        gaps = self.gaps
        if (len(gaps) > FROZEN_ITERATIONS and gaps[-1] > 0.99 * gaps[-1 - FROZEN_ITERATIONS]
                and self.rounds - self._joined >= FROZEN_ITERATIONS
                and self.it.complementarity()[0] <= self.tol * abs(self.value)):
            raise SolverDeclined(f"the gap has not moved over {FROZEN_ITERATIONS} interior-point iterations "
                                 f"with the iterate converged (gap {gaps[-1]:.2g}: round-off)")
        if (len(gaps) > STALL_ITERATIONS and gaps[-1] > gaps[-1 - STALL_ITERATIONS] / 2
                and self.rounds - self._grew >= STALL_ITERATIONS):
            # single-precision steps in the window: double precision gets a window of its own
            if self._last_single and self.rounds - STALL_ITERATIONS < self._last_single:
                self._single = False
            else:
                raise SolverDeclined(f"the gap did not halve over {STALL_ITERATIONS} interior-point iterations "
                                     f"(gap {gaps[-1]:.2g})")
        self.rounds += 1
        rows = self.it.rows.size
        r_d = _dual_residual(self.lp, self.it) if self._single and gaps else None  # (the step's too)
        if r_d is not None and _residual_cost(self.it, r_d) > SINGLE_PRECISION_RESIDUAL * (self.value - self.bound):
            self._single = False
        single = self._single and (not gaps or gaps[-1] > SINGLE_PRECISION_GAP)
        with one_blas_thread():  # hundreds of small factorisations: threads only cost hand-offs
            try:
                _step(self.lp, self.it, REFINE_SHARE * self.tol * abs(self.value), single, r_d)
                failed = False
            except SolverDeclined:
                if not single:
                    raise
                failed = True  # (the step failed before it moved the iterate)
            if failed:  # in double, once the failed step's arrays are gone with its traceback
                self._single = single = False
                _step(self.lp, self.it, REFINE_SHARE * self.tol * abs(self.value), r_d=r_d)
        if self.it.rows.size > rows:
            self._joined = self.rounds
            if self.it.rows.size >= (1.0 + STALL_RESTART_GROWTH) * rows:
                self._grew = self.rounds
        self._evaluate()
        gaps.append((self.value - self.bound) / max(abs(self.value), 1e-300))
        if self.lp.chain:
            columns = self.columns
            self.lp, self.it = carried_columns(self.lp, self.it, self.value - self.bound, gaps)
            self._grew = self.rounds if self.columns > columns else self._grew  # (columns back: a new window)
        if single:
            self.single_steps, self._last_single = self.single_steps + 1, self.rounds
            recent = gaps[-1 - SINGLE_PRECISION_PROGRESS:]
            if (len(recent) > SINGLE_PRECISION_PROGRESS and recent[-1] > recent[0] / 2
                    and recent[-1] < SINGLE_PRECISION_SLOW):
                self._single = False
        return True


def _dual_residual(lp: ReducedLP, it: _Iterate) -> np.ndarray:
    """The dual equation's residual r_d = C − u − μ − Gᵀ Λ at the iterate."""
    return lp.cost - it.u[:, None] - it.mu - it.pairs_term()


def _residual_cost(it: _Iterate, r_d: np.ndarray) -> float:
    """Σ_x max_y |r_d|, the most the residual ``r_d`` can take from the bound, less the start's
    residual the steps carry (``it.carried``: no error) and the joined rows' excess e
    (:mod:`~mechdesign.solvers.metric_joins`): the residual at the duals Λ − e, which only
    round-off moves from zero."""
    if it.excess is not None:
        r_d = r_d + it.excess_term()
    return float(np.abs(r_d).max(axis=1).sum()) - it.carried


def _step(lp: ReducedLP, it: _Iterate, refine_above: float = math.inf, single: bool = False,
          r_d: np.ndarray | None = None) -> None:
    """Move the iterate by one Mehrotra predictor–corrector step with Gondzio's centrality
    correctors (Gondzio, “Multiple centrality corrections in a primal-dual method for linear
    programming”, Comput. Optim. Appl. 1996). The direction taken gets a step of iterative
    refinement once the dual equation's residual could take more than ``refine_above`` from the
    bound. With ``single`` the dense blocks are factorised in single precision
    (:data:`SINGLE_PRECISION_GAP`); ``r_d``, when given, is the dual residual at the iterate."""
    from mechdesign.solvers.metric_interior_kernels import (
        move_slacks,
        outside_limit,
        stepped_products,
    )

    r_d = _dual_residual(lp, it) if r_d is None else r_d
    newton = ChainNewton(lp, it, single) if lp.chain else DenseNewton(lp, it, single)
    r_p = 1.0 - lp.row_sums(it.K)
    total, count = it.complementarity()
    mu = total / count
    # (the predictor's right-hand side is u − C in exact arithmetic; formed so, without its
    # cancellation of μ and Gᵀ Λ, it cost dense blocks steps: a 10 × 10 grid 58 instead of 49)
    aff = _Direction(lp, it, newton, r_d, r_p, passes.complementarity_targets(0.0, it.K, it.mu),
                     passes.complementarity_targets(0.0, it.S, it.lam, out=it.rows.empty()))
    mu_aff = (stepped_products(it.K, aff.dK, it.mu, aff.dmu, aff.a_p, aff.a_d)
              + stepped_products(it.S, aff.dS, it.lam, aff.dlam, aff.a_p, aff.a_d)) / count
    target = (mu_aff / mu) ** 3 * mu if mu > 0 else 0.0
    tK = passes.complementarity_targets(target, it.K, it.mu, aff.dK, aff.dmu)
    tS = passes.complementarity_targets(target, it.S, it.lam, aff.dS, aff.dlam, out=it.rows.empty())
    step = _Direction(lp, it, newton, r_d, r_p, tK, tS)
    # Gondzio's correctors: aim at a longer step, and push the trial point's complementarity
    # products that fall outside [0.1, 10]·σμ back into it
    lo, hi = 0.1 * target, 10.0 * target
    for _ in range(MAX_CORRECTORS):
        goal_p, goal_d = min(1.0, 1.5 * step.a_p + 0.1), min(1.0, 1.5 * step.a_d + 0.1)
        trial_tK, trial_tS = np.empty_like(tK), it.rows.empty()
        centred_targets(it.K, step.dK, it.mu, step.dmu, goal_p, goal_d, tK, lo, hi, trial_tK)
        centred_targets(it.S, step.dS, it.lam, step.dlam, goal_p, goal_d, tS, lo, hi, trial_tS)
        trial = _Direction(lp, it, newton, r_d, r_p, trial_tK, trial_tS)
        if trial.a_p + trial.a_d < 1.01 * (step.a_p + step.a_d):
            break
        step, tK, tS = trial, trial_tK, trial_tS
    if _residual_cost(it, r_d) > refine_above:
        # only the direction taken gets a step of refinement: the predictor and the trial
        # correctors serve to choose it (refining each of them took a third of a late step)
        step.refine(lp, it, newton, r_d, tK, tS)
    joining = None
    if it.slack is None:  # every pair row is in the set: its own step lengths are the rows'
        a_p, a_d = step_lengths(step, STEP_FRACTION)
    else:
        # every pair row limits the primal step, in the set or not; those a step of the reach
        # (it.reach times the step taken, at most a full step; the module docstring says why)
        # would cross join the set after it. Two passes, each over ranges of pairs on their own
        # threads, G dK computed on the fly; each range's joining rows go to arrays sized by its
        # count at a full step (which bounds it), listed in the order one pass would list them
        member = it.rows.member
        pieces = ranges(member.shape[0], solver_threads())
        inside = step.a_p
        found = over(lambda lo, hi: outside_limit(it.slack, member, lp.a, lp.b, lp.coef, step.dK, inside, lo, hi),
                     pieces)
        step.a_p = min(limit for limit, _ in found)
        if step.a_p < inside:  # a row outside the set cut the step short: reach further
            it.reach *= 2.0
        a_p, a_d = step_lengths(step, STEP_FRACTION)
        reach = min(1.0, it.reach * a_p)

        def move(lo: int, hi: int, count: int) -> tuple[np.ndarray, np.ndarray]:
            pair, out = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
            joined = move_slacks(it.slack, member, lp.a, lp.b, lp.coef, step.dK, a_p, reach, pair, out, lo, hi,
                                 it.K)
            return pair[:joined], out[:joined]

        moved = over(move, [(lo, hi, count) for (lo, hi), (_, count) in zip(pieces, found)])
        joining = metric_joins.first_crossed(lp, it, np.concatenate([pair for pair, _ in moved]),
                                             np.concatenate([out for _, out in moved]), step.dK)
    it.carried *= 1.0 - a_d
    if it.excess is not None:  # (the joined rows' excess: a residual the step shrinks as it does r_d)
        it.excess *= 1.0 - a_d
    it.moved()
    # the set's slacks step in place; with rows outside the set they take the step the full
    # slack array took (the same products and sums, so the same numbers), never re-gathered
    for x, alpha, dx in ((it.S, a_p, step.dS), (it.K, a_p, step.dK), (it.u, a_d, step.du), (it.mu, a_d, step.dmu),
                         (it.lam, a_d, step.dlam)):
        passes.add_scaled(x, alpha, dx)
    if joining is not None and joining[0].size:
        metric_joins.join(lp, it, *joining)
