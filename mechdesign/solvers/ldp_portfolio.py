"""ε-LDP with an expected loss: column generation and the interior-point method, interleaved.

Neither method is fast everywhere. Column generation
(:mod:`mechdesign.solvers.column_generation`) wins when the optimum uses few outputs (small ε:
a handful of staircase columns), but when it uses nearly every output (large ε, random losses)
its master grows into the whole |X||Y|-variable LP. The interior-point method
(:mod:`mechdesign.solvers.ldp_interior`; on every output and on a working set of outputs that
grows by pricing, stepped by the progress each shows: :mod:`mechdesign.solvers.ldp_working_set`)
takes tens of steps whatever the optimum looks like, where column generation needs a few small
masters.
Which one wins is not known in advance and no threshold on ε or the size predicts it, so both run
in turns (:mod:`mechdesign.solvers.portfolio`). Column generation's bound often jumps in its last
rounds, which the turns' rule (the method predicted to finish later still gets a third of the
time) allows for.

Each method's bound is a Lagrangian bound of row duals priced over every output, valid for any
duals. A method declines when HiGHS ends a master without an optimum or at the interior point's
iteration limit; the result's ``path`` records each method's rounds and seconds, which one
supplied the design and which the bound, and any decline.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.limits import Limits
from mechdesign.privacy.ldp import LDP
from mechdesign.solvers.column_generation import ColumnRounds, LDPCone
from mechdesign.solvers.contexts import EXACT_AIM, ContextSolution, aimed_gap, solve_contexts
from mechdesign.solvers.ldp_working_set import InteriorPair
from mechdesign.solvers.portfolio import Turns
from mechdesign.solvers.predicates import expected_loss, one_notion_of
from mechdesign.solvers.race import compete
from mechdesign.solvers.registry import SpecialSolver

NAME = "HiGHS column generation + interior point"


def solve_interleaved(cost: np.ndarray, epsilon: float, *, tol: float = 1e-9, initial: list[int] | None = None,
                      limits: Limits | None = None, path: list[str] | None = None,
                      used: list[int] | None = None) -> ContextSolution:
    """Minimise Σ cost·K over ε-LDP row-stochastic K by column generation and the interior-point
    method in turns or at once (see the module docstring), until the best design is within
    ``tol`` of the best bound, relative to |value| (or, for a value near zero, to 1e-6 of the
    uniform mechanism's value, as the certificate measures the gap), or ``limits`` expire
    (``stopped=True``: the best design so far with the best bound). What happened is appended
    to ``path``; the outputs column generation's last master used are put in ``used`` (a warm
    start for a neighbouring ε). Raises :class:`SolverDeclined` when both methods declined.

    ``initial`` names output columns for both methods to begin with."""
    path = [] if path is None else path
    cone = LDPCone(cost.shape[0], epsilon)
    pricing = min(tol, EXACT_AIM)  # column generation adds every column that improves by more
    turns = Turns({ColumnRounds.name: lambda: ColumnRounds(cost, cone, tol=pricing, initial=initial),
                   InteriorPair.name: lambda: InteriorPair(cost, epsilon, tol=tol, initial=initial)}, NAME,
                  floor=1e-6 * float(np.abs(cost).sum()) / max(cost.shape[1], 1))
    try:
        return compete(turns, tol, limits, path)
    finally:
        columns = turns.started.get(ColumnRounds.name)
        if used is not None and columns is not None:
            used[:] = np.flatnonzero(columns.design().sum(axis=0) > 0).tolist()


def applies(problem) -> str | None:
    """ε-LDP (δ = 0) alone with an expected-loss objective."""
    return one_notion_of(problem, LDP) or expected_loss(problem)


def ldp_interleaved(problem, limits=None):
    """ε-LDP alone with an expected-loss objective, per context, by :func:`solve_interleaved`."""
    epsilon = problem.privacy[0].epsilon
    # warm start: the outputs the last solve of this problem used (sweeps re-solve one problem
    # at a sequence of ε; neighbouring optima share most of their columns)
    seeds = problem.extras.setdefault("column_generation_outputs", {})
    path: list[str] = []
    tol = aimed_gap(problem.gap_tolerance)

    def solve_one(key, cost):
        notes: list[str] = []
        used: list[int] = []
        try:
            return solve_interleaved(cost, epsilon, tol=tol, initial=seeds.get(key), limits=limits, path=notes,
                                     used=used)
        finally:
            if used:
                seeds[key] = used
            path.extend(f"{key}: {note}" for note in notes)

    raw, outcome = solve_contexts(problem, solve_one, NAME, limits=limits)
    return raw, outcome.recording(path=path)


SOLVER = SpecialSolver(NAME, applies, ldp_interleaved)
