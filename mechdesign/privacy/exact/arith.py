"""Exact dyadic arithmetic and outward-rounded bounds for the exact audit.

Every float64 number is a dyadic rational m·2^e (m, e integers), so the entries of a matrix, of
a prior and the exact sums λK are dyadic; they are held here as ``(m, e)`` pairs of Python
integers and compared exactly. Transcendental numbers (e^c, ln t, √t) are enclosed by
mpmath's interval context ``mpmath.iv``, whose operations round outward (the lower endpoint is
rounded towards −∞, the upper towards +∞), so an enclosure [lo, hi] always contains the true
value; both endpoints are dyadic as well.

A float rounded *down* (:func:`float_down`) or *up* (:func:`float_up`) from a dyadic is obtained
by rounding to nearest and stepping with ``math.nextafter`` after an exact comparison, so it is
a rigorous one-sided bound whatever the platform's libm does.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from mpmath import iv

#: Working precisions (bits) of the exponential's enclosure, tried in turn on close calls.
PRECISIONS = (80, 256, 1024, 4096)
#: Precision (bits) of the interval arithmetic used for logarithms and square roots.
IV_PREC = 80

Dyadic = tuple[int, int]  # value = m * 2**e

ZERO: Dyadic = (0, 0)
ONE: Dyadic = (1, 0)


def dyadic(x: float) -> Dyadic:
    """The float ``x`` as an exact (m, e) pair with x = m·2^e (finite ``x`` only)."""
    n, d = float(x).as_integer_ratio()
    return n, 1 - d.bit_length()


def dy_mul(a: Dyadic, b: Dyadic) -> Dyadic:
    return a[0] * b[0], a[1] + b[1]


def dy_add(a: Dyadic, b: Dyadic) -> Dyadic:
    if a[0] == 0:
        return b
    if b[0] == 0:
        return a
    e = min(a[1], b[1])
    return (a[0] << (a[1] - e)) + (b[0] << (b[1] - e)), e


def dy_sub(a: Dyadic, b: Dyadic) -> Dyadic:
    return dy_add(a, (-b[0], b[1]))


def dy_cmp(a: Dyadic, b: Dyadic) -> int:
    """Sign of a − b (exact)."""
    d = dy_sub(a, b)[0]
    return (d > 0) - (d < 0)


def dy_le(a: Dyadic, b: Dyadic) -> bool:
    return dy_cmp(a, b) <= 0


def dy_fraction(a: Dyadic) -> Fraction:
    return Fraction(a[0]) * (Fraction(2) ** a[1])


def dy_float(a: Dyadic) -> float:
    """The float nearest to a (CPython's int / int true division is correctly rounded)."""
    m, e = a
    try:
        return float(m << e) if e >= 0 else m / (1 << -e)
    except OverflowError:
        return math.inf if m > 0 else -math.inf


def float_down(a: Dyadic) -> float:
    """The largest float <= a (−inf below the float range, the largest float above it)."""
    f = dy_float(a)
    if math.isinf(f):
        f = math.copysign(np.finfo(float).max, f)
        return f if dy_le(dyadic(f), a) else -math.inf
    while not dy_le(dyadic(f), a):
        f = math.nextafter(f, -math.inf)
    return f


def float_up(a: Dyadic) -> float:
    """The smallest float >= a (+inf above the float range)."""
    return -float_down((-a[0], a[1]))


def fraction_up(x: Fraction) -> float:
    """The smallest float >= the rational x (+inf above the float range)."""
    try:
        f = float(x)
    except OverflowError:
        return math.inf if x > 0 else -np.finfo(float).max
    if math.isfinite(f) and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def mpf_dyadic(t) -> Dyadic | None:
    """An mpmath raw mpf tuple (sign, man, exp, bc) as a dyadic; None for ±inf or nan."""
    sign, man, exp, _ = t
    if man == 0:
        return None if exp else ZERO
    return (-man if sign else man), exp


def iv_dyadic(x: Dyadic):
    """An interval enclosing the dyadic x (a point when it fits the working precision)."""
    m, e = x
    return iv.ldexp(iv.mpf(m), e)


def iv_bounds(v) -> tuple[float, float]:
    """Floats (lo, hi) with lo <= every point of the interval ``v`` <= hi."""
    lo_t, hi_t = v._mpi_
    lo, hi = mpf_dyadic(lo_t), mpf_dyadic(hi_t)
    lo_f = -math.inf if lo is None else float_down(lo)
    hi_f = math.inf if hi is None else float_up(hi)
    return lo_f, hi_f


@lru_cache(maxsize=4096)
def exp_bounds(c: Fraction, prec: int = PRECISIONS[0]) -> tuple[Dyadic, Dyadic]:
    """Dyadics (L, U) with L <= e^c <= U, from an outward-rounded enclosure at ``prec`` bits.

    c = 0 gives L = U = 1 exactly; for any other rational c, e^c is irrational (Lindemann), so a
    strict comparison p <= e^c q between dyadics is always decided at a high enough precision.
    """
    if c == 0:
        return ONE, ONE
    old = iv.prec
    try:
        iv.prec = prec
        v = iv.exp(iv.mpf(c.numerator) / iv.mpf(c.denominator))
    finally:
        iv.prec = old
    lo, hi = (mpf_dyadic(t) for t in v._mpi_)
    if lo is None or hi is None:  # pragma: no cover - mpmath has an unbounded exponent range
        raise OverflowError(f"e^{float(c)} has no finite enclosure")
    return lo, hi


@lru_cache(maxsize=4096)
def exp_float_bounds(c: Fraction) -> tuple[float, float]:
    """Floats (Lf, Uf) with Lf <= e^c <= Uf (Lf is the largest float when e^c overflows)."""
    lo, hi = exp_bounds(c)
    return max(float_down(lo), 0.0), float_up(hi)


def exact_vecmat(lam: np.ndarray, k: np.ndarray) -> list[Dyadic]:
    """(λK)[y] = Σ_x λ_x K[x, y] exactly, as dyadics (one integer sum per column).

    Each product λ_x K[x, y] = (a_x b_xy)·2^(e_x + f_xy) is exact; the column sum is taken over a
    common exponent, so no rounding happens anywhere.
    """
    lam = np.asarray(lam, dtype=float)
    k = np.asarray(k, dtype=float)
    rows = [x for x in range(lam.size) if lam[x] != 0]
    lam_d = [dyadic(lam[x]) for x in rows]
    k_d = [[dyadic(v) for v in k[x].tolist()] for x in rows]
    out = []
    for y in range(k.shape[1]):
        total: Dyadic = ZERO
        for a, row in zip(lam_d, k_d):
            b = row[y]
            if b[0]:
                total = dy_add(total, dy_mul(a, b))
        out.append(total)
    return out


def dyadic_floats(values: list[Dyadic]) -> np.ndarray:
    """Nearest floats of exact dyadics (for the float screen; relative error <= 2^-53)."""
    return np.array([dy_float(v) for v in values], dtype=float)
