"""The working set of the d-privacy interior point: the (pair, output) rows it carries duals for,
held as index arrays, with the pair map G and its transpose restricted to them.

A row (p, y) is the constraint S[p, y] = c_p K[b_p, y] − K[a_p, y] >= 0 of pair p = (a_p, b_p)
on output y's column. The interior point's arrays over the rows (slacks, duals, directions)
are one entry per row of the set, so each pass over them costs the set's size, not
pairs × outputs; every map the iteration needs is a gather from K or a sum into (inputs,
outputs) or into the blocks, done by ``np.bincount`` over indices computed once per change of
the set.
"""

from __future__ import annotations

import numpy as np


class Rows:
    """The rows of ``member`` (pairs × outputs, bool) of the reduced LP ``lp`` (its pairs' a, b
    and coefficients), in the order they joined."""

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
        """Add rows (not yet members) and recompute the indices of the maps."""
        self.member[pair, out] = True
        self.pair = np.concatenate([self.pair, pair])
        self.out = np.concatenate([self.out, out])
        lp, m = self.lp, self.outputs
        a, b, y = lp.a[self.pair], lp.b[self.pair], self.out
        self.a, self.b, self.c = a, b, lp.coef[self.pair]
        self._at_a, self._at_b = a * m + y, b * m + y  # entries of (inputs, outputs)
        self._block = self._diagonal = self._off = None  # computed when first needed

    def _block_entries(self) -> np.ndarray:
        """The rows' entries of the dense blocks (m, g, g), flattened: (a, a), (b, b), (a, b), (b, a)."""
        if self._block is None:
            g, a, b = self.inputs, self.a, self.b
            base = self.out * g * g
            self._block = np.concatenate([base + a * g + a, base + b * g + b, base + a * g + b, base + b * g + a])
        return self._block

    def gather(self, full: np.ndarray) -> np.ndarray:
        """The rows' entries of a (pairs, outputs) array."""
        return full[self.pair, self.out]

    def slack(self, K: np.ndarray) -> np.ndarray:
        """G K on the rows: c K[b, y] − K[a, y]."""
        return self.c * K[self.b, self.out] - K[self.a, self.out]

    def transpose(self, values: np.ndarray) -> np.ndarray:
        """Gᵀ applied to values on the rows (zero elsewhere), as an (inputs, outputs) array."""
        n = self.inputs * self.outputs
        return (np.bincount(self._at_b, weights=self.c * values, minlength=n)
                - np.bincount(self._at_a, weights=values, minlength=n)).reshape(self.inputs, self.outputs)

    def blocks(self, weights: np.ndarray) -> np.ndarray:
        """Σ over the rows of output y of weight · g gᵀ (g the pair's row of G), for every
        output: the blocks Gᵀ diag(weights) G, (outputs, inputs, inputs)."""
        g, m, c = self.inputs, self.outputs, self.c
        values = np.concatenate([weights, c * c * weights, -c * weights, -c * weights])
        return np.bincount(self._block_entries(), weights=values, minlength=m * g * g).reshape(m, g, g)

    def chain(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tridiagonal blocks Gᵀ diag(weights) G of a chain (every pair joins neighbours):
        their diagonals (outputs, inputs) and off-diagonals (outputs, inputs − 1)."""
        g, m, c = self.inputs, self.outputs, self.c
        if self._diagonal is None:  # the diagonals' entries (m, g) and the off-diagonals' (m, g − 1)
            self._diagonal = np.concatenate([self.out * g + self.a, self.out * g + self.b])
            self._off = self.out * (g - 1) + np.minimum(self.a, self.b)
        diagonal = np.bincount(self._diagonal, weights=np.concatenate([weights, c * c * weights]), minlength=m * g)
        off = np.bincount(self._off, weights=-c * weights, minlength=m * (g - 1))
        return diagonal.reshape(m, g), off.reshape(m, g - 1)
