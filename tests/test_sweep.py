"""ε sweeps: one compiled program, warm-started solves, values equal to independent solves."""

import numpy as np
import pytest

import mechdesign
from mechdesign import Domain, Problem, ProblemError
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design import problem as problem_module
from mechdesign.design import sweep as sweep_module
from mechdesign.design.sweep import parse_range, sweep
from mechdesign.estimation.compare import baseline_curves
from mechdesign.privacy import LDP
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.registry import SpecialSolver
from tests.conftest import PROBLEMS


def ldp_problem(k=25, eps=1.0, seed=0):
    prior = np.random.default_rng(seed).dirichlet(np.ones(k))
    x = np.arange(k)
    return Problem(Domain.from_size(k), ExpectedLoss(np.abs(x[:, None] - x[None, :]).astype(float),
                                                     {"default": prior}), [LDP(eps)], name="ldp")


def independent_values(make, epsilons):
    out = []
    for e in epsilons:
        p = make()
        p.privacy = [n.with_epsilon(float(e)) for n in p.privacy]
        r = p.solve()
        assert r.status == "optimal"
        out.append(r.objective)
    return np.array(out)


def test_sweep_compiles_once_and_equals_independent_single_solves():
    problem = ldp_problem()
    eps = np.linspace(0.2, 3.0, 8)
    before = sweep_module.compile_count()
    result = sweep(problem, eps, use_special=False)  # the LP itself, not a special solver
    assert sweep_module.compile_count() - before == 1
    assert result.compiles == 1 and result.canonicalizations == 1  # cvxpy reused its cached map
    assert all(p.result.status == "optimal" for p in result.points)
    np.testing.assert_allclose(result.objectives, independent_values(ldp_problem, eps), rtol=1e-7, atol=1e-9)
    assert sum(p.warm for p in result.points[1:]) >= len(eps) - 2  # basis warm starts were used
    assert not result.points[0].warm
    assert problem.privacy[0].epsilon == 1.0  # the caller's notion is left as it was


def test_sweep_of_a_metric_privacy_problem_equals_single_solves():
    def make():
        return mechdesign.load_problem(PROBLEMS / "dprivacy-line.toml")

    eps = [1.0, 0.5, 2.0]  # not sorted: points in the given order
    result = sweep(make(), eps, use_special=False)
    assert result.compiles == 1
    # optima of the remapped truncated geometric (closed form): n = 20 -> 0.7836114955 (ε = 1), 1.6414864271 (ε = 0.5)
    assert result.objectives[0] == pytest.approx(0.7836114955, abs=1e-8)
    assert result.objectives[1] == pytest.approx(1.6414864271, abs=1e-8)
    np.testing.assert_allclose(result.objectives, independent_values(make, eps), rtol=1e-7)


def test_sweep_of_a_profile_problem_equals_single_solves():
    def make():
        return mechdesign.load_problem(PROBLEMS / "categorical-chain.toml")

    eps = [0.1, 0.5, 1.0, 2.0]
    result = sweep(make(), eps, use_special=False)
    assert result.compiles == 1 and all(p.result.holds for p in result.points)
    np.testing.assert_allclose(result.objectives, independent_values(make, eps), rtol=1e-7, atol=1e-10)


def test_cold_sweep_gives_the_same_values_without_warm_starts():
    eps = [0.5, 1.0, 1.5]
    warm = sweep(ldp_problem(15), eps, use_special=False)
    cold = sweep(ldp_problem(15), eps, warm_start=False, use_special=False)
    assert not any(p.warm for p in cold.points) and cold.compiles == 1
    np.testing.assert_allclose(warm.objectives, cold.objectives, rtol=1e-8)


