"""What a problem knows that its objective and privacy notions may leave out.

An objective or a notion built from arrays and ε alone (``MetricPrivacy(1.0)``,
``ExpectedLoss("metric", prior=p)``) is completed when a problem is built: the problem hands its
:class:`Setting` (domains, ground metric, mechanism contexts) to each piece's ``bind``, which
returns the piece with the missing data filled in and checked against the problem's shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import sum_tolerance
from mechdesign.core.metrics import Metric

#: the mechanism key of a problem with one shared mechanism
DEFAULT = "default"


@dataclass(frozen=True, eq=False)
class Setting:
    """The problem's input and output domains, its ground metric over the inputs (None when it
    has none) and its mechanism contexts (name -> input distribution; None: one shared
    mechanism, keyed ``"default"``)."""

    inputs: Domain
    outputs: Domain
    metric: Metric | None = None
    contexts: Mapping[str, np.ndarray] | None = None

    @property
    def keys(self) -> list[str]:
        """The mechanism keys: the contexts' names, or the one shared mechanism's."""
        return list(self.contexts) if self.contexts else [DEFAULT]

    def need_metric(self, what: str, key: str, instead: str = "the notion a metric") -> Metric:
        """The ground metric, which ``what`` needs; ProblemError at ``key`` when there is none."""
        if self.metric is None:
            raise ProblemError(f"{what} needs a ground metric: give the problem a metric= or {instead}",
                               key=key)
        return self.metric

    def input_distances(self, what: str, key: str) -> np.ndarray:
        """The ground metric's distances between the inputs."""
        metric = self.need_metric(what, key)
        try:
            return metric.distances(self.inputs)
        except ProblemError as exc:
            raise exc.located(key=key)

    def need_contexts(self, what: str, key: str, instead: str) -> Mapping[str, np.ndarray]:
        """The mechanism contexts, which ``what`` needs; ProblemError at ``key`` without them."""
        if not self.contexts:
            raise ProblemError(f"{what} needs one mechanism per context: give the problem contexts= "
                               f"or {instead}", key=key)
        return self.contexts

    def uniform(self) -> np.ndarray:
        """The uniform distribution over the inputs."""
        return np.full(len(self.inputs), 1.0 / len(self.inputs))


def probabilities(value: Any, n: int, key: str, per: str = "input") -> np.ndarray:
    """A probability vector of ``n`` entries (one per ``per``): finite, non-negative, summing to
    1 within 1e-9·n; ProblemError naming ``key`` and what was expected otherwise."""
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"expected {n} probabilities (one per {per}), got {value!r}", key=key) from None
    if p.ndim != 1:
        raise ProblemError(f"expected {n} probabilities (one per {per}), got an array of shape {p.shape}",
                           key=key)
    if p.size != n:
        raise ProblemError(f"expected {n} probabilities (one per {per}), got {p.size}", key=key)
    if not np.all(np.isfinite(p)):
        raise ProblemError("expected finite probabilities (no NaN or infinity)", key=key)
    if np.any(p < 0):
        i = int(np.flatnonzero(p < 0)[0])
        raise ProblemError(f"expected non-negative probabilities, got {p[i]:g} at position {i}", key=key)
    if abs(p.sum() - 1.0) > sum_tolerance(n):
        raise ProblemError(f"expected probabilities summing to 1, they sum to {p.sum():.12g}", key=key)
    return p
