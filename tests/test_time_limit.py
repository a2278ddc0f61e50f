"""Anytime solves: a time limit returns the best design so far, certified private, with a
proven bound no larger than the true optimum, and status time-limit."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_column_generation_stopped_early_is_certified_with_a_valid_bound():
    exact = ldp_problem().solve()
    assert exact.status == "optimal"
    seen = []
    stopped = ldp_problem().solve(time_limit=1e-4, progress=seen.append)
    assert stopped.status == "time-limit" and stopped.holds
    assert "time limit" in stopped.message
    bound = stopped.solver["bound"]
    assert bound <= exact.objective * (1 + 1e-9)
    assert stopped.objective >= exact.objective * (1 - 1e-9)
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
    code, out, _err = run_cli("solve", path, "--time-limit", "1e-4", "--verbose")
    assert code == 1 and "round 1" in out and "proven bound" in out
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
    from mechdesign.solvers.lazy_pairs import _better_when_stopped, constant_design, repairer

    notion, cost = _plane_notion()
    found = _better_when_stopped(None, constant_design(cost), cost, repairer(notion), 0, 0)
    assert found.stopped and notion.level(found.matrix) == 0.0
    assert found.objective == pytest.approx(cost.sum(axis=0).min())
    assert found.bound == pytest.approx(cost.min(axis=1).sum())  # the optimum without privacy
