"""The outputs a chain's interior point stops carrying once their columns have died.

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
iterate for that, and where the copies would not fit in memory the run drops nothing). Over the line's envelope (1,000
points, ε from 0.1 to 8, three priors and three losses) the iterations took 277 s in all, the
slowest 9.8 s (alone; the slowest without drops, ε = 0.1 with a Zipf prior and a random loss,
took 19 s beside another run, 15 s alone), and on 2,000 points that instance's race took 54 s
instead of 89 s.
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
#: revivals at most, each of at most this share of the live columns; beyond, the drops are undone
MAX_REVIVALS, REVIVE_MOST = 3, 0.1
#: the drops are undone when the gap has not halved over this many steps since the last drop or
#: revival (half the interior point's own stall window): dropped from a gap of 0.47, 2,000 points
#: at ε = 0.1 took 70 steps from 0.11 to 0.063, revivals and all, before the revivals ran out
DROPPED_STALL = 15


@dataclass
class Drops:
    """What the drops and revivals of one run share, arrays over every output: the iterate before
    the first drop (a copy), the dropped columns as they fade, and their masses, slacks and duals
    when they were dropped (S and Λ pair-major); the outputs revived and how often, the step of
    the last drop or revival, and whether the drops were undone (then nothing is dropped again)."""

    start: object = None
    faded: np.ndarray | None = None
    mass: np.ndarray | None = None
    S: np.ndarray | None = None
    mu: np.ndarray | None = None
    lam: np.ndarray | None = None
    revived: np.ndarray | None = None
    revivals: int = 0
    since: int | None = None
    undone: bool = False

    def keep(self, outputs: np.ndarray, full: int, K: np.ndarray, mu: np.ndarray, S: np.ndarray,
             lam: np.ndarray) -> None:
        """Keep the dropped columns ``outputs`` (of ``full`` outputs): K as it fades, the rest as it is."""
        if self.faded is None:
            self.faded, self.mu = np.zeros((K.shape[0], full)), np.zeros((K.shape[0], full))
            self.S, self.lam, self.mass = np.zeros((S.shape[0], full)), np.zeros((S.shape[0], full)), np.zeros(full)
        self.faded[:, outputs], self.mu[:, outputs], self.S[:, outputs], self.lam[:, outputs] = K, mu, S, lam
        self.mass[outputs] = K.sum(axis=0)


class LiveColumns:
    """A chain's :class:`~mechdesign.solvers.metric_reduced.ReducedLP` over the ``live`` outputs
    of ``base`` (indices, increasing; every output when None): the same pairs and rows (every
    other attribute is the base's), the live outputs' costs, the designs over every output (the
    dropped ones as they fade) and the row minima of the reduced costs over every output, the
    dropped ones priced exactly (:attr:`deficits`: their deficits at the last minima). ``drops``
    (:class:`Drops`) is shared by the LPs of one run."""

    def __init__(self, base, live: np.ndarray | None = None, drops: Drops | None = None):
        m = base.cost.shape[1]
        self.base, self.live = base, np.arange(m) if live is None else live
        self.drops = Drops() if drops is None else drops
        self.dead = np.setdiff1d(np.arange(m), self.live)
        self.cost = np.ascontiguousarray(base.cost[:, self.live])
        self._dead_cost = np.ascontiguousarray(base.cost[:, self.dead])
        g = base.cost.shape[0]
        self._up, self._down = np.zeros(max(g - 1, 0)), np.zeros(max(g - 1, 0))
        rising = base.b == base.a + 1
        self._down[base.a[rising]] = base.coef[rising]  # K[x] <= c K[x + 1]
        self._up[base.b[~rising]] = base.coef[~rising]  # K[x + 1] <= c K[x]
        self.deficits = np.zeros((g, self.dead.size))

    def __getattr__(self, name: str):
        # the pairs, the merged inputs, the bounds, full_cost; row_sums and invariant (no orbits on a chain)
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
        costs, the dropped ones' at their exact multipliers."""
        from mechdesign.solvers.metric_chain_kernels import chain_deficits

        minima = reduced.min(axis=1)
        if self.dead.size:
            chain_deficits(self._dead_cost, minima, self._up, self._down, self.deficits)
            minima = minima + self.deficits.min(axis=1)
        return minima


def dead_columns(it) -> np.ndarray:
    """Which of the iterate's columns are dead (every entry below :data:`DEAD_ENTRY` of the largest)."""
    return it.K.max(axis=0) < DEAD_ENTRY * it.K.max()


def _pair_major(values: np.ndarray, m: int) -> np.ndarray:
    """A chain's per-row array as (pairs, outputs): its rows joined pair by pair, the outputs in order."""
    return values.reshape(-1, m)


def _rebuilt(lp: LiveColumns, it, K: np.ndarray, mu: np.ndarray, S: np.ndarray, lam: np.ndarray, excess: float):
    """A copy of the iterate ``it`` over ``lp``'s outputs with these arrays (pair-major S and Λ),
    carrying the dual residual but for ``excess``, the round-off part (:func:`_residual_excess`)."""
    new = copy.copy(it)
    m = K.shape[1]
    new.K, new.mu = np.ascontiguousarray(K), np.ascontiguousarray(mu)
    new.rows = Rows(lp, np.ones((lp.a.size, m), bool))
    new.S, new.lam = np.ascontiguousarray(S).ravel(), np.ascontiguousarray(lam).ravel()
    new.bounds = int(lp.bounded.sum()) * m
    new.slack, new._pairs_term, new._excess_term = None, None, None
    new.excess = None  # (none on a chain: its rows are all in the set from the start, none joins)
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
    """A copy of the iterate whose arrays the steps cannot move (the rows are not moved)."""
    new = copy.copy(it)
    new.K, new.mu, new.u, new.S, new.lam = (a.copy() for a in (it.K, it.mu, it.u, it.S, it.lam))
    new.excess = None if it.excess is None else it.excess.copy()  # (the steps shrink it in place)
    new._pairs_term = new._excess_term = None
    return new


def dropped(lp: LiveColumns, it, dead: np.ndarray):
    """(the LP, the iterate) without the columns ``dead`` (a mask over the live ones), which join
    the faded columns as they are (their rows' sums join the primal residual)."""
    m, keep, drops = it.K.shape[1], ~dead, lp.drops
    if drops.start is None:  # (the steps move the arrays in place)
        drops.start = _copied(it)
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    S, lam = _pair_major(it.S, m), _pair_major(it.lam, m)
    drops.keep(lp.live[dead], lp.base.cost.shape[1], it.K[:, dead], it.mu[:, dead], S[:, dead], lam[:, dead])
    new_lp = LiveColumns(lp.base, lp.live[keep], drops)
    return new_lp, _rebuilt(new_lp, it, it.K[:, keep], it.mu[:, keep], S[:, keep], lam[:, keep],
                            _residual_excess(lp, it))


def revived(lp: LiveColumns, it, back: np.ndarray):
    """(the LP, the iterate) with the dropped outputs ``back`` (a mask over ``lp.dead``) carried
    again as they have faded (so the rows' sums with the faded columns stay at 1, and the
    revived columns are private), their slacks faded alike, with the duals they had when they
    were dropped; None when one has faded to nothing (the residual it stood for is gone) or so
    far that its Newton weights (Λ/S, μ/K) would overflow."""
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    drops, m = lp.drops, it.K.shape[1]
    outputs = lp.dead[back]
    share = drops.faded[:, outputs].sum(axis=0) / drops.mass[outputs]
    K, S_back = drops.faded[:, outputs].copy(), drops.S[:, outputs] * share
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # (its Newton weights Λ/S and μ/K)
        sound = np.isfinite(drops.lam[:, outputs] / S_back).all() and np.isfinite(drops.mu[:, outputs] / K).all()
    if not (np.all(share > 0) and sound):
        return None
    drops.faded[:, outputs] = 0.0
    live = np.concatenate([lp.live, outputs])
    order = np.argsort(live)
    mu = np.concatenate([it.mu, drops.mu[:, outputs]], axis=1)[:, order]
    S = np.concatenate([_pair_major(it.S, m), S_back], axis=1)[:, order]
    lam = np.concatenate([_pair_major(it.lam, m), drops.lam[:, outputs]], axis=1)[:, order]
    if drops.revived is None:
        drops.revived = np.zeros(lp.base.cost.shape[1], bool)
    drops.revived[outputs] = True
    new_lp = LiveColumns(lp.base, live[order], drops)
    return new_lp, _rebuilt(new_lp, it, np.concatenate([it.K, K], axis=1)[:, order], mu, S, lam,
                            _residual_excess(lp, it))


def carried_columns(lp: LiveColumns, it, gap: float, gaps: list[float]):
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
    stalled = (lp.dead.size > 0 and drops.since is not None and len(gaps) - drops.since >= DROPPED_STALL
               and gaps[-1] > gaps[-1 - DROPPED_STALL] / 2)
    if stalled or (lp.dead.size and -lp.deficits.min(axis=1).sum() > REVIVE_SHARE * gap):
        cost = -lp.deficits.sum(axis=0)
        order = np.argsort(-cost)
        back = np.zeros(lp.dead.size, bool)
        back[order[:np.searchsorted(np.cumsum(cost[order]), 0.9 * cost.sum()) + 1]] = True
        if not stalled and drops.revivals < MAX_REVIVALS and back.sum() <= REVIVE_MOST * lp.live.size:
            found = revived(lp, it, back)
            if found is not None:
                drops.revivals, drops.since = drops.revivals + 1, len(gaps)
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
        drops.since = len(gaps)
        return dropped(lp, it, dead)
    return lp, it


def _copies_fit(lp: LiveColumns, it) -> bool:
    """Whether what the first drop copies fits in the share of the memory available that the
    iterations' arrays may take (:mod:`~mechdesign.solvers.metric_interior_memory`): the iterate
    before it (K, μ, S, Λ) and the dropped columns' arrays over every output (as many again)."""
    from mechdesign.solvers.metric_interior_memory import MEMORY_SHARE, available_bytes

    available = available_bytes()
    need = 2 * 8.0 * (2 * it.K.size + 2 * it.S.size)
    return available is None or need <= MEMORY_SHARE * available
