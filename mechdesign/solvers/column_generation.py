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
the full LP, so the master optimum is the full optimum and Σ_x u_x is its dual bound.

The LDP block uses the form K[x, y] = m_y + z_xy with 0 <= z_xy <= (e^ε − 1) m_y: one row per
entry instead of two, which halves the master (measured 10× faster than the m_y <= K <= e^ε m_y
form at k = 300). For ε > 20 the bound goes through a ratio chain z_xy <= c a_1, a_1 <= c a_2,
..., a_{L−1} <= c' m_y with c = e^{ε/L} and c' = e^{ε/L}(1 − e^{−ε}) (so c^{L−1} c' = e^ε − 1),
keeping every master coefficient below e^20 (HiGHS refuses coefficients >= 1e15 and answers
wrongly from about e^29 on).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mechdesign.core.limits import Limits
from mechdesign.privacy.ldp import LDP, links
from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.highs_model import INF, SolverDeclined, checked, quiet_model, run_to_optimum
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

    Raises :class:`SolverDeclined` (with the reason) if HiGHS rejects a master update, does
    not reach optimality on a master or the round limit passes without a proof.
    """
    n, m = cost.shape
    h = quiet_model()
    empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=float)
    checked(h.addRows(n, np.ones(n), np.ones(n), 0, empty_i, empty_i, empty_f), "the row-sum rows")
    block, lo, hi = cone.block()
    incidence = cone.incidence().tocsc()
    width, upper = cone.width, cone.upper()
    chosen: list[int] = []

    def add(columns: list[int]) -> None:
        b = len(columns)
        first_col = h.getNumCol()
        costs = np.concatenate([incidence.T @ cost[:, y] for y in columns])
        inc = sp.hstack([incidence] * b, format="csc")  # every block sums into the same n rows
        checked(h.addCols(b * width, costs, np.zeros(b * width), np.tile(upper, b), inc.nnz,
                          inc.indptr[:-1].astype(np.int32), inc.indices.astype(np.int32), inc.data),
                "a master-problem update (columns)")
        rows = sp.block_diag([block] * b, format="csr")
        rows = sp.hstack([sp.csr_matrix((rows.shape[0], first_col)), rows], format="csr")
        checked(h.addRows(rows.shape[0], np.tile(lo, b), np.tile(hi, b), rows.nnz,
                          rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32), rows.data),
                "a master-problem update (rows)")
        chosen.extend(columns)

    first = [int(np.argmin(cost.sum(axis=0)))]  # one constant column: a feasible start
    add(first + [int(y) for y in dict.fromkeys(initial or []) if 0 <= y < m and y != first[0]])
    rounds, added, stopped = 0, 0, False
    while rounds < max_rounds:
        rounds += 1
        if not run_to_optimum(h):
            raise SolverDeclined(f"a master LP ended {h.modelStatusToString(h.getModelStatus())}")
        value = h.getInfo().objective_function_value
        if added:  # adapt the batch to how many of the last columns the master uses
            blocks = np.asarray(h.getSolution().col_value).reshape(-1, width)[-added:]
            # a column's mass Σ_x K[x, y] = Σ_x z_x + n m (m alone is 0 at huge ε: e^{−ε} is
            # below the tolerance, and the batch would never grow)
            used = int(np.count_nonzero(blocks[:, :n].sum(axis=1) + n * blocks[:, -1] > 0))
            batch = 2 * batch if used == added else max(1, batch // 2) if 2 * used < added else batch
        u = np.asarray(h.getSolution().row_dual)[:n]
        missing = np.setdiff1d(np.arange(m), chosen)
        if missing.size == 0:
            bound = float(u.sum())
            break
        priced = cone.price(cost[:, missing] - u[:, None])
        improving = np.flatnonzero(priced < -tol * max(1.0, abs(value)))
        if improving.size == 0:
            # rigorous dual bound: every column is m_y·(staircase) with m_y <= 1
            bound = float(u.sum() + np.minimum(priced, 0.0).sum())
            break
        if limits is not None:
            # the same Lagrangian bound holds in every round (K <= 1 caps each column's m_y)
            bound = float(u.sum() + np.minimum(priced, 0.0).sum())
            limits.report(NAME, rounds, value, bound)
            if limits.expired():
                stopped = True
                break
        best = improving[np.argsort(priced[improving])[:batch]]
        add([int(missing[i]) for i in best])
        added = best.size
    else:  # no proof of optimality within the round limit: use the full LP
        raise SolverDeclined(f"no proof of optimality within {max_rounds} rounds")
    solution = np.asarray(h.getSolution().col_value)
    matrix = np.zeros((n, m))
    for t, y in enumerate(chosen):
        matrix[:, y] = incidence @ solution[t * width:(t + 1) * width]
    return ContextSolution(matrix, value, min(bound, value), rounds, len(chosen), stopped)


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

