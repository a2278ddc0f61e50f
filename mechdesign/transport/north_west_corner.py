r"""The North-West corner rule: optimal couplings for Monge costs, and closed forms on a line.

For a cost matrix with the Monge property c[i, j] + c[i+1, j+1] ≤ c[i, j+1] + c[i+1, j] —
in particular |x − y| on sorted points of a line — the North-West corner staircase (the
comonotone coupling) is optimal (Kawamoto and Murakami, Local Distribution Obfuscation via
Probability Coupling, Allerton 2019, §II-G). It takes O(n + m) after sorting and has at most
n + m − 1 cells, so no n × m matrix is ever built. On a line W1 and W∞ then have closed
forms, and the Kantorovich potential φ with φ' = −sign(F_λ − F_μ) certifies the plan.

A staircase is also a spanning tree of the bipartite transport graph, which makes it the
starting basis of the network simplex.
"""

from __future__ import annotations

import numpy as np

from mechdesign.transport.ground_cost import GroundCost

__all__ = [
    "line_min_reduced_cost",
    "line_potential",
    "line_w1",
    "north_west_corner",
    "sorted_line_coupling",
    "staircase_potentials",
]


def north_west_corner(p: np.ndarray, q: np.ndarray):
    """The North-West corner staircase of two mass vectors (each of total 1) in the given order.

    Returns cell indices (i, j) and masses of the n + m − 1 cells of the staircase: the
    monotone (comonotone) coupling, optimal for every Monge cost. Cells may have zero mass.
    """
    n = p.size
    Fp = np.cumsum(p)
    Fq = np.cumsum(q)
    # both staircases end at exactly 1; trailing zero masses keep exactly zero width
    Fp /= Fp[-1]
    Fq /= Fq[-1]
    # a row (column) is exhausted at these cumulative masses; merge the two sorted event lists
    # (a stable sort of two sorted runs is a linear-time merge; on ties the row event goes first)
    events = np.concatenate([Fp[:-1], Fq[:-1]])
    order = np.argsort(events, kind="stable")
    T = events[order]
    is_row = order < n - 1
    ends = np.r_[T, 1.0]
    starts = np.r_[0.0, T]
    mass = ends - starts
    np.maximum(mass, 0.0, out=mass)
    i = np.r_[0, np.cumsum(is_row)]
    j = np.r_[0, np.cumsum(~is_row)]
    return i, j, mass


def sorted_line_coupling(p, q, x, y, *, with_sorted_rows=False):
    """The North-West corner coupling of p on points x and q on points y of a line, in sorted
    order: (rows, cols, masses) in the original indices, and with ``with_sorted_rows`` also
    the sorted row positions (non-decreasing along the staircase)."""
    ox = np.argsort(x)
    oy = np.argsort(y)
    i, j, mass = north_west_corner(p[ox], q[oy])
    if with_sorted_rows:
        return ox[i], oy[j], mass, i
    return ox[i], oy[j], mass


def line_potential(p, q, x, y):
    """Kantorovich potential φ for |x − y| on a line: u = φ(x), v = −φ(y).

    φ' = −sign(F_λ − F_μ) between consecutive support points, so Σ λφ − Σ μφ = ∫|F_λ − F_μ| = W1
    and φ is 1-Lipschitz. Returns (u, v, lipschitz_defect) where the defect is the (round-off)
    amount by which |Δφ| exceeds the gap, summed: every pair's reduced cost is ≥ −defect.
    """
    z, inv = np.unique(np.r_[x, y], return_inverse=True)
    inv = inv.ravel()
    n = x.size
    Fp = np.cumsum(np.bincount(inv[:n], weights=p, minlength=z.size))
    Fq = np.cumsum(np.bincount(inv[n:], weights=q, minlength=z.size))
    gaps = np.diff(z)
    step = -np.sign(Fp[:-1] - Fq[:-1]) * gaps
    phi = np.r_[0.0, np.cumsum(step)]
    defect = float(np.maximum(np.abs(np.diff(phi)) - gaps, 0.0).sum())
    return phi[inv[:n]], -phi[inv[n:]], defect


def line_w1(p, q, x, y) -> float:
    """W1 on a line: Σ_k |F_λ(z_k) − F_μ(z_k)| (z_{k+1} − z_k) over the merged sorted support."""
    z = np.concatenate([x, y])
    order = np.argsort(z)
    z = z[order]
    F = np.cumsum(np.concatenate([p, -q])[order])  # F_λ − F_μ just right of each z_k
    return float(np.dot(np.abs(F[:-1]), np.diff(z)))


def staircase_potentials(C: GroundCost, rows, cols):
    """Duals of a North-West staircase (a spanning tree): u[i] + v[j] = c[i, j] on its cells."""
    s = C.pairs(rows, cols)
    d = np.diff(s)
    row_step = np.diff(rows) > 0
    u = np.zeros(C.n)
    v = np.zeros(C.m)
    # along the path: a row step changes u by Δs (same column), a column step changes v by Δs
    u_path = np.r_[0.0, np.cumsum(np.where(row_step, d, 0.0))]
    v_path = s[0] + np.r_[0.0, np.cumsum(np.where(row_step, 0.0, d))]
    u[rows] = u_path
    v[cols] = v_path
    return u, v


def line_min_reduced_cost(x, y, u, v) -> float:
    """min over pairs of |x_i − y_j| − u_i − v_j, in O((n+m) log(n+m)).

    min_j (|x_i − y_j| − v_j) = min(x_i + min_{y_j ≤ x_i}(−y_j − v_j), −x_i + min_{y_j ≥ x_i}(y_j − v_j)).
    """
    oy = np.argsort(y, kind="stable")
    ys, vs = y[oy], v[oy]
    left = np.minimum.accumulate(-ys - vs)  # prefix minima
    right = np.minimum.accumulate((ys - vs)[::-1])[::-1]  # suffix minima
    k = np.searchsorted(ys, x, side="right")  # ys[:k] ≤ x
    best = np.full(x.size, np.inf)
    has_left = k > 0
    best[has_left] = x[has_left] + left[k[has_left] - 1]
    k2 = np.searchsorted(ys, x, side="left")  # ys[k2:] ≥ x
    has_right = k2 < ys.size
    best[has_right] = np.minimum(best[has_right], -x[has_right] + right[k2[has_right]])
    return float((best - u).min())
