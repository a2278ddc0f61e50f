"""The d-privacy interior point's Newton system when every pair joins neighbours in the inputs'
order, as on a line (points sorted; each point's privacy pairs are its two neighbours): each
output's block H_y = Gᵀ diag(Λ/S) G + diag(μ/K) is then tridiagonal.

Scaled to a unit diagonal (as the dense blocks are), each block is factorised in O(|X|) and
solved in O(|X|); the rows' coupling Σ_y H_y⁻¹ is summed column by column from the factors
(below the diagonal, each column of the inverse is a running product), in O(|X|²) per output.
An iteration is O(|Y| |X|²) instead of the dense blocks' O(|Y| |X|³), and holds O(|Y| |X|)
numbers besides the coupling's |X|²."""

from __future__ import annotations

import numpy as np

from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import shifted_cholesky


def is_chain(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every pair (a, b) joins neighbours in index order (|a − b| = 1)."""
    return a.size > 0 and bool(np.all(np.abs(a - b) == 1))


class BlockSystem:
    """What the Newton systems of the interior point share: the weights they were built from
    (:meth:`weigh`), ``scale`` (m, g), the blocks' diagonal scaling, ``apply(v)`` (H_y⁻¹ v[:, y]
    for every output) and, from it, :meth:`apply_row` and :meth:`add_row`; :meth:`multiply`,
    H_y v[:, y] as a product."""

    scale: np.ndarray

    def weigh(self, it) -> np.ndarray:
        """Keep and return the working rows' weights Λ/S; keep the bounds' μ/K too."""
        self.weights, self.bound_weights = it.lam / it.S, it.mu / it.K
        return self.weights

    def multiply(self, rows, v: np.ndarray) -> np.ndarray:
        """H_y v[:, y] = Gᵀ diag(Λ/S) G v + (μ/K) v for every output y, as a (g, m) array."""
        return rows.transpose(self.weights * rows.slack(v)) + self.bound_weights * v

    def apply(self, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply_row(self, du: np.ndarray) -> np.ndarray:
        """H_y⁻¹ du for every output y (one vector for all), as a (g, m) array."""
        return self.apply(np.repeat(du[:, None], self.scale.shape[0], axis=1))

    def add_row(self, du: np.ndarray, out: np.ndarray) -> None:
        """out += H_y⁻¹ du for every output y, in place."""
        out += self.apply_row(du)


class ChainNewton(BlockSystem):
    """The Newton system at one iterate, for tridiagonal blocks: each block's bidiagonal
    Cholesky factor (of the block scaled to a unit diagonal) and the Cholesky factor of
    Σ_y H_y⁻¹; the same interface as the dense blocks' system."""

    def __init__(self, lp, it):
        from mechdesign.solvers.metric_interior_kernels import chain_cholesky, chain_inverse_sum

        diagonal, off = it.rows.chain(self.weigh(it))  # (m, g), (m, g − 1)
        diagonal += self.bound_weights.T
        self.scale = 1.0 / np.sqrt(diagonal)
        off *= self.scale[:, :-1] * self.scale[:, 1:]
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
        self.scale_rows = np.ascontiguousarray(self.scale.T)

    def apply(self, v: np.ndarray) -> np.ndarray:
        """H_y⁻¹ v[:, y] for every output y, as a (g, m) array."""
        from mechdesign.solvers.metric_interior_kernels import chain_solves

        out = np.empty_like(self.scale_rows)
        chain_solves(self.diag, self.low, self.scale_rows, np.ascontiguousarray(v), out)
        return out

    def add_row(self, du: np.ndarray, out: np.ndarray) -> None:
        """out += H_y⁻¹ du for every output y, in one compiled pass down and up the rows."""
        from mechdesign.solvers.metric_interior_kernels import chain_solves

        chain_solves(self.diag, self.low, self.scale_rows, np.ascontiguousarray(du[:, None]), out, True)
