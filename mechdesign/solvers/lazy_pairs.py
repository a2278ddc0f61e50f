"""ε·d-private design with the pair constraints added lazily (cutting planes).

The design LP over a general metric has one constraint K[x, y] <= e^{ε d(x, x')} K[x', y] per
reduced pair and output: for 85 locations on the sphere that is 6634 pairs × 85 outputs, over half
a million rows, although an optimum makes only about one per entry of K tight. So solve the LP
with the pairs between near neighbours only, check every pair on the solution, add the rows that
are violated (the most violated ones of each output first), and solve again from the previous
basis with the dual simplex. Each relaxed optimum is a rigorous lower bound (fewer constraints);
once the solution satisfies every pair it is feasible, hence optimal for the full LP.

This is exact and fast while |X|·|Y| is moderate (hundreds of inputs); small ε, where nearly all
pairs interact and the ray decomposition (:mod:`dantzig_wolfe`) can tail off, is where it shines:
the ray solver hands a design over when its gap stops shrinking. A pair whose coefficient
exceeds e^12 enters as a chain of rows through auxiliary entries, none with a coefficient above
e^12 (HiGHS returns wrong optima, or none, with coefficients near e^20). Pairs beyond e^60 are
never put into the model; the certificate's envelope repair restores them, raising entries by at
most e^{-60} times their row's largest entry. (Chaining every pair exactly, as the compiled
notions do, made a 100-location haversine design 35 times slower; here only the chains of
violated pairs enter.)

Every LP solve runs under the time left. At the deadline the result is the better of a private
incumbent (the ray solver's best design, or the best constant design) and the last relaxed
optimum made private by the envelope repair, with the better of their proven bounds (a relaxed
LP's bound holds for the full LP), and ``stopped=True``.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from mechdesign.core.sizes import machine_memory
from mechdesign.privacy.base import MAX_LOG_COEFFICIENT
from mechdesign.privacy.metric import MetricPrivacy
from mechdesign.solvers.cone_pricing import PRICING_MAX_EXPONENT
from mechdesign.solvers.contexts import ContextSolution, solve_contexts
from mechdesign.solvers.dual_refinement import refined_bound
from mechdesign.solvers.highs_methods import Method, race_methods, run_method
from mechdesign.solvers.highs_model import (
    INF,
    SolverDeclined,
    give_time,
    quiet_model,
)
from mechdesign.solvers.lp_bound import highs_model_bound, row_simplex_bound
from mechdesign.solvers.max_of_costs import MaxOfCosts, max_of_costs, value_of
from mechdesign.solvers.predicates import (
    GENERAL_MIN_INPUTS,
    LAZY_MAX_ENTRIES,
    metric_off_the_line,
    one_notion_of,
)
from mechdesign.solvers.ray_master import CHAIN_MAX_EXPONENT
from mechdesign.solvers.registry import SpecialSolver

#: a pair row is added when the solution violates it by more than this (K entries are <= 1)
VIOLATION = 1e-10
#: the first model holds, for every output, the pairs of each input with its nearest neighbours
NEIGHBOURS = 5
#: at most this many violated pairs per output and round (the most violated first)
PER_OUTPUT = 100
#: a pair row never carries a coefficient above e^this: farther pairs are split into chains
LINK_MAX_EXPONENT = PRICING_MAX_EXPONENT


def _nearest_pairs(i: np.ndarray, j: np.ndarray, d: np.ndarray, n: int, k: int) -> np.ndarray:
    """Mask of the pairs (i, j) where j is among the k nearest partners of i, or i among j's."""
    order = np.lexsort((d, i))  # by input, then distance
    rank = np.empty(i.size, dtype=np.int64)
    starts = np.searchsorted(i[order], np.arange(n))
    rank[order] = np.arange(i.size) - np.repeat(starts, np.diff(np.append(starts, i.size)))
    near = rank < k
    chosen = np.unique(j[near] * n + i[near])  # the reverse direction of every chosen pair too
    return near | np.isin(i * n + j, chosen)


