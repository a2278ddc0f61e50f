"""What a solver run reports besides its matrices: :class:`SolverOutcome`.

Every route — the general convex route (:func:`mechdesign.solvers.convex_route.run_solver`) and
each special solver — returns ``(raw matrices or None, SolverOutcome)``. The outcome separates
what decides the result from what is only recorded:

* the fields decide it: the solver's status and message, the bound the solver reports on the
  optimum and whether it is proven, and, for the general route, the standard-form program and
  duals from which :meth:`Problem.finish` proves a bound itself;
* ``record`` is what the result's ``solver`` record starts from: names, times, rounds, columns,
  the path a solver took, the progress of its rounds, the special solvers tried.

:meth:`Problem.finish` reads the fields and builds the result's record from a copy of
``record``; it never changes the outcome it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Protocol


class BoundProof(Protocol):
    """The data a general-route solve leaves for proving a bound on the program's optimum
    (:class:`~mechdesign.solvers.lp_bound.LPSnapshot`,
    :class:`~mechdesign.solvers.conic_bound.ConicSnapshot`)."""

    #: whether an "optimal" status needs the proven bound (LPs), or may stand on the solver's
    #: own dual objective when none is proven (conic programs)
    required: bool

    def bound(self, cutoff: float | None) -> float:
        """A lower bound on the program's optimum, proven on its data (−inf if none); a design
        of value ``cutoff`` is known, which may tighten the proof."""


@dataclass(frozen=True)
class SolverOutcome:
    """How a solver run ended (see the module docstring).

    Parameters
    ----------
    status : str
        "optimal", "time-limit", "infeasible" or "failed", as the solver claims it; the result's
        status is judged from it and the certificate.
    record : dict
        What goes into the result's ``solver`` record (names, times, rounds, path, ...).
    message : str
        Why the solver did not end optimal, when it says.
    bound : float or None
        The solver's bound on the optimum, in the objective's units (a lower bound, or an upper
        bound for a maximised objective): a special solver's proven bound, or the general
        route's reported optimum (a conic solver's dual objective). The result's record shows it
        as ``objective``.
    bound_proven : bool
        Whether ``bound`` holds in exact arithmetic (the special solvers prove theirs).
    proof : BoundProof or None
        The general route's standard-form program and duals, from which a bound is proven on
        the certified value.
    scale : float
        The program minimised objective / ``scale``: the unit ``proof`` is in.
    infeasibility_proven : bool
        With status "infeasible": whether a Farkas certificate was checked on the data.
    """

    status: str
    record: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    bound: float | None = None
    bound_proven: bool = False
    proof: BoundProof | None = None
    scale: float = 1.0
    infeasibility_proven: bool = False

    def proven_bound(self, value: float) -> float:
        """The bound ``proof`` proves, in the objective's units, with ``value`` (a value of a
        feasible design, objective units) as the cut-off; −inf without a proof or a finite
        value. The cut-off sits 1e-7 above the value: the audit tolerates ~1e-9 excess, so the
        certified value may lie a little below the program's optimum, and the cut-off must stay
        above that optimum."""
        if self.proof is None or not math.isfinite(value):
            return -math.inf
        cutoff = value / self.scale
        cutoff += 1e-7 * (1.0 + abs(cutoff))
        return self.proof.bound(cutoff) * self.scale

    def recording(self, **entries: Any) -> SolverOutcome:
        """This outcome with ``entries`` added to (or replacing those of) its record; this one
        is left as it is."""
        return replace(self, record={**self.record, **entries})
