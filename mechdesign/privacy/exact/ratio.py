r"""Exact checks of ratio constraints p_y <= e^c q_y and of hockey-stick sums, screened in float64.

Ratio checks
------------
For one comparison row t (two distributions P[t], Q[t] over the outputs and a rational
exponent c_t) the check is P[t, y] <= e^{c_t} Q[t, y] for every y. With a rigorous enclosure
L_t <= e^{c_t} <= U_t (:func:`~mechdesign.privacy.exact.arith.exp_bounds`), the triple is

* *proven* when P <= L·Q, *refuted* when P > U·Q, *undecided* otherwise (then the enclosure
  is tightened, 80 → 256 → 1024 → 4096 bits, which decides every c != 0).

Float screen. Most triples are far from their bound and are decided in float64 without
rationals. Let Lf <= L be a float lower bound of e^c, rounded down from the exact enclosure
(never taken from ``math.exp``, whose accuracy the C library does not guarantee), m = 10^-6 the
screen margin and u = 2^-53 the unit round-off. Write p_f, q_f for the floats used: exact for
matrix entries, correctly rounded for exact sums λK (then p <= p_f(1 + u) and
q >= q_f(1 − u) when they are normal numbers). If r = fl(Lf·q_f) >= 2^-900 (a normal number,
so r <= Lf·q_f·(1 + u)) and p_f <= fl(r·(1 − m)), then

    p <= p_f(1 + u) <= r(1 − m)(1 + u)^2 <= Lf·q_f(1 − m)(1 + u)^3
      <= Lf·q(1 − m)(1 + u)^3 / (1 − u) < Lf·q <= e^c q,

so the triple is proven. Symmetrically p_f >= fl(fl(Uf·q_f)(1 + m)) with p_f >= 2^-900 (and,
for rounded inputs, q_f >= 2^-900) refutes it. With exact entries p = 0 is always proven and
q = 0 < p always refuted (e^c is finite). Only the remaining close calls (ratios within about
10^-6 of e^c, typically the constraints an optimiser made tight) are compared exactly as
dyadic integers.

Hockey-stick sums
-----------------
H_t = Σ_y max(0, P[t, y] − e^{c_t} Q[t, y]) is non-increasing in e^c, so
Σ max(0, P − U Q) <= H_t <= Σ max(0, P − L Q): the right sum <= bound proves H_t <= bound,
the left sum > bound refutes it. The float screen evaluates Σ max(0, p_f − fl(Lf q_f)) with
the a-priori error bound (|Y| + 4)·2u·(Σp + Lf Σq + h) + |Y|·2^-1070·(1 + Lf) (products,
differences, rounded inputs and a recursive sum of |Y| non-negative terms; Higham, *Accuracy
and Stability of Numerical Algorithms*, SIAM 2002, §4.2), and defers to exact dyadic sums when
the margin is below 10^-6 of the bound. The enclosure of H_t does not depend on the bound, so
several bounds (an audit's δ + τ and δ) are checked together: one screen per row and, for a
close call, one pair of exact sums per precision, each bound keeping its own verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from mechdesign.privacy.exact.arith import (
    PRECISIONS,
    Dyadic,
    dy_add,
    dy_cmp,
    dy_fraction,
    dy_le,
    dy_mul,
    dy_sub,
    dyadic,
    exp_bounds,
    exp_float_bounds,
    float_up,
)

SCREEN_MARGIN = 1e-6
TINY = 2.0 ** -900
U = 2.0 ** -53

#: exact value of entry (t, y) of P (side 0) or Q (side 1)
Exact = Callable[[int, int, int], Dyadic]


@dataclass
class Verdict:
    """Outcome of a batch of exact checks."""

    checked: int = 0
    close: int = 0
    refuted: int = 0
    undecided: int = 0
    first_violation: tuple | None = None

    @property
    def proved(self) -> bool:
        return self.refuted == 0 and self.undecided == 0

    def add(self, other: Verdict) -> None:
        self.checked += other.checked
        self.close += other.close
        self.refuted += other.refuted
        self.undecided += other.undecided
        if self.first_violation is None:
            self.first_violation = other.first_violation


def float_exact(P: np.ndarray, Q: np.ndarray) -> Exact:
    """Exact values when P and Q hold the exact numbers (matrix entries)."""
    return lambda t, y, side: dyadic((Q if side else P)[t, y])


def _bounds_arrays(c: list) -> tuple[np.ndarray, np.ndarray]:
    lf = np.empty(len(c))
    uf = np.empty(len(c))
    for t, ct in enumerate(c):
        lf[t], uf[t] = (0.0, np.inf) if ct is None else exp_float_bounds(ct)
    return lf, uf


def _decide(p: Dyadic, q: Dyadic, c: Fraction) -> int:
    """+1 proven p <= e^c q, −1 refuted, 0 undecided at every precision."""
    for prec in PRECISIONS:
        lo, hi = exp_bounds(c, prec)
        if dy_le(p, dy_mul(lo, q)):
            return 1
        if dy_cmp(p, dy_mul(hi, q)) > 0:
            return -1
    return 0


def screen_ratio(P: np.ndarray, Q: np.ndarray, c: list,
                 exact_inputs: bool) -> tuple[np.ndarray, np.ndarray]:
    """The float screen of :func:`check_ratio` (see the module doc): boolean (T, m) masks of the
    triples it proves and of those it refutes; the others are the close calls. Rows with c_t None
    (unconstrained) count as proven. ``exact_inputs``: P and Q hold the exact numbers."""
    P = np.asarray(P, dtype=float)
    Q = np.asarray(Q, dtype=float)
    active = np.array([ct is not None for ct in c], dtype=bool)
    lf, uf = _bounds_arrays(c)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = lf[:, None] * Q
        hi = uf[:, None] * Q
        proven = (lo >= TINY) & (P <= lo * (1.0 - SCREEN_MARGIN))
        refuted = (P >= TINY) & (P >= hi * (1.0 + SCREEN_MARGIN))
        if exact_inputs:
            proven |= P == 0
            refuted |= (P > 0) & (Q == 0)
        else:  # a rounded q below the normal range has no relative error bound
            refuted &= Q >= TINY
    proven |= ~active[:, None]
    refuted &= active[:, None] & ~proven
    return proven, refuted


def check_ratio(P: np.ndarray, Q: np.ndarray, c: list, exact: Exact | None = None,
                labels: Callable[[int], object] | None = None) -> Verdict:
    """Check P[t, y] <= e^{c_t} Q[t, y] for all t, y (c_t None: row t is unconstrained).

    Parameters
    ----------
    P, Q : (T, m) float arrays, the nearest floats of the exact values.
    c : list of Fraction or None, one per row.
    exact : callable (t, y, side) -> dyadic, the exact value (default: P, Q are exact).
    labels : callable t -> label of row t, for the first violation reported.
    """
    P = np.asarray(P, dtype=float)
    Q = np.asarray(Q, dtype=float)
    exact_inputs = exact is None
    exact = exact or float_exact(P, Q)
    proven, refuted = screen_ratio(P, Q, c, exact_inputs)
    active_rows = sum(ct is not None for ct in c)
    v = Verdict(checked=active_rows * P.shape[1], refuted=int(refuted.sum()))
    if v.refuted:
        t, y = map(int, np.argwhere(refuted)[0])
        v.first_violation = (labels(t) if labels else t, y)
        return v
    for t, y in np.argwhere(~proven & ~refuted).tolist():
        v.close += 1
        verdict = _decide(exact(t, y, 0), exact(t, y, 1), c[t])
        if verdict < 0:
            v.refuted += 1
            v.first_violation = (labels(t) if labels else t, y)
            return v
        v.undecided += verdict == 0
    return v


def hockey_bounds(p: list[Dyadic], q: list[Dyadic], c: Fraction,
                  prec: int) -> tuple[Dyadic, Dyadic]:
    """Exact (H_low, H_high) with H_low <= Σ_y max(0, p_y − e^c q_y) <= H_high."""
    lo, hi = exp_bounds(c, prec)
    h_hi: Dyadic = (0, 0)
    h_lo: Dyadic = (0, 0)
    for a, b in zip(p, q):
        d = dy_sub(a, dy_mul(lo, b))
        if d[0] > 0:
            h_hi = dy_add(h_hi, d)
        d = dy_sub(a, dy_mul(hi, b))
        if d[0] > 0:
            h_lo = dy_add(h_lo, d)
    return h_lo, h_hi


def _hockey_screen(P, Q, lf, uf, exact_inputs: bool):
    """Per row: float (upper bound of H, lower bound of H), both rigorous."""
    m = P.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.maximum(P - lf[:, None] * Q, 0.0).sum(axis=1)
        err = ((m + 4) * 2 * U * (P.sum(axis=1) + lf * Q.sum(axis=1) + h)
               + m * 2.0 ** -1070 * (1 + lf))
        upper = h + err
        upper = np.where(np.isfinite(upper), upper * (1 + 4 * U), np.inf)
        finite = np.isfinite(uf)
        hl = np.maximum(P - np.where(finite, uf, 0.0)[:, None] * Q, 0.0).sum(axis=1)
        uf0 = np.where(finite, uf, 0.0)
        err_l = ((m + 4) * 2 * U * (P.sum(axis=1) + uf0 * Q.sum(axis=1) + hl)
                 + m * 2.0 ** -1070 * (1 + uf0))
        lower = np.where(finite & np.isfinite(err_l), (hl - err_l) * (1 - 4 * U), 0.0)
    # where e^c overflows, only the mass on q = 0 surely exceeds it (known only when q is exact)
    stuck = np.where(Q == 0, P, 0.0).sum(axis=1) * (1 - (m + 2) * U) if exact_inputs else 0.0
    return upper, np.where(finite, lower, stuck)


#: outcome of one row against one bound: (+1 proven, −1 refuted, 0 undecided; a float upper
#: bound of H_t; whether the row was a close call, compared exactly)
RowOutcome = tuple[int, float, bool]


def _unbounded_row(P: np.ndarray, t: int, exact: Exact, bounds: list[Dyadic]) -> list[RowOutcome]:
    """Row t with e^c = +inf: only the mass on the zeros of q counts, exactly."""
    stuck: Dyadic = (0, 0)
    for y in range(P.shape[1]):
        if exact(t, y, 1)[0] == 0:
            stuck = dy_add(stuck, exact(t, y, 0))
    h = float_up(stuck)
    return [(-1 if dy_cmp(stuck, b) > 0 else 1, h, False) for b in bounds]


def _exact_row(P: np.ndarray, t: int, c: Fraction, exact: Exact,
               bounds: list[Dyadic]) -> list[RowOutcome]:
    """Row t against each bound by exact dyadic sums, raising the precision while any bound is
    undecided; each bound keeps the upper end H_high of the precision that decided it."""
    p = [exact(t, y, 0) for y in range(P.shape[1])]
    q = [exact(t, y, 1) for y in range(P.shape[1])]
    out: dict[int, RowOutcome] = {}
    for prec in PRECISIONS:
        h_lo, h_hi = hockey_bounds(p, q, c, prec)
        h = float_up(h_hi)
        for i, b in enumerate(bounds):
            if i in out:
                continue
            if dy_le(h_hi, b):
                out[i] = (1, h, True)
            elif dy_cmp(h_lo, b) > 0:
                out[i] = (-1, h, True)
        if len(out) == len(bounds):
            break
    return [out.get(i, (0, h, True)) for i in range(len(bounds))]


def _screened(upper: float, lower: float, bound: float) -> RowOutcome | None:
    """A row's outcome against one bound from the float screen's rigorous enclosure
    lower <= H_t <= upper, or None when the margin is too thin (a close call)."""
    if upper <= bound * (1 - SCREEN_MARGIN):
        return 1, float(upper), False
    if lower >= bound * (1 + SCREEN_MARGIN) and lower > 0:
        return -1, float(upper), False
    return None


def check_hockey(P: np.ndarray, Q: np.ndarray, c: list, bounds: list[Dyadic],
                 exact: Exact | None = None,
                 labels: Callable[[int], object] | None = None) -> list[tuple[Verdict, float]]:
    """Check Σ_y max(0, P[t, y] − e^{c_t} Q[t, y]) <= b for every row t and every bound b (exact
    dyadics), sharing the float screen and the exact sums of a row between the bounds.

    Returns, per bound, the verdict (one check per row) and a float upper bound of max_t H_t.
    """
    P = np.asarray(P, dtype=float)
    Q = np.asarray(Q, dtype=float)
    exact_inputs = exact is None
    exact = exact or float_exact(P, Q)
    lf, uf = _bounds_arrays(c)
    upper, lower = _hockey_screen(P, Q, lf, uf, exact_inputs)
    floats = [float(dy_fraction(b)) for b in bounds]
    verdicts = [Verdict(checked=len(c)) for _ in bounds]
    worst = [0.0] * len(bounds)
    for t in range(len(c)):
        if c[t] is None:
            outcomes = _unbounded_row(P, t, exact, bounds)
        else:
            outcomes = [_screened(upper[t], lower[t], f) for f in floats]
            if None in outcomes:
                close = [b for b, o in zip(bounds, outcomes) if o is None]
                decided = iter(_exact_row(P, t, c[t], exact, close))
                outcomes = [o or next(decided) for o in outcomes]
        for i, (state, h, close_call) in enumerate(outcomes):
            v = verdicts[i]
            worst[i] = max(worst[i], h)
            v.close += close_call
            v.undecided += state == 0
            if state < 0:
                v.refuted += 1
                v.first_violation = v.first_violation or (labels(t) if labels else t)
    return list(zip(verdicts, worst))


def float_levels(P: np.ndarray, Q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Per row, max_y ln(P/Q) / scale in float64 (0/0 and 0/q count as 0; p/0 as +inf;
    scale 0 or ∞ as in the library's audits: a positive log-ratio over 0 is +inf, over ∞ is 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(P) - np.log(Q)
        r = np.where(P <= 0, -np.inf, np.where(Q <= 0, np.inf, r))
        top = np.maximum(r.max(axis=1), 0.0)
        per = np.where(scale > 0, top / np.where(scale > 0, scale, 1.0), np.inf)
        out = np.where(top <= 0, 0.0, per)
    return np.where(np.isinf(scale) & np.isfinite(top), 0.0, out)
