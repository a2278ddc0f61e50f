"""The staircase solver: information-theoretic utilities maximised under ε-LDP, by column
generation over staircase patterns.

Kairouz, Oh and Viswanath, “Extremal Mechanisms for Local Differential Privacy”, NeurIPS 2014
and JMLR 17 (2016), prove the staircase theorem this solver rests on:

    Let U(K) = Σ_y μ(K[:, y]) with μ sublinear (μ(γ q) = γ μ(q) for γ >= 0 and
    μ(q + q') <= μ(q) + μ(q')). Among all ε-LDP mechanisms K on k inputs, with any number of
    outputs, some maximiser of U is a staircase mechanism: every column is θ_y s_y with
    θ_y >= 0 and a pattern s_y ∈ {1, e^ε}^k, and at most k columns are used. The optimal
    weights solve the linear program over the 2^k patterns s

        maximise  Σ_s θ_s μ(s)   subject to   Σ_s θ_s s = 1 (every row sums to 1),  θ >= 0.

Mutual information and f-divergences between the output laws of two hypotheses are sublinear
(:mod:`mechdesign.core.information_utilities`). The LP is solved over a growing set of patterns:
a restricted master LP (HiGHS through highspy) over the patterns chosen so far, then pricing
(:mod:`mechdesign.solvers.staircase_pricing`) of the pattern of largest reduced utility
r(s) = μ(s) − u·s under the master's row duals u, added while it is positive.

The bound reported needs neither the theorem nor the master's duals to be exact. For any u and
any ε-LDP K, write each non-zero column as K[:, y] = m_y v_y with m_y = min_x K[x, y] and
v_y ∈ [1, e^ε]^k (ε-LDP bounds each column's max by e^ε times its min). Then Σ_y m_y <= 1
(any row of K sums to 1 and K[x, y] >= m_y), Σ_y m_y v_y = 1 (the row sums), and

    U(K) = Σ_y m_y μ(v_y) = Σ_x u_x + Σ_y m_y (μ(v_y) − u·v_y)
         <= Σ_x u_x + max(0, max_s r(s)),

because μ(v) − u·v is convex on the box [1, e^ε]^k and so largest at one of its vertices, the
patterns. A pricing that returns a proven upper bound on max_s r(s) (exact by enumeration or
zonotope vertices, or the open nodes' bound of a branch and bound cut short) thus proves an
upper bound on the optimum, and the result carries it with its gap like every other solve. The
bound is evaluated in float64 with a relative round-off allowance on the reduced utilities
(:data:`~mechdesign.solvers.staircase_pricing.ROUNDING`), not in interval arithmetic.
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np

from mechdesign.core.information_utilities import NOT_CONVEX, SublinearUtility
from mechdesign.core.limits import TIME_LIMIT, Limits, round_seconds
from mechdesign.privacy.ldp import LDP
from mechdesign.solvers.contexts import ContextSolution
from mechdesign.solvers.highs_model import (
    SolverDeclined,
    checked,
    give_time,
    quiet_model,
    run_to_optimum,
)
from mechdesign.solvers.outcome import SolverOutcome
from mechdesign.solvers.predicates import one_notion_of
from mechdesign.solvers.registry import SpecialSolver
from mechdesign.solvers.staircase_pricing import Priced, pricing_for, zonotope_vertex_sets

NAME = "staircase column generation"
#: the largest ε taken: the master's coefficients are 1 and e^ε, and HiGHS loses them beyond e^20
MAX_EPSILON = 20.0
#: patterns added per round at most (the best of those with positive reduced utility)
BATCH = 10
#: rounds before the solver gives up proving an optimum
MAX_ROUNDS = 5_000


class PatternMaster:
    """The restricted master LP over the chosen patterns, in highspy: minimise −Σ θ_s μ(s)/σ
    subject to the k row sums Σ_s θ_s s = 1, θ >= 0 (one column per pattern)."""

    def __init__(self, k: int, epsilon: float):
        self.k, self.top = k, math.exp(epsilon)
        self.h = quiet_model()
        empty_i, empty_f = np.array([], dtype=np.int32), np.array([], dtype=float)
        checked(self.h.addRows(k, np.ones(k), np.ones(k), 0, empty_i, empty_i, empty_f), "the row-sum rows")
        self.masks: list[np.ndarray] = []
        self.seen: set[bytes] = set()

    def add(self, masks: np.ndarray, utilities: np.ndarray) -> int:
        """Add the patterns of ``masks`` not yet chosen (utilities μ/σ); how many were new."""
        new = [(m, float(v)) for m, v in zip(masks, utilities) if np.packbits(m).tobytes() not in self.seen]
        if not new:
            return 0
        k = self.k
        entries = np.concatenate([np.where(m, self.top, 1.0) for m, _ in new])
        starts = np.arange(len(new), dtype=np.int32) * k
        rows = np.tile(np.arange(k, dtype=np.int32), len(new))
        costs = -np.array([v for _, v in new])
        checked(self.h.addCols(len(new), costs, np.zeros(len(new)), np.full(len(new), highspy.kHighsInf),
                               entries.size, starts, rows, entries), "a master-problem update")
        for m, _ in new:
            self.seen.add(np.packbits(m).tobytes())
            self.masks.append(m.copy())
        return len(new)

    def solve(self, limits: Limits | None) -> float | None:
        """The master's optimal utility (in units of σ), or None without an optimum."""
        give_time(self.h, limits)
        if not run_to_optimum(self.h):
            return None
        return -self.h.getInfo().objective_function_value

    def timed_out(self) -> bool:
        return self.h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit

    def duals(self) -> np.ndarray:
        """u with u·s >= μ(s)/σ on the chosen patterns (the negated row duals of the
        minimisation)."""
        return -np.asarray(self.h.getSolution().row_dual)[:self.k]

    def design(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights θ, masks) of the patterns the solution uses, the weights re-solved on the
        used patterns so that the rows sum to 1 to round-off."""
        theta = np.asarray(self.h.getSolution().col_value, dtype=float)
        used = np.flatnonzero(theta > 1e-13)
        masks = np.array([self.masks[i] for i in used]).reshape(-1, self.k)
        S = np.where(masks, self.top, 1.0).T  # (k, patterns)
        polished, *_ = np.linalg.lstsq(S, np.ones(self.k), rcond=None)
        if np.all(polished > 0) and np.abs(S @ polished - 1).max() < np.abs(S @ theta[used] - 1).max() + 1e-15:
            return polished, masks
        return np.clip(theta[used], 0.0, None), masks


def staircase_matrix(theta: np.ndarray, masks: np.ndarray, top: float, n_outputs: int,
                     diagonal: bool) -> np.ndarray:
    """K (k, n_outputs) with columns θ_s s, one per pattern; the other outputs unused. With
    ``diagonal`` (outputs labelled as the inputs), a pattern raising one input x alone is put
    at output x, so that randomized response reads as a diagonal."""
    k = masks.shape[1]
    K = np.zeros((k, n_outputs))
    free = list(range(n_outputs))
    placed = [None] * len(theta)
    if diagonal:
        for i, m in enumerate(masks):
            if m.sum() == 1 and int(np.flatnonzero(m)[0]) in free:
                placed[i] = int(np.flatnonzero(m)[0])
                free.remove(placed[i])
    for i in range(len(theta)):
        if placed[i] is None:
            placed[i] = free.pop(0)
        K[:, placed[i]] = theta[i] * np.where(masks[i], top, 1.0)
    return K


def report_round(limits: Limits | None, rounds: int, value: float, bound: float) -> None:
    """One round in the progress log, with the gap of a maximum: (bound − value) / |value|
    (:meth:`Limits.report` measures a minimum's)."""
    if limits is None:
        return
    gap = max(bound - value, 0.0) / max(abs(value), 1e-300) if math.isfinite(bound) else None
    entry = {"solver": NAME, "round": int(rounds), "value": float(value), "bound": float(bound), "gap": gap,
             "seconds": round_seconds(limits.elapsed())}
    limits.history.append(entry)
    if limits.progress is not None:
        limits.progress(entry)


def initial_patterns(objective: SublinearUtility) -> np.ndarray:
    """The constant pattern, the k single-input ones (k-ary randomized response) and, when μ
    is convex in the feature sums, the vertices of the features' own zonotope (for two
    hypotheses: the sets {x : P0_x / P1_x > t} and their complements, the binary mechanisms
    of the likelihood ratio's thresholds)."""
    features = np.asarray(objective.features, dtype=float)
    k = features.shape[1]
    start = [np.zeros((1, k), dtype=bool), np.eye(k, dtype=bool)]
    if objective.convex_in_sums:
        start += list(zonotope_vertex_sets(features))
    return np.vstack(start)


def generate_columns(objective: SublinearUtility, epsilon: float, n_outputs: int, *, gap_target: float,
                     limits: Limits | None = None, diagonal: bool = False) -> tuple[ContextSolution, dict]:
    """Maximise the objective over ε-LDP mechanisms by column generation (module docstring):
    (the design with its value and proven upper bound, a record of the pricing). Stops when
    the proven gap (bound − value)/|value| is within ``gap_target``, when no pattern prices
    out, or at the time ``limits`` leave (``stopped``)."""
    k = objective.features.shape[1]
    if epsilon == 0:  # every pattern is the constant one: the design reveals nothing, U = 0
        constant = staircase_matrix(np.ones(1), np.zeros((1, k), dtype=bool), 1.0, n_outputs, False)
        return ContextSolution(constant, 0.0, 0.0, 0, 1), {"pricing": "none (ε = 0)", "pricing_exact": True,
                                                            "patterns_used": 1, "patterns_generated": 1}
    start = initial_patterns(objective)
    unit = float(np.abs(objective.pattern_utility(objective.features @ start.T.astype(float), epsilon)).max())
    unit = unit if unit > 0 else 1.0
    pricing = pricing_for(objective, epsilon, unit)
    master = PatternMaster(k, epsilon)
    master.add(start, pricing.utilities(start))
    best_bound, value, rounds, stopped, exact, design = math.inf, 0.0, 0, False, True, None
    while rounds < MAX_ROUNDS:
        rounds += 1
        solved = master.solve(limits)
        if solved is None:
            if limits is not None and (limits.expired() or master.timed_out()) and rounds > 1:
                stopped = True
                break
            raise SolverDeclined(f"a master LP ended {master.h.modelStatusToString(master.h.getModelStatus())}")
        value, design = solved, master.design()  # the last solved master's design, kept for a deadline
        u = master.duals()
        slack = 0.25 * gap_target * max(abs(value), 1e-300)
        priced: Priced = pricing.price(u, BATCH, slack)
        exact = exact and priced.exact
        best_bound = min(best_bound, float(u.sum()) + max(0.0, priced.bound))
        report_round(limits, rounds, value * unit, best_bound * unit)
        if best_bound - value <= gap_target * abs(value) or best_bound <= value:
            break
        improving = priced.values > 1e-12 * max(1.0, abs(value))
        if not improving.any() or master.add(priced.masks[improving], pricing.utilities(priced.masks[improving])) == 0:
            break  # nothing left to add: the gap stays as proven
        if limits is not None and limits.expired():
            stopped = True
            break
    theta, masks = design
    if len(theta) > n_outputs:  # a basic optimum uses at most k patterns, and applies() asks k outputs
        raise SolverDeclined(f"the design uses {len(theta)} patterns, the problem has {n_outputs} outputs")
    matrix = staircase_matrix(theta, masks, master.top, n_outputs, diagonal)
    solution = ContextSolution(matrix, value * unit, max(best_bound, value) * unit, rounds, len(master.masks), stopped)
    return solution, {"pricing": pricing.method, "pricing_exact": exact, "patterns_used": int(len(theta)),
                      "patterns_generated": len(master.masks)}


def applies(problem) -> str | None:
    """One ε-LDP notion (δ = 0, ε <= 20) with an information utility, one shared mechanism and
    at least as many outputs as inputs (an optimum may use |X| patterns)."""
    if not isinstance(problem.objective, SublinearUtility):
        return f"needs a maximised information utility, the objective is {problem.objective.kind}"
    reason = one_notion_of(problem, LDP)
    if reason is not None:
        return reason
    if problem.privacy[0].epsilon > MAX_EPSILON:
        return f"needs ε <= {MAX_EPSILON:g} (the master's coefficients are e^ε), got {problem.privacy[0].epsilon:g}"
    if problem.contexts:
        return "needs one shared mechanism"
    if len(problem.outputs) < len(problem.inputs):
        return (f"needs at least as many outputs as inputs (an optimal staircase may use {len(problem.inputs)}), "
                f"the problem has {len(problem.outputs)}")
    return None


def solve_staircase(problem, limits: Limits | None = None) -> tuple[dict, SolverOutcome]:
    """(raw, outcome) for :meth:`Problem.finish`: the staircase optimum and its proven upper
    bound (see the module docstring)."""
    begin = time.perf_counter()
    epsilon = problem.privacy[0].epsilon
    diagonal = problem.outputs.same_as(problem.inputs)
    found, record = generate_columns(problem.objective, epsilon, len(problem.outputs),
                                     gap_target=0.5 * problem.gap_tolerance, limits=limits, diagonal=diagonal)
    entries = {"name": NAME, "compile_seconds": 0.0, "solve_seconds": time.perf_counter() - begin,
               "rounds": found.rounds, "columns": found.columns, **record}
    if limits is not None and limits.history:
        entries["progress"] = list(limits.history)
    status = TIME_LIMIT if found.stopped else "optimal"
    return {"default": found.matrix}, SolverOutcome(status, entries, bound=found.bound, bound_proven=True)


def refusal(objective, chosen: str, attempts: list[dict]) -> tuple[str, bool]:
    """Why the general route is refused a maximised objective: (the message, whether the
    staircase solver applied — and then could not prove an optimum)."""
    text = f"the {objective.kind} objective {NOT_CONVEX}"
    if chosen != "auto":
        return text + f"; the solver {chosen!r} is the general route", False
    record = next((a for a in attempts if a.get("solver") == NAME), None)
    if record is None:
        return text, False
    return f"{text}; {NAME}: {record.get('outcome', '')}", bool(record.get("applies"))


SOLVER = SpecialSolver(NAME, applies, solve_staircase)
