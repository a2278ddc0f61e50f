"""Information-theoretic utilities, maximised under ε-LDP: the mutual information between the
input and the output, and an f-divergence between the output distributions of two hypotheses
(Kairouz, Oh and Viswanath, “Extremal Mechanisms for Local Differential Privacy”, NeurIPS 2014;
JMLR 17, 2016).

Both are sublinear in the mechanism: U(K) = Σ_y μ(K[:, y]) with μ positively homogeneous
(μ(γ q) = γ μ(q) for γ >= 0) and subadditive (μ(q + q') <= μ(q) + μ(q')), i.e. convex. For
mutual information under a prior π,

    μ(q) = Σ_x π_x q_x log(q_x / π·q),

and for an f-divergence between the output laws P0 K and P1 K of two hypotheses,

    μ(q) = (P1·q) f(P0·q / P1·q),

the perspective of the generator f (the registry's generators, :mod:`mechdesign.core.divergences`,
normalised so that f(1) = 0; the normalisation changes μ by a multiple of (P0 − P1)·q, which
sums to zero over the columns of a row-stochastic K).

Maximising a convex function is no convex program, so the general route refuses these
objectives; the staircase solver (:mod:`mechdesign.solvers.staircase`) solves them exactly
(Kairouz, Oh and Viswanath's staircase theorem). It needs μ on the staircase patterns
s = 1 + (e^ε − 1)·1_T (T ⊆ X, the inputs at e^ε), where μ depends on T only through the sums
Σ_{x∈T} F[:, x] of a few per-input features F (:attr:`SublinearUtility.features`): the prior
alone for mutual information, the two hypotheses for the divergences.
:meth:`SublinearUtility.pattern_utility` gives μ(s) from those sums.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import numpy as np

from mechdesign.core import preview
from mechdesign.core.divergences import DIVERGENCES, F_DIVERGENCES
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.objectives import Objective
from mechdesign.core.setting import DEFAULT, Setting, probabilities

#: what the general route says when it is handed a maximised information utility
NOT_CONVEX = ("is maximised, and maximising a convex function is not a convex program: only the "
              "staircase solver takes it (one ε-LDP notion with δ = 0, ε <= 20, one shared "
              "mechanism, at least as many outputs as inputs, solver \"auto\")")


class SublinearUtility(Objective):
    """A maximised utility Σ_y μ(K[:, y]) with μ sublinear, over one shared mechanism (see the
    module docstring). Subclasses give :attr:`features` and :meth:`pattern_utility`."""

    sense = "maximize"
    linear = False
    #: whether μ on patterns is a convex function of the feature sums (then the pricing of the
    #: staircase solver can enumerate the vertices of a zonotope instead of the subsets)
    convex_in_sums: ClassVar[bool] = False

    @property
    def features(self) -> np.ndarray:
        """The (d, |X|) per-input features whose sums over T fix μ on the pattern of T."""
        raise NotImplementedError

    def pattern_utility(self, sums: np.ndarray, epsilon: float) -> np.ndarray:
        """μ(1 + (e^ε − 1)·1_T) for each column of ``sums`` (d, N), the feature sums over T."""
        raise NotImplementedError

    def expression(self, K: Mapping[str, Any], scale: float = 1.0) -> cp.Expression:
        raise ProblemError(f"the {self.kind} objective {NOT_CONVEX}", key="objective.kind")

    def single(self, setting: Setting) -> None:
        """ProblemError unless the problem has one shared mechanism."""
        if setting.contexts is not None:
            raise ProblemError(f"the {self.kind} objective needs one shared mechanism, not one per "
                               "context: remove the contexts", key="objective.kind")

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        if keys != [DEFAULT]:
            raise ProblemError(f"the {self.kind} objective needs one shared mechanism", key="objective.kind")
        features = self.features
        if features.shape[1] != n_inputs:
            raise ProblemError(f"expected {n_inputs} weights (one per input), got {features.shape[1]}",
                               key="objective")


def entropy_terms(weights: np.ndarray, probabilities_: np.ndarray) -> np.ndarray:
    """Σ w log2(p) along the last axis with 0 log 0 = 0 (weights zero wherever p is)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(probabilities_ > 0, np.log2(np.where(probabilities_ > 0, probabilities_, 1.0)), 0.0)
    return (weights * logs).sum(axis=-1)


