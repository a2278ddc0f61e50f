"""The ε-dependent coefficients of one compiled program: numbers fixed at compile time, or cvxpy
Parameters that a sweep re-targets without compiling again.

The constraints of a notion carry coefficients that depend on its ε: e^ε for LDP, e^{εd} per
pair for d-privacy, c·ln 2 for a bound of c bits. A notion asks the program's
:class:`Coefficients` for each one by name, together with the function of ε that gives it
(:meth:`Coefficients.coefficient`). A plain compile answers with that function's value at the
notion's ε. A parametric compile answers with a non-negative cvxpy Parameter holding the value,
made once per (notion, name) and kept here, in the object the compile returns with its program,
never on the notion: :meth:`Coefficients.retarget` sets every Parameter to its function's value
at a new ε, and cvxpy re-applies the parameter-to-data map it cached at the first solve instead
of compiling the program again. Compiling and re-targeting leave every notion as it was.

The coefficients are only the numbers: what fixes the program's shape at an ε (how many links a
chain of ratios needs, which pairs are left to repair; :meth:`Notion.structure`) is fixed at the
compile, and a sweep compiles again where the shape changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core.lazy_import import cvxpy as cp

if TYPE_CHECKING:
    from mechdesign.privacy.base import Notion


@dataclass
class _Parameter:
    """One Parameter of a parametric compile: the notion whose ε it follows, the Parameter and
    the function of that ε that gives its value."""

    owner: Notion
    parameter: Any
    value_at: Callable[[float], Any]


class Coefficients:
    """The ε-dependent coefficients of one compile (see the module docstring).

    Parameters
    ----------
    parametric : bool
        True: every coefficient is a cvxpy Parameter that :meth:`retarget` moves; False: every
        coefficient is the number at the notion's ε.
    """

    def __init__(self, parametric: bool = False):
        self.parametric = bool(parametric)
        # (id of the owning notion, name) -> its Parameter; the entry keeps the notion alive,
        # so that the id is not reused while the entry exists
        self._parameters: dict[tuple[int, str], _Parameter] = {}

    def coefficient(self, notion: Notion, name: str, value_at: Callable[[float], Any]) -> Any:
        """The coefficient ``value_at(ε)`` of ``notion`` at its ε: the number, or (parametric)
        the Parameter named ``name`` for this notion, holding it."""
        return self.following(notion, notion.epsilon, name, value_at)

    def following(self, owner: Notion, epsilon: float, name: str, value_at: Callable[[float], Any]) -> Any:
        """``value_at(epsilon)``, or (parametric) the Parameter named ``name`` that follows the ε
        of ``owner``, holding it: :meth:`retarget` sets it to ``value_at`` of owner's new ε."""
        value = value_at(epsilon)
        if not self.parametric:
            return value
        key = (id(owner), name)
        entry = self._parameters.get(key)
        if entry is None:
            parameter = cp.Parameter(np.shape(value), nonneg=True, value=value)
            entry = self._parameters[key] = _Parameter(owner, parameter, value_at)
        entry.parameter.value = value
        return entry.parameter

    def inner(self, owner: Notion, level: Callable[[float], float]) -> InnerCoefficients:
        """The coefficients for a notion that ``owner`` is built on, whose ε is ``level`` of
        owner's ε (shuffle privacy designs at the local level ε0 of its central ε): the inner
        notion's Parameters follow owner's ε, so re-targeting owner moves them."""
        return InnerCoefficients(self, owner, level)

    def follows(self, notion: Notion) -> bool:
        """Whether some Parameter of this compile follows ``notion``'s ε (False for a plain
        compile, and for a notion whose constraints have no ε-dependent coefficient: a program
        compiled with it holds at the compile's ε only)."""
        return any(entry.owner is notion for entry in self._parameters.values())

    def retarget(self, epsilon_by_notion: Mapping[Notion, float] | Iterable[tuple[Notion, float]]) -> None:
        """Set the Parameters that follow each notion of ``epsilon_by_notion`` (the notions the
        program was compiled with, matched by identity; a mapping or (notion, ε) pairs) to their
        values at its new ε; the others are left as they are."""
        pairs = epsilon_by_notion.items() if isinstance(epsilon_by_notion, Mapping) else epsilon_by_notion
        epsilon_by_id = {id(notion): float(epsilon) for notion, epsilon in pairs}
        for entry in self._parameters.values():
            epsilon = epsilon_by_id.get(id(entry.owner))
            if epsilon is not None:
                entry.parameter.value = entry.value_at(epsilon)


class InnerCoefficients:
    """What :meth:`Coefficients.inner` returns: the coefficient protocol for an inner notion,
    whose Parameters follow the ε of the notion built on it."""

    def __init__(self, outer: Coefficients, owner: Notion, level: Callable[[float], float]):
        self.outer, self.owner, self.level = outer, owner, level

    @property
    def parametric(self) -> bool:
        return self.outer.parametric

    def coefficient(self, notion: Notion, name: str, value_at: Callable[[float], Any]) -> Any:
        """``value_at`` at the inner notion's ε, which is ``level`` of the owner's."""
        level = self.level
        return self.outer.following(self.owner, self.owner.epsilon, f"{notion.name}.{name}",
                                    lambda epsilon: value_at(level(epsilon)))
