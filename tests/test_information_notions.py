"""Designing and auditing under information notions: information (capacity), mutual
information, min-entropy and g-vulnerability (mechdesign.privacy.information)."""

import json
from pathlib import Path

import numpy as np
import pytest

from mechdesign import problem_from_dict
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.leakage import (
    min_entropy_capacity,
    mutual_information,
    posterior_g_vulnerability,
)
from mechdesign.mechanisms.channels import krr_at_capacity
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.privacy.audit import audit
from mechdesign.privacy.information import (
    GVulnerability,
    InformationPrivacy,
    MinEntropy,
    MutualInformation,
)

ROOT = Path(__file__).resolve().parents[1]


def problem(privacy, objective, inputs=None, distributions=None, metric=None, mechanism=None):
    data = {"name": "t", "inputs": inputs or {"size": 5}, "privacy": privacy, "objective": objective}
    if distributions:
        data["distributions"] = distributions
    if metric:
        data["metric"] = {"kind": metric}
    if mechanism:
        data["mechanism"] = mechanism
    return problem_from_dict(data)


@pytest.mark.parametrize("bits", [0.1, 0.5, 1.2])
def test_design_under_information_has_audited_capacity_at_most_the_bound(bits):
    prob = problem([{"notion": "information", "bits": bits}],
                   {"kind": "expected-loss", "prior": "p", "loss": "metric"},
                   distributions={"p": [0.4, 0.25, 0.15, 0.12, 0.08]}, metric="absolute")
    res = prob.solve()
    assert res.status == "optimal"
    cap = shannon_capacity(res.mechanism.matrix, tol=1e-11)
    assert cap.upper <= bits * (1 + 1e-6)
    line = res.certificate[0]
    assert line.holds and line.detail["lower_bits"] <= line.achieved["bits"] <= bits + 1e-9
    # the optimum is no worse than k-ary RR at the same capacity
    base = krr_at_capacity(5, bits).matrix
    assert res.objective <= prob.objective.value({"default": base}) + 1e-7


def test_information_design_under_uniform_prior_error_is_krr_at_that_capacity():
    # uniform prior + error probability is symmetric, capacity convex and permutation invariant:
    # averaging an optimum over permutations gives kRR, so kRR at capacity c is optimal
    bits = 0.7
    prob = problem([{"notion": "information", "bits": bits}],
                   {"kind": "error-probability", "prior": "uniform"})
    res = prob.solve()
    base = krr_at_capacity(5, bits).matrix
    assert res.objective == pytest.approx(prob.objective.value({"default": base}), abs=1e-6)


def test_min_entropy_design_reaches_the_closed_form_error():
    # Σ_y max_x K <= 2^c and the uniform-prior success is (1/k) Σ_x K[x, x] <= 2^c / k
    k, bits = 5, 1.0
    prob = problem([{"notion": "min-entropy", "bits": bits}],
                   {"kind": "error-probability", "prior": "uniform"})
    res = prob.solve()
    assert res.status == "optimal" and prob.linear
    assert res.objective == pytest.approx(1 - 2 ** bits / k, abs=1e-8)
    assert min_entropy_capacity(res.mechanism.matrix) <= bits + 1e-9


def test_g_vulnerability_with_identity_gain_bounds_the_bayes_success():
    # posterior Bayes vulnerability under the uniform prior >= success probability, so the
    # error probability is at least 1 − v, reached
    v = 0.45
    prob = problem([{"notion": "g-vulnerability", "gain": "identity", "bound": v}],
                   {"kind": "error-probability", "prior": "uniform"})
    res = prob.solve()
    assert res.status == "optimal"
    assert res.objective == pytest.approx(1 - v, abs=1e-8)
    assert posterior_g_vulnerability("uniform", res.mechanism.matrix, "identity") <= v + 1e-9


def test_g_leakage_in_bits_equals_min_entropy_leakage_bound_under_uniform_prior():
    bits = 0.8
    a = problem([{"notion": "g-vulnerability", "bits": bits}],
                {"kind": "error-probability", "prior": "uniform"}).solve()
    b = problem([{"notion": "min-entropy", "bits": bits}],
                {"kind": "error-probability", "prior": "uniform"}).solve()
    assert a.objective == pytest.approx(b.objective, abs=1e-8)
    assert a.certificate[0].achieved["leakage_bits"] <= bits + 1e-9


def test_g_vulnerability_with_a_gain_matrix_audits_by_direct_computation():
    rng = np.random.default_rng(0)
    gain = (np.abs(np.subtract.outer(np.arange(4), np.arange(4))) <= 1).astype(float)
    pi = np.array([0.4, 0.3, 0.2, 0.1])
    notion = GVulnerability(gain, {"default": pi}, bound=0.9)
    K = rng.dirichlet(np.ones(4), size=4)
    a = audit(K, notion)
    direct = sum(max((pi * gain[w] * K[:, y]).sum() for w in range(4)) for y in range(4))
    assert a.achieved["vulnerability"] == pytest.approx(direct)
    assert a.holds == (direct <= 0.9 + 1e-9)


