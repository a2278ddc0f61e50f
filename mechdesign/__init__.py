"""mechdesign: certified optimal local privacy mechanisms.

>>> import mechdesign
>>> problem = mechdesign.load_problem("problems/ldp-skewed-prior.toml")   # doctest: +SKIP
>>> result = problem.solve()                                               # doctest: +SKIP
>>> result.status, result.objective, result.certificate                   # doctest: +SKIP

The names below are loaded on first use (PEP 562), so ``import mechdesign`` and the command
line's ``--help`` stay fast; ``from mechdesign import Problem`` works as usual.
"""

from __future__ import annotations

from mechdesign.core.lazy_import import lazy_exports

__version__ = "0.1.0"

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
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
