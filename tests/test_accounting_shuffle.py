"""Amplification by shuffling (mechdesign.accounting): the count model against brute force, both
bounds against the exact shuffled divergence of small instances, the published example of
Feldman, McMillan and Talwar, monotonicity, and the ``amplify`` command's module."""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections import defaultdict

import numpy as np
import pytest

from mechdesign.accounting import amplification, amplify, clone_epsilon, clone_local_level
from mechdesign.accounting.clones import clone_model
from mechdesign.accounting.reading import local_level
from mechdesign.accounting.shuffled_counts import CountModel
from mechdesign.accounting.variation_ratio import VariationRatio, variation_ratio_epsilon
from mechdesign.cli import amplify_command, reports
from mechdesign.cli.output import Output
from mechdesign.core.errors import ProblemError


def krr(k: int, epsilon: float) -> np.ndarray:
    e = math.exp(epsilon)
    matrix = np.full((k, k), 1.0 / (k - 1 + e))
    np.fill_diagonal(matrix, e / (k - 1 + e))
    return matrix


# --- the count model -----------------------------------------------------------------------------

def brute_force_delta(model: CountModel, epsilon: float) -> float:
    """Σ over every count (a, b, m) of (P0 − e^ε P1)_+, the others' counts multinomial."""
    n, (u0, u1, uq), r, s = model.users, model.first, model.clone, model.blanket
    rest = 1 - 2 * r - s

    def others(a, b, m):
        if min(a, b, m) < 0 or a + b + m > n - 1:
            return 0.0
        left = n - 1 - a - b - m
        ways = math.factorial(n - 1) // (math.factorial(a) * math.factorial(b) * math.factorial(m)
                                         * math.factorial(left))
        return ways * r ** (a + b) * s ** m * rest ** left

    total = 0.0
    for a, b in itertools.product(range(n + 1), repeat=2):
        for m in range(n + 1 - a - b):
            p0 = u0 * others(a - 1, b, m) + u1 * others(a, b - 1, m) + uq * others(a, b, m - 1)
            p1 = u1 * others(a - 1, b, m) + u0 * others(a, b - 1, m) + uq * others(a, b, m - 1)
            total += max(0.0, p0 - math.exp(epsilon) * p1)
    return total


@pytest.mark.parametrize("model", [
    CountModel(8, (0.5, 0.2, 0.3), 0.15, 0.3, tail=1e-15),
    CountModel(12, (0.6, 0.1, 0.3), 0.1, 0.2, tail=1e-15),
    CountModel(10, (0.7, 0.3, 0.0), 0.25, 0.0, tail=1e-15),  # the clone model: no Q component
    CountModel(15, (0.4, 0.1, 0.5), 0.05, 0.6, tail=1e-15),
], ids=["a", "b", "clones", "d"])
def test_the_count_model_is_its_brute_force_sum_from_above(model):
    for eps in (0.0, 0.1, 0.5, 1.0):
        exact = brute_force_delta(model, eps)
        assert exact - 1e-15 <= model.delta(eps) <= exact * (1 + 1e-6) + 1e-15  # slack: 1e-9 of a term


# --- soundness: both bounds dominate the exact shuffled divergence -------------------------------

def histogram_law(rows: list[np.ndarray]) -> dict:
    """The law of the histogram of independent draws, one from each row."""
    law = {tuple([0] * len(rows[0])): 1.0}
    for row in rows:
        nxt = defaultdict(float)
        for hist, p in law.items():
            for y, q in enumerate(row):
                if q > 0:
                    h = list(hist)
                    h[y] += 1
                    nxt[tuple(h)] += p * q
        law = nxt
    return law


