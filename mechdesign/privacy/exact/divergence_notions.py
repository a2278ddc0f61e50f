r"""Exact audits of the f-divergence notions (divergence DP / XDP / DistP / XDistP).

For a comparison of two exact distributions p, q (dyadic rows of K, or exact sums λK) and a
bound b = (ε + τ)·s (s = 1, d(x, x') or W(λ, λ'); τ = ``AUDIT_TOL``):

* total variation ½ Σ|p − q| and χ² = Σ (p − q)²/q are rational and compared with b exactly
  (method ``"rational"``);
* KL Σ p ln(p/q), reverse KL and squared Hellinger ½ Σ (√p − √q)² are enclosed in an
  outward-rounded interval (``mpmath.iv``, 80 bits, then 256 and 1024 when the interval straddles
  b); the check is proven when the interval's upper end is <= b and refuted when its lower end is
  > b (method ``"interval"``).

Mass where q = 0 < p counts as in :mod:`mechdesign.core.divergences`: +∞ for KL and χ², ½ p for TV
and Hellinger (which the formulas give directly), 0 for reverse KL (whose terms have q = 0).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import permutations

import numpy as np
from mpmath import iv

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.errors import ProblemError
from mechdesign.privacy.exact.arith import (
    Dyadic,
    dy_fraction,
    dyadic,
    exact_vecmat,
    fraction_up,
    iv_dyadic,
    mpf_dyadic,
)

INTERVAL_PRECISIONS = (80, 256, 1024)
RATIONAL = ("tv", "chi2")
KNOWN = ("max", "kl", "reverse-kl", "tv", "chi2", "hellinger")


def _rational_value(name: str, p: list[Dyadic], q: list[Dyadic]) -> Fraction:
    """TV or χ² exactly (χ² is +∞ when q = 0 < p: returned as None by the caller's check)."""
    total = Fraction(0)
    for a, b in zip(p, q):
        fa, fb = dy_fraction(a), dy_fraction(b)
        if name == "tv":
            total += abs(fa - fb) / 2
        elif fb == 0:
            if fa > 0:
                raise OverflowError
        else:
            total += (fa - fb) ** 2 / fb
    return total


def _interval_value(name: str, p: list[Dyadic], q: list[Dyadic]):
    """An interval enclosing KL, reverse KL, squared Hellinger or D∞ (None: +∞)."""
    if name == "max":
        return _max_divergence(p, q)
    if name == "reverse-kl":
        name, p, q = "kl", q, p
    total = iv.mpf(0)
    for a, b in zip(p, q):
        if name == "kl":
            if a[0] == 0:
                continue
            if b[0] == 0:
                return None
            pa = iv_dyadic(a)
            total += pa * iv.log(pa / iv_dyadic(b))
        else:
            total += (iv.sqrt(iv_dyadic(a)) - iv.sqrt(iv_dyadic(b))) ** 2 / 2
    return total


def _max_divergence(p: list[Dyadic], q: list[Dyadic]):
    """D∞(p ‖ q) = max(0, max_{p_y > 0} ln(p_y / q_y)) as an interval (None: +∞)."""
    lo, hi = iv.mpf(0), iv.mpf(0)
    for a, b in zip(p, q):
        if a[0] == 0:
            continue
        if b[0] == 0:
            return None
        r = iv.log(iv_dyadic(a) / iv_dyadic(b))
        lo, hi = (r.a if r.a > lo else lo), (r.b if r.b > hi else hi)
    return iv.mpf([lo.a, hi.b])


def check_known(name: str) -> None:
    if name not in KNOWN:
        raise ProblemError(f"exact mode does not cover the divergence '{name}'; it covers "
                           f"{', '.join(KNOWN)}", key="divergence")


def divergence_bounds(name: str, p: list[Dyadic], q: list[Dyadic], prec: int = 80):
    """(lo, hi): exact Fractions for TV and χ², interval end points (floats) otherwise;
    (inf, inf) when the divergence is infinite."""
    if name in RATIONAL:
        try:
            v = _rational_value(name, p, q)
        except OverflowError:
            return float("inf"), float("inf")
        return v, v
    old = iv.prec
    try:
        iv.prec = prec
        v = _interval_value(name, p, q)
        if v is None:
            return float("inf"), float("inf")
        lo, hi = v._mpi_
    finally:
        iv.prec = old
    lo_d, hi_d = mpf_dyadic(lo), mpf_dyadic(hi)
    return (max(dy_fraction(lo_d), Fraction(0)) if lo_d else float("-inf"),
            dy_fraction(hi_d) if hi_d else float("inf"))


def _decide(name: str, p, q, bound: Fraction) -> tuple[int, object]:
    """(+1 proven D <= bound, −1 refuted, 0 undecided), and the tightest upper end found."""
    hi = float("inf")
    for prec in INTERVAL_PRECISIONS:
        lo, hi = divergence_bounds(name, p, q, prec)
        if hi <= bound:
            return 1, hi
        if lo > bound:
            return -1, hi
        if name in RATIONAL:
            break
    return 0, hi


def _up(x, scale: float) -> float:
    """A float >= x / scale (x a Fraction or ±inf; 0/0 = 0, positive/0 = inf)."""
    if x == float("inf"):
        return float("inf")
    x = Fraction(x)
    if scale == 0:
        return 0.0 if x <= 0 else float("inf")
    if not np.isfinite(scale):
        return 0.0
    return fraction_up(x / Fraction(scale))


def comparisons_audit(notion, rows: list, requested: dict, pairs: int) -> Audit:
    """Audit rows of (label, p, q, scale): D(p ‖ q) <= (ε + τ)·scale (holds) and <= ε·scale."""
    name = notion.divergence.name
    check_known(name)
    eps, tol = Fraction(notion.epsilon), Fraction(AUDIT_TOL)
    proven, proven_strict, refuted, undecided, achieved = True, True, 0, 0, 0.0
    violation = None
    for label, p, q, scale in rows:
        s = Fraction(scale) if np.isfinite(scale) else None
        if s is None:  # infinite distance: unconstrained
            continue
        state, hi = _decide(name, p, q, (eps + tol) * s)
        achieved = max(achieved, _up(hi, scale))
        if state <= 0:
            proven = proven_strict = False
            refuted += state < 0
            undecided += state == 0
            violation = violation or label
            continue
        if proven_strict and _decide(name, p, q, eps * s)[0] <= 0:
            proven_strict = False
    detail = {"exact": True, "method": "rational" if name in RATIONAL else "interval",
              "pairs_checked": pairs, "tolerance": AUDIT_TOL, "holds_at_requested": proven_strict,
              "refuted": refuted > 0, "undecided": undecided}
    if violation is not None:
        detail["violation"] = violation
    return Audit(notion.name, requested, {"epsilon": achieved}, proven, detail)


def point_audit(notion, mechs) -> Audit:
    """Divergence DP / XDP: every adjacent pair (both directions) of every context's matrix."""
    scales = np.asarray(notion.scales(), dtype=float)
    labels = notion.labels
    rows = []
    for key, k in mechs.items():
        exact = [[dyadic(v) for v in row] for row in k.tolist()]
        for t, (a, b) in enumerate(zip(notion.i.tolist(), notion.j.tolist())):
            name = f"{key}:{labels[a] if labels else a}~{labels[b] if labels else b}"
            rows.append((name, exact[a], exact[b], float(scales[t])))
    requested = {"epsilon": notion.epsilon, "divergence": notion.divergence.name}
    return comparisons_audit(notion, rows, requested, len(rows))


def distribution_audit(notion, mechs) -> Audit:
    """Divergence DistP / XDistP: both directions of every pair of exact output distributions."""
    outs: dict = {}

    def out(side):
        if id(side) not in outs:
            outs[id(side)] = exact_vecmat(side.distribution, mechs[side.key])
        return outs[id(side)]

    rows = []
    for (a, b), scale in zip(notion.pairs, np.asarray(notion.pair_scales(), dtype=float).tolist()):
        rows += [(f"{a.name}~{b.name}", out(a), out(b), scale),
                 (f"{b.name}~{a.name}", out(b), out(a), scale)]
    requested = {"epsilon": notion.epsilon, "divergence": notion.divergence.name}
    return comparisons_audit(notion, rows, requested, len(rows))


def approximate_knowledge_audit(notion, mechs) -> Audit:
    """Theorem 3's certificate line: per divergence, max over ordered context pairs of
    D(λ_s K_s ‖ λ_s' K_s') (exact outputs) against the notion's stated bounds (float64 values of
    the theorem at the notion's knowledge error), each plus τ."""
    outs = {s: exact_vecmat(lam, mechs[s]) for s, lam in notion.actual.items()}
    pairs = list(permutations(outs, 2))
    bounds = notion.bounds()
    achieved, proven, strict, refuted = {}, True, True, False
    for div in notion.divergences:
        check_known(div.name)
        bound, worst = Fraction(float(bounds[div.name])), 0.0
        for a, b in pairs:
            state, hi = _decide(div.name, outs[a], outs[b], bound + Fraction(AUDIT_TOL))
            worst = max(worst, _up(hi, 1.0))
            proven &= state > 0
            refuted |= state < 0
            strict = strict and state > 0 and _decide(div.name, outs[a], outs[b], bound)[0] > 0
        achieved[div.name] = worst
    detail = {"exact": True, "method": "interval", "pairs_checked": len(pairs),
              "tolerance": AUDIT_TOL, "holds_at_requested": strict, "refuted": refuted,
              "knowledge_epsilon": notion.knowledge_epsilon()}
    return Audit(notion.name, bounds, achieved, proven, detail)
