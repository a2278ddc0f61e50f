"""Privacy notions: each compiles to constraints and audits a given matrix (see base.py)."""

from .base import AUDIT_TOL, Audit, Notion
from .distp import DistP, ProfilePrivacy, Side, XDistP
from .divergence import DivergenceDistP, DivergenceDP, DivergenceXDistP, DivergenceXDP
from .information import GVulnerability, InformationPrivacy, MinEntropy, MutualInformation
from .ldp import LDP, ApproxLDP, ldp
from .metric import MetricPrivacy
from .target import ApproximateKnowledge, Target

__all__ = [
           "AUDIT_TOL",
           "LDP",
           "ApproxLDP",
           "Audit",
           "DistP",
           "MetricPrivacy",
           "Notion",
           "ProfilePrivacy",
           "Side",
           "XDistP",
           "ldp",
]
__all__ += [
           "ApproximateKnowledge",
           "DivergenceDP",
           "DivergenceDistP",
           "DivergenceXDP",
           "DivergenceXDistP",
           "Target",
]
__all__ += ["GVulnerability", "InformationPrivacy", "MinEntropy", "MutualInformation"]
