"""Utility objectives (minimised). Each answers: its cvxpy expression over the matrix
variables, its value on given matrices, the size of its coefficients and whether its data fit
the problem's domains."""

from __future__ import annotations

from typing import ClassVar, Mapping

import numpy as np

from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp


class Objective:
    kind: ClassVar[str] = "objective"
    linear: ClassVar[bool] = True

    def expression(self, K: Mapping[str, cp.Variable]) -> cp.Expression:
        raise NotImplementedError

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        raise NotImplementedError

    def magnitude(self) -> float:
        """The size of the objective's coefficients (max |coefficient|; 1 when it has none).

        Solvers' absolute tolerances (1e-9) assume coefficients of order one: a loss of 1e-9
        would otherwise be solved to no precision. The program minimises objective/magnitude,
        which has the same minimisers; value and bound are scaled back."""
        return 1.0

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        """Raise ProblemError unless the objective's data fit |X| = n_inputs, |Y| = n_outputs
        and the mechanism keys ``keys`` (default: nothing to check)."""


def _array(value, name: str, ndim: int, nonnegative: bool = False) -> np.ndarray:
    """A non-empty finite float array of ``ndim`` dimensions (a loss matrix, a vector of
    weights), non-negative when asked; ProblemError naming ``name`` otherwise."""
    what = "matrix" if ndim == 2 else "vector"
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"expected a {what} of numbers", key=name) from None
    if array.ndim != ndim or array.size == 0:
        raise ProblemError(f"expected a non-empty {what}, got shape {array.shape}", key=name)
    if not np.all(np.isfinite(array)):
        raise ProblemError("expected finite numbers (no NaN or infinity)", key=name)
    if nonnegative and np.any(array < 0):
        raise ProblemError("expected finite non-negative weights", key=name)
    return array


def _matrix(value, name: str) -> np.ndarray:
    return _array(value, name, 2)


def _weights(value, name: str) -> np.ndarray:
    return _array(value, name, 1, nonnegative=True)


def _check_shape(array: np.ndarray, shape: tuple, name: str, meaning: str) -> None:
    if array.shape != shape:
        raise ProblemError(f"expected shape {shape} ({meaning}), got {array.shape}", key=name)


def _check_keys(keys, allowed: list[str], name: str) -> None:
    unknown = [k for k in keys if k not in allowed]
    if unknown:
        raise ProblemError(f"unknown mechanism contexts {unknown}; expected among {allowed}", key=name)


class ExpectedLoss(Objective):
    """Σ_s Σ_x W_s[x] Σ_y K_s[x, y] L[x, y], where W_s = w_s λ_s (context weight times its
    distribution; a single mechanism has W = the prior)."""

    kind = "expected-loss"

    def __init__(self, loss: np.ndarray, row_weights: Mapping[str, np.ndarray]):
        self.loss = _matrix(loss, "objective.loss")
        if not isinstance(row_weights, Mapping) or not row_weights:
            raise ProblemError("expected a mapping from context name to row weights",
                               key="objective.row_weights")
        self.row_weights = {k: _weights(v, f"objective.row_weights[{k}]") for k, v in row_weights.items()}
        for k, w in self.row_weights.items():
            _check_shape(w, (self.loss.shape[0],), f"objective.row_weights[{k}]", "one weight per loss row")

    def magnitude(self) -> float:
        top = max(float(np.abs(self._coefficients(k)).max()) for k in self.row_weights)
        return top if top > 0 else 1.0

    def check(self, n_inputs, n_outputs, keys):
        _check_shape(self.loss, (n_inputs, n_outputs), "objective.loss", "|X| x |Y|")
        _check_keys(self.row_weights, keys, "objective.row_weights")

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
        self.loss = _matrix(loss, "objective.loss")
        self.keys = list(keys)
        if not self.keys:
            raise ProblemError("expected at least one mechanism context", key="objective.keys")

    def magnitude(self) -> float:
        top = float(np.abs(self.loss).max())
        return top if top > 0 else 1.0

    def check(self, n_inputs, n_outputs, keys):
        _check_shape(self.loss, (n_inputs, n_outputs), "objective.loss", "|X| x |Y|")
        _check_keys(self.keys, keys, "objective.keys")

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(cp.sum(cp.multiply(self.loss, K[k]), axis=1)) for k in self.keys]))

    def value(self, mechs):
        return float(max((self.loss * mechs[k]).sum(axis=1).max() for k in self.keys))


class MaxOffDiagonal(Objective):
    """max over contexts s and x != y of K_s[x, y] (Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019, eq. (6))."""

    kind = "max-off-diagonal"

    def __init__(self, off_diagonal: np.ndarray, keys: list[str]):
        self.mask = np.asarray(off_diagonal, dtype=bool)
        self.keys = list(keys)
        if self.mask.ndim != 2:
            raise ProblemError(f"expected a matrix mask, got shape {self.mask.shape}", key="objective.mask")
        if not self.keys:
            raise ProblemError("expected at least one mechanism context", key="objective.keys")
        if not self.mask.any():
            raise ProblemError("max-off-diagonal needs at least two outputs", key="objective.kind")
        self._rows, self._cols = np.nonzero(self.mask)

    def check(self, n_inputs, n_outputs, keys):
        _check_shape(self.mask, (n_inputs, n_outputs), "objective.mask", "|X| x |Y|")
        _check_keys(self.keys, keys, "objective.keys")

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(K[k][self._rows, self._cols]) for k in self.keys]))

    def value(self, mechs):
        return float(max(mechs[k][self.mask].max() for k in self.keys))


class ProfileMarginalError(Objective):
    """max_s max_j |λ_s − λ_s K_s|_j (Geumlek and Chaudhuri 2019, eq. (8)); outputs equal the inputs."""

    kind = "profile-marginal-error"

    def __init__(self, distributions: Mapping[str, np.ndarray]):
        if not isinstance(distributions, Mapping) or not distributions:
            raise ProblemError("expected a mapping from context name to distribution",
                               key="objective.distributions")
        self.distributions = {k: _weights(v, f"objective.distributions[{k}]") for k, v in distributions.items()}

    def check(self, n_inputs, n_outputs, keys):
        if n_inputs != n_outputs:
            raise ProblemError(f"needs the outputs to equal the inputs, got {n_inputs} inputs and "
                               f"{n_outputs} outputs", key="objective.kind")
        for k, lam in self.distributions.items():
            _check_shape(lam, (n_inputs,), f"objective.distributions[{k}]", "one probability per input")
        _check_keys(self.distributions, keys, "objective.distributions")

    def expression(self, K):
        return cp.max(cp.hstack([cp.max(cp.abs(lam - lam @ K[k])) for k, lam in self.distributions.items()]))

    def costs(self, mechs) -> np.ndarray:
        """Per output j: max_s |λ_s − λ_s K_s|_j (the four costs of Geumlek and Chaudhuri’s (2019) Figure 2)."""
        return np.max([np.abs(lam - lam @ mechs[k]) for k, lam in self.distributions.items()], axis=0)

    def value(self, mechs):
        return float(self.costs(mechs).max())


def hamming_loss(inputs: Domain, outputs: Domain) -> np.ndarray:
    return (np.asarray(inputs.labels)[:, None] != np.asarray(outputs.labels)[None, :]).astype(float)


def off_diagonal_mask(inputs: Domain, outputs: Domain) -> np.ndarray:
    return hamming_loss(inputs, outputs).astype(bool)
