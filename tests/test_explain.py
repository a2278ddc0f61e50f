"""``mechdesign solve FILE --explain``: every special solver in order, whether it applied and
why not, and the route that solved the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mechdesign import load_problem
from mechdesign.solvers import special_solvers

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


def test_a_distp_problem_goes_to_the_general_route_and_every_solver_says_why_not(run_cli):
    code, out, _ = run_cli("solve", PROBLEMS / "dinf-distp.toml", "--explain")
    assert code == 0
    assert "Solver choice" in out and out.count("does not apply") == len(special_solvers())
    code, out, _ = run_cli("solve", PROBLEMS / "dinf-distp.toml", "--json")
    record = json.loads(out)["solver"]["special_solvers"]
    assert all(r["applies"] is False for r in record)
    assert "MetricPrivacy" in record[-1]["outcome"]


def test_a_small_grid_goes_to_the_whole_pair_lp_and_the_solvers_before_say_why_not(run_cli):
    code, out, _ = run_cli("solve", PROBLEMS / "geo-grid.toml", "--json")
    record = json.loads(out)["solver"]["special_solvers"]
    assert [r["outcome"] for r in record][-1] == "solved" and record[-1]["solver"] == "HiGHS (every pair row)"
    assert all(r["applies"] is False for r in record[:-1])
    assert "fewer than 30 inputs" in record[-2]["outcome"]


def test_ldp_is_solved_by_column_generation_and_the_rest_are_not_tried(run_cli):
    code, out, _ = run_cli("solve", PROBLEMS / "ldp-skewed-prior.toml", "--explain", "--json")
    assert code == 0
    record = json.loads(out)["solver"]["special_solvers"]
    names = [r["solver"] for r in record]
    assert names == [s.name for s in special_solvers()]
    solved = names.index("HiGHS column generation + interior point")
    assert record[solved]["outcome"] == "solved"
    assert all(r["applies"] is False for r in record[:solved])
    assert "target" in record[0]["outcome"] and "max-off-diagonal" in record[1]["outcome"]
    assert all(r["outcome"].startswith("not tried") for r in record[solved + 1:])


@pytest.mark.parametrize("path", sorted(PROBLEMS.glob("*.toml")), ids=lambda p: p.stem)
def test_applies_answers_every_shipped_problem_with_none_or_a_reason(path):
    problem = load_problem(path)
    for solver in special_solvers():
        reason = solver.applies(problem)
        assert reason is None or (isinstance(reason, str) and reason), solver.name


def test_the_runs_after_the_first_are_explained_too():
    # a special solver's design followed by the general route, and that route's re-solves: each
    # run on its own line after the table
    from types import SimpleNamespace

    from mechdesign.cli.output import Output
    from mechdesign.cli.render import print_explanation

    lines = []
    out = Output(terminal=False)
    out.table = lambda *args, **kwargs: None
    out.line = lines.append
    result = SimpleNamespace(status="optimal", solver={
        "name": "HIGHS", "special_solvers": [{"solver": "lazy", "applies": True, "outcome": "solved"}],
        "resolves": [{"route": "general convex route", "status": "optimal", "objective": 0.25, "bound": 0.2499999},
                     {"scale": 0.125, "options": {"solver": "ipm"}, "status": "failed", "objective": 0.3}]})
    print_explanation(result, out)
    assert lines == ["  then: general convex route: optimal, objective 0.25, bound 0.2499999",
                     "  then: solved again in units of 0.125 (solver=ipm): failed, objective 0.3"]
