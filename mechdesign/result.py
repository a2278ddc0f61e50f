"""The labelled result of a solve (DESIGN §8)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

from .mechanism import Mechanism
from .privacy.base import Audit, _jsonable

STATUSES = ("optimal", "infeasible", "unbounded", "failed")


@dataclass
class Result:
    """What a solve returns: status, objective, mechanisms, certificate and solver statistics.

    ``status`` is ``optimal`` only when every certificate line holds on the returned matrices,
    the objective and the lower bound are finite and the relative gap is within tolerance;
    ``infeasible`` only with a Farkas certificate checked on the data; ``failed`` otherwise
    (after a solver failure the certified data-independent design is returned, marked so).

    ``solver`` records, besides names and times: ``bound`` (a lower bound on the optimum, None
    when none could be proven), ``bound_proven`` (True when the bound holds in exact arithmetic
    on the program's data — LP routes derive it from their duals; False for the conic solvers'
    dual objective, named in ``bound_kind``), ``gap`` ((objective − bound) / |objective|, absent
    without a bound), ``special_solvers`` (what each structured solver did: solved, declined,
    or the exception it raised), ``privacy`` (present only when nothing is private: no notion,
    or ε = ∞) and, after a solver failure, ``fallback``.
    """

    problem: str
    status: str
    objective_kind: str
    objective: float | None
    mechanisms: dict[str, Mechanism] = field(default_factory=dict)
    certificate: list[Audit] = field(default_factory=list)
    solver: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mechanism(self) -> Mechanism:
        """The single mechanism (or the first context's)."""
        return next(iter(self.mechanisms.values()))

    @property
    def holds(self) -> bool:
        return all(a.holds for a in self.certificate)

    def matrices(self):
        return {k: m.matrix for k, m in self.mechanisms.items()}

    def to_dict(self) -> dict:
        out = {
            "problem": self.problem,
            "status": self.status,
            "objective": {"kind": self.objective_kind, "value": self.objective},
            "mechanisms": {k: m.to_dict() for k, m in self.mechanisms.items()},
            "certificate": [a.to_dict() for a in self.certificate],
            "solver": _jsonable(self.solver),
        }
        if self.message:
            out["message"] = self.message
        out.update(_jsonable(self.extra))
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def write(self, path: str | os.PathLike) -> None:
        """Write the JSON object to ``path`` atomically (temporary file, then rename)."""
        write_json_atomic(path, self.to_dict())


def write_json_atomic(path, data) -> None:
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
