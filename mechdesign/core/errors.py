"""The one error type users see for bad input, and the array check most inputs go through."""

from __future__ import annotations

from typing import Any

import numpy as np


class ProblemError(ValueError):
    """A problem (file or objects) is malformed.

    The message names where (file and key) and what was expected, so the command line can print it
    as one line and exit with code 2.
    """

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None):
        self.file = file
        self.key = key
        self.detail = message
        where = []
        if file:
            where.append(str(file))
        if key:
            where.append(f"key '{key}'")
        prefix = ": ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def located(self, file: str | None = None, key: str | None = None) -> "ProblemError":
        """Return the same error with the file (and key, if missing) filled in."""
        return ProblemError(self.detail, file=self.file or file, key=self.key or key)


def float_array(value: Any, ndim: int, expected: str, key: str) -> np.ndarray:
    """``value`` as a float array of ``ndim`` dimensions, or a :class:`ProblemError` at ``key``
    saying "expected <expected>, got <value>"."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != ndim:
        raise ProblemError(f"expected {expected}, got {value!r}", key=key)
    return array
