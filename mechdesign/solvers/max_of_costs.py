"""Objectives that are the largest of a few linear costs, as the LP with lazy pair rows takes them.

A worst-case loss max_x Σ_y K[x, y] L[x, y] and a robust expected loss over finitely many priors
max_i Σ_x p_i[x] Σ_y K[x, y] L[x, y] are both max_r ⟨R_r, K⟩ for cost matrices R_r: one per input
(row x of L, zero elsewhere) or one per prior (L weighted by the prior's rows). A linear program
minimises such a maximum through its epigraph: a variable t of cost 1 and the rows
⟨R_r, K⟩ − t <= 0 (:class:`~mechdesign.solvers.lazy_pairs.PairRowsModel`).

:class:`MaxOfCosts` holds the R_r as the rows of a sparse matrix over the entries of K (row-major)
and gives what the lazy LP needs besides: the value of a design, a lower bound on the optimum
without privacy, the best data-independent design, and the error bound of scaling the costs.
A sum of costs (an expected loss) stays a plain |X| × |Y| array; :func:`value_of`,
:func:`least_value` and :func:`scaling_error` take either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mechdesign.core.objectives import ExpectedLoss, WorstCaseLoss, least_maximum_row
from mechdesign.core.prior_sets import FinitePriors
from mechdesign.core.robust_loss import RobustExpectedLoss
from mechdesign.core.setting import DEFAULT

#: the unit round-off u of IEEE-754 double precision (round to nearest)
UNIT_ROUNDOFF = np.finfo(float).eps / 2


@dataclass(frozen=True)
class MaxOfCosts:
    """max_r ⟨R_r, K⟩ over |X| × |Y| matrices K; ``rows`` is the (r, |X|·|Y|) matrix whose row r
    is R_r flattened row by row."""

    rows: sp.csr_matrix
    shape: tuple[int, int]

    def __truediv__(self, scale: float) -> MaxOfCosts:
        """The same costs divided by ``scale`` entry by entry (the sparsity pattern kept)."""
        rows = self.rows.copy()
        rows.data = rows.data / scale
        return MaxOfCosts(rows, self.shape)

    def values(self, k: np.ndarray) -> np.ndarray:
        """⟨R_r, K⟩ for every r."""
        return self.rows @ np.asarray(k, dtype=float).ravel()

    def value(self, k: np.ndarray) -> float:
        return float(self.values(k).max())

    def _per_block(self, reduce) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``reduce`` over the outputs of every (cost r, input x) block that stores an entry:
        (r of each block, the reduced value, how many entries it stores)."""
        coo = self.rows.tocoo()
        n, m = self.shape
        block = coo.row.astype(np.int64) * n + coo.col // m
        order = np.argsort(block, kind="stable")
        block, data = block[order], coo.data[order]
        starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]]) if block.size else np.array([], int)
        reduced = reduce.reduceat(data, starts) if block.size else np.array([])
        counts = np.diff(np.append(starts, block.size))
        return block[starts] // n, reduced, counts

    def least(self) -> float:
        """max_r Σ_x min_y R_r[x, y]: every row-stochastic K has ⟨R_r, K⟩ at least this sum, so the
        optimum is at least the largest; each sum lowered past its round-off (a sum of b terms
        is off by at most (b − 1)u of their magnitudes, u the unit round-off)."""
        r, lowest, counts = self._per_block(np.minimum)
        lowest = np.where(counts < self.shape[1], np.minimum(lowest, 0.0), lowest)  # unstored: 0
        costs = self.rows.shape[0]
        if not costs:
            return 0.0
        sums = np.bincount(r, lowest, minlength=costs)
        blocks = np.bincount(r, minlength=costs)
        sizes = np.bincount(r, np.abs(lowest), minlength=costs)
        return float((sums - 2 * (blocks + 1) * UNIT_ROUNDOFF * sizes).max())

    def largest_row_sum(self) -> float:
        """max_r Σ_x max_y |R_r[x, y]|: how far the maximum can move when every entry moves by
        at most its own size."""
        r, largest, _ = self._per_block(np.maximum)
        sums = np.bincount(r, np.abs(largest), minlength=self.rows.shape[0]) if r.size else np.zeros(1)
        return float(sums.max())

    def constant_design(self) -> tuple[np.ndarray, float]:
        """The data-independent design of least maximum (:func:`~mechdesign.core.objectives.
        least_maximum_row` of the totals Σ_x R_r[x, y]), or the best single output when HiGHS
        does not solve that LP; (K, its value)."""
        n, m = self.shape
        columns = sp.csr_matrix((np.ones(n * m), (np.arange(n * m), np.tile(np.arange(m), n))), shape=(n * m, m))
        totals = np.asarray((self.rows @ columns).todense())  # (r, |Y|): Σ_x R_r[x, y]
        row = least_maximum_row(totals)
        if row is None:
            row = np.eye(m)[int(np.argmin(totals.max(axis=0)))]
        design = np.tile(row, (n, 1))
        return design, self.value(design)


