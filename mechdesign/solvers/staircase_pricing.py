"""Pricing for the staircase solver: the pattern of largest reduced utility, or a proven upper
bound on it.

A staircase pattern is s = 1 + (e^ε − 1)·1_T for a set T of inputs; with the master's duals u
(one per row sum), its reduced utility is

    r(T) = μ(s)/σ − u·s = μ(s)/σ − Σ_x u_x − (e^ε − 1) Σ_{x ∈ T} u_x

(σ: the unit the master's utilities are divided by). μ(s) is a function of the feature sums
F·1_T of the objective (:attr:`SublinearUtility.features`), so r is a function of the sums of
the columns of A = [F; u] over T. Three pricings, each exact or with a proven bound:

* :class:`EnumerationPricing` — every one of the 2^k sets, for k <= :data:`ENUMERATE_UP_TO`:
  the sums over all sets are built by doubling (the sums with input b are those without it plus
  A[:, b]), and μ on every set, which does not depend on u, once;
* :class:`ZonotopePricing` — when μ is a convex function of the feature sums (the
  f-divergences): r is then convex in the sums A z, and its maximum over z ∈ [0, 1]^k is at a
  vertex of the zonotope {A z}. With three rows (two hypotheses and u) the vertices are the
  sign patterns {x : c·A[:, x] > 0} of generic directions c, all found among the directions near
  each intersection c ∝ A_i × A_j of two generators' planes: O(k²) candidate sets, exact;
* :class:`BranchPricing` — mutual information beyond the enumeration: branch and bound
  (:mod:`mechdesign.solvers.staircase_branch`) within a node budget, returning the best sets
  and a proven upper bound (exact when the search ends).

The bound each returns covers the round-off of its own arithmetic (:data:`ROUNDING`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: up to this many inputs the mutual-information pricing enumerates every set (2^20 sums)
ENUMERATE_UP_TO = 20
#: up to this many inputs the f-divergence pricing enumerates too (the zonotope is cheaper beyond)
ENUMERATE_CONVEX_UP_TO = 12
#: relative round-off allowance added to every proven bound on the reduced utility
ROUNDING = 1e-12
#: relative tolerance below which a generator counts as lying in a plane (zonotope pricing)
COPLANAR = 1e-10
#: candidate sets evaluated at once by the zonotope pricing
BLOCK = 50_000


@dataclass
class Priced:
    """What a pricing found: the best sets (boolean masks, best first) with their reduced
    utilities, and a proven upper bound on max_T r(T)."""

    masks: np.ndarray
    values: np.ndarray
    bound: float
    exact: bool
    method: str


def pattern_masks(indices: np.ndarray, k: int) -> np.ndarray:
    """The sets numbered ``indices`` (bit x of the number: x ∈ T) as boolean masks (N, k)."""
    return ((np.asarray(indices, dtype=np.int64)[:, None] >> np.arange(k)) & 1).astype(bool)


def subset_sums(A: np.ndarray) -> np.ndarray:
    """(d, 2^k): the sums of the columns of A (d, k) over every set, numbered as in
    :func:`pattern_masks`."""
    d, k = A.shape
    sums = np.zeros((d, 1 << k))
    for b in range(k):
        sums[:, 1 << b:1 << (b + 1)] = sums[:, :1 << b] + A[:, b:b + 1]
    return sums


def best_of(values: np.ndarray, keep: int) -> np.ndarray:
    """The indices of the ``keep`` largest values, largest first."""
    keep = min(keep, values.size)
    top = np.argpartition(-values, keep - 1)[:keep]
    return top[np.argsort(-values[top], kind="stable")]


class StaircasePricing:
    """The reduced utilities of one objective's patterns at one ε (see the module docstring)."""

    method = "pricing"

    def __init__(self, objective, epsilon: float, unit: float):
        self.objective, self.epsilon, self.unit = objective, float(epsilon), float(unit)
        self.growth = math.expm1(self.epsilon)
        self.features = np.asarray(objective.features, dtype=float)
        self.k = self.features.shape[1]

    def utilities(self, masks: np.ndarray) -> np.ndarray:
        """μ(s)/σ of each set's pattern."""
        return self.objective.pattern_utility(self.features @ masks.T.astype(float), self.epsilon) / self.unit

    def reduced(self, masks: np.ndarray, u: np.ndarray) -> np.ndarray:
        """r(T) of each set."""
        return self.utilities(masks) - u.sum() - self.growth * (masks.astype(float) @ u)

    def allowance(self, u: np.ndarray, top: float) -> float:
        """The round-off a bound on r must add: relative to the terms' sizes."""
        return ROUNDING * (1.0 + abs(top) + (1.0 + self.growth) * float(np.abs(u).sum()) * self.k)

    def price(self, u: np.ndarray, keep: int, slack: float) -> Priced:
        raise NotImplementedError