def test_sweep_baseline_curves_are_never_below_the_design():
    problem = ldp_problem(12)
    result = sweep(problem, [0.5, 1.0, 2.0], at_each_point=baseline_curves(["krr", "geometric", "uniform"]))
    for curve in result.baselines.values():
        assert len(curve) == 3
        for point, c in zip(result.points, curve):
            assert c["holds"] is True
            assert c["objective"] >= point.result.objective - 1e-9
    # k-ary RR is put at exactly the swept ε (it is exactly ε-LDP)
    assert [c["epsilon_used"] for c in result.baselines["krr"]] == [0.5, 1.0, 2.0]
    d = result.to_dict()
    assert d["compiles"] == result.compiles and len(d["points"]) == 3 and set(d["baselines"]) == {"krr", "geometric", "uniform"}


@pytest.mark.parametrize("text,match", [("0.5:3", "START:STOP:COUNT"), ("a:b:3", "numbers"),
                                        ("1:2:0", "COUNT"), ("1:2:1", "COUNT"), ("-1:2:3", "non-negative"),
                                        ("1:inf:3", "finite"), ("1:2:2.5", "whole")])
def test_malformed_epsilon_ranges_are_rejected(text, match):
    with pytest.raises(ProblemError, match=match) as info:
        parse_range(text)
    assert info.value.key == "--epsilon"


def test_epsilon_range_parsing():
    np.testing.assert_allclose(parse_range("0.1:2:20"), np.linspace(0.1, 2, 20))
    np.testing.assert_allclose(parse_range("1:1:1"), [1.0])


def test_a_problem_without_epsilon_cannot_be_swept():
    p = ldp_problem(4)
    p.privacy = []
    with pytest.raises(ProblemError, match="no privacy constraint with an ε"):
        sweep(p, [1.0])


def test_a_sweep_crossing_the_coefficient_limit_compiles_once_per_program_shape():
    # neighbours 10 apart: at ε = 0.05 the pair coefficient e^{0.5} goes into the LP as is; at
    # ε = 3, e^{30} > e^20 is split into a chain of two links of e^{15} (another program shape)
    def make():
        return mechdesign.problem_from_dict({
            "name": "spaced", "inputs": {"points": [0.0, 10.0, 20.0, 30.0, 40.0]},
            "metric": {"kind": "absolute"}, "privacy": [{"notion": "metric", "epsilon": 1.0}],
            "objective": {"kind": "expected-loss", "loss": "metric"}})

    eps = [0.05, 3.0, 0.1]
    result = sweep(make(), eps, use_special=False)
    assert result.compiles == 2
    singles = []
    for e in eps:
        p = make()
        p.privacy = [p.privacy[0].with_epsilon(e)]
        singles.append(p.solve(solver="highs"))  # the LP, as the sweep here
    for point, single in zip(result.points, singles):
        assert point.result.status == single.status
        assert point.result.objective == pytest.approx(single.objective, rel=1e-7)
        assert point.result.solver["relaxed"] == single.solver["relaxed"]
    assert [p.result.solver["relaxed"] for p in result.points] == [False, False, False]


def test_special_solvers_are_used_per_point_exactly_as_in_a_single_solve(monkeypatch):
    calls = []

    def special(problem, limits=None):  # a stand-in special solver: k-ary RR is optimal for this problem
        eps = problem.privacy[0].epsilon
        calls.append(eps)
        return {"default": mechdesign.mechanisms.randomized_response.krr(4, eps).matrix}, SolverOutcome(
            "optimal", {"name": "stand-in", "compile_seconds": 0.0, "solve_seconds": 0.0})

    stand_in = SpecialSolver("stand-in", lambda p: None if p.name == "special-rr" else "another problem", special)
    monkeypatch.setattr(problem_module, "special_solvers", lambda: (stand_in,))
    p = mechdesign.problem_from_dict({
        "name": "special-rr", "inputs": {"size": 4}, "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        "objective": {"kind": "error-probability"}})
    result = sweep(p, [0.5, 1.5])
    assert calls == [0.5, 1.5] and result.compiles == 0
    assert [pt.result.solver["name"] for pt in result.points] == ["stand-in"] * 2
    forced = sweep(p, [0.5, 1.5], use_special=False)
    assert forced.compiles == 1 and calls == [0.5, 1.5]
    np.testing.assert_allclose(forced.objectives, result.objectives, rtol=1e-8)  # kRR is optimal
