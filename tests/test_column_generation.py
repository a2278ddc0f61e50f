"""Output-column generation for ε-LDP gives the plain LP's optimum, with a dual bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mechdesign
from mechdesign import Domain, Problem
from mechdesign.core.objectives import ExpectedLoss
from mechdesign.privacy import LDP
from mechdesign.solvers.column_generation import LDPCone, solve_by_columns
from tests.strategies import loss_matrices, probability_vectors


@st.composite
def priors_and_losses(draw):
    """A prior on n inputs and an n x m matrix of positive losses of scale 1 or 10. Losses
    stay positive, as a continuous draw keeps them: with zeros the optimum can be 0, where
    the plain LP's relative optimality gap is undefined and it reports a failure."""
    n, m = draw(st.integers(2, 12)), draw(st.integers(2, 12))
    scale = draw(st.sampled_from([1.0, 10.0]))
    return (draw(probability_vectors(n)),
            draw(loss_matrices(n, m, scale, positive=True)))


@settings(max_examples=30, deadline=None)
@given(priors_and_losses(), st.floats(0.0, 4.0))
def test_column_generation_equals_the_full_envelope_lp(case, eps):
    prior, loss = case
    n, m = loss.shape
    problem = Problem(inputs=Domain.from_size(n), outputs=Domain.from_size(m), privacy=[LDP(eps)],
                      objective=ExpectedLoss(loss, {"default": prior}))
    by_columns = problem.solve()  # "auto": the special solver
    assert by_columns.solver["name"] == "HiGHS column generation + interior point"
    full = problem.solve(solver="highs")  # the plain envelope LP through cvxpy
    assert by_columns.status == full.status == "optimal"
    assert by_columns.objective == pytest.approx(full.objective, rel=1e-7, abs=1e-10)
    assert by_columns.solver["bound"] <= by_columns.objective + 1e-9
    assert mechdesign.audit(by_columns.mechanism, LDP(eps)).holds


def test_per_context_ldp_solves_each_context_and_sums_objectives():
    rng = np.random.default_rng(7)
    n = 6
    contexts = {"a": rng.dirichlet(np.ones(n)), "b": rng.dirichlet(np.ones(n))}
    loss = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    weights = {"a": 0.25 * contexts["a"], "b": 0.75 * contexts["b"]}
    problem = Problem(inputs=Domain.from_size(n), contexts=contexts, privacy=[LDP(0.7)],
                      objective=ExpectedLoss(loss, weights))
    ours = problem.solve()
    full = problem.solve(solver="highs")
    assert ours.solver["name"] == "HiGHS column generation + interior point"
    assert ours.objective == pytest.approx(full.objective, rel=1e-8)
    assert set(ours.mechanisms) == {"a", "b"}


def test_ldp_optimum_on_an_ordered_domain_uses_few_outputs():
    # Kairouz–Oh–Viswanath: staircase optima; at ε = 1 a 60-value problem needs few outputs,
    # which is what keeps the master small
    k = 60
    x = np.arange(k)
    cost = np.random.default_rng(0).dirichlet(np.ones(k))[:, None] * np.abs(x[:, None] - x[None, :])
    found = solve_by_columns(cost, LDPCone(k, 1.0))
    used = (found.matrix.sum(axis=0) > 1e-12).sum()
    assert used <= 10
    assert found.columns < k
    assert found.bound == pytest.approx(found.objective, rel=1e-9)


def test_batch_grows_when_the_optimum_needs_every_output():
    # 0-1 loss, uniform prior: k-ary RR is optimal with value (k − 1)/(k − 1 + e^ε) and uses all
    # k outputs; the batch doubles while every new column is used, so the rounds stay far below
    # k (one column per round would take k rounds)
    k, eps = 40, 1.0
    cost = (1 - np.eye(k)) / k
    found = solve_by_columns(cost, LDPCone(k, eps))
    assert found.objective == pytest.approx((k - 1) / (k - 1 + np.exp(eps)), rel=1e-9)
    assert found.columns == k
    assert found.rounds <= 12


class _TolerantSolution:
    """A HiGHS model whose solutions carry what its primal feasibility tolerance allows: in
    every output block with m_y = 0, z_0y = 1.9e-14 (a column 0 beside 1.9e-14, as a loaded
    run returned once)."""

    def __init__(self, h, width: int):
        self._h, self._width = h, width

    def __getattr__(self, name):
        return getattr(self._h, name)

    def getSolution(self):
        solution = self._h.getSolution()
        values = np.array(solution.col_value)
        blocks = values.reshape(-1, self._width)
        blocks[blocks[:, -1] == 0.0, 0] = 1.9e-14
        solution.col_value = values.tolist()
        return solution


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_a_master_solution_outside_the_cone_gives_a_private_design(epsilon):
    from mechdesign.solvers.column_generation import ColumnRounds

    rng = np.random.default_rng(7)
    n, k = 9, 11
    cost = rng.dirichlet(np.ones(n))[:, None] * np.abs(np.arange(n)[:, None] - np.arange(k)[None, :])
    run = ColumnRounds(cost, LDPCone(n, epsilon), batch=k, initial=list(range(k)))
    run.master.h = _TolerantSolution(run.master.h, run.master.width)
    run.advance()
    design = run.design()
    blocks = np.asarray(run.master.h.getSolution().col_value).reshape(-1, run.master.width)
    assert (blocks[:, -1] == 0.0).any()  # some output unused by the master: its column was bent
    assert mechdesign.audit(design, LDP(epsilon)).holds
    np.testing.assert_allclose(design.sum(axis=1), 1.0, atol=1e-12)
    assert run.value == pytest.approx(float((cost * design).sum()), rel=1e-15)
