"""Min–max-entry designs under pure DistP, by the Charnes–Cooper scaling.

The max-off-diagonal objective (Geumlek and Chaudhuri, “Profile-Based Privacy for Locally Private Computations”, ISIT 2019, eq. (6)) asks for the smallest t with K_k[x, y] <= t
on every masked entry of every mechanism k. Written as it reads, that is one row per entry:
245 000 rows for 100 profiles × 50 categories, on top of the 250 000 entries themselves, and
the LP took 47 s through cvxpy and HiGHS (interior point with crossover).

Every pure DistP constraint (profile privacy and XDistP included) is homogeneous in the
mechanisms: (λ_a K_a)[y] <= e^{ε_ab} (λ_b K_b)[y]. Only the row sums Σ_y K[x, y] = 1 are not.
Dividing by t > 0 (W = K / t, s = 1 / t) gives the equivalent LP

    max s   s.t.  Σ_y W_k[x, y] = s                      (every mechanism k, input x)
                  0 <= W_k[x, y] <= 1 on masked entries, W_k[x, y] >= 0 elsewhere
                  μ_a = λ_a W_{k_a}                      (every side a of a pair)
                  μ_a <= e^{ε_ab} μ_b,  μ_b <= e^{ε_ab} μ_a

in which the cap is a column bound rather than a row. The optimum is t* = 1 / s*, K = W / s*.
Measured at 100 profiles × 50 categories: 3.5 s by the dual simplex (HiGHS through highspy,
built with scipy.sparse), same optimum to 1e-15.

t* = 0 (a zero-noise design is private, e.g. identical profiles) makes s unbounded; s is capped
at S_CAP, and when the cap is reached the zero design is sought directly (masked entries fixed
at 0, s = 1).

The reported lower bound is proven from the scaled LP's row duals, whatever their accuracy
(:func:`proven_bound`). In the original variables the LP is

    (P)  min t  s.t.  Σ_y K_k[x, y] = 1 (dual u),  K_k[x, y] <= t masked (dual w >= 0),
                      G(K) <= 0 (dual π >= 0),      K >= 0,

with G the pair rows μ_p − e^ε μ_q <= 0 in μ = λK. The box 0 <= K <= 1, 0 <= t <= 1 keeps
the optimum (row-stochastic entries are <= 1, and t can drop to the largest masked entry), so
weak duality on that box gives, for ANY u, w >= 0, π >= 0 (Lagrangian relaxation),

    t* >= Σ_{k,x} u_{k,x} + min(0, 1 − Σ w) + Σ_{k,x,y} min(0, −u_{k,x} + w_{k,x,y} m_{x,y} + g_{k,x,y}),

g = Gᵀπ. For fixed w the best u_{k,x} is min_y (g + w m)_{k,x,y}, which leaves

    t* >= B(π, w) = Σ_{k,x} min_y (g_{k,x,y} + w_{k,x,y} m_{x,y}) + min(0, 1 − Σ w).

π is the scaled LP's pair-row duals times t* = 1/s* (the scaling W = K/t maps the two LPs'
duals onto each other; the μ-definition rows fold into g, the free difference columns and the
chain links into one row per pair direction, negative parts dropped); w is then chosen by
water-filling (:func:`_water_fill`). t* = 0 has the bound 0 trivially (masked entries are >= 0).
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np
import scipy.sparse as sp

from mechdesign.core.limits import TIME_LIMIT, relative_gap
from mechdesign.core.objectives import MaxOffDiagonal
from mechdesign.privacy.distp import DistP, ProfilePrivacy, XDistP
from mechdesign.privacy.ldp import links
from mechdesign.solvers.highs_model import (
    INF,
    SolverDeclined,
    checked,
    give_time,
    quiet_model,
    resumable_run,
)
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.registry import SpecialSolver

#: the largest s = 1/t sought; reaching it means t* = 0 (or below 1/S_CAP, then the general LP)
S_CAP = 1e7
#: the notions whose constraints are the homogeneous rows above (exact type: subclasses such as
#: the f-divergence DistP are not linear)
HOMOGENEOUS = (DistP, XDistP, ProfilePrivacy)


def _sides(notions) -> tuple[list[tuple[str, np.ndarray]], np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sides (mechanism key, distribution) and the pairs as arrays: side a, side b, ε_ab."""
    sides: list[tuple[str, np.ndarray]] = []
    index: dict[tuple[str, bytes], int] = {}
    ends, epsilons = [], []
    for notion in notions:
        for pair, eps in zip(notion.pairs, notion.pair_epsilons()):
            for side in pair:
                dist = np.asarray(side.distribution, dtype=float)
                at = index.setdefault((side.key, dist.tobytes()), len(sides))
                if at == len(sides):
                    sides.append((side.key, dist))
                ends.append(at)
            epsilons.append(float(eps))
    ends = np.array(ends, dtype=np.int64).reshape(-1, 2)
    return sides, ends[:, 0], ends[:, 1], np.array(epsilons)


