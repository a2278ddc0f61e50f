"""Privacy loss distributions of a matrix, discretised pessimistically.

For an ordered pair of inputs (x, x') the privacy loss of output y is L(y) = ln K[x, y]/K[x', y];
its distribution under y ~ K[x, ·] (the privacy loss distribution, PLD; Sommer, Meiser and
Mohammadi, "Privacy Loss Classes: The Central Limit Theorem in Differential Privacy", PoPETs
2019) gives every δ of the pair at once,

    δ_xx'(ε) = Σ_y (K[x, y] − e^ε K[x', y])_+ = E_L[(1 − e^{ε − L})_+],

with L = +∞ (an output x' never sends) contributing 1. T reports of the same input through K
have the T-fold convolution of the PLD as theirs (the losses of independent outputs add), which
:mod:`mechdesign.accounting.composition` computes.

**Pessimistic discretisation.** Losses are rounded *up* to the grid {i·h}. The integrand
(1 − e^{ε − L})_+ never decreases in L, so a loss distribution that is pointwise at least the
true one — coupled output by output, and through any sum of independent losses — gives a δ at
least the true δ, for every ε and every number of reports: the reported ε(δ) is an upper bound,
and at most T·h above the exact one after T reports (the sum moves by at most T·h).

**Grouping pairs.** k inputs have k(k − 1) ordered pairs; most designed matrices repeat a few
pair laws many times (in k-ary randomized response every pair has the same one). Pairs whose
discretised atoms (grid index, probability) coincide as multisets are computed once: compared
exactly (sorted) up to 2^24 pair-output entries, and beyond that — k = 1000 has 10^9 — by two
projections of the discretised law, Σ_y K[x, y] w(i_y) with pseudo-random weights w of the grid
index (equal laws project equally in any order of their atoms, up to the round-off of the sums;
two different laws agreeing in both to 11 digits is a chance of order 1e-22), which costs a few
passes over the entries instead of a sort. When more
than ``max_groups`` distinct laws remain, neighbouring ones (ordered by their mean loss) are
merged into one law whose survival function is the largest of theirs — a distribution that
stochastically dominates each member, so by the argument above it bounds every member's δ
after any number of reports; merging loosens the bound, never invalidates it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import signal

#: the grid index standing for a loss of +∞ (an output the second input never sends)
INFINITE = np.iinfo(np.int64).max
#: the grid index of the atoms of probability 0 (outputs the first input never sends)
ABSENT = np.iinfo(np.int64).min
#: entries (pairs x outputs) handled per block when grouping the pairs
PAIR_BLOCK_ENTRIES = 1 << 21
#: up to this many entries (pairs x outputs) the pairs are grouped by their sorted atoms; beyond,
#: by fingerprints of their discretised laws (module docstring)
EXACT_GROUPING_ENTRIES = 1 << 24
#: the irrational multipliers of the two fingerprints (golden ratio and √2 fractional parts)
FINGERPRINT_MULTIPLIERS = (0.6180339887498949, 0.4142135623730951)


@dataclass
class LossDistribution:
    """A privacy loss distribution on the grid: mass ``pmf[i]`` at loss (offset + i)·step and
    mass ``infinity`` at +∞."""

    step: float
    offset: int
    pmf: np.ndarray
    infinity: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(len(self.pmf))) * self.step

    @property
    def mean(self) -> float:
        """The mean finite loss (the Kullback–Leibler divergence of the pair, rounded up)."""
        return float(np.sum(self.pmf * self.losses))

    @property
    def spread(self) -> float:
        """The standard deviation of the finite loss."""
        finite = float(self.pmf.sum())
        if finite <= 0:
            return 0.0
        losses = self.losses
        mean = float(np.sum(self.pmf * losses)) / finite
        return math.sqrt(max(0.0, float(np.sum(self.pmf * (losses - mean) ** 2)) / finite))

    def coarsen(self, factor: int) -> LossDistribution:
        """The same law on a grid ``factor`` times coarser, each loss rounded up again (so still
        at least the true loss: the rounding stays pessimistic)."""
        if factor <= 1:
            return self
        index = self.offset + np.arange(len(self.pmf))
        coarse = -((-index) // factor)  # ceil(index / factor)
        low = int(coarse[0])
        return LossDistribution(self.step * factor, low, np.bincount(coarse - low, weights=self.pmf),
                                self.infinity)

    def _suffix(self) -> tuple[np.ndarray, np.ndarray]:
        """A_j = Σ_{i>=j} p_i and B_j = Σ_{i>=j} p_i e^{−(L_i − L_j)} (B by the recurrence
        B_j = p_j + e^{−h} B_{j+1}, which never forms e^{−L})."""
        a = np.cumsum(self.pmf[::-1])[::-1]
        b = signal.lfilter([1.0], [1.0, -math.exp(-self.step)], self.pmf[::-1])[::-1]
        return a, b

    def delta(self, epsilon: ArrayLike) -> np.ndarray | float:
        """δ(ε) = Σ_{L > ε} p_L (1 − e^{ε − L}) + mass at +∞, exact for this distribution."""
        eps = np.asarray(epsilon, dtype=float)
        a, b = self._suffix()
        a = np.append(a, 0.0)
        b = np.append(b, 0.0)
        losses = self.losses
        first = np.searchsorted(losses, eps, side="right")  # first loss strictly above ε
        ref = np.where(first < len(losses), losses[np.minimum(first, len(losses) - 1)], 0.0)
        out = a[first] - np.exp(np.minimum(eps - ref, 0.0)) * b[first] + self.infinity
        out = np.clip(out, 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def epsilon(self, delta: float) -> float:
        """The smallest ε >= 0 with δ(ε) <= ``delta`` (exact for this distribution; ∞ when the
        mass at +∞ alone exceeds ``delta``)."""
        if self.infinity > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        a, b = self._suffix()
        losses = self.losses
        # δ at the grid points: δ(L_j) = A_{j+1} − e^{−h} B_{j+1} + ∞-mass
        at_grid = np.append(a[1:] - math.exp(-self.step) * b[1:], 0.0) + self.infinity
        j = int(np.argmax(at_grid <= delta))  # first grid point meeting the target
        # on (L_{j−1}, L_j] the losses above ε are those from j on: δ(ε) = A_j − e^{ε − L_j} B_j
        eps = losses[j] + math.log((a[j] + self.infinity - delta) / b[j]) if b[j] > 0 else losses[j]
        return max(0.0, min(float(eps), float(losses[j])))


def pair_losses(matrix: ArrayLike, step: float, max_groups: int = 16) -> list[tuple[LossDistribution, int]]:
    """The discretised PLDs of every ordered pair of distinct rows of ``matrix``, grouped
    (module docstring): a list of (distribution, number of pairs it stands for)."""
    k = np.asarray(matrix, dtype=float)
    n, m = k.shape
    if n * n * m <= EXACT_GROUPING_ENTRIES:
        groups = _exact_groups(k, step)
    else:
        groups = _fingerprint_groups(k, step)
    laws = [(_distribution(*_atoms(k, x, x + 1, step, partner=y), step), count)
            for (x, y), count in groups.items()]
    return merge_dominating(laws, max_groups) if len(laws) > max_groups else laws


def _exact_groups(k: np.ndarray, step: float) -> dict[tuple[int, int], int]:
    """One representative pair (x, x') per multiset of discretised atoms, with its count."""
    n, m = k.shape
    found: dict[bytes, list] = {}
    rows_per_block = max(1, PAIR_BLOCK_ENTRIES // max(n * m, 1))
    for start in range(0, n, rows_per_block):
        stop = min(n, start + rows_per_block)
        idx, prob = _atoms(k, start, stop, step)
        keys = np.concatenate([idx, prob.view(np.int64)], axis=1)
        pairs = [(x, y) for x in range(start, stop) for y in range(n) if y != x]
        unique, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
        for key, i, count in zip(unique, first, counts):
            found.setdefault(key.tobytes(), [pairs[i], 0])[1] += int(count)
    return {pair: count for pair, count in found.values()}


def _fingerprint_groups(k: np.ndarray, step: float) -> dict[tuple[int, int], int]:
    """One representative pair per fingerprint: two projections of the discretised law,
    Σ_y K[x, y] w(i_y) with w(i) = frac(i φ) for two irrational φ (an infinite loss has its own
    weight), rounded to 1e-11 — equal for equal laws in any order of their atoms."""
    n, m = k.shape
    with np.errstate(divide="ignore"):
        logk = np.log(k)
    zeros = bool(np.any(k <= 0))
    found: dict[bytes, list] = {}
    rows_per_block = max(1, PAIR_BLOCK_ENTRIES // max(n * m, 1))
    for start in range(0, n, rows_per_block):
        stop = min(n, start + rows_per_block)
        with np.errstate(invalid="ignore"):
            index = np.ceil((logk[start:stop, None, :] - logk[None, :, :]) / step)
        keys = []
        for phi in FINGERPRINT_MULTIPLIERS:
            with np.errstate(invalid="ignore"):
                t = index * phi
                weight = t - np.floor(t)
            if zeros:  # +∞ losses weigh 0.75; outputs x never sends (probability 0) weigh nothing
                weight = np.where(np.isposinf(index), 0.75, np.where(np.isfinite(weight), weight, 0.0))
            fp = np.einsum("bnm,bm->bn", weight, k[start:stop])
            keys.append(np.round(fp * 1e11).astype(np.int64))
        rows, cols = np.nonzero(np.arange(start, stop)[:, None] != np.arange(n)[None, :])
        key = np.stack([keys[0][rows, cols], keys[1][rows, cols]], axis=1)
        unique, first, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
        for kk, i, count in zip(unique, first, counts):
            found.setdefault(kk.tobytes(), [(start + int(rows[i]), int(cols[i])), 0])[1] += int(count)
    return {pair: count for pair, count in found.values()}


def _atoms(k: np.ndarray, start: int, stop: int, step: float,
           partner: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For the pairs (x, x'), x in rows start..stop−1 and x' != x (or only x' = ``partner``):
    each pair's atoms (grid index of the loss rounded up, probability K[x, y]) sorted, one pair
    per row; atoms of probability 0 carry the index ``ABSENT`` and sort first."""
    top = k[start:stop, None, :]
    other = k[None, :, :] if partner is None else k[None, partner:partner + 1, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.log(top) - np.log(other)
        index = np.ceil(loss / step)
    present = np.broadcast_to(top > 0, index.shape)
    infinite = np.isposinf(loss) & present
    index = np.where(present & ~infinite, index, 0.0).astype(np.int64)
    index = np.where(infinite, INFINITE, np.where(present, index, ABSENT))
    prob = np.broadcast_to(np.where(top > 0, top, 0.0), index.shape)
    if partner is not None:
        index, prob = index[:, 0], np.ascontiguousarray(prob[:, 0])
    else:
        rows = np.arange(start, stop)[:, None]
        keep = rows != np.arange(k.shape[0])[None, :]  # pairs of distinct inputs only
        index, prob = index[keep], prob[keep]
    order = np.lexsort((prob, index), axis=-1)
    return np.take_along_axis(index, order, -1), np.take_along_axis(prob, order, -1)


def _distribution(index: np.ndarray, prob: np.ndarray, step: float) -> LossDistribution:
    """The discretised PLD of one pair from its atoms."""
    finite = (index != INFINITE) & (index != ABSENT) & (prob > 0)
    infinity = float(prob[(index == INFINITE) & (prob > 0)].sum())
    if not finite.any():
        return LossDistribution(step, 0, np.zeros(1), infinity)
    idx = index[finite]
    low = int(idx.min())
    pmf = np.bincount(idx - low, weights=prob[finite])
    return LossDistribution(step, low, pmf, infinity)


def merge_dominating(laws: list[tuple[LossDistribution, int]],
                     max_groups: int) -> list[tuple[LossDistribution, int]]:
    """At most ``max_groups`` laws, each the survival-function maximum of a run of neighbours in
    the order of their mean loss (module docstring)."""
    laws = sorted(laws, key=lambda item: (item[0].mean, item[0].infinity))
    runs = np.array_split(np.arange(len(laws)), max_groups)
    return [(_survival_max([laws[i][0] for i in run]), sum(laws[i][1] for i in run))
            for run in runs if len(run)]


def _survival_max(members: list[LossDistribution]) -> LossDistribution:
    """The distribution whose survival function Pr[L >= ℓ] is the largest of the members' at
    every ℓ (mass at +∞ included): it stochastically dominates each of them."""
    step = members[0].step
    low = min(m.offset for m in members)
    high = max(m.offset + len(m.pmf) for m in members)
    survival = np.zeros(high - low + 1)  # survival[i]: mass at or above index low + i (∞ last)
    infinity = max(m.infinity for m in members)
    for m in members:
        dense = np.zeros(high - low + 1)
        dense[m.offset - low:m.offset - low + len(m.pmf)] = m.pmf
        dense[-1] = m.infinity
        survival = np.maximum(survival, np.cumsum(dense[::-1])[::-1])
    pmf = survival[:-1] - survival[1:]
    top = min(1.0, float(survival[0]))
    pmf[0] += max(0.0, 1.0 - top)  # mass the maximum leaves below the range sits at its bottom
    return LossDistribution(step, low, np.maximum(pmf, 0.0), infinity)
