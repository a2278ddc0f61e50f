"""Individual channel capacity of a query (Wu, Xia and He, “Achieving Dalenius’ Goal of Data Privacy with Practical Assumptions”, arXiv 2017, Def. 5, Theorem 3.1) and its
max-information counterpart under independent priors (Def. 8–9, Theorem 2.1).

A dataset is x = (x_1, …, x_n) with x_i in a finite universe X_i; a query f maps datasets to a
finite range R; a mechanism K on R (|R| x |Y|) answers f(x). The composed channel from datasets
to outputs is K[f(x), y].

Individual channel capacity (Def. 5, with the adversary's knowledge any distribution over
X_1 x … x X_n, i.e. b = 0 in Assumption 2.2):

.. math::

    C_1 = \\max_i \\max_{P \\in \\Delta(X)} I(X_i; Y).

For a fixed i, the channel from X_i to Y has rows p(y | x_i) = Σ_z P(z | x_i) K[f(x_i, z), y],
and the conditional P(· | x_i) of the other records is arbitrary (correlated knowledge), so the
row of x_i ranges over the convex hull of {K[f(x_i, z)] : z in X_{−i}}. Mutual information is
convex in the channel (Cover & Thomas Thm. 2.7.4, Wu, Xia and He 2017 Lemma 2), so the maximum is reached
at vertices: each x_i takes one fixed completion z(x_i) (Theorem 3.1's finite family). Only the
range values matter, so the family is the set of choices of one value of
R_i(x_i) = {f(x_i, z) : z} per x_i. Since capacity can only grow when rows are added, only
choices whose set of distinct values is maximal are solved.

Cost: f is evaluated on all Π_j |X_j| datasets once; then for each individual i, up to
Π_{x_i} |R_i(x_i)| channels with |X_i| rows are enumerated (deduplicated to maximal sets of
distinct rows) and each is solved by :func:`~mechdesign.information.capacity.shannon_capacity`
(milliseconds for small |X_i|). It is exponential in n and in |X_i|: meant for small datasets,
as in Wu, Xia and He’s (2017) examples. A group G of records (Def. 17) is handled by treating X_G as one
individual.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mechdesign.core.errors import ProblemError
from mechdesign.core.mechanism import Mechanism, check_stochastic
from mechdesign.information.capacity import shannon_capacity
from mechdesign.information.channel import LN2

__all__ = [
    "QueryCapacity",
    "individual_channel_capacity",
    "query_dp_epsilon",
    "query_max_information",
]


@dataclass(frozen=True)
class QueryCapacity:
    """Result of :func:`individual_channel_capacity` (bits).

    ``lower``/``upper`` bracket C_1 (the largest lower / upper bound over the family);
    ``individual`` is the maximising record (or group); ``choice`` maps each of its values to
    the range value f(x_i, z(x_i)) of the worst completion; ``channels`` is how many channels
    of the finite family were solved.
    """

    lower: float
    upper: float
    individual: tuple[int, ...]
    choice: dict = field(repr=False)
    channels: int
    per_individual: dict = field(repr=False)


def _setup(f, universes, K):
    universes = [list(u) for u in universes]
    if not universes or any(len(u) == 0 for u in universes):
        raise ProblemError("every record needs a non-empty universe", key="universes")
    K = K.matrix if isinstance(K, Mechanism) else check_stochastic(K, what="mechanism")
    datasets = list(itertools.product(*universes))
    values = []
    for x in datasets:
        v = f(x)
        try:
            v = int(v)
        except (TypeError, ValueError):
            raise ProblemError(f"f must return an index into the mechanism's rows, got {v!r}", key="f")
        if not 0 <= v < K.shape[0]:
            raise ProblemError(f"f returned {v}, outside the mechanism's {K.shape[0]} rows", key="f")
        values.append(v)
    shape = tuple(len(u) for u in universes)
    return universes, K, np.asarray(values, dtype=int).reshape(shape)


def _groups(n, groups):
    if groups is None:
        return [(i,) for i in range(n)]
    out = []
    for g in groups:
        g = tuple(sorted({int(i) for i in (g if isinstance(g, (list, tuple)) else [g])}))
        if not g or g[0] < 0 or g[-1] >= n:
            raise ProblemError(f"group {g} must list record indices in 0..{n - 1}", key="groups")
        out.append(g)
    return out


def _reachable(table: np.ndarray, group: tuple[int, ...]):
    """For each value of the group's records: the set of range values over the other records."""
    n = table.ndim
    others = [a for a in range(n) if a not in group]
    moved = np.moveaxis(table, list(group), list(range(len(group))))
    flat = moved.reshape(int(np.prod([table.shape[a] for a in group])), -1)
    keys = list(itertools.product(*[range(table.shape[a]) for a in group]))
    return keys, [sorted(set(row.tolist())) for row in flat], others


