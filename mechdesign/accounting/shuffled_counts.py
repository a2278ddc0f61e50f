"""The count model every shuffle bound here reduces to, and its hockey-stick divergence.

n users each apply a local randomizer once and a shuffler hides who sent what. Both analyses of
this room (:mod:`~mechdesign.accounting.clones`, :mod:`~mechdesign.accounting.variation_ratio`)
split every user's output distribution into shared components and leave the adversary, at best,
the *counts* of messages drawn from three of them, D0, D1 and Q:

* the user whose input changes (user 1) draws from D0, D1, Q with probabilities (u0, u1, uq)
  under the first input and (u1, u0, uq) under the second (u0 >= u1);
* each of the other n − 1 users draws from D0 and from D1 with probability r each, from Q with
  probability s, and otherwise from a component of its own that does not depend on user 1.

Given the labels the view is a post-processing of (a, b, m), the counts of D0, D1 and Q draws:
the users outside the three components form a uniformly random subset of users 2..n of known
size, the same under both inputs. So the shuffled outputs are (ε, δ)-indistinguishable with
δ(ε) = Σ_{a,b,m} (P0(a, b, m) − e^ε P1(a, b, m))_+ for the laws P0, P1 of the counts, which this
module computes. Writing N for the number of other users drawing from D0, D1 or Q
(N ~ Bin(n − 1, 2r + s)), θ = 2r / (2r + s), c = a + b and m = N + 1 − c, the multinomial
identities Bin(a−1; c−1, ½) = (2a/c) Bin(a; c, ½) and Bin(c; N, θ) = (2rm / (sc)) Bin(c−1; N, θ)
give

    P_h(a, c | N) = Bin(c−1; N, θ) · (2/c) · Bin(a; c, ½) · [π_h(D0) a + π_h(D1)(c − a) + uq m r/s],

so, with u = u0 − e^ε u1, v = e^ε u0 − u1 and κ = (e^ε − 1) uq r / s,

    δ(ε) = Σ_N Pr[N] Σ_c Bin(c−1; N, θ) H(c, N + 1 − c),
    H(c, m) = (2/c) Σ_a Bin(a; c, ½) [(u + v) a − v c − κ m]_+
            = (u + v) S(c−1, a*−1) − (2/c)(v c + κ m) S(c, a*),

where S(c, t) = Pr[Bin(c, ½) >= t] (a regularized incomplete beta function) and a* the first a
with a positive bracket. With s = 0 (no Q component) N = c − 1 and the inner sum is the single
term H(N + 1, 0): the clone reduction of Feldman, McMillan and Talwar.

Everything reported is an upper bound on this δ:

* **monotone binning of N.** The inner sum D(N) does not increase with N: one more draw from
  the three components (D0, D1, Q with probabilities θ/2, θ/2, 1 − θ, whatever the input) is
  added by post-processing. So N is cut into bins and each bin evaluated at its left end;
* **truncated windows.** The lower tail of N (probability below ``tail``/4) counts in full, and
  the cells of a bin's c-sum left out (probability of C' = c − 1 outside the window below
  ``tail``/4) count with the mass P0 puts on them, which bounds their terms;
* **round-off.** H is a difference of two terms; a relative slack of 1e-9 of the larger one is
  added (the incomplete beta function is accurate to about 1e-14, the difference loses at most
  four digits at the sizes used here, and the tails carried along a bin by Pascal's rule —
  :func:`tails_along` — drift by about 1e-11 between exact evaluations).

The divergence is symmetric under swapping the two inputs (it swaps a and b), so one direction
is enough.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import special, stats

#: relative slack added to each H for the round-off of its two-term difference and of the tails
ROUNDOFF_SLACK = 1e-9
#: cells between exact incomplete-beta evaluations along a run (:func:`tails_along`)
TAIL_ANCHOR = 256
LOG2 = math.log(2.0)


def binomial_pmf(n: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Pr[Bin(n, ½) = j], elementwise (0 outside 0 <= j <= n)."""
    n = np.asarray(n, dtype=float)
    j = np.asarray(j, dtype=float)
    inside = (j >= 0) & (j <= n)
    jj = np.where(inside, j, 0.0)
    return np.where(inside, np.exp(_log_pmf(n, jj)), 0.0)


