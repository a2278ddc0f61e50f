"""The transfer bound on the box minimum over the d-privacy cone: a proven lower bound (checked
against the LP over every pair), never below the box minimum, and exact where the greedy
transfer is the LP's optimum. The flow bound: that box minimum itself when every pair from a
negative to a positive entry is given, never below the greedy transfer, and still a bound when
pairs are left out."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.solvers import cone_transfer
from mechdesign.solvers.cone_flow import flow_bound
from mechdesign.solvers.cone_transfer import TransferBound


def _all_pairs(points: np.ndarray, epsilon: float):
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    i, j = np.nonzero(~np.eye(len(points), dtype=bool))
    return i, j, np.exp(epsilon * d[i, j])


def _box_minimum(a, i, j, coef):
    """min a·v over 0 <= v <= 1, v_i <= coef·v_j (scipy's HiGHS, every pair)."""
    rows = np.arange(i.size)
    A = sp.csr_matrix((np.concatenate([np.ones(i.size), -coef]), (np.concatenate([rows, rows]),
                                                                  np.concatenate([i, j]))),
                      shape=(i.size, a.size))
    return linprog(a, A_ub=A, b_ub=np.zeros(i.size), bounds=(0, 1), method="highs").fun


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 8.0])
def test_the_transfer_bound_lies_between_the_box_and_the_cone_minimum(epsilon):
    rng = np.random.default_rng(int(epsilon * 10))
    side = min(10.0, 14.0 / epsilon)  # ε·d at most 20: the reference LP stays well scaled
    points = rng.uniform(0, side, size=(50, 2))
    i, j, coef = _all_pairs(points, epsilon)
    bound = TransferBound(50, i, j, coef)
    for _ in range(6):
        a = rng.normal(0.3, 1.0, size=50)
        exact = _box_minimum(a, i, j, coef)
        quick = bound.bound(a)
        assert quick <= exact + 1e-12
        assert quick >= np.minimum(a, 0.0).sum() - 1e-12


def test_a_deficit_next_to_a_surplus_is_carried_exactly():
    # two inputs at distance 1, ε = ln 2: v_0 <= 2 v_1 and v_1 <= 2 v_0. With a = (−1, 3) the
    # minimum is at v = (1, 1/2): −1 + 1.5 = 0.5 > 0, so 0; the greedy carries 1 from input 1
    # (capacity 3/2) and proves 0, where the box gives −1
    i, j = np.array([0, 1]), np.array([1, 0])
    coef = np.full(2, 2.0)
    bound = TransferBound(2, i, j, coef)
    assert bound.bound(np.array([-1.0, 3.0])) == pytest.approx(0.0, abs=1e-14)
    # a = (−1, 1): v = (1, 1/2) gives −0.5, the minimum; the greedy carries 1/2 and proves −0.5
    assert bound.bound(np.array([-1.0, 1.0])) == pytest.approx(-0.5, abs=1e-14)
    assert _box_minimum(np.array([-1.0, 1.0]), i, j, coef) == pytest.approx(-0.5)


def test_only_the_nearest_partners_are_kept(monkeypatch):
    monkeypatch.setattr(cone_transfer, "NEIGHBOURS", 3)
    points = np.random.default_rng(5).uniform(0, 10, size=(20, 2))
    i, j, coef = _all_pairs(points, 1.0)
    bound = TransferBound(20, i, j, coef)
    assert bound.i.size == 20 * 3
    assert np.all(np.diff(bound.coef) >= 0)  # taken in order of growing coefficient
    for x in range(20):
        mine = np.sort(coef[i == x])[:3]
        np.testing.assert_array_equal(np.sort(bound.coef[bound.i == x]), mine)
    a = np.random.default_rng(6).normal(0.3, 1.0, size=20)
    assert bound.bound(a) <= _box_minimum(a, i, j, coef) + 1e-12


# the flow bound: the box minimum through its dual, a flow with gains (one LP)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 8.0])
@pytest.mark.parametrize("shift", [-0.5, 0.3, 1.5])
def test_the_flow_bound_is_the_box_minimum_over_every_pair(epsilon, shift):
    # reduced costs mostly negative, mixed, or mostly positive; at every ε the flow bound is the
    # cone's box minimum (to the LP's accuracy), never above it, never below the greedy transfer
    rng = np.random.default_rng([int(epsilon * 10), int(shift * 10) + 10])
    side = min(10.0, 14.0 / epsilon)  # ε·d at most 20: the reference LP stays well scaled
    points = rng.uniform(0, side, size=(40, 2))
    i, j, coef = _all_pairs(points, epsilon)
    greedy = TransferBound(40, i, j, coef)
    for _ in range(5):
        a = rng.normal(shift, 1.0, size=40)
        exact = _box_minimum(a, i, j, coef)
        bound = flow_bound(a, i, j, coef)
        assert bound <= exact + 1e-12
        assert bound == pytest.approx(exact, rel=1e-7, abs=1e-9)
        assert bound >= greedy.bound(a) - 1e-9


