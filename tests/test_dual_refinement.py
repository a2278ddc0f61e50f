"""The refinement of a solved LP's row duals for the safe bound: from multipliers spoilt the way
HiGHS spoils them on steep rows (wrong signs, errors of 1e-6), it recovers the bound of the
optimal basis, and never proves more than the optimum of the LP written out independently."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign.solvers.dual_refinement import refined_bound
from mechdesign.solvers.highs_methods import Method, run_method
from mechdesign.solvers.lazy_pairs import PairRowsModel
from mechdesign.solvers.lp_bound import highs_model_bound, model_arrays, row_simplex_bound
from tests.reference_lp import all_pairs_lp


def _solved_design_lp(seed: int, n: int, epsilon: float):
    """The design LP of ``n`` random points of the plane with a random loss, every ordered pair
    in the model, solved: (model, bound at multipliers, cost, distances)."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 2, (n, 2))
    distances = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1))
    cost = rng.uniform(0, 1, (n, n)) * rng.dirichlet(np.ones(n))[:, None]
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    model = PairRowsModel(cost, i, j, np.exp(epsilon * distances[i, j]))
    p, y = np.meshgrid(np.arange(i.size), np.arange(n), indexing="ij")
    model.add(p.ravel(), y.ravel())
    Method().apply(model.h)
    assert run_method(model.h, Method())
    caps = model.caps()

    def bound_at(duals=None):
        return max(highs_model_bound(model.h, caps, duals), row_simplex_bound(model.h, n, n, caps, duals))

    return model.h, bound_at, cost, distances


@pytest.mark.parametrize(("seed", "epsilon"), [(0, 1.0), (1, 3.0), (2, 6.0)])
def test_spoilt_duals_are_refined_back_to_the_optimum_and_never_past_it(seed, epsilon):
    n = 7
    h, bound_at, cost, distances = _solved_design_lp(seed, n, epsilon)
    optimum = all_pairs_lp(cost, distances, epsilon)
    value = h.getInfo().objective_function_value
    exact = bound_at()
    assert exact == pytest.approx(optimum, rel=1e-8)
    duals = np.asarray(h.getSolution().row_dual, float)
    rng = np.random.default_rng(seed + 10)
    spoilt = duals.copy()
    spoilt[n:] += rng.normal(0, 1e-6, duals.size - n)  # the pair rows: some of wrong sign now
    assert bound_at(spoilt) < optimum - 1e-7  # a gap the tolerance would fail
    refined, primal = refined_bound(h, bound_at, value, start=spoilt)
    assert refined <= optimum * (1 + 1e-9) + 1e-15
    assert refined >= optimum - 1e-9 * abs(optimum)
    # the refinement LP is the LP again, shifted and scaled: its point is an optimum of it
    cost, A, row_lower, row_upper, lower, upper = model_arrays(h)
    activity = A @ primal
    assert np.all(activity <= row_upper + 1e-9) and np.all(activity >= row_lower - 1e-9)
    assert np.all(primal >= lower - 1e-12) and cost @ primal == pytest.approx(optimum, rel=1e-8)
    assert np.array_equal(np.asarray(h.getSolution().row_dual, float), duals)  # the model is left as it was


def test_without_a_gap_to_close_the_bound_is_the_models_own():
    h, bound_at, cost, distances = _solved_design_lp(3, 6, 2.0)
    exact = bound_at()
    assert refined_bound(h, bound_at, exact) == (exact, None)


def test_the_general_routes_snapshot_refines_spoilt_duals_on_its_solved_model():
    from mechdesign import MetricPrivacy, Problem
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.solvers.convex_route import run_solver

    rng = np.random.default_rng(4)
    points = rng.uniform(0, 2, (6, 2))
    distances = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1))
    loss = rng.uniform(0, 1, (6, 6))
    prior = rng.dirichlet(np.ones(6))
    problem = Problem(points, ExpectedLoss(loss, {"default": prior}), privacy=MetricPrivacy(2.0),
                      metric="euclidean")
    optimum = all_pairs_lp(prior[:, None] * loss, distances, 2.0)
    program = problem.compile()
    _, outcome = run_solver(program, "highs")
    proof = outcome.proof
    assert proof.model is not None and proof.refine_above == problem.gap_tolerance
    cutoff = optimum / program.scale * (1 + 1e-9)
    exact = proof.bound(cutoff) * program.scale
    assert exact == pytest.approx(optimum, rel=1e-8)
    spoilt = proof.duals + np.random.default_rng(5).normal(0, 1e-5, proof.duals.size)
    proof.duals, proof.refine_above = spoilt, None
    assert proof.bound(cutoff) * program.scale < optimum * (1 - 1e-6)  # the proof would fail
    proof.refine_above = problem.gap_tolerance
    refined = proof.bound(cutoff) * program.scale
    assert optimum * (1 - 1e-9) <= refined <= optimum * (1 + 1e-9)
    assert proof.refine_above is None and proof.bound(cutoff) * program.scale == refined  # once, kept
