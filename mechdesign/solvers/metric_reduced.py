"""The d-privacy interior point's LP over merged inputs (:class:`ReducedLP`): inputs at distance 0
from one another share one row, pairs whose coefficient is beyond round-off are left out, and on a
chain (points on a line) only some of the bounds K >= 0 are kept (:func:`chain_bounds`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mechdesign.solvers.highs_model import SolverDeclined
from mechdesign.solvers.metric_chain import is_chain

#: pairs whose ε·d exceeds this are left out of the iterations: their coefficients (beyond
#: e^30) leave the Newton system's entries to round-off, and their constraints bind only on
#: entries 1e-13 times smaller than their neighbours', which the certificate's envelope repair
#: settles. The Lagrangian bound stays valid (a left-out pair is one with Λ = 0).
MAX_EXPONENT = 30.0


def coincident_groups(n: int, i: np.ndarray, j: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The group of each input (labels 0, 1, …): inputs joined by pairs at distance 0 in both
    orders (their rows must be equal) share one."""
    from scipy.sparse.csgraph import connected_components

    zero = d == 0
    graph = sp.csr_matrix((np.ones(int(zero.sum())), (i[zero], j[zero])), shape=(n, n))
    mutual = graph.multiply(graph.T)  # a zero distance one way only ties nothing
    return connected_components(mutual, directed=False)[1]


class ReducedLP:
    """The LP over merged inputs: its cost, its pairs and coefficients, and the pair map G; with
    ``orbits`` (:class:`~mechdesign.solvers.metric_orbits.OutputOrbits`, used when no inputs
    merge) the columns of one output per orbit, standing for every output. ``bounded`` says which
    inputs keep their bounds K[x, y] >= 0 (all of them unless the pairs form a chain)."""

    def __init__(self, cost: np.ndarray, i: np.ndarray, j: np.ndarray, d: np.ndarray, epsilon: float,
                 orbits=None):
        n = cost.shape[0]
        self.groups = coincident_groups(n, i, j, d)
        g = int(self.groups.max()) + 1
        self.full_cost = np.zeros((g, cost.shape[1]))
        np.add.at(self.full_cost, self.groups, cost)
        self.orbits = orbits if g == n else None
        # (C order: a column selection comes out in Fortran order, and the passes over the
        # entries slice the flat arrays that the dual residual, computed from it, feeds)
        self.cost = (self.full_cost if self.orbits is None
                     else np.ascontiguousarray(self.full_cost[:, self.orbits.columns]))
        self.outputs = cost.shape[1]  # the outputs the columns stand for
        a, b = self.groups[i], self.groups[j]
        keep = (a != b) & (epsilon * d <= MAX_EXPONENT)
        if np.any((d[keep] <= 0)):
            raise SolverDeclined("a pair at distance 0 in one order only (not a metric)")
        # one pair per ordered pair of groups, at the smallest exponent (the tightest constraint)
        exponent = epsilon * d[keep]
        key = a[keep] * g + b[keep]
        order = np.lexsort((exponent, key))
        key, exponent = key[order], exponent[order]
        first = np.concatenate([[True], key[1:] != key[:-1]]) if key.size else np.zeros(0, bool)
        self.a, self.b = key[first] // g, key[first] % g
        self.coef = np.exp(exponent[first])
        p = self.a.size
        rows = np.concatenate([np.arange(p)] * 2)
        self.G = sp.csr_matrix((np.concatenate([-np.ones(p), self.coef]), (rows, np.concatenate([self.a, self.b]))),
                               shape=(p, g))
        # every pair joins neighbours in index order (points on a line): tridiagonal blocks
        self.chain = is_chain(self.a, self.b)
        if self.chain:
            self.orbits = None  # (a chain's blocks cost nothing to factorise)
            self.cost = self.full_cost
        # the inputs whose bounds K[x, y] >= 0 the LP keeps: on a chain, those not implied
        self.bounded = chain_bounds(self.a, self.b, self.coef, g) if self.chain else np.ones(g, bool)

    def row_sums(self, K: np.ndarray) -> np.ndarray:
        """The row sums of the design that the columns ``K`` stand for."""
        return K.sum(axis=1) if self.orbits is None else self.orbits.row_sums(K)

    def design(self, K: np.ndarray) -> np.ndarray:
        """The design over every output that the columns ``K`` stand for."""
        return K if self.orbits is None else self.orbits.design(K)

    def row_minima(self, reduced: np.ndarray) -> np.ndarray:
        """Per input, the least of the ``reduced`` costs over every output."""
        return reduced.min(axis=1) if self.orbits is None else self.orbits.row_minima(reduced)

    def invariant(self, du: np.ndarray) -> np.ndarray:
        """A row duals' direction, with the orbits made symmetric as the exact one is."""
        return du if self.orbits is None else self.orbits.average(du)


def chain_bounds(a: np.ndarray, b: np.ndarray, coef: np.ndarray, g: int) -> np.ndarray:
    """Which of the inputs 0, …, g − 1 of a chain keep their bounds K[x, y] >= 0 (for every
    output y): the others are implied. A pair row (x, x + 1) says K[x] <= c K[x + 1], so
    K[x] >= 0 gives K[x + 1] >= K[x]/c >= 0: along the rows (x, x + 1) one bound implies those of
    all the inputs after it. Each input keeps its bound when the product of the coefficients of
    those rows since the last input that kept one would pass e^MAX_EXPONENT, or when the row to it
    is missing (so every dropped bound is implied by a kept one through coefficients within the
    range the iterations already allow, and no entry the iterate holds can underflow below its
    band's first by more than that factor). On the line 0, 1, …, 999 four inputs keep their
    bounds at ε = 0.1, one in four at ε = 8.

    Why drop them: a column of the optimal design that is zero (on a chain a column is zero at
    every input between two left-out rows or at none, since K[x] <= c K[x + 1] and
    K[x + 1] <= c K[x]) has every bound and every pair row tight at once, a degenerate vertex
    around which the interior point's steps stay short. Without the implied bounds the interior point alone
    on the line of 1,000 points with a random loss took 21 to 30 % fewer steps to a gap of 5e-7
    at ε = 0.1, 0.25 and 0.5 over a uniform, a Dirichlet and a Zipf prior (at ε = 0.1 with the
    Zipf prior 65 instead of 90); at ε = 2 and 8 the counts were within a step of each other,
    with the metric loss too. (On grids, whose working set of pair rows grows as the iterations
    go, dropping the bounds that the set's rows imply made the gap stall: a 10 × 10 grid at
    ε = 1 with a Zipf prior stopped at 9.6e-5 after 154 steps where with every bound it closed
    to 3e-7 in 86.)"""
    exponent = np.log(coef)
    up = b == a + 1
    link = np.full(max(g - 1, 0), np.inf)  # per x: the exponent of the row (x, x + 1), inf when missing
    link[a[up]] = exponent[up]
    kept = np.zeros(g, bool)
    kept[0] = True
    run = 0.0
    for x in range(1, g):
        run += float(link[x - 1])
        if run > MAX_EXPONENT:
            kept[x], run = True, 0.0
    return kept
