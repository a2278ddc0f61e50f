"""mechdesign: certified optimal local privacy mechanisms.

>>> import mechdesign
>>> problem = mechdesign.load_problem("problems/ldp-skewed-prior.toml")   # doctest: +SKIP
>>> result = problem.solve()                                               # doctest: +SKIP
>>> result.status, result.objective, result.certificate                   # doctest: +SKIP

The names below are loaded on first use (PEP 562), so ``import mechdesign`` and the command
line's ``--help`` stay fast; ``from mechdesign import Problem`` works as usual.
"""

from __future__ import annotations

import importlib
import sys
import types

from .lazy_import import lazy_exports

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    "audit": "audit", "Domain": "domain", "ProblemError": "errors", "Mechanism": "mechanism",
    "Metric": "metrics", "Problem": "problem", "Result": "result", "load_problem": "spec",
    "problem_from_dict": "spec",
    # compositions, couplings and divergences (Kawamoto and Murakami's distribution privacy)
    "compose_independent": "composition", "compose_shared": "composition",
    "product_distribution": "composition", "coupling_mechanism": "coupling_mechanism",
    "mechanism_from_coupling": "coupling_mechanism", "DIVERGENCES": "divergences",
    "divergence": "divergences",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def _function_named_like_its_module(name: str) -> property:
    """``mechdesign.audit`` and ``mechdesign.coupling_mechanism`` are functions defined in
    submodules of the same name; importing such a submodule would rebind the package attribute
    to the module, so these two names are properties that always give the function (and ignore
    that rebinding; the modules stay importable as ``mechdesign.audit`` in ``from ... import``)."""

    def get(package):
        return getattr(importlib.import_module(f".{name}", __name__), name)

    return property(get, lambda package, value: None)


class _Package(types.ModuleType):
    audit = _function_named_like_its_module("audit")
    coupling_mechanism = _function_named_like_its_module("coupling_mechanism")


sys.modules[__name__].__class__ = _Package
