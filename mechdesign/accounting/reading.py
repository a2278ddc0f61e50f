"""What every accountant reads first: the matrix itself, checked, and its local level.

The local level of a row-stochastic K is the smallest ε0 for which K is ε0-LDP,
ε0 = max over outputs y of ln(max_x K[x, y] / min_x K[x, y]) — ∞ when a column holds both a zero
and a non-zero (an output that rules an input out), 0 when all rows are equal.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_stochastic

#: what the accountants take: a row-stochastic matrix, or a Mechanism (its ``.matrix``)
MatrixLike = ArrayLike | Mechanism


def as_matrix(mechanism: MatrixLike) -> np.ndarray:
    """The row-stochastic matrix of ``mechanism`` (a matrix, or an object with ``.matrix`` such
    as :class:`~mechdesign.core.mechanism.Mechanism`); ProblemError when it is not one."""
    matrix = getattr(mechanism, "matrix", mechanism)
    return check_stochastic(matrix)


def local_level(matrix: MatrixLike) -> float:
    """The smallest ε0 for which ``matrix`` is ε0-LDP (module docstring)."""
    k = np.asarray(getattr(matrix, "matrix", matrix), dtype=float)
    k = k[:, k.max(axis=0) > 0]
    if k.shape[0] < 2 or k.size == 0:
        return 0.0
    low, high = k.min(axis=0), k.max(axis=0)
    if np.any(low <= 0):
        return math.inf
    return float(max(0.0, np.max(np.log(high) - np.log(low))))


def check_users(users: object) -> int:
    """A number of users: a whole number >= 1."""
    if isinstance(users, bool) or not isinstance(users, (int, float, np.integer, np.floating)) \
            or not float(users).is_integer() or users < 1:
        raise ProblemError(f"users must be a whole number >= 1, got {users!r}", key="users")
    return int(users)


def check_times(times: object) -> int:
    """A number of reports: a whole number >= 1."""
    if isinstance(times, bool) or not isinstance(times, (int, np.integer)) or times < 1:
        raise ProblemError(f"times must be a whole number >= 1, got {times!r}", key="times")
    return int(times)


def check_delta(delta: object) -> float:
    """δ in [0, 1]."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not 0 <= float(delta) <= 1:
        raise ProblemError(f"delta must be a number in [0, 1], got {delta!r}", key="delta")
    return float(delta)
