"""Symmetries of a design problem: permutations of the domain that preserve metric and cost.

A permutation g of the inputs (= outputs) with d(gx, gx') = d(x, x') and C[gx, gy] = C[x, y]
maps every feasible mechanism to a feasible one of the same cost, so averaging an optimum over
the group of such g gives a symmetric optimum, K[gx, gy] = K[x, y]. A decomposition may then
keep one row per input orbit and price one output per orbit: on a square grid with a uniform
prior and a Euclidean loss the eight symmetries of the square divide both by about eight.

Candidates are the signed permutations of the coordinate axes about the centre of the points'
bounding box (the symmetries of the square and the rectangle in 2-D); each is kept only if it
maps the point set onto itself and preserves the distances and the cost exactly (to 1e-12
relative), so the group found is always a true symmetry group of the problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations, product

import numpy as np

#: candidates are generated for points of at most this many coordinates (2^d·d! of them)
MAX_DIMENSION = 3
TOLERANCE = 1e-12


@dataclass
class Symmetry:
    """A permutation group of the domain, its orbits and their representatives."""

    perms: np.ndarray  # (|G|, n): perms[h, x] = h(x); perms[0] is the identity

    def __post_init__(self):
        g, n = self.perms.shape
        self.inverse = np.empty_like(self.perms)
        self.inverse[np.arange(g)[:, None], self.perms] = np.arange(n)[None, :]
        self.orbit = np.full(n, -1)  # orbit index of every point
        reps = []
        for x in range(n):
            if self.orbit[x] < 0:
                self.orbit[self.perms[:, x]] = len(reps)
                reps.append(x)
        self.representatives = np.array(reps)
        self.sizes = np.bincount(self.orbit)  # points per orbit

    @property
    def order(self) -> int:
        return self.perms.shape[0]

    def row_sums(self, v: np.ndarray) -> np.ndarray:
        """Per orbit o: Σ_h v[h⁻¹(x_o)], the row sum at x_o of the symmetric column Σ_h
        (output h(y), ray v∘h⁻¹)."""
        return v[self.inverse[:, self.representatives]].sum(axis=0)

    def spread(self, u_orbits: np.ndarray) -> np.ndarray:
        """Orbit duals → the equivalent symmetric duals on every input, u_o / |orbit|."""
        return (u_orbits / self.sizes)[self.orbit]

    def symmetrize_column(self, k: np.ndarray, y: int, v: np.ndarray, weight: float) -> None:
        """K[h(x), h(y)] += weight·v[x] for every h of the group (in place). The trivial group
        acts on the inputs only, so it also serves designs whose outputs are not the inputs."""
        if self.order == 1:
            k[:, y] += weight * v
            return
        for h in self.perms:
            k[h, h[y]] += weight * v


    def average(self, matrix: np.ndarray) -> np.ndarray:
        """The mean over the group of the design's images K[h(x), h(y)]: invariant under the
        group (up to round-off), private when K is and the privacy notion is invariant (a
        convex combination of private designs), and of the same expected loss when the cost is
        invariant. A method that does not use the group (the interior point) returns a design
        that is symmetric only up to its tolerance; this makes it symmetric."""
        if self.order == 1:
            return matrix
        out = np.zeros_like(matrix)
        for h in self.perms:
            out += matrix[np.ix_(h, h)]
        return out / self.order


def trivial(n: int) -> Symmetry:
    return Symmetry(np.arange(n)[None, :])


def find(points: np.ndarray | None, distances: np.ndarray, cost: np.ndarray) -> Symmetry:
    """The signed axis permutations (about the bounding box's centre) that map ``points`` onto
    themselves and preserve ``distances`` and ``cost`` (square, outputs = inputs); the identity
    alone when there are none or the problem is not of that shape."""
    n = distances.shape[0]
    if points is None or cost.shape != (n, n) or points.ndim != 2 or not 1 <= points.shape[1] <= MAX_DIMENSION:
        return trivial(n)
    dim = points.shape[1]
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    centred = points - centre
    scale = max(float(np.abs(centred).max()), 1e-300)
    key = {tuple(np.round(p / scale, 9)): i for i, p in enumerate(centred)}
    if len(key) != n:
        return trivial(n)
    found = [np.arange(n)]
    d_tol = TOLERANCE * max(float(np.abs(distances).max()), 1e-300)
    c_tol = TOLERANCE * max(float(np.abs(cost).max()), 1e-300)
    for axes in permutations(range(dim)):
        for signs in product((1.0, -1.0), repeat=dim):
            if axes == tuple(range(dim)) and all(s > 0 for s in signs):
                continue
            moved = centred[:, axes] * np.array(signs)
            perm = [key.get(tuple(np.round(p / scale, 9))) for p in moved]
            if any(p is None for p in perm):
                continue
            perm = np.array(perm)
            if (np.abs(distances[np.ix_(perm, perm)] - distances).max() <= d_tol
                    and np.abs(cost[np.ix_(perm, perm)] - cost).max() <= c_tol):
                found.append(perm)
    return Symmetry(np.array(found))