def test_mutual_information_design_under_skewed_prior():
    prior = [0.5, 0.2, 0.15, 0.1, 0.05]
    bits = 0.3
    prob = problem([{"notion": "mutual-information", "bits": bits, "prior": "skewed"}],
                   {"kind": "error-probability", "prior": "skewed"},
                   distributions={"skewed": prior})
    res = prob.solve()
    assert res.status == "optimal"
    mi = mutual_information(prior, res.mechanism.matrix)
    assert mi <= bits + 1e-9 and mi >= bits - 1e-5  # the bound binds
    # identity leaks H(prior) > 0.3 bits, so the constraint costs accuracy, but less than kRR
    from mechdesign.mechanisms.channels import krr_at_mutual_information

    base = krr_at_mutual_information(5, np.array(prior), bits).matrix
    assert res.objective <= prob.objective.value({"default": base}) + 1e-7


def test_information_notions_apply_to_each_context():
    prob = problem([{"notion": "information", "bits": 0.4},
                    {"notion": "mutual-information", "bits": 0.2}],
                   {"kind": "expected-loss", "loss": "metric"},
                   distributions={"a": [0.6, 0.1, 0.1, 0.1, 0.1], "b": [0.1, 0.1, 0.1, 0.1, 0.6]},
                   metric="absolute", mechanism={"contexts": ["a", "b"]})
    res = prob.solve()
    assert res.status == "optimal"
    for key, lam in (("a", [0.6, 0.1, 0.1, 0.1, 0.1]), ("b", [0.1, 0.1, 0.1, 0.1, 0.6])):
        K = res.mechanisms[key].matrix
        assert shannon_capacity(K).upper <= 0.4 + 1e-9
        assert mutual_information(lam, K) <= 0.2 + 1e-9  # each under its own distribution


@pytest.mark.parametrize("notion", [InformationPrivacy(0.3),
                                    MutualInformation(0.3, {"default": np.full(4, 0.25)}),
                                    MinEntropy(0.3),
                                    GVulnerability("identity", {"default": np.full(4, 0.25)}, bits=0.3)])
def test_repair_mixes_a_leaky_matrix_into_compliance(notion):
    K = krr(4, 3.0).matrix
    assert not notion.audit({"default": K}).holds
    fixed = notion.repair({"default": K})["default"]
    assert np.allclose(fixed.sum(axis=1), 1.0)
    assert notion.audit({"default": fixed}).holds
    assert not np.allclose(fixed, np.full((4, 4), 0.25))  # not the trivial channel


def test_cli_baseline_krr_is_calibrated_to_the_capacity_bound(run_cli):
    code, out, _ = run_cli("solve", ROOT / "problems" / "information-capacity.toml", "--baselines", "krr",
                           "--json")
    assert code == 0
    data = json.loads(out)
    base = data["baselines"][0]
    bits = base["certificate"][0]["achieved"]["bits"]
    assert base["certificate"][0]["holds"] and 0.5 - 1e-6 <= bits <= 0.5 + 1e-9
    assert data["objective"]["value"] <= base["objective"]


BAD = """
name = "t"
[inputs]
size = 3
[distributions]
p = {prior}
[[privacy]]
{entry}
[objective]
kind = "error-probability"
"""


@pytest.mark.parametrize("prior,entry,message", [
    ("[0.2, 0.3, 0.5]", 'notion = "information"\nbits = -0.5', "bits"),
    ("[0.2, 0.3, 0.5]", 'notion = "information"', "missing 'bits'"),
    ("[0.2, 0.3, 0.5]", 'notion = "mutual-information"\nbits = 0.5\nprior = [0.5, 0.6, 0.1]', "sum to 1"),
    ("[0.2, 0.3, 0.6]", 'notion = "mutual-information"\nbits = 0.5\nprior = "p"', "sum to 1"),
    ("[0.2, 0.3, 0.5]", 'notion = "mutual-information"\nbits = 0.5\nprior = "nope"', "unknown distribution"),
    ("[0.2, 0.3, 0.5]", 'notion = "g-vulnerability"\nbound = 0.5\nbits = 1.0', "exactly one"),
    ("[0.2, 0.3, 0.5]", 'notion = "g-vulnerability"\nbound = 0.1', "below the prior vulnerability"),
    ("[0.2, 0.3, 0.5]", 'notion = "g-vulnerability"\nbound = 0.5\ngain = [[1.0, 0.0]]', "one column per input"),
    ("[0.2, 0.3, 0.5]", 'notion = "min-entropy"\nbits = 1\nepsilon = 2', "unknown key"),
])
def test_bad_information_input_exits_2_with_a_clear_message(run_cli, tmp_path, prior, entry, message):
    path = tmp_path / "bad.toml"
    path.write_text(BAD.format(prior=prior, entry=entry))
    code, _out, err = run_cli("solve", path)
    assert code == 2
    assert message in err and "bad.toml" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("notion", ["min-entropy", "g-vulnerability"])
def test_sweeping_bits_compiles_once_and_follows_the_closed_form(notion):
    from mechdesign.design.sweep import sweep

    prob = problem([{"notion": notion, "bits": 0.5}], {"kind": "error-probability"},
                   inputs={"size": 4})
    result = sweep(prob, [0.2, 0.6, 1.0])
    for point in result.points:
        assert point.result.status == "optimal" and point.result.holds
        assert point.result.objective == pytest.approx(1 - 2 ** point.epsilon / 4, abs=1e-8)
