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
and the run goes on without drops (:func:`carried_columns`). Over the line's envelope (1,000
points, ε from 0.1 to 8, three priors and three losses) the iterations took 277 s in all, the
slowest 9.8 s (alone; the slowest without drops, ε = 0.1 with a Zipf prior and a random loss,
took 19 s beside another run, 15 s alone), and on 2,000 points that instance's race took 54 s
instead of 89 s.
"""

from __future__ import annotations

import copy

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


class LiveColumns:
    """A chain's :class:`~mechdesign.solvers.metric_reduced.ReducedLP` over the ``live`` outputs
    of ``base`` (indices, increasing): the same pairs and rows, the live outputs' costs, the
    designs over every output (the dropped ones as they fade) and the row minima of the reduced
    costs over every output, the dropped ones priced exactly (:attr:`deficits`: their deficits
    at the last minima). ``kept`` holds what the drops and revivals share, over every output: the
    iterate before the first drop (``"start"``, a copy), the dropped columns as they fade
    (``"faded"``), their masses, slacks and duals when they were dropped (``"mass"``, ``"S"``,
    ``"mu"``, ``"lam"``), the outputs revived (``"revived"``) and how often (``"revivals"``), the
    step of the last drop or revival (``"since"``), and whether the drops were undone
    (``"undone"``: no more drops)."""

    def __init__(self, base, live: np.ndarray, kept: dict | None = None):
        self.base, self.live = base, live
        self.kept = kept if kept is not None else {}
        self.dead = np.setdiff1d(np.arange(base.cost.shape[1]), live)
        self.cost = np.ascontiguousarray(base.cost[:, live])
        self._dead_cost = np.ascontiguousarray(base.cost[:, self.dead])
        g = base.cost.shape[0]
        self._up, self._down = np.zeros(max(g - 1, 0)), np.zeros(max(g - 1, 0))
        rising = base.b == base.a + 1
        self._down[base.a[rising]] = base.coef[rising]  # K[x] <= c K[x + 1]
        self._up[base.b[~rising]] = base.coef[~rising]  # K[x + 1] <= c K[x]
        self.deficits = np.zeros((g, self.dead.size))

    def __getattr__(self, name: str):
        return getattr(self.base, name)  # (the pairs, the merged inputs, the bounds, full_cost)

    def row_sums(self, K: np.ndarray) -> np.ndarray:
        return K.sum(axis=1)

    def design(self, K: np.ndarray) -> np.ndarray:
        """The design of the live columns ``K`` and of the dropped ones, faded: scaled together
        (in place) so that they hold what the live rows' sums miss. Every part of that residual
        shrinks by the same 1 − α a step, so one factor scales them all."""
        faded = self.kept.get("faded")
        if faded is None:
            full = np.zeros((K.shape[0], self.base.cost.shape[1]))
        else:
            held = float(faded.sum())
            faded *= min(max(float((1.0 - K.sum(axis=1)).sum()) / held, 0.0), 1.0) if held > 0 else 0.0
            full = faded.copy()
        full[:, self.live] = K
        return full

    def invariant(self, du: np.ndarray) -> np.ndarray:
        return du

    def row_minima(self, reduced: np.ndarray) -> np.ndarray:
        """Per input, the least reduced cost over every output: the live columns' ``reduced``
        costs, the dropped ones' at their exact multipliers."""
        from mechdesign.solvers.metric_chain_kernels import chain_deficits

        minima = reduced.min(axis=1)
        if self.dead.size:
            chain_deficits(self._dead_cost, minima, self._up, self._down, self.deficits)
            minima = minima + self.deficits.min(axis=1)
        return minima


def live_view(lp) -> LiveColumns:
    """``lp`` as a :class:`LiveColumns` (every output live at first)."""
    return lp if isinstance(lp, LiveColumns) else LiveColumns(lp, np.arange(lp.cost.shape[1]))


def dead_columns(it) -> np.ndarray:
    """Which of the iterate's columns are dead (every entry below :data:`DEAD_ENTRY` of the largest)."""
    return it.K.max(axis=0) < DEAD_ENTRY * it.K.max()


def _pair_major(values: np.ndarray, m: int) -> np.ndarray:
    """A chain's per-row array as (pairs, outputs): its rows joined pair by pair, the outputs in order."""
    return values.reshape(-1, m)


def _rebuilt(lp: LiveColumns, it, K: np.ndarray, mu: np.ndarray, S: np.ndarray, lam: np.ndarray):
    """A copy of the iterate ``it`` over ``lp``'s outputs with these arrays (pair-major S and Λ)."""
    new = copy.copy(it)
    m = K.shape[1]
    new.K, new.mu = np.ascontiguousarray(K), np.ascontiguousarray(mu)
    new.rows = Rows(lp, np.ones((lp.a.size, m), bool))
    new.S, new.lam = np.ascontiguousarray(S).ravel(), np.ascontiguousarray(lam).ravel()
    new.bounds = int(lp.bounded.sum()) * m
    new.slack, new._pairs_term = None, None
    return new


