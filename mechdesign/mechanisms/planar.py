"""Planar mechanisms on a grid of square cells, for ε·d-privacy with the Euclidean d
(geo-indistinguishability): planar Laplace and its lattice analogue, planar geometric.

Each is continuous (Laplace) or lattice (geometric) noise followed by the remap to the nearest
grid point (border cells absorb everything outside), computed exactly: cell masses by 1-D polar
integrals (relative error ~1e-13), lattice tails summed to double precision, and only sums of
non-negative terms (no cancellation in tiny entries). Exact audited levels: planar geometric is
ε·d exactly on grids with at least 3 rows and 4 columns; planar Laplace is slightly below ε
(the integration over cells loses a little).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import pairwise, product

import numpy as np
from scipy import integrate

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.metrics import Metric
from mechdesign.privacy.base import check_epsilon
from mechdesign.privacy.metric import MetricPrivacy

__all__ = [
    "PLANAR_WINDOW_MAX",
    "GridLattice",
    "grid_lattice",
    "laplace_rectangle_mass",
    "mirror_quadrant",
    "offset_intervals",
    "planar_geometric",
    "planar_laplace",
]

#: Planar geometric: largest offset window (cells per axis) summed to reach double precision.
PLANAR_WINDOW_MAX = 2500


@dataclass(frozen=True)
class GridLattice:
    """A full ``rows`` x ``cols`` lattice of square cells of side ``cell``; ``index`` gives, per
    value of ``domain``, its lattice index r * cols + c."""

    rows: int
    cols: int
    cell: float
    index: np.ndarray  # per domain value, its lattice index r * cols + c
    domain: Domain


def grid_lattice(grid, cell: float) -> GridLattice:
    """A full rows x cols lattice with square cells, from a Domain with 2-D points or (rows, cols)
    with cells of side ``cell``. Raises :class:`~mechdesign.core.errors.ProblemError` when the
    points do not form such a lattice, so it also tells whether the planar mechanisms apply."""
    if isinstance(grid, Domain):
        pts = grid.points
        if pts is None or pts.shape[1] != 2:
            raise ProblemError("planar mechanisms need a grid of 2-D points (inputs grid = {...})")
        axes, steps = [], []
        for a in range(2):
            values = np.unique(np.round(pts[:, a], 9))
            axes.append(values)
            if len(values) > 1:
                gaps = np.diff(values)
                if not np.allclose(gaps, gaps[0], rtol=1e-9):
                    raise ProblemError("planar mechanisms need equally spaced grid points")
                steps.append(float(gaps[0]))
        if steps and not np.isclose(min(steps), max(steps), rtol=1e-9):
            raise ProblemError(f"planar mechanisms need square cells; row and column spacing differ ({steps})")
        rows, cols = len(axes[0]), len(axes[1])
        if rows * cols != len(grid):
            raise ProblemError(f"the points do not form a full {rows} x {cols} grid ({len(grid)} points)")
        r = np.searchsorted(axes[0], np.round(pts[:, 0], 9))
        c = np.searchsorted(axes[1], np.round(pts[:, 1], 9))
        index = r * cols + c
        if len(np.unique(index)) != len(grid):
            raise ProblemError("the grid has repeated points")
        return GridLattice(rows, cols, steps[0] if steps else float(cell), index, grid)
    try:
        rows, cols = (int(v) for v in grid)
    except (TypeError, ValueError):
        raise ProblemError(f"expected a grid Domain or (rows, cols), got {grid!r}")
    if rows < 1 or cols < 1 or not (np.isfinite(cell) and cell > 0):
        raise ProblemError(f"expected rows, cols >= 1 and a positive cell size, got {rows}, {cols}, {cell}")
    domain = Domain.from_grid(rows, cols, cell)
    return GridLattice(rows, cols, float(cell), np.arange(rows * cols), domain)


def laplace_rectangle_mass(eps: float, x0: float, x1: float, y0: float, y1: float) -> float:
    """Mass of planar Laplace noise (density ε²/(2π) e^{−ε|z|}) in [x0, x1] x [y0, y1], a
    rectangle of the closed first quadrant (bounds may be inf), in polar coordinates:

        (1/2π) ∫ [S(r_in(θ)) − S(r_out(θ))] dθ,   S(r) = e^{−εr}(1 + εr),

    where [r_in, r_out] is the ray's stretch inside the rectangle; split at the corners' angles."""
    inf = math.inf

    def angle(y, x):
        if x == inf:
            return 0.0
        if y == inf:
            return math.pi / 2
        return math.atan2(y, x)

    lo, hi = angle(y0, x1), angle(y1, x0)
    cuts = [lo, hi]
    for y, x in ((y0, x0), (y1, x1)):
        if x < inf and y < inf:
            cuts.append(angle(y, x))
    cuts = sorted({min(max(t, lo), hi) for t in cuts})

    def stretch(th):
        c, s = math.cos(th), math.sin(th)
        rin = max(x0 / c if c > 0 else (inf if x0 > 0 else 0.0),
                  y0 / s if s > 0 else (inf if y0 > 0 else 0.0))
        rout = min(x1 / c if c > 0 else inf, y1 / s if s > 0 else inf)
        return rin, rout

    def f(th):
        rin, rout = stretch(th)
        if not rout > rin or rin == inf:
            return 0.0
        a = eps * rin
        if rout == inf:
            return math.exp(-a) * (1 + a)
        t = eps * (rout - rin)
        return math.exp(-a) * ((1 + a) * -math.expm1(-t) - t * math.exp(-t))

    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for a, b in pairwise(cuts):
            if b > a:
                total += integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-13, limit=400)[0]
    return total / (2 * math.pi)


def offset_intervals(size: int) -> list[tuple[float, float, float]]:
    """Per offset magnitude a = 0..size−1 (in cells), the first-quadrant interval of the cells
    mapped to it and the symmetry factor: the extreme offset absorbs everything beyond."""
    inf = math.inf
    if size == 1:
        return [(0.0, inf, 2.0)]
    out = [(0.0, 0.5, 2.0)]
    out += [(a - 0.5, a + 0.5, 1.0) for a in range(1, size - 1)]
    out.append((size - 1.5, inf, 1.0))
    return out


def _fold(v: np.ndarray, size: int, axis: int) -> np.ndarray:
    """Fold a quadrant of weights over offsets 0..P onto 0..size−1 (the extreme absorbs the tail;
    with size 1 both signs fold onto 0)."""
    v = np.moveaxis(v, axis, 0)
    if size == 1:
        out = (v[:1] + 2 * v[1:].sum(axis=0, keepdims=True))
    else:
        out = np.concatenate([v[:size - 1], v[size - 1:].sum(axis=0, keepdims=True)], axis=0)
    return np.moveaxis(out, 0, axis)


def mirror_quadrant(q: np.ndarray) -> np.ndarray:
    """Quadrant Q[a, b] over |offsets| -> full M[i, j] over offsets −(R−1)..R−1, −(C−1)..C−1."""
    full = np.concatenate([q[:0:-1], q], axis=0)
    return np.concatenate([full[:, :0:-1], full], axis=1)


def _remap(m: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """K[x, y] = mass of the offsets o with clamp(x + o) = y, for offset masses M (extremes
    already absorbing everything beyond). Only sums of non-negative terms (no cancellation)."""
    stacks = []
    for ka in range(3):
        a = m if ka == 0 else (np.cumsum(m, axis=0) if ka == 1 else np.cumsum(m[::-1], axis=0)[::-1])
        row = []
        for kb in range(3):
            b = a if kb == 0 else (np.cumsum(a, axis=1) if kb == 1 else np.cumsum(a[:, ::-1], axis=1)[:, ::-1])
            row.append(b)
        stacks.append(row)
    stacks = np.array(stacks)  # (3, 3, 2R−1, 2C−1)

    def axis_kind(size):
        x = np.arange(size)[:, None]
        y = np.arange(size)[None, :]
        kind = np.zeros((size, size), dtype=int)
        idx = (y - x + size - 1).astype(int)
        if size > 1:
            kind[:, :1] = 1
            idx[:, 0] = size - 1 - x[:, 0]          # offsets <= −x
            kind[:, -1:] = 2
            idx[:, -1] = 2 * size - 2 - x[:, 0]     # offsets >= size−1−x
        return kind, idx

    kr, ir = axis_kind(rows)
    kc, ic = axis_kind(cols)
    # lattice index r*cols + c; build (R, C, R, C) then flatten
    K = stacks[kr[:, None, :, None], kc[None, :, None, :], ir[:, None, :, None], ic[None, :, None, :]]
    return K.reshape(rows * cols, rows * cols)


def _planar(lat: GridLattice, q: np.ndarray, eps: float, name: str) -> Mechanism:
    m = mirror_quadrant(q)
    m = m / m.sum()
    k = _remap(m, lat.rows, lat.cols)
    k = k / k.sum(axis=1, keepdims=True)
    k = k[np.ix_(lat.index, lat.index)]
    claim = MetricPrivacy(eps, Metric("euclidean"), lat.domain)
    return Mechanism(k, lat.domain, lat.domain, claims=[claim],
                     name=f"{name}({lat.rows}x{lat.cols}, ε={eps:g})", validate=False)


def planar_laplace(grid: Domain | tuple[int, int], epsilon: float, cell: float = 1.0) -> Mechanism:
    """Planar Laplace discretized on a grid (Andrés, Bordenabe, Chatzikokolakis and
    Palamidessi, "Geo-Indistinguishability: Differential Privacy for Location-Based Systems",
    CCS 2013).

    The continuous mechanism adds noise with density ε²/(2π) e^{−ε|z|} and the
    result is remapped to the nearest grid point (grid cells are the Voronoi cells; points
    outside the grid go to the nearest border cell). K[x, y] is the exact noise mass of the
    cells mapped to y, integrated in polar coordinates to ~1e-13 relative accuracy. Remapping
    is post-processing, so K is ε·d-private for the Euclidean d (its claim); the integration
    over cells makes the exact level slightly smaller than ε.

    Parameters
    ----------
    grid : Domain with 2-D points on a full square-cell lattice, or (rows, cols)
    epsilon : float
        ε per unit of distance.
    cell : float
        Cell size when ``grid`` is (rows, cols).
    """
    eps = check_epsilon(epsilon)
    lat = grid_lattice(grid, cell)
    if eps <= 0:
        raise ProblemError("planar Laplace needs ε > 0 (at ε = 0 the noise is unbounded)", key="epsilon")
    e = eps * lat.cell  # work in cell units
    xs, ys = offset_intervals(lat.rows), offset_intervals(lat.cols)
    q = np.zeros((lat.rows, lat.cols))
    for a, b in product(range(lat.rows), range(lat.cols)):
        if lat.rows == lat.cols and b < a:
            q[a, b] = q[b, a]
            continue
        (x0, x1, fa), (y0, y1, fb) = xs[a], ys[b]
        q[a, b] = fa * fb * laplace_rectangle_mass(e, x0, x1, y0, y1)
    return _planar(lat, q, eps, "planar_laplace")


def planar_geometric(grid: Domain | tuple[int, int], epsilon: float, cell: float = 1.0) -> Mechanism:
    """Planar geometric mechanism on a grid: the discrete analogue of planar Laplace.

    Noise offsets o on the infinite lattice (cell size h) have probability ∝ e^{−ε h |o|}; the
    noisy point is remapped (clamped) to the nearest grid point. On the infinite lattice the
    normaliser is the same for every input, so the triangle inequality gives ε·d-privacy
    (Euclidean d), and the remap is post-processing: the claim is ε·d. The tails are summed to
    double precision over a window of offsets; with ε·h < ~0.015 that window would exceed
    PLANAR_WINDOW_MAX cells and a ProblemError says so.
    """
    eps = check_epsilon(epsilon)
    lat = grid_lattice(grid, cell)
    if eps <= 0:
        raise ProblemError("planar geometric needs ε > 0 (at ε = 0 the noise is unbounded)", key="epsilon")
    e = eps * lat.cell
    window = max(lat.rows, lat.cols) + math.ceil((40.0 + 2 * math.log1p(1 / e)) / e)
    if window > PLANAR_WINDOW_MAX:
        raise ProblemError(f"planar geometric with ε·cell = {e:.3g} spreads over more than "
                           f"{PLANAR_WINDOW_MAX} cells; use a larger ε or cell, or planar_laplace",
                           key="epsilon")
    a = np.arange(window + 1, dtype=float)
    w = np.exp(-e * np.hypot(a[:, None], a[None, :]))
    q = _fold(_fold(w, lat.rows, 0), lat.cols, 1)
    return _planar(lat, q, eps, "planar_geometric")