class ScaledProgram:
    """The scaled LP's rows (built once) and its column bounds for max s, or, with ``zero``,
    for the zero design (masked entries fixed at 0, s = 1)."""

    def __init__(self, keys: list[str], mask_keys: set[str], mask: np.ndarray, notions):
        sides, first, second, eps = _sides(notions)
        n, m = mask.shape
        self.keys, self.shape, self.sides = keys, (n, m), sides
        size = n * m
        n_w = len(keys) * size
        self.s_col = s_col = n_w + len(sides) * m
        self.capped = np.zeros(s_col + 1, dtype=bool)  # the masked entries W_k[x, y]
        for b, key in enumerate(keys):
            if key in mask_keys:
                self.capped[b * size:(b + 1) * size] = mask.ravel()
        rows, cols, vals = [], [], []
        # Σ_y W_k[x, y] − s = 0
        n_rows = len(keys) * n
        rows += [np.repeat(np.arange(n_rows), m), np.arange(n_rows)]
        cols += [np.arange(n_w), np.full(n_rows, s_col)]
        vals += [np.ones(n_w), -np.ones(n_rows)]
        top = n_rows
        # λ_a W_k − μ_a = 0
        block = {key: b for b, key in enumerate(keys)}
        x, y = np.divmod(np.arange(size), m)
        for a, (key, dist) in enumerate(sides):
            weight = dist[x]
            keep = weight != 0
            rows += [top + a * m + y[keep], top + a * m + np.arange(m)]
            cols += [block[key] * size + np.arange(size)[keep], n_w + a * m + np.arange(m)]
            vals += [weight[keep], -np.ones(m)]
        top += len(sides) * m
        self.n_eq = top
        r, c, v, lo, n_cols, self.free, folds = _pair_rows(first, second, eps, m, n_w, s_col + 1)
        #: one row per pair direction μ_p <= e^ε μ_q: (first row of its dual, p, q, ε, sign)
        self.folds = [(top + start, p, q, e, sign) for start, p, q, e, sign in folds]
        rows += [top + x for x in r]
        cols += c
        vals += v
        self.row_lower = lo
        top += sum(x.size for x in lo)
        self.A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(top, n_cols))

    def solve(self, zero: bool, limits=None) -> tuple[np.ndarray, np.ndarray] | None:
        """The optimal columns and row duals (HiGHS dual simplex), or None when the time
        ``limits`` leave ran out first (the dual simplex has no private design before its
        optimum); raises :class:`SolverDeclined` when HiGHS rejects the model or ends without
        an optimum otherwise."""
        A, s_col = self.A, self.s_col
        size = A.shape[1]
        cost, lower, upper = np.zeros(size), np.zeros(size), np.full(size, INF)
        lower[self.free] = -INF
        # chain links: μ <= s <= S_CAP, so a_t = μ / c^t <= S_CAP is a witness; the bound keeps
        # HiGHS's presolve from declaring the LP unbounded (seen at ε = 30)
        upper[s_col + 1:] = S_CAP
        upper[self.free] = INF
        upper[:s_col + 1][self.capped] = 0.0 if zero else 1.0
        if zero:
            lower[s_col] = upper[s_col] = 1.0
        else:
            cost[s_col], upper[s_col] = -1.0, S_CAP
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
        lp.row_lower_ = np.concatenate([np.zeros(self.n_eq), *self.row_lower])
        lp.row_upper_ = np.zeros(A.shape[0])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        h = quiet_model(solver="simplex")  # measured faster than IPM + crossover here (3.5 s vs 6.1 s)
        checked(h.passModel(lp), "the scaled max-entry LP")
        give_time(h, limits)
        status = resumable_run(h)
        if status == highspy.HighsModelStatus.kTimeLimit:
            return None
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverDeclined(f"the scaled LP ended {h.modelStatusToString(status)}")
        solution = h.getSolution()
        return np.asarray(solution.col_value), np.asarray(solution.row_dual)


