"""ε-LDP by column generation and the interior point, in turns or at once: the plain LP's optimum across ε,
priors and losses; the shared design and bound; either method finishing when the other
declines; the path in the solver record; and a time-limited solve's certified design and bound."""

import math
import time

import numpy as np
import pytest

import mechdesign
from mechdesign import Domain, Problem
from mechdesign.core.limits import Limits
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP
from mechdesign.solvers import ldp_portfolio, portfolio, race
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_portfolio import solve_interleaved
from tests.reference_lp import ldp_lp


def _prior_and_loss(prior: str, loss: str, n: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    x, y = np.arange(n)[:, None], np.arange(k)[None, :] * (n - 1) / max(k - 1, 1)
    p = {"uniform": np.full(n, 1.0), "dirichlet": rng.dirichlet(np.ones(n)),
         "zipf": rng.permutation(1.0 / np.arange(1, n + 1) ** 1.1)}[prior]
    d = np.abs(x - y)
    L = {"metric": d, "squared": d ** 2, "random": rng.random((n, k))}[loss]
    return p / p.sum(), L


def _private_and_stochastic(K: np.ndarray, epsilon: float) -> None:
    assert (K >= 0).all()
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-9)
    assert mechdesign.audit(K, LDP(epsilon)).holds


CASES = [(prior, loss) for prior in ("uniform", "dirichlet", "zipf") for loss in ("metric", "squared", "random")]


def _both_from_the_start(monkeypatch, at_once: bool) -> None:
    """Turns of no length: one step of each method in turn, so that both run and either may
    supply the design or the bound; or both at once from the start, one thread each."""
    monkeypatch.setattr(portfolio, "FIRST_TURN", 0.0)
    monkeypatch.setattr(race, "SECOND_START", 0.0)
    monkeypatch.setattr(race, "can_race", lambda methods: at_once)


@pytest.mark.parametrize("at_once", [False, True])
@pytest.mark.parametrize("epsilon", [0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("prior,loss", CASES)
@pytest.mark.parametrize("first,n,k", [(64, 7, 9), (2, 9, 11)])  # the interior point's first working set
def test_agrees_with_theldp_lp(epsilon, prior, loss, at_once, first, n, k, monkeypatch):
    from mechdesign.solvers import ldp_working_set

    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", first)
    _both_from_the_start(monkeypatch, at_once)
    p, L = _prior_and_loss(prior, loss, n, k, seed=int(100 * epsilon) + len(prior) + len(loss))
    cost = p[:, None] * L
    path: list[str] = []
    found = solve_interleaved(cost, epsilon, path=path)
    optimum = ldp_lp(cost, epsilon)
    assert found.objective == pytest.approx(optimum, rel=1e-7, abs=1e-10)
    assert found.bound <= optimum * (1 + 1e-9) + 1e-12
    assert found.objective == pytest.approx(float((cost * found.matrix).sum()), rel=1e-12, abs=1e-15)
    _private_and_stochastic(found.matrix, epsilon)
    assert path and "design from" in path[-1]
    assert "interior point:" not in path[-1] or f" of {k} outputs" in path[-1]  # the working set's size


@pytest.mark.parametrize("first", [64, 2])  # the interior point's first working set: all 8, or 2
@pytest.mark.parametrize("epsilon", [0.25, 4.0])
def test_problem_solve_records_which_method_gave_the_design_and_the_bound(epsilon, first, monkeypatch):
    from mechdesign.solvers import ldp_working_set

    monkeypatch.setattr(ldp_working_set, "FIRST_OUTPUTS", first)
    p, L = _prior_and_loss("dirichlet", "random", 8, 8, seed=3)
    problem = Problem(inputs=Domain.from_size(8), privacy=[LDP(epsilon)],
                      objective=ExpectedLoss(L, {"default": p}))
    result = problem.solve()
    assert result.status == "optimal"
    assert result.solver["name"] == ldp_portfolio.NAME
    (entry,) = result.solver["path"]
    assert entry.startswith("default: ") and "design from" in entry and "bound from" in entry
    assert result.objective == pytest.approx(ldp_lp(p[:, None] * L, epsilon), rel=1e-7)
    assert result.holds


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 8.0])
@pytest.mark.parametrize("prior,loss", [("zipf", "metric"), ("dirichlet", "random"), ("uniform", "squared")])
def test_the_interior_point_finishes_when_column_generation_declines(monkeypatch, epsilon, prior, loss):
    import highspy

    from mechdesign.solvers import column_generation

    monkeypatch.setattr(column_generation, "resumable_run", lambda h: highspy.HighsModelStatus.kInfeasible)
    p, L = _prior_and_loss(prior, loss, 8, 8, seed=4)
    cost = p[:, None] * L
    path: list[str] = []
    found = solve_interleaved(cost, epsilon, path=path)
    assert found.objective == pytest.approx(ldp_lp(cost, epsilon), rel=1e-7)
    assert path[0].startswith("column generation declined after 0 rounds: a master LP ended")
    # the proof is the interior point's; the design may be column generation's constant start,
    # kept from before it declined (at small ε it can be within the tolerance of the optimum)
    assert "bound from interior point" in path[-1]
    _private_and_stochastic(found.matrix, epsilon)


