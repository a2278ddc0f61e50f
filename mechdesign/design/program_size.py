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
8 bytes a row), and again from the built constraints and objective before a solver sees them, as
they will be once canonicalised: a divergence or a mutual information over an n × m matrix is
one cvxpy constraint per pair (or one expression) but an exponential or second-order cone of
three rows per entry, and a conic program takes more memory a row
(:data:`BYTES_PER_CONE_ROW`).
"""

from __future__ import annotations

from collections.abc import Iterable

from mechdesign.core.sizes import machine_memory

#: peak memory of the general route per scalar constraint row, in bytes (module docstring)
BYTES_PER_ROW = 1_500
#: the same for a conic program, per row as :func:`built_rows` counts them: measured with Clarabel
#: on KL- and χ²-divergence DP over every pair (n = 16 to 30, 12,000 to 106,000 rows once
#: canonicalised) and on a capacity bound (n = 60 to 250, up to 251,000 rows), 2.1 to 3.2 kB a row of
#: the canonical program, which :func:`built_rows` counts 4 to 27 % short (the cones' auxiliary
#: variables' bounds), so up to 3.9 kB a counted row
BYTES_PER_CONE_ROW = 4_000
#: rows per entry of a nonlinear atom once canonicalised: an exponential cone's three (a
#: second-order cone's share is counted the same); a piecewise-linear atom (abs, pos, max) takes
#: an epigraph row and its variable's bound
CONE_ROWS, EPIGRAPH_ROWS = 3, 2


class ProgramTooLarge(RuntimeError):
    """The general route's program would not fit in memory (see the module docstring). Not a
    :class:`~mechdesign.core.errors.ProblemError`: the problem is valid, only this route cannot
    take it."""

    def __init__(self, rows: int, memory: int, per_row: int = BYTES_PER_ROW):
        self.rows, self.memory = rows, memory
        super().__init__(
            f"the general convex route would write {rows:,} constraint rows, about "
            f"{_gb(rows * per_row)} of memory at {per_row:,} bytes a row, more than this "
            f"machine's {_gb(memory)}")


def check_rows(rows: int, memory: int | None = None, conic: bool = False) -> None:
    """Raise :class:`ProgramTooLarge` when ``rows`` constraint rows need more than ``memory``
    bytes (default: this machine's, :func:`~mechdesign.core.sizes.machine_memory`; unknown
    memory refuses nothing), at :data:`BYTES_PER_CONE_ROW` a row for a ``conic`` program."""
    memory = machine_memory() if memory is None else memory
    per_row = BYTES_PER_CONE_ROW if conic else BYTES_PER_ROW
    if memory is not None and rows * per_row > memory:
        raise ProgramTooLarge(rows, memory, per_row)


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


def built_rows(constraints: Iterable, objective=None) -> int:
    """The scalar rows of built cvxpy constraints (and of an ``objective`` expression) once
    canonicalised: each constraint's own rows, and those of every entry of a nonlinear atom in
    them (:func:`_cone_rows`: a relative entropy over a pair's rows, or over a design, is one
    cvxpy constraint or term but a cone per entry)."""
    return sum(int(c.size) + sum(_cone_rows(a) for a in c.args) for c in constraints) + (
        0 if objective is None else _cone_rows(objective))


def _cone_rows(expression) -> int:
    """The rows the nonlinear atoms in the expression's tree add (an atom that is not affine in
    its arguments; per entry of its largest argument, or of itself): :data:`EPIGRAPH_ROWS` for a
    piecewise-linear one, :data:`CONE_ROWS` for any other."""
    from cvxpy.atoms.atom import Atom

    rows = sum(_cone_rows(a) for a in expression.args)
    if isinstance(expression, Atom) and not (expression.is_atom_convex() and expression.is_atom_concave()):
        per_entry = EPIGRAPH_ROWS if expression.is_pwl() else CONE_ROWS
        rows += per_entry * max([int(expression.size)] + [int(a.size) for a in expression.args])
    return rows


def _gb(n: int) -> str:
    return f"{n / 1e9:,.1f} GB"
