"""Metric privacy (d-privacy, geo-indistinguishability): K[x,y] <= e^{ε d(x,x')} K[x',y].

The compile uses the metric's exact reduction of the pairs (:meth:`Metric.privacy_pairs`); the
audit and the repair never do: they run over every ordered pair of inputs (compiled kernels,
O(|X|²|Y|) time, O(|X|·|Y| + |X|²) memory), so a reduction that dropped a needed pair cannot
hide a leak from the certificate.

Float64 rule for huge ε·d. Mathematically a d-private column is either all zero or all positive,
but its true entries may be e^{-1000}, which is 0 in float64. The returned matrix therefore never
has a 0 next to a positive entry in a column: repair raises every entry of a non-zero column to
at least TINY (the smallest positive normal float, 2.2e-308; the pointwise maximum of two vectors
of the d-privacy cone, here the column and the constant TINY, stays in the cone, so this breaks no
ratio), and the audit compares ln K[x,y] − ln K[x',y] with ε·d(x,x') in log space. A pair with
ε·d > ln(1/TINY) ≈ 708.4 then holds for any entries in [TINY, 1]; the compile leaves such pairs
out of the LP (a relaxation, so the LP value stays a lower bound), and the objective moves by at
most |X|·|Y|·TINY·max|C|.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from mechdesign.core import preview
from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.core.domain import Domain
from mechdesign.core.errors import ProblemError
from mechdesign.core.lazy_import import cvxpy as cp
from mechdesign.core.metrics import Metric, floyd_warshall, on_a_line
from mechdesign.core.setting import Setting
from mechdesign.privacy.base import Notion, check_epsilon
from mechdesign.privacy.ldp import links
from mechdesign.privacy.level_memo import remembered_level
from mechdesign.privacy.line_level import line_level
from mechdesign.privacy.repair_clock import seconds_left

if TYPE_CHECKING:
    from mechdesign.privacy.coefficients import Coefficients
    from mechdesign.privacy.declarations import Declarations

#: the smallest positive normal float64: the floor of every non-zero column (module docstring)
TINY = float(np.finfo(float).tiny)
#: pairs with ε·d above ln(1/TINY) hold for any entries in [TINY, 1]: not compiled
FLOAT_EXPONENT = float(-np.log(TINY))
#: log K of a zero entry inside the kernels: finite, so differences never give NaN, and far below
#: ln TINY, so a zero next to a positive entry yields a difference above HUGE_RATIO
ZERO_LOG = -1e300
HUGE_RATIO = 1e299
#: repair treats pairs with ε·d at most this as coincident and ties their rows (their ratio
#: e^{εd} is below what row renormalisation can keep exact in float64; the objective moves by a
#: relative ε·d at most)
TIE_EXPONENT = 1e-9
#: repair returns its balanced matrix once the deficits it spreads over the data-independent
#: row weigh at most this (:meth:`MetricPrivacy.repair`): each row then moves at most this much
#: probability mass, far below what any gap tolerance can see
BALANCE_WEIGHT = 1e-12


class MetricPrivacy(Notion):
    """ε·d-privacy over a ground metric.

    Only the pairs of the metric's exact reduction are compiled (graph edges; neighbours on a
    line; pairs with no value strictly between): they imply all other pairs. Pairs with ε·d
    above FLOAT_EXPONENT are left out (module docstring). A pair whose coefficient e^{εd} would
    exceed e^20 (HiGHS returns wrong "optimal" answers with such coefficients) is split exactly
    into a chain through k − 1 auxiliary columns,
    K[x] <= c w_1 <= c² w_2 <= ... <= c^k K[x'] with c = e^{εd/k} (links of e^10 once e^{εd} passes e^20), so the LP stays exact
    and well scaled.

    Parameters
    ----------
    epsilon : float
        ε, per unit of distance.
    metric : Metric, optional
        The ground metric d; by default the problem's ``metric=`` (filled in by :meth:`bind`).
    domain : Domain, optional
        The inputs d is measured on; by default the problem's inputs.

    Examples
    --------
    >>> MetricPrivacy(0.5)
    MetricPrivacy(epsilon=0.5)
    >>> MetricPrivacy(0.5, Metric("absolute"), Domain.from_size(20))
    MetricPrivacy(epsilon=0.5, metric=Metric('absolute'), domain=Domain(20 values: 0, 1, 2, 3, 4, 5, ... (20 in all), points in R^1))
    """

    name = "metric"

    @property
    def relaxed(self) -> bool:
        """Whether pairs were left out of the program (ε·d beyond FLOAT_EXPONENT)."""
        return bool(np.any(self.segments() == 0))

    def __init__(self, epsilon: float, metric: Metric | str | None = None, domain: Domain | None = None):
        self.epsilon = check_epsilon(epsilon)
        self.metric = None if metric is None else Metric.coerce(metric)
        self.domain = domain
        if self.metric is not None and domain is not None:
            self.i, self.j, self.d = self.metric.privacy_pairs(domain)

    def bind(self, setting: Setting) -> MetricPrivacy:
        """The problem's metric (unless the notion has its own) over the problem's inputs (unless
        it has its own domain, which must have as many values)."""
        if self.domain is not None and len(self.domain) != len(setting.inputs):
            raise ProblemError(f"the notion's domain has {len(self.domain)} values but the problem has "
                               f"{len(setting.inputs)} inputs", key="domain")
        if self.metric is not None and self.domain is not None:
            return self
        metric = self.metric or setting.need_metric("metric privacy", "metric")
        return MetricPrivacy(self.epsilon, metric, self.domain or setting.inputs)

    def _bound(self) -> None:
        if self.metric is None or self.domain is None:
            raise ProblemError(f"{self!r} is not bound to a metric and a domain yet: give it both "
                               "(MetricPrivacy(epsilon, metric, domain)) or use it in a Problem with a "
                               "metric=", key="metric")

    def __repr__(self) -> str:
        metric = None if self.metric is None else repr(self.metric)
        domain = None if self.domain is None else repr(self.domain)
        return preview.call("MetricPrivacy", [("epsilon", preview.number(self.epsilon)),
                                              ("metric", metric), ("domain", domain)])

    def segments(self) -> np.ndarray:
        """Per pair, the number k of chain links (:func:`mechdesign.privacy.ldp.links`, the rule
        every notion's chains follow); 0 for the pairs left out because ε·d exceeds
        FLOAT_EXPONENT."""
        self._bound()
        exponent = self.epsilon * self.d
        return np.where(exponent > FLOAT_EXPONENT, 0, links(exponent)).astype(int)

    def structure(self) -> bytes:
        return self.segments().tobytes()

    def _scale(self, coefficients: Coefficients, name: str, d: np.ndarray) -> Any:
        """e^{εd} per pair: a Parameter column (parametric), else a sparse diagonal."""
        if coefficients.parametric:
            return coefficients.coefficient(self, name, lambda eps: np.exp(eps * d)[:, None])
        return sp.diags(np.exp(self.epsilon * d))

    @staticmethod
    def _times(coef: Any, expr: Any) -> Any:
        return cp.multiply(coef, expr) if isinstance(coef, cp.Parameter) else coef @ expr

    def constraints(self, K: Mapping[str, Any], coefficients: Coefficients) -> list:
        out = []
        counts = self.segments()
        for k in np.unique(counts[counts > 0]):
            sel = counts == k
            i, j, d = self.i[sel], self.j[sel], self.d[sel] / k
            c = self._scale(coefficients, f"exp_epsilon_d_{k}", d)
            for var in K.values():
                chain = [var[i, :]]
                # links w_t in [0, 1]: w_t = K[x] / c^t is always a witness, so the bound cuts
                # nothing and keeps HiGHS away from huge primal values
                chain += [cp.Variable((i.size, var.shape[1]), bounds=[0, 1]) for _ in range(k - 1)]
                chain.append(var[j, :])
                out += [chain[t] <= self._times(c, chain[t + 1]) for t in range(k)]
        return out

    def program_rows(self, n_inputs: int, n_outputs: int) -> int:
        """One row per output per link of every pair's chain (:meth:`constraints`)."""
        return int(self.segments().sum()) * n_outputs

    def distances(self) -> np.ndarray:
        """d over the input domain (every ordered pair)."""
        self._bound()
        return self.metric.distances(self.domain)

    def level(self, k: np.ndarray) -> float:
        """The smallest ε for which ``k`` is ε·d-private, over every ordered pair of inputs:

            max over x != x' of max_y (ln K[x,y] − ln K[x',y]) / d(x,x'),

        where a zero entry next to a positive one, or two coincident inputs (d = 0) with
        different rows, give +inf, and a 0 next to a 0 gives no constraint."""
        self._bound()
        n = len(self.domain)
        if np.ndim(k) != 2 or np.shape(k)[0] != n or np.shape(k)[1] == 0:
            raise ProblemError(f"the matrix has shape {np.shape(k)}, expected {n} rows "
                               "(one per input) and at least one column", key="mechanism")
        if self._on_a_line():  # every pair follows from the consecutive ones, exactly
            return line_level(_kernel_log(k), self.domain.points[:, 0].astype(float), HUGE_RATIO)
        # n²·m work: computed once per matrix within a certification
        return remembered_level(self, k, lambda: self._all_pairs_level(k))

    def _all_pairs_level(self, k: np.ndarray) -> float:
        logk = _kernel_log(k)
        d = np.ascontiguousarray(self.distances(), dtype=float)
        if logk.size * logk.shape[0] <= NUMPY_PAIRS_ENTRIES or not _compiled_kernels_allowed():
            return _max_level_numpy(logk, d)
        from mechdesign.privacy.metric_kernels import max_level

        return float(max_level(logk, d))

    def certification_seconds(self, n_outputs: int) -> float:
        """n²·m pair-entries at 2 ns each: a repaired design takes two all-pairs levels (the
        solver's design, then the repaired one) and one envelope. Measured on the 2-core
        machine: 6.6 s at 1,500 airports (3.4·10⁹ entries; a level 0.5–0.6 ns per entry, an
        envelope 0.13 ns) and 250 s at 5,000 (1.25·10¹¹ entries, where the level's rows no
        longer stay in cache). Nothing on a line, whose audit reads consecutive pairs."""
        if self.domain is None or self._on_a_line():
            return 0.0
        n = len(self.domain)
        return n * n * n_outputs * PAIR_ENTRY_SECONDS

    def audit(self, mechs: Mapping[str, np.ndarray]) -> Audit:
        achieved = max(self.level(k) for k in mechs.values())
        n = len(self.domain)
        pairs = ({"pairs_checked": 2 * (n - 1),
                  "pairs": "consecutive inputs on the line (every ordered pair follows: "
                           "log-ratios and gaps add up along the line)"}
                 if self._on_a_line() else
                 {"pairs_checked": n * (n - 1), "pairs": "all ordered pairs"})
        return Audit(self.name, {"epsilon": self.epsilon}, {"epsilon": achieved},
                     achieved <= self.epsilon + AUDIT_TOL, {**pairs, "metric": self.metric.kind})

    def envelope(self, k: np.ndarray) -> np.ndarray:
        """Smallest matrix >= k whose columns satisfy every pair's ratio constraint, with pairs
        of ε·d <= TIE_EXPONENT tied (d taken as 0):

            K'[x, y] = max_z K[z, y] e^{−ε d̂(x, z)},

        d̂ the shortest-path closure of d (a chain of constraints x → z → x' bounds the ratio by
        e^{ε(d(x,z) + d(z,x'))}, so d̂ gives the same constraint set; for a true metric d̂ = d).
        Non-zero columns are floored at TINY (module docstring)."""
        logk = _safe_log(k)
        line = self._line_order()
        if line is not None:
            order, gaps = line
            pen = np.where(self.epsilon * gaps <= TIE_EXPONENT, 0.0, self.epsilon * gaps)
            cur = logk[order]
            for t in range(1, len(order)):  # forward then backward sweep
                cur[t] = np.maximum(cur[t], cur[t - 1] - pen[t - 1])
            for t in range(len(order) - 2, -1, -1):
                cur[t] = np.maximum(cur[t], cur[t + 1] - pen[t])
            out = np.empty_like(cur)
            out[order] = cur
        else:
            pen = self.epsilon * self.distances()
            pen = np.where(pen <= TIE_EXPONENT, 0.0, np.minimum(pen, HUGE_RATIO))
            if self.metric.kind == "matrix":  # the triangle inequality is not checked: close it
                pen = floyd_warshall(pen)
            logk = _kernel_log(k)
            if logk.size * logk.shape[0] <= NUMPY_PAIRS_ENTRIES or not _compiled_kernels_allowed():
                out = _max_plus_numpy(pen, logk)
            else:
                from mechdesign.privacy.metric_kernels import max_plus

                out = max_plus(np.ascontiguousarray(pen), logk)
            out[out <= ZERO_LOG / 2] = -np.inf
        with np.errstate(under="ignore"):
            return floor_columns(np.exp(out))

    def repair(self, mechs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Matrices whose level exceeds ε by more than half the audit's tolerance, made private.

        Each round raises the columns to their envelope E (over all pairs), whose rows then sum
        to s_x >= 1. Two private matrices with rows summing to 1 come from it:

        - the balanced one, K'[x, ·] = E[x, ·]/T + (1 − s_x/T) r, with r the envelope's output
          marginal and T the smallest number at least max s for which the deficits
          1 − s_x/T are themselves ε·d-private (:func:`balancing_scale`). Each column is a sum
          of two columns of the d-privacy cone, so it is private in exact arithmetic;
        - the renormalised one, E[x, ·]/s_x, private only once the ratios its division breaks
          are within the tolerance; the next round starts from it.

        The balanced matrix is returned once its deficits weigh at most BALANCE_WEIGHT, or when
        another round (an envelope and a level) and the audit after it would pass the
        certification's deadline (:mod:`repair_clock`), or after 20 rounds; the renormalised
        one as soon as its level holds. A design whose rows miss 1 by a solver's round-off thus
        costs one envelope when time is short; renormalising alone only halves the excess per
        round, each round a check of every pair."""
        out = {}
        for key, k in mechs.items():
            began = time.perf_counter()
            level = self.level(k)
            level_seconds = time.perf_counter() - began
            for rounds_left in range(19, -1, -1):
                if level <= self.epsilon + AUDIT_TOL / 2:
                    break
                began = time.perf_counter()
                envelope = self.envelope(k)
                balanced, weight = self.balanced(envelope)
                envelope_seconds = time.perf_counter() - began
                if (weight <= BALANCE_WEIGHT or rounds_left == 0
                        or seconds_left() < envelope_seconds + 2 * level_seconds):
                    k = balanced
                    break
                k = floor_columns(envelope / envelope.sum(axis=1, keepdims=True))
                level = self.level(k)
            out[key] = k
        return out

    def balanced(self, envelope: np.ndarray) -> tuple[np.ndarray, float]:
        """(K', the largest deficit 1 − s_x/T) for an ``envelope`` whose columns are private
        (:meth:`repair`)."""
        sums = envelope.sum(axis=1)
        line = self._line_order()
        if line is not None:  # on a line the consecutive pairs imply every pair
            order, gaps = line
            left, right = np.arange(len(order) - 1), np.arange(1, len(order))
            scale = balancing_scale(sums[order], np.concatenate([left, right]), np.concatenate([right, left]),
                                    np.tile(self.epsilon * gaps, 2))
        else:
            scale = balancing_scale_all_pairs(sums, self.epsilon * self.distances())
        deficits = 1.0 - sums / scale
        marginal = envelope.sum(axis=0)
        row = marginal / marginal.sum()
        return floor_columns(envelope / scale + deficits[:, None] * row[None, :]), float(deficits.max())

    def _on_a_line(self) -> bool:
        return on_a_line(self.metric.kind, self.domain.points)

    def _line_order(self) -> tuple[np.ndarray, np.ndarray] | None:
        if not self._on_a_line():
            return None
        pts = self.domain.points
        order = np.argsort(pts[:, 0], kind="stable")
        return order, np.diff(pts[order, 0])


def exponential_weights(d: np.ndarray, epsilon: float) -> np.ndarray:
    """E[x, z] = e^{−ε d(x, z)/2} normalised per row, from the distances ``d`` (each row's
    largest term is 1 before the normalisation, so nothing underflows to an all-zero row)."""
    logits = -0.5 * epsilon * np.asarray(d, dtype=float)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


def balancing_scale(sums: np.ndarray, i: np.ndarray, j: np.ndarray, exponents: np.ndarray) -> float:
    """The smallest T >= max(sums) for which the deficits a = 1 − sums/T satisfy
    a_i <= e^{εd} a_j on the ordered pairs (i, j), with ``exponents`` their ε·d:

        T − s_i <= e^{εd} (T − s_j)  <=>  T >= s_j + (s_j − s_i) / (e^{εd} − 1).

    Pairs with ε·d at most TIE_EXPONENT are tied by the envelope and left out here; pairs with
    s_j <= s_i ask nothing beyond max(sums)."""
    scale = float(np.max(sums))
    keep = (exponents > TIE_EXPONENT) & (sums[j] > sums[i])
    if np.any(keep):
        i, j = i[keep], j[keep]
        with np.errstate(over="ignore"):  # e^{εd} = inf: the pair asks nothing of T
            growth = np.expm1(exponents[keep])
        scale = max(scale, float((sums[j] + (sums[j] - sums[i]) / growth).max()))
    return scale


def balancing_scale_all_pairs(sums: np.ndarray, exponents: np.ndarray) -> float:
    """:func:`balancing_scale` over every ordered pair, from the n × n matrix of ε·d (blocks of
    rows, so the temporaries stay small)."""
    n = sums.size
    scale = float(np.max(sums))
    step = max(1, _BLOCK // max(n, 1))
    for start in range(0, n, step):
        block = exponents[start:start + step]
        rows, cols = np.nonzero((sums[None, :] > sums[start:start + step, None]) & (block > TIE_EXPONENT))
        scale = max(scale, balancing_scale(sums, rows + start, cols, block[rows, cols]))
    return scale


def floor_columns(k: np.ndarray) -> np.ndarray:
    """Raise the entries of every column that has a positive entry to at least TINY."""
    positive = (k > 0).any(axis=0)
    if not positive.any():
        return k
    out = k.copy()
    out[:, positive] = np.maximum(out[:, positive], TINY)
    return out


def _kernel_log(k: np.ndarray) -> np.ndarray:
    """ln K with zeros (and negative round-off) as ZERO_LOG, C-contiguous float64."""
    k = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore"):
        out = np.log(np.where(k > 0, k, 1.0))
    out[~(k > 0)] = ZERO_LOG
    return np.ascontiguousarray(out)


#: up to this many (pair, output) entries the all-pairs audit and envelope run in NumPy, blocks
#: at a time; beyond, the compiled kernels (:mod:`metric_kernels`), whose first call in a
#: process costs about a second of loading numba — the same arithmetic either way
NUMPY_PAIRS_ENTRIES = 30_000_000
#: seconds per (pair, output) entry a certification is expected to take (see
#: :meth:`MetricPrivacy.certification_seconds`)
PAIR_ENTRY_SECONDS = 2e-9
_BLOCK = 4_000_000


def _compiled_kernels_allowed() -> bool:
    """The compiled kernels share rows among the CPUs through numba's threading layer, whose
    built-in form ends the process when two Python threads enter it at once: they run on the
    main thread only, other threads take the NumPy twins (same arithmetic)."""
    return threading.current_thread() is threading.main_thread()


def _max_level_numpy(logk: np.ndarray, d: np.ndarray) -> float:
    """NumPy twin of :func:`metric_kernels.max_level` (same rules, blocks of rows)."""
    n, m = logk.shape
    worst = 0.0
    step = max(1, _BLOCK // max(n * m, 1))
    for s in range(0, n, step):
        rows = np.arange(s, min(s + step, n))
        r = (logk[rows, None, :] - logk[None, :, :]).max(axis=2)  # (block, n)
        r[np.arange(rows.size), rows] = 0.0
        dd = d[rows]
        bad = (r > 0) & ((r >= HUGE_RATIO) | (dd <= 0))
        if np.any(bad):
            return float("inf")
        with np.errstate(divide="ignore", invalid="ignore"):
            level = np.where((r > 0) & (dd > 0), r / np.where(dd > 0, dd, 1.0), 0.0)
        worst = max(worst, float(level.max(initial=0.0)))
    return worst


def _max_plus_numpy(pen: np.ndarray, logk: np.ndarray) -> np.ndarray:
    """NumPy twin of :func:`metric_kernels.max_plus`: out[x, y] = max_z (logk[z, y] − pen[x, z])."""
    n, m = logk.shape
    out = logk.copy()
    step = max(1, _BLOCK // max(n * m, 1))
    for s in range(0, n, step):
        rows = slice(s, min(s + step, n))
        out[rows] = np.maximum(out[rows], (logk[None, :, :] - pen[rows, :, None]).max(axis=1))
    return out


def _safe_log(k: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(k, 0.0))


def metric_privacy_from_table(table: dict, declared: Declarations) -> MetricPrivacy:
    """``notion = "metric"``: ``epsilon``, under the file's ground metric over the inputs."""
    declared.allow(table, {"epsilon"})
    eps = declared.epsilon(table)
    metric = declared.need_metric(f"{declared.key}.notion")
    try:
        return MetricPrivacy(eps, metric, declared.inputs)
    except ProblemError as exc:
        raise exc.located(declared.file, "metric")