class MutualInformationUtility(SublinearUtility):
    """I(X; Y) in bits, X drawn from ``prior`` and Y from the mechanism's row of X; maximised.

    On the pattern of T with t = π(T) and m = 1 + (e^ε − 1) t, μ = (e^ε ε t − m ln m) / ln 2:
    a concave function of t alone, zero at t = 0 and t = 1.

    Parameters
    ----------
    prior : array (|X|,), optional
        The distribution of the inputs (default: uniform).

    Examples
    --------
    >>> MutualInformationUtility(prior=[0.5, 0.5]).value({"default": np.eye(2)})
    1.0
    """

    kind = "mutual-information"

    def __init__(self, prior: Any = None):
        self.prior = None if prior is None else np.asarray(prior, dtype=float)

    def bind(self, setting: Setting) -> MutualInformationUtility:
        """The uniform prior by default; the prior must be a distribution over the inputs."""
        self.single(setting)
        n = len(setting.inputs)
        prior = setting.uniform() if self.prior is None else probabilities(self.prior, n, "objective.prior")
        return self if prior is self.prior else MutualInformationUtility(prior)

    @property
    def features(self) -> np.ndarray:
        return self._prior()[None, :]

    def _prior(self) -> np.ndarray:
        if self.prior is None:
            raise ProblemError(f"{self!r} leaves its prior to the problem: use it in a Problem",
                               key="objective.prior")
        return self.prior

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        K = np.asarray(mechs[DEFAULT], dtype=float)
        prior = self._prior()
        output = prior @ K
        joint = prior[:, None] * K
        return float(entropy_terms(joint.ravel(), K.ravel()) - entropy_terms(output, output))

    def pattern_utility(self, sums: np.ndarray, epsilon: float) -> np.ndarray:
        t = np.asarray(sums, dtype=float)[0]
        growth = math.expm1(epsilon)
        m = 1.0 + growth * t
        return ((growth + 1.0) * epsilon * t - m * np.log1p(growth * t)) / math.log(2.0)

    def __repr__(self) -> str:
        text = None if self.prior is None else preview.array(self.prior)
        return preview.call(type(self).__name__, [("prior", text)])


class HypothesisTesting(SublinearUtility):
    """D_f(P0 K ‖ P1 K): an f-divergence between the output laws of two hypotheses P0 and P1
    on the inputs; maximised (the larger, the better a test on the privatised output can tell
    them apart). KL is in nats, as the registry's (:mod:`mechdesign.core.divergences`).

    On the pattern of T with a = P0(T), b = P1(T), A = 1 + (e^ε − 1) a and B = 1 + (e^ε − 1) b,
    μ = B f(A / B): the perspective of f composed with an affine map, so convex in (a, b).

    Parameters
    ----------
    divergence : str
        An f-divergence of the registry: ``"kl"``, ``"tv"``, ``"hellinger"`` (squared Hellinger),
        ``"chi2"`` or ``"reverse-kl"``.
    between : pair of arrays (|X|,)
        The two hypotheses (P0, P1), distributions over the inputs.

    Examples
    --------
    >>> objective = HypothesisTesting("tv", between=([0.8, 0.2], [0.2, 0.8]))
    >>> round(objective.value({"default": np.eye(2)}), 12)
    0.6
    """

    kind = "hypothesis-testing"
    convex_in_sums = True

    def __init__(self, divergence: str, between: Any):
        if not isinstance(divergence, str) or divergence not in F_DIVERGENCES:
            raise ProblemError(f"expected one of {', '.join(F_DIVERGENCES)}, got {divergence!r}",
                               key="objective.divergence")
        self.divergence = divergence
        try:
            pair = [np.asarray(p, dtype=float) for p in between]
        except (TypeError, ValueError):
            raise ProblemError("expected two distributions over the inputs (P0, P1)",
                               key="objective.between") from None
        if len(pair) != 2:
            raise ProblemError(f"expected two distributions (P0, P1), got {len(pair)}", key="objective.between")
        self.between = tuple(pair)

    def bind(self, setting: Setting) -> HypothesisTesting:
        """The two hypotheses must be distributions over the inputs."""
        self.single(setting)
        n = len(setting.inputs)
        for i, p in enumerate(self.between):
            probabilities(p, n, f"objective.between[{i}]")
        return self

    @property
    def features(self) -> np.ndarray:
        return np.vstack(self.between)

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        K = np.asarray(mechs[DEFAULT], dtype=float)
        p0, p1 = self.between
        return float(DIVERGENCES[self.divergence].value(p0 @ K, p1 @ K))

    def pattern_utility(self, sums: np.ndarray, epsilon: float) -> np.ndarray:
        sums = np.asarray(sums, dtype=float)
        growth = math.expm1(epsilon)
        A, B = 1.0 + growth * sums[0], 1.0 + growth * sums[1]
        return B * DIVERGENCES[self.divergence].generator(A / B)

    def __repr__(self) -> str:
        pair = "(" + ", ".join(preview.array(p) for p in self.between) + ")"
        return preview.call(type(self).__name__, [("divergence", repr(self.divergence)), ("between", pair)])
