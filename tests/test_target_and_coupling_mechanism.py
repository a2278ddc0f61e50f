"""Target distributions and coupling mechanisms (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 16, Def. 18, Prop. 2), the
special solver for "targets + expected loss", free targets (W1 barycenters), approximate
knowledge in problem files (Theorem 3), and bad input."""

import csv
import json
import tomllib

import numpy as np
import pytest
from scipy.optimize import linprog

import mechdesign
from mechdesign.core.divergences import DIVERGENCES, divergence
from mechdesign.core.domain import Domain
from mechdesign.core.objectives import ExpectedLoss, WorstCaseLoss
from mechdesign.design.problem import Problem
from mechdesign.mechanisms.coupling_mechanism import coupling_mechanism
from mechdesign.privacy import LDP, ApproximateKnowledge, DivergenceDistP, Side, Target
from mechdesign.solvers.coupling_targets import applies, solve_targets
from mechdesign.transport.coupling_kernel import mechanism_from_coupling
from tests.conftest import PROBLEMS


def transport_lp(a, b, cost):
    """min ⟨γ, cost⟩ over couplings of a and b (SciPy's HiGHS, independent of mechdesign)."""
    n, m = cost.shape
    res = linprog(cost.ravel(), A_eq=np.vstack([np.kron(np.eye(n), np.ones(m)), np.kron(np.ones(n), np.eye(m))]),
                  b_eq=np.concatenate([a, b]), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def w1_line(a, b):
    return float(np.abs(np.cumsum(a) - np.cumsum(b))[:-1].sum())


def line_cost(n, m=None):
    m = n if m is None else m
    return np.abs(np.arange(n, dtype=float)[:, None] - np.arange(m, dtype=float)[None, :])


def expected_loss(lam, k, cost):
    return float((lam[:, None] * k * cost).sum())


def test_fig2_example_coupling_mechanism():
    """Example 2: 0.1 of λ[2] = 0.5 moves to 1 and 0.2 to 3; input 2 goes to 1 w.p. 20 %, to 3
    w.p. 40 %; cost 0.1 + 0.2 = 0.3; the output distribution is μ."""
    result = mechdesign.load_problem(PROBLEMS / "coupling-fig2.toml").solve()
    assert result.status == "optimal" and result.solver["name"] == "coupling"
    assert result.objective == pytest.approx(0.3, abs=1e-12)
    k = result.mechanisms["lambda"].matrix
    assert k[1] == pytest.approx([0.2, 0.4, 0.4], abs=1e-12)
    assert k[0] == pytest.approx([1, 0, 0]) and k[2] == pytest.approx([0, 0, 1])
    assert np.array([0.2, 0.5, 0.3]) @ k == pytest.approx([0.3, 0.2, 0.5], abs=1e-15)
    assert [a.notion for a in result.certificate] == ["target"] and result.certificate[0].holds


@pytest.mark.parametrize("seed", range(10))
def test_coupling_mechanism_loss_is_w1_on_a_line(seed):
    """Prop. 2: the utility-optimal coupling mechanism's expected loss is W1(λ, μ) — here the
    closed form Σ|F_λ − F_μ| — with the metric given by name and as a matrix."""
    rng = np.random.default_rng(seed)
    n = 9
    lam, mu = rng.dirichlet(np.ones(n) * 0.6), rng.dirichlet(np.ones(n) * 0.6)
    for cost in ("absolute", line_cost(n)):
        k = coupling_mechanism(lam, mu, cost)
        assert expected_loss(lam, k, line_cost(n)) == pytest.approx(w1_line(lam, mu), abs=1e-12)
        assert lam @ k == pytest.approx(mu, abs=1e-14)
        assert np.allclose(k.sum(axis=1), 1, atol=1e-14) and k.min() >= 0


@pytest.mark.parametrize("seed", range(10))
def test_coupling_mechanism_loss_equals_the_transport_lp_for_general_costs(seed):
    rng = np.random.default_rng(seed)
    n, m = 6, 4
    lam, mu = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(m))
    cost = rng.random((n, m)) * 10
    k = coupling_mechanism(lam, mu, cost)
    assert expected_loss(lam, k, cost) == pytest.approx(transport_lp(lam, mu, cost), rel=1e-10, abs=1e-12)
    assert lam @ k == pytest.approx(mu, abs=1e-14)