def _pair_rows(first, second, eps, m: int, n_w: int, n_cols: int):
    """The pairs' ratio constraints μ_a <= e^ε μ_b, μ_b <= e^ε μ_a (row upper bounds all 0),
    each pair in the form that keeps its coefficients well scaled (as
    :class:`~mechdesign.privacy.distp.DistP` does):

    * ε = 0: μ_a − μ_b = 0;
    * 0 < ε <= 20: d = μ_a − μ_b (a free new column), d − (e^ε − 1) μ_b <= 0,
      −d − (e^ε − 1) μ_a <= 0 (e^ε − 1 from expm1: no coefficient 1 + 1e-9);
    * ε > 20: a chain of k links e^{ε/k} each way through k − 1 new columns per output.

    μ_a of side a, output y, is column n_w + a·m + y; new columns start at ``n_cols``. Returns
    (rows numbered from 0, columns, values, row lower bounds, total columns, free columns,
    folds). A fold (start, p, q, ε, sign) names the m rows start, …, start + m − 1 (one per
    output) whose duals y give the multiplier max(0, sign·y) of μ_p <= e^ε μ_q: the row
    μ_a − μ_b = 0 for both directions (signs −1 and +1), d − (e^ε − 1) μ_b <= 0 and
    −d − (e^ε − 1) μ_a <= 0 (d = μ_a − μ_b), and a chain's first link.
    """
    rows, cols, vals, lower, free, folds = [], [], [], [], [], []
    top, outputs = 0, np.arange(m)

    def add(columns, values, lo):
        nonlocal top
        r = top + np.arange(columns[0].size)
        for c, v in zip(columns, values):
            rows.append(r)
            cols.append(np.asarray(c).ravel())
            vals.append(np.broadcast_to(v, r.shape).astype(float))
        lower.append(np.full(r.size, lo))
        top += r.size

    for a, b, e in zip(first, second, eps):
        mu_a, mu_b = n_w + a * m + outputs, n_w + b * m + outputs
        k = 0 if e == 0 else links(e)
        if k == 0:
            folds += [(top, a, b, 0.0, -1.0), (top, b, a, 0.0, 1.0)]
            add([mu_a, mu_b], [1.0, -1.0], 0.0)
        elif k == 1:
            d = n_cols + outputs
            n_cols += m
            free += d.tolist()
            add([d, mu_a, mu_b], [1.0, -1.0, 1.0], 0.0)
            folds.append((top, a, b, e, -1.0))
            add([d, mu_b], [1.0, -np.expm1(e)], -INF)
            folds.append((top, b, a, e, -1.0))
            add([d, mu_a], [-1.0, -np.expm1(e)], -INF)
        else:
            c = np.exp(e / k)
            for (p, q), ends in (((mu_a, mu_b), (a, b)), ((mu_b, mu_a), (b, a))):
                folds.append((top, *ends, e, -1.0))
                seq = [p] + [n_cols + t * m + outputs for t in range(k - 1)] + [q]
                n_cols += (k - 1) * m
                for t in range(k):
                    add([seq[t], seq[t + 1]], [1.0, -c], -INF)
    return rows, cols, vals, lower, n_cols, free, folds


#: the unit round-off of IEEE-754 double precision, rounding to nearest
_U = np.finfo(float).eps / 2


def exp_upper(eps: float | list[float] | np.ndarray) -> np.ndarray:
    """A float E >= e^ε for each float ε (1 exactly at ε = 0).

    The library exp is within one ulp; E = fl(exp(ε)·(1 + 4u)) raised by one more ulp exceeds
    e^ε. The row μ_p − E μ_q <= 0 then holds wherever the exact constraint μ_p <= e^ε μ_q does
    (μ_q >= 0), so a bound proven with E is a bound for the exact constraints.
    """
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore"):
        up = np.nextafter(np.exp(eps) * (1 + 4 * _U), np.inf)
    return np.where(eps == 0, 1.0, up)


def pair_multipliers(program: ScaledProgram, row_dual: np.ndarray, t: float) -> np.ndarray:
    """The multipliers π >= 0 of (P)'s rows μ_p − e^ε μ_q <= 0, one per fold and output.

    With HiGHS's sign convention (c = Aᵀy + z for min −s) a row ``<= 0`` has y <= 0 at the
    optimum, and μ_a − μ_b = 0 serves the direction (a, b) with −y and (b, a) with +y, hence
    π = max(0, sign·y). Scaling by t = 1/s* maps the duals of max s onto those of (P): the
    scaled LP's objective s* = Σ (dual of W <= 1) becomes Σ w = 1. Shape (folds, m).
    """
    m = program.shape[1]
    if not program.folds:
        return np.zeros((0, m))
    starts = np.array([f[0] for f in program.folds], dtype=np.int64)
    signs = np.array([f[4] for f in program.folds], dtype=float)
    y = np.asarray(row_dual, dtype=float)[starts[:, None] + np.arange(m)]
    return np.maximum(signs[:, None] * y, 0.0) * t


