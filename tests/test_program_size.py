"""The general convex route is refused, with its reason, for a program that cannot fit in memory:
counted from the notions before anything is built, and from the built constraints before a
solver sees them; a special solver that raises on a large problem then ends in a certified
data-independent design with status "failed" and the special solvers' records, never in a
compile the operating system kills."""

import numpy as np
import pytest

from mechdesign import Domain, Problem
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design import problem as problem_module
from mechdesign.design import program_size
from mechdesign.design.program_size import (
    BYTES_PER_CONE_ROW,
    BYTES_PER_ROW,
    ProgramTooLarge,
    built_rows,
    check_rows,
    declared_rows,
)
from mechdesign.design.sweep import sweep
from mechdesign.privacy import (
    LDP,
    DivergenceDP,
    InformationPrivacy,
    MetricPrivacy,
    MutualInformation,
)
from mechdesign.privacy.ldp import ApproxLDP
from mechdesign.solvers.registry import SpecialSolver


def grid(side: int, epsilon: float) -> Problem:
    dom = Domain.from_grid(side, side)
    metric = Metric("euclidean")
    n = len(dom)
    return Problem(inputs=dom, privacy=[MetricPrivacy(epsilon, metric, dom)],
                   objective=ExpectedLoss(metric.distances(dom), {"default": np.full(n, 1.0 / n)}))


def uniform_value(problem: Problem) -> float:
    n, m = len(problem.inputs), len(problem.outputs)
    return float(problem.objective.value({"default": np.full((n, m), 1.0 / m)}))


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])  # 1 link a pair at 0.1; several at 8
def test_the_metric_notion_counts_the_rows_its_compile_writes(epsilon):
    problem = grid(5, epsilon)
    n = len(problem.inputs)
    rows = built_rows(problem.compile().problem.constraints) - n  # less the n row sums
    assert declared_rows(problem) == rows
    assert rows % n == 0 and rows // n >= len(problem.privacy[0].i)  # per output, a row per link


@pytest.mark.parametrize("epsilon", [0.5, 8.0])
def test_approximate_ldp_counts_at_least_the_rows_its_constraints_have(epsilon):
    # cvxpy's pos() adds its epigraph's rows when it canonicalises: both counts include them
    n = 6
    problem = Problem(inputs=Domain.from_size(n), privacy=[ApproxLDP(epsilon, 0.01)],
                      objective=ExpectedLoss(1 - np.eye(n)))
    built = built_rows(problem.compile().problem.constraints) - n
    assert built <= declared_rows(problem) <= built + n * (n - 1) * n


def test_a_program_that_cannot_fit_is_refused_before_its_constraints_are_built(monkeypatch):
    problem = grid(6, 1.0)
    rows = declared_rows(problem)
    built = []
    real = MetricPrivacy.constraints
    monkeypatch.setattr(MetricPrivacy, "constraints", lambda self, *a: built.append(1) or real(self, *a))
    monkeypatch.setattr(program_size, "machine_memory", lambda: rows * BYTES_PER_ROW - 1)
    result = problem.solve(solver="highs")
    assert not built
    assert result.status == "failed"
    assert f"{rows:,} constraint rows" in result.message
    assert result.holds and result.solver["fallback"] == "data-independent design"
    assert result.objective == pytest.approx(uniform_value(problem), rel=1e-12)
    whole = rows + len(problem.inputs)  # and the row sums, counted once built
    monkeypatch.setattr(program_size, "machine_memory", lambda: whole * BYTES_PER_ROW)
    assert problem.solve(solver="highs").status == "optimal"


def test_rows_a_notion_does_not_declare_are_counted_once_built(monkeypatch):
    n = 5
    problem = Problem(inputs=Domain.from_size(n), privacy=[LDP(1.0)], objective=ExpectedLoss(1 - np.eye(n)))
    assert declared_rows(problem) == 0
    rows = built_rows(problem.compile().problem.constraints)
    monkeypatch.setattr(program_size, "machine_memory", lambda: rows * BYTES_PER_ROW - 1)
    with pytest.raises(ProgramTooLarge) as err:
        problem.compile()
    assert err.value.rows == rows
    result = problem.solve(solver="highs")
    assert result.status == "failed" and result.holds and f"{rows:,} constraint rows" in result.message


