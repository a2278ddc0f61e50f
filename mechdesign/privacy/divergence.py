"""Divergence privacy notions (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, §III): a divergence D in place of the DP ratio.

* :class:`DivergenceDP` — (ε, D)-DP over an adjacency Φ of inputs (Def. 9):
  D(K[x] ‖ K[x']) <= ε and D(K[x'] ‖ K[x]) <= ε for every (x, x') in Φ;
* :class:`DivergenceXDP` — (ε, d, D)-XDP (Def. 10): the bound is ε·d(x, x');
* :class:`DivergenceDistP` — (ε, D)-DistP (Def. 11): D(λ K ‖ λ' K) <= ε both ways for every
  pair (λ, λ') to hide;
* :class:`DivergenceXDistP` — (ε, W, D)-XDistP (Def. 12): the bound is ε·W(λ, λ') with W = W1,
  W∞ or TV over the ground metric.

Every notion works with per-context mechanisms too (Def. 15): DistP pairs compare
λ_s K_s with λ_s' K_s' (each :class:`~mechdesign.privacy.distp.Side` names its mechanism), and the
point notions constrain every context's matrix. D is any entry of
:mod:`mechdesign.core.divergences`; conic divergences (KL, reverse KL, χ², Hellinger) make the problem
conic (``linear`` False: Clarabel, SCS as fallback); the audit recomputes D on the returned
matrices in float64.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.divergences import Divergence
from mechdesign.core.divergences import divergence as lookup
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import Setting
from mechdesign.core.tables import read_name_pairs
from mechdesign.privacy.base import (
    MAX_LOG_COEFFICIENT,
    Notion,
    check_delta,
    check_epsilon,
    hockey_stick,
)
from mechdesign.privacy.distp import (
    DistP,
    Side,
    SideLike,
    bound_cost,
    mix_uniform,
    per_unit,
    ratio_mixing_weight,
    smallest_weight,
    width_scaled_audit,
    xdistp_widths,
)
from mechdesign.privacy.ldp import chain, links

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations


def _resolve(div: str | Divergence, delta: float) -> Divergence:
    d = lookup(div)
    if delta and not d.supports_delta:
        raise ProblemError(f"delta applies only to the max divergence (D∞^δ), not to '{d.name}'",
                           key="delta")
    return d


def _levels(div: Divergence, p: np.ndarray, q: np.ndarray, delta: float, eps: np.ndarray) -> np.ndarray:
    """Per row: D(p ‖ q), or for D∞^δ (δ > 0) the hockey-stick δ reached at the row's ε."""
    if delta > 0:
        return hockey_stick(p, q, eps)
    return np.atleast_1d(div.value(p, q))


# ---------------------------------------------------------------------------------------------
# point notions: divergence DP (Def. 9) and divergence XDP (Def. 10)