@pytest.mark.parametrize("at_once", [False, True])
def test_column_generation_finishes_beyond_the_interior_points_range(monkeypatch, at_once):
    from mechdesign.solvers.ldp_interior import MAX_EPSILON

    monkeypatch.setattr(portfolio, "FIRST_TURN", 0.0)  # the interior point's turn comes
    monkeypatch.setattr(race, "SECOND_START", 0.0)  # (or its start, when the two run at once)
    monkeypatch.setattr(race, "can_race", lambda methods: at_once)
    p, L = _prior_and_loss("uniform", "random", 6, 6, seed=5)
    cost = p[:, None] * L
    path: list[str] = []
    epsilon = MAX_EPSILON + 5.0  # every entry of the optimum at its row's minimum loss but e^{-ε}
    found = solve_interleaved(cost, epsilon, path=path)
    declined = [entry for entry in path if entry.startswith("interior point declined after 0 rounds: working set: "
                                                            "ε = 25 is outside")]
    # in turns it declines in its first; at once, column generation may finish before it starts
    assert declined or (at_once and "interior point:" not in path[-1])
    assert "design from column generation" in path[-1]
    # at ε = 25 the optimum is within e^{-25}·Σ max L of the loss without privacy
    floor = float(cost.min(axis=1).sum())
    assert floor <= found.objective <= floor + math.exp(-epsilon) * float(cost.sum())
    _private_and_stochastic(found.matrix, epsilon)


def test_both_declining_is_a_decline_with_both_reasons(monkeypatch):
    import highspy

    from mechdesign.solvers import column_generation, ldp_interior

    monkeypatch.setattr(column_generation, "resumable_run", lambda h: highspy.HighsModelStatus.kInfeasible)
    monkeypatch.setattr(ldp_interior, "MAX_ITERATIONS", 1)  # on a working set: twice that
    p, L = _prior_and_loss("dirichlet", "random", 8, 8, seed=6)
    with pytest.raises(SolverDeclined, match="column generation declined.*interior point declined after 3 rounds: "
                                             "working set: .* 2 interior-point iterations.*every output: .* 1 "):
        solve_interleaved(p[:, None] * L, 1.0)


@pytest.mark.parametrize("epsilon,prior,loss", [(0.25, "zipf", "metric"), (1.0, "uniform", "squared"),
                                               (6.0, "dirichlet", "random")])
def test_a_problem_is_solved_to_its_own_gap_tolerance(epsilon, prior, loss, monkeypatch):
    # the interior point alone (column generation declines; its rounds would depend on the
    # turns' timing): a looser tolerance ends the solve in fewer steps, and each design lies
    # within its tolerance of the plain LP's optimum, under a bound that holds
    import highspy

    from mechdesign.solvers import column_generation

    monkeypatch.setattr(column_generation, "resumable_run", lambda h: highspy.HighsModelStatus.kInfeasible)
    p, L = _prior_and_loss(prior, loss, 40, 40, seed=9)
    optimum = ldp_lp(p[:, None] * L, epsilon)
    rounds = []
    for tolerance in (1e-3, 1e-6):
        problem = Problem(inputs=Domain.from_size(40), privacy=[LDP(epsilon)],
                          objective=ExpectedLoss(L, {"default": p}), gap_tolerance=tolerance)
        result = problem.solve()
        assert result.status == "optimal" and result.holds
        assert result.solver["gap"] <= tolerance
        assert result.solver["bound"] <= optimum * (1 + 1e-9)
        assert optimum * (1 - 1e-9) <= result.objective <= optimum * (1 + tolerance)
        rounds.append(result.solver["rounds"])
    assert rounds[0] < rounds[1]


class _Fake:
    """A method that has reached a given value and bound and proves nothing more."""

    def __init__(self, name, value, bound):
        self.name, self.value, self.bound, self.rounds, self.columns = name, value, bound, 0, 3
        self.latest_bound = bound
        self.matrix = np.full((3, 3), 1.0 / 3.0)

    def advance(self, limits=None):
        self.rounds += 1
        return True

    def design(self):
        return self.matrix


