"""The ``shuffle`` privacy notion: a central (ε, δ) target after shuffling n users' reports,
designed as ε0-LDP at the largest ε0 whose clone bound meets it."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import mechdesign
from mechdesign.accounting import amplify, clone_epsilon
from mechdesign.core.errors import ProblemError
from mechdesign.design.spec import problem_from_dict
from mechdesign.privacy import Shuffle
from mechdesign.privacy.table_parsers import NOTION_PARSERS

ROOT = Path(__file__).resolve().parent.parent


def krr(k: int, epsilon: float) -> np.ndarray:
    e = math.exp(epsilon)
    matrix = np.full((k, k), 1.0 / (k - 1 + e))
    np.fill_diagonal(matrix, e / (k - 1 + e))
    return matrix


def problem(**privacy):
    return problem_from_dict({"name": "s", "inputs": {"size": 4},
                              "privacy": [{"notion": "shuffle", **privacy}],
                              "objective": {"kind": "error-probability", "prior": "uniform"}})


def test_the_notion_is_registered_under_its_problem_file_name():
    assert "shuffle" in NOTION_PARSERS
    notion = problem(users=1000, epsilon=1.0, delta=1e-6).privacy[0]
    assert isinstance(notion, Shuffle)
    assert (notion.users, notion.epsilon, notion.delta) == (1000, 1.0, 1e-6)


def test_the_local_level_is_the_largest_whose_clone_bound_meets_the_target():
    notion = Shuffle(10_000, 0.5, 1e-6)
    assert notion.local_epsilon > 0.5  # shuffling lets each report be far less private
    assert clone_epsilon(notion.local_epsilon, 10_000, 1e-6) <= 0.5
    assert clone_epsilon(notion.local_epsilon + 1e-4, 10_000, 1e-6) > 0.5


def test_the_bound_bisected_over_is_monotone_in_the_local_level():
    levels = np.linspace(0.0, 8.0, 17)
    central = [clone_epsilon(e, 2_000, 1e-7) for e in levels]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(central))
    assert central[0] == 0.0


@pytest.mark.parametrize("table,key", [
    ({"epsilon": 1.0, "delta": 1e-6}, "users"),
    ({"users": 100, "epsilon": 1.0}, "delta"),
    ({"users": 100, "epsilon": 1.0, "delta": 0.0}, "delta"),
    ({"users": 0, "epsilon": 1.0, "delta": 1e-6}, "users"),
    ({"users": 2.5, "epsilon": 1.0, "delta": 1e-6}, "users"),
    ({"users": 100, "epsilon": -1.0, "delta": 1e-6}, "epsilon"),
    ({"users": 100, "epsilon": 1.0, "delta": 1e-6, "local": 2.0}, "local"),
])
def test_a_bad_table_is_a_problem_error_naming_the_key(table, key):
    with pytest.raises(ProblemError) as info:
        problem(**table)
    assert key in str(info.value)


def test_the_shipped_problem_solves_to_k_ary_rr_at_the_local_level_with_both_levels_certified():
    p = mechdesign.load_problem(ROOT / "problems" / "shuffle-krr.toml")
    notion = p.privacy[0]
    result = p.solve()
    assert result.status == "optimal" and result.holds
    line = result.certificate[0].to_dict()
    assert line["requested"]["epsilon"] == 0.5 and line["requested"]["users"] == 10_000
    assert line["requested"]["local_epsilon"] == pytest.approx(notion.local_epsilon)
    assert line["achieved"]["local_epsilon"] <= notion.local_epsilon + 1e-9
    assert line["achieved"]["epsilon"] <= 0.5
    assert line["detail"]["variation_ratio"] <= line["detail"]["clones"]
    k = 10  # error probability under a uniform prior: k-ary RR at ε0 is optimal
    assert result.objective == pytest.approx((k - 1) / (math.exp(notion.local_epsilon) + k - 1), rel=1e-7)
    assert line["achieved"]["epsilon"] == pytest.approx(amplify(result.mechanism.matrix, 10_000, 1e-6), rel=1e-9)


def test_a_matrix_above_the_local_level_fails_the_audit():
    notion = Shuffle(1000, 0.3, 1e-6)
    assert notion.audit({"default": krr(4, notion.local_epsilon)}).holds
    audit = notion.audit({"default": krr(4, notion.local_epsilon + 0.5)})
    assert not audit.holds
    assert audit.achieved["local_epsilon"] == pytest.approx(notion.local_epsilon + 0.5)


def test_a_sweep_moves_the_central_epsilon_and_the_local_level_follows():
    notion = Shuffle(5000, 0.2, 1e-6)
    moved = notion.with_epsilon(0.4)
    assert moved.epsilon == 0.4 and moved.local_epsilon > notion.local_epsilon
    assert notion.epsilon == 0.2  # the notion it was made from is left as it was
    assert clone_epsilon(moved.local_epsilon, 5000, 1e-6) <= 0.4
