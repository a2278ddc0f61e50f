"""d-privacy on few points off the line: the whole design LP, built in HiGHS directly.

Below :data:`~mechdesign.solvers.predicates.GENERAL_MIN_INPUTS` inputs the LP with every
reduced pair row is small (a 3 × 3 grid: 56 pairs × 9 outputs) and the dual simplex solves it
in about a millisecond; built through the general convex route, compiling it took most of the
time of the solve. The model is the lazy-pairs LP (:class:`~mechdesign.solvers.lazy_pairs.
PairRowsModel`) with every pair row at once: pairs beyond e^12 as chains, none beyond e^20
(steeper problems go to the rays, which are exact there).

When a group of permutations of the points preserves the distances and the cost exactly (a
square grid with a uniform prior and a loss of the distance), the LP keeps one column per
orbit of outputs (see :mod:`metric_orbits`): column r stands for its orbit, and the design it
stands for is private (each image of a private column is, γ being an isometry) and has the
objective Σ_r |orbit(r)| C_r·K_r. Its rows sum to 1 when, for every orbit o of inputs,
Σ_{x in o} Σ_r |orbit(r)| K_r[x] = |orbit(o)| (the row sums of that design are constant on
each orbit of inputs). Averaging any optimum over the group gives one of this form, so the
reduced LP has the optimum of the whole one, and the bound its duals prove holds for the whole
LP. The certificate audits the design over every output, as for every solver.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.highs_methods import Method, run_method
from mechdesign.solvers.highs_model import SolverDeclined, give_time
from mechdesign.solvers.lazy_pairs import PairRowsModel
from mechdesign.solvers.lp_bound import highs_model_bound, row_simplex_bound
from mechdesign.solvers.metric_orbits import OutputOrbits, exact_symmetry
from mechdesign.solvers.predicates import GENERAL_MIN_INPUTS, metric_off_the_line, steep
from mechdesign.solvers.registry import SpecialSolver
from mechdesign.solvers.symmetry import find

NAME = "HiGHS (every pair row)"


def orbit_sums(symmetry) -> sp.csr_matrix:
    """The rows that make the design the representatives' columns stand for sum to 1, one per
    orbit of inputs, over the entries K[x, r] (row-major, one column per orbit, its
    representative's): Σ_{x in o} Σ_r (|orbit(r)| / |orbit(o)|) K[x, r] = 1."""
    orbit, sizes = symmetry.orbit, symmetry.sizes
    n, reps = orbit.size, sizes.size
    weight = sizes[None, :] / sizes[orbit][:, None]  # (x, r)
    return sp.csr_matrix((weight.ravel(), (np.repeat(orbit, reps), np.arange(n * reps))), shape=(reps, n * reps))


def solve_all_pairs(cost: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], epsilon: float,
                    points: np.ndarray | None, distances: np.ndarray, limits=None) -> ContextSolution:
    """The exact ε·d-private design of least expected loss ``cost`` (|X| × |Y|) under the reduced
    ``pairs`` (i, j, d(i, j)), every pair row in one LP (one output per orbit when the points'
    symmetries preserve ``distances`` and ``cost`` exactly), with the bound its row duals prove
    on the box [0, 1]. Raises :class:`SolverDeclined` when HiGHS ends without an optimum."""
    n, m = cost.shape
    i, j, d = pairs
    symmetry = find(points, distances, cost)
    orbits = OutputOrbits(symmetry) if exact_symmetry(symmetry, distances, cost) else None
    if orbits is None:
        model_cost, sums = cost, None
    else:  # column r stands for its whole orbit (the representatives come in the orbits' order)
        model_cost, sums = cost[:, orbits.columns] * symmetry.sizes, orbit_sums(symmetry)
    width = model_cost.shape[1]
    model = PairRowsModel(model_cost, i, j, np.exp(epsilon * d), sums)
    model.add(np.tile(np.arange(i.size), width), np.repeat(np.arange(width), i.size))
    h = model.h
    method = Method(interior=False)  # one LP of hundreds of rows: the dual simplex, no presolve
    method.apply(h)
    give_time(h, limits)
    if not run_method(h, method):
        raise SolverDeclined(f"the LP with every pair row ended {h.modelStatusToString(h.getModelStatus())}")
    K = np.maximum(np.asarray(h.getSolution().col_value)[:n * width].reshape(n, width), 0.0)
    bound = highs_model_bound(h, upper=1.0)
    if orbits is None:  # the rows' simplices kept (tighter when reduced costs sit at HiGHS's tolerance)
        bound = max(bound, row_simplex_bound(h, n, m, upper=1.0))
        design = K
    else:
        design = orbits.design(K)
    value = float((cost * design).sum())
    bound = float(np.nextafter(bound, -np.inf))
    return ContextSolution(design, value, min(bound, value), 1, h.getNumRow() - (n if sums is None else sums.shape[0]))


def applies(problem) -> str | None:
    """One ε·d-privacy notion over a metric other than the line's with an expected-loss
    objective, on fewer than GENERAL_MIN_INPUTS inputs, and no ratio beyond e^20."""
    reason = metric_off_the_line(problem)
    if reason is not None:
        return reason
    if len(problem.inputs) >= GENERAL_MIN_INPUTS:
        return f"{GENERAL_MIN_INPUTS} inputs or more: the rays and the interior point take it"
    if steep(problem.privacy[0]):
        return "a ratio beyond e^20: the rays are exact there"
    return None


def metric_by_all_pairs(problem, limits=None):
    """Every context's LP with every pair row. Declined when the bound its duals prove leaves
    a gap above the problem's tolerance (the result would fail): the general route then tries
    HiGHS's other strategies (12 points in the plane at ε = 4: 1.02e-6 here, whether in the
    units of the loss or of the value, against the tolerance of 1e-6; 9.9e-7 there)."""
    notion = problem.privacy[0]
    start = time.perf_counter()
    distances = notion.metric.privacy_distances(notion.domain)
    pairs = (notion.i, notion.j, notion.d)
    raw, outcome = solve_contexts(problem, lambda key, cost: solve_all_pairs(cost, pairs, notion.epsilon,
                                                                             notion.domain.points, distances,
                                                                             limits),
                                  NAME, time.perf_counter() - start, limits=limits)
    gap = problem.gap_of(problem.objective.value(raw), outcome.bound)
    if gap > problem.gap_tolerance and not (limits is not None and limits.expired()):
        raise SolverDeclined(f"the LP with every pair row proved a gap of {gap:.3g} only")
    return raw, outcome


SOLVER = SpecialSolver(NAME, applies, metric_by_all_pairs)
