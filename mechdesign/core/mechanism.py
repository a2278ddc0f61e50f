"""Mechanisms: row-stochastic matrices over labelled domains."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mechdesign.core import preview
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError

STOCHASTIC_TOL = 1e-9


def sum_tolerance(n: int) -> float:
    """How far from 1 the sum of ``n`` probabilities may be: STOCHASTIC_TOL per entry, the one
    rule for every distribution mechdesign reads (problem files and Python alike)."""
    return STOCHASTIC_TOL * max(int(n), 1)


def check_distribution(vector: Any, n: int | None = None, what: str = "distribution") -> np.ndarray:
    """Validate a probability vector (non-negative, finite, sums to 1 within :func:`sum_tolerance`)."""
    try:
        v = np.asarray(vector, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"{what} must be a list of numbers")
    if v.ndim != 1:
        raise ProblemError(f"{what} must be a flat list of numbers, got shape {v.shape}")
    if n is not None and v.size != n:
        raise ProblemError(f"{what} must have {n} entries (one per value), got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ProblemError(f"{what} must contain finite numbers, got {v.tolist()}")
    if np.any(v < 0):
        raise ProblemError(f"{what} must be non-negative, got {v.tolist()}")
    if abs(v.sum() - 1.0) > sum_tolerance(v.size):
        raise ProblemError(f"{what} must sum to 1 (within {sum_tolerance(v.size):g}), sums to {v.sum():.12g}")
    return v


def check_stochastic(matrix: Any, shape: tuple[int, int] | None = None, what: str = "matrix") -> np.ndarray:
    """Validate a row-stochastic matrix."""
    try:
        k = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"{what} must be a matrix of numbers")
    if k.ndim != 2:
        raise ProblemError(f"{what} must be a 2-D matrix, got shape {k.shape}")
    if shape is not None and k.shape != tuple(shape):
        raise ProblemError(f"{what} must have shape {tuple(shape)}, got {k.shape}")
    if not np.all(np.isfinite(k)):
        raise ProblemError(f"{what} must contain finite numbers")
    if np.any(k < 0):
        raise ProblemError(f"{what} must be non-negative (min entry {k.min():.3g})")
    bad = np.abs(k.sum(axis=1) - 1.0) > STOCHASTIC_TOL
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise ProblemError(
            f"{what} must be row-stochastic: row {row} sums to {k[row].sum():.12g}, expected 1"
        )
    return k


class Mechanism:
    """A local randomizer K with K[x, y] = Pr[output y | input x].

    Parameters
    ----------
    matrix : array (|X|, |Y|)
        Row-stochastic transition matrix.
    inputs, outputs : Domain, int or sequence of labels, optional
        The input and output domains (default: 0..n-1; outputs default to the inputs when
        the matrix is square).
    claims : sequence of privacy notions, optional
        Privacy guarantees the mechanism is meant to give (checked by :func:`mechdesign.privacy.audit`).
    name : str, optional
    """

    def __init__(
        self,
        matrix: Any,
        inputs: Domain | int | Sequence | None = None,
        outputs: Domain | int | Sequence | None = None,
        *,
        claims: Sequence = (),
        name: str | None = None,
        validate: bool = True,
    ):
        k = check_stochastic(matrix) if validate else np.asarray(matrix, dtype=float)
        self.matrix = k
        self.inputs = Domain.coerce(k.shape[0] if inputs is None else inputs)
        if outputs is None:
            outputs = self.inputs if k.shape[1] == k.shape[0] else k.shape[1]
        self.outputs = Domain.coerce(outputs)
        if len(self.inputs) != k.shape[0] or len(self.outputs) != k.shape[1]:
            raise ProblemError(
                f"matrix shape {k.shape} does not match {len(self.inputs)} inputs "
                f"x {len(self.outputs)} outputs"
            )
        self.claims = tuple(claims)
        self.name = name

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape

    def lift(self, lam: Any) -> np.ndarray:
        """Output distribution λK of an input distribution λ (Kawamoto and Murakami’s (2019) A#(λ))."""
        lam = check_distribution(lam, len(self.inputs), "input distribution")
        return lam @ self.matrix

    def sample(self, x: Any, rng: np.random.Generator | int | None = None,
               size: int | None = None) -> str | list[str]:
        """Draw output label(s) for input label ``x``."""
        rng = np.random.default_rng(rng)
        row = self.matrix[self.inputs.index(x)]
        idx = rng.choice(len(row), p=row / row.sum(), size=size)
        if size is None:
            return self.outputs.labels[int(idx)]
        return [self.outputs.labels[int(i)] for i in idx]

    def then(self, post: "Mechanism | np.ndarray") -> "Mechanism":
        """Post-process the outputs: the mechanism x ↦ post(K(x)), matrix K @ P."""
        if isinstance(post, Mechanism):
            if len(post.inputs) != len(self.outputs):
                raise ProblemError(
                    f"post-processing expects {len(post.inputs)} inputs, mechanism has "
                    f"{len(self.outputs)} outputs"
                )
            return Mechanism(self.matrix @ post.matrix, self.inputs, post.outputs)
        p = check_stochastic(post, what="post-processing matrix")
        if p.shape[0] != len(self.outputs):
            raise ProblemError(
                f"post-processing matrix needs {len(self.outputs)} rows, got {p.shape[0]}"
            )
        return Mechanism(self.matrix @ p, self.inputs, p.shape[1])

    def to_dict(self) -> dict:
        return {
            "inputs": list(self.inputs.labels),
            "outputs": list(self.outputs.labels),
            "matrix": self.matrix.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Mechanism":
        for key in ("matrix",):
            if key not in data:
                raise ProblemError(f"a mechanism needs '{key}'", key=key)
        k = np.asarray(data["matrix"], dtype=float)
        return cls(k, data.get("inputs"), data.get("outputs"))

    def __repr__(self) -> str:
        outputs = None if self.outputs is self.inputs else f"[{preview.labels(self.outputs.labels)}]"
        return preview.call("Mechanism", [
            ("name", None if self.name is None else repr(self.name)),
            ("inputs", f"[{preview.labels(self.inputs.labels)}]"), ("outputs", outputs),
            ("matrix", preview.array(self.matrix))])
