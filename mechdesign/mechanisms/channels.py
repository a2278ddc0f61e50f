"""The privacy channels of Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017 as mechanisms, with their capacities and calibrations.

Wu, Xia and He 2017 ("Achieving Dalenius' Goal of Data Privacy with Practical Assumptions") calls a
channel ε-information private when its (individual) channel capacity is at most ε bits
(Def. 5–6). Its basic channels (§4–5) are built here as :class:`~mechdesign.core.mechanism.Mechanism`
objects:

* the binary symmetric / randomized-response channel (§4.1), capacity 1 − H(p);
* data-independent channels (Def. 12: rows are permutations of each other), whose capacity is at
  most log2|Y| − H(row) (eq. (63)), with equality for weakly symmetric ones (Def. 13,
  Corollary 4; also column sums equal, Cover & Thomas Thm. 7.2.1);
* the discrete exponential channel (Def. 14–15);
* the Gaussian channel (Def. 16), discretised to a grid of outputs.

Each ``calibrate_*`` function finds the parameter giving ε-information privacy (capacity <= ε
bits) by bisection on the *certified* upper bound of :func:`~mechdesign.information.capacity.shannon_capacity`:
the returned channel's upper bound is <= ε and its lower bound is within ``tol`` of ε.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_distribution, check_stochastic
from mechdesign.information.capacity import CapacityResult, shannon_capacity
from mechdesign.information.channel import LN2
from mechdesign.information.leakage import mutual_information
from mechdesign.mechanisms.randomized_response import krr
from mechdesign.privacy.base import check_epsilon

__all__ = [
    "Calibration",
    "binary_entropy",
    "binary_symmetric",
    "calibrate",
    "calibrate_binary_symmetric",
    "calibrate_exponential",
    "calibrate_gaussian",
    "calibrate_krr",
    "circulant",
    "data_independent",
    "data_independent_bound",
    "entropy_bits",
    "exponential_channel",
    "exponential_ranks",
    "exponential_row_entropy",
    "gaussian_capacity_bound",
    "gaussian_channel",
    "is_data_independent",
    "is_weakly_symmetric",
    "krr_at_capacity",
    "krr_at_min_entropy",
    "krr_at_mutual_information",
    "weakly_symmetric_capacity",
]


# ---------------------------------------------------------------------------------------------
# entropies

def entropy_bits(p) -> float:
    """Shannon entropy H(p) = −Σ p log2 p of a distribution, in bits (0 log 0 = 0)."""
    p = np.asarray(p, dtype=float)
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


def binary_entropy(p: float) -> float:
    """H(p) = −p log2 p − (1 − p) log2(1 − p)."""
    return entropy_bits([p, 1.0 - p])


# ---------------------------------------------------------------------------------------------
# binary symmetric channel (Wu, Xia and He 2017, §4.1, eq. (49))

def binary_symmetric(p: float, labels: Sequence = ("0", "1")) -> Mechanism:
    """The binary symmetric (randomized-response) channel: the bit is flipped with probability p.

    K = [[1 − p, p], [p, 1 − p]]; capacity 1 − H(p) bits (Cover & Thomas §7.1.4), and
    ln((1 − p)/p) is its LDP ε for p <= 1/2.
    """
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ProblemError(f"flip probability must be in [0, 1], got {p!r}", key="p")
    k = np.array([[1.0 - p, p], [p, 1.0 - p]])
    return Mechanism(k, Domain(tuple(labels)), Domain(tuple(labels)), name=f"bsc(p={p:g})",
                     validate=False)


# ---------------------------------------------------------------------------------------------
# data-independent and weakly symmetric channels (Def. 12–13, Corollary 4)

def data_independent(row, permutations: Sequence[Sequence[int]]) -> Mechanism:
    """The data-independent channel K[x, y] = row[σ_x(y)] (Def. 12: rows are permutations of
    each other), one permutation σ_x of the outputs per input."""
    r = check_distribution(row, what="row")
    perms = np.asarray(permutations, dtype=int)
    if perms.ndim != 2 or perms.shape[1] != len(r):
        raise ProblemError(f"expected one permutation of range({len(r)}) per input", key="permutations")
    if not np.all(np.sort(perms, axis=1) == np.arange(len(r))[None, :]):
        raise ProblemError("every entry must be a permutation of the output indices", key="permutations")
    return Mechanism(r[perms], perms.shape[0], len(r), name="data-independent", validate=False)


def circulant(row, n_inputs: int | None = None) -> Mechanism:
    """K[x, y] = row[(y − x) mod |Y|]: a symmetric (hence weakly symmetric) channel when
    n_inputs = |Y| (every column is a permutation of the row too)."""
    r = check_distribution(row, what="row")
    n = len(r) if n_inputs is None else int(n_inputs)
    if not 1 <= n <= len(r):
        raise ProblemError(f"n_inputs must be in 1..{len(r)}", key="n_inputs")
    idx = (np.arange(len(r))[None, :] - np.arange(n)[:, None]) % len(r)
    return Mechanism(r[idx], n, len(r), name="circulant", validate=False)


def is_data_independent(K, atol: float = 1e-12) -> bool:
    """True when every row is a permutation of the first (Def. 12)."""
    K = _matrix(K)
    s = np.sort(K, axis=1)
    return bool(np.all(np.abs(s - s[0]) <= atol))


def is_weakly_symmetric(K, atol: float = 1e-12) -> bool:
    """Rows are permutations of each other and all column sums are equal (Cover & Thomas,
    §7.2): then the uniform input gives the uniform output and C = log2|Y| − H(row)."""
    K = _matrix(K)
    col = K.sum(axis=0)
    return is_data_independent(K, atol) and bool(np.all(np.abs(col - col[0]) <= atol * K.shape[0]))


def data_independent_bound(K) -> float:
    """log2|Y| − H(row): an upper bound on the capacity of a data-independent channel
    (Wu, Xia and He 2017, eq. (63)), reached by weakly symmetric ones (eq. (65))."""
    K = _matrix(K)
    if not is_data_independent(K, 1e-9):
        raise ProblemError("the channel is not data-independent (rows are not permutations of "
                           "each other)", key="channel")
    return float(np.log2(K.shape[1]) - entropy_bits(K[0]))


def weakly_symmetric_capacity(K) -> float:
    """Closed-form capacity log2|Y| − H(row) of a weakly symmetric channel (Corollary 4)."""
    K = _matrix(K)
    if not is_weakly_symmetric(K, 1e-9):
        raise ProblemError("the channel is not weakly symmetric (rows must be permutations of each "
                           "other and column sums equal)", key="channel")
    return data_independent_bound(K)


def _matrix(K) -> np.ndarray:
    return K.matrix if isinstance(K, Mechanism) else check_stochastic(K, what="channel")


# ---------------------------------------------------------------------------------------------
# discrete exponential channel (Def. 14–15)

def exponential_ranks(distortion: np.ndarray) -> np.ndarray:
    r"""The rank distortion d̃ of Wu, Xia and He 2017, eq. (67)–(68), rebuilt from the definitions.

    For each value r of the query's range R, sort the outputs by the distortion d(r, ·)
    (eq. (67): d(r, r_σ(1)) <= d(r, r_σ(2)) <= ...; ties broken by output index) and set
    d̃(r, r_σ(i)) = i − 1. Every row of d̃ is then a permutation of 0, …, |R| − 1.
    """
    d = np.asarray(distortion, dtype=float)
    order = np.argsort(d, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(d.shape[0])[:, None]
    ranks[rows, order] = np.arange(d.shape[1])[None, :]
    return ranks


def exponential_channel(values: int | Domain, alpha: float, distortion=None) -> Mechanism:
    r"""The (discrete) exponential privacy channel of Wu, Xia and He 2017, Def. 15, as rebuilt here.

    The extracted paper lost its formulas (69)–(70); from Def. 14–15, the text around them and
    the entropy computation (71)–(82) (which sums the geometric series Σ_i e^{−α i} and
    Σ_i i e^{−α i} over i = 0 … |R| − 1) the channel is

    .. math::

        K[r, y] = \frac{e^{-\alpha\, \tilde d(r, y)}}{Z(\alpha)}, \qquad
        Z(\alpha) = \sum_{i=0}^{|R|-1} e^{-\alpha i} = \frac{1 - e^{-\alpha |R|}}{1 - e^{-\alpha}},

    with d̃ the rank distortion of :func:`exponential_ranks` (rank of y among the outputs sorted
    by the distortion d(r, ·)) and α > 0 the parameter. Because each row of d̃ is a permutation
    of 0 … |R| − 1, the normaliser does not depend on r and the channel is data-independent —
    the property the paper says it designed the channel for. Its capacity is therefore at most
    log2|R| − H(row) (eq. (63) and (83)), with H(row) in :func:`exponential_row_entropy`.

    Parameters
    ----------
    values : int or Domain
        The query's range R (inputs and outputs of the channel).
    alpha : float
        α >= 0 (α = 0 is the uniform channel).
    distortion : array (|R|, |R|), optional
        d(r, y); default |r − y| on the domain's points (or on 0 … |R| − 1).
    """
    domain = Domain.coerce(values)
    n = len(domain)
    alpha = check_epsilon(alpha, "alpha")
    if distortion is None:
        pts = domain.points[:, 0] if domain.points is not None else np.arange(n, dtype=float)
        distortion = np.abs(pts[:, None] - pts[None, :])
    d = np.asarray(distortion, dtype=float)
    if d.shape != (n, n):
        raise ProblemError(f"distortion must be {n} x {n}", key="distortion")
    w = np.exp(-alpha * np.arange(n))
    k = (w / w.sum())[exponential_ranks(d)]
    return Mechanism(k, domain, domain, name=f"exponential-channel(α={alpha:g})", validate=False)


def exponential_row_entropy(n: int, alpha: float) -> float:
    r"""H(row) of the exponential channel in bits, from the two geometric series (eq. (71)–(82)):

    .. math::

        H = \log_2 Z + \frac{\alpha}{\ln 2} \frac{S_1}{Z}, \quad
        S_1 = \sum_{i=0}^{n-1} i e^{-\alpha i}
            = \frac{e^{-\alpha}\,(1 - n e^{-\alpha (n-1)} + (n-1) e^{-\alpha n})}{(1 - e^{-\alpha})^2}.
    """
    alpha = float(alpha)
    if alpha == 0:
        return float(np.log2(n))
    a = np.exp(-alpha)
    Z = (1 - a ** n) / (1 - a)
    S1 = a * (1 - n * a ** (n - 1) + (n - 1) * a ** n) / (1 - a) ** 2
    return float(np.log2(Z) + alpha * S1 / Z / LN2)


# ---------------------------------------------------------------------------------------------
# discretised Gaussian channel (Def. 16, Corollary 6)

def gaussian_channel(values, sigma: float, outputs: int = 201, width: float = 5.0) -> Mechanism:
    r"""The Gaussian privacy channel y = f(x) + N(0, σ²) of Wu, Xia and He 2017, Def. 16, discretised.

    Inputs are the real values r of the query's range; outputs are ``outputs`` equal cells
    covering [min r − width·σ, max r + width·σ], the two end cells extended to ±∞ so every row
    sums to 1 exactly:
    K[r, j] = Φ((b_{j+1} − r)/σ) − Φ((b_j − r)/σ). Quantising the output is post-processing,
    so the capacity of this matrix is at most that of the continuous channel, itself at most
    ½ log2(1 + (Δ/2)²/σ²) with Δ = max r − min r (the power-constrained Gaussian capacity with
    power (Δ/2)², Corollary 6 rebuilt; :func:`gaussian_capacity_bound`).
    """
    r = np.asarray(values.points[:, 0] if isinstance(values, Domain) else values, dtype=float)
    if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r)):
        raise ProblemError("values must be a non-empty list of finite numbers", key="values")
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma <= 0:
        raise ProblemError(f"sigma must be a positive number, got {sigma!r}", key="sigma")
    if int(outputs) < 2:
        raise ProblemError("outputs must be at least 2", key="outputs")
    lo, hi = r.min() - width * sigma, r.max() + width * sigma
    edges = np.linspace(lo, hi, int(outputs) + 1)
    cdf = ndtr((edges[None, :] - r[:, None]) / sigma)
    cdf[:, 0], cdf[:, -1] = 0.0, 1.0
    k = np.diff(cdf, axis=1)
    k = np.clip(k, 0.0, None)
    k /= k.sum(axis=1, keepdims=True)
    centres = 0.5 * (edges[:-1] + edges[1:])
    if isinstance(values, Domain):
        inputs = values
    else:
        labels = [f"{v:g}" for v in r]
        inputs = Domain.from_points(r, labels if len(set(labels)) == len(labels) else None)
    return Mechanism(k, inputs, Domain.from_points(centres), name=f"gaussian(σ={sigma:g})",
                     validate=False)


def gaussian_capacity_bound(spread: float, sigma: float) -> float:
    """½ log2(1 + (Δ/2)²/σ²): capacity bound of the Gaussian channel whose inputs lie in an
    interval of length Δ (centred, each input has power at most (Δ/2)²)."""
    return float(0.5 * np.log2(1.0 + (0.5 * spread / sigma) ** 2))


# ---------------------------------------------------------------------------------------------
# calibration by bisection on the certified capacity

@dataclass(frozen=True)
class Calibration:
    """A calibrated channel: its parameter, the mechanism and its certified capacity."""

    parameter: float
    mechanism: Mechanism
    capacity: CapacityResult
    target: float
    evaluations: int


def calibrate(build: Callable[[float], Mechanism], bits: float, lo: float, hi: float,
              increasing: bool, tol: float = 1e-6, measure=None, max_evals: int = 200) -> Calibration:
    """Find the parameter t in [lo, hi] whose channel has capacity as close to ``bits`` as
    ``tol`` allows while its certified upper bound stays <= ``bits``.

    The leakage must be monotone in t (``increasing`` says which way). Bisection keeps a
    parameter ``safe`` whose channel is certified (upper bound <= bits) and stops when the
    safe channel's certified lower bound is within ``tol`` of ``bits`` (or the interval has
    collapsed). ``measure(mechanism)`` returns an object with ``lower`` and ``upper`` (default:
    Shannon capacity to 1e-11 bits).
    """
    bits = check_epsilon(bits, "bits")
    measure = measure or (lambda mech: shannon_capacity(mech.matrix, tol=1e-11))
    evals = 0

    def at(t):
        nonlocal evals
        evals += 1
        mech = build(t)
        return mech, measure(mech)

    # the end of the interval that leaks least must be safe
    safe_t = lo if increasing else hi
    safe = at(safe_t)
    if safe[1].upper > bits:
        raise ProblemError(f"even the least leaking parameter ({safe_t:g}) leaks "
                           f"{safe[1].upper:.6g} > {bits:g} bits", key="bits")
    other_t = hi if increasing else lo
    other = at(other_t)
    if other[1].upper <= bits:
        return Calibration(other_t, other[0], other[1], bits, evals)
    a, b = safe_t, other_t
    while evals < max_evals and bits - safe[1].lower > tol:
        mid = 0.5 * (a + b)
        if mid in (a, b):
            break
        cur = at(mid)
        if cur[1].upper <= bits:
            a, safe, safe_t = mid, cur, mid
        else:
            b = mid
    return Calibration(safe_t, safe[0], safe[1], bits, evals)


def calibrate_binary_symmetric(bits: float, tol: float = 1e-6) -> Calibration:
    """Flip probability p in [0, 1/2] with capacity 1 − H(p) ≈ ``bits`` (Wu, Xia and He 2017, eq. (56)–(57))."""
    _at_most(bits, 1.0)
    return calibrate(binary_symmetric, bits, 0.0, 0.5, increasing=False, tol=tol)


def calibrate_krr(k: int | Domain, bits: float, tol: float = 1e-6) -> Calibration:
    """ε of k-ary RR with capacity log2 k − H(row) ≈ ``bits``."""
    n = len(Domain.coerce(k))
    _at_most(bits, np.log2(n))
    return calibrate(lambda e: krr(k, e), bits, 0.0, 50.0, increasing=True, tol=tol)


def calibrate_exponential(values: int | Domain, bits: float, distortion=None,
                          tol: float = 1e-6) -> Calibration:
    """α of the exponential channel with capacity ≈ ``bits`` (Wu, Xia and He 2017, eq. (83), solved
    numerically on the certified capacity rather than on the bound log2|R| − H(row))."""
    n = len(Domain.coerce(values))
    _at_most(bits, np.log2(n))
    return calibrate(lambda a: exponential_channel(values, a, distortion), bits, 0.0, 60.0,
                     increasing=True, tol=tol)


def calibrate_gaussian(values, bits: float, outputs: int = 201, width: float = 5.0,
                       tol: float = 1e-6) -> Calibration:
    """σ of the discretised Gaussian channel with capacity ≈ ``bits``. The search interval's
    noisy end is chosen from the continuous bound ½ log2(1 + (Δ/2)²/σ²) <= bits."""
    r = np.asarray(values.points[:, 0] if isinstance(values, Domain) else values, dtype=float)
    bits = check_epsilon(bits, "bits")
    spread = float(r.max() - r.min())
    if spread == 0 or bits == 0:
        sig = 1.0 if spread == 0 else 1e6 * spread
        mech = gaussian_channel(values, sig, outputs, width)
        return Calibration(sig, mech, shannon_capacity(mech.matrix, tol=1e-11), bits, 1)
    _at_most(bits, np.log2(len(r)))
    hi = 0.5 * spread / np.sqrt(max(2.0 ** (2 * bits) - 1.0, 1e-300)) * 1.01
    lo = hi * 1e-4
    return calibrate(lambda s: gaussian_channel(values, s, outputs, width), bits, lo, hi,
                     increasing=False, tol=tol)


def _at_most(bits, cap):
    bits = check_epsilon(bits, "bits")
    if bits > cap + 1e-12:
        raise ProblemError(f"{bits:g} bits exceeds the largest capacity of this family ({cap:.6g})",
                           key="bits")


# ---------------------------------------------------------------------------------------------
# k-ary RR at the same information leakage (baselines for problems without an LDP constraint)

def krr_at_capacity(k: int | Domain, bits: float) -> Mechanism:
    """k-ary RR whose certified Shannon capacity is <= ``bits`` and within 1e-7 of it."""
    n = len(Domain.coerce(k))
    if bits >= np.log2(n):
        return krr(k, 50.0)
    return calibrate_krr(k, bits, tol=1e-7).mechanism


def krr_at_mutual_information(k: int | Domain, prior, bits: float) -> Mechanism:
    """k-ary RR whose mutual information under ``prior`` is <= ``bits`` (bisection on ε)."""
    prior = np.asarray(prior, dtype=float)

    def measure(mech):
        v = mutual_information(prior, mech.matrix)
        return _Exact(v)

    top = mutual_information(prior, krr(k, 50.0).matrix)
    if bits >= top:
        return krr(k, 50.0)
    return calibrate(lambda e: krr(k, e), bits, 0.0, 50.0, increasing=True, tol=1e-9,
                     measure=measure).mechanism


def krr_at_min_entropy(k: int | Domain, bits: float) -> Mechanism:
    """k-ary RR with min-entropy capacity exactly ``bits``: log2(k e^ε/(k − 1 + e^ε)) = c gives
    e^ε = (k − 1) 2^c / (k − 2^c)."""
    n = len(Domain.coerce(k))
    c = 2.0 ** check_epsilon(bits, "bits")
    if c >= n:
        return krr(k, 50.0)
    return krr(k, float(np.log((n - 1) * c / (n - c))))


@dataclass(frozen=True)
class _Exact:
    value: float

    @property
    def lower(self):
        return self.value

    @property
    def upper(self):
        return self.value