class EnumerationPricing(StaircasePricing):
    """Every set (k <= :data:`ENUMERATE_UP_TO`); μ on every set computed once."""

    method = "enumeration"

    def __init__(self, objective, epsilon: float, unit: float):
        super().__init__(objective, epsilon, unit)
        self.all_utilities = objective.pattern_utility(subset_sums(self.features), self.epsilon) / self.unit

    def price(self, u: np.ndarray, keep: int, slack: float) -> Priced:
        r = self.all_utilities - u.sum() - self.growth * subset_sums(u[None, :])[0]
        top = best_of(r, keep)
        best = float(r[top[0]])
        return Priced(pattern_masks(top, self.k), r[top], best + self.allowance(u, best), True, self.method)


class ZonotopePricing(StaircasePricing):
    """The vertices of the zonotope of [features; u] (μ convex in the feature sums)."""

    method = "zonotope vertices"

    def price(self, u: np.ndarray, keep: int, slack: float) -> Priced:
        A = np.vstack([self.features, u])
        best_masks, best_values = np.zeros((0, self.k), dtype=bool), np.zeros(0)
        for block in zonotope_vertex_sets(A):
            masks = np.vstack([best_masks, block])
            values = np.concatenate([best_values, self.reduced(block, u)])
            _, first = np.unique(np.packbits(masks, axis=1), axis=0, return_index=True)
            top = first[best_of(values[first], keep)]
            best_masks, best_values = masks[top], values[top]
        best = float(best_values[0])
        return Priced(best_masks, best_values, best + self.allowance(u, best), True, self.method)


class BranchPricing(StaircasePricing):
    """Branch and bound for mutual information (k > :data:`ENUMERATE_UP_TO`)."""

    method = "branch and bound"
    #: nodes per pricing round before the search stops with the bound of its open nodes
    node_limit = 2_000_000

    def price(self, u: np.ndarray, keep: int, slack: float) -> Priced:
        from mechdesign.solvers.staircase_branch import best_mutual_information_sets

        # r(T) = c·[G(π(T)) − Σ_T w_x] − Σ u with c = 1/(σ ln 2) and w = (e^ε − 1) u / c
        c = 1.0 / (self.unit * math.log(2.0))
        weights = self.growth * u / c
        values, masks, upper, complete = best_mutual_information_sets(
            self.features[0], weights, self.epsilon, slack=slack / c, node_limit=self.node_limit, keep=keep)
        reduced = c * values - u.sum()
        bound = c * upper - u.sum()
        return Priced(masks, reduced, bound + self.allowance(u, bound), complete, self.method)


def pricing_for(objective, epsilon: float, unit: float) -> StaircasePricing:
    """The pricing for an objective at ε (see the module docstring)."""
    k = np.asarray(objective.features).shape[1]
    if objective.convex_in_sums and np.asarray(objective.features).shape[0] == 2:
        if k <= ENUMERATE_CONVEX_UP_TO:
            return EnumerationPricing(objective, epsilon, unit)
        return ZonotopePricing(objective, epsilon, unit)
    if k <= ENUMERATE_UP_TO:
        return EnumerationPricing(objective, epsilon, unit)
    if objective.kind == "mutual-information":
        return BranchPricing(objective, epsilon, unit)
    raise ValueError(f"no pricing for the {objective.kind} objective over {k} inputs")


# ---------------------------------------------------------------------------------------------
# vertices of a zonotope in at most three dimensions