def test_output_distribution_is_the_target_exactly_so_distp_epsilon_is_zero():
    rng = np.random.default_rng(4)
    mu = rng.dirichlet(np.ones(5))
    lams = {s: rng.dirichlet(np.ones(5)) for s in ("a", "b", "c")}
    mechs = {s: coupling_mechanism(lam, mu, "absolute") for s, lam in lams.items()}
    for s, lam in lams.items():
        assert np.max(np.abs(lam @ mechs[s] - mu)) <= 1e-15
    pairs = [(Side(a, lams[a], a), Side(b, lams[b], b)) for a in lams for b in lams if a < b]
    for name in DIVERGENCES:
        audit = DivergenceDistP(0.0, pairs, name).audit(mechs)
        assert audit.holds and audit.achieved["epsilon"] <= 1e-14, name


def test_rows_without_mass_are_answered_with_the_target():
    lam = np.array([0.5, 0.0, 0.5])
    mu = np.array([0.2, 0.3, 0.5])
    k = coupling_mechanism(lam, mu, "absolute")
    assert k[1] == pytest.approx(mu)
    gamma = np.array([[0.2, 0.3, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.5]])
    assert mechanism_from_coupling(gamma, lam, mu)[1] == pytest.approx(mu)
    assert mechanism_from_coupling(gamma, lam, mu)[0] == pytest.approx([0.4, 0.6, 0.0])


def _random_targets_problem(seed):
    rng = np.random.default_rng(seed)
    n, m, c = rng.integers(2, 7), rng.integers(2, 7), rng.integers(1, 4)
    contexts = {}
    for s in range(c):
        lam = rng.dirichlet(np.ones(n))
        if rng.random() < 0.5:
            lam[rng.integers(n)] = 0.0
            lam /= lam.sum()
        contexts[f"s{s}"] = lam
    mu = rng.dirichlet(np.ones(m))
    if rng.random() < 0.5:
        mu[rng.integers(m)] = 0.0
        mu /= mu.sum()
    w = rng.dirichlet(np.ones(c))
    loss = rng.random((n, m)) * rng.choice([1.0, 100.0])
    obj = ExpectedLoss(loss, {s: w[i] * lam for i, (s, lam) in enumerate(contexts.items())})
    return Problem(Domain.from_size(n), obj, [Target(contexts, mu)], outputs=Domain.from_size(m),
                   contexts=contexts), contexts, mu, loss, w


@pytest.mark.parametrize("seed", range(25))
def test_special_solver_gives_the_lp_optimum_on_random_targets_problems(seed):
    problem, contexts, mu, loss, w = _random_targets_problem(seed)
    special = problem.solve()
    lp = problem.solve(solver="highs")
    assert special.solver["name"] == "coupling" and lp.solver["name"] == "HIGHS"
    assert special.status == lp.status == "optimal"
    assert special.objective == pytest.approx(lp.objective, rel=1e-9, abs=1e-12)
    independent = sum(w[i] * transport_lp(lam, mu, loss) for i, lam in enumerate(contexts.values()))
    assert special.objective == pytest.approx(independent, rel=1e-9, abs=1e-12)
    for s, lam in contexts.items():
        assert np.max(np.abs(lam @ special.mechanisms[s].matrix - mu)) <= 1e-12
        assert np.max(np.abs(lam @ lp.mechanisms[s].matrix - mu)) <= 1e-9


def test_special_solver_passes_on_anything_but_fixed_targets_and_expected_loss():
    problem, contexts, mu, loss, _w = _random_targets_problem(3)
    assert solve_targets(problem) is not None
    dom, out = problem.inputs, problem.outputs
    obj = problem.objective
    with_ldp = Problem(dom, obj, [Target(contexts, mu), LDP(1.0)], outputs=out, contexts=contexts)
    free = Problem(dom, obj, [Target(contexts, None)], outputs=out, contexts=contexts)
    worst = Problem(dom, WorstCaseLoss(loss, list(contexts)), [Target(contexts, mu)], outputs=out,
                    contexts=contexts)
    skewed = Problem(dom, ExpectedLoss(loss, {s: np.ones(len(dom)) for s in contexts}), [Target(contexts, mu)],
                     outputs=out, contexts=contexts)
    for p, why in ((with_ldp, "other than targets"), (free, "not a free one"), (worst, "expected-loss"),
                   (skewed, "weighted by its distribution")):
        assert why in applies(p)


