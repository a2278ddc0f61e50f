r"""The ε·d-privacy level of a matrix whose inputs lie on a line, proven for every pair from
the adjacent ones.

For inputs x_1 ≤ … ≤ x_n on a line, d(x_i, x_k) = x_k − x_i is the sum of the gaps between
consecutive inputs, and for every column y the log-ratio ln K[x_i, y] − ln K[x_k, y] is the
sum of the consecutive log-ratios. So with L the largest |consecutive log-ratio| / gap,

.. math::
    \ln K[x_i, y] - \ln K[x_k, y] \le \sum_{t=i}^{k-1} |\Delta_t(y)| \le L \sum_t g_t
    = L\, d(x_i, x_k),

and L bounds the level over all n(n − 1) ordered pairs, which it attains on a consecutive pair:
the audit reads 2(n − 1) pairs instead of n(n − 1), exactly. The gaps are taken one unit in
the last place below their floating-point difference, so each is at most the exact gap and L
is never below the exact level. A zero entry next to a positive one in a column meets such a
pair along the line (+inf), and coincident inputs (gap 0) must have identical rows.

Everything here is computed from the domain's coordinates and the matrix alone (a sort and
differences), independently of how any solver used the line.
"""

from __future__ import annotations

import numpy as np

__all__ = ["line_level"]


def line_level(logk: np.ndarray, x: np.ndarray, huge: float) -> float:
    """max over ordered pairs x != x' of max_y (logk[x, y] − logk[x', y]) / |x − x'| for 1-D
    coordinates ``x`` (0 at least); +inf for a gap of at least ``huge`` (a zero entry next to a
    positive one, with zeros logged as a huge negative number) or for coincident inputs with
    different rows."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    worst = 0.0
    step = max(1, 4_000_000 // max(logk.shape[1], 1))  # rows per block: ~32 MB temporaries
    for s in range(0, order.size - 1, step):
        e = min(s + step, order.size - 1)
        a = logk[order[s:e]]
        b = logk[order[s + 1:e + 1]]
        r = np.abs(a - b).max(axis=1, initial=0.0)
        gap = np.nextafter(xs[s + 1:e + 1] - xs[s:e], 0.0)  # ≤ the exact gap
        if np.any(r >= huge) or np.any((r > 0) & (gap <= 0)):
            return float("inf")
        ok = r > 0
        if ok.any():
            worst = max(worst, float((r[ok] / gap[ok]).max()))
    return worst
