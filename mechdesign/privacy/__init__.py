"""Privacy notions: each compiles to constraints and audits a given matrix (see base.py)."""

from .base import AUDIT_TOL, Audit, Notion
from .distp import DistP, ProfilePrivacy, Side, XDistP
from .divergence import DivergenceDistP, DivergenceDP, DivergenceXDistP, DivergenceXDP
from .information import GVulnerability, InformationPrivacy, MinEntropy, MutualInformation
from .ldp import LDP, ApproxLDP, ldp
from .metric import MetricPrivacy
from .target import ApproximateKnowledge, Target

__all__ = ["AUDIT_TOL", "Audit", "Notion", "DistP", "ProfilePrivacy", "Side", "XDistP", "LDP",
           "ApproxLDP", "ldp", "MetricPrivacy"]
__all__ += ["DivergenceDistP", "DivergenceDP", "DivergenceXDistP", "DivergenceXDP",
            "ApproximateKnowledge", "Target"]
__all__ += ["GVulnerability", "InformationPrivacy", "MinEntropy", "MutualInformation"]
