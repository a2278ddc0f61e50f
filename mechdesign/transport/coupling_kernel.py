"""The mechanism of a coupling: K[x, y] = γ[x, y] / λ[x] (Kawamoto and Murakami, Local
Distribution Obfuscation via Probability Coupling, Allerton 2019, Def. 16).

Its output distribution λK is the coupling's second marginal μ, whatever λ; rows with λ[x] = 0
carry no mass in γ and are set to μ itself, which reveals nothing about such an input and keeps
λK = μ.
"""

from __future__ import annotations

import numpy as np

from mechdesign.core.errors import ProblemError


def dense(gamma) -> np.ndarray:
    """A coupling (dense array or sparse matrix) as a dense float array."""
    if hasattr(gamma, "toarray"):
        return np.asarray(gamma.toarray(), dtype=float)
    return np.asarray(gamma, dtype=float)


def mechanism_from_coupling(gamma, lam, mu) -> np.ndarray:
    """The coupling mechanism K[x, y] = γ[x, y] / λ[x] .

    Parameters
    ----------
    gamma : (|X|, |Y|) array or sparse matrix
        A coupling of ``lam`` and ``mu`` (row sums λ, column sums μ).
    lam : (|X|,) distribution the mechanism is built from (λ̂_s)
    mu : (|Y|,) target distribution

    Notes
    -----
    Rows with λ[x] = 0 are set to μ ; so are rows to which a
    numerically inexact coupling gives no mass.
    """
    lam = np.asarray(lam, dtype=float)
    mu = np.asarray(mu, dtype=float)
    if tuple(gamma.shape) != (lam.size, mu.size):
        raise ProblemError(f"coupling must be {lam.size} x {mu.size}, got {gamma.shape[0]} x {gamma.shape[1]}")
    k = np.array(dense(gamma), dtype=float)  # a private copy, worked on in place
    np.maximum(k, 0.0, out=k)
    mass = k.sum(axis=1)
    # rows are normalised by their own mass (= λ[x] up to round-off), so each sums to 1 exactly
    rows = (lam > 0) & (mass > 0)
    k /= np.where(rows, mass, 1.0)[:, None]
    k[~rows] = mu[None, :]
    return k