def _maximal_sets(options: list[list[int]], limit: int):
    """Distinct sets {v_1, …, v_m} with v_j in options[j], keeping only the inclusion-maximal
    ones; each with one witness choice."""
    total = 1
    for o in options:
        total *= len(o)
    if total > limit:
        raise ProblemError(f"the finite family has {total} channels (> {limit}); use fewer records "
                           "or smaller universes", key="universes")
    found: dict[frozenset, tuple] = {}
    for choice in itertools.product(*options):
        s = frozenset(choice)
        if s not in found:
            found[s] = choice
    sets = sorted(found, key=len, reverse=True)
    maximal = []
    for s in sets:
        if not any(s < t for t in maximal):
            maximal.append(s)
    return [(s, found[s]) for s in maximal]


def individual_channel_capacity(f: Callable[[tuple], int], universes: Sequence[Sequence], K,
                                groups: Sequence | None = None, tol: float = 1e-9,
                                limit: int = 200_000) -> QueryCapacity:
    """Individual channel capacity C_1 of the mechanism K answering f (Wu, Xia and He 2017, Def. 5,
    computed through Theorem 3.1's finite family; see the module docstring for the maths and
    the cost).

    Parameters
    ----------
    f : callable
        f(dataset) -> row index of K (an element of the range R = 0 … |R| − 1), where a dataset
        is a tuple with one element of each universe.
    universes : sequence of sequences
        X_1, …, X_n.
    K : array (|R|, |Y|) or Mechanism
        The mechanism on f's range.
    groups : sequence of index tuples, optional
        Compute the group channel capacity (Def. 17) of these groups instead of individuals.
    tol : float
        Gap of each capacity solve, bits.
    limit : int
        Refuse families with more choices than this (the enumeration is exponential).
    """
    universes, K, table = _setup(f, universes, K)
    best = None
    per = {}
    solved = 0
    for group in _groups(len(universes), groups):
        keys, reach, _ = _reachable(table, group)
        g_lower, g_upper, g_choice = 0.0, 0.0, None
        for s, choice in _maximal_sets(reach, limit):
            rows = sorted(s)
            solved += 1
            if len(rows) == 1:
                lo = up = 0.0
            else:
                r = shannon_capacity(K[rows], tol=tol)
                lo, up = r.lower, r.upper
            if lo > g_lower or g_choice is None:
                g_lower, g_choice = lo, choice
            g_upper = max(g_upper, up)
        labels = {tuple(universes[a][k] for a, k in zip(group, key)): v
                  for key, v in zip(keys, g_choice)}
        per[group] = (g_lower, g_upper)
        if best is None or g_lower > best[0]:
            best = (g_lower, g_upper, group, labels)
    upper = max(u for _, u in per.values())
    return QueryCapacity(best[0], upper, best[2], best[3], solved, per)


def query_max_information(f: Callable[[tuple], int], universes: Sequence[Sequence], K,
                          records: Sequence[int] | None = None) -> float:
    """Max-individual channel capacity under independent priors (Wu, Xia and He 2017, Def. 8–9), in nats.

    With a product prior, p(y | x_i) = Σ_z Π_{j≠i} P_j(z_j) K[f(x_i, z), y]: both rows of a ratio
    p(y | a)/p(y | b) mix their completions with the same weights, so the ratio is at most the
    largest ratio over single completions z, approached by point-mass priors on the others and
    on x_i as in :func:`~mechdesign.information.leakage.max_information_capacity`. Hence the value is
    max over i, completions z, values a, b and outputs y of ln K[f(a, z), y] / K[f(b, z), y].
    Theorem 2.1 says this equals the ε of ε-differential privacy of the composed channel over
    neighbouring datasets (:func:`query_dp_epsilon`, computed independently). ``records``
    restricts the maximum to some records (default all).
    """
    _, K, table = _setup(f, universes, K)
    records = range(table.ndim) if records is None else [int(i) for i in records]
    with np.errstate(divide="ignore"):
        L = np.log(K)
    worst = 0.0
    for i in records:
        rows = np.moveaxis(table, i, 0).reshape(table.shape[i], -1)  # (|X_i|, completions)
        for c in range(rows.shape[1]):
            idx = rows[:, c]
            sub = L[idx]
            hi, lo = sub.max(axis=0), sub.min(axis=0)
            with np.errstate(invalid="ignore"):
                gap = np.where(np.isneginf(hi), 0.0, hi - lo)
            worst = max(worst, float(gap.max()))
    return worst


def query_dp_epsilon(f: Callable[[tuple], int], universes: Sequence[Sequence], K) -> float:
    """ε of ε-differential privacy of y ~ K[f(x)] over neighbouring datasets (Def. 10: datasets
    differing in one record), by direct enumeration of all neighbouring pairs, in nats."""
    universes, K, table = _setup(f, universes, K)
    worst = 0.0
    flat = table.reshape(-1)
    idx = np.arange(flat.size).reshape(table.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(table.ndim):
            for a in range(table.shape[i]):
                for b in range(table.shape[i]):
                    if a == b:
                        continue
                    ia = np.take(idx, a, axis=i).reshape(-1)
                    ib = np.take(idx, b, axis=i).reshape(-1)
                    P, Q = K[flat[ia]], K[flat[ib]]
                    r = np.where(P > 0, np.log(P) - np.log(Q), 0.0)
                    worst = max(worst, float(r.max()))
    return worst


def bits(nats: float) -> float:
    """nats → bits."""
    return nats / LN2
