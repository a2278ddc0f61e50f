r"""Exact audits of the ratio notions: ε-LDP, (ε, δ)-LDP, ε·d-privacy, DistP / XDistP / profiles,
and divergence DP / XDP / DistP with the max divergence D∞ (δ = 0 or δ > 0).

Every notion is checked from its definition over *all* ordered pairs (never the compiled
reductions): for d-privacy the pairs are all x != x' with the distance recomputed from
``notion.metric.distances(notion.domain)`` (a pair at distance 0 needs identical rows; a pair at
infinite distance, e.g. two components of a graph metric, is unconstrained). Distances d(x, x')
and XDistP widths W(λ, λ') are the notion's own float64 values, taken as exact rationals: they
are the data of the definition, not a rounding the audit could remove.

Semantics (one rule for all ratio notions). With a requested ε, scale s per pair (1, d(x, x')
or W(λ, λ')) and the library's audit tolerance τ = ``AUDIT_TOL``:

* ``holds`` — proven K[x, y] <= e^{(ε + τ)·s} K[x', y] for every pair and output (the float
  audit's acceptance rule made exact); with δ > 0, proven H(ε·s) <= δ + τ for every pair;
* ``detail["holds_at_requested"]`` — proven at ε itself (δ itself), no tolerance;
* ``achieved["epsilon"]`` — a float proven >= the true level (the float level plus a margin,
  then verified by the same exact check); with δ > 0, ``achieved["delta"]`` is a rigorous upper
  bound of max H.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction

import numpy as np

from mechdesign.core.audit_record import AUDIT_TOL, Audit
from mechdesign.privacy.exact.arith import dy_add, dyadic, dyadic_floats, exact_vecmat
from mechdesign.privacy.exact.ratio import (
    Verdict,
    check_hockey,
    check_ratio,
    float_levels,
)

#: float entries per screened block
BLOCK = 2_000_000
#: margins tried, relative to 1 + level, when proving an upper bound of the achieved level
LEVEL_MARGINS = (1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 1.0)

Block = tuple  # (P, Q, scales, exact or None, labels or None)
Blocks = Callable[[], Iterator[Block]]


def _exps(factor: Fraction, scales: np.ndarray, cache: dict) -> list:
    out = []
    for s in scales.tolist():
        if not np.isfinite(s):
            out.append(None)
            continue
        f = cache.get(s)
        if f is None:
            f = cache[s] = Fraction(s)
        out.append(factor * f)
    return out


def run_ratio(blocks: Blocks, factor: Fraction) -> Verdict:
    """All ratio checks with exponents factor·scale, stopping at the first refutation."""
    v, cache = Verdict(), {}
    for P, Q, scales, exact, labels in blocks():
        v.add(check_ratio(P, Q, _exps(factor, scales, cache), exact, labels))
        if v.refuted:
            break
    return v


def float_level(blocks: Blocks) -> float:
    return max((float(float_levels(P, Q, s).max(initial=0.0)) for P, Q, s, _, _ in blocks()),
               default=0.0)


def level_upper(blocks: Blocks, estimate: float) -> float:
    """A float proven >= the true level max ln(P/Q)/scale: the estimate plus a margin, verified."""
    if not np.isfinite(estimate):
        return float("inf")
    tries = [estimate + m * (1 + estimate) for m in LEVEL_MARGINS]
    if estimate == 0:
        tries.insert(0, 0.0)
    for a in tries:
        if run_ratio(blocks, Fraction(a)).proved:
            return a
    return float("inf")


def ratio_audit(name: str, requested: dict, epsilon: float, blocks: Blocks, pairs: int,
                extra: dict | None = None) -> Audit:
    """The exact audit of a pure ratio notion given its comparison blocks (see module doc)."""
    tolerant = run_ratio(blocks, Fraction(epsilon) + Fraction(AUDIT_TOL))
    strict = run_ratio(blocks, Fraction(epsilon)) if tolerant.proved else tolerant
    achieved = level_upper(blocks, float_level(blocks))
    detail = {"exact": True, "method": "rational", "pairs_checked": pairs, "tolerance": AUDIT_TOL,
              "holds_at_requested": strict.proved, "refuted": tolerant.refuted > 0,
              "undecided": tolerant.undecided, "close_calls": tolerant.close}
    if not strict.proved and strict.first_violation is not None:
        detail["violation"] = list(strict.first_violation)
    detail.update(extra or {})
    return Audit(name, requested, {"epsilon": achieved}, tolerant.proved, detail)


def hockey_audit(name: str, requested: dict, epsilon: float, delta: float, blocks: Blocks,
                 pairs: int, extra: dict | None = None) -> Audit:
    """The exact audit of an (ε, δ) notion: H(ε·scale) <= δ + τ for every comparison row, and
    H(ε·scale) <= δ for ``holds_at_requested``, both from one screen of each block."""
    tolerant, strict, worst = Verdict(), Verdict(), 0.0
    loose, tight = dy_add(dyadic(delta), dyadic(AUDIT_TOL)), dyadic(delta)
    cache: dict = {}
    for P, Q, scales, exact, labels in blocks():
        c = _exps(Fraction(epsilon), scales, cache)
        (v_loose, w), (v_tight, _) = check_hockey(P, Q, c, [loose, tight], exact, labels)
        tolerant.add(v_loose)
        strict.add(v_tight)
        worst = max(worst, w)
    detail = {"exact": True, "method": "rational", "pairs_checked": pairs, "tolerance": AUDIT_TOL,
              "holds_at_requested": strict.proved, "refuted": tolerant.refuted > 0,
              "undecided": tolerant.undecided, "close_calls": tolerant.close}
    detail.update(extra or {})
    return Audit(name, requested, {"epsilon": epsilon, "delta": worst}, tolerant.proved, detail)


# ---------------------------------------------------------------------------------------------
# comparison blocks

def matrix_blocks(k: np.ndarray, i: np.ndarray, j: np.ndarray, scales: np.ndarray,
                  key: str, labels: list | None = None) -> Blocks:
    """Rows K[i_t] against K[j_t] in blocks of at most BLOCK entries."""
    step = max(1, BLOCK // max(k.shape[1], 1))

    def name(a: int, b: int) -> str:
        return f"{key}:{labels[a] if labels else a}~{labels[b] if labels else b}"

    def gen():
        for s in range(0, i.size, step):
            ii, jj = i[s:s + step], j[s:s + step]

            def label(t, ii=ii, jj=jj):
                return name(int(ii[t]), int(jj[t]))
            yield k[ii], k[jj], scales[s:s + step], None, label
    return gen


def all_ordered_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return i, j


def chain(*factories: Blocks) -> Blocks:
    def gen():
        for f in factories:
            yield from f()
    return gen


def output_blocks(outputs: list[tuple[list, list]], scales: np.ndarray, names: list[str]) -> Blocks:
    """Exact output distributions (dyadic lists) compared pairwise, one row per comparison."""
    P = np.array([dyadic_floats(p) for p, _ in outputs])
    Q = np.array([dyadic_floats(q) for _, q in outputs])

    def exact(t, y, side):
        return outputs[t][side][y]

    def gen():
        yield P, Q, np.asarray(scales, dtype=float), exact, (lambda t: names[t])
    return gen


def side_outputs(pairs, mechs) -> list[tuple[list, list]]:
    """Both directions of every DistP pair: (λ_a K_a, λ_b K_b) and (λ_b K_b, λ_a K_a), exact."""
    cache: dict = {}

    def out(side):
        key = id(side)
        if key not in cache:
            cache[key] = exact_vecmat(side.distribution, mechs[side.key])
        return cache[key]

    rows = []
    for a, b in pairs:
        rows += [(out(a), out(b)), (out(b), out(a))]
    return rows