def tails_along(n: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S(n_i, t_i), Pr[Bin(n_i, ½) = t_i]) along a run where n rises by one and t by 0 or 1 from
    each cell to the next.

    Exact (incomplete beta and log-gamma) every ``TAIL_ANCHOR`` cells; in between by Pascal's
    rule, S(n + 1, t) = S(n, t) + ½ Pr[Bin(n, ½) = t − 1] and
    S(n + 1, t + 1) = S(n, t) − ½ Pr[Bin(n, ½) = t], with the probabilities themselves carried
    along by their ratios (n + 1)/(n + 1 − t)/2 and (n + 1)/(t + 1)/2: a logarithm per cell
    instead of an incomplete beta function. A run that leaves these rules (t outside [0, n], a
    step other than 0 or 1) is evaluated exactly throughout."""
    size = len(n)
    rise = np.diff(t)
    if size < 2 or np.any((rise != 0) & (rise != 1)) or np.any(np.diff(n) != 1) \
            or np.any(t < 0) or np.any(t > n):
        return binomial_tail(n, t), binomial_pmf(n, t)
    with np.errstate(divide="ignore"):  # each branch is used only where it is finite
        log_ratio = np.where(rise > 0, np.log(n[1:] / np.maximum(t[1:], 1.0)),
                             np.log(n[1:] / (n[1:] - t[1:]))) - LOG2
    log_pmf = _blockwise(log_ratio, _log_pmf(n[::TAIL_ANCHOR], t[::TAIL_ANCHOR]), size)
    pmf = np.exp(log_pmf)
    below = pmf[:-1] * t[:-1] / (n[:-1] - t[:-1] + 1.0)  # Pr[Bin(n, ½) = t − 1]
    step = np.where(rise > 0, -0.5 * pmf[:-1], 0.5 * below)
    tail = _blockwise(step, binomial_tail(n[::TAIL_ANCHOR], t[::TAIL_ANCHOR]), size)
    return np.clip(tail, 0.0, 1.0), pmf


def _blockwise(steps: np.ndarray, anchors: np.ndarray, size: int) -> np.ndarray:
    """x_i with x = ``anchors`` at every ``TAIL_ANCHOR``-th cell and x_{i+1} = x_i + steps_i
    in between (the cumulative sums restart at each anchor, so round-off does not build up)."""
    blocks = len(anchors)
    padded = np.zeros(blocks * TAIL_ANCHOR)
    padded[1:size] = steps
    padded = padded.reshape(blocks, TAIL_ANCHOR)
    padded[:, 0] = anchors
    return np.cumsum(padded, axis=1).ravel()[:size]


def _log_pmf(n: np.ndarray, j: np.ndarray) -> np.ndarray:
    return special.gammaln(n + 1) - special.gammaln(j + 1) - special.gammaln(n - j + 1) - n * LOG2


def binomial_tail(n: np.ndarray, t: np.ndarray) -> np.ndarray:
    """S(n, t) = Pr[Bin(n, ½) >= t], elementwise: 1 for t <= 0, 0 for t > n, else the
    regularized incomplete beta function I_½(t, n − t + 1)."""
    n = np.asarray(n, dtype=float)
    t = np.asarray(t, dtype=float)
    inside = (t >= 1) & (t <= n)
    a = np.where(inside, t, 1.0)
    b = np.where(inside, n - t + 1, 1.0)
    return np.where(t <= 0, 1.0, np.where(inside, special.betainc(a, b, 0.5), 0.0))


@dataclass(frozen=True)
class CountModel:
    """The count model of the module docstring.

    ``users`` is n (user 1 included); ``first`` = (u0, u1, uq) are user 1's component
    probabilities under the first input; ``clone`` is r, the probability that another user draws
    from D0 (and, equally, from D1); ``blanket`` is s, its probability of drawing from Q.
    ``tail`` is the probability left out of the truncated windows (counted in full), and
    ``bins`` the number of bins of N when s > 0 (the inner sum over c costs a window each).
    """

    users: int
    first: tuple[float, float, float]
    clone: float
    blanket: float
    tail: float = 1e-13
    bins: int = 24

    def __post_init__(self):
        u0, u1, uq = self.first
        if self.users < 1 or min(u0, u1, uq, self.clone, self.blanket) < 0:
            raise ValueError(f"invalid count model {self}")
        if u0 < u1:
            object.__setattr__(self, "first", (u1, u0, uq))
        if 2 * self.clone + self.blanket > 1 + 1e-12:
            raise ValueError(f"2r + s = {2 * self.clone + self.blanket} exceeds 1")

    @property
    def trivial(self) -> bool:
        """True when user 1's two component laws coincide (δ = 0 for every ε >= 0)."""
        return self.first[0] - self.first[1] <= 0

    def delta(self, epsilon: float) -> float:
        """An upper bound on δ(ε) of the shuffled outputs (module docstring), at most 1."""
        if self.trivial:
            return 0.0
        u0, u1, uq = self.first
        e = math.exp(epsilon)
        u, v = u0 - e * u1, e * u0 - u1
        if self.cells is None:  # no other user ever helps: user 1's own divergence
            return min(1.0, max(u, 0.0))
        runs, spill = self.cells
        if u <= 0:  # the bracket (u + v) a − v c − κ m <= u c is never positive
            return min(1.0, spill)
        kappa = (e - 1.0) * uq * self.clone / self.blanket if self.blanket > 0 else 0.0
        total = spill
        for c, m, weight in runs:
            threshold = v * c + kappa * m
            first = np.floor(threshold / (u + v)) + 1.0
            if self.blanket > 0:
                upper, pmf = tails_along(c - 1, first - 1)
            else:
                upper, pmf = binomial_tail(c - 1, first - 1), binomial_pmf(c - 1, first - 1)
            lower = np.maximum(upper - 0.5 * pmf, 0.0)  # S(c, a*) = S(c−1, a*−1) − ½ Pr[Bin(c−1, ½) = a*−1]
            h = (u + v) * upper - (2.0 / c) * threshold * lower
            h = np.maximum(h, 0.0) + ROUNDOFF_SLACK * (u + v) * upper
            total += float(np.sum(weight * h))
        return float(min(1.0, total))

    # -- the ε-independent part: which cells, with which weights ----------------------------------

    @cached_property
    def cells(self) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], float] | None:
        """(runs, spill): runs of cells (c, m, weight) evaluated — one run per bin of N, c rising by
        one along it, or a single run of one cell per bin when s = 0 — and the probability left
        out (counted in full); None when no other user draws from the components."""
        others = self.users - 1
        rate = 2 * self.clone + self.blanket
        if others == 0 or rate <= 0:
            return None
        rate = min(rate, 1.0)
        quarter = self.tail / 4
        edges, weights, spill = _bins(others, rate, quarter, self.bins if self.blanket > 0 else 2048)
        if self.blanket <= 0:  # N = c − 1 and m = 0: one cell per bin
            return [(edges + 1.0, np.zeros_like(edges), weights)], spill
        theta = min(1.0, 2 * self.clone / rate)
        runs = []
        for nu, w in zip(edges, weights):
            c, pmf, left_out = _window(int(nu), theta, quarter)
            runs.append((c, nu + 1.0 - c, w * pmf))
            spill += w * left_out
        return runs, spill


