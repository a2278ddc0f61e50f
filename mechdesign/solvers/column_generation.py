"""Output-column generation: exact optima of large column-separable LPs.

When every privacy constraint acts inside single output columns (ε-LDP: each column lies in the
cone {v : v_x <= e^ε v_x'}), the design LP

    min Σ_{x,y} C[x, y] K[x, y]   s.t.  Σ_y K[x, y] = 1,   K[:, y] ∈ cone   (all y)

couples the columns only through the |X| row sums. Optimal mechanisms use few outputs (for
ε-LDP with a linear objective, a handful of staircase columns, Kairouz–Oh–Viswanath), so the
LP is solved over a growing subset of output columns: a restricted master LP over the chosen
columns (HiGHS through highspy, built with scipy.sparse), then pricing of every missing column
with the master's row duals u: column y can improve the master iff min_{v ∈ cone} Σ_x (C[x,y] −
u_x) v_x < 0, which for the LDP cone is Σ_x min(a_x, e^ε a_x) with a = C[:, y] − u (the best
staircase puts e^ε exactly where a_x < 0). When no column prices out, (u, 0) is dual feasible for
the full LP, so the master optimum is the full optimum. The bound reported is the Lagrangian
bound of u, Σ_x u_x plus the negative prices of every output (:func:`dual_bound`): valid for any
u, so it does not rest on the master's duals being feasible beyond HiGHS's tolerance.

The LDP block uses the form K[x, y] = m_y + z_xy with 0 <= z_xy <= (e^ε − 1) m_y: one row per
entry instead of two, which halves the master (measured 10× faster than the m_y <= K <= e^ε m_y
form at k = 300). For ε > 20 the bound goes through a ratio chain z_xy <= c a_1, a_1 <= c a_2,
..., a_{L−1} <= c' m_y with c = e^{ε/L} and c' = e^{ε/L}(1 − e^{−ε}) (so c^{L−1} c' = e^ε − 1),
keeping every master coefficient below e^20 (HiGHS refuses coefficients >= 1e15 and answers
wrongly from about e^29 on).
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from mechdesign.core.limits import Limits
from mechdesign.privacy.ldp import LDP, links
from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.highs_model import (
    INF,
    SolverDeclined,
    checked,
    give_time,
    quiet_model,
    run_to_optimum,
)
from mechdesign.solvers.predicates import expected_loss, one_notion_of
from mechdesign.solvers.registry import SpecialSolver


@dataclass
class LDPCone:
    """The ε-LDP column cone in the form v = z + m·1, 0 <= z <= (e^ε − 1) m (through a ratio
    chain a_1..a_{L−1} when ε > 20, see the module docstring). A column's variables are
    z_0..z_{n−1}, a_1..a_{L−1}, m."""

    n: int
    epsilon: float

    @property
    def links(self) -> int:
        return links(self.epsilon)

    @property
    def width(self) -> int:  # variables per column
        return self.n + self.links

    def block(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """Rows z_x − (e^ε − 1) m <= 0 over one column's variables (chained when L > 1)."""
        n, L = self.n, self.links
        if L == 1:
            coef = [np.expm1(self.epsilon)]
        else:
            c = np.exp(self.epsilon / L)
            coef = [c] * (L - 1) + [c * -np.expm1(-self.epsilon)]
        # row r: (the variable bounded) − coef · (the next link), for z_x then a_1..a_{L−1}
        top = np.concatenate([np.arange(n), n + np.arange(L - 1)])
        nxt = np.concatenate([np.full(n, n), n + 1 + np.arange(L - 1)])
        scale = np.concatenate([np.full(n, coef[0]), coef[1:]])
        rows = np.arange(top.size)
        b = sp.csr_matrix((np.concatenate([np.ones(top.size), -scale]),
                           (np.concatenate([rows, rows]), np.concatenate([top, nxt]))),
                          shape=(top.size, self.width))
        return b, np.full(top.size, -INF), np.zeros(top.size)

    def upper(self) -> np.ndarray:
        """Column bounds: the chain links lie in [0, 1] (a_t = max_x z_x / c^t is a witness)."""
        up = np.full(self.width, INF)
        up[self.n:self.n + self.links - 1] = 1.0
        return up

    def incidence(self) -> sp.csr_matrix:
        """R with K[:, y] = R v: z_x enters row x, m enters every row, the links none."""
        n = self.n
        return sp.hstack([sp.identity(n, format="csr"), sp.csr_matrix((n, self.links - 1)),
                          sp.csr_matrix(np.ones((n, 1)))]).tocsr()

    def price(self, a: np.ndarray) -> np.ndarray:
        """Per column of ``a`` (reduced costs C − u): min over staircases with min entry 1,
        Σ_x a_x + (e^ε − 1) Σ_x min(a_x, 0) (−∞ when e^ε overflows and some a_x < 0)."""
        neg = np.minimum(a, 0.0).sum(axis=0)
        with np.errstate(over="ignore", invalid="ignore"):
            extra = np.where(neg < 0, np.expm1(self.epsilon) * neg, 0.0)
        return a.sum(axis=0) + extra


