r"""Exact audits of targets and of the information notions.

* :class:`~mechdesign.privacy.target.Target` — the deviation max_s max_y |(λ_s K_s)[y] − μ_y| is
  a rational computed exactly (μ given, or for a free target the weighted mean
  Σ_s w_s λ_s K_s / Σ_s w_s, normalised exactly so that equal outputs deviate by exactly 0); it
  holds when the deviation is <= τ (the notion's own tolerance) and holds at the request when
  it is exactly 0.
* :class:`~mechdesign.privacy.information.MinEntropy` — log2 Σ_y max_x K[x, y] <= c ⟺
  S = Σ_y max_x K[x, y] <= 2^c: S is an exact sum, 2^c = 2^⌊c⌋·2^{c − ⌊c⌋} is enclosed by
  intervals (exact when c is an integer).
* :class:`~mechdesign.privacy.information.MutualInformation` — I(π; K) =
  Σ_x π_x Σ_y K[x, y] ln(K[x, y] / (πK)_y) / ln 2 with πK exact and the sum enclosed by intervals.
* :class:`~mechdesign.privacy.information.InformationPrivacy` — for every prior π and every
  distribution q over the outputs, I(π; K) = Σ_x π_x D(K[x] ‖ q) − D(πK ‖ q)
  <= max_x D(K[x] ‖ q), so the Shannon capacity is at most max_x D(K[x] ‖ q) (the
  Blahut–Arimoto upper bound; Cover & Thomas, *Elements of Information Theory*, 2nd ed., Wiley
  2006, §10.8). q is taken from the library's solver
  (:func:`~mechdesign.information.capacity.shannon_capacity`); since it need not sum exactly to 1, the
  bound is evaluated as max_x D(K[x] ‖ q) + ln Σ_y q_y (the divergence to q/Σq), enclosed by
  intervals. A failed bound refutes nothing.
* :class:`~mechdesign.privacy.information.GVulnerability` — V_g(π, K) =
  Σ_y max_w Σ_x π_x g(w, x) K[x, y] exactly; a bound in bits is V_g(π)·2^bits, enclosed.

Tolerances follow each notion's float audit (τ = ``AUDIT_TOL``; τ·max(1, |v|) for
g-vulnerability).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from mpmath import iv

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.information.capacity import shannon_capacity
from mechdesign.privacy.exact.arith import (
    ZERO,
    Dyadic,
    dy_add,
    dy_cmp,
    dy_fraction,
    dy_mul,
    dyadic,
    exact_vecmat,
    fraction_up,
    iv_bounds,
    iv_dyadic,
    mpf_dyadic,
)

PRECISIONS = (80, 256, 1024)


class _Verdicts:
    """Worst verdicts over contexts: +1 proven, 0 undecided, −1 refuted; largest upper bound."""

    def __init__(self):
        self.loose, self.strict, self.worst = 1, 1, 0.0

    def see(self, loose: int, strict: int, upper: float) -> None:
        self.loose, self.strict = min(self.loose, loose), min(self.strict, strict)
        self.worst = max(self.worst, upper)

    def detail(self, method: str, checked: int, can_refute: bool = True,
               extra: dict | None = None) -> dict:
        return _detail(method, checked, self.strict > 0, can_refute and self.loose < 0,
                       {"undecided": int(self.loose == 0 or (self.loose < 0 and not can_refute)),
                        **(extra or {})})


def _detail(method: str, checked: int, strict: bool, refuted: bool,
            extra: dict | None = None) -> dict:
    out = {"exact": True, "method": method, "pairs_checked": checked, "tolerance": AUDIT_TOL,
           "holds_at_requested": strict, "refuted": refuted}
    out.update(extra or {})
    return out


def _interval(fn, prec: int):
    old = iv.prec
    try:
        iv.prec = prec
        return fn()
    finally:
        iv.prec = old


def _ends(v) -> tuple[Fraction, Fraction]:
    lo, hi = (mpf_dyadic(t) for t in v._mpi_)
    return (Fraction(-10 ** 400) if lo is None else dy_fraction(lo),
            Fraction(10 ** 400) if hi is None else dy_fraction(hi))


def decide_upper(value_fn, bound: Fraction) -> tuple[int, float]:
    """Decide value <= bound for ``value_fn()`` returning an interval or a list of intervals
    (then: every one <= bound), escalating the precision while undecided. Returns (+1 proven,
    −1 refuted, 0 undecided) and a float upper bound of the (largest) value."""
    hi_f = float("inf")
    for prec in PRECISIONS:
        v = _interval(value_fn, prec)
        if v is None:  # +inf
            return (-1, float("inf"))
        vs = v if isinstance(v, list) else [v]
        ends = [_ends(x) for x in vs]
        hi_f = min(hi_f, max(iv_bounds(x)[1] for x in vs))
        if all(hi <= bound for _, hi in ends):
            return 1, hi_f
        if any(lo > bound for lo, _ in ends):
            return -1, hi_f
    return 0, hi_f


# ---------------------------------------------------------------------------------------------
# target

def target_audit(notion, mechs) -> Audit:
    outs = {s: [dy_fraction(v) for v in exact_vecmat(lam, mechs[s])]
            for s, lam in notion.contexts.items()}
    if notion.mu is not None:
        mu = [Fraction(v) for v in np.asarray(notion.mu, dtype=float).tolist()]
    else:  # the weighted mean, normalised exactly: equal outputs have deviation 0
        weights = {s: Fraction(notion.weights[s]) for s in outs}
        total = sum(weights.values())
        mu = [sum(weights[s] * o[y] for s, o in outs.items()) / total
              for y in range(len(next(iter(outs.values()))))]
    deviations = {s: max(abs(a - b) for a, b in zip(o, mu)) for s, o in outs.items()}
    worst = max(deviations.values())
    holds = worst <= Fraction(AUDIT_TOL)
    detail = _detail("rational", len(outs), worst == 0, not holds,
                     {"deviations": {s: fraction_up(v) for s, v in deviations.items()}})
    return Audit(notion.name, {"distribution": notion.label, "deviation": 0.0},
                 {"deviation": fraction_up(worst)}, holds, detail)


# ---------------------------------------------------------------------------------------------
# min-entropy capacity

def pow2(c: Fraction):
    """An interval enclosing 2^c (a point when c is an integer)."""
    n = c.numerator // c.denominator
    f = c - n
    base = iv.mpf(1) if f == 0 else iv.exp(iv.mpf(f.numerator) / f.denominator * iv.log(2))
    return iv.ldexp(base, n)


def _bits_verdict(value_fn, bits: float) -> tuple[int, int, float]:
    """Verdicts of value <= bits + τ and value <= bits, and a float upper bound of the value."""
    loose, up = decide_upper(value_fn, Fraction(bits) + Fraction(AUDIT_TOL))
    strict = decide_upper(value_fn, Fraction(bits))[0] if loose > 0 else loose
    return loose, strict, up


def _le_pow2(s: Fraction, c: Fraction) -> int:
    """+1 proven s <= 2^c, −1 refuted, 0 undecided at every precision."""
    for prec in PRECISIONS:
        lo, hi = _ends(_interval(lambda: pow2(c), prec))
        if s <= lo:
            return 1
        if s > hi:
            return -1
    return 0


def min_entropy_audit(notion, mechs) -> Audit:
    seen = _Verdicts()
    for k in mechs.values():
        total: Dyadic = ZERO
        for v in k.max(axis=0).tolist():
            total = dy_add(total, dyadic(v))
        s = dy_fraction(total)
        loose = _le_pow2(s, Fraction(notion.bits) + Fraction(AUDIT_TOL))
        strict = _le_pow2(s, Fraction(notion.bits)) if loose > 0 else loose
        up = iv_bounds(_interval(lambda: iv.log(iv_dyadic(total)) / iv.log(2), PRECISIONS[0]))[1]
        seen.see(loose, strict, up)
    return Audit(notion.name, {"bits": notion.bits}, {"bits": seen.worst}, seen.loose > 0,
                 seen.detail("rational", len(mechs)))


# ---------------------------------------------------------------------------------------------
# mutual information and capacity

def _divergence_rows(k_d: list[list[Dyadic]], q: list[Dyadic], weights=None):
    """Interval Σ_x w_x D(K[x] ‖ q) (weights) or the list of D(K[x] ‖ q) (None), in nats;
    None stands for +∞ (mass on a zero of q)."""
    logs = [None if b[0] == 0 else iv.log(iv_dyadic(b)) for b in q]
    out = []
    for row in k_d:
        total = iv.mpf(0)
        for a, lq in zip(row, logs):
            if a[0] == 0:
                continue
            if lq is None:
                return None
            pa = iv_dyadic(a)
            total += pa * (iv.log(pa) - lq)
        out.append(total)
    if weights is None:
        return out
    return sum((iv_dyadic(w) * d for w, d in zip(weights, out)), iv.mpf(0))


def mutual_information_audit(notion, mechs) -> Audit:
    seen = _Verdicts()
    for key, k in mechs.items():
        pi = np.asarray(notion.priors[key], dtype=float)
        rows = [x for x in range(pi.size) if pi[x] > 0]
        q = exact_vecmat(pi, k)
        k_d = [[dyadic(v) for v in k[x].tolist()] for x in rows]
        w = [dyadic(pi[x]) for x in rows]

        def bits(k_d=k_d, q=q, w=w):
            total = _divergence_rows(k_d, q, w)
            return None if total is None else total / iv.log(2)
        seen.see(*_bits_verdict(bits, notion.bits))
    return Audit(notion.name, {"bits": notion.bits, "prior": notion.prior_name},
                 {"bits": seen.worst}, seen.loose > 0,
                 seen.detail("interval", len(mechs)))


def _output_distribution(k: np.ndarray) -> np.ndarray:
    q = np.maximum(np.asarray(shannon_capacity(k, tol=1e-11, max_iter=20_000).output, float), 0.0)
    if np.any((q == 0) & (k.max(axis=0) > 0)) or q.sum() <= 0:
        q = 0.999 * q / max(q.sum(), 1e-300) + 0.001 * k.mean(axis=0)
    return q


def capacity_audit(notion, mechs) -> Audit:
    seen = _Verdicts()
    for k in mechs.values():
        q = [dyadic(v) for v in _output_distribution(k).tolist()]
        total: Dyadic = ZERO
        for v in q:
            total = dy_add(total, v)
        k_d = [[dyadic(v) for v in row] for row in k.tolist()]

        def bound(k_d=k_d, q=q, total=total):
            divs = _divergence_rows(k_d, q)
            if divs is None:
                return None
            shift = iv.log(iv_dyadic(total))
            return [(d + shift) / iv.log(2) for d in divs]
        seen.see(*_bits_verdict(bound, notion.bits))
    # a failed bound refutes nothing: another q may give a smaller one
    return Audit(notion.name, {"bits": notion.bits}, {"bits": seen.worst}, seen.loose > 0,
                 seen.detail("interval", len(mechs), False,
                             {"bound": "max_x D(K[x] || q), q from Blahut-Arimoto"}))


# ---------------------------------------------------------------------------------------------
# g-vulnerability

def _posterior_vulnerability(gain: np.ndarray, pi: np.ndarray, k: np.ndarray) -> Dyadic:
    weighted = [[dy_mul(dyadic(g), dyadic(p)) for g, p in zip(row, pi.tolist())]
                for row in gain.tolist()]
    k_d = [[dyadic(v) for v in row] for row in k.tolist()]
    total: Dyadic = ZERO
    for y in range(k.shape[1]):
        best = None
        for row in weighted:
            s: Dyadic = ZERO
            for wx, kx in zip(row, k_d):
                if wx[0] and kx[y][0]:
                    s = dy_add(s, dy_mul(wx, kx[y]))
            best = s if best is None or dy_cmp(s, best) > 0 else best
        total = dy_add(total, best)
    return total


def g_vulnerability_audit(notion, mechs) -> Audit:
    loose_all, strict_all, worst, refuted = True, True, 0.0, False
    for key, k in mechs.items():
        pi = np.asarray(notion.priors[key], dtype=float)
        v = dy_fraction(_posterior_vulnerability(notion.gain, pi, k))
        tol = Fraction(AUDIT_TOL) * max(Fraction(1), abs(Fraction(float(notion.bounds[key]))))
        if notion.leakage_bits is not None:
            prior = max(sum((Fraction(g) * Fraction(p) for g, p in zip(row, pi.tolist())),
                            Fraction(0)) for row in notion.gain.tolist())
            lo, hi = _ends(_interval(lambda: iv.mpf(prior.numerator) / prior.denominator
                                     * pow2(Fraction(notion.leakage_bits)), PRECISIONS[-1]))
        else:
            lo = hi = Fraction(float(notion.bounds[key]))
        loose_all &= v <= lo + tol
        strict_all &= v <= lo
        refuted |= v > hi + tol
        worst = max(worst, fraction_up(v))
    return Audit(notion.name, {"gain": notion.gain_name, "prior": notion.prior_name},
                 {"vulnerability": worst}, bool(loose_all),
                 _detail("rational", len(mechs), bool(strict_all), refuted))
