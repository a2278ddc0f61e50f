"""Min–max-entry designs under pure DistP, by the Charnes–Cooper scaling.

The max-off-diagonal objective (paper 004, eq. (6)) asks for the smallest t with K_k[x, y] <= t
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
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp

from .highs_model import INF, SolverDeclined, checked, quiet_model, record_declined, run_to_optimum
from .objectives import MaxOffDiagonal
from .privacy.distp import DistP, ProfilePrivacy, XDistP
from .privacy.ldp import links
from .problem import register_special_solver

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
        self.keys, self.shape = keys, (n, m)
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
        r, c, v, lo, n_cols, self.free = _pair_rows(first, second, eps, m, n_w, s_col + 1)
        rows += [top + x for x in r]
        cols += c
        vals += v
        self.row_lower = lo
        top += sum(x.size for x in lo)
        self.A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(top, n_cols))

    def solve(self, zero: bool) -> np.ndarray:
        """The optimal columns (HiGHS dual simplex); raises :class:`SolverDeclined` when HiGHS
        rejects the model or ends without an optimum."""
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
        if not run_to_optimum(h):
            raise SolverDeclined(f"the scaled LP ended {h.modelStatusToString(h.getModelStatus())}")
        return np.asarray(h.getSolution().col_value)


def _pair_rows(first, second, eps, m: int, n_w: int, n_cols: int):
    """The pairs' ratio constraints μ_a <= e^ε μ_b, μ_b <= e^ε μ_a (row upper bounds all 0),
    each pair in the form that keeps its coefficients well scaled (as
    :class:`~mechdesign.privacy.distp.DistP` does):

    * ε = 0: μ_a − μ_b = 0;
    * 0 < ε <= 20: d = μ_a − μ_b (a free new column), d − (e^ε − 1) μ_b <= 0,
      −d − (e^ε − 1) μ_a <= 0 (e^ε − 1 from expm1: no coefficient 1 + 1e-9);
    * ε > 20: a chain of k links e^{ε/k} each way through k − 1 new columns per output.

    μ_a of side a, output y, is column n_w + a·m + y; new columns start at ``n_cols``. Returns
    (rows numbered from 0, columns, values, row lower bounds, total columns, free columns).
    """
    rows, cols, vals, lower, free = [], [], [], [], []
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
            add([mu_a, mu_b], [1.0, -1.0], 0.0)
        elif k == 1:
            d = n_cols + outputs
            n_cols += m
            free += d.tolist()
            add([d, mu_a, mu_b], [1.0, -1.0, 1.0], 0.0)
            add([d, mu_b], [1.0, -np.expm1(e)], -INF)
            add([d, mu_a], [-1.0, -np.expm1(e)], -INF)
        else:
            c = np.exp(e / k)
            for p, q in ((mu_a, mu_b), (mu_b, mu_a)):
                seq = [p] + [n_cols + t * m + outputs for t in range(k - 1)] + [q]
                n_cols += (k - 1) * m
                for t in range(k):
                    add([seq[t], seq[t + 1]], [1.0, -c], -INF)
    return rows, cols, vals, lower, n_cols, free


def solve_max_entry(keys: list[str], mask_keys: set[str], mask: np.ndarray, notions,
                    reasons: list[str] | None = None):
    """(raw matrices by key, t*, seconds spent building the LP) of min max masked entry under
    the pure DistP ``notions``, or None when the scaled LP fails (the caller then takes the
    general route; the reason is appended to ``reasons`` when given)."""
    try:
        return _max_entry(keys, mask_keys, mask, notions)
    except SolverDeclined as exc:
        if reasons is not None:
            reasons.append(exc.reason)
        return None


def _max_entry(keys, mask_keys, mask, notions):
    """:func:`solve_max_entry`, raising :class:`SolverDeclined` on HiGHS trouble."""
    start = time.perf_counter()
    program = ScaledProgram(keys, mask_keys, mask, notions)
    built = time.perf_counter() - start
    x = program.solve(zero=False)
    s = float(x[program.s_col])
    if s >= S_CAP * (1 - 1e-9):  # t* = 0, or below 1/S_CAP
        x = program.solve(zero=True)
        s, t = 1.0, 0.0
    else:
        t = 1.0 / s
    n, m = program.shape
    raw = {key: x[b * n * m:(b + 1) * n * m].reshape(n, m) / s for b, key in enumerate(keys)}
    return raw, t, built


NAME = "HiGHS (Charnes–Cooper scaled max-entry LP)"


@register_special_solver
def max_entry_by_scaling(problem):
    """Special solver: the max-off-diagonal objective under pure DistP / XDistP / profile
    privacy only (any number of notions, shared or per-context mechanisms)."""
    objective = problem.objective
    if type(objective) is not MaxOffDiagonal or not problem.privacy:
        return None
    notions = problem.privacy
    if any(type(n) not in HOMOGENEOUS or n.delta != 0 for n in notions):
        return None
    keys = problem.keys
    if not set(objective.keys) <= set(keys) or any(set(n.keys(keys)) - set(keys) for n in notions):
        return None  # the general route reports the unknown keys
    start = time.perf_counter()
    reasons: list[str] = []
    found = solve_max_entry(keys, set(objective.keys), objective.mask, notions, reasons)
    if found is None:
        for reason in reasons:
            record_declined(problem, NAME, reason)
        return None
    raw, t, built = found
    return raw, {"status": "optimal", "name": NAME,
                 "compile_seconds": built, "solve_seconds": time.perf_counter() - start - built,
                 "objective": t}
