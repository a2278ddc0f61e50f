"""The robust expected loss: the largest expected loss over a set of priors, minimised.

Known answers: one prior, or a TV ball of radius 0, is the nominal expected loss; a TV ball
covering the simplex (radius 1) is the worst-case loss over inputs. The reported worst prior
lies in the set and attains the objective. The dual forms the program uses agree with brute
force over the vertices of each set, enumerated here from their defining inequalities.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest

import mechdesign
from mechdesign import (
    LDP,
    ExpectedLoss,
    FinitePriors,
    MetricPrivacy,
    PriorBox,
    Problem,
    RobustExpectedLoss,
    TVBall,
    WorstCaseLoss,
    load_problem,
)
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.setting import Setting
from mechdesign.design.spec import problem_from_dict

PROBLEMS_DIR = Path(__file__).resolve().parent.parent / "problems"
from mechdesign.solvers.predicates import expected_loss
from tests.conftest import PROBLEMS

RNG = np.random.default_rng(2009)
LOSS = np.abs(np.subtract.outer(np.arange(5), np.arange(5))).astype(float)
NOMINAL = np.array([0.35, 0.25, 0.2, 0.12, 0.08])


def solve(objective, eps=1.0, notion=None):
    return Problem(inputs=5, objective=objective, privacy=[notion or LDP(eps)], metric="absolute").solve()


def sets() -> dict:
    others = RNG.dirichlet(np.ones(5), size=2)
    return {"finite": FinitePriors(np.vstack([NOMINAL, others])), "tv": TVBall(0.15),
            "box": PriorBox(NOMINAL * 0.5, np.minimum(NOMINAL * 2, 1))}


# ---------------------------------------------------------------------------------------------
# the known answers

@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_one_prior_is_the_nominal_design(eps):
    robust = solve(RobustExpectedLoss(LOSS, FinitePriors([NOMINAL]), prior=NOMINAL), eps)
    nominal = solve(ExpectedLoss(LOSS, prior=NOMINAL), eps)
    assert robust.status == nominal.status == "optimal"
    assert robust.objective == pytest.approx(nominal.objective, rel=1e-7)


def test_a_ball_of_radius_zero_is_the_nominal_design():
    robust = solve(RobustExpectedLoss(LOSS, TVBall(0.0), prior=NOMINAL))
    nominal = solve(ExpectedLoss(LOSS, prior=NOMINAL))
    assert robust.status == "optimal"
    assert robust.objective == pytest.approx(nominal.objective, rel=1e-7)


@pytest.mark.parametrize("radius", [1.0, 3.0])
def test_a_ball_covering_the_simplex_is_the_worst_case_loss(radius):
    robust = solve(RobustExpectedLoss(LOSS, TVBall(radius), prior=NOMINAL))
    worst = solve(WorstCaseLoss(LOSS))
    assert robust.status == worst.status == "optimal"
    assert robust.objective == pytest.approx(worst.objective, rel=1e-7)


@pytest.mark.parametrize("kind", ["finite", "tv", "box"])
@pytest.mark.parametrize("notion", [LDP(1.0), MetricPrivacy(0.8)], ids=["ldp", "d-privacy"])
def test_the_worst_prior_is_in_the_set_and_attains_the_value(kind, notion):
    priors = sets()[kind]
    result = solve(RobustExpectedLoss(LOSS, priors, prior=NOMINAL), notion=notion)
    assert result.status == "optimal" and result.holds and result.solver["bound_proven"]
    record = result.extra["robust"]
    worst = np.asarray(record["worst_prior"])
    losses = (LOSS * result.mechanism.matrix).sum(axis=1)
    assert worst @ losses == pytest.approx(result.objective, rel=1e-12)
    assert record["worst_loss"] == result.objective
    assert record["nominal_loss"] == pytest.approx(NOMINAL @ losses, rel=1e-12)
    assert record["nominal_loss"] <= result.objective + 1e-12  # the nominal prior is in each set here
    assert worst.sum() == pytest.approx(1.0) and np.all(worst >= 0)
    bound = priors.bind(NOMINAL, 5)
    if kind == "finite":
        assert min(np.abs(bound.priors - worst).sum(axis=1)) < 1e-12
    elif kind == "tv":
        assert 0.5 * np.abs(worst - NOMINAL).sum() <= 0.15 + 1e-12
    else:
        assert np.all(worst >= bound.lower - 1e-12) and np.all(worst <= bound.upper + 1e-12)


def test_the_robust_design_beats_the_nominal_one_under_the_worst_prior_and_loses_under_the_nominal():
    priors = TVBall(0.2)
    robust = solve(RobustExpectedLoss(LOSS, priors, prior=NOMINAL))
    nominal = solve(ExpectedLoss(LOSS, prior=NOMINAL))
    objective = RobustExpectedLoss(LOSS, priors, prior=NOMINAL)
    objective = Problem(inputs=5, objective=objective, privacy=[LDP(1.0)]).objective
    nominal_worst = objective.value(nominal.matrices())
    assert robust.objective <= nominal_worst + 1e-9
    assert robust.extra["robust"]["nominal_loss"] >= nominal.objective - 1e-9


def test_special_solvers_that_need_a_plain_expected_loss_do_not_apply():
    problem = Problem(inputs=5, objective=RobustExpectedLoss(LOSS, TVBall(0.1), prior=NOMINAL), privacy=[LDP(1.0)])
    assert expected_loss(problem) is not None
    result = problem.solve()
    records = {r["solver"]: r for r in result.solver["special_solvers"]}
    assert not records["HiGHS column generation + interior point"]["applies"]
    assert result.solver["name"] == "HIGHS"


# ---------------------------------------------------------------------------------------------
# the dual forms against brute force over the vertices

def _vertices(A: np.ndarray, b: np.ndarray, E: np.ndarray, f: np.ndarray) -> list[np.ndarray]:
    """Every vertex of {x : A x <= b, E x = f}: each choice of active inequalities that fixes x."""
    n = A.shape[1]
    out = []
    for rows in itertools.combinations(range(A.shape[0]), n - E.shape[0]):
        M = np.vstack([E, A[list(rows)]])
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        x = np.linalg.solve(M, np.concatenate([f, b[list(rows)]]))
        if np.all(A @ x <= b + 1e-9):
            out.append(x)
    return out


def tv_vertices(centre: np.ndarray, radius: float) -> list[np.ndarray]:
    """Vertices of {π >= 0, Σ π = 1, ½‖π − π̂‖₁ <= r}, lifted with t >= |π − π̂|, then projected."""
    n = centre.size
    eye, zero = np.eye(n), np.zeros((n, n))
    A = np.vstack([np.hstack([-eye, zero]), np.hstack([eye, -eye]), np.hstack([-eye, -eye]),
                   np.concatenate([np.zeros(n), np.ones(n)])[None, :]])
    b = np.concatenate([np.zeros(n), centre, -centre, [2 * radius]])
    E = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
    return [v[:n] for v in _vertices(A, b, E, np.ones(1))]


def box_vertices(lower: np.ndarray, upper: np.ndarray) -> list[np.ndarray]:
    n = lower.size
    A = np.vstack([-np.eye(n), np.eye(n)])
    return _vertices(A, np.concatenate([-lower, upper]), np.ones((1, n)), np.ones(1))


def dual_value(objective: RobustExpectedLoss, K: np.ndarray) -> float:
    """The program's expression at a fixed K, its dual variables minimised by a solver."""
    program = cp.Problem(cp.Minimize(objective.expression({"default": cp.Constant(K)})))
    program.solve(solver=cp.CLARABEL)
    return float(program.value)


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("kind", ["tv", "box", "finite"])
def test_the_dual_form_agrees_with_brute_force_over_the_vertices(n, kind):
    rng = np.random.default_rng(n)
    for _ in range(4):
        loss = rng.uniform(0, 3, size=(n, n))
        centre = rng.dirichlet(np.ones(n))
        K = rng.dirichlet(np.ones(n), size=n)
        if kind == "tv":
            radius = float(rng.uniform(0.05, 0.6))
            priors, vertices = TVBall(radius), tv_vertices(centre, radius)
        elif kind == "box":
            lower, upper = centre * rng.uniform(0.2, 0.9, n), np.minimum(centre * rng.uniform(1.1, 3, n), 1)
            priors, vertices = PriorBox(lower, upper), box_vertices(lower, upper)
        else:
            scenarios = rng.dirichlet(np.ones(n), size=3)
            priors, vertices = FinitePriors(scenarios), list(scenarios)
        domain = Domain.from_size(n)
        objective = RobustExpectedLoss(loss, priors, prior=centre).bind(Setting(domain, domain))
        losses = (loss * K).sum(axis=1)
        brute = max(v @ losses for v in vertices)
        assert objective.value({"default": K}) == pytest.approx(brute, rel=1e-10)
        assert dual_value(objective, K) == pytest.approx(brute, rel=1e-6, abs=1e-8)


