"""Audit any mechanism a user brings against a privacy notion."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from mechdesign.core.audit_record import Audit
from mechdesign.core.mechanism import Mechanism, check_stochastic
from mechdesign.privacy.base import DEFAULT, Notion


def audit(mechanism: Mechanism | np.ndarray | Mapping[str, Any], notion: Notion, exact: bool = False) -> Audit:
    """The level ``mechanism`` achieves under ``notion`` (float64, no solver).

    ``mechanism`` is a :class:`Mechanism`, a row-stochastic array, or a mapping from context
    name to either (per-context mechanisms).

    With ``exact=True`` the matrices are re-checked in exact rational / outward-rounded interval
    arithmetic from the notion's definition (:func:`mechdesign.privacy.exact.exact_audit`): ``holds``
    is then a proof at the requested level plus the audit tolerance, ``detail`` says whether it
    also holds with no tolerance, and ``achieved`` is a rigorous upper bound of the level. A
    notion exact mode does not cover raises :class:`~mechdesign.core.errors.ProblemError`.

    >>> from mechdesign.privacy import LDP
    >>> audit(np.array([[0.75, 0.25], [0.25, 0.75]]), LDP(np.log(3))).holds
    True
    """
    if exact:
        from mechdesign.privacy.exact import exact_audit

        return exact_audit(notion, as_matrices(mechanism))
    return notion.audit(as_matrices(mechanism))


def as_matrices(mechanism: Mechanism | np.ndarray | Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The matrices of a mechanism, an array or a mapping of them, keyed by mechanism key."""
    if isinstance(mechanism, Mapping):
        return {str(k): _matrix(v) for k, v in mechanism.items()}
    return {DEFAULT: _matrix(mechanism)}


def _matrix(m: Any) -> np.ndarray:
    if isinstance(m, Mechanism):
        return m.matrix
    return check_stochastic(m)
