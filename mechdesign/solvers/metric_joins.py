"""Pair rows joining the interior point's working set
(:mod:`~mechdesign.solvers.metric_interior`), and the duals they start with.

A row (a, b, y) that joins carries a slack S = c K[b, y] − K[a, y] > 0 and needs a dual Λ > 0.
Centred, its product S Λ would be the iterate's mean complementarity. Its Λ enters the dual
equation C − u − μ − GᵀΛ = r_d as c Λ at the entry (b, y) and −Λ at (a, y): taken from μ[b, y]
(and given to μ[a, y]) it leaves the equation as it was, but where many rows join at one entry
its μ bounds what they can take together (at most :data:`JOIN_SHARE` of it), and their products
fall orders of magnitude below the mean. Such rows have almost no weight Λ/S in the Newton
blocks: the directions run through their slacks and the primal steps stop short of them, and the
short steps let the reach join still more rows (a 20 × 20 grid at ε = 2, Dirichlet prior,
random loss: steps of 2 to 10 % of the way for a hundred iterations, 350 steps in all, the set
grown five-fold).

So each joining row's product is at least :data:`JOIN_FLOOR` times the mean: what μ cannot pay
is the row's *excess*, a dual residual the steps shrink as they shrink any (by 1 − α_d a step,
the Newton equations aiming at r_d = 0). The excess is kept row by row and shrunk with them, so
that the *settled* duals max(Λ − excess, 0) are those the residual would leave were it gone:
the Lagrangian bound is taken at them as well as at Λ (either is a valid bound, any Λ >= 0 is),
and the rules that watch the residual for round-off (refinement, the end of single precision)
see the residual at Λ − excess, which only round-off moves from zero. A row whose Λ has fallen
below its excess is clipped at 0 in the settled duals, and near the optimum, where the steps are
short and the excess fades slowly, a few such rows can cost the bound more than the rest of the
gap: the bound is then taken at duals repaired from the settled ones (:func:`settled_bound`),
which take back most of that (on a 40 × 40 grid, traced with six rounds, the bound came to
about 1e-5 of the value at Λ − excess, relative; on 300 haversine locations about 3e-5; on a
6 × 6 grid with a random loss about half, where the rows pressing on a clipped row's entry had
too little Λ to lower, whatever the rounds). At most :data:`JOIN_GROWTH` times the set's rows
join at one step, those the direction crosses first.
"""

from __future__ import annotations

import numpy as np

from mechdesign.solvers.metric_interior_memory import check_growth

