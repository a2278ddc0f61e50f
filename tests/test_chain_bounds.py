"""On a line the interior point keeps only the bounds K >= 0 that its pair rows do not imply."""

import numpy as np
import pytest

from mechdesign.solvers.line_portfolio import neighbour_pairs
from mechdesign.solvers.metric_interior import MetricInteriorPoint
from mechdesign.solvers.metric_reduced import MAX_EXPONENT, ReducedLP, chain_bounds
from tests.reference_lp import pairs_lp


def _neighbour_lp(cost: np.ndarray, points: np.ndarray, epsilon: float, widest: float = np.inf) -> float:
    """The design LP on sorted points with the neighbours' pair constraints only (on a line they
    imply every other pair's) and every bound K >= 0 (:func:`tests.reference_lp.pairs_lp`);
    pairs with ε·d above ``widest`` left out (HiGHS refuses coefficients near e^44)."""
    x = np.arange(points.size - 1)
    a, b = np.concatenate([x, x + 1]), np.concatenate([x + 1, x])
    exponent = epsilon * np.abs(points[a] - points[b])
    kept = exponent <= widest
    return pairs_lp(cost, a[kept], b[kept], np.exp(exponent[kept]))


def _kept(points: np.ndarray, epsilon: float) -> np.ndarray:
    i, j, d = neighbour_pairs(points)
    return ReducedLP(np.zeros((points.size, 2)), i, j, d, epsilon).bounded


def test_every_dropped_bound_is_implied_within_the_exponent_range_and_no_more_are_kept():
    rng = np.random.default_rng(3)
    points = np.sort(rng.random(300) * 80.0)
    epsilon = 2.0
    kept = _kept(points, epsilon)
    assert kept[0] and 1 < kept.sum() < points.size
    link = epsilon * np.diff(points)  # the exponent of each row (x, x + 1)
    last = 0
    for x in range(1, points.size):
        run = link[last:x].sum()  # the product of coefficients from the last kept input to x
        if kept[x]:
            assert run > MAX_EXPONENT  # kept only where the range would be passed
            last = x
        else:
            assert run <= MAX_EXPONENT  # implied by the last kept one, within e^MAX_EXPONENT


def test_a_left_out_pair_starts_a_new_band_and_one_way_rows_keep_every_bound():
    points = np.concatenate([np.arange(10.0), 20.0 + np.arange(10.0)])  # a gap of 11 at ε = 4: e^44
    kept = _kept(points, 4.0)
    assert kept[0] and kept[10]  # the first point after the gap: no row joins it to the others
    assert not kept[1]  # 4 per link: the first band reaches e^28 at the gap
    i, j, d = neighbour_pairs(np.arange(8.0))
    down = j < i  # only the rows (x + 1, x): K[x + 1] <= c K[x] implies nothing rightwards
    assert chain_bounds(i[down], j[down], np.exp(d[down]), 8).all()


@pytest.mark.parametrize("epsilon,loss,bands", [(3.0, "random", 4), (0.2, "random", 1), (1.5, "metric", 2)])
def test_a_line_without_its_implied_bounds_reaches_the_optimum_and_keeps_them_true(epsilon, loss, bands):
    # integer points: at ε = 3 the line spans e^117, four bands (a new one after every 11 links
    # of e^3), at ε = 0.2 one, at ε = 1.5 two (21 links of e^1.5). The entries
    # without bounds hold μ = 0 and stay positive at every iterate, the dual equation's residual
    # is the start's shrunk by 1 − α at each step, and the optimum is the full LP's
    rng = np.random.default_rng([7, int(10 * epsilon)])
    n = 40
    points = np.arange(float(n))
    prior = rng.dirichlet(np.full(n, 0.5))
    L = rng.random((n, n)) if loss == "random" else np.abs(points[:, None] - points[None, :])
    cost = prior[:, None] * L
    run = MetricInteriorPoint(cost, neighbour_pairs(points), epsilon, tol=1e-9)
    lp, it = run.lp, run.it
    assert lp.chain and lp.bounded.sum() == bands
    start = it.carried
    assert start > 0.0
    while not run.done:
        run.advance()
        lp, it = run.lp, run.it  # (over the outputs still live)
        assert np.all(it.mu[~lp.bounded] == 0.0) and it.K.min() > 0.0 and it.mu[lp.bounded].min() > 0.0
        r_d = lp.cost - it.u[:, None] - it.mu - it.rows.transpose(it.lam)
        # (up to the solves' round-off, which the refinement keeps from the bound: 1.6e-9 of
        # the start at most here; untracked, the residual parts from the start by its own size)
        assert abs(float(np.abs(r_d).max(axis=1).sum()) - it.carried) <= 1e-8 * start
    optimum = _neighbour_lp(cost, points, epsilon)
    assert run.bound <= optimum * (1 + 1e-9)
    assert abs(run.value - optimum) <= 1e-7 * optimum
    design = run.design()
    assert design.min() >= 0.0 and np.allclose(design.sum(axis=1), 1.0, atol=1e-12)


def test_a_line_split_by_a_left_out_pair_keeps_a_bound_on_each_side_and_a_valid_bound():
    # two stretches of ten points 11 apart at ε = 4: the pair across the gap (e^44) is left out
    # of the iterations, so each stretch is a chain of its own and keeps a bound of its own; the
    # bound is valid for the LP without that pair (whose optimum is at most the full one's) and
    # the repaired design, private for every pair, meets it
    from mechdesign import Domain, Metric, MetricPrivacy
    from mechdesign.solvers.lazy_pairs import repairer

    points = np.concatenate([np.arange(10.0), 20.0 + np.arange(10.0)])
    rng = np.random.default_rng(11)
    cost = rng.dirichlet(np.ones(20))[:, None] * rng.random((20, 20))
    notion = MetricPrivacy(4.0, Metric("euclidean"), Domain.from_points(points[:, None]))
    run = MetricInteriorPoint(cost, neighbour_pairs(points), 4.0, tol=1e-9, repair=repairer(notion))
    assert run.lp.chain and np.flatnonzero(run.lp.bounded).tolist() == [0, 8, 10, 18]
    while not run.done:
        run.advance()
        assert run.it.K.min() > 0.0 and np.all(run.it.mu[~run.lp.bounded] == 0.0)
    optimum = _neighbour_lp(cost, points, 4.0, widest=MAX_EXPONENT)
    design = run.design()
    assert run.bound <= optimum * (1 + 1e-9)
    assert abs(run.value - optimum) <= 1e-7 * optimum
    assert notion.level(design) <= 4.0 + 1e-9
