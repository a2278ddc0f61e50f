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


def tiled(inputs: int) -> bool:
    """Whether a chain of ``inputs`` has tiles below the diagonal of its coupling: the matrix
    products that :class:`ChainNewton` takes in single precision (with one tile, none)."""
    from mechdesign.solvers.metric_chain_kernels import CHAIN_TILE

    return inputs > CHAIN_TILE


class BlockSystem:
    """What the Newton systems of the interior point share: the weights they were built from
    (:meth:`weigh`), ``apply(v)`` (H_y⁻¹ v[:, y] for every output) and, from it,
    :meth:`apply_row` and :meth:`add_row`; :meth:`multiply`, H_y v[:, y] as a product."""

    def weigh(self, it) -> np.ndarray:
        """Keep and return the working rows' weights Λ/S; keep the bounds' μ/K too. Weights
        beyond the largest float (slacks that underflowed against their duals: an iterate that
        has left every scale a step could take) raise :class:`SolverDeclined`."""
        with np.errstate(over="ignore"):
            self.weights, self.bound_weights = np.divide(it.lam, it.S, out=it.rows.empty()), it.mu / it.K
        if not (np.isfinite(self.weights.max(initial=0.0)) and np.isfinite(self.bound_weights.max(initial=0.0))):
            raise SolverDeclined("the Newton weights Λ/S or μ/K overflowed: the iterate's slacks underflowed")
        return self.weights

    def multiply(self, rows, v: np.ndarray) -> np.ndarray:
        """H_y v[:, y] = Gᵀ diag(Λ/S) G v + (μ/K) v for every output y, as a (g, m) array."""
        weighted = rows.slack(v)
        weighted *= self.weights  # (in place: the slack is a reused row temporary)
        return rows.transpose(weighted) + self.bound_weights * v

    def apply(self, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def apply_row(self, du: np.ndarray) -> np.ndarray:
        """H_y⁻¹ du for every output y (one vector for all), as a (g, m) array."""
        return self.apply(np.repeat(du[:, None], self.bound_weights.shape[1], axis=1))

    def add_row(self, du: np.ndarray, out: np.ndarray) -> None:
        """out += H_y⁻¹ du for every output y, in place."""
        out += self.apply_row(du)


class ChainNewton(BlockSystem):
    """The Newton system at one iterate, for tridiagonal blocks: each block's bidiagonal
    Cholesky factor (of the block scaled to a unit diagonal), kept as the solves' coefficients,
    and the Cholesky factor of Σ_y H_y⁻¹; the same interface as the dense blocks' system. Its
    arrays are laid out (inputs, outputs), as the blocks are built
    (:mod:`~mechdesign.solvers.metric_chain_kernels`). With ``single`` the sum's tiles below the
    diagonal, its matrix products, are multiplied in single precision and added up in double
    (the blocks, their factors, the sum's Cholesky factor and every solve stay in double); a sum
    that overflowed raises :class:`SolverDeclined`, and the step is taken again in double."""

    def __init__(self, lp, it, single: bool = False):
        from mechdesign.solvers.metric_chain_kernels import (
            chain_cholesky,
            chain_inverse_sum,
            chain_solve_coefficients,
        )

        diagonal, off = it.rows.chain(self.weigh(it))  # (g, m), (g − 1, m)
        diagonal += self.bound_weights
        scale = 1.0 / np.sqrt(diagonal)
        off *= scale[:-1] * scale[1:]
        g, m = diagonal.shape
        diag, low = np.empty((g, m)), np.empty((g - 1, m))
        if not chain_cholesky(off, diag, low):
            raise SolverDeclined("the interior-point system lost definiteness")
        self.coefficients = chain_solve_coefficients(diag, low, scale)
        total = np.zeros((g, g))
        chain_inverse_sum(*self.coefficients[:2], total, single=single)
        if single and not np.isfinite(total).all():
            raise SolverDeclined("the interior-point system overflowed single precision")
        self.factor = shifted_cholesky(total)  # (its lower triangle, which alone the factorisation reads)

    def apply(self, v: np.ndarray) -> np.ndarray:
        """H_y⁻¹ v[:, y] for every output y, as a (g, m) array."""
        from mechdesign.solvers.metric_chain_kernels import chain_solves

        out = np.empty_like(self.coefficients[0])
        chain_solves(*self.coefficients, np.ascontiguousarray(v), out)
        return out

    def add_row(self, du: np.ndarray, out: np.ndarray) -> None:
        """out += H_y⁻¹ du for every output y, in one compiled pass down and up the rows (the
        one column solved for every output, never repeated into a (g, m) array)."""
        from mechdesign.solvers.metric_chain_kernels import chain_solves

        chain_solves(*self.coefficients, np.ascontiguousarray(du[:, None]), out, True)
