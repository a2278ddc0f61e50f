"""The outputs the interior point stops carrying once their columns have died (on a chain and on
dense blocks).

On a line at small ε most outputs of the optimal design are unused (1,000 points at ε = 0.1, a
Zipf prior and a random loss: 107 of 1,000), and the interior point's columns show it long
before the end: by a proven gap of 0.15 (step 28 of 73) every entry of 785 columns is below
1e-2 of the iterate's largest, and the 215 others hold every column of the final design. Yet
each step costs as much for a dead column as for a live one. So once the gap is below
:data:`DROP_GAP` and a share of the columns is dead (:data:`DEAD_ENTRY`, :data:`DEAD_SHARE`),
they leave the iteration and the arrays are rebuilt over the live outputs. The live columns'
rows then sum to 1 less the dropped mass, a residual of the primal equations that the steps
take out as they take out any (a step of length α leaves 1 − α of it): the dropped columns fade
with it, all scaled by the residual's share left (:meth:`LiveColumns.design`), so every design
has rows summing to 1 and private columns. (The dropped mass spread over the live columns
instead, a multiple of it added to each, kept the rows at 1 but moved tiny entries far off the
central path: 1,000 points at ε = 0.1 with a Zipf prior and the metric loss took 106 steps
instead of 60.)

The bound stays a bound for every output. A dropped column is priced exactly at every
iterate (:func:`~mechdesign.solvers.metric_chain_kernels.chain_deficits`): on a chain, one
pass up the rows finds multipliers of its pair rows that make its reduced costs at least the
live columns' row minima but at a few inputs, where the shortfall (a deficit) is known, and
there is one exactly when the column prices out. The Lagrangian bound with those multipliers
is the live columns' row minima less the deficits, a bound whatever was dropped. Should the
deficits cost more than :data:`REVIVE_SHARE` of the gap, a column was dropped that the optimum
needs (a column of the optimal design can hold 1e-7 of the largest entry): the columns of the
largest deficits come back as they have faded, with the duals they had when they were dropped
(:func:`revived`). Should that happen more than :data:`MAX_REVIVALS` times, or for a large share
of the columns, the iterate goes back to where the first drop left it, every output carried,
and the run goes on without drops (:func:`carried_columns`; the first drop keeps a copy of the
iterate for that, and where the copies would not fit in memory the run drops nothing). Over the
line's envelope (1,000 points, ε from 0.1 to 8, three priors and three losses) the iterations
took 277 s in all, the slowest 9.8 s (alone; the slowest without drops, ε = 0.1 with a Zipf
prior and a random loss, took 19 s beside another run, 15 s alone), and on 2,000 points that
instance's race took 54 s instead of 89 s.

On dense blocks (grids, points in the plane or on the sphere) no pass finds a column's exact
multipliers: each dropped column keeps its reduced costs at the multipliers it had (C − GᵀΛ),
and its deficits against the live minima first move greedily to its surpluses over the pairs
(cheap, but from a gap of 1e-4 it leaves deficits where the box minimum is 0). Where those
cost more than :data:`PRICED_SHARE` of the gap, the columns of the largest deficits are priced
exactly: the flow LP (:mod:`~mechdesign.solvers.cone_flow`) over the closure of the LP's pairs
(the LP keeps only the pairs no others imply; the flow needs them all), against minima raised
by :data:`PRICED_MARGIN` of the gap so that the next steps' minima find the column covered;
the multipliers found become the column's own.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from mechdesign.solvers.metric_rows import Rows

#: a column is dead when every entry is below this share of the iterate's largest entry. Over the
#: line's envelope at 1,000 points (63 instances; each setting run beside another, two at once)
#: the iterations took 337 s in all at 1e-2, 368 s at 1e-3 and 366 s at 1e-4 (417 s without
#: drops), the slowest 12.9 s, 13.6 s and 14.5 s (19.0 s); at 1e-2 none was undone, eight
#: revived a few columns, none took more than 5 steps more than without drops
DEAD_ENTRY = 1e-2
#: the columns leave the iteration once the dead ones are at least this share of those carried
#: (each rebuild costs about a pass over the arrays; fewer dead columns save little)
DEAD_SHARE = 0.25
#: columns leave only once the proven gap, relative to the value, is below this: with columns
#: below 1e-2 of the largest dropped from the first steps on (1,000 points at ε = 1, a Zipf prior
#: and a random loss), columns of the optimum went too, revived ones went again, and the gap
#: stalled at 0.28
DROP_GAP = 0.1
#: dropped columns come back when their deficits cost the bound more than this share of the gap
REVIVE_SHARE = 0.1
#: the dense blocks' dropped columns are priced exactly (a flow LP each, the largest deficits
#: first) until their deficits cost the bound at most this share of the last gap
PRICED_SHARE = 0.05
#: an exact pricing covers the minima raised at each input by this share of the last (absolute)
#: gap: the minima's total rise still to come is at most the gap
PRICED_MARGIN = 0.1
#: revivals at most, each of at most this share of the live columns; beyond, the drops are undone
MAX_REVIVALS, REVIVE_MOST = 3, 0.1
#: the drops are undone when the gap has not halved over this many steps since the last drop or
#: revival (half the interior point's own stall window), or over twice the steps its last halving
#: before took, when more (:func:`stall_window`): dropped from a gap of 0.47, 2,000 points on a
#: line at ε = 0.1 took 70 steps from 0.11 to 0.063, revivals and all, before the revivals ran out
DROPPED_STALL = 15


@dataclass
class Drops:
    """What the drops and revivals of one run share: the iterate before the first drop (a copy);
    over every output, the dropped columns as they fade, their masses and μ when they were
    dropped, and (dense blocks) their reduced costs then, C − GᵀΛ (:attr:`fixed`); the dropped
    columns' rows of the working set as flat arrays (pair, output, S, Λ); the pairs the dense
    blocks' pricing transfers deficits over (:attr:`pairs`); the outputs revived and how often,
    the step of the last drop or revival, and whether the drops were undone (then nothing is
    dropped again)."""

    start: object = None
    faded: np.ndarray | None = None
    mass: np.ndarray | None = None
    mu: np.ndarray | None = None
    fixed: np.ndarray | None = None
    rows: tuple | None = None
    pairs: tuple | None = None
    revived: np.ndarray | None = None
    revivals: int = 0
    since: int | None = None
    window: int = 0
    undone: bool = False

    def keep(self, outputs: np.ndarray, full: int, K: np.ndarray, mu: np.ndarray, rows: tuple,
             fixed: np.ndarray | None) -> None:
        """Keep the dropped columns ``outputs`` (of ``full`` outputs): K as it fades, the rest as
        it is; ``rows`` (pair, output, S, Λ) are their rows of the working set."""
        if self.faded is None:
            self.faded, self.mu, self.mass = np.zeros((K.shape[0], full)), np.zeros((K.shape[0], full)), np.zeros(full)
            self.rows = tuple(np.zeros(0, dtype=a.dtype) for a in rows)
        self.faded[:, outputs], self.mu[:, outputs] = K, mu
        self.mass[outputs] = K.sum(axis=0)
        self.rows = tuple(np.concatenate([kept, new]) for kept, new in zip(self.rows, rows))
        if fixed is not None:
            if self.fixed is None:
                self.fixed = np.zeros((K.shape[0], full))
            self.fixed[:, outputs] = fixed


class LiveColumns:
    """A :class:`~mechdesign.solvers.metric_reduced.ReducedLP` without orbits over the ``live``
    outputs of ``base`` (indices, increasing; every output when None): the same pairs (every
    other attribute is the base's), the live outputs' costs, the designs over every output (the
    dropped ones as they fade) and the row minima of the reduced costs over every output, the
    dropped ones priced (:attr:`deficits`: their deficits at the last minima; on a chain exactly,
    on dense blocks by transfers from the multipliers they had when dropped). ``drops``
    (:class:`Drops`) is shared by the LPs of one run."""

    def __init__(self, base, live: np.ndarray | None = None, drops: Drops | None = None):
        m = base.cost.shape[1]
        self.base, self.live = base, np.arange(m) if live is None else live
        self.drops = Drops() if drops is None else drops
        self.dead = np.setdiff1d(np.arange(m), self.live)
        self.cost = np.ascontiguousarray(base.cost[:, self.live])
        g = base.cost.shape[0]
        if base.chain:
            self._dead_cost = np.ascontiguousarray(base.cost[:, self.dead])
            self._up, self._down = np.zeros(max(g - 1, 0)), np.zeros(max(g - 1, 0))
            rising = base.b == base.a + 1
            self._down[base.a[rising]] = base.coef[rising]  # K[x] <= c K[x + 1]
            self._up[base.b[~rising]] = base.coef[~rising]  # K[x + 1] <= c K[x]
        elif self.dead.size:
            self._dead_fixed = np.ascontiguousarray(self.drops.fixed[:, self.dead])
        self.deficits = np.zeros((g, self.dead.size))
        #: what the dense blocks' deficits may take from the bound without an exact pricing
        #: (:data:`PRICED_SHARE` of the last gap)
        self.tolerated = 0.0
        #: what the exact pricing covers beyond the minima at each input (:data:`PRICED_MARGIN` of
        #: the last gap), so that the next steps' minima find it covered
        self.margin = 0.0

    def __getattr__(self, name: str):
        # the pairs, the merged inputs, the bounds, full_cost, G, chain; row_sums and invariant (no orbits)
        return getattr(self.base, name)

    def design(self, K: np.ndarray) -> np.ndarray:
        """The design of the live columns ``K`` and of the dropped ones, faded: scaled together
        (in place) so that they hold what the live rows' sums miss. Every part of that residual
        shrinks by the same 1 − α a step, so one factor scales them all."""
        faded = self.drops.faded
        if faded is None:
            full = np.zeros((K.shape[0], self.base.cost.shape[1]))
        else:
            held = float(faded.sum())
            faded *= min(max(float((1.0 - K.sum(axis=1)).sum()) / held, 0.0), 1.0) if held > 0 else 0.0
            full = faded.copy()
        full[:, self.live] = K
        return full

    def row_minima(self, reduced: np.ndarray) -> np.ndarray:
        """Per input, the least reduced cost over every output: the live columns' ``reduced``
        costs, the dropped ones' at the multipliers their pricing finds."""
        minima = reduced.min(axis=1)
        if self.dead.size:
            if self.base.chain:
                from mechdesign.solvers.metric_chain_kernels import chain_deficits

                chain_deficits(self._dead_cost, minima, self._up, self._down, self.deficits)
            else:
                self._priced(minima)
            minima = minima + self.deficits.min(axis=1)
        return minima

    def _priced(self, minima: np.ndarray) -> None:
        """The dense blocks' deficits of the dropped columns against ``minima``. Each column keeps
        its reduced costs at its last multipliers (:attr:`Drops.fixed`: C − GᵀΛ, Λ its duals when
        it was dropped); their deficits against the minima move greedily to surpluses over the
        cone's pairs (:func:`~mechdesign.solvers.cone_transfer_kernel.transferred_deficits`).
        Where that leaves a deficit, the column is priced exactly: the flow LP over every pair of
        the cone's closure (:mod:`~mechdesign.solvers.cone_flow`; direct transfers reach the box
        minimum when every pair is there) from its costs, whose multipliers it keeps when they
        do better."""
        from mechdesign.solvers.cone_flow import flow_multipliers
        from mechdesign.solvers.cone_transfer_kernel import transferred_deficits

        i, j, coef = self.drops.pairs
        transferred_deficits(self._dead_fixed, minima, i, j, coef, self.deficits)
        g = minima.size
        order = np.argsort(self.deficits.sum(axis=0))  # (the largest deficits first)
        rest = np.append(np.cumsum(self.deficits.sum(axis=0)[order][::-1])[::-1], 0.0)  # (rest[t]: of order[t:])
        for k in order[:np.searchsorted(rest, -self.tolerated, side="left")]:
            cost = self.base.cost[:, self.dead[k]]
            for margin in (self.margin, 0.0):  # (beyond the minima first; at them when that leaves a deficit)
                lam = flow_multipliers(cost - minima - margin, i, j, coef)
                fixed = cost + np.bincount(i, lam, g) - np.bincount(j, lam * coef, g)  # (C − Gᵀλ over the pairs)
                deficits = np.minimum(fixed - minima, 0.0)
                if deficits.sum() > self.deficits[:, k].sum():
                    self.deficits[:, k], self._dead_fixed[:, k] = deficits, fixed
                    self.drops.fixed[:, self.dead[k]] = fixed
                if self.deficits[:, k].min() == 0.0:
                    break


def dead_columns(it) -> np.ndarray:
    """Which of the iterate's columns are dead (every entry below :data:`DEAD_ENTRY` of the largest)."""
    return it.K.max(axis=0) < DEAD_ENTRY * it.K.max()


def _rows_of(lp: LiveColumns, it) -> tuple:
    """The iterate's rows of the working set as flat arrays (pair, output over every output, S, Λ)."""
    return it.rows.pair, lp.live[it.rows.out], it.S, it.lam


def _rebuilt(lp: LiveColumns, it, K: np.ndarray, mu: np.ndarray, rows: tuple, slack: np.ndarray | None,
             excess: float):
    """A copy of the iterate ``it`` over ``lp``'s outputs with these arrays: ``rows`` (pair,
    output over every output, S, Λ) become its working set, pair by pair and each pair's outputs
    in order (on a chain, the order its kernels read); ``slack`` is every pair row's slack (None
    on a chain). It carries the dual residual but for ``excess``, the round-off part
    (:func:`_residual_excess`)."""
    new = copy.copy(it)
    m = K.shape[1]
    pair, out, S, lam = rows
    out = np.searchsorted(lp.live, out)
    order = np.lexsort((out, pair))
    new.K, new.mu = np.ascontiguousarray(K), np.ascontiguousarray(mu)
    new.rows = Rows(lp, np.zeros((lp.a.size, m), bool))
    new.rows.add(pair[order], out[order])
    new.S, new.lam = S[order], lam[order]
    new.bounds = int(lp.bounded.sum()) * m
    new.slack, new._pairs_term = slack, None
    new.carried = max(float(_residual(lp, new).max(axis=1).sum()) - excess, 0.0)
    return new


def _residual(lp, it) -> np.ndarray:
    """|r_d|, the dual equation's residual at the iterate."""
    return np.abs(lp.cost - it.u[:, None] - it.mu - it.pairs_term())


def _residual_excess(lp, it) -> float:
    """What round-off added to the dual residual's Σ_x max_y beyond what the steps carry
    (``it.carried``: the start's, and a revived column's, which every step shrinks by 1 − α as
    it does the start's): a drop or a revival keeps it and carries the rest over the new columns."""
    return float(_residual(lp, it).max(axis=1).sum()) - it.carried


def _copied(it):
    """A copy of the iterate whose arrays the steps cannot move (the rows, and the slacks of the
    rows outside the set, are not moved: the iterates after a drop hold arrays of their own)."""
    new = copy.copy(it)
    new.K, new.mu, new.u, new.S, new.lam = (a.copy() for a in (it.K, it.mu, it.u, it.S, it.lam))
    new._pairs_term = None
    return new


def _transfer_pairs(lp) -> tuple:
    """The pairs a dense LP's dropped columns are priced over, as (i, j, coefficient) arrays: the
    closure of its pairs (K[a] <= c K[b] for every a, b joined by a path of pairs, c the product
    along the cheapest: the least exponent by shortest paths), each input's nearest
    (:class:`~mechdesign.solvers.cone_transfer.TransferBound`). The LP keeps only the pairs
    that no other pairs imply; a flow over those misses what relays through a third point carry
    (a 10 × 10 grid at ε = 2: a column priced at −6.6e-5 whose box minimum is 0)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    from mechdesign.solvers.cone_transfer import TransferBound

    g = lp.cost.shape[0]
    graph = sp.csr_matrix((np.log(lp.coef), (lp.a, lp.b)), shape=(g, g))
    exponent = shortest_path(graph, method="D", directed=True)
    i, j = np.nonzero(np.isfinite(exponent) & ~np.eye(g, dtype=bool))
    pairs = TransferBound(g, i, j, np.exp(exponent[i, j]))
    return pairs.i, pairs.j, pairs.coef


def dropped(lp: LiveColumns, it, dead: np.ndarray):
    """(the LP, the iterate) without the columns ``dead`` (a mask over the live ones), which join
    the faded columns as they are (their rows' sums join the primal residual)."""
    keep, drops = ~dead, lp.drops
    if drops.start is None:  # (the steps move the arrays in place)
        drops.start = _copied(it)
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    fixed = None
    if not lp.base.chain:  # (their reduced costs at this iterate's multipliers)
        fixed = lp.cost[:, dead] - it.pairs_term()[:, dead]
        if drops.pairs is None:
            drops.pairs = _transfer_pairs(lp.base)
    staying = keep[it.rows.out]
    rows = _rows_of(lp, it)
    drops.keep(lp.live[dead], lp.base.cost.shape[1], it.K[:, dead], it.mu[:, dead],
               tuple(a[~staying] for a in rows), fixed)
    new_lp = LiveColumns(lp.base, lp.live[keep], drops)
    slack = None if it.slack is None else np.ascontiguousarray(it.slack[:, keep])
    return new_lp, _rebuilt(new_lp, it, it.K[:, keep], it.mu[:, keep], tuple(a[staying] for a in rows), slack,
                            _residual_excess(lp, it))


def revived(lp: LiveColumns, it, back: np.ndarray):
    """(the LP, the iterate) with the dropped outputs ``back`` (a mask over ``lp.dead``) carried
    again as they have faded (so the rows' sums with the faded columns stay at 1, and the
    revived columns are private), their slacks faded alike, with the duals they had when they
    were dropped; None when one has faded to nothing (the residual it stood for is gone) or so
    far that its Newton weights (Λ/S, μ/K) would overflow."""
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    drops = lp.drops
    outputs = lp.dead[back]
    share = np.zeros(lp.base.cost.shape[1])
    share[outputs] = drops.faded[:, outputs].sum(axis=0) / drops.mass[outputs]
    pair, out, S, lam = drops.rows
    coming = np.isin(out, outputs)
    K, S_back = drops.faded[:, outputs].copy(), S[coming] * share[out[coming]]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # (its Newton weights Λ/S and μ/K)
        sound = np.isfinite(lam[coming] / S_back).all() and np.isfinite(drops.mu[:, outputs] / K).all()
    if not (np.all(share[outputs] > 0) and sound):
        return None
    drops.faded[:, outputs] = 0.0
    drops.rows = tuple(a[~coming] for a in drops.rows)
    live = np.concatenate([lp.live, outputs])
    order = np.argsort(live)
    mu = np.concatenate([it.mu, drops.mu[:, outputs]], axis=1)[:, order]
    rows = tuple(np.concatenate([now, back]) for now, back in
                 zip(_rows_of(lp, it), (pair[coming], out[coming], S_back, lam[coming])))
    slack = None
    if it.slack is not None:  # (every pair row's slack of the faded columns)
        slack = np.ascontiguousarray(np.concatenate([it.slack, lp.base.G @ K], axis=1)[:, order])
    if drops.revived is None:
        drops.revived = np.zeros(lp.base.cost.shape[1], bool)
    drops.revived[outputs] = True
    new_lp = LiveColumns(lp.base, live[order], drops)
    return new_lp, _rebuilt(new_lp, it, np.concatenate([it.K, K], axis=1)[:, order], mu, rows, slack,
                            _residual_excess(lp, it))


def carried_columns(lp: LiveColumns, it, gap: float, gaps: list[float]):
    """(the LP, the iterate) after this iterate's drops and revivals (:func:`_carried`), the LP
    tolerating deficits of :data:`PRICED_SHARE` of the ``gap`` without an exact pricing."""
    lp, it = _carried(lp, it, gap, gaps)
    lp.tolerated, lp.margin = PRICED_SHARE * gap, PRICED_MARGIN * gap
    return lp, it


def _carried(lp: LiveColumns, it, gap: float, gaps: list[float]):
    """(the LP, the iterate) after this iterate's drops and revivals, given the proven ``gap``
    and the relative ``gaps`` so far. When the dropped columns' deficits cost the last bound
    more than :data:`REVIVE_SHARE` of the gap, those of the largest deficits that make up nine
    tenths of them come back (:func:`revived`) — or, after :data:`MAX_REVIVALS` revivals or when
    they are more than :data:`REVIVE_MOST` of the live columns, or when the gap has not halved
    over :data:`DROPPED_STALL` steps with columns dropped, the iterate before the first drop
    with every output, never to drop again. Else, once the relative gap is below
    :data:`DROP_GAP` and the dead columns (:func:`dead_columns`, never a revived one) are
    :data:`DEAD_SHARE` of those carried, the LP and iterate without them."""
    drops = lp.drops
    stalled = (lp.dead.size > 0 and drops.since is not None and len(gaps) - drops.since >= drops.window
               and gaps[-1] > gaps[-1 - drops.window] / 2)
    if stalled or (lp.dead.size and -lp.deficits.min(axis=1).sum() > REVIVE_SHARE * gap):
        cost = -lp.deficits.sum(axis=0)
        order = np.argsort(-cost)
        back = np.zeros(lp.dead.size, bool)
        back[order[:np.searchsorted(np.cumsum(cost[order]), 0.9 * cost.sum()) + 1]] = True
        if not stalled and drops.revivals < MAX_REVIVALS and back.sum() <= REVIVE_MOST * lp.live.size:
            found = revived(lp, it, back)
            if found is not None:
                drops.revivals, drops.since, drops.window = drops.revivals + 1, len(gaps), stall_window(gaps)
                return found
        start = drops.start
        return LiveColumns(lp.base, drops=Drops(undone=True)), start
    if drops.undone or gaps[-1] > DROP_GAP:
        return lp, it
    dead = dead_columns(it)
    if drops.revived is not None:
        dead &= ~drops.revived[lp.live]
    if dead.sum() >= DEAD_SHARE * dead.size and not dead.all():
        if drops.start is None and not _copies_fit(lp, it):
            drops.undone = True  # (no drops in this run: their copies would not fit)
            return lp, it
        drops.since, drops.window = len(gaps), stall_window(gaps)
        return dropped(lp, it, dead)
    return lp, it


def stall_window(gaps: list[float]) -> int:
    """The steps over which the gap must halve once columns are dropped: :data:`DROPPED_STALL`, or
    twice the steps its last halving took, when more (a 20 × 20 grid's interior point halves
    its gap in 20 to 40 steps, with every column or not; a line's in a few)."""
    last = gaps[-1]
    before = next((k for k in range(len(gaps) - 1, -1, -1) if gaps[k] >= 2.0 * last), None)
    return max(DROPPED_STALL, 2 * (len(gaps) - 1 - before)) if before is not None else DROPPED_STALL


def _copies_fit(lp: LiveColumns, it) -> bool:
    """Whether what the first drop copies fits in the share of the memory available that the
    iterations' arrays may take (:mod:`~mechdesign.solvers.metric_interior_memory`): the iterate
    before it (K, μ, S, Λ) and the dropped columns' arrays over every output (as many again)."""
    from mechdesign.solvers.metric_interior_memory import MEMORY_SHARE, available_bytes

    available = available_bytes()
    slack = 0 if it.slack is None else it.slack.size
    need = 2 * 8.0 * (2 * it.K.size + 2 * it.S.size) + 8.0 * (it.K.size + slack)
    return available is None or need <= MEMORY_SHARE * available
