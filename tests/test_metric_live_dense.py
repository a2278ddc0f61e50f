"""The outputs the dense blocks' interior point drops once dead: priced by transfers and, where
those leave a deficit, exactly by the flow over the closure of the LP's pairs."""

import numpy as np
import pytest

from mechdesign import Domain, Metric, MetricPrivacy
from mechdesign.solvers import cone_transfer
from mechdesign.solvers import metric_live_columns as live
from mechdesign.solvers.cone_transfer_kernel import transferred_deficits
from tests.reference_lp import all_pairs_lp
from tests.test_cone_transfer import _box_minimum
from tests.test_metric_live_columns import _check, _run


def _grid(epsilon: float, side: int = 6, seed: int = 0, loss: str = "random"):
    """A side × side grid (unit spacing; the LP keeps only the pairs no others imply), a Zipf
    prior in random order, a random or the metric loss."""
    rng = np.random.default_rng(seed)
    points = np.stack(np.meshgrid(np.arange(side), np.arange(side)), axis=-1).reshape(-1, 2).astype(float)
    dom = Domain.from_points(points)
    metric = Metric("euclidean")
    notion = MetricPrivacy(epsilon, metric, dom)
    n = len(dom)
    d = metric.distances(dom)
    w = rng.permutation(1.0 / np.arange(1, n + 1) ** 1.1)
    cost = w[:, None] * (rng.random((n, n)) if loss == "random" else d)
    return cost / cost.max(), d, notion


@pytest.mark.parametrize("epsilon, loss", [(0.5, "random"), (0.5, "metric"), (1.0, "random"), (1.0, "metric"),
                                            (2.0, "random")])
def test_dead_outputs_leave_the_dense_blocks_and_the_optimum_is_the_full_lps(epsilon, loss):
    # (the optimum of each leaves at least 21 of the 36 outputs empty; at ε = 2 with the metric's
    # loss it leaves 8, fewer than the quarter a drop waits for)
    cost, d, notion = _grid(epsilon, loss=loss)
    carried = []
    run = _run(cost, notion, watch=lambda run: carried.append(run.columns))
    assert min(carried) < cost.shape[1]  # outputs left
    assert not run.lp.drops.undone
    _check(run, cost, d, notion)


def _points(epsilon: float, n: int = 40, seed: int = 0, loss: str = "squared"):
    """n random points in the plane (every pair in the LP but those others imply), a Dirichlet
    prior, the squared distance or a random loss; ε·d at most 28, so that the reference LP
    stays well scaled."""
    rng = np.random.default_rng(seed)
    dom = Domain.from_points(rng.uniform(0, min(4.0, 20.0 / epsilon), size=(n, 2)))
    metric = Metric("euclidean")
    notion = MetricPrivacy(epsilon, metric, dom)
    d = metric.distances(dom)
    w = rng.dirichlet(np.ones(n))
    cost = w[:, None] * (d**2 if loss == "squared" else rng.random((n, n)))
    return cost / cost.max(), d, notion


@pytest.mark.parametrize("epsilon, loss", [(0.1, "squared"), (0.25, "random"), (4.0, "squared"), (8.0, "random")])
def test_dead_outputs_leave_scattered_points_at_every_epsilon(epsilon, loss):
    # from ε = 0.1 (a few outputs carry the optimum) to ε = 8 (three quarters do): the drops keep the
    # optimum of the LP over every pair, the bound below it and the design private
    cost, d, notion = _points(epsilon, loss=loss)
    carried = []
    run = _run(cost, notion, watch=lambda run: carried.append(run.columns))
    assert min(carried) < cost.shape[1]  # outputs left
    _check(run, cost, d, notion)


def test_the_pricing_pairs_are_the_closure_of_the_lps_pairs():
    # on a grid the LP leaves out the pairs that others imply (points in a line); the pricing
    # goes back to every pair, each with e^{ε d}: the shortest paths of ε·d along the LP's pairs
    cost, d, notion = _grid(2.0, side=5)
    run = _run(cost, notion, tol=1e-3)
    lp = run.lp.base
    n = cost.shape[0]
    assert lp.a.size < n * (n - 1)  # (some pairs were left out)
    i, j, coef = live._transfer_pairs(lp)
    assert i.size == n * (n - 1)  # (25 points: each input's nearest 256 are all)
    assert np.allclose(np.log(coef), 2.0 * d[i, j], rtol=1e-12, atol=1e-12)


def test_the_transferred_deficits_are_the_greedy_transfers_remainders():
    rng = np.random.default_rng(4)
    points = rng.uniform(0, 3, size=(20, 2))
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    i, j = np.nonzero(~np.eye(20, dtype=bool))
    order = np.argsort(dist[i, j], kind="stable")
    i, j, coef = i[order], j[order], np.exp(1.0 * dist[i[order], j[order]])
    reduced, minima = rng.normal(0.3, 1.0, size=(20, 6)), rng.normal(0.0, 0.3, size=20)
    out = np.empty((20, 6))
    transferred_deficits(reduced, minima, i, j, coef, out)
    for y in range(6):
        a = reduced[:, y] - minima
        lam = cone_transfer.plain_transfer(a, i, j, coef)
        r = a + np.bincount(i, lam, 20) - np.bincount(j, lam * coef, 20)
        assert np.allclose(out[:, y], np.minimum(r, 0.0), rtol=0, atol=1e-15)
    assert out.min() < 0.0 and out.max() == 0.0


