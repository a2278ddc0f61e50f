"""The d-privacy interior point's Newton system with dense blocks (any metric off the line):
one |X| × |X| block H_y = Gᵀ diag(Λ/S) G + diag(μ/K) per output, each scaled to a unit diagonal
and factorised, and the rows' coupling Σ_y H_y⁻¹ (see :mod:`metric_interior`). The compiled
passes that assemble, factorise and invert the blocks are in :mod:`metric_interior_kernels`."""

from __future__ import annotations

import numpy as np

from mechdesign.core.subnormals import flushed_subnormals
from mechdesign.core.threads import split
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.ldp_interior import shifted_cholesky
from mechdesign.solvers.metric_chain import BlockSystem

#: the outputs' blocks add their inverses into this many sums at most, one per chunk of
#: consecutive outputs, and the threads take whole chunks: the sum is then the same whatever
#: the threads (in single precision a last-bit difference in it changes how the next blocks
#: round: two thread counts' iterates parted by 1e-4 within eleven steps)
SUM_CHUNKS = 16


class DenseNewton(BlockSystem):
    """The Newton system at one iteration: every output's block H_y scaled to a unit diagonal,
    D_y H_y D_y with D_y = diag(H_y)^-1/2, with its Cholesky factor (in single precision with
    ``single``: see :data:`~mechdesign.solvers.metric_interior.SINGLE_PRECISION_GAP`), and the
    Cholesky factor of Σ_y H_y⁻¹, shared by the predictor and the correctors (over every output
    of the orbits when the LP keeps one output per orbit: :mod:`metric_orbits`); ``scale``
    (m, g) holds each D_y's diagonal."""

    def __init__(self, lp, it, single: bool = False):
        # the diagonal spans many orders of magnitude near the optimum: factorise D H D, whose
        # diagonal is 1 (the factor's error is then relative to each entry's own scale, not to
        # the largest)
        weights = self.weigh(it)  # the rows' weights Λ/S
        rows, orbits = it.rows, lp.orbits
        self.factors, self.scale, inverse_sum = factors_and_inverse_sum(
            weights, rows.a, rows.b, rows.c, rows.out, self.bound_weights, single=single,
            block_weights=None if orbits is None else 1.0 / orbits.stabiliser)
        self.factor = shifted_cholesky(inverse_sum if orbits is None else orbits.coupling(inverse_sum))

    def apply(self, v: np.ndarray) -> np.ndarray:
        """H_y⁻¹ v[:, y] = D_y (D_y H_y D_y)⁻¹ D_y v[:, y] for every output y, as a (g, m) array, by
        the scaled blocks' factors (the inverses, whose products are not backward stable, would
        leave the rows' sums drifting near the optimum), ranges of outputs on several threads."""
        from mechdesign.solvers.metric_interior_kernels import cholesky_solves

        out = v * self.scale.T
        split(lambda lo, hi: cholesky_solves(self.factors, out, lo, hi), out.shape[1])
        return out * self.scale.T


def factors_and_inverse_sum(weights: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, out: np.ndarray,
                             bound_weights: np.ndarray, threads: int | None = None, single: bool = False,
                             block_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the blocks H_y = Gᵀ diag(``weights``) G + diag(``bound_weights[:, y]``) over the rows
    (a, b, c, ``out``) of each output y: (the Cholesky factors of the scaled blocks D_y H_y D_y,
    each in the lower triangle; D_y = diag(H_y)^-1/2 as an (m, g) array; Σ_y H_y⁻¹, each term
    times ``block_weights[y]`` when given). Ranges of
    outputs run on ``threads`` threads (default :func:`solver_threads`), each assembling,
    scaling, factorising and inverting its blocks one at a time into their factors and adding
    the inverses to the sums of their chunks of outputs (neither the unscaled blocks nor their
    inverses are ever held as a stack); the chunks (:data:`SUM_CHUNKS` at most) do not depend on
    the threads, so neither does the sum, to the last bit. With ``single`` the factors and
    inverses are computed in single precision (the blocks are assembled and the sums accumulated
    in double), with subnormal numbers flushed to zero
    (:func:`~mechdesign.core.subnormals.flushed_subnormals`: a few subnormals in the factors made
    them four times slower than in double precision). A scaled block that round-off has left
    indefinite is factorised with a growing diagonal shift, as :func:`shifted_cholesky` does,
    in the same pass; raises
    :class:`SolverDeclined` when no shift helps or an inverse fails."""
    from mechdesign.solvers.metric_interior_kernels import factor_and_add_inverses, rows_by_output

    g, m = bound_weights.shape
    block_weights = np.ones(m) if block_weights is None else np.ascontiguousarray(block_weights, dtype=float)
    order, start = rows_by_output(out, m)
    bound_weights = np.ascontiguousarray(bound_weights)
    scale, factors = np.empty((m, g)), np.empty((m, g, g), dtype=np.float32 if single else np.float64)
    chunk = -(-m // SUM_CHUNKS)
    totals = np.zeros((-(-m // chunk), g, g))

    def work(first: int, last: int):
        with flushed_subnormals(single):  # (in each thread: the modes are the thread's own)
            return factor_and_add_inverses(weights, a, b, c, order, start, bound_weights, first * chunk,
                                           min(last * chunk, m), scale, factors, totals, chunk, block_weights)

    if any(stage != 0 for _, stage in split(work, totals.shape[0], threads)):
        raise SolverDeclined("the interior-point system lost definiteness")
    total = totals.sum(axis=0)
    return factors, scale, total + np.tril(total, -1).T
