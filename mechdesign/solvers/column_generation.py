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
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import (
    INF,
    STOPPED,
    SolverDeclined,
    checked,
    give_time,
    quiet_model,
    resumable_run,
)


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

    def duals(self) -> np.ndarray:
        """The row-sum rows' duals u."""
        return np.asarray(self.h.getSolution().row_dual)[:self.n]

    def used(self, last: int) -> int:
        """How many of the ``last`` columns added carry mass in the solution."""
        blocks = np.asarray(self.h.getSolution().col_value).reshape(-1, self.width)[-last:]
        # a column's mass Σ_x K[x, y] = Σ_x z_x + n m (m alone is 0 at huge ε: e^{−ε} is below
        # the tolerance, and the batch would never grow)
        return int(np.count_nonzero(blocks[:, :self.n].sum(axis=1) + self.n * blocks[:, -1] > 0))


def dual_bound(u: np.ndarray, priced: np.ndarray) -> float:
    """Σ_x u_x + Σ_y min(0, p_y) with p = :meth:`LDPCone.price` (C − u) over every output y: a
    lower bound on the design LP for any u. Σ C K = Σ u + Σ_y (C_y − u)·K_y, and each column
    K_y = m_y·s_y with s_y a staircase of min entry 1 and 0 <= m_y <= 1 (an entry of a
    row-stochastic K), so its term is m_y·(C_y − u)·s_y >= min(0, p_y). Every output counts,
    those in the master too: the master's optimality makes their reduced costs non-negative only
    up to HiGHS's dual feasibility tolerance."""
    return float(u.sum() + np.minimum(priced, 0.0).sum())


