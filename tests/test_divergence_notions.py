"""Divergence DP / XDP / DistP / XDistP (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 9-12, Def. 15): optima against closed
forms and against the core's LP notions, relaxation order, audits on returned matrices, bad input."""

from math import exp, log, sqrt

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import entropy

import mechdesign
from mechdesign.core.divergences import DIVERGENCES, divergence
from mechdesign.core.domain import Domain
from mechdesign.core.metrics import Metric
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.design.problem import Problem
from mechdesign.privacy import (
    LDP,
    DistP,
    DivergenceDistP,
    DivergenceDP,
    DivergenceXDP,
    MetricPrivacy,
    Side,
    ldp,
)
from tests.conftest import PROBLEMS

# symmetric binary channel [[1−a, a], [a, 1−a]]: each divergence between its rows, by hand
BINARY = {
    "max": lambda a: log((1 - a) / a),
    "kl": lambda a: (1 - 2 * a) * log((1 - a) / a),
    "reverse-kl": lambda a: (1 - 2 * a) * log((1 - a) / a),
    "tv": lambda a: 1 - 2 * a,
    "chi2": lambda a: (1 - 2 * a) ** 2 / (a * (1 - a)),
    "hellinger": lambda a: 1 - 2 * sqrt(a * (1 - a)),
}


def _binary_problem(name, eps, delta=0.0):
    data = {
        "name": f"binary-{name}",
        "inputs": {"labels": ["no", "yes"]},
        "privacy": [{"notion": "divergence-dp", "divergence": name, "epsilon": eps}],
        "objective": {"kind": "error-probability", "prior": "uniform"},
    }
    if delta:
        data["privacy"][0]["delta"] = delta
    return mechdesign.problem_from_dict(data)


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_binary_divergence_dp_optimum_is_the_symmetric_channel_at_the_bound(name, eps):
    """Uniform prior, error probability: by symmetry the optimum is [[1−a, a], [a, 1−a]] with
    the smallest a whose row divergence is ε (each divergence decreases in a on (0, ½))."""
    a = brentq(lambda t: BINARY[name](t) - eps, 1e-12, 0.5 - 1e-15, xtol=1e-15)
    result = _binary_problem(name, eps).solve()
    assert result.status == "optimal", result.message
    assert result.objective == pytest.approx(a, abs=2e-7)
    assert result.certificate[0].holds
    assert result.certificate[0].achieved["epsilon"] <= eps + 1e-9
    assert result.solver["name"] == ("HIGHS" if DIVERGENCES[name].linear else "CLARABEL")


def test_max_divergence_dp_is_warner_randomized_response():
    eps = 0.7
    result = _binary_problem("max", eps).solve()
    assert result.objective == pytest.approx(1 / (1 + exp(eps)), abs=1e-9)


def _line(n=5):
    dom = Domain.from_size(n)
    metric = Metric("absolute")
    return dom, metric, metric.distances(dom)


def _prior(n, seed):
    return np.random.default_rng(seed).dirichlet(np.ones(n))


