"""The outputs a chain's interior point drops once dead, and brings back when they price out."""

import numpy as np
import pytest
from scipy.optimize import linprog

from mechdesign import Domain, Metric, MetricPrivacy
from mechdesign.solvers import metric_live_columns as live
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.lazy_pairs import repairer
from mechdesign.solvers.metric_chain_kernels import chain_deficits
from mechdesign.solvers.metric_interior import MetricInteriorPoint
from tests.reference_lp import TIGHT, all_pairs_lp


def _chain_pairs(up: np.ndarray, down: np.ndarray):
    """The chain's pair rows as (a, b, c): S = c K[b] − K[a] >= 0, the missing ones left out."""
    rows = [(x + 1, x, up[x]) for x in range(up.size) if up[x] > 0]
    rows += [(x, x + 1, down[x]) for x in range(down.size) if down[x] > 0]
    return rows


def _prices_out(r: np.ndarray, up: np.ndarray, down: np.ndarray) -> bool:
    """Whether some private column k >= 0 (Σ k = 1) has r·k < 0, written out for scipy."""
    g = r.size
    pairs = _chain_pairs(up, down)
    A = np.zeros((len(pairs), g))
    for row, (a, b, c) in enumerate(pairs):
        A[row, a], A[row, b] = 1.0, -c  # K[a] − c K[b] <= 0
    res = linprog(r, A_ub=A, b_ub=np.zeros(len(pairs)), A_eq=np.ones((1, g)), b_eq=[1.0], bounds=(0, None),
                  method="highs", options=TIGHT)
    assert res.status == 0
    return res.fun < -1e-9


def _multipliers_exist(r: np.ndarray, up: np.ndarray, down: np.ndarray, floor: np.ndarray) -> bool:
    """Whether multipliers Λ >= 0 of the pair rows give r − GᵀΛ >= floor (a feasibility LP)."""
    g = r.size
    pairs = _chain_pairs(up, down)
    G_T = np.zeros((g, len(pairs)))
    for column, (a, b, c) in enumerate(pairs):
        G_T[a, column], G_T[b, column] = -1.0, c  # (G K)_p = c K[b] − K[a]
    res = linprog(np.zeros(len(pairs)), A_ub=G_T, b_ub=r - floor + 1e-12, bounds=(0, None), method="highs",
                  options=TIGHT)
    return res.status == 0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("split", [None, 4])
def test_the_deficits_are_those_of_explicit_multipliers_and_zero_exactly_when_no_column_prices_out(seed, split):
    rng = np.random.default_rng(seed)
    g, k = 9, 8
    r = rng.normal(size=(g, k)) + np.linspace(-0.2, 1.5, k)  # from columns that price out to ones that do not
    up, down = rng.uniform(1.05, 4.0, g - 1), rng.uniform(1.05, 4.0, g - 1)
    if split is not None:  # a pair beyond the iterations' range: two chains
        up[split], down[split] = 0.0, 0.0
    out = np.full((g, k), np.nan)
    minima = rng.normal(size=g)  # (the kernel takes the costs and the row minima apart)
    chain_deficits(np.ascontiguousarray(r + minima[:, None]), minima, up, down, out)
    assert np.all(out <= 0.0)
    outcomes = set()
    for y in range(k):
        prices_out = _prices_out(r[:, y], up, down)
        outcomes.add(prices_out)
        assert (out[:, y].min() < 0.0) == prices_out
        assert _multipliers_exist(r[:, y], up, down, out[:, y])
        if out[:, y].min() < 0.0:  # and not a deficit the bound could do without
            assert not _multipliers_exist(r[:, y], up, down, np.zeros(g))
    assert outcomes == {True, False} or seed > 3  # (both kinds drawn in the first seeds)


def test_a_column_that_prices_out_by_a_hair_loses_a_hair_not_its_deficit_charged_up_the_chain():
    # reduced costs of zero along a long steep chain, one input a hair below: charged up the
    # rows, the deficit would grow by every coefficient it passes (e^5 each)
    g = 80
    r = np.zeros((g, 1))
    r[-1, 0] = -1e-12
    up = down = np.full(g - 1, np.exp(5.0))
    out = np.zeros((g, 1))
    chain_deficits(r, np.zeros(g), up, down, out)
    assert out.sum() == pytest.approx(-1e-12, rel=1e-9)