class ColumnRounds:
    """Column generation one round at a time (:meth:`advance`), so that a caller can interleave
    it with another method: after each round, :attr:`value` is the last master's optimum (a
    feasible design, :meth:`design`), :attr:`bound` the best bound proven so far, and
    :attr:`done` whether no column prices out (the master optimum is the full optimum).

    ``initial`` names output columns to begin with (e.g. those a neighbouring ε used in a sweep).
    ``batch`` is the number of columns (most negative reduced cost first) added in the first
    round; it then adapts: it doubles while every column just added carries mass in the next
    master (the optimum needs many outputs: 0-1 loss, uniform prior, all k), and halves when
    fewer than half do. Many columns price out at once but most would stay unused (an optimum
    uses few outputs), and every column costs |X| + 1 variables and |X| rows in every later
    master, so a fixed large batch makes every later master large."""

    name = "column generation"

    def __init__(self, cost: np.ndarray, cone: LDPCone, *, batch: int = 1, tol: float = 1e-9,
                 initial: list[int] | None = None):
        n, m = cost.shape
        self.cost, self.cone, self.batch, self.tol = cost, cone, batch, tol
        self.master = ColumnMaster(cost, cone)
        first = int(np.argmin(cost.sum(axis=0)))  # one constant column: a feasible start
        self.master.add([first] + [int(y) for y in dict.fromkeys(initial or []) if 0 <= y < m and y != first])
        self._solution = None  # the last solved master's column values and how many outputs it had
        self._first = first
        self.value = float(cost[:, first].sum())
        self.bound = float(cost.min(axis=1).sum())  # the optimum without privacy
        self.latest_bound = self.bound  # the last round's own bound (progress, not proof)
        self.rounds, self.added, self.done = 0, 0, False

    def advance(self, limits=None) -> bool:
        """One round: solve the master within the time ``limits`` leave (a :class:`Limits`, or
        any object with ``time_limit`` and ``remaining()``), price every output, add the best
        improving columns. Returns False, with nothing changed, when HiGHS stopped at the time
        limit it was given or was interrupted; the next call resumes that solve from where it
        stopped. Raises
        :class:`SolverDeclined` when HiGHS ends a master without an optimum otherwise, and when
        called again after pricing found no improving column (the method can go no further)."""
        if self.done:  # priced out already: called again only by turns whose gap is open
            raise SolverDeclined("no improving column while the shared gap is open")
        h = self.master.h
        give_time(h, limits)
        status = resumable_run(h)
        if status in STOPPED:
            return False
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverDeclined(f"a master LP ended {h.modelStatusToString(status)}")
        master, cost = self.master, self.cost
        self.rounds += 1
        if self.added:  # adapt the batch to how many of the last columns the master uses
            used, added = master.used(self.added), self.added
            self.batch = 2 * self.batch if used == added else max(1, self.batch // 2) if 2 * used < added else self.batch
        self._solution = (np.array(h.getSolution().col_value), len(master.chosen))
        self._design = self._private_design()
        self.value = float((cost * self._design).sum())
        u = master.duals()
        priced = self.cone.price(cost - u[:, None])  # every output: the bound needs them all
        self.latest_bound = dual_bound(u, priced)
        self.bound = max(self.bound, self.latest_bound)
        missing = np.setdiff1d(np.arange(cost.shape[1]), master.chosen)  # the candidates to add
        improving = missing[priced[missing] < -self.tol * max(1.0, abs(self.value))]
        self.added = 0
        if improving.size == 0:
            self.done = True
            return True
        best = improving[np.argsort(priced[improving])[:self.batch]]
        master.add([int(y) for y in best])
        self.added = best.size
        return True

    @property
    def columns(self) -> int:
        """The outputs in the master."""
        return len(self.master.chosen)

    def design(self) -> np.ndarray:
        """The last solved master's design, private (the constant start before the first
        round)."""
        if self._solution is None:
            matrix = np.zeros(self.cost.shape)
            matrix[:, self._first] = 1.0
            return matrix
        return self._design

    def _private_design(self) -> np.ndarray:
        """The last master's columns, repaired where HiGHS's feasibility tolerance let them
        leave the cone: a block with m_y = 0 may keep z_xy of order 1e-14, a column with zeros
        beside positive entries, which no ε allows. Such a column's entries are raised to e^-ε
        times its largest and the rows rescaled (:meth:`LDP.repair`); the value is measured on
        the repaired design, so it stays a feasible design's."""
        solution, count = self._solution
        blocks = solution[:count * self.master.width].reshape(count, self.master.width)
        matrix = np.zeros(self.cost.shape)
        matrix[:, self.master.chosen[:count]] = np.maximum(self.master.incidence @ blocks.T, 0.0)
        return LDP(self.cone.epsilon).repair({"design": matrix})["design"]

    def result(self, stopped: bool = False) -> ContextSolution:
        return ContextSolution(self.design(), self.value, min(self.bound, self.value), self.rounds,
                               self.columns, stopped)


def solve_by_columns(cost: np.ndarray, cone: LDPCone, *, batch: int = 1, tol: float = 1e-9,
                     max_rounds: int = 10_000, initial: list[int] | None = None,
                     limits: Limits | None = None) -> ContextSolution:
    """Minimise Σ cost·K over row-stochastic K whose columns lie in ``cone`` (see the module
    docstring) by :class:`ColumnRounds` until no column prices out.

    Each master solve gets the time ``limits`` leave; when they expire, the design of the last
    solved master (the constant design before the first) is returned with the best bound proven
    so far and ``stopped=True``. Raises :class:`SolverDeclined` (with the reason) if HiGHS
    rejects a master update, does not reach optimality on a master otherwise, or the round
    limit passes without a proof.
    """
    run = ColumnRounds(cost, cone, batch=batch, tol=tol, initial=initial)
    while not run.done:
        if run.rounds >= max_rounds:  # no proof of optimality within the round limit
            raise SolverDeclined(f"no proof of optimality within {max_rounds} rounds")
        progressed = run.advance(limits)
        if limits is not None and not run.done:
            if progressed:
                limits.report(NAME, run.rounds, run.value, run.bound)
            if limits.expired():
                return run.result(stopped=True)
    return run.result()


NAME = "HiGHS column generation"
