"""The d-privacy interior point's Newton system when every pair joins neighbours in the inputs'
order, as on a line (points sorted; each point's privacy pairs are its two neighbours): each
output's block H_y = Gᵀ diag(Λ/S) G + diag(μ/K) is then tridiagonal.

Scaled to a unit diagonal (as the dense blocks are), each block is factorised in O(|X|) and
solved in O(|X|); the rows' coupling Σ_y H_y⁻¹ is summed column by column from the factors
(below the diagonal, each column of the inverse is a running product), in O(|X|²) per output. An iteration is O(|Y| |X|²) instead of the dense blocks' O(|Y| |X|³), and
holds O(|Y| |X|) numbers besides the coupling's |X|²."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import shifted_cholesky


def is_chain(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every pair (a, b) joins neighbours in index order (|a − b| = 1)."""
    return a.size > 0 and bool(np.all(np.abs(a - b) == 1))


def chain_maps(lp) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The linear maps from the pairs' weights Λ/S to the blocks' diagonals (|X| rows) and to
    their off-diagonals (|X| − 1 rows, entry k joining inputs k and k + 1)."""
    g, p = lp.cost.shape[0], lp.a.size
    pairs = np.arange(p)
    diagonal = sp.csr_matrix((np.concatenate([np.ones(p), lp.coef ** 2]),
                              (np.concatenate([lp.a, lp.b]), np.concatenate([pairs, pairs]))), shape=(g, p))
    off = sp.csr_matrix((-lp.coef, (np.minimum(lp.a, lp.b), pairs)), shape=(g - 1, p))
    return diagonal, off


class BlockSystem:
    """What the Newton systems of the interior point share: ``scale`` (m, g), the blocks'
    diagonal scaling, ``apply(v)`` (H_y⁻¹ v[:, y] for every output) and, from it,
    :meth:`apply_row`."""

    scale: np.ndarray

    def apply(self, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply_row(self, du: np.ndarray) -> np.ndarray:
        """H_y⁻¹ du for every output y (one vector for all), as a (g, m) array."""
        return self.apply(np.repeat(du[:, None], self.scale.shape[0], axis=1))


class ChainNewton(BlockSystem):
    """The Newton system at one iterate, for tridiagonal blocks: each block's bidiagonal
    Cholesky factor (of the block scaled to a unit diagonal) and the Cholesky factor of
    Σ_y H_y⁻¹; the same interface as the dense blocks' system."""

    def __init__(self, lp, it):
        from mechdesign.solvers.metric_interior_kernels import chain_cholesky, chain_inverse_sum

        to_diagonal, to_off = lp.chain_maps
        weights = it.lam / it.S
        diagonal = (to_diagonal @ weights + it.mu / it.K).T  # (m, g)
        self.scale = 1.0 / np.sqrt(diagonal)
        off = np.ascontiguousarray((to_off @ weights).T) * self.scale[:, :-1] * self.scale[:, 1:]
        m, g = diagonal.shape
        self.diag, self.low = np.empty((m, g)), np.empty((m, g - 1))
        if not chain_cholesky(off, self.diag, self.low):
            raise SolverDeclined("the interior-point system lost definiteness")
        total = np.zeros((g, g))
        chain_inverse_sum(self.diag, self.low, self.scale, total)
        total = np.tril(total)
        self.factor = shifted_cholesky(total + np.tril(total, -1).T)
        # the solves run with the outputs innermost
        self.diag, self.low = np.ascontiguousarray(self.diag.T), np.ascontiguousarray(self.low.T)

    def apply(self, v: np.ndarray) -> np.ndarray:
        """H_y⁻¹ v[:, y] for every output y, as a (g, m) array."""
        from mechdesign.solvers.metric_interior_kernels import chain_solves

        out = v * self.scale.T
        chain_solves(self.diag, self.low, out)
        return out * self.scale.T
