"""Levels remembered for the length of one certification.

Certifying a design computes a notion's level of the same final matrix twice: once when the
repair checks that nothing is left to repair, once in the audit. For an all-pairs level that
is n²·m work (a minute at 5,000 locations), so :func:`mechdesign.privacy.certify.certify`
runs inside :func:`remembering_levels`, and a level asked again for a matrix with the same
bytes, by the same notion, is read back. Outside that block nothing is remembered: no state
outlives the certification or is kept on a notion.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

__all__ = ["remembered_level", "remembering_levels"]

_MEMO: ContextVar[dict | None] = ContextVar("remembered_levels", default=None)


@contextmanager
def remembering_levels() -> Iterator[None]:
    """Remember levels (by notion and matrix bytes) until the block ends."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def remembered_level(owner: object, k: np.ndarray, compute: Callable[[], float]) -> float:
    """``compute()``, or the value it gave for a matrix with the same bytes and shape asked by
    the same ``owner`` earlier in the current :func:`remembering_levels` block."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    a = np.ascontiguousarray(k, dtype=float)
    key = (id(owner), a.shape, hashlib.blake2b(a.tobytes(), digest_size=16).digest())
    if key not in memo:
        memo[key] = compute()
    return memo[key]
