"""mechdesign: certified optimal local privacy mechanisms.

>>> import mechdesign
>>> problem = mechdesign.load_problem("problems/ldp-skewed-prior.toml")   # doctest: +SKIP
>>> result = problem.solve()                                               # doctest: +SKIP
>>> result.status, result.objective, result.certificate                   # doctest: +SKIP
"""

from .audit import audit
from .domain import Domain
from .errors import ProblemError
from .mechanism import Mechanism
from .metrics import Metric
from .problem import Problem
from .result import Result
from .spec import load_problem, problem_from_dict

__all__ = ["audit", "Domain", "ProblemError", "Mechanism", "Metric", "Problem", "Result",
           "load_problem", "problem_from_dict"]

# paper 003: divergences, coupling mechanisms (registers their special solver), compositions
from .composition import compose_independent, compose_shared, product_distribution
from .coupling_mechanism import coupling_mechanism, mechanism_from_coupling
from .divergences import DIVERGENCES, divergence

__all__ += ["compose_independent", "compose_shared", "product_distribution", "coupling_mechanism",
            "mechanism_from_coupling", "DIVERGENCES", "divergence"]
# scale: exact structured solvers (each registers its special solver)
from . import charnes_cooper, column_generation, dantzig_wolfe, lazy_pairs  # noqa: E402,F401

__version__ = "0.1.0"
