"""The ε-LDP interior point on a working set of outputs, and beside the one on every output: the
plain LP's optimum across ε, priors and losses when the first set misses most of the optimum's
outputs; a bound proven over every output (a set that may not grow never claims the optimum);
outputs joining the iterate in progress strictly inside their cones, centred and dual feasible;
every design after a join private and never below the optimum; the greedy first set; the
pair's steps following each method's pace, the working set stopping once it holds more than
half of the outputs, and either finishing when the other declines."""

import math

import numpy as np
import pytest

import mechdesign
from mechdesign.privacy import LDP
from mechdesign.solvers import ldp_working_set
from mechdesign.solvers.ldp_interior import InteriorPoint
from mechdesign.solvers.ldp_working_set import (
    InteriorPair,
    WorkingSetInteriorPoint,
    solve_by_working_set,
)
from tests.reference_lp import ldp_lp


def _cost(prior: str, loss: str, n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = np.arange(n)[:, None], np.arange(k)[None, :] * (n - 1) / max(k - 1, 1)
    p = {"uniform": np.full(n, 1.0), "dirichlet": rng.dirichlet(np.ones(n)),
         "zipf": rng.permutation(1.0 / np.arange(1, n + 1) ** 1.1)}[prior]
    d = np.abs(x - y)
    L = {"metric": d, "squared": d ** 2, "random": rng.random((n, k)), "zero-one": (d > 0.5) * 1.0}[loss]
    return (p / p.sum())[:, None] * L


@pytest.mark.parametrize("epsilon", [0.05, 0.25, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("prior,loss", [("uniform", "metric"), ("dirichlet", "random"), ("zipf", "squared"),
                                        ("uniform", "random"), ("zipf", "zero-one")])
def test_agrees_with_the_plain_lp_from_a_set_of_two_outputs(monkeypatch, epsilon, prior, loss):
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 2)
    cost = _cost(prior, loss, 12, 14, seed=int(100 * epsilon) + len(prior + loss))
    plain = ldp_lp(cost, epsilon)
    found = solve_by_working_set(cost, epsilon)
    assert found.objective == pytest.approx(plain, rel=1e-7, abs=1e-9)
    assert found.bound <= plain + 1e-12
    K = found.matrix
    assert (K >= 0).all()
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-12)
    assert mechdesign.audit(K, LDP(epsilon)).holds


@pytest.mark.parametrize("epsilon", [1.0, 4.0, 8.0])  # (at ε = 0.25 one output is optimal here)
def test_every_design_after_a_join_is_private_and_never_below_the_optimum(monkeypatch, epsilon):
    # the rows' sums carry a residual after a join: the rescaled iterate alone would be only
    # nearly private, with a value that can fall below the optimum and close the gap falsely
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 1)
    cost = _cost("dirichlet", "metric", 12, 16, seed=7)
    optimum = ldp_lp(cost, epsilon)
    run = WorkingSetInteriorPoint(cost, epsilon)
    while not run.done:
        run.advance()
        assert run.value >= optimum * (1 - 1e-12)
        assert mechdesign.audit(run.design(), LDP(epsilon)).holds
        assert run.bound <= optimum * (1 + 1e-12)
    assert run.joins >= 1 and run.value == pytest.approx(optimum, rel=1e-7)


def test_outputs_join_until_the_set_holds_the_optimums_outputs(monkeypatch):
    # a 0-1 loss at ε = 8 under a uniform prior: randomised response over all 14 outputs is the
    # optimum, so a set that starts with 2 must grow to all of them
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 2)
    cost = _cost("uniform", "zero-one", 14, 14, seed=1)
    run = WorkingSetInteriorPoint(cost, 8.0)
    assert run.columns == 2
    while not run.done:
        run.advance()
    assert run.columns == 14 and run.joins >= 3  # a join at most doubles the set
    assert run.value == pytest.approx(ldp_lp(cost, 8.0), rel=1e-7)


