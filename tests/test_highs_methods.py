"""The HiGHS methods of the lazy LPs: the interior point and the dual simplex racing on a first
solve. Each optimum is checked against scipy's own HiGHS on the same LP."""

from __future__ import annotations

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mechdesign.solvers.highs_methods import Method, race_methods
from mechdesign.solvers.highs_model import quiet_model


def _transport(seed: int, n: int = 30):
    """A transport LP (rows: supplies, then demands), as highspy's model and as arrays."""
    rng = np.random.default_rng(seed)
    cost = rng.uniform(0, 1, (n, n))
    supply = rng.dirichlet(np.ones(n))
    demand = rng.dirichlet(np.ones(n))
    rows = sp.vstack([sp.kron(sp.eye(n), np.ones((1, n))), sp.kron(np.ones((1, n)), sp.eye(n))]).tocsr()
    rhs = np.concatenate([supply, demand])
    h = quiet_model(warm=True)
    size = n * n
    h.addCols(size, cost.ravel(), np.zeros(size), np.full(size, highspy.kHighsInf), 0,
              np.zeros(size, dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
    h.addRows(rows.shape[0], rhs, rhs, rows.nnz, rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32),
              rows.data)
    reference = linprog(cost.ravel(), A_eq=rows, b_eq=rhs, bounds=(0, None), method="highs")
    assert reference.status == 0
    return h, reference.fun


@pytest.mark.parametrize("seed", [0, 1])
def test_racing_methods_end_at_the_optimum_and_leave_a_model_to_go_on_with(seed):
    h, optimum = _transport(seed)
    method = Method()
    model, solved = race_methods(h, method)
    assert solved
    assert model.getInfo().objective_function_value == pytest.approx(optimum, abs=1e-9)
    # the next solve is the warm dual simplex; the winner's time is what it is measured against
    assert method.interior is False and sum(t is not None for t in method.seconds.values()) == 1
    assert model.getOptionValue("solver")[1] == "simplex" and model.getOptionValue("presolve")[1] == "off"
    # a row added to the winner's model re-solves from its basis to the optimum of the larger LP
    n = 30
    model.addRow(-highspy.kHighsInf, 0.0, 2, np.array([0, n + 1], dtype=np.int32), np.array([1.0, -1.0]))
    model.run()
    assert model.getModelStatus() == highspy.HighsModelStatus.kOptimal
    again, _ = _transport(seed)
    again.addRow(-highspy.kHighsInf, 0.0, 2, np.array([0, n + 1], dtype=np.int32), np.array([1.0, -1.0]))
    again.run()
    assert model.getInfo().objective_function_value == pytest.approx(again.getInfo().objective_function_value,
                                                                     abs=1e-9)


def test_without_two_threads_the_chosen_method_runs_alone(monkeypatch):
    from mechdesign.solvers import race

    monkeypatch.setattr(race, "can_race", lambda methods: False)
    h, optimum = _transport(2)
    model, solved = race_methods(h, Method())
    assert solved and model is h
    assert h.getInfo().objective_function_value == pytest.approx(optimum, abs=1e-9)


def test_a_method_that_ends_without_an_optimum_leaves_the_race_to_the_other():
    # the interior point given no iterations ends without an optimum; the simplex's copy wins
    h, optimum = _transport(3)
    h.setOptionValue("ipm_iteration_limit", 0)
    model, solved = race_methods(h, Method())
    assert solved and model is not h
    assert model.getInfo().objective_function_value == pytest.approx(optimum, abs=1e-9)