#: the share of an entry's μ that the Λ of rows joining the working set may take from it
JOIN_SHARE = 0.5
#: the least complementarity product of a joining row, as a share of the iterate's mean: the
#: part of its Λ that μ cannot pay starts as its excess (the module docstring). The method alone
#: to a gap of 5e-7, over 10 × 10 grids, 100 random points and 100 haversine locations (ε 0.1,
#: 0.5, 2 and 8, three priors, the metric and a random loss; 72 instances), took 3,456 steps in
#: all with a floor of 0.03, 3,073 with 0.1, 2,696 with 0.3 and 2,537 with 1 (fully centred); on
#: 300 haversine locations (ε = 0.1, Dirichlet prior, metric loss; ε = 0.25, uniform, squared) and
#: the 20 × 20 grid (ε = 2, Dirichlet, random) 0.3 was the fastest (53, 92 and 111 s; 0.1: 63,
#: 116 and 155 s), and at 1 the grid's bound stalled at a gap of 2.4e-4: the larger the excess,
#: the more rows whose Λ falls below it, which the bound at the settled duals cannot use
JOIN_FLOOR = 0.3
#: (a limit on what the excess of the rows joining at one step may take from the bound, on while
#: the gap failed to halve within ten steps, held the bound up while clipped rows counted at 0;
#: with them repaired (:func:`settled_bound`) it only cost steps: the method alone to a gap of
#: 9e-7 on 20 × 20 grids at ε = 1, Dirichlet prior, squared loss and ε = 0.5, Zipf prior, metric
#: loss took 176 and 246 steps with it, 148 and 177 without; 300 haversine locations at ε = 0.1,
#: 0.25 and 1 (uniform prior, squared loss; at 0.25 the metric loss too) 510 steps in all with
#: it, 496 without; the 72 small instances 2,699 steps either way)
#: the most rows that may join the working set at one step, as a share of the rows already in
#: it: those the step's direction would cross first (:func:`first_crossed`). Once the reach has
#: doubled to most of a step, one long direction can bring in several times the set (300
#: haversine locations at ε = 0.1, uniform prior, squared loss: 4.0 million rows at the fourth
#: step, 4.8 million in the set at the end). The method alone to a gap of 5e-7 on that instance
#: took 157 steps and 164 s without a cap, 123–129 steps and 75–77 s with a cap of 2 or 1, 127
#: steps and 61 s with 0.5; at ε = 0.25 (uniform, squared) 186 steps and 111 s without, 96, 80
#: and 72 s with 2, 1 and 0.5. The 72 small instances (10 × 10 grids, 100 random points, 100
#: haversine locations; ε 0.1, 0.5, 2 and 8, three priors, the metric and a random loss): 2,740
#: steps without, 2,718 with 0.5; on 20 × 20 grids the cap of 0.5 never binds
JOIN_GROWTH = 0.5
#: the rounds of :func:`settled_bound`'s repair of the rows clipped at 0: on 300 haversine
#: locations at ε = 0.25 (uniform prior, metric loss), at the steps with clipped rows, one round
#: left the bound up to 2.0e-3 of the value below the value at Λ − excess, three rounds up to
#: 2.2e-5 and six up to 1.4e-5 (every third step looked at)
REPAIR_HOPS = 4


def first_crossed(lp, it, pair: np.ndarray, out: np.ndarray, dK: np.ndarray) -> tuple:
    """Of the rows (``pair``, ``out``) outside the working set that the reach would join after a
    step along ``dK`` (their slacks already stepped), at most :data:`JOIN_GROWTH` times the set's
    rows (at least one): those whose slacks the direction would cross at the shortest step (the
    stepped slack over −(G dK) is that step less the one taken: the same order), in the order
    given. The rows left out stay outside, their slacks still limiting every step, and join when
    a later step's reach comes to them."""
    room = JOIN_GROWTH * it.rows.size
    if pair.size <= room:
        return pair, out
    keep = max(int(room), 1)  # (at least the first: a set that cannot grow would stall)
    d = lp.coef[pair] * dK[lp.b[pair], out] - dK[lp.a[pair], out]
    first = np.sort(np.argpartition(it.slack[pair, out] / -d, keep - 1)[:keep])
    return pair[first], out[first]


def join(lp, it, pair: np.ndarray, out: np.ndarray) -> None:
    """Add the rows (``pair``, ``out``) to the working set of the iterate ``it``: each row's Λ
    centred at the mean complementarity, the rows taking from one entry's μ scaled down together
    to at most :data:`JOIN_SHARE` of it, then raised to a product of :data:`JOIN_FLOOR` times
    the mean, the rise kept as the row's excess (``it.excess``, None while no row has one)."""
    check_growth(pair.size)
    it.moved()  # (its μ and Λ change)
    g, m = it.K.shape
    total, count = it.complementarity()
    mean = total / count
    a, b, c = lp.a[pair], lp.b[pair], lp.coef[pair]
    slack = it.slack[pair, out]
    wanted = mean / slack
    taken = np.zeros((g, m))
    np.add.at(taken, (b, out), c * wanted)
    paid = wanted * np.minimum(1.0, JOIN_SHARE * it.mu[b, out] / taken[b, out])
    excess = np.maximum(JOIN_FLOOR * wanted - paid, 0.0)
    np.add.at(it.mu, (b, out), -c * paid)
    np.add.at(it.mu, (a, out), paid)
    rows = it.lam.size
    it.rows.add(pair, out)
    it.S = np.concatenate([it.S, slack])
    it.lam = np.concatenate([it.lam, paid + excess])
    if it.excess is not None or excess.any():
        it.excess = np.concatenate([np.zeros(rows) if it.excess is None else it.excess, excess])
    it._drop_slack_when_complete()