def test_target_with_ldp_is_solved_by_the_lp_and_costs_at_least_w1():
    lam0, lam1 = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    mu = np.full(4, 0.25)
    contexts = {"a": lam0, "b": lam1}
    d = line_cost(4)
    obj = ExpectedLoss(d, {"a": 0.5 * lam0, "b": 0.5 * lam1})
    result = Problem(Domain.from_size(4), obj, [Target(contexts, mu), LDP(1.0)], contexts=contexts).solve()
    assert result.status == "optimal" and result.solver["name"] == "HIGHS"
    assert all(a.holds for a in result.certificate)
    assert result.objective >= 0.5 * (w1_line(lam0, mu) + w1_line(lam1, mu)) - 1e-9
    assert result.objective <= 0.5 * (lam0 + lam1) @ d @ mu + 1e-9   # no worse than data-independent μ


@pytest.mark.parametrize("seed", range(6))
def test_free_target_is_a_w1_barycenter(seed):
    """min_μ w0 W1(λ0, μ) + w1 W1(λ1, μ) = min(w0, w1)·W1(λ0, λ1) (triangle inequality; μ = the
    heavier context's λ attains it)."""
    rng = np.random.default_rng(seed)
    n = 6
    lam0, lam1 = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    w0 = [0.5, 0.3, 0.8][seed % 3]
    contexts = {"a": lam0, "b": lam1}
    obj = ExpectedLoss(line_cost(n), {"a": w0 * lam0, "b": (1 - w0) * lam1})
    result = Problem(Domain.from_size(n), obj, [Target(contexts, None)], contexts=contexts).solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(min(w0, 1 - w0) * w1_line(lam0, lam1), abs=1e-9)
    outs = [lam0 @ result.mechanisms["a"].matrix, lam1 @ result.mechanisms["b"].matrix]
    assert np.max(np.abs(outs[0] - outs[1])) <= 1e-9
    assert result.certificate[0].detail["mu"] == pytest.approx(outs[0], abs=1e-9)


def test_shipped_barycenter_problem():
    result = mechdesign.load_problem(PROBLEMS / "coupling-barycenter.toml").solve()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(1.0, abs=1e-9)   # W1(P, Q) / 2 = 2.0 / 2


def test_approximate_knowledge_problem_reports_theorem3_bounds():
    problem = mechdesign.load_problem(PROBLEMS / "coupling-approximate.toml")
    result = problem.solve()
    assert result.status == "optimal" and result.solver["name"] == "coupling"
    line = next(a for a in result.certificate if a.notion == "approximate-knowledge")
    data = tomllib.loads((PROBLEMS / "coupling-approximate.toml").read_text())["distributions"]
    eps = max(np.max(np.abs(np.log(np.array(data[a])) - np.log(np.array(data[b]))))
              for a, b in (("north_estimate", "north"), ("south_estimate", "south")))
    assert line.detail["knowledge_epsilon"] == pytest.approx(eps, rel=1e-12)
    assert line.requested["max"] == pytest.approx(2 * eps)
    assert line.requested["kl"] == pytest.approx(2 * eps * np.exp(eps))
    actual = {"north_estimate": np.array(data["north"]), "south_estimate": np.array(data["south"])}
    outs = {s: actual[s] @ m.matrix for s, m in result.mechanisms.items()}
    assert line.achieved["kl"] == pytest.approx(
        max(divergence("kl").value(outs["north_estimate"], outs["south_estimate"]),
            divergence("kl").value(outs["south_estimate"], outs["north_estimate"])), rel=1e-12)
    assert line.holds and all(line.achieved[k] <= line.requested[k] for k in line.achieved)
    assert 0 < line.achieved["max"]                       # knowledge is wrong: some leakage


def test_approximate_knowledge_audit_fails_when_a_mechanism_is_not_a_coupling_mechanism():
    lam = {"a": np.array([0.5, 0.5]), "b": np.array([0.5, 0.5])}
    mechs = {"a": np.eye(2), "b": np.array([[0.0, 1.0], [1.0, 0.0]])}
    line = ApproximateKnowledge(lam, {"a": np.array([0.6, 0.4]), "b": np.array([0.4, 0.6])}).audit(mechs)
    assert line.detail["coupling_deviation"] == 0.0          # both output (½, ½) under λ̂ ...
    assert line.holds                                        # ... so Theorem 3 applies and holds
    line = ApproximateKnowledge(lam, lam).audit({"a": np.eye(2), "b": np.array([[0.9, 0.1], [0.9, 0.1]])})
    assert not line.holds                                    # bound 0 (exact knowledge), outputs differ


