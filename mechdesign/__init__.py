"""mechdesign: certified optimal local privacy mechanisms.

>>> import mechdesign
>>> problem = mechdesign.load_problem("problems/ldp-skewed-prior.toml")   # doctest: +SKIP
>>> result = problem.solve()                                               # doctest: +SKIP
>>> result.status, result.objective, result.certificate                   # doctest: +SKIP

The names below are loaded on first use (PEP 562), so ``import mechdesign`` and the command
line's ``--help`` stay fast; ``from mechdesign import Problem`` works as usual.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from mechdesign import examples
from mechdesign.core.lazy_import import lazy_exports

try:  # the installed distribution's version: pyproject.toml is the one place it is written
    __version__ = version("mechdesign")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

#: public name -> the module that defines it
_EXPORTS = {
    "audit": "privacy.audit", "Domain": "core.domain", "ProblemError": "core.errors",
    "Mechanism": "core.mechanism", "Metric": "core.metrics", "Problem": "design.problem",
    "Result": "design.result", "load_problem": "design.spec", "problem_from_dict": "design.spec",
    # compositions, couplings and divergences (Kawamoto and Murakami's distribution privacy)
    "compose_independent": "mechanisms.composition", "compose_shared": "mechanisms.composition",
    "product_distribution": "mechanisms.composition", "coupling_mechanism": "mechanisms.coupling_mechanism",
    "mechanism_from_coupling": "transport.coupling_kernel", "DIVERGENCES": "core.divergences",
    "divergence": "core.divergences",
    # objectives and privacy notions, to build a Problem from arrays
    "ExpectedLoss": "core.objectives", "ErrorProbability": "core.objectives",
    "WorstCaseLoss": "core.objectives", "MaxOffDiagonal": "core.objectives",
    "ProfileMarginalError": "core.objectives",
    # maximised information utilities (ε-LDP, staircase solver) and the robust expected loss
    "MutualInformationUtility": "core.information_utilities", "HypothesisTesting": "core.information_utilities",
    "RobustExpectedLoss": "core.robust_loss", "FinitePriors": "core.prior_sets", "TVBall": "core.prior_sets",
    "PriorBox": "core.prior_sets",
    "LDP": "privacy.ldp", "ApproxLDP": "privacy.ldp", "MetricPrivacy": "privacy.metric",
    "DistP": "privacy.distp", "XDistP": "privacy.distp", "ProfilePrivacy": "privacy.distp",
    "Side": "privacy.distp", "DivergenceDP": "privacy.divergence", "DivergenceXDP": "privacy.divergence",
    "DivergenceDistP": "privacy.divergence", "DivergenceXDistP": "privacy.divergence",
    "InformationPrivacy": "privacy.information", "MutualInformation": "privacy.information",
    "MinEntropy": "privacy.information", "GVulnerability": "privacy.information",
    "Target": "privacy.target", "ApproximateKnowledge": "privacy.target",
    # central guarantees of a designed matrix: shuffled reports, repeated reports
    "amplify": "accounting.shuffle", "compose": "accounting.composition",
}

__all__ = list(_EXPORTS) + ["examples"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