def _entry_coefficients(program: ScaledProgram, pi: np.ndarray) -> np.ndarray:
    """Lower bounds on g = Gᵀπ, shape (keys, n, m).

    g_k[x, y] = Σ_{sides a through k} λ_a[x] Π_a[y], Π_a = Σ_{folds with p = a} π − Σ_{folds
    with q = a} E π (E = :func:`exp_upper`). Π_a is accumulated over the c_a folds at side a,
    then g_k over the n_k sides through k, one rounding per product: the computed entry is
    within γ_T Σ |terms| of the exact one, T = n_k + max_a c_a + 1 (Higham, "Accuracy and
    Stability of Numerical Algorithms", SIAM 2002, §3.1). 1.01·(T + 2)·u times the computed
    Σ |terms| is subtracted (the extra covers the subtraction's own rounding).
    """
    n, m = program.shape
    folds = program.folds
    p = np.array([f[1] for f in folds], dtype=np.int64)
    q = np.array([f[2] for f in folds], dtype=np.int64)
    E = exp_upper([f[3] for f in folds]).reshape(-1, 1)
    pi = np.where(np.isfinite(E) & np.isfinite(pi), np.asarray(pi, dtype=float), 0.0)
    e_pi = np.where(pi > 0, E * pi, 0.0)  # no inf·0
    signed = np.zeros((len(program.sides), m))
    total = np.zeros((len(program.sides), m))
    np.add.at(signed, p, pi)
    np.add.at(signed, q, -e_pi)
    np.add.at(total, p, pi)
    np.add.at(total, q, e_pi)
    block = {key: b for b, key in enumerate(program.keys)}
    g = np.zeros((len(program.keys), n, m))
    size = np.zeros_like(g)
    touching = np.bincount(np.r_[p, q], minlength=len(program.sides))
    terms = np.full(len(program.keys), 3)  # per key: its sides + most folds at one of them + 3
    most = np.zeros(len(program.keys), dtype=np.int64)
    for a, (key, dist) in enumerate(program.sides):
        b = block[key]
        g[b] += dist[:, None] * signed[a]
        size[b] += dist[:, None] * total[a]
        terms[b] += 1
        most[b] = max(most[b], touching[a])
    return g - (1.01 * _U) * (terms + most)[:, None, None] * size


