"""Divergences between output distributions: one entry each, with its value, its convex form
and its cone (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 5, Def. 6 and Table I).

Every divergence answers the same questions (CONVENTIONS, "one protocol per concept"):

* ``value(p, q)`` — D(p ‖ q) in float64 along the last axis, no solver;
* ``constraints(P, Q, c)`` — cvxpy constraints meaning D(P_i ‖ Q_i) <= bound_i for every row i
  of two affine (r, m) expressions, where ``c = coefficient(bound)`` (the bound itself for the
  f-divergences, e^bound for the max divergence, so that ε sweeps can use cvxpy Parameters);
* ``cone`` — ``"linear"`` (an LP), ``"second-order"`` or ``"exponential"`` (conic: Clarabel);
* ``theorem3_bound(ε)`` — the DistP level Kawamoto and Murakami’s (2019) Theorem 3 guarantees for a coupling
  mechanism built from knowledge that is ε-close in D∞ to the truth.

f-divergences use the generator f normalised to the class F of Def. 6 (convex, f(1) = 0 and
f >= 0): f(t) − f'(1)(t − 1) has the same divergence on distributions and is non-negative, which
Theorem 3, part 3 needs (the generators as printed in Table I are not all in F: t ln t is negative
on (0, 1), and the printed "−t log t" for reverse KL is not convex; its generator is −ln t).
Mass where q = 0 < p counts p·lim_{t→∞} f(t)/t (+∞ for KL and χ², ½ for TV and Hellinger, 0 for
reverse KL), the standard extension of Def. 6 beyond absolute continuity.

Adding an f-divergence is one :class:`Divergence` entry in :data:`DIVERGENCES`.

>>> import numpy as np
>>> p, q = np.array([0.5, 0.5]), np.array([0.25, 0.75])
>>> round(divergence("tv").value(p, q), 12), round(divergence("chi2").value(p, q), 12)
(0.25, 0.333333333333)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp

#: Cone classes, from cheapest to most general.
CONES = ("linear", "second-order", "exponential")


@dataclass(frozen=True)
class Divergence:
    """One divergence D(p ‖ q) over a finite output set.

    Parameters
    ----------
    name : str
        Problem-file name (``divergence = "<name>"``).
    title : str
        Human name with the paper reference.
    cone : str
        ``"linear"``, ``"second-order"`` or ``"exponential"``: the cone its convex form needs.
    numeric : callable (p, q) -> array
        Value along the last axis (no δ).
    epigraph : callable (P, Q, c) -> list of cvxpy constraints
        D(P_i ‖ Q_i) <= bound_i per row, with ``c`` the compiled coefficient of the bound.
    generator : callable t -> f(t), optional
        The generator in F for an f-divergence (None for the max divergence).
    coefficient : callable ε -> coefficient
        What multiplies into the program for a bound ε (ε itself, or e^ε for D∞).
    supports_delta : bool
        Whether the divergence takes a δ (only the approximate max divergence D∞^δ).
    """

    name: str
    title: str
    cone: str
    numeric: Callable[[np.ndarray, np.ndarray], np.ndarray]
    epigraph: Callable
    generator: Callable[[np.ndarray], np.ndarray] | None = None
    coefficient: Callable[[float], float] = field(default=lambda eps: eps)
    supports_delta: bool = False

    @property
    def linear(self) -> bool:
        """True when the constraint D <= ε is linear (the problem stays an LP)."""
        return self.cone == "linear"

    @property
    def is_f_divergence(self) -> bool:
        return self.generator is not None

    def value(self, p, q, delta: float = 0.0) -> np.ndarray | float:
        """D(p ‖ q) (D∞^δ(p ‖ q) for the max divergence with δ > 0), along the last axis."""
        p = np.asarray(p, dtype=float)
        q = np.asarray(q, dtype=float)
        if delta and not self.supports_delta:
            raise ProblemError(f"the {self.name} divergence takes no delta", key="delta")
        out = approximate_max_divergence(p, q, delta) if delta else self.numeric(p, q)
        return float(out) if np.ndim(out) == 0 else out

    def constraints(self, P, Q, c, delta: float = 0.0) -> list:
        """cvxpy constraints D(P_i ‖ Q_i) <= bound_i for each row i (1-D: one row).

        ``c`` is ``coefficient(bound)``: a number, an array of one value per row, or a cvxpy
        Parameter/expression of that shape.
        """
        P, Q = _as_rows(P), _as_rows(Q)
        if self.supports_delta:
            return self.epigraph(P, Q, c, delta)
        return self.epigraph(P, Q, c)

    def theorem3_bound(self, epsilon: float) -> float:
        """The DistP level Theorem 3 (Kawamoto and Murakami 2019) guarantees for a coupling mechanism whose
        knowledge λ̂_s is within ε of the actual λ_s in D∞, both ways: 2ε for D∞, 2εe^ε for KL
        (part 2) and e^ε f(e^{2ε}) for any other f-divergence (part 3, f normalised to F)."""
        eps = float(epsilon)
        if not np.isfinite(eps):
            return np.inf
        if self.name == "max":
            return 2.0 * eps
        if self.name == "kl":
            return 2.0 * eps * np.exp(eps)
        return self.f_form_bound(eps)

    def f_form_bound(self, epsilon: float) -> float:
        """Theorem 3, part 3: e^ε f(e^{2ε}) with f the generator in F (f-divergences only)."""
        if self.generator is None:
            raise ValueError(f"{self.name} is not an f-divergence")
        eps = float(epsilon)
        if not np.isfinite(eps):
            return np.inf
        return float(np.exp(eps) * self.generator(np.exp(2.0 * eps)))


# ---------------------------------------------------------------------------------------------
# numeric values (float64, along the last axis)

def _kl(p, q):
    from scipy.special import kl_div  # scipy.special takes half a second to import: on first use

    return kl_div(p, q).sum(axis=-1)


def _reverse_kl(p, q):
    return _kl(q, p)


def _tv(p, q):
    return 0.5 * np.abs(p - q).sum(axis=-1)


def _chi2(p, q):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, (p - q) ** 2 / np.where(q > 0, q, 1.0), np.where(p > 0, np.inf, 0.0))
    return terms.sum(axis=-1)


def _hellinger(p, q):
    return 0.5 * ((np.sqrt(np.clip(p, 0, None)) - np.sqrt(np.clip(q, 0, None))) ** 2).sum(axis=-1)


def max_divergence(p, q) -> np.ndarray:
    """D∞(p ‖ q) = max_{y ∈ supp(p)} ln(p_y / q_y) (+∞ when q_y = 0 < p_y), at least 0."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(p) - np.log(q)
    r = np.where(p <= 0, -np.inf, r)
    r = np.where((p > 0) & (q <= 0), np.inf, r)
    return np.maximum(r.max(axis=-1), 0.0)


