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


def _pair_rows(x: np.ndarray, z: np.ndarray, ratio: np.ndarray, n: int, m: int, width: int) -> sp.csr_matrix:
    """The rows K[x_k, y] − ratio_k K[z_k, y] (<= 0) over ``width`` columns, K's first, row-major."""
    pairs, outputs = np.repeat(np.arange(x.size), m), np.tile(np.arange(m), x.size)
    rows = np.concatenate([pairs * m + outputs] * 2)
    cols = np.concatenate([np.repeat(x, m) * m + outputs, np.repeat(z, m) * m + outputs])
    vals = np.concatenate([np.ones(pairs.size), -np.repeat(ratio, m)])
    return sp.csr_matrix((vals, (rows, cols)), shape=(x.size * m, width))


TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def pairs_lp(cost: np.ndarray, x: np.ndarray, z: np.ndarray, ratio: np.ndarray) -> float:
    """min Σ C K over row-stochastic K >= 0 with K[x_k, y] <= ratio_k K[z_k, y] for the given
    ordered pairs k and every output y."""
    n, m = cost.shape
    A_ub = _pair_rows(x, z, ratio, n, m, n * m)
    A_eq = sp.kron(sp.eye(n), np.ones((1, m))).tocsr()
    res = linprog(cost.ravel(), A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=np.ones(n),
                  bounds=(0, None), method="highs", options=TIGHT)
    assert res.status == 0
    return float(res.fun)


def minimax_pairs_lp(loss: np.ndarray, x: np.ndarray, z: np.ndarray, ratio: np.ndarray, weights=None) -> float:
    """min t over row-stochastic K >= 0 with W ℓ <= t, ℓ_x = Σ_y L[x, y] K[x, y] (W the identity:
    every input's loss, a worst-case loss; or rows of priors, a robust loss over finitely many),
    and K[x_k, y] <= ratio_k K[z_k, y] for the given ordered pairs k and every output y."""
    n, m = loss.shape
    weights = np.eye(n) if weights is None else np.asarray(weights)
    privacy = _pair_rows(x, z, ratio, n, m, n * m + 1)
    losses = sp.block_diag([loss[i][None, :] for i in range(n)])
    epigraph = sp.hstack([sp.csr_matrix(weights) @ losses, -np.ones((weights.shape[0], 1))])
    A_ub = sp.vstack([privacy, epigraph]).tocsr()
    A_eq = sp.hstack([sp.kron(sp.eye(n), np.ones((1, m))), sp.csr_matrix((n, 1))]).tocsr()
    cost = np.zeros(n * m + 1)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=np.ones(n),
                  bounds=[(0, None)] * (n * m) + [(None, None)], method="highs", options=TIGHT)
    assert res.status == 0
    return float(res.fun)


def all_pairs_minimax_lp(loss: np.ndarray, D: np.ndarray, epsilon: float, weights=None) -> float:
    """:func:`minimax_pairs_lp` over every ordered pair x ≠ x' (no reduction)."""
    n = loss.shape[0]
    x, z = np.nonzero(~np.eye(n, dtype=bool))
    return minimax_pairs_lp(loss, x, z, np.exp(epsilon * np.asarray(D, dtype=float)[x, z]), weights)


def ldp_lp(cost: np.ndarray, epsilon: float) -> float:
    """:func:`all_pairs_lp` under ε-LDP (every pair of inputs at distance 1)."""
    n = cost.shape[0]
    return all_pairs_lp(cost, np.ones((n, n)), epsilon)