class DivergenceDP(Notion):
    """(ε, D)-DP w.r.t. an adjacency Φ (Kawamoto and Murakami 2019, Def. 9).

    Parameters
    ----------
    epsilon : float
    divergence : str or Divergence
        ``max`` (with ``delta``: (ε, δ)-DP, Prop. 1), ``kl``, ``reverse-kl``, ``tv``, ``chi2``,
        ``hellinger``.
    adjacency : (i, j) index arrays or a sequence of index pairs, optional
        The adjacent input pairs; each pair is constrained in both directions. Default: every
        pair of the problem's inputs (filled in by :meth:`bind`).
    delta : float
        δ of D∞^δ (max divergence only).
    labels : sequence of str, optional
        Input labels, used to name the worst pair in the certificate (default: the problem's).

    Notes
    -----
    With per-context mechanisms every context's matrix must satisfy it.
    """

    name = "divergence-dp"

    def __init__(self, epsilon: float, divergence: str | Divergence, adjacency: Any = None, delta: float = 0.0,
                 labels: Sequence[str] | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.divergence = _resolve(divergence, self.delta)
        self.labels = list(labels) if labels is not None else None
        self.adjacency = adjacency
        if adjacency is None:  # every pair of the problem's inputs, filled in by bind
            return
        i, j = _pairs(adjacency)
        if i.size == 0:
            raise ProblemError("needs at least one adjacent pair of distinct inputs", key="adjacency")
        # both directions of every pair
        self.i, self.j = np.concatenate([i, j]), np.concatenate([j, i])

    def bind(self, setting: Setting) -> DivergenceDP:
        """Every pair of the problem's inputs when no adjacency was given, and the inputs'
        labels; the adjacency's indices checked against the inputs."""
        n = len(setting.inputs)
        self._check_indices(n)
        if self.adjacency is not None and self.labels is not None:
            return self
        return DivergenceDP(self.epsilon, self.divergence, self._adjacency(n), self.delta, self._labels(setting))

    def _adjacency(self, n: int) -> Any:
        return np.triu_indices(n, 1) if self.adjacency is None else self.adjacency

    def _labels(self, setting: Setting) -> list[str]:
        return self.labels if self.labels is not None else list(setting.inputs.labels)

    def _check_indices(self, n: int) -> None:
        if self.adjacency is None:
            if n < 2:
                raise ProblemError("needs at least two inputs", key="adjacency")
            return
        top = int(max(self.i.max(), self.j.max()))
        if top >= n:
            raise ProblemError(f"input index {top} is out of range: the problem has {n} inputs "
                               f"(indices 0..{n - 1})", key="adjacency")

    def __repr__(self) -> str:
        pairs = "all" if self.adjacency is None else f"{self.i.size // 2} pairs"
        return preview.call(type(self).__name__, [
            ("epsilon", preview.number(self.epsilon)), ("divergence", repr(self.divergence.name)),
            ("adjacency", pairs), ("delta", preview.number(self.delta) if self.delta else None)])

    @property
    def linear(self) -> bool:  # type: ignore[override]
        """An LP for linear divergences, and for any divergence when every bound is 0."""
        return self.divergence.linear or not np.any(self.epsilon * self.scales() > 0)

    def scales(self) -> np.ndarray:
        """Per directed pair, the factor on ε (1 here; d(x, x') for XDP)."""
        return np.ones(self.i.size)

    def _links(self) -> np.ndarray:
        """Per directed pair: 0 when its bound ε·scale is 0 (an equality), else the chain links
        of the max divergence (1 for the other divergences)."""
        bounds = self.epsilon * self.scales()
        if self.divergence.name != "max":
            return (bounds > 0).astype(int)
        return np.array([0 if b == 0 else links(b) for b in bounds], dtype=int)

    def structure(self) -> bytes:
        return self._links().tobytes()

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        """D(K[x] ‖ K[x']) <= ε·scale per directed pair. A bound of 0 is the equality
        K[x] = K[x'] for every divergence (a divergence vanishes only on equal distributions).
        The max divergence is compiled like :class:`~mechdesign.privacy.distp.DistP`: with
        d = K[x] − K[x'] <= (e^{εs} − 1) K[x'] (expm1) up to e^20, a ratio chain beyond."""
        scales, group = self.scales(), self._links()
        out = []
        for k in np.unique(group):
            sel = group == k
            i, j, s = self.i[sel], self.j[sel], scales[sel]
            for var in K.values():
                out += self._group(coefficients, var[i, :], var[j, :], int(k), s)
        return out

    def _group(self, coefficients: Coefficients, P: Any, Q: Any, k: int, s: np.ndarray) -> list:
        """The constraints of directed pairs with rows P, Q and ``k`` (see :meth:`_links`)."""
        div, tag = self.divergence, f"{k}_{s.size}"
        if k == 0:
            return [P == Q]
        if div.name != "max":
            c = coefficients.coefficient(self, f"divergence_bound_{tag}", lambda eps: div.coefficient(eps * s))
            return div.constraints(P, Q, c, self.delta)
        if self.delta == 0 and k == 1:
            c = coefficients.coefficient(self, f"expm1_{tag}", lambda eps: np.expm1(np.minimum(eps * s, 20.0))[:, None])
            d = cp.Variable(P.shape)
            return [d == P - Q, d <= cp.multiply(c, Q)]
        c = coefficients.coefficient(self, f"link_{tag}", lambda eps: np.exp(np.minimum(eps * s / k, 20.0))[:, None])
        if self.delta == 0:
            return chain(P, Q, k, c)
        out = []
        if k > 1:
            w = cp.Variable(Q.shape, bounds=[0.0, 1.0])
            out += chain(w, Q, k - 1, c)
            Q = w
        return out + [cp.sum(cp.pos(P - cp.multiply(c, Q)), axis=1) <= self.delta]

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """D∞ only: mix with the uniform channel by the exact weight that restores every
        pair's pure ratio (:func:`~mechdesign.privacy.distp.ratio_mixing_weight`; with δ > 0
        the smallest weight below it that brings the hockey sticks to δ). Beyond e^20 the LP
        leaves entries of order e^{−ε} at 0; at smaller bounds the certificate's mixing step
        does this and records it."""
        bounds = self.epsilon * self.scales()
        if self.divergence.name != "max" or not mechs or not np.any(bounds > MAX_LOG_COEFFICIENT):
            return mechs
        allowed = self.delta if self.delta > 0 else bounds
        if all(np.all(self.levels(k) <= allowed + AUDIT_TOL / 2) for k in mechs.values()):
            return mechs
        u = 1.0 / next(iter(mechs.values())).shape[1]
        t = max(ratio_mixing_weight([(k[self.i], k[self.j])], [bounds[:, None]], u) for k in mechs.values())
        if self.delta > 0:  # the pure weight suffices; the hockey sticks may need far less
            t = smallest_weight(lambda w: all(np.all(self.levels(k) <= allowed)
                                              for k in mix_uniform(mechs, w, u).values()), t)
        return mix_uniform(mechs, t, u)

    def levels(self, k: np.ndarray) -> np.ndarray:
        """Per directed pair: D(K[x] ‖ K[x']) (or the hockey-stick δ at ε·scale when δ > 0)."""
        return _levels(self.divergence, k[self.i], k[self.j], self.delta, self.epsilon * self.scales())

    def achieved_levels(self, k: np.ndarray) -> np.ndarray:
        """Per directed pair, the level compared with the request (ε, or δ when δ > 0)."""
        return self.levels(k)

    def _pair_name(self, t: int) -> str:
        a, b = int(self.i[t]), int(self.j[t])
        if self.labels is not None:
            return f"{self.labels[a]}~{self.labels[b]}"
        return f"{a}~{b}"

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        worst, where = -1.0, ("", 0)
        for key, k in mechs.items():
            lv = self.achieved_levels(k)
            t = int(np.argmax(lv))
            if lv[t] > worst:
                worst, where = float(lv[t]), (key, t)
        detail = {"worst_pair": self._pair_name(where[1]), "context": where[0]}
        requested = {"epsilon": self.epsilon, "divergence": self.divergence.name}
        if self.delta > 0:
            requested["delta"] = self.delta
            return Audit(self.name, requested, {"epsilon": self.epsilon, "delta": worst},
                         worst <= self.delta + AUDIT_TOL, detail)
        return Audit(self.name, requested, {"epsilon": worst}, worst <= self.epsilon + AUDIT_TOL, detail)


class DivergenceXDP(DivergenceDP):
    """(ε, d, D)-XDP (Kawamoto and Murakami 2019, Def. 10): D(K[x] ‖ K[x']) <= ε·d(x, x') for adjacent pairs
    (both directions). The audit reports max over pairs of D / d as the achieved ε."""

    name = "divergence-xdp"

    def __init__(self, epsilon: float, divergence: str | Divergence, distances: Any = None, adjacency: Any = None,
                 delta: float = 0.0, labels: Sequence[str] | None = None):
        d = None if distances is None else np.asarray(distances, dtype=float)
        if d is not None and (d.ndim != 2 or d.shape[0] != d.shape[1]):
            raise ProblemError(f"expected a square matrix of distances, got shape {d.shape}", key="distances")
        if adjacency is None and d is not None:
            adjacency = np.triu_indices(d.shape[0], 1)
        super().__init__(epsilon, divergence, adjacency, delta, labels)
        self.distances = d
        if d is not None:
            self._scales = d[self.i, self.j]

    def bind(self, setting: Setting) -> DivergenceXDP:
        """The problem's metric's distances between the inputs when no distances were given
        (every pair adjacent unless an adjacency was), and the inputs' labels."""
        n = len(setting.inputs)
        if self.distances is not None and self.distances.shape != (n, n):
            raise ProblemError(f"expected {n} x {n} distances (between the inputs), got shape "
                               f"{self.distances.shape}", key="distances")
        self._check_indices(n)
        if self.distances is not None and self.labels is not None:
            return self
        d = self.distances if self.distances is not None else setting.input_distances("divergence-xdp", "distances")
        return DivergenceXDP(self.epsilon, self.divergence, d, self.adjacency, self.delta, self._labels(setting))

    def scales(self) -> np.ndarray:
        return self._scales

    def achieved_levels(self, k: np.ndarray) -> np.ndarray:
        lv = self.levels(k)
        return lv if self.delta > 0 else per_unit(lv, self._scales)


def _pairs(adjacency: Any) -> tuple[np.ndarray, np.ndarray]:
    """Unordered distinct pairs (i, j) as two index arrays, duplicates removed."""
    if isinstance(adjacency, tuple) and len(adjacency) == 2 and np.ndim(adjacency[0]) == 1:
        i, j = np.asarray(adjacency[0], int), np.asarray(adjacency[1], int)
    else:
        arr = np.asarray(list(adjacency), dtype=int).reshape(-1, 2)
        i, j = arr[:, 0], arr[:, 1]
    keep = i != j
    lo, hi = np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])
    uniq = np.unique(np.stack([lo, hi], axis=1), axis=0) if lo.size else np.zeros((0, 2), int)
    return uniq[:, 0], uniq[:, 1]