# ---------------------------------------------------------------------------------------------
# problem files

def test_the_example_problem_solves_and_reports_the_worst_prior():
    result = load_problem(PROBLEMS / "robust-prior.toml").solve()
    assert result.status == "optimal" and result.holds and result.solver["bound_proven"]
    record = result.to_dict()["robust"]
    assert record["set"] == {"kind": "tv", "radius": 0.1, "around": "estimate"}
    assert record["nominal_loss"] <= record["worst_loss"] == result.objective


BASE = {"name": "t", "inputs": {"size": 3}, "metric": {"kind": "absolute"},
        "privacy": [{"notion": "ldp", "epsilon": 1.0}],
        "distributions": {"a": [0.5, 0.3, 0.2], "b": [0.2, 0.3, 0.5]}}


@pytest.mark.parametrize("robust", [{"priors": ["a", "b"]}, {"tv": 0.1}, {"tv": 0.1, "around": "b"},
                                    {"lower": [0.1, 0.1, 0.1], "upper": [0.6, 0.6, 0.6]}])
def test_each_kind_of_set_loads_from_a_file(robust):
    problem = problem_from_dict({**BASE, "objective": {"kind": "expected-loss", "prior": "a", "robust": robust}})
    assert isinstance(problem.objective, RobustExpectedLoss)
    assert problem.solve().status == "optimal"


