"""The d-privacy interior point's passes over its entries, split over threads.

Besides the blocks' factorisations, every step makes passes over the (inputs × outputs) entries
and over the rows of the working set (:mod:`~mechdesign.solvers.metric_rows`): the duals'
directions with their ratio tests and Gondzio's targets.
On 300 haversine locations at ε = 0.5 (Dirichlet prior, squared loss) the set grows to 2.8
million rows, and these passes ran on the calling thread alone while the other core waited;
split, the method alone takes 141.8 s instead of 159.1 s on two threads (215 steps, the same
iterates), and 63.4 s instead of 65.7 s with the Zipf prior, whose set stays smaller.
Here each pass long enough to pay for handing it to threads (:data:`MIN_PIECE` entries a
thread) is split into contiguous ranges, one per thread, each worked by the compiled loop of
:mod:`~mechdesign.solvers.metric_interior_kernels` (which releases the interpreter's lock).
The numbers are those of one pass, whatever the threads: the ratio tests' minima and the
entry-by-entry results are the same over any ranges. The sums of the complementarity products
stay in one pass: summed by ranges, their last bits change the centring target, and the path
with it (300 haversine locations at ε = 0.5, Zipf prior, squared loss: 260 steps instead of
145, the working set growing larger on the way).
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.threads import over, ranges, solver_threads

#: the fewest entries a thread is handed (a hand-off to the pool costs tens of microseconds,
#: a pass over this many entries about as many)
MIN_PIECE = 1 << 16


def pieces(n: int) -> list[tuple[int, int]]:
    """range(n) in contiguous [lo, hi) ranges, one per thread and at least :data:`MIN_PIECE`
    long (one range for a short pass)."""
    return ranges(n, min(solver_threads(), max(n // MIN_PIECE, 1)))


def _over_entries(work, *arrays: np.ndarray) -> list:
    """``work`` on the same range of every array's entries, for each of :func:`pieces` on its
    own thread. The arrays must be C-contiguous: their flat views are sliced (a copy would lose
    what a kernel writes into it)."""
    for array in arrays:
        if not array.flags.c_contiguous:
            raise ValueError("the interior point's passes need C-contiguous arrays")
    flat = [array.reshape(-1) for array in arrays]
    return over(lambda lo, hi: work(*(array[lo:hi] for array in flat)), pieces(flat[0].size))


def recover(t: np.ndarray, dual: np.ndarray, dprimal: np.ndarray, primal: np.ndarray,
            out: np.ndarray) -> tuple[float, float]:
    """:func:`~mechdesign.solvers.metric_interior_kernels.recover` (out = (t − dual·dprimal)/primal
    and the largest steps keeping primal and dual non-negative) over ranges on threads."""
    from mechdesign.solvers.metric_interior_kernels import recover as kernel

    found = _over_entries(kernel, t, dual, dprimal, primal, out)
    return min(a_p for a_p, _ in found), min(a_d for _, a_d in found)


def centred_targets(x: np.ndarray, dx: np.ndarray, z: np.ndarray, dz: np.ndarray, goal_p: float, goal_d: float,
                    t: np.ndarray, lo: float, hi: float, out: np.ndarray) -> None:
    """:func:`~mechdesign.solvers.metric_interior_kernels.centred_targets` (Gondzio's corrected
    targets) over ranges on threads."""
    from mechdesign.solvers.metric_interior_kernels import centred_targets as kernel

    _over_entries(lambda x, dx, z, dz, t, out: kernel(x, dx, z, dz, goal_p, goal_d, t, lo, hi, out),
                  x, dx, z, dz, t, out)


def complementarity_targets(target: float, x: np.ndarray, z: np.ndarray, dx: np.ndarray | None = None,
                            dz: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """target − x z − dx dz (Mehrotra's corrector's targets after the predictor (dx, dz);
    without ``dx``, the predictor's, target − x z), one pass over ranges on threads, into
    ``out`` (shaped as x) when it is given."""
    from mechdesign.solvers.metric_interior_kernels import complementarity_targets as kernel

    out = np.empty_like(x) if out is None else out
    if dx is None:
        none = np.zeros(0)
        _over_entries(lambda x, z, out: kernel(target, x, z, none, none, out), x, z, out)
    else:
        _over_entries(lambda x, z, dx, dz, out: kernel(target, x, z, dx, dz, out), x, z, dx, dz, out)
    return out


def quotient_less(t: np.ndarray, x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """t/x − r, one pass over ranges on threads."""
    from mechdesign.solvers.metric_interior_kernels import quotient_less as kernel

    out = np.empty_like(x)
    _over_entries(kernel, t, x, r, out)
    return out


def add_scaled(x: np.ndarray, alpha: float, dx: np.ndarray) -> None:
    """x += alpha dx in place, one pass over ranges on threads (NumPy takes two, through a
    temporary)."""
    from mechdesign.solvers.metric_interior_kernels import add_scaled as kernel

    _over_entries(lambda x, dx: kernel(x, alpha, dx), x, dx)