def test_a_primal_simplex_that_runs_out_of_pivots_hands_the_flow_to_the_dual_simplex(monkeypatch):
    # with no pivots allowed the primal simplex stops at the slack basis (no flow at all); the
    # dual simplex goes on from there to the box minimum, which the greedy transfer alone misses
    from mechdesign.solvers import cone_flow

    monkeypatch.setattr(cone_flow, "FLOW_PIVOTS_PER_LINE", 0)
    rng = np.random.default_rng(11)
    points = rng.uniform(0, 5, size=(40, 2))
    i, j, coef = _all_pairs(points, 1.0)
    greedy = TransferBound(40, i, j, coef)
    missed = 0.0
    for _ in range(5):
        a = rng.normal(0.3, 1.0, size=40)
        exact = _box_minimum(a, i, j, coef)
        assert flow_bound(a, i, j, coef) == pytest.approx(exact, rel=1e-7, abs=1e-9)
        missed = max(missed, exact - greedy.bound(a))
    assert missed > 1e-3  # (so the dual simplex did the work)


def test_a_primal_simplex_that_ends_unknown_hands_the_flow_to_highss_defaults(monkeypatch):
    # 1,000 random points at ε = 8 (coefficients beyond e^100 before the share filter): the
    # primal simplex without presolve ends "unknown" on some of these six flows, whose values
    # HiGHS does not vouch for; each must end optimal, solved again by HiGHS's defaults
    import highspy

    from mechdesign.solvers import cone_flow
    from mechdesign.solvers.cone_transfer import TransferBound

    rng = np.random.default_rng(1000)
    points = rng.uniform(0, 10, size=(1000, 2))
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    x, z = np.nonzero(~np.eye(1000, dtype=bool))
    pairs = TransferBound(1000, x, z, np.exp(8.0 * d[x, z]))
    i, j, coef = pairs.i, pairs.j, pairs.coef
    models, real = [], cone_flow.quiet_model
    monkeypatch.setattr(cone_flow, "quiet_model", lambda **options: models.append(real(**options)) or models[-1])
    for _ in range(6):
        a = rng.normal(1.5, 1.0, size=1000)
        assert flow_bound(a, i, j, coef) <= 0.0
        assert models[-1].getModelStatus() == highspy.HighsModelStatus.kOptimal


def test_a_flow_bound_over_some_pairs_is_still_a_bound():
    # each point's three nearest pairs only: the relays the missing pairs would have saved are
    # not there, so the bound may lie below the box minimum, never above it
    rng = np.random.default_rng(5)
    points = rng.uniform(0, 5, size=(30, 2))
    i, j, coef = _all_pairs(points, 1.0)
    order = np.lexsort((coef, i))
    rank = np.arange(order.size) - np.searchsorted(i[order], i[order])
    kept = order[rank < 3]
    below = 0
    for _ in range(8):
        a = rng.normal(0.2, 1.0, size=30)
        exact = _box_minimum(a, i, j, coef)
        bound = flow_bound(a, i[kept], j[kept], coef[kept])
        assert bound <= exact + 1e-12 and bound >= np.minimum(a, 0.0).sum() - 1e-12
        below += bound < exact - 1e-6
    assert below > 0  # (the restriction shows: else the test proves nothing about it)


def test_flow_values_beyond_the_capacities_are_scaled_back_before_the_bound(monkeypatch):
    # HiGHS's values are feasible only to its tolerances in its scaled model: a far pair
    # (coefficient e^26) carrying 2e-13 takes 0.039 from a surplus of 2e-5. The deficit at 0 is
    # covered by its neighbour (e^2·1e-3 <= 1e-2): the box minimum is 0, and so is the bound
    from mechdesign.solvers import cone_flow

    a = np.array([-1e-3, 1e-2, 2e-5])
    i, j, coef = _all_pairs(np.array([[0.0, 0.0], [1.0, 0.0], [13.0, 0.0]]), 2.0)

    def loose_flow(a, i, j, coef, limits):  # the exact flow, plus round-off on the far pair
        return np.where(j == 1, 1e-3, 0.0) + np.where(j == 2, 2e-13, 0.0)

    monkeypatch.setattr(cone_flow, "_flow", loose_flow)
    assert _box_minimum(a, i, j, coef) == pytest.approx(0.0, abs=1e-15)
    assert flow_bound(a, i, j, coef) == pytest.approx(0.0, abs=1e-15)
    lam = cone_flow.flow_multipliers(a, i, j, coef)
    left = a + np.bincount(i, lam, 3) - np.bincount(j, coef * lam, 3)
    assert left[1:].min() >= -1e-18  # no surplus overdrawn


