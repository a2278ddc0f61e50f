"""The protocol every privacy notion follows: compile to constraints, audit a matrix.

A notion is one small object holding its resolved data (ε, pairs of distributions, a metric,
...). It answers two questions (paper-independent, see CONVENTIONS "one protocol per concept"):

* ``constraints(K)`` — the cvxpy constraints it puts on the matrix variables ``K`` (a mapping
  from mechanism key to a non-negative (|X|, |Y|) variable; a single shared mechanism has the
  key ``"default"``);
* ``audit(mechs)`` — the level a given set of matrices achieves, computed in float64 with no
  solver, as an :class:`Audit` (requested vs achieved, holds or not).

It may also ``repair`` matrices that solver tolerance left slightly outside a pure (δ = 0)
ratio constraint, and say which mechanism keys it touches. A notion built from ε alone where the
problem knows the rest (a metric, the domain, the contexts) is completed by ``bind`` when the
problem is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import DEFAULT, Setting

#: Largest e^{εd} coefficient put into an LP; beyond it the constraint is left to
#: the repair step, which restores it exactly, and the LP value is only a lower bound.
MAX_LOG_COEFFICIENT = 20.0

__all__ = ["DEFAULT", "MAX_LOG_COEFFICIENT", "Notion", "check_delta", "check_epsilon", "hockey_stick",
           "log_ratio_max"]


class Notion:
    """Base class of privacy notions (see module docstring)."""

    #: the problem-file name of the notion
    name: ClassVar[str] = "notion"
    #: True when every constraint is linear (the problem stays an LP)
    linear: ClassVar[bool] = True

    def bind(self, setting: Setting) -> Notion:
        """This notion with what it left to the problem (a metric, the domain, the contexts)
        filled in from ``setting`` and checked against the problem's shapes (default: itself,
        unchanged). Problem calls it on every notion when it is built."""
        return self

    def constraints(self, K: Mapping[str, Any]) -> list:
        """The cvxpy constraints on the matrix variables ``K`` (key -> variable)."""
        raise NotImplementedError

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        """The level the matrices ``mechs`` (key -> matrix) achieve, as a certificate line."""
        raise NotImplementedError

    def __repr__(self) -> str:
        eps = getattr(self, "epsilon", None)
        return preview.call(type(self).__name__, [("epsilon", None if eps is None else preview.number(eps))])

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Return matrices that satisfy this notion's pure constraints exactly (default: as is)."""
        return mechs

    def keys(self, available: list[str]) -> list[str]:
        """The mechanism keys this notion constrains (default: all of them)."""
        return list(available)

    #: True when the compiled program is a relaxation (constraints left to the repair step; the
    #: LP value is then only a lower bound, and the certified value is the result)
    relaxed: bool = False

    #: When True, ε-dependent coefficients are compiled as cvxpy Parameters so that a sweep
    #: compiles the program once and only updates values (:meth:`set_epsilon`).
    parametric: bool = False

    def coefficient(self, name: str, fn: Callable[[float], Any]) -> Any:
        """The coefficient ``fn(ε)``: a number/array, or a Parameter holding it when parametric."""
        value = fn(self.epsilon)
        if not self.parametric:
            return value
        params = self.__dict__.setdefault("_params", {})
        if name not in params:
            params[name] = (cp.Parameter(np.shape(value), nonneg=True, value=value), fn)
        param, _ = params[name]
        param.value = value
        return param

    def structure(self) -> Any:
        """What fixes the shape of the compiled program at the current ε (hashable; None when
        the shape does not depend on ε). Sweeps compile once per distinct structure."""
        return None

    def set_epsilon(self, epsilon: float) -> None:
        """Change ε in place, updating compiled Parameters (used by sweeps)."""
        self.epsilon = check_epsilon(epsilon)
        for param, fn in self.__dict__.get("_params", {}).values():
            param.value = fn(self.epsilon)

    def neutral_row(self, n_outputs: int) -> np.ndarray | None:
        """Output distribution of a data-independent mechanism that satisfies this notion with
        zero leakage, mixed in as a last-resort repair (None: any such row will do)."""
        return None


def check_epsilon(epsilon: Any, key: str = "epsilon") -> float:
    """ε must be a finite non-negative number."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise ProblemError(f"expected a non-negative number, got {epsilon!r}", key=key)
    eps = float(epsilon)
    if not np.isfinite(eps) or eps < 0:
        raise ProblemError(f"expected a finite non-negative number, got {epsilon!r}", key=key)
    return eps


def check_delta(delta: Any, key: str = "delta") -> float:
    """δ must be a number in [0, 1]."""
    d = check_epsilon(delta, key)
    if d > 1:
        raise ProblemError(f"expected a number in [0, 1], got {delta!r}", key=key)
    return d


def log_ratio_max(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """max_y ln(p_y / q_y) along the last axis, with 0/0 = ratio 1 and p/0 = inf (p > 0)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(p) - np.log(q)
    r = np.where((p <= 0) & (q <= 0), -np.inf, r)
    r = np.where((p > 0) & (q <= 0), np.inf, r)
    out = r.max(axis=-1)
    return np.maximum(out, 0.0) if np.ndim(out) else max(float(out), 0.0)


def hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float | np.ndarray) -> np.ndarray:
    """Σ_y max(0, p_y − e^ε q_y) along the last axis (the δ of (ε, δ)-indistinguishability)."""
    e = np.exp(np.asarray(epsilon, dtype=float))
    if np.ndim(e):
        e = e[..., None]
    return np.maximum(np.asarray(p) - e * np.asarray(q), 0.0).sum(axis=-1)