def test_the_gap_closes_on_one_methods_design_and_the_others_bound():
    # neither method's own gap is closed: (1.0, 0.5) and (1.2, 1.0 − 1e-12); together they are
    turns = portfolio.Turns({"a": lambda: _Fake("a", 1.0, 0.5), "b": lambda: _Fake("b", 1.2, 1.0 - 1e-12)})
    assert turns.play("a", portfolio.Turn(None, 0.01), None, 1e-9) == "turn over"
    assert turns.play("b", portfolio.Turn(None, 0.01), None, 1e-9) == "closed"
    path: list[str] = []
    solution = turns.solution(False, path)
    assert (solution.objective, solution.bound) == (1.0, 1.0 - 1e-12)
    assert "design from a, bound from b" in path[-1]


@pytest.mark.parametrize("epsilon", [0.3, 6.0])
def test_a_time_limited_solve_returns_a_private_design_with_a_valid_bound(epsilon):
    p, L = _prior_and_loss("dirichlet", "random", 40, 40, seed=7)
    cost = p[:, None] * L
    optimum = solve_interleaved(cost, epsilon).objective
    limits = Limits(1e-9)  # expired before the first round
    path: list[str] = []
    found = solve_interleaved(cost, epsilon, limits=limits, path=path)
    assert found.stopped and "stopped at the time limit" in path[-1]
    assert found.bound <= optimum * (1 + 1e-9) + 1e-15
    assert found.objective >= optimum * (1 - 1e-9)
    assert found.objective == pytest.approx(float((cost * found.matrix).sum()), rel=1e-12)
    _private_and_stochastic(found.matrix, epsilon)


def test_a_time_limited_problem_ends_with_status_time_limit_and_a_certified_design():
    p, L = _prior_and_loss("zipf", "random", 60, 60, seed=8)
    problem = Problem(inputs=Domain.from_size(60), privacy=[LDP(5.0)], objective=ExpectedLoss(L, {"default": p}))
    optimum = solve_interleaved(p[:, None] * L, 5.0).objective
    result = problem.solve(time_limit=1e-3)
    assert result.status == "time-limit"
    assert result.solver["bound"] <= optimum * (1 + 1e-9)
    assert result.objective >= optimum * (1 - 1e-9)
    assert mechdesign.audit(result.mechanism, LDP(5.0)).holds


def test_the_method_predicted_to_finish_later_gets_a_share_of_the_turn_that_falls_with_the_evidence():
    turns = portfolio.Turns({"a": lambda: _Fake("a", 1.0, 1.0 - 1e-3), "b": lambda: _Fake("b", 1.0, 0.0)})
    for name in "ab":
        turns.started[name] = turns.starters[name]()
    assert turns.lengths(["a", "b"], 2.0, 1e-9) == {"a": 2.0, "b": 2.0}  # no turn seen yet
    turns.rate = {"a": 2.0, "b": 0.0}  # a closes its gap by e^2 per second, b has shown nothing
    assert turns.predicted("a", 1e-9) == pytest.approx(math.log(1e6) / 2.0)
    assert turns.predicted("b", 1e-9) == math.inf
    assert turns.lengths(["a", "b"], 2.0, 1e-9) == {"a": 2.0, "b": pytest.approx(2.0 / 8.0)}
    turns.rate = {"a": 2.0, "b": 0.1}  # b's gap of 1 would take log(1e9)/0.1 = 207 s, a's 6.9 s
    assert turns.lengths(["a", "b"], 2.0, 1e-9) == {"a": 2.0, "b": pytest.approx(2.0 / 8.0)}
    turns.rate = {"a": 2.0, "b": 2.0 * math.log(1e9) / math.log(1e6) / 1.5}  # b needs 1.5 times a's
    assert turns.lengths(["a", "b"], 2.0, 1e-9) == {"a": 2.0, "b": pytest.approx(2.0 / 3.0 / 1.5)}
    turns.rate = {"a": 2.0, "b": 100.0}  # b's gap closes in about 0.2 s: a trails
    assert turns.lengths(["a", "b"], 2.0, 1e-9) == {"a": pytest.approx(2.0 / 8.0), "b": 2.0}


def test_a_method_with_no_design_and_no_bound_yet_has_not_closed_the_gap():
    # a first turn that ended before the method's first solve: value inf, bound −inf (inf <= inf)
    turns = portfolio.Turns({"a": lambda: _Fake("a", math.inf, -math.inf)}, floor=1e-300)
    turns.started["a"] = turns.starters["a"]()
    assert not turns.closed(1e-9)