def test_a_set_that_may_not_grow_never_claims_the_optimum(monkeypatch):
    # the bound prices every output, not only those in the set: with joins disabled the run
    # solves the restricted problem, whose optimum is above the full one, and must not stop
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 2)
    cost = _cost("uniform", "zero-one", 10, 10, seed=2)
    run = WorkingSetInteriorPoint(cost, 4.0)
    monkeypatch.setattr(run, "_join", lambda prices: None)
    while not run.inner.done and run.rounds < 100:
        run.advance()
    optimum = ldp_lp(cost, 4.0)
    assert run.inner.done  # the restricted problem is solved...
    assert run.value > optimum + 1e-3 and run.bound <= optimum + 1e-12 and not run.done  # ...the full one is not


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_joining_outputs_enter_inside_their_cones_centred_and_dual_feasible(epsilon):
    cost = _cost("dirichlet", "random", 9, 12, seed=3)
    run = InteriorPoint(cost[:, :5], epsilon)
    for _ in range(4):
        run.advance()
    it, top = run.it, run.top
    mu = (((it.K - it.m) * it.lam).sum() + ((top * it.m - it.K) * it.nu).sum()) / (2 * it.K.size)
    u = it.u.copy()
    run.add_outputs(cost[:, 5:])
    K, m, lam, nu = it.K[:, 5:], it.m[5:], it.lam[:, 5:], it.nu[:, 5:]
    s1, s2 = K - m, top * m - K
    assert (s1 > 0).all() and (s2 > 0).all() and (lam > 0).all() and (nu > 0).all()
    np.testing.assert_allclose(s1 * lam, mu, rtol=1e-9)
    np.testing.assert_allclose(s2 * nu, mu, rtol=1e-9)
    np.testing.assert_allclose(lam - nu, cost[:, 5:] - u[:, None], rtol=1e-8, atol=1e-12 * np.abs(lam).max())
    assert run.cost.shape == cost.shape and run.design().shape == cost.shape
    while not run.done:
        run.advance()
    assert run.value == pytest.approx(ldp_lp(cost, epsilon), rel=1e-7, abs=1e-9)
    assert math.isfinite(run.bound) and run.bound <= ldp_lp(cost, epsilon) + 1e-12


def test_the_first_set_is_chosen_greedily_for_the_loss_without_privacy(monkeypatch):
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 3)
    cost = np.full((4, 6), 5.0)
    cost[:, 4] = 1.0  # the least cost when every input is sent to it
    cost[0, 1] = 0.0  # lowers input 0's best cost by 1
    cost[1:, 2] = 2.0  # lowers nobody's: not chosen although its column costs less than 1's
    run = WorkingSetInteriorPoint(cost, 1.0, initial=[5, 5, 9])  # 9 is no output: left out
    assert sorted(run.outputs.tolist()) == [1, 4, 5]


@pytest.mark.parametrize("loss", ["metric", "random"])
def test_the_lazy_greedy_choice_is_the_greedy_choice(loss):
    cost = _cost("dirichlet", loss, 60, 70, seed=11)
    chosen = ldp_working_set.spread_outputs(cost, 20)
    # every gain recomputed at every pick
    picks = [int(np.argmin(cost.sum(axis=0)))]
    best = cost[:, picks[0]].copy()
    while len(picks) < 20:
        gains = np.maximum(best[:, None] - cost, 0.0).sum(axis=0)
        y = int(np.argmax(gains))
        if gains[y] <= 0.0:
            break
        picks.append(y)
        best = np.minimum(best, cost[:, y])
    assert chosen.tolist() == picks


# ---------------------------------------------------------------------------------------------
# the working set beside the interior point on every output


@pytest.mark.parametrize("which", ["working set", "every output"])
def test_the_pair_finishes_on_either_when_the_other_declines(monkeypatch, which):
    from mechdesign.solvers.highs_model import SolverDeclined

    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 2)
    cost = _cost("dirichlet", "random", 10, 12, seed=5)

    def declining():
        raise SolverDeclined("declined on purpose")

    class Patched(InteriorPair):  # one starter declines (the working set starts in __init__)
        def _start(self, name):
            if name == which:
                self.starters[name] = declining
            super()._start(name)

    run = Patched(cost, 1.0)
    while not run.done:
        run.advance()
    assert run.value == pytest.approx(ldp_lp(cost, 1.0), rel=1e-7)
    assert f"{which} declined: declined on purpose" in run.rounds_note
    assert list(run.methods) == [name for name in ("working set", "every output") if name != which]


class _Stub:
    def __init__(self, value, bound):
        self.value, self.bound, self.rounds = value, bound, 1