def test_airports_coupling_special_solver_equals_the_lp():
    problem = mechdesign.load_problem(PROBLEMS / "airports-coupling.toml")
    special = problem.solve()
    lp = problem.solve(solver="highs")
    assert special.status == lp.status == "optimal"
    assert special.solver["name"] == "coupling"
    assert special.objective == pytest.approx(lp.objective, rel=1e-9)
    assert len(problem.inputs) <= 300


def test_airports_data_file_matches_the_problem_files():
    with open(PROBLEMS / "data/airports-tx-ok.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for name in ("airports-coupling", "airports-distp"):
        data = tomllib.loads((PROBLEMS / f"{name}.toml").read_text())
        assert data["inputs"]["labels"] == [r["cell"] for r in rows]
        assert data["inputs"]["points"] == [[float(r["lat"]), float(r["lon"])] for r in rows]
        for state in ("TX", "OK"):
            counts = np.array([int(r[state]) for r in rows], dtype=float)
            assert np.allclose(data["distributions"][state], counts / counts.sum(), rtol=0, atol=1e-15)
    assert sum(int(r["TX"]) for r in rows) == 209 and sum(int(r["OK"]) for r in rows) == 102


def test_airports_kl_distp_problem_solves_with_a_holding_certificate():
    result = mechdesign.load_problem(PROBLEMS / "airports-distp.toml").solve()
    assert result.status == "optimal" and result.solver["name"] == "CLARABEL"
    assert result.certificate[0].achieved["epsilon"] <= 0.05 + 1e-9


def test_cli_json_for_a_coupling_problem(run_cli):
    code, out, err = run_cli("solve", PROBLEMS / "coupling-fig2.toml", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "optimal" and data["solver"]["name"] == "coupling"
    assert data["certificate"][0]["notion"] == "target" and data["certificate"][0]["holds"]
    assert data["mechanisms"]["lambda"]["matrix"][1] == pytest.approx([0.2, 0.4, 0.4])


BASE = ['name = "bad"', "[inputs]", "size = 3", "[metric]", 'kind = "absolute"', "[distributions]",
        "P = [0.5, 0.3, 0.2]", "Q = [0.2, 0.3, 0.5]"]


@pytest.mark.parametrize("lines, key, message", [
    (['[mechanism]', 'contexts = ["P", "Q"]', "[[privacy]]", 'notion = "target"', "distribution = [0.5, 0.6, 0.1]"],
     "privacy[0].distribution", "must sum to 1"),
    (['[mechanism]', 'contexts = ["P", "Q"]', "[[privacy]]", 'notion = "target"', "distribution = [0.5, -0.5, 1.0]"],
     "privacy[0].distribution", "must be non-negative"),
    (['[mechanism]', 'contexts = ["P", "Q"]', "[[privacy]]", 'notion = "target"', 'distribution = "mu"'],
     "privacy[0].distribution", "unknown distribution 'mu'"),
    (['[mechanism]', 'contexts = ["P", "Q"]', "[[privacy]]", 'notion = "target"', "distribution = [0.5, 0.5]"],
     "privacy[0].distribution", "must have 3 entries"),
    (['[mechanism]', 'contexts = ["P", "Q"]', "[[privacy]]", 'notion = "target"'],
     "privacy[0].distribution", "missing 'distribution'"),
    (["[[privacy]]", 'notion = "target"', 'distribution = "P"'],
     "privacy[0].notion", "set [mechanism] contexts"),
    (['[mechanism]', 'contexts = ["P", "Q"]', 'actual = ["Q", "P"]', "[[privacy]]", 'notion = "ldp"', "epsilon = 1.0"],
     "mechanism.actual", "add a [[privacy]] notion = \"target\""),
    (['[mechanism]', 'contexts = ["P", "Q"]', 'actual = ["Q"]', "[[privacy]]", 'notion = "target"', 'distribution = "P"'],
     "mechanism.actual", "expected 2 distribution names"),
    (['[mechanism]', 'contexts = ["P", "Q"]', 'actual = ["Q", "R"]', "[[privacy]]", 'notion = "target"', 'distribution = "P"'],
     "mechanism.actual", "unknown distribution 'R'"),
])
def test_bad_targets_exit_with_code_2_and_a_clear_message(tmp_path, run_cli, lines, key, message):
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(BASE + lines + ["[objective]", 'kind = "expected-loss"']))
    code, _out, err = run_cli("solve", path)
    assert code == 2
    flat = " ".join(err.split())
    assert f"key '{key}'" in flat and message in flat and "bad.toml" in flat
