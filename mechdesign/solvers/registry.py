"""The special-solver protocol, and running the solvers in order.

A special solver takes the problems whose structure it exploits (ε-LDP alone, d-privacy on a
line, couplings, ...) and solves them exactly, far faster than the general convex route. Each is
a :class:`SpecialSolver`:

* ``applies(problem) -> None | str``: None when the solver takes the problem, otherwise the
  reason it does not (one short clause, shown by ``mechdesign solve --explain``);
* ``solve(problem, limits) -> (raw matrices, SolverOutcome)``: the design and how the solve
  ended (:class:`~mechdesign.solvers.outcome.SolverOutcome`), or :class:`SolverDeclined`
  with the reason when it cannot prove an optimum after all (the problem then goes on to the
  next solver, and finally to the general route).

:func:`run_special_solvers` tries them in the order of :func:`mechdesign.solvers.special_solvers`
and records, for every solver, whether it applied, and what came of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mechdesign.core.errors import ProblemError
from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.outcome import SolverOutcome

#: what a special solver returns: the raw matrices by mechanism key, and how the solve ended
Solved = tuple[dict, SolverOutcome]


@dataclass(frozen=True)
class SpecialSolver:
    """A named solver for a class of problems (see the module docstring)."""

    name: str
    applies: Callable[[object], str | None]
    solve: Callable[[object, object], Solved]


def attempt(solver: SpecialSolver, problem, limits) -> tuple[Solved | None, dict]:
    """Try one solver: (its (raw, outcome) or None, the record of what happened). A ProblemError
    (bad input) propagates; any other exception only declines: a special solver's trouble must
    not stop the solve."""
    try:
        reason = solver.applies(problem)
    except ProblemError:
        raise
    except Exception as exc:  # noqa: BLE001 — a broken check declines like any other trouble
        return None, {"solver": solver.name, "applies": False,
                      "outcome": f"raised {type(exc).__name__} while checking: {exc}"}
    if reason is not None:
        return None, {"solver": solver.name, "applies": False, "outcome": f"does not apply: {reason}"}
    try:
        found = solver.solve(problem, limits)
    except ProblemError:
        raise
    except Exception as exc:  # noqa: BLE001 — any failure of a special route falls through
        kind = "declined" if isinstance(exc, SolverDeclined) else f"raised {type(exc).__name__}"
        return None, {"solver": solver.name, "applies": True, "outcome": f"{kind}: {exc}"}
    return found, {"solver": solver.name, "applies": True, "outcome": "solved"}


def run_special_solvers(problem, limits, solvers) -> tuple[Solved | None, list[dict]]:
    """Try ``solvers`` in order until one solves the problem: (its (raw, outcome) or None, the
    records of every solver tried). The solvers after the one that solved are listed as not
    tried, so that the record explains the whole order."""
    records: list[dict] = []
    found = None
    for solver in solvers:
        if found is not None:
            records.append({"solver": solver.name, "applies": None, "outcome": "not tried: solved before"})
            continue
        found, record = attempt(solver, problem, limits)
        records.append(record)
    return found, records