def test_the_pair_steps_the_method_predicted_to_finish_first_and_gives_the_other_an_eighth():
    pair = InteriorPair.__new__(InteriorPair)
    pair.tol, pair.declined, pair.retired = 1e-6, {}, ""
    pair.starters = {"working set": None, "every output": None}
    # before either shows a rate, the one that has used less time steps
    pair.methods = {"working set": _Stub(1.0, 0.0), "every output": _Stub(1.0, 0.0)}
    pair.seconds = {"working set": 2.0, "every output": 1.0}
    assert pair._next() == "every output"
    # the working set came from a gap of 1 to 1e-3 in 2 s (half the way to 1e-6: 2 s more),
    # every output to 0.5 in 1 s (19 s more): the working set leads, and every output steps
    # only while below an eighth of its seconds
    pair.methods["working set"].bound = 1.0 - 1e-3
    pair.methods["every output"].bound = 0.5
    assert pair._next() == "working set"
    pair.seconds = {"working set": 9.0, "every output": 1.0}  # 9 s more against 19 s
    assert pair._next() == "every output"
    # the pace is measured with the best bound: a join that sets the working set's latest bound
    # back is a stall, not a loss of what it proved
    pair.seconds = {"working set": 2.0, "every output": 1.0}
    pair.methods["working set"].latest_bound = -1e5
    assert pair._next() == "working set"
    # a method that declined leaves the other every step
    pair.declined = {"working set": "why"}
    assert pair._next() == "every output"


def test_the_pair_stops_the_working_set_once_it_holds_more_than_half_of_the_outputs(monkeypatch):
    # a 0-1 loss at ε = 8 under a uniform prior: randomised response over all 16 outputs is the
    # optimum, so a set that starts with 2 must grow past 8; the working set alone takes the
    # steps until then
    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", 2)
    cost = _cost("uniform", "zero-one", 16, 16, seed=1)
    run = InteriorPair(cost, 8.0)
    monkeypatch.setattr(run, "_next", lambda: "every output" if run.retired else "working set")
    while not run.retired:
        assert not run.done
        run.advance()
    assert run.methods["working set"].columns > 8 and "every output" in run.methods
    monkeypatch.undo()
    rounds = run.methods["working set"].rounds
    while not run.done:
        run.advance()
    assert run.methods["working set"].rounds == rounds  # stopped for good
    assert "working set stopped holding" in run.rounds_note and "of 16 outputs" in run.rounds_note
    assert run.value == pytest.approx(ldp_lp(cost, 8.0), rel=1e-7)


def test_with_twice_the_first_outputs_or_fewer_the_pair_is_the_interior_point_on_every_output():
    cost = _cost("dirichlet", "random", 9, 12, seed=2)
    run = InteriorPair(cost, 2.0)
    assert run.retired and "every output" in run.methods
    while not run.done:
        run.advance()
    assert "working set" not in run.methods  # never started, let alone stepped
    assert run.value == pytest.approx(ldp_lp(cost, 2.0), rel=1e-7)


def test_a_stopped_working_set_goes_on_when_the_interior_point_on_every_output_declines(monkeypatch):
    cost = _cost("dirichlet", "random", 9, 12, seed=2)
    run = InteriorPair(cost, 2.0)
    assert run.retired
    monkeypatch.setattr(run.methods["every output"], "max_iterations", 1)
    while not run.done:
        run.advance()
    assert "every output" in run.declined and run.methods["working set"].rounds > 0
    assert run.value == pytest.approx(ldp_lp(cost, 2.0), rel=1e-7)


@pytest.mark.parametrize("epsilon,loss", [(0.4, "random"), (3.0, "coincident"), (7.8, "random")])
def test_the_pair_at_its_own_first_set_agrees_with_column_generation_on_200_outputs(epsilon, loss):
    # 64 first outputs of 200: the greedy choice, joins and the pair's steps as they run in a solve
    from mechdesign.solvers.column_generation import LDPCone, solve_by_columns

    rng = np.random.default_rng(int(10 * epsilon))
    n = k = 200
    base = rng.random((n // 2, k))
    L = rng.random((n, k)) if loss == "random" else np.vstack([base, base])  # inputs in identical pairs
    cost = rng.dirichlet(np.ones(n))[:, None] * L
    cost /= cost.max()
    run = InteriorPair(cost, epsilon, tol=5e-7)
    assert run.methods["working set"].columns == 64 and not run.retired
    while not run.done:
        run.advance()
    exact = solve_by_columns(cost, LDPCone(n, epsilon), tol=1e-9).objective
    assert exact * (1 - 1e-9) <= run.value <= exact + 5e-7 * max(1.0, exact)
    assert run.bound <= exact * (1 + 1e-9)
    assert mechdesign.audit(run.design(), LDP(epsilon)).holds
