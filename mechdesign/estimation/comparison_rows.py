"""One row of a comparison: a mechanism (the design or a baseline) with its objective, audited
privacy and estimation errors, and whether it reveals nothing about the input."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.audit_record import Audit
from mechdesign.core.mechanism import Mechanism
from mechdesign.estimation.simulation import TrialSummary
from mechdesign.mechanisms.unary_encoding import UnaryEncoding


@dataclass
class Row:
    """One mechanism in a comparison."""

    name: str
    kind: str  # "design" or "baseline"
    epsilon: float | None = None
    objective: float | None = None
    certificate: list[Audit] | None = None
    claims: list[Audit] = field(default_factory=list)
    status: str = "ok"
    note: str = ""
    estimation: TrialSummary | None = None
    mechanisms: dict = field(default_factory=dict, repr=False)
    reveals_nothing: bool = False
    #: a robust objective's loss under its nominal prior (the objective is the worst prior's)
    nominal_loss: float | None = None

    @property
    def holds(self) -> bool | None:
        if self.certificate is None:
            return None
        return all(a.holds for a in self.certificate)

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "status": self.status, "epsilon": self.epsilon,
               "objective": self.objective,
               "certificate": None if self.certificate is None else [a.to_dict() for a in self.certificate],
               "holds": self.holds, "claims": [a.to_dict() for a in self.claims],
               "reveals_nothing": self.reveals_nothing}
        if self.nominal_loss is not None:
            out["nominal_loss"] = self.nominal_loss
        if self.note:
            out["note"] = self.note
        if self.estimation is not None:
            out["estimation"] = self.estimation.to_dict()
        return out


#: rows equal to this absolute tolerance count as equal (the mechanism reveals nothing)
EQUAL_ROWS_ATOL = 1e-12


def reveals_nothing(built) -> bool:
    """Whether a mechanism reveals nothing about the input: in every context all rows of K are
    equal (to :data:`EQUAL_ROWS_ATOL`), so the output's law does not depend on the input; a
    unary encoding when it keeps and flips bits alike (p = q)."""
    if isinstance(built, UnaryEncoding):
        return bool(abs(built.p - built.q) <= EQUAL_ROWS_ATOL)
    mechs = [built] if isinstance(built, Mechanism) else list(built.values())
    return all(float(np.ptp(m.matrix, axis=0).max()) <= EQUAL_ROWS_ATOL for m in mechs)
