"""Whether the general convex route can hold a problem's program in this machine's memory.

The general route writes out every constraint row of the program: cvxpy builds it, canonicalises
it into sparse standard form, and HiGHS (or a conic solver) copies it once more. Measured on the
2-core machine with HiGHS, the peak memory grows by about 1.5 kB per scalar constraint row
(d-privacy on 6 × 6, 8 × 8 and 10 × 10 grids: 30,132, 164,160 and 621,300 rows at 1.6, 1.5 and
1.6 kB a row). A program whose rows at that rate need more than the machine's memory cannot be
solved on this route; rather than start a compile that the operating system kills (d-privacy on a
40 × 40 grid at ε = 1 writes 5.6·10⁹ rows, about 8 TB), the route is refused with
:class:`ProgramTooLarge`, saying how many rows, the memory they would take and the memory there
is. The rows are counted before anything is built, from the notions' own counts
(:meth:`~mechdesign.privacy.base.Notion.program_rows`: the pair notions' compiles alone allocate
8 bytes a row), and again from the built constraints before a solver sees them.
"""

from __future__ import annotations

from collections.abc import Iterable

from mechdesign.core.sizes import machine_memory

#: peak memory of the general route per scalar constraint row, in bytes (module docstring)
BYTES_PER_ROW = 1_500


class ProgramTooLarge(RuntimeError):
    """The general route's program would not fit in memory (see the module docstring). Not a
    :class:`~mechdesign.core.errors.ProblemError`: the problem is valid, only this route cannot
    take it."""

    def __init__(self, rows: int, memory: int):
        self.rows, self.memory = rows, memory
        super().__init__(
            f"the general convex route would write {rows:,} constraint rows, about "
            f"{_gb(rows * BYTES_PER_ROW)} of memory at {BYTES_PER_ROW:,} bytes a row, more than this "
            f"machine's {_gb(memory)}")


def check_rows(rows: int, memory: int | None = None) -> None:
    """Raise :class:`ProgramTooLarge` when ``rows`` constraint rows need more than ``memory``
    bytes (default: this machine's, :func:`~mechdesign.core.sizes.machine_memory`; unknown
    memory refuses nothing)."""
    memory = machine_memory() if memory is None else memory
    if memory is not None and rows * BYTES_PER_ROW > memory:
        raise ProgramTooLarge(rows, memory)


def declared_rows(problem) -> int:
    """The scalar constraint rows the problem's notions say their compile writes, over the
    mechanism keys each constrains (notions that do not say count 0 here; the built program is
    counted again by :func:`built_rows`)."""
    n, m = len(problem.inputs), len(problem.outputs)
    total = 0
    for notion in problem.privacy:
        rows = notion.program_rows(n, m)
        if rows:
            total += rows * len(notion.keys(problem.keys))
    return total


def built_rows(constraints: Iterable) -> int:
    """The scalar rows of built cvxpy constraints."""
    return sum(int(c.size) for c in constraints)


def _gb(n: int) -> str:
    return f"{n / 1e9:,.1f} GB"
