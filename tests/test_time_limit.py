"""Anytime solves: a time limit returns the best design so far, certified private, with a
proven bound no larger than the true optimum, and status time-limit."""

from __future__ import annotations

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.limits import Limits
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.problem import Problem
from mechdesign.design.sweep import sweep
from mechdesign.privacy import LDP, MetricPrivacy


def ldp_problem(k: int = 400, eps: float = 0.5, **kw) -> Problem:
    dom = Domain.from_size(k)
    x = np.arange(k, dtype=float)
    prior = np.random.default_rng(3).dirichlet(np.ones(k))
    return Problem(inputs=dom, privacy=[LDP(eps)],
                   objective=ExpectedLoss((x[:, None] - x[None, :]) ** 2, {"default": prior}), **kw)


def ldp_optimum(cost: np.ndarray, eps: float) -> float:
    """min Σ C K over row-stochastic K with m_y <= K[x, y] <= e^ε m_y for every x and y (ε-LDP
    as one plain LP, no column generation), by scipy's HiGHS at tight tolerances."""
    n, m = cost.shape
    r, y = np.arange(n * m), np.tile(np.arange(m), n)
    rows = np.concatenate([r, r])
    cols = np.concatenate([r, n * m + y])
    above = sp.csr_matrix((np.concatenate([np.ones(n * m), np.full(n * m, -np.exp(eps))]), (rows, cols)),
                          shape=(n * m, n * m + m))  # K[x, y] − e^ε m_y <= 0
    below = sp.csr_matrix((np.concatenate([-np.ones(n * m), np.ones(n * m)]), (rows, cols)),
                          shape=(n * m, n * m + m))  # m_y − K[x, y] <= 0
    sums = sp.hstack([sp.kron(sp.identity(n), np.ones((1, m))), sp.csr_matrix((n, m))])
    lp = linprog(np.concatenate([cost.ravel(), np.zeros(m)]), A_ub=sp.vstack([above, below]),
                 b_ub=np.zeros(2 * n * m), A_eq=sums, b_eq=np.ones(n), bounds=(0, None), method="highs",
                 options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert lp.status == 0
    return float(lp.fun)


def test_column_generation_stopped_early_is_certified_with_a_valid_bound():
    problem = ldp_problem(k=80)
    optimum = ldp_optimum(problem.objective.cost("default"), 0.5)
    seen = []
    stopped = ldp_problem(k=80).solve(time_limit=1e-4, progress=seen.append)
    assert stopped.status == "time-limit" and stopped.holds
    assert "time limit" in stopped.message
    bound = stopped.solver["bound"]
    assert bound <= optimum * (1 + 1e-9)
    assert stopped.objective >= optimum * (1 - 1e-9)
    assert stopped.solver["gap"] > 1e-6  # stopped before the proof, and says so
    assert seen and seen == stopped.solver["progress"]
    assert {"solver", "round", "value", "bound", "gap", "seconds"} <= set(seen[0])


def test_a_generous_limit_changes_nothing():
    result = ldp_problem(k=60).solve(time_limit=600)
    assert result.status == "optimal" and result.solver["time_limit"] == 600


def test_general_route_out_of_time_returns_the_certified_data_independent_design():
    dom, metric = Domain.from_size(40), Metric("absolute")
    problem = Problem(inputs=dom, privacy=[MetricPrivacy(0.3, metric, dom)], solver="highs",
                      objective=ExpectedLoss(metric.distances(dom), {"default": np.full(40, 1 / 40)}))
    result = problem.solve(time_limit=1e-9)
    assert result.status == "time-limit" and result.holds
    k = result.mechanisms["default"].matrix
    np.testing.assert_allclose(k, np.tile(k[0], (40, 1)))  # reveals nothing: every row the same


def test_the_problems_own_limit_is_the_default_and_is_validated():
    assert ldp_problem(time_limit=1e-4).solve().status == "time-limit"
    for bad in (0, -1.0, float("nan"), "10", True):
        with pytest.raises(ProblemError, match="seconds"):
            ldp_problem(time_limit=bad)
    with pytest.raises(ProblemError):
        Limits(-3)


def test_sweep_applies_the_limit_to_each_point():
    result = sweep(ldp_problem(), [0.5, 1.0], time_limit=1e-4)
    assert [p.result.status for p in result.points] == ["time-limit", "time-limit"]
    assert all(p.result.holds for p in result.points)


LDP_FILE = """name = "ldp-big"
[inputs]
size = 400
[metric]
kind = "absolute"
[[privacy]]
notion = "ldp"
epsilon = 0.5
[objective]
kind = "expected-loss"
prior = "uniform"
loss = "squared"
"""


def test_command_line_time_limit_exits_1_with_a_certified_design(run_cli, tmp_path):
    import json

    path = tmp_path / "p.toml"
    path.write_text(LDP_FILE)
    code, out, _err = run_cli("solve", path, "--json", "--time-limit", "1e-4")
    data = json.loads(out)
    assert code == 1 and data["status"] == "time-limit"
    assert all(line["holds"] for line in data["certificate"])
    assert data["solver"]["time_limit"] == 1e-4 and data["solver"]["progress"]
    code, out, err = run_cli("solve", path, "--time-limit", "1e-4", "--verbose")
    # stdout is not a terminal here: the rounds go to stderr, the result alone to stdout
    assert code == 1 and "round 1" in err and "proven bound" in err
    assert "round 1" not in out and out.startswith("ldp-big: time-limit")
    for bad in ("0", "-2", "soon"):
        code, _out, err = run_cli("solve", path, "--time-limit", bad)
        assert code == 2 and "seconds" in err


def test_problem_file_time_limit_is_read_and_checked(run_cli, tmp_path):
    import json

    path = tmp_path / "p.toml"
    path.write_text(LDP_FILE + "[solve]\ntime_limit = 0.0001\n")
    code, out, _err = run_cli("solve", path, "--json")
    assert code == 1 and json.loads(out)["status"] == "time-limit"
    code, out, _err = run_cli("solve", path, "--json", "--time-limit", "600")  # the option wins
    assert code == 0 and json.loads(out)["status"] == "optimal"
    path.write_text(LDP_FILE + "[solve]\ntime_limit = -1\n")
    code, _out, err = run_cli("solve", path)
    assert code == 2 and "solve.time_limit" in err


class _ExpiresAfterRounds(Limits):
    """Limits that expire once ``rounds`` rounds have been reported (no clock involved)."""

    def __init__(self, rounds: int):
        super().__init__()
        self.rounds = rounds

    def expired(self) -> bool:
        return len(self.history) >= self.rounds


def _plane_notion(eps: float = 0.4):
    rng = np.random.default_rng(11)
    dom = Domain.from_points(rng.random((30, 2)) * 5.0)
    metric = Metric("euclidean")
    notion = MetricPrivacy(eps, metric, dom)
    cost = metric.distances(dom) * rng.dirichlet(np.ones(30))[:, None]
    return notion, cost


@pytest.mark.parametrize("rounds", [0, 1, 2])
def test_lazy_pairs_at_the_deadline_return_a_private_design_and_a_valid_bound(rounds):
    from mechdesign.solvers.lazy_pairs import repairer, solve_lazily

    notion, cost = _plane_notion()
    pairs = (notion.i, notion.j, notion.d)
    exact = solve_lazily(cost, pairs, notion.epsilon)
    assert not exact.stopped and exact.objective - exact.bound <= 1e-9 * exact.objective
    stopped = solve_lazily(cost, pairs, notion.epsilon, limits=_ExpiresAfterRounds(rounds), repair=repairer(notion))
    assert stopped.stopped
    assert notion.level(stopped.matrix) <= notion.epsilon + 1e-9  # private as returned
    np.testing.assert_allclose(stopped.matrix.sum(axis=1), 1.0, atol=1e-9)
    assert stopped.objective == pytest.approx(float((cost * stopped.matrix).sum()), rel=1e-12)
    assert stopped.bound <= exact.objective * (1 + 1e-9) <= stopped.objective * (1 + 2e-9)
    constant = cost.sum(axis=0).min()  # the best data-independent design, the fallback
    assert stopped.objective <= constant * (1 + 1e-12)


def test_lazy_pairs_without_a_relaxed_optimum_return_the_constant_design():
    from mechdesign.solvers.lazy_pairs import _better, constant_design, repairer

    notion, cost = _plane_notion()
    found = _better(None, constant_design(cost), cost, repairer(notion), 0, 0)
    assert found.stopped and notion.level(found.matrix) == 0.0
    assert found.objective == pytest.approx(cost.sum(axis=0).min())
    assert found.bound == pytest.approx(cost.min(axis=1).sum())  # the optimum without privacy


class _DeadlineDuringSolve(Limits):
    """A deadline (no clock involved) that passes during master solve ``after`` + 1: from then
    on the limits are expired and the master LP stops without an optimum, as HiGHS does at the
    time limit it was given (the model's run is wrapped by the test)."""

    def __init__(self, after: int):
        super().__init__(time_limit=3600.0)
        self.after, self.solves = after, 0

    def expired(self) -> bool:
        return self.solves > self.after


def _ldp_costs(k: int = 30):
    x = np.arange(k, dtype=float)
    prior = np.random.default_rng(5).dirichlet(np.ones(k))
    cost = prior[:, None] * (x[:, None] - x[None, :]) ** 2
    return cost / cost.max()


def _assert_stopped_design_is_private_with_a_valid_bound(found, cost, eps):
    assert found.stopped
    assert found.matrix.min() >= -1e-12
    np.testing.assert_allclose(found.matrix.sum(axis=1), 1.0, atol=1e-9)
    assert LDP(eps).level(np.clip(found.matrix, 0.0, None)) <= eps + 1e-9  # private as returned
    assert found.objective == pytest.approx(float((cost * found.matrix).sum()), rel=1e-9)
    optimum = ldp_optimum(cost, eps)
    assert found.bound <= optimum + 1e-12
    assert found.objective >= optimum * (1 - 1e-9)


@pytest.mark.parametrize("after", [0, 1, 3])
def test_column_generation_cut_short_in_a_master_solve_returns_the_last_design(monkeypatch, after):
    from mechdesign.solvers import column_generation

    limits = _DeadlineDuringSolve(after)
    run = column_generation.resumable_run

    def run_until_the_deadline(h):
        limits.solves += 1
        return highspy.HighsModelStatus.kTimeLimit if limits.expired() else run(h)

    monkeypatch.setattr(column_generation, "resumable_run", run_until_the_deadline)
    cost, eps = _ldp_costs(), 0.7
    found = column_generation.solve_by_columns(cost, column_generation.LDPCone(len(cost), eps), limits=limits)
    assert found.rounds == after  # the rounds completed before the deadline
    _assert_stopped_design_is_private_with_a_valid_bound(found, cost, eps)


def test_column_generation_past_its_deadline_stops_after_one_round():
    from mechdesign.solvers.column_generation import LDPCone, solve_by_columns

    cost, eps = _ldp_costs(), 0.7
    found = solve_by_columns(cost, LDPCone(len(cost), eps), limits=Limits(1e-9))
    assert found.rounds == 1  # each master solve is given at least MIN_SECONDS
    _assert_stopped_design_is_private_with_a_valid_bound(found, cost, eps)


def test_lazy_pairs_keep_the_incumbent_when_their_repaired_optimum_is_worse():
    """The pairs beyond e^20 are left out of the lazy model and repaired afterwards; when that
    repair makes the final design worse than the design handed in, the handed-in one is kept
    (not stopped, with the better of the two bounds)."""
    from mechdesign.solvers.lazy_pairs import constant_design, solve_lazily

    notion, cost = _plane_notion()
    pairs = (notion.i, notion.j, notion.d)
    exact = solve_lazily(cost, pairs, notion.epsilon)
    worse = constant_design(cost).matrix
    kept = solve_lazily(cost, pairs, notion.epsilon, incumbent=exact, repair=lambda k: worse)
    assert not kept.stopped and kept.matrix is exact.matrix and kept.objective == exact.objective
    assert kept.bound >= exact.bound


def test_the_rays_design_is_kept_on_a_steep_graph():
    """A graph metric at ε = 8 (pairs far beyond e^20): the rays' design is the result (the
    lazy model, which leaves the steep pairs to repair, would be worse)."""
    from mechdesign.bench.envelope import build

    problem = build({"family": "graph", "size": 100, "epsilon": 8.0, "prior": "uniform", "loss": "squared"})
    result = problem.solve()
    assert result.status == "optimal" and result.holds
    # the rays' design is the result, its gap closed by their own bound or the interior
    # point's, and the lazy model never ran
    path = " | ".join(result.solver["path"])
    assert "design from cone rays" in path and "lazy pairs" not in path
    d = problem.privacy[0].distances()
    k = np.exp(-8.0 * d / 2)  # the exponential mechanism: private, so no better than the optimum
    k /= k.sum(axis=1, keepdims=True)
    assert result.solver["bound"] <= float((k * problem.objective.cost("default")).sum())
