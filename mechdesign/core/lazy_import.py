"""Heavy dependencies imported on first use, so that the command line starts fast.

``mechdesign --help`` and a problem that a structured solver takes (a line, a grid, ε-LDP) never
need cvxpy, which costs about a second to import; a module that compiles convex programs writes
``from .lazy_import import cvxpy as cp`` and uses ``cp`` as usual inside its functions. The
first attribute looked up imports the real module.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """A stand-in for a module that imports it when one of its attributes is first used."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def _load(self) -> ModuleType:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


cvxpy = LazyModule("cvxpy")


def lazy_exports(package: str, exports: dict[str, str], namespace: dict):
    """``__getattr__`` and ``__dir__`` for a package whose public names (``exports``: name ->
    submodule) load on first use (PEP 562); a loaded name is cached in ``namespace``."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