def _line(epsilon: float, n: int = 30, seed: int = 0, prior: str = "zipf"):
    rng = np.random.default_rng(seed)
    points = np.sort(rng.random(n))[:, None]
    dom = Domain.from_points(points)
    metric = Metric("euclidean")
    notion = MetricPrivacy(epsilon, metric, dom)
    w = 1.0 / np.arange(1, n + 1) ** 1.1 if prior == "zipf" else np.ones(n)
    cost = rng.permutation(w / w.sum())[:, None] * rng.random((n, n))
    return cost / cost.max(), metric.distances(dom), notion


def _run(cost, notion, tol=1e-8, watch=None):
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), notion.epsilon, tol=tol, repair=repairer(notion))
    try:
        while not run.done:
            run.advance()
            if watch is not None:
                watch(run)
    except SolverDeclined:
        pass
    return run


def _check(run, cost, d, notion):
    optimum = all_pairs_lp(cost, d, notion.epsilon)
    design = run.design()
    assert run.bound <= optimum + 1e-9 * optimum  # a bound for every output, dropped or not
    assert run.value >= optimum - 1e-9 * optimum
    assert run.value - run.bound <= 1e-7 * optimum
    assert np.allclose(design.sum(axis=1), 1.0, atol=1e-12) and design.min() >= 0.0
    assert notion.level(design) <= notion.epsilon + 1e-9


@pytest.mark.parametrize("epsilon", [0.1, 0.25, 0.5])
def test_dead_outputs_leave_and_the_optimum_is_the_full_lps(epsilon):
    cost, d, notion = _line(epsilon)
    carried = []
    run = _run(cost, notion, watch=lambda run: carried.append(run.columns))
    assert min(carried) < cost.shape[1]  # outputs left
    assert "outputs live at the end" in run.rounds_note
    _check(run, cost, d, notion)


def _dropped_alive(monkeypatch):
    # every column whose largest entry is below half the iterate's largest is dropped: columns
    # of the optimal design among them (three outputs in the optimum; two carried), so the bound
    # needs their deficits (without them the live columns' bound passes the optimum)
    monkeypatch.setattr(live, "DEAD_ENTRY", 0.5)
    cost, d, notion = _line(1.0, seed=3)
    carried = []
    run = _run(cost, notion, watch=lambda run: carried.append(run.columns))
    back = [k for k, (earlier, later) in enumerate(zip(carried, carried[1:])) if later > earlier]
    return run, cost, d, notion, carried, back


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0])
def test_coincident_points_share_their_row_with_outputs_dropped(epsilon):
    # pairs of points at distance 0 merge into one row of the iterations; the dropped outputs'
    # faded columns and the design go back to every point
    rng = np.random.default_rng(11)
    base = np.sort(rng.random(15))
    points = np.sort(np.concatenate([base, base[::3]]))[:, None]  # five points twice
    dom = Domain.from_points(points)
    notion = MetricPrivacy(epsilon, Metric("euclidean"), dom)
    n = len(dom)
    cost = rng.permutation(1.0 / np.arange(1, n + 1) ** 1.1)[:, None] * rng.random((n, n))
    carried = []
    run = _run(cost, notion, watch=lambda run: carried.append(run.columns))
    assert run.lp.cost.shape[0] == 15 and min(carried) < n  # merged rows; outputs left
    design = run.design()
    assert np.array_equal(design[np.flatnonzero(points[:, 0] == points[0, 0])[0]],
                          design[np.flatnonzero(points[:, 0] == points[0, 0])[-1]])
    _check(run, cost, Metric("euclidean").distances(dom), notion)


def test_outputs_dropped_alive_come_back_and_the_optimum_is_the_full_lps(monkeypatch):
    monkeypatch.setattr(live, "REVIVE_MOST", 1.0)  # (two columns carried: any revival is a large share)
    run, cost, d, notion, carried, back = _dropped_alive(monkeypatch)
    first = next(k for k, columns in enumerate(carried) if columns < cost.shape[1])
    assert back and max(carried[first:]) < cost.shape[1]  # revived, not undone
    _check(run, cost, d, notion)


def test_drops_are_undone_once_revivals_run_out_and_the_optimum_is_the_full_lps(monkeypatch):
    monkeypatch.setattr(live, "MAX_REVIVALS", 0)
    run, cost, d, notion, carried, back = _dropped_alive(monkeypatch)
    assert len(back) == 1 and carried[back[0] + 1] == cost.shape[1]  # undone once, every output back
    assert min(carried[back[0] + 1:]) == cost.shape[1]  # and no drop after that
    _check(run, cost, d, notion)


def _advanced(epsilon: float, steps: int, monkeypatch):
    monkeypatch.setattr(live, "DEAD_SHARE", 2.0)  # (no drops of its own)
    cost, d, notion = _line(epsilon, n=12, seed=5)
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), epsilon, tol=1e-9)
    for _ in range(steps):
        run.advance()
    return run