@pytest.mark.parametrize("seed", range(3))
def test_max_divergence_dp_over_all_pairs_equals_ldp(seed):
    """(ε, D∞)-DP over all pairs is ε-LDP (Prop. 1 with δ = 0): same optimum as the core's LDP."""
    dom, _, d = _line(5)
    obj = ExpectedLoss(d, {"default": _prior(5, seed)})
    pairs = np.triu_indices(5, 1)
    ours = Problem(dom, obj, [DivergenceDP(0.8, "max", pairs)]).solve()
    core = Problem(dom, obj, [LDP(0.8)]).solve()
    assert ours.status == core.status == "optimal"
    assert ours.objective == pytest.approx(core.objective, abs=1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_approximate_max_divergence_dp_equals_epsilon_delta_ldp(seed):
    """Prop. 1: (ε, D∞^δ)-DP over all pairs is (ε, δ)-DP (the core's hockey-stick form)."""
    dom, _, d = _line(4)
    obj = ExpectedLoss(d, {"default": _prior(4, seed)})
    ours = Problem(dom, obj, [DivergenceDP(0.5, "max", np.triu_indices(4, 1), delta=0.05)]).solve()
    core = Problem(dom, obj, [ldp(0.5, 0.05)]).solve()
    assert ours.objective == pytest.approx(core.objective, abs=1e-8)
    assert ours.certificate[0].achieved["delta"] <= 0.05 + 1e-9


def test_max_divergence_xdp_equals_metric_privacy():
    dom, metric, d = _line(6)
    obj = ExpectedLoss(d, {"default": np.full(6, 1 / 6)})
    ours = Problem(dom, obj, [DivergenceXDP(0.7, "max", d)]).solve()
    core = Problem(dom, obj, [MetricPrivacy(0.7, metric, dom)]).solve()
    assert ours.objective == pytest.approx(core.objective, abs=1e-8)


@pytest.mark.parametrize("name", ["kl", "tv", "chi2", "hellinger", "reverse-kl"])
def test_divergence_xdp_audit_is_the_worst_ratio_of_divergence_to_distance(name):
    dom, _, d = _line(5)
    obj = ExpectedLoss(d, {"default": np.full(5, 0.2)})
    notion = DivergenceXDP(0.3, name, d)
    result = Problem(dom, obj, [notion]).solve()
    assert result.status == "optimal", result.message
    k = result.mechanism.matrix
    ratios = [divergence(name).value(k[i], k[j]) / d[i, j] for i in range(5) for j in range(5) if i != j]
    assert max(ratios) == pytest.approx(result.certificate[0].achieved["epsilon"], rel=1e-12)
    assert max(ratios) <= 0.3 + 1e-9


def _distp_instance(seed, n=5):
    rng = np.random.default_rng(seed)
    lam0, lam1 = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    dom, _, d = _line(n)
    prior = 0.5 * (lam0 + lam1)
    return dom, d, lam0, lam1, prior


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("eps", [0.05, 0.3])
def test_kl_distp_optimum_is_never_worse_than_max_divergence_distp(seed, eps):
    """KL <= D∞, so (ε, D∞)-DistP implies (ε, KL)-DistP: the KL optimum is a relaxation."""
    dom, d, lam0, lam1, prior = _distp_instance(seed)
    obj = ExpectedLoss(d, {"default": prior})
    pair = [(Side("a", lam0), Side("b", lam1))]
    kl = Problem(dom, obj, [DivergenceDistP(eps, pair, "kl")]).solve()
    dinf = Problem(dom, obj, [DistP(eps, pair)]).solve()
    assert kl.status == dinf.status == "optimal"
    assert kl.objective <= dinf.objective + 1e-7
    # the D∞ optimum is KL-feasible (checked with SciPy's entropy, an independent KL)
    k = dinf.mechanism.matrix
    assert entropy(lam0 @ k, lam1 @ k) <= eps + 1e-9
    # and the KL optimum's own audit, recomputed independently
    k = kl.mechanism.matrix
    assert max(entropy(lam0 @ k, lam1 @ k), entropy(lam1 @ k, lam0 @ k)) <= eps + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_generic_max_divergence_distp_equals_the_core_distp(seed):
    dom, d, lam0, lam1, prior = _distp_instance(seed)
    obj = ExpectedLoss(d, {"default": prior})
    pair = [(Side("a", lam0), Side("b", lam1))]
    for delta in (0.0, 0.02):
        ours = Problem(dom, obj, [DivergenceDistP(0.2, pair, "max", delta)]).solve()
        core = Problem(dom, obj, [DistP(0.2, pair, delta)]).solve()
        assert ours.objective == pytest.approx(core.objective, abs=1e-8)


@pytest.mark.parametrize("name", ["kl", "tv", "hellinger"])
def test_per_context_divergence_distp_is_never_worse_than_one_shared_mechanism(name):
    """Def. 15: one mechanism per context has more freedom; with the prior equal to the weighted
    contexts both objectives are the same function of a shared matrix."""
    dom, d, lam0, lam1, prior = _distp_instance(5)
    shared = Problem(dom, ExpectedLoss(d, {"default": prior}),
                     [DivergenceDistP(0.1, [(Side("a", lam0), Side("b", lam1))], name)]).solve()
    contexts = {"a": lam0, "b": lam1}
    per = Problem(dom, ExpectedLoss(d, {"a": 0.5 * lam0, "b": 0.5 * lam1}),
                  [DivergenceDistP(0.1, [(Side("a", lam0, "a"), Side("b", lam1, "b"))], name)],
                  contexts=contexts).solve()
    assert per.status == shared.status == "optimal"
    assert per.objective <= shared.objective + 1e-7
    ka, kb = per.mechanisms["a"].matrix, per.mechanisms["b"].matrix
    level = max(divergence(name).value(lam0 @ ka, lam1 @ kb), divergence(name).value(lam1 @ kb, lam0 @ ka))
    assert level <= 0.1 + 1e-9


def test_parametric_divergence_distp_sweep_matches_fresh_solves():
    dom, d, lam0, lam1, prior = _distp_instance(2)
    obj = ExpectedLoss(d, {"default": prior})
    notion = DivergenceDistP(0.05, [(Side("a", lam0), Side("b", lam1))], "kl")
    problem = Problem(dom, obj, [notion])
    program = problem.compile(parametric=True)
    compiled = problem.privacy[0]
    for eps in (0.05, 0.2, 0.4):
        program.coefficients.retarget({compiled: eps})
        program.problem.solve(solver="CLARABEL")
        fresh = Problem(dom, obj, [DivergenceDistP(eps, [(Side("a", lam0), Side("b", lam1))], "kl")]).solve()
        assert program.problem.value == pytest.approx(fresh.objective, abs=1e-6)


def test_shipped_kl_and_max_divergence_distp_problems():
    kl = mechdesign.load_problem(PROBLEMS / "kl-distp.toml").solve()
    dinf = mechdesign.load_problem(PROBLEMS / "dinf-distp.toml").solve()
    assert kl.status == dinf.status == "optimal"
    assert kl.objective < dinf.objective
    assert kl.certificate[0].requested == {"epsilon": 0.2, "divergence": "kl"}


def test_divergence_dp_with_an_explicit_adjacency_constrains_only_those_pairs():
    data = {
        "name": "adjacency",
        "inputs": {"labels": ["a", "b", "c"]},
        "privacy": [{"notion": "divergence-dp", "divergence": "tv", "epsilon": 0.2,
                     "adjacency": [["a", "b"]]}],
        "objective": {"kind": "error-probability", "prior": "uniform"},
    }
    result = mechdesign.problem_from_dict(data).solve()
    k = result.mechanism.matrix
    assert 0.5 * np.abs(k[0] - k[1]).sum() <= 0.2 + 1e-9
    assert k[2, 2] == pytest.approx(1.0)  # c is adjacent to nothing: reported exactly
    # error: c is free (0), a and b share TV 0.2 -> each errs (1 − 0.2)/2
    assert result.objective == pytest.approx((2 * 0.4) / 3, abs=1e-9)


@pytest.mark.parametrize("entry, key, message", [
    ({"notion": "distp", "divergence": "renyi", "epsilon": 0.1, "pairs": [["P", "Q"]]},
     "privacy[0].divergence", "unknown divergence 'renyi'; expected one of: max, kl, reverse-kl, tv, chi2, hellinger"),
    ({"notion": "xdistp", "divergence": "js", "epsilon": 0.1, "pairs": [["P", "Q"]]},
     "privacy[0].divergence", "unknown divergence 'js'"),
    ({"notion": "distp", "divergence": "kl", "delta": 0.1, "epsilon": 0.1, "pairs": [["P", "Q"]]},
     "privacy[0].delta", "delta applies only to divergence"),
    ({"notion": "divergence-dp", "divergence": "kl", "epsilon": 0.1, "adjacency": [["0", "9"]]},
     "privacy[0].adjacency", "unknown input label '9'"),
    ({"notion": "divergence-dp", "divergence": "kl", "epsilon": -1},
     "privacy[0].epsilon", "non-negative"),
])
def test_bad_divergence_entries_exit_with_code_2_and_a_clear_message(tmp_path, run_cli, entry, key, message):
    lines = ['name = "bad"', "[inputs]", "size = 3", "[metric]", 'kind = "absolute"',
             "[distributions]", "P = [0.5, 0.3, 0.2]", "Q = [0.2, 0.3, 0.5]", "[[privacy]]"]
    for k, v in entry.items():
        lines.append(f"{k} = {v!r}".replace("'", '"'))
    lines += ["[objective]", 'kind = "expected-loss"', 'prior = "P"']
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(lines))
    code, _out, err = run_cli("solve", path)
    assert code == 2
    flat = " ".join(err.split())
    assert f"key '{key}'" in flat and message in flat and str(path.name) in flat


