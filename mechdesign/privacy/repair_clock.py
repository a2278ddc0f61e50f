"""The moment a certification should be done by, for repairs that work in rounds.

A solve with a time limit stops its solvers early by the time the certificate is expected to
take, then certifies inside :func:`repairing_until` with the limit's moment. A repair that
improves its matrix round by round (the d-privacy envelope) asks :func:`seconds_left` before
another round and, when that round and the audit after it would outlast the limit, returns the
private matrix it already has. Outside that block there is no deadline. Nothing outlives the
block or is kept on a notion.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["repairing_until", "seconds_left"]

_DEADLINE: ContextVar[float | None] = ContextVar("repair_deadline", default=None)


@contextmanager
def repairing_until(deadline: float | None) -> Iterator[None]:
    """Repairs in the block should be done by ``deadline`` (a ``time.perf_counter()`` moment;
    None: no deadline)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float:
    """Seconds until the current block's deadline (inf without one; negative once past)."""
    deadline = _DEADLINE.get()
    return math.inf if deadline is None else deadline - time.perf_counter()