def test_a_drop_keeps_the_live_columns_and_the_design_whole(monkeypatch):
    run = _advanced(0.5, 6, monkeypatch)
    lp, it = run.lp, run.it
    m = it.K.shape[1]
    dead = np.zeros(m, bool)
    dead[[1, 4, 7]] = True
    before = {name: getattr(it, name).copy() for name in ("K", "mu", "S", "lam")}
    lp2, it2 = live.dropped(lp, it, dead)
    assert list(lp2.dead) == [1, 4, 7] and it2.K.shape[1] == lp2.cost.shape[1] == m - 3
    assert np.array_equal(it2.K, before["K"][:, ~dead]) and np.array_equal(it2.mu, before["mu"][:, ~dead])
    for name in ("S", "lam"):
        assert np.array_equal(getattr(it2, name).reshape(-1, m - 3), before[name].reshape(-1, m)[:, ~dead])
    assert np.allclose(it2.S, it2.rows.slack(it2.K), rtol=1e-9, atol=1e-15)  # the slacks are G K
    assert np.allclose(lp2.design(it2.K), before["K"], rtol=0, atol=1e-15)  # nothing faded yet
    # the iterate before the first drop is kept, apart from the arrays the steps move in place
    start = lp2.drops.start
    assert np.array_equal(start.K, before["K"]) and start.K is not it.K


def test_dropped_columns_fade_with_the_primal_residual_and_every_column_stays_private(monkeypatch):
    monkeypatch.setattr(live, "REVIVE_SHARE", np.inf)  # (the drops stay, needed or not)
    run = _advanced(0.25, 8, monkeypatch)
    cost, d, notion = _line(0.25, n=12, seed=5)
    lp, it = run.lp, run.it
    dead = np.zeros(it.K.shape[1], bool)
    dead[[0, 5, 9]] = True
    dropped_K = it.K[:, dead].copy()
    run.lp, run.it = live.dropped(lp, it, dead)
    for _ in range(6):
        run.advance()
        design = run.lp.design(run.it.K)
        assert np.allclose(design.sum(axis=1), 1.0, rtol=0, atol=1e-13)
        ratio = design[:, [0, 5, 9]] / dropped_K  # one factor for every dropped entry
        assert np.ptp(ratio) <= 1e-12 * ratio.max() and 0 <= ratio.max() < 1
        # private up to round-off, as every iterate is (entries near 1e-14 are off by their last bits)
        assert (run.lp.G @ design).min() >= -1e-13 * run.lp.coef.max()


def test_a_revived_column_comes_back_as_it_faded_with_the_duals_it_had(monkeypatch):
    monkeypatch.setattr(live, "REVIVE_SHARE", np.inf)  # (no revivals of the run's own)
    run = _advanced(0.25, 8, monkeypatch)
    m = run.it.K.shape[1]
    dead = np.zeros(m, bool)
    dead[[2, 6]] = True
    old = {"mu": run.it.mu[:, dead].copy(), "lam": run.it.lam.reshape(-1, m)[:, dead].copy()}
    run.lp, run.it = live.dropped(run.lp, run.it, dead)
    for _ in range(3):
        run.advance()
    faded = run.lp.design(run.it.K)[:, [2, 6]].copy()
    lp, it = live.revived(run.lp, run.it, np.array([True, False]))
    assert list(lp.dead) == [6] and list(lp.live) == [y for y in range(m) if y != 6]
    assert np.array_equal(it.K[:, 2], faded[:, 0]) and it.K[:, 2].min() > 0
    assert np.allclose(lp.design(it.K).sum(axis=1), 1.0, rtol=0, atol=1e-13)  # with the faded one left
    assert np.allclose(lp.design(it.K)[:, 6], faded[:, 1], rtol=1e-3, atol=0)  # (its factor from a residual of 1e-11)
    assert np.array_equal(it.mu[:, 2], old["mu"][:, 0])
    assert np.array_equal(it.lam.reshape(-1, m - 1)[:, 2], old["lam"][:, 0])
    assert np.allclose(it.S, it.rows.slack(it.K), rtol=1e-9, atol=1e-15) and it.S.min() > 0
    # a revived column is not dropped again: with every column dead, all the others go
    monkeypatch.setattr(live, "DEAD_SHARE", 0.0)
    monkeypatch.setattr(live, "DEAD_ENTRY", 2.0)
    assert list(live.carried_columns(lp, it, 1.0, [1e-3])[0].live) == [2]