def exact_shuffled_delta(k: np.ndarray, x0: int, x1: int, others, eps: float) -> float:
    first = histogram_law([k[x0]] + [k[x] for x in others])
    second = histogram_law([k[x1]] + [k[x] for x in others])
    return sum(max(0.0, p - math.exp(eps) * second.get(h, 0.0)) for h, p in first.items())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_both_bounds_dominate_the_exact_shuffled_divergence_of_small_instances(seed):
    """Every neighbouring pair, every multiset of the other users' inputs, several ε: the shuffled
    histogram's exact δ is at most both bounds (random 3 x 4 matrices, and k-ary RR)."""
    rng = np.random.default_rng(seed)
    k = rng.uniform(0.05, 1.0, (3, 4))
    k /= k.sum(axis=1, keepdims=True)
    for matrix in (k, krr(3, 1.5)):
        users = 5
        bounds = [VariationRatio.from_matrix(matrix).model(users, tail=1e-15),
                  clone_model(local_level(matrix), users, tail=1e-15)]
        for eps in (0.0, 0.2, 0.6):
            limit = min(b.delta(eps) for b in bounds)
            worst = max(exact_shuffled_delta(matrix, x0, x1, others, eps)
                        for x0, x1 in itertools.permutations(range(3), 2)
                        for others in itertools.combinations_with_replacement(range(3), users - 1))
            assert worst <= limit + 1e-12


# --- published figures -----------------------------------------------------------------------------

def test_the_clone_bound_reproduces_the_published_example_of_feldman_mcmillan_and_talwar():
    """Feldman, McMillan and Talwar's repository for "Hiding Among the Clones" (FOCS 2021) prints,
    for n = 100000 shuffled 4-DP reports at δ = 1e-6, that the numerical analysis puts ε between
    0.1675385583317841 (lower bound) and 0.172790550755978 (upper bound, 10 bisection steps on
    coarse bins). The exact evaluation of the same reduction lies in that bracket."""
    eps = clone_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978
    assert round(eps, 2) == 0.17


def test_for_randomized_response_the_variation_ratio_parameters_are_wang_et_al_s():
    """Wang et al. (PVLDB 2024) give k-ary RR the parameters p = e^ε, β = (e^ε − 1)/(e^ε + k − 1),
    q = e^ε; they are read off the matrix exactly."""
    for k, eps in ((2, 1.0), (10, 2.0), (100, 0.5)):
        params = VariationRatio.from_matrix(krr(k, eps))
        e = math.exp(eps)
        assert params.p == pytest.approx(e, rel=1e-12)
        assert params.beta == pytest.approx((e - 1) / (e + k - 1), rel=1e-12)
        assert params.q == pytest.approx(e, rel=1e-12)


def test_for_binary_randomized_response_the_variation_ratio_model_is_the_stronger_clone():
    """With β = (p − 1)/(p + 1) the split leaves no Q component and each other user is a clone
    with probability 2/(e^ε + 1) — Feldman, McMillan and Talwar's stronger clone (SODA 2023)."""
    model = VariationRatio.from_matrix(krr(2, 1.0)).model(1000)
    e = math.exp(1.0)
    assert model.first[2] == pytest.approx(0.0, abs=1e-12)
    assert 2 * model.clone == pytest.approx(2 / (e + 1), rel=1e-12)
    assert model.first[0] == pytest.approx(e / (e + 1), rel=1e-12)


# --- properties -------------------------------------------------------------------------------------

def test_the_central_epsilon_does_not_increase_with_the_number_of_users():
    for matrix in (krr(2, 1.0), krr(10, 2.0)):
        values = [amplify(matrix, users=n, delta=1e-6) for n in (10, 100, 1_000, 10_000, 100_000)]
        assert all(b <= a + 1e-9 for a, b in itertools.pairwise(values))
        assert values[-1] < values[0]
    clones = [clone_epsilon(3.0, n, 1e-6) for n in (10, 100, 1_000, 10_000, 100_000)]
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(clones))


def test_local_epsilon_zero_amplifies_to_zero():
    uniform = np.full((4, 3), 1 / 3)
    assert amplify(uniform, users=1000, delta=1e-6) == 0.0
    assert clone_epsilon(0.0, 1000, 1e-6) == 0.0
    assert variation_ratio_epsilon(uniform, 1000, 1e-6) == 0.0


def test_the_clone_bound_does_not_decrease_with_the_local_level():
    values = [clone_epsilon(e, 10_000, 1e-6) for e in np.linspace(0.0, 6.0, 13)]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(values))


