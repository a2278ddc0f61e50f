"""A bound the solver reports but nothing proves: "optimal" may rest on it only when it lies
below the certified value, and the result says the gap is not proven."""

from __future__ import annotations

import numpy as np

from mechdesign import Domain, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP
from mechdesign.solvers.outcome import SolverOutcome


def _problem():
    loss = 1.0 - np.eye(4)  # error probability, uniform prior
    return Problem(inputs=Domain.from_size(4), privacy=[LDP(1.0)],
                   objective=ExpectedLoss(loss, {"default": np.full(4, 0.25)}))


def _finish(bound_from_value):
    problem = _problem()
    raw = {"default": np.full((4, 4), 0.25)}  # value 3/4, private at every ε
    value = 0.75
    return problem.finish(raw, SolverOutcome("optimal", {"name": "test"}, bound=bound_from_value(value)))


def test_an_unproven_bound_above_the_certified_value_is_not_a_bound():
    result = _finish(lambda v: v * 1.01)
    assert result.status == "failed"
    assert np.isnan(result.solver["gap"]) and "not a bound" in result.solver["bound_kind"]


def test_an_unproven_bound_within_the_tolerance_is_optimal_and_says_so():
    result = _finish(lambda v: v * (1 - 1e-8))
    assert result.status == "optimal" and result.solver["bound_proven"] is False
    assert "could not be proven" in result.message


def test_a_proven_bound_within_the_tolerance_needs_no_remark():
    problem = _problem()
    result = problem.finish({"default": np.full((4, 4), 0.25)},
                            SolverOutcome("optimal", {"name": "test"}, bound=0.75, bound_proven=True))
    assert result.status == "optimal" and result.message == ""


def test_a_program_that_leaves_pairs_out_says_it_is_a_relaxation():
    from mechdesign import Metric
    from mechdesign.privacy import MetricPrivacy

    dom = Domain.from_points([[0.0], [1.0], [800.0]])  # ε·d = 800 and 799: beyond any float ratio
    notion = MetricPrivacy(1.0, Metric("euclidean"), dom)
    loss = np.abs(np.subtract.outer([0.0, 1.0, 800.0], [0.0, 1.0, 800.0]))
    result = Problem(inputs=dom, privacy=[notion], solver="highs",
                     objective=ExpectedLoss(loss, {"default": np.full(3, 1 / 3)})).solve()
    assert result.holds and result.solver["relaxed"] is True
    near = MetricPrivacy(1.0, Metric("euclidean"), Domain.from_points([[0.0], [1.0], [2.0]]))
    assert near.relaxed is False
