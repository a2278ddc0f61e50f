"""Utility objectives (minimised). Each answers: its cvxpy expression over the matrix
variables, and its value on given matrices (DESIGN §3)."""

from __future__ import annotations

from typing import ClassVar, Mapping

import cvxpy as cp
import numpy as np

from .domain import Domain
from .errors import ProblemError


class Objective:
    kind: ClassVar[str] = "objective"
    linear: ClassVar[bool] = True

    def expression(self, K: Mapping[str, cp.Variable]) -> cp.Expression:
        raise NotImplementedError

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        raise NotImplementedError


class ExpectedLoss(Objective):
    """Σ_s Σ_x W_s[x] Σ_y K_s[x, y] L[x, y], where W_s = w_s λ_s (context weight times its
    distribution; a single mechanism has W = the prior)."""

    kind = "expected-loss"

    def __init__(self, loss: np.ndarray, row_weights: Mapping[str, np.ndarray]):
        self.loss = np.asarray(loss, dtype=float)
        self.row_weights = {k: np.asarray(v, dtype=float) for k, v in row_weights.items()}

    def _coefficients(self, key):
        return self.row_weights[key][:, None] * self.loss

    def cost(self, key: str) -> np.ndarray:
        """The linear cost C with objective Σ C·K for one context (zero if it carries no weight)."""
        if key not in self.row_weights:
            return np.zeros_like(self.loss)
        return self._coefficients(key)

    def expression(self, K):
        return sum(cp.sum(cp.multiply(self._coefficients(k), K[k])) for k in self.row_weights)

    def value(self, mechs):
        return float(sum((self._coefficients(k) * mechs[k]).sum() for k in self.row_weights))


class ErrorProbability(ExpectedLoss):
    """1 − Σ_x π_x K[x, x]: the expected Hamming loss (outputs must include the inputs)."""

    kind = "error-probability"


class WorstCaseLoss(Objective):
    """max_s max_x Σ_y K_s[x, y] L[x, y]."""

    kind = "worst-case-loss"

    def __init__(self, loss: np.ndarray, keys: list[str]):
        self.loss = np.asarray(loss, dtype=float)
        self.keys = list(keys)

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(cp.sum(cp.multiply(self.loss, K[k]), axis=1)) for k in self.keys]))

    def value(self, mechs):
        return float(max((self.loss * mechs[k]).sum(axis=1).max() for k in self.keys))


class MaxOffDiagonal(Objective):
    """max over contexts s and x != y of K_s[x, y] (paper 004, eq. (6))."""

    kind = "max-off-diagonal"

    def __init__(self, off_diagonal: np.ndarray, keys: list[str]):
        self.mask = np.asarray(off_diagonal, dtype=bool)
        self.keys = list(keys)
        if not self.mask.any():
            raise ProblemError("max-off-diagonal needs at least two outputs", key="objective.kind")
        self._rows, self._cols = np.nonzero(self.mask)

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(K[k][self._rows, self._cols]) for k in self.keys]))

    def value(self, mechs):
        return float(max(mechs[k][self.mask].max() for k in self.keys))


class ProfileMarginalError(Objective):
    """max_s max_j |λ_s − λ_s K_s|_j (paper 004, eq. (8)); outputs equal the inputs."""

    kind = "profile-marginal-error"

    def __init__(self, distributions: Mapping[str, np.ndarray]):
        self.distributions = {k: np.asarray(v, dtype=float) for k, v in distributions.items()}

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(cp.abs(lam - lam @ K[k])) for k, lam in self.distributions.items()]))

    def costs(self, mechs) -> np.ndarray:
        """Per output j: max_s |λ_s − λ_s K_s|_j (the four costs of paper 004's Figure 2)."""
        return np.max([np.abs(lam - lam @ mechs[k]) for k, lam in self.distributions.items()], axis=0)

    def value(self, mechs):
        return float(self.costs(mechs).max())


def hamming_loss(inputs: Domain, outputs: Domain) -> np.ndarray:
    return (np.asarray(inputs.labels)[:, None] != np.asarray(outputs.labels)[None, :]).astype(float)


def off_diagonal_mask(inputs: Domain, outputs: Domain) -> np.ndarray:
    return hamming_loss(inputs, outputs).astype(bool)
