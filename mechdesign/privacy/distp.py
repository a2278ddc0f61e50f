"""Distribution privacy (DistP), extended DistP (XDistP) and profile-based privacy.

A pair compares the output distributions of two sides, each a distribution λ over the inputs
and the key of the mechanism applied to it: λ_a K_a versus λ_b K_b. With one shared mechanism
both keys are "default" (Kawamoto and Murakami, “Local Distribution Obfuscation via Probability Coupling”, Allerton 2019, Def. 6); with per-context mechanisms each side is its own
context (Kawamoto and Murakami 2019, Def. 15; Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019, Def. 2 — profile-based privacy is exactly DistP over the
profile graph's edges with per-context mechanisms).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.errors import ProblemError, float_array
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.setting import Setting, probabilities
from mechdesign.core.tables import read_name_pairs
from mechdesign.privacy.base import (
    DEFAULT,
    MAX_LOG_COEFFICIENT,
    Notion,
    check_delta,
    check_epsilon,
    hockey_stick,
    log_ratio_max,
)
from mechdesign.privacy.ldp import chain, links

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations


@dataclass(frozen=True, eq=False)
class Side:
    """One side of a DistP pair: a named input distribution and the mechanism key it goes through."""

    name: str
    distribution: np.ndarray
    key: str = DEFAULT

    def __repr__(self) -> str:
        key = "" if self.key == DEFAULT else f", key={self.key!r}"
        return f"Side({self.name!r}, {preview.array(self.distribution)}{key})"


#: one side of a pair as given: a Side, a mechanism context's name (resolved by ``bind``) or a
#: distribution over the inputs (an array, under the shared mechanism)
SideLike = Side | str | Any


class DistP(Notion):
    """(ε, δ)-distribution privacy over pairs: D∞^δ(λ_a K_a ‖ λ_b K_b) <= ε both ways.

    δ = 0 is elementwise, (λ_a K_a)[y] <= e^ε (λ_b K_b)[y]; δ > 0 is the hockey-stick sum
    Σ_y max(0, (λ_a K_a)[y] − e^ε (λ_b K_b)[y]) <= δ. Each pair may carry its own ε (XDistP).

    Compiled so that every coefficient is well scaled whatever ε (see :meth:`pair_constraints`):
    a pair at ε = 0 is the equality λ_a K_a = λ_b K_b; a small ε puts e^ε − 1 (computed with
    expm1) on its own, d = λ_a K_a − λ_b K_b, −(e^ε − 1) λ_a K_a <= d <= (e^ε − 1) λ_b K_b,
    instead of coefficients 1 + 1e-9 that the solver's feasibility tolerance cannot tell from 1;
    ε > 20 goes through a ratio chain of links e^{ε/k} <= e^10
    (:func:`~mechdesign.privacy.ldp.chain`).

    Parameters
    ----------
    epsilon : float
    pairs : sequence of (side, side)
        The pairs of input distributions to hide between. A side is a :class:`Side`, an array
        (a distribution over the inputs under the shared mechanism; the sides of pair t are
        named ``p<t>`` and ``q<t>`` in the certificate) or the name of one of the problem's
        mechanism contexts (that context's distribution through its own mechanism, filled in
        by :meth:`bind`).
    delta : float
        δ of D∞^δ.

    Examples
    --------
    >>> DistP(0.3, [([0.7, 0.3], [0.4, 0.6])])
    DistP(epsilon=0.3, pairs=[p0~q0])
    """

    name = "distp"

    def __init__(self, epsilon: float, pairs: Sequence[tuple[SideLike, SideLike]], delta: float = 0.0):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.pairs = side_pairs(pairs)

    #: what the notion is called in messages, what to give it instead of contexts, and the
    #: argument that names the contexts
    what: str = "distribution privacy between contexts"
    instead: str = "the pairs as distributions"
    pairs_key: str = "pairs"

    def bind(self, setting: Setting) -> DistP:
        """The contexts named in ``pairs`` as their distributions and mechanisms; every side's
        distribution checked to be a probability vector over the problem's inputs."""
        n = len(setting.inputs)
        resolved = []
        for t, pair in enumerate(self.pairs):
            sides = []
            for side in pair:
                if isinstance(side, str):
                    contexts = setting.need_contexts(self.what, self.pairs_key, self.instead)
                    if side not in contexts:
                        raise ProblemError(f"'{side}' is not a mechanism context; expected one of: "
                                           f"{', '.join(contexts)}", key=self.pairs_key)
                    side = Side(side, np.asarray(contexts[side], dtype=float), side)
                probabilities(side.distribution, n, f"{self.pairs_key}[{t}]")
                sides.append(side)
            resolved.append(tuple(sides))
        if all(a is b for old, new in zip(self.pairs, resolved) for a, b in zip(old, new)) and self.complete():
            return self
        return self.with_pairs(resolved, setting)

    def complete(self) -> bool:
        """Whether nothing is left for :meth:`bind` to fill in besides context names."""
        return True

    def with_pairs(self, pairs: list[tuple[Side, Side]], setting: Setting) -> DistP:
        """The same notion over resolved ``pairs`` (and whatever else ``setting`` fills in)."""
        return DistP(self.epsilon, pairs, self.delta)

    def _fields(self) -> list[tuple[str, str | None]]:
        return [("epsilon", preview.number(self.epsilon)), ("pairs", pair_names(self.pairs)),
                ("delta", preview.number(self.delta) if self.delta else None)]

    def __repr__(self) -> str:
        return preview.call(type(self).__name__, self._fields())

    def pair_scales(self) -> np.ndarray:
        """Per pair, the factor on ε (1 here; the distance W(λ, λ') for XDistP)."""
        return np.ones(len(self.pairs))

    def pair_epsilons(self) -> np.ndarray:
        return self.epsilon * self.pair_scales()

    def keys(self, available: list[str]) -> list[str]:
        return sorted({s.key for pair in self.pairs for s in pair})

    def structure(self) -> tuple:
        """Per pair: 0 for an equality (ε·scale = 0), else the number of chain links."""
        eps = self.pair_epsilons()
        return tuple(0 if e == 0 else links(e) for e in eps)

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        for t, ((a, b), scale) in enumerate(zip(self.pairs, self.pair_scales())):
            out += self.pair_constraints(coefficients, t, a.distribution @ K[a.key], b.distribution @ K[b.key], scale)
        return out

    def pair_constraints(self, coefficients: Coefficients, t: int, pa: Any, pb: Any, scale: float) -> list:
        """D∞^δ(pa ‖ pb) <= ε·scale and D∞^δ(pb ‖ pa) <= ε·scale for the output distributions
        ``pa`` = λ_a K_a, ``pb`` = λ_b K_b of pair ``t``.

        δ = 0: pa = pb when ε·scale = 0; for ε·scale <= 20, with d = pa − pb,
        d <= (e^{ε s} − 1) pb and −d <= (e^{ε s} − 1) pa; beyond, pa <= e^{ε s} pb (and the
        reverse) each through a chain of k links e^{ε s/k}. δ > 0: Σ_y max(0, pa − e^{ε s} pb)
        <= δ, e^{ε s} pb as c·W with W <= c^{k−1} pb chained when k > 1.
        """
        k = 0 if self.epsilon * scale == 0 else links(self.epsilon * scale)
        if self.delta == 0 and k == 0:
            return [pa == pb]
        if self.delta == 0 and k == 1:
            c = coefficients.coefficient(self, f"expm1_epsilon_{t}", lambda eps, s=scale: np.expm1(min(eps * s, 20.0)))
            d = cp.Variable(pa.shape)
            return [d == pa - pb, d <= c * pb, -d <= c * pa]
        kk = max(k, 1)
        c = coefficients.coefficient(self, f"exp_epsilon_{t}_link{kk}",
                                     lambda eps, s=scale, n=kk: np.exp(min(eps * s / n, 20.0)))
        if self.delta == 0:
            return chain(pa, pb, k, c) + chain(pb, pa, k, c)
        out = []
        for p, q in ((pa, pb), (pb, pa)):
            if kk > 1:
                w = cp.Variable(q.shape, bounds=[0.0, 1.0])
                out += chain(w, q, kk - 1, c)
                q = w
            out.append(cp.sum(cp.pos(p - c * q)) <= self.delta)
        return out

    def _outputs(self, mechs: Mapping[str, np.ndarray]) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        for a, b in self.pairs:
            yield a.distribution @ mechs[a.key], b.distribution @ mechs[b.key]

    def levels(self, mechs: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per pair: the smallest ε (δ = 0) or the δ at the requested ε (δ > 0)."""
        out = []
        for (p, q), eps in zip(self._outputs(mechs), self.pair_epsilons()):
            if self.delta == 0:
                out.append(max(log_ratio_max(p, q), log_ratio_max(q, p)))
            else:
                out.append(max(float(hockey_stick(p, q, eps)), float(hockey_stick(q, p, eps))))
        return np.asarray(out, dtype=float)

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Mix every mechanism with the uniform channel by the smallest weight t that restores
        the pure ratios exactly (max divergence only; with δ > 0 the pure ratios make every
        hockey-stick sum 0).

        Mixing K ↦ (1 − t)K + t·1u (u uniform over the outputs) maps every output distribution
        p = λK to (1 − t)p + t u, so q' <= e^ε p' for a pair's outputs p, q holds iff
        t >= v / (v + (1 − e^{−ε}) u) with v = e^{−ε} q − p, wherever v > 0. Beyond e^20 the LP
        leaves entries of order e^{−ε} at 0 (below its tolerance); this gives them back at
        cost O(e^{−ε}) instead of the certificate's bisection on the weight (whose smallest
        step, ~1e-23, is far above e^{−ε} there). At ε <= 20 the certificate's own mixing step
        does this and records it.
        """
        eps = self.pair_epsilons()
        if not mechs or not np.any(eps > MAX_LOG_COEFFICIENT):
            return mechs
        allowed = self.delta if self.delta > 0 else eps
        if np.all(self.levels(mechs) <= allowed + AUDIT_TOL / 2):
            return mechs
        u = 1.0 / next(iter(mechs.values())).shape[1]
        t = ratio_mixing_weight(self._outputs(mechs), eps, u)
        if self.delta > 0:  # the pure weight suffices; the hockey sticks may need far less
            t = smallest_weight(lambda w: bool(np.all(self.levels(mix_uniform(mechs, w, u)) <= allowed)), t)
        return mix_uniform(mechs, t, u)

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        levels = self.levels(mechs)
        names = [f"{a.name}~{b.name}" for a, b in self.pairs]
        worst = int(np.argmax(levels))
        if self.delta > 0:
            return Audit(self.name, {"epsilon": self.epsilon, "delta": self.delta},
                         {"epsilon": self.epsilon, "delta": float(levels.max())},
                         bool(levels.max() <= self.delta + AUDIT_TOL), {"worst_pair": names[worst]})
        achieved = float(levels.max())
        return Audit(self.name, {"epsilon": self.epsilon}, {"epsilon": achieved},
                     achieved <= self.epsilon + AUDIT_TOL, {"worst_pair": names[worst]})


class XDistP(DistP):
    """Extended DistP (Kawamoto and Murakami 2019, Def. 8): pair (λ, λ') gets ε·W(λ, λ'), W = W1, W∞ or TV over
    the ground metric of the inputs. The audit reports the achieved ε as max over pairs of the
    pair's level divided by its distance.

    Parameters
    ----------
    epsilon : float
    pairs : sequence of (side, side)
        As for :class:`DistP`.
    distance : str
        ``w1`` (default), ``winf`` or ``tv``.
    cost : array (|X|, |X|), optional
        The ground distances between the inputs; by default the problem's metric's (filled in
        by :meth:`bind`).
    delta : float
    """

    name = "xdistp"
    DISTANCES = ("w1", "winf", "tv")

    def __init__(self, epsilon: float, pairs: Sequence[tuple[SideLike, SideLike]], distance: str = "w1",
                 cost: Any = None, delta: float = 0.0):
        super().__init__(epsilon, pairs, delta)
        self.distance, self.cost, self.widths = xdistp_widths(self.pairs, distance, cost)

    def complete(self) -> bool:
        return self.cost is not None

    def with_pairs(self, pairs: list[tuple[Side, Side]], setting: Setting) -> XDistP:
        return XDistP(self.epsilon, pairs, self.distance, bound_cost(self, setting), self.delta)

    def _fields(self) -> list[tuple[str, str | None]]:
        return [*super()._fields(), ("distance", repr(self.distance))]

    def pair_scales(self) -> np.ndarray:
        return self.widths

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        return width_scaled_audit(self, mechs, {"epsilon": self.epsilon, **({"delta": self.delta} if self.delta else {})})


XDISTP_DISTANCES = XDistP.DISTANCES


def side_pairs(pairs: Any) -> list[tuple[SideLike, SideLike]]:
    """The pairs as given, each side a Side, a context name or a distribution (as a Side named
    ``p<t>`` / ``q<t>`` under the shared mechanism); ProblemError naming ``pairs`` otherwise."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise ProblemError(f"expected a list of pairs of distributions, got {pairs!r}", key="pairs")
    out = []
    for t, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ProblemError(f"pair {t} must be two sides (distributions, Sides or context names), "
                               f"got {pair!r}", key="pairs")
        out.append(tuple(_side(v, f"{'pq'[i]}{t}", t) for i, v in enumerate(pair)))
    if not out:
        raise ProblemError("needs at least one pair of distributions", key="pairs")
    return out


def _side(value: Any, name: str, t: int) -> SideLike:
    if isinstance(value, (Side, str)):
        return value
    dist = float_array(value, 1, f"each side of pair {t} to be a distribution (a vector of probabilities), "
                       "a Side or a context name", "pairs")
    return Side(name, dist)


def pair_names(pairs: Sequence[tuple[SideLike, SideLike]]) -> str:
    """The pairs as "[a~b, c~d]" (the first few)."""
    names = [f"{_side_name(a)}~{_side_name(b)}" for a, b in pairs]
    return "[" + preview.labels(names, 4) + "]"


def _side_name(side: SideLike) -> str:
    return side if isinstance(side, str) else side.name


def xdistp_widths(pairs: Sequence[tuple[SideLike, SideLike]], distance: str,
                  cost: Any) -> tuple[str, np.ndarray | None, np.ndarray | None]:
    """(distance, cost, widths) of an XDistP notion; the widths wait for :meth:`DistP.bind`
    while a side is a context name or the cost is not given."""
    if distance not in XDISTP_DISTANCES:
        raise ProblemError(f"unknown distance '{distance}'; expected one of {', '.join(XDISTP_DISTANCES)}",
                           key="distance")
    cost = None if cost is None else np.asarray(cost, dtype=float)
    if cost is None or any(isinstance(s, str) for pair in pairs for s in pair):
        return distance, cost, None
    n = len(pairs[0][0].distribution)
    if cost.shape != (n, n):
        raise ProblemError(f"expected a {n} x {n} matrix of distances between the inputs, got shape "
                           f"{cost.shape}", key="cost")
    return distance, cost, distribution_widths(pairs, distance, cost)[1]


def bound_cost(notion: DistP, setting: Setting) -> np.ndarray:
    """An XDistP notion's cost, or the problem's metric's distances between the inputs."""
    if notion.cost is not None:
        return notion.cost
    return setting.input_distances(f"{notion.name} (distances between distributions)", "cost")


def mix_uniform(mechs: Mapping[str, np.ndarray], t: float, u: float) -> dict[str, np.ndarray]:
    """(1 − t) K + t·1u for every mechanism K (u: the uniform probability of an output)."""
    return {key: (1 - t) * k + t * u for key, k in mechs.items()}


def smallest_weight(holds: Callable[[float], bool], hi: float, steps: int = 60) -> float:
    """The smallest mixing weight in [1e-300, hi] for which ``holds`` (monotone in the weight,
    true at ``hi``), by bisection on its logarithm: the certificate's own bisection stops at
    ~1e-23, far above the e^{−ε} a huge ε needs."""
    if hi <= 0 or holds(1e-300):
        return min(hi, 1e-300)
    lo_log, hi_log = -300.0, float(np.log10(hi))
    for _ in range(steps):
        mid = 0.5 * (lo_log + hi_log)
        if holds(10.0 ** mid):
            hi_log = mid
        else:
            lo_log = mid
    return 10.0 ** hi_log


def ratio_mixing_weight(pairs: Iterable[tuple[np.ndarray, np.ndarray]], epsilons: Iterable[Any],
                        u: float) -> float:
    """The smallest t in [0, 1] with q' <= e^ε p' and p' <= e^ε q' for every pair (p, q) of
    distributions (rows or arrays of rows) and its ε, where p' = (1 − t)p + t u (u the uniform
    probability of an output): t >= v / (v + (1 − e^{−ε'}) u) wherever v = e^{−ε'} q − p > 0, with
    ε' = ε + AUDIT_TOL / 2 so that a pair at ε = 0 only needs the audit's tolerance."""
    t = 0.0
    for (p, q), e in zip(pairs, epsilons):
        # beyond e^700 ask for e^700 only: e^{−ε} would leave the normal floats (and from
        # e^745 underflow to 0, asking for nothing)
        shrink = np.exp(-np.minimum(e + AUDIT_TOL / 2, 700.0))
        for lo, hi in ((p, q), (q, p)):
            v = shrink * np.asarray(hi) - np.asarray(lo)
            v = v[v > 0]
            t = max(t, float((v / (v + (1.0 - shrink) * u)).max(initial=0.0)))
    return min(1.0, t * (1 + 1e-9))


def distribution_widths(pairs: Sequence[tuple[Side, Side]], distance: str,
                        cost: np.ndarray) -> tuple[str, np.ndarray]:
    """W(λ, λ') for every pair of sides (W = W1, W∞ or TV over the inputs' ground ``cost``)."""
    if distance not in XDISTP_DISTANCES:
        raise ProblemError(f"unknown distance '{distance}'; expected one of {', '.join(XDISTP_DISTANCES)}",
                           key="distance")
    from mechdesign.transport.coupling import distance as distribution_distance

    return distance, np.array([float(distribution_distance(a.distribution, b.distribution, distance, cost=cost))
                               for a, b in pairs])


def per_unit(levels: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """level / width, with 0/0 = 0 and x/0 = ∞ (x > AUDIT_TOL)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(widths > 0, levels / np.where(widths > 0, widths, 1.0),
                        np.where(levels <= AUDIT_TOL, 0.0, np.inf))


def width_scaled_audit(notion: DistP, mechs: Mapping[str, np.ndarray], requested: dict) -> Audit:
    """The XDistP audit (any divergence): achieved ε = max over pairs of level / W(λ, λ');
    a pair at W = 0 with a positive level has no finite ε. With δ > 0, the largest δ."""
    levels = notion.levels(mechs)
    names = [f"{a.name}~{b.name}" for a, b in notion.pairs]
    detail = {"distance": notion.distance, "widths": dict(zip(names, notion.widths.tolist()))}
    if notion.delta > 0:
        return Audit(notion.name, requested, {"epsilon": notion.epsilon, "delta": float(levels.max())},
                     bool(levels.max() <= notion.delta + AUDIT_TOL), detail)
    achieved = float(per_unit(levels, notion.widths).max())
    return Audit(notion.name, requested, {"epsilon": achieved}, achieved <= notion.epsilon + AUDIT_TOL, detail)


class ProfilePrivacy(DistP):
    """(G, ε)-profile-based privacy (Geumlek and Chaudhuri 2019, Def. 2): for every edge (P_i, P_j) of the profile
    graph, P_i K_i <= e^ε P_j K_j elementwise, both ways, with one mechanism per profile.

    Parameters
    ----------
    epsilon : float
    edges : sequence of (name, name)
        The edges of the profile graph.
    profiles : mapping name -> distribution, optional
        The profiles; by default the problem's mechanism contexts (filled in by :meth:`bind`).
    shared : bool
        With ``profiles``: one shared mechanism for every profile instead of one each.

    Examples
    --------
    >>> ProfilePrivacy(0.5, [("a", "b")])
    ProfilePrivacy(epsilon=0.5, edges=[a~b])
    """

    name = "profile"
    what = "profile privacy"
    instead = "the notion its profiles"
    pairs_key = "edges"

    def __init__(self, epsilon: float, edges: Sequence[tuple[str, str]],
                 profiles: Mapping[str, Any] | None = None, shared: bool = False):
        edges = side_pairs(edges)
        if not all(isinstance(v, str) for pair in edges for v in pair):
            raise ProblemError("expected edges between profile names", key="edges")
        if profiles is None:  # the problem's contexts, resolved by bind
            super().__init__(epsilon, edges, 0.0)
            return
        sides = {name: Side(name, np.asarray(vec, float), DEFAULT if shared else name)
                 for name, vec in profiles.items()}
        for a, b in edges:
            for node in (a, b):
                if node not in sides:
                    raise ProblemError(f"edge names unknown profile '{node}'", key="edges")
        super().__init__(epsilon, [(sides[a], sides[b]) for a, b in edges], 0.0)

    def with_pairs(self, pairs: list[tuple[Side, Side]], setting: Setting) -> ProfilePrivacy:
        profiles = {s.name: s.distribution for pair in pairs for s in pair}
        return ProfilePrivacy(self.epsilon, [(a.name, b.name) for a, b in pairs], profiles)

    def _fields(self) -> list[tuple[str, str | None]]:
        return [("epsilon", preview.number(self.epsilon)), ("edges", pair_names(self.pairs))]


# ---------------------------------------------------------------------------------------------
# problem-file tables. A divergence other than "max" gives the divergence variants, whose module
# builds on this one and is therefore imported when such a table is read.

def table_sides(table: dict, declared: Declarations) -> list[tuple[Side, Side]]:
    """The table's ``pairs`` of names as pairs of sides: mechanism contexts when the file declares
    contexts (each with its own mechanism), else named distributions under the shared mechanism."""
    key = f"{declared.key}.pairs"
    out = []
    for a, b in read_name_pairs(table.get("pairs"), declared.file, key):
        sides = []
        for name in (a, b):
            if declared.contexts is not None:
                if name not in declared.contexts:
                    raise declared.error(f"'{name}' is not a mechanism context; expected one of: "
                                         f"{', '.join(declared.contexts)}", key)
                sides.append(Side(name, declared.contexts[name], name))
            else:
                sides.append(Side(name, declared.distribution(name, key), DEFAULT))
        out.append(tuple(sides))
    return out


def distp_from_table(table: dict, declared: Declarations) -> Notion:
    """``notion = "distp"``: ``epsilon``, ``pairs``, optional ``delta`` and ``divergence``."""
    declared.allow(table, {"epsilon", "delta", "pairs", "divergence"})
    eps = declared.epsilon(table)
    delta = declared.delta(table)
    divergence = declared.divergence(table, delta)
    pairs = table_sides(table, declared)
    if divergence == "max":
        return DistP(eps, pairs, delta)
    from mechdesign.privacy.divergence import DivergenceDistP
    return DivergenceDistP(eps, pairs, divergence, delta)


def xdistp_from_table(table: dict, declared: Declarations) -> Notion:
    """``notion = "xdistp"``: as distp, the level scaled by the ``distance`` (default "w1") between
    the paired distributions under the ground metric."""
    declared.allow(table, {"epsilon", "delta", "pairs", "distance", "divergence"})
    key = declared.key
    eps = declared.epsilon(table)
    delta = declared.delta(table)
    divergence = declared.divergence(table, delta)
    pairs = table_sides(table, declared)
    cost = declared.input_distances(f"{key}.notion")
    distance = table.get("distance", "w1")
    if not isinstance(distance, str):
        raise declared.error(f"expected a distance name, got {distance!r}", f"{key}.distance")
    try:
        if divergence == "max":
            return XDistP(eps, pairs, distance, cost, delta)
        from mechdesign.privacy.divergence import DivergenceXDistP
        return DivergenceXDistP(eps, pairs, distance, cost, divergence, delta)
    except ProblemError as exc:
        raise declared.error(exc.detail, f"{key}.{exc.key or 'distance'}")


def profile_from_table(table: dict, declared: Declarations) -> ProfilePrivacy:
    """``notion = "profile"``: ``epsilon`` and ``edges`` between mechanism contexts (profiles)."""
    declared.allow(table, {"epsilon", "edges"})
    key = declared.key
    eps = declared.epsilon(table)
    if declared.contexts is None:
        raise declared.error("profile privacy needs one mechanism per profile: set [mechanism] "
                             "contexts", f"{key}.notion")
    edges = read_name_pairs(table.get("edges"), declared.file, f"{key}.edges", "edges")
    for a, b in edges:
        for name in (a, b):
            if name not in declared.contexts:
                raise declared.error(f"'{name}' is not a mechanism context; expected one of: "
                                     f"{', '.join(declared.contexts)}", f"{key}.edges")
    return ProfilePrivacy(eps, edges, declared.contexts)
