"""The d-privacy interior point as a route of its own: the prover of last resort for a problem
whose plain LP left its optimum unproven.

Small ε·d-private problems go to the plain LP, and HiGHS proves their optimum from its duals.
Where the optimum is a millionth of the costs' scale and the costs themselves span many orders
of magnitude (a prior with masses of 1e-20 beside masses near 1, ε large, so that the optimal
design is nearly the identity), those duals are not accurate enough for the tolerance: on 15
points of a path at ε = 13 the design HiGHS returns is optimal to 3e-10, but its own duals
prove only a gap of 1.7e-6, in every unit and strategy it is re-solved in (refined, they prove
it: :mod:`~mechdesign.solvers.dual_refinement`). The interior point's bound
needs no accurate duals: for any pair multipliers Λ >= 0 it is the Lagrangian

    L(Λ) = Σ_x min_y (C − GᵀΛ)[x, y] <= the optimum

(:mod:`~mechdesign.solvers.metric_interior`), evaluated at every iterate, and on these problems
it closes the gap to 1e-10 in about thirty steps. Its designs are repaired like any other
(:func:`~mechdesign.solvers.lazy_pairs.repairer`) and certified by the caller.
"""

from __future__ import annotations

from mechdesign.privacy import MetricPrivacy
from mechdesign.solvers.contexts import aimed_gap, run_to_proof, solve_contexts
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_interior import MetricInteriorPoint
from mechdesign.solvers.predicates import expected_loss, one_notion_of

NAME = "d-privacy interior point"


def applies(problem) -> str | None:
    """One ε·d-privacy notion and an expected-loss objective (why not, else None)."""
    return one_notion_of(problem, MetricPrivacy) or expected_loss(problem)


def metric_by_interior_point(problem, limits=None):
    """(raw, outcome) for :meth:`Problem.finish`: every context's design by the interior point,
    stepped until its proven gap is within half of the problem's tolerance or ``limits``
    expire. Raises :class:`~mechdesign.solvers.highs_model.SolverDeclined` when the interior
    point declines (its arrays would not fit in memory, or its gap stalls)."""
    notion = problem.privacy[0]
    pairs, repair = (notion.i, notion.j, notion.d), repairer(notion)
    tol = aimed_gap(problem.gap_tolerance)

    def solve_one(key, cost):
        run = MetricInteriorPoint(cost, pairs, notion.epsilon, tol=tol, repair=repair)
        return run_to_proof(run, NAME, limits)

    raw, outcome = solve_contexts(problem, solve_one, NAME, limits=limits)
    return raw, outcome.recording(path=["the interior point: the plain LP's duals left its optimum unproven"])
