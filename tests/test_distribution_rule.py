"""One rule for reading a distribution, whether it comes from a problem file or from Python:
the sum may miss 1 by at most 1e-9 per entry."""

from __future__ import annotations

import numpy as np
import pytest

from mechdesign import LDP, ErrorProbability, Problem, ProblemError, problem_from_dict


def _both(prior: list[float]):
    spec = {"name": "rule", "inputs": {"size": 4}, "distributions": {"prior": prior},
            "privacy": [{"notion": "ldp", "epsilon": 1.0}],
            "objective": {"kind": "error-probability", "prior": "prior"}}
    yield lambda: problem_from_dict(spec)
    yield lambda: Problem(inputs=4, objective=ErrorProbability(prior=prior), privacy=[LDP(1.0)])


def test_a_sum_within_the_tolerance_is_read_the_same_way_everywhere():
    close = [0.25, 0.25, 0.25, 0.25 + 3e-9]  # 3e-9 off, within 4 × 1e-9
    for build in _both(close):
        build()


def test_a_sum_beyond_the_tolerance_is_refused_the_same_way_everywhere():
    far = [0.25, 0.25, 0.25, 0.25 + 5e-9]  # 5e-9 off, beyond 4 × 1e-9
    for build in _both(far):
        with pytest.raises(ProblemError, match="sum"):
            build()
    assert np.isclose(sum(far), 1.0)
