"""The robust expected loss: the largest expected loss over a set of priors, minimised.

A prior in an expected-loss objective is usually an estimate, and a design optimal for the
estimate can be poor for the truth. :class:`RobustExpectedLoss` minimises over mechanisms K

    max_{π ∈ U} Σ_x π_x Σ_y K[x, y] L[x, y]

for a set U of priors (:mod:`mechdesign.core.prior_sets`): finitely many scenarios (the
epigraph of a maximum), a total-variation ball around the estimate, or a box of per-input
bounds intersected with the simplex (each through its linear-programming dual). The objective
stays a linear program, so the general route solves it with its proven bounds; the special
solvers that need a plain expected loss (column generation, rays, couplings) do not take it.
Finitely many priors under ε·d-privacy go to the LP with lazy pair rows, as a maximum of costs
(:mod:`mechdesign.solvers.max_of_costs`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from mechdesign.core import preview
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.objectives import Objective, named_loss
from mechdesign.core.prior_sets import PriorSet
from mechdesign.core.setting import DEFAULT, Setting, probabilities


class RobustExpectedLoss(Objective):
    """max_{π ∈ U} Σ_x π_x Σ_y K[x, y] L[x, y] over one shared mechanism K; minimised.

    The result records, under ``result.extra["robust"]`` (:meth:`report`): ``set`` (the
    uncertainty set), ``worst_prior`` (a prior of the set attaining the objective on the
    returned design), ``worst_loss`` (the objective itself), ``nominal_prior`` and
    ``nominal_loss`` (the expected loss of the design under the nominal prior).

    Parameters
    ----------
    loss : array (|X|, |Y|), or "hamming", "metric" or "squared", optional
        As for :class:`~mechdesign.core.objectives.ExpectedLoss` (default: ``metric`` when the
        problem has a metric, else ``hamming``).
    priors : PriorSet
        The uncertainty set: :class:`~mechdesign.core.prior_sets.FinitePriors`,
        :class:`~mechdesign.core.prior_sets.TVBall` or :class:`~mechdesign.core.prior_sets.PriorBox`.
    prior : array (|X|,), optional
        The nominal prior, the estimate (default: uniform); a ball without a centre is centred
        on it.

    Examples
    --------
    Per-input losses ℓ = (0.1, 0.2) under a TV ball of radius 0.1 around (0.5, 0.5): the worst
    prior moves 0.1 onto the second input, (0.4, 0.6), for 0.04 + 0.12.

    >>> from mechdesign.core.domain import Domain
    >>> from mechdesign.core.prior_sets import TVBall
    >>> two = Domain.from_size(2)
    >>> objective = RobustExpectedLoss([[0, 1], [1, 0]], TVBall(0.1), prior=[0.5, 0.5]).bind(Setting(two, two))
    >>> round(objective.value({"default": np.array([[0.9, 0.1], [0.2, 0.8]])}), 12)
    0.16
    """

    kind = "robust-expected-loss"

    def __init__(self, loss: Any = None, priors: PriorSet | None = None, *, prior: Any = None):
        if not isinstance(priors, PriorSet):
            raise ProblemError("expected a set of priors (FinitePriors, TVBall or PriorBox)",
                               key="objective.robust")
        if isinstance(loss, str) or loss is None:
            self.loss, self.loss_name = None, loss
        else:
            self.loss, self.loss_name = np.asarray(loss, dtype=float), None
        self.priors = priors
        self.prior = None if prior is None else np.asarray(prior, dtype=float)

    def bind(self, setting: Setting) -> RobustExpectedLoss:
        """The loss matrix of a loss name, the uniform nominal prior by default, the set bound
        to the nominal prior and checked; one shared mechanism only."""
        if setting.contexts is not None:
            raise ProblemError("a robust expected loss needs one shared mechanism, not one per context",
                               key="objective.robust")
        n, m = len(setting.inputs), len(setting.outputs)
        loss = self.loss if self.loss is not None else named_loss(self.loss_name, setting)
        if loss.shape != (n, m):
            raise ProblemError(f"expected shape {(n, m)} (|X| x |Y|), got {loss.shape}", key="objective.loss")
        if not np.all(np.isfinite(loss)):
            raise ProblemError("expected finite numbers (no NaN or infinity)", key="objective.loss")
        prior = setting.uniform() if self.prior is None else probabilities(self.prior, n, "objective.prior")
        bound = RobustExpectedLoss(loss, self.priors.bind(prior, n), prior=prior)
        bound.loss_name = self.loss_name
        return bound

    def _bound_parts(self) -> tuple[np.ndarray, np.ndarray]:
        if self.loss is None or self.prior is None:
            raise ProblemError(f"{self!r} leaves its loss or prior to the problem: use it in a Problem",
                               key="objective")
        return self.loss, self.prior

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        loss, _ = self._bound_parts()
        if loss.shape != (n_inputs, n_outputs):
            raise ProblemError(f"expected shape {(n_inputs, n_outputs)} (|X| x |Y|), got {loss.shape}",
                               key="objective.loss")
        if keys != [DEFAULT]:
            raise ProblemError("a robust expected loss needs one shared mechanism", key="objective.robust")

    def magnitude(self) -> float:
        top = float(np.abs(self._bound_parts()[0]).max())
        return top if top > 0 else 1.0

    def losses(self, mechs: Mapping[str, np.ndarray]) -> np.ndarray:
        """ℓ_x = Σ_y K[x, y] L[x, y], the expected loss of each input."""
        return (self._bound_parts()[0] * np.asarray(mechs[DEFAULT], dtype=float)).sum(axis=1)

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        loss = self._bound_parts()[0] / scale
        losses = cp.sum(cp.multiply(loss, K[DEFAULT]), axis=1)
        return self.priors.support(losses, (float(loss.min()), float(loss.max())))

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        return self.priors.worst(self.losses(mechs))[0]

    def report(self, mechs: Mapping[str, np.ndarray]) -> dict[str, Any]:
        losses = self.losses(mechs)
        worst, prior = self.priors.worst(losses)
        nominal = self._bound_parts()[1]
        return {"robust": {"set": self.priors.describe(), "worst_prior": prior.tolist(), "worst_loss": worst,
                           "nominal_prior": nominal.tolist(), "nominal_loss": float(nominal @ losses)}}

    def __repr__(self) -> str:
        loss = repr(self.loss_name) if self.loss_name is not None else (
            None if self.loss is None else preview.array(self.loss))
        prior = None if self.prior is None else preview.array(self.prior)
        return preview.call("RobustExpectedLoss", [("loss", loss), ("priors", repr(self.priors)), ("prior", prior)])