def test_pairs_that_could_carry_next_to_nothing_stay_out_of_the_flow_lp(monkeypatch):
    # a pair whose surplus over its coefficient is below a 1e-9 share of its deficit carries
    # nothing a bound needs; the LP never sees it, and the bound is still the box minimum
    from mechdesign.solvers import cone_flow

    rng = np.random.default_rng(7)
    points = rng.uniform(0, 12, size=(30, 2))
    i, j, coef = _all_pairs(points, 2.0)  # (coefficients up to e^33)
    seen = []
    real = cone_flow._flow

    def recording_flow(a, i, j, coef, limits):
        seen.append(a[j] / coef / -a[i])
        return real(a, i, j, coef, limits)

    monkeypatch.setattr(cone_flow, "_flow", recording_flow)
    below = 0
    for _ in range(4):
        a = rng.normal(0.2, 1.0, size=30)
        bound = flow_bound(a, i, j, coef)
        exact = _box_minimum(a, i, j, coef)
        assert bound <= exact + 1e-12 and bound == pytest.approx(exact, rel=1e-7, abs=1e-9)
        joining = (a[i] < 0.0) & (a[j] > 0.0)
        below += np.count_nonzero(a[j][joining] / coef[joining] / -a[i][joining] < cone_flow.FLOW_LEAST_SHARE)
    assert np.concatenate(seen).min() >= cone_flow.FLOW_LEAST_SHARE
    assert below > 0  # (such pairs were there to leave out)


def test_reduced_costs_without_a_negative_entry_have_a_bound_of_zero():
    i, j, coef = _all_pairs(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]), 1.0)
    assert flow_bound(np.array([0.0, 1.0, 2.0]), i, j, coef) == 0.0
    # with nothing positive to carry to, the bound is the box's own Σ min(0, a)
    assert flow_bound(np.array([-1.0, -2.0, 0.0]), i, j, coef) == pytest.approx(-3.0, rel=1e-14)


@pytest.mark.parametrize("epsilon", [0.25, 4.0])
def test_the_plain_loop_and_the_compiled_kernel_carry_the_same_transfers(epsilon):
    """Before numba is loaded the transfers run as a plain loop (a small problem's rays never
    load it); both take the same pairs in the same order with the same arithmetic."""
    from mechdesign.solvers.cone_transfer_kernel import transfer as compiled

    rng = np.random.default_rng(7)
    i, j, coef = _all_pairs(rng.uniform(0, 10, size=(60, 2)), epsilon)
    order = np.argsort(coef, kind="stable")
    i, j, coef = (np.ascontiguousarray(x[order]) for x in (i, j, coef))
    for _ in range(4):
        a = rng.normal(0.2, 1.0, size=60)
        plain = cone_transfer.plain_transfer(a, i, j, coef)
        assert np.array_equal(plain, compiled(a, i, j, coef)) and np.count_nonzero(plain) > 0


def test_the_compiled_kernel_takes_over_after_the_plain_loops_visits_or_once_numba_is_loaded(monkeypatch):
    from mechdesign.solvers import cone_transfer_kernel

    calls = []
    monkeypatch.setattr(cone_transfer_kernel, "transfer", lambda *args: calls.append(1) or np.zeros(args[1].size))
    monkeypatch.setattr(cone_transfer, "PLAIN_VISITS", 25)
    monkeypatch.setattr(cone_transfer, "_visits", 0)
    loaded = [False]
    monkeypatch.setattr(cone_transfer, "_numba_loaded", lambda: loaded[0])
    a, i, j, coef = np.array([-1.0, 2.0]), np.array([0, 1]), np.array([1, 0]), np.array([1.5, 1.5])
    for _ in range(12):  # 24 visits in the plain loop: it carries min(1, 2/1.5) from input 1 to 0
        assert cone_transfer.transfer(a, i, j, coef).tolist() == [1.0, 0.0]
    assert not calls and cone_transfer._visits == 24
    assert cone_transfer.transfer(a, i, j, coef).tolist() == [0.0, 0.0] and calls == [1]
    monkeypatch.setattr(cone_transfer, "_visits", 0)  # numba loaded by another method: the kernel at once
    loaded[0] = True
    assert cone_transfer.transfer(a, i, j, coef).tolist() == [0.0, 0.0] and calls == [1, 1]
