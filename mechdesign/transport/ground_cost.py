"""The ground cost c(x, y) of a transport problem, evaluated in bounded-memory blocks.

A cost is an explicit n × m matrix, a metric named on points ("absolute" |x − y| on a line,
"euclidean", "manhattan", "haversine" great-circle kilometres between [lat, lon] degrees), or a
callable ``metric(points_x_subset, points_y_subset) -> matrix``. :class:`GroundCost` validates
it once and then serves costs row block by row block (:meth:`GroundCost.chunks`, at most
:data:`CHUNK_ENTRIES` entries at a time) or pair by pair, so a metric never needs the n × m
matrix. It also knows the structure the solvers exploit: |x − y| on a line, the Monge
property of a matrix, and coarsening to cluster centroids for the multiscale solver.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from mechdesign.core.errors import ProblemError
from mechdesign.core.metrics import EARTH_RADIUS_KM

__all__ = ["CHUNK_ENTRIES", "METRICS", "CostLike", "GroundCost"]

METRICS = ("absolute", "euclidean", "manhattan", "haversine")
#: a cost matrix, a metric name, or a callable metric(points_x, points_y) -> matrix
CostLike = ArrayLike | str | Callable[[np.ndarray, np.ndarray], np.ndarray]
CHUNK_ENTRIES = 1 << 18  # entries of one cost block (2 MiB of float64: stays in cache)


class GroundCost:
    """A cost c(x, y) over X × Y given by a matrix, a metric name on points, or a callable."""

    def __init__(self, cost, n: int, m: int, points_x, points_y):
        self.n, self.m = n, m
        self.matrix = None
        self.fn: Callable | None = None
        self.kind = "matrix"
        self.X = self.Y = None
        if isinstance(cost, str):
            if cost not in METRICS:
                raise ProblemError(f"unknown cost '{cost}'; expected a cost matrix, a callable or "
                                   f"one of {', '.join(METRICS)}")
            self.kind = cost
            self.X = self._points(points_x, n, "points_x", cost)
            self.Y = self._points(points_y, m, "points_y", cost)
            if self.X.shape[1] != self.Y.shape[1]:
                raise ProblemError(f"points_x and points_y must have the same dimension, got "
                                   f"{self.X.shape[1]} and {self.Y.shape[1]}")
            if cost == "absolute" and self.X.shape[1] != 1:
                raise ProblemError(f"the 'absolute' cost needs 1-D points, got dimension "
                                   f"{self.X.shape[1]} (use 'euclidean' or 'manhattan')")
            if cost == "haversine":
                if self.X.shape[1] != 2:
                    raise ProblemError(f"the 'haversine' cost needs [lat, lon] points, got "
                                       f"dimension {self.X.shape[1]}")
                for P, nm in ((self.X, "points_x"), (self.Y, "points_y")):
                    if np.any(np.abs(P[:, 0]) > 90):
                        raise ProblemError(f"{nm}: latitudes must lie in [-90, 90] degrees")
                self._hx = self._haversine_prep(self.X)
                self._hy = self._haversine_prep(self.Y)
        elif callable(cost):
            self.kind = "callable"
            self.fn = cost
            if points_x is None or points_y is None:
                raise ProblemError("a callable cost needs points_x and points_y")
            self.X = np.asarray(points_x, dtype=float)
            self.Y = np.asarray(points_y, dtype=float)
            if self.X.ndim == 1:
                self.X, self.Y = self.X[:, None], np.asarray(self.Y, float).reshape(-1, 1)
            if len(self.X) != n or len(self.Y) != m:
                raise ProblemError(f"points_x and points_y must have {n} and {m} rows, got "
                                   f"{len(self.X)} and {len(self.Y)}")
        else:
            if points_x is not None or points_y is not None:
                raise ProblemError("points_x/points_y are only used with a metric name or a "
                                   "callable cost, not with a cost matrix")
            try:
                C = np.asarray(cost, dtype=float)
            except (TypeError, ValueError) as exc:
                raise ProblemError(f"cost must be a matrix, a callable or one of "
                                   f"{', '.join(METRICS)}; got {type(cost).__name__}") from exc
            if C.shape != (n, m):
                raise ProblemError(f"cost matrix must have shape ({n}, {m}) to match lam and mu, "
                                   f"got {C.shape}")
            if not np.all(np.isfinite(C)):
                raise ProblemError("cost matrix must be finite")
            self.matrix = C

    @staticmethod
    def _points(P, k: int, name: str, kind: str) -> np.ndarray:
        if P is None:
            if kind == "haversine":
                raise ProblemError(f"the 'haversine' cost needs {name} ([lat, lon] in degrees)")
            return np.arange(k, dtype=float)[:, None]
        try:
            A = np.asarray(P, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ProblemError(f"{name} must be numeric coordinates") from exc
        if A.ndim == 1:
            A = A[:, None]
        if A.ndim != 2 or A.shape[0] != k:
            raise ProblemError(f"{name} must have {k} points (one per mass), got shape {A.shape}")
        if not np.all(np.isfinite(A)):
            raise ProblemError(f"{name} must be finite")
        return A

    @staticmethod
    def _haversine_prep(P):
        lat, lon = np.radians(P[:, 0]), np.radians(P[:, 1])
        return lat, lon, np.cos(lat)

    # ---- structure
    def line(self):
        """1-D coordinates (x, y) when the cost is |x − y| on a line, else None."""
        if self.kind in ("absolute", "euclidean", "manhattan") and self.X.shape[1] == 1:
            return self.X[:, 0], self.Y[:, 0]
        return None

    def is_monge(self) -> bool:
        """c[i,j] + c[i+1,j+1] ≤ c[i,j+1] + c[i+1,j] for all i, j (explicit matrices only)."""
        C = self.matrix
        if C is None or C.shape[0] < 2 or C.shape[1] < 2:
            return C is not None
        lhs = C[:-1, :-1] + C[1:, 1:]
        rhs = C[:-1, 1:] + C[1:, :-1]
        scale = max(float(np.abs(C).max()), 1.0)
        return bool(np.all(lhs <= rhs + 1e-12 * scale))

    # ---- evaluation
    def block(self, rows) -> np.ndarray:
        """Dense costs c[rows, :] (rows a slice or an index array)."""
        if self.matrix is not None:
            return np.array(self.matrix[rows], dtype=float)
        if self.kind == "callable":
            return np.asarray(self.fn(self.X[rows], self.Y), dtype=float)
        if self.kind == "haversine":
            lat1, lon1, c1 = (t[rows] for t in self._hx)
            lat2, lon2, c2 = self._hy
            h = np.sin((lat2[None, :] - lat1[:, None]) * 0.5)
            h *= h
            s = np.sin((lon2[None, :] - lon1[:, None]) * 0.5)
            s *= s
            s *= c1[:, None]
            s *= c2[None, :]
            h += s
            np.clip(h, 0.0, 1.0, out=h)
            np.sqrt(h, out=h)
            np.arcsin(h, out=h)
            h *= 2 * EARTH_RADIUS_KM
            return h
        X = self.X[rows]
        out = None
        for k in range(X.shape[1]):
            d = X[:, k, None] - self.Y[None, :, k]
            if self.kind == "euclidean" and X.shape[1] > 1:
                d *= d
            else:
                np.abs(d, out=d)
            if out is None:
                out = d
            else:
                out += d
        if self.kind == "euclidean" and X.shape[1] > 1:
            np.sqrt(out, out=out)
        return out

    def pairs(self, r, c) -> np.ndarray:
        """Costs c[r[k], c[k]] for index arrays r, c."""
        r = np.asarray(r, dtype=np.int64)
        c = np.asarray(c, dtype=np.int64)
        if r.size == 0:
            return np.zeros(0)
        if self.matrix is not None:
            return self.matrix[r, c].astype(float)
        if self.kind == "callable":
            # evaluate row by row-group so a callable only ever sees (k, d) x (l, d) inputs
            out = np.empty(r.size)
            order = np.argsort(r, kind="stable")
            rs = r[order]
            starts = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]])
            ends = np.r_[starts[1:], rs.size]
            for s, e in zip(starts, ends):
                i = rs[s]
                cols = c[order[s:e]]
                out[order[s:e]] = np.asarray(self.fn(self.X[i:i + 1], self.Y[cols]),
                                             dtype=float).reshape(-1)
            return out
        if self.kind == "haversine":
            lat1, lon1, c1 = (t[r] for t in self._hx)
            lat2, lon2, c2 = (t[c] for t in self._hy)
            h = np.sin((lat2 - lat1) * 0.5) ** 2 + c1 * c2 * np.sin((lon2 - lon1) * 0.5) ** 2
            return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
        d = self.X[r] - self.Y[c]
        if self.kind == "euclidean":
            return np.sqrt(np.einsum("ij,ij->i", d, d))
        return np.abs(d).sum(axis=1)

    def chunks(self):
        """Row ranges (start, stop) whose blocks hold at most CHUNK_ENTRIES costs each."""
        step = max(1, CHUNK_ENTRIES // max(self.m, 1))
        for s in range(0, self.n, step):
            yield s, min(self.n, s + step)

    def scale(self) -> float:
        """A cheap upper estimate of max |c| (for tolerances)."""
        if self.matrix is not None:
            return max(float(np.abs(self.matrix).max()), 1e-300)
        if self.kind == "haversine":
            return math.pi * EARTH_RADIUS_KM
        if self.kind == "callable":
            k = min(self.n, 64)
            return max(float(np.abs(self.block(slice(0, k))).max()), 1e-300)
        lo = np.minimum(self.X.min(0), self.Y.min(0))
        hi = np.maximum(self.X.max(0), self.Y.max(0))
        ext = hi - lo
        s = float(np.sqrt((ext ** 2).sum())) if self.kind == "euclidean" else float(ext.sum())
        return max(s, 1e-300)

    # ---- multiscale
    def can_coarsen(self) -> bool:
        """Whether the cost is a metric on points, so clusters can be replaced by centroids."""
        return self.kind in ("euclidean", "manhattan", "haversine", "callable")

    def embed(self, side: str) -> np.ndarray:
        """Coordinates used for clustering (3-D unit vectors for haversine)."""
        P = self.X if side == "x" else self.Y
        if self.kind == "haversine":
            lat, lon = np.radians(P[:, 0]), np.radians(P[:, 1])
            return np.c_[np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)]
        return P

    def coarsened(self, gx, wx, gy, wy) -> GroundCost:
        """The same metric between the mass-weighted centroids of clusters gx of X, gy of Y."""
        cx = _centroids(self.embed("x"), gx, wx)
        cy = _centroids(self.embed("y"), gy, wy)
        if self.kind == "haversine":
            cx, cy = _latlon(cx), _latlon(cy)
        if self.kind == "callable":
            return GroundCost(self.fn, len(cx), len(cy), cx, cy)
        return GroundCost(self.kind, len(cx), len(cy), cx, cy)

    def restricted(self, r, c) -> GroundCost:
        """The same cost on the rows r and the columns c (index arrays, in that order; a
        permutation reorders); self if they are all rows and columns in index order."""
        if (r.size == self.n and c.size == self.m and np.array_equal(r, np.arange(self.n))
                and np.array_equal(c, np.arange(self.m))):
            return self
        sub = GroundCost.__new__(GroundCost)
        sub.__dict__.update(self.__dict__)
        sub.n, sub.m = r.size, c.size
        if self.matrix is not None:
            sub.matrix = self.matrix[np.ix_(r, c)]
        else:
            sub.X, sub.Y = self.X[r], self.Y[c]
            if self.kind == "haversine":
                sub._hx = tuple(t[r] for t in self._hx)
                sub._hy = tuple(t[c] for t in self._hy)
        return sub


def _centroids(P, g, w):
    k = int(g.max()) + 1
    W = np.bincount(g, weights=w, minlength=k)
    cnt = np.bincount(g, minlength=k)
    out = np.empty((k, P.shape[1]))
    for d in range(P.shape[1]):
        s = np.bincount(g, weights=w * P[:, d], minlength=k)
        plain = np.bincount(g, weights=P[:, d], minlength=k) / np.maximum(cnt, 1)
        out[:, d] = np.where(W > 0, s / np.where(W > 0, W, 1.0), plain)
    return out


def _latlon(V):
    V = V / np.maximum(np.linalg.norm(V, axis=1, keepdims=True), 1e-300)
    return np.c_[np.degrees(np.arcsin(np.clip(V[:, 2], -1, 1))), np.degrees(np.arctan2(V[:, 1], V[:, 0]))]
