"""Proven lower bounds of the two special routes: the Charnes–Cooper max-entry LP and the
coupling ("targets + expected loss") solver, each against an LP written here from the
definitions and solved by SciPy's HiGHS (independent of mechdesign's models)."""

from decimal import Decimal, localcontext
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign import Domain, Problem
from mechdesign.core.objectives import off_diagonal_mask
from mechdesign.design.spec import load_problem
from mechdesign.privacy import ProfilePrivacy
from mechdesign.privacy.distp import DistP, Side, XDistP
from mechdesign.solvers.charnes_cooper import (
    ScaledProgram,
    bound_from_multipliers,
    exp_upper,
    pair_multipliers,
    solve_max_entry,
)
from mechdesign.solvers.highs_model import SolverDeclined

ROOT = Path(__file__).resolve().parent.parent
EPSILONS = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 35.0)
#: SciPy's HiGHS meets (P)'s rows only to its feasibility tolerance (1e-10 asked; violations of
#: 5e-13 seen), so its optimum may lie that far below the true t*
REF_SLACK = 1e-9


# ---------------------------------------------------------------------------------------------
# Charnes–Cooper


def max_entry_lp(keys, mask, notions) -> float:
    """t* of (P): min t, rows of every K_k summing to 1, K_k[x, y] <= t on the mask, and
    λ_p K_p <= e^ε λ_q K_q both ways for every pair; beyond ε = 20 each pair inequality goes
    through k = ⌈ε/10⌉ links of e^{ε/k} (z_0 = λ_p K_p, z_k = λ_q K_q, z_i <= e^{ε/k} z_{i+1}),
    as one coefficient e^35 is beyond what HiGHS can solve reliably. All variables lie in [0, 1]."""
    n, m = mask.shape
    size = n * m
    n_k = len(keys) * size
    block = {key: b for b, key in enumerate(keys)}
    rows, n_aux = [], 0
    for key in keys:  # K_k[x, y] − t <= 0
        for x, y in zip(*np.nonzero(mask)):
            rows.append({block[key] * size + x * m + y: 1.0, n_k: -1.0})
    for notion in notions:
        for (a, b), eps in zip(notion.pairs, notion.pair_epsilons()):
            links = 1 if eps <= 20 else int(np.ceil(eps / 10))
            c = np.exp(eps / links)
            for p, q in ((a, b), (b, a)):
                for y in range(m):
                    ends = [{block[p.key] * size + x * m + y: p.distribution[x] for x in range(n)}]
                    ends += [{n_k + 1 + n_aux + i: 1.0} for i in range(links - 1)]
                    ends.append({block[q.key] * size + x * m + y: q.distribution[x] for x in range(n)})
                    n_aux += links - 1
                    for left, right in pairwise(ends):
                        row = dict(left)
                        for j, v in right.items():
                            row[j] = row.get(j, 0.0) - c * v
                        rows.append(row)
    width = n_k + 1 + n_aux
    A_ub = sp.lil_matrix((len(rows), width))
    for r, row in enumerate(rows):
        for j, v in row.items():
            A_ub[r, j] = v
    A_eq = sp.hstack([sp.kron(sp.eye(len(keys) * n), np.ones((1, m))), sp.csr_matrix((len(keys) * n, width - n_k))])
    cost = np.zeros(width)
    cost[n_k] = 1.0
    res = linprog(cost, A_ub=A_ub.tocsr(), b_ub=np.zeros(len(rows)), A_eq=A_eq.tocsr(),
                  b_eq=np.ones(len(keys) * n), bounds=(0, 1), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return float(res.fun)


def random_instance(kind: str, eps: float, rng):
    """(keys, mask, notions): profiles on a chain, DistP pairs through one mechanism, or XDistP
    (ε·W1) plus DistP. Half the instances drop one output label (a fully capped row, so t*
    stays away from 0 at large ε) and half the distributions have zeros."""
    k = int(rng.integers(2, 5))
    inputs = Domain.from_size(k)
    outputs = Domain.from_labels([str(i) for i in range(k - 1)] + ["z"]) if rng.random() < 0.5 else inputs
    mask = off_diagonal_mask(inputs, outputs)

    def dist():
        v = rng.dirichlet(np.ones(k))
        if rng.random() < 0.5:
            v[rng.random(k) < 0.3] = 0.0
        return v / v.sum() if v.sum() > 0 else np.eye(k)[0]

    if kind == "profile":
        vecs = {f"P{i}": dist() for i in range(int(rng.integers(2, 5)))}
        return list(vecs), mask, [ProfilePrivacy(eps, list(pairwise(vecs)), vecs)]
    p, q, r = (Side(name, dist()) for name in "pqr")
    if kind == "distp":
        return ["default"], mask, [DistP(eps, [(p, q), (q, r)])]
    cost = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return ["default"], mask, [XDistP(eps, [(p, q), (p, r)], "w1", cost), DistP(eps / 3, [(q, r)])]


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("kind", ["profile", "distp", "xdistp"])
def test_the_proven_bound_is_below_and_within_1e7_of_the_independent_optimum(kind, eps):
    rng = np.random.default_rng(int(eps * 1000) + len(kind))
    checked = 0
    for _ in range(6):
        keys, mask, notions = random_instance(kind, eps, rng)
        try:
            _, t, bound, _ = solve_max_entry(keys, set(keys), mask, notions)
        except SolverDeclined:  # 0 < t* < 1/S_CAP: the route declines, the general LP solves it
            continue
        ref = max_entry_lp(keys, mask, notions)
        if t == 0.0:
            assert bound == 0.0 and ref <= 1e-9
            continue
        checked += 1
        assert 0.0 < bound <= ref * (1 + REF_SLACK)
        assert ref - bound <= 1e-7 * ref
    assert checked >= 2


def test_perturbed_multipliers_still_give_valid_bounds():
    """Any π >= 0 gives a lower bound: scaled, noisy, sparse or huge multipliers never exceed
    the independent optimum, and the exact duals give the best of them."""
    rng = np.random.default_rng(5)
    for kind, eps in [("profile", 0.5), ("distp", 2.0), ("xdistp", 1.0), ("xdistp", 35.0)]:
        for _ in range(3):
            keys, mask, notions = random_instance(kind, eps, rng)
            program = ScaledProgram(keys, set(keys), mask, notions)
            x, row_dual = program.solve(zero=False)
            s = x[program.s_col]
            if s >= 1e6:
                continue
            ref = max_entry_lp(keys, mask, notions)
            pi = pair_multipliers(program, row_dual, 1 / s)
            best = bound_from_multipliers(program, pi)
            assert best <= ref * (1 + REF_SLACK) and ref - best <= 1e-7 * ref
            noise = rng.random(pi.shape)
            for other in (pi * 2.0, pi * 0.5, pi * (1 + noise), pi + noise * pi.max(initial=0.0),
                          np.where(noise < 0.5, 0.0, pi), pi + 1e3 * noise, np.zeros_like(pi)):
                bound = bound_from_multipliers(program, other)
                assert 0.0 <= bound <= ref * (1 + REF_SLACK)
                assert bound <= best + 1e-9 * ref  # the duals' own π is (near) the best


def test_water_filling_without_multipliers_is_the_fully_capped_row():
    """With π = 0 only the rows bind: a row with an unmasked output costs nothing, the row of
    input 'd' (three outputs, all capped) needs max entry >= 1/3, so the bound is 1/3."""
    inputs = Domain.from_labels(["a", "b", "c", "d"])
    outputs = Domain.from_labels(["a", "b", "z"])
    rng = np.random.default_rng(1)
    p, q = Side("p", rng.dirichlet(np.ones(4))), Side("q", rng.dirichlet(np.ones(4)))
    program = ScaledProgram(["default"], {"default"}, off_diagonal_mask(inputs, outputs),
                            [DistP(0.3, [(p, q)])])
    bound = bound_from_multipliers(program, np.zeros((len(program.folds), 3)))
    assert 1 / 3 - 1e-14 <= bound <= 1 / 3  # 1/3 less the round-off margin


def test_the_exponential_bound_is_above_e_to_the_epsilon():
    eps = np.array([0.0, 1e-12, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 35.0, 123.456, 700.0])
    with localcontext() as ctx:
        ctx.prec = 60
        for e, upper in zip(eps, exp_upper(eps)):
            assert Decimal(float(upper)) >= Decimal(float(e)).exp()
            assert float(upper) <= np.exp(e) * (1 + 1e-15)
    assert exp_upper([0.0])[0] == 1.0


@pytest.mark.parametrize("name", ["categorical-chain", "bernoulli-couplet", "bernoulli-chain-6"])
def test_shipped_max_entry_problems_carry_a_proven_bound(name):
    result = load_problem(ROOT / "problems" / f"{name}.toml").solve()
    assert "Charnes–Cooper" in result.solver["name"]
    assert result.status == "optimal" and result.solver["bound_proven"] is True
    assert result.solver["gap"] <= 1e-6
    assert result.solver["bound"] <= result.objective



# ---------------------------------------------------------------------------------------------
# coupling mechanisms ("targets + expected loss")


def design_lp(lam, mu, row_weights, loss) -> float:
    """min Σ_x r_x Σ_y K[x, y] L[x, y] over row-stochastic K >= 0 with λK = μ, written on K
    directly (rows with λ_x = 0 included) and solved by SciPy's HiGHS."""
    n, m = loss.shape
    A_eq = np.vstack([np.kron(np.eye(n), np.ones(m)), np.kron(lam, np.eye(m))])
    res = linprog((row_weights[:, None] * loss).ravel(), A_eq=A_eq, b_eq=np.r_[np.ones(n), mu],
                  bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def sparse_dist(rng, size: int) -> np.ndarray:
    v = rng.dirichlet(np.ones(size))
    if rng.random() < 0.5:
        v[rng.random(size) < 0.3] = 0.0
    return v / v.sum() if v.sum() > 0 else np.eye(size)[0]


def random_loss(rng, n: int, m: int) -> np.ndarray:
    """|x − y| on a line (the North-West corner route), a random non-negative matrix, or one
    with negative entries (both through the network simplex)."""
    kind = rng.integers(3)
    if kind == 0:
        return np.abs(np.subtract.outer(np.arange(n), np.arange(m))).astype(float)
    loss = rng.random((n, m)) * 10.0 ** rng.integers(-3, 4)
    return loss - 0.3 * loss.max() if kind == 2 else loss


@pytest.mark.parametrize("seed", range(30))
def test_the_coupling_bound_is_proven_and_meets_the_independent_design_lp(seed):
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.privacy import Target

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 8)), int(rng.integers(2, 8))
    contexts = {f"c{i}": sparse_dist(rng, n) for i in range(int(rng.integers(1, 4)))}
    mu = sparse_dist(rng, m)
    w = rng.random(len(contexts)) + 0.1
    loss = random_loss(rng, n, m)
    rows = {s: w[i] * lam for i, (s, lam) in enumerate(contexts.items())}
    problem = Problem(Domain.from_size(n), ExpectedLoss(loss, rows), [Target(contexts, mu)],
                      outputs=Domain.from_size(m), contexts=contexts)
    result = problem.solve()
    assert result.solver["name"] == "coupling" and result.status == "optimal"
    assert result.solver["bound_proven"] is True
    ref = sum(design_lp(contexts[s], mu, rows[s], loss) for s in contexts)
    bound, scale = result.solver["bound"], np.abs(loss).max()
    assert bound <= ref + 1e-9 * scale  # SciPy's HiGHS meets λK = μ to its tolerance only
    assert ref - bound <= 1e-9 * scale
    assert result.objective == pytest.approx(ref, rel=1e-9, abs=1e-9 * scale)