def test_the_bound_with_dropped_outputs_of_the_optimum_stays_below_it(monkeypatch):
    # at the optimum's neighbourhood, the columns of largest mass dropped: the live columns'
    # row minima alone add up to more than the optimum (those columns are needed), the row
    # minima over every output, with the dropped columns' deficits, stay below it
    monkeypatch.setattr(live, "DEAD_SHARE", 2.0)  # (no drops of the run's own)
    cost, d, notion = _line(0.25, n=12, seed=5)
    optimum = all_pairs_lp(cost, d, 0.25)
    run = _run(cost, notion, tol=1e-9)
    lp, it = run.lp, run.it
    dead = np.zeros(it.K.shape[1], bool)
    dead[np.argsort(-it.K.sum(axis=0))[:2]] = True
    lp2, it2 = live.dropped(lp, it, dead)
    reduced = lp2.cost - it2.rows.transpose(it2.lam)
    assert reduced.min(axis=1).sum() > optimum * (1 + 1e-6)  # (a bound of the live columns only)
    assert lp2.row_minima(reduced).sum() <= optimum * (1 + 1e-12)


def test_drops_are_undone_when_the_gap_stops_halving_with_columns_dropped(monkeypatch):
    run = _advanced(0.25, 8, monkeypatch)
    before = run.it.K.copy()
    monkeypatch.setattr(live, "DEAD_SHARE", 0.0)
    monkeypatch.setattr(live, "DEAD_ENTRY", 0.5)  # (the column of the largest entry stays)
    lp, it = live.carried_columns(run.lp, run.it, 1.0, [0.05])
    assert 1 <= lp.live.size < 12 and lp.drops.since == 1
    monkeypatch.setattr(live, "DEAD_SHARE", 2.0)  # (no more drops)
    flat = [0.05] * (live.DROPPED_STALL + 1)  # (no deficit: only the stall can undo)
    lp.deficits[:] = 0.0
    assert live.carried_columns(lp, it, 1.0, flat[:-1])[0] is lp  # not yet a full window
    undone, start = live.carried_columns(lp, it, 1.0, flat)
    assert undone.dead.size == 0 and np.array_equal(start.K, before) and undone.drops.undone
    assert live.carried_columns(undone, start, 1.0, [0.05])[0].dead.size == 0  # and no drop after that


def test_no_drops_when_their_copies_would_not_fit(monkeypatch):
    from mechdesign.solvers import metric_interior_memory

    cost, d, notion = _line(0.1)
    carried = []
    run = MetricInteriorPoint(cost, (notion.i, notion.j, notion.d), 0.1, tol=1e-8, repair=repairer(notion))
    # (the arrays were checked at the start; then 100 kB are left)
    monkeypatch.setattr(metric_interior_memory, "available_bytes", lambda: 1e5)
    while not run.done:
        run.advance()
        carried.append(run.columns)
    assert min(carried) == cost.shape[1] and run.lp.drops.undone
    _check(run, cost, d, notion)


def test_a_column_that_faded_to_nothing_is_not_revived(monkeypatch):
    # once the residual a dropped column stood for is gone, it has no entries to come back with
    # (a zero column has no interior): the revival declines and the caller undoes the drops
    run = _advanced(0.25, 8, monkeypatch)
    dead = np.zeros(run.it.K.shape[1], bool)
    dead[[3, 7]] = True
    lp, it = live.dropped(run.lp, run.it, dead)
    lp.drops.faded[:] = 0.0
    assert live.revived(lp, it, np.array([True, False])) is None
    lp.deficits[:] = -1.0  # (every dropped column prices out)
    monkeypatch.setattr(live, "REVIVE_MOST", 1.0)  # (a revival is tried first)
    undone, start = live.carried_columns(lp, it, 1e-3, [1e-3])
    assert undone.dead.size == 0 and undone.drops.undone and start is not it


def test_a_column_faded_so_far_that_its_weights_overflow_is_not_revived(monkeypatch):
    run = _advanced(0.25, 8, monkeypatch)
    dead = np.zeros(run.it.K.shape[1], bool)
    dead[[3, 7]] = True
    lp, it = live.dropped(run.lp, run.it, dead)
    lp.drops.faded *= 1e-310  # (subnormal: Λ/S beyond the largest float)
    assert live.revived(lp, it, np.array([True, False])) is None
    lp.drops.faded /= 1e-310 / 1e-3  # (a thousandth of its mass: it comes back)
    assert live.revived(lp, it, np.array([True, False])) is not None
