"""Mechanisms for ε·d-privacy on a metric domain: the truncated geometric mechanism on a line
and the exponential mechanism with score −d.

Exact audited levels (tests/test_baselines.py checks each against the auditor):

* truncated geometric: ε·d for d = |x − x'| exactly (as LDP: ε·(max − min));
* exponential with factor ε/2: at most ε·d; not tight — with the discrete metric it is k-ary
  randomized response at ε/2, and on the line 0..n−1 its level is
  ε/2 + ln((1 + r − r² − r^{n−1}) / (1 − r^n)), r = e^{−ε/2}.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism
from mechdesign.core.metrics import Metric
from mechdesign.privacy.base import check_epsilon
from mechdesign.privacy.metric import MetricPrivacy, exponential_weights

__all__ = ["exponential", "geometric", "line_spacing"]


def line_spacing(domain: Domain) -> tuple[np.ndarray, float]:
    """Order and common gap of a domain of equally spaced numbers (an ordered domain): the
    indices sorting its values and the gap h between neighbours. Raises
    :class:`~mechdesign.core.errors.ProblemError` when the domain is not such a line, so it
    also tells whether the truncated geometric mechanism applies."""
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
    """Truncated geometric mechanism on an ordered domain (Ghosh, Roughgarden and Sundararajan,
    "Universally Utility-Maximizing Privacy Mechanisms", STOC 2009).

    On values x_0 < ... < x_{n−1} with gap h and α = e^{−εh}, with i, j the ranks of x and y:

        K[i, j] = (1 − α)/(1 + α) · α^{|i − j|}     for 0 < j < n − 1,
        K[i, 0] = α^i / (1 + α),    K[i, n − 1] = α^{n−1−i} / (1 + α)

    (two-sided geometric noise, with the mass beyond the ends moved to the ends). Neighbouring
    rows differ by exactly the factor e^{εh} in every column, so it is exactly ε·d-private for
    d = |x − x'| (and exactly ε·(x_{n−1} − x_0)-LDP). Also called the extended geometric
    mechanism.

    Parameters
    ----------
    n : int or Domain
        A size (values 0..n−1) or a domain of equally spaced numbers.
    epsilon : float
        ε per unit of distance.
    """
    domain = Domain.coerce(n)
    eps = check_epsilon(epsilon)
    order, h = line_spacing(domain)
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
    k = exponential_weights(metric.distances(domain), eps)
    return Mechanism(k, domain, domain, claims=[MetricPrivacy(eps, metric, domain)],
                     name=f"exponential(ε={eps:g}, d={metric.kind})", validate=False)