@pytest.mark.parametrize("raise_by", [1e-2, 3e-2])
def test_a_dropped_columns_deficits_are_its_box_minimum_over_every_pair(raise_by):
    # columns dropped early, then priced against minima raised above their own reduced costs
    # (deficits their multipliers at the drop cannot cover): each column's deficits add up to the
    # least (C_y − minima)·v over the private v in [0, 1]^X, the LP's box minimum over every pair
    # (never above it: a bound; and no lower: exact), where the LP's own pairs fall short of it
    epsilon = 2.0
    cost, d, notion = _grid(epsilon, side=5, seed=2)
    run = _run(cost, notion, tol=0.3)  # (a few steps)
    lp, it = run.lp, run.it
    dead = np.zeros(it.K.shape[1], bool)
    dead[np.argsort(it.K.sum(axis=0))[:8]] = True
    lp2, it2 = live.dropped(lp, it, dead)
    reduced = lp2.cost - it2.rows.transpose(it2.lam)
    minima = reduced.min(axis=1) + raise_by * np.abs(cost).max()
    lp2._priced(minima)
    n = cost.shape[0]
    x, z = np.nonzero(~np.eye(n, dtype=bool))
    every = np.exp(epsilon * d[x, z])
    exact = np.array([_box_minimum(lp2.base.cost[:, y] - minima, x, z, every) for y in lp2.dead])
    priced = lp2.deficits.sum(axis=0)
    assert exact.min() < -1e-6  # (deficits to price)
    assert np.all(priced <= exact + 1e-12)
    assert priced == pytest.approx(exact, rel=1e-7, abs=1e-12)
    pruned = np.array([_box_minimum(lp2.base.cost[:, y] - minima, lp2.base.a, lp2.base.b, lp2.base.coef)
                       for y in lp2.dead])
    assert np.all(pruned <= exact + 1e-12)


def test_the_dense_bound_with_the_optimums_output_dropped_stays_below_it(monkeypatch):
    # one output costs a tenth of the least other for every input: the optimum puts all the mass
    # there (a constant column is private). With it and the next largest dropped from an iterate,
    # the live columns' row minima alone pass the optimum; priced, the dropped ones bring the
    # bound back to it and never above
    monkeypatch.setattr(live, "DEAD_SHARE", 2.0)  # (no drops of the run's own)
    epsilon = 1.0
    cost, d, notion = _grid(epsilon, side=5, seed=1)
    rng = np.random.default_rng(5)
    weight = cost.sum(axis=1)
    cost = weight[:, None] * (rng.random(cost.shape) + 0.5)
    cost[:, 7] = 0.1 * weight
    optimum = all_pairs_lp(cost, d, epsilon)
    assert optimum == pytest.approx(0.1 * weight.sum(), rel=1e-9)
    run = _run(cost, notion, tol=1e-4)
    lp, it = run.lp, run.it
    dead = np.zeros(it.K.shape[1], bool)
    dead[np.argsort(-it.K.sum(axis=0))[:2]] = True
    assert dead[7]
    lp2, it2 = live.dropped(lp, it, dead)
    reduced = lp2.cost - it2.rows.transpose(it2.lam)
    assert reduced.min(axis=1).sum() > optimum * 1.1  # (a bound of the live columns only)
    bound = lp2.row_minima(reduced).sum()
    assert optimum * (1 - 1e-6) <= bound <= optimum * (1 + 1e-12)


def test_dense_drops_keep_every_row_of_the_working_set_and_every_slack(monkeypatch):
    # a drop takes the dropped outputs' rows out of the working set and their slacks out of the
    # outside rows' array; the rows kept are the same rows with the same S and Λ
    cost, d, notion = _grid(1.0, side=5, seed=3)
    monkeypatch.setattr(live, "DEAD_SHARE", 2.0)
    run = _run(cost, notion, tol=0.05)
    lp, it = run.lp, run.it
    dead = np.zeros(it.K.shape[1], bool)
    dead[[1, 4, 9]] = True
    before = {(p, y): (s, lam) for p, y, s, lam in zip(it.rows.pair, it.rows.out, it.S, it.lam)}
    lp2, it2 = live.dropped(lp, it, dead)
    after = {(p, lp2.live[y]): (s, lam) for p, y, s, lam in zip(it2.rows.pair, it2.rows.out, it2.S, it2.lam)}
    assert after == {key: value for key, value in before.items() if not dead[key[1]]}
    assert it2.rows.member.sum() == len(after)
    assert np.array_equal(it2.slack, it.slack[:, ~dead])
    assert np.allclose(it2.rows.slack(it2.K), it2.S, rtol=1e-9, atol=1e-15)
    back, it3 = live.revived(lp2, it2, np.ones(3, bool))
    assert back.dead.size == 0 and it3.S.size == it.S.size
    assert np.allclose(it3.slack, back.base.G @ it3.K, rtol=1e-9, atol=1e-15)