def settled(it) -> np.ndarray:
    """The duals max(Λ − excess, 0) of the working set's rows (Λ itself while no row has an excess)."""
    return it.lam if it.excess is None else np.maximum(it.lam - it.excess, 0.0)


def settled_bound(lp, it) -> float:
    """The Lagrangian bound Σ_x min_y (C − GᵀΛ')[x, y] at the settled duals Λ' (:func:`settled`),
    or at duals repaired from them (:func:`_repaired`) where that is higher; any Λ' >= 0 gives a
    bound. A row clipped at 0 costs the bound at the settled duals what Λ − excess lacks of 0
    times its coefficient, at its entry (b, y): a few rows can cost more than the rest of the gap
    (a 40 × 40 grid at ε = 1: 414 of 1.7 million rows took 0.52 from a bound near 1.8, and the
    proven gap held at 2 % for 20 steps; at the repaired duals it fell at every step, to 3.3e-3
    at the 36th)."""
    lam = settled(it)
    reduced = lp.cost - it.rows.transpose(lam)
    bound = float(lp.row_minima(reduced).sum())
    if it.excess is None:
        return bound
    clipped = np.flatnonzero(it.excess > it.lam)
    if clipped.size == 0:
        return bound
    repaired = _repaired(lp, it, lam, reduced, clipped)
    return max(bound, float(lp.row_minima(lp.cost - it.rows.transpose(repaired)).sum()))


def _repaired(lp, it, lam: np.ndarray, reduced: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """Duals Λ' >= 0 whose reduced costs come near those at Λ − excess where the settled duals
    ``lam`` (reduced costs ``reduced``) clip the rows ``clipped`` at 0: each input's target is its
    least reduced cost at Λ − excess, and an entry below it is raised by lowering the duals of
    the other rows that press on it (c Λ at their b-side entry (b, y): lowering Λ by η raises it
    by c η and lowers their a-side entry (a, y) by η, which its own margin above the target often
    absorbs), in proportion to what each presses, for up to :data:`REPAIR_HOPS` rounds, each
    taking up the shortfalls the last one left at the a-sides."""
    rows = it.rows
    g, m = reduced.shape
    short = it.excess[clipped] - it.lam[clipped]  # (what Λ − excess lacks of 0)
    wanted = reduced.copy()  # (the reduced costs at Λ − excess)
    np.add.at(wanted, (rows.b[clipped], rows.out[clipped]), rows.c[clipped] * short)
    np.add.at(wanted, (rows.a[clipped], rows.out[clipped]), -short)
    target = lp.row_minima(wanted)
    lam, current, entry = lam.copy(), reduced, None  # (``reduced`` taken over: the caller has its bound)
    for _ in range(REPAIR_HOPS):
        deficit = (target[:, None] - current).ravel()
        if not (deficit > 0).any():
            break
        entry = rows.b * m + rows.out if entry is None else entry
        press = np.flatnonzero((deficit[entry] > 0) & (lam > 0))
        if press.size == 0:
            break
        at, c = entry[press], rows.c[press]
        pressed = np.bincount(at, weights=c * lam[press], minlength=g * m)
        eta = np.minimum(1.0, deficit[at] / pressed[at]) * lam[press]
        lam[press] -= eta
        np.add.at(current, (rows.b[press], rows.out[press]), c * eta)
        np.add.at(current, (rows.a[press], rows.out[press]), -eta)
    return np.maximum(lam, 0.0)