NAME = "HiGHS (lazy pair constraints)"


def constant_design(cost) -> ContextSolution:
    """The best data-independent design (every input on the output of least total cost; for a
    maximum of costs, on the mixture of least maximum): private at every level, with the bound
    of the design problem without privacy (Σ_x min_y C[x, y] for a sum)."""
    if isinstance(cost, MaxOfCosts):
        k, value = cost.constant_design()
        return ContextSolution(k, value, min(cost.least(), value), 0, 1)
    n, m = cost.shape
    k = np.zeros((n, m))
    k[:, int(np.argmin(cost.sum(axis=0)))] = 1.0
    return ContextSolution(k, float((cost * k).sum()), float(cost.min(axis=1).sum()), 0, 1)


def _better(relaxed, incumbent: ContextSolution, cost, repair, rounds: int, rows: int,
            stopped: bool = True) -> ContextSolution:
    """The relaxed optimum made private by ``repair`` when it is better than the ``incumbent``
    (a feasible design), else the incumbent; the better of both bounds either way. At the
    deadline, and at the end too: the pairs beyond e^60 are left out of the model, and their
    repair can cost more than the incumbent's own gap (without ``repair`` the relaxed
    optimum is taken as it is once it is final)."""
    bound = max(incumbent.bound, relaxed[2]) if relaxed is not None else incumbent.bound
    if relaxed is not None and repair is None and not stopped:
        k, value = relaxed[0], relaxed[1]
    else:
        k = repair(relaxed[0]) if relaxed is not None and repair is not None else None
        value = value_of(cost, k) if k is not None else np.inf
    if k is not None and value < incumbent.objective:
        return ContextSolution(k, value, min(bound, value), rounds, rows, stopped)
    return ContextSolution(incumbent.matrix, incumbent.objective, min(bound, incumbent.objective), rounds, rows,
                           stopped)


def _refined(h, bound_at, last: tuple, cost, unit: float, model: PairRowsModel, limits, tol: float) -> tuple:
    """``last`` (K, value, bound), HiGHS's optimum of ``h`` in units of ``unit``, whose duals do
    not prove it to the relative tolerance ``tol``: with the bound at refined duals (aiming at half of it)
    (:mod:`~mechdesign.solvers.dual_refinement`), and the refinement's optimal point instead of
    HiGHS's where it is better and meets the model's pairs as well (HiGHS's own point can lie
    above the optimum by more than the tolerance where its duals fall short)."""
    k, value, bound = last
    found = refined_bound(h, bound_at, value / unit, limits, aim=tol / 2 * abs(value) / unit)
    bound = max(bound, float(np.nextafter(found.bound * unit, -np.inf)))
    if found.primal is not None:
        other = np.maximum(found.primal[:k.size].reshape(k.shape), 0.0)
        other_value = value_of(cost, other)
        if other_value < value and model.most_violated(other)[0] <= VIOLATION:
            k, value = other, other_value
    return k, value, min(bound, value)