def zonotope_vertex_sets(A: np.ndarray) -> Iterator[np.ndarray]:
    """Blocks of boolean masks (N, k) among which is, for every vertex of the zonotope
    {A z : z ∈ [0, 1]^k} (A: at most 3 x k), a set T with A·1_T at that vertex (plus the empty
    set). Generators that vanish are never taken (they move no sum)."""
    A = np.asarray(A, dtype=float)
    k = A.shape[1]
    rows = np.abs(A).max(axis=1)
    B = (A[rows > 0] / rows[rows > 0, None]).T  # rescaling the rows maps vertices to vertices
    norms = np.linalg.norm(B, axis=1) if B.size else np.zeros(k)
    live = np.flatnonzero(norms > COPLANAR * max(float(norms.max(initial=0.0)), 1e-300))
    yield np.zeros((1, k), dtype=bool)
    if live.size == 0:
        return
    G = B[live]
    _, singular, basis = np.linalg.svd(G, full_matrices=False)
    rank = int(np.count_nonzero(singular > COPLANAR * singular[0]))
    G = G @ basis[:rank].T  # coordinates in the span of the generators
    for block in _vertex_sets(G, rank):
        out = np.zeros((block.shape[0], k), dtype=bool)
        out[:, live] = block
        yield out


def _vertex_sets(G: np.ndarray, rank: int) -> Iterator[np.ndarray]:
    if rank == 1:
        yield np.stack([G[:, 0] > 0, G[:, 0] < 0])
    elif rank == 2:
        yield planar_sets(G)
    else:
        yield from spatial_sets(G)


def planar_sets(P: np.ndarray) -> np.ndarray:
    """The sign patterns {x : d·P_x > 0} of every open arc of directions d in the plane between
    consecutive directions perpendicular to some P_x: one per vertex of the zonogon."""
    angle = np.arctan2(P[:, 1], P[:, 0])
    breaks = np.unique(np.mod(np.concatenate([angle + np.pi / 2, angle - np.pi / 2]), 2 * np.pi))
    middles = (breaks + np.roll(breaks, -1) + np.where(np.arange(breaks.size) == breaks.size - 1, 2 * np.pi, 0)) / 2
    return np.cos(middles[:, None] - angle[None, :]) > 0


def spatial_sets(G: np.ndarray) -> Iterator[np.ndarray]:
    """The candidate sets of a zonotope of full rank in three dimensions: around each line
    c ∝ G_i × G_j where two generators' planes meet, the generators off the plane spanned by
    G_i and G_j take the sign of ±c and those in it every sign pattern of the plane
    (:func:`planar_sets`); blocks of at most :data:`BLOCK` sets."""
    m = G.shape[0]
    norms = np.linalg.norm(G, axis=1)
    i, j = np.triu_indices(m, 1)
    seen: set[bytes] = set()
    step = max(1, BLOCK // (8 * m))
    for start in range(0, i.size, step):
        a, b = i[start:start + step], j[start:start + step]
        cross = np.cross(G[a], G[b])
        size = np.linalg.norm(cross, axis=1)
        good = size > COPLANAR * norms[a] * norms[b]
        a, b, normal = a[good], b[good], cross[good] / size[good, None]
        side = normal @ G.T
        flat = np.abs(side) <= COPLANAR * norms[None, :]
        pos, neg = (side > 0) & ~flat, (side < 0) & ~flat
        generic = flat.sum(axis=1) == 2
        if generic.any():
            yield _pair_sets(pos[generic], neg[generic], a[generic], b[generic])
        for r in np.flatnonzero(~generic):
            key = np.packbits(flat[r]).tobytes()
            if key in seen:
                continue
            seen.add(key)
            yield _plane_sets(G, normal[r], flat[r], pos[r], neg[r])


def _pair_sets(pos: np.ndarray, neg: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair: each side's generators with every subset of the pair (8 sets)."""
    out = []
    for base in (pos, neg):
        for take_a in (False, True):
            for take_b in (False, True):
                sets = base.copy()
                rows = np.arange(sets.shape[0])
                sets[rows, a] = take_a
                sets[rows, b] = take_b
                out.append(sets)
    return np.vstack(out)


def _plane_sets(G: np.ndarray, normal: np.ndarray, flat: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """A plane holding more than two generators: each side with every planar pattern of them."""
    helper = np.eye(3)[int(np.argmin(np.abs(normal)))]
    e1 = np.cross(normal, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    members = np.flatnonzero(flat)
    patterns = planar_sets(np.stack([G[members] @ e1, G[members] @ e2], axis=1))
    out = []
    for base in (pos, neg):
        sets = np.repeat(base[None, :], patterns.shape[0], axis=0)
        sets[:, members] = patterns
        out.append(sets)
    return np.vstack(out)
