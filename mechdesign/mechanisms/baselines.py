"""Classic mechanisms to compare designs against. Each returns a
:class:`~mechdesign.core.mechanism.Mechanism` carrying its privacy claim in ``claims`` (per-context
mechanisms of paper 004 come as a mapping context -> Mechanism sharing one claim; unary
encodings, whose output space is 2^k, are a :class:`UnaryEncoding` audited analytically).

Exact privacy levels, as audited (tests/test_baselines.py checks each against the auditor):

=====================  ==============================  =========================================
mechanism              claim                           exact audited level
=====================  ==============================  =========================================
k-ary RR               ε-LDP                           ε (diagonal / off-diagonal = e^ε)
truncated geometric    ε·d-privacy, d = |x − x'|       ε (as LDP: ε·(max − min))
exponential, −d, ε/2   ε·d-privacy                     ≤ ε; discrete d: ε/2 (it is kRR at ε/2);
                                                       line 0..n−1: ε/2 + ln((1+r−r²−r^{n−1})/(1−r^n)),
                                                       r = e^{−ε/2}
planar geometric       ε·d (Euclidean)                 ε on grids with ≥ 3 rows and ≥ 4 columns
planar Laplace         ε·d (Euclidean)                 < ε (integration over cells loses a little)
RAPPOR / OUE           ε-LDP                           ε: ln(p(1 − q) / ((1 − p) q))
One Bit Cluster,       (G, ε)-profile                  ≤ ε
Smooth One Bit,
Smooth Categorical
uniform                0-LDP                           0
identity               none                            ∞ (as LDP)
=====================  ==============================  =========================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise, product

import numpy as np
from scipy import integrate

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.mechanism import Mechanism, check_distribution
from mechdesign.core.metrics import Metric
from mechdesign.privacy.base import AUDIT_TOL, Audit, Notion, check_epsilon
from mechdesign.privacy.distp import ProfilePrivacy
from mechdesign.privacy.ldp import LDP
from mechdesign.privacy.metric import MetricPrivacy

#: Unary encodings build their 2^k-output matrix only up to this k.
UNARY_MATRIX_MAX_K = 12
#: Planar geometric: largest offset window (cells per axis) summed to reach double precision.
PLANAR_WINDOW_MAX = 2500


# ---------------------------------------------------------------------------------------------
# randomized response

def krr(k: int | Domain, epsilon: float) -> Mechanism:
    """k-ary randomized response: K[x, x] = e^ε / (k − 1 + e^ε), else 1 / (k − 1 + e^ε).

    Exactly ε-LDP; optimal for the error probability under a uniform prior.

    >>> krr(2, np.log(3)).matrix
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    domain = Domain.coerce(k)
    n = len(domain)
    eps = check_epsilon(epsilon)
    if n < 2:
        raise ProblemError("k-ary randomized response needs k >= 2 values")
    e = np.exp(eps)
    matrix = np.full((n, n), 1.0 / (n - 1 + e))
    np.fill_diagonal(matrix, e / (n - 1 + e))
    return Mechanism(matrix, domain, domain, claims=[LDP(eps)], name=f"krr(k={n}, ε={eps:g})",
                     validate=False)


def randomized_response(epsilon: float) -> Mechanism:
    """Warner's randomized response on one bit: keep with probability e^ε / (1 + e^ε)."""
    return krr(Domain(("0", "1")), epsilon)


# ---------------------------------------------------------------------------------------------
# metric mechanisms

def _line_spacing(domain: Domain) -> tuple[np.ndarray, float]:
    """Order and common gap of a domain of equally spaced numbers (an ordered domain)."""
    if domain.points is None or domain.points.shape[1] != 1:
        raise ProblemError("the truncated geometric mechanism needs an ordered domain: a size or "
                           "equally spaced numbers on a line")
    x = domain.points[:, 0]
    order = np.argsort(x, kind="stable")
    if len(x) < 2:
        return order, 1.0
    gaps = np.diff(x[order])
    h = float(gaps[0])
    if h <= 0 or not np.allclose(gaps, h, rtol=1e-9, atol=0):
        raise ProblemError("the truncated geometric mechanism needs distinct, equally spaced values "
                           f"(gaps found: {np.unique(np.round(gaps, 12))[:5].tolist()})")
    return order, h


