"""A quick proven lower bound on min a·v over the d-privacy cone in the box, for the outputs a
pricing pass does not reach.

The cone's pairs v_x <= c v_x' (c = e^{ε d(x, x')}) with multipliers λ >= 0 give, for every v
in the cone and the box, a·v >= (a + Bᵀλ)·v >= Σ_x min(0, (a + Bᵀλ)_x)
(:func:`~mechdesign.solvers.ray_master.box_lagrangian_bound`, round-off enclosed). λ = 0 is
the box minimum Σ_x min(0, a_x). Here λ moves each negative entry's deficit onto positive
entries close by: a pair (x, x') with a_x < 0 < a_x' carries λ = min(−a_x, a_x'/c), which raises
a_x by λ and lowers a_x' by cλ (never below 0), the pairs taken in order of growing c. It
needs no LP: one pass over the pairs, every pair a few operations.

It is the box LP's dual solved greedily, so it can lie far below the box minimum: on 300
airports at ε = 1 per 10 km, for one output, the box LP proved −0.0003 where this bound proves
−0.0157 (a second pass of three-pair exchanges gained nothing over all outputs). The order is
what it gets wrong, not the lack of relays: over these same pairs the best direct transfers
reach the box minimum (:meth:`TransferBound.flow`, one small LP,
:mod:`~mechdesign.solvers.cone_flow`).

The pairs are, for every input, the NEIGHBOURS nearest ones among the pricing's (any subset of
the cone's constraints gives a valid bound; far pairs carry little, their c being large).
"""

from __future__ import annotations

import sys

import numpy as np

from mechdesign.solvers.cone_flow import flow_bound
from mechdesign.solvers.ray_master import box_lagrangian_bound

#: pairs kept per input for the transfer bound (its nearest partners)
NEIGHBOURS = 256
#: pair visits the transfer makes as a plain loop (about 0.15 µs each) while numba is not loaded
#: in the process: the first call of a compiled kernel loads it, 0.3 to 0.5 s, which a small
#: problem's rays never repay (a 6 × 6 grid through the command line: 1.23 s end to end with the
#: kernel, about 0.6 s with the loop, the rays then done before an interior point's turn). Once
#: numba is loaded (an interior point's kernels load it) the kernel costs next to nothing to
#: load; past this many visits (about 0.03 s) loading it is worth it anyway.
PLAIN_VISITS = 200_000
_visits = 0  # (the plain loop's so far, over the process: a race on it only moves the switch)


class TransferBound:
    """The transfer bound over the pairs (i, j) with coefficients ``coef`` (v_i <= coef·v_j),
    each input keeping its NEIGHBOURS pairs of smallest coefficient."""

    def __init__(self, n: int, i: np.ndarray, j: np.ndarray, coef: np.ndarray):
        by_input = np.lexsort((coef, i))  # each input's pairs, cheapest first
        rank = np.arange(by_input.size) - np.searchsorted(i[by_input], i[by_input], side="left")
        kept = by_input[rank < NEIGHBOURS]
        kept = kept[np.argsort(coef[kept], kind="stable")]  # then all in order of growing c
        self.i = np.ascontiguousarray(i[kept], dtype=np.int64)
        self.j = np.ascontiguousarray(j[kept], dtype=np.int64)
        self.coef = np.ascontiguousarray(coef[kept], dtype=float)
        self.n = n

    def bound(self, a: np.ndarray) -> float:
        """A proven lower bound on min a·v over the cone's vectors in [0, 1]^X (at least the box
        minimum, up to its round-off enclosure)."""
        a = np.ascontiguousarray(a, dtype=float)
        if not np.all(np.isfinite(a)):
            return _box_only(a)
        lam = transfer(a, self.i, self.j, self.coef)
        used = np.flatnonzero(lam)  # (the pairs that carry nothing add nothing: at most 2n carry)
        return box_lagrangian_bound(a, self.i[used], self.j[used], self.coef[used], lam[used])

    def flow(self, a: np.ndarray, limits=None) -> float:
        """The flow bound over the same pairs (:func:`~mechdesign.solvers.cone_flow.flow_bound`):
        the box minimum over them, where the greedy transfer can lie far below it."""
        a = np.ascontiguousarray(a, dtype=float)
        return _box_only(a) if not np.all(np.isfinite(a)) else flow_bound(a, self.i, self.j, self.coef, limits)


def transfer(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """λ per pair (:func:`~mechdesign.solvers.cone_transfer_kernel.transfer`): the compiled
    kernel once numba is loaded or the process's plain loops have made :data:`PLAIN_VISITS`,
    before that a plain loop (:func:`plain_transfer`)."""
    global _visits
    if _numba_loaded() or _visits + i.size > PLAIN_VISITS:
        from mechdesign.solvers.cone_transfer_kernel import transfer as compiled

        return compiled(a, i, j, coef)
    _visits += i.size
    return plain_transfer(a, i, j, coef)


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def plain_transfer(a: np.ndarray, i: np.ndarray, j: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """The compiled kernel's loop in Python: the same transfers, bit for bit."""
    r, pairs = a.tolist(), zip(i.tolist(), j.tolist(), coef.tolist())
    lam = [0.0] * i.size
    for k, (x, p, c) in enumerate(pairs):
        if r[x] < 0.0 and r[p] > 0.0:
            carried = min(-r[x], r[p] / c)
            lam[k] = carried
            r[x] += carried
            r[p] -= c * carried
    return np.array(lam)


def _box_only(a: np.ndarray) -> float:
    """The box's own bound Σ min(0, a): the claim for costs with an infinite or undefined entry."""
    return float(np.minimum(a, 0.0).sum())