class ColumnMaster:
    """The restricted master LP over the chosen output columns, in highspy: the |X| row-sum rows
    and, per chosen output y, the cone's variables (entering the row sums through
    :meth:`LDPCone.incidence`) and its block of rows."""

    def __init__(self, cost: np.ndarray, cone: LDPCone):
        n = cost.shape[0]
        self.cost, self.n = cost, n
        self.h = quiet_model()
        empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=float)
        checked(self.h.addRows(n, np.ones(n), np.ones(n), 0, empty_i, empty_i, empty_f), "the row-sum rows")
        self.block, self.lo, self.hi = cone.block()
        self.incidence = cone.incidence().tocsc()
        self.width, self.upper = cone.width, cone.upper()
        self.chosen: list[int] = []

    def add(self, columns: list[int]) -> None:
        """The cone's variables and rows for each output in ``columns``."""
        h, b, width = self.h, len(columns), self.width
        first_col = h.getNumCol()
        costs = np.concatenate([self.incidence.T @ self.cost[:, y] for y in columns])
        inc = sp.hstack([self.incidence] * b, format="csc")  # every block sums into the same n rows
        checked(h.addCols(b * width, costs, np.zeros(b * width), np.tile(self.upper, b), inc.nnz,
                          inc.indptr[:-1].astype(np.int32), inc.indices.astype(np.int32), inc.data),
                "a master-problem update (columns)")
        rows = sp.block_diag([self.block] * b, format="csr")
        rows = sp.hstack([sp.csr_matrix((rows.shape[0], first_col)), rows], format="csr")
        checked(h.addRows(rows.shape[0], np.tile(self.lo, b), np.tile(self.hi, b), rows.nnz,
                          rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32), rows.data),
                "a master-problem update (rows)")
        self.chosen.extend(columns)

    def solve(self, limits: Limits | None) -> float | None:
        """The master's optimal value, within the time the ``limits`` leave; None when HiGHS
        ends without an optimum."""
        give_time(self.h, limits)
        if not run_to_optimum(self.h):
            return None
        return self.h.getInfo().objective_function_value

    def timed_out(self) -> bool:
        """Whether the last solve stopped at the time limit it was given."""
        return self.h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit

    def duals(self) -> np.ndarray:
        """The row-sum rows' duals u."""
        return np.asarray(self.h.getSolution().row_dual)[:self.n]

    def used(self, last: int) -> int:
        """How many of the ``last`` columns added carry mass in the solution."""
        blocks = np.asarray(self.h.getSolution().col_value).reshape(-1, self.width)[-last:]
        # a column's mass Σ_x K[x, y] = Σ_x z_x + n m (m alone is 0 at huge ε: e^{−ε} is below
        # the tolerance, and the batch would never grow)
        return int(np.count_nonzero(blocks[:, :self.n].sum(axis=1) + self.n * blocks[:, -1] > 0))

    def matrix(self) -> np.ndarray:
        """K of the last solve: K[:, y] = R v_y over the chosen outputs, zero elsewhere."""
        solution = np.asarray(self.h.getSolution().col_value)
        matrix = np.zeros(self.cost.shape)
        for t, y in enumerate(self.chosen):
            matrix[:, y] = self.incidence @ solution[t * self.width:(t + 1) * self.width]
        return matrix


def dual_bound(u: np.ndarray, priced: np.ndarray) -> float:
    """Σ_x u_x + Σ_y min(0, p_y) with p = :meth:`LDPCone.price` (C − u) over every output y: a
    lower bound on the design LP for any u. Σ C K = Σ u + Σ_y (C_y − u)·K_y, and each column
    K_y = m_y·s_y with s_y a staircase of min entry 1 and 0 <= m_y <= 1 (an entry of a
    row-stochastic K), so its term is m_y·(C_y − u)·s_y >= min(0, p_y). Every output counts,
    those in the master too: the master's optimality makes their reduced costs non-negative only
    up to HiGHS's dual feasibility tolerance."""
    return float(u.sum() + np.minimum(priced, 0.0).sum())


