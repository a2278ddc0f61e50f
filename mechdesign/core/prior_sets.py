"""Sets of priors a robust expected loss ranges over (:mod:`mechdesign.core.robust_loss`): a
finite set of scenarios, a total-variation ball around an estimate, and a box of per-input
bounds intersected with the simplex.

Each set U answers, for the vector ℓ of per-input losses ℓ_x = Σ_y K[x, y] L[x, y]:

* :meth:`PriorSet.worst` — max_{π ∈ U} π·ℓ and a prior attaining it, in float64;
* :meth:`PriorSet.support` — the same maximum as a convex cvxpy expression of ℓ (an affine
  expression of the mechanism variables), in the form its linear-programming dual gives, so
  that the robust design stays a linear program: auxiliary variables are minimised by the
  program together with the mechanism.

Each dual variable is given finite bounds that contain an optimal value of it (the proven
bounds of the general route, :mod:`mechdesign.solvers.lp_bound`, need every variable in a box).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import probabilities


class PriorSet:
    """A set of priors over the inputs (see the module docstring)."""

    #: the problem-file name of the set's kind, for messages and records
    name = "prior set"

    def bind(self, nominal: np.ndarray, n: int) -> PriorSet:
        """The set with what it left out filled in (a ball's centre: the ``nominal`` prior) and
        checked against ``n`` inputs; ProblemError otherwise."""
        return self

    def worst(self, losses: np.ndarray) -> tuple[float, np.ndarray]:
        """(max_{π ∈ U} π·ℓ, a prior in U attaining it) for the losses ℓ (|X|,)."""
        raise NotImplementedError

    def support(self, losses: Any, span: tuple[float, float]) -> Any:
        """max_{π ∈ U} π·ℓ as a convex cvxpy expression of ``losses``; ``span`` = (lo, hi)
        holds every ℓ_x (it bounds the dual variables)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """The set, for the result's record."""
        raise NotImplementedError


class FinitePriors(PriorSet):
    """Finitely many priors (scenarios) π^1..π^m: max_i π^i·ℓ, the epigraph of a maximum.

    Parameters
    ----------
    priors : array (m, |X|)
        The scenarios, each a distribution over the inputs.
    names : list of str, optional
        Their names (the problem file's distribution names), for the record.
    """

    name = "priors"

    def __init__(self, priors: Any, names: list[str] | None = None):
        try:
            self.priors = np.atleast_2d(np.asarray(priors, dtype=float))
        except (TypeError, ValueError):
            raise ProblemError("expected a list of distributions over the inputs", key="objective.robust.priors") from None
        if self.priors.ndim != 2 or self.priors.shape[0] == 0:
            raise ProblemError("expected a non-empty list of distributions", key="objective.robust.priors")
        self.names = list(names) if names is not None else [f"prior {i}" for i in range(len(self.priors))]

    def bind(self, nominal: np.ndarray, n: int) -> FinitePriors:
        for i, p in enumerate(self.priors):
            probabilities(p, n, f"objective.robust.priors[{i}]")
        return self

    def worst(self, losses: np.ndarray) -> tuple[float, np.ndarray]:
        values = self.priors @ losses
        i = int(np.argmax(values))
        return float(values[i]), self.priors[i].copy()

    def support(self, losses: Any, span: tuple[float, float]) -> Any:
        if len(self.priors) == 1:
            return self.priors[0] @ losses
        return cp.max(self.priors @ losses)

    def describe(self) -> dict:
        return {"kind": "priors", "priors": self.names}

    def __repr__(self) -> str:
        return preview.call("FinitePriors", [("priors", f"{len(self.priors)} priors")])


class TVBall(PriorSet):
    """Every prior within total-variation distance r of a centre π̂ (the estimate):
    U = {π ∈ Δ : ½‖π − π̂‖₁ <= r}.

    For r < 1 the worst prior moves mass r from the inputs of the smallest losses onto an input
    of the largest, so

        max_{π ∈ U} π·ℓ = π̂·ℓ + r max_x ℓ_x − min {q·ℓ : 0 <= q <= π̂, Σ q = r},

    and by linear-programming duality (the dual of the inner minimum, with τ the multiplier of
    Σ q = r and (−ℓ_x − τ)_+ those of q_x <= π̂_x)

        − min {q·ℓ : 0 <= q <= π̂, Σ q = r} = min_τ  r τ + Σ_x π̂_x (−ℓ_x − τ)_+ ,

    a minimum over one free scalar that the design program takes with the mechanism; some
    optimal τ lies in [−max ℓ, −min ℓ] (τ = −ℓ at the r-quantile of ℓ under π̂). At r = 0 the set
    is {π̂} (the nominal expected loss); from r = 1 on it is the whole simplex (TV <= 1), and
    the maximum is max_x ℓ_x, the worst-case loss over inputs.

    Parameters
    ----------
    radius : float
        r >= 0.
    centre : array (|X|,), optional
        π̂ (default: the objective's prior).
    centre_name : str, optional
        The centre's name in the problem file, for the record.
    """

    name = "tv"

    def __init__(self, radius: float, centre: Any = None, centre_name: str | None = None):
        if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)) \
                or not np.isfinite(radius) or radius < 0:
            raise ProblemError(f"expected a finite non-negative radius, got {radius!r}", key="objective.robust.tv")
        self.radius = float(radius)
        self.centre = None if centre is None else np.asarray(centre, dtype=float)
        self.centre_name = centre_name

    def bind(self, nominal: np.ndarray, n: int) -> TVBall:
        if self.centre is not None:
            probabilities(self.centre, n, "objective.robust.around")
            return self
        return TVBall(self.radius, nominal, self.centre_name)

    def worst(self, losses: np.ndarray) -> tuple[float, np.ndarray]:
        r, prior = min(self.radius, 1.0), self.centre.copy()
        top = int(np.argmax(losses))
        left = r
        for x in np.argsort(losses, kind="stable"):
            take = min(prior[x], left)
            prior[x] -= take
            left -= take
            if left <= 0:
                break
        prior[top] += r - max(left, 0.0)
        return float(prior @ losses), prior

    def support(self, losses: Any, span: tuple[float, float]) -> Any:
        r = min(self.radius, 1.0)
        if r == 0:
            return self.centre @ losses
        if r == 1:
            return cp.max(losses)
        lo, hi = span
        tau = cp.Variable(bounds=[-hi, -lo], name="tv_multiplier")
        weighted = self.centre > 0  # zero-weight terms vanish (and would leave a variable unbounded)
        tail = self.centre[weighted] @ cp.pos(-losses[np.flatnonzero(weighted)] - tau)
        return self.centre @ losses + r * cp.max(losses) + r * tau + tail

    def describe(self) -> dict:
        out = {"kind": "tv", "radius": self.radius}
        if self.centre_name is not None:
            out["around"] = self.centre_name
        return out

    def __repr__(self) -> str:
        centre = None if self.centre is None else preview.array(self.centre)
        return preview.call("TVBall", [("radius", preview.number(self.radius)), ("centre", centre)])