def geometric(n: int | Domain, epsilon: float) -> Mechanism:
    """Truncated geometric mechanism on an ordered domain (Ghosh, Roughgarden, Sundararajan).

    On values x_0 < ... < x_{n−1} with gap h and α = e^{−εh}, with i, j the ranks of x and y:

        K[i, j] = (1 − α)/(1 + α) · α^{|i − j|}     for 0 < j < n − 1,
        K[i, 0] = α^i / (1 + α),    K[i, n − 1] = α^{n−1−i} / (1 + α)

    (two-sided geometric noise, with the mass beyond the ends moved to the ends). Neighbouring
    rows differ by exactly the factor e^{εh} in every column, so it is exactly ε·d-private for
    d = |x − x'| (and exactly ε·(x_{n−1} − x_0)-LDP). Paper 002's "extended geometric".

    Parameters
    ----------
    n : int or Domain
        A size (values 0..n−1) or a domain of equally spaced numbers.
    epsilon : float
        ε per unit of distance.
    """
    domain = Domain.coerce(n)
    eps = check_epsilon(epsilon)
    order, h = _line_spacing(domain)
    m = len(domain)
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(m)
    if m == 1:
        matrix = np.ones((1, 1))
    else:
        a = eps * h  # −ln α
        i = np.arange(m)[:, None]
        j = np.arange(m)[None, :]
        log_k = np.log(-np.expm1(-a)) - np.log1p(np.exp(-a)) - a * np.abs(i - j) if a > 0 else \
            np.full((m, m), -np.inf)
        log_k = np.broadcast_to(log_k, (m, m)).copy()
        log_k[:, 0] = -a * np.arange(m) - np.log1p(np.exp(-a))
        log_k[:, -1] = -a * (m - 1 - np.arange(m)) - np.log1p(np.exp(-a))
        matrix = np.exp(log_k)
        matrix = matrix / matrix.sum(axis=1, keepdims=True)
    matrix = matrix[np.ix_(rank, rank)]
    claim = MetricPrivacy(eps, Metric("absolute"), domain)
    return Mechanism(matrix, domain, domain, claims=[claim], name=f"geometric(n={m}, ε={eps:g})",
                     validate=False)


def exponential(domain: int | Domain, metric: Metric | str, epsilon: float) -> Mechanism:
    """Exponential mechanism with score −d and factor ε/2: K[x, y] ∝ exp(−ε d(x, y) / 2).

    Outputs equal the inputs. For any x, x', y the triangle inequality bounds both the score
    change and the normaliser ratio Z(x')/Z(x) by e^{ε d(x, x')/2}, so it is ε·d-private (its
    claim). The bound is not tight in general: with the discrete metric it is k-ary RR at ε/2,
    exactly (ε/2)-LDP; on the line 0..n−1 its exact level is
    ε/2 + ln((1 + r − r² − r^{n−1}) / (1 − r^n)) with r = e^{−ε/2} (the end pair is the worst).
    """
    domain = Domain.coerce(domain)
    metric = Metric(metric) if isinstance(metric, str) else metric
    eps = check_epsilon(epsilon)
    d = metric.distances(domain)
    logits = -0.5 * eps * d
    logits = logits - logits.max(axis=1, keepdims=True)
    k = np.exp(logits)
    k = k / k.sum(axis=1, keepdims=True)
    return Mechanism(k, domain, domain, claims=[MetricPrivacy(eps, metric, domain)],
                     name=f"exponential(ε={eps:g}, d={metric.kind})", validate=False)


# ---------------------------------------------------------------------------------------------
# planar mechanisms on a grid

@dataclass(frozen=True)
class _Lattice:
    rows: int
    cols: int
    cell: float
    index: np.ndarray  # per domain value, its lattice index r * cols + c
    domain: Domain


def _lattice(grid, cell: float) -> _Lattice:
    """A full rows x cols lattice with square cells, from a Domain with 2-D points or (rows, cols)."""
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
        return _Lattice(rows, cols, steps[0] if steps else float(cell), index, grid)
    try:
        rows, cols = (int(v) for v in grid)
    except (TypeError, ValueError):
        raise ProblemError(f"expected a grid Domain or (rows, cols), got {grid!r}")
    if rows < 1 or cols < 1 or not (np.isfinite(cell) and cell > 0):
        raise ProblemError(f"expected rows, cols >= 1 and a positive cell size, got {rows}, {cols}, {cell}")
    domain = Domain.from_grid(rows, cols, cell)
    return _Lattice(rows, cols, float(cell), np.arange(rows * cols), domain)


