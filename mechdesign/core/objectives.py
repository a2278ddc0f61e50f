"""Utility objectives, minimised unless their ``sense`` is ``"maximize"``. Each answers: its
cvxpy expression over the matrix variables, its value on given matrices, the size of its
coefficients and whether its data fit the problem's domains.

The objectives here are minimised and convex. The maximised information utilities
(:mod:`mechdesign.core.information_utilities`) maximise a convex function, which is no convex
program: only the staircase solver (:mod:`mechdesign.solvers.staircase`) takes them.

What the problem already knows may be left out when an objective is built in Python: a loss may
be named (``"hamming"``, ``"metric"``, ``"squared"``), a prior left out (uniform, or the
contexts' distributions), the mechanism keys left out (all of them). :meth:`Objective.bind`
fills them in from the problem's :class:`~mechdesign.core.setting.Setting` when the problem is
built.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Mapping

import numpy as np

from mechdesign.core import preview
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import DEFAULT, Setting, probabilities

#: loss names an objective may be given instead of a matrix (filled in by :meth:`Objective.bind`)
LOSS_NAMES = ("hamming", "metric", "squared")


class Objective:
    """Base class of the objectives (see the module docstring)."""

    kind: ClassVar[str] = "objective"
    linear: ClassVar[bool] = True
    #: "minimize" (the problem's bound is a lower bound) or "maximize" (an upper bound; the
    #: general convex route refuses such an objective, see the module docstring)
    sense: ClassVar[str] = "minimize"

    def bind(self, setting: Setting) -> Objective:
        """This objective with what it left to the problem filled in from ``setting`` and its
        data checked against the problem (default: itself, unchanged)."""
        return self

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        """The cvxpy expression of the objective over the matrix variables ``K`` (key -> variable),
        in units of ``scale`` (:meth:`magnitude`, or a value found): every coefficient divided by
        it, inside any maximum, so that the rows bounding the maximum (its epigraph) are scaled
        too. (Divided outside, a worst-case loss of order 1e-6 kept rows of coefficients 1e-10 to
        1e-6 under HiGHS's 1e-9 feasibility tolerance, which stopped 2.4e-4 above the optimum.)"""
        raise NotImplementedError

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        """The objective of the matrices ``mechs`` (key -> matrix)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def report(self, mechs: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """What the result should record besides the objective's value, for the certified
        matrices ``mechs``: entries of :attr:`Result.extra <mechdesign.design.result.Result.extra>`
        (default: none; the robust expected loss records its worst-case prior and the loss under
        the nominal prior under ``"robust"``)."""
        return {}

    def least_value(self) -> float:
        """A value no row-stochastic design's objective falls below, whatever the privacy
        constraints: a lower bound on every optimum that needs no solver (−inf when none is
        known; only minimised objectives have one). It proves an optimum of 0 exactly, where a
        solver's duals prove only their round-off."""
        return -math.inf

    def best_constant_rows(self, keys: list[str], n_outputs: int) -> dict[str, np.ndarray] | None:
        """Per mechanism key, the output distribution of the data-independent design (every row
        the same) that serves this objective best, or None when there is none to offer: a
        candidate the problem tries when a solver's design is left short of a proof."""
        return None

    def magnitude(self) -> float:
        """The size of the objective's coefficients (max |coefficient|; 1 when it has none).

        Solvers' absolute tolerances (1e-9) assume coefficients of order one: a loss of 1e-9
        would otherwise be solved to no precision. The program minimises objective/magnitude,
        which has the same minimisers; value and bound are scaled back."""
        return 1.0

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        """Raise ProblemError unless the objective's data fit |X| = n_inputs, |Y| = n_outputs
        and the mechanism keys ``keys`` (default: nothing to check)."""


def _array(value: Any, name: str, ndim: int, nonnegative: bool = False) -> np.ndarray:
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


def _matrix(value: Any, name: str) -> np.ndarray:
    return _array(value, name, 2)


def _weights(value: Any, name: str) -> np.ndarray:
    return _array(value, name, 1, nonnegative=True)


def _check_shape(array: np.ndarray, shape: tuple, name: str, meaning: str) -> None:
    if array.shape != shape:
        if array.ndim == 1 and len(shape) == 1:
            raise ProblemError(f"expected {shape[0]} weights ({meaning}), got {array.size}", key=name)
        raise ProblemError(f"expected shape {shape} ({meaning}), got {array.shape}", key=name)


def _loss_or_name(loss: Any, name: str) -> tuple[np.ndarray | None, str | None]:
    """(matrix, None) for a loss matrix, (None, name) for a loss name or None (the default loss:
    ``metric`` when the problem has a metric, else ``hamming``)."""
    if loss is None or isinstance(loss, str):
        if loss is not None and loss not in LOSS_NAMES:
            raise ProblemError(f"expected a loss matrix or one of {', '.join(LOSS_NAMES)}, got {loss!r}",
                               key=name)
        return None, loss
    return _matrix(loss, name), None


def named_loss(name: str | None, setting: Setting, key: str = "objective.loss") -> np.ndarray:
    """The loss matrix (inputs x outputs) a loss name stands for: ``hamming`` (0 when the labels
    agree, else 1), ``metric`` (the ground metric's distance) or ``squared`` (its square); None
    is ``metric`` when the problem has a metric, else ``hamming``."""
    if name is None:
        name = "metric" if setting.metric is not None else "hamming"
    if name == "hamming":
        return hamming_loss(setting.inputs, setting.outputs)
    metric = setting.need_metric(f"the {name!r} loss", key, "the objective a loss matrix")
    try:
        d = metric.distances(setting.inputs, setting.outputs)
    except ProblemError as exc:
        raise exc.located(key=key)
    return d ** 2 if name == "squared" else d


def _mapping_or_vector(value: Any, name: str) -> dict[str, np.ndarray] | None:
    """Weights per mechanism key: a mapping as given, a single vector as the shared mechanism's."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        if not value:
            raise ProblemError("expected a non-empty mapping from context name to weights", key=name)
        return {str(k): _weights(v, f"{name}[{k}]") for k, v in value.items()}
    return {DEFAULT: _weights(value, name)}


def _weights_text(weights: Mapping[str, np.ndarray] | None, single: str, several: str) -> tuple[str, str | None]:
    """The repr field of per-key weights: ``single=[...]`` for the shared mechanism's alone."""
    if weights is None:
        return single, None
    if list(weights) == [DEFAULT]:
        return single, preview.array(weights[DEFAULT])
    return several, preview.mapping(weights)


def _check_keys(keys: Any, allowed: list[str], name: str) -> None:
    unknown = [k for k in keys if k not in allowed]
    if unknown:
        raise ProblemError(f"unknown mechanism contexts {unknown}; expected among {allowed}", key=name)


class ExpectedLoss(Objective):
    """Σ_s Σ_x W_s[x] Σ_y K_s[x, y] L[x, y], where W_s = w_s λ_s (context weight times its
    distribution; a single mechanism has W = the prior).

    Parameters
    ----------
    loss : array (|X|, |Y|), or "hamming", "metric" or "squared", optional
        The loss L[x, y] of reporting y for x. A name is filled in from the problem: ``hamming``
        (0 when the labels agree, else 1), ``metric`` (the problem's ground metric) or
        ``squared`` (its square); the default is ``metric`` when the problem has a metric,
        else ``hamming``.
    row_weights : mapping key -> array (|X|,), optional
        The weights W_s per mechanism key (``"default"`` for one shared mechanism).
    prior : array (|X|,), optional
        Instead of ``row_weights``: the prior of a problem with one shared mechanism. With
        neither, the prior is uniform, or with mechanism contexts each context's distribution
        weighed equally.

    Examples
    --------
    >>> ExpectedLoss([[0, 1], [1, 0]], prior=[0.3, 0.7])
    ExpectedLoss(loss=[[0, 1], [1, 0]], prior=[0.3, 0.7])
    """

    kind = "expected-loss"

    def __init__(self, loss: Any = None, row_weights: Mapping[str, Any] | None = None, *,
                 prior: Any = None):
        self.loss, self.loss_name = _loss_or_name(loss, "objective.loss")
        if prior is not None and row_weights is not None:
            raise ProblemError("give either prior (one shared mechanism) or row_weights, not both",
                               key="objective.prior")
        if row_weights is not None and not isinstance(row_weights, Mapping):
            raise ProblemError("expected a mapping from context name to row weights (or give prior=)",
                               key="objective.row_weights")
        self.prior_given = prior is not None
        self.row_weights = _mapping_or_vector(prior if self.prior_given else row_weights, self._weights_key(None))
        if self.loss is not None and self.row_weights:
            for k, w in self.row_weights.items():
                _check_shape(w, (self.loss.shape[0],), self._weights_key(k), "one per loss row")

    def _weights_key(self, key: str | None) -> str:
        """The argument a key's weights came from, for messages."""
        if self.prior_given:
            return "objective.prior"
        return "objective.row_weights" if key is None else f"objective.row_weights[{key}]"

    def bind(self, setting: Setting) -> ExpectedLoss:
        """The loss matrix of a loss name, and the default weights (uniform prior; with contexts
        each context's distribution weighed equally); the prior of a single mechanism must be a
        probability vector over the inputs."""
        loss = self.loss if self.loss is not None else self.default_loss(setting)
        n = len(setting.inputs)
        _check_shape(loss, (n, len(setting.outputs)), "objective.loss", "|X| x |Y|")
        weights = self.row_weights
        if setting.contexts is not None:
            if self.prior_given:
                raise ProblemError("with mechanism contexts the contexts' distributions are the prior: "
                                   "give row_weights per context, or nothing", key="objective.prior")
            if weights is None:
                weights = {k: np.asarray(lam, float) / len(setting.contexts) for k, lam in setting.contexts.items()}
        else:
            weights = weights if weights is not None else {DEFAULT: setting.uniform()}
            if DEFAULT in weights:
                probabilities(weights[DEFAULT], n, self._weights_key(DEFAULT))
        if loss is self.loss and weights is self.row_weights:
            return self
        bound = type(self)(loss, weights)
        bound.loss_name, bound.prior_given = self.loss_name, self.prior_given and DEFAULT in weights
        return bound

    def default_loss(self, setting: Setting) -> np.ndarray:
        """The loss matrix of this objective's loss name (or of the default name)."""
        return named_loss(self.loss_name, setting)

    def magnitude(self) -> float:
        top = max(float(np.abs(self._coefficients(k)).max()) for k in self._weighted_keys())
        return top if top > 0 else 1.0

    def least_value(self) -> float:
        """Σ_s Σ_x min_y W_s[x] L[x, y] (every row puts its mass where it costs least), summed
        exactly and moved down by the sum's round-off."""
        terms = [math.fsum(self._coefficients(k).min(axis=1)) for k in self._weighted_keys()]
        total = math.fsum(terms)
        return total - 4 * np.finfo(float).eps * (math.fsum(abs(t) for t in terms) + abs(total))

    def best_constant_rows(self, keys: list[str], n_outputs: int) -> dict[str, np.ndarray]:
        """Each key's output of least expected loss, Σ_x W[x] L[x, y], with probability 1."""
        return {k: np.eye(n_outputs)[int(np.argmin(self.cost(k).sum(axis=0)))] for k in keys}

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        _check_shape(self.loss, (n_inputs, n_outputs), "objective.loss", "|X| x |Y|")
        _check_keys(self.row_weights, keys, self._weights_key(None))

    def _weighted_keys(self) -> list[str]:
        """The keys with weights; ProblemError while the loss or the prior is left to a problem."""
        if self.loss is None or self.row_weights is None:
            raise ProblemError(f"{self!r} leaves its loss or prior to the problem: use it in a Problem, "
                               "or give it a loss matrix and a prior", key="objective")
        return list(self.row_weights)

    def _coefficients(self, key: str) -> np.ndarray:
        return self.row_weights[key][:, None] * self.loss

    def cost(self, key: str) -> np.ndarray:
        """The linear cost C with objective Σ C·K for one context (zero if it carries no weight)."""
        if key not in self.row_weights:
            return np.zeros_like(self.loss)
        return self._coefficients(key)

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        # (linear: no maximum, so the scale divides the sum, the program's costs alone)
        return sum(cp.sum(cp.multiply(self._coefficients(k), K[k])) for k in self._weighted_keys()) / scale

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        return float(sum((self._coefficients(k) * mechs[k]).sum() for k in self._weighted_keys()))

    def _loss_text(self) -> str | None:
        if self.loss_name is not None or self.loss is None:
            return repr(self.loss_name) if self.loss_name is not None else None
        return preview.array(self.loss)

    def __repr__(self) -> str:
        name, weights = _weights_text(self.row_weights, "prior", "row_weights")
        return preview.call(type(self).__name__, [("loss", self._loss_text()), (name, weights)])


class ErrorProbability(ExpectedLoss):
    """1 − Σ_x π_x K[x, x]: the expected Hamming loss (outputs must include the inputs).

    Parameters
    ----------
    loss : array (|X|, |Y|), optional
        The 0/1 loss; by default built from the labels (0 where the output is the input).
    row_weights, prior : optional
        As for :class:`ExpectedLoss`: a prior (uniform by default) or weights per context.

    Examples
    --------
    >>> ErrorProbability(prior=[0.5, 0.5])
    ErrorProbability(prior=[0.5, 0.5])
    """

    kind = "error-probability"

    def __init__(self, loss: Any = None, row_weights: Mapping[str, Any] | None = None, *,
                 prior: Any = None):
        if isinstance(loss, str):
            raise ProblemError(f"error-probability takes no loss name (its loss is 0/1), got {loss!r}",
                               key="objective.loss")
        super().__init__(loss, row_weights, prior=prior)

    def default_loss(self, setting: Setting) -> np.ndarray:
        """The 0/1 loss of the labels; every input must be among the outputs."""
        missing = [x for x in setting.inputs.labels if x not in setting.outputs]
        if missing:
            raise ProblemError(f"error-probability needs every input among the outputs; missing {missing[:5]}",
                               key="objective.kind")
        return hamming_loss(setting.inputs, setting.outputs)

    def _loss_text(self) -> str | None:
        return None  # always the 0/1 loss of the labels


class WorstCaseLoss(Objective):
    """max_s max_x Σ_y K_s[x, y] L[x, y].

    Parameters
    ----------
    loss : array (|X|, |Y|), or "hamming", "metric" or "squared", optional
        As for :class:`ExpectedLoss`.
    keys : list of str, optional
        The mechanism keys it ranges over (default: all of the problem's).
    """

    kind = "worst-case-loss"

    def __init__(self, loss: Any = None, keys: list[str] | None = None):
        self.loss, self.loss_name = _loss_or_name(loss, "objective.loss")
        self.keys = None if keys is None else list(keys)
        if self.keys is not None and not self.keys:
            raise ProblemError("expected at least one mechanism context", key="objective.keys")

    def bind(self, setting: Setting) -> WorstCaseLoss:
        """The loss matrix of a loss name; all the problem's mechanism keys by default."""
        if self.loss is not None and self.keys is not None:
            return self
        loss = self.loss if self.loss is not None else named_loss(self.loss_name, setting)
        bound = WorstCaseLoss(loss, self.keys if self.keys is not None else setting.keys)
        bound.loss_name = self.loss_name
        return bound

    def magnitude(self) -> float:
        top = float(np.abs(self.loss).max())
        return top if top > 0 else 1.0

    def least_value(self) -> float:
        """max_x min_y L[x, y]: every row's expected loss is at least its least entry (exact:
        no arithmetic)."""
        return float(self.loss.min(axis=1).max())

    def best_constant_rows(self, keys: list[str], n_outputs: int) -> dict[str, np.ndarray] | None:
        """The row r of least max_x Σ_y r_y L[x, y] (:func:`least_maximum_row`); None if HiGHS
        does not solve it."""
        row = least_maximum_row(self.loss)
        return None if row is None else dict.fromkeys(keys, row)

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        _check_shape(self.loss, (n_inputs, n_outputs), "objective.loss", "|X| x |Y|")
        _check_keys(self.keys, keys, "objective.keys")

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        loss = self.loss / scale
        return cp.max(cp.hstack([cp.max(cp.sum(cp.multiply(loss, K[k]), axis=1)) for k in self.keys]))

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        return float(max((self.loss * mechs[k]).sum(axis=1).max() for k in self.keys))

    def __repr__(self) -> str:
        loss = repr(self.loss_name) if self.loss_name is not None else (
            None if self.loss is None else preview.array(self.loss))
        return preview.call("WorstCaseLoss", [("loss", loss), ("keys", _keys_text(self.keys))])


class MaxOffDiagonal(Objective):
    """max over contexts s and x != y of K_s[x, y] (Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019, eq. (6)).

    Parameters
    ----------
    off_diagonal : boolean array (|X|, |Y|), optional
        Which entries count (default: those whose output label differs from the input's).
    keys : list of str, optional
        The mechanism keys it ranges over (default: all of the problem's).
    """

    kind = "max-off-diagonal"

    def __init__(self, off_diagonal: Any = None, keys: list[str] | None = None):
        self.mask = None if off_diagonal is None else np.asarray(off_diagonal, dtype=bool)
        self.keys = None if keys is None else list(keys)
        if self.mask is not None and self.mask.ndim != 2:
            raise ProblemError(f"expected a matrix mask, got shape {self.mask.shape}", key="objective.mask")
        if self.keys is not None and not self.keys:
            raise ProblemError("expected at least one mechanism context", key="objective.keys")
        if self.mask is not None:
            if not self.mask.any():
                raise ProblemError("max-off-diagonal needs at least two outputs", key="objective.kind")
            self._rows, self._cols = np.nonzero(self.mask)

    def bind(self, setting: Setting) -> MaxOffDiagonal:
        """The mask of the labels (output != input); all the problem's mechanism keys by default."""
        if self.mask is not None and self.keys is not None:
            return self
        mask = self.mask if self.mask is not None else off_diagonal_mask(setting.inputs, setting.outputs)
        return MaxOffDiagonal(mask, self.keys if self.keys is not None else setting.keys)

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        _check_shape(self.mask, (n_inputs, n_outputs), "objective.mask", "|X| x |Y|")
        _check_keys(self.keys, keys, "objective.keys")

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        return cp.max(cp.hstack([cp.max(K[k][self._rows, self._cols] / scale) for k in self.keys]))

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        return float(max(mechs[k][self.mask].max() for k in self.keys))

    def least_value(self) -> float:
        """0: entries are probabilities."""
        return 0.0

    def __repr__(self) -> str:
        return preview.call("MaxOffDiagonal", [("keys", _keys_text(self.keys))])


class ProfileMarginalError(Objective):
    """max_s max_j |λ_s − λ_s K_s|_j (Geumlek and Chaudhuri 2019, eq. (8)); outputs equal the inputs.

    Parameters
    ----------
    distributions : mapping key -> λ_s, or one array (|X|,), optional
        The distribution of each mechanism's inputs (one array: the shared mechanism's);
        default: the problem's contexts, or the uniform distribution.
    """

    kind = "profile-marginal-error"

    def __init__(self, distributions: Mapping[str, Any] | Any = None):
        self.distributions = _mapping_or_vector(distributions, "objective.distributions")

    def bind(self, setting: Setting) -> ProfileMarginalError:
        """The contexts' distributions (or the uniform one) by default."""
        if self.distributions is not None:
            return self
        if setting.contexts is not None:
            return ProfileMarginalError(dict(setting.contexts))
        return ProfileMarginalError(setting.uniform())

    def check(self, n_inputs: int, n_outputs: int, keys: list[str]) -> None:
        if n_inputs != n_outputs:
            raise ProblemError(f"needs the outputs to equal the inputs, got {n_inputs} inputs and "
                               f"{n_outputs} outputs", key="objective.kind")
        for k, lam in self.distributions.items():
            _check_shape(lam, (n_inputs,), f"objective.distributions[{k}]", "one per input")
        _check_keys(self.distributions, keys, "objective.distributions")

    def expression(self, K: Mapping[str, cp.Variable], scale: float = 1.0) -> cp.Expression:
        return cp.max(cp.hstack([cp.max(cp.abs(lam / scale - (lam / scale) @ K[k]))
                                 for k, lam in self.distributions.items()]))

    def costs(self, mechs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per output j: max_s |λ_s − λ_s K_s|_j (the four costs of Geumlek and Chaudhuri’s (2019) Figure 2)."""
        return np.max([np.abs(lam - lam @ mechs[k]) for k, lam in self.distributions.items()], axis=0)

    def value(self, mechs: Mapping[str, np.ndarray]) -> float:
        return float(self.costs(mechs).max())

    def least_value(self) -> float:
        """0: a maximum of absolute values."""
        return 0.0

    def best_constant_rows(self, keys: list[str], n_outputs: int) -> dict[str, np.ndarray]:
        """Each key's own distribution λ (when it is one): the design whose rows are all λ keeps
        λ K = λ, an error of 0."""
        rows = {}
        for k in keys:
            lam = np.asarray(self.distributions.get(k, ()), float)
            if lam.shape != (n_outputs,) or (lam < 0).any() or abs(math.fsum(lam) - 1.0) > 1e-9:
                return None
            rows[k] = lam / math.fsum(lam)
        return rows

    def __repr__(self) -> str:
        name, text = _weights_text(self.distributions, "distribution", "distributions")
        return preview.call("ProfileMarginalError", [(name, text)])


def _keys_text(keys: list[str] | None) -> str | None:
    return None if keys is None else "[" + preview.labels(keys) + "]"


def least_maximum_row(totals: np.ndarray) -> np.ndarray | None:
    """The distribution q over the columns of ``totals`` (r, |Y|) of least max_r (totals q)_r:
    the data-independent design of least maximum, every input reporting by q, when row r holds
    Σ_x of the r-th cost (a mixture can beat every single output: a small LP, min t s.t.
    totals q <= t, q in the simplex); None if HiGHS does not solve it."""
    from scipy.optimize import linprog

    k, m = totals.shape
    found = linprog(np.append(np.zeros(m), 1.0), A_ub=np.hstack([totals, -np.ones((k, 1))]), b_ub=np.zeros(k),
                    A_eq=np.append(np.ones(m), 0.0)[None, :], b_eq=[1.0],
                    bounds=[(0, None)] * m + [(None, None)], method="highs")
    if found.status != 0:
        return None
    row = np.clip(found.x[:m], 0.0, None)
    return row / row.sum()


def hamming_loss(inputs: Domain, outputs: Domain) -> np.ndarray:
    """The 0/1 loss of the labels: 0 where the output's label is the input's, else 1."""
    return (np.asarray(inputs.labels)[:, None] != np.asarray(outputs.labels)[None, :]).astype(float)


def off_diagonal_mask(inputs: Domain, outputs: Domain) -> np.ndarray:
    """True where the output's label differs from the input's."""
    return hamming_loss(inputs, outputs).astype(bool)
