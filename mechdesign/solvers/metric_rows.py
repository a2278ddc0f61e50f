"""The working set of the d-privacy interior point: the (pair, output) rows it carries duals for,
held as index arrays, with the pair map G and its transpose restricted to them.

A row (p, y) is the constraint S[p, y] = c_p K[b_p, y] − K[a_p, y] >= 0 of pair p = (a_p, b_p)
on output y's column. The interior point's arrays over the rows (slacks, duals, directions)
are one entry per row of the set, so each pass over them costs the set's size, not
pairs × outputs; every map the iteration needs is a gather from K or a sum into (inputs,
outputs) or into the blocks, done by the compiled loops of
:mod:`~mechdesign.solvers.metric_interior_kernels`. A long pass is split over threads
(:func:`~mechdesign.solvers.metric_passes.pieces`): a gather by ranges of rows, a sum by ranges
of outputs (each thread writes its own outputs' entries, and each entry takes its terms in the
same order as in one pass, so the sums do not depend on the threads).
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.scratch import Scratch
from mechdesign.core.threads import over, split
from mechdesign.solvers.metric_passes import pieces

#: no denominator for :func:`~mechdesign.solvers.metric_interior_kernels.rows_transpose`
_NOTHING = np.zeros(0)


class _Growing:
    """An array that rows are appended to: a buffer that doubles when full, up to ``limit``
    entries (the rows there can be), so that appending costs the new entries, not the ones
    held (a set of millions of rows gains a few most steps). ``values`` is a view of what it
    holds."""

    def __init__(self, dtype, limit: int):
        self.buffer, self.size, self.limit = np.empty(0, dtype=dtype), 0, limit

    @property
    def values(self) -> np.ndarray:
        return self.buffer[:self.size]

    def append(self, new: np.ndarray) -> None:
        end = self.size + new.size
        if end > self.buffer.size:
            grown = np.empty(max(end, min(2 * self.buffer.size, self.limit)), dtype=self.buffer.dtype)
            grown[:self.size] = self.values
            self.buffer = grown
        self.buffer[self.size:end] = new
        self.size = end


class Rows:
    """The rows of ``member`` (pairs × outputs, bool) of the reduced LP ``lp`` (its pairs' a, b
    and coefficients), in the order they joined: per row its pair, output, a, b and c, and
    ``runs``, the same rows as stretches of one pair on consecutive outputs (a, b, c, first row,
    first output, length per run; maximal within each batch of rows that joined together),
    which the maps walk."""

    def __init__(self, lp, member: np.ndarray):
        self.lp = lp
        self.inputs, self.outputs = lp.cost.shape
        self.member = np.zeros_like(member, dtype=bool)
        limit = member.size
        self._rows = {name: _Growing(float if name == "c" else np.intp, limit)
                      for name in ("pair", "out", "a", "b", "c")}
        self._runs = [_Growing(float if k == 2 else np.intp, limit) for k in range(6)]
        #: the iteration's reused temporaries (:class:`~mechdesign.core.scratch.Scratch`)
        self.scratch = Scratch()
        self.add(*np.nonzero(member))

    def empty(self) -> np.ndarray:
        """An uninitialised array with an entry per row, for a step's temporaries: a view of a
        buffer reused once nothing refers to it (:attr:`scratch`)."""
        return self.scratch.empty(self.size)

    @property
    def size(self) -> int:
        return self._rows["pair"].size

    pair = property(lambda self: self._rows["pair"].values)
    out = property(lambda self: self._rows["out"].values)
    a = property(lambda self: self._rows["a"].values)
    b = property(lambda self: self._rows["b"].values)
    c = property(lambda self: self._rows["c"].values)
    runs = property(lambda self: tuple(run.values for run in self._runs))

    def add(self, pair: np.ndarray, out: np.ndarray) -> None:
        """Add rows (not yet members). Only the new rows are read and written: the rows already
        in the set keep their runs."""
        self.member[pair, out] = True
        lp, offset = self.lp, self.size
        new = {"pair": pair, "out": out, "a": lp.a[pair], "b": lp.b[pair], "c": lp.coef[pair]}
        # the new rows' runs: maximal stretches of one pair on consecutive outputs, over which
        # the maps read and write K's rows contiguously (the rows of the first set come pair by
        # pair, their outputs in order: a pair's rows on every output are one run)
        breaks = np.ones(pair.size, dtype=bool)
        breaks[1:] = (pair[1:] != pair[:-1]) | (out[1:] != out[:-1] + 1)
        start = np.flatnonzero(breaks)
        runs = (new["a"][start], new["b"][start], new["c"][start], start + offset, out[start],
                np.diff(np.append(start, pair.size)))
        for name, values in new.items():
            self._rows[name].append(values)
        for run, values in zip(self._runs, runs):
            run.append(values)

    def gather(self, full: np.ndarray) -> np.ndarray:
        """The rows' entries of a (pairs, outputs) array."""
        return full[self.pair, self.out]

    def slack(self, K: np.ndarray) -> np.ndarray:
        """G K on the rows: c K[b, y] − K[a, y]."""
        from mechdesign.solvers.metric_interior_kernels import rows_slack

        out = self.empty()
        self._by_runs(lambda *runs: rows_slack(K, *runs, out))
        return out

    def slack_recovered(self, K: np.ndarray, t: np.ndarray, dual: np.ndarray, primal: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(G K on the rows, (t − dual·G K)/primal, and the largest steps α <= 1 keeping primal +
        α G K and dual + α of the latter non-negative), in one pass (:meth:`slack`, then the
        duals' direction as :func:`~mechdesign.solvers.metric_passes.recover` finds it, without
        reading G K back)."""
        from mechdesign.solvers.metric_interior_kernels import rows_slack_recovered

        out, out_dual = self.empty(), self.empty()
        found = self._by_runs(lambda *runs: rows_slack_recovered(K, *runs, t, dual, primal, out, out_dual))
        return out, out_dual, min(f[0] for f in found), min(f[1] for f in found)

    def _by_runs(self, work) -> list:
        """``work(a, b, c, start, first, length)`` on the runs of each of a few ranges, each range
        on its own thread and holding about as many rows as the others (a run's rows lie in one
        range); what each call returned."""
        runs = self.runs
        edges = np.searchsorted(runs[3], [lo for lo, _ in pieces(self.size)] + [self.size])
        return over(lambda lo, hi: work(*(run[lo:hi] for run in runs)), list(zip(edges[:-1], edges[1:])))

    def _by_outputs(self, work) -> None:
        """``work(lo, hi)`` over ranges of outputs, on as many threads as the rows' number
        asks for (:func:`~mechdesign.solvers.metric_passes.pieces`)."""
        split(work, self.outputs, len(pieces(self.size)))

    def transpose(self, values: np.ndarray) -> np.ndarray:
        """Gᵀ applied to values on the rows (zero elsewhere), as an (inputs, outputs) array."""
        out = np.zeros((self.inputs, self.outputs))
        self.add_transpose_ratio(values, _NOTHING, out)
        return out

    def add_transpose_ratio(self, numerator: np.ndarray, denominator: np.ndarray, out: np.ndarray) -> None:
        """out += Gᵀ (numerator/denominator) on the rows, in place (one pass, no temporaries; an
        empty ``denominator`` divides by nothing)."""
        from mechdesign.solvers.metric_interior_kernels import rows_transpose

        runs = self.runs
        self._by_outputs(lambda lo, hi: rows_transpose(numerator, *runs, out, denominator, lo, hi))

    def chain(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tridiagonal blocks Gᵀ diag(weights) G of a chain (every pair joins neighbours):
        their diagonals (inputs, outputs) and off-diagonals (inputs − 1, outputs), the outputs
        innermost, as the blocks' kernels take them."""
        from mechdesign.solvers.metric_interior_kernels import rows_chain

        diagonal, off = np.zeros((self.inputs, self.outputs)), np.zeros((self.inputs - 1, self.outputs))
        runs = self.runs
        self._by_outputs(lambda lo, hi: rows_chain(weights, *runs, diagonal, off, lo, hi))
        return diagonal, off


def nearest_pairs(a: np.ndarray, b: np.ndarray, exponent: np.ndarray, k: int) -> np.ndarray:
    """Which pairs are among the ``k`` of smallest exponent of their first or of their second
    input (ties broken by position)."""
    chosen = np.zeros(a.size, bool)
    for side in (a, b):
        order = np.lexsort((exponent, side))
        ordered = side[order]
        rank = np.arange(a.size) - np.searchsorted(ordered, ordered, side="left")
        chosen[order[rank < k]] = True
    return chosen