def _laplace_rect(eps: float, x0: float, x1: float, y0: float, y1: float) -> float:
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


def _axis_intervals(size: int) -> list[tuple[float, float, float]]:
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


def _mirror(q: np.ndarray) -> np.ndarray:
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


def _planar(lat: _Lattice, q: np.ndarray, eps: float, name: str) -> Mechanism:
    m = _mirror(q)
    m = m / m.sum()
    k = _remap(m, lat.rows, lat.cols)
    k = k / k.sum(axis=1, keepdims=True)
    k = k[np.ix_(lat.index, lat.index)]
    claim = MetricPrivacy(eps, Metric("euclidean"), lat.domain)
    return Mechanism(k, lat.domain, lat.domain, claims=[claim],
                     name=f"{name}({lat.rows}x{lat.cols}, ε={eps:g})", validate=False)


def planar_laplace(grid: Domain | tuple[int, int], epsilon: float, cell: float = 1.0) -> Mechanism:
    """Planar Laplace (geo-indistinguishability, Andrés et al. 2013) discretized on a grid.

    The continuous mechanism adds noise with density ε²/(2π) e^{−ε|z|} (paper 002) and the
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
    lat = _lattice(grid, cell)
    if eps <= 0:
        raise ProblemError("planar Laplace needs ε > 0 (at ε = 0 the noise is unbounded)", key="epsilon")
    e = eps * lat.cell  # work in cell units
    xs, ys = _axis_intervals(lat.rows), _axis_intervals(lat.cols)
    q = np.zeros((lat.rows, lat.cols))
    for a, b in product(range(lat.rows), range(lat.cols)):
        if lat.rows == lat.cols and b < a:
            q[a, b] = q[b, a]
            continue
        (x0, x1, fa), (y0, y1, fb) = xs[a], ys[b]
        q[a, b] = fa * fb * _laplace_rect(e, x0, x1, y0, y1)
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
    lat = _lattice(grid, cell)
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


# ---------------------------------------------------------------------------------------------
# unary encodings

@dataclass
class UnaryEncoding:
    """Unary encoding (Wang et al. 2017): input x becomes the one-hot vector e_x, each bit then
    reported independently: Pr[b_x = 1 | x] = p, Pr[b_i = 1 | x] = q for i != x.

    The output space is {0, 1}^k, so the mechanism is audited analytically, per bit: two inputs
    x, x' differ only in bits x and x', and the worst output has b_x = 1, b_x' = 0, giving
    ε = ln(p (1 − q) / ((1 − p) q)). :meth:`mechanism` builds the 2^k-column matrix for k <=
    UNARY_MATRIX_MAX_K so the generic auditor can confirm it.
    """

    domain: Domain
    p: float
    q: float
    name: str
    claims: tuple = field(default=())

    @property
    def k(self) -> int:
        return len(self.domain)

    def level(self) -> float:
        """The exact ε of the encoding (LDP), from the per-bit analysis."""
        if self.k < 2:
            return 0.0
        p, q = self.p, self.q
        if q <= 0 or p >= 1:
            return math.inf
        return max(0.0, math.log(p) + math.log1p(-q) - math.log1p(-p) - math.log(q))

    def audit(self, notion: Notion | None = None) -> Audit:
        """Analytic audit against ε-LDP (default: the claim)."""
        notion = notion if notion is not None else self.claims[0]
        if not isinstance(notion, LDP):
            raise ProblemError(f"a unary encoding is audited analytically against ε-LDP only, not "
                               f"'{notion.name}'; use .mechanism() (k <= {UNARY_MATRIX_MAX_K}) for others")
        achieved = self.level()
        return Audit("ldp", {"epsilon": notion.epsilon}, {"epsilon": achieved},
                     achieved <= notion.epsilon + AUDIT_TOL, {"analytic": "per-bit", "p": self.p, "q": self.q})

    def mechanism(self) -> Mechanism:
        """The full matrix over the 2^k bit vectors (labels '0101...', bit i = value i)."""
        k = self.k
        if k > UNARY_MATRIX_MAX_K:
            raise ProblemError(f"the unary encoding matrix has 2^{k} columns; it is built only for "
                               f"k <= {UNARY_MATRIX_MAX_K} (use the analytic audit)")
        bits = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)  # (2^k, k)
        eye = np.eye(k, dtype=bool)
        # Pr[b | x] = Π_i P(b_i | i == x)
        prob1 = np.where(eye, self.p, self.q)  # (k inputs, k bits): Pr[bit i = 1 | x]
        logp = np.where(bits[None, :, :], np.log(prob1)[:, None, :], np.log1p(-prob1)[:, None, :])
        matrix = np.exp(logp.sum(axis=2))
        labels = ["".join("1" if b else "0" for b in row) for row in bits]
        return Mechanism(matrix, self.domain, Domain(tuple(labels)), claims=self.claims,
                         name=self.name, validate=False)

    def simulate(self, lam, n: int, rng=None) -> np.ndarray:
        """Bit counts C_i = #users reporting b_i = 1, for n users with inputs ~ λ (no per-user
        loop: C_i = Binomial(n_i, p) + Binomial(n − n_i, q), independent)."""
        rng = np.random.default_rng(rng)
        lam = check_distribution(lam, self.k, "input distribution")
        counts = rng.multinomial(int(n), lam)
        return rng.binomial(counts, self.p) + rng.binomial(int(n) - counts, self.q)

    def estimate(self, bit_counts, n: int) -> np.ndarray:
        """Unbiased frequency estimate (C_i/n − q)/(p − q), projected onto the simplex."""
        from mechdesign.estimation.estimation import project_simplex

        c = np.asarray(bit_counts, dtype=float)
        return project_simplex((c / n - self.q) / (self.p - self.q))


def rappor(k: int | Domain, epsilon: float) -> UnaryEncoding:
    """Basic one-time RAPPOR (symmetric unary encoding): each bit kept with p = e^{ε/2}/(1 + e^{ε/2}),
    flipped with q = 1 − p. Exactly ε-LDP."""
    domain = Domain.coerce(k)
    eps = check_epsilon(epsilon)
    p = 1.0 / (1.0 + math.exp(-eps / 2))
    return UnaryEncoding(domain, p, 1.0 - p, f"rappor(k={len(domain)}, ε={eps:g})", (LDP(eps),))


def oue(k: int | Domain, epsilon: float) -> UnaryEncoding:
    """Optimized unary encoding (Wang et al. 2017): p = 1/2, q = 1/(1 + e^ε). Exactly ε-LDP."""
    domain = Domain.coerce(k)
    eps = check_epsilon(epsilon)
    return UnaryEncoding(domain, 0.5, 1.0 / (1.0 + math.exp(eps)), f"oue(k={len(domain)}, ε={eps:g})",
                         (LDP(eps),))


# ---------------------------------------------------------------------------------------------
# paper 004: profile-based privacy

BIT = Domain(("0", "1"))


def _bernoulli(profiles: Mapping[str, float | Sequence[float]]) -> dict[str, float]:
    """Profiles as Pr[bit = 1]: a number p or a distribution [Pr[0], Pr[1]]."""
    out = {}
    for name, value in profiles.items():
        v = np.atleast_1d(np.asarray(value, dtype=float))
        if v.size == 2:
            p = float(check_distribution(v, 2, f"profile '{name}'")[1])
        elif v.size == 1 and 0.0 <= v[0] <= 1.0:
            p = float(v[0])
        else:
            raise ProblemError(f"profile '{name}' must be a probability p or [1 − p, p], got {value!r}",
                               key="profiles")
        out[str(name)] = p
    if not out:
        raise ProblemError("needs at least one profile", key="profiles")
    return out


def _edges(edges, names) -> list[tuple[str, str]]:
    out = []
    for e in edges:
        a, b = (str(v) for v in e)
        for node in (a, b):
            if node not in names:
                raise ProblemError(f"edge names unknown profile '{node}'", key="edges")
        out.append((a, b))
    return out


def _flip(alpha: float) -> np.ndarray:
    return np.array([[1.0 - alpha, alpha], [alpha, 1.0 - alpha]])


def one_bit_flip(p_i: float, p_j: float, epsilon: float) -> float:
    """The optimal flip probability of paper 004's optimization (4) for one edge, exactly.

    With flip probability α the output is 1 with probability q(α) = p + α(1 − 2p), linear in α;
    each of the four ratio constraints q_i <= e^ε q_j, ... is linear, c0 + c1 α <= 0, and holds
    at α = 1/2 (both outputs uniform). The feasible set in [0, 1/2] is therefore an interval
    [α*, 1/2] with α* = max(0, max over constraints with c1 < 0 of c0 / (−c1)).
    """
    e = math.exp(check_epsilon(epsilon))
    best = 0.0
    # outputs 1 and 0 for profile s: (u0, u1) with Pr = u0 + u1 α
    one = lambda p: (p, 1.0 - 2.0 * p)
    zero = lambda p: (1.0 - p, 2.0 * p - 1.0)
    for out in (one, zero):
        for (a, b) in ((p_i, p_j), (p_j, p_i)):
            (u0, u1), (v0, v1) = out(a), out(b)
            c0, c1 = u0 - e * v0, u1 - e * v1
            if c1 < 0:
                best = max(best, c0 / -c1)
    return min(best, 0.5)


def _profile_claim(epsilon, edges, p) -> ProfilePrivacy:
    return ProfilePrivacy(epsilon, edges, {n: np.array([1 - v, v]) for n, v in p.items()})


def one_bit_cluster(profiles: Mapping[str, float | Sequence[float]], edges, epsilon: float
                    ) -> dict[str, Mechanism]:
    """Paper 004, Algorithm 2 (One Bit Cluster): every profile flips its bit with the largest
    optimal single-edge flip probability (4) over the edges of its connected component of the
    profile graph. (G, ε)-profile private (Theorem 6).

    Parameters
    ----------
    profiles : mapping name -> p (Pr[bit = 1]) or [1 − p, p]
    edges : sequence of (name, name)
    epsilon : float

    Returns
    -------
    dict name -> Mechanism (2 x 2 bit flip) carrying the ProfilePrivacy claim.
    """
    eps = check_epsilon(epsilon)
    p = _bernoulli(profiles)
    edges = _edges(edges, p)
    parent = {n: n for n in p}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        parent[find(a)] = find(b)
    worst: dict[str, float] = {}
    for a, b in edges:
        root = find(a)
        worst[root] = max(worst.get(root, 0.0), one_bit_flip(p[a], p[b], eps))
    claim = _profile_claim(eps, edges, p)
    return {n: Mechanism(_flip(worst.get(find(n), 0.0)), BIT, BIT, claims=[claim],
                         name=f"one_bit_cluster[{n}]", validate=False) for n in p}


def smooth_one_bit(profiles: Mapping[str, float | Sequence[float]], edges, epsilon: float
                   ) -> dict[str, Mechanism]:
    """Paper 004, Algorithm 3 (Smooth One Bit): one flip probability α_s per profile, from the
    linear program (5)

        min max_s α_s   s.t.  0 <= α_s <= 1/2,  for each edge (i, j) and output t ∈ {0, 1}:
                              Pr_i[t] <= e^ε Pr_j[t] and Pr_j[t] <= e^ε Pr_i[t],
                              Pr_s[1] = p_s + α_s (1 − 2 p_s)

    solved with HiGHS; ties are broken by a second LP minimising Σ_s α_s at the optimal max.
    The returned matrices are certified like any design (clean, mix if needed, audit), so they
    are (G, ε)-profile private (Theorem 7). One Bit Cluster's flips are feasible for (5), so
    the largest flip here is never above One Bit Cluster's.
    """
    from mechdesign.privacy.certify import certify

    eps = check_epsilon(epsilon)
    p = _bernoulli(profiles)
    edges = _edges(edges, p)
    names = list(p)
    claim = _profile_claim(eps, edges, p)
    if not edges:
        return {n: Mechanism(_flip(0.0), BIT, BIT, claims=[claim], name=f"smooth_one_bit[{n}]",
                             validate=False) for n in names}
    idx = {n: t for t, n in enumerate(names)}
    pv = np.array([p[n] for n in names])
    alpha = cp.Variable(len(names))
    one = pv + cp.multiply(1 - 2 * pv, alpha)
    zero = 1 - one
    e = math.exp(eps)
    ia = np.array([idx[a] for a, _ in edges])
    ib = np.array([idx[b] for _, b in edges])
    cons = [alpha >= 0, alpha <= 0.5]
    for out in (one, zero):
        cons += [out[ia] <= e * out[ib], out[ib] <= e * out[ia]]
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    first = cp.Problem(cp.Minimize(cp.max(alpha)), cons)
    first.solve(solver=cp.HIGHS, **opts)
    if alpha.value is None:
        raise RuntimeError(f"smooth one bit LP failed: {first.status}")
    top = float(first.value)
    second = cp.Problem(cp.Minimize(cp.sum(alpha)), cons + [alpha <= top + 1e-12])
    second.solve(solver=cp.HIGHS, **opts)
    values = np.clip(alpha.value if alpha.value is not None else np.full(len(names), top), 0, 0.5)
    mechs, audits, _ = certify([claim], {n: _flip(values[idx[n]]) for n in names})
    if not all(a.holds for a in audits):  # pragma: no cover - certify mixes until it holds
        raise RuntimeError("smooth one bit: the certified matrices fail their audit")
    return {n: Mechanism(mechs[n], BIT, BIT, claims=[claim], name=f"smooth_one_bit[{n}]",
                         validate=False) for n in names}


def smooth_categorical(profiles: Mapping[str, Sequence[float]], edges, epsilon: float,
                       labels: Sequence[str] | Domain | None = None) -> dict[str, Mechanism]:
    """Paper 004, Algorithm 4 (Smooth Categorical): per-profile transition matrices A^s from
    optimization (6) — minimise the largest off-diagonal entry subject to P_i A^i <= e^ε P_j A^j
    and P_j A^j <= e^ε P_i A^i elementwise for each edge — solved and certified by the designer
    (a :class:`~mechdesign.design.problem.Problem` with ProfilePrivacy and the max-off-diagonal
    objective). (G, ε)-profile private (Theorem 8)."""
    from mechdesign.core.objectives import MaxOffDiagonal, off_diagonal_mask
    from mechdesign.design.problem import Problem

    eps = check_epsilon(epsilon)
    if not profiles:
        raise ProblemError("needs at least one profile", key="profiles")
    vecs = {str(n): np.asarray(v, dtype=float) for n, v in profiles.items()}
    k = len(next(iter(vecs.values())))
    domain = Domain.coerce(labels if labels is not None else [f"c{i + 1}" for i in range(k)])
    for n, v in vecs.items():
        check_distribution(v, len(domain), f"profile '{n}'")
    edges = _edges(edges, vecs)
    claim = ProfilePrivacy(eps, edges, vecs)
    problem = Problem(inputs=domain, contexts=vecs, privacy=[claim],
                      objective=MaxOffDiagonal(off_diagonal_mask(domain, domain), list(vecs)),
                      name="smooth-categorical")
    result = problem.solve()
    if result.status != "optimal":
        raise RuntimeError(f"smooth categorical: the designer returned '{result.status}': {result.message}")
    out = {}
    for n, mech in result.mechanisms.items():
        mech.name = f"smooth_categorical[{n}]"
        out[n] = mech
    return out


# ---------------------------------------------------------------------------------------------
# trivial mechanisms

def uniform(inputs: int | Domain, outputs: int | Domain | None = None) -> Mechanism:
    """The non-informative mechanism: every output equally likely whatever the input. 0-LDP."""
    inputs = Domain.coerce(inputs)
    outputs = inputs if outputs is None else Domain.coerce(outputs)
    k = np.full((len(inputs), len(outputs)), 1.0 / len(outputs))
    return Mechanism(k, inputs, outputs, claims=[LDP(0.0)], name="uniform", validate=False)


def identity(k: int | Domain) -> Mechanism:
    """Report the true value: no privacy (as LDP its level is infinite); claims nothing."""
    domain = Domain.coerce(k)
    return Mechanism(np.eye(len(domain)), domain, domain, claims=(), name="identity", validate=False)