def test_divergence_notion_audit_via_public_audit_function():
    k = np.array([[0.75, 0.25], [0.25, 0.75]])
    a = mechdesign.audit(k, DivergenceDP(1.0, "kl", [(0, 1)]))
    assert a.achieved["epsilon"] == pytest.approx(0.5 * log(3))  # (3/4 − 1/4) ln 3
    assert a.holds
    a = mechdesign.audit(k, DivergenceDP(0.4, "tv", [(0, 1)]))
    assert a.achieved["epsilon"] == pytest.approx(0.5) and not a.holds


@pytest.mark.parametrize("distance", ["w1", "tv"])
@pytest.mark.parametrize("name", ["kl", "hellinger"])
def test_divergence_xdistp_problem_scales_epsilon_by_the_distance_of_the_pair(distance, name):
    """Def. 12: D(λK ‖ λ'K) <= ε·W(λ, λ'), W1 = Σ|F_λ − F_λ'| on a line, TV = ½Σ|λ − λ'|."""
    P, Q = [0.4, 0.3, 0.1, 0.1, 0.1], [0.1, 0.1, 0.2, 0.3, 0.3]
    data = {
        "name": "xdistp", "inputs": {"size": 5}, "metric": {"kind": "absolute"},
        "distributions": {"P": P, "Q": Q, "mix": "uniform"},
        "privacy": [{"notion": "xdistp", "divergence": name, "distance": distance, "epsilon": 0.1,
                     "pairs": [["P", "Q"]]}],
        "objective": {"kind": "expected-loss", "prior": "mix"},
    }
    result = mechdesign.problem_from_dict(data).solve()
    assert result.status == "optimal", result.message
    p, q = np.array(P), np.array(Q)
    width = (np.abs(np.cumsum(p) - np.cumsum(q))[:-1].sum() if distance == "w1"
             else 0.5 * np.abs(p - q).sum())
    line = result.certificate[0]
    assert line.detail["widths"]["P~Q"] == pytest.approx(width, rel=1e-12)
    k = result.mechanism.matrix
    level = max(divergence(name).value(p @ k, q @ k), divergence(name).value(q @ k, p @ k))
    assert level <= 0.1 * width + 1e-9
    assert line.achieved["epsilon"] == pytest.approx(level / width, rel=1e-12)
