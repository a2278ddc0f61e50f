"""The interior point's bound while joined rows carry an excess: the Lagrangian bound at the
settled duals max(Λ − excess, 0), and at duals repaired from them where rows are clipped at 0.
Either is a bound (any Λ >= 0 gives one): checked against the LP written out in full at every
iterate, with and without output orbits; the repair never lowers the bound, and it recovers
most of what clipping took (measured against the value at Λ − excess, which is not a bound
where a row is negative but is what the settled duals would give were none clipped)."""

import numpy as np
import pytest

from mechdesign import Domain, Metric, MetricPrivacy
from mechdesign.solvers import metric_joins
from mechdesign.solvers.metric_interior import MetricInteriorPoint
from mechdesign.solvers.symmetry import find
from tests.reference_lp import all_pairs_lp


def _random_loss_grid(epsilon: float, seed: int):
    """A 6 × 6 grid of spacing 0.4, a Dirichlet prior and a random loss: (cost, distances, notion)."""
    points = np.array([(x, y) for x in range(6) for y in range(6)], dtype=float) / 2.5
    dom = Domain.from_points(points)
    rng = np.random.default_rng(seed)
    cost = rng.dirichlet(np.ones(36))[:, None] * rng.random((36, 36))
    return cost, Metric("euclidean").distances(dom), MetricPrivacy(epsilon, Metric("euclidean"), dom)


def _symmetric_grid(side: int, epsilon: float):
    """A side × side grid of spacing 1/2 (a power of two: the distances exactly symmetric), a
    uniform prior and the metric loss: (cost, distances, notion, symmetry)."""
    points = np.array([(a, b) for a in range(side) for b in range(side)], dtype=float) / 2.0
    dom = Domain.from_points(points)
    d = Metric("euclidean").distances(dom)
    cost = d / len(dom)
    return cost, d, MetricPrivacy(epsilon, Metric("euclidean"), dom), find(points, d, cost)


def _clipped_iterates(cost, d, notion, symmetry=None):
    """Run the method to 1e-8 and check every iterate's bound against the full LP's optimum;
    per iterate with rows clipped at 0: (settled, repaired, unclipped) bounds."""
    optimum = all_pairs_lp(cost, d, notion.epsilon)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=1e-8, symmetry=symmetry)
    found = []
    while not run.done:
        run.advance()
        assert run.latest_bound <= optimum + 1e-11 * abs(optimum)
        lp, it = run.lp, run.it
        if it.excess is None or not (it.excess > it.lam).any():
            continue
        settled = float(lp.row_minima(lp.cost - it.rows.transpose(metric_joins.settled(it))).sum())
        unclipped = float(lp.row_minima(lp.cost - it.rows.transpose(it.lam - it.excess)).sum())
        repaired = metric_joins.settled_bound(lp, it)
        assert settled <= repaired <= optimum + 1e-11 * abs(optimum)
        found.append((settled, repaired, unclipped))
    assert abs(run.value - optimum) <= 1e-7 * abs(optimum)
    return np.array(found)


@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_the_repaired_bound_is_a_bound_and_takes_back_most_of_what_clipping_took(epsilon):
    found = _clipped_iterates(*_random_loss_grid(epsilon, seed=0))
    assert len(found) >= 3  # (rows are clipped on these instances: the test has something to check)
    settled, repaired, unclipped = found.T
    lost = np.maximum(unclipped - settled, 0.0).sum()
    left = np.maximum(unclipped - repaired, 0.0).sum()
    # (measured: 4 % and 0.6 % left; with seed 1 at ε = 1 about half is left, whatever the
    # rounds: the rows pressing on the clipped rows' entries have too little Λ to lower)
    assert lost > 0 and left <= 0.1 * lost


def test_the_repaired_bound_holds_over_output_orbits():
    # the orbits' row minima take each input's least reduced cost over every image of the
    # representatives' columns: an input's target is shared by its orbit
    cost, d, notion, symmetry = _symmetric_grid(6, 1.0)
    assert symmetry.order == 8
    found = _clipped_iterates(cost, d, notion, symmetry)
    assert len(found) >= 1
    settled, repaired, unclipped = found.T
    assert np.maximum(unclipped - repaired, 0.0).sum() <= 0.1 * np.maximum(unclipped - settled, 0.0).sum()


def test_the_repair_only_lowers_settled_duals_and_leaves_none_negative():
    cost, d, notion = _random_loss_grid(1.0, seed=0)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 1.0, tol=1e-8)
    checked = 0
    while not run.done:
        run.advance()
        lp, it = run.lp, run.it
        if it.excess is None or not (it.excess > it.lam).any():
            continue
        settled = metric_joins.settled(it)
        clipped = np.flatnonzero(it.excess > it.lam)
        repaired = metric_joins._repaired(lp, it, settled, lp.cost - it.rows.transpose(settled), clipped)
        assert repaired.min() >= 0.0 and np.all(repaired <= settled)
        assert np.any(repaired < settled)  # (it moved something: the clipped rows' neighbours)
        checked += 1
    assert checked >= 3