def _bins(n: int, rate: float, quarter: float, count: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Left ends and probabilities of the bins of N ~ Bin(n, rate) over its central window (the
    last bin runs to n), and the probability below the window."""
    law = stats.binom(n, rate)
    low = int(law.ppf(quarter))  # Pr[N < low] < quarter
    high = int(law.isf(quarter)) + 1
    edges = np.unique(np.round(np.linspace(low, max(high, low + 1), count + 1)).astype(np.int64))
    bounds = np.append(edges, n + 1)
    cdf = law.cdf(bounds - 1)
    weights = np.diff(cdf)
    return edges.astype(float), weights, float(cdf[0])


def _window(nu: int, theta: float, quarter: float) -> tuple[np.ndarray, np.ndarray, float]:
    """For N = nu: the cells c = C' + 1 of the inner sum with C' ~ Bin(nu, θ) in its central
    window, their probabilities Bin(c−1; nu, θ), and the bound on the cells left out:
    Pr[C' <= c_lo − 1] + Pr[C' >= c_hi] (each left-out cell's terms are at most P0's mass on
    it, which these two probabilities bound)."""
    law = stats.binom(nu, theta)
    lo = max(1, int(law.ppf(quarter)))
    hi = min(nu + 1, int(law.isf(quarter)) + 1)
    c = np.arange(lo, hi + 1, dtype=float)
    below = float(law.cdf(lo - 1)) if lo > 1 else 0.0  # the cell c = 0 is the same under both
    left_out = below + float(law.sf(hi - 1))
    return c, law.pmf(c - 1), left_out