def approximate_max_divergence(p, q, delta: float) -> np.ndarray:
    """D∞^δ(p ‖ q) (Kawamoto and Murakami 2019, Def. 5): the smallest ε >= 0 with p[R] <= e^ε q[R] + δ for
    every R, i.e. with Σ_y max(0, p_y − e^ε q_y) <= δ (the hockey-stick form).

    Exact: the hockey stick H(t) = Σ max(0, p − t q) is piecewise linear and non-increasing in t,
    with breakpoints at the ratios p_y / q_y; the answer solves H(t) = δ on the right piece.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.ndim > 1:
        flat_p = p.reshape(-1, p.shape[-1])
        flat_q = np.broadcast_to(q, p.shape).reshape(-1, p.shape[-1])
        out = np.array([approximate_max_divergence(a, b, delta) for a, b in zip(flat_p, flat_q)])
        return out.reshape(p.shape[:-1])
    if delta <= 0:
        return max_divergence(p, q)
    stuck = p[(q <= 0) & (p > 0)].sum()  # mass no t can cover
    if stuck > delta:
        return np.float64(np.inf)
    pos = q > 0
    ratio = p[pos] / q[pos]
    order = np.argsort(-ratio, kind="stable")
    r, pp, qq = ratio[order], p[pos][order], q[pos][order]
    if r.size == 0:
        return np.float64(0.0)
    P = np.concatenate([[0.0], np.cumsum(pp)])
    Q = np.concatenate([[0.0], np.cumsum(qq)])
    # H at the breakpoint r_k (1-based k): the first k-1 ratios are active there
    h_at = stuck + P[:-1] - r * Q[:-1]
    k = int(np.flatnonzero(h_at <= delta + 1e-300)[-1]) + 1
    t = (stuck + P[k] - delta) / Q[k]
    return np.float64(max(0.0, np.log(t)) if t > 0 else 0.0)


# ---------------------------------------------------------------------------------------------
# convex forms: rows of P, Q are distributions (affine in the mechanism variables)

def _as_rows(x):
    if isinstance(x, np.ndarray):
        return x[None, :] if x.ndim == 1 else x
    if len(x.shape) == 1:
        return cp.reshape(x, (1, x.shape[0]), order="C")
    return x


def _column(c, rows: int):
    """A per-row coefficient as an (r, 1) column (numbers broadcast as they are)."""
    if isinstance(c, (cp.Expression,)):
        if c.size == 1:
            return c
        return cp.reshape(c, (rows, 1), order="C")
    c = np.asarray(c, dtype=float)
    return c if c.size == 1 else c.reshape(rows, 1)


def _bound(c, rows: int):
    if isinstance(c, cp.Expression):
        return c if c.size == 1 else cp.reshape(c, (rows,), order="C")
    c = np.asarray(c, dtype=float)
    return c if c.size == 1 else c.reshape(rows)


def _epi_max(P, Q, c, delta):
    col = _column(c, P.shape[0])
    scaled = cp.multiply(col, Q)
    if delta == 0:
        return [P <= scaled]
    return [cp.sum(cp.pos(P - scaled), axis=1) <= delta]


def _epi_kl(P, Q, c):
    return [cp.sum(cp.rel_entr(P, Q), axis=1) <= _bound(c, P.shape[0])]


def _epi_reverse_kl(P, Q, c):
    return [cp.sum(cp.rel_entr(Q, P), axis=1) <= _bound(c, P.shape[0])]


def _epi_tv(P, Q, c):
    return [0.5 * cp.sum(cp.abs(P - Q), axis=1) <= _bound(c, P.shape[0])]


def _epi_chi2(P, Q, c):
    # (p − q)² <= t q, elementwise, as the second-order cone ‖(2(p − q), t − q)‖ <= t + q
    T = cp.Variable(P.shape, nonneg=True)
    diff = cp.vec(P - Q, order="C")
    t, qv = cp.vec(T, order="C"), cp.vec(Q, order="C")
    return [cp.SOC(t + qv, cp.vstack([2 * diff, t - qv]), axis=0),
            cp.sum(T, axis=1) <= _bound(c, P.shape[0])]


def _epi_hellinger(P, Q, c):
    # s <= √(p q) elementwise, as ‖(2s, p − q)‖ <= p + q; then ½Σ(p + q) − Σ s <= bound
    S = cp.Variable(P.shape)
    pv, qv = cp.vec(P, order="C"), cp.vec(Q, order="C")
    return [cp.SOC(pv + qv, cp.vstack([2 * cp.vec(S, order="C"), pv - qv]), axis=0),
            0.5 * cp.sum(P + Q, axis=1) - cp.sum(S, axis=1) <= _bound(c, P.shape[0])]


def _safe_exp(eps):
    return np.exp(np.minimum(eps, 700.0))


# ---------------------------------------------------------------------------------------------
# the registry

def _xlogx(t):
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)


DIVERGENCES: dict[str, Divergence] = {}


def register_divergence(div: Divergence) -> Divergence:
    """Add a divergence to the registry (problem files name it by ``div.name``)."""
    if div.cone not in CONES:
        raise ValueError(f"cone must be one of {CONES}, got {div.cone!r}")
    DIVERGENCES[div.name] = div
    return div


register_divergence(Divergence(
    "max", "max divergence D∞ / approximate max divergence D∞^δ (Kawamoto and Murakami 2019, Def. 5)", "linear",
    max_divergence, _epi_max, None, _safe_exp, supports_delta=True))
register_divergence(Divergence(
    "kl", "Kullback-Leibler divergence Σ p ln(p/q) (Table I, f(t) = t ln t − t + 1)", "exponential",
    _kl, _epi_kl, lambda t: _xlogx(t) - np.asarray(t, float) + 1.0))
register_divergence(Divergence(
    "reverse-kl", "reverse KL divergence Σ q ln(q/p) (Table I, f(t) = t − 1 − ln t)", "exponential",
    _reverse_kl, _epi_reverse_kl, lambda t: np.asarray(t, float) - 1.0 - np.log(t)))
register_divergence(Divergence(
    "tv", "total variation ½Σ|p − q| (Table I, f(t) = ½|t − 1|)", "linear",
    _tv, _epi_tv, lambda t: 0.5 * np.abs(np.asarray(t, float) - 1.0)))
register_divergence(Divergence(
    "chi2", "χ²-divergence Σ (p − q)²/q (Table I, f(t) = (t − 1)²)", "second-order",
    _chi2, _epi_chi2, lambda t: (np.asarray(t, float) - 1.0) ** 2))
register_divergence(Divergence(
    "hellinger", "squared Hellinger distance ½Σ(√p − √q)² (Table I, f(t) = ½(√t − 1)²)",
    "second-order", _hellinger, _epi_hellinger, lambda t: 0.5 * (np.sqrt(t) - 1.0) ** 2))

#: The f-divergences, in registry order.
F_DIVERGENCES = tuple(name for name, d in DIVERGENCES.items() if d.is_f_divergence)


def divergence(name) -> Divergence:
    """The registered divergence called ``name`` (ProblemError naming the choices otherwise)."""
    if isinstance(name, Divergence):
        return name
    if not isinstance(name, str) or name not in DIVERGENCES:
        raise ProblemError(f"unknown divergence {name!r}; expected one of: {', '.join(DIVERGENCES)}",
                           key="divergence")
    return DIVERGENCES[name]


def f_divergence_value(f: Callable, p, q, slope_at_infinity: float) -> np.ndarray:
    """Σ_{q>0} q f(p/q) + slope·Σ_{q=0} p: the f-divergence straight from its generator
    (Def. 6), used to cross-check the closed forms."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pos = q > 0
    safe_q = np.where(pos, q, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        body = np.where(pos, safe_q * f(np.where(pos, p / safe_q, 1.0)), 0.0)
        extra = np.where(~pos & (p > 0), p * slope_at_infinity, 0.0)
    return (body + extra).sum(axis=-1)