# ---------------------------------------------------------------------------------------------
# distribution notions: divergence DistP (Def. 11) and divergence XDistP (Def. 12)

class DivergenceDistP(DistP):
    """(ε, D)-DistP over pairs of distributions (Kawamoto and Murakami 2019, Def. 11; with per-context mechanisms
    Def. 15): D(λ_a K_a ‖ λ_b K_b) <= ε and D(λ_b K_b ‖ λ_a K_a) <= ε for every pair.

    With ``divergence = "max"`` this is the core :class:`~mechdesign.privacy.distp.DistP`
    ((ε, δ)-DistP through D∞^δ); the other divergences relax it (KL <= D∞, Prop. 10).
    """

    name = "distp"

    def __init__(self, epsilon: float, pairs: Sequence[tuple[SideLike, SideLike]],
                 divergence: str | Divergence = "kl", delta: float = 0.0):
        super().__init__(epsilon, pairs, delta)
        self.divergence = _resolve(divergence, self.delta)

    def with_pairs(self, pairs: list[tuple[Side, Side]], setting: Setting) -> DivergenceDistP:
        return DivergenceDistP(self.epsilon, pairs, self.divergence, self.delta)

    def _fields(self) -> list[tuple[str, str | None]]:
        return [*super()._fields(), ("divergence", repr(self.divergence.name))]

    @property
    def linear(self) -> bool:  # type: ignore[override]
        """An LP for linear divergences, and for any divergence when every pair's bound is 0
        (an equality) or vacuous (:meth:`vacuous`)."""
        eps = self.pair_epsilons()
        return self.divergence.linear or all(e == 0 or self.vacuous(t) for t, e in enumerate(eps))

    def vacuous(self, t: int) -> bool:
        """Whether pair ``t`` constrains nothing (both directions, :meth:`directions`)."""
        return not any(self.directions(t))

    def directions(self, t: int) -> tuple[bool, bool]:
        """Which of D(λ_a K_a ‖ λ_b K_b) <= bound and D(λ_b K_b ‖ λ_a K_a) <= bound constrain
        anything. With one shared mechanism the data-processing inequality gives
        D(λ_a K ‖ λ_b K) <= D(λ_a ‖ λ_b) for every channel K and every f-divergence, so a
        direction whose bound is at least the inputs' divergence holds for every mechanism."""
        a, b = self.pairs[t]
        if a.key != b.key:
            return True, True
        div, bound = self.divergence, self.epsilon * self.pair_scales()[t]
        return tuple(not bool(bound >= float(np.max(div.value(p.distribution, q.distribution))))
                     for p, q in ((a, b), (b, a)))

    def structure(self) -> tuple:
        if self.divergence.name == "max":
            return super().structure()
        return tuple((bool(e > 0), self.directions(t)) for t, e in enumerate(self.pair_epsilons()))

    def pair_constraints(self, coefficients: Coefficients, t: int, pa: Any, pb: Any, scale: float) -> list:
        """D(pa ‖ pb) <= ε·scale and D(pb ‖ pa) <= ε·scale. The max divergence is the core
        DistP's (chains beyond e^20, expm1 for small ε); for every divergence a bound of 0 is
        the equality pa = pb (a divergence vanishes only on equal distributions), which keeps
        conic solvers off a degenerate cone, and a vacuous pair (:meth:`vacuous`) adds nothing."""
        div = self.divergence
        if div.name == "max":
            return super().pair_constraints(coefficients, t, pa, pb, scale)
        if self.epsilon * scale == 0:
            return [pa == pb]
        forward, backward = self.directions(t)
        if not (forward or backward):
            return []
        c = coefficients.coefficient(self, f"divergence_bound_{t}", lambda eps, s=scale: div.coefficient(eps * s))
        return ((div.constraints(pa, pb, c, self.delta) if forward else [])
                + (div.constraints(pb, pa, c, self.delta) if backward else []))

    def levels(self, mechs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per pair: max of D both ways (or the hockey-stick δ at the pair's ε when δ > 0)."""
        out = []
        for (p, q), eps in zip(self._outputs(mechs), self.pair_epsilons()):
            both = _levels(self.divergence, np.stack([p, q]), np.stack([q, p]), self.delta,
                           np.array([eps, eps]))
            out.append(float(both.max()))
        return np.asarray(out, dtype=float)

    def _requested(self) -> dict:
        req = {"epsilon": self.epsilon, "divergence": self.divergence.name}
        if self.delta > 0:
            req["delta"] = self.delta
        return req

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """D∞ only (:meth:`DistP.repair`, the exact mixing weight); the other divergences are
        left to the certificate's mixing step."""
        return super().repair(mechs) if self.divergence.name == "max" else mechs

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        levels = self.levels(mechs)
        names = [f"{a.name}~{b.name}" for a, b in self.pairs]
        worst = int(np.argmax(levels))
        detail = {"worst_pair": names[worst]}
        if self.delta > 0:
            return Audit(self.name, self._requested(), {"epsilon": self.epsilon, "delta": float(levels.max())},
                         bool(levels.max() <= self.delta + AUDIT_TOL), detail)
        achieved = float(levels.max())
        return Audit(self.name, self._requested(), {"epsilon": achieved},
                     achieved <= self.epsilon + AUDIT_TOL, detail)


class DivergenceXDistP(DivergenceDistP):
    """(ε, W, D)-XDistP (Kawamoto and Murakami 2019, Def. 12): D(λ_a K_a ‖ λ_b K_b) <= ε·W(λ_a, λ_b), both ways,
    W = W1 (``w1``), W∞ (``winf``) or total variation (``tv``) over the ground metric of the
    inputs. The audit reports the achieved ε as max over pairs of D / W."""

    name = "xdistp"
    DISTANCES = ("w1", "winf", "tv")

    def __init__(self, epsilon: float, pairs: Sequence[tuple[SideLike, SideLike]], distance: str = "w1",
                 cost: Any = None, divergence: str | Divergence = "kl", delta: float = 0.0):
        super().__init__(epsilon, pairs, divergence, delta)
        self.distance, self.cost, self.widths = xdistp_widths(self.pairs, distance, cost)

    def complete(self) -> bool:
        return self.cost is not None

    def with_pairs(self, pairs: list[tuple[Side, Side]], setting: Setting) -> DivergenceXDistP:
        return DivergenceXDistP(self.epsilon, pairs, self.distance, bound_cost(self, setting),
                                self.divergence, self.delta)

    def _fields(self) -> list[tuple[str, str | None]]:
        return [*super()._fields(), ("distance", repr(self.distance))]

    def pair_scales(self) -> np.ndarray:
        return self.widths

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        return width_scaled_audit(self, mechs, self._requested())


# ---------------------------------------------------------------------------------------------
# problem-file tables (the distribution notions' tables are read in distp.py)

def table_adjacency(table: dict, declared: Declarations) -> Any:
    """``adjacency = "all"`` (default: every pair of distinct inputs) or [[a, b], ...] input labels,
    as index pairs."""
    key = f"{declared.key}.adjacency"
    inputs = declared.inputs
    value = table.get("adjacency", "all")
    if value == "all":
        if len(inputs) < 2:
            raise declared.error("needs at least two inputs", key)
        return np.triu_indices(len(inputs), 1)
    if isinstance(value, str):
        raise declared.error(f"expected \"all\" or a list of [a, b] input label pairs, "
                             f"got {value!r}", key)
    out = []
    for a, b in read_name_pairs(value, declared.file, key):
        for label in (a, b):
            if label not in inputs:
                raise declared.error(f"unknown input label '{label}'", key)
        if a == b:
            raise declared.error(f"pair [{a!r}, {b!r}] must name two different inputs", key)
        out.append((inputs.index(a), inputs.index(b)))
    return out


def divergence_dp_from_table(table: dict, declared: Declarations) -> DivergenceDP:
    """``notion = "divergence-dp"``: ``epsilon``; optional ``delta``, ``divergence`` and
    ``adjacency``."""
    declared.allow(table, {"epsilon", "delta", "divergence", "adjacency"})
    eps = declared.epsilon(table)
    delta = declared.delta(table)
    divergence = declared.divergence(table, delta)
    return DivergenceDP(eps, divergence, table_adjacency(table, declared), delta,
                        declared.inputs.labels)


def divergence_xdp_from_table(table: dict, declared: Declarations) -> DivergenceXDP:
    """``notion = "divergence-xdp"``: as divergence-dp, the level scaled by the ground metric's
    distance between the inputs of a pair."""
    declared.allow(table, {"epsilon", "delta", "divergence", "adjacency"})
    eps = declared.epsilon(table)
    delta = declared.delta(table)
    divergence = declared.divergence(table, delta)
    distances = declared.input_distances(f"{declared.key}.notion")
    return DivergenceXDP(eps, divergence, distances, table_adjacency(table, declared), delta,
                         declared.inputs.labels)
