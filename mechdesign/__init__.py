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
__version__ = "0.1.0"
