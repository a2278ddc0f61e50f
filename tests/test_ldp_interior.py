"""The structured interior-point method for the ε-LDP design LP against column generation and
the LP written out in full across ε, priors and losses, and its bound and privacy."""

import math

import numpy as np
import pytest

from mechdesign.privacy import LDP
from mechdesign.solvers.column_generation import LDPCone, solve_by_columns
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import solve_by_interior_point
from tests.reference_lp import ldp_lp


def _cost(kind: str, n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = np.arange(n)[:, None], np.arange(k)[None, :] * (n - 1) / max(k - 1, 1)
    prior = {"uniform": np.full(n, 1.0 / n), "dirichlet": rng.dirichlet(np.ones(n)),
             "zipf": (1.0 / np.arange(1, n + 1) ** 1.1)}[kind.split("-")[0]]
    prior = prior / prior.sum()
    loss = {"metric": np.abs(x - y), "square": (x - y) ** 2, "random": rng.random((n, k))}[kind.split("-")[1]]
    return prior[:, None] * loss


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("kind,n,k", [("uniform-metric", 15, 15), ("dirichlet-random", 12, 12),
                                       ("zipf-square", 14, 14), ("uniform-random", 10, 16),
                                       ("zipf-random", 13, 13)])
def test_agrees_with_column_generation_and_the_plain_lp(epsilon, kind, n, k):
    cost = _cost(kind, n, k, seed=int(10 * epsilon) + n)
    found = solve_by_interior_point(cost, epsilon)
    exact = solve_by_columns(cost, LDPCone(n, epsilon))
    plain = ldp_lp(cost, epsilon)
    assert exact.objective == pytest.approx(plain, rel=1e-7, abs=1e-9)
    assert found.objective == pytest.approx(plain, rel=1e-7, abs=1e-9)
    assert found.bound <= plain + 1e-12
    K = found.matrix
    assert np.allclose(K.sum(axis=1), 1.0, atol=1e-12) and (K >= 0).all()
    ratio = K.max(axis=0) / K.min(axis=0)  # every column carries mass at every input
    assert (ratio <= math.exp(epsilon) * (1 + 1e-9)).all()


def test_declines_epsilon_outside_its_range():
    with pytest.raises(SolverDeclined):
        solve_by_interior_point(np.ones((3, 3)), 25.0)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_coincident_inputs_identical_rows_of_the_loss(epsilon):
    rng = np.random.default_rng(3)
    loss = rng.random((5, 7))
    loss = np.vstack([loss, loss[:2], loss[:1]])  # inputs 5, 6 repeat 0, 1 and input 7 repeats 0
    cost = rng.dirichlet(np.ones(8))[:, None] * loss
    found = solve_by_interior_point(cost, epsilon)
    plain = ldp_lp(cost, epsilon)
    assert found.objective == pytest.approx(plain, rel=1e-7, abs=1e-9)
    assert found.bound <= plain + 1e-12
    assert LDP(epsilon).level(found.matrix) <= epsilon * (1 + 1e-9)
