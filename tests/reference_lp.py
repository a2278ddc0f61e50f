"""The design LP written out in full, independently of the package: every ordered pair of inputs
and every output, solved by scipy.optimize.linprog (HiGHS at tight tolerances)."""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def all_pairs_lp(cost: np.ndarray, D: np.ndarray, epsilon: float) -> float:
    """min Σ C K over row-stochastic K with K[x,y] <= e^{ε d(x,x')} K[x',y] for every ordered
    pair x ≠ x' and output y (no reduction); ε-LDP is D = 1 off the diagonal."""
    n = cost.shape[0]
    x, z = np.nonzero(~np.eye(n, dtype=bool))  # the ordered pairs
    return pairs_lp(cost, x, z, np.exp(epsilon * np.asarray(D, dtype=float)[x, z]))


def pairs_lp(cost: np.ndarray, x: np.ndarray, z: np.ndarray, ratio: np.ndarray) -> float:
    """min Σ C K over row-stochastic K >= 0 with K[x_k, y] <= ratio_k K[z_k, y] for the given
    ordered pairs k and every output y."""
    n, m = cost.shape
    y = np.arange(m)
    pairs, outputs = np.repeat(np.arange(x.size), m), np.tile(y, x.size)
    rows = np.concatenate([pairs * m + outputs] * 2)
    cols = np.concatenate([np.repeat(x, m) * m + outputs, np.repeat(z, m) * m + outputs])
    vals = np.concatenate([np.ones(pairs.size), -np.repeat(ratio, m)])
    count = x.size * m
    A_ub = sp.csr_matrix((vals, (rows, cols)), shape=(count, n * m))
    A_eq = sp.kron(sp.eye(n), np.ones((1, m))).tocsr()
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=np.zeros(count), A_eq=A_eq, b_eq=np.ones(n),
                  bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


def ldp_lp(cost: np.ndarray, epsilon: float) -> float:
    """:func:`all_pairs_lp` under ε-LDP (every pair of inputs at distance 1)."""
    n = cost.shape[0]
    return all_pairs_lp(cost, np.ones((n, n)), epsilon)

