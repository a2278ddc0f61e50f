"""compare for a robust expected loss: the robust design next to the design that is optimal for
the nominal prior alone, each scored under the worst prior of the set and under the nominal one.

The robust objective is max_{π ∈ U} Σ_x π_x ℓ_x(K), ℓ_x the expected loss of input x
(:class:`~mechdesign.core.robust_loss.RobustExpectedLoss`). The nominal-optimal design minimises
π̂·ℓ(K) for the estimate π̂ alone; it is at least as good under π̂ and at most as good under the
worst prior of U — the trade the comparison shows."""

from __future__ import annotations

import dataclasses

from mechdesign.core.objectives import ExpectedLoss
from mechdesign.core.robust_loss import RobustExpectedLoss
from mechdesign.core.setting import DEFAULT
from mechdesign.estimation.comparison_rows import Row


def is_robust(problem) -> bool:
    return isinstance(problem.objective, RobustExpectedLoss)


def nominal_problem(problem):
    """The same problem with the plain expected loss under the nominal prior."""
    robust = problem.objective
    nominal = ExpectedLoss(robust.loss, prior=robust.prior)
    return dataclasses.replace(problem, objective=nominal, name=f"{problem.name} (nominal prior)")


def nominal_loss(problem, mechanisms: dict) -> float:
    """The expected loss of a design under the robust objective's nominal prior."""
    robust = problem.objective
    return float(robust.prior @ robust.losses({DEFAULT: mechanisms[DEFAULT]}))


def robust_rows(problem, design: Row, epsilon: float | None) -> list[Row]:
    """For a robust objective: the design's loss under the nominal prior, and a row for the
    design optimal under the nominal prior alone, scored under the worst prior of the set."""
    if design.mechanisms:
        design.nominal_loss = nominal_loss(problem, {k: m.matrix for k, m in design.mechanisms["built"].items()})
    found = nominal_problem(problem).solve()
    row = Row("nominal-optimal design", "design", epsilon, None, list(found.certificate),
              status=found.status, note=found.message)
    if found.mechanisms:
        matrices = {k: m.matrix for k, m in found.mechanisms.items()}
        row.objective = problem.objective.value(matrices)
        row.nominal_loss = nominal_loss(problem, matrices)
        row.mechanisms = {"built": dict(found.mechanisms)}
    return [row]
