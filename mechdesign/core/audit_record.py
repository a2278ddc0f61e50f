"""The audit record: one certificate line per notion (what was asked, what the matrix achieves,
whether it holds), and the tolerance every audit holds to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: An audited level holds when achieved <= requested + AUDIT_TOL.
AUDIT_TOL = 1e-9

@dataclass
class Audit:
    """One certificate line: what was asked, what the matrix achieves, whether it holds."""

    notion: str
    requested: dict[str, Any]
    achieved: dict[str, Any]
    holds: bool
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {
            "notion": self.notion,
            "requested": jsonable(self.requested),
            "achieved": jsonable(self.achieved),
            "holds": bool(self.holds),
        }
        if self.detail:
            out["detail"] = jsonable(self.detail)
        return out


def jsonable(value):
    """A JSON-ready copy of ``value``: mappings with string keys, lists for tuples, sets and arrays,
    Python scalars for NumPy scalars (``np.bool_`` included), and "inf", "-inf", "nan" for
    non-finite floats (JSON has no such numbers)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = [jsonable(v) for v in value]
        try:
            return sorted(items)
        except TypeError:  # mixed types: any fixed order will do
            return sorted(items, key=repr)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()  # np.bool_ -> bool, np.int64 -> int, np.float32 -> float, ...
        if not isinstance(value, (bool, int, float, complex, str, type(None))):
            return str(value)  # dates, bytes: their text
    if isinstance(value, float):
        if np.isinf(value):
            return "inf" if value > 0 else "-inf"
        if np.isnan(value):
            return "nan"
        return value
    if isinstance(value, complex):
        return jsonable([value.real, value.imag])
    return value
