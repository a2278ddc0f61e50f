"""Repeated reports: the exact (ε, δ) of T reports through the same matrix.

A user who reports T times (fresh randomness each time) through K reveals T independent outputs;
for an ordered pair of inputs (x, x') the privacy loss of the T outputs is the sum of the T
losses, whose law is the T-fold convolution of the pair's privacy loss distribution
(:mod:`mechdesign.accounting.privacy_loss`). The guarantee of the matrix is the worst pair:

    δ_T(ε) = max over x != x' of E[(1 − e^{ε − (L_1 + ... + L_T)})_+],
    ε_T(δ) = max over x != x' of the smallest ε with δ_xx',T(ε) <= δ.

This is the privacy-loss-distribution accountant of Koskela, Jälkö and Honkela ("Computing
Tight Differential Privacy Guarantees Using FFT", AISTATS 2020) and of Google's dp_accounting
library, applied to every pair of a designed matrix instead of a textbook mechanism.

**The convolution.** T-fold powers are built by repeated squaring, each product an FFT
convolution of the two grids (exact up to floating point: the arrays are padded to the full
support, nothing wraps around). After each product the grid is cut back to where the mass is:
the mass above the cut moves to +∞ and the mass below it moves up to the lowest point kept —
both only raise losses, so every cut keeps the result an upper bound (``tail``, the mass each
cut may move, only decides how wide the grids stay). Floating-point noise of the FFT (entries
of about 1e-16 of the largest) is clipped at zero, and any mass the clipping loses is put at +∞.

**The grid.** Losses start on a grid of step h (``step``, 1e-4 by default). A pair whose T-fold
law would spread over more than ``MAX_GRID`` points of it (about 24 standard deviations of the
sum) is moved to a grid a whole number of times coarser, each loss rounded up again — still
pessimistic; its reported ε is then within T·h' of the exact one, h' its coarser step.

**Never above basic composition.** A pure ε0-LDP matrix satisfies (T·ε0, 0) after T reports;
rounding losses up could overshoot it at tiny δ, so the reported ε is capped at T·ε0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import fft as sp_fft

from mechdesign.accounting.privacy_loss import LossDistribution, pair_losses
from mechdesign.accounting.reading import (
    MatrixLike,
    as_matrix,
    check_delta,
    check_times,
    local_level,
)

#: default grid step h of the losses (the ε of T reports is at most T·h above the exact one, h the
#: step a pair's law ends on: this or a multiple of it, :func:`grid_factor`)
DEFAULT_STEP = 1e-4
#: default mass each cut of the grid may move (to +∞ or up)
DEFAULT_TAIL = 1e-14
#: the most grid points the T-fold law of one pair is planned to need; a pair whose T-fold
#: law would spread wider (about 24 standard deviations of its sum) is put on a coarser grid
MAX_GRID = 1 << 20


def convolve(a: LossDistribution, b: LossDistribution, tail: float = DEFAULT_TAIL) -> LossDistribution:
    """The law of the sum of independent losses from ``a`` and ``b``, cut back (module docstring)."""
    size = len(a.pmf) + len(b.pmf) - 1
    n = sp_fft.next_fast_len(size, real=True)
    fa = sp_fft.rfft(a.pmf, n)
    fb = fa if b is a else sp_fft.rfft(b.pmf, n)  # squaring: one transform
    pmf = np.maximum(sp_fft.irfft(fa * fb, n)[:size], 0.0)
    finite = (1.0 - a.infinity) * (1.0 - b.infinity)
    infinity = 1.0 - finite
    infinity += max(0.0, finite - float(pmf.sum()))  # mass the clipping lost
    return _cut(LossDistribution(a.step, a.offset + b.offset, pmf, min(1.0, infinity)), tail)


def _cut(law: LossDistribution, tail: float) -> LossDistribution:
    """``law`` with at most ``tail`` moved from the top of the grid to +∞ and at most ``tail``
    from the bottom up to the lowest point kept."""
    pmf = law.pmf
    above = np.cumsum(pmf[::-1])[::-1]  # mass at or above each point
    below = np.cumsum(pmf)  # mass at or below each point
    hi = int(np.searchsorted(-above, -tail, side="right"))  # first point with mass above it <= tail
    hi = max(hi, 1)
    lo = int(np.searchsorted(below, tail, side="right"))  # points before lo hold at most tail
    lo = min(lo, hi - 1)
    moved_up = float(below[lo - 1]) if lo > 0 else 0.0
    cut_off = float(above[hi]) if hi < len(pmf) else 0.0
    kept = pmf[lo:hi].copy()
    kept[0] += moved_up
    return LossDistribution(law.step, law.offset + lo, kept, min(1.0, law.infinity + cut_off))


def self_compose(law: LossDistribution, times: int, tail: float = DEFAULT_TAIL) -> LossDistribution:
    """The ``times``-fold convolution of ``law`` by repeated squaring (module docstring)."""
    if times < 1:
        raise ValueError("times must be at least 1")
    result = None
    power = law
    t = int(times)
    while t:
        if t & 1:
            result = power if result is None else convolve(result, power, tail)
        t >>= 1
        if t:
            power = convolve(power, power, tail)
    return result


@dataclass
class Composition:
    """The privacy loss laws of T reports through a matrix, one per group of pairs of inputs
    (:func:`mechdesign.accounting.privacy_loss.pair_losses`), and the guarantees they give."""

    times: int
    laws: list[tuple[LossDistribution, int]]
    local_epsilon: float
    step: float

    def delta(self, epsilon: ArrayLike) -> np.ndarray | float:
        """δ_T(ε), the largest over pairs (an upper bound), at each ε given."""
        eps = np.asarray(epsilon, dtype=float)
        worst = np.max([np.atleast_1d(law.delta(eps)) for law, _ in self.laws], axis=0)
        if math.isfinite(self.local_epsilon):
            worst = np.where(eps >= self.times * self.local_epsilon, 0.0, worst)
        return float(worst[0]) if eps.ndim == 0 else worst

    def epsilon(self, delta: float) -> float:
        """ε_T(δ), the largest over pairs (an upper bound, at most T·ε0)."""
        eps = max(law.epsilon(delta) for law, _ in self.laws)
        return min(eps, self.times * self.local_epsilon)

    def curve(self, deltas: ArrayLike) -> np.ndarray:
        """ε_T at each δ given: the ε(δ) curve of the T reports."""
        return np.array([self.epsilon(float(d)) for d in np.atleast_1d(deltas)])


def compose_pairs(matrix: MatrixLike, times: int, *, step: float = DEFAULT_STEP, tail: float = DEFAULT_TAIL,
                max_groups: int = 16) -> Composition:
    """The :class:`Composition` of ``times`` reports through ``matrix`` (a row-stochastic matrix
    or a Mechanism): the laws of every pair after ``times`` reports, on a grid of ``step`` (or a
    multiple of it where the T-fold law would need more than ``MAX_GRID`` points:
    :func:`grid_factor`)."""
    k = as_matrix(matrix)
    times = check_times(times)
    if not step > 0:
        raise ValueError(f"step must be positive, got {step!r}")
    laws = pair_losses(k, step, max_groups) if k.shape[0] > 1 else [(LossDistribution(step, 0, np.ones(1)), 0)]
    composed = [(self_compose(law.coarsen(grid_factor(law, times)), times, tail), count) for law, count in laws]
    return Composition(times, composed, local_level(k), step)


def grid_factor(law: LossDistribution, times: int) -> int:
    """How many times coarser than its own the grid of ``law`` must be for its ``times``-fold
    law to fit in about ``MAX_GRID`` points: the sum spreads over about 24 standard deviations
    (its cuts keep the rest within ``tail``), and never wider than ``times`` one-report ranges."""
    reach = len(law.pmf) * law.step
    width = min(times * reach, 24.0 * law.spread * math.sqrt(times) + reach)
    return max(1, math.ceil(width / (MAX_GRID * law.step)))


def compose(matrix: MatrixLike, times: int, delta: float, *, step: float = DEFAULT_STEP) -> float:
    """The ε of ``times`` reports through ``matrix`` at ``delta``: an upper bound on the exact
    worst-pair ε, within times·h of it (h the grid step its laws end on; module docstring), and
    at most times·ε0."""
    return compose_pairs(matrix, times, step=step).epsilon(check_delta(delta))