class PairRowsModel:
    """The lazy LP in highspy: the entries of K (costs ``cost``), the rows summing to 1, and the
    pair rows K[i, y] − e^{ε d} K[j, y] <= 0 added so far (``active``, pair × output).

    A pair whose coefficient e^{εd} exceeds e^LINK_MAX_EXPONENT enters as a chain of
    k = ⌈εd / LINK_MAX_EXPONENT⌉ rows through k − 1 auxiliary entries t >= 0 of cost 0:
    K[i, y] <= r t_1, t_1 <= r t_2, …, t_{k−1} <= r K[j, y] with r = e^{εd/k} — exactly the
    pair's constraint (t_s = e^{−sεd/k} K[i, y] is feasible when it holds, and the chain implies
    it), with no coefficient above e^LINK_MAX_EXPONENT. With coefficients up to e^20 in single
    rows HiGHS ended "unknown" on 100 random points at ε = 2. Since those t are at most 1, the
    bounds on the box [0, 1] stay valid for the auxiliary entries too.

    ``sums`` replaces the rows summing to 1 when the columns of K stand for more than one output
    each (:mod:`metric_small`): a sparse matrix S over the entries of K (row-major), the rows
    S K = 1.

    A maximum of costs (:class:`~mechdesign.solvers.max_of_costs.MaxOfCosts`) enters through
    its epigraph: the entries of K cost nothing, one more column t (after K's, before any
    auxiliary entry) costs 1 on [``span``], and a row ⟨R_r, K⟩ − t <= 0 per cost R_r.
    ``span`` must hold some optimum: the optimum without privacy below, a private design's
    value above.
    """

    def __init__(self, cost, i: np.ndarray, j: np.ndarray, coef: np.ndarray,
                 sums: sp.csr_matrix | None = None, span: tuple[float, float] | None = None):
        n, m = cost.shape
        size = n * m
        self.i, self.j, self.coef, self.m = i, j, coef, m
        exponent = np.log(coef)
        self.links = np.maximum(np.ceil(exponent / LINK_MAX_EXPONENT), 1).astype(np.int64)
        self.h = quiet_model(warm=True)  # re-solves after adding rows start from the basis
        linear = np.zeros(size) if isinstance(cost, MaxOfCosts) else cost.ravel().astype(float)
        self.h.addCols(size, linear, np.zeros(size), np.full(size, INF), 0,
                       np.zeros(size, dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
        if sums is None:
            self.h.addRows(n, np.ones(n), np.ones(n), size, np.arange(0, size, m, dtype=np.int32),
                           np.arange(size, dtype=np.int32), np.ones(size))
        else:
            rows = sums.shape[0]
            self.h.addRows(rows, np.ones(rows), np.ones(rows), sums.nnz, sums.indptr[:-1].astype(np.int32),
                           sums.indices.astype(np.int32), sums.data.astype(float))
        self.fixed_rows = self.h.getNumRow()  # rows summing to 1, and an epigraph's below
        self.epigraph = size if isinstance(cost, MaxOfCosts) else None
        if self.epigraph is not None:
            self._add_epigraph(cost, span)
        self.active = np.zeros((i.size, m), dtype=bool)
        #: pairs beyond e^MAX_LOG_COEFFICIENT, checked only once ``reach`` is set (see solve_lazily)
        self.far = exponent > MAX_LOG_COEFFICIENT
        self.reach = False

    def _add_epigraph(self, cost: MaxOfCosts, span: tuple[float, float]) -> None:
        """The column t on [span] and the rows ⟨R_r, K⟩ − t <= 0."""
        lower, upper = span
        self.h.addCols(1, np.array([1.0]), np.array([lower]), np.array([upper]), 0, np.zeros(1, dtype=np.int32),
                       np.array([], dtype=np.int32), np.array([]))
        count = cost.rows.shape[0]
        rows = sp.hstack([cost.rows, sp.csr_matrix(-np.ones((count, 1)))], format="csr")
        self.h.addRows(count, np.full(count, -INF), np.zeros(count), rows.nnz, rows.indptr[:-1].astype(np.int32),
                       rows.indices.astype(np.int32), rows.data.astype(float))
        self.fixed_rows += count

    def pair_rows(self) -> int:
        """The rows added for pairs so far (chains' links counted one by one)."""
        return self.h.getNumRow() - self.fixed_rows

    def caps(self) -> np.ndarray:
        """Per column, the bound some optimum satisfies besides the column's own: 1 for the
        entries of K and the auxiliary ones (entries of a row-stochastic matrix, or below
        them), none for an epigraph's t (its own bounds are finite)."""
        caps = np.ones(self.h.getNumCol())
        if self.epigraph is not None:
            caps[self.epigraph] = np.inf
        return caps

    def add(self, p: np.ndarray, y: np.ndarray) -> None:
        """Rows for the pairs ``p`` at the outputs ``y`` (arrays of the same length)."""
        m = self.m
        links = self.links[p]
        long = links > 1
        left, right, coef = self.i[p] * m + y, self.j[p] * m + y, self.coef[p].copy()
        if long.any():  # K[i, y] <= r t_1, t_1 <= r t_2, …, t_{k−1} <= r K[j, y], r = e^{εd/k}
            k = links[long]
            count = int((k - 1).sum())
            first = self.h.getNumCol()
            self.h.addCols(count, np.zeros(count), np.zeros(count), np.full(count, INF), 0,
                           np.zeros(count, dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
            # chain c runs through the auxiliary entries start[c] .. start[c] + k[c] − 2
            start = first + np.concatenate([[0], np.cumsum(k - 1)[:-1]])
            chain = np.repeat(np.arange(k.size), k)
            step = np.arange(k.sum()) - np.repeat(np.cumsum(k) - k, k)  # 0 .. k − 1 within a chain
            tail = start[chain] + step  # the entry after link `step` (the last link ends at K[j, y])
            head = start[chain] + step - 1  # the entry before it (the first link starts at K[i, y])
            last = step == k[chain] - 1
            link_left = np.where(step == 0, left[long][chain], head)
            link_right = np.where(last, right[long][chain], tail)
            r = np.exp(np.log(coef[long]) / k)[chain]
            left = np.concatenate([left[~long], link_left])
            right = np.concatenate([right[~long], link_right])
            coef = np.concatenate([coef[~long], r])
        k = left.size
        index = np.column_stack([left, right]).ravel().astype(np.int32)
        values = np.column_stack([np.ones(k), -coef]).ravel()
        self.h.addRows(k, np.full(k, -INF), np.zeros(k), 2 * k, np.arange(0, 2 * k, 2, dtype=np.int32),
                       index, values)
        self.active[p, y] = True

    def most_violated(self, K: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(the largest violation by K of a pair not in the model, and the pairs and outputs of
        the PER_OUTPUT most violated ones of every output — fewer where fewer exceed
        VIOLATION)."""
        excess = K[self.i] - self.coef[:, None] * K[self.j]
        excess[self.active] = 0.0
        if not self.reach:
            excess[self.far] = 0.0
        if not excess.size:
            return 0.0, np.array([], dtype=int), np.array([], dtype=int)
        k = min(PER_OUTPUT, excess.shape[0])
        top = np.argpartition(-excess, k - 1, axis=0)[:k]
        outputs = np.broadcast_to(np.arange(self.m), top.shape)
        violated = excess[top, outputs] > VIOLATION
        return float(excess.max()), top[violated], outputs[violated]


def solve_lazily(cost, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], epsilon: float, *,
                 max_rounds: int = 500, limits=None, incumbent: ContextSolution | None = None,
                 repair=None, tol: float | None = None) -> ContextSolution:
    """Exact ε·d-private design for expected-loss ``cost`` (|X| × |Y|) under the reduced ``pairs``
    (i, j, d(i, j)): min Σ C K  s.t.  Σ_y K[x, y] = 1, K[i, y] <= e^{ε d} K[j, y] lazily; or
    for ``cost`` a :class:`~mechdesign.solvers.max_of_costs.MaxOfCosts`, min max_r ⟨R_r, K⟩
    under the same rows (its epigraph, t between the optimum without privacy and the
    incumbent's value).

    Each round is reported to ``limits`` (value, the relaxed LP's proven bound), and every LP
    solve, the first too, runs under the time they have left. When they expire the result is
    the better of the ``incumbent`` (a private design with its proven bound, by default the
    best constant design) and the last relaxed optimum made private by ``repair`` (a function
    K -> private K, or None; without one the incumbent), with the better bound, ``stopped=True``. Raises
    :class:`SolverDeclined` when HiGHS ends a round without an optimum before the deadline or
    after ``max_rounds``. When the final LP's proven gap is above ``tol`` (relative), its duals
    are refined for the proof (:mod:`~mechdesign.solvers.dual_refinement`).

    Pairs with e^{εd} between e^20 and e^60 ask the LP to keep an entry e^−20 below its partner,
    under HiGHS's tolerances (at ε = 40 on the unit square it ends "not set"). So the LP is first
    solved without them; only if its optimum violates some, they are added (as chains) and the
    LP solved on; should HiGHS then fail, the optimum without them is returned after the repair,
    as when they are never needed."""
    n, m = cost.shape
    incumbent = incumbent if incumbent is not None else constant_design(cost)
    i, j, d = pairs
    usable = epsilon * d <= CHAIN_MAX_EXPONENT
    i, j, d = i[usable], j[usable], d[usable]
    coef = np.exp(epsilon * d)
    # the LP works on costs in units of the incumbent's value when another solver found it
    # (HiGHS's tolerances are absolute: an optimum of 1e-5 next to costs of 1 drowns in the
    # reduced-cost tolerance summed over the columns); values and bounds are scaled back
    unit = incumbent.objective if incumbent.rounds and incumbent.objective > 0 else 1.0
    span = None
    if isinstance(cost, MaxOfCosts):  # t between the optimum without privacy and a private design's value
        top = incumbent.objective / unit
        span = (float(np.nextafter(cost.least() / unit, -np.inf)), float(np.nextafter(top + 1e-9 * abs(top), np.inf)))
    model = PairRowsModel(cost / unit, i, j, coef, span=span)
    h, size = model.h, n * m
    first = np.flatnonzero(_nearest_pairs(i, j, d, n, NEIGHBOURS))
    p0, y0 = np.meshgrid(first, np.arange(m), indexing="ij")
    if first.size:
        model.add(p0.ravel(), y0.ravel())
    last = None
    # the first LP from scratch by the interior-point method with crossover (10 × 10 grid at
    # ε = 0.1: 3.6 s against 29 s by the dual simplex, which stalls on its degeneracy); the
    # re-solves after adding rows by the dual simplex from the basis, for as long as such a
    # re-solve takes less time than the interior-point solve of the whole LP did (measured as
    # the solve runs: when many rows bind, as on a grid at small ε, the warm start stops paying)
    # (a maximum of costs races both methods on its first LP: neither wins everywhere there)
    method = Method()
    method.apply(h)
    race = isinstance(cost, MaxOfCosts)
    settled = None  # the optimum without the far pairs, once they were found violated
    for rounds in range(1, max_rounds + 1):
        if race and rounds == 1:
            h, solved = race_methods(h, method, limits)
            model.h = h
        else:
            give_time(h, limits)
            started = time.perf_counter()
            solved = run_method(h, method)
            method.observe(h, time.perf_counter() - started)
        if not solved:
            if limits is not None and limits.expired():
                return _better(last, incumbent, cost, repair, rounds - 1, model.pair_rows())
            if settled is not None:
                return _better(settled, incumbent, cost, repair, rounds - 1, model.pair_rows(), stopped=False)
            raise SolverDeclined(f"a lazy-pairs LP ended {h.modelStatusToString(h.getModelStatus())}")
        K = np.asarray(h.getSolution().col_value)[:size].reshape(n, m)
        value = value_of(cost, np.maximum(K, 0.0))
        # the bound its row duals prove on the relaxed LP (a relaxation's bound holds for the
        # full LP): on the box 0 <= K <= 1 that every row-stochastic K lies in, and keeping the
        # rows' simplices (tighter when many reduced costs sit within HiGHS's tolerance)
        caps = model.caps()

        def bound_at(duals: np.ndarray | None = None) -> float:
            return max(highs_model_bound(h, caps, duals), row_simplex_bound(h, n, m, caps, duals))

        bound = float(np.nextafter(bound_at() * unit, -np.inf))  # rounded down
        last = (np.maximum(K, 0.0), value, min(bound, value))
        worst, p, y = model.most_violated(K)
        if limits is not None:
            limits.report(NAME, rounds, value, bound if np.isfinite(bound) else None)
        if worst <= VIOLATION and not model.reach and model.far.any():  # now the far pairs too
            model.reach = True
            worst, p, y = model.most_violated(K)
            settled = last if worst > VIOLATION else None
        if worst <= VIOLATION:  # optimal for the pairs in the model
            if tol is not None and value - bound > tol * abs(value) and not (limits is not None and limits.expired()):
                last = _refined(h, bound_at, last, cost, unit, model, limits, tol)  # not proven so by its duals
            return _better(last, incumbent, cost, repair, rounds, model.pair_rows(), stopped=False)
        if limits is not None and limits.expired():
            return _better(last, incumbent, cost, repair, rounds, model.pair_rows())
        model.add(p, y)
    raise SolverDeclined(f"lazy pairs: no feasible relaxed optimum within {max_rounds} rounds")


def repairer(notion: MetricPrivacy):
    """K -> K made private by the certificate's repair (the envelope over all pairs, then, if
    need be, mixing with a data-independent row), for a relaxed optimum at the deadline."""
    from mechdesign.privacy.certify import certify

    def repair(k: np.ndarray) -> np.ndarray:
        mechs, audits, _ = certify([notion], {"default": k})
        return mechs["default"] if all(a.holds for a in audits) else None

    return repair


#: a maximum of costs is taken while the violation check's pairs × |Y| array of excesses (with
#: the model's flags beside it, about this many bytes an entry) fits in a quarter of the memory
EXCESS_BYTES = 9


def applies(problem) -> str | None:
    """One ε·d-privacy notion with an expected-loss objective over a metric other than the
    line's, from GENERAL_MIN_INPUTS inputs and up to LAZY_MAX_ENTRIES entries of K; or with the
    largest of a few linear costs (a worst-case loss, a robust expected loss over finitely many
    priors), over any metric and at any size (no other special solver takes those; on few
    points too, where steep pairs enter last, as chains, and the general route's proofs fell
    short: 20 graph nodes at ε = 8, 8 values of a distance matrix at ε = 20), while the
    violation check's array of pairs × outputs fits in a quarter of the memory."""
    n, m = len(problem.inputs), len(problem.outputs)
    if max_of_costs(problem.objective, problem.keys) is None:
        reason = metric_off_the_line(problem)
        if reason is not None:
            if problem.objective.kind in ("worst-case-loss", "robust-expected-loss"):
                reason += " (or a worst-case loss, or a robust one over finitely many priors, of one mechanism)"
            return reason
        if n * m > LAZY_MAX_ENTRIES:
            return f"{n} × {m} entries of K, more than the {LAZY_MAX_ENTRIES} its LP affords"
    else:
        reason = one_notion_of(problem, MetricPrivacy)
        if reason is not None:
            return reason
        memory = machine_memory()
        need = EXCESS_BYTES * problem.privacy[0].i.size * m
        if memory is not None and need > memory / 4:
            return f"its check of {problem.privacy[0].i.size} pairs × {m} outputs needs {need / 2**30:.1f} GB"
        return None
    if n < GENERAL_MIN_INPUTS:
        return f"fewer than {GENERAL_MIN_INPUTS} inputs: the whole pair LP takes it"
    return None


def metric_by_lazy_pairs(problem, limits=None):
    """The LP with lazy pair rows. Reached when the ray solver (:mod:`dantzig_wolfe`, which
    tries first and itself switches here when it stalls) declined the problem, and first for
    a worst-case or robust loss (a maximum of costs, which the rays and interior points do not
    take)."""
    notion = problem.privacy[0]
    pairs = (notion.i, notion.j, notion.d)
    raw, outcome = solve_contexts(problem, lambda key, cost: solve_lazily(cost, pairs, notion.epsilon, limits=limits,
                                                                         repair=repairer(notion),
                                                                         tol=problem.gap_tolerance),
                                  NAME, limits=limits)
    why = ("a maximum of linear costs, which only this LP takes among the special solvers"
           if max_of_costs(problem.objective, problem.keys) is not None else "the ray solver declined this problem")
    return raw, outcome.recording(path=[f"lazy pairs: {why}"])


SOLVER = SpecialSolver(NAME, applies, metric_by_lazy_pairs)