def test_a_large_problem_a_special_solver_raises_on_is_not_handed_to_the_general_compile(monkeypatch):
    # a 32 × 32 grid: at ε = 1 its program has 1.1·10^9 rows (1.7 TB), beyond any machine this runs on
    problem = grid(32, 1.0)
    assert declared_rows(problem) * BYTES_PER_ROW > 2**40

    def raises(p, limits=None):
        raise ValueError("out of order")

    monkeypatch.setattr(problem_module, "special_solvers", lambda: (SpecialSolver("broken", lambda p: None, raises),))
    result = problem.solve()
    assert result.status == "failed"
    assert result.solver["special_solvers"] == [{"solver": "broken", "applies": True,
                                                  "outcome": "raised ValueError: out of order"}]
    assert "general convex route would write" in result.message
    assert result.holds and result.objective == pytest.approx(uniform_value(problem), rel=1e-12)


def test_a_sweep_point_whose_program_cannot_fit_fails_and_the_sweep_goes_on(monkeypatch):
    problem = grid(4, 1.0)
    small = declared_rows(grid(4, 0.25))
    assert declared_rows(grid(4, 8.0)) > small  # more links a pair at the larger ε
    monkeypatch.setattr(program_size, "machine_memory", lambda: (small + 16) * BYTES_PER_ROW)  # + row sums
    out = sweep(problem, [0.25, 8.0], use_special=False)
    first, second = out.points
    assert first.result.status == "optimal"
    assert second.result.status == "failed" and second.result.holds
    assert "constraint rows" in second.result.message


def _conic(notion, n: int = 7) -> Problem:
    loss = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(float)
    return Problem(inputs=Domain.from_size(n), privacy=[notion], objective=ExpectedLoss(loss))


@pytest.mark.parametrize("notion,in_atoms", [
    (DivergenceDP(0.5, "kl"), True), (DivergenceDP(0.5, "reverse-kl"), True), (InformationPrivacy(0.5), True),
    (MutualInformation(0.2), True),
    (DivergenceDP(0.5, "chi2"), False), (DivergenceDP(0.5, "hellinger"), False)])  # (written as cones)
def test_a_conic_program_is_counted_as_cvxpy_canonicalises_it(notion, in_atoms):
    # a relative entropy over every pair's rows is one cvxpy constraint but a cone of three rows
    # per entry: the count must follow the canonical program (cvxpy's own, for Clarabel), not
    # the constraints' sizes, which were 23 times too few for KL-DP on 8 values
    import cvxpy as cp

    program = _conic(notion).compile().problem
    canonical = program.get_problem_data(cp.CLARABEL)[0]["A"].shape[0]
    counted = built_rows(program.constraints, program.objective.args[0])
    assert counted <= canonical <= 1.4 * counted
    if in_atoms:  # the constraints' own sizes miss most of it
        assert counted > 2 * sum(int(c.size) for c in program.constraints)


def test_a_conic_program_that_cannot_fit_is_refused_at_the_conic_rate(monkeypatch):
    problem = _conic(DivergenceDP(0.5, "kl"))
    program = problem.compile().problem
    rows = built_rows(program.constraints, program.objective.args[0])
    monkeypatch.setattr(program_size, "machine_memory", lambda: rows * BYTES_PER_CONE_ROW - 1)
    check_rows(rows, rows * BYTES_PER_CONE_ROW - 1)  # the LP rate lets it through, the conic one not
    with pytest.raises(ProgramTooLarge):
        check_rows(rows, rows * BYTES_PER_CONE_ROW - 1, conic=True)
    result = problem.solve()
    assert result.status == "failed" and result.holds
    assert f"{rows:,} constraint rows" in result.message and f"{BYTES_PER_CONE_ROW:,} bytes a row" in result.message
    monkeypatch.setattr(program_size, "machine_memory", lambda: rows * BYTES_PER_CONE_ROW)
    assert problem.solve().status == "optimal"
