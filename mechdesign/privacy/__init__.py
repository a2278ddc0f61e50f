"""Privacy notions: each compiles to constraints and audits a given matrix (see base.py).

The notions are loaded on first use (PEP 562): ``from mechdesign.privacy import LDP`` works as
usual, and importing the package alone (the audit record type, say) loads none of them.
"""

from __future__ import annotations

import importlib

from .base import AUDIT_TOL, Audit, Notion
from .ldp import LDP, ApproxLDP, ldp  # light; and ``ldp`` must name the function, not the module

#: public name -> the module of this package that defines it
_EXPORTS = {
    "DistP": "distp", "ProfilePrivacy": "distp", "Side": "distp", "XDistP": "distp",
    "DivergenceDistP": "divergence", "DivergenceDP": "divergence", "DivergenceXDistP": "divergence",
    "DivergenceXDP": "divergence",
    "GVulnerability": "information", "InformationPrivacy": "information", "MinEntropy": "information",
    "MutualInformation": "information",
    "MetricPrivacy": "metric",
    "ApproximateKnowledge": "target", "Target": "target",
}

__all__ = ["AUDIT_TOL", "Audit", "Notion", "LDP", "ApproxLDP", "ldp", *_EXPORTS]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mechdesign.privacy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