@pytest.mark.parametrize("robust,key", [
    ({"priors": ["a"], "tv": 0.1}, "objective.robust"),
    ({"radius": 0.1}, "objective.robust.radius"),
    ({"tv": -0.1}, "objective.robust.tv"),
    ({"tv": "big"}, "objective.robust.tv"),
    ({"tv": 0.1, "around": "c"}, "objective.robust.around"),
    ({"priors": []}, "objective.robust.priors"),
    ({"priors": ["a", "c"]}, "objective.robust.priors"),
    ({"lower": [0.5, 0.5, 0.5], "upper": [1, 1, 1]}, "objective.robust.lower"),
    ({"lower": [0.1, 0.1, 0.1], "upper": [0.2, 0.2, 0.2]}, "objective.robust.upper"),
    ({"lower": [0.1, 0.1], "upper": [1, 1, 1]}, "objective.robust.lower"),
    ({"lower": [0.3, 0.1, 0.1], "upper": [0.2, 1, 1]}, "objective.robust.upper"),
    ("tv", "objective.robust"),
])
def test_bad_robust_tables_name_the_key(robust, key):
    with pytest.raises(ProblemError) as err:
        problem_from_dict({**BASE, "objective": {"kind": "expected-loss", "robust": robust}}, file="t.toml")
    assert err.value.key == key and err.value.file == "t.toml"


def test_robust_with_contexts_is_refused():
    data = {**BASE, "mechanism": {"contexts": ["a", "b"]},
            "objective": {"kind": "expected-loss", "robust": {"tv": 0.1}}}
    with pytest.raises(ProblemError) as err:
        problem_from_dict(data, file="t.toml")
    assert "one shared mechanism" in str(err.value)


def test_compare_shows_the_robust_design_next_to_the_nominal_optimal_one():
    from mechdesign.estimation.compare import compare

    problem = mechdesign.load_problem(PROBLEMS_DIR / "robust-prior.toml")
    rows = {r.name: r for r in compare(problem, ["krr"]).rows}
    robust, nominal = rows["optimal design"], rows["nominal-optimal design"]
    # each design is best at what it optimises: the robust one under the worst prior, the
    # nominal one under the estimate
    assert robust.objective <= nominal.objective + 1e-9
    assert nominal.nominal_loss <= robust.nominal_loss + 1e-9
    # the nominal-optimal design's nominal loss is the plain expected-loss optimum
    plain = mechdesign.Problem(inputs=problem.inputs, metric=problem.metric,
                               objective=mechdesign.ExpectedLoss(problem.objective.loss, prior=problem.objective.prior),
                               privacy=[mechdesign.LDP(1.0)]).solve()
    assert nominal.nominal_loss == pytest.approx(plain.objective, rel=1e-9)
    assert rows["krr"].nominal_loss is not None and rows["krr"].objective >= robust.objective - 1e-9


def test_the_robust_priors_suite_runs_and_its_facts_hold(tmp_path):
    from mechdesign.bench import run_suite

    data, _report = run_suite("robust-priors", out=tmp_path, quick=True)
    assert data["all_checks_hold"], data["checks"]
    rows = data["results"]
    ball = [r for r in rows if r["radius"] > 0]
    assert ball and all(r["robust_worst"] < r["nominal_worst"] for r in ball)  # robustness buys something
