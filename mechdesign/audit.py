"""Audit any mechanism a user brings against a privacy notion."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .mechanism import Mechanism, check_stochastic
from .privacy.base import DEFAULT, Audit, Notion


def audit(mechanism, notion: Notion) -> Audit:
    """The level ``mechanism`` achieves under ``notion`` (float64, no solver).

    ``mechanism`` is a :class:`Mechanism`, a row-stochastic array, or a mapping from context
    name to either (per-context mechanisms).

    >>> from mechdesign.privacy import LDP
    >>> audit(np.array([[0.75, 0.25], [0.25, 0.75]]), LDP(np.log(3))).holds
    True
    """
    return notion.audit(as_matrices(mechanism))


def as_matrices(mechanism) -> dict[str, np.ndarray]:
    if isinstance(mechanism, Mapping):
        return {str(k): _matrix(v) for k, v in mechanism.items()}
    return {DEFAULT: _matrix(mechanism)}


def _matrix(m) -> np.ndarray:
    if isinstance(m, Mechanism):
        return m.matrix
    return check_stochastic(m)
