"""Privacy notions: each compiles to constraints and audits a given matrix (see base.py).

The notions are loaded on first use (PEP 562): ``from mechdesign.privacy import LDP`` works as
usual, and importing the package alone (the audit record type, say) loads none of them.
"""

from __future__ import annotations

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.lazy_import import lazy_exports
from mechdesign.privacy.base import Notion
from mechdesign.privacy.ldp import (  # light; and ``ldp`` must name the function, not the module
    LDP,
    ApproxLDP,
    ldp,
)

#: public name -> the module of this package that defines it
_EXPORTS = {
    "DistP": "distp", "ProfilePrivacy": "distp", "Side": "distp", "XDistP": "distp",
    "DivergenceDistP": "divergence", "DivergenceDP": "divergence", "DivergenceXDistP": "divergence",
    "DivergenceXDP": "divergence",
    "GVulnerability": "information", "InformationPrivacy": "information", "MinEntropy": "information",
    "MutualInformation": "information",
    "MetricPrivacy": "metric",
    "Shuffle": "shuffle",
    "ApproximateKnowledge": "target", "Target": "target",
}

__all__ = ["AUDIT_TOL", "Audit", "Notion", "LDP", "ApproxLDP", "ldp", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
