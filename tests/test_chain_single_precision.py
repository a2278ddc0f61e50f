"""On a line longer than one tile of its coupling the interior point takes the coupling's matrix
products in single precision while the gap is large, and closes the gap in double precision to
the optimum that the line rays (column generation, another algorithm) reach."""

import numpy as np
import pytest

from mechdesign.solvers import metric_chain_kernels, metric_interior
from mechdesign.solvers.line_portfolio import neighbour_pairs
from mechdesign.solvers.line_rays import solve_line
from mechdesign.solvers.metric_chain import tiled
from mechdesign.solvers.metric_interior import MetricInteriorPoint

EPSILON = 1.0


def _line(n: int, seed: int):
    rng = np.random.default_rng(seed)
    points = np.arange(float(n))
    prior = rng.dirichlet(np.full(n, 0.5))
    return points, prior[:, None] * rng.random((n, n))


def _solve(points, cost, single: bool = True):
    run = MetricInteriorPoint(cost, neighbour_pairs(points), EPSILON, tol=5e-7)
    run._single = run._single and single
    while not run.done:
        run.advance()
    return run


@pytest.fixture(scope="module")
def line():
    points, cost = _line(200, 3)  # two tiles
    assert tiled(points.size)
    optimum = solve_line(cost, points, EPSILON, tol=1e-10)
    assert optimum.objective - optimum.bound <= 1e-8 * optimum.objective
    return points, cost, optimum.objective


def test_a_tiled_line_takes_its_first_steps_in_single_precision_and_ends_at_the_optimum(line):
    points, cost, optimum = line
    run = _solve(points, cost)
    assert 0 < run.single_steps < run.rounds
    last = run.single_steps - 1  # single precision while the gap before the step is above the switch
    assert run.gaps[last - 1] > metric_interior.SINGLE_PRECISION_GAP >= run.gaps[last]
    assert run.bound <= optimum * (1 + 1e-9) and abs(run.value - optimum) <= 5e-7 * optimum
    double = _solve(points, cost, single=False)
    assert double.single_steps == 0 and abs(double.value - optimum) <= 5e-7 * optimum


def test_a_coupling_that_overflows_single_precision_is_summed_again_in_double(line, monkeypatch):
    points, cost, optimum = line
    real = metric_chain_kernels.chain_inverse_sum
    calls = []

    def overflowing(b, a, total, *args, single=False, **kwargs):
        calls.append(single)
        real(b, a, total, *args, single=single, **kwargs)
        if single:
            total[-1, 0] = np.inf

    monkeypatch.setattr(metric_chain_kernels, "chain_inverse_sum", overflowing)
    run = _solve(points, cost)
    # the first step's sum overflows, the step is taken in double, and the run stays there
    assert calls[:2] == [True, False] and not any(calls[2:])
    assert run.single_steps == 0 and abs(run.value - optimum) <= 5e-7 * optimum


def test_a_line_of_one_tile_has_nothing_to_take_in_single_precision():
    points, cost = _line(100, 4)
    assert not tiled(points.size)
    assert _solve(points, cost).single_steps == 0


@pytest.mark.parametrize("epsilon", [0.1, 8.0])
def test_an_unevenly_spaced_line_with_coincident_points_ends_at_the_same_optimum_in_either_precision(epsilon):
    # 290 distinct positions (three tiles once the coincident points are merged), a Zipf prior
    rng = np.random.default_rng(9)
    base = np.sort(rng.random(290) * 300)
    points = np.sort(np.concatenate([base, base[rng.choice(290, 10, replace=False)]]))
    prior = 1.0 / np.arange(1, points.size + 1) ** 1.1
    cost = (prior / prior.sum())[:, None] * rng.random((points.size, points.size))
    runs = []
    for single in (True, False):
        run = MetricInteriorPoint(cost, neighbour_pairs(points), epsilon, tol=5e-7)
        run._single = run._single and single
        while not run.done:
            run.advance()
        runs.append(run)
    mixed, double = runs
    assert mixed.lp.cost.shape[0] == 290 and mixed.single_steps > 0 == double.single_steps
    assert max(mixed.bound, double.bound) <= min(mixed.value, double.value) * (1 + 1e-12)
    assert mixed.value == pytest.approx(double.value, rel=5e-7)
