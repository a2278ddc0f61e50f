"""The working set of the d-privacy interior point: the (pair, output) rows it carries duals for,
held as index arrays, with the pair map G and its transpose restricted to them.

A row (p, y) is the constraint S[p, y] = c_p K[b_p, y] − K[a_p, y] >= 0 of pair p = (a_p, b_p)
on output y's column. The interior point's arrays over the rows (slacks, duals, directions)
are one entry per row of the set, so each pass over them costs the set's size, not
pairs × outputs; every map the iteration needs is a gather from K or a sum into (inputs,
outputs) or into the blocks, done by the compiled loops of
:mod:`~mechdesign.solvers.metric_interior_kernels`.
"""

from __future__ import annotations

import numpy as np


class Rows:
    """The rows of ``member`` (pairs × outputs, bool) of the reduced LP ``lp`` (its pairs' a, b
    and coefficients), in the order they joined: per row its pair, output, a, b and c, and
    ``runs``, the same rows as maximal stretches of one pair on consecutive outputs (a, b, c,
    first row, first output, length per run), which the maps walk."""

    def __init__(self, lp, member: np.ndarray):
        self.lp = lp
        self.inputs, self.outputs = lp.cost.shape
        self.member = np.zeros_like(member, dtype=bool)
        self.pair = np.zeros(0, dtype=np.intp)
        self.out = np.zeros(0, dtype=np.intp)
        self.add(*np.nonzero(member))

    @property
    def size(self) -> int:
        return self.pair.size

    def add(self, pair: np.ndarray, out: np.ndarray) -> None:
        """Add rows (not yet members)."""
        self.member[pair, out] = True
        self.pair = np.concatenate([self.pair, pair])
        self.out = np.concatenate([self.out, out])
        lp = self.lp
        self.a, self.b, self.c = lp.a[self.pair], lp.b[self.pair], lp.coef[self.pair]
        # the runs: maximal stretches of rows of one pair on consecutive outputs, over which
        # the maps read and write K's rows contiguously (the rows of the first set come pair by
        # pair, their outputs in order: a pair's rows on every output are one run)
        breaks = np.ones(self.size, dtype=bool)
        breaks[1:] = (self.pair[1:] != self.pair[:-1]) | (self.out[1:] != self.out[:-1] + 1)
        start = np.flatnonzero(breaks)
        self.runs = (self.a[start], self.b[start], self.c[start], start, self.out[start],
                     np.diff(np.append(start, self.size)))

    def gather(self, full: np.ndarray) -> np.ndarray:
        """The rows' entries of a (pairs, outputs) array."""
        return full[self.pair, self.out]

    def slack(self, K: np.ndarray) -> np.ndarray:
        """G K on the rows: c K[b, y] − K[a, y]."""
        from mechdesign.solvers.metric_interior_kernels import rows_slack

        out = np.empty(self.size)
        rows_slack(K, *self.runs, out)
        return out

    def transpose(self, values: np.ndarray) -> np.ndarray:
        """Gᵀ applied to values on the rows (zero elsewhere), as an (inputs, outputs) array."""
        from mechdesign.solvers.metric_interior_kernels import rows_transpose

        out = np.zeros((self.inputs, self.outputs))
        rows_transpose(values, *self.runs, out)
        return out

    def chain(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tridiagonal blocks Gᵀ diag(weights) G of a chain (every pair joins neighbours):
        their diagonals (outputs, inputs) and off-diagonals (outputs, inputs − 1)."""
        from mechdesign.solvers.metric_interior_kernels import rows_chain

        # summed with the outputs innermost (contiguous runs), then turned to the blocks' layout
        diagonal, off = np.zeros((self.inputs, self.outputs)), np.zeros((self.inputs - 1, self.outputs))
        rows_chain(weights, *self.runs, diagonal, off)
        return np.ascontiguousarray(diagonal.T), np.ascontiguousarray(off.T)
