"""The protocol every privacy notion follows: compile to constraints, audit a matrix.

A notion is one small object holding its resolved data (ε, pairs of distributions, a metric,
...). It answers two questions, whatever paper it comes from:

* ``constraints(K, coefficients)`` — the cvxpy constraints it puts on the matrix variables ``K``
  (a mapping from mechanism key to a non-negative (|X|, |Y|) variable; a single shared mechanism
  has the key ``"default"``), its ε-dependent coefficients taken from ``coefficients``
  (:mod:`mechdesign.privacy.coefficients`);
* ``audit(mechs)`` — the level a given set of matrices achieves, computed in float64 with no
  solver, as an :class:`Audit` (requested vs achieved, holds or not).

It may also ``repair`` matrices that solver tolerance left slightly outside a pure (δ = 0)
ratio constraint, and say which mechanism keys it touches. A notion built from ε alone where the
problem knows the rest (a metric, the domain, the contexts) is completed by ``bind`` when the
problem is built. Compiling writes nothing to a notion, and a sweep solves each ε with a
notion of its own (``with_epsilon``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import Audit
from mechdesign.core.errors import ProblemError
from mechdesign.core.setting import DEFAULT, Setting

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients

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

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        """The cvxpy constraints on the matrix variables ``K`` (key -> variable), each
        ε-dependent coefficient taken from ``coefficients`` (:meth:`Coefficients.coefficient`:
        the number at this notion's ε, or a Parameter a sweep re-targets)."""
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

    @property
    def relaxed(self) -> bool:
        """Whether the compiled program is a relaxation: constraints left to the repair step, so
        that the program's value is only a lower bound and the certified value is the result
        (default: never). Computed from the notion's data, never stored by a compile."""
        return False

    def structure(self) -> Any:
        """What fixes the shape of the compiled program at the current ε (hashable; None when
        the shape does not depend on ε). Sweeps compile once per distinct structure."""
        return None

    def with_epsilon(self, epsilon: float) -> Notion:
        """This notion at another ε, as a new notion; this one is left as it is (a sweep solves
        each point with one). Notions whose other data follow ε override it."""
        other = copy.copy(self)
        other.epsilon = check_epsilon(epsilon)
        return other

    def program_rows(self, n_inputs: int, n_outputs: int) -> int | None:
        """The scalar constraint rows ``constraints`` writes per mechanism key, counted before
        anything is built (:mod:`mechdesign.design.program_size` refuses a general compile that
        cannot fit in memory); None: not counted beforehand, only once built (default)."""
        return None

    def certification_seconds(self, n_outputs: int) -> float:
        """Seconds the certificate of this notion may take on a design with ``n_outputs``
        outputs (its repair and audit), held back from a solve's time limit so that the
        certified result still arrives within it; 0 where that is quick."""
        return 0.0

    def neutral_row(self, n_outputs: int, mechs: Mapping[str, np.ndarray] | None = None) -> np.ndarray | None:
        """Output distribution of a data-independent mechanism that satisfies this notion with
        zero leakage, mixed in as a last-resort repair of ``mechs`` (the matrices being repaired,
        when there are any); None: any such row will do."""
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