def test_the_result_is_the_smaller_bound_and_never_above_the_local_level():
    for matrix in (krr(2, 0.5), krr(50, 3.0)):
        a = amplification(matrix, users=5_000, delta=1e-7)
        assert a.epsilon == min(a.clones, a.variation_ratio)
        assert a.bound == ("clones" if a.clones < a.variation_ratio else "variation-ratio")
        assert a.epsilon <= a.local_epsilon + 1e-12
    many = amplification(krr(100, 1.0), users=100_000, delta=1e-6)
    assert many.variation_ratio < many.clones / 5  # many outputs hide far better than ε0 alone says


def test_the_largest_local_level_meets_the_target_and_no_larger_one_does():
    local = clone_local_level(0.5, 10_000, 1e-6)
    assert clone_epsilon(local, 10_000, 1e-6) <= 0.5
    assert clone_epsilon(local + 1e-4, 10_000, 1e-6) > 0.5


def test_edge_cases_one_user_no_delta_and_outputs_that_rule_an_input_out():
    alone = amplify(krr(3, 1.0), users=1, delta=1e-6)  # one user: its own (ε, δ), just below ε0
    assert 1.0 - 1e-5 < alone <= 1.0
    assert amplify(krr(3, 1.0), users=1000, delta=0.0) == pytest.approx(1.0, rel=1e-9)
    revealing = amplification(np.array([[0.5, 0.5], [0.0, 1.0]]), users=1000, delta=1e-6)
    assert revealing.clones is None and revealing.epsilon == math.inf
    assert amplify(np.array([[0.5, 0.5], [0.0, 1.0]]), users=1000, delta=0.6) == 0.0  # δ >= β


def test_bad_input_is_a_problem_error():
    with pytest.raises(ProblemError):
        amplify(np.array([[0.5, 0.4], [0.5, 0.5]]), users=10, delta=1e-6)
    with pytest.raises(ProblemError):
        amplify(krr(2, 1.0), users=0, delta=1e-6)
    with pytest.raises(ProblemError):
        amplify(krr(2, 1.0), users=10, delta=2.0)


# --- the amplify command (its module; the parser wiring is the command line's) ----------------------

def run_amplify(argv, capsys):
    parser = argparse.ArgumentParser()
    amplify_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["amplify", *map(str, argv)])
    code = args.run(args, Output(terminal=False))
    return code, capsys.readouterr().out


def test_amplify_reads_a_mechanism_file_and_prints_both_bounds_and_the_smaller(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"matrix": krr(10, 2.0).tolist()}))
    code, out = run_amplify([path, "--users", "1e5", "--delta", "1e-6"], capsys)
    assert code == 0
    a = amplification(krr(10, 2.0), 100_000, 1e-6)
    assert repr(a.clones) in out and repr(a.variation_ratio) in out and "variation-ratio" in out
    code, out = run_amplify([path, "--users", "100000", "--delta", "1e-6", "--json"], capsys)
    data = json.loads(out)
    assert data["mechanisms"]["default"]["epsilon"] == a.epsilon
    assert data["mechanisms"]["default"]["bounds"] == {"clones": a.clones, "variation_ratio": a.variation_ratio}


def test_amplify_reads_a_solve_result_per_context(tmp_path, capsys):
    result = {"mechanisms": {"a": {"inputs": ["x", "y"], "outputs": ["0", "1"], "matrix": krr(2, 1.0).tolist()},
                             "b": {"matrix": krr(3, 0.5).tolist()}}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(result))
    code, out = run_amplify([path, "--users", "1000", "--delta", "1e-6", "--json"], capsys)
    assert code == 0
    assert set(json.loads(out)["mechanisms"]) == {"a", "b"}


def test_amplify_refuses_a_matrix_that_is_not_stochastic_naming_the_file_and_key(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"matrix": [[0.7, 0.2], [0.5, 0.5]]}))
    with pytest.raises(ProblemError) as info:
        run_amplify([path, "--users", "10", "--delta", "1e-6"], capsys)
    assert str(path) in str(info.value) and "matrix" in str(info.value)


def test_reports_guarantee_gives_the_t_fold_epsilon_beside_basic_composition():
    g = reports.reports_guarantee(krr(2, math.log(3)), 10, 1e-6)
    assert set(g) >= {"times", "delta", "epsilon", "local_epsilon", "basic_composition"}
    assert g["epsilon"] <= g["basic_composition"] + 1e-12
    assert g["basic_composition"] == pytest.approx(10 * math.log(3))