def test_any_potentials_give_a_valid_coupling_bound():
    """proven_context_bound is weak duality for every g: random potentials, the transport
    potentials shifted or scaled, never exceed the independent optimum; the transport
    potentials reach it."""
    from mechdesign.solvers.coupling_targets import proven_context_bound
    from mechdesign.transport.coupling import coupling

    rng = np.random.default_rng(7)
    for _ in range(20):
        n, m = int(rng.integers(2, 7)), int(rng.integers(2, 7))
        lam, mu, loss = sparse_dist(rng, n), sparse_dist(rng, m), random_loss(rng, n, m)
        w = float(rng.random() + 0.5)
        ref = design_lp(lam, mu, w * lam, loss)
        tol = 1e-9 * max(np.abs(loss).max(), 1.0)
        _, certificate = coupling(lam, mu, loss, return_duals=True)
        best = proven_context_bound(lam, mu, w * lam, loss, w * certificate.v)
        assert best <= ref + tol and ref - best <= tol
        for g in (rng.normal(size=m) * np.abs(loss).max(), w * certificate.v + rng.normal(size=m),
                  2 * w * certificate.v, w * certificate.v + 5.0, np.zeros(m)):
            assert proven_context_bound(lam, mu, w * lam, loss, g) <= ref + tol


def test_the_bound_keeps_rows_weighted_off_the_context():
    """Row weights that only approximately equal w·λ (within the solver's 1e-12 test) and a
    context with an input of zero mass: the bound uses the weights as given."""
    from mechdesign.solvers.coupling_targets import proven_context_bound

    lam, mu = np.array([0.5, 0.0, 0.5]), np.array([0.2, 0.3, 0.5])
    loss = np.abs(np.subtract.outer(np.arange(3), np.arange(3))).astype(float)
    rows = lam * (1 + 1e-13)
    ref = design_lp(lam, mu, rows, loss)
    # by hand: input 0 sends 0.2 to 0 and 0.3 to 1 (cost 0.3), input 2 keeps 0.5: W1 = 0.3
    assert ref == pytest.approx(0.3 * (1 + 1e-13), rel=1e-12)
    # the potentials v = (−1, 0, 1) (slope 1 along the line) scaled by the weight 1 + 1e-13:
    # a = (0.5, 0, −0.5)·(1 + 1e-13), Σ μ g = 0.3·(1 + 1e-13)
    bound = proven_context_bound(lam, mu, rows, loss, (1 + 1e-13) * np.array([-1.0, 0.0, 1.0]))
    assert ref - 1e-14 <= bound <= ref  # less the round-off margins


