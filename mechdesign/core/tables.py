"""Typed readers of TOML values: each returns the value it expects or raises a
:class:`ProblemError` naming the file, the key and what was expected.

Problem files are read at the boundary by these readers, so everything past them holds checked
numbers, matrices and name pairs.
"""

from __future__ import annotations

import math

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import check_distribution


def read_table(data: dict, key: str, file: str, required: bool = False) -> dict | None:
    """The sub-table ``[key]`` of ``data`` (looked up by the last dotted part of ``key``); None
    when absent and not ``required``."""
    value = data.get(key.split(".")[-1])
    if value is None:
        if required:
            raise ProblemError(f"missing required table [{key}]", file=file, key=key)
        return None
    if not isinstance(value, dict):
        raise ProblemError(f"expected a table [{key}], got {type(value).__name__}", file=file,
                           key=key)
    return value


def no_unknown(table: dict, allowed: set, file: str, prefix: str) -> None:
    """Refuse any key of ``table`` outside ``allowed`` (located as ``prefix`` + key)."""
    for k in table:
        if k not in allowed:
            raise ProblemError(f"unknown key; expected one of: {', '.join(sorted(allowed))}",
                               file=file, key=f"{prefix}{k}")


def read_number(value, file: str, key: str, *, positive: bool = False,
                integer: bool = False) -> float:
    """A finite number (not a boolean); optionally positive, optionally whole."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProblemError(f"expected a number, got {value!r}", file=file, key=key)
    if not math.isfinite(value):
        raise ProblemError(f"expected a finite number, got {value!r}", file=file, key=key)
    if integer and int(value) != value:
        raise ProblemError(f"expected a whole number, got {value!r}", file=file, key=key)
    if positive and value <= 0:
        raise ProblemError(f"expected a positive number, got {value!r}", file=file, key=key)
    return value


def is_number_list(value) -> bool:
    """True for a list whose entries are all numbers (booleans excluded)."""
    return isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)


def read_distribution(value, size: int, what: str, file: str, key: str) -> np.ndarray:
    """A probability vector of ``size`` entries (see :func:`check_distribution`), located at
    ``key`` when it is not one."""
    try:
        return check_distribution(value, size, what)
    except ProblemError as exc:
        raise ProblemError(exc.detail, file=file, key=key)


def read_name_pairs(value, file: str, key: str, what: str = "pairs") -> list[tuple[str, str]]:
    """A non-empty list of [a, b] pairs of two different names."""
    if not isinstance(value, list) or not value:
        raise ProblemError(f"expected a non-empty list of [a, b] {what}", file=file, key=key)
    out = []
    for i, pair in enumerate(value):
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(p, str) for p in pair)):
            raise ProblemError(f"entry {i} must be a pair of names [a, b], got {pair!r}", file=file,
                               key=key)
        if pair[0] == pair[1]:
            raise ProblemError(f"entry {i} pairs {pair[0]!r} with itself; a pair must name two "
                               "different values", file=file, key=key)
        out.append((pair[0], pair[1]))
    return out


def read_matrix(value, file: str, key: str) -> np.ndarray:
    """A two-dimensional array of finite numbers."""
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("expected a matrix (list of equal-length lists of numbers)", file=file,
                           key=key)
    if m.ndim != 2:
        raise ProblemError(f"expected a matrix (list of lists), got shape {m.shape}", file=file,
                           key=key)
    if not np.all(np.isfinite(m)):
        raise ProblemError("matrix entries must be finite numbers", file=file, key=key)
    return m