def _water_fill(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """w >= 0, zero off the mask, Σ w <= 1, maximising Σ_r min_y (g_r + w_r)[y] over the rows
    r = (k, x).

    Row r's level L_r = min_y (g + w)_r can rise above min_y g_r only through its masked
    entries and never above h_r = min of its unmasked g; lifting it from the j-th to the
    (j+1)-th smallest masked value costs j per unit of level. Every unit of level gains 1, so
    the optimum buys the cheapest segments first: all segments of cost 1, then of cost 2, …,
    the last cost class filled in proportion. (Segments are capped at length 1: a longer one
    would cost more than the whole budget.) Any w is valid for the bound; this one makes
    B(π, w) = max_w B(π, w).
    """
    m = g.shape[-1]
    values, masked = g.reshape(-1, m), mask.reshape(-1, m)
    cap = np.where(masked, np.inf, values).min(axis=1)
    low = np.sort(np.where(masked, values, np.inf), axis=1)
    high = np.minimum(np.concatenate([low[:, 1:], np.full((low.shape[0], 1), np.inf)], axis=1),
                      cap[:, None])
    with np.errstate(invalid="ignore"):
        length = np.where(np.isfinite(low) & (low < cap[:, None]), np.minimum(high - low, 1.0), 0.0)
    cost = length.sum(axis=0) * np.arange(1, m + 1)
    spent = np.cumsum(cost)
    fraction = (spent <= 1.0).astype(float)
    if not fraction.all():
        j = int(np.argmin(fraction))
        fraction[j] = (1.0 - (spent[j - 1] if j else 0.0)) / cost[j]
    level = np.minimum(low[:, 0], cap) + length @ fraction
    return np.where(masked, np.maximum(level[:, None] - values, 0.0), 0.0).reshape(g.shape)


def bound_from_multipliers(program: ScaledProgram, pi: np.ndarray) -> float:
    """A proven lower bound on t* from any pair multipliers π >= 0 (shape (folds, m)).

    B(π, w) = Σ_{k,x} min_y (g + w m)_{k,x,y} + min(0, 1 − Σ w) with g from
    :func:`_entry_coefficients` (already rounded down) and w from :func:`_water_fill`. The
    minima of computed sums are within 1.01u relative of the true ones, math.fsum rounds
    correctly, so 8u·(Σ |minima| + 1 + Σ w) covers the remaining round-off (IEEE-754 double,
    round to nearest; 1e-300 for underflow). t* >= 0 always (masked entries are >= 0).
    """
    m = program.shape[1]
    g = _entry_coefficients(program, np.asarray(pi, dtype=float).reshape(-1, m))
    if not np.all(np.isfinite(g)):
        return 0.0
    mask = program.capped[:g.size].reshape(g.shape)
    w = _water_fill(g, mask)
    lowest = (g + w).min(axis=2).ravel()
    spent = math.fsum(w.ravel())
    value = math.fsum(lowest) + min(0.0, 1.0 - spent)
    margin = 8 * _U * (math.fsum(np.abs(lowest)) + 1.0 + spent) + 1e-300
    return max(value - margin, 0.0)


def proven_bound(program: ScaledProgram, row_dual: np.ndarray, t: float) -> float:
    """The lower bound on t* proven from the scaled LP's row duals at its optimum s* = 1/t:
    :func:`bound_from_multipliers` of :func:`pair_multipliers`."""
    return bound_from_multipliers(program, pair_multipliers(program, row_dual, t))


def solve_max_entry(keys: list[str], mask_keys: set[str], mask: np.ndarray, notions, limits=None):
    """(raw matrices by key, t*, proven lower bound on t*, seconds spent building the LP) of
    min max masked entry under the pure DistP ``notions``, or None when the time ``limits``
    ran out before the LP's optimum; raises :class:`SolverDeclined` when HiGHS rejects the
    scaled LP or ends it without an optimum otherwise (the problem then takes the general
    route)."""
    start = time.perf_counter()
    program = ScaledProgram(keys, mask_keys, mask, notions)
    built = time.perf_counter() - start
    solved = program.solve(zero=False, limits=limits)
    if solved is None:
        return None
    x, row_dual = solved
    s = float(x[program.s_col])
    if s >= S_CAP * (1 - 1e-9):  # t* = 0, or below 1/S_CAP
        solved = program.solve(zero=True, limits=limits)
        if solved is None:
            return None
        x = solved[0]
        s, t, bound = 1.0, 0.0, 0.0  # t >= every masked entry >= 0
    else:
        t = 1.0 / s
        bound = proven_bound(program, row_dual, t)
    n, m = program.shape
    raw = {key: x[b * n * m:(b + 1) * n * m].reshape(n, m) / s for b, key in enumerate(keys)}
    return raw, t, bound, built


NAME = "HiGHS (Charnes–Cooper scaled max-entry LP)"


def applies(problem) -> str | None:
    """The max-off-diagonal objective under pure DistP / XDistP / profile privacy only (any
    number of notions, shared or per-context mechanisms)."""
    objective = problem.objective
    if type(objective) is not MaxOffDiagonal:
        return f"needs the max-off-diagonal objective, the objective is {objective.kind}"
    if not problem.privacy:
        return "needs a privacy notion"
    names = ", ".join(h.__name__ for h in HOMOGENEOUS)
    if any(type(n) not in HOMOGENEOUS or n.delta != 0 for n in problem.privacy):
        return f"needs only pure notions among {names}"
    keys = problem.keys
    if not set(objective.keys) <= set(keys) or any(set(n.keys(keys)) - set(keys) for n in problem.privacy):
        return "names mechanisms the problem does not have (the general route reports them)"
    return None


def max_entry_by_scaling(problem, limits=None):
    """The Charnes–Cooper scaled LP. The bound it reports is proven (:func:`proven_bound`);
    when it is not within half the problem's gap tolerance of the LP's t* the solver declines
    and the problem goes on to the general route. When the time ``limits`` run out first, no
    design (the problem then returns its certified data-independent design, with the status
    time-limit)."""
    objective, notions, keys = problem.objective, problem.privacy, problem.keys
    start = time.perf_counter()
    found = solve_max_entry(keys, set(objective.keys), objective.mask, notions, limits)
    if found is None:
        record = {"name": NAME, "solve_seconds": time.perf_counter() - start}
        return None, SolverOutcome(TIME_LIMIT, record, message="HiGHS stopped the scaled LP at the time limit")
    raw, t, bound, built = found
    if relative_gap(t, bound, problem.objective_scale()) > problem.gap_tolerance / 2:
        raise SolverDeclined(f"the duals prove only {bound!r} against the LP's {t!r}")
    record = {"name": NAME, "compile_seconds": built, "solve_seconds": time.perf_counter() - start - built}
    return raw, SolverOutcome("optimal", record, bound=bound, bound_proven=True)


SOLVER = SpecialSolver(NAME, applies, max_entry_by_scaling)