def dropped(lp: LiveColumns, it, dead: np.ndarray):
    """(the LP, the iterate) without the columns ``dead`` (a mask over the live ones), which join
    the faded columns as they are (their rows' sums join the primal residual)."""
    m = it.K.shape[1]
    keep = ~dead
    kept = lp.kept
    if "start" not in kept:  # (the steps move the arrays in place)
        kept["start"] = _copied(it)
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    S, lam = _pair_major(it.S, m), _pair_major(it.lam, m)
    excess = _residual(lp, it).max(axis=1).sum() - it.carried
    carried = max(float(_residual(lp, it)[:, keep].max(axis=1).sum() - excess), 0.0)
    outputs, full = lp.live[dead], lp.base.cost.shape[1]
    for name, values in (("faded", it.K), ("mu", it.mu), ("S", S), ("lam", lam)):
        kept.setdefault(name, np.zeros((values.shape[0], full)))[:, outputs] = values[:, dead]
    kept.setdefault("mass", np.zeros(full))[outputs] = it.K[:, dead].sum(axis=0)
    new_lp = LiveColumns(lp.base, lp.live[keep], kept)
    new = _rebuilt(new_lp, it, it.K[:, keep], it.mu[:, keep], S[:, keep], lam[:, keep])
    new.carried = carried
    return new_lp, new


def _residual(lp, it) -> np.ndarray:
    """|r_d|, the dual equation's residual at the iterate. Its Σ_x max_y, less what round-off
    added, is what the steps carry (``it.carried``: the start's, and a revived column's, which
    every step shrinks by 1 − α as it does the start's): a drop or a revival keeps the round-off
    part and carries the rest over the new columns."""
    return np.abs(lp.cost - it.u[:, None] - it.mu - it.pairs_term())


def _copied(it):
    """A copy of the iterate whose arrays the steps cannot move (the rows are not moved)."""
    new = copy.copy(it)
    new.K, new.mu, new.u, new.S, new.lam = (a.copy() for a in (it.K, it.mu, it.u, it.S, it.lam))
    new._pairs_term = None
    return new


def revived(lp: LiveColumns, it, back: np.ndarray):
    """(the LP, the iterate) with the dropped outputs ``back`` (a mask over ``lp.dead``) carried
    again as they have faded (so the rows' sums with the faded columns stay at 1, and the
    revived columns are private), their slacks faded alike, with the duals they had when they
    were dropped."""
    lp.design(it.K)  # (the faded columns scaled to this iterate's residual)
    kept, m = lp.kept, it.K.shape[1]
    outputs = lp.dead[back]
    share = kept["faded"][:, outputs].sum(axis=0) / kept["mass"][outputs]
    K = kept["faded"][:, outputs].copy()
    kept["faded"][:, outputs] = 0.0
    live = np.concatenate([lp.live, outputs])
    order = np.argsort(live)
    arrays = [np.concatenate([mine, kept[name][:, outputs] * (share if name == "S" else 1.0)], axis=1)[:, order]
              for name, mine in (("mu", it.mu), ("S", _pair_major(it.S, m)), ("lam", _pair_major(it.lam, m)))]
    new_lp = LiveColumns(lp.base, live[order], kept)
    kept.setdefault("revived", np.zeros(lp.base.cost.shape[1], bool))[outputs] = True
    excess = _residual(lp, it).max(axis=1).sum() - it.carried
    new = _rebuilt(new_lp, it, np.concatenate([it.K, K], axis=1)[:, order], *arrays)
    new.carried = max(float(_residual(new_lp, new).max(axis=1).sum() - excess), 0.0)
    return new_lp, new


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
    kept = lp.kept
    stalled = (lp.dead.size and len(gaps) - kept.get("since", len(gaps)) >= DROPPED_STALL
               and gaps[-1] > gaps[-1 - DROPPED_STALL] / 2)
    if stalled or (lp.dead.size and -lp.deficits.min(axis=1).sum() > REVIVE_SHARE * gap):
        cost = -lp.deficits.sum(axis=0)
        order = np.argsort(-cost)
        back = np.zeros(lp.dead.size, bool)
        back[order[:np.searchsorted(np.cumsum(cost[order]), 0.9 * cost.sum()) + 1]] = True
        if not stalled and kept.get("revivals", 0) < MAX_REVIVALS and back.sum() <= REVIVE_MOST * lp.live.size:
            kept["revivals"], kept["since"] = kept.get("revivals", 0) + 1, len(gaps)
            return revived(lp, it, back)
        kept["undone"] = True
        kept.pop("faded", None)
        return LiveColumns(lp.base, np.arange(lp.base.cost.shape[1]), kept), kept.pop("start")
    if "undone" in kept or gaps[-1] > DROP_GAP:
        return lp, it
    dead = dead_columns(it) & ~kept.get("revived", np.zeros(lp.base.cost.shape[1], bool))[lp.live]
    if dead.sum() >= DEAD_SHARE * dead.size and not dead.all():
        kept["since"] = len(gaps)
        return dropped(lp, it, dead)
    return lp, it