@pytest.mark.parametrize("name", ["coupling-fig2", "coupling-approximate", "coupling-barycenter",
                                  "airports-coupling"])
def test_shipped_coupling_problems_carry_a_proven_bound(name):
    result = load_problem(ROOT / "problems" / f"{name}.toml").solve()
    assert result.status == "optimal" and result.solver["bound_proven"] is True
    assert result.solver["gap"] <= 1e-6 and result.solver["bound"] <= result.objective
    if name != "coupling-barycenter":  # a free target is the general LP's
        assert result.solver["name"] == "coupling"


def test_the_coupling_solver_stops_between_contexts_at_the_time_limit(monkeypatch):
    """Past the deadline the contexts not yet transported report the target as every row: the
    design is private (λK = μ), the status is time-limit, and the bound (potentials for the
    transported context, zero potentials for the others) stays below the independent optimum."""
    import time

    import mechdesign.transport.coupling as transport
    from mechdesign.core.objectives import ExpectedLoss
    from mechdesign.privacy import Target

    rng = np.random.default_rng(5)
    n = m = 6
    contexts = {f"c{i}": rng.dirichlet(np.ones(n)) for i in range(3)}
    mu, loss = rng.dirichlet(np.ones(m)), rng.random((n, m))
    problem = Problem(Domain.from_size(n), ExpectedLoss(loss, dict(contexts)), [Target(contexts, mu)],
                      outputs=Domain.from_size(m), contexts=contexts)
    exact = transport.coupling

    def slow(*args, **kwargs):  # the first transport outlasts the limit
        time.sleep(2.1)
        return exact(*args, **kwargs)

    monkeypatch.setattr(transport, "coupling", slow)
    result = problem.solve(time_limit=2.0)  # ample for what comes before the first transport
    assert result.status == "time-limit" and result.holds
    assert "1 of 3 contexts" in result.solver["path"][0]
    for s in ("c1", "c2"):
        assert np.allclose(result.mechanisms[s].matrix, np.tile(mu, (n, 1)))
        assert np.allclose(contexts[s] @ result.mechanisms[s].matrix, mu)
    ref = sum(design_lp(contexts[s], mu, contexts[s], loss) for s in contexts)
    assert result.solver["bound_proven"] is True
    assert result.solver["bound"] <= ref + 1e-9 < result.objective
    own = design_lp(contexts["c0"], mu, contexts["c0"], loss)
    first = (contexts["c0"][:, None] * result.mechanisms["c0"].matrix * loss).sum()
    assert first == pytest.approx(own, rel=1e-9)
