"""What the d-privacy interior point's arrays take, and whether they fit.

The iterations hold, for every (pair, output) row, the slack G K (every row limits the primal
step) and whether the row is in the working set; for each row of the working set about two dozen
numbers (its pair, output and coefficient, slack, dual, directions, correctors' targets); and,
for dense blocks, their factors, |X|² × outputs (each block is assembled, factorised and
inverted in place of its factor; a step that fails in single precision is taken again in
double only once its own factors are gone), with a score of |X| × |X| sums and scratch blocks. The working set starts small (each input's nearest pairs on every output) and grows
as rows join, so the check at the start counts the rows it starts with, and every join is
checked again (:func:`check_growth`): a run whose set would outgrow the memory declines then,
keeping what it proved, instead of the machine running out of it.
"""

from __future__ import annotations

import os

from mechdesign.solvers.highs_model import SolverDeclined

#: the share of the memory available (at the start, or at a join) that the arrays may take
MEMORY_SHARE = 0.5
#: numbers held per row of the working set; arrays of |X|² × outputs entries (dense blocks'
#: factors) and of |X|² (the chunks' sums, at most 16, and each thread's scratch blocks)
PAIR_ARRAYS, BLOCK_ARRAYS, BLOCK_SCRATCH = 25, 1, 20
#: bytes per (pair, output) row outside the working set: its slack (8) and membership (1)
ROW_BYTES = 9


def available_bytes() -> float | None:
    """The memory available now, or None where the system does not say."""
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _decline_beyond(need: float, what: str) -> None:
    available = available_bytes()
    if available is not None and need > MEMORY_SHARE * available:
        raise SolverDeclined(f"{what} would take {need / 2**30:.1f} GB, more than half the "
                             f"{available / 2**30:.1f} GB available")


def check_memory(n: int, pairs: int, m: int, rows: int, blocks: bool = True) -> None:
    """Decline when the iterations' arrays at the start would take more than
    :data:`MEMORY_SHARE` of the memory available now: every (pair, output) row's slack and
    membership, the ``rows`` of the working set at the start, and the blocks (``blocks``:
    dense |X| × |X| blocks; a chain's are tridiagonal)."""
    dense = (BLOCK_ARRAYS * m + BLOCK_SCRATCH) * n * n
    need = ROW_BYTES * pairs * m + 8.0 * (PAIR_ARRAYS * rows + (dense if blocks else 4 * n * m + 2 * n * n))
    _decline_beyond(need, "its arrays")


def check_growth(rows: int) -> None:
    """Decline when ``rows`` more rows of the working set would take more than
    :data:`MEMORY_SHARE` of the memory available now (twice their numbers: the set's buffers
    double as they grow)."""
    _decline_beyond(2 * 8.0 * PAIR_ARRAYS * rows, "the working set's new rows")