class PriorBox(PriorSet):
    """Per-input bounds on the prior, intersected with the simplex:
    U = {π : lower <= π <= upper, Σ π = 1} (non-empty: Σ lower <= 1 <= Σ min(upper, 1)).

    The worst prior starts from ``lower`` and fills the remaining mass 1 − Σ lower into the
    inputs of the largest losses, each up to its upper bound. By linear-programming duality,
    with ν the multiplier of Σ π = 1,

        max_{π ∈ U} π·ℓ = min_ν  ν + Σ_x [u_x (ℓ_x − ν)_+ − l_x (ν − ℓ_x)_+]
                        = min_ν  l·ℓ + (1 − Σ l) ν + Σ_x (u_x − l_x)(ℓ_x − ν)_+ ,

    (using (ν − ℓ)_+ = (ν − ℓ) + (ℓ − ν)_+), convex in (ν, ℓ) as u >= l; some optimal ν is one
    of the ℓ_x, so it lies in [min ℓ, max ℓ].

    Parameters
    ----------
    lower, upper : arrays (|X|,)
        0 <= lower <= upper.
    """

    name = "box"

    def __init__(self, lower: Any, upper: Any):
        self.lower = _vector(lower, "objective.robust.lower")
        self.upper = _vector(upper, "objective.robust.upper")

    def bind(self, nominal: np.ndarray, n: int) -> PriorBox:
        for values, key in ((self.lower, "lower"), (self.upper, "upper")):
            if values.size != n:
                raise ProblemError(f"expected {n} bounds (one per input), got {values.size}",
                                   key=f"objective.robust.{key}")
        if np.any(self.lower < 0):
            raise ProblemError("expected non-negative lower bounds", key="objective.robust.lower")
        if np.any(self.upper < self.lower):
            x = int(np.flatnonzero(self.upper < self.lower)[0])
            raise ProblemError(f"expected upper >= lower, input {x} has {self.upper[x]:g} < {self.lower[x]:g}",
                               key="objective.robust.upper")
        if self.lower.sum() > 1 + 1e-12:
            raise ProblemError(f"the lower bounds sum to {self.lower.sum():.6g} > 1: no prior fits them",
                               key="objective.robust.lower")
        if np.minimum(self.upper, 1.0).sum() < 1 - 1e-12:
            raise ProblemError(f"the upper bounds sum to {self.upper.sum():.6g} < 1: no prior fits them",
                               key="objective.robust.upper")
        return self

    def worst(self, losses: np.ndarray) -> tuple[float, np.ndarray]:
        prior = self.lower.copy()
        left = 1.0 - prior.sum()
        for x in np.argsort(-losses, kind="stable"):
            add = min(self.upper[x] - self.lower[x], left)
            prior[x] += add
            left -= add
            if left <= 0:
                break
        return float(prior @ losses), prior

    def support(self, losses: Any, span: tuple[float, float]) -> Any:
        lo, hi = span
        nu = cp.Variable(bounds=[lo, hi], name="box_multiplier")
        width = np.minimum(self.upper, 1.0) - self.lower
        spread = width > 0
        tail = width[spread] @ cp.pos(losses[np.flatnonzero(spread)] - nu) if spread.any() else 0
        return self.lower @ losses + (1.0 - self.lower.sum()) * nu + tail

    def describe(self) -> dict:
        return {"kind": "box", "lower": self.lower.tolist(), "upper": self.upper.tolist()}

    def __repr__(self) -> str:
        return preview.call("PriorBox", [("lower", preview.array(self.lower)), ("upper", preview.array(self.upper))])


def _vector(value: Any, key: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError("expected a list of numbers, one per input", key=key) from None
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ProblemError("expected a non-empty list of finite numbers, one per input", key=key)
    return array