def max_of_costs(objective, keys: list[str]) -> MaxOfCosts | None:
    """The costs R_r of a worst-case loss over one shared mechanism (one per input) or of a
    robust expected loss over finitely many priors (one per prior); None for any other
    objective."""
    if keys != [DEFAULT]:
        return None
    if isinstance(objective, WorstCaseLoss) and objective.keys == [DEFAULT]:
        loss = np.asarray(objective.loss, dtype=float)
        n, m = loss.shape
        rows = sp.csr_matrix((loss.ravel(), (np.repeat(np.arange(n), m), np.arange(n * m))), shape=(n, n * m))
        return MaxOfCosts(rows, (n, m))
    if isinstance(objective, RobustExpectedLoss) and isinstance(objective.priors, FinitePriors):
        loss = np.asarray(objective.loss, dtype=float)
        priors = np.asarray(objective.priors.priors, dtype=float)
        rows = sp.csr_matrix((priors[:, :, None] * loss[None, :, :]).reshape(priors.shape[0], -1))
        return MaxOfCosts(rows, loss.shape)
    return None


def costs_of(objective, key: str):
    """What the lazy LP minimises for mechanism ``key``: the |X| × |Y| cost array of an expected
    loss, or the :class:`MaxOfCosts` of a maximum."""
    if isinstance(objective, ExpectedLoss):
        return objective.cost(key)
    found = max_of_costs(objective, [key])
    if found is None:
        raise ValueError(f"{objective.kind} is neither a sum nor a maximum of linear costs")
    return found


def value_of(costs, k: np.ndarray) -> float:
    """The objective of K under a cost array (Σ C K) or a :class:`MaxOfCosts`."""
    if isinstance(costs, MaxOfCosts):
        return costs.value(k)
    return float((costs * k).sum())


def least_value(costs) -> float:
    """A lower bound on the optimum without privacy: Σ_x min_y C[x, y], or :meth:`MaxOfCosts.least`."""
    if isinstance(costs, MaxOfCosts):
        return costs.least()
    return math.fsum(costs.min(axis=1)) if costs.size else 0.0


def scaling_error(scaled, original, scale: float) -> float:
    """A bound on how far the optimum of the costs ``scaled`` = fl(C/s) lies from that of C/s
    (``original`` = C, ``scale`` = s): 0 when s is a power of two and every entry multiplied
    back gives C (the product by a power of two is exact, so the division was; for another s a
    rounded product can match by chance). Otherwise each entry is off by at most u/(1 − u) of
    its size, and row-stochastic K weighs each row's errors by a convex combination: for a sum
    the optimum moves by at most Σ_x max_y of them, for a maximum by the largest such sum over
    its costs; 2u covers u/(1 − u) and the sums' round-off, and an entry in the subnormal range
    is off by at most the smallest subnormal instead, one per row. (Against an optimum a million
    times below the largest cost, the allowance alone held proven gaps above 1e-6: 36 grid points
    at ε = 28; hence the powers of two.)"""
    power = math.frexp(scale)[0] == 0.5
    if isinstance(scaled, MaxOfCosts):
        if scaled.rows.nnz == 0 or (power and np.array_equal(scaled.rows.data * scale, original.rows.data)):
            return 0.0
        rows = scaled.largest_row_sum()
    else:
        if scaled.size == 0 or (power and np.array_equal(scaled * scale, original)):
            return 0.0
        rows = math.fsum(np.abs(scaled).max(axis=1))
    subnormal = float(np.finfo(float).smallest_subnormal)
    return 2 * UNIT_ROUNDOFF * rows + scaled.shape[0] * subnormal