def test_progress_is_measured_with_the_latest_bound_not_the_best():
    turns = portfolio.Turns({})
    climbing = _Fake("ipm", 1.0, 0.9)
    climbing.latest_bound = 0.5  # its Lagrangian bound is still below its best one (0.9)
    assert turns._gap(climbing) == pytest.approx(0.5)


def test_a_gap_beyond_a_methods_ceiling_shows_no_progress():
    turns = portfolio.Turns({"cg": lambda: _Fake("cg", 1.0, -1e4)})
    turns.started["cg"] = method = turns.starters["cg"]()
    assert turns._gap(method) == pytest.approx(1e4 + 1)  # no ceiling: the gap as it is
    method.gap_ceiling = 1.0
    turns._measure("cg")
    assert turns._gap(method) == 1.0  # a bound of −10^4 against a value of 1
    turns.seconds["cg"] = 1.0
    method.latest_bound = -15.0  # a leap to a gap of 16: still nothing known
    turns._measure("cg")
    assert turns.rate["cg"] == 0.0 and turns.predicted("cg", 1e-9) == math.inf
    turns.seconds["cg"] = 2.0
    method.latest_bound = 0.99  # a gap of 1e-2 after two seconds from the cap
    turns._measure("cg")
    assert turns.rate["cg"] == pytest.approx(math.log(100.0) / 2.0)


def test_a_turn_measures_the_rate_at_which_the_method_closed_its_gap():
    class Halving(_Fake):
        def advance(self, limits=None):
            self.bound = self.latest_bound = self.value - (self.value - self.bound) / 2.0  # the gap halves
            self.rounds += 1
            time.sleep(0.01)
            return True

    turns = portfolio.Turns({"h": lambda: Halving("h", 1.0, 0.0)})
    turns.play("h", portfolio.Turn(None, 0.05), None, 1e-9)
    rounds = turns.started["h"].rounds
    assert rounds >= 2
    # log(1 / 2^-rounds) over the turn's seconds (a little more than 0.01 s per round)
    assert turns.rate["h"] == pytest.approx(rounds * math.log(2.0) / turns.seconds["h"], rel=1e-6)
    # a second turn: the rate runs from the peak (the first gap, 1) over both turns' seconds
    turns.play("h", portfolio.Turn(None, 0.05), None, 1e-9)
    rounds = turns.started["h"].rounds
    assert turns.peak["h"] == 1.0
    assert turns.rate["h"] == pytest.approx(rounds * math.log(2.0) / turns.seconds["h"], rel=1e-6)


def test_a_zero_gap_from_the_start_is_measured_without_error():
    turns = portfolio.Turns({"z": lambda: _Fake("z", 1.0, 1.0)})  # closed before any round
    assert turns.play("z", portfolio.Turn(None, 0.01), None, 1e-9) == "closed"
    assert turns.rate["z"] == 0.0


def test_a_method_that_overran_its_turn_is_charged_for_it(monkeypatch):
    # "slow" takes 0.05 s per uninterruptible step against turns of 0.01 s; "probe" records the
    # length of each turn it is given, which must make up for slow's overrun (equal shares here:
    # neither has a prediction, so the turns' lengths are equal and the debt is the overrun)
    monkeypatch.setattr(portfolio, "FIRST_TURN", 0.01)

    class Slow(_Fake):
        def advance(self, limits=None):
            time.sleep(0.05)
            self.rounds += 1
            return True

    class Probe(_Fake):
        def __init__(self, *args):
            super().__init__(*args)
            self.turns = []

        def advance(self, limits=None):
            self.turns.append(limits.time_limit)
            if len(self.turns) >= 3:
                self.bound = self.latest_bound = self.value  # closes the gap
            while not limits.expired():
                time.sleep(0.001)
            return True

    turns = portfolio.Turns({"slow": lambda: Slow("slow", 1.0, 0.0), "probe": lambda: Probe("probe", 1.0, 0.0)})
    portfolio.interleave(turns, 1e-9, None, [])
    probe = turns.started["probe"]
    assert probe.turns[0] >= 0.01 + 0.035  # the first turn's 0.01 s plus slow's overrun of about 0.04 s
    assert probe.turns[1] >= 0.02 + 0.025  # the second round's 0.02 s plus about 0.03 s owed


def test_column_generation_declines_when_called_again_after_pricing_out():
    # in turns whose shared gap is still open it can go no further: it must say so, not loop
    from mechdesign.solvers.column_generation import ColumnRounds, LDPCone
    from mechdesign.solvers.highs_model import SolverDeclined

    rng = np.random.default_rng(2)
    run = ColumnRounds(rng.random((5, 5)), LDPCone(5, 1.0))
    while not run.done:
        run.advance()
    with pytest.raises(SolverDeclined, match="no improving column"):
        run.advance()
