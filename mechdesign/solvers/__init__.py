"""The solvers: the general convex route, and the special solvers that take the problems
whose structure they exploit (column generation with an interior point, rays, lazy pairs, Charnes–Cooper, couplings),
with the HiGHS helpers and the proven bounds they share.

:func:`special_solvers` is the one ordered list of special solvers (the protocol is in
:mod:`mechdesign.solvers.registry`). Adding a solver is one new module with a ``SOLVER`` and
one line here.
"""

from __future__ import annotations


def special_solvers() -> tuple:
    """The special solvers, in the order they are tried: the first that applies and proves an
    optimum solves the problem; then the general convex route."""
    from mechdesign.solvers import (
        charnes_cooper,
        coupling_targets,
        dantzig_wolfe,
        lazy_pairs,
        ldp_portfolio,
        line_rays,
        metric_small,
        staircase,
    )

    return (
        coupling_targets.SOLVER,  # targets + expected loss: one transport per context
        charnes_cooper.SOLVER,  # max off-diagonal under pure distribution/profile privacy
        ldp_portfolio.SOLVER,  # ε-LDP with an expected loss: column generation + interior point
        staircase.SOLVER,  # ε-LDP with an information utility (maximised): staircase patterns
        line_rays.SOLVER,  # d-privacy on a line
        dantzig_wolfe.SOLVER,  # d-privacy over any other metric: rays, then lazy pairs
        lazy_pairs.SOLVER,  # the same, when the rays declined
        metric_small.SOLVER,  # the same on few points: the whole LP, built directly
    )