def solve_by_columns(cost: np.ndarray, cone: LDPCone, *, batch: int = 1, tol: float = 1e-9,
                     max_rounds: int = 10_000, initial: list[int] | None = None,
                     limits: Limits | None = None) -> ContextSolution:
    """Minimise Σ cost·K over row-stochastic K whose columns lie in ``cone`` (see module doc).

    ``initial`` names output columns to begin with (e.g. those a neighbouring ε used in a sweep).
    ``batch`` is the number of columns (most negative reduced cost first) added in the first
    round; it then adapts: it doubles while every column just added carries mass in the next
    master (the optimum needs many outputs: 0-1 loss, uniform prior, all k), and halves when
    fewer than half do. Many columns price out at once but most would stay unused (an optimum
    uses few outputs), and every column costs |X| + 1 variables and |X| rows in every later
    master, so a fixed large batch makes every later master large.

    Each master solve gets the time ``limits`` leave; when they expire between rounds, or a
    master ends without an optimum once they have, the design of the last solved master (the
    constant design before the first) is returned with the best bound proven so far and
    ``stopped=True``. Raises :class:`SolverDeclined` (with the reason) if HiGHS rejects a master
    update, does not reach optimality on a master otherwise, or the round limit passes without
    a proof.
    """
    n, m = cost.shape
    master = ColumnMaster(cost, cone)
    first = int(np.argmin(cost.sum(axis=0)))  # one constant column: a feasible start
    master.add([first] + [int(y) for y in dict.fromkeys(initial or []) if 0 <= y < m and y != first])
    timed = limits is not None and limits.time_limit is not None
    last = np.zeros((n, m))  # the design to return when a deadline cuts a master solve short
    last[:, first] = 1.0
    value = float(cost[:, first].sum())
    bound = float(cost.min(axis=1).sum())  # the optimum without privacy
    rounds, added, stopped = 0, 0, False
    while rounds < max_rounds:
        rounds += 1
        solved = master.solve(limits)
        if solved is None:
            if timed and (limits.expired() or master.timed_out()):  # cut short: the last design
                return ContextSolution(last, value, min(bound, value), rounds - 1, len(master.chosen), True)
            raise SolverDeclined(f"a master LP ended {master.h.modelStatusToString(master.h.getModelStatus())}")
        value = solved
        if added:  # adapt the batch to how many of the last columns the master uses
            used = master.used(added)
            batch = 2 * batch if used == added else max(1, batch // 2) if 2 * used < added else batch
        if timed:
            last = master.matrix()
        u = master.duals()
        priced = cone.price(cost - u[:, None])  # every output: the bound needs them all
        bound = max(bound, dual_bound(u, priced))
        missing = np.setdiff1d(np.arange(m), master.chosen)  # the candidates to add
        improving = missing[priced[missing] < -tol * max(1.0, abs(value))]
        if improving.size == 0:
            break
        if limits is not None:
            limits.report(NAME, rounds, value, bound)
            if limits.expired():
                stopped = True
                break
        best = improving[np.argsort(priced[improving])[:batch]]
        master.add([int(y) for y in best])
        added = best.size
    else:  # no proof of optimality within the round limit: use the full LP
        raise SolverDeclined(f"no proof of optimality within {max_rounds} rounds")
    return ContextSolution(master.matrix(), value, min(bound, value), rounds, len(master.chosen), stopped)


NAME = "HiGHS column generation"


def applies(problem) -> str | None:
    """ε-LDP (δ = 0) alone with an expected-loss objective."""
    return one_notion_of(problem, LDP) or expected_loss(problem)


def ldp_by_columns(problem, limits=None):
    """ε-LDP alone with an expected-loss objective, per context, by column generation."""
    notion = problem.privacy[0]
    cone = LDPCone(len(problem.inputs), notion.epsilon)
    # warm start: the outputs the last solve of this problem used (sweeps re-solve one problem
    # at a sequence of ε; neighbouring optima share most of their columns)
    seeds = problem.extras.setdefault("column_generation_outputs", {})

    def solve_one(key, cost):
        found = solve_by_columns(cost, cone, initial=seeds.get(key), limits=limits)
        seeds[key] = np.flatnonzero(found.matrix.sum(axis=0) > 0).tolist()
        return found

    return solve_contexts(problem, solve_one, NAME, limits=limits)


SOLVER = SpecialSolver(NAME, applies, ldp_by_columns)

